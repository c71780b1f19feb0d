//! The memory environment a [`super::Machine`] holds: flat memory in place, cached memory behind
//! a box. `memory_model::Memory` keeps both variants inline, so every machine was as large as
//! the cached engine (800 of its 1,320 bytes) even under flat memory, where the environment is
//! a handful of shared pointers (64 bytes). Explorers clone one machine per successor and keep
//! one per state whose successors they have not built, so those bytes were copied on every
//! clone and paid for every kept state (issue 14, Build 3: cheaper states). Under cached
//! memory a clone now pays one allocation more; its engine already allocates its op list.

use memory_model::cached::{
    Cached, EnabledEdit, Footprint, MemChoice, OpId, Request, StepReport, Stuck,
};
use memory_model::{CachedMemory, Flat, Issued, MemSpace, MemoryEnv};
use std::hash::Hasher;

/// One of the two memory environments of thesis chapter 4 (`--memory`), chosen at launch.
#[derive(Debug, Clone, PartialEq)]
pub enum MachineMemory {
    Flat(Flat),
    Cached(Box<CachedMemory>),
}

/// Forwards a [`MemoryEnv`] method to the environment a [`MachineMemory`] holds.
macro_rules! forward {
    ($self:ident, $m:ident => $e:expr) => {
        match $self {
            MachineMemory::Flat($m) => $e,
            MachineMemory::Cached($m) => $e,
        }
    };
}

impl MachineMemory {
    /// The cached engine, under cached memory (debuggers' views of caches and ops).
    pub fn cached(&self) -> Option<&Cached> {
        match self {
            MachineMemory::Flat(_) => None,
            MachineMemory::Cached(c) => Some(c.engine()),
        }
    }

    /// The changes of the enabled choices since generation `since`, where the memory keeps
    /// them ([`Cached::enabled_edits`]); flat memory has no choices to change.
    pub fn enabled_edits(&self, since: u64) -> Option<(usize, &[EnabledEdit])> {
        match self {
            MachineMemory::Flat(_) => None,
            MachineMemory::Cached(c) => c.enabled_edits(since),
        }
    }

    /// Forgets the edits ([`MachineMemory::enabled_edits`]).
    pub fn clear_enabled_edits(&mut self) {
        if let MachineMemory::Cached(c) = self {
            c.clear_enabled_edits()
        }
    }
}

impl MemoryEnv for MachineMemory {
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
            MachineMemory::Flat(m) => MemoryEnv::hash_state(m, h),
            MachineMemory::Cached(m) => MemoryEnv::hash_state(&**m, h),
        }
    }
}
