//! `memory-model`: the memory environments the CUDA machine links to (thesis chapter 4, 5.8.1).
//!
//! * [`MemoryEnv`] (module [`env`](mod@env)): the seam the machine sees. Issue a request (performed at
//!   once by [`Flat`], in flight under [`CachedMemory`]), the memory choices and their steps,
//!   the barrier hook, whether ops are in flight, global memory as a thread reads it, the
//!   canonical state; [`Memory`] is the one the machine holds.
//! * [`MemorySystem`]: flat accesses. Loads, stores, atomics (read-modify-write in one call, the new
//!   value computed by the caller's closure, which is [`atomic::apply`] for the machine) and
//!   fences, per state space, for an accessing thread [`Who`].
//! * [`flat`]: [`Flat`], sequentially consistent memory; every access completes inside the call.
//!   - `.global`: module variables (at the addresses the loader gave them) and launch buffers
//!     (placed by [`Flat::alloc_global`] above both, with a guard gap between buffers);
//!   - `.shared`: one segment per resident block (static + dynamic bytes);
//!   - `.local`: per thread, grown page by page up to a bound (beyond it: an error);
//!   - `.const`: module constants (read-only); `.param`: the kernel parameter buffer (read-only).
//! * [`cached`]: the cached memory of thesis chapter 4 (per-SM L1s, one L2, DRAM), memory
//!   programs in micro steps, over a [`Flat`] as its DRAM.
//! * [`vocabulary`]: the memory-model order, scope and cache operator of an access, and the
//!   operation and type of an atomic, shared with the program (`semantics::program` re-exports
//!   them).
//! * [`atomic`]: the value an atomic writes ([`atomic::apply`]), the one function both memory
//!   environments compute it with.
//! * Generic addressing (PTX ISA 5.1, `cvta`; the thesis leaves it out, 5.1.1 item 8): `.global`
//!   addresses are generic addresses as they are; the other spaces live in disjoint windows high
//!   in the address space ([`to_generic`], [`from_generic`]).
//!
//! Storage is pages of [`PAGE_SIZE`] bytes behind `Arc`s, copied on write: cloning a memory (a
//! snapshot) costs one pointer per page, and a store copies only a shared page. A segment's last
//! page is as long as the segment needs (a 4-byte buffer's store copies 4 bytes, not 4 KiB),
//! and a one-page segment keeps its page pointer inline, so a snapshot allocates nothing for it.
//! Never-written pages are absent and read as zero. Accesses are at most 8 bytes and naturally
//! aligned, so one never straddles a page; the access path allocates nothing.

pub mod atomic;
mod block_table;
pub mod cached;
pub mod env;
mod fingerprinted;
pub mod flat;
mod state_hash;
pub mod vocabulary;

pub use block_table::BlockTable;
pub use env::{CachedMemory, Issued, Memory, MemoryEnv};
pub use fingerprinted::Fingerprinted;
pub use flat::{Flat, PAGE_SIZE, Segment};
pub use state_hash::StateHasher;
use std::fmt;
pub use vocabulary::{AtomOp, AtomType, CacheOp, MemOrder, Scope};

pub use traces::MemSpace;

/// Generic-address windows (PTX ISA 5.1.6 generic addressing; chosen by cudasem). The top byte
/// names the space; `.global` is the identity (any address below [`PARAM_WINDOW`]).
pub const PARAM_WINDOW: u64 = 0xFA00_0000_0000_0000;
pub const CONST_WINDOW: u64 = 0xFB00_0000_0000_0000;
pub const LOCAL_WINDOW: u64 = 0xFC00_0000_0000_0000;
pub const SHARED_WINDOW: u64 = 0xFD00_0000_0000_0000;
const WINDOW_SIZE: u64 = 1 << 56;

/// Where launch buffers start (above module variables, whatever the loader chose for those).
pub const GLOBAL_HEAP_BASE: u64 = 0x0000_0001_0000_0000;
/// Alignment of launch buffers and the gap left between two of them, so that small overruns
/// fault instead of landing in the neighbour.
pub const BUFFER_ALIGN: u64 = 256;

/// The generic address of `addr` in `space`.
pub fn to_generic(space: MemSpace, addr: u64) -> u64 {
    match space {
        MemSpace::Global => addr,
        MemSpace::Param => PARAM_WINDOW.wrapping_add(addr),
        MemSpace::Const => CONST_WINDOW.wrapping_add(addr),
        MemSpace::Local => LOCAL_WINDOW.wrapping_add(addr),
        MemSpace::Shared => SHARED_WINDOW.wrapping_add(addr),
    }
}

/// The space and in-space address a generic address denotes.
pub fn from_generic(addr: u64) -> (MemSpace, u64) {
    for (space, base) in [
        (MemSpace::Shared, SHARED_WINDOW),
        (MemSpace::Local, LOCAL_WINDOW),
        (MemSpace::Const, CONST_WINDOW),
        (MemSpace::Param, PARAM_WINDOW),
    ] {
        if addr.wrapping_sub(base) < WINDOW_SIZE {
            return (space, addr - base);
        }
    }
    (MemSpace::Global, addr)
}

/// The thread on whose behalf an access happens: its block (linear index in the grid) and its
/// linear thread index in the block. Selects the `.shared` and `.local` memory it sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Who {
    pub block: u32,
    pub thread: u32,
}

/// Why an access failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemErrorKind {
    OutOfBounds,
    Misaligned,
    ReadOnly,
}

/// A failed access; `message` names the address and the allocation it missed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemError {
    pub kind: MemErrorKind,
    pub message: String,
}

impl fmt::Display for MemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MemError {}

/// The memory environment as the machine sees it (thesis 5.8.1 `memOp`, flattened to accesses).
/// `size` is 1, 2, 4 or 8 bytes; values are little-endian in the low bits.
pub trait MemorySystem {
    fn load(&mut self, who: Who, space: MemSpace, addr: u64, size: u32) -> Result<u64, MemError>;
    fn store(
        &mut self,
        who: Who,
        space: MemSpace,
        addr: u64,
        size: u32,
        value: u64,
    ) -> Result<(), MemError>;
    /// Read-modify-write in one step: returns `(old, new)` where `new = update(old)` was stored.
    fn atomic<F: FnOnce(u64) -> u64>(
        &mut self,
        who: Who,
        space: MemSpace,
        addr: u64,
        size: u32,
        update: F,
    ) -> Result<(u64, u64), MemError>;
    /// `membar`/`fence`: ordering only; a no-op under sequential consistency.
    fn fence(&mut self, who: Who, scope: Scope);
}

/// The PTX name of a space.
pub fn space_name(space: MemSpace) -> &'static str {
    match space {
        MemSpace::Global => "global",
        MemSpace::Shared => "shared",
        MemSpace::Local => "local",
        MemSpace::Const => "const",
        MemSpace::Param => "param",
    }
}
