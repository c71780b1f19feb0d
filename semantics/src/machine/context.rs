//! Context layer (thesis 5.7): issuing blocks onto SMs under occupancy limits (`issueBlocks`,
//! 5.7.1) and freeing resources as warps and blocks complete (5.5: a finished warp frees its
//! threads and warps at once; the block slot and its shared memory when the block completes).
//!
//! Deviation (D8): blocks are issued in linear order: the `Issue` choices at any time are the next
//! unscheduled block onto each SM with room, not every unscheduled block (which would make the
//! enabled set as large as the grid). Which SM, and when, remain choices.

use super::Machine;
use super::block::{Barrier, Block, BlockShared};
use super::warp::Warp;
use crate::program::FinalRegisters;
use memory_model::MemoryEnv;
use std::sync::Arc;
use traces::{Derivation, Event, Rule};

impl Machine {
    /// Whether a block of grid `grid` fits on SM `sm` (occupancy with that grid's block
    /// resources).
    pub(crate) fn fits(&self, grid: usize, sm: u32) -> bool {
        let d = &self.fixed.config.device;
        let (Some(s), Some(g)) = (self.sms.get(sm as usize), self.grids.get(grid)) else {
            return false;
        };
        let info = &g.info;
        s.blocks < d.max_blocks_per_sm
            && s.threads + info.shape.threads_per_block <= d.max_threads_per_sm
            && s.warps + info.shape.warps_per_block <= d.max_warps_per_sm
            && s.shared + info.shared_bytes <= d.shared_mem_per_sm
    }

    /// `issueBlocks`: global block `block` (the next of grid `grid`) becomes resident on `sm`:
    /// its warps are created with every pc at the entry, α = the real lanes, δ = exit for dummy
    /// lanes, the kernel frame as call stack.
    pub(crate) fn issue(
        &mut self,
        grid: usize,
        block: u32,
        sm: u32,
        events: Option<&mut Vec<Event>>,
    ) {
        let info = self.grids[grid].info.clone();
        let linear = block - self.grids[grid].base;
        let ws = info.shape.warp_size;
        let entry = self.program.function(info.entry);
        let nregs = entry.registers.len();
        let warps = (0..info.shape.warps_per_block)
            .map(|i| {
                let mut w = Warp::new(
                    i,
                    i * ws,
                    info.shape.lanes_of_warp(i),
                    ws,
                    info.entry,
                    info.entry_start,
                    nregs,
                    self.fixed.config.warp_model,
                    self.checking,
                );
                for fb in Arc::make_mut(&mut w.levels[0].frame_base).iter_mut() {
                    *fb = info.kernel_frame_base;
                }
                Arc::new(w)
            })
            .collect();
        let b = Block {
            id: block,
            ctaid: info.shape.ctaid(linear),
            sm,
            warps,
            shared: BlockShared {
                bars: Arc::new(std::array::from_fn(|_| Barrier::default())),
                live_warps: info.shape.warps_per_block,
                live_threads: info.shape.threads_per_block,
                exited_warps: Vec::new(),
                end_choices: 0,
            },
        };
        self.mem.pages_mut().create_block(
            block,
            info.shared_bytes as u64,
            info.shape.threads_per_block,
        );
        let s = &mut Arc::make_mut(&mut self.sms)[sm as usize];
        s.blocks += 1;
        s.threads += info.shape.threads_per_block;
        s.warps += info.shape.warps_per_block;
        s.shared += info.shared_bytes;
        self.blocks.insert(block, b);
        Arc::make_mut(&mut self.grids)[grid].next_block = linear + 1;
        if let Some(ev) = events {
            ev.push(Event::BlockIssued {
                grid: grid as u32,
                block,
                sm,
                derivation: Derivation::of(&[Rule::Exec, Rule::IssueBlocks]),
            });
        }
        for i in 0..info.shape.warps_per_block {
            self.refresh_warp(block, i);
        }
        self.refresh_issue();
    }

    /// A warp completed: it frees its threads and warp slot on the SM.
    pub(crate) fn free_warp(&mut self, sm: u32, lanes: u32) {
        let s = &mut Arc::make_mut(&mut self.sms)[sm as usize];
        s.warps = s.warps.saturating_sub(1);
        s.threads = s.threads.saturating_sub(lanes);
    }

    /// Block (compl): every warp completed; the block leaves its SM.
    pub(crate) fn complete_block(&mut self, block: u32, events: Option<&mut Vec<Event>>) {
        if let Some(b) = self.blocks.remove(block) {
            if self.final_registers == FinalRegisters::Observed {
                Arc::make_mut(&mut self.finals).insert(block, b.warps.clone());
            }
            let grid = self.grid_index(block);
            let shared = self.grids[grid].info.shared_bytes;
            let s = &mut Arc::make_mut(&mut self.sms)[b.sm as usize];
            s.blocks = s.blocks.saturating_sub(1);
            s.shared = s.shared.saturating_sub(shared);
            // Threads/warps not yet freed (none, normally).
            self.mem.pages_mut().release_block(block);
            Arc::make_mut(&mut self.grids)[grid].completed_blocks += 1;
            self.schedule_grids();
            if let Some(ev) = events {
                ev.push(Event::BlockCompleted {
                    block,
                    derivation: Derivation::of(&[Rule::Exec, Rule::BlockCompl]),
                });
            }
            self.retain_enabled(|c| super::enabled::block_of(c) != Some(block));
            self.refresh_issue();
        }
    }
}
