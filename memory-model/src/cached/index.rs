//! Indexes of the in-flight ops, so that the questions the machine asks after every step cost
//! O(ops of one thread or warp) instead of a scan of every op in flight (issue 15: the scans
//! made a step's cost grow with the number of resident warps).
//!
//! The indexes are functions of `Cached::ops` (they never hold information of their own):
//! state equality and the state hash leave them out, and [`OpIndex::rebuilt`] computes them
//! from scratch for the consistency checks. Persistent maps: explorers clone the memory state
//! for every successor, and a clone must not copy the indexes.

use super::engine::Op;
use super::{OpId, RequestKind};
use crate::{Fingerprinted, Who};
use imbl::{OrdMap, OrdSet};
use smallvec::SmallVec;

/// Ids of ops, ascending.
type Ids = SmallVec<[OpId; 4]>;

#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct OpIndex {
    /// The in-flight ops of each thread (ordering dependencies are only ever within a thread).
    pub by_thread: OrdMap<Who, Ids>,
    /// The in-flight loads and atomics with a destination register, per (block, warp of the
    /// destination): the machine's scoreboard.
    pub by_warp: OrdMap<(u32, u32), Ids>,
    /// The ops whose dependencies all ended (the candidates of the enabled set).
    pub ready: OrdSet<OpId>,
    /// Free slots below the length of the op list (the smallest is reused first).
    pub free: OrdSet<OpId>,
}

fn insert_sorted(ids: &mut Ids, id: OpId) {
    if let Err(i) = ids.binary_search(&id) {
        ids.insert(i, id);
    }
}

/// The (block, warp) of an op's destination register, if it has one.
pub(super) fn dest_warp(op: &Op) -> Option<(u32, u32)> {
    match op.req.kind {
        RequestKind::Load { dest, .. } | RequestKind::Atomic { dest, .. } => {
            dest.map(|d| (op.req.who.block, d.warp))
        }
        _ => None,
    }
}

impl OpIndex {
    /// Records a new op in slot `id`.
    pub fn add(&mut self, id: OpId, op: &Op) {
        insert_sorted(self.by_thread.entry(op.req.who).or_default(), id);
        if let Some(w) = dest_warp(op) {
            insert_sorted(self.by_warp.entry(w).or_default(), id);
        }
        if op.deps.is_empty() {
            self.ready.insert(id);
        }
        self.free.remove(&id);
    }

    /// Forgets the op that leaves slot `id`.
    pub fn remove(&mut self, id: OpId, op: &Op) {
        fn drop_id<K: Ord + Clone>(m: &mut OrdMap<K, Ids>, k: &K, id: OpId) {
            let empty = match m.get_mut(k) {
                Some(ids) => {
                    ids.retain(|i| *i != id);
                    ids.is_empty()
                }
                None => false,
            };
            if empty {
                m.remove(k);
            }
        }
        drop_id(&mut self.by_thread, &op.req.who, id);
        if let Some(w) = dest_warp(op) {
            drop_id(&mut self.by_warp, &w, id);
        }
        self.ready.remove(&id);
    }

    /// The ops of thread `who`, by id.
    pub fn of_thread(&self, who: Who) -> &[OpId] {
        self.by_thread.get(&who).map_or(&[], |ids| ids.as_slice())
    }

    /// The slot list shrank to `len`: free slots at or beyond it are gone.
    pub fn truncate(&mut self, len: usize) {
        while let Some(&max) = self.free.get_max() {
            if (max as usize) < len {
                break;
            }
            self.free.remove(&max);
        }
    }

    /// The indexes computed from scratch from the op list (what the incremental ones must
    /// equal).
    pub fn rebuilt(ops: &[Option<Fingerprinted<Op>>]) -> OpIndex {
        let mut ix = OpIndex::default();
        for (i, o) in ops.iter().enumerate() {
            match o {
                Some(o) => ix.add(i as OpId, o),
                None => {
                    ix.free.insert(i as OpId);
                }
            }
        }
        ix
    }
}
