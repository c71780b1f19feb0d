//! Warp reductions (PTX ISA 9.7.13.x `redux.sync`). The value an atomic writes is memory's
//! (`memory_model::atomic::apply`), which both memory environments compute it with.

use super::float::minmax;
use super::softfloat::{self, Mode};
use super::{float_fmt, int_val, mask};
use crate::program::ReduxOp;
use ptx_parser::ScalarType;

/// `redux.sync.op.type` (PTX ISA 9.7.13.x): `add` wraps, `min`/`max` by the type's signedness
/// (float types: `min`/`max` NaN rules), `and/or/xor` bitwise. An empty set of values gives the
/// operation's identity (0 for `add/or/xor`, all ones for `and`, the type's extreme for
/// `min`/`max`) so the result is defined even though PTX never reduces over no lanes.
pub(super) fn redux(op: ReduxOp, ty: ScalarType, values: &[u64]) -> u64 {
    let m = mask(ty);
    let fmt = float_fmt(ty);
    let mut it = values.iter().map(|v| v & m);
    let Some(first) = it.next() else {
        return match op {
            ReduxOp::And => m,
            ReduxOp::Min | ReduxOp::Max => match fmt {
                Some(fmt) => fmt.inf(op == ReduxOp::Max),
                None => {
                    let signed = super::is_signed(ty);
                    let top = 1u64 << (super::width(ty) - 1);
                    match (op == ReduxOp::Min, signed) {
                        (true, true) => top - 1,
                        (true, false) => m,
                        (false, true) => top,
                        (false, false) => 0,
                    }
                }
            },
            _ => 0,
        };
    };
    it.fold(first, |acc, v| match op {
        ReduxOp::Add => match fmt {
            Some(fmt) => softfloat::add(fmt, acc, v, Mode::Rn),
            None => acc.wrapping_add(v) & m,
        },
        ReduxOp::Min | ReduxOp::Max => {
            let is_max = op == ReduxOp::Max;
            match fmt {
                Some(fmt) => minmax(fmt, is_max, acc, v),
                None => {
                    let keep = if is_max {
                        int_val(ty, acc) >= int_val(ty, v)
                    } else {
                        int_val(ty, acc) <= int_val(ty, v)
                    };
                    if keep { acc } else { v }
                }
            }
        }
        ReduxOp::And => acc & v,
        ReduxOp::Or => acc | v,
        ReduxOp::Xor => acc ^ v,
    })
}
