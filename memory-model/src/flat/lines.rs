//! Line-granular DRAM access for the cached model ([`crate::cached`]).

use super::{Flat, Segment};
use crate::{MemSpace, Who};
use std::sync::Arc;

/// Line-granular DRAM access for the cached model ([`cached`](crate::cached)): a cache line of global or local
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
