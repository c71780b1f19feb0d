//! Footprints of memory choices (issue 15 item 4): what one memory choice may read or change
//! (which op steps, which lines of which L1 and of the L2, which DRAM line, which shared bytes,
//! which bank locks), and [`Cached::independent`]: two memory choices whose footprints are
//! disjoint commute (either order reaches the same state, and neither disables the other), so
//! a reduction (sleep sets, persistent sets, DPOR) need not try both orders.
//!
//! A footprint is computed in the current state and is conservative: every place counts as
//! written; an op's micro step lists every statement it may run up to its next `yield` or
//! `end` on every branch; an op that may end
//! takes its thread (the thread's other ops wait for it, O1-O3) and, when it acquires at a
//! scope wider than the CTA, its SM's whole L1 (the acquire flush).
//!
//! **Allocations at the grain of lines.** An allocation in a cache (reserve, allocating write)
//! of a line the cache already holds (live) only joins or writes that line: its line. One of a
//! line the cache does not hold takes the line's *fill* place ([`Place::L1Fill`], or the L2
//! line), and then, by how full the cache is in the current state (`n` live lines of a
//! capacity `c`; doomed L1 lines do not count, `Cache::make_room`):
//! * `n + 1 < c`: nothing more. It evicts nothing, and after it there is room for one more
//!   line, so another allocation of another line, taken before or after it, evicts nothing
//!   either: the two commute (two keys inserted into a map, no victim chosen), and it commutes
//!   with every step on other lines (an eviction, discard or invalidation of another line only
//!   adds room; a flush of the L1 takes the whole L1 and conflicts anyway).
//! * `n + 1 = c`: it evicts nothing, but it takes the last free line, so an allocation of
//!   another line after it must evict, and before it would not have had to: the cache's room
//!   ([`Place::L1Room`], [`Place::L2Room`]), which every other allocation in that state takes
//!   too. A step that frees a line (eviction, discard) does not take it: freeing before or
//!   after the allocation leaves the same lines.
//! * `n >= c`: it evicts a victim, any unpinned line: the whole cache, and when the victim may
//!   be dirty its write-back (to L2, and from L2 to DRAM) too.
//!
//! These are footprints in one state, as `independent` asks; a search that lets a step wait
//! while others run must also know that the cache does not fill meanwhile (the explorer's
//! persistent sets check that the launch cannot touch enough lines to fill any cache).

use super::engine::{Op, is_global};
use super::line::Key;
use super::program::{Cond, OpName, Stm};
use super::{Cached, MemChoice, OpId};
use crate::Who;
use smallvec::SmallVec;

/// One place a memory choice may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    /// The in-flight ops of a thread (their dependencies, the thread's busy state).
    Thread(Who),
    /// One line of an SM's L1.
    L1Line { sm: u32, line: Key },
    /// Every line of an SM's L1, and its room.
    L1 { sm: u32 },
    /// An allocation of a line an SM's L1 does not hold, with room for it (module doc).
    L1Fill { sm: u32, line: Key },
    /// The last free line of an SM's L1: taken by an allocation that fills it (module doc).
    L1Room { sm: u32 },
    /// One line of the L2.
    L2Line { line: Key },
    /// Every line of the L2, and its room.
    L2,
    /// The last free line of the L2 (module doc).
    L2Room,
    /// The DRAM bytes of one line (global or local).
    DramLine { line: Key },
    /// Any DRAM bytes (a write-back of a victim not known in advance).
    Dram,
    /// The 4-byte words `first..=last` of a block's shared memory.
    Shared { block: u32, first: u64, last: u64 },
    /// A block's shared-memory bank locks.
    Locks { block: u32 },
}

impl Place {
    /// Whether the two places may name the same state.
    pub fn overlaps(&self, other: &Place) -> bool {
        use Place::*;
        match (*self, *other) {
            (Thread(a), Thread(b)) => a == b,
            (
                L1Line { sm: a, line: x } | L1Fill { sm: a, line: x },
                L1Line { sm: b, line: y } | L1Fill { sm: b, line: y },
            ) => a == b && x == y,
            (L1 { sm: a }, L1 { sm: b } | L1Line { sm: b, .. } | L1Fill { sm: b, .. })
            | (L1Line { sm: a, .. } | L1Fill { sm: a, .. }, L1 { sm: b }) => a == b,
            (L1Room { sm: a }, L1Room { sm: b } | L1 { sm: b })
            | (L1 { sm: a }, L1Room { sm: b }) => a == b,
            (L2Line { line: x }, L2Line { line: y }) => x == y,
            (L2, L2 | L2Line { .. } | L2Room) | (L2Line { .. } | L2Room, L2) => true,
            (L2Room, L2Room) => true,
            (DramLine { line: x }, DramLine { line: y }) => x == y,
            (Dram, Dram | DramLine { .. }) | (DramLine { .. }, Dram) => true,
            (
                Shared {
                    block: a,
                    first: f1,
                    last: l1,
                },
                Shared {
                    block: b,
                    first: f2,
                    last: l2,
                },
            ) => a == b && f1 <= l2 && f2 <= l1,
            (Locks { block: a }, Locks { block: b }) => a == b,
            _ => false,
        }
    }
}

/// What a memory choice may touch (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Footprint {
    /// The op that takes the micro step (`Step` choices).
    pub op: Option<OpId>,
    pub places: SmallVec<[Place; 8]>,
}

impl Footprint {
    fn add(&mut self, p: Place) {
        if !self.places.contains(&p) {
            self.places.push(p);
        }
    }

    /// Whether the two footprints share nothing (not the op, no place).
    pub fn disjoint(&self, other: &Footprint) -> bool {
        (self.op.is_none() || self.op != other.op)
            && !self
                .places
                .iter()
                .any(|p| other.places.iter().any(|q| p.overlaps(q)))
    }
}

impl Cached {
    /// The footprint of `choice` in the current state (a choice that is not enabled gets the
    /// footprint it would have; an op that does not exist touches nothing).
    pub fn footprint(&self, choice: MemChoice) -> Footprint {
        let mut f = Footprint::default();
        match choice {
            MemChoice::Step { op } => {
                f.op = Some(op);
                if let Some(o) = self.ops.get(op as usize).and_then(Option::as_ref) {
                    self.step_footprint(op, o, &mut f);
                }
            }
            MemChoice::EvictL1 { sm, line } => f.add(Place::L1Line { sm, line }),
            MemChoice::Flush { sm } => f.add(Place::L1 { sm }),
            MemChoice::WriteBackL1 { sm, line } => {
                f.add(Place::L1Line { sm, line });
                self.l2_alloc_footprint(Some(line), &mut f);
            }
            MemChoice::EvictL2 { line } => f.add(Place::L2Line { line }),
            MemChoice::WriteBackL2 { line } => {
                f.add(Place::L2Line { line });
                f.add(Place::DramLine { line });
            }
        }
        f
    }

    /// Whether two memory choices commute in the current state: disjoint footprints.
    pub fn independent(&self, a: MemChoice, b: MemChoice) -> bool {
        a != b && self.footprint(a).disjoint(&self.footprint(b))
    }

    /// An allocation in L2 of `line` (`None`: a line not known in advance, a dirty L1 victim's)
    /// by how full the L2 is (module doc): its line, the L2's room when it takes the last free
    /// line, the whole L2 when it evicts, and then DRAM (the victim may be dirty).
    fn l2_alloc_footprint(&self, line: Option<Key>, f: &mut Footprint) {
        let (n, c) = (self.l2.len(), self.config.l2_lines as usize);
        if let Some(line) = line {
            f.add(Place::L2Line { line });
            if self.l2.contains(line) {
                return;
            }
        }
        if line.is_none() || n >= c {
            f.add(Place::L2);
            if n >= c {
                f.add(Place::Dram);
            }
        } else if n + 1 >= c {
            f.add(Place::L2Room);
        }
    }

    fn step_footprint(&self, id: OpId, op: &Op, f: &mut Footprint) {
        let req = op.req;
        f.add(Place::Thread(req.who));
        let Some(prog) = op.prog else { return };
        let stms = prog.program().stms;
        let sm = req.sm;
        let key = self.geometry(id, &req).ok().map(|g| g.key);
        // The SM stage (deviation D31, module `stage`): a release above `.cta` at its first
        // statement waits for the whole stage of its SM, which every store of the SM enters
        // and leaves in steps that name only their own L1 line: the SM's whole L1, and the
        // whole L2 so that no persistent set takes it in (the explorer's sets reason about
        // lines; a step that reads every line of an SM's stage is none of theirs).
        if self.waits_for_stage(op) {
            f.add(Place::L1 { sm });
            f.add(Place::L2);
        }
        // A global store's steps put its bytes into its SM's stage and take them out, which
        // every load of the SM on its line reads, and a store or atomic of the SM on its line
        // waits for: the line's L2 place, which names the line for everyone (a step on an L1
        // line no L1 can hold is a no-op for the explorer's line sets, and this one is not).
        if self.stage_on()
            && (self.stages_op(op)
                || (op.pc == 0 && matches!(req.kind, super::RequestKind::Atomic { .. })))
            && let Some(line) = key
        {
            f.add(Place::L2Line { line });
        }
        // A load reads the staged stores of its SM on its line with L2 as well as with L1.
        let load_sees_stage =
            self.stage_on() && matches!(req.kind, super::RequestKind::Load { .. });
        let words = || {
            let first = req.addr / 4;
            let last = (req.addr + req.size.max(1) as u64 - 1) / 4;
            Place::Shared {
                block: req.who.block,
                first,
                last,
            }
        };
        // Every statement reachable from pc before the next yield or end.
        let mut todo: SmallVec<[usize; 4]> = SmallVec::from_slice(&[op.pc as usize]);
        let mut seen = 0u64;
        while let Some(mut pc) = todo.pop() {
            while let Some(stm) = stms.get(pc).copied() {
                if pc < 64 && seen >> pc & 1 != 0 {
                    break;
                }
                seen |= 1u64.checked_shl(pc as u32).unwrap_or(0);
                match stm {
                    Stm::Yield => break,
                    Stm::Fold(fold) => {
                        if !self.folds(&req, stms, pc, fold) {
                            break;
                        }
                        pc += 1;
                    }
                    Stm::End => {
                        // A fence's flush is its `flushL1` statement.
                        if super::engine::flushes_l1_at_end(&req) {
                            f.add(Place::L1 { sm });
                        }
                        break;
                    }
                    Stm::IfNot(cond, skip) => {
                        if let Some(line) = key {
                            f.add(match cond {
                                Cond::IsCachedL1 => Place::L1Line { sm, line },
                                Cond::IsCachedL2 => Place::L2Line { line },
                            });
                        }
                        todo.push(skip as usize);
                        pc += 1;
                    }
                    Stm::Op(name) => {
                        self.op_footprint(name, sm, key, &words, f);
                        if load_sees_stage
                            && name == OpName::ReadL2
                            && let Some(line) = key
                        {
                            f.add(Place::L1Line { sm, line });
                        }
                        pc += 1;
                    }
                }
            }
        }
    }

    fn op_footprint(
        &self,
        name: OpName,
        sm: u32,
        key: Option<Key>,
        words: &dyn Fn() -> Place,
        f: &mut Footprint,
    ) {
        use OpName::*;
        let l1_line = |f: &mut Footprint| {
            if let Some(line) = key {
                f.add(Place::L1Line { sm, line });
            }
        };
        let l2_line = |f: &mut Footprint| {
            if let Some(line) = key {
                f.add(Place::L2Line { line });
            }
        };
        match name {
            ReadMem | WriteMem => match key {
                Some(line) => f.add(Place::DramLine { line }),
                None => f.add(words()),
            },
            AtomOp | WriteToRegs | ReleaseRegs => {}
            Lock | Unlock => f.add(match words() {
                Place::Shared { block, .. } => Place::Locks { block },
                p => p,
            }),
            ReadL1 | UpdateL1 | EvictL1 | DiscardL1 | ClassifyFirstL1 | ClassifyNormalL1
            | InvalidateL1 => l1_line(f),
            ReadL2 | UpdateL2 | ClassifyFirstL2 | ClassifyNormalL2 => l2_line(f),
            ReserveL1 | WriteL1 => {
                let live = self.l1.get(sm).map(|c| &c.live);
                let (n, c) = (live.map_or(0, |l| l.len()), self.config.l1_lines as usize);
                match key {
                    // A line it holds: joined or written, nothing allocated.
                    Some(line) if live.is_some_and(|l| l.contains(line)) => {
                        f.add(Place::L1Line { sm, line });
                        return;
                    }
                    Some(line) if n < c => {
                        f.add(Place::L1Fill { sm, line });
                        if n + 1 >= c {
                            f.add(Place::L1Room { sm });
                        }
                        return;
                    }
                    Some(line) => f.add(Place::L1Fill { sm, line }),
                    None => {}
                }
                f.add(Place::L1 { sm });
                // A dirty victim (a local line) is written back to L2 (and maybe on to DRAM).
                let l1_full = n >= c;
                if l1_full
                    && self.l1.get(sm).is_some_and(|c| {
                        c.live
                            .lines()
                            .iter()
                            .any(|(k, l)| !is_global(*k) && l.dirty != 0)
                    })
                {
                    self.l2_alloc_footprint(None, f);
                }
            }
            ReserveL2 | WriteL2 => self.l2_alloc_footprint(key, f),
            FlushL1 => f.add(Place::L1 { sm }),
        }
    }
}
