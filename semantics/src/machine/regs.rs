//! A warp's register file at one call depth, stored as shared register rows (issue 14, "cheaper
//! states").
//!
//! A row is one register of every lane (`warp_size` words, structure of arrays as before:
//! docs/internals/machine.md). Each row sits behind its own [`Arc`] and is copied on write
//! ([`Regs::row_mut`], through `Arc::make_mut`): an explorer clones the machine once per
//! successor and the step that follows writes a few registers. The table of rows is shared
//! the same way in chunks of [`CHUNK`] rows, so a clone of a warp copies one pointer per chunk
//! and the step copies only the chunks and rows it writes (a 32-lane warp of 85 registers used
//! to copy 21.7 KB per clone; now 88 bytes, and about 400 per register row written).
//!
//! Each row memoises its fingerprint ([`Fingerprinted`]): the canonical state hash
//! (`state_hash`) combines the row fingerprints of rows whose every real lane is kept, so a
//! successor state rehashes only the rows its step wrote. The memo lives with the row behind
//! the `Arc` and the only mutable access ([`Regs::row_mut`]) forgets it, so it cannot go stale.
//! A row's fingerprint covers the warp's real lanes (`Warp::real`, fixed for a warp's life);
//! rows are created by their warp ([`Regs::new`], [`Regs::ensure`]) and shared only between
//! clones of it, never moved to another warp, so the memo is always taken over the same lanes.

use memory_model::{Fingerprinted, StateHasher};
use smallvec::SmallVec;
use std::hash::Hasher;
use std::sync::Arc;

/// One register of every lane (inline up to 32 lanes: one allocation per row copy).
type Lanes = SmallVec<[u64; 32]>;

/// A shared register row with its memoised fingerprint.
type Row = Arc<Fingerprinted<Lanes>>;

/// Rows per chunk: the row table is shared in chunks too, so that a warp clone copies one
/// pointer per chunk and a step copies the chunks of the rows it writes (8 pointers each).
const CHUNK: usize = 8;

/// [`CHUNK`] consecutive rows (past the register count, zero rows never written).
type Chunk = Arc<[Row; CHUNK]>;

/// The registers of every lane of a warp at one call depth (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct Regs {
    /// Lanes per row.
    ws: usize,
    /// Registers.
    count: usize,
    chunks: Vec<Chunk>,
}

impl PartialEq for Regs {
    fn eq(&self, other: &Regs) -> bool {
        self.ws == other.ws
            && self.count == other.count
            && (0..self.count).all(|r| {
                let (a, b) = (self.shared_row(r), other.shared_row(r));
                Arc::ptr_eq(a, b) || ***a == ***b
            })
    }
}

impl Regs {
    /// `nregs` registers (at least one) of `ws` lanes, all zero. The rows share one zero row
    /// until written.
    pub fn new(ws: usize, nregs: usize) -> Regs {
        let mut regs = Regs {
            ws,
            count: 0,
            chunks: Vec::new(),
        };
        regs.ensure(nregs.max(1));
        regs
    }

    /// Makes room for `nregs` registers (never shrinks: other lanes may use more).
    pub fn ensure(&mut self, nregs: usize) {
        if self.count >= nregs {
            return;
        }
        let zero: Row = Arc::new(Fingerprinted::new(SmallVec::from_elem(0, self.ws)));
        // Rows past the old count in its last chunk are zero rows never written: they stay.
        while self.chunks.len() * CHUNK < nregs {
            self.chunks
                .push(Arc::new(std::array::from_fn(|_| Arc::clone(&zero))));
        }
        self.count = nregs;
    }

    /// The number of registers.
    #[inline]
    pub fn count(&self) -> usize {
        self.count
    }

    /// The shared row of register `reg` (below the count).
    #[inline]
    fn shared_row(&self, reg: usize) -> &Row {
        &self.chunks[reg / CHUNK][reg % CHUNK]
    }

    /// Register `reg` of every lane, `None` past the registers.
    #[inline]
    pub fn row(&self, reg: usize) -> Option<&[u64]> {
        // A plain branch, not `bool::then` with a closure: this is on every register read of
        // the fast paths, and the closure showed in profiles as a call of its own.
        if reg < self.count {
            Some(&self.shared_row(reg)[..])
        } else {
            None
        }
    }

    /// Register `reg` of every lane to write, copied first (with its chunk) if a clone shares
    /// it; forgets its fingerprint. `None` past the registers.
    #[inline]
    pub fn row_mut(&mut self, reg: usize) -> Option<&mut [u64]> {
        if reg >= self.count {
            return None;
        }
        let chunk = Arc::make_mut(&mut self.chunks[reg / CHUNK]);
        Some(&mut Arc::make_mut(&mut chunk[reg % CHUNK])[..])
    }

    /// Register `reg` of `lane`, `None` past the registers or lanes.
    #[inline]
    pub fn get(&self, reg: usize, lane: usize) -> Option<u64> {
        self.row(reg)?.get(lane).copied()
    }

    /// Register `reg` of `lane`; panics past the registers or lanes, as indexing a slice does
    /// (callers index registers the program environment declared).
    #[inline]
    pub fn at(&self, reg: usize, lane: usize) -> u64 {
        assert!(reg < self.count, "register {reg} of {}", self.count);
        self.shared_row(reg)[lane]
    }

    /// Writes register `reg` of `lane` (see [`Regs::row_mut`]); panics past the registers or
    /// lanes, as indexing a slice does.
    #[inline]
    pub fn set(&mut self, reg: usize, lane: usize, value: u64) {
        match self.row_mut(reg) {
            Some(row) => row[lane] = value,
            None => panic!("register {reg} of {}", self.count),
        }
    }

    /// A slot to write register `reg` of `lane`, `None` past the registers or lanes.
    #[inline]
    pub fn slot(&mut self, reg: usize, lane: usize) -> Option<&mut u64> {
        self.row_mut(reg)?.get_mut(lane)
    }

    /// The fingerprint of register `reg` over the lanes of `real` (the warp's real lanes: the
    /// same mask for every call on a row, see the module documentation), memoised with the
    /// row. `fresh` computes it without reading or filling the memo (the reference a test
    /// compares the memo with).
    pub fn row_fingerprint(&self, reg: usize, real: u64, fresh: bool) -> u128 {
        if reg >= self.count {
            return 0;
        }
        let row = self.shared_row(reg);
        let compute = |lanes: &Lanes| {
            let mut h = StateHasher::new();
            for l in super::warp::lanes(real & super::warp::lane_mask(lanes.len().min(64) as u32)) {
                h.write_u64(lanes[l]);
            }
            h.finish128()
        };
        if fresh {
            compute(row)
        } else {
            row.fingerprint(compute)
        }
    }

    /// The registers of the flat structure-of-arrays `words` (`words[reg * ws + lane]`).
    #[cfg(test)]
    pub fn from_flat(ws: usize, words: &[u64]) -> Regs {
        let mut regs = Regs::new(ws, words.len() / ws);
        for (r, row) in words.chunks(ws).enumerate() {
            regs.row_mut(r).unwrap().copy_from_slice(row);
        }
        regs
    }

    /// How many distinct rows this file and `other` hold between them that are not shared
    /// (for measuring what copy-on-write saves).
    #[cfg(test)]
    pub fn unshared_rows(&self, other: &Regs) -> usize {
        (0..self.count.min(other.count))
            .filter(|&r| !Arc::ptr_eq(self.shared_row(r), other.shared_row(r)))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::Regs;

    #[test]
    fn a_clone_shares_rows_until_one_is_written() {
        let mut a = Regs::new(32, 4);
        a.set(1, 3, 7);
        let mut b = a.clone();
        assert_eq!(a.unshared_rows(&b), 0);
        b.set(2, 0, 9);
        assert_eq!(a.unshared_rows(&b), 1);
        assert_eq!((a.at(2, 0), b.at(2, 0), b.at(1, 3)), (0, 9, 7));
        assert_ne!(a, b);
        a.set(2, 0, 9);
        assert_eq!(a, b, "equal values compare equal, shared or not");
    }

    #[test]
    fn a_write_forgets_the_row_fingerprint() {
        let mut a = Regs::new(32, 2);
        let before = a.row_fingerprint(0, u32::MAX as u64, false);
        a.set(0, 5, 1);
        let after = a.row_fingerprint(0, u32::MAX as u64, false);
        assert_ne!(before, after);
        assert_eq!(after, a.row_fingerprint(0, u32::MAX as u64, true));
        // Lanes outside the mask do not count.
        let mut b = Regs::new(32, 2);
        let zeros = b.row_fingerprint(0, 0xFFFF, true);
        b.set(0, 31, 1);
        assert_eq!(b.row_fingerprint(0, 0xFFFF, false), zeros);
    }
}
