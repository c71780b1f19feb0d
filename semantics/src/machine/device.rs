//! Device layer (thesis 5.8): one transition of the whole machine for one [`Choice`].
//!
//! The derivation of a warp step is `exec ▸ schedule_Warps ▸ <warp rule> ▸ <CRS rule> ▸ <thread
//! rule>`; block issue is `exec ▸ issueBlocks`, barrier completion `exec ▸ endBar`. After the step
//! the machine completes warps and blocks (block (compl), grid (compl)), refreshes the enabled set
//! and decides termination: every block completed, or nothing enabled (a deadlock, explained).

use super::block::{Block, barrier};
use super::exec::{Ctx, Fault};
use super::thread::SpecialCtx;
use super::warp::{self, Warp, choice_fits};
use super::{
    ErrorKind, LaunchInfo, Machine, MachineConfig, MachineError, StepError, Termination, WaitInfo,
};
use memory_model::MemoryEnv;
use std::sync::Arc;
use traces::{Choice, Derivation, Event, Rule};

pub(crate) fn special(
    info: &LaunchInfo,
    config: &MachineConfig,
    b: &Block,
    w: &Warp,
    steps: u64,
    static_shared: u64,
) -> SpecialCtx {
    SpecialCtx {
        shape: info.shape,
        ctaid: b.ctaid,
        warp_index: w.index,
        tid_base: w.tid_base,
        sm: b.sm,
        num_sms: config.device.num_sms,
        max_warps_per_sm: config.device.max_warps_per_sm,
        steps,
        dynamic_smem: info.dynamic_shared,
        total_smem: (static_shared + info.dynamic_shared as u64) as u32,
    }
}

impl Machine {
    pub(crate) fn special(&self, b: &Block, w: &Warp) -> SpecialCtx {
        special(
            self.grid_info(b.id),
            &self.fixed.config,
            b,
            w,
            self.steps,
            self.program.shared_size,
        )
    }

    fn not_enabled(choice: &Choice, why: impl Into<String>) -> StepError {
        StepError {
            choice: *choice,
            message: why.into(),
        }
    }

    pub(crate) fn step_inner(
        &mut self,
        choice: &Choice,
        mut events: Option<&mut Vec<Event>>,
        detail: super::EventDetail,
    ) -> Result<(), StepError> {
        if let Some(t) = &self.termination {
            return Err(Self::not_enabled(
                choice,
                format!("the run has ended ({t})"),
            ));
        }
        match *choice {
            Choice::Issue { grid, block, sm } => {
                let next = self.grids.get(grid as usize).and_then(|g| {
                    (g.phase == super::GridPhase::Active && g.next_block < g.info.shape.blocks)
                        .then_some(g.base + g.next_block)
                });
                if next != Some(block) || !self.fits(grid as usize, sm) {
                    let why = match next {
                        _ if self.grids.len() == 1 => format!(
                            "the next block to issue is {} and must fit on the SM",
                            self.grids[0].next_block
                        ),
                        Some(n) => format!(
                            "the next block of grid {grid} to issue is {n} and must fit on the SM"
                        ),
                        None => format!("grid {grid} is not active or has no block left to issue"),
                    };
                    return Err(Self::not_enabled(choice, why));
                }
                self.issue(grid as usize, block, sm, events.as_deref_mut());
            }
            Choice::Warp { block, warp } => {
                self.check_warp(choice, block, warp)?;
                self.warp_step(block, warp, None, 0, events.as_deref_mut(), detail);
            }
            Choice::Target { block, warp, k } => {
                self.check_warp(choice, block, warp)?;
                self.warp_step(block, warp, Some(k), 0, events.as_deref_mut(), detail);
            }
            Choice::Lanes { block, warp, mask } => {
                self.check_warp(choice, block, warp)?;
                self.warp_step(block, warp, None, mask, events.as_deref_mut(), detail);
            }
            Choice::Pick {
                block,
                warp,
                lane,
                k,
            } => {
                if !self.pick_enabled(block, warp, lane, k) {
                    return Err(Self::not_enabled(
                        choice,
                        "the lane is not the next to pick a result of a call to a function without a body, or there is no such value",
                    ));
                }
                self.pick(block, warp, lane, k);
            }
            Choice::EndBarrier { block, barrier } => {
                let ok = self
                    .blocks
                    .get(block)
                    .and_then(|b| b.shared.bars.get(barrier as usize))
                    .is_some_and(|b| b.ready());
                if !ok {
                    return Err(Self::not_enabled(choice, "the barrier is not complete"));
                }
                self.end_barrier(block, barrier, events);
            }
            Choice::Mem(m) => {
                if self.mem.performs_accesses_at_once() {
                    return Err(Self::not_enabled(
                        choice,
                        "flat memory has no memory choices",
                    ));
                }
                if !self.mem.offers(&m) {
                    return Err(Self::not_enabled(
                        choice,
                        "the memory environment does not offer it now",
                    ));
                }
                self.mem_step(m, events);
            }
        }
        self.steps += 1;
        if self.termination.is_none() {
            self.refresh_mem();
        }
        if self.termination.is_none() {
            if self.grid_completed() && self.mem.idle() {
                // Every grid of the program has completed (one grid: grid (compl)).
                self.termination = Some(Box::new(Termination::Completed));
                self.enabled.clear();
            } else if self.enabled.is_empty() {
                self.termination = Some(Box::new(Termination::Deadlock(self.deadlock_info())));
            }
        }
        Ok(())
    }

    /// Validates a warp choice against the state (O(1) for the SIMT stack).
    fn check_warp(&mut self, choice: &Choice, block: u32, warp: u32) -> Result<(), StepError> {
        if !choice_fits(self.fixed.config.warp_model, choice) {
            return Err(Self::not_enabled(
                choice,
                format!("the warp model is {:?}", self.fixed.config.warp_model),
            ));
        }
        let Some(w) = self.resident_warp(block, warp) else {
            return Err(Self::not_enabled(choice, "no such resident warp"));
        };
        if w.completed {
            return Err(Self::not_enabled(choice, "the warp has completed"));
        }
        // The test `warp_choices` makes (a lookup in the enabled set would be a scan of every
        // in-flight memory choice). A mask naming no lane is refused below (`lanes_enabled`).
        let (lane, lanes) = match *choice {
            Choice::Lanes { mask, .. } => (mask.trailing_zeros() as usize, mask),
            _ => (0, w.real & !w.exited),
        };
        let mem_blocked = !self.mem.performs_accesses_at_once()
            && w.pc_of(lane)
                .is_some_and(|pc| self.mem_blocked(block, warp, pc, lanes));
        if mem_blocked {
            return Err(Self::not_enabled(
                choice,
                "the warp waits for its memory operations (a pending register or a drain)",
            ));
        }
        // A call to a body-less function whose lanes have not all picked their result: the
        // warp's choices are its next lane's `Pick`s.
        let picking = match *choice {
            Choice::Lanes { mask, .. } => {
                super::pick::pending_pick_group(&self.program, &self.info, w, mask).is_some()
            }
            _ => super::pick::pending_pick_simt(&self.program, &self.info, w).is_some(),
        };
        if picking {
            return Err(Self::not_enabled(
                choice,
                "the warp's lanes pick the results of a call to a function without a body first",
            ));
        }
        match *choice {
            Choice::Warp { .. } if w.waiting() == 0 && w.targets() <= 1 => Ok(()),
            Choice::Target { k, .. } if w.waiting() == 0 && k < w.targets() && w.targets() > 1 => {
                Ok(())
            }
            Choice::Lanes { mask, .. } => {
                if self.lanes_enabled(block, warp, mask) {
                    Ok(())
                } else {
                    Err(Self::not_enabled(
                        choice,
                        "not a converged group that can step",
                    ))
                }
            }
            _ => Err(Self::not_enabled(
                choice,
                "the warp waits at a barrier or must choose a target",
            )),
        }
    }

    /// A warp step under the configured model, then completion and enabled-set bookkeeping.
    fn warp_step(
        &mut self,
        block: u32,
        warp: u32,
        k: Option<u32>,
        group: u64,
        mut events: Option<&mut Vec<Event>>,
        detail: super::EventDetail,
    ) {
        let checking = self.checking;
        let grid = self.grid_index(block);
        let named_grid = self.named_grid(block);
        let Machine {
            program,
            grids,
            fixed,
            mem,
            blocks,
            steps,
            ..
        } = self;
        let Some(b) = blocks.get_mut(block) else {
            return;
        };
        let config = &fixed.config;
        let info = &grids[grid].info;
        let sp = special(
            info,
            config,
            b,
            &b.warps[warp as usize],
            *steps,
            program.shared_size,
        );
        let (sm, ctaid) = (b.sm, b.ctaid);
        let shared_quiet = !mem.performs_accesses_at_once() && {
            let w = &b.warps[warp as usize];
            w.pc_of(group.trailing_zeros() as usize)
                .and_then(|pc| program.instructions.get(pc as usize))
                .is_some_and(|i| super::memory_ops::weak_shared_load(&i.op))
                && super::memory_ops::block_cannot_write_shared(program, &b.warps)
        };
        let Block { warps, shared, .. } = b;
        let w = Arc::make_mut(&mut warps[warp as usize]);
        let was_targets = w.targets();
        let prefix = [Rule::Exec, Rule::ScheduleWarps];
        let pre = checking
            .then(|| super::invariants::Pre::capture(w))
            .flatten();
        let mut cx = Ctx {
            program,
            info,
            mem,
            block,
            special: sp,
            events: events.as_deref_mut(),
            full_detail: detail == super::EventDetail::Full,
            warp_index: warp,
            prefix: &prefix,
            unspecified: 0,
            shared_quiet,
        };
        let res = warp::step(&mut cx, shared, w, k, group, config.exited_warps_arrive);
        let out = match res {
            Ok(out) => out,
            Err(f) => {
                let pc = w.pc_of(group.trailing_zeros() as usize).unwrap_or(0);
                let e = self.fault(f, block, ctaid, warp, pc);
                self.termination = Some(Box::new(Termination::Error(e)));
                self.enabled.clear();
                return;
            }
        };
        self.thread_instructions += out.exec.count_ones() as u64;
        if let Some(pre) = pre
            && let Err(msg) = super::invariants::check(&pre, &out, w)
        {
            let e = invariant_violation(program, (named_grid, ctaid, warp), out.pc, &msg);
            self.termination = Some(Box::new(Termination::Error(e)));
            self.enabled.clear();
            return;
        }
        warp::refresh_targets(program, w);
        let completed = w.completed;
        let real = w.real;
        let new_targets = w.targets();
        let may_stay = w.choices_may_stay();
        let waiting = may_stay && w.waiting() != 0;
        let weight = w.exit_weight(info.shape.warp_size);
        shared.live_threads = shared
            .live_threads
            .saturating_sub((out.exited & real).count_ones());
        let mut barriers_changed = out.arrived != 0;
        if completed {
            // The exited-warps option: a warp that exits counts as arrived at every barrier in
            // use (with its weight: a whole warp under the SIMT stack, its real lanes else).
            let arrives = config.exited_warps_arrive.then_some(weight);
            barriers_changed |= barrier::exited_warp(shared, warp, arrives);
            if let Some(ev) = events.as_deref_mut() {
                ev.push(Event::WarpCompleted {
                    block,
                    warp,
                    derivation: Derivation::of(&[Rule::Exec, Rule::ScheduleWarps]),
                });
            }
        }
        let block_done = shared.live_warps == 0;
        if completed {
            self.free_warp(sm, real.count_ones());
        }
        if block_done {
            self.complete_block(block, events);
            return;
        }
        let changed = !may_stay
            || completed
            || waiting
            || new_targets != was_targets
            // A call whose lanes pick their results may be next (see `pick`).
            || !self.info.picks.is_empty();
        // Under cached memory a warp that was enabled stays so unless its next instruction
        // now waits for a pending load (a pass over the enabled set per warp step is what made
        // cached runs slow, issue 15). A warp that waits has no choices: its old ones go, and
        // the scoreboard is not asked again to find none (issue 15).
        if !changed && self.simt_mem_blocked(block, warp) {
            self.retain_enabled(|c| c.warp() != Some((block, warp)));
        }
        self.refresh_after_step(block, warp, changed, barriers_changed, completed);
    }

    /// The enabled set after a warp step: the warp's choices when its state changed, the
    /// block's barriers when an arrival changed them, issuing when the warp's completion freed
    /// room on its SM.
    #[inline]
    fn refresh_after_step(
        &mut self,
        block: u32,
        warp: u32,
        changed: bool,
        barriers_changed: bool,
        completed: bool,
    ) {
        if changed {
            self.refresh_warp(block, warp);
        }
        if barriers_changed {
            self.refresh_barriers(block);
        }
        if completed {
            self.refresh_issue();
        }
    }

    /// Block (endBar): the barrier completes, reduction results are written, waiters released.
    fn end_barrier(&mut self, block: u32, barrier: u32, events: Option<&mut Vec<Event>>) {
        let Some(b) = self.blocks.get_mut(block) else {
            return;
        };
        // A barrier orders memory among its participants (PTX ISA 9.7.13.1, deviation D24):
        // they drained their ops before arriving, and under cached memory no line of the SM's
        // L1 filled before the barrier may serve a read after it (digest T3's stale line). An
        // instance of one thread orders nothing for another: no flush.
        if barrier::orders_memory(&b.shared.bars[barrier as usize]) {
            self.mem.barrier_completed(b.sm);
        }
        let released = barrier::end_bar(b, barrier);
        if let Some(ev) = events {
            ev.push(Event::BarrierCompleted {
                block,
                barrier,
                derivation: Derivation::of(&[Rule::Exec, Rule::EndBar]),
            });
        }
        for w in released {
            self.update_targets(block, w);
            self.refresh_warp(block, w);
        }
        self.refresh_barriers(block);
    }

    /// Locates a fault: thread, pc, PTX line, `.loc` line, and the instruction in the message.
    fn fault(&self, f: Fault, block: u32, ctaid: [u32; 3], warp: u32, pc: u32) -> MachineError {
        let lane = f.lane.unwrap_or(0) as u32;
        let t = warp * self.info.shape.warp_size + lane;
        let src = self.program.source.get(pc as usize);
        let ptx_line = src.map(|s| s.ptx_line).unwrap_or(0);
        MachineError {
            kind: f.kind,
            grid: self.named_grid(block),
            block: ctaid,
            thread: self.grid_info(block).shape.tid(t),
            pc,
            ptx_line,
            source_line: src.and_then(|s| s.loc).map(|(file, line, _)| (file, line)),
            message: format!(
                "{} (instruction at pc {pc}, PTX line {ptx_line})",
                f.message
            ),
        }
    }

    /// Who waits where, when nothing is enabled (digest §13, barrier deadlock detection).
    fn deadlock_info(&self) -> Vec<WaitInfo> {
        let mut out = Vec::new();
        for b in self.blocks.values() {
            for w in &b.warps {
                if w.completed {
                    continue;
                }
                let describe = |mask: u16| {
                    barrier::describe_wait(&b.shared, mask, self.fixed.config.exited_warps_arrive)
                };
                let loc = |pc: u32| {
                    let s = self.program.source.get(pc as usize);
                    (
                        s.map(|s| s.ptx_line).unwrap_or(0),
                        s.and_then(|s| s.loc).map(|(f, l, _)| (f, l)),
                    )
                };
                for wait in w.waits() {
                    let (ptx_line, source_line) = loc(wait.pc);
                    let waiting_for = if wait.barriers != 0 {
                        describe(wait.barriers)
                    } else {
                        wait.otherwise.to_string()
                    };
                    out.push(WaitInfo {
                        grid: self.named_grid(b.id),
                        block: b.ctaid,
                        warp: w.index,
                        lanes: wait.lanes,
                        pc: wait.pc,
                        ptx_line,
                        source_line,
                        waiting_for,
                    });
                }
            }
        }
        out
    }
}

/// The error of a step after which a safety invariant of the branching algorithm (thesis
/// chapter 6) does not hold: a bug in cudasem's SIMT stack, reported at the warp's pc.
#[cold]
fn invariant_violation(
    program: &crate::program::Program,
    (grid, ctaid, warp): (Option<u32>, [u32; 3], u32),
    pc: crate::program::Pc,
    msg: &super::invariants::InvariantViolation,
) -> MachineError {
    MachineError {
        kind: ErrorKind::Stuck,
        grid,
        block: ctaid,
        thread: [0; 3],
        pc,
        ptx_line: program
            .source
            .get(pc as usize)
            .map(|s| s.ptx_line)
            .unwrap_or(0),
        source_line: None,
        message: format!("safety invariant violated (thesis chapter 6) in warp {warp}: {msg}"),
    }
}
