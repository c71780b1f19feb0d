//! [`BlockTable`]: resident thread blocks by linear block index, with O(1) lookup.
//!
//! Blocks become resident in (roughly) ascending index order and leave in any order, so the table
//! is a window `base..base + slots.len()` of the index space: a lookup is a subtraction and an
//! index, where a `BTreeMap` walks nodes (the machine looks a block up on every warp step, the
//! memory on every `.shared`/`.local` access). The window shrinks from both ends as blocks leave;
//! an empty slot inside it costs one pointer. Iteration is in ascending block index, like a
//! `BTreeMap`'s.
//!
//! Blocks are shared behind [`Arc`] and copied on write ([`BlockTable::get_mut`]): explorers
//! clone the whole machine once per successor, and a step changes one block at most, so a
//! clone copies pointers and the step copies only the block it touches.

use std::collections::VecDeque;
use std::sync::Arc;

/// A map from block index to `T`, for the blocks resident at a time.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockTable<T> {
    /// Block index of `slots[0]`.
    base: u32,
    slots: VecDeque<Option<Arc<T>>>,
    len: usize,
}

impl<T> Default for BlockTable<T> {
    fn default() -> Self {
        BlockTable {
            base: 0,
            slots: VecDeque::new(),
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
        self.slots.get(i)?.as_deref()
    }

    /// The block, copied first if a clone of the table shares it.
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> Option<&mut T>
    where
        T: Clone,
    {
        let i = id.wrapping_sub(self.base) as usize;
        self.slots.get_mut(i)?.as_mut().map(Arc::make_mut)
    }

    /// Inserts block `id`, returning the value it replaces.
    pub fn insert(&mut self, id: u32, value: T) -> Option<T>
    where
        T: Clone,
    {
        if self.slots.is_empty() {
            self.base = id;
        } else if id < self.base {
            for _ in id..self.base {
                self.slots.push_front(None);
            }
            self.base = id;
        }
        let i = (id - self.base) as usize;
        if i >= self.slots.len() {
            self.slots.resize_with(i + 1, || None);
        }
        let old = self.slots[i].replace(Arc::new(value));
        if old.is_none() {
            self.len += 1;
        }
        old.map(Arc::unwrap_or_clone)
    }

    /// Removes block `id`, returning its value.
    pub fn remove(&mut self, id: u32) -> Option<T>
    where
        T: Clone,
    {
        let i = id.wrapping_sub(self.base) as usize;
        let old = self.slots.get_mut(i)?.take()?;
        self.len -= 1;
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base = self.base.wrapping_add(1);
        }
        while let Some(None) = self.slots.back() {
            self.slots.pop_back();
        }
        Some(Arc::unwrap_or_clone(old))
    }

    /// The blocks in ascending index order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        let base = self.base;
        self.slots
            .iter()
            .enumerate()
            .filter_map(move |(i, s)| s.as_deref().map(|v| (base + i as u32, v)))
    }

    /// The values in ascending index order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().filter_map(|s| s.as_deref())
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
}
