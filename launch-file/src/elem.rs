//! Element types (`u8` ... `f64`, by their PTX names) and numbers as written, with the
//! encoding of a number into an element's bits.

use ptx_parser::ScalarType;
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use std::fmt;

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
    pub(crate) fn bits(self) -> u32 {
        self.size() as u32 * 8
    }
    /// The integer range of an integer type. Bit types take both signed and unsigned spellings
    /// of their bits (`b32` accepts -1 and 0xFFFFFFFF).
    pub(crate) fn int_range(self) -> (i128, i128) {
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

    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(x) => x,
        }
    }

    /// The integer this number denotes, if it is one (integral floats count).
    pub(crate) fn as_int(self) -> Option<i128> {
        match self {
            Num::Int(i) => Some(i),
            Num::Float(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e38 => Some(x as i128),
            Num::Float(_) => None,
        }
    }

    /// The bits of this number as an element of `elem` (low `elem.size()` bytes), or why not.
    pub fn encode(self, elem: Elem) -> Result<u64, ValueError> {
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
                    return Err(ValueError::NotInteger { value: self, elem });
                };
                let (lo, hi) = elem.int_range();
                if i < lo || i > hi {
                    return Err(ValueError::OutOfRange {
                        value: i,
                        elem,
                        lo,
                        hi,
                    });
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

/// Why a number cannot be an element of a type.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// A non-integral number for an integer type.
    #[error("{value} is not an integer, but the type is {}", .elem.name())]
    NotInteger { value: Num, elem: Elem },
    /// An integer outside the type's range (bit types take both spellings of their bits).
    #[error("{value} is out of range for {} ({lo} to {hi})", .elem.name())]
    OutOfRange {
        value: i128,
        elem: Elem,
        lo: i128,
        hi: i128,
    },
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
