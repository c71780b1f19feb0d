//! Packed-byte dot products and the scalar video instructions (PTX ISA 9.7.1 "Integer
//! Arithmetic Instructions: `dp4a`, `dp2a`"; "Scalar Video Instructions: `vadd vsub vabsdiff
//! vmin vmax vshl vshr vset`").
//!
//! Every value is computed exactly in `i64`/`i128` and the low 32 bits are written, as the ISA's
//! pseudo-code does.

use super::sext;
use crate::program::{Compare, Video, VideoOp, VideoSecondary, VideoSelect};

/// Element `i` of `bits`-wide lanes of `x`, sign- or zero-extended.
fn lane(x: u64, i: u32, bits: u32, signed: bool) -> i64 {
    let v = (x >> (i * bits)) & ((1u64 << bits) - 1);
    if signed { sext(v, bits) } else { v as i64 }
}

/// `dp4a.atype.btype d, a, b, c` (PTX ISA 9.7.1 `dp4a`), literally:
/// ```text
/// d = c; Va = extractAndSignOrZeroExt_4(a, .atype); Vb = extractAndSignOrZeroExt_4(b, .btype);
/// for (i = 0; i < 4; ++i) d += Va[i] * Vb[i];
/// ```
/// The sum wraps at 32 bits (`c` and `d` are `.u32` or `.s32`: the same bits).
pub(super) fn dp4a(a_signed: bool, b_signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let dot: i64 = (0..4)
        .map(|i| lane(a, i, 8, a_signed) * lane(b, i, 8, b_signed))
        .sum();
    (c as i64).wrapping_add(dot) as u64 & 0xFFFF_FFFF
}

/// `dp2a.mode.atype.btype d, a, b, c` (PTX ISA 9.7.1 `dp2a`), literally:
/// ```text
/// d = c; Va = extractAndSignOrZeroExt_2(a, .atype); Vb = extractAndSignOrZeroExt_4(b, .btype);
/// b_select = (.mode == .lo) ? 0 : 2;
/// for (i = 0; i < 2; ++i) d += Va[i] * Vb[b_select + i];
/// ```
pub(super) fn dp2a(hi: bool, a_signed: bool, b_signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let select = if hi { 2 } else { 0 };
    let dot: i64 = (0..2)
        .map(|i| lane(a, i, 16, a_signed) * lane(b, select + i, 8, b_signed))
        .sum();
    (c as i64).wrapping_add(dot) as u64 & 0xFFFF_FFFF
}

/// `partSelectSignExtend(x, signed, sel)`: the selected byte or half-word of a 32-bit operand
/// (the whole word without a selector), sign- or zero-extended to the ISA's `.s33` input value.
fn part(x: u64, signed: bool, sel: Option<VideoSelect>) -> i128 {
    let (i, bits) = match sel {
        None => (0, 32),
        Some(VideoSelect::B0) => (0, 8),
        Some(VideoSelect::B1) => (1, 8),
        Some(VideoSelect::B2) => (2, 8),
        Some(VideoSelect::B3) => (3, 8),
        Some(VideoSelect::H0) => (0, 16),
        Some(VideoSelect::H1) => (1, 16),
    };
    lane(x, i, bits, signed) as i128
}

/// A scalar video instruction (PTX ISA "Scalar Video Instructions"), literally:
/// ```text
/// ta = partSelectSignExtend(a, atype, asel); tb = partSelectSignExtend(b, btype, bsel);
/// tmp = ta OP tb;                        // vshl/vshr: tb = min(tb, 32) (.clamp) or tb & 0x1f
/// tmp = optSaturate(tmp, sat, isSigned(dtype), dsel);  // clamp to dtype's (or dsel's) range
/// d = optSecOp(op2, tmp, c);             // c extended by dtype's sign; .add .min .max
/// d = optMerge(dsel, tmp, c);            // the low byte/half of tmp into c at dsel
/// ```
/// and the low 32 bits of `d` are written. `vset` compares (1 or 0) and is unsigned. The ISA
/// calls the intermediate result `.s34`; for shifts, which can exceed 34 bits, cudasem keeps the
/// exact value (see the deviations in `alu`).
pub(super) fn scalar(v: Video, a: u64, b: u64, c: u64) -> u64 {
    let ta = part(a, v.a_signed, v.a_select);
    let tb = part(b, v.b_signed, v.b_select);
    let amount = |clamp: bool| {
        if clamp {
            tb.clamp(0, 32) as u32
        } else {
            (tb & 0x1F) as u32
        }
    };
    let tmp: i128 = match v.op {
        VideoOp::Add => ta + tb,
        VideoOp::Sub => ta - tb,
        VideoOp::AbsDiff => (ta - tb).abs(),
        VideoOp::Min => ta.min(tb),
        VideoOp::Max => ta.max(tb),
        VideoOp::Shl { clamp } => ta << amount(clamp),
        VideoOp::Shr { clamp } => ta >> amount(clamp),
        VideoOp::Set(cmp) => {
            let holds = match cmp {
                Compare::Eq => ta == tb,
                Compare::Ne => ta != tb,
                Compare::Lt => ta < tb,
                Compare::Le => ta <= tb,
                Compare::Gt => ta > tb,
                Compare::Ge => ta >= tb,
                // Float-only comparisons: the loader admits none for `vset`.
                _ => false,
            };
            holds as i128
        }
    };
    // optSaturate: the range of the destination part.
    let tmp = if v.sat {
        let bits = match v.d_select {
            None => 32,
            Some(VideoSelect::H0 | VideoSelect::H1) => 16,
            Some(_) => 8,
        };
        if v.d_signed {
            tmp.clamp(-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            tmp.clamp(0, (1i128 << bits) - 1)
        }
    } else {
        tmp
    };
    let tc = part(c, v.d_signed, None);
    let d = match (v.secondary, v.d_select) {
        (Some(VideoSecondary::Add), _) => tmp + tc,
        (Some(VideoSecondary::Min), _) => tmp.min(tc),
        (Some(VideoSecondary::Max), _) => tmp.max(tc),
        (None, None) => tmp,
        // optMerge: the low byte or half-word of tmp replaces that part of c.
        (None, Some(sel)) => {
            let (shift, mask) = match sel {
                VideoSelect::B0 => (0, 0xFF),
                VideoSelect::B1 => (8, 0xFF),
                VideoSelect::B2 => (16, 0xFF),
                VideoSelect::B3 => (24, 0xFF),
                VideoSelect::H0 => (0, 0xFFFF),
                VideoSelect::H1 => (16, 0xFFFF),
            };
            let merged = ((tmp as u64 & mask) << shift) | (c & !(mask << shift));
            merged as i128
        }
    };
    d as u64 & 0xFFFF_FFFF
}
