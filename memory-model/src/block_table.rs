//! [`BlockTable`]: resident thread blocks by linear block index, with O(1) lookup.
//!
//! Blocks become resident in (roughly) ascending index order and leave in any order, so the table
//! is a window `base..base + slots.len()` of the index space: a lookup is a subtraction and an
//! index, where a `BTreeMap` walks nodes (the machine looks a block up on every warp step, the
//! memory on every `.shared`/`.local` access). The window shrinks from both ends as blocks leave;
//! an empty slot inside it costs one pointer. Iteration is in ascending block index, like a
//! `BTreeMap`'s. The window is inline up to [`INLINE_SLOTS`] blocks (a litmus-size launch), so
//! cloning the table allocates nothing; beyond that it moves to the heap, and a block leaving
//! the front shifts the window (rare next to the steps a block takes).
//!
//! Blocks are shared behind [`Arc`] and copied on write ([`BlockTable::get_mut`]): explorers
//! clone the whole machine once per successor, and a step changes one block at most, so a
//! clone copies pointers and the step copies only the block it touches.
//!
//! For the same reason each entry memoizes its block's state fingerprint
//! ([`BlockTable::fingerprints`], [`Fingerprinted`]): a successor state shares every block but
//! one with its parent, so its fingerprint rehashes one block.

use crate::Fingerprinted;
use smallvec::SmallVec;
use std::ops::Deref;
use std::sync::Arc;

/// Resident blocks held without a heap allocation.
pub const INLINE_SLOTS: usize = 4;

/// A map from block index to `T`, for the blocks resident at a time.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockTable<T> {
    /// Block index of `slots[0]`.
    base: u32,
    slots: SmallVec<[Option<Arc<Fingerprinted<T>>>; INLINE_SLOTS]>,
    len: usize,
}

impl<T> Default for BlockTable<T> {
    fn default() -> Self {
        BlockTable {
            base: 0,
            slots: SmallVec::new(),
            len: 0,
        }
    }
}

impl<T> BlockTable<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of blocks in the table.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn get(&self, id: u32) -> Option<&T> {
        let i = id.wrapping_sub(self.base) as usize;
        self.slots.get(i)?.as_deref().map(Deref::deref)
    }

    /// The block, copied first if a clone of the table shares it. Forgets its fingerprint.
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> Option<&mut T>
    where
        T: Clone,
    {
        let i = id.wrapping_sub(self.base) as usize;
        let entry = Arc::make_mut(self.slots.get_mut(i)?.as_mut()?);
        Some(&mut **entry)
    }

    /// Inserts block `id`, returning the value it replaces.
    pub fn insert(&mut self, id: u32, value: T) -> Option<T>
    where
        T: Clone,
    {
        if self.slots.is_empty() {
            self.base = id;
        } else if id < self.base {
            self.slots
                .insert_many(0, std::iter::repeat_n(None, (self.base - id) as usize));
            self.base = id;
        }
        let i = (id - self.base) as usize;
        if i >= self.slots.len() {
            self.slots.resize_with(i + 1, || None);
        }
        let old = self.slots[i].replace(Arc::new(Fingerprinted::new(value)));
        if old.is_none() {
            self.len += 1;
        }
        old.map(|e| Arc::unwrap_or_clone(e).into_inner())
    }

    /// Removes block `id`, returning its value.
    pub fn remove(&mut self, id: u32) -> Option<T>
    where
        T: Clone,
    {
        let i = id.wrapping_sub(self.base) as usize;
        let old = self.slots.get_mut(i)?.take()?;
        self.len -= 1;
        let leading = self.slots.iter().take_while(|s| s.is_none()).count();
        if leading > 0 {
            self.slots.drain(..leading);
            self.base = self.base.wrapping_add(leading as u32);
        }
        while let Some(None) = self.slots.last() {
            self.slots.pop();
        }
        Some(Arc::unwrap_or_clone(old).into_inner())
    }

    /// The blocks in ascending index order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        let base = self.base;
        self.slots
            .iter()
            .enumerate()
            .filter_map(move |(i, s)| s.as_deref().map(|e| (base + i as u32, &**e)))
    }

    /// The values in ascending index order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.slots
            .iter()
            .filter_map(|s| s.as_deref().map(Deref::deref))
    }

    /// The blocks in ascending index order with their fingerprints: `fingerprint(block)` where
    /// the memo has none, the memo elsewhere. `fingerprint` must be a function of the block's
    /// state alone (the memo outlives the call and is shared by clones of the table).
    pub fn fingerprints<'a>(
        &'a self,
        fingerprint: impl Fn(&T) -> u128 + 'a,
    ) -> impl Iterator<Item = (u32, &'a T, u128)> + 'a {
        let base = self.base;
        self.slots.iter().enumerate().filter_map(move |(i, s)| {
            s.as_deref()
                .map(|e| (base + i as u32, &**e, e.fingerprint(&fingerprint)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::BlockTable;
    use std::collections::BTreeMap;

    #[test]
    fn behaves_like_a_btreemap() {
        let mut t = BlockTable::new();
        let mut m = BTreeMap::new();
        // A deterministic mix of inserts and removes, in and out of order.
        let mut x = 12345u64;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let id = ((x >> 33) % 64) as u32;
            if x >> 20 & 1 == 0 {
                assert_eq!(t.insert(id, id * 3), m.insert(id, id * 3));
            } else {
                assert_eq!(t.remove(id), m.remove(&id));
            }
            assert_eq!(t.len(), m.len());
            assert_eq!(t.get(id), m.get(&id));
            let a: Vec<_> = t.iter().map(|(k, v)| (k, *v)).collect();
            let b: Vec<_> = m.iter().map(|(k, v)| (*k, *v)).collect();
            assert_eq!(a, b);
        }
        assert_eq!(t.get(u32::MAX), None);
    }

    #[test]
    fn fingerprints_are_memoized_until_the_block_changes() {
        use std::cell::Cell;
        let calls = Cell::new(0);
        let fp = |v: &u32| {
            calls.set(calls.get() + 1);
            *v as u128 * 7
        };
        let mut t = BlockTable::new();
        t.insert(3, 10u32);
        t.insert(4, 20u32);
        let all = |t: &BlockTable<u32>| {
            t.fingerprints(fp)
                .map(|(i, _, f)| (i, f))
                .collect::<Vec<_>>()
        };
        assert_eq!(all(&t), [(3, 70), (4, 140)]);
        assert_eq!(all(&t), [(3, 70), (4, 140)]);
        assert_eq!(calls.get(), 2, "the second walk reads the memo");
        let mut c = t.clone();
        *c.get_mut(4).unwrap() = 21;
        assert_eq!(all(&c), [(3, 70), (4, 147)]);
        assert_eq!(calls.get(), 3, "only the changed block is rehashed");
        assert_eq!(all(&t), [(3, 70), (4, 140)], "the original keeps its memo");
        assert_eq!(calls.get(), 3);
    }
}
