//! Comparisons and selections (PTX ISA 9.7.3.5 `setp`, 9.7.4.2 half-precision `setp`/`set`,
//! 9.7.5 `set` and `slct`): the thesis's `setp` (5.1.1) made concrete.

use super::{Cx, M, m_ty, m_word};
use crate::load::types::{self};
use crate::program::{BoolOp, Compare, Op, PredSrc, Src};
use ptx_parser::{Operand, ScalarType};

/// `setp` / `set` (PTX ISA 9.7.3.5, 9.7.4.2, 9.7.5.1): the comparison, the types, then the
/// destination of `set` (a value) or of `setp` (one predicate, or two for packed halves).
pub(super) fn setp(cx: &mut Cx<'_, '_, '_>, is_set: bool) {
    let Some(c) = comparison(cx, is_set) else {
        return;
    };
    let ins = cx.ins;
    let ops = &ins.operands;
    let a = cx.src(&ops[1], c.ty);
    let b = cx.src(&ops[2], c.ty);
    let combine = match c.bop {
        Some(op) => match cx.pred(&ops[3]) {
            Some(p) => Some((op, p)),
            None => return,
        },
        None => None,
    };
    if is_set {
        set(cx, c, a, b, combine);
    } else {
        setp_predicates(cx, c, a, b, combine);
    }
}

/// What the modifiers of a `setp`/`set` say: the comparison, the source type (and `set`'s
/// destination type), `.ftz` and the combining operation.
#[derive(Clone, Copy)]
struct Comparison {
    cmp: Compare,
    dst_ty: ScalarType,
    ty: ScalarType,
    ftz: bool,
    bop: Option<BoolOp>,
}

/// The comparison of a `setp`/`set`, checked against its types and operand count; `None` after
/// a diagnostic.
fn comparison(cx: &mut Cx<'_, '_, '_>, is_set: bool) -> Option<Comparison> {
    let cmp_word = |n: &str| -> Option<M> {
        m_word(
            n,
            &[
                "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu",
                "leu", "gtu", "geu", "num", "nan", "and", "or", "xor", "ftz",
            ],
        )
    };
    let mods = cx.mods(|n| m_ty(n).or_else(|| cmp_word(n)))?;
    let cmp = cx.one(&mods, |m| {
        Some(match m {
            M::Word("eq") => Compare::Eq,
            M::Word("ne") => Compare::Ne,
            M::Word("lt" | "lo") => Compare::Lt,
            M::Word("le" | "ls") => Compare::Le,
            M::Word("gt" | "hi") => Compare::Gt,
            M::Word("ge" | "hs") => Compare::Ge,
            M::Word("equ") => Compare::Equ,
            M::Word("neu") => Compare::Neu,
            M::Word("ltu") => Compare::Ltu,
            M::Word("leu") => Compare::Leu,
            M::Word("gtu") => Compare::Gtu,
            M::Word("geu") => Compare::Geu,
            M::Word("num") => Compare::Num,
            M::Word("nan") => Compare::Nan,
            _ => return None,
        })
    });
    let bop = cx.one(&mods, |m| {
        Some(match m {
            M::Word("and") => BoolOp::And,
            M::Word("or") => BoolOp::Or,
            M::Word("xor") => BoolOp::Xor,
            _ => return None,
        })
    });
    let ftz = mods.has("ftz");
    let Some(cmp) = cmp else {
        cx.error(cx.ins.span, format!("`{}` needs a comparison", cx.full_name()), "missing comparison", "add one of `.eq .ne .lt .le .gt .ge` (or `.lo .ls .hi .hs`, `.equ .neu .ltu .leu .gtu .geu .num .nan` for floats)");
        return None;
    };
    let tys = mods.types();
    let (dst_ty, ty) = match (is_set, tys.as_slice()) {
        (false, [(t, _)]) => (ScalarType::Pred, *t),
        (true, [(d, _), (s, _)]) => (*d, *s),
        _ => {
            let want = if is_set {
                "two types (destination, then source)"
            } else {
                "one type"
            };
            cx.error(
                cx.ins.span,
                format!("`{}` needs {want}", cx.full_name()),
                "wrong types",
                format!("write {want}, e.g. `setp.lt.s32` or `set.lt.u32.f32`"),
            );
            return None;
        }
    };
    let c = Comparison {
        cmp,
        dst_ty,
        ty,
        ftz,
        bop,
    };
    (comparison_types_ok(cx, c) && comparison_arity_ok(cx, c)).then_some(c)
}

/// The source type against the comparison and `.ftz`: unordered comparisons and `.ftz` are for
/// floats, and `.ftz` not for `.bf16`.
fn comparison_types_ok(cx: &mut Cx<'_, '_, '_>, c: Comparison) -> bool {
    let Comparison { cmp, ty, ftz, .. } = c;
    if !cx.require_ty(
        ty,
        |t| types::is_int(t) || types::is_float(t),
        "integer, bit or float types",
    ) {
        return false;
    }
    let unordered = matches!(
        cmp,
        Compare::Equ
            | Compare::Neu
            | Compare::Ltu
            | Compare::Leu
            | Compare::Gtu
            | Compare::Geu
            | Compare::Num
            | Compare::Nan
    );
    if unordered && !types::is_float(ty) {
        cx.error(
            cx.ins.span,
            format!(
                "`{}` uses a floating-point comparison on an integer type",
                cx.full_name()
            ),
            "float-only comparison",
            "use `.eq .ne .lt .le .gt .ge` for integers",
        );
        return false;
    }
    if ftz && !types::is_float(ty) {
        cx.error(
            cx.ins.span,
            format!("`{}` applies `.ftz` to an integer type", cx.full_name()),
            "float modifier",
            "drop `.ftz`",
        );
        return false;
    }
    if ftz && matches!(ty, ScalarType::Bf16 | ScalarType::Bf16x2) {
        cx.error(
            cx.ins.span,
            format!(
                "`{}`: `.ftz` is not defined for `.bf16` comparisons",
                cx.full_name()
            ),
            "`.ftz` not allowed",
            "drop `.ftz`",
        );
        return false;
    }
    true
}

/// Three operands, four with a combining operation (a fourth without one: a warning too).
fn comparison_arity_ok(cx: &mut Cx<'_, '_, '_>, c: Comparison) -> bool {
    let expected = if c.bop.is_some() { 4 } else { 3 };
    if !cx.arity(&[expected]) {
        if c.bop.is_none() && cx.ins.operands.len() == 4 {
            cx.push_diag(
                ptx_parser::Diagnostic::warning(
                    cx.ins.span,
                    "the fourth operand needs a combining operation",
                )
                .with_help("add `.and`, `.or` or `.xor`"),
            );
        }
        return false;
    }
    true
}

/// `set`'s destination: PTX ISA 9.7.3 `set` and 9.7.4 half-precision `set`: a packed source
/// gives a packed result (its own type, or `.u32`/`.s32` halves of 0xFFFF); `.f16`/`.bf16`
/// results take any scalar source, 16-bit integer results a 16-bit float source.
fn set(
    cx: &mut Cx<'_, '_, '_>,
    c: Comparison,
    a: Option<Src>,
    b: Option<Src>,
    combine: Option<(BoolOp, PredSrc)>,
) {
    use ScalarType::*;
    let Comparison {
        cmp,
        dst_ty,
        ty,
        ftz,
        ..
    } = c;
    let (allowed, what): (&[ScalarType], _) = if types::is_packed_half(ty) {
        (
            &[U32, S32, B32, ty],
            "`.u32 .s32 .b32` or the source's packed type",
        )
    } else if matches!(ty, F16 | Bf16) {
        (
            &[U32, S32, B32, F32, F16, Bf16, U16, S16, B16],
            "`.u32 .s32 .b32 .f32 .f16 .bf16 .u16 .s16 .b16` destinations",
        )
    } else {
        (
            &[U32, S32, B32, F32, F16, Bf16],
            "`.u32 .s32 .b32 .f32 .f16 .bf16` destinations",
        )
    };
    if !cx.require_ty(dst_ty, |t| allowed.contains(&t), what) {
        return;
    }
    let ins = cx.ins;
    let dst = cx.dst(&ins.operands[0], Some(dst_ty));
    if let (Some(dst), Some(a), Some(b)) = (dst, a, b) {
        cx.emit(Op::Set {
            cmp,
            dst_ty,
            src_ty: ty,
            ftz,
            dst,
            a,
            b,
            combine,
        });
    }
}

/// `setp`'s destination: one predicate, or `p|q` for a packed half comparison (low half,
/// high half).
fn setp_predicates(
    cx: &mut Cx<'_, '_, '_>,
    c: Comparison,
    a: Option<Src>,
    b: Option<Src>,
    combine: Option<(BoolOp, PredSrc)>,
) {
    let Comparison { cmp, ty, ftz, .. } = c;
    let ins = cx.ins;
    let ops = &ins.operands;
    if types::is_packed_half(ty) && !matches!(ops[0], Operand::Pair(..)) {
        cx.error(
            ops[0].span(),
            format!(
                "`{}` compares two halves: it writes `p|q` (low half, high half)",
                cx.full_name()
            ),
            "missing second destination",
            "write the destinations as `p|q` (`_` for an unwanted one)",
        );
        return;
    }
    let (dst, dst_neg) = match &ops[0] {
        Operand::Pair(p, q, _) => {
            let p = cx.dst(p, Some(ScalarType::Pred));
            let q = cx.dst_or_sink(q, Some(ScalarType::Pred));
            match (p, q) {
                (Some(p), Some(q)) => (p, q),
                _ => return,
            }
        }
        other => match cx.dst(other, Some(ScalarType::Pred)) {
            Some(p) => (p, None),
            None => return,
        },
    };
    if let (Some(a), Some(b)) = (a, b) {
        cx.emit(Op::Setp {
            cmp,
            ty,
            ftz,
            dst,
            dst_neg,
            a,
            b,
            combine,
        });
    }
}

/// `slct.dty.cty d, a, b, c` (PTX ISA 9.7.5.2).
pub(super) fn slct(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) = cx.mods(|n| m_ty(n).or_else(|| m_word(n, &["ftz"]))) else {
        return;
    };
    let tys = mods.types();
    let [(ty, _), (c_ty, _)] = tys.as_slice() else {
        cx.error(
            cx.ins.span,
            format!(
                "`{}` needs two types (operands, then the selector `.s32`/`.f32`)",
                cx.full_name()
            ),
            "wrong types",
            "write e.g. `slct.u32.s32`",
        );
        return;
    };
    let (ty, c_ty) = (*ty, *c_ty);
    if !cx.require_ty(
        c_ty,
        |t| matches!(t, ScalarType::S32 | ScalarType::F32),
        "a `.s32` or `.f32` selector",
    ) || !cx.arity(&[4])
    {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let dst = cx.dst(&ops[0], Some(ty));
    let a = cx.src(&ops[1], ty);
    let b = cx.src(&ops[2], ty);
    let c = cx.src(&ops[3], c_ty);
    if let (Some(dst), Some(a), Some(b), Some(c)) = (dst, a, b, c) {
        cx.emit(Op::Slct {
            ty,
            c_ty,
            ftz: mods.has("ftz"),
            dst,
            a,
            b,
            c,
        });
    }
}
