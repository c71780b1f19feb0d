//! The cached memory environment of thesis chapter 4 (`--memory cached`): one L1 per SM (not
//! coherent across SMs), one L2 (the coherence point for global data), DRAM (the [`Flat`]
//! memory's global segments), shared memory with bank locks, and every memory access as an
//! instance of a *memory program* that runs micro steps under scheduler control (4.4-4.6).
//!
//! The machine *issues* a [`Request`] (one lane, one element) and gets an [`OpId`]; the op is then
//! in flight. Every freedom the thesis leaves open is a [`MemChoice`] offered by
//! [`Cached::enabled`] and taken by [`Cached::step`]: which pending op takes its next micro step,
//! silent L1/L2 evictions, write-backs and L1 flushes. A micro step reports what it did
//! ([`StepReport`]): the operations it ran (rule names), the value delivered to the destination
//! register (thesis `writeToRegs`) and whether the op ended (`releaseRegs; end`).
//!
//! Layout of the module:
//! * `l1s`: the per-SM L1s, stored only as far as they are used;
//! * `line`: cache lines (aligned, `line_bytes` wide, per-byte valid and dirty masks, pins,
//!   eviction class) and the cache operations of 4.2.2 (reserve, read, write, update, evict,
//!   discard, classify);
//! * `program`: the memory programs (Listings 4.1-4.6 and the proposals of digest §3.15) as
//!   statement lists, and the table mapping a request (space, cache operator, PTX memory-model
//!   order and scope) to its program;
//! * `engine`: in-flight ops, ordering dependencies, the micro-step interpreter, silent rules;
//! * `index`: indexes of the in-flight ops (per thread, per warp, ready, parked);
//! * `stage`: the per-SM store stage that lets a `.cta` release wait for less (D31);
//! * `footprint`: what a memory choice touches, and which two choices commute;
//! * `view`: read-only views for debuggers (`caches`);
//! * `state_hash`: the canonical state hash (what explorers use to recognise a state).
//!
//! Where cudasem repairs or refines the thesis, the code says so with the digest's ambiguity
//! number (A1-A28) and ARCHITECTURE.md lists it.

mod enabled;
mod engine;
mod footprint;
mod index;
mod l1s;
mod line;
mod operations;
mod program;
mod stage;
mod state_hash;
mod view;

/// The vocabulary of a [`Request`] (defined in [`crate::vocabulary`], shared with the program).
pub use crate::{AtomOp, AtomType, CacheOp, MemOrder, Scope};
use crate::{Fingerprinted, Flat, Who};
pub use enabled::EnabledEdit;
pub use footprint::{Footprint, Place};
use imbl::OrdMap;
pub use line::EvClass;
pub use program::{Fold, MicroSteps};
use serde::Serialize;
use smallvec::SmallVec;
use std::sync::Arc;
pub use traces::MemChoice;
pub use view::{LineView, LockView, OpView, programs};

/// Identifies an in-flight memory op (thesis `MemOpIdx`). Ids are slots: the smallest free one
/// is reused once an op has ended (its pins are gone by then, invariant I8), which keeps equal
/// states equal for state hashing.
pub type OpId = u32;

/// Which silent rules (thesis 4.6 `evict_L1`, `evict_L2`, `wb_L1`, `wb_L2`, `flush`) are offered
/// as choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize, Default)]
pub enum SilentActions {
    /// None: lines leave a cache only to make room (deterministic victim) or by a fence/barrier.
    None,
    /// The ones a thread can observe: L1 evictions and L1 flushes (a stale line goes away).
    #[default]
    Observable,
    /// All of them, L2 evictions and write-backs included (they change no value a thread reads:
    /// L2 is the coherence point; useful to watch DRAM in the debugger).
    All,
}

/// Shape of the caches (thesis Fig. 3.2 constants; A7: sizes are counted in lines here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub struct CacheConfig {
    /// Bytes per line: a power of two in 8..=64 (an access of at most 8 naturally aligned bytes
    /// never straddles a line). Default 32 (a sector of NVIDIA's L1/L2).
    pub line_bytes: u32,
    /// Lines per L1 (one L1 per SM).
    pub l1_lines: u32,
    /// Lines of the L2.
    pub l2_lines: u32,
    pub num_sms: u32,
    /// Shared-memory banks (successive 32-bit words in successive banks).
    pub shared_banks: u32,
    pub silent: SilentActions,
    /// Whether the invisible yields of the programs end a micro step and the silent L1 rules
    /// are offered whenever they apply (`Thesis`), or the yields are folded and the silent L1
    /// rules of an SM wait for an op that uses its L1 (`Folded`, the default; the same
    /// outcomes, fewer steps and states: issue 15).
    /// A configuration written without this field (a trace recorded before folded micro steps
    /// existed) was run with the thesis's steps, so that is what it reads as; and `Thesis` is
    /// left out when written, so such a trace writes back byte for byte.
    #[serde(
        default = "MicroSteps::thesis",
        skip_serializing_if = "MicroSteps::is_thesis"
    )]
    pub micro_steps: MicroSteps,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            line_bytes: 32,
            l1_lines: 1024,
            l2_lines: 16384,
            num_sms: 16,
            shared_banks: 32,
            silent: SilentActions::default(),
            micro_steps: MicroSteps::default(),
        }
    }
}

/// A read-modify-write: the atomic's operation and type and its operands (`b`: cas's new value;
/// 0 for the others). The engine's `atomOp` computes the new value from them with
/// [`crate::atomic::apply`], the function the machine's flat path uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Rmw {
    pub op: AtomOp,
    pub ty: AtomType,
    pub a: u64,
    pub b: u64,
}

/// Where a loaded value goes, opaque to this crate (the machine's warp, lane and register, and
/// how to extend the value). Returned in [`Delivery`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Dest {
    pub warp: u32,
    pub lane: u32,
    pub reg: u32,
    /// Call level of the register file (the machine keeps it unchanged while the op is in flight).
    pub level: u32,
    /// Sign-extend the loaded `size` bytes.
    pub signed: bool,
    /// Width of the destination register in bits.
    pub bits: u32,
}

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum RequestKind {
    /// `ld`; the value goes to `dest` (None: a `_` sink, the load still happens).
    Load {
        cop: Option<CacheOp>,
        dest: Option<Dest>,
    },
    /// `st`: the value is captured at issue (cudasem deviation: the thesis blocks the source
    /// register until the memory system picked it up; nothing can observe the difference).
    Store { cop: Option<CacheOp>, value: u64 },
    /// `atom` (dest Some) / `red` (dest None): the old value goes to `dest`.
    Atomic { rmw: Rmw, dest: Option<Dest> },
    /// `membar`/`fence`: ends once every earlier op of the thread has ended; its end invalidates
    /// the global lines of the SM's L1 (the acquire half), except at `.cta` scope. An `.acq_rel`
    /// fence is issued as two ops: order `Acquire` (waits for the earlier reads, flushes) and
    /// order `Release` (waits for every earlier op; later writes wait for it).
    Fence,
}

/// One lane's memory request (thesis 5.8.1 `memOp`: cudasem never coalesces, one op per lane
/// and element, which the thesis allows: "1 to n ops").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Request {
    pub who: Who,
    /// The SM the thread's block is resident on (selects the L1; thesis `pid`).
    pub sm: u32,
    pub kind: RequestKind,
    /// `.global` or `.shared` (other spaces never reach this crate's programs; `Fence`: ignored).
    pub space: crate::MemSpace,
    /// In-space address; naturally aligned, in bounds (the machine checks before issuing).
    pub addr: u64,
    /// 1, 2, 4 or 8 bytes.
    pub size: u32,
    pub order: MemOrder,
    /// `None`: not written. Only `.cta` is told apart from the wider scopes (`.cluster` acts as
    /// `.gpu`: no cache is shared by a cluster and by nothing wider).
    pub scope: Option<Scope>,
}

/// A value delivered to a register (thesis `writeToRegs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Delivery {
    pub who: Who,
    pub dest: Dest,
    /// The `size` bytes read (atomics: the old value), little-endian in the low bits.
    pub value: u64,
    pub size: u32,
}

/// What one [`Cached::step`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StepReport {
    /// The thesis operations executed in this micro step, in order (e.g. `["discardL1"]`,
    /// `["writeL2", "classifyNormalL2", "releaseRegs"]`), or the silent rule's name. Inline: a
    /// micro step runs a handful of operations, and explorers take millions of steps that
    /// nobody renders.
    pub operations: SmallVec<[&'static str; 6]>,
    pub delivered: Option<Delivery>,
    /// The op ended (`end;`): its thread no longer waits for it.
    pub ended: Option<(OpId, Who)>,
}

/// The program got stuck (thesis ⊥): a model-level error, never retried silently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stuck {
    pub op: Option<OpId>,
    pub message: String,
}

/// The cached memory environment (thesis `MemEnv` minus DRAM, plus the in-flight ops `ōp`).
/// DRAM, shared and local bytes stay in the [`Flat`] passed to [`Cached::step`]: the engine
/// over its own DRAM is [`crate::CachedMemory`], the memory environment the machine holds.
#[derive(Debug, Clone)]
pub struct Cached {
    config: CacheConfig,
    /// `config.line_bytes` made a power of two in 8..=64 (a bad configuration never panics).
    line_bytes: u64,
    /// One L1 per SM (thesis `ProcMem.l1Cache`).
    l1: l1s::L1s,
    /// Fingerprint memoized: a micro step of a shared-memory program or a fence leaves it.
    l2: Fingerprinted<line::Cache>,
    /// In-flight ops by id (slot); `None`: a free slot. Each with its fingerprint memoized: a
    /// step changes one op.
    ops: Vec<Option<Fingerprinted<engine::Op>>>,
    /// Shared-memory bank locks: (block, bank) -> holding op (thesis `SharedMem` π2; one set
    /// of banks per block's shared memory, A23).
    locks: OrdMap<(u32, u32), OpId>,
    /// Indexes of `ops` (derived: not compared, not hashed).
    index: index::OpIndex,
    /// The enabled choices ([`Cached::enabled`]) of this state (derived: not compared, not
    /// hashed), kept incrementally (see `enabled`): only a mutation (issue, step, flush)
    /// changes them, and most machine steps are no memory step at all. Shared by clones
    /// (explorers clone the state for every successor) until one of them changes it.
    enabled: Arc<enabled::EnabledList>,
    /// The edits of `enabled` since a reader last cleared them (derived).
    log: enabled::EditLog,
    /// Scratch (derived, empty between mutations): the ops a mutation must test again.
    recheck: Vec<OpId>,
    /// Scratch (derived, empty between mutations): the keys of the lines a mutation changed,
    /// and of those whose valid bytes changed (kept to spare an allocation per mutation).
    touched_keys: Vec<line::Key>,
    filled_keys: Vec<line::Key>,
    /// Scratch (derived, empty between mutations): the silent choices a mutation tests again.
    silent_scratch: Vec<MemChoice>,
    /// Whether a micro step runs (derived): the op list is then out of its place, and the
    /// doomed-line hints (`Op::doomed_hint`) a flush or an invalidation gives wait in
    /// `deferred_hints` (empty between mutations).
    stepping: bool,
    deferred_hints: Vec<(OpId, line::DoomedHint)>,
    /// Counts the mutations of this state (derived): a caller that remembers the value it saw
    /// knows whether [`Cached::enabled`] may have changed since.
    generation: u64,
    /// Whether the per-SM store stage is on (deviation D31, [`Cached::set_sm_stage`]; fixed
    /// for a run).
    sm_stage: bool,
    /// The staged stores of each SM (derived from the op list: module `stage`).
    stage: stage::Stage,
}

/// Equal states: the indexes follow from the op list.
impl PartialEq for Cached {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
            && self.sm_stage == other.sm_stage
            && self.line_bytes == other.line_bytes
            && self.l1 == other.l1
            && self.l2 == other.l2
            && self.ops == other.ops
            && self.locks == other.locks
    }
}

impl Cached {
    pub fn new(config: CacheConfig) -> Cached {
        Cached {
            config,
            line_bytes: config.line_bytes.clamp(8, 64).next_power_of_two() as u64,
            l1: l1s::L1s::new(config.num_sms),
            l2: Fingerprinted::new(engine::new_l2()),
            ops: Vec::new(),
            locks: OrdMap::new(),
            index: index::OpIndex::default(),
            enabled: Arc::default(),
            log: enabled::EditLog::default(),
            recheck: Vec::new(),
            touched_keys: Vec::new(),
            filled_keys: Vec::new(),
            silent_scratch: Vec::new(),
            stepping: false,
            deferred_hints: Vec::new(),
            generation: 0,
            sm_stage: false,
            stage: stage::Stage::default(),
        }
    }

    /// How many choices [`Cached::enabled`] gives.
    pub fn enabled_count(&self) -> usize {
        self.enabled.as_slice().len()
    }

    /// Whether `choice` is among [`Cached::enabled`] (O(1)).
    pub fn offers(&self, choice: &MemChoice) -> bool {
        self.enabled.contains(choice)
    }

    /// How many times this state was mutated ([`Cached::issue`], [`Cached::step`],
    /// [`Cached::flush_l1`]): equal values mean equal [`Cached::enabled`] choices.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// Puts a request in flight; computes its ordering dependencies on the thread's earlier ops
    /// (O1-O3, see `engine`). Never fails: a malformed request (bad size, alignment, SM or
    /// space) gets stuck (`Err(Stuck)`) at its first step.
    ///
    /// An `.acq_rel` fence is issued as its two halves (see `engine::fence_halves`): the
    /// returned id is the acquire half's.
    pub fn issue(&mut self, request: Request) -> OpId {
        let (first, second) = self.fence_halves(request);
        // No cache changes (so no room changes): only the new ops need a look.
        let id = self.issue_op(first);
        if let Some(second) = second {
            self.issue_op(second);
        }
        self.after_mutation(None);
        id
    }

    /// Appends the enabled memory choices in their canonical order: `Step` for each op (by
    /// id) whose dependencies ended and whose next micro step changes the state (a pure retry
    /// of a deferred operation is not offered), then the silent rules allowed by
    /// [`CacheConfig::silent`], per SM (`EvictL1`, `WriteBackL1` by line address, `Flush`),
    /// then L2 (`EvictL2`, `WriteBackL2` by line address). Sorts: a caller that steps often
    /// reads [`Cached::enabled_unordered`] instead.
    pub fn enabled(&self, out: &mut Vec<MemChoice>) {
        let at = out.len();
        out.extend_from_slice(self.enabled_unordered());
        out[at..].sort_unstable_by_key(enabled::canonical_key);
    }

    /// The enabled choices of [`Cached::enabled`] in the order they became enabled (a
    /// deterministic function of the history of mutations; free to ask after every machine
    /// step). [`Cached::enabled_edits`] gives the changes of this list.
    pub fn enabled_unordered(&self) -> &[MemChoice] {
        self.enabled.as_slice()
    }

    /// The changes of [`Cached::enabled_unordered`] since generation `since`, if this state
    /// still has them: the list's length at `since` and the edits in order. A caller that
    /// mirrors the list replays them (O(changes) instead of a copy of the list) and then calls
    /// [`Cached::clear_enabled_edits`]; `None`: copy the whole list.
    pub fn enabled_edits(&self, since: u64) -> Option<(usize, &[EnabledEdit])> {
        (self.log.base_gen == since).then(|| (self.log.base_len, &self.log.edits[..]))
    }

    /// Forgets the edits: the next [`Cached::enabled_edits`] starts at this generation.
    pub fn clear_enabled_edits(&mut self) {
        self.log.base_gen = self.generation;
        self.log.base_len = self.enabled_count();
        self.log.edits.clear();
    }

    /// The `Step` choices of [`Cached::enabled`] computed by a scan of every op in flight
    /// instead of the incremental indexes (for tests that compare the two).
    pub fn enabled_steps_from_scratch(&self, out: &mut Vec<MemChoice>) {
        self.steps_from_scratch(&mut |c| out.push(c))
    }

    /// Whether the derived indexes (ops per thread and warp, ready ops, free slots, the victim
    /// candidates of each cache, the pinners of each L1's doomed lines) equal their
    /// from-scratch computation (for tests).
    pub fn indexes_consistent(&self) -> bool {
        self.index.matches(&index::OpIndex::rebuilt(&self.ops))
            && self.l2.indexes_consistent()
            && (0..self.l1.count()).all(|sm| {
                self.l1.get(sm).is_none_or(|c| {
                    c.live.indexes_consistent()
                        && c.doomed_consistent(|p| {
                            self.ops
                                .get(p as usize)
                                .and_then(Option::as_ref)
                                .and_then(|o| o.doomed_hint)
                                .map(|h| h.seq)
                        })
                })
            })
    }

    /// [`Cached::enabled`], handing each choice to `f` in the same order.
    pub fn for_each_enabled(&self, mut f: impl FnMut(MemChoice)) {
        let mut all = Vec::new();
        self.enabled(&mut all);
        for c in all {
            f(c)
        }
    }

    /// Takes one memory choice: one micro step of an op or one silent rule. A choice that is not enabled, and a program
    /// that gets stuck (thesis ⊥), give `Err(Stuck)`; the stuck op stays in flight where it
    /// stopped.
    pub fn step(&mut self, choice: MemChoice, dram: &mut Flat) -> Result<StepReport, Stuck> {
        let before = (!self.changes_no_line(&choice)).then(|| self.room_tight(self.sm_of(&choice)));
        let report = self.step_choice(choice, dram);
        self.after_mutation(before);
        report
    }

    /// The thread that issued in-flight op `op` (None: no such op).
    pub fn op_who(&self, op: OpId) -> Option<Who> {
        self.ops
            .get(op as usize)
            .and_then(Option::as_ref)
            .map(|o| o.req.who)
    }

    /// The request of in-flight op `op` (None: no such op): who issued it and, for a load or
    /// an atomic, the register it will write.
    pub fn op_request(&self, op: OpId) -> Option<&Request> {
        self.ops
            .get(op as usize)
            .and_then(Option::as_ref)
            .map(|o| &o.req)
    }

    /// The cache line in-flight op `op` accesses (None: no such op, or an access with no line:
    /// shared memory, a fence, an address the engine refuses).
    pub fn op_line(&self, op: OpId) -> Option<line::Key> {
        let o = self.ops.get(op as usize)?.as_ref()?;
        matches!(
            o.req.space,
            crate::MemSpace::Global | crate::MemSpace::Local
        )
        .then(|| self.geometry(op, &o.req).ok().map(|g| g.key))
        .flatten()
    }

    /// The bytes `[lo, hi)` of global memory that line `key` holds; `Err(who)` for a local
    /// line, the thread whose local memory it holds.
    pub fn line_bytes_of(&self, key: line::Key) -> Result<(u64, u64), Who> {
        match engine::decode_key(key) {
            (_, Some(who), _) => Err(who),
            (_, None, addr) => Ok((addr, addr.saturating_add(self.config.line_bytes as u64))),
        }
    }

    /// Whether SM `sm`'s L1 holds a live line `key` (doomed lines, which only their pinners
    /// see, do not count).
    pub fn l1_holds(&self, sm: u32, key: line::Key) -> bool {
        self.l1.get(sm).is_some_and(|c| c.live.contains(key))
    }

    /// Every in-flight op by id: its id, its request, and whether it waits for an earlier op of
    /// its thread to end (ordering rules O1-O3; such an op has no enabled step until then). The
    /// reductions use it to tell which ops only their own block's steps can enable.
    pub fn in_flight(&self) -> impl Iterator<Item = (OpId, &Request, bool)> + '_ {
        self.ops
            .iter()
            .enumerate()
            .filter_map(|(id, o)| o.as_ref().map(|o| (id as OpId, &o.req, !o.deps.is_empty())))
    }

    /// Whether the thread has ops in flight (barriers, exit, call and ret wait until it has none).
    pub fn thread_busy(&self, who: Who) -> bool {
        self.index.by_thread.busy(who)
    }

    /// Whether any of the threads `tid_base + l` of block `block`, for the set bits `l` of
    /// `lanes` (a warp's lanes), has ops in flight: [`Cached::thread_busy`] for a warp at
    /// once, with one lookup of the block instead of one per lane (the scoreboard asks it of
    /// every warp instruction that drains memory, and the warp-wide shared load of every lane).
    pub fn any_thread_busy(&self, block: u32, tid_base: u32, lanes: u64) -> bool {
        self.index.by_thread.any_busy(block, tid_base, lanes)
    }

    /// The registers of warp `warp` of block `block` that in-flight loads and atomics will
    /// write, each with the lanes it is pending for (bit i: lane i), by register number (the
    /// machine's scoreboard: an instruction touching a pending register of one of its lanes
    /// waits). Indexed: the cost is the number of pending registers, not of ops.
    pub fn pending_registers(&self, block: u32, warp: u32) -> &[(u32, u64)] {
        self.index
            .pending
            .get(&(block, warp))
            .map_or(&[], |p| p.regs.as_slice())
    }

    /// The registers of warp `warp` of block `block` that in-flight loads and atomics will
    /// write, as `(lane, level, reg)` (the machine's scoreboard: an instruction touching one of
    /// them waits). A register stays pending until its op *ends*: the value is delivered in the
    /// op's last micro step, which also ends it, so delivery and release coincide. In op-id
    /// order; `red` and `_` sinks (no dest) contribute nothing. A pass over every op in
    /// flight (for debuggers and tests: the machine's scoreboard reads
    /// [`Cached::pending_registers`]).
    pub fn pending_dests(&self, block: u32, warp: u32, out: &mut impl Extend<(u32, u32, u32)>) {
        for o in self.ops.iter().flatten() {
            if o.req.who.block != block {
                continue;
            }
            let dest = match o.req.kind {
                RequestKind::Load { dest, .. } | RequestKind::Atomic { dest, .. } => dest,
                _ => None,
            };
            if let Some(d) = dest.filter(|d| d.warp == warp) {
                out.extend([(d.lane, d.level, d.reg)]);
            }
        }
    }

    /// Whether the weak `.shared` load `req` may be performed in the step that issues it, as
    /// flat memory performs it, instead of becoming an op in flight (deviation D30;
    /// docs/internals/cached-memory.md, "Shared loads at issue"): the micro steps are folded,
    /// no op that writes the block's shared memory is in flight, and the load would wait for
    /// none of its thread's ops. The caller adds the program's half: no thread of the block
    /// can issue a shared write before the loading thread next arrives at a barrier or exits
    /// (each of which waits for the thread's ops, D24). Then the load's one micro step
    /// (`readMem ‖ writeToRegs releaseRegs`) is enabled at issue, reads a word no
    /// step can write before it must have run, and writes a register the scoreboard keeps from
    /// every instruction until then: it commutes with every step in between (a left mover, as
    /// in "Folded micro steps"), so running it at issue reaches the same outcomes. Indexed:
    /// O(the thread's ops in flight).
    pub fn load_at_issue(&self, req: &Request) -> bool {
        req.space == crate::MemSpace::Shared
            && matches!(req.kind, RequestKind::Load { .. })
            && req.order == MemOrder::Weak
            && self.shared_loads_at_issue(req.who.block)
            && self.dependencies(req).next().is_none()
    }

    /// The memory's half of [`Cached::load_at_issue`] that holds for every weak `.shared`
    /// load of block `block` alike: the micro steps are folded and no op that writes the
    /// block's shared memory is in flight. A load of a thread with no op in flight then waits
    /// for none, so a warp whose loading threads are all idle may load at issue as a whole.
    pub fn shared_loads_at_issue(&self, block: u32) -> bool {
        self.config.micro_steps == MicroSteps::Folded
            && !self.index.shared_writers.contains_key(&block)
    }

    /// Whether any op is in flight (a grid completes only when none is).
    pub fn idle(&self) -> bool {
        self.index.by_thread.is_empty()
    }

    /// Invalidates the global lines of SM `sm`'s L1 (barrier completion; fences do it as their
    /// last step). Pinned lines become invisible to everyone but their pinners (A10 repair).
    /// An SM that does not exist: nothing happens.
    pub fn flush_l1(&mut self, sm: u32) {
        let before = self.room_tight(Some(sm));
        self.flush(sm);
        self.after_mutation(Some(before));
    }

    /// Global memory as the threads would see it through L2: `out` starts as DRAM's bytes at
    /// `addr` (read by the caller) and receives every valid L2 byte over them (digest §6 item 17).
    pub fn overlay_global(&self, addr: u64, out: &mut [u8]) {
        let lb = self.line_bytes;
        // Line by line: one lookup per line, not per byte (a whole buffer is read at the end
        // of every run).
        let mut i = 0;
        while i < out.len() {
            let a = addr.wrapping_add(i as u64);
            let base = a & !(lb - 1);
            let off = (a - base) as usize;
            let n = (lb as usize - off).min(out.len() - i);
            if engine::is_global(a)
                && let Some(l) = self.l2.get(base)
            {
                for (j, b) in out[i..i + n].iter_mut().enumerate() {
                    if l.valid >> (off + j) & 1 != 0 {
                        *b = l.data[off + j];
                    }
                }
            }
            i += n;
        }
    }

    /// Feeds the canonical state (lines in address order, ops by id with their statement index
    /// and σ, locks) into a hasher (for state hashing).
    pub fn hash_state<H: std::hash::Hasher>(&self, h: &mut H) {
        self.hash_into(h)
    }
}
