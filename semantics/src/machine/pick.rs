//! Calls to functions without a body that return one of several values (deviation D28; the
//! launch file's `extern_calls: { "f": Values([..]) }`).
//!
//! PTX leaves such a function to the linker, so the launch says what a call returns. GPUVerify
//! lets it return an arbitrary value; cudasem's honest finite version is a set of values and a
//! scheduler choice per *thread*: each thread's call is its own call and may return its own
//! value. A warp instruction of `n` executing lanes would otherwise be one choice among
//! `|values|^n`; instead the lanes decide one at a time, in ascending lane order, each by a
//! [`Choice::Pick`] taken while the warp sits on the call, before the instruction executes:
//! `|values|` choices at a time, `n` times. The lanes' picks are thread-local (they write no
//! memory, only the lane's pending result), so interleaving them with other warps' steps adds
//! no behaviour, and explorers treat a pick as a step of the warp that owns the lane.
//!
//! A lane executes the call ([`crate::program::Op::Extern`]) only after every executing lane of
//! its warp instruction has picked: until then the warp offers its next lane's picks instead of
//! its ordinary step. With one value there is nothing to choose: the launch states it as the
//! fixed value and no `Pick` is ever offered (today's `Value(v)`).

use super::enabled::EnabledSet;
use super::warp::{Warp, simt_stack};
use super::{LaunchInfo, Machine};
use crate::program::{Op, Pc, Program};
use std::sync::Arc;
use traces::Choice;

/// The values a call at `pc` picks from, if the instruction there is a call to a body-less
/// function whose launch gives a set.
fn pick_values<'i>(program: &Program, info: &'i LaunchInfo, pc: Pc) -> Option<&'i [u64]> {
    if info.picks.is_empty() {
        return None;
    }
    let Some(Op::Extern { slot, .. }) = program.instructions.get(pc as usize).map(|i| &i.op) else {
        return None;
    };
    info.picks
        .iter()
        .find(|(s, _)| s == slot)
        .map(|(_, v)| &v[..])
}

/// The lane of `group` (lanes at `pc`, call depth `level`) that picks next and the number of
/// values, or `None` when the group's instruction needs no pick (not such a call, or every
/// executing lane, those whose guard holds, has picked).
pub(crate) fn pending_pick(
    program: &Program,
    info: &LaunchInfo,
    w: &Warp,
    group: u64,
    level: usize,
    pc: Pc,
) -> Option<(u32, u32)> {
    let values = pick_values(program, info, pc)?;
    let exec = simt_stack::guard_mask(program, w, group, level, pc);
    let open = exec & !w.picked;
    (open != 0).then(|| (open.trailing_zeros(), values.len() as u32))
}

/// The pending pick of a warp under the SIMT stack: its next step is the instruction at `pc`
/// for the active lanes (not the implicit sync of a reconvergence point).
pub(crate) fn pending_pick_simt(
    program: &Program,
    info: &LaunchInfo,
    w: &Warp,
) -> Option<(u32, u32)> {
    let s = w.simt();
    if info.picks.is_empty() || w.completed || s.active == 0 {
        return None;
    }
    if s.stack.last().is_some_and(|t| t.reconv == Some(s.pc)) {
        return None;
    }
    pending_pick(program, info, w, s.active, w.active_level(), s.pc)
}

/// The pending pick of a converged group under ITS or the threads model.
pub(crate) fn pending_pick_group(
    program: &Program,
    info: &LaunchInfo,
    w: &Warp,
    group: u64,
) -> Option<(u32, u32)> {
    if info.picks.is_empty() || group == 0 {
        return None;
    }
    let l = group.trailing_zeros() as usize;
    pending_pick(
        program,
        info,
        w,
        group,
        w.depth[l] as usize,
        w.its().lane_pc[l],
    )
}

/// The `Pick` choices of lane `lane` of a warp: one per value.
pub(crate) fn pick_choices(block: u32, warp: u32, (lane, n): (u32, u32), out: &mut EnabledSet) {
    out.extend((0..n).map(|k| Choice::Pick {
        block,
        warp,
        lane,
        k,
    }));
}

impl Machine {
    /// Whether `Pick { block, warp, lane, k }` is enabled: the warp's current choices include it.
    pub(crate) fn pick_enabled(&mut self, block: u32, warp: u32, lane: u32, k: u32) -> bool {
        let mut out = EnabledSet::default();
        self.warp_choices(block, warp, &mut out);
        out.contains(&Choice::Pick {
            block,
            warp,
            lane,
            k,
        })
    }

    /// A `Pick`: lane `lane` of the warp takes value `k` of its call's set as its result.
    pub(crate) fn pick(&mut self, block: u32, warp: u32, lane: u32, k: u32) {
        let ws = self.info.shape.warp_size as usize;
        let Some(w) = self.resident_warp(block, warp) else {
            return;
        };
        let Some(&value) = w
            .pc_of(lane as usize)
            .and_then(|pc| pick_values(&self.program, &self.info, pc))
            .and_then(|v| v.get(k as usize))
        else {
            return;
        };
        let Some(w) = self.resident_warp_mut(block, warp) else {
            return;
        };
        let w = Arc::make_mut(w);
        let picks = w.picks.get_or_insert_with(|| vec![0; ws].into());
        Arc::make_mut(picks)[lane as usize] = value;
        w.picked |= 1 << lane;
        self.refresh_warp(block, warp);
    }
}
