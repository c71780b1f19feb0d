//! Grid layer (thesis 5.6) and the context's grid scheduling (thesis 5.7, `schedule_Grids`).
//!
//! A grid's blocks are unscheduled (`next_block..`), active (resident) or completed; the grid
//! completes when every block has (grid (compl)). A program of several launches has one grid per
//! launch: a grid waits until its stream predecessor has completed, then becomes active when
//! fewer than [`MAX_ACTIVE_GRIDS`] grids are (thesis 5.7: a context runs up to 16 grids
//! concurrently). Blocks are named by a global block number, the grid's `base` plus the block's
//! linear index in its grid, so that every block-keyed choice stays one `u32`.

use super::{LaunchInfo, Machine};
use serde::Serialize;
use std::sync::Arc;

/// At most this many grids of a context run concurrently (thesis 5.7).
pub const MAX_ACTIVE_GRIDS: usize = 16;

/// The 3-D index of linear block `b` in a grid of `dim` (x fastest).
pub(crate) fn ctaid(b: u32, dim: [u32; 3]) -> [u32; 3] {
    [b % dim[0], (b / dim[0]) % dim[1], b / (dim[0] * dim[1])]
}

/// Where a grid is in its life (thesis 5.7: a grid is started, runs, completes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum GridPhase {
    /// Not started: its stream predecessor has not completed, or 16 grids are active.
    Waiting,
    /// Started: its blocks are issued as SMs have room.
    Active,
    /// Every block completed.
    Completed,
}

/// One grid of the program (one launch).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Grid {
    pub info: Arc<LaunchInfo>,
    /// The global block number of the grid's block 0.
    pub base: u32,
    /// The stream the launch was made in: launches of one stream run one after the other.
    pub stream: u32,
    /// Blocks are issued in linear order (deviation D8): `next_block..total_blocks` are
    /// unscheduled (linear indices in the grid).
    pub next_block: u32,
    pub completed_blocks: u32,
    pub phase: GridPhase,
}

/// A grid as tools see it ([`Machine::grids`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GridView {
    /// The global block number of the grid's block 0: the grid's blocks are
    /// `base..base + blocks` in every block-keyed choice and query.
    pub base: u32,
    pub blocks: u32,
    pub grid_dim: [u32; 3],
    pub block_dim: [u32; 3],
    pub warps_per_block: u32,
    pub threads_per_block: u32,
    pub stream: u32,
    pub phase: GridPhase,
    /// Blocks issued so far (resident or completed).
    pub issued: u32,
    pub completed: u32,
}

impl Machine {
    /// True once every block of every grid has completed.
    pub(crate) fn grid_completed(&self) -> bool {
        self.grids
            .iter()
            .all(|g| g.completed_blocks == g.info.total_blocks)
    }

    /// The index of the grid global block number `block` belongs to.
    #[inline]
    pub(crate) fn grid_index(&self, block: u32) -> usize {
        if self.grids.len() == 1 {
            return 0;
        }
        self.grids
            .partition_point(|g| g.base <= block)
            .saturating_sub(1)
    }

    /// The launch of the grid global block `block` belongs to.
    #[inline]
    pub(crate) fn grid_info(&self, block: u32) -> &Arc<LaunchInfo> {
        &self.grids[self.grid_index(block)].info
    }

    /// The grids of the program in launch order (one for a one-kernel launch).
    pub fn grids(&self) -> Vec<GridView> {
        self.grids
            .iter()
            .map(|g| GridView {
                base: g.base,
                blocks: g.info.total_blocks,
                grid_dim: g.info.grid,
                block_dim: g.info.block,
                warps_per_block: g.info.warps_per_block,
                threads_per_block: g.info.threads_per_block,
                stream: g.stream,
                phase: g.phase,
                issued: g.next_block,
                completed: g.completed_blocks,
            })
            .collect()
    }

    /// `(grid, linear block in the grid)` of global block number `block`.
    pub fn grid_of_block(&self, block: u32) -> (u32, u32) {
        let g = self.grid_index(block);
        (g as u32, block - self.grids[g].base)
    }

    /// `schedule_Grids` (thesis 5.7): every active grid whose blocks have all completed
    /// completes (its threads exited, and an exiting thread waits for its memory operations:
    /// the grid's memory operations are performed); then, in launch order, every waiting grid
    /// whose stream predecessor has completed starts while fewer than 16 grids are active.
    /// Returns whether a grid started (the `Issue` choices then change).
    pub(crate) fn schedule_grids(&mut self) -> bool {
        if self.grids.len() == 1 {
            return false;
        }
        let done =
            |g: &Grid| g.phase == GridPhase::Active && g.completed_blocks == g.info.total_blocks;
        let startable = |gs: &[Grid], i: usize| {
            gs[i].phase == GridPhase::Waiting
                && gs[..i]
                    .iter()
                    .filter(|p| p.stream == gs[i].stream)
                    .all(|p| p.phase == GridPhase::Completed)
        };
        let any_done = self.grids.iter().any(done);
        let any_start = (0..self.grids.len()).any(|i| startable(&self.grids, i));
        if !any_done && !any_start {
            return false;
        }
        let grids = Arc::make_mut(&mut self.grids);
        for g in grids.iter_mut().filter(|g| done(g)) {
            g.phase = GridPhase::Completed;
        }
        let mut started = false;
        for i in 0..grids.len() {
            let active = grids
                .iter()
                .filter(|g| g.phase == GridPhase::Active)
                .count();
            if active >= MAX_ACTIVE_GRIDS {
                break;
            }
            if startable(grids, i) {
                grids[i].phase = GridPhase::Active;
                started = true;
            }
        }
        started
    }
}
