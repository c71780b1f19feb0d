//! Comparisons of `setp`/`set` (PTX ISA 9.7.3.x / 9.7.4.x "Comparison and Selection
//! Instructions") and the selection instruction `slct`.
//!
//! Integers compare by the type's signedness (`.b` types as unsigned). Floats follow IEEE: the
//! ordered comparisons are false when either operand is NaN, the `u` forms true; `num` is true
//! when neither is NaN, `nan` when either is. `-0.0 == +0.0`. `.ftz` flushes `.f32` subnormal
//! operands to zero first.

use super::float::prep;
use super::softfloat::{self, F32, Fmt};
use super::{float_fmt, int_val, mask, sext, width};
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
