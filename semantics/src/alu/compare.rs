//! Comparisons of `setp`/`set` (PTX ISA 9.7.3.x / 9.7.4.x "Comparison and Selection
//! Instructions", 9.7.4 "Half Precision Comparison Instructions") and the selection instruction
//! `slct`.
//!
//! Integers compare by the type's signedness (`.b` types as unsigned). Floats follow IEEE: the
//! ordered comparisons are false when either operand is NaN, the `u` forms true; `num` is true
//! when neither is NaN, `nan` when either is. `-0.0 == +0.0`. `.ftz` flushes `.f32` and `.f16`
//! subnormal operands to zero first. The packed types `.f16x2 .bf16x2` compare their halves
//! separately: `setp` writes the low half's result to `p` and the high half's to `q`; `set`
//! writes one result per half.

use super::float::prep;
use super::softfloat::{self, F32, Fmt};
use super::{float_fmt, int_val, mask, packed_lanes, sext, width};
use crate::program::BoolOp;
use crate::program::Compare;
use ptx_parser::ScalarType;
use std::cmp::Ordering;

#[inline]
pub(super) fn compare(cmp: Compare, ty: ScalarType, ftz: bool, a: u64, b: u64) -> bool {
    // `None` is "unordered" (a NaN operand).
    let ord: Option<Ordering> = match float_fmt(ty) {
        Some(fmt) => float_order(fmt, ftz, a, b),
        None => Some(int_val(ty, a).cmp(&int_val(ty, b))),
    };
    use Ordering::*;
    match (cmp, ord) {
        (Compare::Num, o) => o.is_some(),
        (Compare::Nan, o) => o.is_none(),
        (Compare::Eq, o) => o == Some(Equal),
        (Compare::Ne, o) => matches!(o, Some(Less | Greater)),
        (Compare::Lt, o) => o == Some(Less),
        (Compare::Le, o) => matches!(o, Some(Less | Equal)),
        (Compare::Gt, o) => o == Some(Greater),
        (Compare::Ge, o) => matches!(o, Some(Greater | Equal)),
        (Compare::Equ, o) => matches!(o, None | Some(Equal)),
        (Compare::Neu, o) => o != Some(Equal),
        (Compare::Ltu, o) => matches!(o, None | Some(Less)),
        (Compare::Leu, o) => o != Some(Greater),
        (Compare::Gtu, o) => matches!(o, None | Some(Greater)),
        (Compare::Geu, o) => o != Some(Less),
    }
}

/// `t = a CmpOp b` and the combining operation of `setp`/`set` (`BoolOp(t, c)`).
fn combined(t: bool, combine: Option<(BoolOp, bool)>) -> bool {
    match combine {
        None => t,
        Some((BoolOp::And, c)) => t && c,
        Some((BoolOp::Or, c)) => t || c,
        Some((BoolOp::Xor, c)) => t != c,
    }
}

/// The two results `setp` combines into `p` and `q` (PTX ISA 9.7.3.x `setp`, 9.7.4 half
/// precision `setp`): `(t, !t)` for a scalar type, `(t_low, t_high)` of the halves for
/// `.f16x2`/`.bf16x2`.
pub(super) fn setp_pair(cmp: Compare, ty: ScalarType, ftz: bool, a: u64, b: u64) -> (bool, bool) {
    match packed_lanes(ty) {
        Some(_) => {
            let half = if ty == ScalarType::F16x2 {
                ScalarType::F16
            } else {
                ScalarType::Bf16
            };
            (
                compare(cmp, half, ftz, a & 0xFFFF, b & 0xFFFF),
                compare(cmp, half, ftz, (a >> 16) & 0xFFFF, (b >> 16) & 0xFFFF),
            )
        }
        None => {
            let t = compare(cmp, ty, ftz, a, b);
            (t, !t)
        }
    }
}

/// `set.CmpOp{.BoolOp}.dtype.stype d, a, b{, c}` (PTX ISA 9.7.3.x `set`, 9.7.4 half precision
/// `set`): `BoolOp(a CmpOp b, c)` as `set_value` of `dtype`; for packed sources one result per
/// 16-bit half, `1.0` of the half format for a packed destination, `0xFFFF` for `.u32`/`.s32`.
pub fn set_result(
    cmp: Compare,
    dst_ty: ScalarType,
    src_ty: ScalarType,
    ftz: bool,
    a: u64,
    b: u64,
    combine: Option<(BoolOp, bool)>,
) -> u64 {
    match packed_lanes(src_ty) {
        Some(lane) => {
            let (lo, hi) = setp_pair(cmp, src_ty, ftz, a, b);
            let one = if packed_lanes(dst_ty).is_some() {
                lane.one()
            } else {
                0xFFFF
            };
            let value = |t| if combined(t, combine) { one } else { 0 };
            (value(hi) << 16) | value(lo)
        }
        None => set_value(dst_ty, combined(compare(cmp, src_ty, ftz, a, b), combine)),
    }
}

fn float_order(fmt: Fmt, ftz: bool, a: u64, b: u64) -> Option<Ordering> {
    let x = softfloat::to_f64(fmt, prep(fmt, ftz, a));
    let y = softfloat::to_f64(fmt, prep(fmt, ftz, b));
    x.partial_cmp(&y)
}

/// `set`'s true value (PTX ISA 9.7.3.x `set`): 1.0 for float destinations, all ones of the
/// width for integer ones, 1 for `.pred`; false is 0 everywhere.
pub(super) fn set_value(dst_ty: ScalarType, value: bool) -> u64 {
    if !value {
        return 0;
    }
    match float_fmt(dst_ty) {
        Some(fmt) => fmt.one(),
        None => mask(dst_ty),
    }
}

/// `slct.dtype.s32 / .f32` (PTX ISA 9.7.8.x `slct`): `c >= 0 ? a : b`, where `-0.0 >= 0` and a NaN
/// `c` selects `b`. `a`/`b` are moved as they are (the machine masks them to `dtype`).
pub(super) fn slct(c_ty: ScalarType, ftz: bool, a: u64, b: u64, c: u64) -> u64 {
    let take_a = match float_fmt(c_ty) {
        Some(fmt) => {
            let c = prep(fmt, ftz && fmt == F32, c);
            !fmt.is_nan(c) && (!fmt.is_neg(c) || c & !fmt.sign_bit() == 0)
        }
        // Integer `c` is signed (`.s32` in PTX); other integer types by their own width.
        None => sext(c, width(c_ty)) >= 0,
    };
    if take_a { a } else { b }
}
