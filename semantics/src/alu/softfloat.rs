//! Software IEEE 754 binary floating point with the four directed/nearest rounding modes.
//!
//! PTX exposes `.rn .rz .rm .rp` on `add sub mul fma mad div rcp sqrt cvt` (PTX ISA 9.7.3,
//! "Floating-Point Instructions", and 9.7.9.21 `cvt`). The host FPU only rounds to nearest in
//! safe Rust, so every non-`.rn` result is computed here exactly: operands are unpacked to
//! `mant * 2^exp` integers, the operation is carried out exactly (or with a sticky bit that
//! records a non-zero remainder far below the rounding position), and [`round`] rounds the exact
//! value once into the target format. The same code serves `.f16`, `.bf16`, `.f32` and `.f64`
//! (all formats are parameterised by [`Fmt`]), which is also what makes the narrowing `cvt`s and
//! integer-to-float `cvt`s with a rounding mode exact.
//!
//! Everything here is total: any bit pattern, any mode, no panics.

use std::cmp::Ordering;

/// An IEEE 754 binary interchange format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fmt {
    pub exp_bits: u32,
    /// Stored fraction bits (precision minus one).
    pub man_bits: u32,
}

pub(crate) const F16: Fmt = Fmt {
    exp_bits: 5,
    man_bits: 10,
};
pub(crate) const BF16: Fmt = Fmt {
    exp_bits: 8,
    man_bits: 7,
};
pub(crate) const F32: Fmt = Fmt {
    exp_bits: 8,
    man_bits: 23,
};
pub(crate) const F64: Fmt = Fmt {
    exp_bits: 11,
    man_bits: 52,
};

impl Fmt {
    pub fn width(self) -> u32 {
        1 + self.exp_bits + self.man_bits
    }
    pub fn mask(self) -> u64 {
        if self.width() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width()) - 1
        }
    }
    pub fn bias(self) -> i32 {
        (1i32 << (self.exp_bits - 1)) - 1
    }
    /// The exponent of the smallest normal number.
    pub fn emin(self) -> i32 {
        1 - self.bias()
    }
    fn max_biased(self) -> u64 {
        (1u64 << self.exp_bits) - 1
    }
    pub fn sign_bit(self) -> u64 {
        1u64 << (self.width() - 1)
    }
    fn frac_mask(self) -> u64 {
        (1u64 << self.man_bits) - 1
    }
    /// NVIDIA's canonical NaN: sign clear, every other bit set (`0x7FFFFFFF` for `.f32`).
    pub fn canonical_nan(self) -> u64 {
        self.sign_bit() - 1
    }
    pub fn inf(self, neg: bool) -> u64 {
        self.sign(neg) | (self.max_biased() << self.man_bits)
    }
    pub fn zero(self, neg: bool) -> u64 {
        self.sign(neg)
    }
    pub fn one(self) -> u64 {
        (self.bias() as u64) << self.man_bits
    }
    pub fn max_finite(self, neg: bool) -> u64 {
        self.sign(neg) | ((self.max_biased() - 1) << self.man_bits) | self.frac_mask()
    }
    fn sign(self, neg: bool) -> u64 {
        if neg { self.sign_bit() } else { 0 }
    }
    pub fn is_neg(self, bits: u64) -> bool {
        bits & self.sign_bit() != 0
    }
    pub fn is_nan(self, bits: u64) -> bool {
        let bits = bits & self.mask();
        (bits & !self.sign_bit()) > self.inf(false)
    }
    pub fn is_subnormal(self, bits: u64) -> bool {
        let bits = bits & self.mask();
        (bits >> self.man_bits) & self.max_biased() == 0 && bits & self.frac_mask() != 0
    }
    /// `.ftz`: a subnormal becomes a zero of the same sign (PTX ISA 9.7.3, "Subnormal numbers").
    pub fn flush(self, bits: u64) -> u64 {
        let bits = bits & self.mask();
        if self.is_subnormal(bits) {
            bits & self.sign_bit()
        } else {
            bits
        }
    }
}

/// A binary rounding direction (IEEE 754-2008 4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Nearest, ties to even.
    Rn,
    /// Toward zero.
    Rz,
    /// Toward negative infinity.
    Rm,
    /// Toward positive infinity.
    Rp,
}

/// An unpacked floating-point datum; finite values are exactly `(-1)^neg * mant * 2^exp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Val {
    Nan,
    Inf(bool),
    Zero(bool),
    Fin { neg: bool, mant: u128, exp: i32 },
}

pub(crate) fn unpack(fmt: Fmt, bits: u64) -> Val {
    let bits = bits & fmt.mask();
    let neg = fmt.is_neg(bits);
    let biased = (bits >> fmt.man_bits) & fmt.max_biased();
    let frac = bits & fmt.frac_mask();
    let shift = fmt.bias() + fmt.man_bits as i32;
    if biased == fmt.max_biased() {
        if frac == 0 { Val::Inf(neg) } else { Val::Nan }
    } else if biased == 0 {
        if frac == 0 {
            Val::Zero(neg)
        } else {
            Val::Fin {
                neg,
                mant: frac as u128,
                exp: 1 - shift,
            }
        }
    } else {
        Val::Fin {
            neg,
            mant: (frac | (1u64 << fmt.man_bits)) as u128,
            exp: biased as i32 - shift,
        }
    }
}

/// Drops the low `shift` (>= 1) bits of `mant`, returning the kept bits, how the dropped part
/// (plus `sticky`, an extra non-zero amount below all of them) compares with half of the kept
/// unit, and whether anything was dropped at all.
fn shift_round(mant: u128, shift: u32, sticky: bool) -> (u128, Ordering, bool) {
    let msb = 127 - mant.leading_zeros(); // mant != 0 by the callers
    if shift > msb + 1 {
        // The whole value is below half a unit.
        return (0, Ordering::Less, true);
    }
    let (kept, rem) = if shift >= 128 {
        (0, mant)
    } else {
        (mant >> shift, mant & ((1u128 << shift) - 1))
    };
    let half = 1u128 << (shift - 1);
    let cmp = match rem.cmp(&half) {
        Ordering::Equal if sticky => Ordering::Greater,
        c => c,
    };
    (kept, cmp, rem != 0 || sticky)
}

/// Whether rounding increments the kept magnitude.
fn round_up(mode: Mode, neg: bool, odd: bool, cmp: Ordering, inexact: bool) -> bool {
    match mode {
        Mode::Rn => cmp == Ordering::Greater || (cmp == Ordering::Equal && odd),
        Mode::Rz => false,
        Mode::Rp => inexact && !neg,
        Mode::Rm => inexact && neg,
    }
}

fn overflow(fmt: Fmt, neg: bool, mode: Mode) -> u64 {
    let to_inf = match mode {
        Mode::Rn => true,
        Mode::Rz => false,
        Mode::Rp => !neg,
        Mode::Rm => neg,
    };
    if to_inf {
        fmt.inf(neg)
    } else {
        fmt.max_finite(neg)
    }
}

/// Rounds `(-1)^neg * (mant + s) * 2^exp` into `fmt`, where `s` is 0 if `!sticky` and otherwise
/// some amount in (0, 1). Callers that set `sticky` keep at least `man_bits + 3` significant
/// bits in `mant`, so the rounding position lies at least two bits above the sticky part.
/// A zero `mant` gives a zero of sign `neg` (callers apply IEEE's exact-zero sign rules).
pub(crate) fn round(fmt: Fmt, neg: bool, mant: u128, exp: i32, sticky: bool, mode: Mode) -> u64 {
    if mant == 0 {
        return fmt.zero(neg);
    }
    let p = fmt.man_bits as i32;
    let msb = 127 - mant.leading_zeros() as i32;
    let e = msb.saturating_add(exp);
    // Exponent of the unit in the last place of the result (gradual underflow below emin).
    let q = (e - p).max(fmt.emin() - p);
    let shift = q as i64 - exp as i64;
    let (mut r, cmp, inexact) = if shift <= 0 {
        // Exact: the value needs no more than p + 1 bits at this quantum.
        (mant << ((-shift) as u32).min(127), Ordering::Less, sticky)
    } else if shift > 200 {
        (0, Ordering::Less, true)
    } else {
        shift_round(mant, shift as u32, sticky)
    };
    if round_up(mode, neg, r & 1 == 1, cmp, inexact) {
        r += 1;
    }
    let mut q = q;
    if r >> (p + 1) != 0 {
        r >>= 1;
        q += 1;
    }
    if r == 0 {
        return fmt.zero(neg);
    }
    let (biased, frac) = if r >> p != 0 {
        let biased = q as i64 + p as i64 + fmt.bias() as i64;
        (biased, (r as u64) & fmt.frac_mask())
    } else {
        (0, r as u64)
    };
    if biased >= fmt.max_biased() as i64 {
        return overflow(fmt, neg, mode);
    }
    fmt.sign(neg) | ((biased as u64) << fmt.man_bits) | frac
}

/// Normalises a non-zero mantissa of at most 125 bits so its top bit is bit 125.
fn normalize(mant: u128, exp: i32) -> (u128, i32) {
    let s = mant.leading_zeros() as i32 - 2;
    if s >= 0 {
        (mant << s, exp - s)
    } else {
        (mant >> -s, exp - s)
    }
}

/// The sum of two non-zero finite values, exact up to a jammed last bit that lies far below any
/// rounding position (so rounding the result is correct in every mode; see `round`'s contract).
/// A zero mantissa means the exact sum is zero.
fn add_exact(a: (bool, u128, i32), b: (bool, u128, i32)) -> (bool, u128, i32) {
    let (an, am, ae) = a;
    let (bn, bm, be) = b;
    let (am, ae) = normalize(am, ae);
    let (bm, be) = normalize(bm, be);
    // x is the operand with the larger exponent (both are normalised, so also >= magnitude
    // unless the exponents are equal).
    let ((xn, xm, xe), (yn, ym, ye)) = if ae >= be {
        ((an, am, ae), (bn, bm, be))
    } else {
        ((bn, bm, be), (an, am, ae))
    };
    let d = (xe as i64 - ye as i64) as u64;
    let ya = if d == 0 {
        ym
    } else if d >= 126 {
        1 // only a sticky remainder is left: jam it
    } else {
        let lost = ym & ((1u128 << d) - 1) != 0;
        (ym >> d) | lost as u128
    };
    if xn == yn {
        (xn, xm + ya, xe)
    } else if xm >= ya {
        (xn, xm - ya, xe)
    } else {
        (yn, ya - xm, xe)
    }
}

/// IEEE sum of two values in `fmt`.
pub(crate) fn add(fmt: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    match (unpack(fmt, a), unpack(fmt, b)) {
        (Val::Nan, _) | (_, Val::Nan) => fmt.canonical_nan(),
        (Val::Inf(x), Val::Inf(y)) => {
            if x == y {
                fmt.inf(x)
            } else {
                fmt.canonical_nan()
            }
        }
        (Val::Inf(x), _) | (_, Val::Inf(x)) => fmt.inf(x),
        (Val::Zero(x), Val::Zero(y)) => fmt.zero(if x == y { x } else { mode == Mode::Rm }),
        (Val::Zero(_), Val::Fin { .. }) => b & fmt.mask(),
        (Val::Fin { .. }, Val::Zero(_)) => a & fmt.mask(),
        (
            Val::Fin {
                neg: an,
                mant: am,
                exp: ae,
            },
            Val::Fin {
                neg: bn,
                mant: bm,
                exp: be,
            },
        ) => {
            let (n, m, e) = add_exact((an, am, ae), (bn, bm, be));
            if m == 0 {
                fmt.zero(mode == Mode::Rm)
            } else {
                round(fmt, n, m, e, false, mode)
            }
        }
    }
}

pub(crate) fn sub(fmt: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    add(fmt, a, (b & fmt.mask()) ^ fmt.sign_bit(), mode)
}

pub(crate) fn mul(fmt: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    match (unpack(fmt, a), unpack(fmt, b)) {
        (Val::Nan, _) | (_, Val::Nan) => fmt.canonical_nan(),
        (Val::Inf(_), Val::Zero(_)) | (Val::Zero(_), Val::Inf(_)) => fmt.canonical_nan(),
        (Val::Inf(x), Val::Inf(y)) => fmt.inf(x != y),
        (Val::Inf(x), Val::Fin { neg: y, .. }) | (Val::Fin { neg: y, .. }, Val::Inf(x)) => {
            fmt.inf(x != y)
        }
        (Val::Zero(x), Val::Zero(y)) => fmt.zero(x != y),
        (Val::Zero(x), Val::Fin { neg: y, .. }) | (Val::Fin { neg: y, .. }, Val::Zero(x)) => {
            fmt.zero(x != y)
        }
        (
            Val::Fin {
                neg: an,
                mant: am,
                exp: ae,
            },
            Val::Fin {
                neg: bn,
                mant: bm,
                exp: be,
            },
        ) => round(fmt, an != bn, am * bm, ae + be, false, mode),
    }
}

/// Fused multiply-add `a * b + c` with a single rounding.
pub(crate) fn fma(fmt: Fmt, a: u64, b: u64, c: u64, mode: Mode) -> u64 {
    let (va, vb, vc) = (unpack(fmt, a), unpack(fmt, b), unpack(fmt, c));
    if matches!(va, Val::Nan) || matches!(vb, Val::Nan) || matches!(vc, Val::Nan) {
        return fmt.canonical_nan();
    }
    // The product as a value class.
    let prod = match (va, vb) {
        (Val::Inf(_), Val::Zero(_)) | (Val::Zero(_), Val::Inf(_)) => return fmt.canonical_nan(),
        (Val::Inf(x), Val::Inf(y)) => Val::Inf(x != y),
        (Val::Inf(x), Val::Fin { neg: y, .. }) | (Val::Fin { neg: y, .. }, Val::Inf(x)) => {
            Val::Inf(x != y)
        }
        (Val::Zero(x), Val::Zero(y)) => Val::Zero(x != y),
        (Val::Zero(x), Val::Fin { neg: y, .. }) | (Val::Fin { neg: y, .. }, Val::Zero(x)) => {
            Val::Zero(x != y)
        }
        (
            Val::Fin {
                neg: an,
                mant: am,
                exp: ae,
            },
            Val::Fin {
                neg: bn,
                mant: bm,
                exp: be,
            },
        ) => Val::Fin {
            neg: an != bn,
            mant: am * bm,
            exp: ae + be,
        },
        _ => return fmt.canonical_nan(),
    };
    match (prod, vc) {
        (Val::Inf(x), Val::Inf(y)) => {
            if x == y {
                fmt.inf(x)
            } else {
                fmt.canonical_nan()
            }
        }
        (Val::Inf(x), _) | (_, Val::Inf(x)) => fmt.inf(x),
        (Val::Zero(x), Val::Zero(y)) => fmt.zero(if x == y { x } else { mode == Mode::Rm }),
        (Val::Zero(_), _) => c & fmt.mask(),
        (Val::Fin { neg, mant, exp }, Val::Zero(_)) => round(fmt, neg, mant, exp, false, mode),
        (
            Val::Fin {
                neg: pn,
                mant: pm,
                exp: pe,
            },
            Val::Fin {
                neg: cn,
                mant: cm,
                exp: ce,
            },
        ) => {
            let (n, m, e) = add_exact((pn, pm, pe), (cn, cm, ce));
            if m == 0 {
                fmt.zero(mode == Mode::Rm)
            } else {
                round(fmt, n, m, e, false, mode)
            }
        }
        _ => fmt.canonical_nan(),
    }
}

pub(crate) fn div(fmt: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    match (unpack(fmt, a), unpack(fmt, b)) {
        (Val::Nan, _) | (_, Val::Nan) => fmt.canonical_nan(),
        (Val::Inf(_), Val::Inf(_)) | (Val::Zero(_), Val::Zero(_)) => fmt.canonical_nan(),
        (Val::Inf(x), Val::Zero(y)) => fmt.inf(x != y),
        (Val::Inf(x), Val::Fin { neg: y, .. }) => fmt.inf(x != y),
        (Val::Zero(x), Val::Inf(y)) => fmt.zero(x != y),
        (Val::Fin { neg: x, .. }, Val::Inf(y)) => fmt.zero(x != y),
        (Val::Fin { neg: x, .. }, Val::Zero(y)) => fmt.inf(x != y),
        (Val::Zero(x), Val::Fin { neg: y, .. }) => fmt.zero(x != y),
        (
            Val::Fin {
                neg: an,
                mant: am,
                exp: ae,
            },
            Val::Fin {
                neg: bn,
                mant: bm,
                exp: be,
            },
        ) => {
            // Dividend's top bit at 126: the quotient keeps >= 126 - 53 = 73 bits.
            let s = am.leading_zeros() as i32 - 1;
            let n = am << s;
            let (q, r) = (n / bm, n % bm);
            round(fmt, an != bn, q, ae - s - be, r != 0, mode)
        }
    }
}

pub(crate) fn sqrt(fmt: Fmt, a: u64, mode: Mode) -> u64 {
    match unpack(fmt, a) {
        Val::Nan | Val::Inf(true) | Val::Fin { neg: true, .. } => fmt.canonical_nan(),
        Val::Inf(false) => fmt.inf(false),
        Val::Zero(neg) => fmt.zero(neg),
        Val::Fin {
            neg: false,
            mant,
            exp,
        } => {
            // Shift the mantissa up to 125/126 bits with an even exponent: the integer square
            // root then has ~63 bits, far more than any format needs.
            let mut k = mant.leading_zeros() as i32 - 2;
            if (exp - k).rem_euclid(2) != 0 {
                k += 1;
            }
            let m = mant << k;
            let s = m.isqrt();
            let rem = m - s * s;
            round(fmt, false, s, (exp - k) / 2, rem != 0, mode)
        }
    }
}

/// Converts a value of `from` into `to` with rounding (exact when widening). NaN becomes the
/// canonical NaN of `to`.
pub(crate) fn convert(from: Fmt, to: Fmt, a: u64, mode: Mode) -> u64 {
    match unpack(from, a) {
        Val::Nan => to.canonical_nan(),
        Val::Inf(neg) => to.inf(neg),
        Val::Zero(neg) => to.zero(neg),
        Val::Fin { neg, mant, exp } => round(to, neg, mant, exp, false, mode),
    }
}

/// Rounds a finite value to an integral value (IEEE roundToIntegral): returns the integer
/// magnitude, or `None` when it is at least 2^100 (callers saturate).
pub(crate) fn round_integral(neg: bool, mant: u128, exp: i32, mode: Mode) -> Option<u128> {
    if mant == 0 {
        return Some(0);
    }
    if exp >= 0 {
        let msb = 127 - mant.leading_zeros() as i32;
        return if msb + exp >= 100 {
            None
        } else {
            Some(mant << exp)
        };
    }
    let shift = (-(exp as i64)) as u64;
    let (r, cmp, inexact) = if shift > 200 {
        (0, Ordering::Less, true)
    } else {
        shift_round(mant, shift as u32, false)
    };
    let r = if round_up(mode, neg, r & 1 == 1, cmp, inexact) {
        r + 1
    } else {
        r
    };
    if r >> 100 != 0 { None } else { Some(r) }
}

/// `cvt.rni/rzi/rmi/rpi.fX.fX`: rounds to an integral value in the same format, keeping the sign
/// of zero results (IEEE roundToIntegral).
pub(crate) fn round_to_integral_same(fmt: Fmt, a: u64, mode: Mode) -> u64 {
    match unpack(fmt, a) {
        Val::Nan => fmt.canonical_nan(),
        Val::Inf(_) | Val::Zero(_) => a & fmt.mask(),
        Val::Fin { neg, mant, exp } => match round_integral(neg, mant, exp, mode) {
            // Too large to have a fraction: already integral.
            None => a & fmt.mask(),
            Some(0) => fmt.zero(neg),
            Some(r) => round(fmt, neg, r, 0, false, Mode::Rn),
        },
    }
}

/// Exact conversion of any finite or special value of `fmt` to `f64` (every supported format is
/// a subset of binary64).
pub(crate) fn to_f64(fmt: Fmt, a: u64) -> f64 {
    f64::from_bits(convert(fmt, F64, a, Mode::Rn))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_op(op: fn(Fmt, u64, u64, Mode) -> u64, a: f32, b: f32, mode: Mode) -> f32 {
        f32::from_bits(op(F32, a.to_bits() as u64, b.to_bits() as u64, mode) as u32)
    }

    #[test]
    fn nearest_matches_hardware_on_simple_values() {
        assert_eq!(f32_op(add, 1.0, 2.0, Mode::Rn), 3.0);
        assert_eq!(f32_op(mul, 1.5, -2.0, Mode::Rn), -3.0);
        assert_eq!(f32_op(div, 1.0, 3.0, Mode::Rn), 1.0 / 3.0);
        assert_eq!(f32_op(sub, 1.0, 1.0, Mode::Rn).to_bits(), 0);
        assert_eq!(f32_op(sub, 1.0, 1.0, Mode::Rm).to_bits(), 0x8000_0000);
    }

    #[test]
    fn directed_rounding_brackets_one_third() {
        let lo = f32_op(div, 1.0, 3.0, Mode::Rz);
        let hi = f32_op(div, 1.0, 3.0, Mode::Rp);
        assert_eq!(lo, f32_op(div, 1.0, 3.0, Mode::Rm));
        assert_eq!(hi.to_bits(), lo.to_bits() + 1);
        assert!((lo as f64) < 1.0 / 3.0 && (hi as f64) > 1.0 / 3.0);
    }

    #[test]
    fn overflow_and_underflow_by_mode() {
        let max = f32::MAX;
        assert_eq!(f32_op(add, max, max, Mode::Rn), f32::INFINITY);
        assert_eq!(f32_op(add, max, max, Mode::Rz), max);
        assert_eq!(f32_op(add, -max, -max, Mode::Rp), -max);
        assert_eq!(f32_op(add, -max, -max, Mode::Rm), f32::NEG_INFINITY);
        let tiny = f32::from_bits(1);
        assert_eq!(f32_op(mul, tiny, 0.5, Mode::Rn).to_bits(), 0); // tie to even: 0
        assert_eq!(f32_op(mul, tiny, 0.75, Mode::Rn).to_bits(), 1);
        assert_eq!(f32_op(mul, tiny, 0.25, Mode::Rp).to_bits(), 1);
        assert_eq!(f32_op(mul, -tiny, 0.25, Mode::Rz).to_bits(), 0x8000_0000);
    }

    #[test]
    fn sqrt_and_integral() {
        assert_eq!(sqrt(F64, 2f64.to_bits(), Mode::Rn), 2f64.sqrt().to_bits());
        assert_eq!(sqrt(F32, (-1f32).to_bits() as u64, Mode::Rn), 0x7FFF_FFFF);
        assert_eq!(
            round_to_integral_same(F32, 2.5f32.to_bits() as u64, Mode::Rn),
            2f32.to_bits() as u64
        );
        assert_eq!(
            round_to_integral_same(F32, (-0.5f32).to_bits() as u64, Mode::Rp),
            0x8000_0000
        );
        assert_eq!(round_integral(false, 3, -1, Mode::Rn), Some(2));
    }

    // NaN is recognised from the bits, not with `is_nan`: in a release build LLVM may fold
    // `is_nan(sqrt(x))` on the assumption that no signalling NaN reaches it, and a signalling
    // NaN input then kept its host bits (`cargo test --release` failed on `sqrt(sNaN)`).
    fn canon32(x: f32) -> u64 {
        let b = x.to_bits();
        if b & 0x7F80_0000 == 0x7F80_0000 && b & 0x007F_FFFF != 0 {
            0x7FFF_FFFF
        } else {
            b as u64
        }
    }

    fn canon64(x: f64) -> u64 {
        let b = x.to_bits();
        if b & 0x7FF0_0000_0000_0000 == 0x7FF0_0000_0000_0000 && b & 0x000F_FFFF_FFFF_FFFF != 0 {
            0x7FFF_FFFF_FFFF_FFFF
        } else {
            b
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20000))]

        /// The soft-float core in `.rn` agrees with the host FPU bit for bit.
        #[test]
        fn soft_rn_matches_host_f32(a: u32, b: u32, c: u32) {
            let (x, y, z) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
            let (a, b, c) = (a as u64, b as u64, c as u64);
            proptest::prop_assert_eq!(add(F32, a, b, Mode::Rn), canon32(x + y));
            proptest::prop_assert_eq!(sub(F32, a, b, Mode::Rn), canon32(x - y));
            proptest::prop_assert_eq!(mul(F32, a, b, Mode::Rn), canon32(x * y));
            proptest::prop_assert_eq!(div(F32, a, b, Mode::Rn), canon32(x / y));
            proptest::prop_assert_eq!(fma(F32, a, b, c, Mode::Rn), canon32(x.mul_add(y, z)));
            proptest::prop_assert_eq!(sqrt(F32, a, Mode::Rn), canon32(x.sqrt()));
            proptest::prop_assert_eq!(convert(F32, F64, a, Mode::Rn), canon64(x as f64));
        }

        #[test]
        fn soft_rn_matches_host_f64(a: u64, b: u64, c: u64) {
            let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
            proptest::prop_assert_eq!(add(F64, a, b, Mode::Rn), canon64(x + y));
            proptest::prop_assert_eq!(mul(F64, a, b, Mode::Rn), canon64(x * y));
            proptest::prop_assert_eq!(div(F64, a, b, Mode::Rn), canon64(x / y));
            proptest::prop_assert_eq!(fma(F64, a, b, c, Mode::Rn), canon64(x.mul_add(y, z)));
            proptest::prop_assert_eq!(sqrt(F64, a, Mode::Rn), canon64(x.sqrt()));
            proptest::prop_assert_eq!(convert(F64, F32, a, Mode::Rn), canon32(x as f32));
        }

        /// Close operands exercise cancellation and ties.
        #[test]
        fn soft_rn_matches_host_on_close_operands(a: u32, d in -3i64..3, c: u32) {
            let b = (a as i64 + d).clamp(0, u32::MAX as i64) as u32;
            let (x, y, z) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
            let (a, b, c) = (a as u64, b as u64, c as u64);
            proptest::prop_assert_eq!(sub(F32, a, b, Mode::Rn), canon32(x - y));
            proptest::prop_assert_eq!(fma(F32, a, b ^ 0x8000_0000, c, Mode::Rn), canon32(x.mul_add(-y, z)));
            proptest::prop_assert_eq!(fma(F32, a, a, b ^ 0x8000_0000, Mode::Rn), canon32(x.mul_add(x, -y)));
        }
    }
}
