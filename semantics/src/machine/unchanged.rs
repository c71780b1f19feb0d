//! Stores that leave memory as it was: the race monitor labels a race benign when its write
//! stored the bytes already there (two writes of one value), so an observed warp store says which
//! of its lanes did. Read before the stores; only observed steps pay for it.

use super::warp::lanes;
use memory_model::{Flat, MemSpace};

/// The lanes of `exec` whose store of `vals[l]` at `addrs[l]` leaves memory as it was, lanes
/// storing in ascending order (an earlier lane's store to the same address is what a later one
/// overwrites). Read before the stores, for observed steps only.
pub(crate) fn unchanged_lanes(
    mem: &mut Flat,
    (block, tid_base): (u32, u32),
    (space, size): (MemSpace, u32),
    exec: u64,
    addrs: &[u64],
    vals: &[u64],
) -> u64 {
    let mask = if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (size * 8)) - 1
    };
    let mut old = [0u64; 64];
    // A failing lane fails the store too (the lanes after it do not store).
    let _ = mem.load_lanes(
        block,
        tid_base,
        space,
        size,
        exec,
        addrs,
        &mut old[..addrs.len()],
    );
    // Distinct addresses in lane order (the coalesced common case): no lane overwrites another.
    let mut distinct = true;
    let mut prev = None;
    for l in lanes(exec) {
        if prev.is_some_and(|p| addrs[l] <= p) {
            distinct = false;
            break;
        }
        prev = Some(addrs[l]);
    }
    let mut unchanged = 0;
    for l in lanes(exec) {
        let before = if distinct {
            old[l]
        } else {
            // The last earlier lane storing to the same address, else memory.
            lanes(exec & ((1u64 << l) - 1))
                .filter(|&k| addrs[k] == addrs[l])
                .last()
                .map_or(old[l], |k| vals[k])
        };
        if (before ^ vals[l]) & mask == 0 {
            unchanged |= 1 << l;
        }
    }
    unchanged
}
