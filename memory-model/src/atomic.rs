//! The value an atomic writes (PTX ISA 9.7.12.3 "atom": "atomically loads the original value
//! at the location into the destination register, performs a reduction operation with operand
//! b and the value in location a, and stores the result"). One function, [`apply`], used by
//! both memory environments: flat memory's one-step read-modify-write (the machine passes it as
//! the update) and the cached memory's `atomOp` (thesis 4.4, the atomic memory program), so the
//! two cannot disagree about an atomic's result.

use crate::vocabulary::{AtomOp, AtomType};

/// The new memory value of `atom.op.ty` from the old one and the operands `a`, `b` (`b`: cas's
/// new value; ignored by the other operations). PTX ISA 9.7.12.3:
/// ```text
/// inc(r, s) = (r >= s) ? 0 : r+1;      dec(r, s) = (r == 0 || r > s) ? s : r-1;
/// exch(r, s) = s;                        cas(r, s, t) = (r == s) ? t : r;
/// ```
/// Values are the type's low bits; the result has no bits above them. `inc`/`dec` compare
/// unsigned (PTX has them for `.u32` only); `min`/`max` compare by the type's signedness (`.b`
/// types: unsigned). Float `add` rounds to nearest even and keeps subnormals (a documented
/// deviation for global-memory `atom.add.f32`, which flushes them on hardware), and gives the
/// canonical NaN for a NaN result, as the machine's `add` does (PTX ISA 9.7.3.1); float
/// `min`/`max` follow `min`/`max`'s rules (PTX ISA 9.7.3.10-11: a NaN operand is ignored, two
/// give the canonical NaN, -0.0 is smaller than +0.0).
#[inline]
pub fn apply(op: AtomOp, ty: AtomType, old: u64, a: u64, b: u64) -> u64 {
    let m = mask(ty);
    let (old, a) = (old & m, a & m);
    match op {
        AtomOp::Add => match ty {
            AtomType::F32 => f32_add(old, a),
            AtomType::F64 => f64_add(old, a),
            _ => old.wrapping_add(a) & m,
        },
        AtomOp::Inc => {
            if old >= a {
                0
            } else {
                (old + 1) & m
            }
        }
        AtomOp::Dec => {
            if old == 0 || old > a {
                a
            } else {
                old - 1
            }
        }
        AtomOp::Exch => a,
        AtomOp::Cas => {
            if old == a {
                b & m
            } else {
                old
            }
        }
        AtomOp::Min | AtomOp::Max => {
            let is_max = op == AtomOp::Max;
            let keep_old = match ty {
                AtomType::F32 | AtomType::F64 => return float_minmax(ty, is_max, old, a),
                AtomType::S32 | AtomType::S64 => {
                    let (o, v) = (signed(ty, old), signed(ty, a));
                    if is_max { o >= v } else { o <= v }
                }
                _ => {
                    if is_max {
                        old >= a
                    } else {
                        old <= a
                    }
                }
            };
            if keep_old { old } else { a }
        }
        AtomOp::And => old & a,
        AtomOp::Or => old | a,
        AtomOp::Xor => old ^ a,
    }
}

/// The type's value bits.
fn mask(ty: AtomType) -> u64 {
    u64::MAX >> (64 - ty.bits())
}

/// The masked bits of a signed type as a number.
fn signed(ty: AtomType, v: u64) -> i64 {
    let shift = 64 - ty.bits();
    ((v << shift) as i64) >> shift
}

/// The canonical NaN (PTX ISA 9.7.3: all mantissa bits set, sign clear).
fn canonical_nan(ty: AtomType) -> u64 {
    mask(ty) >> 1
}

/// IEEE 754 binary32 sum, round to nearest even, subnormals kept (Rust's `f32` addition is
/// exactly that); any NaN result is the canonical one.
fn f32_add(x: u64, y: u64) -> u64 {
    let r = f32::from_bits(x as u32) + f32::from_bits(y as u32);
    if r.is_nan() {
        canonical_nan(AtomType::F32)
    } else {
        u64::from(r.to_bits())
    }
}

/// IEEE 754 binary64 sum, as [`f32_add`].
fn f64_add(x: u64, y: u64) -> u64 {
    let r = f64::from_bits(x) + f64::from_bits(y);
    if r.is_nan() {
        canonical_nan(AtomType::F64)
    } else {
        r.to_bits()
    }
}

/// Float `min`/`max` on bit patterns (PTX ISA 9.7.3.10-11).
fn float_minmax(ty: AtomType, is_max: bool, x: u64, y: u64) -> u64 {
    let sign = 1u64 << (ty.bits() - 1);
    // Infinity's bits: exponent all ones, mantissa zero; above it (sign aside): NaNs.
    let inf = (mask(ty) >> 1) ^ ((1u64 << mantissa_bits(ty)) - 1);
    let is_nan = |v: u64| (v & !sign) > inf;
    // Orders the non-NaN values as numbers, -0.0 below +0.0: sign and magnitude to two's
    // complement.
    let key = |v: u64| {
        let mag = (v & !sign) as i64;
        if v & sign != 0 { -mag - 1 } else { mag }
    };
    match (is_nan(x), is_nan(y)) {
        (true, true) => canonical_nan(ty),
        (true, false) => y,
        (false, true) => x,
        (false, false) => {
            if (key(x) >= key(y)) == is_max {
                x
            } else {
                y
            }
        }
    }
}

/// Stored mantissa bits of a float type (other types: none).
fn mantissa_bits(ty: AtomType) -> u32 {
    match ty {
        AtomType::F32 => 23,
        AtomType::F64 => 52,
        _ => 0,
    }
}
