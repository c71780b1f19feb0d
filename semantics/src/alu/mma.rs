//! The arithmetic of the warp-level matrix instructions (PTX ISA 9.7.14.5 "Warp Level Matrix
//! Multiply-Accumulate Instructions"): where each element of a lane's `mma` fragments sits in
//! the matrices ("Matrix Fragments for mma.m16n8k*" and "for mma.m8n8k4 with .f64"), the
//! multiply-accumulate `D = A·B + C` over the gathered matrices, and the `ldmatrix` fragment
//! layout (9.7.14.5.15).
//!
//! The ISA leaves the order of the additions unspecified. cudasem accumulates in `k` order from
//! `C`, one fused multiply-add per product (single rounding, to nearest even) in `.f32` for the
//! `.f16`/`.bf16` forms (their products are exact in `.f32`), in `.f64` for `.f64`; a `.f16`
//! `C` is widened first and `D` rounded to `.f16` once at the end. Integer forms are exact
//! (wrapping modulo 2^32, or clamped with `.satfinite`). docs/deviations.md says so.

use super::Carry;
use crate::program::{ArithFlags, MmaElem, MmaShape, Rounding, TernaryOp};
use ptx_parser::ScalarType;

/// The lanes of a warp taking part in `mma` and `ldmatrix` (the layouts are for 32 lanes).
pub const LANES: usize = 32;

/// Elements of one matrix a 32-bit register holds (`.f64`: one per 64-bit register).
pub fn per_reg(e: MmaElem) -> usize {
    match e.size() {
        1 => 4,
        2 => 2,
        _ => 1,
    }
}

/// Registers one lane holds of an `rows × cols` matrix of `e`.
pub fn regs(e: MmaElem, rows: usize, cols: usize) -> usize {
    rows * cols / LANES / per_reg(e)
}

/// `(row, col)` of element `i` of lane `lane`'s fragment of `A` (PTX ISA "Matrix Fragments for
/// mma.m16n8k8/k16/k32": `groupID = laneid >> 2`, `threadID_in_group = laneid % 4`).
pub fn a_pos(shape: MmaShape, e: MmaElem, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    if shape == MmaShape::M8N8K4 {
        return (g, t);
    }
    // `n` elements per 32-bit register: registers alternate between rows g and g+8, and every
    // second pair of registers moves to the next 4n columns.
    let n = per_reg(e);
    (g + 8 * ((i / n) & 1), n * t + i % n + 4 * n * (i / (2 * n)))
}

/// `(row, col)` of element `i` of lane `lane`'s fragment of `B` (column-major fragments).
pub fn b_pos(shape: MmaShape, e: MmaElem, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    if shape == MmaShape::M8N8K4 {
        return (t, g);
    }
    let n = per_reg(e);
    (n * t + i % n + 4 * n * (i / n), g)
}

/// `(row, col)` of element `i` of lane `lane`'s fragment of `C` and `D`.
pub fn c_pos(shape: MmaShape, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    if shape == MmaShape::M8N8K4 {
        return (g, 2 * t + i);
    }
    (g + 8 * (i / 2), 2 * t + i % 2)
}

/// Element `i` of a fragment held in `regs` (lowest bits first within a register).
fn element(regs: &[u64], e: MmaElem, i: usize) -> u64 {
    let n = per_reg(e);
    let bits = e.size() * 8;
    let word = regs.get(i / n).copied().unwrap_or(0);
    if bits == 64 {
        word
    } else {
        (word >> ((i % n) as u32 * bits)) & ((1u64 << bits) - 1)
    }
}

/// A numeric element value: float elements as `.f32` (or `.f64`) bits, integers as `i64`.
fn widen(e: MmaElem, v: u64) -> u64 {
    match e {
        MmaElem::F16 => super::cvt(ScalarType::F32, ScalarType::F16, ArithFlags::default(), v),
        // bfloat16 is the high half of a binary32.
        MmaElem::Bf16 => v << 16,
        MmaElem::F32 | MmaElem::F64 => v,
        MmaElem::S8 => v as u8 as i8 as i64 as u64,
        MmaElem::U8 => v,
        MmaElem::S32 => v as u32 as i32 as i64 as u64,
    }
}

/// One lane's operands: `a`, `b`, `c` register values, lane-major (`lane * count + k`).
pub struct MmaInput<'a> {
    pub a: &'a [u64],
    pub b: &'a [u64],
    pub c: &'a [u64],
}

/// `D = A·B + C` (PTX ISA 9.7.14.5.14 `mma`): gathers the matrices from the 32 lanes'
/// fragments, multiplies and accumulates, and returns `D`'s fragments lane-major
/// (`regs(d_ty, M, N)` registers per lane).
#[allow(clippy::too_many_arguments)]
pub fn mma(
    shape: MmaShape,
    a_ty: MmaElem,
    b_ty: MmaElem,
    c_ty: MmaElem,
    d_ty: MmaElem,
    satfinite: bool,
    input: &MmaInput<'_>,
) -> Vec<u64> {
    let (m, n, k) = shape.dims();
    let (na, nb, nc) = (regs(a_ty, m, k), regs(b_ty, k, n), regs(c_ty, m, n));
    let nd = regs(d_ty, m, n);
    let mut a = vec![0u64; m * k];
    let mut b = vec![0u64; k * n];
    let mut c = vec![0u64; m * n];
    for lane in 0..LANES {
        let ra = &input.a[lane * na..(lane + 1) * na];
        for i in 0..m * k / LANES {
            let (r, col) = a_pos(shape, a_ty, lane, i);
            a[r * k + col] = widen(a_ty, element(ra, a_ty, i));
        }
        let rb = &input.b[lane * nb..(lane + 1) * nb];
        for i in 0..k * n / LANES {
            let (r, col) = b_pos(shape, b_ty, lane, i);
            b[r * n + col] = widen(b_ty, element(rb, b_ty, i));
        }
        let rc = &input.c[lane * nc..(lane + 1) * nc];
        for i in 0..m * n / LANES {
            let (r, col) = c_pos(shape, lane, i);
            c[r * n + col] = widen(c_ty, element(rc, c_ty, i));
        }
    }
    let fma_ty = if d_ty == MmaElem::F64 {
        ScalarType::F64
    } else {
        ScalarType::F32
    };
    let flags = ArithFlags {
        rounding: Some(Rounding::Rn),
        ..ArithFlags::default()
    };
    let mut d = vec![0u64; m * n];
    for r in 0..m {
        for col in 0..n {
            let acc = c[r * n + col];
            d[r * n + col] = match d_ty {
                MmaElem::S32 => {
                    let mut s = acc as i64;
                    for kk in 0..k {
                        s += (a[r * k + kk] as i64) * (b[kk * n + col] as i64);
                    }
                    if satfinite {
                        s.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32 as u64
                    } else {
                        s as i32 as u32 as u64
                    }
                }
                _ => {
                    let mut acc = acc;
                    let mut carry: Carry = false;
                    for kk in 0..k {
                        acc = super::ternary(
                            TernaryOp::Fma,
                            fma_ty,
                            flags,
                            a[r * k + kk],
                            b[kk * n + col],
                            acc,
                            &mut carry,
                        );
                    }
                    if d_ty == MmaElem::F16 {
                        super::cvt(ScalarType::F16, ScalarType::F32, flags, acc)
                    } else {
                        acc
                    }
                }
            };
        }
    }
    let per = per_reg(d_ty);
    let bits = d_ty.size() * 8;
    let mut out = vec![0u64; LANES * nd];
    for lane in 0..LANES {
        for i in 0..m * n / LANES {
            let (r, col) = c_pos(shape, lane, i);
            let v = d[r * n + col];
            let slot = &mut out[lane * nd + i / per];
            if bits == 64 {
                *slot = v;
            } else {
                *slot |= (v & ((1u64 << bits) - 1)) << ((i % per) as u32 * bits);
            }
        }
    }
    out
}

/// `ldmatrix` (PTX ISA 9.7.14.5.15): `rows[r]` holds row `r` (eight 16-bit elements, lowest
/// first) of one 8×8 matrix; returns the 32-bit register each lane receives: elements `2·(l%4)`
/// and `2·(l%4)+1` of row `l/4` (low half first), or with `.trans` of the transposed matrix
/// (column `l/4`, rows `2·(l%4)` and `2·(l%4)+1`).
pub fn ldmatrix_fragment(rows: &[[u16; 8]; 8], trans: bool, lane: usize) -> u64 {
    let (g, t) = (lane / 4, lane % 4);
    let (lo, hi) = if trans {
        (rows[2 * t][g], rows[2 * t + 1][g])
    } else {
        (rows[g][2 * t], rows[g][2 * t + 1])
    };
    lo as u64 | (hi as u64) << 16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every matrix element is some lane's fragment element exactly once.
    #[test]
    fn fragments_cover_each_matrix_once() {
        let cases = [
            (MmaShape::M16N8K16, MmaElem::F16),
            (MmaShape::M16N8K8, MmaElem::Bf16),
            (MmaShape::M16N8K32, MmaElem::S8),
            (MmaShape::M16N8K16, MmaElem::U8),
            (MmaShape::M8N8K4, MmaElem::F64),
        ];
        for (shape, e) in cases {
            let (m, n, k) = shape.dims();
            let mut seen_a = vec![0; m * k];
            let mut seen_b = vec![0; k * n];
            let mut seen_c = vec![0; m * n];
            for lane in 0..LANES {
                for i in 0..m * k / LANES {
                    let (r, c) = a_pos(shape, e, lane, i);
                    seen_a[r * k + c] += 1;
                }
                for i in 0..k * n / LANES {
                    let (r, c) = b_pos(shape, e, lane, i);
                    seen_b[r * n + c] += 1;
                }
                for i in 0..m * n / LANES {
                    let (r, c) = c_pos(shape, lane, i);
                    seen_c[r * n + c] += 1;
                }
            }
            assert!(seen_a.iter().all(|&s| s == 1), "{shape:?} A");
            assert!(seen_b.iter().all(|&s| s == 1), "{shape:?} B");
            assert!(seen_c.iter().all(|&s| s == 1), "{shape:?} C");
        }
    }

    /// Packs the matrix `m` (row-major, `cols` wide, elements as bits of `e`) into each lane's
    /// fragment registers with `pos`.
    fn fragments(
        m: &[u64],
        cols: usize,
        e: MmaElem,
        count: usize,
        pos: impl Fn(usize, usize) -> (usize, usize),
    ) -> Vec<u64> {
        let per = per_reg(e);
        let bits = e.size() * 8;
        let regs = count / per;
        let mut out = vec![0u64; LANES * regs];
        for lane in 0..LANES {
            for i in 0..count {
                let (r, c) = pos(lane, i);
                let v = m[r * cols + c] & (u64::MAX >> (64 - bits));
                out[lane * regs + i / per] |= v << ((i % per) as u32 * bits);
            }
        }
        out
    }

    /// `.f16` accumulators: `C` widened, `D` rounded to `.f16` once; 1 + 2048 is not an `.f16`
    /// (the spacing there is 2), so D = 2049 rounds to even, 2048.
    #[test]
    fn f16_accumulators_round_once_at_the_end() {
        let shape = MmaShape::M16N8K16;
        let one = half::f16::from_f32(1.0).to_bits() as u64;
        let big = half::f16::from_f32(2048.0).to_bits() as u64;
        // A = ones in column 0 only, B = ones in row 0: A.B = 1 everywhere; C = 2048.
        let a: Vec<u64> = (0..16 * 16)
            .map(|i| if i % 16 == 0 { one } else { 0 })
            .collect();
        let b: Vec<u64> = (0..16 * 8).map(|i| if i < 8 { one } else { 0 }).collect();
        let c = vec![big; 16 * 8];
        let f = MmaElem::F16;
        let input = MmaInput {
            a: &fragments(&a, 16, f, 8, |l, i| a_pos(shape, f, l, i)),
            b: &fragments(&b, 8, f, 4, |l, i| b_pos(shape, f, l, i)),
            c: &fragments(&c, 8, f, 4, |l, i| c_pos(shape, l, i)),
        };
        let d = mma(shape, f, f, f, f, false, &input);
        assert_eq!(d.len(), LANES * 2);
        assert!(d.iter().all(|&w| w == big | big << 16), "{d:x?}");
        // With `.f32` accumulators the sum is exact.
        let c32 = vec![2048f32.to_bits() as u64; 16 * 8];
        let input = MmaInput {
            c: &fragments(&c32, 8, MmaElem::F32, 4, |l, i| c_pos(shape, l, i)),
            ..input
        };
        let d = mma(shape, f, f, MmaElem::F32, MmaElem::F32, false, &input);
        assert!(d.iter().all(|&w| w == 2049f32.to_bits() as u64), "{d:x?}");
    }

    /// Integer forms wrap modulo 2^32, or clamp with `.satfinite`.
    #[test]
    fn integer_results_wrap_or_saturate() {
        let shape = MmaShape::M16N8K32;
        let (s8, s32) = (MmaElem::S8, MmaElem::S32);
        let a = vec![127u64; 16 * 32];
        let b = vec![127u64; 32 * 8];
        let c = vec![i32::MAX as u32 as u64; 16 * 8];
        let input = MmaInput {
            a: &fragments(&a, 32, s8, 16, |l, i| a_pos(shape, s8, l, i)),
            b: &fragments(&b, 8, s8, 8, |l, i| b_pos(shape, s8, l, i)),
            c: &fragments(&c, 8, s32, 4, |l, i| c_pos(shape, l, i)),
        };
        let exact = i32::MAX as i64 + 32 * 127 * 127;
        let wrapped = mma(shape, s8, s8, s32, s32, false, &input);
        assert!(wrapped.iter().all(|&w| w == exact as i32 as u32 as u64));
        let clamped = mma(shape, s8, s8, s32, s32, true, &input);
        assert!(clamped.iter().all(|&w| w == i32::MAX as u32 as u64));
        // `.u8` reads 255 where `.s8` reads -1.
        let ones = vec![0xFFu64; 16 * 32];
        let u8e = MmaElem::U8;
        let input = MmaInput {
            a: &fragments(&ones, 32, u8e, 16, |l, i| a_pos(shape, u8e, l, i)),
            c: &fragments(&vec![0; 16 * 8], 8, s32, 4, |l, i| c_pos(shape, l, i)),
            ..input
        };
        let d = mma(shape, u8e, s8, s32, s32, false, &input);
        assert!(d.iter().all(|&w| w == (32 * 255 * 127) as u64));
    }

    /// Spot checks against the ISA's figures: m16n8k16 `.f16` A: lane 5 (group 1, thread 1)
    /// holds a0,a1 at row 1 columns 2,3; a6,a7 at row 9 columns 10,11. m16n8k32 `.s8` B: lane 6
    /// holds b4..b7 at rows 24..27 of column 1.
    #[test]
    fn fragments_match_the_figures() {
        assert_eq!(a_pos(MmaShape::M16N8K16, MmaElem::F16, 5, 0), (1, 2));
        assert_eq!(a_pos(MmaShape::M16N8K16, MmaElem::F16, 5, 7), (9, 11));
        assert_eq!(b_pos(MmaShape::M16N8K32, MmaElem::S8, 6, 4), (24, 1));
        assert_eq!(b_pos(MmaShape::M16N8K32, MmaElem::S8, 6, 7), (27, 1));
        assert_eq!(c_pos(MmaShape::M16N8K16, 31, 3), (15, 7));
    }
}
