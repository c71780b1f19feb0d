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

/// The shape of one grid (thesis 5.7.3, start of a grid): its blocks and threads per dimension,
/// the warp size, and what follows from them. The launch checks it (every dimension at least 1,
/// the warp size in `1..=64`), so the derived values below never divide by zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct GridShape {
    /// Blocks in the grid, the product of `grid_dim`.
    pub blocks: u32,
    /// Blocks per dimension (`%nctaid`).
    pub grid_dim: [u32; 3],
    /// Threads per dimension of a block (`%ntid`).
    pub block_dim: [u32; 3],
    /// Threads per warp (`WARP_SZ`).
    pub warp_size: u32,
    /// Warps per block: the threads of a block in warps of `warp_size`, the last one partial.
    pub warps_per_block: u32,
    /// Threads per block, the product of `block_dim`.
    pub threads_per_block: u32,
}

impl GridShape {
    /// The shape of a grid of `grid_dim` blocks of `block_dim` threads in warps of `warp_size`
    /// (the caller has checked that the products fit in a `u32`).
    pub fn new(grid_dim: [u32; 3], block_dim: [u32; 3], warp_size: u32) -> GridShape {
        let threads_per_block = block_dim.iter().product();
        GridShape {
            blocks: grid_dim.iter().product(),
            grid_dim,
            block_dim,
            warp_size,
            warps_per_block: u32::div_ceil(threads_per_block, warp_size),
            threads_per_block,
        }
    }

    /// The `%ctaid` of linear block `b` of the grid (x fastest).
    pub fn ctaid(&self, b: u32) -> [u32; 3] {
        let [gx, gy, _] = self.grid_dim;
        [b % gx, (b / gx) % gy, b / (gx * gy)]
    }

    /// The `%tid` of thread `t` of a block (its linear index in the block, x fastest).
    #[inline]
    pub fn tid(&self, t: u32) -> [u32; 3] {
        let [bx, by, _] = self.block_dim;
        [t % bx, (t / bx) % by, t / (bx * by)]
    }

    /// Lanes of warp `w` of a block (the last warp of a block may be partial).
    pub fn lanes_of_warp(&self, w: u32) -> u32 {
        self.threads_per_block
            .saturating_sub(w * self.warp_size)
            .min(self.warp_size)
    }
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
    /// The grid's kernel (its entry's name as the PTX spells it).
    pub kernel: String,
    /// The global block number of the grid's block 0: the grid's blocks are
    /// `base..base + blocks` in every block-keyed choice and query.
    pub base: u32,
    /// The grid's shape (its fields stand in the view's serialised form).
    #[serde(flatten)]
    pub shape: GridShape,
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
            .all(|g| g.completed_blocks == g.info.shape.blocks)
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
                kernel: self.program.function(g.info.entry).name.clone(),
                base: g.base,
                shape: g.info.shape,
                stream: g.stream,
                phase: g.phase,
                issued: g.next_block,
                completed: g.completed_blocks,
            })
            .collect()
    }

    /// The dynamic shared memory of each grid, in bytes, in launch order (the monitors' shadow
    /// of a block's shared memory has its own grid's size).
    pub(crate) fn dynamic_shared_bytes_per_grid(&self) -> Vec<u32> {
        self.grids.iter().map(|g| g.info.dynamic_shared).collect()
    }

    /// `(grid, linear block in the grid)` of global block number `block`.
    pub fn grid_of_block(&self, block: u32) -> (u32, u32) {
        let g = self.grid_index(block);
        (g as u32, block - self.grids[g].base)
    }

    /// ` (grid G block B)` to print after global block number `block` (which commands and
    /// replay strings take) when the machine runs several grids: its grid and its number in
    /// that grid. Empty for one grid, so single-kernel output is unchanged.
    pub fn grid_note(&self, block: u32) -> String {
        if self.grids.len() <= 1 {
            return String::new();
        }
        let (g, b) = self.grid_of_block(block);
        format!(" (grid {g} block {b})")
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
            |g: &Grid| g.phase == GridPhase::Active && g.completed_blocks == g.info.shape.blocks;
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

/// Why a grid's next block is not resident and cannot become so now (thesis 5.7,
/// `schedule_Grids`, and 5.7.1, `issueBlocks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum NotResident {
    /// The grid has not started: launch `grid` of its stream has not completed.
    StreamPredecessor { grid: u32 },
    /// The grid has not started: 16 grids are active.
    ActiveLimit,
    /// The grid is active, and no SM has room for one of its blocks.
    SmsFull(Vec<SmFull>),
}

/// An SM without room for a block of some grid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SmFull {
    pub sm: u32,
    /// Its resident blocks by grid, `(grid, blocks)` in grid order.
    pub blocks: Vec<(u32, u32)>,
    /// The resource the block would exceed, e.g. "1 of 1 blocks".
    pub limit: String,
}

/// A grid with blocks never issued so far and no `Issue` choice now
/// ([`Machine::grids_not_resident`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GridWait {
    pub grid: u32,
    /// The grid's kernel.
    pub kernel: String,
    /// Its blocks not issued yet.
    pub unissued: u32,
    pub why: NotResident,
}

impl std::fmt::Display for GridWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let blocks = |n: u32| if n == 1 { "block" } else { "blocks" };
        write!(
            f,
            "grid {} (`{}`): {} {} not resident: ",
            self.grid,
            self.kernel,
            self.unissued,
            blocks(self.unissued)
        )?;
        match &self.why {
            NotResident::StreamPredecessor { grid } => write!(
                f,
                "the grid waits for grid {grid}, launched before it in its stream, to complete (thesis section 5.7)"
            ),
            NotResident::ActiveLimit => f.write_str(
                "16 grids are running, the most a context runs at once (thesis section 5.7)",
            ),
            NotResident::SmsFull(sms) => {
                f.write_str("no SM has room for one of its blocks (")?;
                for (i, s) in sms.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "SM {}: ", s.sm)?;
                    if s.blocks.is_empty() {
                        f.write_str("no block")?;
                    }
                    for (k, (g, n)) in s.blocks.iter().enumerate() {
                        if k > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{n} {} of grid {g}", blocks(*n))?;
                    }
                    write!(f, ", {}", s.limit)?;
                }
                f.write_str("; thesis section 5.7.1, issueBlocks)")
            }
        }
    }
}

impl Machine {
    /// The grid to name in a report about global block `block`: `None` in a program of one
    /// grid, whose output never names one.
    pub(crate) fn named_grid(&self, block: u32) -> Option<u32> {
        (self.grids.len() > 1).then(|| self.grid_index(block) as u32)
    }

    /// The grids with blocks not issued yet that cannot issue one now, and why: for deadlock
    /// and lasso reports ("the producer's block is never resident: both SMs hold consumer
    /// blocks"). Empty when every grid's remaining blocks can be issued (or none remain).
    pub fn grids_not_resident(&self) -> Vec<GridWait> {
        let mut out = Vec::new();
        for (i, g) in self.grids.iter().enumerate() {
            let unissued = g.info.shape.blocks - g.next_block;
            if unissued == 0 || g.phase == GridPhase::Completed {
                continue;
            }
            let why = match g.phase {
                GridPhase::Waiting => match self.grids[..i]
                    .iter()
                    .rposition(|p| p.stream == g.stream && p.phase != GridPhase::Completed)
                {
                    Some(p) => NotResident::StreamPredecessor { grid: p as u32 },
                    None => NotResident::ActiveLimit,
                },
                _ => {
                    if (0..self.sms.len() as u32).any(|sm| self.fits(i, sm)) {
                        continue;
                    }
                    NotResident::SmsFull(
                        (0..self.sms.len() as u32)
                            .map(|sm| self.sm_full(sm, &g.info))
                            .collect(),
                    )
                }
            };
            out.push(GridWait {
                grid: i as u32,
                kernel: self.program.function(g.info.entry).name.clone(),
                unissued,
                why,
            });
        }
        out
    }

    /// What fills SM `sm`, and the first resource a block of `info` would exceed on it.
    fn sm_full(&self, sm: u32, info: &LaunchInfo) -> SmFull {
        let d = &self.fixed.config.device;
        let s = self.sms[sm as usize];
        let mut by_grid: Vec<(u32, u32)> = Vec::new();
        for b in self.blocks.values().filter(|b| b.sm == sm) {
            let g = self.grid_index(b.id) as u32;
            match by_grid.iter_mut().find(|(h, _)| *h == g) {
                Some((_, n)) => *n += 1,
                None => by_grid.push((g, 1)),
            }
        }
        by_grid.sort_unstable();
        let limit = if s.blocks >= d.max_blocks_per_sm {
            format!("{} of {} blocks", s.blocks, d.max_blocks_per_sm)
        } else if s.threads + info.shape.threads_per_block > d.max_threads_per_sm {
            format!(
                "{} of {} threads in use, a block needs {}",
                s.threads, d.max_threads_per_sm, info.shape.threads_per_block
            )
        } else if s.warps + info.shape.warps_per_block > d.max_warps_per_sm {
            format!(
                "{} of {} warps in use, a block needs {}",
                s.warps, d.max_warps_per_sm, info.shape.warps_per_block
            )
        } else {
            format!(
                "{} of {} shared bytes in use, a block needs {}",
                s.shared, d.shared_mem_per_sm, info.shared_bytes
            )
        };
        SmFull {
            sm,
            blocks: by_grid,
            limit,
        }
    }
}
