//! In-flight ops, their ordering dependencies, the micro-step interpreter (thesis →Op, 4.4.4)
//! and the silent rules (4.6); which of them are enabled is `enabled`, and the operations a
//! statement names (𝔒⟦−⟧, 4.4.3) are `operations`.
//!
//! Ordering rules O1-O4 (computed at issue, per thread; they replace the thesis's priorities,
//! A17/A18; "O" for ordering, apart from the deviations D*):
//! * O1: an op depends on every in-flight op of its thread whose bytes overlap its own (same
//!   space; shared and local memory are per block/thread, so the same thread means the same
//!   memory): per-location program order, PTX coherence. This replaces the thesis's volatile
//!   priorities (A25): `.volatile` is `.relaxed.sys` (PTX ISA >= 6.0), which orders nothing
//!   beyond O1 between different addresses.
//! * O2: a Release/AcqRel/Sc store or atomic, an Sc load (cudasem: stronger than asked, so
//!   safe) and a fence depend on every in-flight op of the thread. Under the per-SM store
//!   stage (deviation D31, module `stage`), a `.cta` one waits for an earlier store of other
//!   bytes only until that store is staged on the SM.
//! * O3: every op depends on the thread's in-flight Acquire/AcqRel/Sc ops and fences (an
//!   acq_rel fence's acquire half included, its release half not).
//! * O4: an `.acq_rel` fence is two ops (`fence_halves`, while a write of the thread is in
//!   flight): the acquire half depends on the thread's in-flight reads (loads, atomics; and
//!   O3), the release half on every in-flight op (O2); later stores, atomics and fences depend
//!   on the release half. So a later load may
//!   overtake an earlier store across an acq_rel fence (PTX ISA 8: release and acquire
//!   patterns order nothing from a write to a later read; only `fence.sc` does), which is the
//!   store-buffering outcome of `SB+acq_rel-cta`.
//!
//! An op runs only once its dependencies ended. When an Acquire/AcqRel/Sc load or atomic ends,
//! or a fence ends, the issuing SM's L1 loses its global lines (doomed-lines flush, A10 repair),
//! so later weak loads of the thread cannot hit a line fetched before the acquire; not at `.cta`
//! scope (see [`flushes_l1_at_end`] and docs/internals/cached-memory.md, "Scopes").
//!
//! On ⊥ the micro step stops where it is (no rollback): the op is stuck for good and the
//! machine reports the error, so the partial state is never explored further.

use super::index::Watch;
use super::l1s::L1s;
use super::line::{Cache, DoomedHint, Flow, Key, L1, WrittenBack};
use super::operations::OpCx;
use super::program::{
    Cond, Fold, MicroSteps, OpName, ProgramId, Stm, cta_scoped, program_for, stretch_ends,
};
use super::{Cached, MemChoice, OpId, Request, RequestKind, StepReport, Stuck};
use crate::{Fingerprinted, Flat, LOCAL_WINDOW, MemOrder, MemSpace, Who};
use smallvec::SmallVec;

/// An in-flight memory op (thesis `MemOp` minus the priority): request, program position and
/// the implicit state σ.
///
/// Laid out in declaration order: first what the enabled set reads of every op it tests
/// again (program position, doomed-line hint, request, dependencies), σ's line buffer last.
/// A full-size kernel has tens of thousands of ops in flight and the ops a step wakes were
/// last touched long before, so each is read from memory: the fewer cache lines that takes
/// the better (the position lay in the op's last line, the request in its first two: issue
/// 15).
#[derive(Debug)]
#[repr(C)]
pub struct Op {
    /// `None`: no program exists for the request (stuck at its first step).
    pub prog: Option<ProgramId>,
    /// Index of the next statement.
    pub pc: u8,
    /// Derived, not state (left out of equality and the state hash): the number of the doomed
    /// L1 line the op pins, set when a flush or an invalidation dooms it (`L1::doomed_mark`),
    /// so that the op's lookups go straight to it (a hint: checked before use, and stale once
    /// the op's read unpins it).
    pub doomed_hint: Option<DoomedHint>,
    pub req: Request,
    /// In-flight ops that must end before this one may step (O1-O3); ids leave the list as
    /// their ops end, so a reused id never inherits an old dependency.
    pub deps: SmallVec<[OpId; 4]>,
    /// σ's loaded value (loads) or old value (atomics, thesis `v_out`).
    pub value: u64,
    /// An atomic's new value (thesis `v_in1` after `atomOp`).
    pub new: u64,
    /// Which bytes of `buf` are valid.
    pub buf_mask: u64,
    /// Line bytes in transit between levels (thesis `v_i/o` of a fill).
    pub buf: [u8; 64],
}

/// Equal ops have equal requests, positions and σ (the hint is derived).
impl PartialEq for Op {
    fn eq(&self, o: &Self) -> bool {
        self.req == o.req
            && self.prog == o.prog
            && self.pc == o.pc
            && self.deps == o.deps
            && self.value == o.value
            && self.new == o.new
            && self.buf == o.buf
            && self.buf_mask == o.buf_mask
    }
}

/// Copies the dependency list as a slice of `Copy` ids (`SmallVec`'s own `clone` goes element
/// by element; explorers copy every in-flight op for every successor state).
impl Clone for Op {
    fn clone(&self) -> Op {
        let Op {
            req,
            prog,
            pc,
            deps,
            value,
            new,
            buf,
            buf_mask,
            doomed_hint,
        } = self;
        Op {
            req: *req,
            prog: *prog,
            pc: *pc,
            deps: SmallVec::from_slice(deps),
            value: *value,
            new: *new,
            buf: *buf,
            buf_mask: *buf_mask,
            doomed_hint: *doomed_hint,
        }
    }
}

/// Local lines are keyed in the local generic window: 18 bits of block, 10 of thread, 28 of
/// address (56 bits, the window size). Accesses beyond these bounds have no key (stuck).
const LOCAL_ADDR_BITS: u32 = 28;
const LOCAL_THREAD_BITS: u32 = 10;
const LOCAL_BLOCK_BITS: u32 = 18;

pub fn local_key(who: Who, addr: u64) -> Option<Key> {
    if addr >> LOCAL_ADDR_BITS != 0
        || who.thread >> LOCAL_THREAD_BITS != 0
        || who.block >> LOCAL_BLOCK_BITS != 0
    {
        return None;
    }
    Some(
        LOCAL_WINDOW
            + ((who.block as u64) << (LOCAL_ADDR_BITS + LOCAL_THREAD_BITS))
            + ((who.thread as u64) << LOCAL_ADDR_BITS)
            + addr,
    )
}

/// Whether a key names a global line.
pub fn is_global(key: Key) -> bool {
    key < LOCAL_WINDOW
}

/// The space, thread (local lines) and in-space address of a key.
pub fn decode_key(key: Key) -> (MemSpace, Option<Who>, u64) {
    if is_global(key) {
        return (MemSpace::Global, None, key);
    }
    let off = key - LOCAL_WINDOW;
    let who = Who {
        block: (off >> (LOCAL_ADDR_BITS + LOCAL_THREAD_BITS)) as u32,
        thread: ((off >> LOCAL_ADDR_BITS) & ((1 << LOCAL_THREAD_BITS) - 1)) as u32,
    };
    (
        MemSpace::Local,
        Some(who),
        off & ((1 << LOCAL_ADDR_BITS) - 1),
    )
}

pub(super) fn size_mask(size: u32) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (size * 8)) - 1
    }
}

pub(super) fn acquires(req: &Request) -> bool {
    match req.kind {
        // The release half of an acq_rel fence acquires nothing.
        RequestKind::Fence => req.order != MemOrder::Release,
        _ => matches!(
            req.order,
            MemOrder::Acquire | MemOrder::AcqRel | MemOrder::Sc
        ),
    }
}

/// Whether the request reads memory (a load or an atomic).
fn reads(req: &Request) -> bool {
    matches!(
        req.kind,
        RequestKind::Load { .. } | RequestKind::Atomic { .. }
    )
}

/// Whether the request writes memory or orders later writes (a store, an atomic, a fence).
fn writes_or_fences(req: &Request) -> bool {
    !matches!(req.kind, RequestKind::Load { .. })
}

/// The release half of an acq_rel fence (O4).
fn release_half(req: &Request) -> bool {
    matches!(req.kind, RequestKind::Fence) && req.order == MemOrder::Release
}

/// The acquire half of an acq_rel fence (O4).
fn acquire_half(req: &Request) -> bool {
    matches!(req.kind, RequestKind::Fence) && req.order == MemOrder::Acquire
}

/// Whether the op's end flushes its SM's L1 (the acquire half of an acquiring load or atomic).
/// Not for `.cta` scope: the observers it must order are threads of its own CTA, which share
/// the SM's L1, and that L1 never holds a value of an address older than one a thread of the
/// SM wrote (`invalidateL1` ends every store and atomic) or observed with a strong access
/// (`invalidateL1` in [`ProgramId::LoadStrong`] and atomics). Fences flush in their program
/// ([`ProgramId::Fence`] / [`ProgramId::FenceCta`]).
pub(super) fn flushes_l1_at_end(req: &Request) -> bool {
    matches!(
        req.kind,
        RequestKind::Load { .. } | RequestKind::Atomic { .. }
    ) && acquires(req)
        && !cta_scoped(req)
}

fn orders_all_earlier(req: &Request) -> bool {
    match req.kind {
        RequestKind::Fence => !acquire_half(req),
        RequestKind::Store { .. } | RequestKind::Atomic { .. } => {
            matches!(
                req.order,
                MemOrder::Release | MemOrder::AcqRel | MemOrder::Sc
            )
        }
        RequestKind::Load { .. } => req.order == MemOrder::Sc,
    }
}

pub(super) fn overlaps(a: &Request, b: &Request) -> bool {
    let is_access = |r: &Request| !matches!(r.kind, RequestKind::Fence);
    is_access(a)
        && is_access(b)
        && a.space == b.space
        && a.addr < b.addr.saturating_add(b.size as u64)
        && b.addr < a.addr.saturating_add(a.size as u64)
}

/// Where an op's access lands: its line key, byte offset in the line and byte mask.
#[derive(Debug, Clone, Copy)]
pub(super) struct Geometry {
    pub(super) key: Key,
    pub(super) off: usize,
    pub(super) mask: u64,
}

pub(super) fn stuck(op: Option<OpId>, message: impl Into<String>) -> Stuck {
    Stuck {
        op,
        message: message.into(),
    }
}

impl Cached {
    /// The mask of a whole line.
    pub(super) fn full_mask(&self) -> u64 {
        if self.line_bytes >= 64 {
            u64::MAX
        } else {
            (1u64 << self.line_bytes) - 1
        }
    }

    pub(super) fn l1_capacity(&self) -> usize {
        self.config.l1_lines as usize
    }

    pub(super) fn l2_capacity(&self) -> usize {
        self.config.l2_lines as usize
    }

    /// Where the access of op `id` lands; ⊥ for an access no line holds (misaligned, or
    /// outside the spaces and key ranges the caches hold).
    #[inline]
    pub(super) fn geometry(&self, id: OpId, req: &Request) -> Result<Geometry, Stuck> {
        // The common case inline (an aligned global access: the enabled set and every micro
        // step ask this), everything else in `geometry_of_any`. Sizes are powers of two: a
        // mask tests alignment (no division).
        let size = req.size;
        if matches!(size, 1 | 2 | 4 | 8)
            && req.addr & (size as u64 - 1) == 0
            && req.space == MemSpace::Global
            && is_global(req.addr)
        {
            let base = req.addr & !(self.line_bytes - 1);
            let off = (req.addr - base) as usize;
            return Ok(Geometry {
                key: base,
                off,
                mask: ((1u64 << size) - 1) << off,
            });
        }
        self.geometry_of_any(id, req)
    }

    /// [`Cached::geometry`] for any access (local ones, and the errors).
    #[inline(never)]
    fn geometry_of_any(&self, id: OpId, req: &Request) -> Result<Geometry, Stuck> {
        if !matches!(req.size, 1 | 2 | 4 | 8) || req.addr & (req.size as u64 - 1) != 0 {
            return Err(stuck(
                Some(id),
                format!(
                    "access of {} bytes at {:#x} is not naturally aligned (1, 2, 4 or 8 bytes)",
                    req.size, req.addr
                ),
            ));
        }
        let base = req.addr & !(self.line_bytes - 1);
        let key = match req.space {
            MemSpace::Global if is_global(req.addr) => base,
            MemSpace::Local => local_key(req.who, base).ok_or_else(|| {
                stuck(
                    Some(id),
                    format!(
                        "local address {:#x} is beyond the cached model's local key space",
                        req.addr
                    ),
                )
            })?,
            _ => {
                return Err(stuck(
                    Some(id),
                    format!("no cache line for {:?} address {:#x}", req.space, req.addr),
                ));
            }
        };
        let off = (req.addr - base) as usize;
        Ok(Geometry {
            key,
            off,
            mask: ((1u64 << req.size) - 1) << off,
        })
    }

    /// SM `sm`'s L1; an SM that does not exist is ⊥.
    pub(super) fn l1_of(&self, id: OpId, sm: u32) -> Result<&L1, Stuck> {
        self.l1
            .get(sm)
            .ok_or_else(|| no_such_sm(id, sm, self.l1.count()))
    }

    /// Thesis `banks(pAddr, size)`: successive 32-bit words in successive banks.
    pub(super) fn banks(&self, req: &Request) -> SmallVec<[u32; 2]> {
        let n = self.config.shared_banks.max(1) as u64;
        let first = req.addr / 4;
        let last = (req.addr + req.size.max(1) as u64 - 1) / 4;
        let mut out = SmallVec::new();
        for w in first..=last {
            let b = (w % n) as u32;
            if !out.contains(&b) {
                out.push(b);
            }
        }
        out
    }

    // ---- issue ----------------------------------------------------------------------------

    /// An `.acq_rel` fence as its acquire half (order `Acquire`) and its release half (order
    /// `Release`), O4; any other request as itself. Split only while the thread has a write
    /// (or an earlier release half) in flight: otherwise both halves would wait for the same
    /// ops and order the same later ones, and one op (the fence as issued) does the same
    /// with fewer interleavings.
    pub(super) fn fence_halves(&self, req: Request) -> (Request, Option<Request>) {
        let split = matches!(req.kind, RequestKind::Fence)
            && req.order == MemOrder::AcqRel
            && self.index.of_thread(req.who).iter().any(|&j| {
                self.ops
                    .get(j as usize)
                    .and_then(Option::as_ref)
                    .is_some_and(|o| writes_or_fences(&o.req) && !acquire_half(&o.req))
            });
        if split {
            let half = |order| Request { order, ..req };
            (half(MemOrder::Acquire), Some(half(MemOrder::Release)))
        } else {
            (req, None)
        }
    }

    /// The in-flight ops a new op of `req` must wait for (ordering rules O1-O3): only the
    /// thread's own ops, in id order.
    pub(super) fn dependencies(&self, req: &Request) -> impl Iterator<Item = OpId> + '_ {
        let req = *req;
        let all = orders_all_earlier(&req);
        self.index
            .of_thread(req.who)
            .iter()
            .copied()
            .filter(move |&j| {
                self.ops
                    .get(j as usize)
                    .and_then(Option::as_ref)
                    .is_some_and(|o| {
                        // A `.cta` release orders a staged store of its thread already
                        // (deviation D31, module `stage`).
                        (all && !self.cta_release_skips(&req, o))
                            || acquires(&o.req)
                            || overlaps(&o.req, &req)
                            || (release_half(&o.req) && writes_or_fences(&req))
                            || (acquire_half(&req) && reads(&o.req))
                    })
            })
    }

    pub(super) fn issue_op(&mut self, req: Request) -> OpId {
        let deps = self.dependencies(&req).collect();
        let op = Op {
            req,
            prog: program_for(&req),
            pc: 0,
            deps,
            value: 0,
            new: 0,
            buf: [0; 64],
            buf_mask: 0,
            doomed_hint: None,
        };
        let op = Fingerprinted::new(op);
        let id = match self.index.free.first() {
            Some(i) => i,
            None => {
                self.ops.push(None);
                (self.ops.len() - 1) as OpId
            }
        };
        self.index.add(id, &op);
        self.ops[id as usize] = Some(op);
        self.recheck.push(id);
        id
    }

    /// Debug builds check the incremental op indexes against a from-scratch computation after
    /// every change (tests run in a profile with debug assertions), and that every ready op
    /// is registered under what its enabledness depends on.
    #[inline]
    pub(super) fn check_index(&self) {
        #[cfg(debug_assertions)]
        if self.ops.len() <= 64 {
            debug_assert!(
                self.index
                    .matches(&super::index::OpIndex::rebuilt(&self.ops)),
                "the op indexes drifted from the op list"
            );
            let hint_of = |p: OpId| {
                self.ops
                    .get(p as usize)
                    .and_then(Option::as_ref)
                    .and_then(|o| o.doomed_hint)
                    .map(|h| h.seq)
            };
            debug_assert!(
                self.l1.in_use().all(|(_, c)| c.doomed_consistent(hint_of)),
                "a pinner of a doomed line does not know its number"
            );
            debug_assert!(
                self.stage_consistent(),
                "the SM stage drifted from the op list"
            );
            for i in self.index.ready.iter() {
                let o = self.ops[i as usize]
                    .as_ref()
                    .expect("a ready op is in flight");
                debug_assert_eq!(
                    self.index.watched_under(i),
                    self.watch_of(i, o),
                    "op {i} is watched under the wrong resource"
                );
            }
        }
    }

    /// Whether the L1 may take a dirty victim to make room: its dirty bytes (local data) go
    /// to L2 at once, so L2 must not have to defer that write (cudasem: making room is no
    /// silent action, issue "false deadlock"; the thesis leaves a full cache of dirty lines
    /// to the silent write-backs).
    pub(super) fn l1_dirty_ok(&self, l1: &L1) -> bool {
        l1.live
            .victim()
            .is_some_and(|k| l1.live.has_clean_victim() || self.wb_l1_possible(k))
    }

    /// Writes an L1 victim's dirty bytes to L2 (making room there, which may write an L2
    /// victim back to DRAM). Only called when [`Cached::l1_dirty_ok`] said L2 takes it.
    pub(super) fn write_back_to_l2(&mut self, wb: Option<WrittenBack>, dram: &mut Flat) {
        let Some(wb) = wb else { return };
        let cap = self.l2_capacity();
        let (_, l2_wb) = self
            .l2
            .write(wb.key, &wb.line.data, wb.line.dirty, cap, true);
        if let Some(l2_wb) = l2_wb {
            write_back_to_dram(dram, l2_wb);
        }
    }

    pub(super) fn wb_l1_possible(&self, key: Key) -> bool {
        !self.l2.would_defer_alloc(key, self.l2_capacity(), true)
    }

    // ---- step -----------------------------------------------------------------------------

    pub(super) fn step_choice(
        &mut self,
        choice: MemChoice,
        dram: &mut Flat,
    ) -> Result<StepReport, Stuck> {
        let mut report = StepReport::default();
        match choice {
            MemChoice::Step { op } => {
                // The enabled list is exact (debug builds compare it with a scan after every
                // mutation): in flight, dependencies ended, and no pure retry.
                if !self.enabled.contains(&choice) {
                    return Err(stuck(
                        Some(op),
                        format!(
                            "memory op {op} is not enabled (absent, waiting for earlier ops, or only retrying)"
                        ),
                    ));
                }
                // Only where the op's access goes: a shared-memory op also wakes the ops
                // waiting for its block's bank locks.
                let shared_block = self.ops[op as usize]
                    .as_ref()
                    .filter(|o| o.req.space == MemSpace::Shared)
                    .map(|o| o.req.who.block);
                let result = self.micro_step(op, dram, &mut report);
                // The op's next statement (or its end), and, for a shared-memory op, the ops
                // waiting for its block's bank locks, which no cache journals. Line changes
                // are journaled by the caches (doomed lines' fills included) and the room by
                // `after_mutation`.
                self.recheck.push(op);
                if let Some(block) = shared_block {
                    let mut ids = std::mem::take(&mut self.recheck);
                    self.index.watchers_of(Watch::Lock(block), &mut ids);
                    self.recheck = ids;
                }
                result?;
            }
            silent => {
                if !self.enabled.contains(&silent) {
                    return Err(stuck(None, format!("{silent} is not enabled")));
                }
                self.silent(silent, dram, &mut report);
            }
        }
        Ok(report)
    }

    fn silent(&mut self, choice: MemChoice, dram: &mut Flat, report: &mut StepReport) {
        match choice {
            MemChoice::Step { .. } => {}
            MemChoice::EvictL1 { sm, line } => {
                report.operations.push("evict_L1");
                if let Some(c) = self.l1.get_mut(sm) {
                    c.live.remove(line);
                }
            }
            MemChoice::EvictL2 { line } => {
                report.operations.push("evict_L2");
                self.l2.remove(line);
            }
            MemChoice::Flush { sm } => {
                report.operations.push("flush");
                self.flush(sm);
            }
            MemChoice::WriteBackL1 { sm, line } => {
                // wb_L1 (A4): only when the L2 write succeeds at once (A27); writes the dirty
                // bytes only (A8 refinement) and leaves the L1 line valid and clean.
                report.operations.push("wb_L1");
                let cap = self.l2_capacity();
                let Some((data, dirty)) = self
                    .l1
                    .get(sm)
                    .and_then(|c| c.live.get(line))
                    .map(|l| (l.data, l.dirty))
                else {
                    return;
                };
                let (flow, wb) = self.l2.write(line, &data, dirty, cap, true);
                if let Some(wb) = wb {
                    write_back_to_dram(dram, wb);
                }
                if flow == Flow::Continue
                    && let Some(c) = self.l1.get_mut(sm)
                {
                    c.live.with_line(line, |l| l.dirty = 0);
                }
            }
            MemChoice::WriteBackL2 { line } => {
                // wb_L2 (A5): DRAM gets the dirty bytes only (A8: a full-line write would
                // clobber bytes nobody wrote).
                report.operations.push("wb_L2");
                let Some(l) = self.l2.get(line) else {
                    return;
                };
                write_back_to_dram(
                    dram,
                    WrittenBack {
                        key: line,
                        line: l.clone(),
                    },
                );
                self.l2.with_line(line, |l| l.dirty = 0);
            }
        }
    }

    pub(super) fn flush(&mut self, sm: u32) {
        // An empty L1 has nothing to flush: leave the shared L1s uncopied.
        if self.l1.get(sm).is_some_and(|c| !c.live.is_empty())
            && let Some(c) = self.l1.get_mut(sm)
        {
            // The lines that left are journaled: the ops watching them are tested again.
            let from = c.doomed_mark();
            c.flush(is_global);
            self.hint_doomed(sm, from);
        }
    }

    /// Tells the pinners of SM `sm`'s doomed lines numbered `from` (an `L1::doomed_mark`)
    /// or later which line they pin (`Op::doomed_hint`).
    pub(super) fn hint_doomed(&mut self, sm: u32, from: u64) {
        let Cached {
            l1,
            ops,
            stepping,
            deferred_hints,
            ..
        } = self;
        let Some(c) = l1.get(sm) else { return };
        for (hint, line) in c.doomed_from(from) {
            for &p in &line.pins {
                if *stepping {
                    // The op list is out of its place during a micro step: the hints are
                    // given once it is back.
                    deferred_hints.push((p, hint));
                } else if let Some(Some(o)) = ops.get_mut(p as usize) {
                    o.doomed_hint = Some(hint);
                }
            }
        }
    }

    /// What the enabledness of an op depends on besides the op (by its next statement, as
    /// [`Cached::blocked`] tests it); `None`: its next step never defers. (Only the debug
    /// check of the indexes asks it alone.)
    #[cfg(debug_assertions)]
    pub(super) fn watch_of(&self, id: OpId, op: &Op) -> Option<Watch> {
        if self.waits_for_stage(op) {
            return Some(Watch::Stage(op.req.sm));
        }
        let name = next_op(op)?;
        let g = self.geometry(id, &op.req).ok();
        watch_for(op, name, g)
    }

    /// [`Cached::watch_of`] and [`Cached::blocked`] together, with the next statement and the
    /// access located once (the enabled set asks both of every op it tests again).
    pub(super) fn watch_and_blocked(&self, id: OpId, op: &Op) -> (Option<Watch>, bool) {
        if self.waits_for_stage(op) {
            return (Some(Watch::Stage(op.req.sm)), self.blocked(id, op));
        }
        let Some(name) = next_op(op) else {
            return (None, false);
        };
        if name == OpName::Lock {
            return (watch_for(op, name, None), self.lock_blocked(op));
        }
        if !name.can_defer() {
            return (None, false);
        }
        let g = self.geometry(id, &op.req).ok();
        let blocked =
            g.is_some_and(|g| self.blocked_at(id, op, name, g)) || self.stage_blocks(id, op);
        (watch_for(op, name, g), blocked)
    }

    /// One micro step of op `id` (thesis (step)/(end)): statements up to the next `yield`,
    /// deferral or `end`.
    fn micro_step(
        &mut self,
        id: OpId,
        dram: &mut Flat,
        report: &mut StepReport,
    ) -> Result<(), Stuck> {
        // The op runs in its slot: the op list leaves the state for the micro step (a move of
        // the list, not of the op; copying every stepping op out and back was a visible share
        // of a step at full size, issue 15). Nothing in a micro step reads other ops but the
        // doomed-line hints, which wait in `deferred_hints` until the list is back.
        let mut ops = std::mem::take(&mut self.ops);
        let Some(op) = ops.get_mut(id as usize).and_then(Option::as_mut) else {
            self.ops = ops;
            return Err(stuck(Some(id), "no such memory op"));
        };
        // What the per-SM store stage needs to know of the step (deviation D31), when it is on.
        let before = self.stage_on().then(|| (op.req, op.prog, op.pc));
        self.stepping = true;
        let result = self.run(id, op, dram, report);
        self.stepping = false;
        let pc_after = op.pc;
        self.ops = ops;
        for (p, hint) in std::mem::take(&mut self.deferred_hints) {
            if let Some(Some(o)) = self.ops.get_mut(p as usize) {
                o.doomed_hint = Some(hint);
            }
        }
        if let (Ok(ended), Some((req, prog, pc_before))) = (&result, before) {
            self.stage_after_step(id, (req, prog), (pc_before, pc_after), *ended);
        }
        if let Ok(true) = result
            && let Some(op) = self.ops[id as usize].take()
        {
            self.end(id, op.into_inner(), report);
        }
        result.map(|_| ())
    }

    /// Runs statements; `Ok(true)` when the op reached `end`.
    fn run(
        &mut self,
        id: OpId,
        op: &mut Op,
        dram: &mut Flat,
        report: &mut StepReport,
    ) -> Result<bool, Stuck> {
        let Some(prog) = op.prog else {
            return Err(stuck(
                Some(id),
                format!(
                    "no memory program for {:?} on {:?}",
                    op.req.kind, op.req.space
                ),
            ));
        };
        let stms = prog.program().stms;
        // What every operation of the step knows (the op's id, request, line and doomed-line
        // hint), gathered once per micro step rather than once per operation: the access is
        // located here once. Shared programs and fences have no cache line; a malformed
        // access is ⊥ at the first statement that needs its line, as before.
        let (line, line_err) =
            if op.req.space == MemSpace::Shared || matches!(op.req.kind, RequestKind::Fence) {
                (None, None)
            } else {
                match self.geometry(id, &op.req) {
                    Ok(g) => (Some(g), None),
                    Err(e) => (None, Some(e)),
                }
            };
        let mut cx = OpCx {
            id,
            req: op.req,
            line,
            name: OpName::ReleaseRegs,
            hint: op.doomed_hint,
        };
        loop {
            let Some(stm) = stms.get(op.pc as usize).copied() else {
                return Err(stuck(Some(id), "memory program ran past its end"));
            };
            match stm {
                Stm::Yield => {
                    op.pc += 1;
                    return Ok(false);
                }
                Stm::Fold(fold) => {
                    op.pc += 1;
                    if !self.folds(&op.req, stms, op.pc as usize - 1, fold) {
                        return Ok(false);
                    }
                }
                Stm::End => return Ok(true),
                Stm::IfNot(cond, skip) => {
                    let g = match (line, &line_err) {
                        (Some(g), _) => g,
                        (None, Some(e)) => return Err(e.clone()),
                        (None, None) => self.geometry(id, &op.req)?,
                    };
                    op.pc = if self.cond(id, op, cond, g)? {
                        skip
                    } else {
                        op.pc + 1
                    };
                }
                Stm::Op(name) => {
                    report.operations.push(name.name());
                    if let Some(e) = &line_err {
                        return Err(e.clone());
                    }
                    cx.name = name;
                    match self.exec(&cx, op, dram, report)? {
                        Flow::Continue => op.pc += 1,
                        Flow::Defer => return Ok(false),
                    }
                }
            }
        }
    }

    /// Whether the folded yield `fold` at statement `at` of `stms` (an op with request `req`)
    /// lets the micro step go on (see [`Fold`]): never under [`MicroSteps::Thesis`]; a left
    /// mover whose stretch ends the op not when that end flushes the SM's L1.
    pub(super) fn folds(&self, req: &Request, stms: &[Stm], at: usize, fold: Fold) -> bool {
        self.config.micro_steps == MicroSteps::Folded
            && match fold {
                Fold::RightMover => true,
                Fold::LeftMover => !(flushes_l1_at_end(req) && stretch_ends(stms, at)),
            }
    }

    /// Thesis (end): the op leaves; ops waiting for it lose the dependency; an acquiring op
    /// flushes its SM's L1 (module documentation).
    fn end(&mut self, id: OpId, op: Op, report: &mut StepReport) {
        // Only ops of the same thread can wait for it (O1-O3); only those that did change (and
        // lose their memoized fingerprint).
        let mut thread: SmallVec<[OpId; 8]> = SmallVec::new();
        self.index.remove(id, &op, &self.ops, &mut thread);
        for j in thread {
            if let Some(o) = self.ops.get_mut(j as usize).and_then(Option::as_mut)
                && o.deps.contains(&id)
            {
                o.deps.retain(|d| *d != id);
                if o.deps.is_empty() {
                    self.index.make_ready(j);
                    self.recheck.push(j);
                }
            }
        }
        if flushes_l1_at_end(&op.req) {
            report.operations.push("flushL1");
            self.flush(op.req.sm);
        }
        report.ended = Some((id, op.req.who));
        // Trailing empty slots go, so the slot vector of equal states is equal.
        self.index.free.insert(id);
        while matches!(self.ops.last(), Some(None)) {
            self.ops.pop();
        }
        self.index.truncate(self.ops.len());
    }

    fn cond(&self, id: OpId, op: &Op, cond: Cond, g: Geometry) -> Result<bool, Stuck> {
        Ok(match cond {
            // Doomed lines are invisible to lookups (A10 repair).
            Cond::IsCachedL1 => {
                let l1 = self.l1_of(id, op.req.sm)?;
                l1.live.get(g.key).is_some_and(|l| l.holds(g.mask))
            }
            Cond::IsCachedL2 => {
                let mask = self.l2_mask(op, g);
                self.l2.get(g.key).is_some_and(|l| l.holds(mask))
            }
        })
    }
}

fn no_such_sm(id: OpId, sm: u32, count: u32) -> Stuck {
    stuck(
        Some(id),
        format!("sm {sm} does not exist ({count} SMs configured)"),
    )
}

/// The operation an op's next statement names, if it names one (not a `yield`, a branch or
/// the end).
pub(super) fn next_op(op: &Op) -> Option<OpName> {
    match op.prog?.program().stms.get(op.pc as usize).copied() {
        Some(Stm::Op(name)) => Some(name),
        _ => None,
    }
}

/// What the enabledness of an op whose next operation is `name` depends on, given where its
/// access lands (`g`; `None`: it has no line, and only the room watches need none).
fn watch_for(op: &Op, name: OpName, g: Option<Geometry>) -> Option<Watch> {
    let sm = op.req.sm;
    let key = || g.map(|g| g.key);
    Some(match name {
        OpName::Lock => Watch::Lock(op.req.who.block),
        OpName::ReserveL1 | OpName::WriteL1 => Watch::L1Room(sm),
        OpName::ReserveL2 | OpName::WriteL2 => Watch::L2Room,
        OpName::EvictL1 | OpName::DiscardL1 => Watch::L1Line(sm, key()?),
        OpName::ReadL1 => Watch::L1Fill(sm, key()?),
        OpName::ReadL2 => Watch::L2Fill(key()?),
        _ => return None,
    })
}

/// SM `sm`'s L1 for writing; an SM that does not exist is ⊥.
pub(super) fn l1_mut(l1: &mut L1s, id: OpId, sm: u32) -> Result<&mut L1, Stuck> {
    let count = l1.count();
    l1.get_mut(sm).ok_or_else(|| no_such_sm(id, sm, count))
}

/// Writes a line's dirty bytes to DRAM (wb_L2; A8: a full-line write would clobber bytes nobody
/// wrote).
pub(super) fn write_back_to_dram(dram: &mut Flat, wb: WrittenBack) {
    // Dirty bytes lie within the line (dirty ⊆ valid), so the mask bounds the write.
    let l = &wb.line;
    match decode_key(wb.key) {
        (MemSpace::Local, Some(who), addr) => dram.write_local_masked(who, addr, &l.data, l.dirty),
        (_, _, addr) => dram.write_global_masked(addr, &l.data, l.dirty),
    }
}

pub(super) fn new_l2() -> Cache {
    Cache::new()
}
