//! The launch file's shapes as written (RON): dimensions, buffers with their initialisers,
//! kernel arguments, the entries of `launches: [...]` and `extern_calls`.

use crate::{Elem, Location, Num, Resolved};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Grid or block dimensions: `(x, y, z)`, `(x, y)`, `(x)` or `x`; missing components are 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim(pub [u32; 3]);

impl Dim {
    /// Parses `X[,Y[,Z]]` (the `--grid`/`--block` flags).
    pub fn parse(text: &str) -> Option<Dim> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if parts.is_empty() || parts.len() > 3 {
            return None;
        }
        let mut dim = [1u32; 3];
        for (slot, part) in dim.iter_mut().zip(&parts) {
            *slot = part.parse().ok()?;
        }
        Some(Dim(dim))
    }
}

impl<'de> Deserialize<'de> for Dim {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Dim;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("dimensions (x, y, z), (x, y) or (x)")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dim, E> {
                let x = u32::try_from(v)
                    .map_err(|_| E::custom(format!("dimension {v} is too large")))?;
                Ok(Dim([x, 1, 1]))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dim, E> {
                Err(E::custom(format!("dimension {v} is negative")))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Dim, A::Error> {
                let mut dim = [1u32; 3];
                let mut n = 0;
                while let Some(x) = seq.next_element::<u32>()? {
                    if n == 3 {
                        return Err(de::Error::custom("at most 3 dimensions (x, y, z)"));
                    }
                    dim[n] = x;
                    n += 1;
                }
                if n == 0 {
                    return Err(de::Error::custom("dimensions need at least x"));
                }
                Ok(Dim(dim))
            }
        }
        d.deserialize_any(V)
    }
}

/// A buffer's initial contents.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
pub enum Init {
    /// All zero (the default).
    #[default]
    Zeros,
    /// Element `i` is `start + i * step` (integers exactly; floats computed in f64, then rounded
    /// to the element type).
    Range { start: Num, step: Num },
    /// The first elements; the rest are zero.
    Values(Vec<Num>),
    /// Deterministic pseudo-random elements (module doc: the exact algorithm).
    Random { seed: u64, min: Num, max: Num },
    /// Raw little-endian bytes from a file (relative to the launch file); the rest are zero.
    File(String),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename = "buffer")]
pub(crate) struct RawBuffer {
    #[serde(rename = "type")]
    pub(crate) elem: Elem,
    pub(crate) len: u64,
    #[serde(default)]
    pub(crate) init: Init,
}

/// A kernel argument as written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub enum Arg {
    /// The address of the named buffer.
    Buffer(String),
    /// A scalar of the given type.
    Scalar {
        #[serde(rename = "type")]
        elem: Elem,
        value: Num,
    },
    /// A null pointer.
    Null,
    /// A parameter passed by value as raw bytes (`.param .align A .b8 p[N]`: exactly N bytes).
    Bytes(Vec<u8>),
    /// A struct passed by value: its fields (scalars, buffer addresses, `Null`, `Bytes`, nested
    /// structs) laid out in order with natural alignment (each at a multiple of its alignment: a
    /// scalar's size, 8 for an address, 1 for bytes, a struct's largest), padded at the end to a
    /// multiple of the struct's alignment, as C lays out a struct.
    Struct(Vec<Arg>),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename = "launch")]
pub(crate) struct RawLaunch {
    #[serde(default)]
    pub(crate) kernel: Option<String>,
    #[serde(default)]
    pub(crate) grid: Option<Dim>,
    #[serde(default)]
    pub(crate) block: Option<Dim>,
    #[serde(default)]
    pub(crate) shared: Option<u32>,
    #[serde(default, deserialize_with = "ordered_map")]
    pub(crate) buffers: Vec<(String, RawBuffer)>,
    #[serde(default)]
    pub(crate) args: Option<Vec<Arg>>,
    #[serde(default)]
    pub(crate) launches: Option<Vec<RawKernelLaunch>>,
    #[serde(default, deserialize_with = "ordered_map")]
    pub(crate) globals: Vec<(String, Num)>,
    #[serde(default, deserialize_with = "ordered_map")]
    pub(crate) extern_calls: Vec<(String, ExternCall)>,
    #[serde(default)]
    pub(crate) print: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) expect: Vec<String>,
    /// Several contexts (thesis 5.8), each a launch of its own (buffers, launches, print...).
    #[serde(default)]
    pub(crate) contexts: Option<Vec<RawLaunch>>,
}

/// One entry of `launches: [...]` as written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename = "launch")]
pub(crate) struct RawKernelLaunch {
    #[serde(default)]
    pub(crate) kernel: Option<String>,
    pub(crate) grid: Dim,
    pub(crate) block: Dim,
    #[serde(default)]
    pub(crate) args: Vec<Arg>,
    #[serde(default)]
    pub(crate) stream: u32,
    #[serde(default)]
    pub(crate) shared: u32,
}

/// One kernel launch of a program of several (`launches: [...]`): launches in one `stream` run
/// one after the other, launches in different streams may run concurrently (thesis 5.7: a
/// context runs several grids).
#[derive(Debug, Clone, PartialEq)]
pub struct KernelLaunch {
    pub kernel: Option<String>,
    pub grid: Dim,
    pub block: Dim,
    pub args: Vec<Arg>,
    pub stream: u32,
    /// Bytes of dynamic shared memory per block.
    pub shared: u32,
    /// Where the entry starts in the file, for errors.
    pub location: Option<Location>,
}

/// One launch of a program after checking against the module: its stream and the launch as the
/// machine takes it (every launch lists all of the program's buffers, in the same order).
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedLaunch {
    pub stream: u32,
    pub resolved: Resolved,
}

/// What a call to a function declared without a body returns (`extern_calls: { "f": ... }`):
/// PTX cannot say, so the launch does (GPUVerify lets such a call return any value).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub enum ExternCall {
    /// Every call returns this value, in the function's return type (ignored when it returns
    /// nothing).
    Value(Num),
    /// Each thread's call returns one of these values, a scheduler choice (`Choice::Pick`), so
    /// that `fuzz` and `explore` cover them; one value is `Value`.
    Values(Vec<Num>),
}

/// A RON map read in order of appearance, refusing duplicate keys.
pub(crate) fn ordered_map<'de, D, T>(d: D) -> Result<Vec<(String, T)>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct V<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = Vec<(String, T)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map { \"name\": ... }")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out: Vec<(String, T)> = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                if out.iter().any(|(k, _)| *k == key) {
                    return Err(de::Error::custom(format!("`{key}` is given twice")));
                }
                let value = map.next_value::<T>()?;
                out.push((key, value));
            }
            Ok(out)
        }
    }
    d.deserialize_map(V(std::marker::PhantomData))
}
