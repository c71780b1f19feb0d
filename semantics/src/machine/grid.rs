//! Grid layer (thesis 5.6): blocks unscheduled (`next_block..`), active (resident) or completed;
//! the grid completes when every block has (grid (compl)).

use super::Machine;

/// The 3-D index of linear block `b` in a grid of `dim` (x fastest).
pub(crate) fn ctaid(b: u32, dim: [u32; 3]) -> [u32; 3] {
    [b % dim[0], (b / dim[0]) % dim[1], b / (dim[0] * dim[1])]
}

impl Machine {
    /// True once every block of the grid has completed.
    pub(crate) fn grid_completed(&self) -> bool {
        self.completed_blocks == self.info.total_blocks
    }
}
