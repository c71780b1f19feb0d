//! Block and warp collectives (PTX ISA 9.7.13; thesis 5.4.2 and 5.5.1): `bar`/`barrier` (sync,
//! arrive, red), `bar.warp.sync`, `vote`, `shfl`, `match`, `redux`, `activemask`.

use super::{Cx, M, m_ty, m_word};
use crate::load::types;
use crate::program::{BarRed, BarrierKind, Op, ReduxOp, ShflMode, VoteMode};
use ptx_parser::{Operand, ScalarType};

/// `bar{.cta}.sync|arrive|red`, `barrier{.cta}.sync|arrive|red{.aligned}`, `bar.warp.sync`.
pub(super) fn barrier(cx: &mut Cx<'_, '_, '_>, is_barrier: bool) {
    let Some(mods) = cx.mods(|n| {
        m_ty(n).or_else(|| {
            m_word(
                n,
                &[
                    "cta", "sync", "arrive", "red", "aligned", "popc", "and", "or", "warp",
                ],
            )
        })
    }) else {
        return;
    };
    let full = cx.full_name();
    let span = cx.ins.span;
    let u32t = ScalarType::U32;
    let ins = cx.ins;
    let ops = &ins.operands;
    if mods.has("warp") {
        // `bar.warp.sync membermask` (PTX ISA 9.7.13.3).
        if !mods.has("sync") || mods.list.len() != 2 || is_barrier {
            cx.error(
                span,
                format!("`{full}`: the warp barrier is written `bar.warp.sync mask`"),
                "malformed warp barrier",
                "write `bar.warp.sync %r;` or `bar.warp.sync -1;`",
            );
            return;
        }
        if cx.arity(&[1])
            && let Some(mask) = cx.src(&ops[0], u32t)
        {
            cx.emit(Op::WarpSync { mask });
        }
        return;
    }
    let kind = cx.one(&mods, |m| match m {
        M::Word(w @ ("sync" | "arrive" | "red")) => Some(*w),
        _ => None,
    });
    let aligned = !is_barrier || mods.has("aligned");
    match kind {
        Some("sync") | Some("arrive") => {
            let arrive = kind == Some("arrive");
            if mods.has("popc") || mods.has("and") || mods.has("or") || !mods.types().is_empty() {
                cx.error(
                    span,
                    format!("`{full}`: reductions and types belong to `bar.red`"),
                    "extra modifier",
                    "drop the reduction, or use `bar.red`",
                );
                return;
            }
            if !cx.arity(if arrive { &[2] } else { &[1, 2] }) {
                return;
            }
            let id = cx.src(&ops[0], u32t);
            let count = match ops.get(1) {
                Some(op) => match cx.src(op, u32t) {
                    Some(c) => Some(c),
                    None => return,
                },
                None => None,
            };
            if let Some(id) = id {
                let kind = if arrive {
                    BarrierKind::Arrive
                } else {
                    BarrierKind::Sync
                };
                cx.emit(Op::Barrier {
                    kind,
                    id,
                    count,
                    aligned,
                });
            }
        }
        Some("red") => {
            let op = cx.one(&mods, |m| {
                Some(match m {
                    M::Word("popc") => BarRed::Popc,
                    M::Word("and") => BarRed::And,
                    M::Word("or") => BarRed::Or,
                    _ => return None,
                })
            });
            let Some(op) = op else {
                cx.error(
                    span,
                    format!("`{full}` needs a reduction"),
                    "missing reduction",
                    "write `bar.red.popc.u32`, `bar.red.and.pred` or `bar.red.or.pred`",
                );
                return;
            };
            let Some(ty) = cx.ty(&mods) else { return };
            let want = if op == BarRed::Popc {
                u32t
            } else {
                ScalarType::Pred
            };
            if ty != want {
                cx.error(
                    span,
                    format!("`{full}`: this reduction is `{}`", want.directive()),
                    "wrong type",
                    format!("write `{}`", want.directive()),
                );
                return;
            }
            if !cx.arity(&[3, 4]) {
                return;
            }
            let dst = cx.dst(&ops[0], Some(want));
            let id = cx.src(&ops[1], u32t);
            let count = if ops.len() == 4 {
                match cx.src(&ops[2], u32t) {
                    Some(c) => Some(c),
                    None => return,
                }
            } else {
                None
            };
            let pred = cx.pred(&ops[ops.len() - 1]);
            if let (Some(dst), Some(id), Some(pred)) = (dst, id, pred) {
                cx.emit(Op::Barrier {
                    kind: BarrierKind::Red { op, dst, pred },
                    id,
                    count,
                    aligned,
                });
            }
        }
        _ => cx.error(
            span,
            format!("`{full}` needs `.sync`, `.arrive` or `.red`"),
            "missing barrier kind",
            "write e.g. `bar.sync 0;`",
        ),
    }
}

/// The trailing member mask of the `.sync` forms.
fn mask_of(cx: &mut Cx<'_, '_, '_>, op: Option<&Operand>) -> Option<Option<crate::program::Src>> {
    match op {
        Some(op) => cx.src(op, ScalarType::U32).map(Some),
        None => Some(None),
    }
}

/// `vote{.sync}.all|any|uni.pred`, `vote{.sync}.ballot.b32` (PTX ISA 9.7.13.6; thesis `vote`).
pub(super) fn vote(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) =
        cx.mods(|n| m_ty(n).or_else(|| m_word(n, &["all", "any", "uni", "ballot", "sync"])))
    else {
        return;
    };
    let Some(mode) = cx.required(
        &mods,
        "a mode",
        "add `.all`, `.any`, `.uni` or `.ballot`",
        |m| {
            Some(match m {
                M::Word("all") => VoteMode::All,
                M::Word("any") => VoteMode::Any,
                M::Word("uni") => VoteMode::Uni,
                M::Word("ballot") => VoteMode::Ballot,
                _ => return None,
            })
        },
    ) else {
        return;
    };
    let Some(ty) = cx.ty(&mods) else { return };
    let want = if mode == VoteMode::Ballot {
        ScalarType::B32
    } else {
        ScalarType::Pred
    };
    if !types::compatible(ty, want) {
        cx.error(
            cx.ins.span,
            format!(
                "`{}`: this vote produces `{}`",
                cx.full_name(),
                want.directive()
            ),
            "wrong type",
            format!("write `{}`", want.directive()),
        );
        return;
    }
    let sync = mods.has("sync");
    if !cx.arity(if sync { &[3] } else { &[2] }) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let dst = cx.dst(&ops[0], Some(want));
    let pred = cx.pred(&ops[1]);
    let Some(mask) = mask_of(cx, ops.get(2)) else {
        return;
    };
    if let (Some(dst), Some(pred)) = (dst, pred) {
        cx.emit(Op::Vote {
            mode,
            dst,
            pred,
            mask,
        });
    }
}

/// A destination `d` or `d|p`.
fn dst_pair(
    cx: &mut Cx<'_, '_, '_>,
    op: &Operand,
    ty: ScalarType,
) -> Option<(crate::program::RegId, Option<crate::program::RegId>)> {
    match op {
        Operand::Pair(d, p, _) => {
            let d = cx.dst(d, Some(ty))?;
            let p = cx.dst_or_sink(p, Some(ScalarType::Pred))?;
            Some((d, p))
        }
        other => cx.dst(other, Some(ty)).map(|d| (d, None)),
    }
}

/// `shfl{.sync}.up|down|bfly|idx.b32 d[|p], a, b, c{, mask}` (PTX ISA 9.7.9.6).
pub(super) fn shfl(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) =
        cx.mods(|n| m_ty(n).or_else(|| m_word(n, &["up", "down", "bfly", "idx", "sync"])))
    else {
        return;
    };
    let Some(mode) = cx.required(
        &mods,
        "a mode",
        "add `.up`, `.down`, `.bfly` or `.idx`",
        |m| {
            Some(match m {
                M::Word("up") => ShflMode::Up,
                M::Word("down") => ShflMode::Down,
                M::Word("bfly") => ShflMode::Bfly,
                M::Word("idx") => ShflMode::Idx,
                _ => return None,
            })
        },
    ) else {
        return;
    };
    let Some(ty) = cx.ty(&mods) else { return };
    if !cx.require_ty(ty, |t| types::size(t) == 4, "`.b32`") {
        return;
    }
    let sync = mods.has("sync");
    if !cx.arity(if sync { &[5] } else { &[4] }) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let u32t = ScalarType::U32;
    let d = dst_pair(cx, &ops[0], ScalarType::B32);
    let a = cx.src(&ops[1], ScalarType::B32);
    let b = cx.src(&ops[2], u32t);
    let c = cx.src(&ops[3], u32t);
    let Some(mask) = mask_of(cx, ops.get(4)) else {
        return;
    };
    if let (Some((dst, dst_pred)), Some(a), Some(b), Some(c)) = (d, a, b, c) {
        cx.emit(Op::Shfl {
            mode,
            dst,
            dst_pred,
            a,
            b,
            c,
            mask,
        });
    }
}

/// `match.any|all.sync.b32|b64 d[|p], a, mask` (PTX ISA 9.7.13.8).
pub(super) fn match_sync(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) = cx.mods(|n| m_ty(n).or_else(|| m_word(n, &["any", "all", "sync"]))) else {
        return;
    };
    let all = cx.one(&mods, |m| match m {
        M::Word("all") => Some(true),
        M::Word("any") => Some(false),
        _ => None,
    });
    let Some(all) = all else {
        cx.error(
            cx.ins.span,
            format!("`{}` needs `.any` or `.all`", cx.full_name()),
            "missing mode",
            "write `match.any.sync.b32` or `match.all.sync.b32`",
        );
        return;
    };
    if !mods.has("sync") {
        cx.error(
            cx.ins.span,
            format!("`{}` needs `.sync`", cx.full_name()),
            "missing `.sync`",
            "write `match.any.sync.b32 d, a, mask`",
        );
        return;
    }
    let Some(ty) = cx.ty(&mods) else { return };
    if !cx.require_ty(
        ty,
        |t| types::is_int(t) && matches!(types::size(t), 4 | 8),
        "`.b32` or `.b64`",
    ) || !cx.arity(&[3])
    {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let d = dst_pair(cx, &ops[0], ScalarType::B32);
    if matches!(d, Some((_, Some(_)))) && !all {
        cx.error(
            ops[0].span(),
            "`match.any` has no predicate destination",
            "extra `|p`",
            "drop `|p`, or use `match.all`",
        );
        return;
    }
    let a = cx.src(&ops[1], ty);
    let mask = cx.src(&ops[2], ScalarType::U32);
    if let (Some((dst, dst_pred)), Some(a), Some(mask)) = (d, a, mask) {
        cx.emit(Op::Match {
            all,
            ty,
            dst,
            dst_pred,
            a,
            mask,
        });
    }
}

/// `redux.sync.op.type d, a, mask` (PTX ISA 9.7.13.10).
pub(super) fn redux(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) = cx.mods(|n| {
        m_ty(n).or_else(|| m_word(n, &["sync", "add", "min", "max", "and", "or", "xor"]))
    }) else {
        return;
    };
    let op = cx.one(&mods, |m| {
        Some(match m {
            M::Word("add") => ReduxOp::Add,
            M::Word("min") => ReduxOp::Min,
            M::Word("max") => ReduxOp::Max,
            M::Word("and") => ReduxOp::And,
            M::Word("or") => ReduxOp::Or,
            M::Word("xor") => ReduxOp::Xor,
            _ => return None,
        })
    });
    let Some(op) = op else {
        cx.error(
            cx.ins.span,
            format!("`{}` needs an operation", cx.full_name()),
            "missing operation",
            "add `.add .min .max .and .or .xor`",
        );
        return;
    };
    if !mods.has("sync") {
        cx.error(
            cx.ins.span,
            format!("`{}` needs `.sync`", cx.full_name()),
            "missing `.sync`",
            "write `redux.sync.add.u32 d, a, mask`",
        );
        return;
    }
    let Some(ty) = cx.ty(&mods) else { return };
    let ok = match op {
        ReduxOp::And | ReduxOp::Or | ReduxOp::Xor => types::size(ty) == 4 && types::is_int(ty),
        _ => matches!(ty, ScalarType::U32 | ScalarType::S32),
    };
    if !cx.require_ty(ty, |_| ok, "`.u32`/`.s32` (`.b32` for bitwise operations)")
        || !cx.arity(&[3])
    {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let dst = cx.dst(&ops[0], Some(ty));
    let a = cx.src(&ops[1], ty);
    let mask = cx.src(&ops[2], ScalarType::U32);
    if let (Some(dst), Some(a), Some(mask)) = (dst, a, mask) {
        cx.emit(Op::Redux {
            op,
            ty,
            dst,
            a,
            mask,
        });
    }
}

/// `activemask.b32 d` (PTX ISA 9.7.13.9).
pub(super) fn activemask(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) = cx.mods(m_ty) else { return };
    let Some(ty) = cx.ty(&mods) else { return };
    if !cx.require_ty(ty, |t| t == ScalarType::B32, "`.b32`") || !cx.arity(&[1]) {
        return;
    }
    let ins = cx.ins;
    if let Some(dst) = cx.dst(&ins.operands[0], Some(ty)) {
        cx.emit(Op::ActiveMask { dst });
    }
}
