//! Scalar video instructions (PTX ISA "Scalar Video Instructions"): `vadd vsub vabsdiff vmin
//! vmax` (`vop.dtype.atype.btype{.sat}{.op2} d, a{.asel}, b{.bsel}{, c}` and the data merge
//! `vop.dtype.atype.btype{.sat} d.dsel, a{.asel}, b{.bsel}, c`), `vshl vshr` (the same with
//! `.u32` for `b` and a mode `.clamp`/`.wrap`) and `vset` (`vset.atype.btype.cmp` with `.op2` or
//! a data merge). `vmad` and the SIMD forms (`vadd2`, `vadd4`, ...) stay gap `video`.

use super::{Cx, M, m_ty, m_word};
use crate::program::{
    ArithFlags, Compare, Op, TernaryOp, Video, VideoOp, VideoSecondary, VideoSelect,
};
use ptx_parser::{Component, Operand, ScalarType};

/// An operand without its byte/half-word selector, and the selector.
fn split_select(op: &Operand) -> (Operand, Option<VideoSelect>) {
    if let Operand::Symbol {
        name,
        component: Some(c),
        span,
    } = op
    {
        let sel = match c {
            Component::B0 => VideoSelect::B0,
            Component::B1 => VideoSelect::B1,
            Component::B2 => VideoSelect::B2,
            Component::B3 => VideoSelect::B3,
            Component::H0 => VideoSelect::H0,
            Component::H1 => VideoSelect::H1,
            _ => return (op.clone(), None),
        };
        let bare = Operand::Symbol {
            name: name.clone(),
            component: None,
            span: *span,
        };
        return (bare, Some(sel));
    }
    (op.clone(), None)
}

/// The scalar video instructions `vadd vsub vabsdiff vmin vmax vshl vshr vset` (PTX ISA
/// 9.7.16.1): the types, the operation, then the operands with their byte/half selectors.
pub(super) fn video(cx: &mut Cx<'_, '_, '_>, opcode: &str) {
    let is_set = opcode == "vset";
    let is_shift = matches!(opcode, "vshl" | "vshr");
    let words: &[&'static str] = if is_set {
        &["eq", "ne", "lt", "le", "gt", "ge", "add", "min", "max"]
    } else if is_shift {
        &["sat", "clamp", "wrap", "add", "min", "max"]
    } else {
        &["sat", "add", "min", "max"]
    };
    let Some(mods) = cx.mods(|n| m_ty(n).or_else(|| m_word(n, words))) else {
        return;
    };
    let secondary = cx.one(&mods, |m| match m {
        M::Word("add") => Some(VideoSecondary::Add),
        M::Word("min") => Some(VideoSecondary::Min),
        M::Word("max") => Some(VideoSecondary::Max),
        _ => None,
    });
    let sat = mods.has("sat");
    let Some(tys) = video_types(cx, &mods, is_set, is_shift) else {
        return;
    };
    let Some(op) = video_op(cx, &mods, opcode) else {
        return;
    };
    video_operands(cx, op, tys, sat, secondary);
}

/// The operand types: (d, a, b), or (a, b) for `vset` whose result is unsigned; each `.u32` or
/// `.s32`, a shift amount `.u32`.
fn video_types(
    cx: &mut Cx<'_, '_, '_>,
    mods: &super::Mods<'_>,
    is_set: bool,
    is_shift: bool,
) -> Option<[ScalarType; 3]> {
    let tys = mods.types();
    let want = if is_set { 2 } else { 3 };
    if tys.len() != want {
        cx.error(
            cx.ins.span,
            format!(
                "`{}` needs {want} types ({})",
                cx.full_name(),
                if is_set { "a, b" } else { "d, a, b" }
            ),
            "wrong types",
            if is_set {
                "write e.g. `vset.s32.u32.lt`"
            } else {
                "write e.g. `vadd.s32.u32.s32`"
            },
        );
        return None;
    }
    for (t, _) in &tys {
        if !cx.require_ty(
            *t,
            |t| matches!(t, ScalarType::U32 | ScalarType::S32),
            "`.u32` or `.s32` operands",
        ) {
            return None;
        }
    }
    let (d_ty, a_ty, b_ty) = if is_set {
        (ScalarType::U32, tys[0].0, tys[1].0)
    } else {
        (tys[0].0, tys[1].0, tys[2].0)
    };
    if is_shift && b_ty != ScalarType::U32 {
        cx.error(
            cx.ins.span,
            format!("`{}`: the shift amount is `.u32`", cx.full_name()),
            "wrong type",
            "write the third type as `.u32`",
        );
        return None;
    }
    Some([d_ty, a_ty, b_ty])
}

/// The primary operation: shifts need a mode `.clamp`/`.wrap`, `vset` a comparison.
fn video_op(cx: &mut Cx<'_, '_, '_>, mods: &super::Mods<'_>, opcode: &str) -> Option<VideoOp> {
    Some(match opcode {
        "vadd" => VideoOp::Add,
        "vsub" => VideoOp::Sub,
        "vabsdiff" => VideoOp::AbsDiff,
        "vmin" => VideoOp::Min,
        "vmax" => VideoOp::Max,
        "vshl" | "vshr" => {
            let clamp = cx.required(
                mods,
                "a mode `.clamp` or `.wrap`",
                "write e.g. `vshr.u32.u32.u32.clamp`",
                |m| match m {
                    M::Word("clamp") => Some(true),
                    M::Word("wrap") => Some(false),
                    _ => None,
                },
            )?;
            if opcode == "vshl" {
                VideoOp::Shl { clamp }
            } else {
                VideoOp::Shr { clamp }
            }
        }
        _ => {
            let cmp = cx.required(
                mods,
                "a comparison",
                "add one of `.eq .ne .lt .le .gt .ge`",
                |m| {
                    Some(match m {
                        M::Word("eq") => Compare::Eq,
                        M::Word("ne") => Compare::Ne,
                        M::Word("lt") => Compare::Lt,
                        M::Word("le") => Compare::Le,
                        M::Word("gt") => Compare::Gt,
                        M::Word("ge") => Compare::Ge,
                        _ => return None,
                    })
                },
            )?;
            VideoOp::Set(cmp)
        }
    })
}

/// `d{.dsel}, a{.asel}, b{.bsel}{, c}`: a third source comes with a secondary operation or with
/// a data merge, never both.
fn video_operands(
    cx: &mut Cx<'_, '_, '_>,
    op: VideoOp,
    [d_ty, a_ty, b_ty]: [ScalarType; 3],
    sat: bool,
    secondary: Option<VideoSecondary>,
) {
    let ins = cx.ins;
    let ops = &ins.operands;
    let (d_op, d_select) = match ops.first() {
        Some(d) => split_select(d),
        None => (Operand::Sink(ins.span), None),
    };
    let problem = match (secondary.is_some(), d_select.is_some(), ops.len()) {
        (true, true, _) => Some("has both a secondary operation and a data merge `d.dsel`"),
        (false, false, 4) => Some("takes a third source only with `.add .min .max` or `d.dsel`"),
        (false, true, 3) => Some("merges into a third source `c`: write `d.dsel, a, b, c`"),
        _ => None,
    };
    if let Some(problem) = problem {
        let message = format!("`{}` {problem}", cx.full_name());
        cx.error(
            ins.span,
            message,
            "malformed video instruction",
            "write `vop... d, a, b`, `vop....op2 d, a, b, c` or `vop... d.dsel, a, b, c`",
        );
        return;
    }
    let with_c = secondary.is_some() || d_select.is_some();
    if !cx.arity(if with_c { &[4] } else { &[3] }) {
        return;
    }
    let (a_op, a_select) = split_select(&ops[1]);
    let (b_op, b_select) = split_select(&ops[2]);
    let dst = cx.dst(&d_op, Some(d_ty));
    let a = cx.src(&a_op, a_ty);
    let b = cx.src(&b_op, b_ty);
    let c = match ops.get(3) {
        Some(c) => cx.src(c, d_ty),
        None => Some(crate::program::Src::Imm(0)),
    };
    let (Some(dst), Some(a), Some(b), Some(c)) = (dst, a, b, c) else {
        return;
    };
    let video = Video {
        op,
        d_signed: d_ty == ScalarType::S32,
        a_signed: a_ty == ScalarType::S32,
        b_signed: b_ty == ScalarType::S32,
        sat,
        secondary,
        a_select,
        b_select,
        d_select,
    };
    cx.emit(Op::Ternary {
        op: TernaryOp::Video(video),
        ty: d_ty,
        flags: ArithFlags::default(),
        dst,
        a,
        b,
        c,
    });
}
