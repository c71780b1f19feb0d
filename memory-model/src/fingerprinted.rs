//! [`Fingerprinted`]: a part of the machine state with its state fingerprint memoized.
//!
//! Explorers fingerprint every successor state (`semantics::machine::Machine::state_fingerprint`),
//! and a successor shares most of its parts with its parent: copy-on-write clones carry the
//! memo along, so only the parts a step touched are hashed again. The memo is dropped by every
//! mutable access ([`DerefMut`]), the only way to change the value, so it can never go stale.

use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

/// A value and, once computed, its fingerprint.
///
/// One fingerprint function per place: the memo is whatever the first
/// [`Fingerprinted::fingerprint`] call computed, until the next mutable access.
#[derive(Debug, Clone, Default)]
pub struct Fingerprinted<T> {
    value: T,
    memo: OnceLock<u128>,
}

impl<T> Fingerprinted<T> {
    pub fn new(value: T) -> Self {
        Fingerprinted {
            value,
            memo: OnceLock::new(),
        }
    }

    /// The memoized fingerprint, computed by `compute` (a function of the value alone) if there
    /// is none.
    #[inline]
    pub fn fingerprint(&self, compute: impl FnOnce(&T) -> u128) -> u128 {
        *self.memo.get_or_init(|| compute(&self.value))
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
        self.memo.take();
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
        assert_eq!(copy.fingerprint(fp), 5, "a clone keeps the memo of its value");
        assert_eq!(calls.get(), 2);
        assert_eq!(copy, Fingerprinted::new(5));
    }
}
