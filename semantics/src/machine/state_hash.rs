//! Canonical state hashing (ARCHITECTURE.md section 4, "stateful search with canonical state
//! hashing"; progress digest §7.2) and the read-only facts about units that explorers and
//! progress-model schedulers need.
//!
//! [`Machine::state_fingerprint`] is a 128-bit hash of everything that determines the machine's
//! future behaviour, and nothing else, so that a spin loop closes a cycle:
//! * hashed: memory contents ([`memory_model::Flat::hash_state`]), resident blocks (SM, warps,
//!   barriers, live counts), every warp's execution state (pc, masks, token stack, per-lane pcs,
//!   call depths, registers and frames, carry flags, barrier waits), the issue cursor, the
//!   completed-block count and how the run ended (if it has);
//! * left out: the step counter and the thread-instruction counter (monotone: no loop would ever
//!   close), the enabled set (a function of the state; its *order* depends on history), SM
//!   occupancy (a function of the resident blocks), the leftovers of barriers not in use, the
//!   safety monitor's shadow pcs, scratch buffers, and what is fixed for the whole launch
//!   (program, launch info, configuration).
//!
//! Caveat: `%clock`, `%clock64` and `%globaltimer` read the step counter (deviation D14), so two
//! states with equal fingerprints may still differ in what such a read returns. Explorers
//! treat the clock as not observable; programs that branch on it are outside what exhaustive
//! exploration decides.
//!
//! The hasher ([`StateHasher`]) is fixed-key and platform independent: the same state gives
//! the same fingerprint on every machine and every run (no randomly seeded `RandomState`).
//! Two lanes of 64 bits with different multipliers make collisions negligible for the state
//! counts an explorer can hold (about n²/2¹²⁹).
//!
//! Every struct is destructured without `..`: a field added later fails to compile here until
//! someone decides whether it belongs to the state.

use super::block::{Barrier, Block, BlockShared};
use super::thread::Level;
use super::warp::{SimtToken, Warp, lane_mask, lanes};
use super::{Machine, Sm, Termination};
use std::hash::Hasher;
use traces::{DisableMask, TokenKind};

/// A deterministic 128-bit hasher for state fingerprints (multiply-fold mixing, fixed keys).
#[derive(Debug, Clone, Copy)]
pub struct StateHasher {
    a: u64,
    b: u64,
    /// Words written, folded in at the end (so a trailing zero word still counts).
    n: u64,
}

const K1: u64 = 0xa076_1d64_78bd_642f;
const K2: u64 = 0xe703_7ed1_a0b4_28db;
const K3: u64 = 0x8ebc_6af0_9c88_c6e3;
const K4: u64 = 0x5899_65cc_7537_4cc3;

#[inline(always)]
fn fold_mul(x: u64, k: u64) -> u64 {
    let p = (x as u128).wrapping_mul(k as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

impl Default for StateHasher {
    fn default() -> Self {
        StateHasher::new()
    }
}

impl StateHasher {
    pub const fn new() -> Self {
        StateHasher { a: K3, b: K4, n: 0 }
    }

    /// The 128-bit fingerprint.
    pub fn finish128(&self) -> u128 {
        let a = fold_mul(self.a ^ self.n, K1 ^ K4);
        let b = fold_mul(self.b ^ self.n.rotate_left(17), K2 ^ K3);
        let a = fold_mul(a ^ (b >> 29), K1);
        let b = fold_mul(b ^ (a >> 31), K2);
        ((a as u128) << 64) | b as u128
    }
}

impl Hasher for StateHasher {
    #[inline(always)]
    fn write_u64(&mut self, x: u64) {
        self.a = fold_mul(self.a ^ x, K1);
        self.b = fold_mul(self.b ^ x.rotate_left(32) ^ K3, K2);
        self.n = self.n.wrapping_add(1);
    }

    #[inline(always)]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }

    #[inline(always)]
    fn write_u16(&mut self, x: u16) {
        self.write_u64(x as u64);
    }

    #[inline(always)]
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }

    #[inline(always)]
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    fn write(&mut self, bytes: &[u8]) {
        self.write_u64(bytes.len() as u64);
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    fn finish(&self) -> u64 {
        let f = self.finish128();
        (f as u64) ^ ((f >> 64) as u64)
    }
}

/// Where a block of the grid is (for unit bookkeeping).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockStatus {
    /// Not issued yet (blocks are issued in linear order, deviation D8).
    Unissued,
    /// Resident on an SM.
    Resident,
    /// Every warp completed; the block left its SM.
    Completed,
}

impl Machine {
    /// The 128-bit canonical fingerprint of the state (see the module documentation).
    pub fn state_fingerprint(&self) -> u128 {
        let mut h = StateHasher::new();
        self.hash_state(&mut h);
        h.finish128()
    }

    /// The canonical state hash, 64 bits of [`Machine::state_fingerprint`].
    pub fn state_hash(&self) -> u64 {
        let f = self.state_fingerprint();
        (f as u64) ^ ((f >> 64) as u64)
    }

    /// Feeds the canonical state into `h` (see the module documentation).
    pub fn hash_state<H: Hasher>(&self, h: &mut H) {
        let Machine {
            program: _,
            info: _,
            config: _,
            mem,
            cached,
            blocks,
            sms,
            next_block,
            completed_blocks,
            enabled: _,
            steps: _,
            thread_instructions: _,
            termination,
            checking: _,
            scratch: _,
        } = self;
        match termination {
            None => h.write_u8(0),
            Some(Termination::Completed) => h.write_u8(1),
            Some(Termination::Deadlock(_)) => h.write_u8(2),
            Some(Termination::StepLimit) => h.write_u8(3),
            Some(Termination::Error(e)) => {
                h.write_u8(4);
                h.write_u32(e.pc);
                h.write(e.message.as_bytes());
            }
        }
        h.write_u32(*next_block);
        h.write_u32(*completed_blocks);
        // SM occupancy is left out: it is a function of the resident blocks (their SM, their
        // warps' real lanes and completion, the launch's shared bytes), which are hashed.
        let _: &[Sm] = sms;
        h.write_usize(blocks.len());
        for (id, b) in blocks.iter() {
            h.write_u32(id);
            hash_block(b, h);
        }
        mem.hash_state(h);
        if let Some(c) = cached {
            c.hash_state(h);
        }
    }

    /// The number of blocks in the grid.
    pub fn total_blocks(&self) -> u32 {
        self.info.total_blocks
    }

    /// Warps per block (the last one may have fewer real lanes).
    pub fn warps_per_block(&self) -> u32 {
        self.info.warps_per_block
    }

    /// Threads per block.
    pub fn threads_per_block(&self) -> u32 {
        self.info.threads_per_block
    }

    /// Lanes per warp.
    pub fn warp_size(&self) -> u32 {
        self.info.warp_size
    }

    /// Whether block `block` is unissued, resident or completed.
    pub fn block_status(&self, block: u32) -> BlockStatus {
        if block >= self.next_block {
            BlockStatus::Unissued
        } else if self.blocks.get(block).is_some() {
            BlockStatus::Resident
        } else {
            BlockStatus::Completed
        }
    }

    /// Whether warp `warp` of `block` has completed (every lane exited; true for completed
    /// blocks, false for unissued ones).
    pub fn warp_completed(&self, block: u32, warp: u32) -> bool {
        match self.block_status(block) {
            BlockStatus::Completed => true,
            BlockStatus::Unissued => false,
            BlockStatus::Resident => self
                .blocks
                .get(block)
                .and_then(|b| b.warps.get(warp as usize))
                .is_none_or(|w| w.completed),
        }
    }

    /// The lanes of a resident warp that have exited (dummy lanes included); every lane of a
    /// completed block, none of an unissued one.
    pub fn warp_exited_lanes(&self, block: u32, warp: u32) -> u64 {
        match self.block_status(block) {
            BlockStatus::Completed => u64::MAX,
            BlockStatus::Unissued => 0,
            BlockStatus::Resident => self
                .blocks
                .get(block)
                .and_then(|b| b.warps.get(warp as usize))
                .map_or(u64::MAX, |w| if w.completed { u64::MAX } else { w.exited }),
        }
    }

    /// The active mask α of a resident warp under the SIMT stack (the lanes a `Warp` or
    /// `Target` choice steps), 0 if the warp is not resident.
    pub fn warp_active(&self, block: u32, warp: u32) -> u64 {
        self.blocks
            .get(block)
            .and_then(|b| b.warps.get(warp as usize))
            .map_or(0, |w| w.active)
    }
}

fn hash_block<H: Hasher>(b: &Block, h: &mut H) {
    let Block {
        id: _,
        ctaid: _,
        sm,
        warps,
        shared,
    } = b;
    h.write_u32(*sm);
    h.write_usize(warps.len());
    for w in warps {
        hash_warp(w, h);
    }
    let BlockShared {
        bars,
        live_warps,
        live_threads,
        exited_warps,
        end_choices: _,
    } = shared;
    // Which barriers are in use, then those only: an unused barrier's leftovers are overwritten
    // at its next first arrival.
    let in_use = bars
        .iter()
        .enumerate()
        .fold(0u16, |m, (i, bar)| m | (bar.in_use as u16) << i);
    h.write_u16(in_use);
    for bar in bars.iter().filter(|bar| bar.in_use) {
        hash_barrier(bar, h);
    }
    h.write_u32(*live_warps);
    h.write_u32(*live_threads);
    h.write_usize(exited_warps.len());
    for w in exited_warps {
        h.write_u32(*w);
    }
}

fn hash_barrier<H: Hasher>(bar: &Barrier, h: &mut H) {
    let Barrier {
        in_use,
        tc,
        ac,
        red,
        popc,
        and,
        or,
        arrived,
        participants,
    } = bar;
    debug_assert!(*in_use, "only barriers in use are hashed");
    h.write_u32(*tc);
    h.write_u32(*ac);
    h.write_u8(match red {
        None => 0,
        Some(r) => 1 + *r as u8,
    });
    h.write_u32(*popc);
    h.write_u8(*and as u8 | (*or as u8) << 1);
    h.write_usize(arrived.len());
    for a in arrived {
        h.write_u64(*a);
    }
    h.write_usize(participants.len());
    for (warp, lanes, reg, level) in participants {
        h.write_u32(*warp);
        h.write_u64(*lanes);
        h.write_u16(reg.0);
        h.write_u16(*level);
    }
}

fn token_kind(k: TokenKind) -> u8 {
    match k {
        TokenKind::Sync => 0,
        TokenKind::Diverge => 1,
        TokenKind::Call => 2,
        TokenKind::Break => 3,
    }
}

fn hash_warp<H: Hasher>(w: &Warp, h: &mut H) {
    let Warp {
        index,
        tid_base,
        real,
        completed,
        pc,
        active,
        dis,
        stack,
        retry,
        waiting,
        targets,
        depth,
        exited,
        carry,
        levels,
        lane_pc,
        lane_wait,
        lane_breaks,
        shadow: _,
    } = w;
    let real = *real;
    h.write_u32(*index);
    h.write_u32(*tid_base);
    h.write_u64(real);
    h.write_u8(*completed as u8 | (*retry as u8) << 1);
    if *completed {
        // A completed warp never steps again and nothing reads its registers.
        return;
    }
    h.write_u32(*pc);
    h.write_u64(*active);
    let DisableMask { brk, ret, exit } = dis;
    h.write_u64(*brk);
    h.write_u64(*ret);
    h.write_u64(*exit);
    h.write_usize(stack.len());
    for t in stack {
        let SimtToken {
            kind,
            mask,
            pc,
            reconv,
            retry,
        } = t;
        h.write_u8(token_kind(*kind) | (*retry as u8) << 2);
        h.write_u64(*mask);
        h.write_u32(*pc);
        h.write_u64(reconv.map_or(u64::MAX, u64::from));
    }
    h.write_u16(*waiting);
    h.write_u32(*targets);
    h.write_u64(*exited);
    h.write_u64(*carry);
    // Per-lane state of real lanes only: dummy lanes (beyond the block's threads) never run,
    // and hashing them would cost up to 32 times more for small blocks.
    let ws = depth.len();
    let real_lanes = real & lane_mask(ws.min(64) as u32);
    let each_real_lane = || lanes(real_lanes);
    for l in each_real_lane() {
        h.write_u16(depth[l]);
        h.write_u32(lane_pc.get(l).copied().unwrap_or(0));
        h.write_u16(lane_wait.get(l).copied().unwrap_or(0));
        let b = lane_breaks.get(l).map_or(&[][..], Vec::as_slice);
        h.write_usize(b.len());
        for p in b {
            h.write_u32(*p);
        }
    }
    h.write_usize(levels.len());
    for level in levels {
        let Level {
            regs,
            frame_base,
            func,
            call_pc,
        } = level;
        let nregs = regs.len().checked_div(ws).unwrap_or(0);
        h.write_usize(nregs);
        for l in each_real_lane() {
            h.write_u32(frame_base.get(l).copied().unwrap_or(0));
            h.write_u32(func.get(l).map_or(0, |f| f.0));
            h.write_u32(call_pc.get(l).copied().unwrap_or(0));
            for r in 0..nregs {
                h.write_u64(regs.get(r * ws + l).copied().unwrap_or(0));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hasher_is_deterministic_and_order_sensitive() {
        let f = |xs: &[u64]| {
            let mut h = StateHasher::new();
            for &x in xs {
                h.write_u64(x);
            }
            h.finish128()
        };
        assert_eq!(f(&[1, 2, 3]), f(&[1, 2, 3]));
        assert_ne!(f(&[1, 2, 3]), f(&[3, 2, 1]));
        assert_ne!(f(&[0]), f(&[0, 0]));
        assert_ne!(f(&[]), f(&[0]));
    }
}
