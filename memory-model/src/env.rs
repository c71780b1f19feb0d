//! The memory seam: what the machine asks of a memory environment ([`MemoryEnv`]), the two
//! environments behind it ([`Flat`] and [`CachedMemory`]) and the one the machine holds
//! ([`Memory`], an enum of the two).
//!
//! A memory environment keeps the bytes of every state space in a paged store (a [`Flat`]:
//! [`MemoryEnv::pages`]) and decides how an access to `.global` and `.shared` memory happens:
//!
//! * [`Flat`] performs every access inside the step that issues it ([`MemoryEnv::issue`] gives
//!   the result now), offers no memory choices, and is always idle.
//! * [`CachedMemory`] (thesis chapter 4) puts a `.global` or `.shared` access in flight as a
//!   memory program ([`MemoryEnv::issue`] gives its op id); the program's micro steps and the
//!   silent cache actions are the memory choices ([`MemoryEnv::enabled_unordered`],
//!   [`MemoryEnv::step`]), and a loaded value arrives in a later step
//!   ([`crate::cached::StepReport::delivered`]). It owns its DRAM (and the shared, local, const
//!   and param bytes, which its programs and the machine's direct accesses reach).
//!
//! Where the two differ in a way the machine's reductions depend on, the trait answers a named
//! question ([`MemoryEnv::performs_accesses_at_once`], [`MemoryEnv::reads_depend_on_sm`]), never
//! "which memory is it".
//!
//! The machine holds a [`Memory`], not a `Box<dyn MemoryEnv>` nor a type parameter: one match
//! per question keeps the flat fast paths as they were (measured: docs/internals/cached-memory.md,
//! "The memory seam"), and the crates above the machine keep one `Machine` type.

use crate::cached::{
    CacheConfig, Cached, Footprint, MemChoice, OpId, Request, RequestKind, StepReport, Stuck,
};
use crate::{Flat, MemError, MemSpace, MemorySystem};
use std::hash::Hasher;

/// What became of an issued request ([`MemoryEnv::issue`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Issued {
    /// Performed at once: a load's value or an atomic's old value (`Some`), a store or fence
    /// (`None`), or the error the access met.
    Performed(Result<Option<u64>, MemError>),
    /// In flight as op `OpId`: its value, if any, arrives with a later memory step.
    InFlight(OpId),
}

/// What the machine asks of a memory environment (thesis 5.8.1 `memOp` and the device rule that
/// runs the memory environment beside the context). See the module header for what each
/// environment promises.
pub trait MemoryEnv {
    /// The paged bytes of every state space. Under a memory that keeps accesses in flight, the
    /// `.global` bytes are DRAM's (what a thread reads is [`MemoryEnv::observe_global`]) and
    /// `.global`/`.shared` accesses go through [`MemoryEnv::issue`].
    fn pages(&self) -> &Flat;
    /// [`MemoryEnv::pages`] to write: launch setup, block creation and release, and the direct
    /// accesses of the spaces [`MemoryEnv::in_flight_space`] says are performed at once.
    fn pages_mut(&mut self) -> &mut Flat;

    /// Whether every access is performed inside the step that issues it (no op is ever in
    /// flight, no value arrives later, no memory choice exists): what the machine's reductions
    /// that reason about a step's accesses (private and settled words, the dead-register
    /// analysis, commuting exits) need.
    fn performs_accesses_at_once(&self) -> bool;

    /// Whether an access to `space` becomes an op in flight ([`MemoryEnv::issue`] then gives
    /// [`Issued::InFlight`]) instead of being performed on [`MemoryEnv::pages`] at once.
    fn in_flight_space(&self, space: MemSpace) -> bool;

    /// Whether what a thread reads may depend on the SM its block is resident on (a per-SM
    /// cache): blocks are then not interchangeable.
    fn reads_depend_on_sm(&self) -> bool;

    /// Issues a request of one lane (an element of an `ld`, `st`, `atom`, `red` or a fence).
    fn issue(&mut self, request: Request) -> Issued;

    /// Whether the weak `.shared` load `request` may be performed at issue as flat memory
    /// performs it (deviation D30; [`Cached::load_at_issue`]). Flat memory: always.
    fn load_at_issue(&self, request: &Request) -> bool;
    /// The memory's half of [`MemoryEnv::load_at_issue`] for every weak `.shared` load of
    /// block `block` ([`Cached::shared_loads_at_issue`]). Flat memory: always.
    fn shared_loads_at_issue(&self, block: u32) -> bool;

    /// The enabled memory choices, in the order they became enabled (none for flat memory).
    fn enabled_unordered(&self) -> &[MemChoice];
    /// Whether `choice` is enabled (O(1)).
    fn offers(&self, choice: &MemChoice) -> bool;
    /// Counts the changes of the enabled choices: equal values mean equal choices
    /// ([`Cached::generation`]; flat memory: always 0).
    fn generation(&self) -> u64;
    /// Takes one memory choice (flat memory has none: `Err`).
    fn step(&mut self, choice: MemChoice) -> Result<StepReport, Stuck>;
    /// The request of in-flight op `op` (None: no such op).
    fn op_request(&self, op: OpId) -> Option<&Request>;
    /// The footprint of a memory choice (flat memory: an empty one; it has no choices).
    fn footprint(&self, choice: MemChoice) -> Footprint;

    /// A barrier of a block resident on SM `sm` completed (bar.sync orders memory for the
    /// block: the SM's L1 forgets its global lines).
    fn barrier_completed(&mut self, sm: u32);

    /// Whether no op is in flight (a grid completes only then).
    fn idle(&self) -> bool;
    /// Whether any thread `tid_base + l` of block `block`, for the set bits `l` of `lanes`, has
    /// ops in flight.
    fn any_thread_busy(&self, block: u32, tid_base: u32, lanes: u64) -> bool;
    /// The registers of warp `warp` of block `block` that in-flight ops will write, each with
    /// its lanes ([`Cached::pending_registers`]; flat memory: none).
    fn pending_registers(&self, block: u32, warp: u32) -> &[(u32, u64)];

    /// Global memory as a thread would read it: `out` holds the paged (DRAM) bytes at `addr`
    /// and receives whatever the memory holds over them (valid L2 bytes).
    fn observe_global(&self, addr: u64, out: &mut [u8]);

    /// Feeds the canonical state of the memory (pages, then caches and ops in flight) into `h`.
    fn hash_state<H: Hasher>(&self, h: &mut H);
}

/// A request performed on flat memory at once.
fn perform(mem: &mut Flat, request: Request) -> Result<Option<u64>, MemError> {
    let Request {
        who,
        space,
        addr,
        size,
        kind,
        scope,
        ..
    } = request;
    match kind {
        RequestKind::Load { .. } => mem.load(who, space, addr, size).map(Some),
        RequestKind::Store { value, .. } => mem.store(who, space, addr, size, value).map(|_| None),
        RequestKind::Atomic { rmw, .. } => mem
            .atomic(who, space, addr, size, |old| {
                crate::atomic::apply(rmw.op, rmw.ty, old, rmw.a, rmw.b)
            })
            .map(|(old, _)| Some(old)),
        // Thesis 5.3.2, rule membar: flat memory performs every access at once, so a fence
        // orders nothing that is not already ordered (a no-op, `MemorySystem::fence`).
        RequestKind::Fence => {
            mem.fence(who, scope.unwrap_or(crate::Scope::Sys));
            Ok(None)
        }
    }
}

fn no_choices(choice: MemChoice) -> Stuck {
    Stuck {
        op: None,
        message: format!("flat memory has no memory choices (`{choice}`)"),
    }
}

impl MemoryEnv for Flat {
    #[inline]
    fn pages(&self) -> &Flat {
        self
    }
    #[inline]
    fn pages_mut(&mut self) -> &mut Flat {
        self
    }
    #[inline]
    fn performs_accesses_at_once(&self) -> bool {
        true
    }
    #[inline]
    fn in_flight_space(&self, _space: MemSpace) -> bool {
        false
    }
    #[inline]
    fn reads_depend_on_sm(&self) -> bool {
        false
    }
    fn issue(&mut self, request: Request) -> Issued {
        Issued::Performed(perform(self, request))
    }
    #[inline]
    fn load_at_issue(&self, _request: &Request) -> bool {
        true
    }
    #[inline]
    fn shared_loads_at_issue(&self, _block: u32) -> bool {
        true
    }
    #[inline]
    fn enabled_unordered(&self) -> &[MemChoice] {
        &[]
    }
    #[inline]
    fn offers(&self, _choice: &MemChoice) -> bool {
        false
    }
    #[inline]
    fn generation(&self) -> u64 {
        0
    }
    fn step(&mut self, choice: MemChoice) -> Result<StepReport, Stuck> {
        Err(no_choices(choice))
    }
    #[inline]
    fn op_request(&self, _op: OpId) -> Option<&Request> {
        None
    }
    fn footprint(&self, _choice: MemChoice) -> Footprint {
        Footprint::default()
    }
    #[inline]
    fn barrier_completed(&mut self, _sm: u32) {}
    #[inline]
    fn idle(&self) -> bool {
        true
    }
    #[inline]
    fn any_thread_busy(&self, _block: u32, _tid_base: u32, _lanes: u64) -> bool {
        false
    }
    #[inline]
    fn pending_registers(&self, _block: u32, _warp: u32) -> &[(u32, u64)] {
        &[]
    }
    #[inline]
    fn observe_global(&self, _addr: u64, _out: &mut [u8]) {}
    fn hash_state<H: Hasher>(&self, h: &mut H) {
        Flat::hash_state(self, h)
    }
}

/// The cached memory environment of thesis chapter 4 with its own DRAM: the engine ([`Cached`]:
/// L1s, L2, ops in flight, bank locks) over the paged store that holds DRAM's bytes and the
/// shared, local, const and param spaces.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedMemory {
    dram: Flat,
    engine: Cached,
}

impl CachedMemory {
    /// Cached memory over `dram` (the launch's memory as set up so far).
    pub fn new(dram: Flat, config: CacheConfig) -> CachedMemory {
        CachedMemory {
            dram,
            engine: Cached::new(config),
        }
    }

    /// Turns the per-SM store stage on or off (deviation D31: [`Cached::set_sm_stage`]); before
    /// the first request.
    pub fn set_sm_stage(&mut self, on: bool) {
        self.engine.set_sm_stage(on);
    }

    /// The engine: caches, ops in flight, locks (read-only; debuggers' views).
    pub fn engine(&self) -> &Cached {
        &self.engine
    }

    /// The changes of the enabled choices since generation `since` ([`Cached::enabled_edits`]).
    pub fn enabled_edits(&self, since: u64) -> Option<(usize, &[crate::cached::EnabledEdit])> {
        self.engine.enabled_edits(since)
    }

    /// Forgets the edits ([`Cached::clear_enabled_edits`]).
    pub fn clear_enabled_edits(&mut self) {
        self.engine.clear_enabled_edits()
    }
}

impl MemoryEnv for CachedMemory {
    #[inline]
    fn pages(&self) -> &Flat {
        &self.dram
    }
    #[inline]
    fn pages_mut(&mut self) -> &mut Flat {
        &mut self.dram
    }
    #[inline]
    fn performs_accesses_at_once(&self) -> bool {
        false
    }
    /// `.global` and `.shared` accesses are memory programs; `.local`, `.const` and `.param`
    /// stay direct (private or read-only: their caching cannot change a value a thread reads,
    /// deviation D16).
    #[inline]
    fn in_flight_space(&self, space: MemSpace) -> bool {
        matches!(space, MemSpace::Global | MemSpace::Shared)
    }
    #[inline]
    fn reads_depend_on_sm(&self) -> bool {
        true
    }
    fn issue(&mut self, request: Request) -> Issued {
        Issued::InFlight(self.engine.issue(request))
    }
    fn load_at_issue(&self, request: &Request) -> bool {
        self.engine.load_at_issue(request)
    }
    fn shared_loads_at_issue(&self, block: u32) -> bool {
        self.engine.shared_loads_at_issue(block)
    }
    #[inline]
    fn enabled_unordered(&self) -> &[MemChoice] {
        self.engine.enabled_unordered()
    }
    #[inline]
    fn offers(&self, choice: &MemChoice) -> bool {
        self.engine.offers(choice)
    }
    #[inline]
    fn generation(&self) -> u64 {
        self.engine.generation()
    }
    fn step(&mut self, choice: MemChoice) -> Result<StepReport, Stuck> {
        self.engine.step(choice, &mut self.dram)
    }
    fn op_request(&self, op: OpId) -> Option<&Request> {
        self.engine.op_request(op)
    }
    fn footprint(&self, choice: MemChoice) -> Footprint {
        self.engine.footprint(choice)
    }
    fn barrier_completed(&mut self, sm: u32) {
        self.engine.flush_l1(sm)
    }
    #[inline]
    fn idle(&self) -> bool {
        self.engine.idle()
    }
    #[inline]
    fn any_thread_busy(&self, block: u32, tid_base: u32, lanes: u64) -> bool {
        self.engine.any_thread_busy(block, tid_base, lanes)
    }
    #[inline]
    fn pending_registers(&self, block: u32, warp: u32) -> &[(u32, u64)] {
        self.engine.pending_registers(block, warp)
    }
    fn observe_global(&self, addr: u64, out: &mut [u8]) {
        self.engine.overlay_global(addr, out)
    }
    fn hash_state<H: Hasher>(&self, h: &mut H) {
        self.dram.hash_state(h);
        self.engine.hash_state(h);
    }
}

/// The memory environment the machine holds: one of the two, chosen at launch (`--memory`).
/// The cached engine is boxed: inline, it made every machine as large as the engine (800 of its
/// 1,320 bytes), flat ones too, whose environment is a handful of shared pointers. Explorers
/// clone one machine per successor and keep one per state not expanded yet, so those bytes were
/// copied on every clone and paid for every kept state (issue 14, Build 3: cheaper states).
/// Under cached memory a clone pays one allocation more; its engine already allocates its ops.
#[derive(Debug, Clone, PartialEq)]
pub enum Memory {
    Flat(Flat),
    Cached(Box<CachedMemory>),
}

/// Forwards a [`MemoryEnv`] method to the environment a [`Memory`] holds.
macro_rules! forward {
    ($self:ident, $m:ident => $e:expr) => {
        match $self {
            Memory::Flat($m) => $e,
            Memory::Cached($m) => $e,
        }
    };
}

impl Memory {
    /// The cached engine, under cached memory (debuggers' views of caches and ops).
    pub fn cached(&self) -> Option<&Cached> {
        match self {
            Memory::Flat(_) => None,
            Memory::Cached(c) => Some(&c.engine),
        }
    }

    /// The changes of the enabled choices since generation `since`, where the memory keeps
    /// them ([`Cached::enabled_edits`]); flat memory has no choices to change.
    pub fn enabled_edits(&self, since: u64) -> Option<(usize, &[crate::cached::EnabledEdit])> {
        match self {
            Memory::Flat(_) => None,
            Memory::Cached(c) => c.enabled_edits(since),
        }
    }

    /// Forgets the edits ([`Memory::enabled_edits`]).
    pub fn clear_enabled_edits(&mut self) {
        if let Memory::Cached(c) = self {
            c.clear_enabled_edits()
        }
    }
}

impl MemoryEnv for Memory {
    #[inline]
    fn pages(&self) -> &Flat {
        forward!(self, m => m.pages())
    }
    #[inline]
    fn pages_mut(&mut self) -> &mut Flat {
        forward!(self, m => m.pages_mut())
    }
    #[inline]
    fn performs_accesses_at_once(&self) -> bool {
        forward!(self, m => m.performs_accesses_at_once())
    }
    #[inline]
    fn in_flight_space(&self, space: MemSpace) -> bool {
        forward!(self, m => m.in_flight_space(space))
    }
    #[inline]
    fn reads_depend_on_sm(&self) -> bool {
        forward!(self, m => m.reads_depend_on_sm())
    }
    fn issue(&mut self, request: Request) -> Issued {
        forward!(self, m => m.issue(request))
    }
    #[inline]
    fn load_at_issue(&self, request: &Request) -> bool {
        forward!(self, m => m.load_at_issue(request))
    }
    #[inline]
    fn shared_loads_at_issue(&self, block: u32) -> bool {
        forward!(self, m => m.shared_loads_at_issue(block))
    }
    #[inline]
    fn enabled_unordered(&self) -> &[MemChoice] {
        forward!(self, m => m.enabled_unordered())
    }
    #[inline]
    fn offers(&self, choice: &MemChoice) -> bool {
        forward!(self, m => m.offers(choice))
    }
    #[inline]
    fn generation(&self) -> u64 {
        forward!(self, m => m.generation())
    }
    fn step(&mut self, choice: MemChoice) -> Result<StepReport, Stuck> {
        forward!(self, m => m.step(choice))
    }
    #[inline]
    fn op_request(&self, op: OpId) -> Option<&Request> {
        forward!(self, m => m.op_request(op))
    }
    fn footprint(&self, choice: MemChoice) -> Footprint {
        forward!(self, m => m.footprint(choice))
    }
    #[inline]
    fn barrier_completed(&mut self, sm: u32) {
        forward!(self, m => m.barrier_completed(sm))
    }
    #[inline]
    fn idle(&self) -> bool {
        forward!(self, m => m.idle())
    }
    #[inline]
    fn any_thread_busy(&self, block: u32, tid_base: u32, lanes: u64) -> bool {
        forward!(self, m => m.any_thread_busy(block, tid_base, lanes))
    }
    #[inline]
    fn pending_registers(&self, block: u32, warp: u32) -> &[(u32, u64)] {
        forward!(self, m => m.pending_registers(block, warp))
    }
    fn observe_global(&self, addr: u64, out: &mut [u8]) {
        forward!(self, m => m.observe_global(addr, out))
    }
    fn hash_state<H: Hasher>(&self, h: &mut H) {
        match self {
            Memory::Flat(m) => MemoryEnv::hash_state(m, h),
            Memory::Cached(m) => MemoryEnv::hash_state(&**m, h),
        }
    }
}
