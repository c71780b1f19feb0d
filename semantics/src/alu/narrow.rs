//! Conversions that pack or unpack two narrow floats (PTX ISA 9.7.9 "Data Movement and
//! Conversion Instructions: cvt", the `.f16x2 .bf16x2 .e4m3x2 .e5m2x2` forms; the formats are
//! PTX ISA 5.2.5 "Alternate Floating-Point Data Formats").
//!
//! * `cvt.frnd{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b`: `d[31:16] = cvt(a)`,
//!   `d[15:0] = cvt(b)`, each exactly as the scalar `cvt.frnd.f16.f32` (module `cvt`).
//! * `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b`: `d[15:8] = cvt(a)`,
//!   `d[7:0] = cvt(b)`; from `.f16x2`, the high half goes to the high byte.
//! * `cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a`: the high byte of `a` to the high half.
//!
//! `.e5m2` is an IEEE-style binary format (1 sign, 5 exponent bits of bias 15, 2 fraction
//! bits, infinities, NaNs): the soft-float core rounds into it directly. `.e4m3` (bias 7, 3
//! fraction bits) has no infinities and a single NaN pattern per sign (`S.1111.111`), so its
//! largest exponent field still holds finite values up to 448: it is rounded as described at
//! [`to_e4m3`]. Converting to 8 bits requires `.satfinite` (the loader insists): a finite or
//! infinite value beyond the largest finite one becomes it, with its sign; NaN becomes the
//! canonical NaN `0x7F`. Widening to `.f16` is exact; an 8-bit NaN gives `.f16`'s canonical NaN.

use super::cvt;
use super::softfloat::{self, F16, F32, Fmt, Mode, Val};
use crate::program::{ArithFlags, Fp8, PackedFloat};
use ptx_parser::ScalarType;

/// `.e5m2` as an IEEE binary format.
const E5M2: Fmt = Fmt {
    exp_bits: 5,
    man_bits: 2,
};

/// A 9-bit format with `.e4m3`'s 3 fraction bits and a bias of 15: `.e4m3` values scaled by
/// `2^-8` sit in it with exactly the same bit pattern below the sign (see [`to_e4m3`]).
const E4M3_SCALED: Fmt = Fmt {
    exp_bits: 5,
    man_bits: 3,
};

/// The largest finite `.e4m3` magnitude (448 = `0.1111.110`).
const E4M3_MAX: u64 = 0x7E;
/// The canonical 8-bit NaN of both formats (`0.1111.111`, `0.11111.11`).
const FP8_NAN: u64 = 0x7F;

/// `.relu` on an 8- or 16-bit result of format `fmt`: a negative value (including `-0.0`)
/// becomes `+0.0`; NaN is already canonical.
fn relu(fmt_sign: u64, is_nan: bool, r: u64) -> u64 {
    if !is_nan && r & fmt_sign != 0 { 0 } else { r }
}

/// Rounds a value of `src` (`.f32` or `.f16`) to `.e4m3` to nearest even with `.satfinite`.
///
/// A finite `x` is scaled by `2^-8` and rounded into [`E4M3_SCALED`]: `.e4m3`'s subnormal
/// quantum `2^-9` becomes that format's `2^-17`, and `.e4m3`'s normal exponents `-6..=8` become
/// `-14..=0`, whose biased fields (`1..=15`) are `.e4m3`'s own. So the rounded 9-bit pattern,
/// below its sign, is the `.e4m3` pattern, provided the exponent field stays below 16 and is not
/// the NaN pattern `1111.111`; anything larger overflowed and saturates to 448.
fn to_e4m3(src: Fmt, x: u64) -> u64 {
    match softfloat::unpack(src, x) {
        Val::Nan => FP8_NAN,
        Val::Inf(neg) => sign8(neg) | E4M3_MAX,
        Val::Zero(neg) => sign8(neg),
        Val::Fin { neg, mant, exp } => {
            let r = softfloat::round(E4M3_SCALED, neg, mant, exp - 8, false, Mode::Rn);
            let magnitude = r & 0xFF;
            if magnitude > E4M3_MAX {
                sign8(neg) | E4M3_MAX
            } else {
                sign8(neg) | magnitude
            }
        }
    }
}

/// Rounds a value of `src` to `.e5m2` to nearest even with `.satfinite`.
fn to_e5m2(src: Fmt, x: u64) -> u64 {
    let r = softfloat::convert(src, E5M2, x, Mode::Rn);
    if E5M2.is_nan(r) {
        FP8_NAN
    } else if r & !E5M2.sign_bit() == E5M2.inf(false) {
        E5M2.max_finite(E5M2.is_neg(r))
    } else {
        r
    }
}

fn sign8(neg: bool) -> u64 {
    if neg { 0x80 } else { 0 }
}

/// One value of `src` to an 8-bit float (`.rn`, `.satfinite`, optional `.relu`).
fn to_fp8(f: Fp8, src: Fmt, flags: ArithFlags, x: u64) -> u64 {
    let r = match f {
        Fp8::E4m3 => to_e4m3(src, x),
        Fp8::E5m2 => to_e5m2(src, x),
    };
    if flags.relu {
        relu(0x80, r & 0x7F == FP8_NAN, r)
    } else {
        r
    }
}

/// One 8-bit float to `.f16` bits (exact; NaN gives the canonical `.f16` NaN), with `.relu`.
fn fp8_to_f16(f: Fp8, flags: ArithFlags, byte: u64) -> u64 {
    let byte = byte & 0xFF;
    let r = match f {
        Fp8::E5m2 => softfloat::convert(E5M2, F16, byte, Mode::Rn),
        Fp8::E4m3 => {
            let neg = byte & 0x80 != 0;
            let (field, frac) = ((byte >> 3) & 0xF, (byte & 0x7) as u128);
            if byte & 0x7F == FP8_NAN {
                F16.canonical_nan()
            } else if field == 0 {
                // Subnormal: frac * 2^-9 (a zero fraction gives a signed zero).
                softfloat::round(F16, neg, frac, -9, false, Mode::Rn)
            } else {
                softfloat::round(F16, neg, frac | 8, field as i32 - 7 - 3, false, Mode::Rn)
            }
        }
    };
    if flags.relu {
        relu(F16.sign_bit(), F16.is_nan(r), r)
    } else {
        r
    }
}

/// `cvt.*.{f16x2,bf16x2,e4m3x2,e5m2x2}.f32 d, a, b`: `a` to the high element, `b` to the low.
pub(super) fn cvt_pair(to: PackedFloat, flags: ArithFlags, a: u64, b: u64) -> u64 {
    match to {
        PackedFloat::F16x2 | PackedFloat::Bf16x2 => {
            let ty = if to == PackedFloat::F16x2 {
                ScalarType::F16
            } else {
                ScalarType::Bf16
            };
            let one = |x| cvt::cvt(ty, ScalarType::F32, flags, x) & 0xFFFF;
            (one(a) << 16) | one(b)
        }
        PackedFloat::Fp8x2(f) => (to_fp8(f, F32, flags, a) << 8) | to_fp8(f, F32, flags, b),
    }
}

/// `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a`.
pub(super) fn f16x2_to_fp8x2(f: Fp8, flags: ArithFlags, a: u64) -> u64 {
    let one = |x: u64| to_fp8(f, F16, flags, x & 0xFFFF);
    (one(a >> 16) << 8) | one(a)
}

/// `cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a`.
pub(super) fn fp8x2_to_f16x2(f: Fp8, flags: ArithFlags, a: u64) -> u64 {
    (fp8_to_f16(f, flags, a >> 8) << 16) | fp8_to_f16(f, flags, a)
}
