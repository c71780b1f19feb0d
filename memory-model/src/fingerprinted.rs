//! [`Fingerprinted`]: a part of the machine state with its state fingerprint memoized.
//!
//! Explorers fingerprint every successor state (`semantics::machine::Machine::state_fingerprint`),
//! and a successor shares most of its parts with its parent: copy-on-write clones carry the
//! memo along, so only the parts a step touched are hashed again. The memo is dropped by every
//! mutable access ([`DerefMut`]), the only way to change the value, so it can never go stale.
//!
//! The memo is written through a shared reference (fingerprints are computed from `&Machine`,
//! and clones of a machine on other threads share parts). No lock is needed: the fingerprint is
//! a function of the value, so threads that race to fill the memo store the same words; a
//! reader trusts the words once it sees the `filled` flag (stored with `Release` after them,
//! loaded with `Acquire`). A `OnceLock` would do the same with a read-modify-write and a waiter
//! queue, which cost more than hashing a small block.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A memoized 128-bit fingerprint (see the module documentation).
#[derive(Debug, Default)]
struct Memo {
    lo: AtomicU64,
    hi: AtomicU64,
    filled: AtomicBool,
}

impl Memo {
    #[inline]
    fn get(&self) -> Option<u128> {
        self.filled.load(Ordering::Acquire).then(|| {
            let lo = self.lo.load(Ordering::Relaxed) as u128;
            let hi = self.hi.load(Ordering::Relaxed) as u128;
            hi << 64 | lo
        })
    }

    #[inline]
    fn fill(&self, f: u128) {
        self.lo.store(f as u64, Ordering::Relaxed);
        self.hi.store((f >> 64) as u64, Ordering::Relaxed);
        self.filled.store(true, Ordering::Release);
    }

    #[inline]
    fn clear(&mut self) {
        *self.filled.get_mut() = false;
    }
}

impl Clone for Memo {
    fn clone(&self) -> Self {
        let memo = Memo::default();
        if let Some(f) = self.get() {
            memo.fill(f);
        }
        memo
    }
}

/// A value and, once computed, its fingerprint.
///
/// One fingerprint function per place: the memo is whatever the first
/// [`Fingerprinted::fingerprint`] call computed, until the next mutable access.
#[derive(Debug, Clone, Default)]
pub struct Fingerprinted<T> {
    value: T,
    memo: Memo,
    /// Counts the mutable accesses (see [`Fingerprinted::version`]).
    version: u64,
}

impl<T> Fingerprinted<T> {
    pub fn new(value: T) -> Self {
        Fingerprinted {
            value,
            memo: Memo::default(),
            version: 0,
        }
    }

    /// The memoized fingerprint, computed by `compute` (a function of the value alone) if there
    /// is none.
    #[inline]
    pub fn fingerprint(&self, compute: impl FnOnce(&T) -> u128) -> u128 {
        if let Some(f) = self.memo.get() {
            return f;
        }
        let f = compute(&self.value);
        self.memo.fill(f);
        f
    }

    /// How many mutable accesses the value had since [`Fingerprinted::new`] (clones keep the
    /// count): an unchanged version means an unchanged value, so a result computed from the
    /// value can be memoized under it.
    #[inline]
    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> Deref for Fingerprinted<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Fingerprinted<T> {
    /// Forgets the fingerprint: the caller may change the value.
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        self.memo.clear();
        self.version = self.version.wrapping_add(1);
        &mut self.value
    }
}

/// Compares values: the memo is a cache, not state.
impl<T: PartialEq> PartialEq for Fingerprinted<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

#[cfg(test)]
mod tests {
    use super::Fingerprinted;
    use std::cell::Cell;

    #[test]
    fn a_mutable_access_forgets_the_fingerprint() {
        let calls = Cell::new(0);
        let fp = |v: &u32| {
            calls.set(calls.get() + 1);
            *v as u128
        };
        let mut x = Fingerprinted::new(5u32);
        assert_eq!(x.fingerprint(fp), 5);
        assert_eq!(x.fingerprint(fp), 5);
        assert_eq!(calls.get(), 1);
        let copy = x.clone();
        *x += 1;
        assert_eq!(x.fingerprint(fp), 6);
        assert_eq!(
            copy.fingerprint(fp),
            5,
            "a clone keeps the memo of its value"
        );
        assert_eq!(calls.get(), 2);
        assert_eq!(copy, Fingerprinted::new(5));
    }
}
