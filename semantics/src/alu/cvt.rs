//! `cvt` (PTX ISA 9.7.9.21 "Data Movement and Conversion Instructions: cvt").
//!
//! * int -> int: sign- or zero-extension by the *source* type, or truncation; `.sat` clamps the
//!   source value to the destination range first.
//! * float -> int: rounded with `.rni .rzi .rmi .rpi` (no modifier: `.rzi`, C's semantics), then
//!   always clamped to the destination range ("float-to-integer conversions saturate"); NaN
//!   gives 0.
//! * int -> float and float -> float: rounded once with `.rn .rz .rm .rp` (default `.rn`; exact
//!   when widening). An integer rounding modifier on a float destination rounds to an integral
//!   value first (`cvt.rni.f32.f32`).
//! * `.ftz` flushes `.f32` subnormal sources and results only (`cvt.ftz.f32.f16` keeps a
//!   subnormal `.f16` source); `.sat` on a float destination clamps to [0.0, 1.0] (NaN gives
//!   +0.0).
//! * `.satfinite` (to `.f16`/`.bf16`): a result beyond the largest finite value, infinities
//!   included, becomes that value with its sign; NaN stays NaN. `.relu` (to `.f16`/`.bf16`):
//!   a negative result, `-0.0` included, becomes `+0.0`; NaN stays the canonical NaN.

use super::float::{prep, saturate};
use super::softfloat::{self, F32, Fmt, Mode, Val};
use super::{float_fmt, int_val, is_signed, mask, width};
use crate::program::{ArithFlags, Rounding};
use ptx_parser::ScalarType;

/// The integer rounding of a float -> int conversion.
fn int_mode(r: Option<Rounding>) -> Mode {
    match r {
        Some(Rounding::Rni) | Some(Rounding::Rn) => Mode::Rn,
        Some(Rounding::Rmi) | Some(Rounding::Rm) => Mode::Rm,
        Some(Rounding::Rpi) | Some(Rounding::Rp) => Mode::Rp,
        None | Some(Rounding::Rzi) | Some(Rounding::Rz) => Mode::Rz,
    }
}

fn is_int_rounding(r: Option<Rounding>) -> bool {
    matches!(
        r,
        Some(Rounding::Rni | Rounding::Rzi | Rounding::Rmi | Rounding::Rpi)
    )
}

fn int_range(ty: ScalarType) -> (i128, i128) {
    let w = width(ty);
    if is_signed(ty) {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, mask(ty) as i128)
    }
}

/// Finishes a float result: `.ftz` on `.f32`, `.sat`, `.satfinite`, `.relu`.
fn float_result(fmt: Fmt, flags: ArithFlags, r: u64) -> u64 {
    let mut r = r & fmt.mask();
    if flags.ftz && fmt == F32 {
        r = fmt.flush(r);
    }
    if flags.sat {
        r = saturate(fmt, r);
    }
    if flags.satfinite && r & !fmt.sign_bit() == fmt.inf(false) {
        r = fmt.max_finite(fmt.is_neg(r));
    }
    if flags.relu {
        r = relu(fmt, r);
    }
    r
}

/// `.relu` (PTX ISA 9.7.9 `cvt`, 9.7.4 half-precision `fma`): a negative value becomes `+0.0`;
/// `-0.0` too (a choice: the ISA says "clamps the result to 0 if negative"); NaN is kept.
pub(super) fn relu(fmt: Fmt, r: u64) -> u64 {
    if fmt.is_neg(r) && !fmt.is_nan(r) {
        0
    } else {
        r
    }
}

/// `.ftz` of a `cvt` source: only `.f32` sources are flushed (PTX ISA 9.7.9 `cvt`).
fn prep_source(fmt: Fmt, ftz: bool, a: u64) -> u64 {
    prep(fmt, ftz && fmt == F32, a)
}

pub(super) fn cvt(dst: ScalarType, src: ScalarType, flags: ArithFlags, a: u64) -> u64 {
    match (float_fmt(src), float_fmt(dst)) {
        (None, None) => {
            // int -> int (also `.b`, `.pred` and packed types, as unsigned bit strings).
            let v = int_val(src, a);
            let v = if flags.sat {
                let (lo, hi) = int_range(dst);
                v.clamp(lo, hi)
            } else {
                v
            };
            (v as u64) & mask(dst)
        }
        (Some(sf), None) => {
            // float -> int: round, then saturate to the destination range.
            let x = prep_source(sf, flags.ftz, a);
            let (lo, hi) = int_range(dst);
            let v: i128 = match softfloat::unpack(sf, x) {
                Val::Nan | Val::Zero(_) => 0,
                Val::Inf(neg) => {
                    if neg {
                        lo
                    } else {
                        hi
                    }
                }
                Val::Fin { neg, mant, exp } => {
                    match softfloat::round_integral(neg, mant, exp, int_mode(flags.rounding)) {
                        None => {
                            if neg {
                                lo
                            } else {
                                hi
                            }
                        }
                        Some(r) => {
                            if neg {
                                -(r as i128)
                            } else {
                                r as i128
                            }
                        }
                    }
                }
            };
            (v.clamp(lo, hi) as u64) & mask(dst)
        }
        (None, Some(df)) => {
            // int -> float: exact integer, rounded once.
            let v = int_val(src, a);
            let r = softfloat::round(
                df,
                v < 0,
                v.unsigned_abs(),
                0,
                false,
                super::float_mode(flags.rounding),
            );
            float_result(df, flags, r)
        }
        (Some(sf), Some(df)) => {
            let x = prep_source(sf, flags.ftz, a);
            let r = if is_int_rounding(flags.rounding) {
                // Round to an integral value in the source format (exact), then convert.
                let i = softfloat::round_to_integral_same(sf, x, int_mode(flags.rounding));
                softfloat::convert(sf, df, i, Mode::Rn)
            } else {
                softfloat::convert(sf, df, x, super::float_mode(flags.rounding))
            };
            float_result(df, flags, r)
        }
    }
}
