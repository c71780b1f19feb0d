//! Programs of several grids (thesis 5.7: a context runs up to 16 grids, one per launch, each
//! waiting for its stream predecessor): `info grids`, the grid a block belongs to in `warps`
//! and focus lines, and the banner of a program. A program of one grid prints as before.

use super::*;
use semantics::machine::{GridLaunch, GridPhase, GridView};

impl Session {
    /// The grid global block `block` belongs to, and the block's index in it.
    pub(super) fn grid_of(&self, block: u32) -> (u32, u32) {
        self.machine.grid_of_block(block)
    }

    /// The shape and progress of the grid global block `block` belongs to.
    pub(super) fn grid_view(&self, block: u32) -> GridView {
        let (g, _) = self.grid_of(block);
        self.machine.grids().swap_remove(g as usize)
    }

    /// The kernel grid `g` runs.
    pub(super) fn grid_kernel(&self, g: usize) -> String {
        let entries = self
            .program
            .functions
            .iter()
            .filter(|f| f.kind == semantics::program::FunctionKind::Entry);
        let named = self.launch.launches[g].kernel.as_deref();
        entries
            .filter(|f| named.is_none_or(|k| k == f.name))
            .map(|f| f.name.clone())
            .next()
            .unwrap_or_else(|| "?".to_string())
    }

    /// ` (grid G block B)` after a global block number when the program has several grids;
    /// empty for one grid.
    pub(super) fn grid_note(&self, block: u32) -> String {
        self.machine.grid_note(block)
    }

    /// A block in a step line or a message: `block 2`, and ` (grid 1 block 0)` after it in a
    /// program of several grids (commands take the global number, so it is printed first).
    pub(super) fn block_name(&self, block: u32) -> String {
        self.block_name_in(&self.machine, block)
    }

    /// [`Session::block_name`] in machine `m` (the one a run is stepping).
    pub(super) fn block_name_in(&self, m: &Machine, block: u32) -> String {
        format!("block {block}{}", m.grid_note(block))
    }

    /// A warp in a step line or a message: `warp 2.0`, and ` (grid 1 block 0)` after it in a
    /// program of several grids.
    pub(super) fn warp_name(&self, block: u32, warp: u32) -> String {
        self.warp_name_in(&self.machine, block, warp)
    }

    /// [`Session::warp_name`] in machine `m`.
    pub(super) fn warp_name_in(&self, m: &Machine, block: u32, warp: u32) -> String {
        format!("warp {block}.{warp}{}", m.grid_note(block))
    }

    /// `info grids`: each grid of the program with its kernel, stream, phase, global block
    /// numbers and blocks resident and completed; then, for each grid whose blocks cannot all
    /// become resident now, why (its stream predecessor, the 16-grid limit, or full SMs and
    /// with what).
    pub(super) fn cmd_info_grids(&self) -> String {
        let mut rows: Vec<[String; 7]> = vec![[
            "grid".into(),
            "kernel".into(),
            "stream".into(),
            "phase".into(),
            "blocks".into(),
            "resident".into(),
            "completed".into(),
        ]];
        for (g, v) in self.machine.grids().iter().enumerate() {
            rows.push([
                g.to_string(),
                Self::readable_name(&self.grid_kernel(g)),
                v.stream.to_string(),
                phase_name(v.phase).to_string(),
                format!("{}..{}", v.base, v.base + v.shape.blocks),
                (v.issued - v.completed).to_string(),
                format!("{} of {}", v.completed, v.shape.blocks),
            ]);
        }
        let mut s = view::table(&rows);
        for wait in self.machine.grids_not_resident() {
            let _ = writeln!(s, "{wait}");
        }
        s
    }

    /// The banner of a program of several launches: each launch's kernel, shape and stream.
    pub(super) fn program_banner(&self) -> String {
        let mut s = format!(
            "cudasem debugger: a program of {} launches, warp size {}, {} warp model, policy {}\n",
            self.launch.launches.len(),
            self.config.device.warp_size,
            view::model_name(self.config.warp_model),
            self.options.policy.text()
        );
        for (g, (l, v)) in self
            .launch
            .launches
            .iter()
            .zip(self.machine.grids())
            .enumerate()
        {
            let _ = writeln!(
                s,
                "  grid {g}: kernel {}, {}, stream {}, blocks {}..{}",
                Self::readable_name(&self.grid_kernel(g)),
                shape(l),
                l.stream,
                v.base,
                v.base + v.shape.blocks
            );
        }
        s.push_str("stopped before step 0; `help` lists the commands\n");
        s
    }
}

/// `grid (x,y,z), block (x,y,z)` of a launch.
pub(super) fn shape(l: &GridLaunch) -> String {
    let [gx, gy, gz] = l.grid;
    let [bx, by, bz] = l.block;
    format!("grid ({gx},{gy},{gz}), block ({bx},{by},{bz})")
}

/// The word for a grid's phase.
fn phase_name(p: GridPhase) -> &'static str {
    match p {
        GridPhase::Waiting => "waiting",
        GridPhase::Active => "active",
        GridPhase::Completed => "completed",
    }
}
