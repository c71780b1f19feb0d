//! The barrier divergence monitor (digest `seeds_gpuverify.md` §1.1.4, §2.3 "Barrier divergence
//! detector", §3.4 D1/D2).
//!
//! Each thread carries seed 001's barrier variables `β = (v_barrier, (v_L) for each loop L)`:
//! `v_barrier` is the pc of the barrier it waits at, `v_L` counts the iterations of loop `L`
//! since the thread last entered it (incremented at each execution of `L`'s header, restarted at
//! 1 on entry; see [`super::Loops`]). When threads of a block arrive at one barrier resource,
//! their `β` restricted to the loops enclosing their barrier must agree (BARRIER_F otherwise):
//! * different pcs: [`DivergenceKind::DifferentBarriers`] (T-S3-3, D2: warp-uniform branches,
//!   block-divergent barriers; the per-warp check alone passes them);
//! * same pc, different counters: [`DivergenceKind::LoopIterations`] (D1, which a pc-only check
//!   misses).
//!
//! Two cheaper checks catch what the thesis's per-warp arrival counting lets through:
//! * under the SIMT stack, a warp executing `bar.sync` with live lanes that are not active is
//!   divergent: the lock-step barrier assertion (seed 001 Table 3a) at warp granularity. The
//!   missing lanes' position comes from the SIMT stack (the token holding them);
//! * a thread that exits while threads of its block wait at a barrier that expects all threads
//!   met seed 001's END barrier (the "final barrier" convention of §1.1.1): reported with the
//!   exit's pc, so a kernel with `__syncthreads()` under a divergent `if` is a divergence with
//!   both sites, not only a deadlock.
//!
//! Barriers with an explicit thread count (`bar.sync 1, 64`) and `bar.arrive` are not checked for
//! exits (producer/consumer patterns let producers leave).

use super::{BarrierSite, Divergence, DivergenceKind, Instr, Monitors, Shape};
use std::collections::BTreeSet;
use traces::Event;

/// The first arrival at a barrier instance: what the others must match.
#[derive(Debug, Clone)]
struct Reference {
    tid: u32,
    pc: u32,
    counters: Vec<u32>,
}

#[derive(Debug, Clone, Default)]
struct Pending {
    reference: Option<Reference>,
    /// The instance waits for all threads of the block.
    full: bool,
    /// A divergence of this instance was reported (one per instance).
    reported: bool,
}

#[derive(Debug)]
struct BlockBar {
    /// `counters[tid * loops + L]`.
    counters: Vec<u32>,
    /// Per warp (SIMT stack) the last pc executed; per thread under `its`/`threads`.
    last_pc: Vec<u32>,
    /// Per thread: 1 + the pc of its `exit`, 0 while live.
    exited: Vec<u32>,
    first_exited: Option<u32>,
    pending: Vec<Pending>,
}

pub(crate) struct BarrierState {
    blocks: Vec<Option<Box<BlockBar>>>,
    loops: u32,
    /// Reported `(kind, pc, other pc)`: one report per pair of sites.
    seen: BTreeSet<(u8, u32, u32)>,
}

impl BarrierState {
    pub fn new() -> BarrierState {
        BarrierState {
            blocks: Vec::new(),
            loops: 0,
            seen: BTreeSet::new(),
        }
    }

    pub fn issue(&mut self, block: u32, shape: &Shape, loops: u32) {
        self.loops = loops;
        let per_thread = shape.model.per_thread();
        let b = BlockBar {
            counters: vec![0; shape.grid.threads_per_block as usize * loops as usize],
            last_pc: vec![
                u32::MAX;
                if per_thread {
                    shape.grid.threads_per_block as usize
                } else {
                    shape.grid.warps_per_block as usize
                }
            ],
            exited: vec![0; shape.grid.threads_per_block as usize],
            first_exited: None,
            pending: vec![Pending::default(); 16],
        };
        let i = block as usize;
        if self.blocks.len() <= i {
            self.blocks.resize_with(i + 1, || None);
        }
        self.blocks[i] = Some(Box::new(b));
    }

    pub fn retire(&mut self, block: u32) {
        if let Some(b) = self.blocks.get_mut(block as usize) {
            *b = None;
        }
    }

    pub fn complete(&mut self, block: u32, bar: u32) {
        if let Some(Some(b)) = self.blocks.get_mut(block as usize)
            && let Some(p) = b.pending.get_mut(bar as usize)
        {
            *p = Pending::default();
        }
    }
}

impl Monitors {
    /// Loop counters and exits, after a warp step.
    pub(crate) fn barrier_executed(&mut self, ins: &Instr) {
        if ins.lanes == 0 {
            return;
        }
        let shape = self.shape(ins.block);
        let nl = self.barrier.loops as usize;
        let Some(Some(b)) = self.barrier.blocks.get_mut(ins.block as usize) else {
            return;
        };
        let per_thread = shape.model.per_thread();
        if let Some(l) = self.loops.header_at(ins.pc) {
            for lane in crate::machine::warp::lanes(ins.lanes).map(|l| l as u32) {
                let tid = (ins.warp * shape.grid.warp_size + lane) as usize;
                let prev = if per_thread {
                    b.last_pc.get(tid).copied()
                } else {
                    b.last_pc.get(ins.warp as usize).copied()
                };
                let Some(prev) = prev else { continue };
                if prev == ins.pc {
                    // The same instruction twice in a row: an implicit reconvergence step.
                    continue;
                }
                if let Some(c) = b.counters.get_mut(tid * nl + l as usize) {
                    *c = if prev != u32::MAX && self.loops.contains(l, prev) {
                        *c + 1
                    } else {
                        1
                    };
                }
            }
        }
        if per_thread {
            for lane in crate::machine::warp::lanes(ins.lanes).map(|l| l as u32) {
                if let Some(p) = b
                    .last_pc
                    .get_mut((ins.warp * shape.grid.warp_size + lane) as usize)
                {
                    *p = ins.pc;
                }
            }
        } else if let Some(p) = b.last_pc.get_mut(ins.warp as usize) {
            *p = ins.pc;
        }
        if ins.class.exits {
            let gone = ins.lanes & ins.exited;
            if gone == 0 {
                return;
            }
            for lane in crate::machine::warp::lanes(gone).map(|l| l as u32) {
                let tid = ins.warp * shape.grid.warp_size + lane;
                if let Some(e) = b.exited.get_mut(tid as usize) {
                    *e = ins.pc + 1;
                }
                b.first_exited.get_or_insert(tid);
            }
            // Threads already waiting at a barrier for everyone: the exit meets END instead.
            let waiting = b
                .pending
                .iter()
                .enumerate()
                .find_map(|(i, p)| match &p.reference {
                    Some(r) if p.full && !p.reported => Some((i as u32, r.tid, r.pc)),
                    _ => None,
                });
            if let Some((bar, wtid, wpc)) = waiting {
                if let Some(p) = b.pending.get_mut(bar as usize) {
                    p.reported = true;
                }
                let exit_tid = ins.warp * shape.grid.warp_size + gone.trailing_zeros();
                self.exit_divergence(ins.block, bar, wtid, wpc, exit_tid, ins.pc);
            }
        }
    }

    /// A warp (or one lane, under `its`/`threads`) arrived at barrier `bar`.
    pub(crate) fn barrier_arrive(
        &mut self,
        block: u32,
        warp: u32,
        bar: u32,
        lanes: u64,
        ins: &Instr,
        events: &[Event],
    ) {
        let shape = self.shape(block);
        // 1. The lock-step barrier assertion per warp (SIMT stack only: under `its` lanes arrive
        //    separately by design).
        if !shape.model.per_thread() {
            let live = shape.warp_mask(warp) & !ins.exited;
            let missing = live & !lanes;
            if missing != 0 && lanes != 0 {
                let lane = missing.trailing_zeros();
                // Where the missing lane is: the SIMT stack token that holds it.
                let resume = events.iter().find_map(|e| match e {
                    Event::Executed { stack, .. } => {
                        stack.iter().find(|t| t.mask >> lane & 1 == 1).map(|t| t.pc)
                    }
                    _ => None,
                });
                let here = warp * shape.grid.warp_size + lanes.trailing_zeros();
                let there = warp * shape.grid.warp_size + lane;
                let key = (
                    DivergenceKind::DivergentWarp as u8,
                    ins.pc,
                    resume.unwrap_or(u32::MAX),
                );
                if self.barrier.seen.insert(key) && !self.full() {
                    let first = self.site(block, here, ins.pc, format!("barrier {bar}"));
                    let second = self.site(
                        block,
                        there,
                        resume.unwrap_or(ins.pc),
                        match resume {
                            Some(_) => "inactive (diverged): resumes here".to_string(),
                            None => "inactive (diverged)".to_string(),
                        },
                    );
                    self.push_divergence(DivergenceKind::DivergentWarp, block, bar, first, second);
                }
            }
        }
        // 2. β of every arriving lane against the instance's first arrival.
        let nl = self.barrier.loops as usize;
        let enclosing = self.loops.enclosing(ins.pc);
        let mut mismatch: Option<(Reference, u32, Vec<u32>)> = None;
        let mut exited_first: Option<(u32, u32)> = None;
        {
            let Some(Some(b)) = self.barrier.blocks.get_mut(block as usize) else {
                return;
            };
            let Some(p) = b.pending.get_mut(bar as usize) else {
                return;
            };
            p.full |= ins.class.barrier_full && ins.class.barrier_waits;
            // A thread's barrier variables `β` (its counters of the enclosing loops), compared
            // in place: only the reference and a mismatch are kept.
            let counter = |tid: u32, l: u32| {
                b.counters
                    .get(tid as usize * nl + l as usize)
                    .copied()
                    .unwrap_or(0)
            };
            let counters =
                |tid: u32| -> Vec<u32> { enclosing.iter().map(|&l| counter(tid, l)).collect() };
            for lane in crate::machine::warp::lanes(lanes).map(|l| l as u32) {
                let tid = warp * shape.grid.warp_size + lane;
                match &p.reference {
                    None => {
                        p.reference = Some(Reference {
                            tid,
                            pc: ins.pc,
                            counters: counters(tid),
                        })
                    }
                    Some(r) => {
                        if !p.reported
                            && (r.pc != ins.pc
                                || r.counters.len() != enclosing.len()
                                || enclosing
                                    .iter()
                                    .zip(&r.counters)
                                    .any(|(&l, &c)| counter(tid, l) != c))
                        {
                            mismatch = Some((r.clone(), tid, counters(tid)));
                            p.reported = true;
                        }
                    }
                }
            }
            // 3. Someone of the block exited already: END met this barrier.
            if p.full
                && !p.reported
                && ins.class.barrier_full
                && ins.class.barrier_waits
                && let Some(t) = b.first_exited
            {
                p.reported = true;
                let epc = b
                    .exited
                    .get(t as usize)
                    .copied()
                    .unwrap_or(1)
                    .saturating_sub(1);
                exited_first = Some((t, epc));
            }
        }
        if let Some((r, tid, counters)) = mismatch {
            let kind = if r.pc != ins.pc {
                DivergenceKind::DifferentBarriers
            } else {
                DivergenceKind::LoopIterations
            };
            let key = (kind as u8, r.pc, ins.pc);
            if self.barrier.seen.insert(key) && !self.full() {
                let mut first = self.site(block, r.tid, r.pc, format!("barrier {bar}"));
                first.loop_counters = r.counters.clone();
                let mut second = self.site(block, tid, ins.pc, format!("barrier {bar}"));
                second.loop_counters = counters;
                self.push_divergence(kind, block, bar, first, second);
            }
        }
        if let Some((t, epc)) = exited_first {
            let here = warp * shape.grid.warp_size + lanes.trailing_zeros();
            self.exit_divergence(block, bar, here, ins.pc, t, epc);
        }
    }

    fn exit_divergence(&mut self, block: u32, bar: u32, wtid: u32, wpc: u32, etid: u32, epc: u32) {
        let key = (DivergenceKind::ExitedBeforeBarrier as u8, wpc, epc);
        if !self.barrier.seen.insert(key) || self.full() {
            return;
        }
        let first = self.site(block, wtid, wpc, format!("barrier {bar}"));
        let second = self.site(block, etid, epc, "exited".to_string());
        self.push_divergence(
            DivergenceKind::ExitedBeforeBarrier,
            block,
            bar,
            first,
            second,
        );
    }

    fn site(&self, block: u32, tid: u32, pc: u32, what: String) -> BarrierSite {
        let (ptx_line, source_line) = self.lines(pc);
        let nl = self.barrier.loops as usize;
        let loop_counters = match self.barrier.blocks.get(block as usize) {
            Some(Some(b)) => self
                .loops
                .enclosing(pc)
                .iter()
                .map(|&l| {
                    b.counters
                        .get(tid as usize * nl + l as usize)
                        .copied()
                        .unwrap_or(0)
                })
                .collect(),
            _ => Vec::new(),
        };
        let shape = self.shape(block);
        BarrierSite {
            thread: tid,
            thread_idx: shape.grid.tid(tid),
            warp: tid / shape.grid.warp_size,
            lane: tid % shape.grid.warp_size,
            pc,
            ptx_line,
            source_line,
            what,
            loop_counters,
        }
    }

    fn push_divergence(
        &mut self,
        kind: DivergenceKind,
        block: u32,
        barrier: u32,
        first: BarrierSite,
        second: BarrierSite,
    ) {
        let shape = self.shape(block);
        self.findings.divergences.push(Divergence {
            kind,
            grid: shape.grid_index,
            block: shape.local_block(block),
            block_idx: shape.block_idx(block),
            barrier,
            first,
            second,
            step: self.step,
        });
    }
}
