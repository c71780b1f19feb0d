//! Floating-point semantics of `semantics::alu`: IEEE results in every rounding mode (checked
//! against host arithmetic and an exact error-free-transformation reference), `.ftz`, `.sat`,
//! NaN rules of min/max and comparisons, signed zeros.

use proptest::prelude::*;
use ptx_parser::ScalarType::*;
use semantics::alu;
use semantics::program::{ArithFlags, BinaryOp, Compare, Rounding, TernaryOp, UnaryOp};
use std::cmp::Ordering;

const CANON32: u64 = 0x7FFF_FFFF;
const CANON64: u64 = 0x7FFF_FFFF_FFFF_FFFF;

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

fn b32(x: f32) -> u64 {
    x.to_bits() as u64
}

fn f32b(x: u64) -> f32 {
    assert_eq!(x >> 32, 0, "high bits must be zero");
    f32::from_bits(x as u32)
}

fn bin32(op: BinaryOp, flags: ArithFlags, a: f32, b: f32) -> u64 {
    alu::binary(op, F32, flags, b32(a), b32(b), &mut false)
}

fn bin64(op: BinaryOp, flags: ArithFlags, a: f64, b: f64) -> u64 {
    alu::binary(op, F64, flags, a.to_bits(), b.to_bits(), &mut false)
}

fn fma32(flags: ArithFlags, a: f32, b: f32, c: f32) -> u64 {
    alu::ternary(
        TernaryOp::Fma,
        F32,
        flags,
        b32(a),
        b32(b),
        b32(c),
        &mut false,
    )
}

const MODES: [Rounding; 4] = [Rounding::Rn, Rounding::Rz, Rounding::Rm, Rounding::Rp];

// ----- exact reference -------------------------------------------------------------------------

/// Knuth's TwoSum: `s + e == a + b` exactly (finite, no overflow).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// Compares a candidate `x` with the exact value `s + e` (|e| <= ulp(s)/2). `x - s` is exact
/// here: the candidates are f32 neighbours of `s + e` (Sterbenz).
fn cmp_exact(x: f64, s: f64, e: f64) -> Ordering {
    let d = x - s;
    assert_eq!(s + d, x, "reference subtraction must be exact");
    d.partial_cmp(&e).unwrap()
}

fn next_up32(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        x
    } else if x == 0.0 {
        f32::from_bits(1)
    } else if x > 0.0 {
        f32::from_bits(x.to_bits() + 1)
    } else {
        f32::from_bits(x.to_bits() - 1)
    }
}

trait Next64 {
    fn next_up64(self) -> Self;
    fn next_down64(self) -> Self;
}

impl Next64 for f64 {
    fn next_up64(self) -> f64 {
        if self == 0.0 {
            f64::from_bits(1)
        } else if self > 0.0 {
            f64::from_bits(self.to_bits() + 1)
        } else {
            f64::from_bits(self.to_bits() - 1)
        }
    }
    fn next_down64(self) -> f64 {
        -(-self).next_up64()
    }
}

fn next_down32(x: f32) -> f32 {
    -next_up32(-x)
}

/// Checks that `r` is the correctly rounded f32 of the exact value `s + e` in mode `m`.
fn check_rounded(r: f32, s: f64, e: f64, m: Rounding) {
    let max = f32::MAX as f64;
    let exact_sign = if s != 0.0 { s.signum() } else { e.signum() };
    // Beyond the finite range? (`s` is the f64 rounding of the exact value and MAX is an f64.)
    let (sa, ea) = (s * exact_sign, e * exact_sign); // the magnitude as sa + ea
    if sa > max || (sa == max && ea > 0.0) {
        // .rn overflows from MAX + half an ulp (2^103) on.
        let threshold = max + 2f64.powi(103);
        let rn_inf = sa > threshold || (sa == threshold && ea >= 0.0);
        let to_inf = match m {
            Rounding::Rz => false,
            Rounding::Rp => exact_sign > 0.0,
            Rounding::Rm => exact_sign < 0.0,
            _ => rn_inf,
        };
        let want = if to_inf { f32::INFINITY } else { f32::MAX };
        assert_eq!(
            r.to_bits(),
            (want * exact_sign as f32).to_bits(),
            "overflow of {s}+{e} in {m:?}"
        );
        return;
    }
    assert!(r.is_finite(), "{r} for {s}+{e} in {m:?}");
    let x = r as f64;
    let c = cmp_exact(x, s, e);
    let lower = if c == Ordering::Greater {
        next_down32(r)
    } else {
        r
    };
    let upper = if c == Ordering::Less { next_up32(r) } else { r };
    let (lo, hi) = (lower as f64, upper as f64);
    // [lo, hi] are consecutive f32 values bracketing the exact value.
    assert!(cmp_exact(lo, s, e) != Ordering::Greater || lower.is_infinite());
    if c == Ordering::Equal {
        return;
    }
    let toward_zero = if exact_sign > 0.0 { lower } else { upper };
    match m {
        Rounding::Rz => assert_eq!(r.to_bits(), toward_zero.to_bits(), "rz of {s}+{e}"),
        Rounding::Rm => assert_eq!(r.to_bits(), lower.to_bits(), "rm of {s}+{e}"),
        Rounding::Rp => assert_eq!(r.to_bits(), upper.to_bits(), "rp of {s}+{e}"),
        _ => {
            // Nearest: compare distances exactly via the midpoint (representable in f64).
            if lower.is_infinite() || upper.is_infinite() {
                return;
            }
            let mid = (lo + hi) / 2.0;
            let want = match cmp_exact(mid, s, e) {
                // The midpoint below the exact value: the upper neighbour is nearer.
                Ordering::Less => upper,
                Ordering::Greater => lower,
                Ordering::Equal => {
                    if lower.to_bits() & 1 == 0 {
                        lower
                    } else {
                        upper
                    }
                }
            };
            let _ = hi;
            assert_eq!(r.to_bits(), want.to_bits(), "rn of {s}+{e}");
        }
    }
}

fn finite_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>()
            .prop_map(f32::from_bits)
            .prop_filter("finite", |x| x.is_finite()),
        (-1000i32..1000).prop_map(|i| i as f32 / 8.0),
        (0u32..0x0100_0000).prop_map(f32::from_bits), // subnormals and tiny normals
    ]
}

// ----- tables ---------------------------------------------------------------------------------

#[test]
fn directed_rounding_examples() {
    let one = 1.0f32;
    let tiny = f32::from_bits(0x3380_0000); // 2^-24: half an ulp of 1.0
    let add = |m, a, b| f32b(bin32(BinaryOp::Add, fl(Some(m), false, false), a, b));
    assert_eq!(add(Rounding::Rn, one, tiny), 1.0, "tie to even");
    assert_eq!(add(Rounding::Rp, one, tiny), next_up32(1.0));
    assert_eq!(add(Rounding::Rz, one, tiny), 1.0);
    assert_eq!(add(Rounding::Rm, -one, -tiny), next_down32(-1.0));
    assert_eq!(add(Rounding::Rz, -one, -tiny), -1.0);
    let x = next_up32(1.0);
    assert_eq!(
        add(Rounding::Rn, x, tiny),
        next_up32(x),
        "tie to even goes up from odd"
    );
    // 1 + 2^-100: far below an ulp but decides the direction.
    let t = 2f32.powi(-100);
    assert_eq!(add(Rounding::Rp, one, t), next_up32(1.0));
    assert_eq!(add(Rounding::Rm, one, -t), next_down32(1.0));
    assert_eq!(add(Rounding::Rn, one, -t), 1.0);
    // Exact zero sums: +0 except in .rm.
    assert_eq!(
        bin32(
            BinaryOp::Sub,
            fl(Some(Rounding::Rn), false, false),
            1.0,
            1.0
        ),
        0
    );
    assert_eq!(
        bin32(
            BinaryOp::Sub,
            fl(Some(Rounding::Rm), false, false),
            1.0,
            1.0
        ),
        0x8000_0000
    );
    assert_eq!(
        bin32(BinaryOp::Add, fl(None, false, false), -0.0, -0.0),
        0x8000_0000
    );
    assert_eq!(bin32(BinaryOp::Add, fl(None, false, false), -0.0, 0.0), 0);
    // Overflow by mode.
    let big = |m| {
        f32b(bin32(
            BinaryOp::Mul,
            fl(Some(m), false, false),
            f32::MAX,
            2.0,
        ))
    };
    assert_eq!(big(Rounding::Rn), f32::INFINITY);
    assert_eq!(big(Rounding::Rz), f32::MAX);
    assert_eq!(big(Rounding::Rm), f32::MAX);
    assert_eq!(big(Rounding::Rp), f32::INFINITY);
    // f64.
    let d =
        |m, a: f64, b: f64| f64::from_bits(bin64(BinaryOp::Div, fl(Some(m), false, false), a, b));
    assert_eq!(d(Rounding::Rn, 1.0, 3.0), 1.0 / 3.0);
    assert_eq!(d(Rounding::Rz, 1.0, 3.0), 1.0 / 3.0);
    assert_eq!(d(Rounding::Rp, 1.0, 3.0), (1.0f64 / 3.0).next_up64());
    assert_eq!(d(Rounding::Rm, -1.0, 3.0), (-1.0f64 / 3.0).next_down64());
    // RN(2/3) lies below 2/3, so .rz agrees with .rn there; RN(sqrt 2) lies above.
    assert_eq!(d(Rounding::Rz, 2.0, 3.0), 2.0 / 3.0);
    assert_eq!(d(Rounding::Rp, 2.0, 3.0), (2.0f64 / 3.0).next_up64());
}

#[test]
fn nan_results_are_canonical() {
    let n = fl(None, false, false);
    assert_eq!(
        bin32(BinaryOp::Add, n, f32::INFINITY, f32::NEG_INFINITY),
        CANON32
    );
    assert_eq!(
        alu::binary(BinaryOp::Mul, F32, n, 0x7FC0_1234, b32(1.0), &mut false),
        CANON32
    );
    assert_eq!(
        alu::binary(BinaryOp::Add, F32, n, 0xFFC0_0000, b32(1.0), &mut false),
        CANON32
    );
    assert_eq!(bin64(BinaryOp::Mul, n, 0.0, f64::INFINITY), CANON64);
    assert_eq!(
        alu::unary(
            UnaryOp::Sqrt,
            F32,
            fl(Some(Rounding::Rn), false, false),
            b32(-1.0)
        ),
        CANON32
    );
    assert_eq!(fma32(n, 0.0, f32::INFINITY, 1.0), CANON32);
    assert_eq!(bin32(BinaryOp::Div, n, 0.0, 0.0), CANON32);
    // Bit operations keep payloads.
    assert_eq!(alu::unary(UnaryOp::Neg, F32, n, 0x7FC0_1234), 0xFFC0_1234);
    assert_eq!(alu::unary(UnaryOp::Abs, F32, n, 0xFFC0_1234), 0x7FC0_1234);
    assert_eq!(alu::unary(UnaryOp::Mov, F32, n, 0xFFC0_1234), 0xFFC0_1234);
}

#[test]
fn min_max_nan_and_signed_zero() {
    let n = fl(None, false, false);
    let nan = f32::from_bits(0x7FC0_0001);
    assert_eq!(f32b(bin32(BinaryOp::Min, n, nan, 2.0)), 2.0);
    assert_eq!(f32b(bin32(BinaryOp::Max, n, 2.0, nan)), 2.0);
    assert_eq!(bin32(BinaryOp::Min, n, nan, nan), CANON32);
    assert_eq!(bin64(BinaryOp::Max, n, f64::NAN, f64::NAN), CANON64);
    assert_eq!(bin32(BinaryOp::Min, n, 0.0, -0.0), 0x8000_0000);
    assert_eq!(bin32(BinaryOp::Min, n, -0.0, 0.0), 0x8000_0000);
    assert_eq!(bin32(BinaryOp::Max, n, -0.0, 0.0), 0);
    assert_eq!(bin32(BinaryOp::Max, n, 0.0, -0.0), 0);
    assert_eq!(f32b(bin32(BinaryOp::Max, n, -1.0, f32::NEG_INFINITY)), -1.0);
    // .ftz: a subnormal compares as zero.
    let sub = f32::from_bits(5);
    assert_eq!(bin32(BinaryOp::Max, fl(None, true, false), sub, -0.0), 0);
    assert_eq!(bin32(BinaryOp::Max, n, sub, -0.0), 5);
}

#[test]
fn ftz_and_sat() {
    let sub = f32::from_bits(0x0000_0100);
    let ftz = fl(None, true, false);
    // Inputs flushed: sub + sub = 0 under .ftz.
    assert_eq!(bin32(BinaryOp::Add, ftz, sub, sub), 0);
    assert_eq!(
        bin32(BinaryOp::Add, fl(None, false, false), sub, sub),
        0x200
    );
    assert_eq!(
        bin32(BinaryOp::Add, ftz, -sub, -sub),
        0x8000_0000,
        "sign-preserving"
    );
    // Results flushed: 2^-126 * 0.5 is subnormal.
    let min_normal = f32::MIN_POSITIVE;
    assert_eq!(bin32(BinaryOp::Mul, ftz, min_normal, -0.5), 0x8000_0000);
    assert_eq!(
        bin32(BinaryOp::Mul, fl(None, false, false), min_normal, 0.5),
        0x0040_0000
    );
    // f64 ignores .ftz.
    let sub64 = f64::from_bits(1);
    assert_eq!(bin64(BinaryOp::Add, fl(None, true, false), sub64, sub64), 2);
    // neg/abs with .ftz.
    assert_eq!(alu::unary(UnaryOp::Neg, F32, ftz, b32(sub)), 0x8000_0000);
    assert_eq!(alu::unary(UnaryOp::Abs, F32, ftz, b32(-sub)), 0);
    // .sat clamps to [0, 1]; NaN to +0.
    let sat = fl(None, false, true);
    assert_eq!(f32b(bin32(BinaryOp::Add, sat, 0.75, 0.5)), 1.0);
    assert_eq!(bin32(BinaryOp::Sub, sat, 0.25, 0.5), 0);
    assert_eq!(f32b(bin32(BinaryOp::Mul, sat, 0.25, 0.5)), 0.125);
    assert_eq!(
        bin32(BinaryOp::Add, sat, f32::INFINITY, f32::NEG_INFINITY),
        0
    );
    assert_eq!(bin32(BinaryOp::Mul, sat, -0.0, 1.0), 0);
    assert_eq!(f32b(fma32(sat, 2.0, 2.0, 0.0)), 1.0);
    assert_eq!(f64::from_bits(bin64(BinaryOp::Add, sat, 3.0, 0.0)), 1.0);
}

#[test]
fn fma_is_fused() {
    // (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24: lost by an unfused mul+add in f32.
    let a = 1.0 + 2f32.powi(-12);
    let c = -(1.0 + 2f32.powi(-11));
    assert_eq!(f32b(fma32(fl(None, false, false), a, a, c)), 2f32.powi(-24));
    let mad = alu::ternary(
        TernaryOp::Mad,
        F32,
        fl(Some(Rounding::Rn), false, false),
        b32(a),
        b32(a),
        b32(c),
        &mut false,
    );
    assert_eq!(f32b(mad), 2f32.powi(-24));
    // Directed fma: the exact product 1 + 2^-11 + 2^-24 with c = -1.
    let rz = fma32(fl(Some(Rounding::Rz), false, false), a, a, -1.0);
    assert_eq!(f32b(rz), 2f32.powi(-11) + 2f32.powi(-24));
    // f32 fma whose exact value needs more than 53 bits: 2^60*2^60... + tiny.
    let r = fma32(
        fl(Some(Rounding::Rp), false, false),
        1.0,
        1.0,
        2f32.powi(-100),
    );
    assert_eq!(f32b(r), next_up32(1.0));
}

#[test]
fn division_rcp_sqrt() {
    let n = fl(Some(Rounding::Rn), false, false);
    assert_eq!(f32b(bin32(BinaryOp::Div, n, 1.0, 0.0)), f32::INFINITY);
    assert_eq!(f32b(bin32(BinaryOp::Div, n, -1.0, 0.0)), f32::NEG_INFINITY);
    assert_eq!(f32b(alu::unary(UnaryOp::Rcp, F32, n, b32(4.0))), 0.25);
    assert_eq!(
        alu::unary(UnaryOp::Rcp, F32, n, b32(-0.0)),
        b32(f32::NEG_INFINITY)
    );
    assert_eq!(
        f32b(alu::unary(UnaryOp::Sqrt, F32, n, b32(2.0))),
        2f32.sqrt()
    );
    assert_eq!(alu::unary(UnaryOp::Sqrt, F32, n, b32(-0.0)), 0x8000_0000);
    let rp = alu::unary(
        UnaryOp::Sqrt,
        F32,
        fl(Some(Rounding::Rp), false, false),
        b32(2.0),
    );
    assert_eq!(f32b(rp), next_up32(2f32.sqrt()));
    let rz = alu::unary(
        UnaryOp::Sqrt,
        F64,
        fl(Some(Rounding::Rz), false, false),
        2f64.to_bits(),
    );
    assert_eq!(
        f64::from_bits(rz),
        2f64.sqrt().next_down64(),
        "RN(sqrt 2) is above sqrt 2"
    );
    // div.approx/div.full are computed as div.rn (documented deviation).
    let approx = ArithFlags {
        approx: true,
        ..fl(None, false, false)
    };
    assert_eq!(f32b(bin32(BinaryOp::Div, approx, 1.0, 3.0)), 1.0 / 3.0);
}

#[test]
fn approximate_functions() {
    let n = fl(None, false, false);
    let u = |op, x: f32| f32b(alu::unary(op, F32, n, b32(x)));
    assert_eq!(u(UnaryOp::Ex2, 3.0), 8.0);
    assert_eq!(u(UnaryOp::Ex2, f32::NEG_INFINITY), 0.0);
    assert_eq!(u(UnaryOp::Lg2, 8.0), 3.0);
    assert_eq!(u(UnaryOp::Lg2, 0.0), f32::NEG_INFINITY);
    assert_eq!(alu::unary(UnaryOp::Lg2, F32, n, b32(-1.0)), CANON32);
    assert_eq!(u(UnaryOp::Sin, 0.0), 0.0);
    assert_eq!(alu::unary(UnaryOp::Sin, F32, n, b32(-0.0)), 0x8000_0000);
    assert_eq!(u(UnaryOp::Cos, 0.0), 1.0);
    assert_eq!(
        alu::unary(UnaryOp::Cos, F32, n, b32(f32::INFINITY)),
        CANON32
    );
    assert_eq!(u(UnaryOp::Rsqrt, 4.0), 0.5);
    assert_eq!(u(UnaryOp::Rsqrt, -0.0), f32::NEG_INFINITY);
    assert_eq!(u(UnaryOp::Tanh, 100.0), 1.0);
    assert!((u(UnaryOp::Sin, 1.0) - 1f32.sin()).abs() <= f32::EPSILON);
    // .ftz: ex2 of a subnormal is ex2(0) = 1, lg2 of a subnormal is -inf.
    let ftz = fl(None, true, false);
    assert_eq!(
        f32b(alu::unary(UnaryOp::Lg2, F32, ftz, 1)),
        f32::NEG_INFINITY
    );
    assert_eq!(f32b(alu::unary(UnaryOp::Ex2, F32, ftz, 1)), 1.0);
    // f64 rcp/sqrt exist too.
    assert_eq!(
        f64::from_bits(alu::unary(UnaryOp::Rcp, F64, n, 8f64.to_bits())),
        0.125
    );
}

#[test]
fn copysign_takes_sign_of_a() {
    let n = fl(None, false, false);
    assert_eq!(f32b(bin32(BinaryOp::Copysign, n, -1.0, 2.0)), -2.0);
    assert_eq!(f32b(bin32(BinaryOp::Copysign, n, 1.0, -2.0)), 2.0);
    assert_eq!(
        f64::from_bits(bin64(BinaryOp::Copysign, n, -0.0, 3.0)),
        -3.0
    );
}

#[test]
fn half_precision_arithmetic() {
    use half::f16;
    let h = |x: f32| f16::from_f32(x).to_bits() as u64;
    let n = fl(None, false, false);
    let r = alu::binary(BinaryOp::Add, F16, n, h(1.0), h(2.0), &mut false);
    assert_eq!(r, h(3.0));
    assert_eq!(r >> 16, 0);
    let r = alu::binary(
        BinaryOp::Mul,
        F16x2,
        n,
        h(2.0) << 16 | h(3.0),
        h(4.0) << 16 | h(5.0),
        &mut false,
    );
    assert_eq!(r, h(8.0) << 16 | h(15.0));
    // f16 overflow: 65504 * 2 = inf (rn), max (rz).
    assert_eq!(
        alu::binary(BinaryOp::Mul, F16, n, h(65504.0), h(2.0), &mut false),
        0x7C00
    );
    let rz = fl(Some(Rounding::Rz), false, false);
    assert_eq!(
        alu::binary(BinaryOp::Mul, F16, rz, h(65504.0), h(2.0), &mut false),
        0x7BFF
    );
}

// ----- comparisons ------------------------------------------------------------------------------

#[test]
fn setp_nan_and_zero_rules() {
    let c = |cmp, a: f32, b: f32| alu::compare(cmp, F32, false, b32(a), b32(b));
    let nan = f32::NAN;
    for cmp in [
        Compare::Eq,
        Compare::Ne,
        Compare::Lt,
        Compare::Le,
        Compare::Gt,
        Compare::Ge,
        Compare::Num,
    ] {
        assert!(!c(cmp, nan, 1.0), "{cmp:?} is false on NaN");
        assert!(!c(cmp, 1.0, nan), "{cmp:?} is false on NaN");
    }
    for cmp in [
        Compare::Equ,
        Compare::Neu,
        Compare::Ltu,
        Compare::Leu,
        Compare::Gtu,
        Compare::Geu,
        Compare::Nan,
    ] {
        assert!(c(cmp, nan, 1.0), "{cmp:?} is true on NaN");
    }
    assert!(c(Compare::Eq, 0.0, -0.0));
    assert!(!c(Compare::Lt, -0.0, 0.0));
    assert!(c(Compare::Num, 1.0, 2.0));
    assert!(!c(Compare::Nan, 1.0, 2.0));
    assert!(c(Compare::Ltu, 1.0, 2.0));
    assert!(!c(Compare::Gtu, 1.0, 2.0));
    assert!(c(Compare::Ne, f32::INFINITY, f32::MAX));
    // .ftz: subnormals equal zero.
    let sub = 1u64;
    assert!(alu::compare(Compare::Eq, F32, true, sub, 0));
    assert!(!alu::compare(Compare::Eq, F32, false, sub, 0));
    assert!(
        alu::compare(Compare::Gt, F64, true, 1, 0),
        ".ftz does not apply to f64"
    );
}

#[test]
fn setp_integers() {
    assert!(alu::compare(Compare::Lt, S32, false, 0xFFFF_FFFF, 0));
    assert!(!alu::compare(Compare::Lt, U32, false, 0xFFFF_FFFF, 0));
    assert!(
        alu::compare(Compare::Ge, U16, false, 0x1_0000, 0),
        "high bits ignored"
    );
    assert!(alu::compare(Compare::Eq, B64, false, u64::MAX, u64::MAX));
    assert!(alu::compare(Compare::Ne, S8, false, 0x80, 0x7F));
    assert!(alu::compare(Compare::Num, S32, false, 1, 2));
}

#[test]
fn set_and_slct() {
    assert_eq!(alu::set_value(U32, true), 0xFFFF_FFFF);
    assert_eq!(alu::set_value(S32, true), 0xFFFF_FFFF);
    assert_eq!(alu::set_value(F32, true), b32(1.0));
    assert_eq!(alu::set_value(F32, false), 0);
    assert_eq!(alu::set_value(U32, false), 0);
    assert_eq!(alu::slct(S32, false, 1, 2, 0), 1);
    assert_eq!(alu::slct(S32, false, 1, 2, 0xFFFF_FFFF), 2);
    assert_eq!(alu::slct(F32, false, 1, 2, b32(-0.0)), 1);
    assert_eq!(alu::slct(F32, false, 1, 2, b32(f32::NAN)), 2);
    assert_eq!(alu::slct(F32, false, 1, 2, b32(-1.0)), 2);
    // A negative subnormal: < 0 without .ftz, -0.0 with it.
    assert_eq!(alu::slct(F32, false, 1, 2, 0x8000_0001), 2);
    assert_eq!(alu::slct(F32, true, 1, 2, 0x8000_0001), 1);
}

// ----- properties -------------------------------------------------------------------------------

fn all_f32() -> impl Strategy<Value = f32> {
    prop_oneof![any::<u32>().prop_map(f32::from_bits), finite_f32()]
}

fn canon32(x: f32) -> u64 {
    if x.is_nan() { CANON32 } else { b32(x) }
}

fn canon64(x: f64) -> u64 {
    if x.is_nan() { CANON64 } else { x.to_bits() }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn f32_rn_matches_host(a in all_f32(), b in all_f32(), c in all_f32()) {
        let n = fl(Some(Rounding::Rn), false, false);
        prop_assert_eq!(bin32(BinaryOp::Add, n, a, b), canon32(a + b));
        prop_assert_eq!(bin32(BinaryOp::Sub, n, a, b), canon32(a - b));
        prop_assert_eq!(bin32(BinaryOp::Mul, n, a, b), canon32(a * b));
        prop_assert_eq!(bin32(BinaryOp::Div, n, a, b), canon32(a / b));
        prop_assert_eq!(fma32(n, a, b, c), canon32(a.mul_add(b, c)));
        prop_assert_eq!(alu::unary(UnaryOp::Sqrt, F32, n, b32(a)), canon32(a.sqrt()));
    }

    #[test]
    fn f64_rn_matches_host(a: f64, b: f64) {
        let n = fl(None, false, false);
        prop_assert_eq!(bin64(BinaryOp::Add, n, a, b), canon64(a + b));
        prop_assert_eq!(bin64(BinaryOp::Mul, n, a, b), canon64(a * b));
        prop_assert_eq!(bin64(BinaryOp::Div, n, a, b), canon64(a / b));
    }

    #[test]
    fn f32_directed_add_mul_fma_are_correctly_rounded(a in finite_f32(), b in finite_f32(), c in finite_f32()) {
        for m in MODES {
            let f = fl(Some(m), false, false);
            // add: a + b == s + e exactly.
            let (s, e) = two_sum(a as f64, b as f64);
            let r = f32b(bin32(BinaryOp::Add, f, a, b));
            if s != 0.0 || e != 0.0 { check_rounded(r, s, e, m); }
            let (s, e) = two_sum(a as f64, -(b as f64));
            let r = f32b(bin32(BinaryOp::Sub, f, a, b));
            if s != 0.0 || e != 0.0 { check_rounded(r, s, e, m); }
            // mul: the product of two f32 is exact in f64.
            let p = a as f64 * b as f64;
            let r = f32b(bin32(BinaryOp::Mul, f, a, b));
            if p != 0.0 { check_rounded(r, p, 0.0, m); }
            // fma: exact product, then an exact TwoSum.
            let (s, e) = two_sum(p, c as f64);
            let r = f32b(fma32(f, a, b, c));
            if s != 0.0 || e != 0.0 { check_rounded(r, s, e, m); }
        }
    }

    #[test]
    fn f64_directed_add_brackets_nearest(a in -1e300f64..1e300, b in -1e300f64..1e300) {
        let (s, e) = two_sum(a, b);
        let r = |m| f64::from_bits(bin64(BinaryOp::Add, fl(Some(m), false, false), a, b));
        prop_assert_eq!(r(Rounding::Rn), s);
        let (dn, up) = match e.partial_cmp(&0.0).unwrap() {
            Ordering::Equal => (s, s),
            Ordering::Less => (s.next_down64(), s),
            Ordering::Greater => (s, s.next_up64()),
        };
        prop_assert_eq!(r(Rounding::Rm), dn);
        prop_assert_eq!(r(Rounding::Rp), up);
        let exact_pos = s > 0.0 || (s == 0.0 && e > 0.0);
        let rz = if exact_pos { dn } else { up };
        if s != 0.0 { prop_assert_eq!(r(Rounding::Rz), rz); }
    }

    #[test]
    fn f64_directed_mul_brackets_nearest(a in -1e100f64..1e100, b in -1e100f64..1e100) {
        let p = a * b;
        prop_assume!(p == 0.0 || p.abs() > 1e-250);
        let e = a.mul_add(b, -p); // exact product error
        let r = |m| f64::from_bits(bin64(BinaryOp::Mul, fl(Some(m), false, false), a, b));
        let (dn, up) = match e.partial_cmp(&0.0).unwrap() {
            Ordering::Equal => (p, p),
            Ordering::Less => (p.next_down64(), p),
            Ordering::Greater => (p, p.next_up64()),
        };
        prop_assert_eq!(r(Rounding::Rm), dn);
        prop_assert_eq!(r(Rounding::Rp), up);
    }

    #[test]
    fn compare_matches_ieee(a in all_f32(), b in all_f32()) {
        let c = |cmp| alu::compare(cmp, F32, false, b32(a), b32(b));
        let un = a.is_nan() || b.is_nan();
        prop_assert_eq!(c(Compare::Eq), a == b);
        prop_assert_eq!(c(Compare::Ne), !un && a != b);
        prop_assert_eq!(c(Compare::Lt), a < b);
        prop_assert_eq!(c(Compare::Le), a <= b);
        prop_assert_eq!(c(Compare::Gt), a > b);
        prop_assert_eq!(c(Compare::Ge), a >= b);
        prop_assert_eq!(c(Compare::Equ), un || a == b);
        prop_assert_eq!(c(Compare::Neu), a != b);
        prop_assert_eq!(c(Compare::Ltu), un || a < b);
        prop_assert_eq!(c(Compare::Leu), un || a <= b);
        prop_assert_eq!(c(Compare::Gtu), un || a > b);
        prop_assert_eq!(c(Compare::Geu), un || a >= b);
        prop_assert_eq!(c(Compare::Num), !un);
        prop_assert_eq!(c(Compare::Nan), un);
    }

    #[test]
    fn min_max_match_ptx_rules(a in all_f32(), b in all_f32()) {
        let n = fl(None, false, false);
        let mn = bin32(BinaryOp::Min, n, a, b);
        let mx = bin32(BinaryOp::Max, n, a, b);
        if a.is_nan() && b.is_nan() {
            prop_assert_eq!(mn, CANON32);
            prop_assert_eq!(mx, CANON32);
        } else if a.is_nan() || b.is_nan() {
            let other = if a.is_nan() { b } else { a };
            prop_assert_eq!(mn, b32(other));
            prop_assert_eq!(mx, b32(other));
        } else {
            prop_assert_eq!(f32b(mn), a.min(b));
            prop_assert_eq!(f32b(mx), a.max(b));
            if a == 0.0 && b == 0.0 {
                prop_assert_eq!(mn, b32(a) | b32(b));
                prop_assert_eq!(mx, b32(a) & b32(b));
            }
        }
    }

    #[test]
    fn ftz_results_are_never_subnormal(a in all_f32(), b in all_f32(), m in 0usize..4) {
        let f = fl(Some(MODES[m]), true, false);
        for op in [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Min, BinaryOp::Max] {
            let r = f32b(bin32(op, f, a, b));
            prop_assert!(!r.is_subnormal());
        }
    }
}
