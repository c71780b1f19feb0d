//! Integer, logic, bit-field and carry arithmetic of `semantics::alu` against PTX ISA examples,
//! edge cases and i128 / literal-pseudo-code references.

use proptest::prelude::*;
use ptx_parser::ScalarType::{self, *};
use semantics::alu::{self, Carry};
use semantics::program::{ArithFlags, BinaryOp, PrmtMode, TernaryOp, UnaryOp};

const NONE: ArithFlags = ArithFlags {
    rounding: None,
    ftz: false,
    sat: false,
    approx: false,
    relu: false,
    satfinite: false,
};
const SAT: ArithFlags = ArithFlags {
    rounding: None,
    ftz: false,
    sat: true,
    approx: false,
    relu: false,
    satfinite: false,
};

fn bin(op: BinaryOp, ty: ScalarType, a: u64, b: u64) -> u64 {
    alu::binary(op, ty, NONE, a, b, &mut false)
}

fn un(op: UnaryOp, ty: ScalarType, a: u64) -> u64 {
    alu::unary(op, ty, NONE, a)
}

fn tern(op: TernaryOp, ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    alu::ternary(op, ty, NONE, a, b, c, &mut false)
}

const INT_TYPES: [ScalarType; 12] = [S8, S16, S32, S64, U8, U16, U32, U64, B8, B16, B32, B64];

fn width(ty: ScalarType) -> u32 {
    match ty {
        S8 | U8 | B8 => 8,
        S16 | U16 | B16 => 16,
        S32 | U32 | B32 => 32,
        _ => 64,
    }
}

fn signed(ty: ScalarType) -> bool {
    matches!(ty, S8 | S16 | S32 | S64)
}

fn mask(w: u32) -> u64 {
    if w == 64 { u64::MAX } else { (1 << w) - 1 }
}

/// The value of a register word as the type reads it.
fn val(ty: ScalarType, v: u64) -> i128 {
    let w = width(ty);
    let v = v & mask(w);
    if signed(ty) && (v >> (w - 1)) & 1 == 1 {
        v as i128 - (1i128 << w)
    } else {
        v as i128
    }
}

fn wrap(ty: ScalarType, v: i128) -> u64 {
    (v as u64) & mask(width(ty))
}

#[test]
fn wrap_around_and_high_bits_zero() {
    assert_eq!(bin(BinaryOp::Add, U32, 0xFFFF_FFFF, 1), 0);
    assert_eq!(bin(BinaryOp::Add, S32, 0x7FFF_FFFF, 1), 0x8000_0000);
    assert_eq!(bin(BinaryOp::Sub, S16, 0, 1), 0xFFFF);
    assert_eq!(bin(BinaryOp::Sub, U8, 0, 1), 0xFF);
    // Operand bits above the width are ignored.
    assert_eq!(bin(BinaryOp::Add, U16, 0xDEAD_0001, 0xBEEF_0002), 3);
    assert_eq!(un(UnaryOp::Neg, S16, 1), 0xFFFF);
    assert_eq!(un(UnaryOp::Neg, S32, 0x8000_0000), 0x8000_0000);
    assert_eq!(un(UnaryOp::Abs, S32, 0x8000_0000), 0x8000_0000);
    assert_eq!(un(UnaryOp::Abs, S64, (-5i64) as u64), 5);
}

#[test]
fn saturating_add_sub_s32() {
    let add = |a: i32, b: i32| {
        alu::binary(
            BinaryOp::Add,
            S32,
            SAT,
            a as u32 as u64,
            b as u32 as u64,
            &mut false,
        )
    };
    let sub = |a: i32, b: i32| {
        alu::binary(
            BinaryOp::Sub,
            S32,
            SAT,
            a as u32 as u64,
            b as u32 as u64,
            &mut false,
        )
    };
    assert_eq!(add(i32::MAX, 1), i32::MAX as u32 as u64);
    assert_eq!(add(i32::MIN, -1), i32::MIN as u32 as u64);
    assert_eq!(add(5, -7), (-2i32) as u32 as u64);
    assert_eq!(sub(i32::MIN, 1), i32::MIN as u32 as u64);
    assert_eq!(sub(i32::MAX, -1), i32::MAX as u32 as u64);
}

#[test]
fn mul_hi_wide_and_mad() {
    assert_eq!(
        bin(BinaryOp::MulHi, U32, 0xFFFF_FFFF, 0xFFFF_FFFF),
        0xFFFF_FFFE
    );
    assert_eq!(
        bin(BinaryOp::MulHi, S32, (-1i32) as u32 as u64, 1),
        0xFFFF_FFFF
    );
    assert_eq!(bin(BinaryOp::MulHi, U64, u64::MAX, u64::MAX), u64::MAX - 1);
    assert_eq!(
        bin(BinaryOp::MulHi, S64, i64::MIN as u64, i64::MIN as u64),
        1 << 62
    );
    assert_eq!(
        bin(BinaryOp::MulWide, U32, 0xFFFF_FFFF, 0xFFFF_FFFF),
        0xFFFF_FFFE_0000_0001
    );
    assert_eq!(
        bin(BinaryOp::MulWide, S32, (-2i32) as u32 as u64, 3),
        (-6i64) as u64
    );
    assert_eq!(bin(BinaryOp::MulWide, S16, 0x8000, 0x8000), 0x4000_0000);
    assert_eq!(bin(BinaryOp::MulWide, U16, 0xFFFF, 0xFFFF), 0xFFFE_0001);
    assert_eq!(
        bin(BinaryOp::Mul, S32, (-3i32) as u32 as u64, 7),
        (-21i32) as u32 as u64
    );
    assert_eq!(tern(TernaryOp::Mad, U32, 0x1_0000, 0x1_0000, 5), 5);
    assert_eq!(tern(TernaryOp::MadHi, U32, 0x1_0000, 0x1_0000, 5), 6);
    assert_eq!(
        tern(TernaryOp::MadWide, S32, (-1i32) as u32 as u64, 2, 10),
        8
    );
    // mad.hi.sat.s32: hi(0x7FFFFFFF * 0x7FFFFFFF) = 0x3FFFFFFF; + 0x7FFFFFFF saturates.
    let d = alu::ternary(
        TernaryOp::MadHi,
        S32,
        SAT,
        0x7FFF_FFFF,
        0x7FFF_FFFF,
        0x7FFF_FFFF,
        &mut false,
    );
    assert_eq!(d, 0x7FFF_FFFF);
    let d = alu::ternary(
        TernaryOp::MadHi,
        S32,
        NONE,
        0x7FFF_FFFF,
        0x7FFF_FFFF,
        0x7FFF_FFFF,
        &mut false,
    );
    assert_eq!(d, 0xBFFF_FFFE);
}

#[test]
fn division_and_remainder() {
    assert_eq!(
        bin(BinaryOp::Div, S32, (-7i32) as u32 as u64, 2),
        (-3i32) as u32 as u64
    );
    assert_eq!(
        bin(BinaryOp::Rem, S32, (-7i32) as u32 as u64, 2),
        (-1i32) as u32 as u64
    );
    assert_eq!(bin(BinaryOp::Rem, S32, 7, (-2i32) as u32 as u64), 1);
    assert_eq!(
        bin(BinaryOp::Div, S32, 0x8000_0000, 0xFFFF_FFFF),
        0x8000_0000
    );
    assert_eq!(bin(BinaryOp::Rem, S32, 0x8000_0000, 0xFFFF_FFFF), 0);
    assert_eq!(
        bin(BinaryOp::Div, S64, i64::MIN as u64, u64::MAX),
        i64::MIN as u64
    );
    // Division by zero (undefined in PTX; cudasem's documented choice).
    assert_eq!(bin(BinaryOp::Div, U32, 12, 0), 0xFFFF_FFFF);
    assert_eq!(bin(BinaryOp::Div, U16, 12, 0), 0xFFFF);
    assert_eq!(bin(BinaryOp::Rem, U32, 12, 0), 12);
    assert_eq!(
        bin(BinaryOp::Rem, S32, (-12i32) as u32 as u64, 0),
        (-12i32) as u32 as u64
    );
    assert_eq!(bin(BinaryOp::Div, S32, 12, 0), 0xFFFF_FFFF);
    assert_eq!(bin(BinaryOp::Div, S32, (-12i32) as u32 as u64, 0), 1);
}

#[test]
fn min_max_signedness() {
    assert_eq!(bin(BinaryOp::Min, S32, 0xFFFF_FFFF, 1), 0xFFFF_FFFF);
    assert_eq!(bin(BinaryOp::Min, U32, 0xFFFF_FFFF, 1), 1);
    assert_eq!(bin(BinaryOp::Max, S16, 0x8000, 0x7FFF), 0x7FFF);
    assert_eq!(bin(BinaryOp::Max, U16, 0x8000, 0x7FFF), 0x8000);
}

#[test]
fn shifts_clamp() {
    assert_eq!(bin(BinaryOp::Shl, B32, 1, 31), 0x8000_0000);
    assert_eq!(bin(BinaryOp::Shl, B32, 1, 32), 0);
    assert_eq!(bin(BinaryOp::Shl, B32, 1, 0xFFFF_FFFF), 0);
    assert_eq!(bin(BinaryOp::Shl, B16, 1, 16), 0);
    assert_eq!(bin(BinaryOp::Shr, U32, 0x8000_0000, 31), 1);
    assert_eq!(bin(BinaryOp::Shr, U32, 0x8000_0000, 32), 0);
    assert_eq!(bin(BinaryOp::Shr, B64, u64::MAX, 64), 0);
    assert_eq!(bin(BinaryOp::Shr, S32, 0x8000_0000, 4), 0xF800_0000);
    assert_eq!(bin(BinaryOp::Shr, S32, 0x8000_0000, 100), 0xFFFF_FFFF);
    assert_eq!(bin(BinaryOp::Shr, S32, 0x7000_0000, 100), 0);
    assert_eq!(
        bin(BinaryOp::Shr, S16, 0x8000, 0x1_0000_0000),
        0x8000,
        "the amount is a u32"
    );
    assert_eq!(bin(BinaryOp::Shr, S64, 1 << 63, 200), u64::MAX);
}

#[test]
fn logic_and_predicates() {
    assert_eq!(bin(BinaryOp::And, B32, 0xF0F0, 0xFF00), 0xF000);
    assert_eq!(bin(BinaryOp::Or, Pred, 0, 1), 1);
    assert_eq!(bin(BinaryOp::Xor, Pred, 1, 1), 0);
    assert_eq!(un(UnaryOp::Not, Pred, 1), 0);
    assert_eq!(un(UnaryOp::Not, Pred, 0), 1);
    assert_eq!(un(UnaryOp::Not, B16, 0x00FF), 0xFF00);
    assert_eq!(un(UnaryOp::Cnot, B32, 0), 1);
    assert_eq!(un(UnaryOp::Cnot, B32, 0x100), 0);
    assert_eq!(
        un(UnaryOp::Cnot, B16, 0x1_0000),
        1,
        "only the type's bits count"
    );
}

#[test]
fn counting_and_reversal() {
    assert_eq!(un(UnaryOp::Popc, B32, 0xF0F0_0001), 9);
    assert_eq!(un(UnaryOp::Popc, B64, u64::MAX), 64);
    assert_eq!(un(UnaryOp::Clz, B32, 0), 32);
    assert_eq!(un(UnaryOp::Clz, B32, 1), 31);
    assert_eq!(un(UnaryOp::Clz, B64, 0), 64);
    assert_eq!(un(UnaryOp::Clz, B64, 1 << 40), 23);
    assert_eq!(un(UnaryOp::Brev, B32, 1), 0x8000_0000);
    assert_eq!(un(UnaryOp::Brev, B64, 0x3), 0xC000_0000_0000_0000);
    // bfind (PTX ISA examples and rules).
    assert_eq!(un(UnaryOp::Bfind, U32, 0), 0xFFFF_FFFF);
    assert_eq!(un(UnaryOp::Bfind, U32, 0x10), 4);
    assert_eq!(un(UnaryOp::BfindShiftAmt, U32, 0x10), 27);
    assert_eq!(un(UnaryOp::BfindShiftAmt, U32, 0), 0xFFFF_FFFF);
    assert_eq!(un(UnaryOp::Bfind, S32, 0xFFFF_FFFF), 0xFFFF_FFFF);
    assert_eq!(un(UnaryOp::Bfind, S32, 0xFFFF_FFF0), 3);
    assert_eq!(un(UnaryOp::Bfind, S64, 1 << 62), 62);
    assert_eq!(un(UnaryOp::BfindShiftAmt, S64, (-2i64) as u64), 63);
}

/// PTX ISA bfe pseudo-code, bit by bit.
fn bfe_ref(ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    let msb = width(ty) as u64 - 1;
    let pos = b & 0xFF;
    let len = c & 0xFF;
    let bit = |i: u64| (a >> i) & 1;
    let sbit = if !signed(ty) || len == 0 {
        0
    } else {
        bit((pos + len - 1).min(msb))
    };
    let mut d = 0;
    for i in 0..=msb {
        let v = if i < len && pos + i <= msb {
            bit(pos + i)
        } else {
            sbit
        };
        d |= v << i;
    }
    d
}

/// PTX ISA bfi pseudo-code, bit by bit.
fn bfi_ref(ty: ScalarType, a: u64, b: u64, c: u64, d: u64) -> u64 {
    let msb = width(ty) as u64 - 1;
    let pos = c & 0xFF;
    let len = d & 0xFF;
    let mut f = b & mask(width(ty));
    let mut i = 0;
    while i < len && pos + i <= msb {
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        i += 1;
    }
    f
}

#[test]
fn bfe_edge_cases() {
    // Unsigned field.
    assert_eq!(tern(TernaryOp::Bfe, U32, 0xABCD_1234, 8, 8), 0x12);
    // Signed field: sign bit of the field is replicated.
    assert_eq!(tern(TernaryOp::Bfe, S32, 0x0000_F000, 12, 4), 0xFFFF_FFFF);
    assert_eq!(tern(TernaryOp::Bfe, S32, 0x0000_7000, 12, 4), 7);
    // len == 0 gives 0, also for signed.
    assert_eq!(tern(TernaryOp::Bfe, S32, 0xFFFF_FFFF, 4, 0), 0);
    // pos beyond msb: signed fills with a[msb], unsigned with 0.
    assert_eq!(tern(TernaryOp::Bfe, S32, 0x8000_0000, 40, 4), 0xFFFF_FFFF);
    assert_eq!(tern(TernaryOp::Bfe, U32, 0x8000_0000, 40, 4), 0);
    // Field running off the top: sign from a[msb].
    assert_eq!(tern(TernaryOp::Bfe, S32, 0x8000_0000, 28, 8), 0xFFFF_FFF8);
    // Only the low 8 bits of pos/len count.
    assert_eq!(tern(TernaryOp::Bfe, U32, 0xFF, 0x100, 0x104), 0xF);
    assert_eq!(tern(TernaryOp::Bfe, S64, 1 << 63, 63, 1), u64::MAX);
    assert_eq!(tern(TernaryOp::Bfe, U64, u64::MAX, 0, 255), u64::MAX);
}

#[test]
fn bfi_edge_cases() {
    assert_eq!(alu::bfi(B32, 0xF, 0, 4, 4), 0xF0);
    assert_eq!(alu::bfi(B32, 0xFF, 0x1234_5678, 0, 0), 0x1234_5678);
    assert_eq!(alu::bfi(B32, 0xFF, 0x1234_5678, 32, 8), 0x1234_5678);
    assert_eq!(alu::bfi(B32, 0xFF, 0, 28, 8), 0xF000_0000);
    assert_eq!(alu::bfi(B64, u64::MAX, 0, 0, 255), u64::MAX);
    assert_eq!(
        alu::bfi(B32, 1, 0, 0x101, 0x101),
        2,
        "pos/len use their low 8 bits"
    );
}

#[test]
fn prmt_modes() {
    let (a, b) = (0x3322_1100u64, 0x7766_5544u64);
    // Default mode: selectors per byte, bit 3 replicates the sign.
    assert_eq!(alu::prmt(PrmtMode::Default, a, b, 0x3210), a);
    assert_eq!(alu::prmt(PrmtMode::Default, a, b, 0x7654), b);
    assert_eq!(alu::prmt(PrmtMode::Default, a, b, 0x0123), 0x0011_2233);
    assert_eq!(
        tern(TernaryOp::Prmt, B32, 0x0000_0080, 0, 0x8880),
        0xFFFF_FF80
    );
    assert_eq!(
        tern(TernaryOp::Prmt, B32, 0x0000_0070, 0, 0x8880),
        0x0000_0070
    );
    let p = |m, c| alu::prmt(m, a, b, c);
    assert_eq!(p(PrmtMode::F4e, 0), 0x3322_1100);
    assert_eq!(p(PrmtMode::F4e, 1), 0x4433_2211);
    assert_eq!(p(PrmtMode::F4e, 3), 0x6655_4433);
    assert_eq!(p(PrmtMode::B4e, 0), 0x5566_7700);
    assert_eq!(p(PrmtMode::B4e, 1), 0x6677_0011);
    assert_eq!(p(PrmtMode::B4e, 3), 0x0011_2233);
    assert_eq!(p(PrmtMode::Rc8, 2), 0x2222_2222);
    assert_eq!(p(PrmtMode::Ecl, 1), 0x3322_1111);
    assert_eq!(p(PrmtMode::Ecl, 2), 0x3322_2222);
    assert_eq!(p(PrmtMode::Ecr, 1), 0x1111_1100);
    assert_eq!(p(PrmtMode::Ecr, 2), 0x2222_1100);
    assert_eq!(p(PrmtMode::Rc16, 0), 0x1100_1100);
    assert_eq!(p(PrmtMode::Rc16, 1), 0x3322_3322);
    assert_eq!(p(PrmtMode::Rc16, 4 | 3), 0x3322_3322, "only c[1:0] counts");
}

#[test]
fn funnel_shifts() {
    let (a, b) = (0x8765_4321u64, 0x1234_5678u64);
    assert_eq!(tern(TernaryOp::ShfLWrap, B32, a, b, 8), 0x3456_7887);
    assert_eq!(tern(TernaryOp::ShfRWrap, B32, a, b, 8), 0x7887_6543);
    assert_eq!(tern(TernaryOp::ShfLWrap, B32, a, b, 40), 0x3456_7887);
    assert_eq!(tern(TernaryOp::ShfLClamp, B32, a, b, 40), a);
    assert_eq!(tern(TernaryOp::ShfRClamp, B32, a, b, 40), b);
    assert_eq!(tern(TernaryOp::ShfLWrap, B32, a, b, 32), b);
    assert_eq!(tern(TernaryOp::ShfRWrap, B32, a, b, 0), a);
    // Rotate: shf.l.wrap with a == b.
    assert_eq!(tern(TernaryOp::ShfLWrap, B32, a, a, 4), 0x7654_3218);
}

#[test]
fn carry_chain_adds_two_128_bit_numbers() {
    let x: u128 = 0xFFFF_FFFF_FFFF_FFFF_FFFF_FFFF_0000_0001;
    let y: u128 = 0x0000_0000_0000_0000_0000_0000_FFFF_FFFF;
    let limbs = |v: u128| [0, 1, 2, 3].map(|i| ((v >> (32 * i)) as u32) as u64);
    let (xs, ys) = (limbs(x), limbs(y));
    let mut cf: Carry = false;
    let d0 = alu::binary(BinaryOp::AddCc, U32, NONE, xs[0], ys[0], &mut cf);
    let d1 = alu::binary(BinaryOp::AddCCc, U32, NONE, xs[1], ys[1], &mut cf);
    let d2 = alu::binary(BinaryOp::AddCCc, U32, NONE, xs[2], ys[2], &mut cf);
    let d3 = alu::binary(BinaryOp::AddC, U32, NONE, xs[3], ys[3], &mut cf);
    let sum = [d0, d1, d2, d3]
        .iter()
        .enumerate()
        .fold(0u128, |s, (i, &d)| s | ((d as u128) << (32 * i)));
    assert_eq!(sum, x.wrapping_add(y));
    assert!(cf, "addc without .cc leaves the carry of the previous limb");
}

fn chain(
    op_first: BinaryOp,
    op_mid: BinaryOp,
    op_last: BinaryOp,
    x: u128,
    y: u128,
) -> (u128, bool) {
    let mut cf: Carry = false;
    let mut out = 0u128;
    for i in 0..4 {
        let op = match i {
            0 => op_first,
            3 => op_last,
            _ => op_mid,
        };
        let (a, b) = ((x >> (32 * i)) as u32 as u64, (y >> (32 * i)) as u32 as u64);
        let d = alu::binary(op, U32, NONE, a, b, &mut cf);
        assert_eq!(d >> 32, 0);
        out |= (d as u128) << (32 * i);
    }
    (out, cf)
}

#[test]
fn borrow_chain_subtracts_128_bit_numbers() {
    let (d, cf) = chain(BinaryOp::SubCc, BinaryOp::SubCCc, BinaryOp::SubCCc, 5, 7);
    assert_eq!(d, 5u128.wrapping_sub(7));
    assert!(
        !cf,
        "a borrow leaves CC.CF = 0 (the hardware's inverted borrow)"
    );
    let (d, cf) = chain(BinaryOp::SubCc, BinaryOp::SubCCc, BinaryOp::SubCCc, 7, 5);
    assert_eq!(d, 2);
    assert!(cf, "no borrow leaves CC.CF = 1");
    // A borrow in the low limb reaches the high limb through `subc`.
    let (d, cf) = chain(
        BinaryOp::SubCc,
        BinaryOp::SubCCc,
        BinaryOp::SubC,
        1 << 32,
        1,
    );
    assert_eq!(d, 0xFFFF_FFFF);
    assert!(cf);
}

/// As on NVIDIA GPUs (ZLUDA's hardware-checked `sub_cc`/`subc_cc`): the flag a subtraction leaves
/// is read by `addc` as a carry of 1 exactly when there was no borrow.
#[test]
fn addc_after_sub_cc_reads_the_inverted_borrow() {
    let mut cf: Carry = false;
    alu::binary(BinaryOp::SubCc, U32, NONE, 0, 1, &mut cf);
    assert_eq!(alu::binary(BinaryOp::AddC, U32, NONE, 0, 0, &mut cf), 0);
    alu::binary(BinaryOp::SubCc, U32, NONE, 1, 1, &mut cf);
    assert_eq!(alu::binary(BinaryOp::AddC, U32, NONE, 0, 0, &mut cf), 1);
    // `subc` after `add.cc` without a carry subtracts the extra 1.
    alu::binary(BinaryOp::AddCc, U32, NONE, 1, 1, &mut cf);
    assert_eq!(alu::binary(BinaryOp::SubC, U32, NONE, 5, 2, &mut cf), 2);
    alu::binary(BinaryOp::AddCc, U32, NONE, u32::MAX as u64, 1, &mut cf);
    assert_eq!(alu::binary(BinaryOp::SubC, U32, NONE, 5, 2, &mut cf), 3);
    // 64-bit too.
    alu::binary(BinaryOp::SubCc, U64, NONE, 3, 4, &mut cf);
    assert!(!cf);
    assert_eq!(alu::binary(BinaryOp::AddC, U64, NONE, 0, 0, &mut cf), 0);
}

#[test]
fn multiword_multiply_with_mad_cc() {
    // PTX ISA madc example: [r3,r2,r1,r0] = [r5,r4] * [r7,r6].
    let (r4, r5, r6, r7) = (
        0xFFFF_FFFFu64,
        0xFFFF_FFFEu64,
        0xFFFF_FFFDu64,
        0xFFFF_FFFCu64,
    );
    let mut cf = false;
    let b = |op, a, b| alu::binary(op, U32, NONE, a, b, &mut false);
    let r0 = b(BinaryOp::Mul, r4, r6);
    let mut r1 = b(BinaryOp::MulHi, r4, r6);
    r1 = alu::mad_carry(false, false, true, U32, r5, r6, r1, &mut cf);
    let mut r2 = alu::mad_carry(true, true, false, U32, r5, r6, 0, &mut cf);
    r1 = alu::mad_carry(false, false, true, U32, r4, r7, r1, &mut cf);
    r2 = alu::mad_carry(true, true, true, U32, r4, r7, r2, &mut cf);
    let mut r3 = alu::binary(BinaryOp::AddC, U32, NONE, 0, 0, &mut cf);
    r2 = alu::mad_carry(false, false, true, U32, r5, r7, r2, &mut cf);
    r3 = alu::mad_carry(true, true, false, U32, r5, r7, r3, &mut cf);
    let got = (r3 as u128) << 96 | (r2 as u128) << 64 | (r1 as u128) << 32 | r0 as u128;
    let want = ((r5 << 32 | r4) as u128) * ((r7 << 32 | r6) as u128);
    assert_eq!(got, want);
    // The ternary forms are the .lo variants.
    let mut cf = false;
    assert_eq!(
        alu::ternary(
            TernaryOp::MadCc,
            U32,
            NONE,
            0x1_0000,
            0x1_0000,
            0xFFFF_FFFF,
            &mut cf
        ),
        0xFFFF_FFFF
    );
    assert!(!cf);
    assert_eq!(
        alu::ternary(TernaryOp::MadCc, U32, NONE, 2, 1, 0xFFFF_FFFF, &mut cf),
        1
    );
    assert!(cf);
    assert_eq!(
        alu::ternary(TernaryOp::MadC, U32, NONE, 2, 3, 4, &mut cf),
        11
    );
    assert!(cf, "madc.lo (no .cc) leaves the carry flag alone");
    let mut cf = false;
    let d = alu::ternary(TernaryOp::MadC, U32, NONE, 1, 1, 0xFFFF_FFFF, &mut cf);
    assert_eq!(d, 0);
    assert!(!cf);
}

#[test]
fn selp() {
    assert_eq!(tern(TernaryOp::Selp, U32, 1, 2, 1), 1);
    assert_eq!(tern(TernaryOp::Selp, U32, 1, 2, 0), 2);
    assert_eq!(tern(TernaryOp::Selp, U16, 0x1_0001, 2, 1), 1);
}

fn int_type() -> impl Strategy<Value = ScalarType> {
    proptest::sample::select(INT_TYPES.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arithmetic_matches_i128(ty in int_type(), a: u64, b: u64, sat: bool) {
        let flags = ArithFlags { sat, ..NONE };
        let w = width(ty);
        let (va, vb) = (val(ty, a), val(ty, b));
        let (lo, hi) = if signed(ty) { (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1) } else { (0, mask(w) as i128) };
        let clamp = |v: i128| if sat { v.clamp(lo, hi) } else { v };
        let r = |op| alu::binary(op, ty, flags, a, b, &mut false);
        prop_assert_eq!(r(BinaryOp::Add), wrap(ty, clamp(va + vb)));
        prop_assert_eq!(r(BinaryOp::Sub), wrap(ty, clamp(va - vb)));
        prop_assert_eq!(r(BinaryOp::Mul), wrap(ty, va.wrapping_mul(vb)));
        prop_assert_eq!(r(BinaryOp::Min), wrap(ty, va.min(vb)));
        prop_assert_eq!(r(BinaryOp::Max), wrap(ty, va.max(vb)));
        if w < 64 || signed(ty) {
            prop_assert_eq!(r(BinaryOp::MulHi), wrap(ty, (va * vb) >> w));
        } else {
            prop_assert_eq!(r(BinaryOp::MulHi), (((a as u128) * (b as u128)) >> 64) as u64);
        }
        if w <= 32 {
            prop_assert_eq!(r(BinaryOp::MulWide), ((va * vb) as u64) & mask(2 * w));
        }
        if vb != 0 {
            // Truncating division; MIN / -1 wraps.
            let q = if signed(ty) && va == lo && vb == -1 { va } else { va / vb };
            prop_assert_eq!(r(BinaryOp::Div), wrap(ty, q));
            prop_assert_eq!(r(BinaryOp::Rem), wrap(ty, va - wrap_val(ty, q) * vb));
        }
        for v in [r(BinaryOp::Add), r(BinaryOp::Div), r(BinaryOp::Rem), r(BinaryOp::MulHi)] {
            prop_assert_eq!(v & !mask(w), 0);
        }
    }

    #[test]
    fn shifts_match_reference(ty in int_type(), a: u64, n in 0u64..80, big: bool) {
        let amount = if big { n | 0xFFFF_FF00 } else { n };
        let w = width(ty);
        let amt = amount.min(1000);
        let shl = if amt >= w as u64 { 0 } else { (a << amt) & mask(w) };
        let shr = if signed(ty) {
            wrap(ty, val(ty, a) >> amt.min(127))
        } else if amt >= w as u64 { 0 } else { (a & mask(w)) >> amt };
        prop_assert_eq!(bin(BinaryOp::Shl, ty, a, amount), shl);
        prop_assert_eq!(bin(BinaryOp::Shr, ty, a, amount), shr);
    }

    #[test]
    fn bfe_bfi_match_pseudocode(ty in proptest::sample::select(vec![U32, S32, U64, S64]), a: u64, b: u64, pos in 0u64..300, len in 0u64..300) {
        prop_assert_eq!(tern(TernaryOp::Bfe, ty, a, pos, len), bfe_ref(ty, a & mask(width(ty)), pos, len));
        let bty = if width(ty) == 32 { B32 } else { B64 };
        prop_assert_eq!(alu::bfi(bty, a, b, pos, len), bfi_ref(bty, a, b, pos, len));
    }

    #[test]
    fn shf_matches_pseudocode(a in 0u64..=0xFFFF_FFFF, b in 0u64..=0xFFFF_FFFF, c in 0u64..=0xFFFF_FFFF) {
        for (op, left, clamp) in [
            (TernaryOp::ShfLWrap, true, false),
            (TernaryOp::ShfLClamp, true, true),
            (TernaryOp::ShfRWrap, false, false),
            (TernaryOp::ShfRClamp, false, true),
        ] {
            let n = if clamp { c.min(32) } else { c & 0x1F } as u32;
            // (x << 32) is 0 in 32-bit semantics when the shift is 32: use u64.
            let d = if left {
                ((b << n) | if n == 0 { 0 } else { a >> (32 - n) }) & 0xFFFF_FFFF
            } else {
                ((b << (32 - n)) | (a >> n)) & 0xFFFF_FFFF
            };
            prop_assert_eq!(tern(op, B32, a, b, c), d);
        }
    }

    #[test]
    fn prmt_default_matches_pseudocode(a in 0u64..=0xFFFF_FFFF, b in 0u64..=0xFFFF_FFFF, c in 0u64..=0xFFFF) {
        let bytes = (b << 32) | a;
        let mut d = 0;
        for k in 0..4 {
            let s = (c >> (4 * k)) & 0xF;
            let byte = (bytes >> (8 * (s & 7))) & 0xFF;
            let v = if s & 8 != 0 { if byte & 0x80 != 0 { 0xFF } else { 0 } } else { byte };
            d |= v << (8 * k);
        }
        prop_assert_eq!(alu::prmt(PrmtMode::Default, a, b, c), d);
    }

    #[test]
    fn carry_chains_match_u128(x: u128, y: u128) {
        let (s, c) = chain(BinaryOp::AddCc, BinaryOp::AddCCc, BinaryOp::AddCCc, x, y);
        prop_assert_eq!(s, x.wrapping_add(y));
        prop_assert_eq!(c, x.checked_add(y).is_none());
        let (d, b) = chain(BinaryOp::SubCc, BinaryOp::SubCCc, BinaryOp::SubCCc, x, y);
        prop_assert_eq!(d, x.wrapping_sub(y));
        prop_assert_eq!(b, x >= y, "CC.CF is the inverted borrow");
    }

    #[test]
    fn bit_counts_match_std(a: u64) {
        prop_assert_eq!(un(UnaryOp::Popc, B32, a), (a as u32).count_ones() as u64);
        prop_assert_eq!(un(UnaryOp::Clz, B32, a), (a as u32).leading_zeros() as u64);
        prop_assert_eq!(un(UnaryOp::Clz, B64, a), a.leading_zeros() as u64);
        prop_assert_eq!(un(UnaryOp::Brev, B32, a), (a as u32).reverse_bits() as u64);
        prop_assert_eq!(un(UnaryOp::Brev, B64, a), a.reverse_bits());
        let s = a as i64;
        let x = if s < 0 { !a } else { a };
        let want = if x == 0 { 0xFFFF_FFFF } else { 63 - x.leading_zeros() as u64 };
        prop_assert_eq!(un(UnaryOp::Bfind, S64, a), want);
    }
}

/// A wrapped quotient as a value of the type (for the remainder identity).
fn wrap_val(ty: ScalarType, q: i128) -> i128 {
    val(ty, wrap(ty, q))
}
