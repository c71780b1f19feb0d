//! Synchronisation through a location for the race monitor: release/acquire patterns of the
//! PTX memory model (PTX ISA 8.x §8.8) publish and learn what threads know, scope-aware.

use super::*;

/// The synchronisation state of the thread making an access: thread `g` of the grid at warp
/// instruction index `wi`.
pub(super) struct ThreadRef<'a> {
    pub(super) sync: &'a mut ThreadSync,
    /// The block's `knows`.
    pub(super) knows: &'a mut bool,
    pub(super) g: u32,
    pub(super) wi: u32,
    /// The thread ranges of the grids ordered before the thread's (its stream predecessors).
    pub(super) preds: &'a [(u32, u32)],
}

/// Release/acquire through location `key` (PTX ISA 8.x §8.8 patterns); `vc` is the accessing
/// warp's row of its block's clock matrix.
pub(super) fn sync_access(
    sync: &mut HashMap<(u8, u32, u64), Vec<Published>>,
    key: (u8, u32, u64),
    a: &RawAccess,
    thread: ThreadRef,
    vc: &[u32],
) {
    let c = a.class;
    let reads = a.op != AccessOp::Write;
    let writes = a.op != AccessOp::Read;
    if reads
        && c.strong
        && let Some(list) = sync.get(&key)
    {
        {
            let t = &mut *thread.sync;
            if c.acquire {
                let k = t.knowledge.get_or_insert_with(Default::default);
                for p in list {
                    if p.block == a.block || (p.scope >= SCOPE_GPU && c.scope >= SCOPE_GPU) {
                        k.join(&p.knowledge);
                    }
                }
                *thread.knows = true;
            } else {
                for p in list {
                    t.pending.push((p.clone(), c.scope));
                }
            }
        }
    }
    if !writes {
        return;
    }
    // Release: a `.release` write, or a strong write after a fence.
    let t = &*thread.sync;
    let release = if !c.strong {
        None
    } else if c.release {
        Some((c.scope, thread.wi))
    } else if t.fence != 0 {
        Some(((t.fence - 1).min(c.scope), t.fence_wi))
    } else {
        None
    };
    let published = release.map(|(scope, upto)| {
        let w = a.warp as usize;
        let mut k = Knowledge::default();
        for (v, &clock) in vc.iter().enumerate() {
            let clock = if v == w { clock - 1 } else { clock };
            if clock > 0 {
                k.warps.push(((a.block as u64) << 32 | v as u64, clock));
            }
        }
        k.threads.push((thread.g, upto));
        // What the thread's stream predecessors did happened before its release too.
        k.grids.extend_from_slice(thread.preds);
        k.grids.sort_unstable();
        if let Some(tk) = &t.knowledge {
            k.join(tk);
        }
        Published {
            block: a.block,
            scope,
            knowledge: k,
        }
    });
    if a.op == AccessOp::Atomic {
        // A read-modify-write continues the release sequence.
        if let Some(p) = published {
            let list = sync.entry(key).or_default();
            match list
                .iter_mut()
                .find(|q| q.block == p.block && q.scope == p.scope)
            {
                Some(q) => q.knowledge.join(&p.knowledge),
                None => list.push(p),
            }
        }
    } else {
        match published {
            Some(p) => {
                sync.insert(key, vec![p]);
            }
            None => {
                sync.remove(&key);
            }
        }
    }
}
