//! Arithmetic, logic, comparison, selection, bit-manipulation and conversion instructions
//! (PTX ISA 9.7.1-9.7.5, 9.7.8, 9.7.9.21 `cvt`, 9.7.9.4 `mov`): the thesis's abstract `dop`, `setp`
//! and `mov` (5.1.1) made concrete. The 16-bit float types `.f16 .f16x2 .bf16 .bf16x2` (PTX ISA
//! 9.7.4 "Half Precision Floating-Point Instructions") go through the same paths for `add sub
//! mul fma neg abs min max setp set mov cvt`; the packing `cvt` forms decode to
//! `BinaryOp::CvtPair` and the 8-bit float unpackings to unary conversions.

use super::{Cx, M, Mods, m_round, m_ty, m_word};
use crate::load::types::{self, Kind};
use crate::load::unsupported::Gap;
use crate::program::{
    ArithFlags, BinaryOp, BoolOp, Compare, Op, PrmtMode, RegId, Src, TernaryOp, UnaryOp,
};
use ptx_parser::{Operand, ScalarType};

/// The words each arithmetic opcode accepts besides types and roundings.
fn words(opcode: &str) -> &'static [&'static str] {
    match opcode {
        "add" | "sub" => &["cc", "sat", "ftz"],
        "addc" | "subc" => &["cc"],
        "mul" => &["lo", "hi", "wide", "ftz", "sat"],
        "mad" => &["lo", "hi", "wide", "cc", "ftz", "sat"],
        "madc" => &["lo", "hi", "cc"],
        "fma" => &["ftz", "sat", "relu"],
        "div" => &["approx", "full", "ftz"],
        "min" | "max" | "abs" | "neg" => &["ftz"],
        "bfind" => &["shiftamt"],
        "prmt" => &["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"],
        "rcp" | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
            &["approx", "full", "ftz"]
        }
        "shf" => &["l", "r", "wrap", "clamp"],
        _ => &[],
    }
}

fn takes_rounding(opcode: &str) -> bool {
    matches!(
        opcode,
        "add" | "sub" | "mul" | "mad" | "fma" | "div" | "rcp" | "sqrt"
    )
}

pub(super) fn flags(cx: &mut Cx<'_, '_, '_>, mods: &Mods<'_>) -> ArithFlags {
    ArithFlags {
        rounding: cx.one(mods, |m| if let M::Round(r) = m { Some(*r) } else { None }),
        ftz: mods.has("ftz"),
        sat: mods.has("sat"),
        approx: mods.has("approx") || mods.has("full"),
        relu: mods.has("relu"),
        satfinite: mods.has("satfinite"),
    }
}

/// The modifiers PTX ISA 9.7.4 admits on 16-bit float arithmetic: no `.ftz`/`.sat` on `.bf16`
/// and `.bf16x2`, no `.relu` together with `.sat`.
fn half_modifiers_ok(cx: &mut Cx<'_, '_, '_>, ty: ScalarType, flags: ArithFlags) -> bool {
    let bf16 = matches!(ty, ScalarType::Bf16 | ScalarType::Bf16x2);
    let problem = if bf16 && (flags.ftz || flags.sat) {
        "`.ftz` and `.sat` are not defined for `.bf16`/`.bf16x2` arithmetic"
    } else if flags.relu && flags.sat {
        "`.relu` and `.sat` exclude each other"
    } else {
        return true;
    };
    cx.error(
        cx.ins.span,
        format!("`{}`: {problem}", cx.full_name()),
        "modifier not allowed",
        "drop the modifier (PTX ISA 9.7.4)",
    );
    false
}

/// The shape of an arithmetic instruction's operands.
enum Shape {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Ternary(TernaryOp),
    Bfi,
    Prmt(PrmtMode),
}

pub(super) fn arith(cx: &mut Cx<'_, '_, '_>, opcode: &str) {
    let allowed = words(opcode);
    let rounding = takes_rounding(opcode);
    let Some(mods) = cx.mods(|n| {
        m_ty(n)
            .or_else(|| m_word(n, allowed))
            .or_else(|| if rounding { m_round(n) } else { None })
    }) else {
        return;
    };
    let Some(ty) = cx.ty(&mods) else { return };
    let half_ok = matches!(
        opcode,
        "add" | "sub" | "mul" | "fma" | "neg" | "abs" | "min" | "max"
    );
    if types::is_unsupported(ty) || (types::is_half(ty) && !half_ok) {
        cx.unsupported(if ty == ScalarType::B128 {
            Gap::WideVectors
        } else {
            Gap::HalfFloat
        });
        return;
    }
    let k = types::kind(ty);
    let float = k == Kind::Float;
    let int = matches!(k, Kind::Signed | Kind::Unsigned | Kind::Bits);
    let any_num = |t: ScalarType| types::is_int(t) || types::is_float(t);
    // `.lo .hi .wide` of mul/mad (PTX ISA 9.7.1.6): integer only.
    let part = cx.one(&mods, |m| match m {
        M::Word(w @ ("lo" | "hi" | "wide")) => Some(*w),
        _ => None,
    });
    let cc = mods.has("cc");
    let mut flags = flags(cx, &mods);
    if (part.is_some() || cc) && !int {
        cx.error(
            cx.ins.span,
            format!(
                "`{}` applies `.lo/.hi/.wide/.cc` to a non-integer type",
                cx.full_name()
            ),
            "integer modifier on a float type",
            "use an integer type, or drop the modifier",
        );
        return;
    }
    if float
        && !matches!(
            opcode,
            "add"
                | "sub"
                | "mul"
                | "mad"
                | "fma"
                | "div"
                | "min"
                | "max"
                | "abs"
                | "neg"
                | "rcp"
                | "sqrt"
                | "rsqrt"
                | "ex2"
                | "lg2"
                | "sin"
                | "cos"
                | "tanh"
                | "copysign"
                | "selp"
                | "mov"
        )
        && !cx.require_ty(ty, |t| !types::is_float(t), "integer or bit types")
    {
        return;
    }
    let shape = match opcode {
        "add" | "sub" => {
            let add = opcode == "add";
            Shape::Binary(match (add, cc) {
                (true, false) => BinaryOp::Add,
                (false, false) => BinaryOp::Sub,
                (true, true) => BinaryOp::AddCc,
                (false, true) => BinaryOp::SubCc,
            })
        }
        "addc" | "subc" => {
            if !cx.require_ty(
                ty,
                |t| types::is_int(t) && matches!(types::size(t), 4 | 8),
                "32- or 64-bit integer types",
            ) {
                return;
            }
            Shape::Binary(match (opcode == "addc", cc) {
                (true, false) => BinaryOp::AddC,
                (true, true) => BinaryOp::AddCCc,
                (false, false) => BinaryOp::SubC,
                (false, true) => BinaryOp::SubCCc,
            })
        }
        "mul" => Shape::Binary(match (float, part) {
            (true, _) => BinaryOp::Mul,
            (false, Some("hi")) => BinaryOp::MulHi,
            (false, Some("wide")) => BinaryOp::MulWide,
            // `.lo`, or no part at all (lenient: PTX requires one for integers).
            (false, _) => BinaryOp::Mul,
        }),
        "mad" => {
            if float {
                Shape::Ternary(TernaryOp::Mad)
            } else {
                match (part, cc) {
                    (Some("hi"), false) => Shape::Ternary(TernaryOp::MadHi),
                    (Some("wide"), false) => Shape::Ternary(TernaryOp::MadWide),
                    (_, false) => Shape::Ternary(TernaryOp::Mad),
                    (Some("lo") | None, true) => Shape::Ternary(TernaryOp::MadCc),
                    (_, true) => {
                        cx.unsupported(Gap::Modifiers);
                        return;
                    }
                }
            }
        }
        "madc" => match (part, cc) {
            (Some("lo") | None, false) => Shape::Ternary(TernaryOp::MadC),
            _ => {
                // `madc.hi` and `madc.*.cc` have no decoded form yet.
                cx.unsupported(Gap::Modifiers);
                return;
            }
        },
        "fma" => {
            if !cx.require_ty(ty, types::is_float, "`.f32` or `.f64`") {
                return;
            }
            Shape::Ternary(TernaryOp::Fma)
        }
        "div" => Shape::Binary(BinaryOp::Div),
        "rem" => Shape::Binary(BinaryOp::Rem),
        "min" => Shape::Binary(BinaryOp::Min),
        "max" => Shape::Binary(BinaryOp::Max),
        "abs" => Shape::Unary(UnaryOp::Abs),
        "neg" => Shape::Unary(UnaryOp::Neg),
        "and" => Shape::Binary(BinaryOp::And),
        "or" => Shape::Binary(BinaryOp::Or),
        "xor" => Shape::Binary(BinaryOp::Xor),
        "not" => Shape::Unary(UnaryOp::Not),
        "cnot" => Shape::Unary(UnaryOp::Cnot),
        "shl" => Shape::Binary(BinaryOp::Shl),
        "shr" => Shape::Binary(BinaryOp::Shr),
        "selp" => Shape::Ternary(TernaryOp::Selp),
        "bfe" => Shape::Ternary(TernaryOp::Bfe),
        "bfi" => Shape::Bfi,
        "brev" => Shape::Unary(UnaryOp::Brev),
        "clz" => Shape::Unary(UnaryOp::Clz),
        "popc" => Shape::Unary(UnaryOp::Popc),
        "bfind" => Shape::Unary(if mods.has("shiftamt") {
            UnaryOp::BfindShiftAmt
        } else {
            UnaryOp::Bfind
        }),
        "prmt" => {
            let mode = cx.one(&mods, |m| match m {
                M::Word("f4e") => Some(PrmtMode::F4e),
                M::Word("b4e") => Some(PrmtMode::B4e),
                M::Word("rc8") => Some(PrmtMode::Rc8),
                M::Word("ecl") => Some(PrmtMode::Ecl),
                M::Word("ecr") => Some(PrmtMode::Ecr),
                M::Word("rc16") => Some(PrmtMode::Rc16),
                _ => None,
            });
            match mode {
                None => Shape::Ternary(TernaryOp::Prmt),
                Some(m) => Shape::Prmt(m),
            }
        }
        "copysign" => {
            if !cx.require_ty(ty, types::is_float, "`.f32` or `.f64`") {
                return;
            }
            Shape::Binary(BinaryOp::Copysign)
        }
        "rcp" | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
            if !cx.require_ty(ty, types::is_float, "`.f32` or `.f64`") {
                return;
            }
            Shape::Unary(match opcode {
                "rcp" => UnaryOp::Rcp,
                "sqrt" => UnaryOp::Sqrt,
                "rsqrt" => UnaryOp::Rsqrt,
                "ex2" => UnaryOp::Ex2,
                "lg2" => UnaryOp::Lg2,
                "sin" => UnaryOp::Sin,
                "cos" => UnaryOp::Cos,
                _ => UnaryOp::Tanh,
            })
        }
        "shf" => {
            let dir = cx.one(&mods, |m| match m {
                M::Word(w @ ("l" | "r")) => Some(*w),
                _ => None,
            });
            let mode = cx.one(&mods, |m| match m {
                M::Word(w @ ("wrap" | "clamp")) => Some(*w),
                _ => None,
            });
            let op = match (dir, mode) {
                (Some("l"), Some("wrap")) => TernaryOp::ShfLWrap,
                (Some("l"), Some("clamp")) => TernaryOp::ShfLClamp,
                (Some("r"), Some("wrap")) => TernaryOp::ShfRWrap,
                (Some("r"), Some("clamp")) => TernaryOp::ShfRClamp,
                _ => {
                    cx.error(
                        cx.ins.span,
                        format!(
                            "`{}` needs a direction `.l`/`.r` and a mode `.wrap`/`.clamp`",
                            cx.full_name()
                        ),
                        "incomplete `shf`",
                        "write e.g. `shf.l.wrap.b32`",
                    );
                    return;
                }
            };
            Shape::Ternary(op)
        }
        _ => {
            cx.unsupported(Gap::Other);
            return;
        }
    };
    // Types each operation accepts (PTX ISA chapter 9 tables), checked leniently by kind.
    let ok = match opcode {
        "and" | "or" | "xor" | "not" => cx.require_ty(
            ty,
            |t| types::is_int(t) || t == ScalarType::Pred,
            "bit types or `.pred`",
        ),
        "cnot" | "shl" | "brev" | "clz" | "popc" | "bfi" | "prmt" | "shf" | "bfe" | "bfind"
        | "rem" => cx.require_ty(ty, types::is_int, "integer or bit types"),
        "selp" => cx.require_ty(ty, any_num, "integer, bit or float types"),
        "abs" | "neg" => cx.require_ty(
            ty,
            |t| types::kind(t) != Kind::Unsigned && any_num(t),
            "signed integer or float types",
        ),
        _ => cx.require_ty(ty, any_num, "integer or float types"),
    };
    if !ok {
        return;
    }
    if !float {
        // `.ftz`, roundings and `.approx` mean nothing for integers.
        if flags.rounding.is_some() || flags.ftz || flags.approx {
            cx.error(
                cx.ins.span,
                format!(
                    "`{}` applies a floating-point modifier to an integer type",
                    cx.full_name()
                ),
                "float modifier on an integer type",
                "drop `.rn/.rz/.rm/.rp/.ftz/.approx/.full`",
            );
            return;
        }
        if flags.sat && !(ty == ScalarType::S32 && matches!(opcode, "add" | "sub" | "mad")) {
            cx.error(
                cx.ins.span,
                format!(
                    "`.sat` is only defined for `.s32` add/sub/mad, not `{}`",
                    cx.full_name()
                ),
                "`.sat` not allowed",
                "drop `.sat`",
            );
            return;
        }
    } else {
        flags.sat &= !matches!(opcode, "min" | "max" | "abs" | "neg");
        if !half_modifiers_ok(cx, ty, flags) {
            return;
        }
    }
    if flags.relu && !(opcode == "fma" && types::is_half(ty)) {
        cx.error(
            cx.ins.span,
            format!(
                "`.relu` is only defined for half-precision `fma`, not `{}`",
                cx.full_name()
            ),
            "`.relu` not allowed",
            "drop `.relu`",
        );
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let u32t = ScalarType::U32;
    match shape {
        Shape::Unary(op) => {
            if !cx.arity(&[2]) {
                return;
            }
            // clz, popc, bfind write a `.u32` count.
            let dty = if matches!(
                op,
                UnaryOp::Clz | UnaryOp::Popc | UnaryOp::Bfind | UnaryOp::BfindShiftAmt
            ) {
                u32t
            } else {
                ty
            };
            let dst = cx.dst(&ops[0], Some(dty));
            let a = cx.src(&ops[1], ty);
            if let (Some(dst), Some(a)) = (dst, a) {
                cx.emit(Op::Unary {
                    op,
                    ty,
                    flags,
                    dst,
                    a,
                });
            }
        }
        Shape::Binary(op) => {
            if !cx.arity(&[3]) {
                return;
            }
            let dty = if op == BinaryOp::MulWide {
                types::wide(ty)
            } else {
                Some(ty)
            };
            let Some(dty) = dty else {
                cx.error(
                    cx.ins.span,
                    format!("`{}`: `.wide` needs a 16- or 32-bit type", cx.full_name()),
                    "no wider type",
                    "use `.lo`/`.hi` for 64-bit types",
                );
                return;
            };
            let bty = if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
                u32t
            } else {
                ty
            };
            let dst = cx.dst(&ops[0], Some(dty));
            let a = cx.src(&ops[1], ty);
            let b = cx.src(&ops[2], bty);
            if let (Some(dst), Some(a), Some(b)) = (dst, a, b) {
                cx.emit(Op::Binary {
                    op,
                    ty,
                    flags,
                    dst,
                    a,
                    b,
                });
            }
        }
        Shape::Ternary(op) => {
            if !cx.arity(&[4]) {
                return;
            }
            let wide = types::wide(ty);
            let (dty, bty, cty) = match op {
                TernaryOp::MadWide => match wide {
                    Some(w) => (w, ty, w),
                    None => {
                        cx.error(
                            cx.ins.span,
                            format!("`{}`: `.wide` needs a 16- or 32-bit type", cx.full_name()),
                            "no wider type",
                            "use `.lo`/`.hi` for 64-bit types",
                        );
                        return;
                    }
                },
                TernaryOp::Selp => (ty, ty, ScalarType::Pred),
                TernaryOp::Bfe => (ty, u32t, u32t),
                TernaryOp::ShfLWrap
                | TernaryOp::ShfLClamp
                | TernaryOp::ShfRWrap
                | TernaryOp::ShfRClamp => (ty, ty, u32t),
                _ => (ty, ty, ty),
            };
            let dst = cx.dst(&ops[0], Some(dty));
            let a = cx.src(&ops[1], ty);
            let b = cx.src(&ops[2], bty);
            let c = if op == TernaryOp::Selp {
                cx.pred(&ops[3]).map(|p| p.src)
            } else {
                cx.src(&ops[3], cty)
            };
            if op == TernaryOp::Selp && matches!(ops[3], Operand::Not(..)) {
                cx.error(
                    ops[3].span(),
                    "`selp` takes a plain predicate",
                    "negated predicate",
                    "swap the `a` and `b` operands instead of negating the predicate",
                );
                return;
            }
            if let (Some(dst), Some(a), Some(b), Some(c)) = (dst, a, b, c) {
                cx.emit(Op::Ternary {
                    op,
                    ty,
                    flags,
                    dst,
                    a,
                    b,
                    c,
                });
            }
        }
        Shape::Bfi => {
            if !cx.arity(&[5]) {
                return;
            }
            let dst = cx.dst(&ops[0], Some(ty));
            let a = cx.src(&ops[1], ty);
            let b = cx.src(&ops[2], ty);
            let pos = cx.src(&ops[3], u32t);
            let len = cx.src(&ops[4], u32t);
            if let (Some(dst), Some(a), Some(b), Some(pos), Some(len)) = (dst, a, b, pos, len) {
                cx.emit(Op::Bfi {
                    ty,
                    dst,
                    a,
                    b,
                    pos,
                    len,
                });
            }
        }
        Shape::Prmt(mode) => {
            if !cx.arity(&[4]) {
                return;
            }
            let dst = cx.dst(&ops[0], Some(ty));
            let a = cx.src(&ops[1], ty);
            let b = cx.src(&ops[2], ty);
            let c = cx.src(&ops[3], ty);
            if let (Some(dst), Some(a), Some(b), Some(c)) = (dst, a, b, c) {
                cx.emit(Op::Prmt { mode, dst, a, b, c });
            }
        }
    }
}

/// `setp` / `set` (PTX ISA 9.7.3.5, 9.7.4.2, 9.7.5.1).
pub(super) fn setp(cx: &mut Cx<'_, '_, '_>, is_set: bool) {
    let cmp_word = |n: &str| -> Option<M> {
        m_word(
            n,
            &[
                "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu",
                "leu", "gtu", "geu", "num", "nan", "and", "or", "xor", "ftz",
            ],
        )
    };
    let Some(mods) = cx.mods(|n| m_ty(n).or_else(|| cmp_word(n))) else {
        return;
    };
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
        return;
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
            return;
        }
    };
    if !cx.require_ty(
        ty,
        |t| types::is_int(t) || types::is_float(t),
        "integer, bit or float types",
    ) {
        return;
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
        return;
    }
    if ftz && !types::is_float(ty) {
        cx.error(
            cx.ins.span,
            format!("`{}` applies `.ftz` to an integer type", cx.full_name()),
            "float modifier",
            "drop `.ftz`",
        );
        return;
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
        return;
    }
    let expected = if bop.is_some() { 4 } else { 3 };
    if !cx.arity(&[expected]) {
        if bop.is_none() && cx.ins.operands.len() == 4 {
            cx.push_diag(
                ptx_parser::Diagnostic::warning(
                    cx.ins.span,
                    "the fourth operand needs a combining operation",
                )
                .with_help("add `.and`, `.or` or `.xor`"),
            );
        }
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let a = cx.src(&ops[1], ty);
    let b = cx.src(&ops[2], ty);
    let combine = match bop {
        Some(op) => match cx.pred(&ops[3]) {
            Some(p) => Some((op, p)),
            None => return,
        },
        None => None,
    };
    if is_set {
        // PTX ISA 9.7.3 `set` and 9.7.4 half-precision `set`: a packed source gives a packed
        // result (its own type, or `.u32`/`.s32` halves of 0xFFFF); `.f16`/`.bf16` results take
        // any scalar source, 16-bit integer results a 16-bit float source.
        use ScalarType::*;
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
        let dst = cx.dst(&ops[0], Some(dst_ty));
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
        return;
    }
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
        cx.unsupported(
            if ScalarType::B128 == dst_ty || ScalarType::B128 == src_ty {
                Gap::WideVectors
            } else {
                Gap::HalfFloat
            },
        );
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
        cx.unsupported(if ty == ScalarType::B128 {
            Gap::WideVectors
        } else {
            Gap::HalfFloat
        });
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
