//! Arithmetic, logic and bit-manipulation instructions (PTX ISA 9.7.1-9.7.4, 9.7.8): the
//! thesis's abstract `dop` (5.1.1) made concrete, one function per step: the operation's shape
//! from its opcode and modifiers, the types and modifiers it admits, its operands. The 16-bit
//! float types `.f16 .f16x2 .bf16 .bf16x2` (PTX ISA 9.7.4 "Half Precision Floating-Point
//! Instructions") go through the same paths for `add sub mul fma neg abs min max`; comparisons
//! are in `compare.rs`, moves and conversions in `moves.rs`.

use super::{Cx, M, Mods, m_round, m_ty, m_word};
use crate::load::types::{self, Kind};
use crate::load::unsupported::Gap;
use crate::program::{ArithFlags, BinaryOp, Op, PrmtMode, TernaryOp, UnaryOp};
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

/// What [`arith`] read from an instruction's modifiers: its type, its kind and the integer
/// modifiers `.lo .hi .wide` (of `mul`/`mad`, PTX ISA 9.7.1.6) and `.cc`.
#[derive(Clone, Copy)]
struct ArithMods<'m> {
    ty: ScalarType,
    float: bool,
    part: Option<&'m str>,
    cc: bool,
}

/// The arithmetic and logic instructions (PTX ISA 9.7.1, 9.7.3, 9.7.4, 9.7.8): modifiers, the
/// operation's shape, the types and modifiers it admits, then its operands.
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
    if !type_supported(cx, opcode, ty) {
        return;
    }
    let k = types::kind(ty);
    let float = k == Kind::Float;
    let int = matches!(k, Kind::Signed | Kind::Unsigned | Kind::Bits);
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
        && !takes_float(opcode)
        && !cx.require_ty(ty, |t| !types::is_float(t), "integer or bit types")
    {
        return;
    }
    let am = ArithMods {
        ty,
        float,
        part,
        cc,
    };
    let Some(shape) = shape(cx, opcode, &mods, am) else {
        return;
    };
    if !operand_type_ok(cx, opcode, ty) || !flags_ok(cx, opcode, am, &mut flags) {
        return;
    }
    emit(cx, shape, ty, flags);
}

/// Whether cudasem decodes `opcode` on `ty` (128-bit types no; 16-bit floats only for the
/// operations PTX ISA 9.7.4 gives them); reports the gap otherwise.
fn type_supported(cx: &mut Cx<'_, '_, '_>, opcode: &str, ty: ScalarType) -> bool {
    let half_ok = matches!(
        opcode,
        "add" | "sub" | "mul" | "fma" | "neg" | "abs" | "min" | "max"
    );
    if types::is_unsupported(ty) || (types::is_half(ty) && !half_ok) {
        cx.unsupported_type(ty);
        return false;
    }
    true
}

/// The arithmetic opcodes defined on floating-point types.
fn takes_float(opcode: &str) -> bool {
    matches!(
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
}

/// The operation `opcode` with its modifiers denotes; `None` after a diagnostic.
fn shape(cx: &mut Cx<'_, '_, '_>, opcode: &str, mods: &Mods<'_>, am: ArithMods) -> Option<Shape> {
    let ArithMods {
        ty,
        float,
        part,
        cc,
    } = am;
    Some(match opcode {
        "add" | "sub" => Shape::Binary(match (opcode == "add", cc) {
            (true, false) => BinaryOp::Add,
            (false, false) => BinaryOp::Sub,
            (true, true) => BinaryOp::AddCc,
            (false, true) => BinaryOp::SubCc,
        }),
        "addc" | "subc" => {
            if !cx.require_ty(
                ty,
                |t| types::is_int(t) && matches!(types::size(t), 4 | 8),
                "32- or 64-bit integer types",
            ) {
                return None;
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
        "mad" | "madc" => return mad_shape(cx, opcode, am),
        "fma" | "copysign" | "rcp" | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
            return float_shape(cx, opcode, ty);
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
        "prmt" => prmt_shape(cx, mods),
        "shf" => return shf_shape(cx, mods),
        _ => {
            cx.unsupported(Gap::Other);
            return None;
        }
    })
}

/// `mad` and `madc` (PTX ISA 9.7.1.4, 9.7.2.4): `.lo .hi .wide` and the carry forms.
fn mad_shape(cx: &mut Cx<'_, '_, '_>, opcode: &str, am: ArithMods) -> Option<Shape> {
    let op = match (opcode, am.float, am.part, am.cc) {
        ("mad", true, _, _) => TernaryOp::Mad,
        ("mad", false, Some("hi"), false) => TernaryOp::MadHi,
        ("mad", false, Some("wide"), false) => TernaryOp::MadWide,
        ("mad", false, _, false) => TernaryOp::Mad,
        ("mad", false, Some("lo") | None, true) => TernaryOp::MadCc,
        ("madc", _, Some("lo") | None, false) => TernaryOp::MadC,
        // `mad.hi.cc`, `madc.hi` and `madc.*.cc` have no decoded form yet.
        _ => {
            cx.unsupported(Gap::Modifiers);
            return None;
        }
    };
    Some(Shape::Ternary(op))
}

/// The operations defined on floating-point types only: `fma`, `copysign` and the
/// transcendental approximations (PTX ISA 9.7.3).
fn float_shape(cx: &mut Cx<'_, '_, '_>, opcode: &str, ty: ScalarType) -> Option<Shape> {
    if !cx.require_ty(ty, types::is_float, "`.f32` or `.f64`") {
        return None;
    }
    Some(match opcode {
        "fma" => Shape::Ternary(TernaryOp::Fma),
        "copysign" => Shape::Binary(BinaryOp::Copysign),
        "rcp" => Shape::Unary(UnaryOp::Rcp),
        "sqrt" => Shape::Unary(UnaryOp::Sqrt),
        "rsqrt" => Shape::Unary(UnaryOp::Rsqrt),
        "ex2" => Shape::Unary(UnaryOp::Ex2),
        "lg2" => Shape::Unary(UnaryOp::Lg2),
        "sin" => Shape::Unary(UnaryOp::Sin),
        "cos" => Shape::Unary(UnaryOp::Cos),
        _ => Shape::Unary(UnaryOp::Tanh),
    })
}

/// `prmt` (PTX ISA 9.7.8.7): the generic permute, or one of its fixed modes.
fn prmt_shape(cx: &mut Cx<'_, '_, '_>, mods: &Mods<'_>) -> Shape {
    let mode = cx.one(mods, |m| match m {
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

/// `shf` (PTX ISA 9.7.8.8): a direction `.l`/`.r` and a mode `.wrap`/`.clamp`, both required.
fn shf_shape(cx: &mut Cx<'_, '_, '_>, mods: &Mods<'_>) -> Option<Shape> {
    let dir = cx.one(mods, |m| match m {
        M::Word(w @ ("l" | "r")) => Some(*w),
        _ => None,
    });
    let mode = cx.one(mods, |m| match m {
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
            return None;
        }
    };
    Some(Shape::Ternary(op))
}

/// The types each operation accepts (PTX ISA chapter 9 tables), checked leniently by kind.
fn operand_type_ok(cx: &mut Cx<'_, '_, '_>, opcode: &str, ty: ScalarType) -> bool {
    let any_num = |t: ScalarType| types::is_int(t) || types::is_float(t);
    match opcode {
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
    }
}

/// The floating-point modifiers (`.rn .ftz .sat .approx .relu`) against the type and the
/// operation; `.sat` of `min max abs neg` is dropped (it cannot change their result).
fn flags_ok(cx: &mut Cx<'_, '_, '_>, opcode: &str, am: ArithMods, flags: &mut ArithFlags) -> bool {
    let ty = am.ty;
    if !am.float {
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
            return false;
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
            return false;
        }
    } else {
        flags.sat &= !matches!(opcode, "min" | "max" | "abs" | "neg");
        if !half_modifiers_ok(cx, ty, *flags) {
            return false;
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
        return false;
    }
    true
}

/// The operands of an operation of shape `shape` on `ty`, and the op.
fn emit(cx: &mut Cx<'_, '_, '_>, shape: Shape, ty: ScalarType, flags: ArithFlags) {
    match shape {
        Shape::Unary(op) => emit_unary(cx, op, ty, flags),
        Shape::Binary(op) => emit_binary(cx, op, ty, flags),
        Shape::Ternary(op) => emit_ternary(cx, op, ty, flags),
        Shape::Bfi => emit_bfi(cx, ty),
        Shape::Prmt(mode) => emit_prmt(cx, mode, ty),
    }
}

/// `d, a`; `clz popc bfind` write a `.u32` count.
fn emit_unary(cx: &mut Cx<'_, '_, '_>, op: UnaryOp, ty: ScalarType, flags: ArithFlags) {
    if !cx.arity(&[2]) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let dty = if matches!(
        op,
        UnaryOp::Clz | UnaryOp::Popc | UnaryOp::Bfind | UnaryOp::BfindShiftAmt
    ) {
        ScalarType::U32
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

/// `d, a, b`; `.wide` writes the doubled type, shifts take a `.u32` amount.
fn emit_binary(cx: &mut Cx<'_, '_, '_>, op: BinaryOp, ty: ScalarType, flags: ArithFlags) {
    if !cx.arity(&[3]) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let dty = if op == BinaryOp::MulWide {
        types::wide(ty)
    } else {
        Some(ty)
    };
    let Some(dty) = dty else {
        no_wider_type(cx);
        return;
    };
    let bty = if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
        ScalarType::U32
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

/// `.wide` of a type with no wider one.
fn no_wider_type(cx: &mut Cx<'_, '_, '_>) {
    cx.error(
        cx.ins.span,
        format!("`{}`: `.wide` needs a 16- or 32-bit type", cx.full_name()),
        "no wider type",
        "use `.lo`/`.hi` for 64-bit types",
    );
}

/// `d, a, b, c`; `selp`'s `c` is a plain predicate.
fn emit_ternary(cx: &mut Cx<'_, '_, '_>, op: TernaryOp, ty: ScalarType, flags: ArithFlags) {
    if !cx.arity(&[4]) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let u32t = ScalarType::U32;
    let (dty, bty, cty) = match op {
        TernaryOp::MadWide => match types::wide(ty) {
            Some(w) => (w, ty, w),
            None => {
                no_wider_type(cx);
                return;
            }
        },
        TernaryOp::Selp => (ty, ty, ScalarType::Pred),
        TernaryOp::Bfe => (ty, u32t, u32t),
        TernaryOp::ShfLWrap | TernaryOp::ShfLClamp | TernaryOp::ShfRWrap | TernaryOp::ShfRClamp => {
            (ty, ty, u32t)
        }
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

/// `bfi d, a, b, pos, len` (PTX ISA 9.7.8.10).
fn emit_bfi(cx: &mut Cx<'_, '_, '_>, ty: ScalarType) {
    if !cx.arity(&[5]) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let u32t = ScalarType::U32;
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

/// `prmt.b32.mode d, a, b, c` (PTX ISA 9.7.8.7).
fn emit_prmt(cx: &mut Cx<'_, '_, '_>, mode: PrmtMode, ty: ScalarType) {
    if !cx.arity(&[4]) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let dst = cx.dst(&ops[0], Some(ty));
    let a = cx.src(&ops[1], ty);
    let b = cx.src(&ops[2], ty);
    let c = cx.src(&ops[3], ty);
    if let (Some(dst), Some(a), Some(b), Some(c)) = (dst, a, b, c) {
        cx.emit(Op::Prmt { mode, dst, a, b, c });
    }
}
