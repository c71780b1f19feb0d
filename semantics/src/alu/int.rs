//! Integer, logical and extended-precision arithmetic (PTX ISA 9.7.1 "Integer Arithmetic
//! Instructions", including `mul24 mad24 sad`; 9.7.2 "Extended-Precision Integer Arithmetic
//! Instructions"; 9.7.8 "Logic and Shift Instructions"; 9.7.9 `cvt.pack`).
//!
//! Values are computed exactly in `i128`/`u128` and then either clamped (`.sat`) or truncated to
//! the type's width, which is precisely PTX's two's-complement wrap-around.

use super::{Carry, bits, int_val, is_signed, mask, mask_bits, sext, width};
use crate::program::{ArithFlags, BinaryOp, TernaryOp, UnaryOp};
use ptx_parser::ScalarType;

fn min_of(ty: ScalarType) -> i128 {
    if is_signed(ty) {
        -(1i128 << (width(ty) - 1))
    } else {
        0
    }
}

fn max_of(ty: ScalarType) -> i128 {
    if is_signed(ty) {
        (1i128 << (width(ty) - 1)) - 1
    } else {
        mask(ty) as i128
    }
}

/// Clamps to the type's range (`.sat`) or wraps, and returns the register word.
#[inline]
fn sat_or_wrap(ty: ScalarType, sat: bool, v: i128) -> u64 {
    let v = if sat {
        v.clamp(min_of(ty), max_of(ty))
    } else {
        v
    };
    (v as u64) & mask(ty)
}

#[inline]
pub(super) fn unary(op: UnaryOp, ty: ScalarType, a: u64) -> u64 {
    let m = mask(ty);
    let a = a & m;
    match op {
        // `not` (9.7.8.4) is bitwise, also on `.pred` (width 1).
        UnaryOp::Not => !a & m,
        // `cnot` (9.7.8.5): C's logical negation.
        UnaryOp::Cnot => (a == 0) as u64,
        // `neg.s`/`abs.s` (9.7.1.9-10) wrap: abs(MIN) = MIN.
        UnaryOp::Neg => (int_val(ty, a).wrapping_neg() as u64) & m,
        UnaryOp::Abs => (int_val(ty, a).unsigned_abs() as u64) & m,
        UnaryOp::Popc => a.count_ones() as u64,
        UnaryOp::Clz => bits::clz(ty, a),
        UnaryOp::Brev => bits::brev(ty, a),
        UnaryOp::Bfind => bits::bfind(ty, a, false),
        UnaryOp::BfindShiftAmt => bits::bfind(ty, a, true),
        // `mov`, and float-only ops on integer types (not in PTX): the operand unchanged.
        UnaryOp::Mov
        | UnaryOp::Rcp
        | UnaryOp::Sqrt
        | UnaryOp::Rsqrt
        | UnaryOp::Ex2
        | UnaryOp::Lg2
        | UnaryOp::Sin
        | UnaryOp::Cos
        | UnaryOp::Tanh
        // Conversions between packed narrow floats: routed to `narrow` by `alu::unary`.
        | UnaryOp::CvtF16x2ToFp8x2(_)
        | UnaryOp::CvtFp8x2ToF16x2(_) => a,
    }
}

/// `mul.hi` (9.7.1.3): the upper half of the double-width product.
#[inline]
fn mul_hi(ty: ScalarType, a: u64, b: u64) -> u64 {
    let w = width(ty);
    let m = mask(ty);
    if is_signed(ty) {
        // |a*b| <= 2^126 for 64-bit operands: exact in i128.
        (((int_val(ty, a) * int_val(ty, b)) >> w) as u64) & m
    } else {
        ((((a & m) as u128 * (b & m) as u128) >> w) as u64) & m
    }
}

/// `mul.wide` (9.7.1.3): the full product, twice the width of `ty` (64-bit types, which PTX does
/// not allow, keep the low 64 bits).
#[inline]
fn mul_wide(ty: ScalarType, a: u64, b: u64) -> u64 {
    let p = int_val(ty, a).wrapping_mul(int_val(ty, b));
    (p as u64) & mask_bits(2 * width(ty))
}

/// `div` (9.7.1.6). Division by zero is undefined in PTX; see the module documentation of
/// `alu` for the values chosen (all ones for unsigned, -1/1 for signed).
fn div(ty: ScalarType, a: u64, b: u64) -> u64 {
    let m = mask(ty);
    let (a, b) = (a & m, b & m);
    if is_signed(ty) {
        let w = width(ty);
        let (va, vb) = (sext(a, w), sext(b, w));
        if vb == 0 {
            return if va >= 0 { m } else { 1 };
        }
        // MIN / -1 wraps to MIN (exact for w < 64, wrapping_div for w == 64).
        (va.wrapping_div(vb) as u64) & m
    } else {
        a.checked_div(b).unwrap_or(m)
    }
}

/// `rem` (9.7.1.7): the sign of the dividend (truncating division); `x rem 0 = x`.
fn rem(ty: ScalarType, a: u64, b: u64) -> u64 {
    let m = mask(ty);
    let (a, b) = (a & m, b & m);
    if b == 0 {
        return a;
    }
    if is_signed(ty) {
        let w = width(ty);
        (sext(a, w).wrapping_rem(sext(b, w)) as u64) & m
    } else {
        a % b
    }
}

/// `shl`/`shr` (9.7.8.7-8): the amount is an unsigned 32-bit value; amounts >= the width give 0
/// (`shl`, `shr.u`/`.b`) or the sign fill (`shr.s`).
#[inline]
fn shift(ty: ScalarType, left: bool, a: u64, amount: u64) -> u64 {
    let w = width(ty);
    let m = mask(ty);
    let a = a & m;
    let n = amount & 0xFFFF_FFFF;
    if left {
        if n >= w as u64 { 0 } else { (a << n) & m }
    } else if is_signed(ty) {
        let v = sext(a, w);
        ((v >> n.min(63)) as u64) & m
    } else if n >= w as u64 {
        0
    } else {
        a >> n
    }
}

/// The carry-out of `a + b + cin` at the type's width.
#[inline]
fn add_carry(ty: ScalarType, a: u64, b: u64, cin: bool) -> (u64, bool) {
    let m = mask(ty);
    let s = (a & m) as u128 + (b & m) as u128 + cin as u128;
    ((s as u64) & m, s > m as u128)
}

/// `a - b` with the carry flag as the hardware keeps it for a subtraction: `a + !b + cf`, whose
/// carry-out is the *inverted* borrow (PTX ISA 9.7.2.3-4 `sub.cc`/`subc` say "borrow-out written
/// to CC.CF"; NVIDIA GPUs compute the subtraction as an addition of the complement, so CC.CF = 1
/// when there is no borrow, and `subc` subtracts 1 more when CC.CF = 0). `sub.cc` is `cf = 1`.
/// Mixed chains read the same flag: `sub.cc` of `a < b` then `addc d, 0, 0` gives 0.
#[inline]
fn sub_carry(ty: ScalarType, a: u64, b: u64, cf: bool) -> (u64, bool) {
    add_carry(ty, a, !b, cf)
}

#[inline]
pub(super) fn binary(
    op: BinaryOp,
    ty: ScalarType,
    flags: ArithFlags,
    a: u64,
    b: u64,
    carry: &mut Carry,
) -> u64 {
    let m = mask(ty);
    let (va, vb) = (int_val(ty, a), int_val(ty, b));
    match op {
        // `add`/`sub` (9.7.1.1-2); `.sat` (PTX: `.s32` only) clamps to the type's range.
        BinaryOp::Add => sat_or_wrap(ty, flags.sat, va + vb),
        BinaryOp::Sub => sat_or_wrap(ty, flags.sat, va - vb),
        // `mul.lo`: the low bits of the product do not depend on signedness.
        BinaryOp::Mul => (va.wrapping_mul(vb) as u64) & m,
        BinaryOp::MulHi => mul_hi(ty, a, b),
        BinaryOp::MulWide => mul_wide(ty, a, b),
        BinaryOp::Div => div(ty, a, b),
        BinaryOp::Rem => rem(ty, a, b),
        // `min`/`max` (9.7.1.11-12), signed or unsigned by type.
        BinaryOp::Min => (if va <= vb { a } else { b }) & m,
        BinaryOp::Max => (if va >= vb { a } else { b }) & m,
        BinaryOp::And => a & b & m,
        BinaryOp::Or => (a | b) & m,
        BinaryOp::Xor => (a ^ b) & m,
        BinaryOp::Shl => shift(ty, true, a, b),
        BinaryOp::Shr => shift(ty, false, a, b),
        // Not in PTX for integers: the sign bit of `a` on the other bits of `b`.
        BinaryOp::Copysign => {
            let s = 1u64 << (width(ty) - 1);
            ((b & !s) | (a & s)) & m
        }
        // Extended precision (9.7.2).
        BinaryOp::AddCc => {
            let (d, c) = add_carry(ty, a, b, false);
            *carry = c;
            d
        }
        BinaryOp::AddC => add_carry(ty, a, b, *carry).0,
        BinaryOp::AddCCc => {
            let (d, c) = add_carry(ty, a, b, *carry);
            *carry = c;
            d
        }
        BinaryOp::SubCc => {
            let (d, c) = sub_carry(ty, a, b, true);
            *carry = c;
            d
        }
        BinaryOp::SubC => sub_carry(ty, a, b, *carry).0,
        BinaryOp::SubCCc => {
            let (d, c) = sub_carry(ty, a, b, *carry);
            *carry = c;
            d
        }
        BinaryOp::Mul24 { hi } => mul24(hi, ty, a, b),
        BinaryOp::Bmsk { clamp } => bits::bmsk(clamp, a, b),
        BinaryOp::Szext { clamp } => bits::szext(clamp, ty, a, b),
        // Packing float conversions: routed to `narrow` by `alu::binary`; on bits (not in PTX)
        // the operands' low halves packed.
        BinaryOp::CvtPair(_) => ((a & 0xFFFF) << 16) | (b & 0xFFFF),
    }
}

/// The 48-bit product of `mul24`/`mad24` (PTX ISA 9.7.1 `mul24`): the low 24 bits of each
/// operand, sign-extended from bit 23 for `.s32`, multiplied exactly.
fn product24(ty: ScalarType, a: u64, b: u64) -> i64 {
    let take = |x: u64| {
        if is_signed(ty) {
            sext(x & 0xFF_FFFF, 24)
        } else {
            (x & 0xFF_FFFF) as i64
        }
    };
    take(a) * take(b)
}

/// `mul24.lo/.hi.{s32,u32}` (PTX ISA 9.7.1 `mul24`): `d = t<31..0>` or `t<47..16>` of the 48-bit
/// product `t`.
fn mul24(hi: bool, ty: ScalarType, a: u64, b: u64) -> u64 {
    let t = product24(ty, a, b) as u64;
    (if hi { t >> 16 } else { t }) & 0xFFFF_FFFF
}

/// `mad24.lo/.hi{.sat}.{s32,u32}` (PTX ISA 9.7.1 `mad24`): `d = t<31..0> + c` or
/// `t<47..16> + c`, wrapping at 32 bits; `mad24.hi.sat.s32` clamps the sum of the signed high
/// part and `c` to the `.s32` range.
pub(super) fn mad24(hi: bool, ty: ScalarType, sat: bool, a: u64, b: u64, c: u64) -> u64 {
    let part = mul24(hi, ty, a, b);
    if sat && hi && is_signed(ty) {
        let sum = sext(part, 32) as i128 + sext(c, 32) as i128;
        sat_or_wrap(ScalarType::S32, true, sum)
    } else {
        part.wrapping_add(c) & 0xFFFF_FFFF
    }
}

/// `sad.type d, a, b, c` (PTX ISA 9.7.1 `sad`): `d = c + ((a < b) ? b - a : a - b)`, the
/// difference taken by the type's signedness, the sum wrapping at the type's width.
pub(super) fn sad(ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    let (va, vb) = (int_val(ty, a), int_val(ty, b));
    let diff = (va - vb).unsigned_abs() as i128;
    sat_or_wrap(ty, false, int_val(ty, c) + diff)
}

/// `cvt.pack.sat.ctype.s32{.b32} d, a, b{, c}` (PTX ISA 9.7.9 `cvt.pack`), literally: `a` and
/// `b` (`.s32`) clamped to `ctype` (`size` = `bits` wide, `signed` or not), `b` in the low
/// `size` bits, `a` above it; below 16 bits the low `32 - 2*size` bits of `c` fill the rest
/// (for 16-bit types `c` is absent and ignored).
pub(super) fn cvt_pack_sat(bits: u8, signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let size = u32::from(bits.clamp(1, 16));
    let (lo, hi) = if signed {
        (-(1i64 << (size - 1)), (1i64 << (size - 1)) - 1)
    } else {
        (0, (1i64 << size) - 1)
    };
    let clamp = |x: u64| (sext(x, 32).clamp(lo, hi) as u64) & mask_bits(size);
    let packed = (clamp(a) << size) | clamp(b);
    if 2 * size >= 32 {
        packed & 0xFFFF_FFFF
    } else {
        (packed | (c << (2 * size))) & 0xFFFF_FFFF
    }
}

/// Integer `mad.lo`, `mad.hi` (with `.sat` for `.s32`), `mad.wide` (9.7.1.4); `Fma` on an
/// integer type (not in PTX) is `mad.lo`.
#[inline]
pub(super) fn mad(op: TernaryOp, ty: ScalarType, flags: ArithFlags, a: u64, b: u64, c: u64) -> u64 {
    let m = mask(ty);
    match op {
        TernaryOp::MadHi => {
            let hi = int_val(ty, mul_hi(ty, a, b));
            // `mad.hi.sat.s32`: the sum saturates to the type's range; otherwise it wraps.
            sat_or_wrap(ty, flags.sat, hi + int_val(ty, c))
        }
        TernaryOp::MadWide => {
            let m2 = mask_bits(2 * width(ty));
            mul_wide(ty, a, b).wrapping_add(c & m2) & m2
        }
        _ => {
            let p = int_val(ty, a).wrapping_mul(int_val(ty, b));
            (p.wrapping_add(int_val(ty, c)) as u64) & m
        }
    }
}

/// `mad{.lo,.hi}.cc` / `madc{.lo,.hi}{.cc}` (PTX ISA 9.7.2.5-6): `d = (a*b).{lo,hi} + c (+ CF)`;
/// `read_carry` adds the carry flag in, `write_carry` stores the carry-out of the addition.
#[allow(clippy::too_many_arguments)]
pub fn mad_carry(
    hi: bool,
    read_carry: bool,
    write_carry: bool,
    ty: ScalarType,
    a: u64,
    b: u64,
    c: u64,
    carry: &mut Carry,
) -> u64 {
    let m = mask(ty);
    let t = if hi {
        mul_hi(ty, a, b)
    } else {
        (int_val(ty, a).wrapping_mul(int_val(ty, b)) as u64) & m
    };
    let (d, cout) = add_carry(ty, t, c, read_carry && *carry);
    if write_carry {
        *carry = cout;
    }
    d
}
