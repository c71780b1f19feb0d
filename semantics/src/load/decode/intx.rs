//! The integer and bit instructions beyond the classic arithmetic shapes (PTX ISA 9.7.1 "Integer
//! Arithmetic Instructions": `mul24 mad24 sad fns bmsk szext dp4a dp2a`; 9.7.8 "Logic and Shift
//! Instructions": `lop3`; 9.7.9 "Data Movement and Conversion Instructions": `cvt.pack`). Each
//! decodes to an `Op::Binary`/`Op::Ternary` whose operation the ALU evaluates per lane;
//! `lop3.and/.or` adds a `setp.ne.and/.or` for its predicate destination.

use super::{Cx, M, Mods, m_ty, m_word};
use crate::load::types;
use crate::program::{ArithFlags, BinaryOp, BoolOp, Compare, Op, RegId, Src, TernaryOp};
use ptx_parser::{Operand, ScalarType};

const U32: ScalarType = ScalarType::U32;
const S32: ScalarType = ScalarType::S32;
const B32: ScalarType = ScalarType::B32;

/// The one word of `choices` the instruction must carry (`.lo`/`.hi`, `.clamp`/`.wrap`).
fn mode(cx: &mut Cx<'_, '_, '_>, mods: &Mods<'_>, choices: [&'static str; 2]) -> Option<bool> {
    let what = format!("a mode `.{}` or `.{}`", choices[0], choices[1]);
    let help = format!("write e.g. `{}.{}`", cx.ins.opcode.name, choices[1]);
    cx.required(mods, &what, &help, |m| match m {
        M::Word(w) if *w == choices[1] => Some(true),
        M::Word(w) if *w == choices[0] => Some(false),
        _ => None,
    })
}

/// A 32-bit destination and sources of the given types; `None` after reporting a problem.
fn operands<const N: usize>(
    cx: &mut Cx<'_, '_, '_>,
    dst_ty: ScalarType,
    src_tys: [ScalarType; N],
) -> Option<(RegId, [Src; N])> {
    if !cx.arity(&[N + 1]) {
        return None;
    }
    let ins = cx.ins;
    let dst = cx.dst(&ins.operands[0], Some(dst_ty));
    let mut srcs = [Src::Imm(0); N];
    let mut ok = true;
    for (k, ty) in src_tys.into_iter().enumerate() {
        match cx.src(&ins.operands[k + 1], ty) {
            Some(s) => srcs[k] = s,
            None => ok = false,
        }
    }
    Some((dst?, srcs)).filter(|_| ok)
}

/// The instruction's single type, which must be one of `allowed`.
fn one_of(cx: &mut Cx<'_, '_, '_>, mods: &Mods<'_>, allowed: &[ScalarType]) -> Option<ScalarType> {
    let ty = cx.ty(mods)?;
    let names = allowed
        .iter()
        .map(|t| format!("`{}`", t.directive()))
        .collect::<Vec<_>>()
        .join(" ");
    cx.require_ty(ty, |t| allowed.contains(&t), &names)
        .then_some(ty)
}

/// `mul24.mode.type d, a, b` and `mad24.mode{.sat}.type d, a, b, c` (PTX ISA 9.7.1 `mul24`,
/// `mad24`).
pub(super) fn mul24(cx: &mut Cx<'_, '_, '_>, mad: bool) {
    let words: &[&'static str] = if mad {
        &["lo", "hi", "sat"]
    } else {
        &["lo", "hi"]
    };
    let Some(mods) = cx.mods(|n| m_ty(n).or_else(|| m_word(n, words))) else {
        return;
    };
    let Some(hi) = mode(cx, &mods, ["lo", "hi"]) else {
        return;
    };
    let Some(ty) = one_of(cx, &mods, &[U32, S32]) else {
        return;
    };
    let sat = mods.has("sat");
    if sat && !(hi && ty == S32) {
        cx.error(
            cx.ins.span,
            format!(
                "`.sat` is only defined for `mad24.hi.sat.s32`, not `{}`",
                cx.full_name()
            ),
            "`.sat` not allowed",
            "drop `.sat`",
        );
        return;
    }
    let flags = ArithFlags {
        sat,
        ..ArithFlags::default()
    };
    if mad {
        if let Some((dst, [a, b, c])) = operands(cx, ty, [ty, ty, ty]) {
            cx.emit(Op::Ternary {
                op: TernaryOp::Mad24 { hi },
                ty,
                flags,
                dst,
                a,
                b,
                c,
            });
        }
    } else if let Some((dst, [a, b])) = operands(cx, ty, [ty, ty]) {
        cx.emit(Op::Binary {
            op: BinaryOp::Mul24 { hi },
            ty,
            flags,
            dst,
            a,
            b,
        });
    }
}

/// `sad.type d, a, b, c` (PTX ISA 9.7.1 `sad`).
pub(super) fn sad(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) = cx.mods(m_ty) else { return };
    use ScalarType::*;
    let Some(ty) = one_of(cx, &mods, &[U16, U32, U64, S16, S32, S64]) else {
        return;
    };
    if let Some((dst, [a, b, c])) = operands(cx, ty, [ty, ty, ty]) {
        cx.emit(Op::Ternary {
            op: TernaryOp::Sad,
            ty,
            flags: ArithFlags::default(),
            dst,
            a,
            b,
            c,
        });
    }
}

/// `bmsk.mode.b32 d, a, b` and `szext.mode.type d, a, b` (PTX ISA 9.7.1 `bmsk`, `szext`).
pub(super) fn bmsk_szext(cx: &mut Cx<'_, '_, '_>, szext: bool) {
    let Some(mods) = cx.mods(|n| m_ty(n).or_else(|| m_word(n, &["clamp", "wrap"]))) else {
        return;
    };
    let Some(wrap) = mode(cx, &mods, ["clamp", "wrap"]) else {
        return;
    };
    let clamp = !wrap;
    let allowed: &[ScalarType] = if szext { &[U32, S32] } else { &[B32] };
    let Some(ty) = one_of(cx, &mods, allowed) else {
        return;
    };
    let op = if szext {
        BinaryOp::Szext { clamp }
    } else {
        BinaryOp::Bmsk { clamp }
    };
    if let Some((dst, [a, b])) = operands(cx, ty, [ty, U32]) {
        cx.emit(Op::Binary {
            op,
            ty,
            flags: ArithFlags::default(),
            dst,
            a,
            b,
        });
    }
}

/// `fns.b32 d, mask, base, offset` (PTX ISA 9.7.1 `fns`).
pub(super) fn fns(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) = cx.mods(m_ty) else { return };
    if one_of(cx, &mods, &[B32]).is_none() {
        return;
    }
    if let Some((dst, [mask, base, offset])) = operands(cx, B32, [B32, B32, S32]) {
        cx.emit(Op::Ternary {
            op: TernaryOp::Fns,
            ty: B32,
            flags: ArithFlags::default(),
            dst,
            a: mask,
            b: base,
            c: offset,
        });
    }
}

/// `dp4a.atype.btype d, a, b, c` and `dp2a.mode.atype.btype d, a, b, c` (PTX ISA 9.7.1 `dp4a`,
/// `dp2a`): `c` and `d` are `.u32` when both types are, else `.s32`.
pub(super) fn dot(cx: &mut Cx<'_, '_, '_>, two_way: bool) {
    let words: &[&'static str] = if two_way { &["lo", "hi"] } else { &[] };
    let Some(mods) = cx.mods(|n| m_ty(n).or_else(|| m_word(n, words))) else {
        return;
    };
    let hi = if two_way {
        match mode(cx, &mods, ["lo", "hi"]) {
            Some(hi) => hi,
            None => return,
        }
    } else {
        false
    };
    let tys = mods.types();
    let [(a_ty, _), (b_ty, _)] = tys.as_slice() else {
        cx.error(
            cx.ins.span,
            format!("`{}` needs two types (of `a`, then of `b`)", cx.full_name()),
            "wrong types",
            "write e.g. `dp4a.u32.s32`",
        );
        return;
    };
    let (a_ty, b_ty) = (*a_ty, *b_ty);
    for t in [a_ty, b_ty] {
        if !cx.require_ty(t, |t| matches!(t, U32 | S32), "`.u32` or `.s32`") {
            return;
        }
    }
    let (a_signed, b_signed) = (a_ty == S32, b_ty == S32);
    let ty = if a_signed || b_signed { S32 } else { U32 };
    let op = if two_way {
        TernaryOp::Dp2a {
            hi,
            a_signed,
            b_signed,
        }
    } else {
        TernaryOp::Dp4a { a_signed, b_signed }
    };
    if let Some((dst, [a, b, c])) = operands(cx, ty, [a_ty, b_ty, ty]) {
        cx.emit(Op::Ternary {
            op,
            ty,
            flags: ArithFlags::default(),
            dst,
            a,
            b,
            c,
        });
    }
}

/// `lop3.b32 d, a, b, c, immLut` and `lop3.BoolOp.b32 d|p, a, b, c, immLut, q` (PTX ISA 9.7.8
/// `lop3`): the predicate form is the table operation followed by `setp.ne.BoolOp.b32 p, d, 0,
/// q` (`p = (d != 0) BoolOp q`); `d` may then be `_` (a fresh register takes the value).
pub(super) fn lop3(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) = cx.mods(|n| m_ty(n).or_else(|| m_word(n, &["and", "or"]))) else {
        return;
    };
    let bop = cx.one(&mods, |m| match m {
        M::Word("and") => Some(BoolOp::And),
        M::Word("or") => Some(BoolOp::Or),
        _ => None,
    });
    if one_of(cx, &mods, &[B32]).is_none() {
        return;
    }
    if !cx.arity(if bop.is_some() { &[6] } else { &[5] }) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let (dst, pred_dst) = match (bop, &ops[0]) {
        (Some(_), Operand::Pair(d, p, _)) => {
            let d = cx.dst_or_sink(d, Some(B32));
            let p = cx.dst(p, Some(ScalarType::Pred));
            match (d, p) {
                (Some(d), Some(p)) => (d, Some(p)),
                _ => return,
            }
        }
        (Some(_), other) => {
            cx.error(
                other.span(),
                format!("`{}` writes `d|p`", cx.full_name()),
                "missing predicate destination",
                "write the destinations as `d|p` (or `_|p`)",
            );
            return;
        }
        (None, d) => match cx.dst(d, Some(B32)) {
            Some(d) => (Some(d), None),
            None => return,
        },
    };
    let a = cx.src(&ops[1], B32);
    let b = cx.src(&ops[2], B32);
    let c = cx.src(&ops[3], B32);
    let lut = lut(cx, &ops[4]);
    let q = match bop {
        Some(_) => match cx.pred(&ops[5]) {
            Some(q) => Some(q),
            None => return,
        },
        None => None,
    };
    let (Some(a), Some(b), Some(c), Some(lut)) = (a, b, c, lut) else {
        return;
    };
    let dst = match dst {
        Some(d) => d,
        None => match cx.f.env.new_register("%lop3.tmp", B32, 1, cx.ins.span) {
            Ok(t) => t,
            Err(e) => {
                cx.push_diag(e);
                return;
            }
        },
    };
    cx.emit(Op::Ternary {
        op: TernaryOp::Lop3 { lut },
        ty: B32,
        flags: ArithFlags::default(),
        dst,
        a,
        b,
        c,
    });
    if let (Some(bop), Some(p), Some(q)) = (bop, pred_dst, q) {
        cx.emit(Op::Setp {
            cmp: Compare::Ne,
            ty: B32,
            ftz: false,
            dst: p,
            dst_neg: None,
            a: Src::Reg(dst),
            b: Src::Imm(0),
            combine: Some((bop, q)),
        });
    }
}

/// `immLut`: an integer constant from 0 to 255.
fn lut(cx: &mut Cx<'_, '_, '_>, op: &Operand) -> Option<u8> {
    let Operand::Immediate(e) = op else {
        cx.error(
            op.span(),
            format!("`{}` takes its look-up table as a constant", cx.full_name()),
            "not a constant",
            "write `immLut` as an integer from 0 to 255, e.g. `0x96` for `a ^ b ^ c`",
        );
        return None;
    };
    let v = cx.imm(e, ScalarType::U32)?;
    match u8::try_from(v) {
        Ok(lut) => Some(lut),
        Err(_) => {
            cx.error(
                e.span(),
                format!("`immLut` is {v}, outside 0..=255"),
                "look-up table out of range",
                "the table of three inputs has 8 entries: a value from 0 to 255",
            );
            None
        }
    }
}

/// `cvt.pack.sat.convertType.s32 d, a, b` (`.u16 .s16`) and
/// `cvt.pack.sat.convertType.s32.b32 d, a, b, c` (`.u2 .s2 .u4 .s4 .u8 .s8`) (PTX ISA 9.7.9
/// `cvt.pack`).
pub(super) fn cvt_pack(cx: &mut Cx<'_, '_, '_>) {
    let sub_byte = |n: &str| -> Option<M> {
        Some(M::Word(match n {
            "u2" => "u2",
            "s2" => "s2",
            "u4" => "u4",
            "s4" => "s4",
            _ => return None,
        }))
    };
    let Some(mods) = cx.mods(|n| {
        m_ty(n)
            .or_else(|| m_word(n, &["pack", "sat"]))
            .or_else(|| sub_byte(n))
    }) else {
        return;
    };
    if !mods.has("sat") {
        cx.error(
            cx.ins.span,
            format!("`{}` needs `.sat`", cx.full_name()),
            "missing `.sat`",
            "write `cvt.pack.sat...`: the packing always saturates",
        );
        return;
    }
    // The convert type (first) as (bits, signed), then the source types.
    let mut tys: Vec<(u8, bool, Option<ScalarType>)> = Vec::new();
    for (m, _) in &mods.list {
        match m {
            M::Word("u2") => tys.push((2, false, None)),
            M::Word("s2") => tys.push((2, true, None)),
            M::Word("u4") => tys.push((4, false, None)),
            M::Word("s4") => tys.push((4, true, None)),
            M::Ty(t) => tys.push((
                (types::size(*t) * 8).min(255) as u8,
                types::kind(*t) == types::Kind::Signed,
                Some(*t),
            )),
            _ => {}
        }
    }
    use ScalarType::*;
    let shape = match tys.as_slice() {
        [(16, signed, Some(U16 | S16)), (_, _, Some(S32))] => Some((16, *signed, false)),
        [(bits, signed, conv), (_, _, Some(S32)), (_, _, Some(B32))]
            if *bits < 16 && matches!(conv, None | Some(U8 | S8)) =>
        {
            Some((*bits, *signed, true))
        }
        _ => None,
    };
    let Some((bits, signed, with_c)) = shape else {
        cx.error(
            cx.ins.span,
            format!("`{}` has the wrong types", cx.full_name()),
            "wrong types",
            "write `cvt.pack.sat.{u16,s16}.s32 d, a, b` or `cvt.pack.sat.{u2,s2,u4,s4,u8,s8}.s32.b32 d, a, b, c`",
        );
        return;
    };
    let op = TernaryOp::CvtPackSat { bits, signed };
    let flags = ArithFlags::default();
    if with_c {
        if let Some((dst, [a, b, c])) = operands(cx, U32, [S32, S32, B32]) {
            cx.emit(Op::Ternary {
                op,
                ty: U32,
                flags,
                dst,
                a,
                b,
                c,
            });
        }
    } else if let Some((dst, [a, b])) = operands(cx, U32, [S32, S32]) {
        cx.emit(Op::Ternary {
            op,
            ty: U32,
            flags,
            dst,
            a,
            b,
            c: Src::Imm(0),
        });
    }
}
