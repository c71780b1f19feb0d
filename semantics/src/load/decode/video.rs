//! Scalar video instructions (PTX ISA "Scalar Video Instructions"): `vadd vsub vabsdiff vmin
//! vmax` (`vop.dtype.atype.btype{.sat}{.op2} d, a, b{, c}`), `vshl vshr`
//! (`vop.dtype.atype.u32{.sat}.mode{.op2} d, a, b{, c}`) and `vset`
//! (`vset.atype.btype.cmp{.op2} d, a, b{, c}`), on whole 32-bit operands. Operand selectors
//! (`a.b0`, `b.h1`), the data-merge form `d.dsel` and `vmad`, and the SIMD forms (`vadd2`,
//! `vadd4`, ...) stay gap `video`.

use super::{Cx, M, m_ty, m_word};
use crate::program::{ArithFlags, Compare, Op, TernaryOp, Video, VideoOp, VideoSecondary};
use ptx_parser::ScalarType;

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
    // The operand types: (d, a, b), or (a, b) for `vset` whose result is unsigned.
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
        return;
    }
    for (t, _) in &tys {
        if !cx.require_ty(
            *t,
            |t| matches!(t, ScalarType::U32 | ScalarType::S32),
            "`.u32` or `.s32` operands",
        ) {
            return;
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
        return;
    }
    let op = match opcode {
        "vadd" => VideoOp::Add,
        "vsub" => VideoOp::Sub,
        "vabsdiff" => VideoOp::AbsDiff,
        "vmin" => VideoOp::Min,
        "vmax" => VideoOp::Max,
        "vshl" | "vshr" => {
            let clamp = cx.required(
                &mods,
                "a mode `.clamp` or `.wrap`",
                "write e.g. `vshr.u32.u32.u32.clamp`",
                |m| match m {
                    M::Word("clamp") => Some(true),
                    M::Word("wrap") => Some(false),
                    _ => None,
                },
            );
            let Some(clamp) = clamp else { return };
            if opcode == "vshl" {
                VideoOp::Shl { clamp }
            } else {
                VideoOp::Shr { clamp }
            }
        }
        _ => {
            let cmp = cx.required(
                &mods,
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
            );
            let Some(cmp) = cmp else { return };
            VideoOp::Set(cmp)
        }
    };
    let n = cx.ins.operands.len();
    if n == 4 && secondary.is_none() {
        cx.error(
            cx.ins.span,
            format!(
                "`{}` takes a third source only with `.add`, `.min` or `.max`",
                cx.full_name()
            ),
            "third source without a secondary operation",
            "add the secondary operation (the data-merge form `d.dsel` is not supported)",
        );
        return;
    }
    if !cx.arity(if secondary.is_some() { &[4] } else { &[3] }) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let dst = cx.dst(&ops[0], Some(d_ty));
    let a = cx.src(&ops[1], a_ty);
    let b = cx.src(&ops[2], b_ty);
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
