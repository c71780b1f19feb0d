//! `cvt` of `semantics::alu` (PTX ISA 9.7.9.21): integer extension/truncation/saturation,
//! float-to-int rounding and saturation, int-to-float and float-to-float rounding, `.ftz`,
//! `.sat`, and half precision against the `half` crate.

use proptest::prelude::*;
use ptx_parser::ScalarType::{self, *};
use semantics::alu;
use semantics::program::{ArithFlags, Rounding};

fn fl(rounding: Option<Rounding>, ftz: bool, sat: bool) -> ArithFlags {
    ArithFlags {
        rounding,
        ftz,
        sat,
        approx: false,
        relu: false,
        satfinite: false,
    }
}

fn cvt(dst: ScalarType, src: ScalarType, r: Option<Rounding>, a: u64) -> u64 {
    alu::cvt(dst, src, fl(r, false, false), a)
}

fn b32(x: f32) -> u64 {
    x.to_bits() as u64
}

fn f32b(x: u64) -> f32 {
    assert_eq!(x >> 32, 0);
    f32::from_bits(x as u32)
}

#[test]
fn int_to_int() {
    assert_eq!(
        cvt(S32, S8, None, 0x80),
        0xFFFF_FF80,
        "sign-extends by the source type"
    );
    assert_eq!(cvt(U32, S8, None, 0x80), 0xFFFF_FF80);
    assert_eq!(cvt(S32, U8, None, 0x80), 0x80);
    assert_eq!(cvt(U8, U32, None, 0x1234), 0x34, "truncates");
    assert_eq!(cvt(S16, S64, None, 0xFFFF_FFFF_0001_8000), 0x8000);
    assert_eq!(cvt(S64, S32, None, 0xFFFF_FFFF), u64::MAX);
    assert_eq!(cvt(U64, S32, None, 0xFFFF_FFFF), u64::MAX);
    assert_eq!(cvt(U64, U32, None, 0xFFFF_FFFF), 0xFFFF_FFFF);
    let sat = |d, s, a| alu::cvt(d, s, fl(None, false, true), a);
    assert_eq!(sat(U8, S32, (-5i32) as u32 as u64), 0);
    assert_eq!(sat(U8, S32, 300), 255);
    assert_eq!(sat(S8, U32, 0xFFFF_FFFF), 127);
    assert_eq!(sat(S8, S32, (-300i32) as u32 as u64), 0x80);
    assert_eq!(sat(U32, S64, u64::MAX), 0);
    assert_eq!(sat(S32, U64, u64::MAX), 0x7FFF_FFFF);
    assert_eq!(sat(U64, S64, 5), 5);
}

#[test]
fn float_to_int_rounding_and_saturation() {
    let f2i = |dst, r, x: f32| cvt(dst, F32, Some(r), b32(x));
    assert_eq!(f2i(S32, Rounding::Rzi, 2.7), 2);
    assert_eq!(f2i(S32, Rounding::Rzi, -2.7), (-2i32) as u32 as u64);
    assert_eq!(f2i(S32, Rounding::Rni, 2.5), 2, "halfway to even");
    assert_eq!(f2i(S32, Rounding::Rni, 3.5), 4);
    assert_eq!(f2i(S32, Rounding::Rni, -2.5), (-2i32) as u32 as u64);
    assert_eq!(f2i(S32, Rounding::Rni, 0.5), 0);
    assert_eq!(f2i(S32, Rounding::Rni, -0.5), 0, "-0 becomes integer 0");
    assert_eq!(f2i(S32, Rounding::Rmi, -2.1), (-3i32) as u32 as u64);
    assert_eq!(f2i(S32, Rounding::Rpi, 2.1), 3);
    assert_eq!(f2i(S32, Rounding::Rpi, -0.1), 0);
    assert_eq!(f2i(S32, Rounding::Rzi, f32::NAN), 0, "NaN gives 0");
    assert_eq!(
        f2i(S32, Rounding::Rzi, 1e10),
        0x7FFF_FFFF,
        "saturates by default"
    );
    assert_eq!(f2i(S32, Rounding::Rzi, -1e10), 0x8000_0000);
    assert_eq!(f2i(U32, Rounding::Rzi, -1.0), 0);
    assert_eq!(f2i(U32, Rounding::Rzi, f32::INFINITY), 0xFFFF_FFFF);
    assert_eq!(f2i(U8, Rounding::Rni, 300.0), 255);
    assert_eq!(f2i(S8, Rounding::Rni, -300.0), 0x80);
    assert_eq!(f2i(S16, Rounding::Rzi, -1.0), 0xFFFF);
    assert_eq!(f2i(U64, Rounding::Rzi, 1.8e19), 1.8e19f32 as u64);
    assert_eq!(f2i(S64, Rounding::Rzi, f32::NEG_INFINITY), i64::MIN as u64);
    assert_eq!(
        cvt(S64, F64, Some(Rounding::Rzi), 1e300f64.to_bits()),
        i64::MAX as u64
    );
    // No modifier: truncation (C semantics).
    assert_eq!(cvt(S32, F32, None, b32(-2.7)), (-2i32) as u32 as u64);
    // .ftz: a tiny positive subnormal rounds up to 1 without it, 0 with it.
    assert_eq!(cvt(S32, F32, Some(Rounding::Rpi), 1), 1);
    assert_eq!(
        alu::cvt(S32, F32, fl(Some(Rounding::Rpi), true, false), 1),
        0
    );
}

#[test]
fn int_to_float_rounding() {
    let i2f = |r, v: i32| f32b(cvt(F32, S32, Some(r), v as u32 as u64));
    assert_eq!(
        i2f(Rounding::Rn, 16_777_217),
        16_777_216.0,
        "halfway to even"
    );
    assert_eq!(
        i2f(Rounding::Rn, 16_777_219),
        16_777_220.0,
        "halfway to even"
    );
    assert_eq!(i2f(Rounding::Rp, 16_777_217), 16_777_218.0);
    assert_eq!(i2f(Rounding::Rz, -16_777_217), -16_777_216.0);
    assert_eq!(i2f(Rounding::Rm, -16_777_217), -16_777_218.0);
    assert_eq!(cvt(F32, S32, None, 0), 0);
    assert_eq!(
        f32b(cvt(F32, U64, Some(Rounding::Rn), u64::MAX)),
        18_446_744_073_709_551_616.0
    );
    assert_eq!(
        f32b(cvt(F32, U64, Some(Rounding::Rz), u64::MAX)),
        f32::from_bits(0x5F7F_FFFF)
    );
    assert_eq!(
        f64::from_bits(cvt(F64, S64, None, i64::MIN as u64)),
        -9.223_372_036_854_776e18
    );
    assert_eq!(f64::from_bits(cvt(F64, U8, None, 0xFF)), 255.0);
    assert_eq!(f64::from_bits(cvt(F64, S8, None, 0xFF)), -1.0);
}

#[test]
fn float_to_float() {
    let x = 1.0f64 + 2f64.powi(-30); // between two f32 values, closer to 1.0
    assert_eq!(f32b(cvt(F32, F64, Some(Rounding::Rn), x.to_bits())), 1.0);
    assert_eq!(
        f32b(cvt(F32, F64, Some(Rounding::Rp), x.to_bits())),
        1.0 + f32::EPSILON
    );
    assert_eq!(
        f32b(cvt(F32, F64, Some(Rounding::Rm), (-x).to_bits())),
        -1.0 - f32::EPSILON
    );
    assert_eq!(
        f32b(cvt(F32, F64, Some(Rounding::Rz), (-x).to_bits())),
        -1.0
    );
    assert_eq!(
        f32b(cvt(F32, F64, Some(Rounding::Rn), 1e39f64.to_bits())),
        f32::INFINITY
    );
    assert_eq!(
        f32b(cvt(F32, F64, Some(Rounding::Rz), 1e39f64.to_bits())),
        f32::MAX
    );
    assert_eq!(
        cvt(F32, F64, Some(Rounding::Rn), f64::NAN.to_bits()),
        0x7FFF_FFFF
    );
    assert_eq!(cvt(F64, F32, None, b32(f32::NAN)), 0x7FFF_FFFF_FFFF_FFFF);
    assert_eq!(
        f64::from_bits(cvt(F64, F32, None, 1)),
        f32::from_bits(1) as f64,
        "widening is exact"
    );
    assert_eq!(
        alu::cvt(F64, F32, fl(None, true, false), 1),
        0,
        ".ftz flushes the f32 source"
    );
    // f64 -> f32 producing a subnormal, flushed with .ftz.
    let tiny = 1e-40f64.to_bits();
    assert_ne!(cvt(F32, F64, Some(Rounding::Rn), tiny), 0);
    assert_eq!(
        alu::cvt(F32, F64, fl(Some(Rounding::Rn), true, false), tiny),
        0
    );
    // Round to integral in the same format.
    let rint = |r, x: f32| f32b(cvt(F32, F32, Some(r), b32(x)));
    assert_eq!(rint(Rounding::Rni, 2.5), 2.0);
    assert_eq!(rint(Rounding::Rni, 3.5), 4.0);
    assert_eq!(rint(Rounding::Rpi, 1.1), 2.0);
    assert_eq!(rint(Rounding::Rmi, -1.1), -2.0);
    assert_eq!(rint(Rounding::Rzi, -1.9), -1.0);
    assert_eq!(
        cvt(F32, F32, Some(Rounding::Rni), b32(-0.4)),
        0x8000_0000,
        "keeps the sign of zero"
    );
    assert_eq!(rint(Rounding::Rni, 1e30), 1e30);
    assert_eq!(
        f64::from_bits(cvt(F64, F64, Some(Rounding::Rni), 2.5f64.to_bits())),
        2.0
    );
    // cvt.ftz.f32.f32 and cvt.sat.f32.f32.
    assert_eq!(
        alu::cvt(F32, F32, fl(None, true, false), 0x8000_0001),
        0x8000_0000
    );
    assert_eq!(
        f32b(alu::cvt(F32, F32, fl(None, false, true), b32(1.5))),
        1.0
    );
    assert_eq!(alu::cvt(F32, F32, fl(None, false, true), b32(f32::NAN)), 0);
    assert_eq!(alu::cvt(F32, F32, fl(None, false, true), b32(-3.0)), 0);
    assert_eq!(
        f32b(alu::cvt(F32, S32, fl(Some(Rounding::Rn), false, true), 7)),
        1.0
    );
}

#[test]
fn half_precision() {
    use half::{bf16, f16};
    let h = |r, x: f32| cvt(F16, F32, Some(r), b32(x));
    assert_eq!(h(Rounding::Rn, 1.0), 0x3C00);
    assert_eq!(
        h(Rounding::Rn, 65520.0),
        0x7C00,
        "halfway above max rounds to inf"
    );
    assert_eq!(h(Rounding::Rz, 65520.0), 0x7BFF);
    assert_eq!(h(Rounding::Rz, 1e10), 0x7BFF);
    assert_eq!(h(Rounding::Rp, 1.0 + f32::EPSILON), 0x3C01);
    assert_eq!(h(Rounding::Rn, f32::NAN), 0x7FFF);
    assert_eq!(
        f32b(cvt(F32, F16, None, 0x3555)),
        f16::from_bits(0x3555).to_f32()
    );
    assert_eq!(
        cvt(Bf16, F32, Some(Rounding::Rn), b32(1.0)),
        bf16::from_f32(1.0).to_bits() as u64
    );
    assert_eq!(cvt(S32, F16, Some(Rounding::Rni), 0x4100), 2, "2.5 -> 2");
    assert_eq!(cvt(F16, S32, Some(Rounding::Rn), 70000), 0x7C00);
    assert_eq!(cvt(F16, U32, Some(Rounding::Rz), 70000), 0x7BFF);
}

fn next_up32(x: f32) -> f32 {
    if x == 0.0 {
        f32::from_bits(1)
    } else if x > 0.0 {
        f32::from_bits(x.to_bits() + 1)
    } else {
        f32::from_bits(x.to_bits() - 1)
    }
}

fn any_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        (-1e6f32..1e6f32),
        (-8i32..8).prop_map(|i| i as f32 * 0.5)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Rust's `as` casts from float to int saturate, map NaN to 0 and truncate: exactly
    /// PTX's `cvt.rzi` (and with a prior rounding, the other integer modes).
    #[test]
    fn float_to_int_matches_saturating_casts(x in any_f32()) {
        let r = |dst, m| cvt(dst, F32, Some(m), b32(x));
        for (m, y) in [
            (Rounding::Rzi, x.trunc()),
            (Rounding::Rni, x.round_ties_even()),
            (Rounding::Rmi, x.floor()),
            (Rounding::Rpi, x.ceil()),
        ] {
            prop_assert_eq!(r(S32, m), (y as i32) as u32 as u64);
            prop_assert_eq!(r(U32, m), (y as u32) as u64);
            prop_assert_eq!(r(S8, m), (y as i8) as u8 as u64);
            prop_assert_eq!(r(U16, m), (y as u16) as u64);
            prop_assert_eq!(r(S64, m), (y as i64) as u64);
            prop_assert_eq!(r(U64, m), y as u64);
        }
        let d = x as f64;
        prop_assert_eq!(cvt(S64, F64, Some(Rounding::Rni), d.to_bits()), d.round_ties_even() as i64 as u64);
    }

    #[test]
    fn int_to_float_rn_matches_casts(v: i64, u: u64) {
        prop_assert_eq!(cvt(F32, S64, Some(Rounding::Rn), v as u64), b32(v as f32));
        prop_assert_eq!(cvt(F32, U64, Some(Rounding::Rn), u), b32(u as f32));
        prop_assert_eq!(cvt(F64, S64, Some(Rounding::Rn), v as u64), (v as f64).to_bits());
        prop_assert_eq!(cvt(F64, U64, None, u), (u as f64).to_bits());
        prop_assert_eq!(cvt(F32, S32, None, v as u32 as u64), b32(v as i32 as f32));
    }

    #[test]
    fn int_to_float_directed_brackets(v: i64) {
        let r = |m| f32b(cvt(F32, S64, Some(m), v as u64));
        let (dn, up, z) = (r(Rounding::Rm), r(Rounding::Rp), r(Rounding::Rz));
        // Floats of this range are integers: compare exactly in i128.
        prop_assert!((dn as i128) <= v as i128 && v as i128 <= up as i128);
        if dn != up {
            prop_assert_eq!(up.to_bits() as i64 - dn.to_bits() as i64, if v > 0 { 1 } else { -1 });
        } else {
            prop_assert_eq!(dn as i128, v as i128);
        }
        prop_assert_eq!(z, if v >= 0 { dn } else { up });
    }

    #[test]
    fn f64_to_f32_matches_cast_and_brackets(x: f64) {
        let r = |m| cvt(F32, F64, Some(m), x.to_bits());
        let want = if x.is_nan() { 0x7FFF_FFFF } else { b32(x as f32) };
        prop_assert_eq!(r(Rounding::Rn), want);
        if x.is_finite() && (x as f32).is_finite() {
            let (dn, up) = (f32b(r(Rounding::Rm)) as f64, f32b(r(Rounding::Rp)) as f64);
            prop_assert!(dn <= x && x <= up);
            if dn != up {
                prop_assert_eq!(next_up32(dn as f32).to_bits(), (up as f32).to_bits());
            }
        }
    }

    #[test]
    fn half_conversions_match_half_crate(x in any_f32(), h: u16) {
        use half::{bf16, f16};
        let got = cvt(F16, F32, Some(Rounding::Rn), b32(x));
        if x.is_nan() { prop_assert_eq!(got, 0x7FFF); } else { prop_assert_eq!(got, f16::from_f32(x).to_bits() as u64); }
        let got = cvt(Bf16, F32, Some(Rounding::Rn), b32(x));
        if x.is_nan() { prop_assert_eq!(got, 0x7FFF); } else { prop_assert_eq!(got, bf16::from_f32(x).to_bits() as u64); }
        let hf = f16::from_bits(h);
        let back = f32b(cvt(F32, F16, None, h as u64));
        if hf.is_nan() { prop_assert!(back.is_nan()); } else { prop_assert_eq!(back.to_bits(), hf.to_f32().to_bits()); }
    }

    #[test]
    fn int_to_int_matches_casts(v: u64) {
        prop_assert_eq!(cvt(S64, S16, None, v), (v as i16) as i64 as u64);
        prop_assert_eq!(cvt(U32, S8, None, v), (v as i8) as i32 as u32 as u64);
        prop_assert_eq!(cvt(U16, U64, None, v), (v as u16) as u64);
        let sat = |d, s| alu::cvt(d, s, fl(None, false, true), v);
        prop_assert_eq!(sat(S16, S64), (v as i64).clamp(i16::MIN as i64, i16::MAX as i64) as i16 as u16 as u64);
        prop_assert_eq!(sat(U8, S32), (v as i32).clamp(0, 255) as u64);
        prop_assert_eq!(sat(S32, U64), v.min(i32::MAX as u64));
    }
}
