//! The L1 caches of the SMs (thesis `ProcMem.l1Cache`, one per SM), stored only as far as they
//! are used.
//!
//! A launch that fits on a few SMs of a 16-SM device (every litmus test) touches a few L1s, and
//! explorers copy the memory state for every successor state. So the list holds the L1s of SMs
//! `0..=s` where `s` is the highest SM whose L1 was ever written; SMs beyond it have an empty
//! L1. The list is shared copy-on-write (a machine clone copies one pointer) and each L1
//! memoizes its fingerprint ([`Fingerprinted`]). Equality treats a missing L1 as an empty one,
//! so how far the list grew never splits equal states.

use super::line::L1;
use crate::Fingerprinted;
use smallvec::SmallVec;
use std::sync::{Arc, LazyLock};

/// What an SM without a stored L1 has.
static EMPTY: LazyLock<L1> = LazyLock::new(L1::new);

/// One L1 per configured SM.
#[derive(Debug, Clone)]
pub struct L1s {
    /// Configured SMs.
    sms: u32,
    /// The L1s of SMs `0..caches.len()`.
    caches: Arc<Vec<Fingerprinted<L1>>>,
    /// The SMs whose L1 was borrowed for writing since the last [`L1s::take_touched`] (a
    /// journal, not state: see `Cache::drain_touched`).
    touched: SmallVec<[u32; 2]>,
}

impl L1s {
    /// An empty L1 for each of `sms` SMs.
    pub fn new(sms: u32) -> L1s {
        L1s {
            sms,
            caches: Arc::default(),
            touched: SmallVec::new(),
        }
    }

    /// The number of configured SMs.
    pub fn count(&self) -> u32 {
        self.sms
    }

    /// SM `sm`'s L1 (`None`: no such SM).
    #[inline]
    pub fn get(&self, sm: u32) -> Option<&L1> {
        if sm >= self.sms {
            return None;
        }
        Some(self.caches.get(sm as usize).map_or(&*EMPTY, |c| &**c))
    }

    /// SM `sm`'s L1 for writing (the list copied first if shared, grown if needed; `None`: no
    /// such SM). Forgets the L1's fingerprint.
    #[inline]
    pub fn get_mut(&mut self, sm: u32) -> Option<&mut L1> {
        if sm >= self.sms {
            return None;
        }
        if !self.touched.contains(&sm) {
            self.touched.push(sm);
        }
        let caches = Arc::make_mut(&mut self.caches);
        let i = sm as usize;
        if caches.len() <= i {
            caches.resize_with(i + 1, || Fingerprinted::new(L1::new()));
        }
        Some(&mut *caches[i])
    }

    /// Whether no L1 was borrowed for writing since the last [`L1s::take_touched`].
    pub fn touched_none(&self) -> bool {
        self.touched.is_empty()
    }

    /// The SMs whose L1 was borrowed for writing since the last call.
    pub fn take_touched(&mut self) -> SmallVec<[u32; 2]> {
        std::mem::take(&mut self.touched)
    }

    /// The L1s holding a line (live or doomed), by SM, with their memoized fingerprints.
    pub fn in_use(&self) -> impl Iterator<Item = (u32, &Fingerprinted<L1>)> {
        self.caches
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.live.is_empty() || c.has_doomed())
            .map(|(sm, c)| (sm as u32, c))
    }
}

/// Missing L1s are empty ones.
impl PartialEq for L1s {
    fn eq(&self, other: &Self) -> bool {
        self.sms == other.sms && (0..self.sms).all(|sm| self.get(sm) == other.get(sm))
    }
}

#[cfg(test)]
mod tests {
    use super::L1s;

    #[test]
    fn missing_and_empty_l1s_are_equal() {
        let a = L1s::new(4);
        let mut b = a.clone();
        assert!(b.get_mut(2).is_some());
        assert_eq!(b.caches.len(), 3, "grown up to the written SM");
        assert_eq!(a, b);
        assert!(b.get_mut(4).is_none(), "no such SM");
        assert!(a.get(3).is_some_and(|c| c.live.is_empty()));
        assert_eq!(a.in_use().count(), 0);
    }
}
