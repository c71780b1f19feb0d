//! The enabled set, kept incrementally (docs/internals/machine.md): each step refreshes only the
//! choices of the owners it touched (the stepped warp, its block's barriers, block issue), by
//! removing the owner's choices and appending its current ones. The order is therefore a
//! deterministic function of the history of choices, not a sorted order.

use super::Machine;
use super::block::Block;
use super::block::barrier;
use super::grid::GridPhase;
use super::warp::{ModelState, Warp, its, simt_stack};
use memory_model::MemoryEnv;
use smallvec::SmallVec;
use std::ops::{Deref, DerefMut};
use traces::Choice;

/// The machine's enabled set. Inline up to a litmus-size launch's worth of choices: explorers
/// clone the machine for every successor state, and a heap list would be one more allocation
/// per clone (and cloned as one slice copy: `SmallVec`'s own `clone` goes choice by choice).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct EnabledSet(SmallVec<[Choice; 8]>);

impl Clone for EnabledSet {
    fn clone(&self) -> Self {
        EnabledSet(SmallVec::from_slice(&self.0))
    }
}

impl Deref for EnabledSet {
    type Target = SmallVec<[Choice; 8]>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for EnabledSet {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// The block a choice concerns.
pub(crate) fn block_of(c: &Choice) -> Option<u32> {
    match *c {
        Choice::Warp { block, .. }
        | Choice::Target { block, .. }
        | Choice::Lanes { block, .. }
        | Choice::Pick { block, .. }
        | Choice::EndBarrier { block, .. } => Some(block),
        Choice::Issue { .. } | Choice::Mem(_) => None,
    }
}

impl Machine {
    /// Appends the current choices of one warp to `out`.
    pub(crate) fn warp_choices(&mut self, block: u32, warp: u32, out: &mut EnabledSet) {
        let Some(b) = self.blocks.get(block) else {
            return;
        };
        let Some(w) = b.warps.get(warp as usize) else {
            return;
        };
        if w.completed {
            return;
        }
        match &w.model {
            // The SIMT stack: the warp steps as a whole (`Warp`), or picks a target group.
            ModelState::Simt(s) => {
                if s.waiting != 0 || self.mem_blocked(block, warp, s.pc, w.real & !w.exited) {
                    return;
                }
                if let Some(p) = super::pick::pending_pick_simt(&self.program, &self.info, w) {
                    super::pick::pick_choices(block, warp, p, out);
                } else if s.targets > 1 {
                    out.extend((0..s.targets).map(|k| Choice::Target { block, warp, k }));
                } else {
                    out.push(Choice::Warp { block, warp });
                }
            }
            // ITS and threads: each converged group that may step (`Lanes`).
            ModelState::Its(its) => {
                let mut groups = std::mem::take(&mut self.scratch);
                self.its_groups(b, w, &mut groups);
                for &mask in groups.iter().filter(|&&mask| {
                    let pc = its.lane_pc[mask.trailing_zeros() as usize];
                    !self.mem_blocked(block, warp, pc, mask)
                }) {
                    match super::pick::pending_pick_group(&self.program, &self.info, w, mask) {
                        Some(p) => super::pick::pick_choices(block, warp, p, out),
                        None => out.push(Choice::Lanes { block, warp, mask }),
                    }
                }
                self.scratch = groups;
            }
        }
    }

    /// The converged groups of an ITS warp that may step now (see [`its::groups`]).
    fn its_groups(&self, b: &Block, w: &Warp, out: &mut Vec<u64>) {
        let sp = self.special(b, w);
        its::groups(&self.program, w, &sp, out);
    }

    /// Whether `Lanes{block, warp, mask}` is one of the warp's current choices (ITS/threads),
    /// without building the choice list.
    pub(crate) fn lanes_enabled(&mut self, block: u32, warp: u32, mask: u64) -> bool {
        let Some(b) = self.blocks.get(block) else {
            return false;
        };
        let Some(w) = b.warps.get(warp as usize) else {
            return false;
        };
        if w.completed || !matches!(w.model, ModelState::Its(_)) {
            return false;
        }
        let mut groups = std::mem::take(&mut self.scratch);
        self.its_groups(b, w, &mut groups);
        let found = groups.contains(&mask);
        self.scratch = groups;
        found
    }

    /// Replaces the warp's choices in the enabled set.
    pub(crate) fn refresh_warp(&mut self, block: u32, warp: u32) {
        self.retain_enabled(|c| c.warp() != Some((block, warp)));
        let mut out = std::mem::take(&mut self.enabled);
        self.warp_choices(block, warp, &mut out);
        self.enabled = out;
    }

    /// Replaces the block's `EndBarrier` choices.
    pub(crate) fn refresh_barriers(&mut self, block: u32) {
        if let Some(b) = self.blocks.get(block) {
            let ready = barrier::ready_mask(&b.shared.bars);
            // Nothing to remove and nothing to add: the set stays as it is (O(16), not O(|enabled|)).
            if ready == 0 && b.shared.end_choices == 0 {
                return;
            }
            // Written only when it changes: the block is copied on write.
            if ready != b.shared.end_choices
                && let Some(b) = self.blocks.get_mut(block)
            {
                b.shared.end_choices = ready;
            }
        }
        self.retain_enabled(|c| !matches!(c, Choice::EndBarrier { block: b, .. } if *b == block));
        if let Some(b) = self.blocks.get(block) {
            for (i, bar) in b.shared.bars.iter().enumerate() {
                if bar.ready() {
                    self.enabled.push(Choice::EndBarrier {
                        block,
                        barrier: i as u32,
                    });
                }
            }
        }
    }

    /// Replaces the `Issue` choices: the next unscheduled block of every active grid onto each
    /// SM with room for it.
    pub(crate) fn refresh_issue(&mut self) {
        self.retain_enabled(|c| !matches!(c, Choice::Issue { .. }));
        let mut out = std::mem::take(&mut self.enabled);
        self.issue_choices(&mut out);
        self.enabled = out;
    }

    /// Appends the `Issue` choices (grid by grid in launch order, SM by SM).
    fn issue_choices(&self, out: &mut EnabledSet) {
        for (i, g) in self.grids.iter().enumerate() {
            if g.phase != GridPhase::Active || g.next_block >= g.info.shape.blocks {
                continue;
            }
            for sm in 0..self.sms.len() as u32 {
                if self.fits(i, sm) {
                    out.push(Choice::Issue {
                        grid: i as u32,
                        block: g.base + g.next_block,
                        sm,
                    });
                }
            }
        }
    }

    /// Recomputes the SIMT `Target` count of a warp (nothing under ITS).
    pub(crate) fn update_targets(&mut self, block: u32, warp: u32) {
        // Read first: the block and warp are copied (copy-on-write) only if the count changes.
        let Some(w) = self.resident_warp(block, warp) else {
            return;
        };
        let ModelState::Simt(s) = &w.model else {
            return;
        };
        let t = simt_stack::pending_targets(&self.program, w);
        if t != s.targets
            && let Some(w) = self.resident_warp_mut(block, warp)
        {
            std::sync::Arc::make_mut(w).simt_mut().targets = t;
        }
    }

    /// Recomputes the enabled set from scratch (tests compare it with the incremental one):
    /// the memory's choices under cached memory, then every warp's, barrier's and issue's.
    pub fn enabled_from_scratch(&mut self) -> Vec<Choice> {
        let mut out = EnabledSet::default();
        if self.termination.is_some() {
            return out.to_vec();
        }
        out.extend(self.mem.enabled_unordered().iter().map(|&m| Choice::Mem(m)));
        let keys: Vec<(u32, u32)> = self
            .blocks
            .iter()
            .flat_map(|(b, blk)| (0..blk.warps.len() as u32).map(move |w| (b, w)))
            .collect();
        for (b, w) in keys {
            self.warp_choices(b, w, &mut out);
        }
        for (id, b) in self.blocks.iter() {
            for (i, bar) in b.shared.bars.iter().enumerate() {
                if bar.ready() {
                    out.push(Choice::EndBarrier {
                        block: id,
                        barrier: i as u32,
                    });
                }
            }
        }
        self.issue_choices(&mut out);
        out.to_vec()
    }
}
