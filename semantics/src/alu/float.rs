//! PTX floating-point instruction semantics (PTX ISA 9.7.3 "Floating-Point Instructions" and
//! 9.7.4 "Half Precision Floating-Point Instructions") on top of [`super::softfloat`].
//!
//! The order of effects is: `.ftz` flushes subnormal inputs (`.f32` and `.f16`: PTX has no
//! `.ftz` on `.f64` and `.bf16` arithmetic), the operation rounds once in the requested mode, a
//! NaN result becomes the canonical NaN, `.ftz` flushes a subnormal result, `.sat` clamps to
//! `[+0.0, 1.0]`, and `.relu` (half-precision `fma`) turns a negative result into `+0.0`.
//!
//! `.rn` on `.f32`/`.f64` uses the host FPU (IEEE 754 binary32/binary64 with round-to-nearest-even
//! is exactly what PTX specifies); every other mode or format goes through the soft-float core.
//! The tests cross-check the two.

use super::float_mode;
use super::softfloat::{self, F16, F32, F64, Fmt, Mode};
use crate::program::{ArithFlags, BinaryOp, UnaryOp};

/// Whether `.ftz` applies to a format: `.f32` (PTX ISA 9.7.3) and `.f16`/`.f16x2` lanes (PTX
/// ISA 9.7.4 "Half Precision Floating-Point Instructions": `add.ftz.f16` "flushes subnormal
/// inputs and results to sign-preserving zero"); `.f64` and `.bf16` always keep subnormals.
fn flushes(fmt: Fmt) -> bool {
    fmt == F32 || fmt == F16
}

/// `.ftz` input flush.
pub(super) fn prep(fmt: Fmt, ftz: bool, x: u64) -> u64 {
    let x = x & fmt.mask();
    if ftz && flushes(fmt) { fmt.flush(x) } else { x }
}

fn finish(fmt: Fmt, flags: ArithFlags, r: u64) -> u64 {
    let mut r = r & fmt.mask();
    if fmt.is_nan(r) {
        r = fmt.canonical_nan();
    }
    if flags.ftz && flushes(fmt) {
        r = fmt.flush(r);
    }
    if flags.sat {
        r = saturate(fmt, r);
    }
    if flags.relu {
        r = super::cvt::relu(fmt, r);
    }
    r
}

/// `.sat` (PTX ISA 9.7.3): clamp to [0.0, 1.0]; NaN becomes +0.0 (and so does -0.0).
pub(super) fn saturate(fmt: Fmt, r: u64) -> u64 {
    let r = r & fmt.mask();
    if fmt.is_nan(r) || fmt.is_neg(r) {
        0
    } else if r > fmt.one() {
        // Positive IEEE bit patterns are ordered like their values.
        fmt.one()
    } else {
        r
    }
}

#[derive(Clone, Copy)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

fn arith(fmt: Fmt, mode: Mode, op: Arith, x: u64, y: u64) -> u64 {
    if mode == Mode::Rn && fmt == F32 {
        let (p, q) = (f32::from_bits(x as u32), f32::from_bits(y as u32));
        let r = match op {
            Arith::Add => p + q,
            Arith::Sub => p - q,
            Arith::Mul => p * q,
            Arith::Div => p / q,
        };
        return r.to_bits() as u64;
    }
    if mode == Mode::Rn && fmt == F64 {
        let (p, q) = (f64::from_bits(x), f64::from_bits(y));
        let r = match op {
            Arith::Add => p + q,
            Arith::Sub => p - q,
            Arith::Mul => p * q,
            Arith::Div => p / q,
        };
        return r.to_bits();
    }
    match op {
        Arith::Add => softfloat::add(fmt, x, y, mode),
        Arith::Sub => softfloat::sub(fmt, x, y, mode),
        Arith::Mul => softfloat::mul(fmt, x, y, mode),
        Arith::Div => softfloat::div(fmt, x, y, mode),
    }
}

/// `fma.rnd` / `mad.rnd` (PTX ISA 9.7.3.5-6): `a * b + c` rounded once. `mad.f32` without a
/// rounding modifier is the same fused operation on sm_20 and later.
pub(super) fn fma(fmt: Fmt, flags: ArithFlags, a: u64, b: u64, c: u64) -> u64 {
    let mode = float_mode(flags.rounding);
    let (x, y, z) = (
        prep(fmt, flags.ftz, a),
        prep(fmt, flags.ftz, b),
        prep(fmt, flags.ftz, c),
    );
    let r = if mode == Mode::Rn && fmt == F32 {
        f32::from_bits(x as u32)
            .mul_add(f32::from_bits(y as u32), f32::from_bits(z as u32))
            .to_bits() as u64
    } else if mode == Mode::Rn && fmt == F64 {
        f64::from_bits(x)
            .mul_add(f64::from_bits(y), f64::from_bits(z))
            .to_bits()
    } else {
        softfloat::fma(fmt, x, y, z, mode)
    };
    finish(fmt, flags, r)
}

/// Total order key for non-NaN values with -0.0 below +0.0.
fn key(fmt: Fmt, x: u64) -> i64 {
    let mag = (x & !fmt.sign_bit() & fmt.mask()) as i64;
    if fmt.is_neg(x) { -mag - 1 } else { mag }
}

/// `min`/`max` (PTX ISA 9.7.3.10-11): a NaN operand is ignored (the other is returned); two NaNs
/// give the canonical NaN; -0.0 counts as smaller than +0.0.
pub(super) fn minmax(fmt: Fmt, is_max: bool, x: u64, y: u64) -> u64 {
    let (x, y) = (x & fmt.mask(), y & fmt.mask());
    match (fmt.is_nan(x), fmt.is_nan(y)) {
        (true, true) => fmt.canonical_nan(),
        (true, false) => y,
        (false, true) => x,
        (false, false) => {
            let (kx, ky) = (key(fmt, x), key(fmt, y));
            if (kx >= ky) == is_max { x } else { y }
        }
    }
}

/// Approximate transcendental functions (PTX ISA 9.7.3.13-20): evaluated in `f64` with `std`
/// and rounded once to the destination format. Deviation D29: hardware `.approx` results
/// may differ in the last ulps.
fn approx(fmt: Fmt, flags: ArithFlags, a: u64, f: fn(f64) -> f64) -> u64 {
    let x = prep(fmt, flags.ftz, a);
    if fmt.is_nan(x) {
        return fmt.canonical_nan();
    }
    let v = f(softfloat::to_f64(fmt, x));
    let r = if fmt == F64 {
        v.to_bits()
    } else {
        softfloat::convert(F64, fmt, v.to_bits(), Mode::Rn)
    };
    finish(fmt, flags, r)
}

/// Float forms of the unary ops; `None` for integer-only ops (the caller applies them to bits).
pub(super) fn unary(op: UnaryOp, fmt: Fmt, flags: ArithFlags, a: u64) -> Option<u64> {
    let mode = float_mode(flags.rounding);
    Some(match op {
        // `mov` moves bits (PTX ISA 9.7.9.1).
        UnaryOp::Mov => a & fmt.mask(),
        // `neg`/`abs` (9.7.3.8-9) are sign-bit operations, NaN payloads included.
        UnaryOp::Neg => prep(fmt, flags.ftz, a) ^ fmt.sign_bit(),
        UnaryOp::Abs => prep(fmt, flags.ftz, a) & !fmt.sign_bit(),
        // `rcp.rnd` (9.7.3.13) is IEEE 1/x; `rcp.approx` is computed the same way (deviation D29).
        UnaryOp::Rcp => {
            let x = prep(fmt, flags.ftz, a);
            finish(fmt, flags, arith(fmt, mode, Arith::Div, fmt.one(), x))
        }
        // `sqrt.rnd` (9.7.3.15) is IEEE; `sqrt.approx` likewise (deviation D29).
        UnaryOp::Sqrt => {
            let x = prep(fmt, flags.ftz, a);
            let r = if mode == Mode::Rn && fmt == F32 {
                f32::from_bits(x as u32).sqrt().to_bits() as u64
            } else if mode == Mode::Rn && fmt == F64 {
                f64::from_bits(x).sqrt().to_bits()
            } else {
                softfloat::sqrt(fmt, x, mode)
            };
            finish(fmt, flags, r)
        }
        UnaryOp::Rsqrt => approx(fmt, flags, a, |v| 1.0 / v.sqrt()),
        UnaryOp::Ex2 => approx(fmt, flags, a, f64::exp2),
        UnaryOp::Lg2 => approx(fmt, flags, a, f64::log2),
        UnaryOp::Sin => approx(fmt, flags, a, f64::sin),
        UnaryOp::Cos => approx(fmt, flags, a, f64::cos),
        UnaryOp::Tanh => approx(fmt, flags, a, f64::tanh),
        UnaryOp::Not
        | UnaryOp::Cnot
        | UnaryOp::Popc
        | UnaryOp::Clz
        | UnaryOp::Brev
        | UnaryOp::Bfind
        | UnaryOp::BfindShiftAmt
        | UnaryOp::CvtF16x2ToFp8x2(_)
        | UnaryOp::CvtFp8x2ToF16x2(_) => return None,
    })
}

/// Float forms of the binary ops; `None` for integer-only ops.
pub(super) fn binary(op: BinaryOp, fmt: Fmt, flags: ArithFlags, a: u64, b: u64) -> Option<u64> {
    let mode = float_mode(flags.rounding);
    let (x, y) = (prep(fmt, flags.ftz, a), prep(fmt, flags.ftz, b));
    let r = match op {
        BinaryOp::Add => arith(fmt, mode, Arith::Add, x, y),
        BinaryOp::Sub => arith(fmt, mode, Arith::Sub, x, y),
        BinaryOp::Mul => arith(fmt, mode, Arith::Mul, x, y),
        // `div.rnd` is IEEE; `div.approx` / `div.full` are computed as `div.rn` (deviation).
        BinaryOp::Div => arith(fmt, mode, Arith::Div, x, y),
        BinaryOp::Min => return Some(minmax(fmt, false, x, y)),
        BinaryOp::Max => return Some(minmax(fmt, true, x, y)),
        // `copysign d, a, b` (9.7.3.x): the sign of `a` on the magnitude of `b`, pure bits.
        BinaryOp::Copysign => {
            let s = fmt.sign_bit();
            return Some(((b & fmt.mask()) & !s) | (a & s));
        }
        _ => return None,
    };
    Some(finish(fmt, flags, r))
}
