//! The data race monitor (digest `seeds_gpuverify.md` §2.3 "Race detector").
//!
//! **Definition.** Two accesses race when they are made by different threads, touch a common byte,
//! at least one writes, they are not both *morally strong* with scopes that include both threads,
//! and neither happens before the other. Happens-before is:
//! * program order of one thread;
//! * a barrier both threads' warps passed (seed 001 Def 3.1 BARRIER_S; seed 002 Def 2.1): per
//!   block, each warp has a vector clock over the block's warps, joined at `endBar`, so named
//!   barriers with thread counts and `bar.arrive` producers order exactly the warps that met;
//! * inside a warp, the warp synchronisations of the race model: `bar.warp.sync` always, and
//!   under [`RaceModel::WarpSync`] every instruction executed by both lanes (seed 002 Def 2.2 with
//!   the re-sync rule `ps ∧ pt`, §1.2.3). Per warp we keep the last instruction index at which
//!   all lanes synchronised, and a lane × lane matrix only once partial masks occur;
//! * the PTX memory model's release/acquire patterns (PTX ISA 8.x §8.8): a release (a
//!   `.release` strong write, or a fence followed by a strong write) publishes what its thread
//!   knows at the written location; a strong read that is `.acquire` (or followed by a fence)
//!   learns it. Both sides need a scope that includes the other thread: a `.cta` atomic or fence
//!   does not order threads of different blocks (issue: "scope-aware"). Read-modify-writes
//!   continue release sequences. Without such a pattern, *any* conflicting pair of accesses from
//!   two blocks races (seed 004: "inter-group synchronisation within a kernel invocation is not
//!   possible"; GPUVerify's inter-group check);
//! * in a program of several launches, stream order (thesis 5.7: a launch starts when the
//!   previous launch of its stream has completed): every access of an earlier grid of the
//!   stream happens before the later grid's, which also starts knowing what the earlier grid's
//!   threads knew when they exited; a release publishes its stream predecessors' accesses with
//!   its own, so the order composes with release/acquire between streams. Grids of different
//!   streams are ordered by nothing else.
//!
//! **Which accesses are atomic** (digest §7 item 2, decided): `atom`/`red`, `ld/st.relaxed`,
//! `.acquire`, `.release` and `ld/st.volatile` (PTX ISA 8.x: `volatile` is `relaxed.sys` for the
//! memory model) are morally strong; two strong accesses never race when each thread is in the
//! other's scope (S2 §4.1's atomic set `AA`: atomic-atomic pairs are not racy). A strong access
//! and a plain one conflict as S2 §4.1's table says (`histo_main`'s read/atomic race is a race).
//!
//! **Shadow memory** ([`super::shadow`]): per 4-byte word the last write and the last reads by
//! two different threads, each an [`Acc`] (thread, warp clock, warp instruction index, pc; 20
//! bytes, since the shadow of every resident block's shared memory is where the monitor's time
//! goes, in cache misses), byte-precise once a sub-word access touches the word. Global memory
//! is paged (a page per 4 KiB touched), shared memory is a flat array per resident block. Local
//! memory is private to a thread: no races.
//!
//! **Hot path.** The accesses of one warp step are checked together
//! ([`Monitors::race_accesses`]): the block's and the warp's clocks are looked up once per step,
//! not per lane.
use super::shadow::{Acc, Bytes, Cell};
use super::{
    AccessOp, Instr, Monitors, Race, RaceKind, RaceModel, RaceScope, RawAccess, SCOPE_CTA,
    SCOPE_GPU, Shape,
};
use std::collections::{BTreeMap, HashMap};
use traces::MemSpace;

mod report;
mod sync;

use sync::{ThreadRef, sync_access};

const STRONG: u8 = 1;
const RMW: u8 = 2;
/// A plain store that wrote the bytes already there (bits 2-3 are the scope).
const UNCHANGED: u8 = 16;

impl Acc {
    #[inline]
    fn g(&self) -> u32 {
        self.thread - 1
    }
    #[inline]
    fn strong(&self) -> bool {
        self.flags & STRONG != 0
    }
    #[inline]
    fn scope(&self) -> u8 {
        (self.flags >> 2) & 3
    }
    #[inline]
    fn unchanged(&self) -> bool {
        self.flags & UNCHANGED != 0
    }
}

const PAGE_WORDS: usize = 1024;

/// Paged shadow of global memory.
#[derive(Debug, Default)]
struct Paged {
    index: HashMap<u64, usize>,
    pages: Vec<Box<[Cell]>>,
    last: Option<(u64, usize)>,
    /// Byte cells of split words.
    bytes: Bytes,
}

impl Paged {
    #[inline]
    fn cell(&mut self, word: u64) -> (&mut Cell, &mut Bytes) {
        let page = word / PAGE_WORDS as u64;
        let i = match self.last {
            Some((p, i)) if p == page => i,
            _ => {
                let n = self.pages.len();
                let i = *self.index.entry(page).or_insert(n);
                if i == n {
                    self.pages
                        .push(vec![Cell::default(); PAGE_WORDS].into_boxed_slice());
                }
                self.last = Some((page, i));
                i
            }
        };
        (
            &mut self.pages[i][(word % PAGE_WORDS as u64) as usize],
            &mut self.bytes,
        )
    }
}

/// What a thread knows happened before it (beyond its block's barriers): sparse vector clocks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Knowledge {
    /// `(block << 32 | warp) -> clock`: accesses of that warp with a clock up to this.
    warps: Vec<(u64, u32)>,
    /// `global thread -> warp instruction index`: that thread's accesses made at its warp's
    /// instruction indices up to this (a thread's accesses are in the order of those indices).
    threads: Vec<(u32, u32)>,
    /// `first thread -> end thread`: global thread ranges of completed grids, all of whose
    /// accesses happened before (a grid's stream predecessors, passed on by a release).
    grids: Vec<(u32, u32)>,
}

fn join_sorted<K: Ord + Copy>(dst: &mut Vec<(K, u32)>, src: &[(K, u32)]) {
    if src.is_empty() {
        return;
    }
    if dst.is_empty() {
        dst.extend_from_slice(src);
        return;
    }
    let mut out = Vec::with_capacity(dst.len() + src.len());
    let (mut i, mut j) = (0, 0);
    while i < dst.len() && j < src.len() {
        let (a, b) = (dst[i], src[j]);
        match a.0.cmp(&b.0) {
            std::cmp::Ordering::Less => {
                out.push(a);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a.0, a.1.max(b.1)));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&dst[i..]);
    out.extend_from_slice(&src[j..]);
    *dst = out;
}

fn lookup<K: Ord + Copy>(list: &[(K, u32)], k: K) -> Option<u32> {
    list.binary_search_by(|e| e.0.cmp(&k))
        .ok()
        .map(|i| list[i].1)
}

impl Knowledge {
    fn join(&mut self, other: &Knowledge) {
        join_sorted(&mut self.warps, &other.warps);
        join_sorted(&mut self.threads, &other.threads);
        join_sorted(&mut self.grids, &other.grids);
    }
    fn is_empty(&self) -> bool {
        self.warps.is_empty() && self.threads.is_empty() && self.grids.is_empty()
    }
    /// Whether access `a` (made in `block`, `warp`) happened before the thread that knows this.
    #[inline]
    fn covers(&self, a: &Acc, block: u32, warp: u32) -> bool {
        if lookup(&self.warps, (block as u64) << 32 | warp as u64).is_some_and(|c| a.clock <= c) {
            return true;
        }
        if lookup(&self.threads, a.g()).is_some_and(|i| a.wi <= i) {
            return true;
        }
        let g = a.g();
        self.grids.iter().any(|&(lo, hi)| (lo..hi).contains(&g))
    }
}

/// A release published at a location: by a thread of `block`, at `scope`.
#[derive(Debug, Clone)]
struct Published {
    block: u32,
    scope: u8,
    knowledge: Knowledge,
}

/// Per-thread synchronisation state.
#[derive(Debug, Clone, Default)]
struct ThreadSync {
    /// The last fence: `1 + scope` (0: none yet) and its warp instruction index (the thread's
    /// accesses up to it are what a later release publishes).
    fence: u8,
    fence_wi: u32,
    /// The warp clocks at the last fence (row of the block's matrix).
    knowledge: Option<Box<Knowledge>>,
    /// Releases read by strong non-acquire reads since the last fence: `(published, read scope)`.
    pending: Vec<(Published, u8)>,
}

/// A barrier being gathered: who arrived, what they knew.
#[derive(Debug, Clone, Default)]
struct Gather {
    join: Vec<u32>,
    /// Waiting warps and their arriving lanes.
    waiters: Vec<(u32, u64)>,
    knowledge: Option<Knowledge>,
}

/// A resident block's clocks.
#[derive(Debug)]
struct BlockSync {
    /// `vc[w * W + v]`: warp `w` has seen warp `v`'s accesses with clocks up to this. Own clocks
    /// start at 1 (so nothing is ordered before the first barrier).
    vc: Vec<u32>,
    /// Per warp: instruction index (counts warp steps).
    wi: Vec<u32>,
    /// Per warp: 1 + the last instruction index at which all the warp's lanes synchronised.
    full: Vec<u32>,
    /// Per warp: `1 + index` of the last instruction synchronising lanes `s` and `t` (ws × ws),
    /// allocated at the first partial synchronisation.
    joint: Vec<Option<Box<[u32]>>>,
    threads: Vec<ThreadSync>,
    bars: Vec<Gather>,
    shared: Vec<Cell>,
    /// Byte cells of split shared words.
    shared_bytes: Bytes,
    /// Some thread of the block knows something: barrier completion must propagate it.
    knows: bool,
}

/// A race as first seen (converted to a report when new).
#[derive(Debug, Clone, Copy)]
struct RawRace {
    prev: Acc,
    prev_write: bool,
    cur: Acc,
    cur_write: bool,
    space: MemSpace,
    word: u64,
}

pub(crate) struct RaceState {
    model: RaceModel,
    global: Paged,
    blocks: Vec<Option<Box<BlockSync>>>,
    /// Releases published per location `(space, block for shared, word)`.
    sync: HashMap<(u8, u32, u64), Vec<Published>>,
    /// What the threads of each completed grid knew when they exited, by the grid's first
    /// global thread: the launches of its stream that follow it start knowing it.
    completed: BTreeMap<u32, Knowledge>,
    /// Reported pairs `(first pc, second pc, kind)` -> index in `findings.races`.
    seen: BTreeMap<(u32, u32, u8), usize>,
    /// Races found by the access being processed (reused: no allocation per access).
    pending: Vec<RawRace>,
    found: Found,
}

impl RaceState {
    pub fn new(model: RaceModel) -> RaceState {
        RaceState {
            model,
            global: Paged::default(),
            blocks: Vec::new(),
            sync: HashMap::new(),
            completed: BTreeMap::new(),
            seen: BTreeMap::new(),
            pending: Vec::new(),
            found: Found::default(),
        }
    }

    /// Block `block` of a grid of `shape`, whose stream predecessors are the grids with the
    /// global thread ranges `preds`, became resident: its threads start knowing what those
    /// grids' threads knew when they exited (happens-before is transitive through the stream
    /// order, thesis 5.7).
    pub fn issue(&mut self, block: u32, shape: &Shape, preds: &[(u32, u32)]) {
        let w = shape.grid.warps_per_block as usize;
        let mut vc = vec![0u32; w * w];
        for i in 0..w {
            vc[i * w + i] = 1;
        }
        let mut b = BlockSync {
            vc,
            wi: vec![0; w],
            full: vec![0; w],
            joint: vec![None; w],
            threads: vec![ThreadSync::default(); shape.grid.threads_per_block as usize],
            bars: vec![Gather::default(); 16],
            shared: vec![Cell::default(); shape.shared_bytes.div_ceil(4) as usize],
            shared_bytes: Bytes::default(),
            knows: false,
        };
        let inherited = self.inherited(preds);
        if !inherited.is_empty() {
            for t in &mut b.threads {
                t.knowledge = Some(Box::new(inherited.clone()));
            }
            b.knows = true;
        }
        let i = block as usize;
        if self.blocks.len() <= i {
            self.blocks.resize_with(i + 1, || None);
        }
        self.blocks[i] = Some(Box::new(b));
    }

    /// What the stream predecessors with thread ranges `preds` knew when they completed.
    fn inherited(&self, preds: &[(u32, u32)]) -> Knowledge {
        let mut k = Knowledge::default();
        if !self.completed.is_empty() {
            for (lo, _) in preds {
                if let Some(c) = self.completed.get(lo) {
                    k.join(c);
                }
            }
        }
        k
    }

    /// Block `block` of a grid of `shape` exited; in a program of several launches, what its
    /// threads knew joins what its grid passes on to its stream successors.
    pub fn retire(&mut self, block: u32, shape: &Shape) {
        if let Some(b) = self.blocks.get_mut(block as usize) {
            if shape.grid_index.is_some()
                && let Some(b) = b.as_deref()
                && b.knows
            {
                let c = self
                    .completed
                    .entry(shape.first_block * shape.stride)
                    .or_default();
                for k in b.threads.iter().filter_map(|t| t.knowledge.as_deref()) {
                    c.join(k);
                }
            }
            *b = None;
        }
        // Shared-memory releases of the block die with it.
        if !self.sync.is_empty() {
            self.sync
                .retain(|k, _| !(k.0 == MemSpace::Shared as u8 && k.1 == block));
        }
    }

    /// Warp step bookkeeping after its accesses: warp synchronisation, fences.
    pub fn executed(&mut self, ins: &Instr, shape: &Shape) {
        let Some(Some(b)) = self.blocks.get_mut(ins.block as usize) else {
            return;
        };
        let w = ins.warp as usize;
        let Some(idx) = b.wi.get(w).copied() else {
            return;
        };
        let sync = match self.model {
            RaceModel::WarpSync => ins.lanes,
            RaceModel::Interleaving if ins.class.warp_sync => ins.lanes,
            RaceModel::Interleaving => 0,
        };
        if sync != 0 {
            let full = shape.warp_mask(ins.warp);
            if sync & full == full {
                b.full[w] = idx + 1;
            } else if sync.count_ones() > 1 {
                let ws = shape.grid.warp_size as usize;
                let m = b.joint[w].get_or_insert_with(|| vec![0u32; ws * ws].into_boxed_slice());
                let mut s_mask = sync;
                while s_mask != 0 {
                    let s = s_mask.trailing_zeros() as usize;
                    s_mask &= s_mask - 1;
                    let mut t_mask = sync;
                    while t_mask != 0 {
                        let t = t_mask.trailing_zeros() as usize;
                        t_mask &= t_mask - 1;
                        m[s * ws + t] = idx + 1;
                    }
                }
            }
        }
        b.wi[w] = idx + 1;
        if ins.class.fence {
            let scope = ins.class.scope;
            for l in crate::machine::warp::lanes(ins.lanes).map(|l| l as u32) {
                let tid = (ins.warp * shape.grid.warp_size + l) as usize;
                let Some(t) = b.threads.get_mut(tid) else {
                    continue;
                };
                // Release side: later strong writes publish what preceded the fence.
                t.fence = 1 + scope;
                t.fence_wi = idx;
                // Acquire side: releases read since the last fence become known.
                if !t.pending.is_empty() {
                    let pending = std::mem::take(&mut t.pending);
                    let k = t.knowledge.get_or_insert_with(Default::default);
                    for (p, read_scope) in &pending {
                        if p.block == ins.block
                            || (p.scope >= SCOPE_GPU && scope.min(*read_scope) >= SCOPE_GPU)
                        {
                            k.join(&p.knowledge);
                        }
                    }
                    b.knows = true;
                }
            }
        }
    }

    /// A warp (or, under `its`/`threads`, the lanes in `lanes`) arrived at barrier `bar`.
    pub fn arrive(
        &mut self,
        block: u32,
        warp: u32,
        bar: u32,
        lanes: u64,
        ins: &Instr,
        shape: &Shape,
    ) {
        let Some(Some(b)) = self.blocks.get_mut(block as usize) else {
            return;
        };
        let nw = shape.grid.warps_per_block as usize;
        let w = warp as usize;
        let Some(g) = b.bars.get_mut(bar as usize) else {
            return;
        };
        if g.join.is_empty() {
            g.join = vec![0; nw];
        }
        for (j, v) in g.join.iter_mut().zip(&b.vc[w * nw..(w + 1) * nw]) {
            *j = (*j).max(*v);
        }
        if b.knows {
            for l in crate::machine::warp::lanes(lanes).map(|l| l as u32) {
                if let Some(k) = b
                    .threads
                    .get((warp * shape.grid.warp_size + l) as usize)
                    .and_then(|t| t.knowledge.as_deref())
                {
                    g.knowledge.get_or_insert_with(Default::default).join(k);
                }
            }
        }
        if ins.class.barrier_waits {
            g.waiters.push((warp, lanes));
        }
        // Accesses after the arrival are not ordered before the other warps' later ones.
        b.vc[w * nw + w] += 1;
    }

    /// Barrier `bar` of `block` completed (`endBar`): waiters learn what the arrivals knew.
    pub fn complete(&mut self, block: u32, bar: u32, shape: &Shape) {
        let Some(Some(b)) = self.blocks.get_mut(block as usize) else {
            return;
        };
        let nw = shape.grid.warps_per_block as usize;
        let Some(g) = b.bars.get_mut(bar as usize) else {
            return;
        };
        let g = std::mem::take(g);
        for &(w, lanes) in &g.waiters {
            let w = w as usize;
            if g.join.len() == nw {
                for (v, j) in b.vc[w * nw..(w + 1) * nw].iter_mut().zip(&g.join) {
                    *v = (*v).max(*j);
                }
            }
            if let Some(k) = &g.knowledge {
                for l in crate::machine::warp::lanes(lanes).map(|l| l as u32) {
                    if let Some(t) = b
                        .threads
                        .get_mut(w * shape.grid.warp_size as usize + l as usize)
                    {
                        t.knowledge.get_or_insert_with(Default::default).join(k);
                    }
                }
            }
        }
    }
}

impl Monitors {
    /// The `.global`/`.shared` accesses of one warp step, in the order the machine made them.
    pub(crate) fn race_accesses(&mut self, accs: &[RawAccess]) {
        // One step's accesses are all by one instruction of one warp; runs of accesses that
        // differ only in lane and address keep this general (generic addresses may resolve to
        // different spaces lane by lane).
        let mut rest = accs;
        while let Some(first) = rest.first() {
            let n = rest
                .iter()
                .position(|a| !first.same_instruction(a))
                .unwrap_or(rest.len());
            let run = &rest[..n];
            let first = RawAccess {
                unchanged: run.iter().fold(0, |m, a| m | a.unchanged),
                ..*first
            };
            self.warp_accesses(&first, run.iter().map(|a| (a.lane, a.address)));
            rest = &rest[n..];
        }
        self.report_pending_races();
    }

    /// Reports what the accesses checked since the last call found.
    pub(crate) fn report_pending_races(&mut self) {
        if !self.race.pending.is_empty() {
            let pending = std::mem::take(&mut self.race.pending);
            for r in &pending {
                self.report_race(r);
            }
            self.race.pending = pending;
            self.race.pending.clear();
        }
    }

    /// Accesses like `a` by lanes of its warp at these addresses, in order: the block's and
    /// warp's state, and what the instruction does, once. An iterator, so that a whole-warp
    /// access (`Event::WarpMemory`) is checked without being staged in memory lane by lane.
    #[inline]
    pub(crate) fn warp_accesses(&mut self, a: &RawAccess, lanes: impl Iterator<Item = (u32, u64)>) {
        // The common case, plain accesses where nothing but barriers and whole-warp
        // synchronisation orders anything, gets the checks compiled without the rest.
        let simple = !a.class.strong
            && self.race.sync.is_empty()
            && self
                .race
                .blocks
                .get(a.block as usize)
                .and_then(|b| b.as_deref())
                .is_some_and(|b| {
                    !b.knows && b.joint.get(a.warp as usize).is_some_and(|j| j.is_none())
                });
        if simple {
            self.warp_accesses_as::<true>(a, lanes)
        } else {
            self.warp_accesses_as::<false>(a, lanes)
        }
    }

    /// [`Monitors::warp_accesses`]; `SIMPLE`: the access is not strong, no release was ever
    /// published, no thread of the block knows anything beyond barriers, and the warp never
    /// synchronised part of its lanes: no ordering check needs more than the clocks.
    #[inline(always)]
    fn warp_accesses_as<const SIMPLE: bool>(
        &mut self,
        a: &RawAccess,
        lanes: impl Iterator<Item = (u32, u64)>,
    ) {
        let (block, warp) = (a.block, a.warp);
        let shape = self.shape(block);
        let preds = stream_preds(&self.shapes, &self.preds, block);
        let RaceState {
            blocks,
            global,
            sync,
            pending,
            found,
            ..
        } = &mut self.race;
        let Some(Some(b)) = blocks.get_mut(block as usize) else {
            return;
        };
        let b = &mut **b;
        let nw = shape.grid.warps_per_block as usize;
        let w = warp as usize;
        if w >= nw {
            return;
        }
        let (clock, wi) = (b.vc[w * nw + w], b.wi[w]);
        let BlockSync {
            vc,
            full,
            joint,
            threads,
            shared,
            shared_bytes,
            knows,
            ..
        } = b;
        // What orders earlier accesses before this warp's: the same for all its lanes.
        let view = WarpView {
            shape: &shape,
            tpb: shape.grid.threads_per_block,
            ws: shape.grid.warp_size,
            first_thread: block * shape.stride,
            first_lane: warp * shape.grid.warp_size,
            warp,
            preds,
            vc: &vc[w * nw..(w + 1) * nw],
            full: full[w],
            joint: joint[w].as_deref(),
        };
        let write = a.op != AccessOp::Read;
        let strong = a.class.strong;
        let mut flags = (a.class.scope << 2) | if strong { STRONG } else { 0 };
        if a.op == AccessOp::Atomic {
            flags |= RMW;
        }
        let size = a.size.max(1) as u64;
        for (lane, address) in lanes {
            let tid = (warp * shape.grid.warp_size + lane) as usize;
            if tid >= threads.len() {
                continue;
            }
            let g = view.first_thread + tid as u32;
            let unchanged = if write && a.unchanged >> lane & 1 == 1 {
                UNCHANGED
            } else {
                0
            };
            let cur_base = Acc {
                thread: g + 1,
                clock,
                wi,
                pc: a.pc,
                flags: flags | unchanged,
                size: a.size.min(255) as u8,
                off: 0,
            };
            let ctx = Ctx {
                warp: &view,
                lane,
                // Only threads of a block that `knows` have knowledge (and the thread's entry
                // is another cache line per lane: not read otherwise).
                knowledge: if *knows {
                    threads[tid].knowledge.as_deref()
                } else {
                    None
                },
            };
            let first_word = address >> 2;
            let cells = Cells {
                space: a.space,
                shared: &mut shared[..],
                shared_bytes: &mut *shared_bytes,
                global: &mut *global,
            };
            let lane_access = LaneAccess {
                address,
                size,
                cur: cur_base,
                write,
            };
            lane_words::<SIMPLE>(cells, lane_access, &ctx, found, pending);
            // Synchronisation through this location (strong accesses only); only the first
            // word of an access names it (accesses are aligned).
            if strong || !sync.is_empty() {
                let space_key = if a.space == MemSpace::Shared {
                    block
                } else {
                    u32::MAX
                };
                let key = (a.space as u8, space_key, first_word);
                let thread = ThreadRef {
                    sync: &mut threads[tid],
                    knows: &mut *knows,
                    g,
                    wi,
                    preds,
                };
                sync_access(
                    sync,
                    key,
                    &RawAccess {
                        lane,
                        address,
                        ..*a
                    },
                    thread,
                    view.vc,
                );
            }
        }
    }
}

/// The global thread ranges of the grids ordered before global block `block`'s by stream order
/// (none for a one-kernel launch): `preds` per grid of `shapes`.
#[inline(always)]
pub(super) fn stream_preds<'a>(
    shapes: &[Shape],
    preds: &'a [Box<[(u32, u32)]>],
    block: u32,
) -> &'a [(u32, u32)] {
    if shapes.len() == 1 {
        &[][..]
    } else {
        // (Only for programs of several launches: a lookup per warp step.)
        let i = shapes
            .partition_point(|s| s.first_block <= block)
            .saturating_sub(1);
        &preds[i][..]
    }
}

/// Where the words of an access live: the block's shared cells or the global ones.
struct Cells<'a> {
    space: MemSpace,
    shared: &'a mut [Cell],
    shared_bytes: &'a mut Bytes,
    global: &'a mut Paged,
}

/// One lane's access: its address, its size in bytes, the access as the cells record it (the
/// offset in the word is set per word) and whether it writes.
#[derive(Clone, Copy)]
struct LaneAccess {
    address: u64,
    size: u64,
    cur: Acc,
    write: bool,
}

/// The words one lane's access touches, each checked against (and entered into) its cell; the
/// races found go to `pending`.
#[inline(always)]
fn lane_words<const SIMPLE: bool>(
    cells: Cells<'_>,
    acc: LaneAccess,
    ctx: &Ctx,
    found: &mut Found,
    pending: &mut Vec<RawRace>,
) {
    let LaneAccess {
        address,
        size,
        cur: cur_base,
        write,
    } = acc;
    let Cells {
        space,
        shared,
        shared_bytes,
        global,
    } = cells;
    let first_word = address >> 2;
    let end_word = ((address + size - 1) >> 2) + 1;
    // (`..=` iterates measurably slower on this path.)
    for word in first_word..end_word {
        // The bytes of the word the access touches (all four for aligned words).
        let mask = if address & 3 == 0 && word < first_word + size / 4 {
            0xF
        } else {
            let lo = (word << 2).max(address);
            let hi = ((word << 2) + 4).min(address + size);
            (((1u32 << (hi - lo)) - 1) << (lo & 3)) as u8
        };
        let cur = Acc {
            off: (address as i64 - (word << 2) as i64) as i8,
            ..cur_base
        };
        let (cell, bytes) = if space == MemSpace::Shared {
            match shared.get_mut(word as usize) {
                Some(c) => (c, &mut *shared_bytes),
                None => continue,
            }
        } else {
            global.cell(word)
        };
        word_access::<SIMPLE>(cell, bytes, mask, &cur, write, ctx, found);
        if !found.0.is_empty() {
            for (prev, prev_write) in found.0.drain(..) {
                pending.push(RawRace {
                    prev,
                    prev_write,
                    cur,
                    cur_write: write,
                    space,
                    word,
                });
            }
        }
    }
}

/// The accessing warp's view, for ordering checks (built once per warp step; the launch's shape
/// copied in, so that the per-lane checks read nothing else).
struct WarpView<'a> {
    shape: &'a Shape,
    tpb: u32,
    ws: u32,
    /// The global id of the block's first thread (`block * stride`).
    first_thread: u32,
    /// The block-relative id of the warp's first thread (`warp * warp size`).
    first_lane: u32,
    warp: u32,
    /// The warp's row of its block's clock matrix.
    vc: &'a [u32],
    full: u32,
    joint: Option<&'a [u32]>,
    /// The global thread ranges of the grids ordered before the accessing one (the earlier
    /// launches of its stream); empty for a one-kernel launch.
    preds: &'a [(u32, u32)],
}

/// The accessing thread's view: its warp's, its lane, what it knows.
struct Ctx<'a> {
    warp: &'a WarpView<'a>,
    lane: u32,
    knowledge: Option<&'a Knowledge>,
}

/// Whether `prev` happens before the access `ctx` is making.
#[inline(always)]
fn ordered<const SIMPLE: bool>(prev: &Acc, ctx: &Ctx) -> bool {
    let view = ctx.warp;
    // The earlier thread's index in the accessing block (out of range: another block), and in
    // the accessing warp (out of range: another warp).
    let in_block = prev.g().wrapping_sub(view.first_thread);
    if in_block < view.tpb {
        let in_warp = in_block.wrapping_sub(view.first_lane);
        if in_warp < view.ws {
            // Same warp: a barrier since (the warp's own clock moved on) or a warp
            // synchronisation of both lanes at or after the earlier access.
            if prev.clock < view.vc[view.warp as usize] {
                return true;
            }
            let mut j = view.full;
            if !SIMPLE && let Some(m) = view.joint {
                j = j.max(m[(in_warp * view.ws + ctx.lane) as usize]);
            }
            if j > prev.wi {
                return true;
            }
        } else {
            let pwarp = view.shape.warp_lane(in_block).0;
            if view
                .vc
                .get(pwarp as usize)
                .is_some_and(|&c| prev.clock <= c)
            {
                return true;
            }
        }
    }
    // A grid earlier in the accessing grid's stream completed before it started.
    if view
        .preds
        .iter()
        .any(|&(lo, hi)| (lo..hi).contains(&prev.g()))
    {
        return true;
    }
    !SIMPLE
        && ctx.knowledge.is_some_and(|k| {
            let shape = view.shape;
            let g = prev.g();
            k.covers(prev, g / shape.stride, shape.warp_lane(g % shape.stride).0)
        })
}

/// Whether `prev` and `cur` (in one shadow cell, so touching a common byte; one of them a write,
/// checked by the caller) race.
#[inline]
fn conflicts<const SIMPLE: bool>(prev: &Acc, cur: &Acc, ctx: &Ctx) -> bool {
    if prev.thread == cur.thread {
        return false;
    }
    if prev.strong() && cur.strong() {
        let same_block = prev.g().wrapping_sub(ctx.warp.first_thread) < ctx.warp.tpb;
        if same_block || prev.scope().min(cur.scope()) >= SCOPE_GPU {
            return false;
        }
    }
    !ordered::<SIMPLE>(prev, ctx)
}

/// The earlier accesses one access races with in one word, each once (the same access is in
/// several byte cells of a split word): at most one against the last write and one against the
/// reads per cell. Reused across accesses (no allocation, nothing to initialise per access).
#[derive(Default)]
struct Found(Vec<(Acc, bool)>);

impl Found {
    #[inline]
    fn push(&mut self, prev: Acc, write: bool) {
        if !self.0.contains(&(prev, write)) {
            self.0.push((prev, write));
        }
    }
}

/// Checks and records `cur` in a word whose bytes `mask` it touches: the word's cell for a
/// whole-word access to an unsplit word, else the byte cells (splitting the word first).
#[inline(always)]
fn word_access<const SIMPLE: bool>(
    cell: &mut Cell,
    bytes: &mut Bytes,
    mask: u8,
    cur: &Acc,
    write: bool,
    ctx: &Ctx,
    found: &mut Found,
) {
    let i = match cell.split_index() {
        None if mask == 0xF => return cell_access::<SIMPLE>(cell, cur, write, ctx, found),
        None => bytes.split(cell),
        Some(i) => i,
    };
    let byte_cells = bytes.get(i);
    for (k, c) in byte_cells.iter_mut().enumerate() {
        if mask >> k & 1 == 1 {
            cell_access::<SIMPLE>(c, cur, write, ctx, found);
        }
    }
    if write && mask == 0xF {
        bytes.merge(cell);
    }
}

/// Checks `cur` against one cell's accesses and records it there.
#[inline(always)]
fn cell_access<const SIMPLE: bool>(
    cell: &mut Cell,
    cur: &Acc,
    write: bool,
    ctx: &Ctx,
    found: &mut Found,
) {
    if cell.w.present() && conflicts::<SIMPLE>(&cell.w, cur, ctx) {
        found.push(cell.w, true);
    }
    if write {
        for r in [cell.r0, cell.r1] {
            if r.present() && conflicts::<SIMPLE>(&r, cur, ctx) {
                found.push(r, false);
                break;
            }
        }
        cell.w = *cur;
        // Reads before this write were either reported or ordered before it.
        cell.r0 = Acc::default();
        cell.r1 = Acc::default();
    } else if cell.r0.thread == cur.thread {
        cell.r0 = *cur;
    } else if cell.r1.thread == cur.thread {
        cell.r1 = cell.r0;
        cell.r0 = *cur;
    } else if !cell.r0.present() || ordered::<SIMPLE>(&cell.r0, ctx) {
        cell.r0 = *cur;
    } else {
        // Keep two readers of different threads: whatever thread writes next, one of them is
        // another thread.
        cell.r1 = cell.r0;
        cell.r0 = *cur;
    }
}
