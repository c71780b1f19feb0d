//! A warp's register file at one call depth, stored as shared register rows (issue 14, "cheaper
//! states").
//!
//! A row is one register of every lane (`warp_size` words, structure of arrays as before:
//! docs/internals/machine.md). Each row sits behind its own [`Arc`] and is copied on write
//! ([`Regs::row_mut`], through `Arc::make_mut`): an explorer clones the machine once per
//! successor and the step that follows writes a few registers, so a clone of a warp copies one
//! pointer per register and the step copies only the rows it writes (a 32-lane warp of 85
//! registers used to copy 21.7 KB per clone).
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

/// The registers of every lane of a warp at one call depth (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct Regs {
    /// Lanes per row.
    ws: usize,
    rows: Vec<Row>,
}

impl PartialEq for Regs {
    fn eq(&self, other: &Regs) -> bool {
        self.ws == other.ws
            && self.rows.len() == other.rows.len()
            && self
                .rows
                .iter()
                .zip(&other.rows)
                .all(|(a, b)| Arc::ptr_eq(a, b) || ***a == ***b)
    }
}

impl Regs {
    /// `nregs` registers (at least one) of `ws` lanes, all zero. The rows share one zero row
    /// until written.
    pub fn new(ws: usize, nregs: usize) -> Regs {
        let zero: Row = Arc::new(Fingerprinted::new(SmallVec::from_elem(0, ws)));
        Regs {
            ws,
            rows: vec![zero; nregs.max(1)],
        }
    }

    /// Makes room for `nregs` registers (never shrinks: other lanes may use more).
    pub fn ensure(&mut self, nregs: usize) {
        if self.rows.len() < nregs {
            let zero: Row = Arc::new(Fingerprinted::new(SmallVec::from_elem(0, self.ws)));
            self.rows.resize(nregs, zero);
        }
    }

    /// The number of registers.
    #[inline]
    pub fn count(&self) -> usize {
        self.rows.len()
    }

    /// Register `reg` of every lane, `None` past the registers.
    #[inline]
    pub fn row(&self, reg: usize) -> Option<&[u64]> {
        self.rows.get(reg).map(|r| &r[..])
    }

    /// Register `reg` of every lane to write, copied first if a clone shares it; forgets its
    /// fingerprint. `None` past the registers.
    #[inline]
    pub fn row_mut(&mut self, reg: usize) -> Option<&mut [u64]> {
        self.rows.get_mut(reg).map(|r| &mut Arc::make_mut(r)[..])
    }

    /// Register `reg` of `lane`, `None` past the registers or lanes.
    #[inline]
    pub fn get(&self, reg: usize, lane: usize) -> Option<u64> {
        self.rows.get(reg)?.get(lane).copied()
    }

    /// Register `reg` of `lane`; panics past the registers or lanes, as indexing a slice does
    /// (callers index registers the program environment declared).
    #[inline]
    pub fn at(&self, reg: usize, lane: usize) -> u64 {
        self.rows[reg][lane]
    }

    /// Writes register `reg` of `lane` (see [`Regs::row_mut`]); panics past the registers or
    /// lanes, as indexing a slice does.
    #[inline]
    pub fn set(&mut self, reg: usize, lane: usize, value: u64) {
        Arc::make_mut(&mut self.rows[reg])[lane] = value;
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
        let Some(row) = self.rows.get(reg) else {
            return 0;
        };
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
        Regs {
            ws,
            rows: words
                .chunks(ws)
                .map(|row| Arc::new(Fingerprinted::new(row.iter().copied().collect())))
                .collect(),
        }
    }

    /// How many distinct rows this file and `other` hold between them that are not shared
    /// (for measuring what copy-on-write saves).
    #[cfg(test)]
    pub fn unshared_rows(&self, other: &Regs) -> usize {
        self.rows
            .iter()
            .zip(&other.rows)
            .filter(|(a, b)| !Arc::ptr_eq(a, b))
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
