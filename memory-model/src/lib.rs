//! `memory-model`: the memory environments the CUDA machine links to (thesis chapter 4, 5.8.1).
//!
//! * [`MemorySystem`]: the seam. Loads, stores, atomics (read-modify-write in one call, the new
//!   value computed by the caller's closure: this crate knows no arithmetic) and fences, per state
//!   space, for an accessing thread [`Who`]. The cached model of a later issue implements it too.
//! * [`Flat`]: sequentially consistent memory; every access completes inside the call.
//!   - `.global`: module variables (at the addresses the loader gave them) and launch buffers
//!     (placed by [`Flat::alloc_global`] above both, with a guard gap between buffers);
//!   - `.shared`: one segment per resident block (static + dynamic bytes);
//!   - `.local`: per thread, grown page by page up to a bound (beyond it: an error);
//!   - `.const`: module constants (read-only); `.param`: the kernel parameter buffer (read-only).
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

mod block_table;
pub mod cached;
mod fingerprinted;
mod state_hash;

pub use block_table::BlockTable;
pub use fingerprinted::Fingerprinted;
use smallvec::SmallVec;
pub use state_hash::StateHasher;
use std::fmt;
use std::sync::Arc;

pub use traces::MemSpace;

/// Bytes per page.
pub const PAGE_SIZE: usize = 4096;
const PAGE_SHIFT: u32 = 12;

/// A page's bytes: `PAGE_SIZE` of them, fewer for a segment's last page.
type Page = Arc<[u8]>;

/// A segment's page table: most segments (a module variable, a litmus buffer) fit one page.
type Pages = SmallVec<[Option<Page>; 1]>;

static ZEROS: [u8; PAGE_SIZE] = [0; PAGE_SIZE];

/// A fresh page of `len` zero bytes (`len <= PAGE_SIZE`).
fn zero_page(len: usize) -> Page {
    Arc::from(&ZEROS[..len.min(PAGE_SIZE)])
}

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

/// Fence scopes (`membar.cta/gl/sys`, `fence.*.cta/gpu/sys`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum FenceScope {
    Cta,
    Gpu,
    Sys,
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
    fn fence(&mut self, who: Who, scope: FenceScope);
}

/// A contiguous allocation: a buffer, a module variable, a block's shared memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Shared: a snapshot copies a pointer, not the text.
    pub name: Arc<str>,
    pub base: u64,
    pub len: u64,
    pub read_only: bool,
    pages: Pages,
}

impl Segment {
    pub fn new(name: impl Into<Arc<str>>, base: u64, len: u64, read_only: bool) -> Segment {
        let npages = len.div_ceil(PAGE_SIZE as u64) as usize;
        Segment {
            name: name.into(),
            base,
            len,
            read_only,
            pages: SmallVec::from_elem(None, npages),
        }
    }

    /// Bytes of page `page`: `PAGE_SIZE`, or what is left of the segment for its last page
    /// (every in-bounds access lands inside it).
    fn page_len(&self, page: usize) -> usize {
        let start = (page as u64) << PAGE_SHIFT;
        self.len.saturating_sub(start).min(PAGE_SIZE as u64) as usize
    }

    #[inline]
    fn contains(&self, addr: u64, size: u32) -> bool {
        let off = addr.wrapping_sub(self.base);
        off < self.len && self.len - off >= size as u64
    }

    #[inline]
    fn read(&self, off: u64, size: u32) -> u64 {
        let page = (off >> PAGE_SHIFT) as usize;
        let at = (off as usize) & (PAGE_SIZE - 1);
        match &self.pages[page] {
            None => 0,
            Some(p) => read_le(&p[..], at, size),
        }
    }

    #[inline]
    fn write(&mut self, off: u64, size: u32, value: u64) {
        let page = (off >> PAGE_SHIFT) as usize;
        let at = (off as usize) & (PAGE_SIZE - 1);
        let len = self.page_len(page);
        let p = self.pages[page].get_or_insert_with(|| zero_page(len));
        write_le(Arc::make_mut(p), at, size, value);
    }

    /// All bytes.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.len as usize];
        for (i, p) in self.pages.iter().enumerate() {
            if let Some(p) = p {
                let start = i * PAGE_SIZE;
                let end = (start + PAGE_SIZE).min(out.len());
                out[start..end].copy_from_slice(&p[..end - start]);
            }
        }
        out
    }

    /// Writes `bytes` at offset `off` (host-side initialisation; ignores `read_only`).
    pub fn write_bytes(&mut self, off: u64, bytes: &[u8]) {
        for (i, b) in bytes.iter().enumerate() {
            let o = off + i as u64;
            if o < self.len && (*b != 0 || self.pages[(o >> PAGE_SHIFT) as usize].is_some()) {
                self.write(o, 1, *b as u64);
            }
        }
    }

    /// Reads `len` bytes at offset `off` (host side), zero beyond the end.
    pub fn read_bytes(&self, off: u64, len: usize) -> Vec<u8> {
        (0..len as u64)
            .map(|i| {
                if off + i < self.len {
                    self.read(off + i, 1) as u8
                } else {
                    0
                }
            })
            .collect()
    }
}

#[inline(always)]
fn read_le(p: &[u8], at: usize, size: u32) -> u64 {
    // One bounds check and one load per access.
    match size {
        1 => p[at] as u64,
        2 => u16::from_le_bytes(p[at..at + 2].try_into().unwrap()) as u64,
        4 => u32::from_le_bytes(p[at..at + 4].try_into().unwrap()) as u64,
        _ => u64::from_le_bytes(p[at..at + 8].try_into().unwrap()),
    }
}

#[inline(always)]
fn write_le(p: &mut [u8], at: usize, size: u32, value: u64) {
    // One bounds check and one store per access (no `memcpy` of a variable length).
    match size {
        1 => p[at] = value as u8,
        2 => p[at..at + 2].copy_from_slice(&(value as u16).to_le_bytes()),
        4 => p[at..at + 4].copy_from_slice(&(value as u32).to_le_bytes()),
        8 => p[at..at + 8].copy_from_slice(&value.to_le_bytes()),
        _ => {
            let b = value.to_le_bytes();
            p[at..at + size as usize].copy_from_slice(&b[..size as usize]);
        }
    }
}

/// One thread's `.local` memory: pages grown on demand up to the bound.
#[derive(Debug, Clone, Default, PartialEq)]
struct LocalMem {
    pages: Vec<Option<Page>>,
}

/// The per-block state: shared memory and the threads' local memories.
#[derive(Debug, Clone, PartialEq)]
struct BlockMem {
    shared: Segment,
    local: Vec<LocalMem>,
}

/// Sequentially consistent flat memory (ARCHITECTURE.md, `--memory flat`).
#[derive(Debug, Clone, PartialEq)]
pub struct Flat {
    /// Module `.global` variables and launch buffers, sorted by base. Shared copy-on-write
    /// (written through `Arc::make_mut`) with their fingerprint memoized: most steps store
    /// nothing, and explorers clone the memory for every successor state.
    global: Arc<Fingerprinted<Vec<Segment>>>,
    /// Module `.const` variables, sorted by base.
    constant: Vec<Segment>,
    /// The kernel parameter buffer (read-only: shared by every snapshot).
    param: Arc<Segment>,
    /// Per resident block, its shared and local memory. The whole table is shared copy-on-write
    /// with its fingerprint memoized: most kernels an explorer meets touch no shared or local
    /// memory, so a snapshot copies one pointer instead of one per block.
    blocks: Arc<Fingerprinted<BlockTable<BlockMem>>>,
    /// Bytes of `.local` memory per thread.
    local_limit: u64,
    /// Index of the global segment hit last (the hot path checks it first).
    last_global: usize,
}

impl Flat {
    /// An empty memory whose threads get `local_limit` bytes of `.local` memory each.
    pub fn new(local_limit: u64) -> Flat {
        Flat {
            global: Arc::default(),
            constant: Vec::new(),
            param: Arc::new(Segment::new("kernel parameters", 0, 0, true)),
            blocks: Arc::default(),
            local_limit,
            last_global: 0,
        }
    }

    fn insert_sorted(list: &mut Vec<Segment>, seg: Segment) -> usize {
        let i = list.partition_point(|s| s.base < seg.base);
        list.insert(i, seg);
        i
    }

    /// Adds a module `.global` variable at the address the loader gave it.
    pub fn add_global_variable(&mut self, name: &str, base: u64, bytes: &[u8], len: u64) {
        let mut seg = Segment::new(name, base, len.max(bytes.len() as u64), false);
        seg.write_bytes(0, bytes);
        let global: &mut Fingerprinted<Vec<Segment>> = Arc::make_mut(&mut self.global);
        Self::insert_sorted(global, seg);
    }

    /// Adds a module `.const` variable.
    pub fn add_const_variable(&mut self, name: &str, base: u64, bytes: &[u8], len: u64) {
        let mut seg = Segment::new(name, base, len.max(bytes.len() as u64), true);
        seg.write_bytes(0, bytes);
        Self::insert_sorted(&mut self.constant, seg);
    }

    /// Allocates a launch buffer of `bytes.len()` bytes (at least one) above every existing
    /// global allocation; returns its address.
    pub fn alloc_global(&mut self, name: &str, bytes: &[u8]) -> u64 {
        let top = self
            .global
            .iter()
            .map(|s| s.base + s.len)
            .max()
            .unwrap_or(0);
        let base = (top.max(GLOBAL_HEAP_BASE) + BUFFER_ALIGN).next_multiple_of(BUFFER_ALIGN);
        let mut seg = Segment::new(name, base, bytes.len() as u64, false);
        seg.write_bytes(0, bytes);
        let global: &mut Fingerprinted<Vec<Segment>> = Arc::make_mut(&mut self.global);
        Self::insert_sorted(global, seg);
        base
    }

    /// Sets the kernel parameter buffer.
    pub fn set_params(&mut self, bytes: &[u8]) {
        let mut seg = Segment::new("kernel parameters", 0, bytes.len() as u64, true);
        seg.write_bytes(0, bytes);
        self.param = Arc::new(seg);
    }

    /// Creates block `block`'s shared memory (`shared_bytes`) and its threads' local memories.
    pub fn create_block(&mut self, block: u32, shared_bytes: u64, threads: u32) {
        let shared = Segment::new(
            format!("shared memory of block {block}"),
            0,
            shared_bytes,
            false,
        );
        Arc::make_mut(&mut self.blocks).insert(
            block,
            BlockMem {
                shared,
                local: vec![LocalMem::default(); threads as usize],
            },
        );
    }

    /// Releases a completed block's shared and local memory.
    pub fn release_block(&mut self, block: u32) {
        Arc::make_mut(&mut self.blocks).remove(block);
    }

    /// Writes bytes into shared memory of a block (static initialisers are not allowed in PTX,
    /// but tests use it).
    pub fn write_shared(&mut self, block: u32, off: u64, bytes: &[u8]) {
        if let Some(b) = Arc::make_mut(&mut self.blocks).get_mut(block) {
            b.shared.write_bytes(off, bytes);
        }
    }

    /// The global segment starting exactly at `base`, if any.
    pub fn global_segment(&self, base: u64) -> Option<&Segment> {
        self.global.iter().find(|s| s.base == base)
    }

    /// The global segment named `name`.
    pub fn global_named(&self, name: &str) -> Option<&Segment> {
        self.global.iter().find(|s| &*s.name == name)
    }

    /// The const segment named `name`.
    pub fn const_named(&self, name: &str) -> Option<&Segment> {
        self.constant.iter().find(|s| &*s.name == name)
    }

    /// Mutable access to a global segment by name (host-side initialisation).
    pub fn global_named_mut(&mut self, name: &str) -> Option<&mut Segment> {
        Arc::make_mut(&mut self.global)
            .iter_mut()
            .find(|s| &*s.name == name)
    }

    /// Mutable access to a const segment by name.
    pub fn const_named_mut(&mut self, name: &str) -> Option<&mut Segment> {
        self.constant.iter_mut().find(|s| &*s.name == name)
    }

    /// Host-side read of the bytes of the global segment at `base`.
    pub fn read_global(&self, base: u64) -> Vec<u8> {
        self.global_segment(base)
            .map(Segment::bytes)
            .unwrap_or_default()
    }

    /// The limit of `.local` memory per thread.
    pub fn local_limit(&self) -> u64 {
        self.local_limit
    }

    #[inline]
    fn find_global(&mut self, addr: u64, size: u32) -> Option<usize> {
        if let Some(s) = self.global.get(self.last_global)
            && s.contains(addr, size)
        {
            return Some(self.last_global);
        }
        let i = self.global.partition_point(|s| s.base <= addr);
        if i > 0 && self.global[i - 1].contains(addr, size) {
            self.last_global = i - 1;
            return Some(i - 1);
        }
        None
    }

    fn miss(list: &[Segment], space: &str, addr: u64, size: u32) -> MemError {
        // Name the nearest allocation.
        let nearest = list.iter().min_by_key(|s| {
            if addr < s.base {
                s.base - addr
            } else {
                addr.saturating_sub(s.base + s.len)
            }
        });
        let message = match nearest {
            None => format!(
                "{space} address {addr:#x} ({size} bytes) is outside any allocation (there is none)"
            ),
            Some(s) if addr < s.base => format!(
                "{space} address {addr:#x} ({size} bytes) is {} bytes before the start of buffer `{}` ({} bytes at {:#x})",
                s.base - addr,
                s.name,
                s.len,
                s.base
            ),
            Some(s) if addr >= s.base + s.len => format!(
                "{space} address {addr:#x} ({size} bytes) is {} bytes past the end of buffer `{}` ({} bytes at {:#x})",
                addr - (s.base + s.len),
                s.name,
                s.len,
                s.base
            ),
            Some(s) => format!(
                "{space} address {addr:#x} ({size} bytes) runs past the end of buffer `{}` ({} bytes at {:#x})",
                s.name, s.len, s.base
            ),
        };
        MemError {
            kind: MemErrorKind::OutOfBounds,
            message,
        }
    }

    #[inline]
    fn check_align(space: MemSpace, addr: u64, size: u32) -> Result<(), MemError> {
        if addr & (size as u64 - 1) != 0 {
            return Err(MemError {
                kind: MemErrorKind::Misaligned,
                message: format!(
                    "{} address {addr:#x} is not aligned to the access size ({size} bytes)",
                    space_name(space)
                ),
            });
        }
        Ok(())
    }

    fn no_block(who: Who) -> MemError {
        MemError {
            kind: MemErrorKind::OutOfBounds,
            message: format!(
                "block {} has no shared/local memory (not resident)",
                who.block
            ),
        }
    }

    fn local_miss(&self, addr: u64, size: u32) -> MemError {
        MemError {
            kind: MemErrorKind::OutOfBounds,
            message: format!(
                "local address {addr:#x} ({size} bytes) is outside the thread's local memory ({} bytes)",
                self.local_limit
            ),
        }
    }

    fn read_only(space: MemSpace, addr: u64) -> MemError {
        MemError {
            kind: MemErrorKind::ReadOnly,
            message: format!("{} address {addr:#x} is read-only", space_name(space)),
        }
    }

    /// Resolves `(space, addr)` to where its bytes live, checking alignment, bounds and
    /// read-only spaces: the one access path. Borrows nothing, so a load reads through shared
    /// references and leaves copy-on-write data (and its memoized fingerprint) alone.
    #[inline]
    fn locate(
        &mut self,
        who: Who,
        space: MemSpace,
        addr: u64,
        size: u32,
        write: bool,
    ) -> Result<Loc, MemError> {
        Self::check_align(space, addr, size)?;
        match space {
            MemSpace::Global => {
                let Some(i) = self.find_global(addr, size) else {
                    return Err(Self::miss(&self.global, "global", addr, size));
                };
                Ok(Loc::Global(i, addr - self.global[i].base))
            }
            MemSpace::Shared => {
                let Some(b) = self.blocks.get(who.block) else {
                    return Err(Self::no_block(who));
                };
                let seg = &b.shared;
                if !seg.contains(addr, size) {
                    return Err(Self::miss(std::slice::from_ref(seg), "shared", addr, size));
                }
                Ok(Loc::Shared(who.block, addr))
            }
            MemSpace::Local => {
                if addr >= self.local_limit || self.local_limit - addr < size as u64 {
                    return Err(self.local_miss(addr, size));
                }
                let Some(b) = self.blocks.get(who.block) else {
                    return Err(Self::no_block(who));
                };
                if b.local.get(who.thread as usize).is_none() {
                    return Err(Self::no_block(who));
                }
                Ok(Loc::Local(who, addr))
            }
            MemSpace::Const | MemSpace::Param => {
                if write {
                    return Err(Self::read_only(space, addr));
                }
                let (list, name): (&[Segment], &str) = if space == MemSpace::Const {
                    (&self.constant, "const")
                } else {
                    (std::slice::from_ref(&self.param), "param")
                };
                let Some(i) = list.iter().position(|s| s.contains(addr, size)) else {
                    return Err(Self::miss(list, name, addr, size));
                };
                let off = addr - list[i].base;
                Ok(if space == MemSpace::Const {
                    Loc::Const(i, off)
                } else {
                    Loc::Param(off)
                })
            }
        }
    }

    /// The `size` bytes at a located address.
    #[inline]
    fn read_at(&self, loc: Loc, size: u32) -> u64 {
        match loc {
            Loc::Global(i, off) => self.global[i].read(off, size),
            Loc::Const(i, off) => self.constant[i].read(off, size),
            Loc::Param(off) => self.param.read(off, size),
            Loc::Shared(block, off) => self
                .blocks
                .get(block)
                .map_or(0, |b| b.shared.read(off, size)),
            Loc::Local(who, addr) => self
                .blocks
                .get(who.block)
                .and_then(|b| b.local.get(who.thread as usize))
                .map_or(0, |mem| mem.read(addr, size)),
        }
    }

    /// Writes `size` bytes at a located address (never a read-only one: `locate` refused).
    #[inline]
    fn write_at(&mut self, loc: Loc, size: u32, value: u64) {
        match loc {
            Loc::Global(i, off) => Arc::make_mut(&mut self.global)[i].write(off, size, value),
            Loc::Shared(block, off) => {
                if let Some(b) = Arc::make_mut(&mut self.blocks).get_mut(block) {
                    b.shared.write(off, size, value);
                }
            }
            Loc::Local(who, addr) => {
                if let Some(mem) = Arc::make_mut(&mut self.blocks)
                    .get_mut(who.block)
                    .and_then(|b| b.local.get_mut(who.thread as usize))
                {
                    mem.write(addr, size, value);
                }
            }
            Loc::Const(..) | Loc::Param(..) => {}
        }
    }

    /// Checks that an access would succeed (bounds, alignment, read-only) without doing it: the
    /// cached memory checks a request when it is issued, and its programs then touch memory
    /// only where the check passed.
    pub fn check_access(
        &mut self,
        who: Who,
        space: MemSpace,
        addr: u64,
        size: u32,
        write: bool,
    ) -> Result<(), MemError> {
        self.locate(who, space, addr, size, write).map(|_| ())
    }

    /// Host-side read of `len` bytes of a thread's local memory.
    pub fn read_local(&self, who: Who, addr: u64, len: usize) -> Vec<u8> {
        let Some(mem) = self
            .blocks
            .get(who.block)
            .and_then(|b| b.local.get(who.thread as usize))
        else {
            return vec![0; len];
        };
        (0..len as u64)
            .map(|i| {
                let a = addr + i;
                match mem.pages.get((a >> PAGE_SHIFT) as usize) {
                    Some(Some(p)) => p[(a as usize) & (PAGE_SIZE - 1)],
                    _ => 0,
                }
            })
            .collect()
    }
}

/// Line-granular DRAM access for the cached model ([`cached`]): a cache line of global or local
/// memory may extend past the allocation that holds the accessed bytes (lines are aligned and
/// allocations are not), so these helpers never fail. A byte outside every allocation reads as
/// zero and a write to it is dropped: no thread can name such a byte without faulting (the
/// machine bounds-checks each access before it reaches the cache), so its value is never
/// observed.
impl Flat {
    /// Reads `out.len()` bytes of global memory at `addr` (bytes outside every segment: 0).
    pub fn read_global_line(&self, addr: u64, out: &mut [u8]) {
        for (i, b) in out.iter_mut().enumerate() {
            let a = addr.wrapping_add(i as u64);
            *b = match self.global_at(a) {
                Some(s) => s.read(a - s.base, 1) as u8,
                None => 0,
            };
        }
    }

    /// Writes `bytes[i]` at `addr + i` for every `i` whose bit is set in `mask` (a cache line's
    /// dirty mask; at most 64 bytes); bytes outside every segment are dropped.
    pub fn write_global_masked(&mut self, addr: u64, bytes: &[u8], mask: u64) {
        for (i, b) in bytes.iter().enumerate().take(64) {
            if mask >> i & 1 == 0 {
                continue;
            }
            let a = addr.wrapping_add(i as u64);
            if let Some(j) = self.global_index(a) {
                let s = &mut Arc::make_mut(&mut self.global)[j];
                s.write(a - s.base, 1, *b as u64);
            }
        }
    }

    /// Reads `out.len()` bytes of thread `who`'s local memory at `addr` (bytes beyond the
    /// local-memory bound or of a block that is not resident: 0).
    pub fn read_local_line(&self, who: Who, addr: u64, out: &mut [u8]) {
        let bytes = self.read_local(who, addr, out.len());
        for (i, b) in out.iter_mut().enumerate() {
            let in_bounds = addr
                .checked_add(i as u64)
                .is_some_and(|a| a < self.local_limit);
            *b = if in_bounds { bytes[i] } else { 0 };
        }
    }

    /// Writes the bytes selected by `mask` into thread `who`'s local memory at `addr`; bytes
    /// beyond the bound (or of a block that is not resident) are dropped.
    pub fn write_local_masked(&mut self, who: Who, addr: u64, bytes: &[u8], mask: u64) {
        for (i, b) in bytes.iter().enumerate().take(64) {
            if mask >> i & 1 == 0 {
                continue;
            }
            let a = addr.wrapping_add(i as u64);
            if let Ok(loc) = self.locate(who, MemSpace::Local, a, 1, true) {
                self.write_at(loc, 1, *b as u64);
            }
        }
    }

    fn global_index(&self, addr: u64) -> Option<usize> {
        let i = self.global.partition_point(|s| s.base <= addr);
        (i > 0 && self.global[i - 1].contains(addr, 1)).then(|| i - 1)
    }

    fn global_at(&self, addr: u64) -> Option<&Segment> {
        self.global_index(addr).map(|i| &self.global[i])
    }
}

/// Warp-wide accesses (Flat only): the lanes of one `ld`/`st` in ascending lane order, with
/// exactly the effects and errors of one [`MemorySystem::load`]/[`MemorySystem::store`] per lane,
/// but resolving the segment and the page (and copying a shared page) once per run of lanes that
/// hit the same page instead of once per lane.
impl Flat {
    /// Where an aligned `.global`/`.shared` access that needs no error path lands (a global
    /// segment or the block's shared memory, and the offset in it); `None` sends the lane
    /// through [`Flat::locate`].
    #[inline]
    fn fast_locate(&mut self, block: u32, space: MemSpace, addr: u64, size: u32) -> Option<Loc> {
        if addr & (size as u64 - 1) != 0 {
            return None;
        }
        match space {
            MemSpace::Global => {
                let i = self.find_global(addr, size)?;
                Some(Loc::Global(i, addr - self.global[i].base))
            }
            MemSpace::Shared => {
                let seg = &self.blocks.get(block)?.shared;
                seg.contains(addr, size).then_some(Loc::Shared(block, addr))
            }
            _ => None,
        }
    }

    /// The segment of a [`Flat::fast_locate`] result.
    #[inline]
    fn fast_segment(&self, loc: Loc) -> Option<(&Segment, u64)> {
        match loc {
            Loc::Global(i, off) => Some((&self.global[i], off)),
            Loc::Shared(block, off) => Some((&self.blocks.get(block)?.shared, off)),
            _ => None,
        }
    }

    /// The segment of a [`Flat::fast_locate`] result, for writing.
    #[inline]
    fn fast_segment_mut(&mut self, loc: Loc) -> Option<(&mut Segment, u64)> {
        match loc {
            Loc::Global(i, off) => Some((&mut Arc::make_mut(&mut self.global)[i], off)),
            Loc::Shared(block, off) => Some((
                &mut Arc::make_mut(&mut self.blocks).get_mut(block)?.shared,
                off,
            )),
            _ => None,
        }
    }

    /// Loads `size` bytes at `addrs[l]` in `space` for every lane `l` of `exec` into `out[l]`,
    /// lane by lane in ascending order, for the threads `tid_base + l` of `block`. On the first
    /// failing lane, returns it with its error; the lanes before it have been loaded.
    #[allow(clippy::too_many_arguments)]
    pub fn load_lanes(
        &mut self,
        block: u32,
        tid_base: u32,
        space: MemSpace,
        size: u32,
        exec: u64,
        addrs: &[u64],
        out: &mut [u64],
    ) -> Result<(), (usize, MemError)> {
        let mut m = exec;
        while m != 0 {
            let mut l = m.trailing_zeros() as usize;
            let located = self.fast_locate(block, space, addrs[l], size);
            let Some((seg, off)) = located.and_then(|loc| self.fast_segment(loc)) else {
                let who = Who {
                    block,
                    thread: tid_base + l as u32,
                };
                out[l] = self.load(who, space, addrs[l], size).map_err(|e| (l, e))?;
                m &= m - 1;
                continue;
            };
            // The lanes that follow in the same page of the same segment read through one page
            // reference (the segment is the one `find_global`'s cache would return).
            let (lo, len) = (addrs[l] - off, seg.len);
            let page = (off >> PAGE_SHIFT) as usize;
            let bytes = seg.pages[page].as_deref();
            loop {
                let at = (addrs[l].wrapping_sub(lo) as usize) & (PAGE_SIZE - 1);
                out[l] = match bytes {
                    Some(p) => read_le(p, at, size),
                    None => 0,
                };
                m &= m - 1;
                if m == 0 {
                    break;
                }
                l = m.trailing_zeros() as usize;
                let a = addrs[l];
                let off = a.wrapping_sub(lo);
                if a & (size as u64 - 1) != 0
                    || off >= len
                    || len - off < size as u64
                    || (off >> PAGE_SHIFT) as usize != page
                {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Stores `vals[l]` (`size` bytes) at `addrs[l]` in `space` for every lane `l` of `exec`,
    /// lane by lane in ascending order (two lanes storing to one address: the higher lane's value
    /// stays). On the first failing lane, returns it with its error; the lanes before it have
    /// stored.
    #[allow(clippy::too_many_arguments)]
    pub fn store_lanes(
        &mut self,
        block: u32,
        tid_base: u32,
        space: MemSpace,
        size: u32,
        exec: u64,
        addrs: &[u64],
        vals: &[u64],
    ) -> Result<(), (usize, MemError)> {
        let mut m = exec;
        while m != 0 {
            let mut l = m.trailing_zeros() as usize;
            let located = self.fast_locate(block, space, addrs[l], size);
            let Some((seg, off)) = located.and_then(|loc| self.fast_segment_mut(loc)) else {
                let who = Who {
                    block,
                    thread: tid_base + l as u32,
                };
                self.store(who, space, addrs[l], size, vals[l])
                    .map_err(|e| (l, e))?;
                m &= m - 1;
                continue;
            };
            // The lanes that follow in the same page of the same segment write through one
            // page reference (copied once if shared with a snapshot).
            let (lo, len) = (addrs[l] - off, seg.len);
            let page = (off >> PAGE_SHIFT) as usize;
            let page_len = seg.page_len(page);
            let p = seg.pages[page].get_or_insert_with(|| zero_page(page_len));
            let bytes = Arc::make_mut(p);
            loop {
                let at = (addrs[l].wrapping_sub(lo) as usize) & (PAGE_SIZE - 1);
                write_le(bytes, at, size, vals[l]);
                m &= m - 1;
                if m == 0 {
                    break;
                }
                l = m.trailing_zeros() as usize;
                let a = addrs[l];
                let off = a.wrapping_sub(lo);
                if a & (size as u64 - 1) != 0
                    || off >= len
                    || len - off < size as u64
                    || (off >> PAGE_SHIFT) as usize != page
                {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// Where the bytes of one access live ([`Flat::locate`]): indices, not references, so that
/// resolving borrows nothing.
#[derive(Debug, Clone, Copy)]
enum Loc {
    /// A global segment and the offset in it.
    Global(usize, u64),
    /// A const segment and the offset in it.
    Const(usize, u64),
    /// The offset in the parameter buffer.
    Param(u64),
    /// A resident block's shared memory and the offset in it.
    Shared(u32, u64),
    /// A thread's local memory and the address in it.
    Local(Who, u64),
}

impl LocalMem {
    #[inline]
    fn read(&self, addr: u64, size: u32) -> u64 {
        match self.pages.get((addr >> PAGE_SHIFT) as usize) {
            Some(Some(p)) => read_le(p, (addr as usize) & (PAGE_SIZE - 1), size),
            _ => 0,
        }
    }

    #[inline]
    fn write(&mut self, addr: u64, size: u32, value: u64) {
        let page = (addr >> PAGE_SHIFT) as usize;
        if self.pages.len() <= page {
            self.pages.resize(page + 1, None);
        }
        let p = self.pages[page].get_or_insert_with(|| zero_page(PAGE_SIZE));
        write_le(
            Arc::make_mut(p),
            (addr as usize) & (PAGE_SIZE - 1),
            size,
            value,
        );
    }
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

impl MemorySystem for Flat {
    #[inline]
    fn load(&mut self, who: Who, space: MemSpace, addr: u64, size: u32) -> Result<u64, MemError> {
        let loc = self.locate(who, space, addr, size, false)?;
        Ok(self.read_at(loc, size))
    }

    #[inline]
    fn store(
        &mut self,
        who: Who,
        space: MemSpace,
        addr: u64,
        size: u32,
        value: u64,
    ) -> Result<(), MemError> {
        let loc = self.locate(who, space, addr, size, true)?;
        self.write_at(loc, size, value);
        Ok(())
    }

    fn atomic<F: FnOnce(u64) -> u64>(
        &mut self,
        who: Who,
        space: MemSpace,
        addr: u64,
        size: u32,
        update: F,
    ) -> Result<(u64, u64), MemError> {
        let mask = if size >= 8 {
            u64::MAX
        } else {
            (1u64 << (size * 8)) - 1
        };
        let loc = self.locate(who, space, addr, size, true)?;
        let old = self.read_at(loc, size);
        let new = update(old) & mask;
        self.write_at(loc, size, new);
        Ok((old, new))
    }

    fn fence(&mut self, _who: Who, _scope: FenceScope) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Who = Who {
        block: 0,
        thread: 0,
    };

    #[test]
    fn buffers_round_trip_and_faults_name_the_buffer() {
        let mut m = Flat::new(1024);
        let a = m.alloc_global("a", &[1, 2, 3, 4, 5, 6, 7, 8]);
        let c = m.alloc_global("c", &[0; 512]);
        assert!(c > a + 8);
        assert_eq!(m.load(W, MemSpace::Global, a, 4).unwrap(), 0x0403_0201);
        m.store(W, MemSpace::Global, c + 508, 4, 0xdead_beef)
            .unwrap();
        assert_eq!(m.read_global(c)[508..], [0xef, 0xbe, 0xad, 0xde]);
        let e = m.load(W, MemSpace::Global, c + 516, 4).unwrap_err();
        assert_eq!(e.kind, MemErrorKind::OutOfBounds);
        assert!(
            e.message
                .contains("4 bytes past the end of buffer `c` (512 bytes at"),
            "{}",
            e.message
        );
        let e = m.load(W, MemSpace::Global, a + 2, 4).unwrap_err();
        assert_eq!(e.kind, MemErrorKind::Misaligned);
    }

    #[test]
    fn warp_wide_accesses_equal_lane_by_lane_ones() {
        // Addresses around page and buffer boundaries, misaligned and out-of-bounds lanes.
        let mk = || {
            let mut m = Flat::new(1024);
            let a = m.alloc_global("a", &[7; 2 * PAGE_SIZE + 64]);
            let b = m.alloc_global("b", &[3; 256]);
            m.create_block(2, 128, 32);
            (m, a, b)
        };
        let (_, a, b) = mk();
        let mut x = 99u64;
        for round in 0..400 {
            let space = if round % 3 == 0 {
                MemSpace::Shared
            } else {
                MemSpace::Global
            };
            let size = [1u32, 2, 4, 8][round % 4];
            let mut addrs = [0u64; 64];
            let mut vals = [0u64; 64];
            for l in 0..32 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let base = match space {
                    MemSpace::Shared => 0,
                    _ if x >> 60 == 0 => b,
                    _ => a,
                };
                let spread = if round % 5 == 0 {
                    2 * PAGE_SIZE as u64 + 80
                } else {
                    40
                };
                let mut addr = base + (PAGE_SIZE as u64 - 32) + (x >> 20) % spread;
                if space == MemSpace::Shared {
                    addr = (x >> 20) % 136;
                }
                if x >> 58 != 0 || round % 7 != 0 {
                    addr &= !(size as u64 - 1);
                }
                addrs[l] = addr;
                vals[l] = x;
            }
            let exec = if round % 2 == 0 {
                u32::MAX as u64
            } else {
                x >> 32
            };
            let (mut fast, ..) = mk();
            let (mut slow, ..) = mk();
            let r_fast = fast.store_lanes(2, 0, space, size, exec, &addrs, &vals);
            let mut r_slow = Ok(());
            for l in (0..32).filter(|l| exec >> l & 1 == 1) {
                let who = Who {
                    block: 2,
                    thread: l as u32,
                };
                if let Err(e) = slow.store(who, space, addrs[l], size, vals[l]) {
                    r_slow = Err((l, e));
                    break;
                }
            }
            assert_eq!(r_fast, r_slow, "round {round}");
            assert_eq!(fast.read_global(a), slow.read_global(a));
            assert_eq!(fast.read_global(b), slow.read_global(b));
            let mut out_fast = [0u64; 64];
            let r_fast = fast.load_lanes(2, 0, space, size, exec, &addrs, &mut out_fast);
            let mut out_slow = [0u64; 64];
            let mut r_slow = Ok(());
            for l in (0..32).filter(|l| exec >> l & 1 == 1) {
                let who = Who {
                    block: 2,
                    thread: l as u32,
                };
                match slow.load(who, space, addrs[l], size) {
                    Ok(v) => out_slow[l] = v,
                    Err(e) => {
                        r_slow = Err((l, e));
                        break;
                    }
                }
            }
            assert_eq!(r_fast, r_slow, "round {round}");
            assert_eq!(out_fast, out_slow, "round {round}");
            if space == MemSpace::Shared {
                let w = Who {
                    block: 2,
                    thread: 0,
                };
                for off in (0..128).step_by(8) {
                    assert_eq!(fast.load(w, space, off, 8), slow.load(w, space, off, 8));
                }
            }
        }
    }

    #[test]
    fn snapshots_share_pages_until_written() {
        let mut m = Flat::new(1024);
        let a = m.alloc_global("a", &[0; 64]);
        let snap = m.clone();
        m.store(W, MemSpace::Global, a, 8, 7).unwrap();
        let mut s = snap;
        assert_eq!(s.load(W, MemSpace::Global, a, 8).unwrap(), 0);
        assert_eq!(m.load(W, MemSpace::Global, a, 8).unwrap(), 7);
    }

    #[test]
    fn shared_local_and_generic_windows() {
        let mut m = Flat::new(8192);
        m.create_block(3, 64, 2);
        let w = Who {
            block: 3,
            thread: 1,
        };
        m.store(w, MemSpace::Shared, 8, 4, 9).unwrap();
        assert_eq!(
            m.load(
                Who {
                    block: 3,
                    thread: 0
                },
                MemSpace::Shared,
                8,
                4
            )
            .unwrap(),
            9
        );
        m.store(w, MemSpace::Local, 5000, 8, 11).unwrap();
        assert_eq!(m.load(w, MemSpace::Local, 5000, 8).unwrap(), 11);
        assert_eq!(
            m.load(
                Who {
                    block: 3,
                    thread: 0
                },
                MemSpace::Local,
                5000,
                8
            )
            .unwrap(),
            0
        );
        assert!(m.load(w, MemSpace::Local, 8192, 4).is_err());
        assert!(m.load(w, MemSpace::Shared, 64, 4).is_err());
        let g = to_generic(MemSpace::Shared, 8);
        assert_eq!(from_generic(g), (MemSpace::Shared, 8));
        assert_eq!(from_generic(0x1234), (MemSpace::Global, 0x1234));
        let (old, new) = m.atomic(w, MemSpace::Shared, 8, 4, |v| v + 1).unwrap();
        assert_eq!((old, new), (9, 10));
    }
}
