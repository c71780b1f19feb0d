//! Indexes of the in-flight ops, so that the questions the machine asks after every step cost
//! O(ops of one thread or warp) instead of a scan of every op in flight (issue 15: the scans
//! made a step's cost grow with the number of resident warps).
//!
//! The indexes are functions of `Cached::ops` (they never hold information of their own):
//! state equality and the state hash leave them out, and [`OpIndex::rebuilt`] computes them
//! from scratch for the consistency checks. The per-thread, per-warp and per-watch indexes are
//! hash maps with a fixed fast hasher ([`FastMap`]; only looked up, never iterated where the
//! order could leak into results: the engine sorts what it collects): a run updates them on
//! every issue and end, which a persistent tree made the largest cost of a memory step, and an
//! explorer's state has a handful of entries to copy. What an op is watched under is a vector
//! by op id (ids are dense slots), and each watch lists its ops in no particular order with
//! every op's position, so registering and moving an op cost O(1) however many ops watch
//! the same line (issue 15: hundreds of loads wait on one line of a full-size kernel).
//!
//! *Watching*: a ready op whose next statement can defer (a reserve or allocating write, a
//! read of a line being filled, an eviction or discard of a pinned line, a bank lock) is
//! registered under the resource its answer depends on ([`Watch`]: a line of an L1 or of the
//! L2, room in a cache, a block's bank locks). After a step, only the ops registered under
//! what the step changed are tested again (`Cached::after_mutation`); every other op's
//! enabledness cannot have changed. The debug checks and the tests compare the enabled steps
//! with a scan of every op.

use super::engine::Op;
use super::line::Key;
use super::{OpId, RequestKind};
use crate::{Fingerprinted, Who};
use smallvec::SmallVec;
use std::collections::HashMap;
use std::hash::Hash;

/// A hash map with foldhash's fixed-seed fast hasher: the keys are small integers and ids
/// (SipHash, the standard default, was a visible share of a memory step), and a fixed seed keeps
/// runs reproducible.
pub(super) type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// Ids of ops, ascending.
type Ids = SmallVec<[OpId; 4]>;

/// Pending registers of a warp: (register, lanes it is pending for), by register.
type PendingRegs = SmallVec<[(u32, u64); 4]>;

/// A warp's pending registers, and how many in-flight ops write a (register, lane) that
/// another op of the warp also writes. While there are none, an op that ends clears its lane
/// without looking for another writer among the warp's ops. One entry per warp for both: an
/// op that ends looks its warp up once.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Pending {
    pub regs: PendingRegs,
    pub dups: u32,
}

/// A set of op ids as a bit set: ids are slots, dense and reused smallest first, so a bit per
/// slot is small, and the enabled scan walks set bits instead of a tree. Inline up to 128 ids:
/// explorers clone the memory state for every successor, and litmus-size states then allocate
/// nothing for the sets.
#[derive(Debug, Clone, Default)]
pub(super) struct IdSet {
    words: SmallVec<[u64; 2]>,
    /// Every word below this one is zero (derived: a lower bound [`IdSet::first`] starts
    /// from, so that the smallest free slot of a full-size kernel's tens of thousands of ops
    /// is found without a pass over the empty words before it: issue 15).
    low: usize,
}

impl IdSet {
    pub fn insert(&mut self, id: OpId) {
        let w = id as usize / 64;
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (id % 64);
        self.low = self.low.min(w);
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
        self.low = self.low.min(self.words.len());
        was
    }

    pub fn contains(&self, id: OpId) -> bool {
        self.words
            .get(id as usize / 64)
            .is_some_and(|w| w >> (id % 64) & 1 != 0)
    }

    /// The ids, ascending (for the debug check of the indexes).
    #[cfg(debug_assertions)]
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

    /// The smallest id (moves the lower bound of the nonzero words up to it).
    pub fn first(&mut self) -> Option<OpId> {
        let skip = self.words[self.low..]
            .iter()
            .take_while(|w| **w == 0)
            .count();
        self.low += skip;
        let w = *self.words.get(self.low)?;
        Some(self.low as OpId * 64 + w.trailing_zeros())
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
}

/// Trailing zero words are never stored, so equal sets have equal words (the lower bound
/// is derived).
impl PartialEq for IdSet {
    fn eq(&self, other: &Self) -> bool {
        self.words == other.words
    }
}

/// The in-flight ops of each thread: per block, a vector by thread index, so that the ops of
/// a warp's threads lie side by side (a hash map over every thread of a full-size kernel
/// missed the cache on almost every issue, end and scoreboard question: issue 15).
#[derive(Debug, Clone, Default)]
pub(super) struct ThreadOps {
    /// Per block: its threads' ops by thread index (up to the highest thread with ops, or
    /// beyond), and how many of its threads have ops (blocks with none are not stored).
    blocks: FastMap<u32, (Vec<Ids>, u32)>,
}

/// Equal indexes list the same ops for every thread (how far a block's vector grew aside).
impl PartialEq for ThreadOps {
    fn eq(&self, other: &Self) -> bool {
        let same = |a: &Self, b: &Self| {
            a.blocks.iter().all(|(block, (threads, _))| {
                threads.iter().enumerate().all(|(t, ids)| {
                    ids.as_slice()
                        == b.get(Who {
                            block: *block,
                            thread: t as u32,
                        })
                })
            })
        };
        same(self, other) && same(other, self)
    }
}

impl ThreadOps {
    /// The ops of thread `who`, by id.
    pub fn get(&self, who: Who) -> &[OpId] {
        self.blocks
            .get(&who.block)
            .and_then(|(threads, _)| threads.get(who.thread as usize))
            .map_or(&[], |ids| ids.as_slice())
    }

    /// Whether the thread has ops.
    pub fn busy(&self, who: Who) -> bool {
        !self.get(who).is_empty()
    }

    /// Whether any thread `tid_base + l` of block `block`, for the set bits `l` of `lanes`,
    /// has ops (one lookup of the block, not one per lane).
    pub fn any_busy(&self, block: u32, tid_base: u32, lanes: u64) -> bool {
        let Some((threads, _)) = self.blocks.get(&block) else {
            return false;
        };
        let mut m = lanes;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            if threads
                .get((tid_base + l) as usize)
                .is_some_and(|ids| !ids.is_empty())
            {
                return true;
            }
        }
        false
    }

    /// Whether no thread has ops.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The thread's list, for adding an op.
    fn entry(&mut self, who: Who) -> &mut Ids {
        let (threads, busy) = self.blocks.entry(who.block).or_default();
        let t = who.thread as usize;
        if threads.len() <= t {
            threads.resize_with(t + 1, Ids::new);
        }
        if threads[t].is_empty() {
            *busy += 1;
        }
        &mut threads[t]
    }

    /// Takes `id` off the thread's list; `rest` becomes the ops the thread still has (one
    /// lookup of the block for both: the op's end asks which of them waited for it).
    fn remove(&mut self, who: Who, id: OpId, rest: &mut SmallVec<[OpId; 8]>) {
        let Some((threads, busy)) = self.blocks.get_mut(&who.block) else {
            return;
        };
        let Some(ids) = threads.get_mut(who.thread as usize) else {
            return;
        };
        let had = !ids.is_empty();
        ids.retain(|i| *i != id);
        *rest = SmallVec::from_slice(ids);
        if had && ids.is_empty() {
            *busy -= 1;
            if *busy == 0 {
                self.blocks.remove(&who.block);
            }
        }
    }
}

/// What a watched op's enabledness depends on (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Watch {
    /// The bank locks of a block.
    Lock(u32),
    /// A live line of an SM's L1 (its pins, its dirty bytes, whether it is there): an
    /// eviction or a discard waits.
    L1Line(u32, Key),
    /// The valid bytes of an SM's L1 line at a key (the live line or a doomed one: the read
    /// that waits pins the line it sees, and nobody else can change that pin): a read waits
    /// for its fill.
    L1Fill(u32, Key),
    /// Room in an SM's L1 (an allocation waits).
    L1Room(u32),
    /// The valid bytes of an L2 line (a read waits for its fill; as for `L1Fill`).
    L2Fill(Key),
    /// Room in the L2.
    L2Room,
    /// An SM's store stage (deviation D31): a release above `.cta` at its first statement
    /// waits for it to hold no other thread's entry (and, its first statement being an
    /// eviction or discard of a line of the SM's L1, for that line).
    Stage(u32),
}

#[derive(Debug, Clone, Default)]
pub(super) struct OpIndex {
    /// The in-flight ops of each thread (ordering dependencies are only ever within a thread).
    pub by_thread: ThreadOps,
    /// Per (block, warp of the destination), the registers in-flight loads and atomics will
    /// write and the lanes they write them for (the machine's scoreboard asks this of a warp's
    /// next instruction after every step that may unblock it: O(registers), not O(ops)),
    /// with the count of their duplicates ([`Pending`]).
    pub pending: FastMap<(u32, u32), Pending>,
    /// The ops whose dependencies all ended (the candidates of the enabled set).
    pub ready: IdSet,
    /// Free slots below the length of the op list (the smallest is reused first).
    pub free: IdSet,
    /// Watched ready ops by what their enabledness depends on, in no particular order (the
    /// engine sorts the ops it collects).
    pub watchers: FastMap<Watch, Vec<OpId>>,
    /// By op id: what the op is registered under and its position in that list.
    pub watch_on: Vec<Option<(Watch, u32)>>,
    /// How many ops are registered (the length of the lists of `watchers` together).
    pub watched: usize,
    /// Per block, how many in-flight ops write its shared memory (stores and atomics on
    /// `.shared`); zeros are not stored. A weak shared load is performed at its issue only
    /// while none is ([`super::Cached::load_at_issue`]).
    pub shared_writers: FastMap<u32, u32>,
}

/// Whether the op writes shared memory (a store or an atomic on `.shared`).
fn writes_shared(op: &Op) -> bool {
    op.req.space == crate::MemSpace::Shared
        && matches!(
            op.req.kind,
            RequestKind::Store { .. } | RequestKind::Atomic { .. }
        )
}

fn insert_sorted(ids: &mut Ids, id: OpId) {
    if let Err(i) = ids.binary_search(&id) {
        ids.insert(i, id);
    }
}

/// An op's destination register, if it has one.
fn dest(op: &Op) -> Option<super::Dest> {
    match op.req.kind {
        RequestKind::Load { dest, .. } | RequestKind::Atomic { dest, .. } => dest,
        _ => None,
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
        insert_sorted(self.by_thread.entry(op.req.who), id);
        if let (Some(w), Some(d)) = (dest_warp(op), dest(op)) {
            let Pending { regs, dups } = self.pending.entry(w).or_default();
            match regs.iter_mut().find(|(r, _)| *r == d.reg) {
                Some((_, lanes)) => {
                    if *lanes >> d.lane & 1 != 0 {
                        *dups += 1;
                    }
                    *lanes |= 1 << d.lane
                }
                None => {
                    // Sorted by register: equal indexes compare equal.
                    let at = regs.partition_point(|(r, _)| *r < d.reg);
                    regs.insert(at, (d.reg, 1 << d.lane));
                }
            }
        }
        if op.deps.is_empty() {
            self.make_ready(id);
        }
        self.free.remove(id);
        if writes_shared(op) {
            *self.shared_writers.entry(op.req.who.block).or_default() += 1;
        }
    }

    /// Forgets the op that leaves slot `id` (`ops`: the op list without it); `rest` becomes
    /// the ops its thread still has, by id.
    pub fn remove(
        &mut self,
        id: OpId,
        op: &Op,
        ops: &[Option<Fingerprinted<Op>>],
        rest: &mut SmallVec<[OpId; 8]>,
    ) {
        self.by_thread.remove(op.req.who, id, rest);
        if let (Some(w), Some(d)) = (dest_warp(op), dest(op)) {
            // Another op of the warp may write the same register of the same lane: only while
            // the warp has such duplicates, which the machine's scoreboard never issues (an
            // instruction that writes a pending register waits), so the pass over every op
            // is for other callers of the engine.
            if let Some(p) = self.pending.get_mut(&w) {
                let still = p.dups > 0
                    && ops.iter().flatten().any(|o| {
                        dest_warp(o) == Some(w)
                            && dest(o).is_some_and(|e| e.reg == d.reg && e.lane == d.lane)
                    });
                if still {
                    p.dups -= 1;
                } else if let Some(i) = p.regs.iter().position(|(r, _)| *r == d.reg) {
                    p.regs[i].1 &= !(1 << d.lane);
                    if p.regs[i].1 == 0 {
                        p.regs.remove(i);
                    }
                }
                if p.regs.is_empty() {
                    self.pending.remove(&w);
                }
            }
        }
        self.ready.remove(id);
        self.watch(id, None);
        if writes_shared(op)
            && let Some(n) = self.shared_writers.get_mut(&op.req.who.block)
        {
            *n -= 1;
            if *n == 0 {
                self.shared_writers.remove(&op.req.who.block);
            }
        }
    }

    /// The op's dependencies all ended.
    pub fn make_ready(&mut self, id: OpId) {
        self.ready.insert(id);
    }

    /// What op `id` is registered under (the debug checks).
    #[cfg(debug_assertions)]
    pub fn watched_under(&self, id: OpId) -> Option<Watch> {
        self.watch_on
            .get(id as usize)
            .copied()
            .flatten()
            .map(|(w, _)| w)
    }

    /// Registers op `id` under `w` (None: under nothing), moving it from where it was. O(1):
    /// the op leaves its list by a swap with the list's last op.
    #[inline]
    pub fn watch(&mut self, id: OpId, w: Option<Watch>) {
        let old = self.watch_on.get(id as usize).copied().flatten();
        // Most tests leave the op where it was.
        if old.map(|(o, _)| o) != w {
            self.move_watch(id, old, w);
        }
    }

    /// [`OpIndex::watch`] for an op that moves from `old` (what it is registered under now,
    /// with its position there) to `w`.
    fn move_watch(&mut self, id: OpId, old: Option<(Watch, u32)>, w: Option<Watch>) {
        let i = id as usize;
        if let Some((old, pos)) = old {
            self.watch_on[i] = None;
            self.watched -= 1;
            let empty = match self.watchers.get_mut(&old) {
                Some(ids) => {
                    ids.swap_remove(pos as usize);
                    if let Some(&moved) = ids.get(pos as usize) {
                        self.watch_on[moved as usize] = Some((old, pos));
                    }
                    ids.is_empty()
                }
                None => false,
            };
            if empty {
                self.watchers.remove(&old);
            }
        }
        if let Some(w) = w {
            let ids = self.watchers.entry(w).or_default();
            let pos = ids.len() as u32;
            ids.push(id);
            if self.watch_on.len() <= i {
                self.watch_on.resize(i + 1, None);
            }
            self.watch_on[i] = Some((w, pos));
            self.watched += 1;
        }
    }

    /// Appends the ops registered under `w` to `out` (in no particular order).
    pub fn watchers_of(&self, w: Watch, out: &mut Vec<OpId>) {
        if let Some(ids) = self.watchers.get(&w) {
            out.extend_from_slice(ids);
        }
    }

    /// Appends the ops registered under room in any L1 to `out` (whether an L1 may write a
    /// dirty victim back depends on the L2; in no particular order). A pass over the watches:
    /// only when the L2's room was or is tight.
    pub fn l1_room_watchers(&self, out: &mut Vec<OpId>) {
        for (w, ids) in &self.watchers {
            if matches!(w, Watch::L1Room(_)) {
                out.extend_from_slice(ids);
            }
        }
    }

    /// Whether the incremental indexes equal the ones computed from scratch (the watch
    /// registrations aside: only ready ops are registered, each under one watch, listed once
    /// at the position it records).
    pub fn matches(&self, scratch: &OpIndex) -> bool {
        let listed: usize = self.watchers.values().map(|ids| ids.len()).sum();
        let registered = self.watch_on.iter().flatten().count();
        self.by_thread == scratch.by_thread
            && self.pending == scratch.pending
            && self.ready == scratch.ready
            && self.free == scratch.free
            && self.shared_writers == scratch.shared_writers
            && listed == registered
            && registered == self.watched
            && self.watch_on.iter().enumerate().all(|(id, on)| match on {
                None => true,
                Some((w, pos)) => {
                    self.ready.contains(id as OpId)
                        && self.watchers.get(w).and_then(|ids| ids.get(*pos as usize))
                            == Some(&(id as OpId))
                }
            })
    }

    /// The ops of thread `who`, by id.
    pub fn of_thread(&self, who: Who) -> &[OpId] {
        self.by_thread.get(who)
    }

    /// The slot list shrank to `len`: free slots at or beyond it are gone.
    pub fn truncate(&mut self, len: usize) {
        while let Some(max) = self.free.last() {
            if (max as usize) < len {
                break;
            }
            self.free.remove(max);
        }
        // Ops beyond the list ended, so they are registered under nothing.
        self.watch_on.truncate(len);
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
