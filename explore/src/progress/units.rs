//! Units of progress and sets of them.
//!
//! A *unit* is whatever a progress model hands fairness guarantees to: a thread of an AXB
//! litmus test (digest §2), and later a CTA of a grid, a warp of a block or a path of a warp
//! under ITS (digest §7.1). Units are the indices `0..n`; the order matters (HSA and LOBE
//! favour low ids, digest §3.2). A [`UnitSet`] is a `u64` bitset, so at most
//! [`MAX_UNITS`] units: explicit-state exploration is hopeless long before that.

use std::fmt;

/// The index of a unit (thread, CTA, warp, ...), `0..n`.
pub type Unit = usize;

/// The largest number of units a [`UnitSet`] can hold.
pub const MAX_UNITS: usize = 64;

/// A set of units, as a bitset (bit `u` set iff unit `u` is a member).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UnitSet(u64);

impl UnitSet {
    /// The empty set.
    pub const EMPTY: UnitSet = UnitSet(0);

    /// The set with these bits (bit `u` = unit `u`).
    pub const fn from_bits(bits: u64) -> Self {
        UnitSet(bits)
    }

    /// The bits of the set.
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// All units `0..n` (`n` is clamped to [`MAX_UNITS`]).
    pub const fn all(n: usize) -> Self {
        if n >= MAX_UNITS {
            UnitSet(u64::MAX)
        } else {
            UnitSet((1u64 << n) - 1)
        }
    }

    /// `{u}`; the empty set when `u >= MAX_UNITS`.
    pub const fn single(u: Unit) -> Self {
        if u < MAX_UNITS {
            UnitSet(1u64 << u)
        } else {
            UnitSet(0)
        }
    }

    /// Units `0..=u` (all units with an id not above `u`).
    pub const fn up_to(u: Unit) -> Self {
        UnitSet::all(u.saturating_add(1))
    }

    pub const fn contains(self, u: Unit) -> bool {
        u < MAX_UNITS && self.0 & (1u64 << u) != 0
    }

    pub const fn with(self, u: Unit) -> Self {
        UnitSet(self.0 | UnitSet::single(u).0)
    }

    pub const fn without(self, u: Unit) -> Self {
        UnitSet(self.0 & !UnitSet::single(u).0)
    }

    pub const fn union(self, other: UnitSet) -> Self {
        UnitSet(self.0 | other.0)
    }

    pub const fn intersection(self, other: UnitSet) -> Self {
        UnitSet(self.0 & other.0)
    }

    /// `self ∖ other`.
    pub const fn difference(self, other: UnitSet) -> Self {
        UnitSet(self.0 & !other.0)
    }

    pub const fn is_subset(self, other: UnitSet) -> bool {
        self.0 & !other.0 == 0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The lowest unit of the set.
    pub const fn min(self) -> Option<Unit> {
        if self.0 == 0 {
            None
        } else {
            Some(self.0.trailing_zeros() as Unit)
        }
    }

    /// The highest unit of the set.
    pub const fn max(self) -> Option<Unit> {
        if self.0 == 0 {
            None
        } else {
            Some(63 - self.0.leading_zeros() as Unit)
        }
    }

    /// The members in increasing order.
    pub fn iter(self) -> impl Iterator<Item = Unit> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let u = bits.trailing_zeros() as Unit;
            bits &= bits - 1;
            Some(u)
        })
    }
}

impl FromIterator<Unit> for UnitSet {
    fn from_iter<I: IntoIterator<Item = Unit>>(iter: I) -> Self {
        iter.into_iter().fold(UnitSet::EMPTY, UnitSet::with)
    }
}

/// `{0,2}`.
impl fmt::Display for UnitSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, u) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{u}")?;
        }
        f.write_str("}")
    }
}

impl fmt::Debug for UnitSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let s: UnitSet = [0, 2, 5].into_iter().collect();
        assert_eq!(s.to_string(), "{0,2,5}");
        assert_eq!(s.len(), 3);
        assert_eq!(s.min(), Some(0));
        assert_eq!(s.max(), Some(5));
        assert!(s.contains(2) && !s.contains(1) && !s.contains(64));
        assert_eq!(s.without(0).min(), Some(2));
        assert_eq!(UnitSet::up_to(2), [0, 1, 2].into_iter().collect());
        assert_eq!(UnitSet::all(64).len(), 64);
        assert_eq!(UnitSet::all(0), UnitSet::EMPTY);
        assert!(UnitSet::single(2).is_subset(s));
        assert_eq!(s.difference(UnitSet::all(3)), UnitSet::single(5));
        assert_eq!(UnitSet::EMPTY.min(), None);
        assert_eq!(UnitSet::all(64).max(), Some(63));
    }
}
