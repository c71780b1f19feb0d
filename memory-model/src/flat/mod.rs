//! [`Flat`]: sequentially consistent memory (`--memory flat`); every access completes inside the
//! call. `.global` holds module variables and launch buffers (with a guard gap between buffers),
//! `.shared` one segment per resident block, `.local` per thread pages grown up to a bound,
//! `.const` the module constants and `.param` the kernel parameter buffer (both read-only).
//!
//! * [`segment`]: allocations as copy-on-write pages;
//! * [`lines`]: line-granular DRAM access for the cached model;
//! * [`warp`]: a warp's accesses at once, resolving each page once per run of lanes.

mod lines;
mod segment;
mod warp;

use crate::{
    BUFFER_ALIGN, BlockTable, Fingerprinted, GLOBAL_HEAP_BASE, MemError, MemErrorKind, MemSpace,
    MemorySystem, Scope, Who, space_name,
};
pub(crate) use segment::{PAGE_SHIFT, Page, read_le, write_le, zero_page};
pub use segment::{PAGE_SIZE, Segment};
use std::sync::Arc;

/// One thread's `.local` memory: pages grown on demand up to the bound.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LocalMem {
    pub(crate) pages: Vec<Option<Page>>,
}

/// The per-block state: shared memory and the threads' local memories.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BlockMem {
    pub(crate) shared: Segment,
    pub(crate) local: Vec<LocalMem>,
}

/// Sequentially consistent flat memory (ARCHITECTURE.md, `--memory flat`).
#[derive(Debug, Clone, PartialEq)]
pub struct Flat {
    /// Module `.global` variables and launch buffers, sorted by base. Shared copy-on-write
    /// (written through `Arc::make_mut`) with their fingerprint memoized: most steps store
    /// nothing, and explorers clone the memory for every successor state.
    pub(crate) global: Arc<Fingerprinted<Vec<Segment>>>,
    /// Module `.const` variables, sorted by base.
    pub(crate) constant: Vec<Segment>,
    /// The kernel parameter buffer (read-only: shared by every snapshot).
    pub(crate) param: Arc<Segment>,
    /// Per resident block, its shared and local memory. The whole table is shared copy-on-write
    /// with its fingerprint memoized: most kernels an explorer meets touch no shared or local
    /// memory, so a snapshot copies one pointer instead of one per block.
    pub(crate) blocks: Arc<Fingerprinted<BlockTable<BlockMem>>>,
    /// Bytes of `.local` memory per thread.
    pub(crate) local_limit: u64,
    /// Index of the global segment hit last (the hot path checks it first).
    pub(crate) last_global: usize,
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

    /// How many distinct lines of `line_bytes` bytes (a power of two) the global segments
    /// span: a bound on the global lines a cache can ever hold, since an access outside every
    /// segment faults before it is issued.
    pub fn global_lines(&self, line_bytes: u64) -> u64 {
        let line = line_bytes.max(1);
        self.global
            .iter()
            .filter(|s| s.len > 0)
            .map(|s| (s.base + s.len - 1) / line - s.base / line + 1)
            .sum()
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

    fn fence(&mut self, _who: Who, _scope: Scope) {}
}

#[cfg(test)]
mod tests;
