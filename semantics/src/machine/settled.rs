//! Loads of settled words: a load whose every global word lies in memory that no other warp
//! may write from the current state on ([`Machine::loads_only_settled_words`]).
//!
//! Under flat memory (thesis section 5.3.2: every access is performed inside its step) such a
//! load commutes with every step any other warp can take from here on: reads commute with
//! reads, and nobody writes the words; it enables and disables nothing (no other warp reads
//! the loading warp's registers). It is therefore *invisible* in the sense of the search's fold
//! of invisible steps and may form a persistent set alone. A volatile load (`ld.volatile`) of
//! such a word is invisible too: under flat memory its value cannot change, whichever step
//! comes first.
//!
//! This is a **from-now-on** fact: it says nothing about stores that already happened. It must
//! not be used to drop a load from a footprint that finds races with past events (dynamic
//! partial-order reduction compares a step with earlier ones), only by the fold and persistent
//! sets, which reorder a step with what comes after it.
//!
//! What "no other warp may write" covers, from [`crate::load::may_write`]'s per-address summary
//! mapped to the launch's global segments (each launch buffer and each module `.global`
//! variable is one segment; a kernel parameter names the segment its value points into, in
//! the parameter buffer of each grid):
//! * every resident warp but the loading one that has not completed: the union over the pcs
//!   its lanes resume at (the SIMT stack's pc and every token's; under independent thread
//!   scheduling and the threads model, every live lane's pc; a warp waiting at a barrier
//!   resumes at it) and, for a lane inside a call, over the call addresses of its frames below
//!   the top (what the caller may still write once the call returns);
//! * every block not issued yet, and every grid not started yet, from its kernel's entry.
//!
//! The loading warp's own other lanes are left out: steps of one warp are never reordered
//! with each other (their footprints are always dependent).
//!
//! The summary names a store's memory by where its address came from; that the address stays
//! inside that memory is checked by [`Machine::writes_within_provenance`] (see
//! [`crate::load::may_write`], "Soundness"): a search that asks the query checks every store it
//! takes with it.

use super::Machine;
use super::exec::resolve;
use super::grid::GridPhase;
use super::warp::{ModelState, Warp, lanes};
use crate::program::{AddrBase, Atom, Op, Pc, Provenance};
use memory_model::MemoryEnv;
use memory_model::{MemSpace, MemorySystem, Who};
use std::sync::{Arc, OnceLock};
use traces::Choice;

/// No segment.
pub(super) const NONE: u32 = u32::MAX;

/// At most this many distinct segments in one load's lanes (more: not settled).
const LOADED: usize = 4;

/// The launch's global segments and where each atom of the summary points, per grid.
#[derive(Debug)]
pub(crate) struct Segments {
    /// `(base, len)` of each global segment, sorted by base.
    pub(super) spans: Vec<(u64, u64)>,
    /// Per grid, per atom of [`crate::program::MayWrite::atoms`]: the segment it names, or
    /// [`NONE`].
    pub(super) atom_segment: Vec<Vec<u32>>,
}

impl Segments {
    /// Whether segment `i` holds the `size` bytes at `a`.
    #[inline]
    pub(super) fn holds(&self, i: u32, a: u64, size: u64) -> bool {
        self.spans.get(i as usize).is_some_and(|&(base, len)| {
            let off = a.wrapping_sub(base);
            off < len && len - off >= size.max(1)
        })
    }

    /// The segment holding the `size` bytes at `a`.
    pub(super) fn find(&self, a: u64, size: u64) -> u32 {
        let i = self.spans.partition_point(|&(base, _)| base <= a);
        match i.checked_sub(1) {
            Some(i) if self.holds(i as u32, a, size) => i as u32,
            _ => NONE,
        }
    }

    /// The segment a pointer value names: the one holding its byte, or the one it points just
    /// past the end of (an `end` pointer, from which `end[-1]` is written; buffers are apart,
    /// so that is no other segment's byte).
    fn pointee(&self, v: u64) -> u32 {
        match self.find(v, 1) {
            NONE => self.find(v.wrapping_sub(1), 1),
            s => s,
        }
    }

    /// The atoms of grid `g` that name one of `loaded`, and Top.
    fn forbidden(&self, g: usize, loaded: &[u32]) -> u64 {
        let mut bits = Provenance::TOP.bits();
        if let Some(atoms) = self.atom_segment.get(g) {
            for (i, s) in atoms.iter().enumerate() {
                if loaded.contains(s) {
                    bits |= Provenance::atom(i).bits();
                }
            }
        }
        bits
    }
}

/// The machine's [`Segments`], built on first use and shared by every clone of the machine it
/// was built for (a function of the launch, which no step changes). Equal to every other.
#[derive(Clone, Default)]
pub(crate) struct SegmentCache(Arc<OnceLock<Segments>>);

impl PartialEq for SegmentCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for SegmentCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SegmentCache")
    }
}

/// The lanes of a step and the instruction they execute.
pub(super) struct Step<'a> {
    pub(super) block: u32,
    pub(super) warp: u32,
    w: &'a Warp,
    /// The lanes that execute it (guard evaluated).
    pub(super) exec: u64,
    pub(super) pc: Pc,
}

impl Machine {
    pub(super) fn segments(&self) -> &Segments {
        self.fixed.segments.0.get_or_init(|| {
            let program = &self.program;
            let atoms = program.may_write().atoms();
            let mut spans: Vec<(u64, u64)> = program
                .variables
                .iter()
                .filter(|v| v.space == crate::program::Space::Global)
                .map(|v| v.address)
                .chain(self.info.buffers.iter().copied())
                .filter_map(|base| {
                    self.mem
                        .pages()
                        .global_segment(base)
                        .map(|s| (s.base, s.len))
                })
                .collect();
            spans.sort_unstable();
            spans.dedup();
            let mut segments = Segments {
                spans,
                atom_segment: Vec::new(),
            };
            let mut mem = self.mem.pages().clone();
            let who = Who {
                block: 0,
                thread: 0,
            };
            for g in self.grids.iter() {
                let per_atom = atoms
                    .iter()
                    .map(|atom| match *atom {
                        Atom::Param {
                            entry,
                            offset,
                            size,
                        } if entry == g.info.entry => mem
                            .load(
                                who,
                                MemSpace::Param,
                                g.info.param_base + offset as u64,
                                size as u32,
                            )
                            .map_or(NONE, |v| segments.pointee(v)),
                        Atom::Variable(i) => program
                            .variables
                            .get(i as usize)
                            .map_or(NONE, |v| segments.find(v.address, 1)),
                        Atom::Param { .. } | Atom::NonGlobal => NONE,
                    })
                    .collect();
                segments.atom_segment.push(per_atom);
            }
            segments
        })
    }

    /// The step `choice` takes, when it executes an instruction of one warp whose operation
    /// `wanted` accepts (asked before the guard is evaluated per lane: the fold asks about
    /// every step it takes, and most are neither loads nor stores).
    pub(super) fn step_of(&self, choice: &Choice, wanted: fn(&Op) -> bool) -> Option<Step<'_>> {
        let (block, warp, lanes_of) = match *choice {
            Choice::Warp { block, warp } => (block, warp, None),
            Choice::Lanes { block, warp, mask } => (block, warp, Some(mask)),
            _ => return None,
        };
        let w = self.resident_warp(block, warp)?;
        let (mask, pc) = match (lanes_of, &w.model) {
            (None, ModelState::Simt(s)) => {
                // At a reconvergence point the step is the implicit `sync` (D2).
                if s.stack.last().is_some_and(|t| t.reconv == Some(s.pc)) {
                    return None;
                }
                (s.active, s.pc)
            }
            (Some(m), ModelState::Its(s)) if m != 0 => (m, s.lane_pc[m.trailing_zeros() as usize]),
            _ => return None,
        };
        let ins = self.program.instructions.get(pc as usize)?;
        if !wanted(&ins.op) {
            return None;
        }
        let mut exec = mask & !w.exited;
        if let Some(g) = ins.guard {
            for l in lanes(exec) {
                let level = w.levels.get(w.depth[l] as usize)?;
                let p = level.regs.get(g.reg.0 as usize, l)? != 0;
                if p == g.negated {
                    exec &= !(1 << l);
                }
            }
        }
        Some(Step {
            block,
            warp,
            w,
            exec,
            pc,
        })
    }

    /// The space and address lane `l` of `step` accesses with `addr` in `space`.
    pub(super) fn lane_access(
        &self,
        step: &Step<'_>,
        l: usize,
        space: crate::program::Space,
        addr: &crate::program::Address,
    ) -> Option<(MemSpace, u64)> {
        let depth = step.w.depth[l] as usize;
        let level = step.w.levels.get(depth)?;
        let base = match addr.base {
            AddrBase::Reg(r) => level.regs.get(r.0 as usize, l)?,
            AddrBase::Absolute => 0,
            // A frame address names the thread's own frame (`.local`/`.param`).
            AddrBase::Frame => return Some((MemSpace::Local, 0)),
        };
        let a = base.wrapping_add(addr.offset as u64);
        Some(resolve(space, addr.base, a, (depth == 0).then_some(0)))
    }

    /// Whether `choice`'s step is a load (`ld` of any order, volatile included) whose every
    /// executing lane reads thread-private or read-only memory (`.local`, `.param`, `.const`)
    /// or global words that no other warp may write from this state on: no resident warp but
    /// the loading one, no block not issued yet and no grid not started yet (see the module
    /// documentation). Under cached memory, never (a load is an in-flight operation whose
    /// micro steps interleave with everything). A load with a lane outside every global
    /// segment or misaligned (it faults) or in shared memory: no.
    ///
    /// A fact about the future only: the fold of invisible steps and persistent sets may use
    /// it, a footprint that finds races with earlier steps must not. Sound as long as every
    /// store stays in the memory its provenance names ([`Machine::writes_within_provenance`]).
    pub fn loads_only_settled_words(&self, choice: &Choice) -> bool {
        if !self.mem.performs_accesses_at_once() || self.termination.is_some() {
            return false;
        }
        let Some(step) = self.step_of(choice, |op| matches!(op, Op::Ld { .. })) else {
            return false;
        };
        let Some(Op::Ld {
            space,
            ty,
            vector,
            addr,
            ..
        }) = self
            .program
            .instructions
            .get(step.pc as usize)
            .map(|i| &i.op)
        else {
            return false;
        };
        let size = super::type_size(*ty) as u64 * (*vector).max(1) as u64;
        let segments = self.segments();
        let mut loaded = [NONE; LOADED];
        let mut n = 0;
        for l in lanes(step.exec) {
            let Some((ms, a)) = self.lane_access(&step, l, *space, addr) else {
                return false;
            };
            match ms {
                MemSpace::Global => {
                    // A lane that faults (outside every segment, or misaligned: PTX ISA
                    // 9.7.9.8, to the element's size, a vector's to its whole size) ends the
                    // run: such a step commutes with nothing.
                    // The lanes of a warp mostly read one segment: the last one found first.
                    let s = match loaded[..n].last() {
                        Some(&s) if segments.holds(s, a, size) => s,
                        _ => segments.find(a, size),
                    };
                    if s == NONE || !a.is_multiple_of(size) {
                        return false;
                    }
                    if !loaded[..n].contains(&s) {
                        if n == LOADED {
                            return false;
                        }
                        loaded[n] = s;
                        n += 1;
                    }
                }
                MemSpace::Shared => return false,
                MemSpace::Local | MemSpace::Const | MemSpace::Param => {}
            }
        }
        if n == 0 {
            return true;
        }
        let loaded = &loaded[..n];
        let may_write = self.program.may_write();
        // The forbidden atoms of the grid last asked for (blocks come grid by grid).
        let mut cached: Option<(usize, u64)> = None;
        let mut forbidden = |g: usize| match cached {
            Some((h, bits)) if h == g => bits,
            _ => {
                let bits = segments.forbidden(g, loaded);
                cached = Some((g, bits));
                bits
            }
        };
        for (id, b) in self.blocks.iter() {
            let mut g = None;
            for (k, w) in b.warps.iter().enumerate() {
                if w.completed || (id == step.block && k as u32 == step.warp) {
                    continue;
                }
                let g = *g.get_or_insert_with(|| self.grid_index(id));
                let bits = forbidden(g);
                if warp_may_write(may_write, w, bits) {
                    return false;
                }
            }
        }
        for (g, grid) in self.grids.iter().enumerate() {
            if grid.phase != GridPhase::Completed
                && grid.next_block < grid.info.shape.blocks
                && may_write.ahead(grid.info.entry_start).bits() & forbidden(g) != 0
            {
                return false;
            }
        }
        true
    }

    /// Whether `choice`'s step, when it is a store or atomic on `.global` or a generic address,
    /// writes global memory only inside the memory that its address's provenance names
    /// ([`crate::load::may_write`]): each executing lane's global address lies in a segment
    /// one of the provenance's atoms points to, or the provenance is Top. Every other step, and
    /// a lane whose address lies outside every global segment (it faults): yes.
    ///
    /// [`Machine::loads_only_settled_words`] assumes it of every store a run takes; a search
    /// that asks that query checks this of every store it takes, and a store that fails it
    /// means the search relied on a false assumption (say so, and search again without the
    /// query).
    pub fn writes_within_provenance(&self, choice: &Choice) -> bool {
        let Some(step) = self.step_of(choice, |op| matches!(op, Op::St { .. } | Op::Atom { .. }))
        else {
            return true;
        };
        let (space, addr, size) = match self
            .program
            .instructions
            .get(step.pc as usize)
            .map(|i| &i.op)
        {
            Some(Op::St {
                space,
                ty,
                vector,
                addr,
                ..
            }) => (
                space,
                addr,
                super::type_size(*ty) as u64 * (*vector).max(1) as u64,
            ),
            Some(Op::Atom {
                space, ty, addr, ..
            }) => (space, addr, ty.size() as u64),
            _ => return true,
        };
        let own = self.program.may_write().own(step.pc);
        if own.is_top() {
            return true;
        }
        let segments = self.segments();
        let g = self.grid_index(step.block);
        let Some(named) = segments.atom_segment.get(g) else {
            return false;
        };
        lanes(step.exec).all(|l| match self.lane_access(&step, l, *space, addr) {
            Some((MemSpace::Global, a)) => {
                let s = segments.find(a, size);
                s == NONE || own.atoms().any(|i| named.get(i) == Some(&s))
            }
            Some(_) => true,
            None => false,
        })
    }
}

/// Whether warp `w` may write, from its current state on, memory of an atom in `forbidden`
/// (Top included).
fn warp_may_write(may_write: &crate::program::MayWrite, w: &Warp, forbidden: u64) -> bool {
    let hits = |pc: Pc| may_write.ahead(pc).bits() & forbidden != 0;
    let live = w.real & !w.exited;
    match &w.model {
        ModelState::Simt(s) => {
            if hits(s.pc) || s.stack.iter().any(|t| hits(t.pc)) {
                return true;
            }
        }
        ModelState::Its(s) => {
            let mut last = None;
            for l in lanes(live) {
                let pc = s.lane_pc[l];
                if last != Some(pc) {
                    if hits(pc) {
                        return true;
                    }
                    last = Some(pc);
                }
            }
        }
    }
    // Frames below the top continue after their calls.
    if w.levels.len() > 1 {
        for l in lanes(live) {
            for k in 1..=w.depth[l] as usize {
                if let Some(level) = w.levels.get(k)
                    && hits(level.call_pc[l])
                {
                    return true;
                }
            }
        }
    }
    false
}
