//! The per-SM store stage (deviation D31; docs/internals/cached-memory.md, "Scopes", "The SM
//! stage"): what lets a `.cta` release order its thread's earlier stores for the threads of
//! its CTA without waiting for them to reach L2, so that another CTA (another SM) may see the
//! release before those stores (`Manual/MP-cta`, which the PTX model allows).
//! (PTX ISA, "Memory Consistency Model", "Morally strong operations": a release and an acquire
//! synchronize only when each is in the other's scope, so a `.cta` release promises nothing to
//! a thread of another CTA.)
//!
//! A global store (Listing 4.1: `discardL1 | writeL2 classify | invalidateL1 releaseRegs`) is
//! *staged* on its SM from its first micro step to its end: its bytes are an entry of the SM's
//! stage. The stage is derived from the op list (a store of [`ProgramId::StoreGlobal`] or
//! [`ProgramId::StoreGlobalCs`] past its first statement), so it adds no state to hash. What
//! it changes, only where the machine turned it on ([`Cached::set_sm_stage`]: the program has
//! a `.cta` release and runs as several CTAs on several SMs) and only under [`MicroSteps::Folded`] (the thesis's micro steps keep
//! Listing 4.1 exactly):
//!
//! * **Loads see it.** A load of the SM that reads L1 (`readL1`) or L2 (`readL2`, the value and
//!   the line it fills into L1) reads the staged bytes over what it finds: the stage shadows a
//!   stale L1 line and L2 for the whole SM until the store ends.
//! * **One entry per byte.** A store or an atomic of the SM does not start while another op's
//!   entry overlaps its bytes: staged stores of one SM to the same bytes reach L2 in the order
//!   they were staged (a thread that read a staged value and then stores cannot have its store
//!   overtaken by the value it read: CoRW), and an atomic is performed at L2 after them.
//! * **`.cta` releases wait for less.** A `.cta` release (store, atomic, fence) waits for its
//!   thread's earlier stores to be *staged* instead of ended (O2 otherwise): from then on every
//!   thread of its SM, hence of its CTA, reads them (or newer values).
//! * **Cumulativity above `.cta`.** A `.gpu`/`.sys` release (store, atomic, fence, the release
//!   half of an acq_rel fence) does not start while its SM's stage holds another thread's entry:
//!   a thread may have read a staged value, or synchronised at `.cta` with a thread whose store
//!   is staged, and what it then releases to other SMs must include that store.
//!
//! Loads never wait for the stage; a staged store needs nothing from anyone to reach its end, so
//! every wait above ends.

use super::engine::{Geometry, Op, overlaps};
use super::index::FastMap;
use super::line::Key;
use super::program::{MicroSteps, ProgramId, cta_scoped};
use super::{Cached, OpId, Request, RequestKind};
use crate::{Fingerprinted, MemOrder, MemSpace, Who};
use smallvec::SmallVec;

/// One staged store: its op, thread, the bytes of its line it writes and their values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Entry {
    pub op: OpId,
    pub who: Who,
    /// Bit `i`: byte `i` of the line.
    pub mask: u64,
    pub off: u32,
    pub size: u32,
    pub value: u64,
}

impl Entry {
    /// The entry of op `op`, a global store of request `req` landing at `g`.
    fn of(op: OpId, req: &Request, g: Geometry) -> Entry {
        Entry {
            op,
            who: req.who,
            mask: g.mask,
            off: g.off as u32,
            size: req.size,
            value: match req.kind {
                RequestKind::Store { value, .. } => value,
                _ => 0,
            },
        }
    }
}

/// The staged stores of every SM by (SM, line) (derived from the op list: not compared, not
/// hashed). At most one entry holds a byte (module documentation), so the order of a line's
/// entries means nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Stage {
    entries: FastMap<(u32, Key), SmallVec<[Entry; 2]>>,
    /// Entries per SM.
    per_sm: FastMap<u32, u32>,
    /// Entries per (SM, thread): with `per_sm`, whether an SM holds another thread's entry
    /// without walking the entries.
    per_thread: FastMap<(u32, Who), u32>,
}

impl Stage {
    fn insert(&mut self, sm: u32, key: Key, e: Entry) {
        self.entries.entry((sm, key)).or_default().push(e);
        *self.per_sm.entry(sm).or_default() += 1;
        *self.per_thread.entry((sm, e.who)).or_default() += 1;
    }

    /// Takes op `op`'s entry (an op has at most one) off SM `sm`'s line `key`.
    fn remove(&mut self, sm: u32, key: Key, op: OpId) {
        let Some(v) = self.entries.get_mut(&(sm, key)) else {
            return;
        };
        let Some(at) = v.iter().position(|e| e.op == op) else {
            return;
        };
        let who = v.remove(at).who;
        if v.is_empty() {
            self.entries.remove(&(sm, key));
        }
        decrement(&mut self.per_sm, sm);
        decrement(&mut self.per_thread, (sm, who));
    }

    /// The entries of SM `sm` on line `key`.
    pub(super) fn on_line(&self, sm: u32, key: Key) -> &[Entry] {
        self.entries.get(&(sm, key)).map_or(&[], |v| &v[..])
    }

    /// Whether SM `sm`'s stage holds an entry of a thread other than `who`.
    fn holds_other_than(&self, sm: u32, who: Who) -> bool {
        let all = self.per_sm.get(&sm).copied().unwrap_or(0);
        let own = self.per_thread.get(&(sm, who)).copied().unwrap_or(0);
        all > own
    }

    /// Writes the staged bytes of SM `sm` on line `key` over `data` (a line's bytes).
    pub(super) fn overlay(&self, sm: u32, key: Key, data: &mut [u8; 64]) {
        for e in self.on_line(sm, key) {
            let (off, size) = (e.off as usize, e.size as usize);
            data[off..off + size].copy_from_slice(&e.value.to_le_bytes()[..size]);
        }
    }
}

/// Counts one entry fewer under `k`, forgetting a count that reaches 0 (equal stages have equal
/// maps).
fn decrement<K: Eq + std::hash::Hash>(counts: &mut FastMap<K, u32>, k: K) {
    if let Some(n) = counts.get_mut(&k) {
        *n -= 1;
        if *n == 0 {
            counts.remove(&k);
        }
    }
}

/// Whether `prog` is a global store's program (Listing 4.1), whose ops are staged past their
/// first statement.
fn stages(prog: Option<ProgramId>) -> bool {
    matches!(
        prog,
        Some(ProgramId::StoreGlobal | ProgramId::StoreGlobalCs)
    )
}

/// Whether the request orders every earlier op of its thread as a release does (a release,
/// acq_rel or sc store or atomic; a fence other than an acquire half): O2's requests but the
/// `.sc` load.
fn releases(req: &Request) -> bool {
    match req.kind {
        RequestKind::Fence => req.order != MemOrder::Acquire,
        RequestKind::Store { .. } | RequestKind::Atomic { .. } => matches!(
            req.order,
            MemOrder::Release | MemOrder::AcqRel | MemOrder::Sc
        ),
        RequestKind::Load { .. } => false,
    }
}

impl Cached {
    /// Turns the per-SM store stage on or off (deviation D31; module `stage`). The machine
    /// turns it on for a program with a `.cta` release (`st`/`atom`/`red` `.release`,
    /// `.acq_rel` or `.sc` at `.cta`, or a `.cta` fence) launched as more than one CTA on more
    /// than one SM: otherwise the stage would order nothing less for anyone, and every state
    /// and step stays as before. It acts only under
    /// [`MicroSteps::Folded`]. Call it before the first request is issued.
    pub fn set_sm_stage(&mut self, on: bool) {
        debug_assert!(
            self.ops.is_empty(),
            "the stage is set before any op is issued"
        );
        self.sm_stage = on;
    }

    /// Whether the per-SM store stage acts ([`Cached::set_sm_stage`], folded micro steps).
    pub(super) fn stage_on(&self) -> bool {
        self.sm_stage && self.config.micro_steps == MicroSteps::Folded
    }

    /// Whether op `op` runs a global store's program (staged past its first statement).
    pub(super) fn stages_op(&self, op: &Op) -> bool {
        stages(op.prog) && op.req.space == MemSpace::Global
    }

    /// Whether op `op` is staged: a global store past its first statement, the stage on.
    pub(super) fn is_staged(&self, op: &Op) -> bool {
        self.stage_on() && stages(op.prog) && op.pc > 0
    }

    /// Whether a `.cta` release may take op `o` of its thread as ordered once `o` is staged
    /// (module documentation): `o` is staged and does not overlap the release's bytes (O1
    /// keeps same-bytes order to the end).
    pub(super) fn cta_release_skips(&self, req: &Request, o: &Op) -> bool {
        self.is_staged(o) && self.cta_release_skips_staged(req, &o.req)
    }

    /// [`Cached::cta_release_skips`] for a store `store` known to be staged.
    fn cta_release_skips_staged(&self, req: &Request, store: &Request) -> bool {
        self.stage_on() && releases(req) && cta_scoped(req) && !overlaps(store, req)
    }

    /// Whether the op's next step waits for its SM's stage to hold no other thread's entry: a
    /// release above `.cta` at its first statement (module documentation).
    pub(super) fn waits_for_stage(&self, op: &Op) -> bool {
        self.stage_on() && op.pc == 0 && releases(&op.req) && !cta_scoped(&op.req)
    }

    /// Whether the op's next step is held back by the stage: a release above `.cta` while the
    /// SM's stage holds another thread's entry; a global store or atomic at its first statement
    /// while another op's entry overlaps its bytes.
    pub(super) fn stage_blocks(&self, id: OpId, op: &Op) -> bool {
        if !self.stage_on() || op.pc != 0 {
            return false;
        }
        if self.waits_for_stage(op) && self.stage.holds_other_than(op.req.sm, op.req.who) {
            return true;
        }
        self.access_blocked(id, op)
    }

    /// A global store or atomic at its first statement whose bytes another op's entry holds.
    fn access_blocked(&self, id: OpId, op: &Op) -> bool {
        if op.req.space != MemSpace::Global
            || !matches!(
                op.req.kind,
                RequestKind::Store { .. } | RequestKind::Atomic { .. }
            )
        {
            return false;
        }
        let Ok(g) = self.geometry(id, &op.req) else {
            return false;
        };
        self.stage
            .on_line(op.req.sm, g.key)
            .iter()
            .any(|e| e.op != id && e.mask & g.mask != 0)
    }

    /// After op `id` (request `req`, program `prog`) took a micro step from statement
    /// `pc_before` to `pc_after` (`ended`: it reached its end): enters it into its SM's stage
    /// or takes it out, lets its thread's `.cta` releases stop waiting for it, and has the ops
    /// the change may concern tested again.
    pub(super) fn stage_after_step(
        &mut self,
        id: OpId,
        (req, prog): (Request, Option<ProgramId>),
        (pc_before, pc_after): (u8, u8),
        ended: bool,
    ) {
        if !self.stage_on() || !stages(prog) {
            return;
        }
        let Ok(g) = self.geometry(id, &req) else {
            return;
        };
        let (sm, key) = (req.sm, g.key);
        if ended {
            if pc_before > 0 {
                self.stage.remove(sm, key, id);
                self.stage_changed(sm, key);
            }
            return;
        }
        if pc_before != 0 || pc_after == 0 {
            return;
        }
        self.stage.insert(sm, key, Entry::of(id, &req, g));
        // The thread's `.cta` releases that waited for the store only to be staged.
        let thread: SmallVec<[OpId; 8]> = SmallVec::from_slice(self.index.of_thread(req.who));
        for j in thread {
            let skips = self
                .ops
                .get(j as usize)
                .and_then(Option::as_ref)
                .is_some_and(|o| {
                    o.deps.contains(&id) && self.cta_release_skips_staged(&o.req, &req)
                });
            if skips && let Some(o) = self.ops.get_mut(j as usize).and_then(Option::as_mut) {
                o.deps.retain(|d| *d != id);
                if o.deps.is_empty() {
                    self.index.make_ready(j);
                    self.recheck.push(j);
                }
            }
        }
        self.stage_changed(sm, key);
    }

    /// An entry of SM `sm` on line `key` came or went: the stores and atomics of that line
    /// (watched under the L1 line) and the releases waiting for the SM's stage are tested
    /// again.
    fn stage_changed(&mut self, sm: u32, key: Key) {
        let mut ids = std::mem::take(&mut self.recheck);
        self.index
            .watchers_of(super::index::Watch::L1Line(sm, key), &mut ids);
        self.index
            .watchers_of(super::index::Watch::Stage(sm), &mut ids);
        self.recheck = ids;
    }

    /// The stage computed from the op list (debug builds compare it with the kept one).
    #[cfg(debug_assertions)]
    pub(super) fn stage_rebuilt(&self, ops: &[Option<Fingerprinted<Op>>]) -> Stage {
        let mut s = Stage::default();
        for (i, o) in ops.iter().enumerate() {
            let Some(o) = o else { continue };
            if !self.is_staged(o) {
                continue;
            }
            let Ok(g) = self.geometry(i as OpId, &o.req) else {
                continue;
            };
            s.insert(o.req.sm, g.key, Entry::of(i as OpId, &o.req, g));
        }
        s
    }

    /// Whether the kept stage equals the one computed from the op list, up to the order of a
    /// line's entries.
    #[cfg(debug_assertions)]
    pub(super) fn stage_consistent(&self) -> bool {
        let fresh = self.stage_rebuilt(&self.ops);
        let sorted = |s: &Stage| {
            let mut v: Vec<(u32, Key, OpId, u64)> = s
                .entries
                .iter()
                .flat_map(|((sm, k), es)| es.iter().map(move |e| (*sm, *k, e.op, e.mask)))
                .collect();
            v.sort_unstable();
            v
        };
        sorted(&fresh) == sorted(&self.stage)
            && fresh.per_sm == self.stage.per_sm
            && fresh.per_thread == self.stage.per_thread
    }
}
