//! Thread rules of warp-collective operations (thesis 5.4.2 `vote`; PTX ISA 9.7.12.8-9.7.12.12
//! `shfl`, `match`, `redux`, `activemask`): every executing lane contributes, the warp rule
//! (comm) combines, each lane receives its result.

use super::*;

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
    let ws = cx.info.warp_size as usize;
    let sp = cx.special;
    let lvl = &mut w.levels[level];
    let fb = &lvl.frame_base;
    let regs = &mut lvl.regs;
    lane_macros!($, regs, ws, sp, fb, exec);
    match op {
        Op::Vote {
            mode,
            dst,
            pred,
            mask,
        } => {
            let member = mask
                .as_ref()
                .map(|m| rd!(m, exec.trailing_zeros() as usize))
                .unwrap_or(u64::MAX);
            let part = exec & member;
            let mut ballot = 0u64;
            each!(|l| {
                if part >> l & 1 == 1 && read_pred(regs, ws, pred, l, &sp, fb) {
                    ballot |= 1 << l;
                }
            });
            // thesis 5.4.2 `vote`: inactive lanes vote false for .ballot.
            let v = match mode {
                VoteMode::All => (ballot == part) as u64,
                VoteMode::Any => (ballot != 0) as u64,
                VoteMode::Uni => (ballot == 0 || ballot == part) as u64,
                VoteMode::Ballot => ballot,
            };
            each!(|l| wr!(dst, l, v));
        }
        Op::ActiveMask { dst } => each!(|l| wr!(dst, l, group)),
        Op::Shfl {
            mode,
            dst,
            dst_pred,
            a,
            b,
            c,
            ..
        } => {
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
        Op::Match {
            all,
            dst,
            dst_pred,
            a,
            mask,
            ..
        } => {
            let member = rd!(mask, exec.trailing_zeros() as usize);
            let part = exec & member;
            let mut vals = [0u64; 64];
            each!(|l| vals[l] = rd!(a, l));
            let first = vals[part.trailing_zeros().min(63) as usize];
            let all_eq = lanes(part).all(|l| vals[l] == first);
            each!(|l| {
                let v = if *all {
                    if all_eq { part } else { 0 }
                } else {
                    lanes(part)
                        .filter(|&k| vals[k] == vals[l])
                        .fold(0u64, |m, k| m | 1 << k)
                };
                wr!(dst, l, v);
                if let Some(p) = dst_pred {
                    wr!(p, l, all_eq as u64);
                }
            });
        }
        Op::Redux {
            op,
            ty,
            dst,
            a,
            mask,
        } => {
            let member = rd!(mask, exec.trailing_zeros() as usize);
            let part = exec & member;
            let mut vals = [0u64; 64];
            let mut n = 0;
            for l in lanes(part) {
                vals[n] = rd!(a, l);
                n += 1;
            }
            let r = alu::redux(*op, *ty, &vals[..n]);
            each!(|l| wr!(dst, l, r));
        }
        _ => return Err(misrouted(op)),
    }
    Ok(())
}
