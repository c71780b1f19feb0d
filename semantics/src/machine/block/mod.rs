//! Thread-block layer (thesis 5.5): warps, the 16 barriers, the counts of live warps and threads.
//! The barriers, for every warp model, are [`barrier`].

pub(crate) mod barrier;

use super::warp::Warp;
pub(crate) use barrier::{Barrier, arrive};
use smallvec::SmallVec;
use std::sync::Arc;

/// Block state other than the warps (split so a warp step can borrow both).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BlockShared {
    /// Shared copy-on-write (written through `Arc::make_mut`): only barrier instructions and
    /// completions change them, and a warp step copies its block.
    pub bars: Arc<[Barrier; 16]>,
    pub live_warps: u32,
    pub live_threads: u32,
    /// Warps that completed (for deadlock explanations, T20).
    pub exited_warps: Vec<u32>,
    /// Barriers whose `EndBarrier` choice is in the machine's enabled set (bit per index), so
    /// that an arrival that readies nothing skips the scan of the enabled set.
    pub end_choices: u16,
}

/// A resident thread block.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Block {
    /// Linear index in the grid.
    #[allow(dead_code)]
    pub id: u32,
    pub ctaid: [u32; 3],
    pub sm: u32,
    /// Inline for one-warp blocks (litmus tests): a warp step copies its block.
    pub warps: SmallVec<[Arc<Warp>; 1]>,
    pub shared: BlockShared,
}
