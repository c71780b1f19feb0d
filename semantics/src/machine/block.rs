//! Thread-block layer (thesis 5.5): warps, the 16 barriers, the counts of live warps and threads.
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

use super::ErrorKind;
use super::exec::Fault;
use super::warp::Warp;
use crate::program::{BarRed, RegId};
use smallvec::SmallVec;
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

/// Block state other than the warps (split so a warp step can borrow both).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BlockShared {
    /// Shared copy-on-write (written through `Arc::make_mut`): only barrier instructions and
    /// completions change them, and a warp step copies its block.
    pub bars: Arc<[Barrier; 16]>,
    pub live_warps: u32,
    pub live_threads: u32,
    /// Warps that completed (for deadlock explanations, T20).
    pub exited_warps: Vec<u32>,
    /// Barriers whose `EndBarrier` choice is in the machine's enabled set (bit per index), so
    /// that an arrival that readies nothing skips the scan of the enabled set.
    pub end_choices: u16,
}

/// A resident thread block.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Block {
    /// Linear index in the grid.
    #[allow(dead_code)]
    pub id: u32,
    pub ctaid: [u32; 3],
    pub sm: u32,
    /// Inline for one-warp blocks (litmus tests): a warp step copies its block.
    pub warps: SmallVec<[Arc<Warp>; 1]>,
    pub shared: BlockShared,
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
