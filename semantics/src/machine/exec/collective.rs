//! Thread rules of warp-collective operations (thesis 5.4.2 `vote`; PTX ISA 9.7.12.8-9.7.12.12
//! `shfl`, `match`, `redux`, `activemask`): every executing lane contributes, the warp rule
//! (comm) combines, each lane receives its result.

use super::*;
use crate::machine::regs::Regs;
use crate::program::{ReduxOp, RegId};
use ptx_parser::ScalarType;

/// The lanes of one warp-collective step: the registers of the warp's level, what an operand
/// reads (special registers, frame addresses), and the executing lanes.
struct Lanes<'a> {
    regs: &'a mut Regs,
    ws: usize,
    sp: SpecialCtx,
    fb: &'a [u32],
    exec: u64,
}

impl<'a> Lanes<'a> {
    /// The fields under the names `lane_macros!` reads.
    fn parts(self) -> (&'a mut Regs, usize, SpecialCtx, &'a [u32], u64) {
        (self.regs, self.ws, self.sp, self.fb, self.exec)
    }

    /// Each executing lane's value of `a`, and the executing lanes its own membermask `mask`
    /// names (`match.sync` and `redux.sync` work among those).
    fn members(&self, a: &Src, mask: &Src) -> ([u64; 64], [u64; 64]) {
        let (regs, sp, fb) = (&*self.regs, &self.sp, self.fb);
        let mut vals = [0u64; 64];
        let mut parts = [0u64; 64];
        for l in lanes(self.exec) {
            vals[l] = read_src(regs, a, l, sp, fb);
            parts[l] = self.exec & read_src(regs, mask, l, sp, fb);
        }
        (vals, parts)
    }
}

/// (vote) and the other communication rules, thesis 5.4.2-5.4.3: `comm(vote vm _, t⃗) = (ε,
/// ⋃ t_regAddr ← vote(vm, t⃗))`, and alike for `shfl`, `match`, `redux`, `activemask`; `group`:
/// the lanes stepping together (the warp's active lanes under the SIMT stack).
pub(super) fn comm(
    cx: &mut Ctx,
    w: &mut Warp,
    level: usize,
    exec: u64,
    group: u64,
    op: &Op,
) -> Result<(), Fault> {
    let lvl = &mut w.levels[level];
    let ln = Lanes {
        regs: &mut lvl.regs,
        ws: cx.info.shape.warp_size as usize,
        sp: cx.special,
        fb: &lvl.frame_base[..],
        exec,
    };
    match op {
        Op::Vote {
            mode,
            dst,
            pred,
            mask,
        } => vote(ln, *mode, *dst, pred, mask.as_ref()),
        Op::ActiveMask { dst } => {
            let Lanes { regs, exec, .. } = ln;
            for l in lanes(exec) {
                regs.set(dst.0 as usize, l, group);
            }
        }
        Op::Shfl {
            mode,
            dst,
            dst_pred,
            a,
            b,
            c,
            ..
        } => shfl(ln, mode, (dst, dst_pred), [a, b, c]),
        Op::Match {
            all,
            dst,
            dst_pred,
            a,
            mask,
            ..
        } => match_sync(ln, all, (dst, dst_pred), a, mask),
        Op::Redux {
            op,
            ty,
            dst,
            a,
            mask,
        } => redux(ln, (op, ty), dst, a, mask),
        Op::Mma(mma) => return mma_sync(ln, mma),
        Op::LdMatrix {
            num,
            trans,
            dst,
            rows,
            ..
        } => return ldmatrix(ln, (num, trans), dst, rows),
        _ => return Err(misrouted(op)),
    }
    Ok(())
}

/// `vote.sync` (thesis 5.4.2 `vote`).
fn vote(ln: Lanes<'_>, mode: VoteMode, dst: RegId, pred: &PredSrc, mask: Option<&Src>) {
    let (regs, _, sp, fb, exec) = ln.parts();
    lane_macros!($, regs, sp, fb, exec);
    // Every lane votes among the lanes its own membermask names (PTX ISA 9.7.13.6
    // "vote.sync": "membermask ... of threads participating"): lanes may name different
    // masks and still execute together.
    let mut votes = 0u64;
    each!(|l| {
        if read_pred(regs, pred, l, &sp, fb) {
            votes |= 1 << l;
        }
    });
    let mut out = [0u64; 64];
    each!(|l| {
        let member = mask.map(|m| rd!(m, l)).unwrap_or(u64::MAX);
        let part = exec & member;
        let ballot = votes & part;
        // thesis 5.4.2 `vote`: inactive lanes vote false for .ballot.
        out[l] = match mode {
            VoteMode::All => (ballot == part) as u64,
            VoteMode::Any => (ballot != 0) as u64,
            VoteMode::Uni => (ballot == 0 || ballot == part) as u64,
            VoteMode::Ballot => ballot,
        };
    });
    each!(|l| wr!(dst, l, out[l]));
}

/// `shfl.sync` (PTX ISA 9.7.9.6).
fn shfl(
    ln: Lanes<'_>,
    mode: &ShflMode,
    (dst, dst_pred): (&RegId, &Option<RegId>),
    [a, b, c]: [&Src; 3],
) {
    let (regs, ws, sp, fb, exec) = ln.parts();
    lane_macros!($, regs, sp, fb, exec);
    let mut vals = [0u64; 64];
    let mut preds = [false; 64];
    each!(|l| {
        // Only `b[4:0]`, `c[4:0]` and `c[12:8]` matter (PTX ISA 9.7.9.6): a delta of 33
        // shuffles by 1, as on hardware.
        let bval = (rd!(b, l) & 0x1f) as i64;
        let c_raw = rd!(c, l) as i64;
        let cval = c_raw & 0x1f;
        let lane = l as i64;
        let segmask = (c_raw >> 8) & 0x1f;
        let max_lane = (lane & segmask) | (cval & !segmask);
        let min_lane = lane & segmask;
        // PTX ISA 9.7.9.6 (shfl.sync) pseudocode.
        let (j, pval) = match mode {
            ShflMode::Up => (lane - bval, lane - bval >= max_lane),
            ShflMode::Down => (lane + bval, lane + bval <= max_lane),
            ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
            ShflMode::Idx => {
                let j = min_lane | (bval & !segmask);
                (j, j <= max_lane)
            }
        };
        let j = if pval && (0..ws as i64).contains(&j) {
            j as usize
        } else {
            l
        };
        // A source lane outside the executing lanes is undefined in PTX: cudasem reads its
        // register anyway (deterministic).
        vals[l] = rd!(a, j);
        preds[l] = pval;
    });
    each!(|l| {
        wr!(dst, l, vals[l]);
        if let Some(p) = dst_pred {
            wr!(p, l, preds[l] as u64);
        }
    });
}

/// `match.any.sync`, `match.all.sync` (PTX ISA 9.7.13.8).
fn match_sync(
    ln: Lanes<'_>,
    all: &bool,
    (dst, dst_pred): (&RegId, &Option<RegId>),
    a: &Src,
    mask: &Src,
) {
    // Each lane compares among the lanes its own membermask names (PTX ISA
    // `match.sync`).
    let (vals, parts) = ln.members(a, mask);
    let Lanes { regs, exec, .. } = ln;
    let mut res = [(0u64, false); 64];
    for l in lanes(exec) {
        let part = parts[l];
        let first = vals[part.trailing_zeros().min(63) as usize];
        let all_eq = lanes(part).all(|k| vals[k] == first);
        let v = if *all {
            if all_eq { part } else { 0 }
        } else {
            lanes(part)
                .filter(|&k| vals[k] == vals[l])
                .fold(0u64, |m, k| m | 1 << k)
        };
        res[l] = (v, all_eq);
    }
    for l in lanes(exec) {
        regs.set(dst.0 as usize, l, res[l].0);
        if let Some(p) = dst_pred {
            regs.set(p.0 as usize, l, res[l].1 as u64);
        }
    }
}

/// `redux.sync` (PTX ISA 9.7.13.10).
fn redux(ln: Lanes<'_>, (op, ty): (&ReduxOp, &ScalarType), dst: &RegId, a: &Src, mask: &Src) {
    // Each lane reduces over the lanes its own membermask names (PTX ISA
    // `redux.sync`).
    let (vals, parts) = ln.members(a, mask);
    let Lanes { regs, exec, .. } = ln;
    let mut out = [0u64; 64];
    let mut buf = [0u64; 64];
    for l in lanes(exec) {
        let mut n = 0;
        for k in lanes(parts[l]) {
            buf[n] = vals[k];
            n += 1;
        }
        out[l] = alu::redux(*op, *ty, &buf[..n]);
    }
    for l in lanes(exec) {
        regs.set(dst.0 as usize, l, out[l]);
    }
}

/// `mma.sync.aligned` (PTX ISA 9.7.14.5.14): the fragments of every lane in, `d` out.
fn mma_sync(ln: Lanes<'_>, mma: &crate::program::Mma) -> Result<(), Fault> {
    let (regs, ws, sp, fb, exec) = ln.parts();
    lane_macros!($, regs, sp, fb, exec);
    full_warp(ws, exec, "mma.sync.aligned")?;
    let (na, nb, nc) = (mma.a.len(), mma.b.len(), mma.c.len());
    let mut a = vec![0u64; alu::mma::LANES * na];
    let mut b = vec![0u64; alu::mma::LANES * nb];
    let mut c = vec![0u64; alu::mma::LANES * nc];
    each!(|l| {
        for (k, s) in mma.a.iter().enumerate() {
            a[l * na + k] = rd!(s, l);
        }
        for (k, s) in mma.b.iter().enumerate() {
            b[l * nb + k] = rd!(s, l);
        }
        for (k, s) in mma.c.iter().enumerate() {
            c[l * nc + k] = rd!(s, l);
        }
    });
    let d = alu::mma::mma(
        mma.shape,
        mma.a_ty,
        mma.b_ty,
        mma.c_ty,
        mma.d_ty,
        mma.satfinite,
        &alu::mma::MmaInput {
            a: &a,
            b: &b,
            c: &c,
        },
    );
    let nd = mma.d.len();
    each!(|l| {
        for (k, r) in mma.d.iter().enumerate() {
            wr!(r, l, d[l * nd + k]);
        }
    });
    Ok(())
}

/// `ldmatrix.sync.aligned` (PTX ISA 9.7.14.5.15): the rows the lanes loaded, shuffled into
/// each lane's fragments.
fn ldmatrix(
    ln: Lanes<'_>,
    (num, trans): (&u8, &bool),
    dst: &[RegId; 4],
    rows: &[RegId; 4],
) -> Result<(), Fault> {
    let (regs, ws, sp, fb, exec) = ln.parts();
    lane_macros!($, regs, sp, fb, exec);
    full_warp(ws, exec, "ldmatrix.sync.aligned")?;
    // Row r of matrix i is what lane 8i + r loaded: four words, two elements each,
    // lowest first.
    let mut m = [[[0u16; 8]; 8]; 4];
    for (i, matrix) in m.iter_mut().enumerate().take(*num as usize) {
        for (r, row) in matrix.iter_mut().enumerate() {
            for (k, word) in rows.iter().enumerate() {
                let v = rd!(&Src::Reg(*word), 8 * i + r);
                row[2 * k] = v as u16;
                row[2 * k + 1] = (v >> 16) as u16;
            }
        }
    }
    each!(|l| {
        for (i, d) in dst.iter().enumerate().take(*num as usize) {
            wr!(d, l, alu::mma::ldmatrix_fragment(&m[i], *trans, l));
        }
    });
    Ok(())
}

/// The warp-wide matrix instructions (`.sync.aligned`) need every lane of a 32-lane warp
/// executing them together (PTX ISA 9.7.14.5: "all threads in the warp must execute the same
/// ... instruction"); anything else is undefined, which cudasem reports.
fn full_warp(ws: usize, exec: u64, what: &str) -> Result<(), Fault> {
    let all = if ws >= 64 { u64::MAX } else { (1u64 << ws) - 1 };
    if ws != alu::mma::LANES || exec != all {
        let missing = (!exec & all).trailing_zeros() as usize;
        return Err(Fault::new(
            ErrorKind::Stuck,
            if ws == alu::mma::LANES {
                Some(missing.min(ws - 1))
            } else {
                None
            },
            format!(
                "{what} needs all 32 lanes of the warp to execute it together (PTX ISA 9.7.14.5); lanes {exec:#x} of a {ws}-lane warp did"
            ),
        ));
    }
    Ok(())
}
