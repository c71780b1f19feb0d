//! Atomic read-modify-write values (PTX ISA 9.7.12.x `atom`/`red`) and warp reductions
//! (PTX ISA 9.7.13.x `redux.sync`).

use super::float::minmax;
use super::softfloat::{self, Mode};
use super::{float_fmt, int_val, mask};
use crate::program::{AtomOp, ReduxOp};
use ptx_parser::ScalarType;

/// The new memory value (PTX ISA `atom` semantics):
/// ```text
/// inc(r, s) = (r >= s) ? 0 : r+1;      dec(r, s) = (r == 0 || r > s) ? s : r-1;
/// exch(r, s) = s;                        cas(r, s, t) = (r == s) ? t : r;
/// ```
/// `inc`/`dec` compare unsigned (PTX has them for `.u32` only). Float `add` rounds to nearest
/// even and keeps subnormals (documented deviation for global-memory `atom.add.f32`, which
/// flushes them on hardware); float `min`/`max` follow `min`/`max`'s NaN rules.
pub(super) fn atom_new_value(op: AtomOp, ty: ScalarType, old: u64, a: u64, b: u64) -> u64 {
    let m = mask(ty);
    let (old, a) = (old & m, a & m);
    let fmt = float_fmt(ty);
    match op {
        AtomOp::Add => match fmt {
            Some(fmt) => {
                let r = softfloat::add(fmt, old, a, Mode::Rn);
                r & fmt.mask()
            }
            None => old.wrapping_add(a) & m,
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
            match fmt {
                Some(fmt) => minmax(fmt, is_max, old, a),
                None => {
                    let pick_old = if is_max {
                        int_val(ty, old) >= int_val(ty, a)
                    } else {
                        int_val(ty, old) <= int_val(ty, a)
                    };
                    if pick_old { old } else { a }
                }
            }
        }
        AtomOp::And => old & a,
        AtomOp::Or => old | a,
        AtomOp::Xor => old ^ a,
    }
}

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
