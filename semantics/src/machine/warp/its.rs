//! Independent thread scheduling (`--warp-model its`) and the threads model (`threads`): beyond
//! the thesis (ARCHITECTURE.md section 2).
//!
//! Every lane has its own pc and call depth. A converged group is the set of live lanes with the
//! same pc and call depth that wait for no barrier; the scheduler picks which group steps
//! (`Lanes` choices). Under `threads` every lane is a group of its own (seed 001's interleaving
//! semantics), except at warp-synchronous instructions.
//! Warp-synchronous instructions (`vote.sync`, `shfl.sync`, `match.sync`, `redux.sync`,
//! `bar.warp.sync`) rendezvous: a group at one is enabled only when it contains every live lane
//! its mask names (they then execute together). No stack: divergence needs none. The thesis
//! dialect's `ssy`/`sync`/`preRet` are no-ops; `preBrk` pushes a per-lane break target that `brk`
//! pops and jumps to. Barriers count arrivals per thread (see `block`).

use super::super::ErrorKind;
use super::super::block::{BlockShared, arrive};
use super::super::exec::{Ctx, Fault, data_rule, exec_data, read_pred, read_src, sync_mask};
use super::calls::{enter, leave};
use super::simt_stack::target_groups;
use super::{Warp, lanes};
use crate::program::{BarrierKind, Op, Pc, Program};
use std::sync::Arc;
use traces::{DisableMask, Event, Rule};

/// The warp's converged groups that may step now, ascending by lowest lane; `threads` splits
/// groups into single lanes except at warp-synchronous instructions.
pub(crate) fn groups(
    program: &Program,
    w: &Warp,
    ws: usize,
    threads: bool,
    sp: &super::super::thread::SpecialCtx,
    out: &mut Vec<u64>,
) {
    out.clear();
    if w.completed {
        return;
    }
    let live = w.real & !w.exited;
    let mut seen = 0u64;
    for l in lanes(live) {
        if seen >> l & 1 == 1 {
            continue;
        }
        let (pc, d) = (w.lane_pc[l], w.depth[l]);
        let mut g = 0u64;
        for k in lanes(live & !seen) {
            if w.lane_pc[k] == pc && w.depth[k] == d {
                g |= 1 << k;
            }
        }
        seen |= g;
        let g_ready = g & !lanes(g)
            .filter(|&k| w.lane_wait[k] != 0)
            .fold(0u64, |m, k| m | 1 << k);
        if g_ready == 0 {
            continue;
        }
        let op = program.instructions.get(pc as usize).map(|i| &i.op);
        match op.and_then(sync_mask) {
            Some(mask) => {
                // Every lane names its own membermask (PTX ISA 9.7.13.6 "vote.sync"): a lane is
                // ready when all live lanes its mask names are here.
                let lvl = &w.levels[d as usize];
                let need = |k: usize| read_src(&lvl.regs, ws, mask, k, sp, &lvl.frame_base) & live;
                let ready = lanes(g_ready)
                    .filter(|&k| need(k) & !g_ready == 0)
                    .fold(0u64, |m, k| m | 1 << k);
                if ready != 0 {
                    // The ready lanes execute together (so that lanes outside one lane's mask
                    // are not left behind under ITS); `threads`: the lowest ready lane and the
                    // ready lanes its mask names.
                    let lead = ready.trailing_zeros() as usize;
                    out.push(if threads {
                        ready & (need(lead) | 1 << lead)
                    } else {
                        ready
                    });
                }
            }
            None => {
                if threads {
                    out.extend(lanes(g_ready).map(|k| 1u64 << k));
                } else {
                    out.push(g_ready);
                }
            }
        }
    }
    out.sort_unstable_by_key(|m| m.trailing_zeros());
}

/// One step of the converged group `group` (ITS / threads).
pub(crate) fn step(
    cx: &mut Ctx,
    bk: &mut BlockShared,
    w: &mut Warp,
    group: u64,
) -> Result<super::simt_stack::Outcome, Fault> {
    use super::simt_stack::{Flow, Outcome};
    let ws = cx.info.warp_size as usize;
    let lead = group.trailing_zeros() as usize;
    let pc = w.lane_pc[lead];
    let level = w.depth[lead] as usize;
    let program = cx.program;
    let Some(instr) = program.instructions.get(pc as usize) else {
        return Err(Fault::new(
            ErrorKind::Stuck,
            Some(lead),
            format!("pc {pc} is outside the program"),
        ));
    };
    let func = w.levels[level].func[lead];
    let exec = match instr.guard {
        None => group,
        Some(g) => {
            let regs = &w.levels[level].regs;
            lanes(group)
                .filter(|&l| (regs[g.reg.0 as usize * ws + l] != 0) != g.negated)
                .fold(0u64, |m, l| m | 1 << l)
        }
    };
    let mut out = Outcome {
        pc,
        exec,
        flow: Flow::Seq,
        arrived: 0,
        exited: 0,
    };
    let skip = group & !exec;
    for l in lanes(skip) {
        Arc::make_mut(&mut w.lane_pc)[l] = pc + 1;
    }
    let rule: Rule;
    match &instr.op {
        op @ (Op::Bra { .. } | Op::BraIndirect { .. }) => {
            let mut gs = smallvec::SmallVec::<[(Pc, u64); 4]>::new();
            target_groups(program, w, level, exec, op, ws, &mut gs)
                .map_err(|(l, m)| Fault::new(ErrorKind::Stuck, Some(l), m))?;
            for (t, m) in gs {
                for l in lanes(m) {
                    Arc::make_mut(&mut w.lane_pc)[l] = t;
                }
            }
            rule = Rule::Bra;
        }
        op @ Op::Call { args, .. } => {
            let mut gs = smallvec::SmallVec::<[(Pc, u64); 4]>::new();
            target_groups(program, w, level, exec, op, ws, &mut gs)
                .map_err(|(l, m)| Fault::new(ErrorKind::Stuck, Some(l), m))?;
            for (t, m) in gs {
                let callee = program.function_of(t).ok_or_else(|| {
                    Fault::new(
                        ErrorKind::Stuck,
                        None,
                        format!("call target {t} is not a function"),
                    )
                })?;
                for l in lanes(m) {
                    enter(cx, w, l, callee, pc, args)?;
                    Arc::make_mut(&mut w.lane_pc)[l] = t;
                }
            }
            rule = Rule::Call;
        }
        Op::Ret | Op::Exit => {
            for l in lanes(exec) {
                if matches!(instr.op, Op::Exit) || w.depth[l] == 0 {
                    w.exited |= 1 << l;
                    out.exited |= 1 << l;
                } else {
                    let r = leave(cx, w, l)?;
                    Arc::make_mut(&mut w.lane_pc)[l] = r;
                }
            }
            rule = if out.exited != 0 {
                Rule::ExitThread
            } else {
                Rule::Ret
            };
        }
        Op::Ssy { .. } | Op::Sync | Op::PreRet { .. } => {
            for l in lanes(exec) {
                Arc::make_mut(&mut w.lane_pc)[l] = pc + 1;
            }
            rule = Rule::Nop;
        }
        Op::PreBrk { target } => {
            for l in lanes(exec) {
                Arc::make_mut(&mut w.lane_breaks)[l].push(*target);
                Arc::make_mut(&mut w.lane_pc)[l] = pc + 1;
            }
            rule = Rule::PreBrk;
        }
        Op::Brk => {
            for l in lanes(exec) {
                match Arc::make_mut(&mut w.lane_breaks)[l].pop() {
                    Some(t) => Arc::make_mut(&mut w.lane_pc)[l] = t,
                    None => {
                        return Err(Fault::new(
                            ErrorKind::Stuck,
                            Some(l),
                            "brk without a preceding preBrk",
                        ));
                    }
                }
            }
            rule = Rule::Break;
        }
        Op::Barrier {
            kind, id, count, ..
        } => {
            let regs = &w.levels[level].regs;
            let fb = &w.levels[level].frame_base;
            let sp = cx.special;
            let red = match kind {
                BarrierKind::Red { op, .. } => Some(*op),
                _ => None,
            };
            for l in lanes(exec) {
                let b = read_src(regs, ws, id, l, &sp, fb);
                if b >= 16 {
                    return Err(Fault::new(
                        ErrorKind::Barrier,
                        Some(l),
                        format!("barrier index {b} is not in 0..16"),
                    ));
                }
                let c = count
                    .as_ref()
                    .map(|c| read_src(regs, ws, c, l, &sp, fb) as u32);
                let bar = &mut Arc::make_mut(&mut bk.bars)[b as usize];
                arrive(
                    bar,
                    b as u32,
                    w.index,
                    c,
                    bk.live_threads,
                    1,
                    red,
                    cx.info.warp_size,
                )
                .map_err(|mut f| {
                    f.lane = Some(l);
                    f
                })?;
                if let BarrierKind::Red { dst, pred, .. } = kind {
                    let p = read_pred(regs, ws, pred, l, &sp, fb);
                    bar.popc += p as u32;
                    bar.and &= p;
                    bar.or |= p;
                    bar.participants.push((w.index, 1 << l, *dst, level as u16));
                }
                if let Some(ev) = cx.events.as_deref_mut() {
                    let d =
                        traces::Derivation::with_prefix(cx.prefix, &[Rule::ItsStep, Rule::BarSync]);
                    ev.push(Event::BarrierArrived {
                        block: cx.block,
                        warp: w.index,
                        barrier: b as u32,
                        arrived: bar.ac,
                        expected: bar.tc,
                        derivation: d,
                    });
                }
                out.arrived |= 1 << b;
                if !matches!(kind, BarrierKind::Arrive) {
                    Arc::make_mut(&mut w.lane_wait)[l] |= 1 << b;
                }
                Arc::make_mut(&mut w.lane_pc)[l] = pc + 1;
            }
            rule = Rule::BarSync;
        }
        op => {
            if exec != 0 {
                exec_data(cx, w, level, exec, group, pc, func, op)?;
            }
            for l in lanes(exec) {
                Arc::make_mut(&mut w.lane_pc)[l] = pc + 1;
            }
            rule = data_rule(op).1;
        }
    }
    if w.exited | !w.real == u64::MAX || (w.real & !w.exited) == 0 {
        w.completed = true;
    }
    if cx.observing() {
        let derivation = cx.derivation(&[Rule::ItsStep, rule]);
        let next_pc = w.lane_pc[lead];
        let ev = Event::Executed {
            block: cx.block,
            warp: w.index,
            pc,
            lanes: exec,
            active: group,
            disabled: DisableMask {
                brk: 0,
                ret: 0,
                exit: w.exited,
            },
            stack: Vec::new(),
            next_pc,
            derivation,
            unspecified: std::mem::take(&mut cx.unspecified),
        };
        if let Some(v) = cx.events.as_deref_mut() {
            v.push(ev);
        }
    }
    Ok(out)
}
