//! The grids of the recorded program and how the page names blocks and warps by them.
//!
//! The machine numbers blocks across grids (grid `g`'s blocks are `base..base + blocks`,
//! thesis 5.7: a context runs the grids of its launches). A program of one grid keeps the
//! page's old names (`warp 1.0`, `block 1`); a program of several names every block by its grid
//! and its index in that grid (`grid 1 block 0 warp 2`), and records each grid's phase and why
//! its blocks are not resident.

use super::*;
use semantics::machine::{GridPhase, GridView};

/// The grids' shapes, read once from the machine.
#[derive(Debug, Clone)]
pub(crate) struct Grids {
    views: Vec<GridView>,
}

impl Grids {
    pub(crate) fn of(m: &Machine) -> Grids {
        Grids { views: m.grids() }
    }

    /// Whether the page names grids (a program of more than one launch).
    pub(crate) fn several(&self) -> bool {
        self.views.len() > 1
    }

    /// Blocks of every grid.
    pub(crate) fn total_blocks(&self) -> u32 {
        self.views.iter().map(|g| g.shape.blocks).sum()
    }

    /// `(grid, block in the grid)` of global block `b`.
    pub(crate) fn grid_of(&self, b: u32) -> (usize, u32) {
        let g = self
            .views
            .partition_point(|v| v.base <= b)
            .saturating_sub(1);
        (g, b - self.views.get(g).map_or(0, |v| v.base))
    }

    fn view(&self, b: u32) -> Option<&GridView> {
        self.views.get(self.grid_of(b).0)
    }

    /// Threads in a block of global block `b`'s grid.
    pub(crate) fn threads(&self, b: u32) -> u32 {
        self.view(b).map_or(0, |v| v.shape.threads_per_block)
    }

    /// Warps in a block of global block `b`'s grid.
    pub(crate) fn warps(&self, b: u32) -> u32 {
        self.view(b).map_or(0, |v| v.shape.warps_per_block)
    }

    /// A block: `block 3`, or `grid 1 block 0` in a program of several grids.
    pub(crate) fn block(&self, b: u32) -> String {
        if self.several() {
            let (g, lb) = self.grid_of(b);
            format!("grid {g} block {lb}")
        } else {
            format!("block {b}")
        }
    }

    /// A warp as the page's texts name it: `3.1`, or `grid 1 block 0 warp 1`.
    pub(crate) fn warp(&self, b: u32, w: u32) -> String {
        if self.several() {
            format!("{} warp {w}", self.block(b))
        } else {
            format!("{b}.{w}")
        }
    }

    /// A warp after the word `warp` of a single-grid text (`warp 3.1`): the same words in a
    /// program of several grids (`grid 1 block 0 warp 1`).
    pub(crate) fn warp_titled(&self, b: u32, w: u32) -> String {
        if self.several() {
            self.warp(b, w)
        } else {
            format!("warp {b}.{w}")
        }
    }

    /// A choice as the page lists it: its `Display`, with blocks named by their grid in a
    /// program of several grids.
    pub(crate) fn choice(&self, c: &Choice) -> String {
        if !self.several() {
            return c.to_string();
        }
        match *c {
            Choice::Issue { block, sm, .. } => format!("issue {} on sm {sm}", self.block(block)),
            Choice::Warp { block, warp } => self.warp(block, warp),
            Choice::Target { block, warp, k } => format!("{} target {k}", self.warp(block, warp)),
            Choice::Lanes { block, warp, mask } => {
                format!("{} lanes {mask:#x}", self.warp(block, warp))
            }
            Choice::EndBarrier { block, barrier } => {
                format!("end barrier {barrier} of {}", self.block(block))
            }
            Choice::Pick {
                block,
                warp,
                lane,
                k,
            } => format!("{} lane {lane} picks value {k}", self.warp(block, warp)),
            Choice::Mem(m) => m.to_string(),
        }
    }

    /// The grids as the page's header lists them (empty for one grid: the page is as before).
    pub(crate) fn infos(&self) -> Vec<GridInfo> {
        if !self.several() {
            return Vec::new();
        }
        self.views
            .iter()
            .map(|v| GridInfo {
                kernel: v.kernel.clone(),
                stream: v.stream,
                base: v.base,
                blocks: v.shape.blocks,
                grid: v.shape.grid_dim,
                block: v.shape.block_dim,
            })
            .collect()
    }
}

/// Each grid's phase and progress now, and why its blocks cannot become resident (thesis 5.7,
/// `schedule_Grids`; 5.7.1, `issueBlocks`): `None` for a program of one grid.
pub(crate) fn grid_states(m: &Machine, grids: &Grids) -> Option<Vec<GridState>> {
    if !grids.several() {
        return None;
    }
    let waits = m.grids_not_resident();
    Some(
        m.grids()
            .iter()
            .enumerate()
            .map(|(g, v)| GridState {
                phase: phase_word(v.phase),
                issued: v.issued,
                completed: v.completed,
                why: waits
                    .iter()
                    .find(|w| w.grid as usize == g)
                    .map(ToString::to_string),
            })
            .collect(),
    )
}

/// The word for a grid's phase.
pub(crate) fn phase_word(p: GridPhase) -> &'static str {
    match p {
        GridPhase::Waiting => "waiting",
        GridPhase::Active => "active",
        GridPhase::Completed => "completed",
    }
}
