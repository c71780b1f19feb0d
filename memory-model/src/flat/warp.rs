//! Warp-wide accesses of the flat memory: one `ld`/`st` of a warp's lanes at once.

use super::{Flat, Loc, PAGE_SHIFT, PAGE_SIZE, Segment, read_le, write_le, zero_page};
use crate::{MemError, MemSpace, MemorySystem, Who};
use std::sync::Arc;

/// The lanes of a warp access that land in one page of one segment, from the run's first lane
/// on: they read or write through one page reference.
#[derive(Debug, Clone, Copy)]
struct PageRun {
    /// The address the segment starts at, and its length in bytes.
    lo: u64,
    len: u64,
    /// The page of the segment the run's first lane lands in.
    page: usize,
    size: u32,
}

impl PageRun {
    /// The run that starts with the lane accessing `size` bytes at `addr`, `off` bytes into a
    /// segment of `len` bytes.
    #[inline]
    fn new(addr: u64, off: u64, len: u64, size: u32) -> PageRun {
        PageRun {
            lo: addr - off,
            len,
            page: (off >> PAGE_SHIFT) as usize,
            size,
        }
    }

    /// The offset in the run's page of an address in the run.
    #[inline]
    fn at(&self, addr: u64) -> usize {
        (addr.wrapping_sub(self.lo) as usize) & (PAGE_SIZE - 1)
    }

    /// Drops the lowest lane of `m` (the one just accessed) and returns the next, if its access
    /// is aligned and lies whole in the run's segment and page.
    #[inline]
    fn next_lane(&self, m: &mut u64, addrs: &[u64]) -> Option<usize> {
        *m &= *m - 1;
        if *m == 0 {
            return None;
        }
        let l = m.trailing_zeros() as usize;
        let a = addrs[l];
        let off = a.wrapping_sub(self.lo);
        let holds = a & (self.size as u64 - 1) == 0
            && off < self.len
            && self.len - off >= self.size as u64
            && (off >> PAGE_SHIFT) as usize == self.page;
        holds.then_some(l)
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
            let run = PageRun::new(addrs[l], off, seg.len, size);
            let bytes = seg.pages[run.page].as_deref();
            loop {
                out[l] = match bytes {
                    Some(p) => read_le(p, run.at(addrs[l]), size),
                    None => 0,
                };
                match run.next_lane(&mut m, addrs) {
                    Some(next) => l = next,
                    None => break,
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
            let run = PageRun::new(addrs[l], off, seg.len, size);
            let page_len = seg.page_len(run.page);
            let p = seg.pages[run.page].get_or_insert_with(|| zero_page(page_len));
            let bytes = Arc::make_mut(p);
            loop {
                write_le(bytes, run.at(addrs[l]), size, vals[l]);
                match run.next_lane(&mut m, addrs) {
                    Some(next) => l = next,
                    None => break,
                }
            }
        }
        Ok(())
    }
}
