//! Launch descriptions: the launch file (RON), the quick-launch flags, and their resolution
//! against a loaded program into a [`LaunchConfig`] the machine runs.
//!
//! Three steps, each with its own errors:
//! 1. [`Launch::from_ron`] reads a launch file. Syntax errors and per-field errors carry RON's
//!    line and column; cross-field errors (an unknown buffer in `args`, a value out of range for
//!    its buffer's type...) are located by finding the offending text in the file.
//! 2. [`Launch::apply_flags`] lets `--kernel --grid --block --buffer --arg --shared --global
//!    --print` override fields (or describe a whole launch without a file).
//! 3. [`Launch::resolve`] checks the launch against the program (kernel name, parameter count and
//!    sizes, module variables) and builds the buffers' bytes.
//!
//! Buffers keep their order of appearance in the file (then flags' new buffers, in flag order):
//! that order is the allocation order and the default print order.
//!
//! `Random(seed, min, max)` is ChaCha8 seeded with `seed_from_u64(seed)`; every element draws
//! `next_u64` values: integers are uniform in `[min, max]` (rejection sampling on `x % span`),
//! floats are `min + u * (max - min)` with `u` uniform in `[0, 1)` from the top 53 (f64) or 24
//! (f32, f16: computed in f32) bits, redrawn when rounding reaches `max`. The same seed gives the
//! same bytes on every machine and every build.
//!
//! The CLI, the corpus harnesses and the scheduler's tests all read launch files through this
//! crate, so they cannot disagree about what a launch file means.
//!
//! Reading a launch file reads the files its `File(...)` buffers name: this crate belongs to the
//! I/O layer with the CLI, not to the libraries below it.

pub mod expect;

use ptx_parser::ScalarType;
use semantics::Program;
use semantics::machine::{ArgValue, BufferSpec, DeviceConfig, LaunchConfig};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// A bad launch: what is wrong, where (file, line, column, when it comes from a file) and what to
/// do about it.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchError {
    pub message: String,
    pub location: Option<Location>,
    pub help: Option<String>,
}

/// A 1-based position in a launch file, with the line's text for the caret.
#[derive(Debug, Clone, PartialEq)]
pub struct Location {
    pub path: String,
    pub line: usize,
    pub col: usize,
    pub line_text: String,
}

impl LaunchError {
    fn new(message: impl Into<String>) -> Self {
        LaunchError {
            message: message.into(),
            location: None,
            help: None,
        }
    }
    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    fn at(mut self, location: Option<Location>) -> Self {
        if self.location.is_none() {
            self.location = location;
        }
        self
    }
}

impl fmt::Display for LaunchError {
    /// `error: MESSAGE`, then ` --> path:line:col` with the line and a caret, then `= help:`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error: {}", self.message)?;
        if let Some(loc) = &self.location {
            let number = loc.line.to_string();
            let pad = " ".repeat(number.len());
            writeln!(f, "{pad}--> {}:{}:{}", loc.path, loc.line, loc.col)?;
            writeln!(f, "{pad} |")?;
            writeln!(f, "{number} | {}", loc.line_text)?;
            // The caret goes under the column's character (columns count characters).
            let before: String = loc
                .line_text
                .chars()
                .take(loc.col.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            writeln!(f, "{pad} | {before}^")?;
        }
        if let Some(help) = &self.help {
            writeln!(f, "  = help: {help}")?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Element types and numbers
// ---------------------------------------------------------------------------------------------

/// A buffer's or scalar's element type, by its PTX name (`b*` are raw bits, printed unsigned).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Elem {
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    B8,
    B16,
    B32,
    B64,
    F16,
    F32,
    F64,
}

/// How an element's bits are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElemKind {
    Unsigned,
    Signed,
    Float,
}

pub const ELEM_NAMES: &str = "u8 u16 u32 u64 s8 s16 s32 s64 b8 b16 b32 b64 f16 f32 f64";

impl Elem {
    /// Parses a PTX type name (with or without the dot); `i8..i64` are accepted as `s8..s64`.
    pub fn parse(name: &str) -> Option<Elem> {
        let name = name.strip_prefix('.').unwrap_or(name);
        Some(match name {
            "u8" => Elem::U8,
            "u16" => Elem::U16,
            "u32" => Elem::U32,
            "u64" => Elem::U64,
            "s8" | "i8" => Elem::S8,
            "s16" | "i16" => Elem::S16,
            "s32" | "i32" => Elem::S32,
            "s64" | "i64" => Elem::S64,
            "b8" => Elem::B8,
            "b16" => Elem::B16,
            "b32" => Elem::B32,
            "b64" => Elem::B64,
            "f16" => Elem::F16,
            "f32" => Elem::F32,
            "f64" => Elem::F64,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Elem::U8 => "u8",
            Elem::U16 => "u16",
            Elem::U32 => "u32",
            Elem::U64 => "u64",
            Elem::S8 => "s8",
            Elem::S16 => "s16",
            Elem::S32 => "s32",
            Elem::S64 => "s64",
            Elem::B8 => "b8",
            Elem::B16 => "b16",
            Elem::B32 => "b32",
            Elem::B64 => "b64",
            Elem::F16 => "f16",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
        }
    }
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Elem::U8 | Elem::S8 | Elem::B8 => 1,
            Elem::U16 | Elem::S16 | Elem::B16 | Elem::F16 => 2,
            Elem::U32 | Elem::S32 | Elem::B32 | Elem::F32 => 4,
            Elem::U64 | Elem::S64 | Elem::B64 | Elem::F64 => 8,
        }
    }
    pub fn kind(self) -> ElemKind {
        match self {
            Elem::U8
            | Elem::U16
            | Elem::U32
            | Elem::U64
            | Elem::B8
            | Elem::B16
            | Elem::B32
            | Elem::B64 => ElemKind::Unsigned,
            Elem::S8 | Elem::S16 | Elem::S32 | Elem::S64 => ElemKind::Signed,
            Elem::F16 | Elem::F32 | Elem::F64 => ElemKind::Float,
        }
    }
    pub fn scalar_type(self) -> ScalarType {
        match self {
            Elem::U8 => ScalarType::U8,
            Elem::U16 => ScalarType::U16,
            Elem::U32 => ScalarType::U32,
            Elem::U64 => ScalarType::U64,
            Elem::S8 => ScalarType::S8,
            Elem::S16 => ScalarType::S16,
            Elem::S32 => ScalarType::S32,
            Elem::S64 => ScalarType::S64,
            Elem::B8 => ScalarType::B8,
            Elem::B16 => ScalarType::B16,
            Elem::B32 => ScalarType::B32,
            Elem::B64 => ScalarType::B64,
            Elem::F16 => ScalarType::F16,
            Elem::F32 => ScalarType::F32,
            Elem::F64 => ScalarType::F64,
        }
    }
    /// The element type matching a PTX scalar type (for module variables), if it is a plain one.
    pub fn from_scalar_type(ty: ScalarType) -> Option<Elem> {
        Some(match ty {
            ScalarType::U8 => Elem::U8,
            ScalarType::U16 => Elem::U16,
            ScalarType::U32 => Elem::U32,
            ScalarType::U64 => Elem::U64,
            ScalarType::S8 => Elem::S8,
            ScalarType::S16 => Elem::S16,
            ScalarType::S32 => Elem::S32,
            ScalarType::S64 => Elem::S64,
            ScalarType::B8 => Elem::B8,
            ScalarType::B16 => Elem::B16,
            ScalarType::B32 => Elem::B32,
            ScalarType::B64 => Elem::B64,
            ScalarType::F16 => Elem::F16,
            ScalarType::F32 => Elem::F32,
            ScalarType::F64 => Elem::F64,
            _ => return None,
        })
    }
    fn bits(self) -> u32 {
        self.size() as u32 * 8
    }
    /// The integer range of an integer type. Bit types take both signed and unsigned spellings
    /// of their bits (`b32` accepts -1 and 0xFFFFFFFF).
    fn int_range(self) -> (i128, i128) {
        let bits = self.bits();
        match self.kind() {
            ElemKind::Signed => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
            _ if self.name().starts_with('b') => (-(1i128 << (bits - 1)), (1i128 << bits) - 1),
            _ => (0, (1i128 << bits) - 1),
        }
    }
}

impl<'de> Deserialize<'de> for Elem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Elem::parse(&name).ok_or_else(|| {
            de::Error::custom(format!(
                "unknown element type `{name}` (element types are {ELEM_NAMES})"
            ))
        })
    }
}

/// A number as written: RON integers stay exact (up to u64/i64 and beyond), floats are f64.
/// `"nan"`, `"inf"` and `"-inf"` (strings) are floats too.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i128),
    Float(f64),
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::Int(i) => write!(f, "{i}"),
            Num::Float(x) => write!(f, "{x:?}"),
        }
    }
}

impl Num {
    /// Parses a number as written on the command line: decimal or `0x` integers, floats,
    /// `nan`, `inf`, `-inf`.
    pub fn parse(text: &str) -> Option<Num> {
        let t = text.trim();
        let (neg, digits) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        let int = if let Some(hex) = digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
        {
            i128::from_str_radix(hex, 16).ok()
        } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            digits.parse::<i128>().ok()
        } else {
            None
        };
        if let Some(i) = int {
            return Some(Num::Int(if neg { -i } else { i }));
        }
        match t.to_ascii_lowercase().as_str() {
            "nan" => return Some(Num::Float(f64::NAN)),
            "inf" | "+inf" | "infinity" => return Some(Num::Float(f64::INFINITY)),
            "-inf" | "-infinity" => return Some(Num::Float(f64::NEG_INFINITY)),
            _ => {}
        }
        t.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Num::Float)
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(x) => x,
        }
    }

    /// The integer this number denotes, if it is one (integral floats count).
    fn as_int(self) -> Option<i128> {
        match self {
            Num::Int(i) => Some(i),
            Num::Float(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e38 => Some(x as i128),
            Num::Float(_) => None,
        }
    }

    /// The bits of this number as an element of `elem` (low `elem.size()` bytes), or why not.
    pub fn encode(self, elem: Elem) -> Result<u64, String> {
        match elem.kind() {
            ElemKind::Float => {
                let x = self.as_f64();
                Ok(match elem {
                    Elem::F16 => half::f16::from_f64(x).to_bits() as u64,
                    Elem::F32 => (x as f32).to_bits() as u64,
                    _ => x.to_bits(),
                })
            }
            _ => {
                let Some(i) = self.as_int() else {
                    return Err(format!(
                        "{self} is not an integer, but the type is {}",
                        elem.name()
                    ));
                };
                let (lo, hi) = elem.int_range();
                if i < lo || i > hi {
                    return Err(format!(
                        "{i} is out of range for {} ({lo} to {hi})",
                        elem.name()
                    ));
                }
                let mask = if elem.bits() == 64 {
                    u64::MAX
                } else {
                    (1u64 << elem.bits()) - 1
                };
                Ok((i as u64) & mask)
            }
        }
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number (or \"nan\", \"inf\", \"-inf\")")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num::Int(v as i128))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num::Int(v as i128))
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<Num, E> {
                Ok(Num::Int(v))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<Num, E> {
                i128::try_from(v)
                    .map(Num::Int)
                    .map_err(|_| E::custom(format!("{v} is too large")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num::Float(v))
            }
            fn visit_f32<E: de::Error>(self, v: f32) -> Result<Num, E> {
                Ok(Num::Float(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
                match Num::parse(v) {
                    Some(n) => Ok(n),
                    None => Err(E::custom(format!("`{v}` is not a number"))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

// ---------------------------------------------------------------------------------------------
// The launch file's shapes
// ---------------------------------------------------------------------------------------------

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
struct RawBuffer {
    #[serde(rename = "type")]
    elem: Elem,
    len: u64,
    #[serde(default)]
    init: Init,
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

/// A by-value argument's bytes: `bytes`, the buffer names whose addresses go at byte offsets, and
/// the alignment its layout needs.
struct Laid {
    bytes: Vec<u8>,
    pointers: Vec<(u32, String)>,
    align: u32,
}

/// Lays out `arg` as the bytes of a by-value parameter (see [`Arg::Struct`]).
fn lay_out(arg: &Arg) -> Result<Laid, String> {
    Ok(match arg {
        Arg::Buffer(name) => Laid {
            bytes: vec![0; 8],
            pointers: vec![(0, name.clone())],
            align: 8,
        },
        Arg::Null => Laid {
            bytes: vec![0; 8],
            pointers: Vec::new(),
            align: 8,
        },
        Arg::Scalar { elem, value } => {
            let bits = value.encode(*elem)?;
            let n = elem.size();
            Laid {
                bytes: bits.to_le_bytes()[..n].to_vec(),
                pointers: Vec::new(),
                align: n as u32,
            }
        }
        Arg::Bytes(bytes) => Laid {
            bytes: bytes.clone(),
            pointers: Vec::new(),
            align: 1,
        },
        Arg::Struct(fields) => {
            let mut out = Laid {
                bytes: Vec::new(),
                pointers: Vec::new(),
                align: 1,
            };
            for field in fields {
                let f = lay_out(field)?;
                let at = out.bytes.len().next_multiple_of(f.align as usize);
                out.bytes.resize(at, 0);
                out.pointers
                    .extend(f.pointers.into_iter().map(|(o, b)| (o + at as u32, b)));
                out.bytes.extend_from_slice(&f.bytes);
                out.align = out.align.max(f.align);
            }
            let end = out.bytes.len().next_multiple_of(out.align as usize);
            out.bytes.resize(end, 0);
            out
        }
    })
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename = "launch")]
struct RawLaunch {
    #[serde(default)]
    kernel: Option<String>,
    #[serde(default)]
    grid: Option<Dim>,
    #[serde(default)]
    block: Option<Dim>,
    #[serde(default)]
    shared: Option<u32>,
    #[serde(default, deserialize_with = "ordered_map")]
    buffers: Vec<(String, RawBuffer)>,
    #[serde(default)]
    args: Option<Vec<Arg>>,
    #[serde(default)]
    launches: Option<Vec<RawKernelLaunch>>,
    #[serde(default, deserialize_with = "ordered_map")]
    globals: Vec<(String, Num)>,
    #[serde(default, deserialize_with = "ordered_map")]
    extern_calls: Vec<(String, ExternCall)>,
    #[serde(default)]
    print: Option<Vec<String>>,
    #[serde(default)]
    expect: Vec<String>,
}

/// One entry of `launches: [...]` as written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename = "launch")]
struct RawKernelLaunch {
    #[serde(default)]
    kernel: Option<String>,
    grid: Dim,
    block: Dim,
    #[serde(default)]
    args: Vec<Arg>,
    #[serde(default)]
    stream: u32,
    #[serde(default)]
    shared: u32,
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
fn ordered_map<'de, D, T>(d: D) -> Result<Vec<(String, T)>, D::Error>
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

// ---------------------------------------------------------------------------------------------
// The launch, before resolution
// ---------------------------------------------------------------------------------------------

/// A buffer as described (its bytes are built at resolution).
#[derive(Debug, Clone, PartialEq)]
pub struct BufferDesc {
    pub name: String,
    pub elem: Elem,
    pub len: u64,
    pub init: Init,
    /// Where `File(...)` paths are relative to.
    pub base_dir: PathBuf,
    /// Where the buffer was written, for errors.
    pub location: Option<Location>,
}

/// A launch as read from a file and/or flags, not yet checked against a program.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Launch {
    pub kernel: Option<String>,
    pub grid: Option<Dim>,
    pub block: Option<Dim>,
    pub shared: Option<u32>,
    pub buffers: Vec<BufferDesc>,
    pub args: Vec<Arg>,
    pub globals: Vec<(String, Num)>,
    /// What the body-less functions the kernel calls return.
    pub extern_calls: Vec<(String, ExternCall)>,
    pub print: Option<Vec<String>>,
    /// The launches of a program of several (`launches: [...]`); empty for the one-kernel form
    /// (`kernel`, `grid`, `block`, `args`, `shared` at the top level).
    pub launches: Vec<KernelLaunch>,
    /// What the final buffers must satisfy (`expect: [...]`, then `--expect` flags).
    pub expect: Vec<ExpectSource>,
    /// The file it came from and its text, for locating errors found later.
    source: Option<(String, String)>,
}

/// An expectation as written in the launch file or given with `--expect`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectSource {
    pub expectation: expect::Expectation,
    /// Where its text starts in the launch file (`None` for a flag).
    pub location: Option<Location>,
}

impl ExpectSource {
    /// The error `e` of this expectation, located in the launch file (line and column of the
    /// offending character) or named as the flag.
    fn error(&self, e: expect::ExpectError) -> LaunchError {
        let text = &self.expectation.text;
        match &self.location {
            Some(loc) => {
                let mut at = loc.clone();
                at.col += e.at;
                LaunchError::new(format!("bad expectation: {}", e.message))
                    .at(Some(at))
                    .help(e.help)
            }
            None => LaunchError::new(format!(
                "bad --expect `{text}`: {} (at column {})",
                e.message,
                e.at + 1
            ))
            .help(e.help),
        }
    }
}

/// The quick-launch flags (`cudasem run` parses them with clap; all strings until here).
#[derive(Debug, Clone, Default)]
pub struct LaunchFlags {
    pub kernel: Option<String>,
    pub grid: Option<String>,
    pub block: Option<String>,
    pub shared: Option<u32>,
    /// `name:type:len[:init]`
    pub buffers: Vec<String>,
    /// `buffer:NAME`, `TYPE:VALUE` or `null`
    pub args: Vec<String>,
    /// `name=value`
    pub globals: Vec<String>,
    /// Buffer names (comma separated in the flag).
    pub print: Option<Vec<String>>,
    /// `--expect EXPR` (expectations add to the launch file's; they describe no launch).
    pub expect: Vec<String>,
}

impl LaunchFlags {
    pub fn is_empty(&self) -> bool {
        self.kernel.is_none()
            && self.grid.is_none()
            && self.block.is_none()
            && self.shared.is_none()
            && self.buffers.is_empty()
            && self.args.is_empty()
            && self.globals.is_empty()
            && self.print.is_none()
    }
}

/// A launch after checking against the program: what the machine needs, plus what printing needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub config: LaunchConfig,
    pub kernel: String,
    /// Element type of each buffer (same order as `config.buffers`).
    pub elems: Vec<Elem>,
    /// Indices of the buffers to print, in print order.
    pub print: Vec<usize>,
    /// The expectations, bound to the buffers.
    pub expect: Vec<expect::Bound>,
}

fn ron_options() -> ron::Options {
    // `kernel: "vecadd"` rather than `kernel: Some("vecadd")`.
    ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
}

/// The 1-based `line`'s text.
fn line_text(text: &str, line: usize) -> String {
    text.lines()
        .nth(line.saturating_sub(1))
        .unwrap_or("")
        .trim_end_matches('\r')
        .to_string()
}

impl Launch {
    /// Reads a launch file.
    pub fn read(path: &Path) -> Result<Launch, LaunchError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            LaunchError::new(format!("cannot read launch file {}: {e}", path.display()))
                .help("check the path given to --launch")
        })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Launch::from_ron(&text, &path.display().to_string(), &base)
    }

    /// Parses launch-file text; `path` is only for messages, `base_dir` for `File(...)` inits.
    pub fn from_ron(text: &str, path: &str, base_dir: &Path) -> Result<Launch, LaunchError> {
        let raw: RawLaunch = ron_options().from_str(text).map_err(|e| {
            // RON reports where it stopped: for a custom error (a bad type name), just after the
            // offending value; the position is still on the right line.
            let pos = e.span.start;
            let loc = Location { path: path.to_string(), line: pos.line, col: pos.col, line_text: line_text(text, pos.line) };
            LaunchError::new(format!("bad launch file: {}", e.code)).at(Some(loc)).help(
                "a launch file is `(kernel: \"name\", grid: (x, y, z), block: (x, y, z), buffers: {...}, args: [...])`; see docs/run.md",
            )
        })?;
        let launches = match raw.launches {
            None => Vec::new(),
            Some(list) => {
                let at =
                    |field: &str| find_top_field(text, field).map(|at| location_of(path, text, at));
                let top = [
                    ("kernel", raw.kernel.is_some()),
                    ("grid", raw.grid.is_some()),
                    ("block", raw.block.is_some()),
                    ("args", raw.args.is_some()),
                    ("shared", raw.shared.is_some()),
                ];
                if let Some((field, _)) = top.iter().find(|(_, present)| *present) {
                    return Err(LaunchError::new(format!(
                        "the launch file has both `launches: [...]` and a top-level `{field}:`"
                    ))
                    .at(at(field))
                    .help(format!(
                        "a program of several launches gives each launch its own kernel, grid, block, args, shared and stream inside `launches`: move `{field}` into them, or remove `launches` for a one-kernel launch"
                    )));
                }
                if list.is_empty() {
                    return Err(LaunchError::new("`launches` is empty")
                        .at(at("launches"))
                        .help("give at least one `(kernel: \"NAME\", grid: ..., block: ..., args: [...])`, or use the one-kernel form"));
                }
                let starts = find_top_field(text, "launches")
                    .map(|from| list_item_starts(text, from, b'('))
                    .unwrap_or_default();
                list.into_iter()
                    .enumerate()
                    .map(|(i, l)| KernelLaunch {
                        kernel: l.kernel,
                        grid: l.grid,
                        block: l.block,
                        args: l.args,
                        stream: l.stream,
                        shared: l.shared,
                        location: starts.get(i).map(|&at| location_of(path, text, at)),
                    })
                    .collect()
            }
        };
        let mut launch = Launch {
            kernel: raw.kernel,
            grid: raw.grid,
            block: raw.block,
            shared: raw.shared,
            buffers: Vec::new(),
            args: raw.args.unwrap_or_default(),
            globals: raw.globals,
            extern_calls: raw.extern_calls,
            print: raw.print,
            launches,
            expect: Vec::new(),
            source: Some((path.to_string(), text.to_string())),
        };
        // Each expectation's text starts one past its opening quote.
        let starts = find_top_field(text, "expect")
            .map(|from| list_item_starts(text, from, b'"'))
            .unwrap_or_default();
        for (i, e) in raw.expect.iter().enumerate() {
            let location = starts.get(i).map(|&at| location_of(path, text, at + 1));
            let parsed = expect::Expectation::parse(e).map_err(|err| {
                ExpectSource {
                    expectation: expect::Expectation::unparsed(e),
                    location: location.clone(),
                }
                .error(err)
            })?;
            launch.expect.push(ExpectSource {
                expectation: parsed,
                location,
            });
        }
        let buffers_at = find_field(text, "buffers");
        for (name, b) in raw.buffers {
            let location = launch.locate_key(&format!("\"{name}\""), buffers_at);
            launch.buffers.push(BufferDesc {
                name,
                elem: b.elem,
                len: b.len,
                init: b.init,
                base_dir: base_dir.to_path_buf(),
                location,
            });
        }
        launch.check()?;
        Ok(launch)
    }

    /// Overrides fields with the quick-launch flags.
    pub fn apply_flags(&mut self, flags: &LaunchFlags) -> Result<(), LaunchError> {
        if let Some(k) = &flags.kernel {
            self.kernel = Some(k.clone());
        }
        if let Some(g) = &flags.grid {
            self.grid = Some(Dim::parse(g).ok_or_else(|| {
                LaunchError::new(format!("bad --grid `{g}`"))
                    .help("write X, X,Y or X,Y,Z with positive integers, e.g. --grid 4,2")
            })?);
        }
        if let Some(b) = &flags.block {
            self.block = Some(Dim::parse(b).ok_or_else(|| {
                LaunchError::new(format!("bad --block `{b}`"))
                    .help("write X, X,Y or X,Y,Z with positive integers, e.g. --block 64")
            })?);
        }
        if flags.shared.is_some() {
            self.shared = flags.shared;
        }
        for spec in &flags.buffers {
            let desc = parse_buffer_flag(spec)?;
            // A flag buffer replaces the file's buffer of the same name, in its place.
            match self.buffers.iter_mut().find(|b| b.name == desc.name) {
                Some(slot) => *slot = desc,
                None => self.buffers.push(desc),
            }
        }
        if !flags.args.is_empty() {
            self.args = flags
                .args
                .iter()
                .map(|a| parse_arg_flag(a))
                .collect::<Result<_, _>>()?;
        }
        for g in &flags.globals {
            let (name, value) = g.split_once('=').ok_or_else(|| {
                LaunchError::new(format!("bad --global `{g}`"))
                    .help("write NAME=VALUE, e.g. --global lock=1")
            })?;
            let value = Num::parse(value).ok_or_else(|| {
                LaunchError::new(format!("bad --global `{g}`: `{value}` is not a number"))
                    .help("write NAME=VALUE, e.g. --global lock=1")
            })?;
            match self.globals.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = value,
                None => self.globals.push((name.to_string(), value)),
            }
        }
        if let Some(p) = &flags.print {
            self.print = Some(p.clone());
        }
        for e in &flags.expect {
            let parsed = expect::Expectation::parse(e).map_err(|err| {
                ExpectSource {
                    expectation: expect::Expectation::unparsed(e),
                    location: None,
                }
                .error(err)
            })?;
            self.expect.push(ExpectSource {
                expectation: parsed,
                location: None,
            });
        }
        self.check()
    }

    /// Checks that need no program: dimensions, names, inits against their types.
    fn check(&self) -> Result<(), LaunchError> {
        for (i, l) in self.launches.iter().enumerate() {
            for (what, Dim(d)) in [("grid", l.grid), ("block", l.block)] {
                if d.contains(&0) {
                    return Err(LaunchError::new(format!(
                        "launch {} of {}: {what} dimension is zero: {d:?}",
                        i + 1,
                        self.launches.len()
                    ))
                    .at(l.location.clone())
                    .help("every dimension is at least 1"));
                }
            }
        }
        for (what, dim) in [("grid", self.grid), ("block", self.block)] {
            if let Some(Dim(d)) = dim
                && d.contains(&0)
            {
                return Err(LaunchError::new(format!("{what} dimension is zero: {d:?}"))
                    .at(self.locate_field(what))
                    .help("every dimension is at least 1"));
            }
        }
        for b in &self.buffers {
            if b.len == 0 {
                return Err(
                    LaunchError::new(format!("buffer `{}` has length 0", b.name))
                        .at(b.location.clone())
                        .help("give it at least one element"),
                );
            }
            // Checked without allocating them (File inits are read at resolution).
            check_init(b)?;
        }
        for arg in self
            .args
            .iter()
            .chain(self.launches.iter().flat_map(|l| &l.args))
        {
            match arg {
                Arg::Buffer(name) => {
                    if !self.buffers.iter().any(|b| &b.name == name) {
                        return Err(LaunchError::new(format!(
                            "argument refers to unknown buffer `{name}`"
                        ))
                        .at(self.locate(&format!("Buffer(\"{name}\")"), 0))
                        .help(self.known_buffers()));
                    }
                }
                Arg::Scalar { elem, value } => {
                    value.encode(*elem).map_err(|e| {
                        LaunchError::new(format!("scalar argument: {e}"))
                            .at(self.locate_field("args"))
                    })?;
                }
                Arg::Null => {}
                Arg::Bytes(_) | Arg::Struct(_) => {
                    let laid = lay_out(arg).map_err(|e| {
                        LaunchError::new(format!("struct argument: {e}"))
                            .at(self.locate_field("args"))
                    })?;
                    if let Some((_, name)) = laid
                        .pointers
                        .iter()
                        .find(|(_, name)| !self.buffers.iter().any(|b| &b.name == name))
                    {
                        return Err(LaunchError::new(format!(
                            "argument refers to unknown buffer `{name}`"
                        ))
                        .at(self.locate(&format!("Buffer(\"{name}\")"), 0))
                        .help(self.known_buffers()));
                    }
                }
            }
        }
        self.expectations()?;
        if let Some(print) = &self.print {
            for name in print {
                if !self.buffers.iter().any(|b| &b.name == name) {
                    return Err(
                        LaunchError::new(format!("`print` names unknown buffer `{name}`"))
                            .at(self.locate_field("print"))
                            .help(self.known_buffers()),
                    );
                }
            }
        }
        Ok(())
    }

    /// The expectations bound to the buffers (names, types, lengths).
    pub fn expectations(&self) -> Result<Vec<expect::Bound>, LaunchError> {
        let buffers: Vec<(&str, Elem, u64)> = self
            .buffers
            .iter()
            .map(|b| (b.name.as_str(), b.elem, b.len))
            .collect();
        self.expect
            .iter()
            .map(|e| e.expectation.bind(&buffers).map_err(|err| e.error(err)))
            .collect()
    }

    fn known_buffers(&self) -> String {
        if self.buffers.is_empty() {
            "no buffers are declared: add them under `buffers: { \"name\": (type: \"s32\", len: N) }`".to_string()
        } else {
            let names: Vec<&str> = self.buffers.iter().map(|b| b.name.as_str()).collect();
            format!("the buffers are: {}", names.join(", "))
        }
    }

    /// Resolves the launch against `program`: kernel, parameters, globals, bytes (no memory
    /// budget: for tests and tools that trust their launches).
    pub fn resolve(&self, program: &Program) -> Result<Resolved, LaunchError> {
        self.resolve_within(program, u64::MAX)
    }

    /// [`Launch::resolve`], refusing before anything is allocated a launch whose memory
    /// (buffers and their copies, printed text) would exceed `budget` bytes (`--max-memory`).
    pub fn resolve_within(&self, program: &Program, budget: u64) -> Result<Resolved, LaunchError> {
        if !self.launches.is_empty() {
            return Err(LaunchError::new(format!(
                "the launch file is a program of {} launches (`launches: [...]`); this command runs one kernel launch",
                self.launches.len()
            ))
            .at(self.launches[0].location.clone())
            .help("`run`, `fuzz` and `explore` take programs of several launches; this command takes one kernel's launch: give top-level `kernel`, `grid`, `block`, `args`"));
        }
        self.resolve_one(program, budget)
    }

    /// Resolves every launch of the program (the one-kernel form is a program of one launch in
    /// stream 0) against `program`, refusing one whose memory would exceed `budget` bytes
    /// (each launch is checked alone). Errors in a launch of several name it and point at it.
    pub fn resolve_program(
        &self,
        program: &Program,
        budget: u64,
    ) -> Result<Vec<ResolvedLaunch>, LaunchError> {
        if self.launches.is_empty() {
            return Ok(vec![ResolvedLaunch {
                stream: 0,
                resolved: self.resolve_one(program, budget)?,
            }]);
        }
        let n = self.launches.len();
        self.launches
            .iter()
            .enumerate()
            .map(|(i, l)| {
                // The launch alone, without the file's text: errors about its kernel and
                // arguments get no location of their own and point at the entry instead.
                let one = Launch {
                    kernel: l.kernel.clone(),
                    grid: Some(l.grid),
                    block: Some(l.block),
                    shared: Some(l.shared),
                    args: l.args.clone(),
                    launches: Vec::new(),
                    source: None,
                    ..self.clone()
                };
                let resolved = one.resolve_one(program, budget).map_err(|mut e| {
                    e.message = format!("launch {} of {n}: {}", i + 1, e.message);
                    if e.location.is_none() {
                        e.location = l.location.clone();
                    }
                    e
                })?;
                Ok(ResolvedLaunch {
                    stream: l.stream,
                    resolved,
                })
            })
            .collect()
    }

    fn resolve_one(&self, program: &Program, budget: u64) -> Result<Resolved, LaunchError> {
        use semantics::program::FunctionKind;
        let entries: Vec<&semantics::program::Function> = program
            .functions
            .iter()
            .filter(|f| f.kind == FunctionKind::Entry)
            .collect();
        let entry_names = || {
            entries
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let function = match &self.kernel {
            Some(name) => entries
                .iter()
                .find(|f| &f.name == name)
                .copied()
                .ok_or_else(|| {
                    LaunchError::new(format!("the module has no kernel (.entry) named `{name}`"))
                        .at(self.locate_field("kernel"))
                        .help(format!("its kernels are: {}", entry_names()))
                })?,
            None => match entries.as_slice() {
                [only] => *only,
                [] => {
                    return Err(LaunchError::new(
                        "the module has no kernel (.entry) to launch",
                    ));
                }
                _ => {
                    return Err(LaunchError::new("the module has several kernels: say which one to launch")
                        .help(format!("add `kernel: \"NAME\"` to the launch file or pass --kernel NAME; its kernels are: {}", entry_names())));
                }
            },
        };
        let grid = self.grid.ok_or_else(|| {
            LaunchError::new("the launch has no grid dimensions")
                .help("add `grid: (x, y, z)` to the launch file or pass --grid X[,Y,Z]")
        })?;
        let block = self.block.ok_or_else(|| {
            LaunchError::new("the launch has no block dimensions")
                .help("add `block: (x, y, z)` to the launch file or pass --block X[,Y,Z]")
        })?;

        // Arguments against parameters.
        let params = &function.params;
        if params.len() != self.args.len() {
            let list: Vec<String> = params
                .iter()
                .map(|p| format!("{} (.{})", p.name, scalar_name(p.ty)))
                .collect();
            return Err(LaunchError::new(format!(
                "kernel `{}` takes {} parameter{}, the launch gives {} argument{}",
                function.name,
                params.len(),
                if params.len() == 1 { "" } else { "s" },
                self.args.len(),
                if self.args.len() == 1 { "" } else { "s" },
            ))
            .at(self.locate_field("args"))
            .help(if list.is_empty() {
                "it takes no parameters: write `args: []`".to_string()
            } else {
                format!("its parameters are: {}", list.join(", "))
            }));
        }
        let mut args = Vec::with_capacity(params.len());
        for (i, (arg, param)) in self.args.iter().zip(params).enumerate() {
            let value = match arg {
                Arg::Buffer(_) | Arg::Null if param.size != 8 => {
                    let what = match arg {
                        Arg::Buffer(name) => format!("buffer `{name}`"),
                        _ => "Null".to_string(),
                    };
                    return Err(LaunchError::new(format!(
                        "argument {} is {what} (a 64-bit address) but parameter `{}` is .{} ({} bytes)",
                        i + 1,
                        param.name,
                        scalar_name(param.ty),
                        param.size
                    ))
                    .at(self.locate_field("args"))
                    .help(if is_byte_array(param) {
                        BY_VALUE_HELP
                    } else {
                        "pass a Scalar(type: ..., value: ...) for this parameter"
                    }));
                }
                Arg::Buffer(name) => {
                    let index = self
                        .buffers
                        .iter()
                        .position(|b| &b.name == name)
                        .ok_or_else(|| {
                            LaunchError::new(format!("argument refers to unknown buffer `{name}`"))
                                .help(self.known_buffers())
                        })?;
                    ArgValue::Buffer(index)
                }
                Arg::Null => ArgValue::Null,
                Arg::Bytes(_) | Arg::Struct(_) => {
                    let laid = lay_out(arg).map_err(|e| {
                        LaunchError::new(format!("argument {}: {e}", i + 1))
                            .at(self.locate_field("args"))
                    })?;
                    let what = if matches!(arg, Arg::Bytes(_)) {
                        "Bytes"
                    } else {
                        "Struct"
                    };
                    if laid.bytes.len() != param.size as usize {
                        return Err(LaunchError::new(format!(
                            "argument {} is {what} of {} bytes but parameter `{}` is {} bytes",
                            i + 1,
                            laid.bytes.len(),
                            param.name,
                            param.size
                        ))
                        .at(self.locate_field("args"))
                        .help(format!(
                            "give exactly {} bytes (a Struct's fields are laid out at multiples of their size and padded to its largest field)",
                            param.size
                        )));
                    }
                    if laid.align > param.align.max(1) {
                        return Err(LaunchError::new(format!(
                            "argument {} is a Struct aligned to {} bytes but parameter `{}` is aligned to {}",
                            i + 1,
                            laid.align,
                            param.name,
                            param.align
                        ))
                        .at(self.locate_field("args"))
                        .help("check the struct's fields against the kernel's declaration, or pass Bytes([...])"));
                    }
                    let mut pointers = Vec::with_capacity(laid.pointers.len());
                    for (at, name) in laid.pointers {
                        let index = self
                            .buffers
                            .iter()
                            .position(|b| b.name == name)
                            .ok_or_else(|| {
                                LaunchError::new(format!(
                                    "argument refers to unknown buffer `{name}`"
                                ))
                                .help(self.known_buffers())
                            })?;
                        pointers.push((at, index));
                    }
                    ArgValue::Bytes {
                        bytes: laid.bytes,
                        pointers,
                    }
                }
                Arg::Scalar { elem, value } => {
                    if elem.size() as u32 != param.size {
                        return Err(LaunchError::new(format!(
                            "argument {} is {} ({} bytes) but parameter `{}` is .{} ({} bytes)",
                            i + 1,
                            elem.name(),
                            elem.size(),
                            param.name,
                            scalar_name(param.ty),
                            param.size
                        ))
                        .at(self.locate_field("args"))
                        .help(if is_byte_array(param) {
                            BY_VALUE_HELP.to_string()
                        } else {
                            format!("give the scalar a {}-byte type", param.size)
                        }));
                    }
                    if !scalar_fits_parameter(elem.scalar_type(), param.ty) {
                        return Err(LaunchError::new(format!(
                            "argument {} is {} but parameter `{}` is .{}: the types are not compatible",
                            i + 1,
                            elem.name(),
                            param.name,
                            scalar_name(param.ty),
                        ))
                        .at(self.locate_field("args"))
                        .help(format!(
                            "give the scalar the parameter's type, `{}` (PTX ISA \"Type Checking Rules\": \
                             signed and unsigned integers of one size are interchangeable, a bit-size \
                             type matches any type of its size, a floating-point type only itself)",
                            scalar_name(param.ty)
                        )));
                    }
                    let bits = value.encode(*elem).map_err(|e| {
                        LaunchError::new(format!("argument {}: {e}", i + 1))
                            .at(self.locate_field("args"))
                    })?;
                    ArgValue::Scalar {
                        ty: elem.scalar_type(),
                        bits,
                    }
                }
            };
            args.push(value);
        }

        // Module variables.
        let mut globals = Vec::with_capacity(self.globals.len());
        for (name, value) in &self.globals {
            let var = program
                .variables
                .iter()
                .find(|v| &v.name == name)
                .ok_or_else(|| {
                    let names: Vec<&str> =
                        program.variables.iter().map(|v| v.name.as_str()).collect();
                    LaunchError::new(format!(
                        "`globals` sets `{name}`, which is not a module variable"
                    ))
                    .at(self.locate_key(
                        &format!("\"{name}\""),
                        self.source
                            .as_ref()
                            .and_then(|(_, t)| find_field(t, "globals")),
                    ))
                    .help(if names.is_empty() {
                        "the module declares no variables".to_string()
                    } else {
                        format!("its variables are: {}", names.join(", "))
                    })
                })?;
            let bits = match Elem::from_scalar_type(var.ty) {
                Some(elem) => value.encode(elem),
                // Predicates and opaque types: take the value as raw bits.
                None => value.encode(Elem::B64),
            }
            .map_err(|e| {
                LaunchError::new(format!("`globals` value for `{name}`: {e}")).at(self.locate_key(
                    &format!("\"{name}\""),
                    self.source
                        .as_ref()
                        .and_then(|(_, t)| find_field(t, "globals")),
                ))
            })?;
            globals.push((name.clone(), bits));
        }

        // Body-less functions the program calls: each result slot gets the launch's value.
        let extern_at = || {
            self.source
                .as_ref()
                .and_then(|(_, t)| find_field(t, "extern_calls"))
        };
        let slots: Vec<&semantics::program::Variable> = program
            .variables
            .iter()
            .filter(|v| v.name.ends_with(semantics::load::EXTERN_SLOT_SUFFIX))
            .collect();
        let called = |v: &semantics::program::Variable| {
            v.name
                .strip_suffix(semantics::load::EXTERN_SLOT_SUFFIX)
                .unwrap_or(&v.name)
                .to_string()
        };
        for (name, _) in &self.extern_calls {
            if !slots.iter().any(|v| &called(v) == name) {
                let names: Vec<String> = slots.iter().map(|v| called(v)).collect();
                return Err(LaunchError::new(format!(
                    "`extern_calls` names `{name}`, which the program does not call as a function without a body"
                ))
                .at(self.locate_key(&format!("\"{name}\""), extern_at()))
                .help(if names.is_empty() {
                    "the program calls no body-less function: remove `extern_calls`".to_string()
                } else {
                    format!("the body-less functions it calls are: {}", names.join(", "))
                }));
            }
        }
        let mut extern_values: Vec<(String, Vec<u64>)> = Vec::new();
        for slot in &slots {
            let function = called(slot);
            let Some((_, call)) = self.extern_calls.iter().find(|(n, _)| *n == function) else {
                return Err(LaunchError::new(format!(
                    "the program calls `{function}`, a function declared without a body: PTX does not say what it does or returns"
                ))
                .at(self.locate_field("extern_calls").or_else(|| self.locate_field("kernel")))
                .help(format!(
                    "say it in the launch file: `extern_calls: {{ \"{function}\": Value(0) }}` (every call returns that value, in the function's return type), or `Values([0, 1])` (each call returns one of them, a scheduler choice; docs/run.md)"
                )));
            };
            let values: &[Num] = match call {
                ExternCall::Value(v) => std::slice::from_ref(v),
                ExternCall::Values(vs) => vs,
            };
            if values.is_empty() {
                return Err(LaunchError::new(format!(
                    "`extern_calls` gives `{function}` an empty set of values"
                ))
                .at(self.locate_key(&format!("\"{function}\""), extern_at()))
                .help("give at least one value: `Values([0])`, or `Value(0)`"));
            }
            let elem = Elem::from_scalar_type(slot.ty).unwrap_or(Elem::B64);
            let encoded = values
                .iter()
                .map(|value| value.encode(elem))
                .collect::<Result<Vec<u64>, String>>()
                .map_err(|e| {
                    LaunchError::new(format!("`extern_calls` value for `{function}`: {e}"))
                        .at(self.locate_key(&format!("\"{function}\""), extern_at()))
                })?;
            // The slot holds the first value; several values are a choice of each call.
            let bits = encoded[0];
            if encoded.len() > 1 {
                extern_values.push((slot.name.clone(), encoded));
            }
            globals.retain(|(n, _)| n != &slot.name);
            globals.push((slot.name.clone(), bits));
        }

        // Every size is known before anything is allocated: a launch over the budget is
        // refused here rather than by the operating system half-way through building it.
        // A buffer lives in the launch, the initial machine and the running machine; a
        // printed one is also decoded and formatted (about PRINTED_BYTES_PER_ELEMENT each).
        let printed = |b: &BufferDesc| {
            self.print
                .as_ref()
                .is_none_or(|names| names.contains(&b.name))
        };
        let bytes: u64 = self
            .buffers
            .iter()
            .map(|b| b.len.saturating_mul(b.elem.size() as u64))
            .fold(0, u64::saturating_add);
        let total = self
            .buffers
            .iter()
            .filter(|b| printed(b))
            .map(|b| b.len.saturating_mul(PRINTED_BYTES_PER_ELEMENT))
            .fold(bytes.saturating_mul(BUFFER_COPIES), u64::saturating_add);
        if total > budget {
            return Err(LaunchError::new(format!(
                "the launch does not fit in memory: its buffers take {} (about {} with the copies a run keeps and the printed text), over the memory budget of {}",
                size_text(bytes),
                size_text(total),
                size_text(budget)
            ))
            .help("make the buffers smaller, or raise the budget with --max-memory (default: half of the machine's memory)"));
        }
        let mut buffers = Vec::with_capacity(self.buffers.len());
        for b in &self.buffers {
            buffers.push(BufferSpec {
                name: b.name.clone(),
                elem: b.elem.scalar_type(),
                bytes: build_bytes(b)?,
            });
        }
        let print = match &self.print {
            Some(names) => names
                .iter()
                .filter_map(|n| self.buffers.iter().position(|b| &b.name == n))
                .collect(),
            None => (0..self.buffers.len()).collect(),
        };
        Ok(Resolved {
            config: LaunchConfig {
                kernel: Some(function.name.clone()),
                grid: grid.0,
                block: block.0,
                dynamic_shared_bytes: self.shared.unwrap_or(0),
                buffers,
                args,
                globals,
                extern_values,
            },
            kernel: function.name.clone(),
            elems: self.buffers.iter().map(|b| b.elem).collect(),
            print,
            expect: self.expectations()?,
        })
    }

    // -- locating text in the launch file ------------------------------------------------------

    /// The first occurrence of `needle` at or after byte `from`, outside comments.
    fn locate(&self, needle: &str, from: usize) -> Option<Location> {
        let (path, text) = self.source.as_ref()?;
        let masked = mask_comments(text);
        let at = masked.get(from..)?.find(needle)? + from;
        Some(location_of(path, text, at))
    }

    /// `needle` followed by `:` (a map key), searching from `from`.
    fn locate_key(&self, needle: &str, from: Option<usize>) -> Option<Location> {
        let (path, text) = self.source.as_ref()?;
        let masked = mask_comments(text);
        let mut start = from.unwrap_or(0);
        while let Some(i) = masked.get(start..).and_then(|s| s.find(needle)) {
            let at = start + i;
            let after = masked[at + needle.len()..].trim_start();
            if after.starts_with(':') {
                return Some(location_of(path, text, at));
            }
            start = at + needle.len();
        }
        None
    }

    /// The `name:` field of the top-level launch.
    fn locate_field(&self, name: &str) -> Option<Location> {
        let (path, text) = self.source.as_ref()?;
        find_field(text, name).map(|at| location_of(path, text, at))
    }
}

/// Whether a kernel parameter is a byte array (`.param .align A .b8 p[N]`: a struct or array
/// passed by value) rather than one scalar.
fn is_byte_array(param: &semantics::program::ParamInfo) -> bool {
    Elem::from_scalar_type(param.ty).is_none_or(|e| e.size() as u32 != param.size)
}

const BY_VALUE_HELP: &str = "the parameter is a struct or array passed by value: pass `Struct([Scalar(type: ..., value: ...), ...])` or `Bytes([...])` with exactly its size in bytes";

fn scalar_name(ty: ScalarType) -> String {
    format!("{ty:?}").to_ascii_lowercase()
}

/// Byte offset of `name:` as an identifier outside comments, if present.
fn find_field(text: &str, name: &str) -> Option<usize> {
    let masked = mask_comments(text);
    let bytes = masked.as_bytes();
    let mut start = 0;
    while let Some(i) = masked[start..].find(name) {
        let at = start + i;
        let before_ok = at == 0
            || !(bytes[at - 1].is_ascii_alphanumeric()
                || bytes[at - 1] == b'_'
                || bytes[at - 1] == b'"');
        let after = masked[at + name.len()..].trim_start();
        if before_ok && after.starts_with(':') {
            return Some(at);
        }
        start = at + name.len();
    }
    None
}

/// The text with `//` and `/* */` comments blanked (same byte offsets), strings left intact.
fn mask_comments(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < b.len() {
        let c = b[i];
        if in_string {
            out.push(c);
            if c == b'\\' && i + 1 < b.len() {
                out.push(b[i + 1]);
                i += 2;
                continue;
            }
            if c == b'"' {
                in_string = false;
            }
            i += 1;
        } else if c == b'"' {
            in_string = true;
            out.push(c);
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                out.push(if b[i] == b'\n' { b'\n' } else { b' ' });
                i += 1;
            }
            let end = (i + 2).min(b.len());
            out.extend(std::iter::repeat_n(b' ', end - i));
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes, and only outside strings at ASCII bytes,
    // except inside comments, where multi-byte characters became spaces: still valid UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// Byte offset of `name:` at the top level of the outer `( ... )` (not inside a launch of
/// `launches` or a buffer), outside comments and strings.
fn find_top_field(text: &str, name: &str) -> Option<usize> {
    let masked = mask_comments(text);
    let b = masked.as_bytes();
    let mut depth = 0i32;
    let mut in_string = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_string {
            if c == b'\\' {
                i += 1;
            } else if c == b'"' {
                in_string = false;
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                _ if depth == 1
                    && masked[i..].starts_with(name)
                    && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
                    && masked[i + name.len()..].trim_start().starts_with(':') =>
                {
                    return Some(i);
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// Byte offsets of the items of the list that starts after `from` whose first character is
/// `first`: each item's opening parenthesis (`[ (..), (..) ]`, `first` = `(`) or quote
/// (`[ "..", ".." ]`, `first` = `"`).
fn list_item_starts(text: &str, from: usize, first: u8) -> Vec<usize> {
    let masked = mask_comments(text);
    let b = masked.as_bytes();
    let Some(open) = masked.get(from..).and_then(|s| s.find('[')) else {
        return Vec::new();
    };
    let mut starts = Vec::new();
    let mut depth = 0i32;
    let mut in_string = false;
    let mut i = from + open;
    while i < b.len() {
        let c = b[i];
        if in_string {
            if c == b'\\' {
                i += 1;
            } else if c == b'"' {
                in_string = false;
            }
        } else {
            match c {
                b'"' => {
                    if depth == 1 && first == b'"' {
                        starts.push(i);
                    }
                    in_string = true;
                }
                b'(' | b'[' | b'{' => {
                    if depth == 1 && c == first {
                        starts.push(i);
                    }
                    depth += 1;
                }
                b')' | b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    starts
}

fn location_of(path: &str, text: &str, at: usize) -> Location {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = text[line_start..at.min(text.len())].chars().count() + 1;
    Location {
        path: path.to_string(),
        line,
        col,
        line_text: line_text(text, line),
    }
}

// ---------------------------------------------------------------------------------------------
// Buffer contents
// ---------------------------------------------------------------------------------------------

/// `8.0 GiB (8589934592 bytes)`, for messages.
pub fn size_text(bytes: u64) -> String {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    if gib >= 1.0 {
        format!("{gib:.1} GiB ({bytes} bytes)")
    } else {
        format!(
            "{:.1} MiB ({bytes} bytes)",
            bytes as f64 / (1u64 << 20) as f64
        )
    }
}

/// Whether a scalar argument of type `arg` may initialise a parameter of type `param` of the
/// same size (PTX ISA "Type Checking Rules"): signed and unsigned integers of one size are
/// interchangeable, a bit-size type matches any type of its size, and a floating-point type
/// (or a packed half pair) matches only itself.
fn scalar_fits_parameter(arg: ScalarType, param: ScalarType) -> bool {
    use ScalarType::*;
    let is_bits = |t: ScalarType| matches!(t, B8 | B16 | B32 | B64 | B128);
    let is_int = |t: ScalarType| matches!(t, S8 | S16 | S32 | S64 | U8 | U16 | U32 | U64);
    arg == param || is_bits(arg) || is_bits(param) || (is_int(arg) && is_int(param))
}

/// Copies of a buffer a run holds: the launch's, the initial machine's, the running machine's.
const BUFFER_COPIES: u64 = 3;

/// Memory to print one element: its decoded value and its text.
const PRINTED_BYTES_PER_ELEMENT: u64 = 64;

/// The largest buffer, in bytes.
const MAX_BUFFER_BYTES: usize = 1 << 34;

/// The buffer's size in bytes, within [`MAX_BUFFER_BYTES`].
fn buffer_bytes(b: &BufferDesc) -> Result<usize, LaunchError> {
    usize::try_from(b.len)
        .ok()
        .and_then(|n| n.checked_mul(b.elem.size()))
        .filter(|&n| n <= MAX_BUFFER_BYTES)
        .ok_or_else(|| {
            LaunchError::new(format!(
                "buffer `{}`: {} elements of {} is too large",
                b.name,
                b.len,
                b.elem.name()
            ))
            .at(b.location.clone())
            .help("buffers are limited to 16 GiB")
        })
}

/// Checks a buffer's size and initialiser without building it: every value of `Values`, the
/// first element of a `Range` that leaves the type (found by bisection: a range is monotone),
/// the bounds of `Random`. `File` is read at resolution.
fn check_init(b: &BufferDesc) -> Result<(), LaunchError> {
    buffer_bytes(b)?;
    let err = |msg: String| {
        LaunchError::new(format!("buffer `{}`: {msg}", b.name)).at(b.location.clone())
    };
    match &b.init {
        Init::Zeros | Init::File(_) => Ok(()),
        Init::Values(values) => {
            if values.len() as u64 > b.len {
                return Err(err(format!(
                    "Values has {} elements but len is {}",
                    values.len(),
                    b.len
                ))
                .help("make len at least the number of values, or drop values"));
            }
            for (i, v) in values.iter().enumerate() {
                v.encode(b.elem)
                    .map_err(|e| err(format!("value {i}: {e}")))?;
            }
            Ok(())
        }
        Init::Range { .. } => {
            // Element 0, then the first bad element if the last one is bad.
            let bad = |i: u64| range_element(b, i).is_err();
            let last = b.len - 1;
            let first_bad = if bad(0) {
                Some(0)
            } else if bad(last) {
                let (mut good, mut bad_at) = (0, last);
                while bad_at - good > 1 {
                    let mid = good + (bad_at - good) / 2;
                    if bad(mid) {
                        bad_at = mid;
                    } else {
                        good = mid;
                    }
                }
                Some(bad_at)
            } else {
                None
            };
            match first_bad {
                Some(i) => range_element(b, i).map(|_| ()),
                None => Ok(()),
            }
        }
        Init::Random { min, max, .. } => random_values(b.elem, 0, *min, *max, 0)
            .map(|_| ())
            .map_err(err),
    }
}

/// Element `i` of a `Range` buffer, encoded (the error names the element and the value).
fn range_element(b: &BufferDesc, i: u64) -> Result<u64, LaunchError> {
    let Init::Range { start, step } = &b.init else {
        return Ok(0);
    };
    let err = |msg: String| {
        LaunchError::new(format!("buffer `{}`: {msg}", b.name)).at(b.location.clone())
    };
    match b.elem.kind() {
        ElemKind::Float => {
            let (s, d) = (start.as_f64(), step.as_f64());
            Num::Float(s + i as f64 * d)
                .encode(b.elem)
                .map_err(|e| err(format!("element {i}: {e}")))
        }
        _ => {
            let (Some(s), Some(d)) = (start.as_int(), step.as_int()) else {
                return Err(err(format!(
                    "Range(start: {start}, step: {step}) needs integers for {}",
                    b.elem.name()
                )));
            };
            let v = s + i as i128 * d;
            Num::Int(v).encode(b.elem).map_err(|e| {
                err(format!("Range reaches {v} at element {i}: {e}"))
                    .help("choose a start and step that stay in the type's range, or a wider type")
            })
        }
    }
}

/// `n` zero bytes, or the error that they do not fit in memory (never an abort).
fn zeroed(n: usize, b: &BufferDesc) -> Result<Vec<u8>, LaunchError> {
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(n).map_err(|_| {
        LaunchError::new(format!(
            "buffer `{}` does not fit in memory ({n} bytes)",
            b.name
        ))
        .at(b.location.clone())
        .help("make the buffer smaller or free memory")
    })?;
    bytes.resize(n, 0);
    Ok(bytes)
}

/// The buffer's initial bytes.
fn build_bytes(b: &BufferDesc) -> Result<Vec<u8>, LaunchError> {
    let size = b.elem.size();
    let err = |msg: String| {
        LaunchError::new(format!("buffer `{}`: {msg}", b.name)).at(b.location.clone())
    };
    let total = buffer_bytes(b)?;
    check_init(b)?;
    let mut bytes = zeroed(total, b)?;
    let len = b.len as usize;
    let mut put = |i: usize, bits: u64| {
        bytes[i * size..(i + 1) * size].copy_from_slice(&bits.to_le_bytes()[..size])
    };
    match &b.init {
        Init::Zeros => {}
        Init::Values(values) => {
            if values.len() > len {
                return Err(err(format!(
                    "Values has {} elements but len is {}",
                    values.len(),
                    b.len
                ))
                .help("make len at least the number of values, or drop values"));
            }
            for (i, v) in values.iter().enumerate() {
                put(
                    i,
                    v.encode(b.elem)
                        .map_err(|e| err(format!("value {i}: {e}")))?,
                );
            }
        }
        Init::Range { .. } => {
            for i in 0..len {
                put(i, range_element(b, i as u64)?);
            }
        }
        Init::Random { seed, min, max } => {
            let values = random_values(b.elem, *seed, *min, *max, len).map_err(&err)?;
            for (i, v) in values.into_iter().enumerate() {
                put(i, v);
            }
        }
        Init::File(file) => {
            use std::io::Read;
            let path = b.base_dir.join(file);
            let cannot = |e: std::io::Error| {
                err(format!("cannot read {}: {e}", path.display()))
                    .help("File paths are relative to the launch file")
            };
            // Read at most one byte more than the buffer holds: a file that never ends
            // (`/dev/zero`) or a huge one is refused without being read whole.
            let mut data = Vec::new();
            std::fs::File::open(&path)
                .and_then(|f| f.take(total as u64 + 1).read_to_end(&mut data))
                .map_err(cannot)?;
            if data.len() > total || data.len() % size != 0 {
                let has = if data.len() > total {
                    format!("more than {total}")
                } else {
                    data.len().to_string()
                };
                return Err(err(format!(
                    "{} has {has} bytes; the buffer takes at most {} bytes in whole {}-byte elements",
                    path.display(),
                    total,
                    size
                )));
            }
            bytes[..data.len()].copy_from_slice(&data);
        }
    }
    Ok(bytes)
}

/// `len` pseudo-random elements' bits (module doc: the algorithm).
pub fn random_values(
    elem: Elem,
    seed: u64,
    min: Num,
    max: Num,
    len: usize,
) -> Result<Vec<u64>, String> {
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::{Rng, SeedableRng};
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(len);
    match elem.kind() {
        ElemKind::Float => {
            let (lo, hi) = (min.as_f64(), max.as_f64());
            if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
                return Err(format!(
                    "Random needs finite min <= max, got min {min}, max {max}"
                ));
            }
            for _ in 0..len {
                let bits = match elem {
                    Elem::F64 => loop {
                        let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                        let v = lo + u * (hi - lo);
                        if v < hi || lo == hi {
                            break v.to_bits();
                        }
                    },
                    _ => {
                        let (lo, hi) = (lo as f32, hi as f32);
                        let v = loop {
                            let u = (rng.next_u64() >> 40) as f32 * (1.0 / (1u32 << 24) as f32);
                            let v = lo + u * (hi - lo);
                            if v < hi || lo == hi {
                                break v;
                            }
                        };
                        Num::Float(v as f64).encode(elem)?
                    }
                };
                out.push(bits);
            }
        }
        _ => {
            let (Some(lo), Some(hi)) = (min.as_int(), max.as_int()) else {
                return Err(format!(
                    "Random(min: {min}, max: {max}) needs integers for {}",
                    elem.name()
                ));
            };
            if lo > hi {
                return Err(format!("Random needs min <= max, got min {lo}, max {hi}"));
            }
            Num::Int(lo)
                .encode(elem)
                .map_err(|e| format!("Random min: {e}"))?;
            Num::Int(hi)
                .encode(elem)
                .map_err(|e| format!("Random max: {e}"))?;
            // span <= 2^64 because both ends fit a 64-bit type.
            let span = (hi - lo) as u128 + 1;
            for _ in 0..len {
                let offset = if span == 1 << 64 {
                    rng.next_u64() as u128
                } else {
                    let span = span as u64;
                    // Accept x >= 2^64 mod span: the accepted range is a multiple of span.
                    let threshold = span.wrapping_neg() % span;
                    loop {
                        let x = rng.next_u64();
                        if x >= threshold {
                            break (x % span) as u128;
                        }
                    }
                };
                out.push(Num::Int(lo + offset as i128).encode(elem)?);
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Flags
// ---------------------------------------------------------------------------------------------

/// `--buffer name:type:len[:init]`, init `zeros | range:START:STEP | values:1,2,3 |
/// random:SEED:MIN:MAX | file:PATH` (PATH relative to the current directory).
pub fn parse_buffer_flag(spec: &str) -> Result<BufferDesc, LaunchError> {
    let help = "write --buffer NAME:TYPE:LEN[:INIT] with INIT one of zeros, range:START:STEP, values:V1,V2,..., random:SEED:MIN:MAX, file:PATH";
    let bad = |why: String| LaunchError::new(format!("bad --buffer `{spec}`: {why}")).help(help);
    let mut parts = spec.splitn(4, ':');
    let (Some(name), Some(ty), Some(len)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad("expected at least NAME:TYPE:LEN".to_string()));
    };
    if name.is_empty() {
        return Err(bad("the name is empty".to_string()));
    }
    let elem = Elem::parse(ty).ok_or_else(|| {
        bad(format!(
            "unknown element type `{ty}` (element types are {ELEM_NAMES})"
        ))
    })?;
    let len: u64 = len
        .parse()
        .map_err(|_| bad(format!("length `{len}` is not a number")))?;
    let num = |t: &str| Num::parse(t).ok_or_else(|| bad(format!("`{t}` is not a number")));
    let init = match parts.next() {
        None | Some("zeros") => Init::Zeros,
        Some(init) => {
            let (kind, rest) = init.split_once(':').unwrap_or((init, ""));
            match kind {
                "range" => {
                    let (s, d) = rest
                        .split_once(':')
                        .ok_or_else(|| bad("range needs START:STEP".to_string()))?;
                    Init::Range {
                        start: num(s)?,
                        step: num(d)?,
                    }
                }
                "values" => Init::Values(
                    rest.split(',')
                        .filter(|s| !s.trim().is_empty())
                        .map(num)
                        .collect::<Result<_, _>>()?,
                ),
                "random" => {
                    let f: Vec<&str> = rest.split(':').collect();
                    let [seed, min, max] = f.as_slice() else {
                        return Err(bad("random needs SEED:MIN:MAX".to_string()));
                    };
                    let seed = seed
                        .parse()
                        .map_err(|_| bad(format!("seed `{seed}` is not a number")))?;
                    Init::Random {
                        seed,
                        min: num(min)?,
                        max: num(max)?,
                    }
                }
                "file" => Init::File(rest.to_string()),
                other => return Err(bad(format!("unknown init `{other}`"))),
            }
        }
    };
    Ok(BufferDesc {
        name: name.to_string(),
        elem,
        len,
        init,
        base_dir: PathBuf::new(),
        location: None,
    })
}

/// `--arg buffer:NAME | TYPE:VALUE | null`.
pub fn parse_arg_flag(spec: &str) -> Result<Arg, LaunchError> {
    let help = "write --arg buffer:NAME, --arg TYPE:VALUE (e.g. s32:100, f32:2.5), --arg bytes:B0,B1,... (a struct by value) or --arg null";
    if spec.eq_ignore_ascii_case("null") {
        return Ok(Arg::Null);
    }
    if let Some(list) = spec.strip_prefix("bytes:") {
        return list
            .split(',')
            .map(|b| {
                b.trim().parse::<u8>().map_err(|_| {
                    LaunchError::new(format!(
                        "bad --arg `{spec}`: `{b}` is not a byte (0 to 255)"
                    ))
                    .help(help)
                })
            })
            .collect::<Result<Vec<u8>, _>>()
            .map(Arg::Bytes);
    }
    let (ty, value) = spec
        .split_once(':')
        .ok_or_else(|| LaunchError::new(format!("bad --arg `{spec}`")).help(help))?;
    if ty == "buffer" {
        return Ok(Arg::Buffer(value.to_string()));
    }
    let elem = Elem::parse(ty).ok_or_else(|| {
        LaunchError::new(format!(
            "bad --arg `{spec}`: unknown type `{ty}` (element types are {ELEM_NAMES})"
        ))
        .help(help)
    })?;
    let value = Num::parse(value).ok_or_else(|| {
        LaunchError::new(format!("bad --arg `{spec}`: `{value}` is not a number")).help(help)
    })?;
    value
        .encode(elem)
        .map_err(|e| LaunchError::new(format!("bad --arg `{spec}`: {e}")).help(help))?;
    Ok(Arg::Scalar { elem, value })
}

// ---------------------------------------------------------------------------------------------
// Device files
// ---------------------------------------------------------------------------------------------

/// A `--device FILE.ron`: any subset of [`DeviceConfig`]'s fields; the rest keep their defaults.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceFile {
    pub num_sms: Option<u32>,
    pub max_blocks_per_sm: Option<u32>,
    pub max_threads_per_sm: Option<u32>,
    pub max_warps_per_sm: Option<u32>,
    pub shared_mem_per_sm: Option<u32>,
    pub max_threads_per_block: Option<u32>,
    pub warp_size: Option<u32>,
}

impl DeviceFile {
    pub fn read(path: &Path) -> Result<DeviceFile, LaunchError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            LaunchError::new(format!("cannot read device file {}: {e}", path.display()))
                .help("check the path given to --device")
        })?;
        ron_options().from_str(&text).map_err(|e| {
            let pos = e.span.start;
            LaunchError::new(format!("bad device file: {}", e.code))
                .at(Some(Location { path: path.display().to_string(), line: pos.line, col: pos.col, line_text: line_text(&text, pos.line) }))
                .help("a device file is `(num_sms: 16, warp_size: 32, ...)` with any of the fields of `cudasem run --help`")
        })
    }

    /// `base` with this file's fields applied.
    pub fn apply(&self, base: &mut DeviceConfig) {
        let set = |slot: &mut u32, v: Option<u32>| {
            if let Some(v) = v {
                *slot = v;
            }
        };
        set(&mut base.num_sms, self.num_sms);
        set(&mut base.max_blocks_per_sm, self.max_blocks_per_sm);
        set(&mut base.max_threads_per_sm, self.max_threads_per_sm);
        set(&mut base.max_warps_per_sm, self.max_warps_per_sm);
        set(&mut base.shared_mem_per_sm, self.shared_mem_per_sm);
        set(&mut base.max_threads_per_block, self.max_threads_per_block);
        set(&mut base.warp_size, self.warp_size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Launch, LaunchError> {
        Launch::from_ron(text, "t.ron", Path::new("."))
    }

    const VECADD: &str = r#"
// comment with "a": and Buffer("zz")
(
    kernel: "vecadd",
    grid: (2, 1, 1),
    block: (64),
    buffers: {
        "a": (type: "s32", len: 8, init: Range(start: 0, step: 1)),
        "b": (type: "s32", len: 8, init: Values([5, 6, 7])),
        "c": (type: "s32", len: 8),
        "r": (type: "f32", len: 4, init: Random(seed: 7, min: 0, max: 100)),
    },
    args: [Buffer("a"), Buffer("b"), Buffer("c"), Scalar(type: "s32", value: 100), Null],
    globals: { "lock": 1 },
    print: ["c"],
)
"#;

    #[test]
    fn reads_the_documented_format_in_order() {
        let l = parse(VECADD).unwrap();
        assert_eq!(l.kernel.as_deref(), Some("vecadd"));
        assert_eq!(l.grid, Some(Dim([2, 1, 1])));
        assert_eq!(l.block, Some(Dim([64, 1, 1])));
        let names: Vec<&str> = l.buffers.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "r"]);
        assert_eq!(l.args.len(), 5);
        assert_eq!(l.args[4], Arg::Null);
        assert_eq!(l.globals, vec![("lock".to_string(), Num::Int(1))]);
        assert_eq!(
            build_bytes(&l.buffers[1]).unwrap()[..16],
            [5, 0, 0, 0, 6, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0]
        );
        // The key of buffer "b" is on line 9, column 9 (the comment's "a": is skipped).
        let loc = l.buffers[0].location.clone().unwrap();
        assert_eq!((loc.line, loc.col), (8, 9));
    }

    /// The module of PTX `body` (after the `.version`, `.target` and `.address_size` lines).
    fn module(body: &str) -> Program {
        let ptx = format!(".version 7.0\n.target sm_70\n.address_size 64\n{body}");
        let parsed = ptx_parser::parse(&ptx);
        semantics::load(&parsed.module, &ptx)
            .expect("the module loads")
            .0
    }

    /// A kernel calling `nondet` (declared without a body, returning `.b32`) and `touch`
    /// (returning nothing).
    fn extern_caller() -> Program {
        module(
            ".extern .func (.param .b32 r) nondet();\n.extern .func touch(.param .b64 p);\n\
                   .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n\
                   { .param .b32 rv;\n call (rv), nondet, ();\n ld.param.b32 %r1, [rv];\n }\n\
                   { .param .b64 a;\n st.param.b64 [a], %rd1;\n call touch, (a);\n }\n\
                   ld.param.u64 %rd1, [out];\n st.global.u32 [%rd1], %r1;\n\tret;\n}\n",
        )
    }

    #[test]
    fn body_less_calls_need_a_policy_in_the_launch() {
        let program = extern_caller();
        let resolve = |extra: &str| {
            parse(&format!(
                "(kernel: \"k\", grid: (1), block: (1), buffers: {{ \"o\": (type: \"u32\", len: 1) }}, args: [Buffer(\"o\")]{extra})"
            ))
            .unwrap()
            .resolve(&program)
            .map_err(|e| format!("{}; {}", e.message, e.help.unwrap_or_default()))
        };
        // Without a policy: an error naming the function and saying what to write.
        let e = resolve("").unwrap_err();
        assert!(
            e.contains("calls `nondet`, a function declared without a body")
                && e.contains("extern_calls: { \"nondet\": Value(0) }"),
            "{e}"
        );
        let e = resolve(", extern_calls: { \"nondet\": Value(7) }").unwrap_err();
        assert!(e.contains("calls `touch`"), "{e}");
        // With one: the result slot of each function holds the value.
        let r = resolve(", extern_calls: { \"nondet\": Value(-7), \"touch\": Value(0) }").unwrap();
        assert!(
            r.config
                .globals
                .contains(&("nondet.extern".to_string(), 0xFFFF_FFF9)),
            "{:?}",
            r.config.globals
        );
        // A function the program does not call is refused.
        let e = resolve(
            ", extern_calls: { \"nondet\": Value(1), \"touch\": Value(0), \"other\": Value(1) }",
        )
        .unwrap_err();
        assert!(e.contains("`other`") && e.contains("nondet, touch"), "{e}");
        // A set of values: the slot holds the first, the launch lists them all as a choice.
        let r =
            resolve(", extern_calls: { \"nondet\": Values([3, -1, 9]), \"touch\": Values([0]) }")
                .unwrap();
        assert!(
            r.config.globals.contains(&("nondet.extern".to_string(), 3)),
            "{:?}",
            r.config.globals
        );
        assert_eq!(
            r.config.extern_values,
            vec![("nondet.extern".to_string(), vec![3, 0xFFFF_FFFF, 9])]
        );
        // One value is `Value`: no choice.
        let one =
            resolve(", extern_calls: { \"nondet\": Values([5]), \"touch\": Value(0) }").unwrap();
        assert!(one.config.extern_values.is_empty());
        assert!(
            one.config
                .globals
                .contains(&("nondet.extern".to_string(), 5))
        );
        let e =
            resolve(", extern_calls: { \"nondet\": Values([]), \"touch\": Value(0) }").unwrap_err();
        assert!(e.contains("empty set of values"), "{e}");
        let e = resolve(", extern_calls: { \"nondet\": Values([1, 1.5]), \"touch\": Value(0) }")
            .unwrap_err();
        assert!(e.contains("`extern_calls` value for `nondet`"), "{e}");
    }

    /// A kernel with a `.u32` and an `.f32` parameter.
    fn typed_params() -> Program {
        module(".visible .entry k(.param .u32 n, .param .f32 a)\n{\n\tret;\n}\n")
    }

    /// Two kernels: `a(.u64 p)` and `b(.u64 p, .u32 n)`.
    fn two_kernels() -> Program {
        module(
            ".visible .entry a(.param .u64 p)\n{\n\tret;\n}\n\
                   .visible .entry b(.param .u64 p, .param .u32 n)\n{\n\tret;\n}\n",
        )
    }

    const PROGRAM: &str = r#"(
    buffers: { "x": (type: "s32", len: 4), "y": (type: "s32", len: 4) },
    launches: [
        // a comment (with parentheses) between launches
        (kernel: "a", grid: (2, 1, 1), block: 32, args: [Buffer("x")]),
        (kernel: "b", grid: 1, block: (8), args: [Buffer("y"), Scalar(type: "u32", value: 4)],
         stream: 1, shared: 16),
    ],
    print: ["y"],
)"#;

    #[test]
    fn reads_a_program_of_several_launches() {
        let l = parse(PROGRAM).unwrap();
        assert_eq!(l.launches.len(), 2);
        assert_eq!((l.kernel.clone(), l.grid, l.args.len()), (None, None, 0));
        let (a, b) = (&l.launches[0], &l.launches[1]);
        assert_eq!(
            (a.grid, a.block, a.stream, a.shared),
            (Dim([2, 1, 1]), Dim([32, 1, 1]), 0, 0)
        );
        assert_eq!(
            (b.grid, b.block, b.stream, b.shared),
            (Dim([1, 1, 1]), Dim([8, 1, 1]), 1, 16)
        );
        let lines: Vec<usize> = l
            .launches
            .iter()
            .map(|k| k.location.as_ref().unwrap().line)
            .collect();
        assert_eq!(lines, [5, 6]);

        let program = two_kernels();
        let resolved = l.resolve_program(&program, u64::MAX).unwrap();
        let got: Vec<(u32, &str, [u32; 3], u32)> = resolved
            .iter()
            .map(|r| {
                let c = &r.resolved.config;
                (
                    r.stream,
                    r.resolved.kernel.as_str(),
                    c.grid,
                    c.dynamic_shared_bytes,
                )
            })
            .collect();
        assert_eq!(got, [(0, "a", [2, 1, 1], 0), (1, "b", [1, 1, 1], 16)]);
        // Every launch sees all buffers, in the file's order.
        assert_eq!(resolved[1].resolved.config.args[0], ArgValue::Buffer(1));
        assert_eq!(resolved[0].resolved.config.buffers.len(), 2);

        // The one-launch commands refuse a program, pointing at its first launch.
        let e = l.resolve(&program).unwrap_err();
        assert!(e.message.contains("program of 2 launches"), "{e}");
        assert_eq!(e.location.unwrap().line, 5);
        // The one-kernel form is a program of one launch in stream 0.
        let one = parse(VECADD).unwrap();
        assert!(one.launches.is_empty());
    }

    #[test]
    fn program_errors_name_the_launch_and_its_line() {
        let program = two_kernels();
        // Launch 2 gives one argument for two parameters.
        let text = PROGRAM.replace(", Scalar(type: \"u32\", value: 4)", "");
        let e = parse(&text)
            .unwrap()
            .resolve_program(&program, u64::MAX)
            .unwrap_err();
        assert!(
            e.message
                .starts_with("launch 2 of 2: kernel `b` takes 2 parameters"),
            "{e}"
        );
        assert_eq!(e.location.as_ref().unwrap().line, 6, "{e}");
        // Both forms at once: the top-level field's line.
        let text = PROGRAM.replace("    print: [\"y\"],", "    grid: (1),\n    print: [\"y\"],");
        let e = parse(&text).unwrap_err();
        assert!(
            e.message
                .contains("both `launches: [...]` and a top-level `grid:`"),
            "{e}"
        );
        assert_eq!(e.location.as_ref().unwrap().line, 9, "{e}");
        // An unknown buffer in a launch, an empty list, a zero dimension, an unknown field.
        let e = parse(&PROGRAM.replace("Buffer(\"x\")", "Buffer(\"q\")")).unwrap_err();
        assert!(e.message.contains("unknown buffer `q`"), "{e}");
        let e = parse("(launches: [])").unwrap_err();
        assert!(e.message.contains("`launches` is empty"), "{e}");
        let e = parse(&PROGRAM.replace("grid: 1,", "grid: 0,")).unwrap_err();
        assert!(
            e.message
                .starts_with("launch 2 of 2: grid dimension is zero"),
            "{e}"
        );
        assert_eq!(e.location.as_ref().unwrap().line, 6, "{e}");
        let e = parse(&PROGRAM.replace("stream: 1", "steam: 1")).unwrap_err();
        assert!(e.message.contains("steam"), "{e}");
    }

    /// A kernel taking a 16-byte struct by value (`.param .align 8 .b8 s[16]`) and a pointer.
    fn struct_param() -> Program {
        module(".visible .entry k(.param .align 8 .b8 s[16], .param .u64 p)\n{\n\tret;\n}\n")
    }

    #[test]
    fn struct_arguments_are_laid_out_with_natural_alignment() {
        let program = struct_param();
        let resolve = |first: &str| {
            parse(&format!(
                "(kernel: \"k\", grid: (1), block: (1), buffers: {{ \"b\": (type: \"u8\", len: 4) }}, args: [{first}, Buffer(\"b\")])"
            ))
            .and_then(|l| l.resolve(&program))
            .map(|r| r.config.args[0].clone())
            .map_err(|e| e.to_string())
        };
        // s8 at 0, s32 at 4 (padding 1..4), f32 at 8, then padded to the alignment 4: 12 bytes; a
        // u16 more ends at 14, padded to 16.
        let got = resolve(
            "Struct([Scalar(type: \"s8\", value: -1), Scalar(type: \"s32\", value: 2), Scalar(type: \"f32\", value: 1.0), Scalar(type: \"u16\", value: 3)])",
        )
        .unwrap();
        assert_eq!(
            got,
            ArgValue::Bytes {
                bytes: vec![255, 0, 0, 0, 2, 0, 0, 0, 0, 0, 128, 63, 3, 0, 0, 0],
                pointers: vec![],
            }
        );
        // A buffer address at an 8-byte boundary after one s32.
        let got = resolve("Struct([Scalar(type: \"s32\", value: 7), Buffer(\"b\")])").unwrap();
        assert_eq!(
            got,
            ArgValue::Bytes {
                bytes: [vec![7, 0, 0, 0], vec![0; 12]].concat(),
                pointers: vec![(8, 0)],
            }
        );
        let bytes: Vec<String> = (1..=16).map(|b| b.to_string()).collect();
        let got = resolve(&format!("Bytes([{}])", bytes.join(", "))).unwrap();
        assert_eq!(
            got,
            ArgValue::Bytes {
                bytes: (1..=16).collect(),
                pointers: vec![],
            }
        );
        // Wrong sizes, a scalar for the struct, an unknown buffer inside: clear errors.
        let e =
            resolve("Struct([Scalar(type: \"s32\", value: 1), Scalar(type: \"f32\", value: 2.5)])")
                .unwrap_err();
        assert!(
            e.contains("argument 1 is Struct of 8 bytes but parameter `s` is 16 bytes")
                && e.contains("t.ron:1:"),
            "{e}"
        );
        let e = resolve("Bytes([1, 2, 3])").unwrap_err();
        assert!(
            e.contains("argument 1 is Bytes of 3 bytes but parameter `s` is 16 bytes"),
            "{e}"
        );
        let e = resolve("Scalar(type: \"s32\", value: 1)").unwrap_err();
        assert!(e.contains("Struct([") && e.contains("Bytes(["), "{e}");
        let e = resolve("Struct([Buffer(\"zz\"), Null])").unwrap_err();
        assert!(e.contains("unknown buffer `zz`"), "{e}");
        let e = resolve("Struct([Scalar(type: \"s8\", value: 300), Bytes([0])])").unwrap_err();
        assert!(e.contains("300"), "{e}");
    }

    #[test]
    fn scalar_arguments_must_have_a_compatible_type() {
        let program = typed_params();
        let resolve = |n: &str, a: &str| {
            parse(&format!(
                "(kernel: \"k\", grid: (1), block: (1), args: [Scalar(type: \"{n}\", value: 1), Scalar(type: \"{a}\", value: 1)])"
            ))
            .unwrap()
            .resolve(&program)
            .map(|_| ())
            .map_err(|e| e.message)
        };
        // Same-size integers interchange, bit-size types match anything of their size.
        for (n, a) in [
            ("u32", "f32"),
            ("s32", "f32"),
            ("b32", "b32"),
            ("u32", "b32"),
        ] {
            assert_eq!(resolve(n, a), Ok(()), "{n}, {a}");
        }
        // A float for an integer parameter, or an integer for a float one, is refused.
        let e = resolve("f32", "f32").unwrap_err();
        assert!(
            e.contains("argument 1 is f32 but parameter `n` is .u32: the types are not compatible"),
            "{e}"
        );
        let e = resolve("u32", "s32").unwrap_err();
        assert!(
            e.contains("argument 2 is s32 but parameter `a` is .f32"),
            "{e}"
        );
    }

    #[test]
    fn dims_take_one_to_three_components() {
        for (text, want) in [
            ("(3)", [3, 1, 1]),
            ("(3, 2)", [3, 2, 1]),
            ("(3, 2, 4)", [3, 2, 4]),
            ("5", [5, 1, 1]),
        ] {
            let l = parse(&format!("(grid: {text}, block: (1))")).unwrap();
            assert_eq!(l.grid, Some(Dim(want)), "{text}");
        }
        assert!(parse("(grid: (1, 2, 3, 4), block: (1))").is_err());
        assert!(parse("(grid: (0, 1), block: (1))").is_err());
        assert_eq!(Dim::parse("4,2"), Some(Dim([4, 2, 1])));
        assert_eq!(Dim::parse("4,x"), None);
    }

    #[test]
    fn syntax_errors_have_line_and_column() {
        let e = parse("(\n  grid: (1, 1, 1),\n  block: (1, 1, 1)\n  buffers: {},\n)").unwrap_err();
        let loc = e.location.unwrap();
        assert_eq!(loc.line, 4, "{}", e.message);
    }

    #[test]
    fn unknown_type_is_located() {
        let e = parse(
            "(\n grid: (1),\n block: (1),\n buffers: {\n  \"a\": (type: \"s33\", len: 4),\n },\n)",
        )
        .unwrap_err();
        assert!(
            e.message.contains("unknown element type `s33`"),
            "{}",
            e.message
        );
        assert_eq!(e.location.unwrap().line, 5);
    }

    #[test]
    fn unknown_buffer_in_args_is_located() {
        let e = parse("(\n grid: (1),\n block: (1),\n buffers: { \"a\": (type: \"u8\", len: 4) },\n args: [Buffer(\"a\"),\n   Buffer(\"q\")],\n)").unwrap_err();
        assert!(e.message.contains("unknown buffer `q`"), "{}", e.message);
        let loc = e.location.unwrap();
        assert_eq!((loc.line, loc.col), (6, 4));
        assert!(e.help.unwrap().contains("a"));
    }

    #[test]
    fn values_longer_than_len_and_out_of_range() {
        let e = parse("(grid: (1), block: (1), buffers: { \"a\": (type: \"u8\", len: 2, init: Values([1, 2, 3])) })").unwrap_err();
        assert!(
            e.message.contains("Values has 3 elements but len is 2"),
            "{}",
            e.message
        );
        let e = parse("(grid: (1), block: (1), buffers: { \"a\": (type: \"u8\", len: 2, init: Values([256])) })").unwrap_err();
        assert!(
            e.message.contains("256 is out of range for u8"),
            "{}",
            e.message
        );
        let e = parse("(grid: (1), block: (1), buffers: { \"a\": (type: \"s8\", len: 200, init: Range(start: 0, step: 1)) })").unwrap_err();
        assert!(
            e.message.contains("Range reaches 128 at element 128"),
            "{}",
            e.message
        );
        let e =
            parse("(grid: (1), block: (1), args: [Scalar(type: \"u32\", value: -1)])").unwrap_err();
        assert!(e.message.contains("out of range"), "{}", e.message);
    }

    #[test]
    fn unknown_fields_and_duplicate_buffers_are_refused() {
        let e = parse("(grid: (1), block: (1), buffers: { \"a\": (type: \"u8\", lenn: 2) })")
            .unwrap_err();
        assert!(e.message.contains("lenn"), "{}", e.message);
        let e = parse("(grid: (1), block: (1), buffers: { \"a\": (type: \"u8\", len: 2), \"a\": (type: \"u8\", len: 2) })").unwrap_err();
        assert!(e.message.contains("given twice"), "{}", e.message);
    }

    #[test]
    fn encodes_numbers_per_type() {
        assert_eq!(Num::Int(-1).encode(Elem::S32), Ok(0xFFFF_FFFF));
        assert_eq!(Num::Int(-1).encode(Elem::B16), Ok(0xFFFF));
        assert_eq!(Num::Int(u64::MAX as i128).encode(Elem::U64), Ok(u64::MAX));
        assert!(Num::Int(-1).encode(Elem::U64).is_err());
        assert!(Num::Float(1.5).encode(Elem::S32).is_err());
        assert_eq!(Num::Float(3.0).encode(Elem::S32), Ok(3));
        assert_eq!(Num::Int(1).encode(Elem::F32), Ok(1.0f32.to_bits() as u64));
        assert_eq!(
            Num::Float(0.1).encode(Elem::F32),
            Ok(0.1f32.to_bits() as u64)
        );
        assert_eq!(Num::Float(1.0).encode(Elem::F16), Ok(0x3C00));
        assert_eq!(Num::parse("0x10"), Some(Num::Int(16)));
        assert_eq!(Num::parse("-7"), Some(Num::Int(-7)));
        assert!(matches!(Num::parse("nan"), Some(Num::Float(x)) if x.is_nan()));
        assert_eq!(Num::parse("2.5"), Some(Num::Float(2.5)));
        assert_eq!(Num::parse("abc"), None);
    }

    #[test]
    fn random_is_deterministic_and_in_range() {
        let a = random_values(Elem::S32, 7, Num::Int(-5), Num::Int(5), 1000).unwrap();
        let b = random_values(Elem::S32, 7, Num::Int(-5), Num::Int(5), 1000).unwrap();
        assert_eq!(a, b);
        let ints: Vec<i32> = a.iter().map(|&x| x as u32 as i32).collect();
        assert!(ints.iter().all(|&x| (-5..=5).contains(&x)));
        assert!(
            ints.contains(&-5) && ints.contains(&5),
            "both ends are reachable"
        );
        let f = random_values(Elem::F32, 7, Num::Int(0), Num::Int(100), 1000).unwrap();
        assert!(
            f.iter()
                .map(|&x| f32::from_bits(x as u32))
                .all(|x| (0.0..100.0).contains(&x))
        );
        let full = random_values(Elem::U64, 1, Num::Int(0), Num::Int(u64::MAX as i128), 4).unwrap();
        assert_eq!(full.len(), 4);
        // Pinned: a change here changes every launch file's inputs.
        assert_eq!(&ints[..8], &PINNED_S32_SEED7);
    }
    const PINNED_S32_SEED7: [i32; 8] = [4, 0, -4, -2, 5, -2, 3, 2];

    #[test]
    fn flags_build_and_override() {
        let mut l = parse(VECADD).unwrap();
        let flags = LaunchFlags {
            grid: Some("4".into()),
            buffers: vec!["c:s32:8:values:1,2".into(), "d:f32:3:range:0.5:0.25".into()],
            args: vec!["buffer:a".into(), "s32:5".into(), "null".into()],
            globals: vec!["lock=2".into()],
            print: Some(vec!["d".into()]),
            ..LaunchFlags::default()
        };
        l.apply_flags(&flags).unwrap();
        assert_eq!(l.grid, Some(Dim([4, 1, 1])));
        assert_eq!(
            l.buffers[2].init,
            Init::Values(vec![Num::Int(1), Num::Int(2)])
        );
        assert_eq!(l.buffers[4].name, "d");
        assert_eq!(
            l.args,
            vec![
                Arg::Buffer("a".into()),
                Arg::Scalar {
                    elem: Elem::S32,
                    value: Num::Int(5)
                },
                Arg::Null
            ]
        );
        assert_eq!(l.globals[0].1, Num::Int(2));
        assert!(parse_buffer_flag("x:s32").is_err());
        assert!(parse_buffer_flag("x:q32:4").is_err());
        assert!(parse_arg_flag("s32:1.5").is_err());
        assert_eq!(
            parse_arg_flag("bytes:1, 0,255"),
            Ok(Arg::Bytes(vec![1, 0, 255]))
        );
        let e = parse_arg_flag("bytes:1,256").unwrap_err();
        assert!(e.message.contains("`256` is not a byte"), "{e}");
        assert!(
            parse_arg_flag("buffer:zz").is_ok(),
            "checked against the buffers later"
        );
        let mut bad = Launch::default();
        assert!(
            bad.apply_flags(&LaunchFlags {
                args: vec!["buffer:zz".into()],
                ..LaunchFlags::default()
            })
            .is_err()
        );
    }

    #[test]
    fn renders_errors_with_a_caret() {
        let e = parse("(\n grid: (1),\n block: (1),\n args: [Buffer(\"q\")],\n)").unwrap_err();
        let text = e.to_string();
        assert_eq!(
            text,
            "error: argument refers to unknown buffer `q`\n --> t.ron:4:9\n  |\n4 |  args: [Buffer(\"q\")],\n  |         ^\n  = help: no buffers are declared: add them under `buffers: { \"name\": (type: \"s32\", len: N) }`\n"
        );
    }
}
