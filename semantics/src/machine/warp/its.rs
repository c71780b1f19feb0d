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
use super::super::block::{BlockShared, arrive, barrier};
use super::super::exec::{Ctx, Fault, data_rule, exec_data, read_pred, read_src, sync_mask};
use super::calls::{enter, leave};
use super::simt_stack::{Flow, Outcome, target_groups};
use super::{ModelState, Warp, lanes};
use crate::program::{BarrierKind, Op, Pc, Program, Src};
use std::sync::Arc;
use traces::{DisableMask, Event, Rule};

/// The warp's converged groups that may step now, ascending by lowest lane; `threads` splits
/// groups into single lanes except at warp-synchronous instructions.
pub(crate) fn groups(
    program: &Program,
    w: &Warp,
    sp: &super::super::thread::SpecialCtx,
    out: &mut Vec<u64>,
) {
    out.clear();
    if w.completed {
        return;
    }
    let its = w.its();
    let threads = its.threads;
    let live = w.real & !w.exited;
    let mut seen = 0u64;
    for l in lanes(live) {
        if seen >> l & 1 == 1 {
            continue;
        }
        let (pc, d) = (its.lane_pc[l], w.depth[l]);
        let mut g = 0u64;
        for k in lanes(live & !seen) {
            if its.lane_pc[k] == pc && w.depth[k] == d {
                g |= 1 << k;
            }
        }
        seen |= g;
        let g_ready = g & !lanes(g)
            .filter(|&k| its.lane_wait[k] != 0)
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
                let need = |k: usize| read_src(&lvl.regs, mask, k, sp, &lvl.frame_base) & live;
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

/// One step of the converged group `group` (ITS / threads): the group's guard, then the rule of
/// its instruction, each lane moving its own pc.
pub(crate) fn step(
    cx: &mut Ctx,
    bk: &mut BlockShared,
    w: &mut Warp,
    group: u64,
) -> Result<Outcome, Fault> {
    let lead = group.trailing_zeros() as usize;
    let pc = w.its().lane_pc[lead];
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
                .filter(|&l| (regs.at(g.reg.0 as usize, l) != 0) != g.negated)
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
    // Lanes whose guard is false move on.
    advance(w, group & !exec, pc);
    let here = Here { level, exec, pc };
    let rule = match &instr.op {
        op @ (Op::Bra { .. } | Op::BraIndirect { .. }) => bra(program, w, here, op)?,
        op @ Op::Call { args, .. } => call(cx, w, here, op, args)?,
        Op::Ret | Op::Exit => ret_exit(cx, w, exec, matches!(instr.op, Op::Exit), &mut out)?,
        Op::Ssy { .. } | Op::Sync | Op::PreRet { .. } => {
            advance(w, exec, pc);
            Rule::Nop
        }
        Op::PreBrk { target } => pre_brk(w, here, *target),
        Op::Brk => brk(w, exec)?,
        Op::Barrier {
            kind, id, count, ..
        } => barrier(cx, bk, w, here, (kind, id, count.as_ref()), &mut out)?,
        op => {
            if exec != 0 {
                exec_data(cx, w, level, exec, group, func, op)?;
            }
            advance(w, exec, pc);
            data_rule(op).1
        }
    };
    if w.exited | !w.real == u64::MAX || (w.real & !w.exited) == 0 {
        w.completed = true;
    }
    if cx.observing() {
        executed(cx, w, (pc, exec, group), lead, rule);
    }
    Ok(out)
}

/// Where a group's step happens: its call level, its executing lanes and its pc.
#[derive(Clone, Copy)]
struct Here {
    level: usize,
    exec: u64,
    pc: Pc,
}

/// Lanes `m` move to the next instruction.
fn advance(w: &mut Warp, m: u64, pc: Pc) {
    for l in lanes(m) {
        w.its_mut().set_pc(l, pc + 1);
    }
}

/// `bra` (and `brx.idx`) under ITS: each executing lane goes to its own target; no token, no
/// divergence to record (the lanes' pcs are the state).
fn bra(program: &Program, w: &mut Warp, h: Here, op: &Op) -> Result<Rule, Fault> {
    let mut gs = smallvec::SmallVec::<[(Pc, u64); 4]>::new();
    target_groups(program, w, h.level, h.exec, op, &mut gs)
        .map_err(|(l, m)| Fault::new(ErrorKind::Stuck, Some(l), m))?;
    for (t, m) in gs {
        for l in lanes(m) {
            w.its_mut().set_pc(l, t);
        }
    }
    Ok(Rule::Bra)
}

/// `call` under ITS: each executing lane enters its own target's frame (thesis 5.3.2 frames,
/// per lane).
fn call(
    cx: &mut Ctx,
    w: &mut Warp,
    h: Here,
    op: &Op,
    args: &[crate::program::ParamLoc],
) -> Result<Rule, Fault> {
    let program = cx.program;
    let mut gs = smallvec::SmallVec::<[(Pc, u64); 4]>::new();
    target_groups(program, w, h.level, h.exec, op, &mut gs)
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
            enter(cx, w, l, callee, h.pc, args)?;
            w.its_mut().set_pc(l, t);
        }
    }
    Ok(Rule::Call)
}

/// `ret` and `exit` under ITS: a lane at call depth 0 (or executing `exit`) exits; any other
/// returns to its caller.
fn ret_exit(
    cx: &mut Ctx,
    w: &mut Warp,
    exec: u64,
    is_exit: bool,
    out: &mut Outcome,
) -> Result<Rule, Fault> {
    for l in lanes(exec) {
        if is_exit || w.depth[l] == 0 {
            w.exited |= 1 << l;
            out.exited |= 1 << l;
        } else {
            let r = leave(cx, w, l)?;
            w.its_mut().set_pc(l, r);
        }
    }
    Ok(if out.exited != 0 {
        Rule::ExitThread
    } else {
        Rule::Ret
    })
}

/// `preBrk` under ITS: each executing lane pushes the break target on its own list.
fn pre_brk(w: &mut Warp, h: Here, target: Pc) -> Rule {
    for l in lanes(h.exec) {
        Arc::make_mut(&mut w.its_mut().lane_breaks)[l].push(target);
        w.its_mut().set_pc(l, h.pc + 1);
    }
    Rule::PreBrk
}

/// `brk` under ITS: each executing lane pops its break target and jumps there.
fn brk(w: &mut Warp, exec: u64) -> Result<Rule, Fault> {
    for l in lanes(exec) {
        match Arc::make_mut(&mut w.its_mut().lane_breaks)[l].pop() {
            Some(t) => w.its_mut().set_pc(l, t),
            None => {
                return Err(Fault::new(
                    ErrorKind::Stuck,
                    Some(l),
                    "brk without a preceding preBrk",
                ));
            }
        }
    }
    Ok(Rule::Break)
}

/// A barrier instruction under ITS: every executing lane arrives on its own (barriers count
/// threads, see `block`), and waits unless the instruction is `bar.arrive`.
fn barrier(
    cx: &mut Ctx,
    bk: &mut BlockShared,
    w: &mut Warp,
    h: Here,
    (kind, id, count): (&BarrierKind, &Src, Option<&Src>),
    out: &mut Outcome,
) -> Result<Rule, Fault> {
    let ModelState::Its(its) = &mut w.model else {
        unreachable!("an ITS rule on a SIMT-stack warp")
    };
    let regs = &w.levels[h.level].regs;
    let fb = &w.levels[h.level].frame_base;
    let sp = cx.special;
    let red = kind.reduction();
    for l in lanes(h.exec) {
        let b = barrier::index(read_src(regs, id, l, &sp, fb), l)?;
        let c = count.map(|c| read_src(regs, c, l, &sp, fb) as u32);
        let bar = &mut Arc::make_mut(&mut bk.bars)[b as usize];
        arrive(
            bar,
            b,
            w.index,
            c,
            bk.live_threads,
            1,
            red,
            cx.info.shape.warp_size,
        )
        .map_err(|mut f| {
            f.lane = Some(l);
            f
        })?;
        if let BarrierKind::Red { dst, pred, .. } = kind {
            let p = read_pred(regs, pred, l, &sp, fb);
            barrier::vote(bar, p);
            bar.participants
                .push((w.index, 1 << l, *dst, h.level as u16));
        }
        cx.barrier_arrived(Rule::ItsStep, w.index, b, (bar.ac, bar.tc));
        out.arrived |= 1 << b;
        if !matches!(kind, BarrierKind::Arrive) {
            Arc::make_mut(&mut its.lane_wait)[l] |= 1 << b;
        }
        its.set_pc(l, h.pc + 1);
    }
    Ok(Rule::BarSync)
}

/// The `Executed` event of a group's step.
fn executed(cx: &mut Ctx, w: &Warp, (pc, exec, group): (Pc, u64, u64), lead: usize, rule: Rule) {
    let derivation = cx.derivation(&[Rule::ItsStep, rule]);
    let next_pc = w.its().lane_pc[lead];
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
