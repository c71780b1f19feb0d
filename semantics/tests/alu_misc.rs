//! Atomics and `redux` of `semantics::alu`, and totality: every op on every type with any bits
//! and flags returns without panicking and with the unused high bits zero.

use proptest::prelude::*;
use ptx_parser::ScalarType::{self, *};
use semantics::alu;
use semantics::program::atom_scalar_type;
use semantics::program::{
    ArithFlags, AtomOp, AtomType as A, BinaryOp, Compare, PrmtMode, ReduxOp, Rounding, TernaryOp,
    UnaryOp,
};

#[test]
fn atom_integer_ops() {
    use AtomOp::*;
    assert_eq!(alu::atom_new_value(Add, A::U32, 0xFFFF_FFFF, 2, 0), 1);
    assert_eq!(
        alu::atom_new_value(Add, A::S64, 5, (-7i64) as u64, 0),
        (-2i64) as u64
    );
    // inc: (old >= a) ? 0 : old + 1
    assert_eq!(alu::atom_new_value(Inc, A::U32, 3, 5, 0), 4);
    assert_eq!(alu::atom_new_value(Inc, A::U32, 5, 5, 0), 0);
    assert_eq!(alu::atom_new_value(Inc, A::U32, 9, 5, 0), 0);
    // dec: (old == 0 || old > a) ? a : old - 1
    assert_eq!(alu::atom_new_value(Dec, A::U32, 3, 5, 0), 2);
    assert_eq!(alu::atom_new_value(Dec, A::U32, 0, 5, 0), 5);
    assert_eq!(alu::atom_new_value(Dec, A::U32, 9, 5, 0), 5);
    assert_eq!(alu::atom_new_value(Exch, A::B32, 1, 2, 0), 2);
    assert_eq!(alu::atom_new_value(Cas, A::B32, 7, 7, 9), 9);
    assert_eq!(alu::atom_new_value(Cas, A::B32, 7, 8, 9), 7);
    assert_eq!(alu::atom_new_value(Cas, A::B64, u64::MAX, u64::MAX, 1), 1);
    assert_eq!(
        alu::atom_new_value(Min, A::S32, 0xFFFF_FFFF, 1, 0),
        0xFFFF_FFFF
    );
    assert_eq!(alu::atom_new_value(Min, A::U32, 0xFFFF_FFFF, 1, 0), 1);
    assert_eq!(alu::atom_new_value(Max, A::S64, (-1i64) as u64, 1, 0), 1);
    assert_eq!(alu::atom_new_value(And, A::B32, 0xF0, 0x3C, 0), 0x30);
    assert_eq!(alu::atom_new_value(Or, A::B32, 0xF0, 0x0F, 0), 0xFF);
    assert_eq!(alu::atom_new_value(Xor, A::B32, 0xFF, 0x0F, 0), 0xF0);
}

#[test]
fn atom_float_add() {
    let f = |x: f32| x.to_bits() as u64;
    assert_eq!(
        alu::atom_new_value(AtomOp::Add, A::F32, f(1.5), f(2.25), 0),
        f(3.75)
    );
    assert_eq!(
        alu::atom_new_value(AtomOp::Add, A::F64, 0.1f64.to_bits(), 0.2f64.to_bits(), 0),
        (0.1f64 + 0.2).to_bits()
    );
    // Round to nearest even.
    let one = f(1.0);
    assert_eq!(
        alu::atom_new_value(AtomOp::Add, A::F32, one, f(2f32.powi(-24)), 0),
        one
    );
    assert_eq!(
        alu::atom_new_value(AtomOp::Max, A::F32, f(f32::NAN), f(2.0), 0),
        f(2.0)
    );
}

#[test]
fn redux_ops() {
    let v = [3u64, 0xFFFF_FFFF, 7, 0x8000_0000];
    assert_eq!(
        alu::redux(ReduxOp::Add, U32, &v),
        (3u64 + 0xFFFF_FFFF + 7 + 0x8000_0000) & 0xFFFF_FFFF
    );
    assert_eq!(alu::redux(ReduxOp::Min, U32, &v), 3);
    assert_eq!(alu::redux(ReduxOp::Max, U32, &v), 0xFFFF_FFFF);
    assert_eq!(alu::redux(ReduxOp::Min, S32, &v), 0x8000_0000);
    assert_eq!(alu::redux(ReduxOp::Max, S32, &v), 7);
    assert_eq!(alu::redux(ReduxOp::And, B32, &[0xF0, 0x3C]), 0x30);
    assert_eq!(alu::redux(ReduxOp::Or, B32, &[0xF0, 0x0F]), 0xFF);
    assert_eq!(alu::redux(ReduxOp::Xor, B32, &[0xFF, 0x0F, 0x01]), 0xF1);
    assert_eq!(alu::redux(ReduxOp::Add, U32, &[]), 0);
    assert_eq!(alu::redux(ReduxOp::And, B32, &[]), 0xFFFF_FFFF);
}

const TYPES: [ScalarType; 24] = [
    S8, S16, S32, S64, U8, U16, U32, U64, F16, F16x2, Bf16, Bf16x2, Tf32, F32, F64, B8, B16, B32,
    B64, B128, Pred, TexRef, SamplerRef, SurfRef,
];

const UNARY: [UnaryOp; 18] = [
    UnaryOp::Mov,
    UnaryOp::Not,
    UnaryOp::Cnot,
    UnaryOp::Neg,
    UnaryOp::Abs,
    UnaryOp::Popc,
    UnaryOp::Clz,
    UnaryOp::Brev,
    UnaryOp::Bfind,
    UnaryOp::BfindShiftAmt,
    UnaryOp::Rcp,
    UnaryOp::Sqrt,
    UnaryOp::Rsqrt,
    UnaryOp::Ex2,
    UnaryOp::Lg2,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Tanh,
];

const BINARY: [BinaryOp; 22] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::MulHi,
    BinaryOp::MulWide,
    BinaryOp::Div,
    BinaryOp::Rem,
    BinaryOp::Min,
    BinaryOp::Max,
    BinaryOp::And,
    BinaryOp::Or,
    BinaryOp::Xor,
    BinaryOp::Shl,
    BinaryOp::Shr,
    BinaryOp::Copysign,
    BinaryOp::AddCc,
    BinaryOp::AddC,
    BinaryOp::AddCCc,
    BinaryOp::SubCc,
    BinaryOp::SubC,
    BinaryOp::SubCCc,
    BinaryOp::Mul,
];

const TERNARY: [TernaryOp; 13] = [
    TernaryOp::Mad,
    TernaryOp::MadHi,
    TernaryOp::MadWide,
    TernaryOp::Fma,
    TernaryOp::Bfe,
    TernaryOp::Selp,
    TernaryOp::Prmt,
    TernaryOp::ShfLWrap,
    TernaryOp::ShfLClamp,
    TernaryOp::ShfRWrap,
    TernaryOp::ShfRClamp,
    TernaryOp::MadCc,
    TernaryOp::MadC,
];

const COMPARES: [Compare; 14] = [
    Compare::Eq,
    Compare::Ne,
    Compare::Lt,
    Compare::Le,
    Compare::Gt,
    Compare::Ge,
    Compare::Equ,
    Compare::Neu,
    Compare::Ltu,
    Compare::Leu,
    Compare::Gtu,
    Compare::Geu,
    Compare::Num,
    Compare::Nan,
];

const REDUX: [ReduxOp; 6] = [
    ReduxOp::Add,
    ReduxOp::Min,
    ReduxOp::Max,
    ReduxOp::And,
    ReduxOp::Or,
    ReduxOp::Xor,
];

const PRMT: [PrmtMode; 7] = [
    PrmtMode::Default,
    PrmtMode::F4e,
    PrmtMode::B4e,
    PrmtMode::Rc8,
    PrmtMode::Ecl,
    PrmtMode::Ecr,
    PrmtMode::Rc16,
];

fn width(ty: ScalarType) -> u32 {
    match ty {
        Pred => 1,
        S8 | U8 | B8 => 8,
        S16 | U16 | B16 | F16 | Bf16 => 16,
        S32 | U32 | B32 | F32 | F16x2 | Bf16x2 | Tf32 => 32,
        _ => 64,
    }
}

fn mask(w: u32) -> u64 {
    if w >= 64 { u64::MAX } else { (1 << w) - 1 }
}

fn flags() -> impl Strategy<Value = ArithFlags> {
    let rounding = proptest::option::of(proptest::sample::select(vec![
        Rounding::Rn,
        Rounding::Rz,
        Rounding::Rm,
        Rounding::Rp,
        Rounding::Rni,
        Rounding::Rzi,
        Rounding::Rmi,
        Rounding::Rpi,
    ]));
    (rounding, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(rounding, ftz, sat, approx)| ArithFlags {
            rounding,
            ftz,
            sat,
            approx,
            relu: false,
            satfinite: false,
        },
    )
}

/// Operand bits biased towards interesting values.
fn bits() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        proptest::sample::select(vec![
            0u64,
            1,
            u64::MAX,
            0x7FFF_FFFF,
            0x8000_0000,
            0xFFFF_FFFF,
            0x7F80_0000,
            0x7FC0_0000,
            0xFF80_0000,
            0x0000_0001,
            0x8000_0001,
            0x7FF0_0000_0000_0000,
            0x7FF8_0000_0000_0000,
            0x8000_0000_0000_0000,
            0x7C00,
            0xFC00,
            0x7E00,
            0x3C00,
            0x3F80_0000,
        ]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn every_op_is_total_and_masks_its_result(
        ty in proptest::sample::select(TYPES.to_vec()),
        ty2 in proptest::sample::select(TYPES.to_vec()),
        f in flags(),
        a in bits(), b in bits(), c in bits(), carry: bool,
    ) {
        let m = mask(width(ty));
        for op in UNARY {
            let r = alu::unary(op, ty, f, a);
            // popc/clz/bfind write a .u32 whatever the source type.
            let limit = if matches!(op, UnaryOp::Popc | UnaryOp::Clz | UnaryOp::Bfind | UnaryOp::BfindShiftAmt) { m | 0xFFFF_FFFF } else { m };
            prop_assert_eq!(r & !limit, 0, "{:?}.{:?}", op, ty);
        }
        for op in BINARY {
            let mut cf = carry;
            let r = alu::binary(op, ty, f, a, b, &mut cf);
            let limit = if op == BinaryOp::MulWide { mask(2 * width(ty)) } else { m };
            prop_assert_eq!(r & !limit, 0, "{:?}.{:?}", op, ty);
        }
        for op in TERNARY {
            let mut cf = carry;
            let r = alu::ternary(op, ty, f, a, b, c, &mut cf);
            let limit = match op {
                TernaryOp::MadWide => mask(2 * width(ty)),
                TernaryOp::Prmt | TernaryOp::ShfLWrap | TernaryOp::ShfLClamp | TernaryOp::ShfRWrap | TernaryOp::ShfRClamp => 0xFFFF_FFFF,
                _ => m,
            };
            prop_assert_eq!(r & !limit, 0, "{:?}.{:?}", op, ty);
        }
        for hi in [false, true] {
            let mut cf = carry;
            prop_assert_eq!(alu::mad_carry(hi, true, true, ty, a, b, c, &mut cf) & !m, 0);
        }
        prop_assert_eq!(alu::bfi(ty, a, b, c, a) & !m, 0);
        for mode in PRMT {
            prop_assert_eq!(alu::prmt(mode, a, b, c) >> 32, 0);
        }
        prop_assert_eq!(alu::cvt(ty, ty2, f, a) & !m, 0, "cvt.{:?}.{:?}", ty, ty2);
        for cmp in COMPARES {
            let _ = alu::compare(cmp, ty, f.ftz, a, b);
        }
        prop_assert_eq!(alu::set_value(ty, true) & !m, 0);
        let _ = alu::slct(ty, f.ftz, a, b, c);
        if let Some(aty) = A::ALL.into_iter().find(|&t| atom_scalar_type(t) == ty) {
            for op in AtomOp::ALL {
                prop_assert_eq!(alu::atom_new_value(op, aty, a, b, c) & !m, 0, "atom.{:?}.{:?}", op, ty);
            }
        }
        for op in REDUX {
            prop_assert_eq!(alu::redux(op, ty, &[a, b, c]) & !m, 0);
            let _ = alu::redux(op, ty, &[]);
        }
    }

    #[test]
    fn atom_inc_dec_match_ptx_formulas(old in 0u64..20, a in 0u64..20) {
        let inc = if old >= a { 0 } else { old + 1 };
        let dec = if old == 0 || old > a { a } else { old - 1 };
        prop_assert_eq!(alu::atom_new_value(AtomOp::Inc, A::U32, old, a, 0), inc);
        prop_assert_eq!(alu::atom_new_value(AtomOp::Dec, A::U32, old, a, 0), dec);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// The value an atomic writes (memory's function, which both memory environments call) is
    /// the machine's ALU instruction of the same operation: `atom.add.f32` rounds as
    /// `add.rn.f32`, `atom.min.s32` is `min.s32`, `atom.and.b64` is `and.b64` (PTX ISA
    /// 9.7.12.3: "performs a reduction operation with operand b and the value in location a").
    #[test]
    fn atom_arithmetic_is_the_alu_instruction(
        aty in proptest::sample::select(A::ALL.to_vec()),
        old in bits(), a in bits(),
    ) {
        let ty = atom_scalar_type(aty);
        let float = matches!(aty, A::F32 | A::F64);
        let rn = ArithFlags { rounding: Some(Rounding::Rn), ..ArithFlags::default() };
        let mut pairs = vec![
            (AtomOp::Add, BinaryOp::Add, if float { rn } else { ArithFlags::default() }),
            (AtomOp::Min, BinaryOp::Min, ArithFlags::default()),
            (AtomOp::Max, BinaryOp::Max, ArithFlags::default()),
        ];
        if !float {
            pairs.extend([
                (AtomOp::And, BinaryOp::And, ArithFlags::default()),
                (AtomOp::Or, BinaryOp::Or, ArithFlags::default()),
                (AtomOp::Xor, BinaryOp::Xor, ArithFlags::default()),
            ]);
        }
        for (atom, bin, flags) in pairs {
            let alu_value = alu::binary(bin, ty, flags, old, a, &mut Default::default());
            prop_assert_eq!(
                alu::atom_new_value(atom, aty, old, a, 0),
                alu_value,
                "atom.{:?}.{:?} against {:?}.{:?}", atom, aty, bin, ty
            );
        }
    }
}
