//! The integer and bit instructions beyond the classic shapes (`lop3 bmsk szext fns mul24 mad24
//! sad dp4a dp2a cvt.pack`) and the scalar video instructions, against hand-computed values
//! from the PTX ISA pseudo-code, the ISA's own examples and ZLUDA's hardware-checked vectors.

use proptest::prelude::*;
use ptx_parser::ScalarType::{self, *};
use semantics::alu;
use semantics::program::{
    ArithFlags, BinaryOp, Compare, TernaryOp, Video, VideoOp, VideoSecondary, VideoSelect,
};

fn bin(op: BinaryOp, ty: ScalarType, a: u64, b: u64) -> u64 {
    alu::binary(op, ty, ArithFlags::default(), a, b, &mut false)
}

fn tern(op: TernaryOp, ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    tern_f(op, ty, ArithFlags::default(), a, b, c)
}

fn tern_f(op: TernaryOp, ty: ScalarType, flags: ArithFlags, a: u64, b: u64, c: u64) -> u64 {
    alu::ternary(op, ty, flags, a, b, c, &mut false)
}

fn sat() -> ArithFlags {
    ArithFlags {
        sat: true,
        ..ArithFlags::default()
    }
}

fn lop3(lut: u8, a: u64, b: u64, c: u64) -> u64 {
    tern(TernaryOp::Lop3 { lut }, B32, a, b, c)
}

// ----- lop3 --------------------------------------------------------------------------------------

#[test]
fn lop3_classic_tables() {
    // The ISA's constants: ta = 0xF0, tb = 0xCC, tc = 0xAA; immLut = F(ta, tb, tc).
    let (a, b, c) = (0x1234_5678u64, 0x0F0F_F0F0u64, 0xFF00_AA55u64);
    let cases: [(u8, u64, &str); 12] = [
        (0xF0, a, "a"),
        (0xCC, b, "b"),
        (0xAA, c, "c"),
        (0x00, 0, "0"),
        (0xFF, 0xFFFF_FFFF, "~0"),
        (0x80, a & b & c, "a & b & c (ISA example)"),
        (0xFE, a | b | c, "a | b | c (ISA example)"),
        (0x40, a & b & !c & 0xFFFF_FFFF, "a & b & ~c (ISA example)"),
        (0x1A, ((a & b) | c) ^ a, "(a & b | c) ^ a (ISA example)"),
        (0x96, a ^ b ^ c, "parity"),
        (0xE8, (a & b) | (a & c) | (b & c), "majority"),
        (0xCA, (a & b) | (!a & c & 0xFFFF_FFFF), "a ? b : c"),
    ];
    for (lut, want, what) in cases {
        assert_eq!(lop3(lut, a, b, c), want, "lop3 {lut:#04x} = {what}");
    }
    // Bits above 31 of the operands are ignored, the result is 32 bits.
    assert_eq!(lop3(0xFF, u64::MAX, 0, 0), 0xFFFF_FFFF);
    assert_eq!(lop3(0xF0, 0xAB_0000_0001, 0, 0), 1);
}

proptest! {
    /// The defining property: the table of `F` is `F(0xF0, 0xCC, 0xAA)`, and `lop3` with it
    /// computes `F` bitwise, for a set of functions written as Rust expressions.
    #[test]
    fn lop3_table_of_f_computes_f(a: u32, b: u32, c: u32) {
        let fs: [fn(u32, u32, u32) -> u32; 6] = [
            |a, b, c| a & !b | c,
            |a, b, c| !(a | b) ^ c,
            |a, b, _| a ^ b,
            |a, _, c| !a & c,
            |a, b, c| (a | c) & !(b ^ c),
            |_, b, _| !b,
        ];
        for f in fs {
            let lut = f(0xF0, 0xCC, 0xAA) as u8;
            prop_assert_eq!(lop3(lut, a as u64, b as u64, c as u64), f(a, b, c) as u64);
        }
    }
}

// ----- bmsk, szext, fns -----------------------------------------------------------------------

#[test]
fn bmsk_cases() {
    let (clamp, wrap) = (
        BinaryOp::Bmsk { clamp: true },
        BinaryOp::Bmsk { clamp: false },
    );
    let cases = [
        (wrap, 1, 2, 0x6, "ISA example: bmsk.wrap 1, 2"),
        (
            clamp,
            24,
            12,
            0xFF00_0000,
            "ZLUDA: the sum overflows, the mask runs to bit 31",
        ),
        (clamp, 4, 4, 0xF0, "4 bits from bit 4"),
        (clamp, 0, 0, 0, "width 0"),
        (clamp, 28, 8, 0xF000_0000, "sum >= 32"),
        (
            clamp,
            0,
            32,
            0xFFFF_FFFF,
            "clamp: width >= 32 is all the way up",
        ),
        (wrap, 0, 32, 0, "wrap: width 32 is width 0"),
        (clamp, 32, 4, 0, "clamp: position >= 32 is empty"),
        (wrap, 32, 4, 0xF, "wrap: position 32 is position 0"),
        (wrap, 33, 35, 0xE, "wrap: 3 bits from bit 1"),
    ];
    for (op, a, b, want, what) in cases {
        assert_eq!(bin(op, B32, a, b), want, "{what}");
    }
}

#[test]
fn szext_cases() {
    let c = BinaryOp::Szext { clamp: true };
    let w = BinaryOp::Szext { clamp: false };
    let cases = [
        (c, S32, 0x80, 8, 0xFFFF_FF80, "sign bit 7 replicated"),
        (c, U32, 0x80, 8, 0x80, "zero-extended"),
        (c, S32, 0x7F, 8, 0x7F, "positive"),
        (
            c,
            S32,
            0xFFFF_FF08,
            4,
            0xFFFF_FFF8,
            "the bits above N are dropped",
        ),
        (c, S32, 0x0000_0ABC, 12, 0xFFFF_FABC, "bit 11 set"),
        (c, S32, 0x1234_5678, 12, 0x678, "bit 11 clear"),
        (w, U32, 0xFFFF_FFFF, 0, 0, "ISA example: N = 0 gives 0"),
        (c, S32, 0xFFFF_FFFF, 0, 0, "N = 0 gives 0 (signed too)"),
        (
            c,
            S32,
            0x8000_0000,
            32,
            0x8000_0000,
            "clamp: N >= 32 keeps a",
        ),
        (
            c,
            U32,
            0xDEAD_BEEF,
            40,
            0xDEAD_BEEF,
            "clamp: N >= 32 keeps a",
        ),
        (w, S32, 0xABCD, 32, 0, "wrap: N = 32 is N = 0"),
        (w, S32, 0x18, 37, 0xFFFF_FFF8, "wrap: N = 37 is N = 5"),
    ];
    for (op, ty, a, b, want, what) in cases {
        assert_eq!(bin(op, ty, a, b), want, "szext {ty:?} {a:#x}, {b}: {what}");
    }
}

#[test]
fn fns_cases() {
    let fns = |mask: u64, base: u64, offset: i32| {
        tern(TernaryOp::Fns, B32, mask, base, offset as u32 as u64)
    };
    // The ISA's examples.
    assert_eq!(fns(0xaaaa_aaaa, 3, 1), 3);
    assert_eq!(fns(0xaaaa_aaaa, 3, -1), 3);
    assert_eq!(fns(0xaaaa_aaaa, 2, 1), 3);
    assert_eq!(fns(0xaaaa_aaaa, 2, -1), 1);
    let none = 0xFFFF_FFFF;
    assert_eq!(fns(0, 0, 1), none, "empty mask");
    assert_eq!(
        fns(0xaaaa_aaaa, 0, 0),
        none,
        "offset 0: only bit `base` counts"
    );
    assert_eq!(fns(0xaaaa_aaaa, 1, 0), 1);
    assert_eq!(fns(0x8000_0001, 0, 2), 31, "the second set bit upward");
    assert_eq!(fns(0x8000_0001, 31, -2), 0, "the second set bit downward");
    assert_eq!(fns(0x8000_0001, 0, 3), none, "only two set bits");
    assert_eq!(fns(1, 0, -2), none, "runs off bit 0");
    assert_eq!(fns(0xFFFF_FFFF, 5, 27), 31);
    assert_eq!(fns(0xFFFF_FFFF, 5, 28), none);
    assert_eq!(
        fns(0xFFFF_FFFF, 32, 1),
        none,
        "base > 31: undefined, nothing found"
    );
}

// ----- mul24, mad24, sad ----------------------------------------------------------------------

#[test]
fn mul24_cases() {
    let lo = BinaryOp::Mul24 { hi: false };
    let hi = BinaryOp::Mul24 { hi: true };
    let cases = [
        (
            lo,
            U32,
            7_689_557,
            7_689_557,
            472_092_217,
            "ZLUDA mul24_lo_u32",
        ),
        (lo, U32, 0xFF00_0003, 5, 15, "bits above 23 are ignored"),
        (
            hi,
            U32,
            0xFF_FFFF,
            0xFF_FFFF,
            0xFFFF_FE00,
            "(2^24-1)^2 bits 47..16",
        ),
        (
            lo,
            U32,
            0xFF_FFFF,
            0xFF_FFFF,
            0xFE00_0001,
            "(2^24-1)^2 bits 31..0",
        ),
        (
            lo,
            S32,
            0xFF_FFFF,
            2,
            0xFFFF_FFFE,
            "0xFFFFFF is -1 in 24 bits",
        ),
        (
            hi,
            S32,
            0x80_0000,
            0x80_0000,
            0x4000_0000,
            "(-2^23)^2 = 2^46",
        ),
        (
            hi,
            S32,
            0x80_0000,
            0x7F_FFFF,
            0xC000_0080,
            "a negative product",
        ),
        (
            lo,
            S32,
            0x7F_FFFF,
            0x100_0001,
            0x7F_FFFF,
            "bit 24 is not the sign",
        ),
    ];
    for (op, ty, a, b, want, what) in cases {
        assert_eq!(bin(op, ty, a, b), want, "{op:?} {ty:?}: {what}");
    }
}

#[test]
fn mad24_cases() {
    let lo = TernaryOp::Mad24 { hi: false };
    let hi = TernaryOp::Mad24 { hi: true };
    assert_eq!(tern(lo, U32, 3, 5, 7), 22);
    assert_eq!(
        tern(lo, U32, 0xFF_FFFF, 0xFF_FFFF, 0x1FF_FFFF),
        0x0000_0000,
        "wraps at 32 bits"
    );
    // hi part 0x3FFFFF00 + 0x7FFFFFFF overflows .s32.
    assert_eq!(
        tern(hi, S32, 0x7F_FFFF, 0x7F_FFFF, 0x7FFF_FFFF),
        0xBFFF_FEFF,
        "no .sat: wraps"
    );
    assert_eq!(
        tern_f(hi, S32, sat(), 0x7F_FFFF, 0x7F_FFFF, 0x7FFF_FFFF),
        0x7FFF_FFFF,
        ".sat: MAX"
    );
    // hi part -0x3FFFFF80 + MIN underflows.
    assert_eq!(
        tern_f(hi, S32, sat(), 0x80_0000, 0x7F_FFFF, 0x8000_0000),
        0x8000_0000,
        ".sat: MIN"
    );
    assert_eq!(
        tern_f(hi, S32, sat(), 0x80_0000, 0x7F_FFFF, 5),
        0xC000_0085,
        "in range"
    );
}

#[test]
fn sad_cases() {
    let cases = [
        (S64, 12u64, (-38i64) as u64, 915, 965, "ZLUDA sad_s64"),
        (S64, (-38i64) as u64, 12, 915, 965, "ZLUDA sad_s64, swapped"),
        (U32, 1, 0xFFFF_FFFF, 0, 0xFFFF_FFFE, "unsigned difference"),
        (S32, 1, 0xFFFF_FFFF, 0, 2, "signed: 1 - (-1)"),
        (U16, 0, 0xFFFF, 2, 1, "the sum wraps at 16 bits"),
        (
            S16,
            0x8000,
            0x7FFF,
            0,
            0xFFFF,
            "|-32768 - 32767| = 65535 wraps",
        ),
    ];
    for (ty, a, b, c, want, what) in cases {
        assert_eq!(
            tern(TernaryOp::Sad, ty, a, b, c),
            want,
            "sad {ty:?}: {what}"
        );
    }
}

// ----- dp4a, dp2a ------------------------------------------------------------------------------

#[test]
fn dot_product_sign_mixes() {
    let dp4a = |sa, sb, a, b, c| {
        tern(
            TernaryOp::Dp4a {
                a_signed: sa,
                b_signed: sb,
            },
            S32,
            a,
            b,
            c,
        )
    };
    // 1*5 + 2*6 + 3*7 + 4*8 = 70.
    assert_eq!(dp4a(false, false, 0x0102_0304, 0x0506_0708, 10), 80);
    assert_eq!(
        dp4a(true, true, 0xFFFF_FFFF, 0x0102_0304, 0),
        (-10i32) as u32 as u64
    );
    assert_eq!(
        dp4a(false, false, 0xFFFF_FFFF, 0x0102_0304, 0),
        2550,
        "255 * 10"
    );
    assert_eq!(
        dp4a(false, true, 0xFF00_0000, 0xFF00_0000, 0),
        (-255i32) as u32 as u64
    );
    assert_eq!(
        dp4a(true, false, 0xFF00_0000, 0xFF00_0000, 0),
        (-255i32) as u32 as u64
    );
    assert_eq!(dp4a(true, false, 0x80, 0x80, 0), (-16384i32) as u32 as u64);
    assert_eq!(
        dp4a(true, true, 0x8080_8080, 0x8080_8080, 0),
        65536,
        "4 * (-128)^2"
    );
    assert_eq!(
        dp4a(false, false, 1, 1, 0x7FFF_FFFF),
        0x8000_0000,
        "wraps at 32 bits"
    );

    let dp2a = |hi, sa, sb, a, b, c| {
        let op = TernaryOp::Dp2a {
            hi,
            a_signed: sa,
            b_signed: sb,
        };
        tern(op, S32, a, b, c)
    };
    // Halves (1, 2); bytes (1, 2, 3, 4): .lo 1*1 + 2*2, .hi 1*3 + 2*4.
    assert_eq!(dp2a(false, false, false, 0x0002_0001, 0x0403_0201, 0), 5);
    assert_eq!(dp2a(true, false, false, 0x0002_0001, 0x0403_0201, 0), 11);
    assert_eq!(
        dp2a(false, true, false, 0xFFFF_0001, 0x0000_FF01, 0),
        (1 - 255i32) as u32 as u64
    );
    assert_eq!(
        dp2a(false, false, true, 0xFFFF_0001, 0x0000_FF01, 0),
        (1 - 65535i32) as u32 as u64
    );
    assert_eq!(
        dp2a(true, true, true, 2_385_356_176, 3_991_596_564, 613_064_560),
        614_127_545,
        "ZLUDA dp2a.hi.s32.s32"
    );
}

// ----- cvt.pack --------------------------------------------------------------------------------

#[test]
fn cvt_pack_saturates_and_packs() {
    let pack = |bits, signed, a: i32, b: i32, c: u32| {
        let op = TernaryOp::CvtPackSat { bits, signed };
        tern(op, U32, a as u32 as u64, b as u32 as u64, c as u64)
    };
    let c = -130_436_883i32 as u32;
    assert_eq!(
        pack(8, false, -257, 257, c),
        2_968_322_303,
        "ZLUDA cvt.pack.sat.u8"
    );
    assert_eq!(
        pack(8, true, -257, 257, c),
        2_968_354_943,
        "ZLUDA cvt.pack.sat.s8"
    );
    assert_eq!(
        pack(16, false, 70000, -5, 0xFFFF_FFFF),
        0xFFFF_0000,
        "c unused at 16 bits"
    );
    assert_eq!(pack(16, true, -40000, 40000, 0), 0x8000_7FFF);
    assert_eq!(pack(4, false, 20, -3, 1), 0x1F0, "u4: 15 and 0, then c");
    assert_eq!(pack(2, true, 5, -5, 0), 0b0110, "s2: 1 and -2");
    assert_eq!(pack(4, true, -1, 7, 0xFFFF_FFFF), 0xFFFF_FFF7);
}

// ----- scalar video instructions ---------------------------------------------------------------

fn video(
    op: VideoOp,
    [d, a, b]: [ScalarType; 3],
    sat: bool,
    secondary: Option<VideoSecondary>,
) -> TernaryOp {
    TernaryOp::Video(Video {
        op,
        d_signed: d == S32,
        a_signed: a == S32,
        b_signed: b == S32,
        sat,
        secondary,
        a_select: None,
        b_select: None,
        d_select: None,
    })
}

#[test]
fn scalar_video_cases() {
    use VideoOp::*;
    let uuu = [U32, U32, U32];
    let sss = [S32, S32, S32];
    let add2 = Some(VideoSecondary::Add);
    let m = |x: i64| x as u64 & 0xFFFF_FFFF;
    let cases: Vec<(TernaryOp, u64, u64, u64, u64, &str)> = vec![
        (
            video(Shr { clamp: true }, uuu, false, add2),
            2_385_356_176,
            16,
            613_064_560,
            613_100_957,
            "ZLUDA vshr.clamp.add",
        ),
        (
            video(Shr { clamp: true }, uuu, false, add2),
            2_385_356_176,
            32,
            613_064_560,
            613_064_560,
            "ZLUDA: clamp at 32",
        ),
        (
            video(Shr { clamp: false }, [S32, S32, U32], false, None),
            0x8000_0000,
            33,
            0,
            0xC000_0000,
            "wrap: 33 is 1; arithmetic",
        ),
        (
            video(Shr { clamp: true }, [S32, S32, U32], false, None),
            0x8000_0000,
            40,
            0,
            0xFFFF_FFFF,
            "clamp: 32 fills with the sign",
        ),
        (
            video(Shl { clamp: true }, uuu, false, None),
            0xFFFF_FFFF,
            4,
            0,
            0xFFFF_FFF0,
            "no .sat: low 32 bits",
        ),
        (
            video(Shl { clamp: true }, uuu, true, None),
            0xFFFF_FFFF,
            4,
            0,
            0xFFFF_FFFF,
            ".sat: clamps to U32_MAX",
        ),
        (
            video(Add, sss, true, None),
            0x7FFF_FFFF,
            1,
            0,
            0x7FFF_FFFF,
            ".sat: S32_MAX",
        ),
        (video(Add, uuu, false, None), 0xFFFF_FFFF, 1, 0, 0, "wraps"),
        (
            video(Add, uuu, true, None),
            0xFFFF_FFFF,
            1,
            0,
            0xFFFF_FFFF,
            ".sat: U32_MAX",
        ),
        (
            video(Add, [S32, U32, S32], true, None),
            0xFFFF_FFFF,
            m(-1),
            0,
            0x7FFF_FFFF,
            "4294967295 + -1 clamps to S32_MAX",
        ),
        (video(Sub, uuu, true, None), 1, 2, 0, 0, "-1 clamps to 0"),
        (
            video(Sub, uuu, false, None),
            1,
            2,
            0,
            0xFFFF_FFFF,
            "-1 wraps",
        ),
        (
            video(AbsDiff, [U32, S32, S32], false, None),
            m(-5),
            3,
            0,
            8,
            "|-5 - 3|",
        ),
        (
            video(Min, [S32, U32, S32], false, None),
            0xFFFF_FFFF,
            m(-1),
            0,
            0xFFFF_FFFF,
            "min(4294967295, -1) = -1",
        ),
        (
            video(Max, [S32, U32, S32], false, None),
            0xFFFF_FFFF,
            m(-1),
            0,
            0xFFFF_FFFF,
            "max is 4294967295",
        ),
        (
            video(Max, [U32, S32, S32], false, Some(VideoSecondary::Max)),
            m(-3),
            m(-7),
            5,
            5,
            "max(max(-3,-7), c=5)",
        ),
        (
            video(Max, sss, false, Some(VideoSecondary::Max)),
            m(-3),
            m(-7),
            m(-9),
            m(-3),
            "c is signed for .s32",
        ),
        (
            video(Min, [U32, S32, S32], false, Some(VideoSecondary::Min)),
            3,
            4,
            m(-1),
            3,
            "c = 0xFFFFFFFF is unsigned for .u32",
        ),
        (
            video(Set(Compare::Lt), [U32, S32, U32], false, None),
            0xFFFF_FFFF,
            0,
            0,
            1,
            "-1 < 0",
        ),
        (
            video(Set(Compare::Lt), uuu, false, None),
            0xFFFF_FFFF,
            0,
            0,
            0,
            "4294967295 < 0 is false",
        ),
        (
            video(Set(Compare::Eq), uuu, false, add2),
            3,
            3,
            10,
            11,
            "(3 == 3) + 10",
        ),
        (
            video(Set(Compare::Ge), sss, false, None),
            m(-2),
            m(-2),
            0,
            1,
            "-2 >= -2",
        ),
    ];
    for (op, a, b, c, want, what) in cases {
        let ty = if let TernaryOp::Video(v) = op {
            if v.d_signed { S32 } else { U32 }
        } else {
            U32
        };
        assert_eq!(tern(op, ty, a, b, c), want, "{what}: {op:?}");
    }
}

#[test]
fn scalar_video_selectors_and_merge() {
    use VideoOp::*;
    use VideoSelect::*;
    let with = |op, [d, a, b]: [ScalarType; 3], sat, secondary, sels: [Option<VideoSelect>; 3]| {
        TernaryOp::Video(Video {
            op,
            d_signed: d == S32,
            a_signed: a == S32,
            b_signed: b == S32,
            sat,
            secondary,
            a_select: sels[0],
            b_select: sels[1],
            d_select: sels[2],
        })
    };
    let m = |x: i64| x as u64 & 0xFFFF_FFFF;
    let (a, b) = (0x80FF_7F01u64, 0x1234_FF80u64);
    let cases: Vec<(TernaryOp, u64, u64, u64, u64, &str)> = vec![
        // Bytes of a: b0 = 0x01, b1 = 0x7F, b2 = 0xFF, b3 = 0x80; of b: b0 = 0x80, b1 = 0xFF.
        (
            with(
                Add,
                [S32, S32, S32],
                false,
                None,
                [Some(B2), Some(B0), None],
            ),
            a,
            b,
            0,
            m(-1 - 128),
            "signed bytes: -1 + -128",
        ),
        (
            with(
                Add,
                [U32, U32, U32],
                false,
                None,
                [Some(B2), Some(B0), None],
            ),
            a,
            b,
            0,
            255 + 128,
            "unsigned bytes",
        ),
        (
            with(
                Add,
                [S32, U32, S32],
                false,
                None,
                [Some(B3), Some(B1), None],
            ),
            a,
            b,
            0,
            128 - 1,
            "mixed: 128 + -1",
        ),
        (
            with(
                Sub,
                [S32, S32, S32],
                false,
                None,
                [Some(H1), Some(H0), None],
            ),
            a,
            b,
            0,
            m(-32513 - -128),
            "halves: 0x80FF - 0xFF80",
        ),
        (
            with(
                Max,
                [U32, U32, U32],
                false,
                None,
                [Some(H0), Some(H1), None],
            ),
            a,
            b,
            0,
            0x7F01,
            "max(0x7F01, 0x1234)",
        ),
        // Data merge: the low byte/half of the result replaces that part of c; .sat clamps to it.
        (
            with(Add, [U32, U32, U32], false, None, [None, None, Some(B1)]),
            0x1FF,
            1,
            0xAAAA_AAAA,
            0xAAAA_00AA,
            "0x200's low byte into b1",
        ),
        (
            with(Add, [U32, U32, U32], true, None, [None, None, Some(B1)]),
            0x1FF,
            1,
            0xAAAA_AAAA,
            0xAAAA_FFAA,
            ".sat: 0x200 clamps to 0xFF",
        ),
        (
            with(Sub, [S32, S32, S32], true, None, [None, None, Some(H1)]),
            0,
            40000,
            0x1234_5678,
            0x8000_5678,
            ".sat: -40000 clamps to -32768",
        ),
        (
            with(
                AbsDiff,
                [S32, S32, S32],
                true,
                None,
                [Some(B0), Some(B3), Some(B0)],
            ),
            a,
            b,
            0xFFFF_FFFF,
            0xFFFF_FF11,
            "|1 - 0x12| into b0",
        ),
        (
            with(
                Set(Compare::Gt),
                [U32, S32, S32],
                false,
                None,
                [Some(B1), Some(B1), Some(H1)],
            ),
            a,
            b,
            0x1234_5678,
            0x0001_5678,
            "vset 127 > -1 into h1",
        ),
        (
            with(
                Shl { clamp: true },
                [U32, U32, U32],
                false,
                None,
                [Some(B0), Some(B2), None],
            ),
            a,
            0x0004_0000,
            0,
            0x10,
            "b2 of b is the amount",
        ),
    ];
    for (op, a, b, c, want, what) in cases {
        assert_eq!(tern(op, U32, a, b, c), want, "{what}: {op:?}");
    }
}
