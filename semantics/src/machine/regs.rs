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
//!
//! A file that no clone shares is stored densely instead (issue 15, Build 3: the cached run's
//! speed): one vector of `count * ws` words, a row one index away. A plain `run` never clones
//! its machine, and on the shared rows every register access of the warp-wide fast paths paid
//! three dependent loads (chunk, row, the row's inline-or-spilled header), most of them cache
//! misses at 65,536 threads. The first clone of a dense file cuts it into shared rows, which
//! that clone and every later one share (and memoise fingerprints in); the file's own first
//! write after that takes the rows over, so a file once cloned is shared rows on both sides,
//! as every state an explorer keeps is. A dense file never cloned memoises no fingerprint
//! (nothing shares it to reuse one).

use memory_model::{Fingerprinted, StateHasher};
use smallvec::SmallVec;
use std::hash::Hasher;
use std::sync::{Arc, OnceLock};

/// One register of every lane (inline up to 32 lanes: one allocation per row copy).
type Lanes = SmallVec<[u64; 32]>;

/// A shared register row with its memoised fingerprint.
type Row = Arc<Fingerprinted<Lanes>>;

/// Rows per chunk: the row table is shared in chunks too, so that a warp clone copies one
/// pointer per chunk and a step copies the chunks of the rows it writes (8 pointers each).
const CHUNK: usize = 8;

/// [`CHUNK`] consecutive rows (past the register count, zero rows never written).
type Chunk = Arc<[Row; CHUNK]>;

/// How the rows are stored: dense until the file is first cloned, shared rows from then on.
#[derive(Debug)]
enum Storage {
    /// Every row in one vector, `words[reg * ws + lane]`: a file no clone shares. A plain
    /// run never clones its machine, and reaching a row here is one index, where the shared
    /// rows cost three dependent loads (chunk, row, its inline-or-spilled header) on every
    /// register access of the hot paths.
    Dense {
        words: Vec<u64>,
        /// The same rows shared, made by the first clone and handed to every later one (and
        /// their fingerprints memoised there), so that a dense state the explorer keeps and
        /// clones again is cut into rows once. The first write takes them over and the file
        /// becomes [`Storage::Rows`]: a file once cloned is being explored, and its clones
        /// share its rows, so it may not write the vector they were copied from.
        rows: OnceLock<Vec<Chunk>>,
    },
    /// The shared rows (see the module documentation), in chunks of [`CHUNK`].
    Rows(Vec<Chunk>),
}

impl Storage {
    fn dense() -> Storage {
        Storage::Dense {
            words: Vec::new(),
            rows: OnceLock::new(),
        }
    }
}

/// The registers of every lane of a warp at one call depth (see the module documentation).
#[derive(Debug)]
pub(crate) struct Regs {
    /// Lanes per row.
    ws: usize,
    /// Registers.
    count: usize,
    storage: Storage,
}

impl Default for Regs {
    fn default() -> Regs {
        Regs {
            ws: 0,
            count: 0,
            storage: Storage::dense(),
        }
    }
}

impl Clone for Regs {
    /// A clone shares rows: a dense file is cut into shared rows once, at its first clone,
    /// and every clone shares those; clones of shared rows stay shared rows. A clone costs
    /// one pointer per chunk.
    fn clone(&self) -> Regs {
        let chunks = match &self.storage {
            Storage::Rows(chunks) => chunks,
            Storage::Dense { words, rows } => {
                rows.get_or_init(|| Self::chunks_of(self.ws, self.count, words))
            }
        };
        let storage = Storage::Rows(chunks.clone());
        Regs {
            ws: self.ws,
            count: self.count,
            storage,
        }
    }
}

impl PartialEq for Regs {
    fn eq(&self, other: &Regs) -> bool {
        if self.ws != other.ws || self.count != other.count {
            return false;
        }
        match (&self.storage, &other.storage) {
            (Storage::Rows(a), Storage::Rows(b)) => (0..self.count).all(|r| {
                let (a, b) = (&a[r / CHUNK][r % CHUNK], &b[r / CHUNK][r % CHUNK]);
                Arc::ptr_eq(a, b) || ***a == ***b
            }),
            _ => (0..self.count).all(|r| self.row(r) == other.row(r)),
        }
    }
}

impl Regs {
    /// `nregs` registers (at least one) of `ws` lanes, all zero, stored densely until the
    /// file is cloned.
    pub fn new(ws: usize, nregs: usize) -> Regs {
        let mut regs = Regs {
            ws,
            count: 0,
            storage: Storage::dense(),
        };
        regs.ensure(nregs.max(1));
        regs
    }

    /// The shared rows of `count` dense rows of `ws` lanes. Zero rows (never written, as in
    /// [`Regs::ensure`], or written zero) and rows past the count, to fill the last chunk,
    /// share one zero row.
    fn chunks_of(ws: usize, count: usize, words: &[u64]) -> Vec<Chunk> {
        let zero: Row = Arc::new(Fingerprinted::new(SmallVec::from_elem(0, ws)));
        let row = |r: usize| match words.get(r * ws..(r + 1) * ws) {
            Some(lanes) if r < count && lanes.iter().any(|&w| w != 0) => {
                Arc::new(Fingerprinted::new(SmallVec::from_slice(lanes)))
            }
            _ => Arc::clone(&zero),
        };
        (0..count.div_ceil(CHUNK))
            .map(|c| Arc::new(std::array::from_fn(|k| row(c * CHUNK + k))))
            .collect()
    }

    /// Makes room for `nregs` registers (never shrinks: other lanes may use more).
    pub fn ensure(&mut self, nregs: usize) {
        if self.count >= nregs {
            return;
        }
        self.take_over_rows();
        match &mut self.storage {
            Storage::Dense { words, .. } => words.resize(nregs * self.ws, 0),
            Storage::Rows(chunks) => {
                let zero: Row = Arc::new(Fingerprinted::new(SmallVec::from_elem(0, self.ws)));
                // Rows past the old count in its last chunk are zero rows never written: they
                // stay.
                while chunks.len() * CHUNK < nregs {
                    chunks.push(Arc::new(std::array::from_fn(|_| Arc::clone(&zero))));
                }
            }
        }
        self.count = nregs;
    }

    /// The number of registers.
    #[inline]
    pub fn count(&self) -> usize {
        self.count
    }

    /// Register `reg` of every lane, `None` past the registers.
    #[inline]
    pub fn row(&self, reg: usize) -> Option<&[u64]> {
        // Plain branches, not `bool::then` with a closure: this is on every register read of
        // the fast paths, and the closure showed in profiles as a call of its own.
        if reg >= self.count {
            return None;
        }
        match &self.storage {
            Storage::Dense { words, .. } => words.get(reg * self.ws..(reg + 1) * self.ws),
            Storage::Rows(chunks) => Some(&chunks[reg / CHUNK][reg % CHUNK][..]),
        }
    }

    /// Register `reg` of every lane to write, copied first (with its chunk) if a clone shares
    /// it; forgets its fingerprint. `None` past the registers.
    #[inline]
    pub fn row_mut(&mut self, reg: usize) -> Option<&mut [u64]> {
        if reg >= self.count {
            return None;
        }
        if let Storage::Dense { rows, .. } = &self.storage
            && rows.get().is_some()
        {
            self.take_over_rows();
        }
        match &mut self.storage {
            Storage::Dense { words, .. } => words.get_mut(reg * self.ws..(reg + 1) * self.ws),
            Storage::Rows(chunks) => {
                let chunk = Arc::make_mut(&mut chunks[reg / CHUNK]);
                Some(&mut Arc::make_mut(&mut chunk[reg % CHUNK])[..])
            }
        }
    }

    /// A dense file that was cloned becomes the rows its clones share (see [`Storage::Dense`]).
    #[cold]
    fn take_over_rows(&mut self) {
        if let Storage::Dense { rows, .. } = &mut self.storage
            && let Some(chunks) = rows.take()
        {
            self.storage = Storage::Rows(chunks);
        }
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
        match self.row(reg) {
            Some(row) => row[lane],
            None => panic!("register {reg} of {}", self.count),
        }
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
    /// same mask for every call on a row, see the module documentation), memoised with a
    /// shared row (a dense file never cloned computes it afresh). `fresh` computes it without reading or
    /// filling the memo (the reference a test compares the memo with).
    pub fn row_fingerprint(&self, reg: usize, real: u64, fresh: bool) -> u128 {
        let Some(lanes) = self.row(reg) else {
            return 0;
        };
        let compute = |lanes: &[u64]| {
            let mut h = StateHasher::new();
            for l in super::warp::lanes(real & super::warp::lane_mask(lanes.len().min(64) as u32)) {
                h.write_u64(lanes[l]);
            }
            h.finish128()
        };
        let shared = match &self.storage {
            Storage::Rows(chunks) => Some(chunks),
            Storage::Dense { rows, .. } => rows.get(),
        };
        match shared {
            Some(chunks) if !fresh => {
                chunks[reg / CHUNK][reg % CHUNK].fingerprint(|row: &Lanes| compute(row))
            }
            _ => compute(lanes),
        }
    }

    /// Whether the rows are stored densely (not shared with any clone).
    #[cfg(test)]
    fn is_dense(&self) -> bool {
        matches!(self.storage, Storage::Dense { .. })
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
    /// (for measuring what copy-on-write saves; a dense file shares none).
    #[cfg(test)]
    pub fn unshared_rows(&self, other: &Regs) -> usize {
        (0..self.count.min(other.count))
            .filter(|&r| match (&self.storage, &other.storage) {
                (Storage::Rows(a), Storage::Rows(b)) => {
                    !Arc::ptr_eq(&a[r / CHUNK][r % CHUNK], &b[r / CHUNK][r % CHUNK])
                }
                _ => true,
            })
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::Regs;

    #[test]
    fn a_clone_shares_rows_until_one_is_written() {
        // A clone of a file is made of shared rows (a new file is dense until cloned).
        let mut a = Regs::new(32, 4).clone();
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
    fn a_file_is_dense_until_cloned_and_its_clone_is_equal_and_independent() {
        let mut a = Regs::new(32, 11);
        assert!(a.is_dense());
        for r in 0..11 {
            a.set(r, r % 32, r as u64 + 1);
        }
        let before: Vec<u128> = (0..11)
            .map(|r| a.row_fingerprint(r, u32::MAX as u64, false))
            .collect();
        let mut b = a.clone();
        assert!(a.is_dense() && !b.is_dense(), "the clone takes shared rows");
        assert_eq!(a, b);
        let c = b.clone();
        assert_eq!(b.unshared_rows(&c), 0, "a clone of shared rows shares them");
        assert_eq!(
            a.clone().unshared_rows(&b),
            0,
            "every clone of a file shares its rows"
        );
        for (r, fingerprint) in before.iter().enumerate() {
            assert_eq!(b.row(r), a.row(r));
            assert_eq!(b.row_fingerprint(r, u32::MAX as u64, false), *fingerprint);
        }
        b.set(4, 0, 99);
        assert_eq!((a.at(4, 0), b.at(4, 0), c.at(4, 0)), (0, 99, 0));
        a.set(10, 0, 7);
        assert!(
            !a.is_dense(),
            "a cloned file's write takes the shared rows over"
        );
        assert_eq!((a.at(10, 0), b.at(10, 0), c.at(10, 0)), (7, 0, 0));
        assert_eq!(a.unshared_rows(&c), 1, "only the written row is copied");
        // Growing keeps the values, in either storage.
        a.ensure(20);
        b.ensure(20);
        assert_eq!((a.count(), a.at(3, 3), a.at(19, 31)), (20, 4, 0));
        assert_eq!((b.count(), b.at(3, 3), b.at(19, 31)), (20, 4, 0));
        assert_eq!(a.get(20, 0), None);
        assert_eq!(a.get(0, 32), None);
    }

    #[test]
    fn a_write_forgets_the_row_fingerprint() {
        let mut a = Regs::new(32, 2).clone();
        let before = a.row_fingerprint(0, u32::MAX as u64, false);
        a.set(0, 5, 1);
        let after = a.row_fingerprint(0, u32::MAX as u64, false);
        assert_ne!(before, after);
        assert_eq!(after, a.row_fingerprint(0, u32::MAX as u64, true));
        // Lanes outside the mask do not count.
        let mut b = Regs::new(32, 2).clone();
        let zeros = b.row_fingerprint(0, 0xFFFF, true);
        b.set(0, 31, 1);
        assert_eq!(b.row_fingerprint(0, 0xFFFF, false), zeros);
    }
}
