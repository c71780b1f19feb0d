//! Hash maps keyed by state fingerprints ([`semantics::machine::Machine::state_fingerprint`]).
//!
//! A fingerprint is already a uniformly mixed 128-bit hash, so hashing it again with the
//! standard library's SipHash (a fifth of the map cost in the explorer's profile) buys nothing:
//! [`FingerprintHasher`] folds the words it is given with one multiply. Keys are not chosen by
//! an adversary (they come from the machine), so no flooding resistance is needed. Iteration
//! order of these maps is never observable: explorers only look keys up.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Folds the written words into 64 bits (multiply-xor; fixed keys, so deterministic).
#[derive(Debug, Clone, Copy, Default)]
pub struct FingerprintHasher(u64);

const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for FingerprintHasher {
    #[inline]
    fn write_u64(&mut self, x: u64) {
        let p = ((self.0 ^ x) as u128).wrapping_mul(K as u128);
        self.0 = (p as u64) ^ ((p >> 64) as u64);
    }

    #[inline]
    fn write_u128(&mut self, x: u128) {
        self.write_u64(x as u64 ^ (x >> 64) as u64);
    }

    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }

    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub type FingerprintBuild = BuildHasherDefault<FingerprintHasher>;
pub type FingerprintMap<K, V> = HashMap<K, V, FingerprintBuild>;
pub type FingerprintSet<K> = HashSet<K, FingerprintBuild>;

#[cfg(test)]
mod tests {
    use super::FingerprintHasher;
    use std::hash::Hasher;

    #[test]
    fn distinct_halves_give_distinct_hashes() {
        let h = |x: u128| {
            let mut s = FingerprintHasher::default();
            s.write_u128(x);
            s.finish()
        };
        assert_ne!(h(1), h(2));
        assert_ne!(h(1 << 64), h(2 << 64));
        assert_eq!(h(12345), h(12345));
    }
}
