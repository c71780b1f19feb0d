//! 16-bit and 8-bit floats in `semantics::alu` (PTX ISA 9.7.4 "Half Precision Floating-Point
//! Instructions", 9.7.9.21 `cvt`, 5.2.5 "Alternate Floating-Point Data Formats"): rounding of
//! halfway cases, subnormals under `.ftz`, NaN propagation, `.sat .relu .satfinite`, the packed
//! comparisons, and the 8-bit formats against a brute-force nearest-value reference.

use half::{bf16, f16};
use proptest::prelude::*;
use ptx_parser::ScalarType::{self, *};
use semantics::alu;
use semantics::program::{
    ArithFlags, BinaryOp, BoolOp, Compare, Fp8, PackedFloat, Rounding, TernaryOp, UnaryOp,
};

fn h(x: f32) -> u64 {
    f16::from_f32(x).to_bits() as u64
}
fn b32(x: f32) -> u64 {
    x.to_bits() as u64
}
fn pair(hi: u64, lo: u64) -> u64 {
    (hi << 16) | lo
}

fn flags(rounding: Option<Rounding>, ftz: bool, sat: bool) -> ArithFlags {
    ArithFlags {
        rounding,
        ftz,
        sat,
        ..ArithFlags::default()
    }
}
const NONE: ArithFlags = ArithFlags {
    rounding: None,
    ftz: false,
    sat: false,
    approx: false,
    relu: false,
    satfinite: false,
};
const FTZ: ArithFlags = ArithFlags { ftz: true, ..NONE };
const RELU: ArithFlags = ArithFlags { relu: true, ..NONE };
const SATFINITE: ArithFlags = ArithFlags {
    satfinite: true,
    ..NONE
};

fn bin(op: BinaryOp, ty: ScalarType, fl: ArithFlags, a: u64, b: u64) -> u64 {
    alu::binary(op, ty, fl, a, b, &mut false)
}
fn fma(ty: ScalarType, fl: ArithFlags, a: u64, b: u64, c: u64) -> u64 {
    alu::ternary(TernaryOp::Fma, ty, fl, a, b, c, &mut false)
}

// ----- arithmetic ------------------------------------------------------------------------------

#[test]
fn f16_rounding_of_halfway_cases() {
    // The ulp of 1.0 in .f16 is 2^-10; 2^-11 is exactly half of it.
    let (one, half_ulp) = (0x3C00, h(2f32.powi(-11)));
    let three_halves = h(3.0 * 2f32.powi(-11));
    let add = |r, a, b| bin(BinaryOp::Add, F16, flags(r, false, false), a, b);
    assert_eq!(add(None, one, half_ulp), 0x3C00, "tie: to even (1.0)");
    assert_eq!(
        add(None, one, three_halves),
        0x3C02,
        "1.5 ulp: tie to even (1 + 2^-9)"
    );
    assert_eq!(add(Some(Rounding::Rz), one, three_halves), 0x3C01);
    assert_eq!(add(Some(Rounding::Rp), one, half_ulp), 0x3C01);
    assert_eq!(add(Some(Rounding::Rm), 0xBC00, 0x8000 | half_ulp), 0xBC01);
    // bf16: the ulp of 1.0 is 2^-7.
    let bf = |x: f32| bf16::from_f32(x).to_bits() as u64;
    let r = bin(BinaryOp::Add, Bf16, NONE, bf(1.0), bf(2f32.powi(-8)));
    assert_eq!(r, 0x3F80, "bf16 tie to even");
    let r = bin(BinaryOp::Add, Bf16, NONE, bf(1.0), bf(3.0 * 2f32.powi(-8)));
    assert_eq!(r, 0x3F82);
    // Both halves of .f16x2 round independently.
    let r = bin(
        BinaryOp::Add,
        F16x2,
        NONE,
        pair(one, one),
        pair(three_halves, half_ulp),
    );
    assert_eq!(r, pair(0x3C02, 0x3C00));
}

#[test]
fn f16_subnormals_under_ftz() {
    let tiny = 0x0001; // 2^-24, the smallest .f16 subnormal
    assert_eq!(bin(BinaryOp::Add, F16, NONE, tiny, 0), tiny);
    assert_eq!(
        bin(BinaryOp::Add, F16, FTZ, tiny, 0),
        0,
        ".ftz flushes the input"
    );
    assert_eq!(
        bin(BinaryOp::Add, F16, FTZ, 0x8001, 0x8000),
        0x8000,
        "sign-preserving"
    );
    // 2^-14 (smallest normal) * 0.5 = 2^-15, a subnormal result.
    assert_eq!(bin(BinaryOp::Mul, F16, NONE, 0x0400, h(0.5)), 0x0200);
    assert_eq!(
        bin(BinaryOp::Mul, F16, FTZ, 0x0400, h(0.5)),
        0x0000,
        ".ftz flushes the result"
    );
    assert_eq!(bin(BinaryOp::Mul, F16, FTZ, 0x8400, h(0.5)), 0x8000);
    let r = bin(
        BinaryOp::Mul,
        F16x2,
        FTZ,
        pair(0x0400, 0x3C00),
        pair(h(0.5), h(2.0)),
    );
    assert_eq!(r, pair(0, 0x4000), "per half");
    // .bf16 has no .ftz in PTX; the ALU keeps its subnormals whatever the flag.
    assert_eq!(bin(BinaryOp::Add, Bf16, FTZ, 0x0001, 0), 0x0001);
}

#[test]
fn f16_nan_sat_and_minmax() {
    let nan = 0x7E01; // a quiet NaN with a payload
    assert_eq!(
        bin(BinaryOp::Add, F16, NONE, nan, h(1.0)),
        0x7FFF,
        "canonical NaN"
    );
    assert_eq!(
        bin(BinaryOp::Mul, F16, NONE, h(f32::INFINITY), 0),
        0x7FFF,
        "inf * 0"
    );
    let sat = flags(None, false, true);
    assert_eq!(
        bin(BinaryOp::Add, F16, sat, h(0.75), h(0.75)),
        0x3C00,
        "clamped to 1.0"
    );
    assert_eq!(
        bin(BinaryOp::Add, F16, sat, h(-1.0), h(0.5)),
        0,
        "clamped to +0.0"
    );
    assert_eq!(
        bin(BinaryOp::Add, F16, sat, nan, h(0.5)),
        0,
        "NaN gives +0.0"
    );
    assert_eq!(
        bin(BinaryOp::Min, F16, NONE, nan, h(2.0)),
        h(2.0),
        "NaN ignored"
    );
    assert_eq!(bin(BinaryOp::Max, F16, NONE, h(-2.0), nan), h(-2.0));
    assert_eq!(bin(BinaryOp::Min, F16, NONE, nan, nan), 0x7FFF);
    assert_eq!(
        bin(BinaryOp::Min, F16, NONE, 0x8000, 0x0000),
        0x8000,
        "-0 < +0"
    );
    let r = bin(
        BinaryOp::Max,
        F16x2,
        NONE,
        pair(h(1.0), nan),
        pair(h(3.0), h(-1.0)),
    );
    assert_eq!(r, pair(h(3.0), h(-1.0)));
    // neg and abs are sign-bit operations that keep the payload.
    assert_eq!(alu::unary(UnaryOp::Neg, F16, NONE, nan), 0xFE01);
    assert_eq!(
        alu::unary(UnaryOp::Abs, F16x2, NONE, pair(0xBC00, 0xFE01)),
        pair(0x3C00, 0x7E01)
    );
    assert_eq!(
        alu::unary(UnaryOp::Neg, F16, FTZ, 0x0001),
        0x8000,
        ".ftz flushes first"
    );
}

#[test]
fn f16_fma_rounds_once_and_relu() {
    // (1 + 2^-10)^2 - (1 + 2^-9) = 2^-20 exactly; a separate multiply would round the product
    // to 1 + 2^-9 and give 0.
    let a = 0x3C01;
    let c = 0xBC02;
    assert_eq!(fma(F16, NONE, a, a, c), 0x0010, "2^-20, a subnormal");
    assert_eq!(fma(F16, FTZ, a, a, c), 0x0000, ".ftz flushes it");
    assert_eq!(
        fma(F16, RELU, h(-1.0), h(1.0), 0),
        0,
        ".relu: negative to +0.0"
    );
    assert_eq!(
        fma(F16, RELU, h(-1.0), h(1.0), h(1.0)),
        0,
        "-0 + ... = +0.0"
    );
    assert_eq!(fma(F16, RELU, h(2.0), h(3.0), h(1.0)), h(7.0));
    assert_eq!(
        fma(F16, RELU, h(f32::INFINITY), 0, 0),
        0x7FFF,
        "NaN stays NaN"
    );
    assert_eq!(fma(Bf16, RELU, 0xBF80, 0x3F80, 0), 0, "bf16 .relu");
    // ZLUDA fma_f16x2: (2.0, 2.125) * (2.125, 2.25) + c.
    let r = fma(F16x2, NONE, 1_073_758_272, 1_077_952_640, 1_084_244_032);
    assert_eq!(r, 1_183_860_456);
}

// ----- comparisons ------------------------------------------------------------------------------

#[test]
fn packed_setp_writes_low_and_high_halves() {
    let a = pair(h(1.0), h(3.0));
    let b = pair(h(2.0), h(2.0));
    assert_eq!(
        alu::setp_pair(Compare::Lt, F16x2, false, a, b),
        (false, true)
    );
    assert_eq!(
        alu::setp_pair(Compare::Gt, F16x2, false, a, b),
        (true, false)
    );
    let nan = pair(0x7E00, h(1.0));
    assert_eq!(
        alu::setp_pair(Compare::Lt, F16x2, false, nan, b),
        (true, false)
    );
    assert_eq!(
        alu::setp_pair(Compare::Ltu, F16x2, false, nan, b),
        (true, true)
    );
    assert_eq!(
        alu::setp_pair(Compare::Nan, F16x2, false, nan, b),
        (false, true)
    );
    // Scalars: the second result is the negation.
    assert_eq!(
        alu::setp_pair(Compare::Lt, F16, false, h(1.0), h(2.0)),
        (true, false)
    );
    assert_eq!(alu::setp_pair(Compare::Lt, S32, false, 5, 3), (false, true));
    // .ftz: a subnormal .f16 equals zero.
    assert_eq!(
        alu::setp_pair(Compare::Eq, F16, false, 0x0001, 0),
        (false, true)
    );
    assert_eq!(
        alu::setp_pair(Compare::Eq, F16, true, 0x0001, 0),
        (true, false)
    );
    let bf = |x: f32| bf16::from_f32(x).to_bits() as u64;
    let r = alu::setp_pair(
        Compare::Ge,
        Bf16x2,
        false,
        pair(bf(-1.0), bf(5.0)),
        pair(bf(-1.0), bf(6.0)),
    );
    assert_eq!(r, (false, true));
}

#[test]
fn set_results_per_destination_type() {
    let set = |dst, src, a, b, c| alu::set_result(Compare::Lt, dst, src, false, a, b, c);
    let a = pair(h(1.0), h(3.0));
    let b = pair(h(2.0), h(2.0));
    assert_eq!(
        set(F16x2, F16x2, a, b, None),
        pair(0x3C00, 0),
        "1.0 per true half"
    );
    assert_eq!(
        set(U32, F16x2, a, b, None),
        pair(0xFFFF, 0),
        "0xFFFF per true half"
    );
    let or_true = Some((BoolOp::Or, true));
    assert_eq!(set(S32, F16x2, a, b, or_true), 0xFFFF_FFFF);
    assert_eq!(set(F16, F32, b32(1.0), b32(2.0), None), 0x3C00);
    assert_eq!(set(Bf16, F32, b32(1.0), b32(2.0), None), 0x3F80);
    assert_eq!(set(U16, F16, h(1.0), h(2.0), None), 0xFFFF);
    assert_eq!(set(U32, F16, h(1.0), h(2.0), None), 0xFFFF_FFFF);
    assert_eq!(set(F32, F16, h(1.0), h(2.0), Some((BoolOp::And, false))), 0);
    assert_eq!(set(U32, S32, 1, 2, Some((BoolOp::Xor, true))), 0);
}

// ----- conversions ------------------------------------------------------------------------------

fn cvt(dst: ScalarType, src: ScalarType, fl: ArithFlags, a: u64) -> u64 {
    alu::cvt(dst, src, fl, a)
}

#[test]
fn cvt_to_f16_halfway_cases_and_subnormals() {
    let rn = flags(Some(Rounding::Rn), false, false);
    assert_eq!(
        cvt(F16, F32, rn, b32(1.0 + 2f32.powi(-11))),
        0x3C00,
        "tie to even"
    );
    assert_eq!(
        cvt(F16, F32, rn, b32(1.0 + 3.0 * 2f32.powi(-11))),
        0x3C02,
        "tie to even"
    );
    assert_eq!(
        cvt(F16, F32, rn, b32(2f32.powi(-25))),
        0x0000,
        "half the smallest subnormal"
    );
    assert_eq!(
        cvt(F16, F32, rn, b32(3.0 * 2f32.powi(-25))),
        0x0002,
        "1.5 units: to even"
    );
    assert_eq!(
        cvt(F16, F32, rn, b32(-(2f32.powi(-26)))),
        0x8000,
        "underflow keeps the sign"
    );
    assert_eq!(
        cvt(F32, F16, NONE, 0x0001),
        b32(2f32.powi(-24)),
        "widening is exact"
    );
    // cvt.ftz flushes .f32 operands only.
    let ftz = flags(Some(Rounding::Rn), true, false);
    assert_eq!(
        cvt(F32, F16, ftz, 0x0001),
        b32(2f32.powi(-24)),
        "an .f16 source is kept"
    );
    assert_eq!(
        cvt(F16, F32, ftz, b32(1e-40)),
        0,
        "an .f32 subnormal source is flushed"
    );
    // bf16: 1 + 2^-8 is half a bf16 ulp.
    assert_eq!(cvt(Bf16, F32, rn, 0x3F80_8000), 0x3F80);
    assert_eq!(cvt(Bf16, F32, rn, 0x3F81_8000), 0x3F82);
    let rz = flags(Some(Rounding::Rz), false, false);
    assert_eq!(cvt(Bf16, F32, rz, 0x3F81_8000), 0x3F81);
    assert_eq!(cvt(Bf16, F16, rn, 0x3C01), 0x3F80, "f16 -> bf16 rounds");
    assert_eq!(
        cvt(S32, Bf16, flags(Some(Rounding::Rpi), false, false), 0xBFC0),
        0xFFFF_FFFF,
        "-1.5 -> -1"
    );
}

#[test]
fn cvt_relu_and_satfinite() {
    let rn = |extra: ArithFlags| ArithFlags {
        rounding: Some(Rounding::Rn),
        ..extra
    };
    assert_eq!(cvt(F16, F32, rn(RELU), b32(-1.0)), 0);
    assert_eq!(cvt(F16, F32, rn(RELU), b32(-0.0)), 0, "-0.0 to +0.0");
    assert_eq!(cvt(F16, F32, rn(RELU), b32(f32::NAN)), 0x7FFF);
    assert_eq!(cvt(F16, F32, rn(RELU), b32(2.5)), h(2.5));
    assert_eq!(cvt(F16, F32, rn(NONE), b32(1e6)), 0x7C00, "overflow to inf");
    assert_eq!(cvt(F16, F32, rn(SATFINITE), b32(1e6)), 0x7BFF, "65504");
    assert_eq!(cvt(F16, F32, rn(SATFINITE), b32(f32::NEG_INFINITY)), 0xFBFF);
    assert_eq!(
        cvt(F16, F32, rn(SATFINITE), b32(f32::NAN)),
        0x7FFF,
        "NaN stays NaN"
    );
    assert_eq!(cvt(Bf16, F32, rn(SATFINITE), b32(f32::INFINITY)), 0x7F7F);
    let both = ArithFlags {
        relu: true,
        ..SATFINITE
    };
    assert_eq!(cvt(F16, F32, rn(both), b32(f32::NEG_INFINITY)), 0);
}

#[test]
fn cvt_pairs_to_f16x2_and_bf16x2() {
    let pair_cvt = |to, fl, a: f32, b: f32| bin(BinaryOp::CvtPair(to), F32, fl, b32(a), b32(b));
    let rn = flags(Some(Rounding::Rn), false, false);
    assert_eq!(
        pair_cvt(PackedFloat::F16x2, rn, 1.0, 2.0),
        1_006_649_344,
        "ZLUDA cvt_f16x2_f32"
    );
    let relu = ArithFlags { relu: true, ..rn };
    assert_eq!(
        pair_cvt(PackedFloat::F16x2, relu, -1.0, 1.0),
        15360,
        "ZLUDA cvt_relu_f16x2_f32"
    );
    assert_eq!(
        // ZLUDA's input is the literal 3.14 (not pi): f32 0x4048F5C3.
        pair_cvt(
            PackedFloat::F16x2,
            relu,
            f32::from_bits(0x4048_F5C3),
            f32::NEG_INFINITY
        ),
        1_112_014_848,
        "ZLUDA cvt_relu_f16x2_f32"
    );
    let rz = flags(Some(Rounding::Rz), false, false);
    let x = 1.0 + 3.0 * 2f32.powi(-8);
    assert_eq!(
        pair_cvt(PackedFloat::Bf16x2, rz, x, -x),
        pair(0x3F81, 0xBF81)
    );
    assert_eq!(
        pair_cvt(PackedFloat::Bf16x2, rn, x, -x),
        pair(0x3F82, 0xBF82)
    );
}

// ----- 8-bit floats -------------------------------------------------------------------------------

const E4M3: PackedFloat = PackedFloat::Fp8x2(Fp8::E4m3);
const E5M2: PackedFloat = PackedFloat::Fp8x2(Fp8::E5m2);
const RN_SATFINITE: ArithFlags = ArithFlags {
    rounding: Some(Rounding::Rn),
    satfinite: true,
    ..NONE
};

fn to_fp8x2(to: PackedFloat, fl: ArithFlags, a: f32, b: f32) -> u64 {
    bin(BinaryOp::CvtPair(to), F32, fl, b32(a), b32(b))
}
fn e4m3(x: f32) -> u64 {
    to_fp8x2(E4M3, RN_SATFINITE, 0.0, x)
}
fn e5m2(x: f32) -> u64 {
    to_fp8x2(E5M2, RN_SATFINITE, 0.0, x)
}

#[test]
fn fp8_hardware_vectors() {
    // ZLUDA's tests (vosen/ZLUDA ptx/src/test/spirv_run/mod.rs), checked on NVIDIA GPUs.
    assert_eq!(to_fp8x2(E4M3, RN_SATFINITE, 0.40625, 12.9), 0x2D55);
    assert_eq!(to_fp8x2(E5M2, RN_SATFINITE, 0.375, -5256.6), 0x36ED);
    let widen = |f, a| alu::unary(UnaryOp::CvtFp8x2ToF16x2(f), B16, NONE, a);
    assert_eq!(widen(Fp8::E4m3, 0x2D55), 0x3680_4A80);
    assert_eq!(widen(Fp8::E5m2, 0x36ED), 0x3600_ED00);
}

#[test]
fn fp8_edges() {
    assert_eq!(e4m3(448.0), 0x7E, "largest finite");
    assert_eq!(e4m3(464.0), 0x7E, "tie between 448 and 480: to even (448)");
    assert_eq!(e4m3(470.0), 0x7E, "rounds to 480: saturates");
    assert_eq!(e4m3(1e9), 0x7E);
    assert_eq!(e4m3(f32::NEG_INFINITY), 0xFE);
    assert_eq!(e4m3(f32::NAN), 0x7F);
    assert_eq!(e4m3(-0.0), 0x80);
    assert_eq!(e4m3(2f32.powi(-9)), 0x01, "smallest subnormal");
    assert_eq!(e4m3(2f32.powi(-10)), 0x00, "half of it: to even");
    assert_eq!(e4m3(3.0 * 2f32.powi(-10)), 0x02, "1.5 units: to even");
    assert_eq!(e4m3(2f32.powi(-6)), 0x08, "smallest normal");
    assert_eq!(e4m3(1.0), 0x38);
    assert_eq!(e5m2(57344.0), 0x7B, "largest finite");
    assert_eq!(e5m2(61440.0), 0x7B, "tie rounds to inf: saturates");
    assert_eq!(e5m2(f32::INFINITY), 0x7B);
    assert_eq!(e5m2(f32::NAN), 0x7F);
    assert_eq!(e5m2(2f32.powi(-16)), 0x01, "smallest subnormal");
    assert_eq!(e5m2(1.0), 0x3C);
    let relu = ArithFlags {
        relu: true,
        ..RN_SATFINITE
    };
    assert_eq!(to_fp8x2(E4M3, relu, -1.0, 2.0), 0x0040);
    assert_eq!(to_fp8x2(E5M2, relu, f32::NAN, -0.0), 0x7F00);
    // From .f16x2: the high half to the high byte.
    let narrow = |f, fl, a| alu::unary(UnaryOp::CvtF16x2ToFp8x2(f), F16x2, fl, a);
    assert_eq!(
        narrow(Fp8::E4m3, RN_SATFINITE, pair(h(1.0), h(-2.0))),
        0x38C0
    );
    assert_eq!(
        narrow(Fp8::E5m2, RN_SATFINITE, pair(0x7C00, 0x7E00)),
        0x7B7F,
        "inf, NaN"
    );
    // Widening: NaN to the canonical .f16 NaN, signed zeros kept, .relu.
    let widen = |f, fl, a| alu::unary(UnaryOp::CvtFp8x2ToF16x2(f), B16, fl, a);
    assert_eq!(
        widen(Fp8::E4m3, NONE, 0x7FFF),
        0x7FFF_7FFF,
        "both e4m3 NaNs"
    );
    assert_eq!(
        widen(Fp8::E4m3, NONE, 0x8001),
        pair(0x8000, 0x1800),
        "-0 and 2^-9"
    );
    assert_eq!(
        widen(Fp8::E5m2, NONE, 0x7C01),
        pair(0x7C00, 0x0100),
        "inf and 2^-16"
    );
    assert_eq!(
        widen(Fp8::E4m3, RELU, 0xC038),
        pair(0, 0x3C00),
        "-2 to 0 under .relu"
    );
}

/// The value of every finite code of an 8-bit format, in code order (monotonic, positive).
fn fp8_values(f: Fp8) -> Vec<f64> {
    let (man, bias, last) = match f {
        Fp8::E4m3 => (3, 7, 0x7E),
        Fp8::E5m2 => (2, 15, 0x7B),
    };
    (0..=last)
        .map(|code: u32| {
            let (field, frac) = (code >> man, code & ((1 << man) - 1));
            if field == 0 {
                frac as f64 * 2f64.powi(1 - bias - man)
            } else {
                (frac + (1 << man)) as f64 * 2f64.powi(field as i32 - bias - man)
            }
        })
        .collect()
}

/// Round to nearest, ties to the even code, saturating beyond the largest finite value.
fn fp8_reference(values: &[f64], x: f32) -> u64 {
    if x.is_nan() {
        return 0x7F;
    }
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    let m = (x as f64).abs();
    let mut best = 0usize;
    for (code, &v) in values.iter().enumerate() {
        let (d, db) = ((v - m).abs(), (values[best] - m).abs());
        if d < db || (d == db && code % 2 == 0) {
            best = code;
        }
    }
    sign | best as u64
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn fp8_matches_nearest_value_reference(bits: u32, scale in -20i32..20) {
        // Spread the magnitudes over the formats' ranges.
        let x = f32::from_bits(bits & 0x807F_FFFF | 0x3F80_0000) * 2f32.powi(scale);
        for (f, values) in [(Fp8::E4m3, fp8_values(Fp8::E4m3)), (Fp8::E5m2, fp8_values(Fp8::E5m2))] {
            let to = PackedFloat::Fp8x2(f);
            prop_assert_eq!(to_fp8x2(to, RN_SATFINITE, 0.0, x) & 0xFF, fp8_reference(&values, x));
        }
    }
}

#[test]
fn fp8_round_trips_and_midpoints() {
    for f in [Fp8::E4m3, Fp8::E5m2] {
        let values = fp8_values(f);
        let to = PackedFloat::Fp8x2(f);
        for (code, &v) in values.iter().enumerate() {
            // Every finite code widens to .f16 exactly and comes back.
            let wide = alu::unary(UnaryOp::CvtFp8x2ToF16x2(f), B16, NONE, code as u64) & 0xFFFF;
            assert_eq!(
                f16::from_bits(wide as u16).to_f64(),
                v,
                "{f:?} code {code:#x}"
            );
            let back = alu::unary(UnaryOp::CvtF16x2ToFp8x2(f), F16x2, RN_SATFINITE, wide);
            assert_eq!(back, code as u64, "{f:?} code {code:#x} round trip");
            // The midpoint to the next code rounds to the even one of the two.
            if let Some(&next) = values.get(code + 1) {
                let mid = ((v + next) / 2.0) as f32;
                let want = if code % 2 == 0 { code } else { code + 1 } as u64;
                assert_eq!(
                    to_fp8x2(to, RN_SATFINITE, 0.0, mid),
                    want,
                    "{f:?} midpoint above {code:#x}"
                );
            }
        }
    }
}
