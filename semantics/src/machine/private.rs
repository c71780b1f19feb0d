//! Words private to a warp: global bytes that no other warp of any block of any grid of the
//! launch ever reads or writes ([`Machine::accesses_only_private_words`]).
//!
//! Under flat memory (thesis section 5.3.2: every access is performed inside its step) an
//! access whose every byte is private to the stepping warp commutes with every step any other
//! warp can take, at any time, and enables or disables none of them, as a `.local` access does:
//! no other warp reads what it writes or writes what it reads. It is *invisible* in the sense of
//! the search's fold of invisible steps. `out[blockIdx.x * blockDim.x + threadIdx.x] = v` is one:
//! each thread writes its own word, and the words of a warp are its own.
//!
//! **Which words** (computed once per machine, on first use; a function of the launch):
//! 1. Every `ld`, `st` and `atom` that may reach global memory gets its address form
//!    ([`crate::load::address_forms`]): exact per thread where it is an affine function of
//!    `%tid` and `%ctaid` under the launch, unknown otherwise (loop-variant or loaded addresses,
//!    device functions).
//! 2. Each access with a form is enumerated over every thread of its grid, whether or not the
//!    thread reaches it (an over-approximation of what it touches), and each global byte it
//!    would touch is marked with the thread's warp `(global block, warp)`. A byte marked by two
//!    warps is not private; the rest are, in runs of one owner.
//! 3. An access with an unknown address may touch any byte of the memory its address came from
//!    (its provenance, [`crate::load::may_write`]): no byte of the global segments it names is
//!    private, and with a provenance of Top (any global address) none at all.
//! 4. Past [`MAX_PAIRS`] (access, thread) pairs in all, none is private (a bound on the work).
//!
//! **Soundness.** The forms are exact and every access with one is enumerated, so only an
//! access with an unknown address can touch a word the enumeration calls another warp's, and
//! only by leaving the memory its provenance names (an index past its buffer into another, which
//! CUDA leaves undefined). That is the may-write summary's assumption; a search that asks the
//! query checks every access it takes with [`Machine::respects_private_words`] (the accesses
//! with a computed address too), and one that fails means the search relied on a false premise
//! (it runs again without the rule): until the first such access, every run agrees with one in
//! which it faults, and the fold keeps every fault reachable. A lane
//! outside every global segment or misaligned (it faults) is never private: such a step ends
//! the run and commutes with nothing.

use super::Machine;
use super::exec::resolve;
use super::settled::{NONE, Segments};
use super::warp::lanes;
use crate::load::address_forms::{AccessForm, LaunchConstants, access_forms};
use crate::program::{AddrBase, FunctionKind, Op, Space};
use memory_model::MemoryEnv;
use memory_model::{MemSpace, MemorySystem, Who};
use std::sync::{Arc, OnceLock};
use traces::Choice;

/// At most this many (access, thread) pairs are enumerated; past it, no word is private.
pub const MAX_PAIRS: usize = 1 << 21;

/// The warp a private byte belongs to: `(global block, warp)`.
type Owner = (u32, u32);

/// The launch's private words (module documentation).
#[derive(Debug, Default)]
pub(crate) struct PrivateWords {
    /// Disjoint runs `[lo, hi)` of global bytes private to one warp, sorted, adjacent runs of
    /// one owner merged.
    runs: Vec<(u64, u64, Owner)>,
}

impl PrivateWords {
    /// The run holding `[a, a + size)`, if one does.
    fn run_of(&self, a: u64, size: u64) -> Option<Owner> {
        let i = self.runs.partition_point(|&(lo, _, _)| lo <= a);
        let &(_, hi, owner) = self.runs.get(i.checked_sub(1)?)?;
        (a.checked_add(size)? <= hi).then_some(owner)
    }

    /// Whether a run of an owner other than `owner` overlaps `[a, a + size)`.
    fn foreign(&self, a: u64, size: u64, owner: Owner) -> bool {
        let end = a.saturating_add(size.max(1));
        let first = self.runs.partition_point(|&(_, hi, _)| hi <= a);
        self.runs[first..]
            .iter()
            .take_while(|&&(lo, _, _)| lo < end)
            .any(|&(_, _, o)| o != owner)
    }
}

/// The machine's [`PrivateWords`], built on first use and shared by every clone of the machine
/// it was built for (a function of the launch, which no step changes). Equal to every other.
#[derive(Clone, Default)]
pub(crate) struct PrivateCache(Arc<OnceLock<PrivateWords>>);

impl PartialEq for PrivateCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for PrivateCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrivateCache")
    }
}

/// [`super::footprint::access_of`], its bytes as an address width.
fn access_of(op: &Op) -> Option<(Space, &crate::program::Address, u64)> {
    super::footprint::access_of(op).map(|(space, addr, bytes)| (space, addr, u64::from(bytes)))
}

/// The maximal runs of bytes touched by one owner only, from `(lo, hi, owner)` spans: spans that
/// overlap form a cluster, and a cluster of one owner is private to it.
fn runs_of(mut spans: Vec<(u64, u64, Owner)>) -> Vec<(u64, u64, Owner)> {
    spans.sort_unstable();
    let mut runs: Vec<(u64, u64, Owner)> = Vec::new();
    let mut cluster: Option<(u64, u64, Owner, bool)> = None;
    let flush = |c: Option<(u64, u64, Owner, bool)>, runs: &mut Vec<(u64, u64, Owner)>| {
        if let Some((lo, hi, owner, false)) = c {
            match runs.last_mut() {
                Some(last) if last.1 == lo && last.2 == owner => last.1 = hi,
                _ => runs.push((lo, hi, owner)),
            }
        }
    };
    for (lo, hi, owner) in spans {
        match &mut cluster {
            Some(c) if lo < c.1 => {
                c.1 = c.1.max(hi);
                c.3 |= c.2 != owner;
            }
            _ => {
                flush(cluster.take(), &mut runs);
                cluster = Some((lo, hi, owner, false));
            }
        }
    }
    flush(cluster, &mut runs);
    runs
}

impl Machine {
    fn private_words(&self) -> &PrivateWords {
        self.fixed
            .private
            .0
            .get_or_init(|| self.compute_private_words())
    }

    /// [`PrivateWords`] of this launch (module documentation).
    fn compute_private_words(&self) -> PrivateWords {
        let program = &self.program;
        let may_write = program.may_write();
        let segments = self.segments();
        let mut tainted = vec![false; segments.spans.len()];
        let none = PrivateWords::default();
        // Accesses with an unknown address: their provenance's segments, in every grid that
        // may run them.
        let mut taint = |pc: u32, grids: &mut dyn Iterator<Item = usize>| {
            let p = may_write.accessed(pc);
            if p.is_top() {
                return false;
            }
            for g in grids {
                for i in p.atoms() {
                    if let Some(&s) = segments.atom_segment.get(g).and_then(|a| a.get(i))
                        && s != NONE
                    {
                        tainted[s as usize] = true;
                    }
                }
            }
            true
        };
        // Device functions run in any grid, their addresses unknown.
        for f in &program.functions {
            if f.kind == FunctionKind::Entry {
                continue;
            }
            for pc in f.start..f.end {
                let ins = &program.instructions[pc as usize];
                if let Some((space, addr, _)) = access_of(&ins.op)
                    && matches!(space, Space::Global | Space::Generic)
                    && addr.base != AddrBase::Frame
                    && !taint(pc, &mut (0..self.grids.len()))
                {
                    return none;
                }
            }
        }
        let mut spans = Vec::new();
        let mut pairs = 0usize;
        for (g, grid) in self.grids.iter().enumerate() {
            let info = &grid.info;
            let shape = &info.shape;
            let forms = self.grid_access_forms(info);
            let mut known = Vec::new();
            for form in forms {
                match form.address {
                    Some(address) => {
                        if let Some((space, addr, size)) =
                            access_of(&program.instructions[form.pc as usize].op)
                        {
                            known.push((address, space, addr.base, size));
                        }
                    }
                    None => {
                        if !taint(form.pc, &mut std::iter::once(g)) {
                            return none;
                        }
                    }
                }
            }
            let threads = shape.blocks as usize * shape.threads_per_block as usize;
            pairs = pairs.saturating_add(known.len().saturating_mul(threads));
            if pairs > MAX_PAIRS {
                return none;
            }
            for b in 0..shape.blocks {
                let ctaid = shape.ctaid(b);
                for t in 0..shape.threads_per_block {
                    let tid = shape.tid(t);
                    let owner = (grid.base + b, t / shape.warp_size);
                    for (address, space, base, size) in &known {
                        let a = address.eval(tid, ctaid) as u64;
                        let (ms, a) = resolve(*space, *base, a, Some(info.param_base));
                        if ms == MemSpace::Global {
                            spans.push((a, a.saturating_add(*size), owner));
                        }
                    }
                }
            }
        }
        let runs = runs_of(spans)
            .into_iter()
            .filter(|&(lo, hi, _)| {
                // Only runs inside one segment that no unknown address may reach are kept.
                let s = segments.find(lo, hi - lo);
                s != NONE && !tainted[s as usize]
            })
            .collect();
        PrivateWords { runs }
    }

    /// Whether `choice`'s step is an `ld`, `st` or `atom` whose every executing lane accesses
    /// thread-private or read-only memory (`.local`, `.param`, `.const`) or global bytes private
    /// to the stepping warp (module documentation): no other warp of the launch ever accesses
    /// them. Under cached memory, never (an access is an in-flight operation whose micro steps
    /// interleave with everything). A lane in shared memory, outside every global segment or
    /// misaligned (it faults): no.
    ///
    /// Sound as long as every access with an unknown address stays in the memory its
    /// provenance names ([`Machine::respects_private_words`]), which a search that asks this
    /// checks of every step it takes.
    pub fn accesses_only_private_words(&self, choice: &Choice) -> bool {
        if !self.mem.performs_accesses_at_once() || self.termination.is_some() {
            return false;
        }
        let Some((step, (space, addr, size), private)) = self.private_access(choice) else {
            return false;
        };
        let segments: &Segments = self.segments();
        let owner = (step.block, step.warp);
        lanes(step.exec).all(|l| match self.lane_access(&step, l, space, addr) {
            Some((MemSpace::Global, a)) => {
                a.is_multiple_of(size.max(1))
                    && segments.find(a, size) != NONE
                    && private.run_of(a, size) == Some(owner)
            }
            Some((MemSpace::Local | MemSpace::Const | MemSpace::Param, _)) => true,
            Some((MemSpace::Shared, _)) | None => false,
        })
    }

    /// Whether `choice`'s step keeps off the bytes private to other warps
    /// ([`Machine::accesses_only_private_words`]): every executing lane's global bytes, when it is
    /// an `ld`, `st` or `atom`. Only an access whose address the analysis could not compute can
    /// fail it, by leaving the memory its provenance names; one with a computed address was
    /// enumerated, and is checked all the same (a search that relies on the private words
    /// falls back on any failure, so an error of the analysis would cost states, not answers).
    pub fn respects_private_words(&self, choice: &Choice) -> bool {
        if !self.mem.performs_accesses_at_once() {
            return true;
        }
        let Some((step, (space, addr, size), private)) = self.private_access(choice) else {
            return true;
        };
        let owner = (step.block, step.warp);
        lanes(step.exec).all(|l| match self.lane_access(&step, l, space, addr) {
            Some((MemSpace::Global, a)) => !private.foreign(a, size, owner),
            _ => true,
        })
    }
}

impl Machine {
    /// What both private-word questions look at: `choice`'s step when it is an `ld`, `st` or
    /// `atom`, the memory its instruction addresses, and the private words, when there are any.
    #[allow(clippy::type_complexity)]
    fn private_access(
        &self,
        choice: &Choice,
    ) -> Option<(
        super::settled::Step<'_>,
        (Space, &crate::program::Address, u64),
        &PrivateWords,
    )> {
        let step = self.step_of(choice, |op| {
            matches!(op, Op::Ld { .. } | Op::St { .. } | Op::Atom { .. })
        })?;
        let access = access_of(&self.program.instructions.get(step.pc as usize)?.op)?;
        let private = self.private_words();
        (!private.runs.is_empty()).then_some((step, access, private))
    }

    /// The address forms of the accesses of a grid's kernel under its launch
    /// ([`access_forms`]): its block and grid shape, and its pointer parameters' values read
    /// from the launch's `.param` bytes. What the private-word map and the future footprints
    /// evaluate per thread.
    pub(crate) fn grid_access_forms(&self, info: &super::LaunchInfo) -> Vec<AccessForm> {
        let mem = std::cell::RefCell::new(self.mem.pages().clone());
        let who = Who {
            block: 0,
            thread: 0,
        };
        let param = |offset: u32, size: u32| {
            mem.borrow_mut()
                .load(who, MemSpace::Param, info.param_base + offset as u64, size)
                .ok()
        };
        let launch = LaunchConstants {
            block_dim: info.shape.block_dim,
            grid_dim: info.shape.grid_dim,
            global_window: memory_model::to_generic(MemSpace::Global, 0),
            param: &param,
        };
        access_forms(&self.program, info.entry, &launch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_keep_bytes_of_one_owner() {
        let (a, b) = ((0, 0), (1, 0));
        // Two warps' adjacent words, one word both touch.
        let runs = runs_of(vec![
            (0, 4, a),
            (4, 8, b),
            (8, 12, a),
            (8, 12, b),
            (12, 16, a),
        ]);
        assert_eq!(runs, vec![(0, 4, a), (4, 8, b), (12, 16, a)]);
        // One owner's adjacent and overlapping spans merge.
        let runs = runs_of(vec![(0, 4, a), (2, 6, a), (6, 8, a)]);
        assert_eq!(runs, vec![(0, 8, a)]);
        let w = PrivateWords {
            runs: vec![(0, 8, a), (8, 12, b)],
        };
        assert_eq!(w.run_of(4, 4), Some(a));
        assert_eq!(w.run_of(6, 4), None);
        assert!(w.foreign(6, 4, a));
        assert!(!w.foreign(0, 8, a));
        assert!(!w.foreign(12, 4, a));
    }
}
