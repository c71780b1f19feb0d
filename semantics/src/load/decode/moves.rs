//! Moves and conversions (PTX ISA 9.7.9.4 and 9.7.9.5 `mov`, 9.7.9.21 `cvt`): the thesis's
//! `mov` (5.1.1) made concrete, with vector operands' elements.

use super::alu::flags;
use super::{Cx, M, m_round, m_ty, m_word};
use crate::load::types::{self};
use crate::program::{ArithFlags, Op, RegId, Src, UnaryOp};
use ptx_parser::{Operand, ScalarType};

/// `cvt.dty.sty` (PTX ISA 9.7.9.21). `cvt.pack` goes to `intx`, the packing and 8-bit float
/// forms to `narrow`.
pub(super) fn cvt(cx: &mut Cx<'_, '_, '_>) {
    let names = || cx.ins.modifiers.iter().map(|m| m.name.as_str());
    if names().any(|n| n == "pack") {
        return super::intx::cvt_pack(cx);
    }
    if names().any(|n| matches!(n, "f16x2" | "bf16x2" | "e4m3x2" | "e5m2x2")) {
        return super::narrow::cvt_packed(cx);
    }
    let Some(mods) = cx.mods(|n| {
        m_ty(n)
            .or_else(|| m_round(n))
            .or_else(|| m_word(n, &["ftz", "sat", "relu", "satfinite"]))
    }) else {
        return;
    };
    let tys = mods.types();
    let [(dst_ty, _), (src_ty, _)] = tys.as_slice() else {
        cx.error(
            cx.ins.span,
            format!(
                "`{}` needs two types (destination, then source)",
                cx.full_name()
            ),
            "wrong types",
            "write e.g. `cvt.u64.u32`",
        );
        return;
    };
    let (dst_ty, src_ty) = (*dst_ty, *src_ty);
    if types::is_unsupported(dst_ty) || types::is_unsupported(src_ty) {
        // A `.b128` on either side is the wide-vector gap, else the half-precision one.
        cx.unsupported_type(if src_ty == ScalarType::B128 {
            src_ty
        } else {
            dst_ty
        });
        return;
    }
    if dst_ty == ScalarType::Pred || src_ty == ScalarType::Pred {
        cx.error(
            cx.ins.span,
            "`cvt` does not convert predicates",
            "`.pred` in `cvt`",
            "use `selp` to turn a predicate into a number, `setp` for the reverse",
        );
        return;
    }
    let f = flags(cx, &mods);
    // `.relu` and `.satfinite` exist for `cvt.frnd2.{f16,bf16}.f32` only (PTX ISA 9.7.9.21).
    if (f.relu || f.satfinite)
        && !(matches!(dst_ty, ScalarType::F16 | ScalarType::Bf16) && src_ty == ScalarType::F32)
    {
        cx.error(
            cx.ins.span,
            format!(
                "`.relu`/`.satfinite` are only defined for conversions from `.f32` to `.f16`/`.bf16`, not `{}`",
                cx.full_name()
            ),
            "modifier not allowed",
            "drop `.relu`/`.satfinite`",
        );
        return;
    }
    if !cx.arity(&[2]) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let dst = cx.reg_operand(&ops[0], Some(dst_ty), true, !types::is_float(dst_ty));
    let a = cx.src_with(&ops[1], src_ty, !types::is_float(src_ty));
    if let (Some(dst), Some(a)) = (dst, a) {
        cx.emit(Op::Cvt {
            dst_ty,
            src_ty,
            flags: f,
            dst,
            a,
        });
    }
}

/// One element of a vector operand: a written operand or a component of a vector register.
#[derive(Clone, Copy)]
pub(super) enum Elem<'a> {
    Op(&'a Operand),
    Reg(RegId),
}

/// The `n` elements of a vector operand `{a, b, ...}` or of a bare `.vN` register.
pub(super) fn vector_elems<'a>(
    cx: &mut Cx<'a, '_, '_>,
    op: &'a Operand,
    n: u8,
    ty: ScalarType,
) -> Option<Vec<Elem<'a>>> {
    match op {
        Operand::Vector(items, span) => {
            if items.len() != n as usize {
                cx.error(
                    *span,
                    format!(
                        "`{}` needs {n} vector elements, found {}",
                        cx.full_name(),
                        items.len()
                    ),
                    "wrong vector length",
                    format!("write {n} elements in the braces"),
                );
                return None;
            }
            Some(items.iter().map(Elem::Op).collect())
        }
        Operand::Symbol {
            name,
            component: None,
            span,
        } => match cx.resolve(name, None) {
            super::Named::Local(crate::load::scope::Local::Reg {
                id,
                ty: rty,
                vector,
            }) if vector == n => {
                cx.check_ty(rty, ty, *span, &name.name, true);
                Some((0..n as u16).map(|k| Elem::Reg(RegId(id.0 + k))).collect())
            }
            _ => {
                cx.error(
                    *span,
                    format!("`{}` needs a `.v{n}` vector here", cx.full_name()),
                    "not a vector",
                    format!("write `{{a, b, ...}}` with {n} registers, or a `.v{n}` register"),
                );
                None
            }
        },
        other => {
            cx.error(
                other.span(),
                format!(
                    "`{}` needs a vector `{{...}}` here, found {}",
                    cx.full_name(),
                    super::operand_kind(other)
                ),
                "not a vector",
                format!("write {n} registers in braces"),
            );
            None
        }
    }
}

/// `mov` (PTX ISA 9.7.9.4 and 9.7.9.5): register, immediate, special register and address moves,
/// packing `mov.b64 %rd, {%r1, %r2}` and unpacking `mov.b64 {%r1, %r2}, %rd`, and `.vN` moves.
pub(super) fn mov(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) = cx.mods(|n| {
        m_ty(n).or(match n {
            "v2" => Some(M::Vector(2)),
            "v4" => Some(M::Vector(4)),
            "v8" => Some(M::Vector(8)),
            _ => None,
        })
    }) else {
        return;
    };
    let Some(ty) = cx.ty(&mods) else { return };
    if types::is_unsupported(ty) {
        cx.unsupported_type(ty);
        return;
    }
    let vector = cx.one(
        &mods,
        |m| if let M::Vector(n) = m { Some(*n) } else { None },
    );
    if !cx.arity(&[2]) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let (d, s) = (&ops[0], &ops[1]);
    if let Some(n) = vector {
        // A vector move is a parallel copy (its source and destination may overlap, as in
        // `mov.v4 {a, b, c, d}, {b, c, d, a}`): copy through fresh temporaries.
        let Some(dst) = vector_elems(cx, d, n, ty) else {
            return;
        };
        let Some(src) = vector_elems(cx, s, n, ty) else {
            return;
        };
        let mut temps = Vec::new();
        for (k, e) in src.iter().enumerate() {
            let a = match e {
                Elem::Reg(r) => Src::Reg(*r),
                Elem::Op(op) => match cx.src(op, ty) {
                    Some(a) => a,
                    None => return,
                },
            };
            let t = match cx
                .f
                .env
                .new_register(&format!("%mov.tmp{k}"), ty, 1, cx.ins.span)
            {
                Ok(t) => t,
                Err(e) => {
                    cx.push_diag(e);
                    return;
                }
            };
            temps.push((t, a));
        }
        let mut moves = Vec::new();
        for (e, (t, _)) in dst.iter().zip(&temps) {
            let r = match e {
                Elem::Reg(r) => Some(*r),
                Elem::Op(op) => match cx.dst_or_sink(op, Some(ty)) {
                    Some(r) => r,
                    None => return,
                },
            };
            if let Some(r) = r {
                moves.push((r, *t));
            }
        }
        let flags = ArithFlags::default();
        for (t, a) in temps {
            cx.emit(Op::Unary {
                op: UnaryOp::Mov,
                ty,
                flags,
                dst: t,
                a,
            });
        }
        for (r, t) in moves {
            cx.emit(Op::Unary {
                op: UnaryOp::Mov,
                ty,
                flags,
                dst: r,
                a: Src::Reg(t),
            });
        }
        return;
    }
    match (d, s) {
        (Operand::Vector(parts, span), src) => {
            let Some(part_ty) = part_type(cx, ty, parts.len(), *span) else {
                return;
            };
            let Some(a) = cx.src(src, ty) else { return };
            let mut dsts = Vec::new();
            for p in parts {
                match cx.dst_or_sink(p, Some(part_ty)) {
                    Some(r) => dsts.push(r),
                    None => return,
                }
            }
            cx.emit(Op::Unpack {
                part_ty,
                dsts: dsts.into(),
                src: a,
            });
        }
        (dst, Operand::Vector(parts, span)) => {
            let Some(part_ty) = part_type(cx, ty, parts.len(), *span) else {
                return;
            };
            let Some(dst) = cx.dst(dst, Some(ty)) else {
                return;
            };
            let mut srcs = Vec::new();
            for p in parts {
                match cx.src(p, part_ty) {
                    Some(s) => srcs.push(s),
                    None => return,
                }
            }
            cx.emit(Op::Pack {
                part_ty,
                dst,
                parts: srcs.into(),
            });
        }
        (dst, src) => {
            let dst = cx.dst(dst, Some(ty));
            let a = cx.src(src, ty);
            if let (Some(dst), Some(a)) = (dst, a) {
                cx.emit(Op::Unary {
                    op: UnaryOp::Mov,
                    ty,
                    flags: ArithFlags::default(),
                    dst,
                    a,
                });
            }
        }
    }
}

/// The part type of a pack/unpack of `n` parts into a `ty` (`.b64` of 2 is `.b32`).
fn part_type(
    cx: &mut Cx<'_, '_, '_>,
    ty: ScalarType,
    n: usize,
    span: ptx_parser::Span,
) -> Option<ScalarType> {
    let size = types::size(ty) as usize;
    let part = if matches!(n, 2 | 4) && size.is_multiple_of(n) {
        types::bits_of_size((size / n) as u32)
    } else {
        None
    };
    if part.is_none() {
        cx.error(
            span,
            format!("`{}` cannot be split into {n} parts", cx.full_name()),
            "wrong number of parts",
            "pack 2 or 4 parts that together have the type's size, e.g. `mov.b64 %rd1, {%r1, %r2}`",
        );
    }
    part
}
