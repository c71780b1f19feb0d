//! Indexes of the in-flight ops, so that the questions the machine asks after every step cost
//! O(ops of one thread or warp) instead of a scan of every op in flight (issue 15: the scans
//! made a step's cost grow with the number of resident warps).
//!
//! The indexes are functions of `Cached::ops` (they never hold information of their own):
//! state equality and the state hash leave them out, and [`OpIndex::rebuilt`] computes them
//! from scratch for the consistency checks. Persistent maps: explorers clone the memory state
//! for every successor, and a clone must not copy the indexes.
//!
//! *Parking*: a ready op whose next micro step would only retry (the enabled set leaves it
//! out) is parked under the resource it waits for ([`Watch`]: a line of an L1 or of the L2,
//! room in a cache, a block's bank locks); every step that touches that resource unparks it
//! and it is checked again. So the enabled set's scan visits the ops that may step (and the
//! ones that became blocked since their last check), not every op that waits for a fill or a
//! lock. Invariant: a parked op is blocked (the debug checks and the tests compare the enabled
//! steps with a scan of every op).

use super::engine::Op;
use super::line::Key;
use super::{OpId, RequestKind};
use crate::{Fingerprinted, Who};
use imbl::{OrdMap, OrdSet};
use smallvec::SmallVec;

/// Ids of ops, ascending.
type Ids = SmallVec<[OpId; 4]>;

/// A set of op ids as a bit set: ids are slots, dense and reused smallest first, so a bit per
/// slot is small, and the enabled scan walks set bits instead of a tree.
#[derive(Debug, Clone, Default)]
pub(super) struct IdSet {
    words: Vec<u64>,
}

impl IdSet {
    pub fn insert(&mut self, id: OpId) {
        let w = id as usize / 64;
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (id % 64);
    }

    /// Removes `id`; whether it was there.
    pub fn remove(&mut self, id: OpId) -> bool {
        let w = id as usize / 64;
        let Some(word) = self.words.get_mut(w) else {
            return false;
        };
        let bit = 1 << (id % 64);
        let was = *word & bit != 0;
        *word &= !bit;
        while self.words.last() == Some(&0) {
            self.words.pop();
        }
        was
    }

    pub fn contains(&self, id: OpId) -> bool {
        self.words
            .get(id as usize / 64)
            .is_some_and(|w| w >> (id % 64) & 1 != 0)
    }

    /// The ids, ascending.
    pub fn iter(&self) -> impl Iterator<Item = OpId> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let b = w.trailing_zeros();
                    w &= w - 1;
                    i as OpId * 64 + b
                })
            })
        })
    }

    pub fn first(&self) -> Option<OpId> {
        self.iter().next()
    }

    pub fn last(&self) -> Option<OpId> {
        let (i, w) = self
            .words
            .iter()
            .enumerate()
            .rev()
            .find(|(_, w)| **w != 0)?;
        Some(i as OpId * 64 + 63 - w.leading_zeros())
    }

    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// Trailing zero words are never stored, so equal sets have equal words.
impl PartialEq for IdSet {
    fn eq(&self, other: &Self) -> bool {
        self.words == other.words
    }
}

/// What a parked op waits for (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Watch {
    /// The bank locks of a block.
    Lock(u32),
    /// A line of an SM's L1 (its fill, its pins).
    L1Line(u32, Key),
    /// Room in an SM's L1 (an allocation waits).
    L1Room(u32),
    /// A line of the L2.
    L2Line(Key),
    /// Room in the L2.
    L2Room,
}

#[derive(Debug, Clone, Default)]
pub(super) struct OpIndex {
    /// The in-flight ops of each thread (ordering dependencies are only ever within a thread).
    pub by_thread: OrdMap<Who, Ids>,
    /// The in-flight loads and atomics with a destination register, per (block, warp of the
    /// destination): the machine's scoreboard.
    pub by_warp: OrdMap<(u32, u32), Ids>,
    /// The ops whose dependencies all ended (the candidates of the enabled set).
    pub ready: IdSet,
    /// Free slots below the length of the op list (the smallest is reused first).
    pub free: IdSet,
    /// The ready ops that are not parked (the ones the enabled set checks).
    pub active: IdSet,
    /// Parked ops by what they wait for.
    pub parked: OrdMap<Watch, Ids>,
    /// Where each parked op is parked.
    pub parked_on: OrdMap<OpId, Watch>,
}

fn insert_sorted(ids: &mut Ids, id: OpId) {
    if let Err(i) = ids.binary_search(&id) {
        ids.insert(i, id);
    }
}

/// The (block, warp) of an op's destination register, if it has one.
pub(super) fn dest_warp(op: &Op) -> Option<(u32, u32)> {
    match op.req.kind {
        RequestKind::Load { dest, .. } | RequestKind::Atomic { dest, .. } => {
            dest.map(|d| (op.req.who.block, d.warp))
        }
        _ => None,
    }
}

impl OpIndex {
    /// Records a new op in slot `id`.
    pub fn add(&mut self, id: OpId, op: &Op) {
        insert_sorted(self.by_thread.entry(op.req.who).or_default(), id);
        if let Some(w) = dest_warp(op) {
            insert_sorted(self.by_warp.entry(w).or_default(), id);
        }
        if op.deps.is_empty() {
            self.make_ready(id);
        }
        self.free.remove(id);
    }

    /// Forgets the op that leaves slot `id`.
    pub fn remove(&mut self, id: OpId, op: &Op) {
        fn drop_id<K: Ord + Clone>(m: &mut OrdMap<K, Ids>, k: &K, id: OpId) {
            let empty = match m.get_mut(k) {
                Some(ids) => {
                    ids.retain(|i| *i != id);
                    ids.is_empty()
                }
                None => false,
            };
            if empty {
                m.remove(k);
            }
        }
        drop_id(&mut self.by_thread, &op.req.who, id);
        if let Some(w) = dest_warp(op) {
            drop_id(&mut self.by_warp, &w, id);
        }
        self.ready.remove(id);
        self.active.remove(id);
        if let Some(w) = self.parked_on.remove(&id) {
            drop_id(&mut self.parked, &w, id);
        }
    }

    /// The op's dependencies all ended.
    pub fn make_ready(&mut self, id: OpId) {
        self.ready.insert(id);
        self.active.insert(id);
    }

    /// Parks a ready op under `w` (its next step would only retry until `w` changes).
    pub fn park(&mut self, id: OpId, w: Watch) {
        if self.active.remove(id) {
            insert_sorted(self.parked.entry(w).or_default(), id);
            self.parked_on.insert(id, w);
        }
    }

    /// Unparks every op waiting for `w`; appends them to `out`.
    pub fn unpark(&mut self, w: Watch, out: &mut Vec<OpId>) {
        if let Some(ids) = self.parked.remove(&w) {
            for id in ids {
                self.parked_on.remove(&id);
                self.active.insert(id);
                out.push(id);
            }
        }
    }

    /// Unparks every op waiting for anything of SM `sm`'s L1 (a flush), or, with `sm` None,
    /// for room in any L1 (the L2 changed: whether an L1 may write a dirty victim back
    /// depends on it).
    pub fn unpark_l1(&mut self, sm: Option<u32>, out: &mut Vec<OpId>) {
        // The variants sort by kind first: an SM's lines are one range, the rooms another.
        let watches: Vec<Watch> = match sm {
            Some(sm) => self
                .parked
                .range(Watch::L1Line(sm, 0)..=Watch::L1Line(sm, Key::MAX))
                .map(|(w, _)| *w)
                .chain(std::iter::once(Watch::L1Room(sm)))
                .collect(),
            None => self
                .parked
                .range(Watch::L1Room(0)..=Watch::L1Room(u32::MAX))
                .map(|(w, _)| *w)
                .collect(),
        };
        for w in watches {
            self.unpark(w, out);
        }
    }

    /// Whether the incremental indexes equal the ones computed from scratch (parking aside:
    /// the active and the parked ops together are the ready ones, each once).
    pub fn matches(&self, scratch: &OpIndex) -> bool {
        let parked: OrdSet<OpId> = self.parked_on.keys().copied().collect();
        let parked_listed: usize = self.parked.values().map(|ids| ids.len()).sum();
        let active: OrdSet<OpId> = self.active.iter().collect();
        let ready: OrdSet<OpId> = self.ready.iter().collect();
        self.by_thread == scratch.by_thread
            && self.by_warp == scratch.by_warp
            && self.ready == scratch.ready
            && self.free == scratch.free
            && parked_listed == parked.len()
            && active.clone().intersection(parked.clone()).is_empty()
            && active.len() + parked.len() == self.active.len() + parked_listed
            && active.union(parked) == ready
    }

    /// The ops of thread `who`, by id.
    pub fn of_thread(&self, who: Who) -> &[OpId] {
        self.by_thread.get(&who).map_or(&[], |ids| ids.as_slice())
    }

    /// The slot list shrank to `len`: free slots at or beyond it are gone.
    pub fn truncate(&mut self, len: usize) {
        while let Some(max) = self.free.last() {
            if (max as usize) < len {
                break;
            }
            self.free.remove(max);
        }
    }

    /// The indexes computed from scratch from the op list (what the incremental ones must
    /// equal).
    pub fn rebuilt(ops: &[Option<Fingerprinted<Op>>]) -> OpIndex {
        let mut ix = OpIndex::default();
        for (i, o) in ops.iter().enumerate() {
            match o {
                Some(o) => ix.add(i as OpId, o),
                None => {
                    ix.free.insert(i as OpId);
                }
            }
        }
        ix
    }
}
