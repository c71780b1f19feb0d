//! The barriers of a thread block (thesis 5.5.1-5.5.2), in one place for every warp model: the
//! warp models compute an arrival (which lanes name which barrier, with which count) and this
//! module does the rest: preparation and counting ([`arrive`]: `prepBar`, `updAct`,
//! `updArrCnt`), the `bar.red` votes ([`vote`]), enabledness ([`ready_mask`]), completion
//! ([`end_bar`]: `endBar`), the exited-warps option ([`exited_warp`]) and what a waiting warp
//! waits for ([`describe_wait`]).
//!
//! Barriers follow thesis 5.5.1 (`barInfo`, `prepBar`, `updAct`, `updArrCnt`, `endBar`):
//! * SIMT stack: arrival is counted per WARP: a warp in which any lane executes `bar` on barrier
//!   `b` adds WarpSize to `b`'s count, once per distinct barrier per step (`updArrCnt`);
//! * ITS/threads: arrival is counted per thread (each executing lane adds 1; beyond the thesis);
//! * the default thread count is fixed when the barrier is initialised (first arrival): the live
//!   warps × WarpSize (SIMT), the live threads (ITS/threads);
//! * an explicit thread count must be a positive multiple of WarpSize and agree with the
//!   barrier's; `bar.red` must not be mixed with `bar.sync`/`bar.arrive`, nor with another
//!   reduction operator (digest A8, stronger reading); `bar.sync` and `bar.arrive` mix freely
//!   (digest A10, recommended reading: deviation from `barInfo`, which compares barrier types);
//! * reduction results go to the lanes that executed `bar.red` only (`barAct`, `reduce`);
//! * completion is a separate `EndBarrier` choice while the block is resident.

use super::super::ErrorKind;
use super::super::exec::Fault;
use super::super::warp::lanes;
use super::{Block, BlockShared};
use crate::program::{BarRed, RegId};
use std::sync::Arc;

/// One barrier (thesis `Barrier = ThreadCnt × ArrCnt × BarrierRed_ε × BarrierAct_Θ*`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Barrier {
    /// χ(b) ≠ ε.
    pub in_use: bool,
    pub tc: u32,
    pub ac: u32,
    /// `Some` for a `bar.red` barrier.
    pub red: Option<BarRed>,
    /// Reduction state over the participating lanes' predicates.
    pub popc: u32,
    pub and: bool,
    pub or: bool,
    /// Warps that arrived in this phase (bitset), for `exited_warps_arrive`.
    pub arrived: Vec<u64>,
    /// Lanes to receive the reduction result: (warp, lanes, destination register, call level).
    pub participants: Vec<(u32, u64, RegId, u16)>,
}

impl Barrier {
    pub fn ready(&self) -> bool {
        self.in_use && self.ac >= self.tc
    }

    pub fn has_arrived(&self, warp: u32) -> bool {
        self.arrived
            .get(warp as usize / 64)
            .is_some_and(|w| w >> (warp % 64) & 1 == 1)
    }

    fn mark(&mut self, warp: u32) {
        let i = warp as usize / 64;
        if self.arrived.len() <= i {
            self.arrived.resize(i + 1, 0);
        }
        self.arrived[i] |= 1 << (warp % 64);
    }

    /// The reduction result (thesis `reduce`).
    pub fn result(&self) -> u64 {
        match self.red {
            Some(BarRed::Popc) => self.popc as u64,
            Some(BarRed::And) => self.and as u64,
            Some(BarRed::Or) => self.or as u64,
            None => 0,
        }
    }
}

/// The barrier a lane names: PTX ISA 9.7.13.1 (`bar`, `barrier`) allows the indices 0 to 15;
/// any other value is a fault of that lane.
pub(crate) fn index(value: u64, lane: usize) -> Result<u32, Fault> {
    if value < 16 {
        Ok(value as u32)
    } else {
        Err(Fault::new(
            ErrorKind::Barrier,
            Some(lane),
            format!("barrier index {value} is not in 0..16"),
        ))
    }
}

/// One arrival at a barrier (thesis `prepBar` + `updAct` + `updArrCnt` for one barrier).
/// `count`: the lanes' explicit thread count, if any; `default_tc`: the default count;
/// `weight`: what the arrival adds (WarpSize for a SIMT warp, the lane count under ITS).
#[allow(clippy::too_many_arguments)]
pub(crate) fn arrive(
    bar: &mut Barrier,
    id: u32,
    warp: u32,
    count: Option<u32>,
    default_tc: u32,
    weight: u32,
    red: Option<BarRed>,
    warp_size: u32,
) -> Result<(), Fault> {
    if let Some(c) = count
        && (c == 0 || c % warp_size != 0)
    {
        return Err(Fault::new(
            ErrorKind::Barrier,
            None,
            format!(
                "barrier {id}: thread count {c} is not a positive multiple of the warp size {warp_size}"
            ),
        ));
    }
    if !bar.in_use {
        bar.in_use = true;
        bar.tc = count.unwrap_or(default_tc);
        bar.ac = 0;
        bar.red = red;
        bar.popc = 0;
        bar.and = true;
        bar.or = false;
        bar.arrived.iter_mut().for_each(|w| *w = 0);
        bar.participants.clear();
    } else {
        if let Some(c) = count
            && c != bar.tc
        {
            return Err(Fault::new(
                ErrorKind::Barrier,
                None,
                format!(
                    "barrier {id}: thread count {c} differs from the count {} it was initialised with",
                    bar.tc
                ),
            ));
        }
        if red != bar.red {
            let name = |r: Option<BarRed>| match r {
                None => "bar.sync/bar.arrive".to_string(),
                Some(r) => format!("bar.red.{}", format!("{r:?}").to_lowercase()),
            };
            return Err(Fault::new(
                ErrorKind::Barrier,
                None,
                format!(
                    "barrier {id}: {} joins a barrier in use by {} (PTX: unpredictable)",
                    name(red),
                    name(bar.red)
                ),
            ));
        }
    }
    bar.ac += weight;
    bar.mark(warp);
    Ok(())
}

/// Whether the completing instance of `bar` orders memory between threads (PTX ISA 9.7.13.1,
/// `bar`: prior accesses are performed "relative to all threads participating in the
/// barrier"; deviation D24): it counts more than one thread. An instance of thread count 1
/// has the arriving thread as its only participant and orders nothing for another, whatever
/// operand gave the count. The arrival side decides before the count is known
/// ([`crate::program::Op::barrier_counts_one_thread`] looks at an immediate only), so a
/// count of 1 read from a register still drains at arrival: stronger than needed, sound.
pub(crate) fn orders_memory(bar: &Barrier) -> bool {
    bar.tc > 1
}

/// The barriers that may complete (thesis 5.5.2 `endBar`'s premise: a barrier in use whose
/// arrival count reached its thread count), one bit per index: the `EndBarrier` choices of
/// the block, for every warp model.
pub(crate) fn ready_mask(bars: &[Barrier; 16]) -> u16 {
    bars.iter()
        .enumerate()
        .fold(0u16, |m, (i, bar)| m | (bar.ready() as u16) << i)
}

/// A `bar.red` participant's predicate (thesis `barAct`, `reduce`): counted into the
/// barrier's `.popc`, `.and` and `.or`.
pub(crate) fn vote(bar: &mut Barrier, p: bool) {
    bar.popc += p as u32;
    bar.and &= p;
    bar.or |= p;
}

/// (endBar), thesis 5.5.2: barrier `barrier` of `block` completes: the reduction result goes to
/// the lanes that executed `bar.red`, the barrier is free again (χ(b) = ε), and every warp (or
/// lane, under ITS) waiting for it is released. Returns the released warps, ascending.
pub(crate) fn end_bar(b: &mut Block, barrier: u32) -> Vec<u32> {
    let bar = &mut Arc::make_mut(&mut b.shared.bars)[barrier as usize];
    let result = bar.result();
    let participants = std::mem::take(&mut bar.participants);
    bar.in_use = false;
    for &(wi, lanes_m, dst, level) in &participants {
        if let Some(w) = b.warps.get_mut(wi as usize) {
            let w = Arc::make_mut(w);
            if let Some(row) = w
                .levels
                .get_mut(level as usize)
                .and_then(|lvl| lvl.regs.row_mut(dst.0 as usize))
            {
                for l in lanes(lanes_m) {
                    if let Some(r) = row.get_mut(l) {
                        *r = result;
                    }
                }
            }
        }
    }
    // The participants' buffer is kept (cleared) for the barrier's next phase.
    let bar = &mut Arc::make_mut(&mut b.shared.bars)[barrier as usize];
    bar.participants = participants;
    bar.participants.clear();
    let bit = 1u16 << barrier;
    let mut released = Vec::new();
    for (i, w) in b.warps.iter_mut().enumerate() {
        // Read first: a warp is copied (copy-on-write) only if it waited.
        if w.waits_for(bit) {
            Arc::make_mut(w).release(bit);
            released.push(i as u32);
        }
    }
    released
}

/// Warp `warp` of a block exited: one live warp less. With the exited-warps option (`arrives`:
/// the warp's weight, a whole warp under the SIMT stack, its real lanes else) it counts as
/// arrived at every barrier in use it has not arrived at (hardware's behaviour; the thesis
/// does not count exited warps, 5.5.2). Returns whether a barrier's count changed.
#[inline]
pub(crate) fn exited_warp(shared: &mut BlockShared, warp: u32, arrives: Option<u32>) -> bool {
    shared.live_warps = shared.live_warps.saturating_sub(1);
    shared.exited_warps.push(warp);
    let mut changed = false;
    if let Some(weight) = arrives {
        for bar in Arc::make_mut(&mut shared.bars)
            .iter_mut()
            .filter(|b| b.in_use)
        {
            if !bar.has_arrived(warp) {
                bar.ac += weight;
                changed = true;
            }
        }
    }
    changed
}

/// What a warp waiting for the barriers of `mask` waits for, for deadlock reports: each
/// barrier's arrivals, and the warps that exited without arriving when they are not counted.
pub(crate) fn describe_wait(shared: &BlockShared, mask: u16, exited_warps_arrive: bool) -> String {
    let exited = &shared.exited_warps;
    let mut parts = Vec::new();
    for i in 0..16 {
        if mask >> i & 1 == 1 {
            let bar = &shared.bars[i];
            let mut s = format!("barrier {i} ({} of {} threads arrived)", bar.ac, bar.tc);
            if !exited.is_empty() && !exited_warps_arrive {
                s.push_str(&format!(
                    "; warp(s) {exited:?} exited without arriving (the thesis does not count exited warps as arrived, thesis section 5.5.2; hardware does: --exited-warps-arrive)"
                ));
            }
            parts.push(s);
        }
    }
    parts.join(", ")
}
