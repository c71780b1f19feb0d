//! Hash tables of the stateful search's dense ids (states, nodes) whose keys live in the
//! search's own arrays.
//!
//! A map from a state's 128-bit key to its 32-bit id stores the key twice (once in the state's
//! record, once in the map) and pads each entry to 32 bytes; at the load factor a map keeps,
//! that was some 70 bytes per state, and the node index (state, units that have stepped) to
//! node another 50. These tables store only the id (4 bytes a bucket) and read the key from
//! the caller's arrays, through a closure, when they compare or rehash ("What a stored state
//! costs" in docs/exploration.md). The hash of a key is [`FingerprintBuild`]'s, as the maps
//! used; which table a key lands in never reaches any output (the tables are only looked up).

use crate::keyed::FingerprintBuild;
use hashbrown::HashTable;
use std::hash::{BuildHasher, Hash};

/// Ids keyed by a `K` that the caller reads from its own arrays.
#[derive(Debug, Default)]
pub(crate) struct IdTable {
    table: HashTable<u32>,
}

/// The hash of a key, the same at insertion, lookup and rehashing.
fn hash_of<K: Hash>(key: &K) -> u64 {
    FingerprintBuild::default().hash_one(key)
}

impl IdTable {
    /// The id whose key (`key_of(id)`) is `key`.
    #[inline]
    pub(crate) fn get<K: Hash + Eq>(&self, key: &K, key_of: impl Fn(u32) -> K) -> Option<u32> {
        self.table
            .find(hash_of(key), |&id| key_of(id) == *key)
            .copied()
    }

    /// Whether some id has key `key`.
    #[inline]
    pub(crate) fn contains<K: Hash + Eq>(&self, key: &K, key_of: impl Fn(u32) -> K) -> bool {
        self.get(key, key_of).is_some()
    }

    /// Enters `id`, whose key (`key_of(id)`, also for the ids already in) is `key` and is not
    /// in the table yet.
    pub(crate) fn insert_new<K: Hash>(&mut self, key: &K, id: u32, key_of: impl Fn(u32) -> K) {
        self.table
            .insert_unique(hash_of(key), id, |&other| hash_of(&key_of(other)));
    }
}

#[cfg(test)]
mod tests {
    use super::IdTable;

    #[test]
    fn finds_what_it_holds_by_the_callers_keys() {
        let keys: Vec<u128> = (0..1000u128)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f00d))
            .collect();
        let mut t = IdTable::default();
        for (id, k) in keys.iter().enumerate() {
            assert!(!t.contains(k, |i| keys[i as usize]));
            t.insert_new(k, id as u32, |i| keys[i as usize]);
        }
        for (id, k) in keys.iter().enumerate() {
            assert_eq!(t.get(k, |i| keys[i as usize]), Some(id as u32));
        }
        assert_eq!(t.get(&7u128, |i| keys[i as usize]), None);
    }
}
