//! Canonical state hashing (ARCHITECTURE.md section 5, "stateful search with canonical state
//! hashing"; progress digest §7.2) and the read-only facts about units that explorers and
//! progress-model schedulers need.
//!
//! [`Machine::state_fingerprint`] is a 128-bit hash of everything that determines the machine's
//! future behaviour, and nothing else, so that a spin loop closes a cycle:
//! * hashed: memory contents ([`memory_model::Flat::hash_state`]), resident blocks (SM, warps,
//!   barriers, live counts), every warp's execution state (pc, masks, token stack, per-lane pcs,
//!   call depths, live registers and frames, carry flags, barrier waits), the issue cursor, the
//!   completed-block count and how the run ended (if it has);
//! * registers: only those live where their lane resumes ([`crate::load::liveness`]: the
//!   dead-variable reduction): at the lane's current call depth, live-in where the lane
//!   resumes (its own pc under independent thread scheduling; under the SIMT stack the warp
//!   pc if the lane is active, else the pc of the topmost token that holds it, which is where
//!   `unwind` activates it; for a lane disabled by `ret` or `brk`, the union over every token
//!   that holds it and their reconvergence points, an over-approximation, which is sound); at
//!   a caller's depth, live-in at the `call` it returns past; at a depth deeper than the lane's, what a callee may read before writing; an exited
//!   lane's registers all while [`FinalRegisters::Observed`] (only `shfl` sources otherwise).
//!   The number of registers kept is hashed with each lane. Under cached memory every
//!   register is kept (a pending load writes its register later). The kept registers are
//!   hashed row by row (a row is one register of every lane, `Regs`): a row every real lane
//!   keeps is hashed as its fingerprint, memoised with the row and dropped by every write to
//!   it, so that a successor state rehashes only the rows its step wrote; a row only some
//!   lanes keep is hashed as those lanes' values. Per-lane words (call depth, frame and
//!   function, call pc with kept count) are hashed once with a tag when every real lane
//!   has the same one (a converged warp), else lane by lane after the other tag;
//! * left out: dead registers (above), the step counter and the thread-instruction counter (monotone: no loop would ever
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
use super::warp::{ItsState, ModelState, SimtState, SimtToken, Warp, lane_mask, lanes};
use super::{Machine, Sm, Termination};
use crate::program::{FinalRegisters, LiveSet, Liveness, Pc};
use memory_model::MemoryEnv;
pub use memory_model::StateHasher;
use smallvec::SmallVec;
use std::hash::Hasher;
use traces::{DisableMask, TokenKind};

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

    /// [`Machine::state_fingerprint`] computed from scratch: no block's or register row's
    /// memoised fingerprint is read or filled, and every lane's kept registers are found lane
    /// by lane (no shortcut for converged warps). Always equal to it (a test checks this after
    /// every step of the corpus: a memo that outlived a change, or a shortcut that grouped
    /// lanes otherwise, would make them differ).
    pub fn state_fingerprint_from_scratch(&self) -> u128 {
        let mut h = StateHasher::new();
        let keep = Keep {
            fresh: true,
            ..self.hash_outside_blocks(&mut h)
        };
        h.write_usize(self.blocks.len());
        for (id, b) in self.blocks.iter() {
            let fingerprint = block_fingerprint(b, keep);
            h.write_u64(pack32(id, b.sm));
            h.write_u64(fingerprint as u64);
            h.write_u64((fingerprint >> 64) as u64);
        }
        self.mem.hash_state(&mut h);
        h.finish128()
    }

    /// The canonical state hash, 64 bits of [`Machine::state_fingerprint`].
    pub fn state_hash(&self) -> u64 {
        let f = self.state_fingerprint();
        (f as u64) ^ ((f >> 64) as u64)
    }

    /// Feeds the canonical state into `h` (see the module documentation).
    pub fn hash_state<H: Hasher>(&self, h: &mut H) {
        let keep = self.hash_outside_blocks(h);
        h.write_usize(self.blocks.len());
        // A block is hashed once per change (the table memoizes its fingerprint): a successor
        // state shares every block but the stepped one with its parent.
        for (id, b, fingerprint) in self
            .blocks
            .fingerprints(move |b| block_fingerprint(b, keep))
        {
            h.write_u64(pack32(id, b.sm));
            h.write_u64(fingerprint as u64);
            h.write_u64((fingerprint >> 64) as u64);
        }
        self.mem.hash_state(h);
    }

    /// Whether the grid's blocks are interchangeable: a permutation of the resident blocks
    /// (their execution state and their shared and local memory together) maps every
    /// execution to an execution, so that states equal up to such a permutation have the same
    /// futures up to it (the symmetry of identical processes, Emerson and Sistla; Ip and
    /// Dill's scalarsets). True when the program never reads `%ctaid` or `%smid` (nothing
    /// else a thread can read differs between blocks: the windows of shared and local memory
    /// are at the same generic addresses in every block), memory is flat (under cached memory
    /// a block's SM decides which L1 it sees), there is one grid, and every block of it has
    /// been issued (an unissued block's turn depends on its number, deviation D8).
    pub fn blocks_interchangeable(&self) -> bool {
        !self.mem.reads_depend_on_sm()
            && !self.program.reads_block_identity
            && matches!(&self.grids[..], [g] if g.next_block == g.info.shape.blocks)
    }

    /// The fingerprint of the state up to a permutation of the blocks: as
    /// [`Machine::state_fingerprint`], but the resident blocks (each with its shared and local
    /// memory) are hashed as a multiset, without their numbers and SMs. Equal for two states
    /// that differ by a permutation of the blocks; meaningful where
    /// [`Machine::blocks_interchangeable`] holds.
    pub fn symmetric_fingerprint(&self) -> u128 {
        let mut h = StateHasher::new();
        let keep = self.hash_outside_blocks(&mut h);
        let mut blocks = self.block_identities(keep);
        blocks.sort_unstable_by_key(|&(_, f)| f);
        h.write_usize(blocks.len());
        for (_, f) in blocks {
            h.write_u64(f as u64);
            h.write_u64((f >> 64) as u64);
        }
        self.mem.pages().hash_global_state(&mut h);
        h.finish128()
    }

    /// The resident blocks in canonical order: sorted by what [`Machine::symmetric_fingerprint`]
    /// hashes of each (its execution state with its shared and local memory), equal ones by
    /// number. Two states with one symmetric fingerprint map onto each other by sending the
    /// i-th block of one's order to the i-th of the other's (up to blocks with equal states,
    /// which are interchangeable).
    pub fn canonical_block_order(&self) -> Vec<u32> {
        let keep = self.keep();
        let mut blocks = self.block_identities(keep);
        blocks.sort_unstable_by_key(|&(id, f)| (f, id));
        blocks.into_iter().map(|(id, _)| id).collect()
    }

    /// Each resident block's number and the fingerprint of its state with its shared and local
    /// memory, by number.
    fn block_identities(&self, keep: Keep<'_>) -> Vec<(u32, u128)> {
        let mut memory = self.mem.pages().block_fingerprints().peekable();
        self.blocks
            .fingerprints(move |b| block_fingerprint(b, keep))
            .map(|(id, _, state)| {
                while memory.next_if(|&(m, _)| m < id).is_some() {}
                let shared = memory.next_if(|&(m, _)| m == id).map_or(0, |(_, f)| f);
                let mut h = StateHasher::new();
                h.write_u64(state as u64);
                h.write_u64((state >> 64) as u64);
                h.write_u64(shared as u64);
                h.write_u64((shared >> 64) as u64);
                (id, h.finish128())
            })
            .collect()
    }

    /// Which registers the canonical state keeps (see the module documentation).
    fn keep(&self) -> Keep<'_> {
        // A memory that keeps accesses in flight: every register (an in-flight load writes its
        // register when it completes, outside the instruction order the analysis follows).
        Keep {
            live: self
                .mem
                .performs_accesses_at_once()
                .then(|| self.program.liveness(self.final_registers)),
            final_registers: self.final_registers,
            fresh: false,
        }
    }

    /// Feeds what the canonical state holds outside the resident blocks and memory into `h`
    /// (how the run ended, the grids' issue and completion counts), checking that every field
    /// is accounted for; returns which registers the blocks' hashes keep.
    fn hash_outside_blocks<H: Hasher>(&self, h: &mut H) -> Keep<'_> {
        let Machine {
            program: _,
            info: _,
            fixed: _,  // the launch's
            mem: _,    // by the caller
            blocks: _, // by the caller
            sms,
            grids,
            enabled: _,
            steps: _,
            thread_instructions: _,
            termination,
            checking: _,
            scratch: _,
            mem_generation: _,
            final_registers: _, // decides `keep`
            finals,
        } = self;
        match termination.as_deref() {
            None => h.write_u8(0),
            Some(Termination::Completed) => h.write_u8(1),
            Some(Termination::Deadlock(_)) => h.write_u8(2),
            Some(Termination::StepLimit) => h.write_u8(3),
            Some(Termination::Error(e)) => {
                h.write_u8(4);
                h.write_u32(e.pc);
                h.write(e.message.as_bytes());
            }
            Some(Termination::TimeLimit) => h.write_u8(5),
        }
        // One grid: its issue and completion counts (as before grids were several); more: each
        // grid's, and its phase.
        if let [g] = &grids[..] {
            h.write_u64(pack32(g.next_block, g.completed_blocks));
        } else {
            for g in grids.iter() {
                h.write_u64(pack32(g.next_block, g.completed_blocks));
                h.write_u8(g.phase as u8);
            }
        }
        // SM occupancy is left out: it is a function of the resident blocks (their SM, their
        // warps' real lanes and completion, the launch's shared bytes), which are hashed.
        let _: &[Sm] = sms;
        // The registers the threads of completed blocks exited with, where an observer reads
        // them (`FinalRegisters::Observed`; empty otherwise, and nothing is written, so other
        // states hash as they always did).
        if !finals.is_empty() {
            h.write_usize(finals.len());
            for (id, warps) in finals.iter() {
                h.write_u32(*id);
                for w in warps {
                    hash_final_registers(w, h);
                }
            }
        }
        self.keep()
    }

    /// The number of blocks in the grid (in every grid: global block numbers are
    /// `0..total_blocks()`).
    pub fn total_blocks(&self) -> u32 {
        self.grids.iter().map(|g| g.info.shape.blocks).sum()
    }

    /// Warps per block (the last one may have fewer real lanes): the largest grid's, with
    /// several grids. A tool that walks one block's warps wants [`Machine::warps_in_block`].
    pub fn warps_per_block(&self) -> u32 {
        self.grids
            .iter()
            .map(|g| g.info.shape.warps_per_block)
            .max()
            .unwrap_or(0)
    }

    /// Threads per block: the largest grid's, with several grids. A tool that walks one
    /// block's threads wants [`Machine::threads_in_block`].
    pub fn threads_per_block(&self) -> u32 {
        self.grids
            .iter()
            .map(|g| g.info.shape.threads_per_block)
            .max()
            .unwrap_or(0)
    }

    /// The warps of global block `block`: its grid's (each grid of a program has its own block
    /// shape, thesis 5.7); 0 for a block number no grid has.
    pub fn warps_in_block(&self, block: u32) -> u32 {
        if block >= self.total_blocks() {
            return 0;
        }
        self.grid_info(block).shape.warps_per_block
    }

    /// The threads of global block `block`: its grid's; 0 for a block number no grid has.
    pub fn threads_in_block(&self, block: u32) -> u32 {
        if block >= self.total_blocks() {
            return 0;
        }
        self.grid_info(block).shape.threads_per_block
    }

    /// Lanes per warp.
    pub fn warp_size(&self) -> u32 {
        self.info.shape.warp_size
    }

    /// Whether block `block` is unissued, resident or completed.
    pub fn block_status(&self, block: u32) -> BlockStatus {
        let g = &self.grids[self.grid_index(block)];
        if block >= g.base + g.next_block {
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
            BlockStatus::Resident => self.resident_warp(block, warp).is_none_or(|w| w.completed),
        }
    }

    /// The lanes of a resident warp that have exited (dummy lanes included); every lane of a
    /// completed block, none of an unissued one.
    pub fn warp_exited_lanes(&self, block: u32, warp: u32) -> u64 {
        match self.block_status(block) {
            BlockStatus::Completed => u64::MAX,
            BlockStatus::Unissued => 0,
            BlockStatus::Resident => self
                .resident_warp(block, warp)
                .map_or(u64::MAX, |w| if w.completed { u64::MAX } else { w.exited }),
        }
    }

    /// The active mask α of a resident warp under the SIMT stack (the lanes a `Warp` or
    /// `Target` choice steps), 0 if the warp is not resident.
    pub fn warp_active(&self, block: u32, warp: u32) -> u64 {
        self.resident_warp(block, warp)
            .map_or(0, |w| match &w.model {
                ModelState::Simt(s) => s.active,
                // No α under ITS: every real lane (what `warp_view` calls active).
                ModelState::Its(_) => w.real,
            })
    }
}

/// Which registers the canonical state keeps: the live ones under `live`, every one without;
/// and whether the state is hashed the reference way (`fresh`): register rows afresh instead of
/// through their memos, and each lane's kept registers found lane by lane, without the
/// shortcuts for a converged warp and for lanes that resume like the previous one.
#[derive(Clone, Copy)]
struct Keep<'a> {
    live: Option<&'a Liveness>,
    final_registers: FinalRegisters,
    fresh: bool,
}

/// The fingerprint of one resident block (its index and SM are hashed by the caller).
fn block_fingerprint(b: &Block, keep: Keep<'_>) -> u128 {
    let mut h = StateHasher::new();
    hash_block(b, &mut h, keep);
    h.finish128()
}

fn hash_block<H: Hasher>(b: &Block, h: &mut H, keep: Keep<'_>) {
    let Block {
        id: _,
        ctaid: _,
        sm: _, // hashed with the block's index by the caller
        warps,
        shared,
    } = b;
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
    h.write_u64(warps.len() as u64 | (in_use as u64) << 48);
    for w in warps {
        hash_warp(w, h, keep);
    }
    for bar in bars.iter().filter(|bar| bar.in_use) {
        hash_barrier(bar, h);
    }
    h.write_u64(pack32(*live_warps, *live_threads));
    h.write_usize(exited_warps.len());
    for w in exited_warps {
        h.write_u32(*w);
    }
}

/// Two 32-bit fields in one word (the hasher's cost is per word written).
#[inline(always)]
fn pack32(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
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
    let red = match red {
        None => 0,
        Some(r) => 1 + *r as u32,
    };
    h.write_u64(pack32(*tc, *ac));
    h.write_u64(pack32(*popc, red | (*and as u32) << 8 | (*or as u32) << 9));
    h.write_u64(pack32(arrived.len() as u32, participants.len() as u32));
    for a in arrived {
        h.write_u64(*a);
    }
    for (warp, lanes, reg, level) in participants {
        h.write_u64(pack32(*warp, reg.0 as u32 | (*level as u32) << 16));
        h.write_u64(*lanes);
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

fn hash_warp<H: Hasher>(w: &Warp, h: &mut H, keep: Keep<'_>) {
    let Warp {
        index,
        tid_base,
        real,
        completed,
        model,
        depth,
        exited,
        carry,
        levels,
        picked,
        picks,
        shadow: _,
    } = w;
    let real = *real;
    h.write_u64(pack32(*index, *tid_base));
    h.write_u64(real);
    let retry = matches!(model, ModelState::Simt(s) if s.retry);
    h.write_u8(*completed as u8 | (retry as u8) << 1);
    if *completed {
        // A completed warp never steps again; only an observer of final registers reads them.
        if keep.final_registers == FinalRegisters::Observed {
            hash_final_registers(w, h);
        }
        return;
    }
    // The model's state (one model per machine: the other model's fields do not exist).
    let its = match model {
        ModelState::Simt(s) => {
            hash_simt(s, h);
            None
        }
        ModelState::Its(s) => Some(s),
    };
    h.write_u64(*exited);
    h.write_u64(*carry);
    // Picked results of a body-less call (only when some lane has one: states of programs
    // without such calls hash as they always did).
    if *picked != 0 {
        h.write_u64(*picked);
        for l in lanes(*picked) {
            h.write_u64(picks.as_ref().and_then(|p| p.get(l)).copied().unwrap_or(0));
        }
    }
    // Per-lane state of real lanes only: dummy lanes (beyond the block's threads) never run,
    // and hashing them would cost up to 32 times more for small blocks.
    let ws = depth.len();
    let real_lanes = real & lane_mask(ws.min(64) as u32);
    let each_real_lane = || lanes(real_lanes);
    let uniform_depth = write_lanes(h, real_lanes, |l| depth[l] as u64);
    if let Some(ItsState {
        lane_pc,
        lane_wait,
        lane_breaks,
        threads: _,
    }) = its
    {
        for l in each_real_lane() {
            let b = lane_breaks.get(l).map_or(&[][..], Vec::as_slice);
            h.write_u64(pack32(
                lane_pc.get(l).copied().unwrap_or(0),
                lane_wait.get(l).copied().unwrap_or(0) as u32,
            ));
            h.write_usize(b.len());
            for p in b {
                h.write_u32(*p);
            }
        }
    }
    // Every real lane resumes alike at its call depth when the SIMT stack's warp is converged
    // there: none has exited, all are active at one depth (`Kept::resume` gives each the warp
    // pc). Their kept registers are then one set, computed once for the level.
    let converged_depth = match model {
        ModelState::Simt(s)
            if s.stack.len() < 63
                && s.active & real_lanes == real_lanes
                && *exited & real_lanes == 0 =>
        {
            uniform_depth
        }
        _ => None,
    };
    h.write_usize(levels.len());
    let mut kept = keep
        .live
        .map(|live| Kept::new(live, keep.final_registers, w));
    // Lanes that keep the same registers, with those registers (`None`: every one). Usually
    // one group (a converged warp), so that most rows are kept by every real lane.
    let mut groups: SmallVec<[KeptGroup; 2]> = SmallVec::new();
    for (k, level) in levels.iter().enumerate() {
        let Level {
            regs,
            frame_base,
            func,
            call_pc,
        } = level;
        let nregs = regs.count();
        h.write_usize(nregs);
        groups.clear();
        write_lanes(h, real_lanes, |l| {
            pack32(
                frame_base.get(l).copied().unwrap_or(0),
                func.get(l).map_or(0, |f| f.0),
            )
        });
        // Each lane's call pc with its kept count (gathered first: the kept sets are computed
        // in lane order, memoised for runs of lanes that resume alike).
        let mut pc_count = [0u64; 64];
        // The group of the previous lane, while the next lane resumes alike (its kept set is
        // then the same one, not recomputed): a converged warp's lanes join it without
        // comparing register sets lane by lane.
        let mut previous: Option<usize> = None;
        if converged_depth == Some(k as u64) && real_lanes != 0 && !keep.fresh {
            let kept_here = match kept.as_mut() {
                None => None,
                Some(kept) => {
                    kept.refresh(real_lanes.trailing_zeros() as usize, k, nregs);
                    kept.current()
                }
            };
            let (bits, count) = match kept_here {
                None => (None, nregs as u32),
                Some((bits, count)) => (Some(bits), count),
            };
            for l in each_real_lane() {
                pc_count[l] = pack32(call_pc.get(l).copied().unwrap_or(0), count);
            }
            groups.push((bits.map(SmallVec::from_slice), real_lanes));
        }
        // Otherwise lane by lane.
        if groups.is_empty() {
            for l in each_real_lane() {
                let call_pc = call_pc.get(l).copied().unwrap_or(0);
                let (same_as_previous, kept_here) = match kept.as_mut() {
                    None => (true, None),
                    Some(kept) => {
                        let recomputed = kept.refresh(l, k, nregs);
                        (!recomputed, kept.current())
                    }
                };
                let (bits, count) = match kept_here {
                    None => (None, nregs as u32),
                    Some((bits, count)) => (Some(bits), count),
                };
                pc_count[l] = pack32(call_pc, count);
                if let Some(g) = previous.filter(|_| same_as_previous && !keep.fresh) {
                    groups[g].1 |= 1 << l;
                    continue;
                }
                let g = match groups.iter().position(|(b, _)| b.as_deref() == bits) {
                    Some(g) => {
                        groups[g].1 |= 1 << l;
                        g
                    }
                    None => {
                        groups.push((bits.map(SmallVec::from_slice), 1 << l));
                        groups.len() - 1
                    }
                };
                previous = Some(g);
            }
        }
        write_lanes(h, real_lanes, |l| pc_count[l]);
        // Then the kept registers row by row: a row that every real lane keeps is its
        // memoised fingerprint (rehashed only when a step wrote it), else the values of the
        // lanes that keep it.
        let row = |h: &mut H, r: usize, keeping: u64| {
            if keeping == real_lanes {
                let f = regs.row_fingerprint(r, real_lanes, keep.fresh);
                h.write_u64(f as u64);
                h.write_u64((f >> 64) as u64);
            } else {
                // The row once, then its lanes (a missing row or lane reads as zero).
                let values = regs.row(r).unwrap_or(&[]);
                for l in lanes(keeping) {
                    h.write_u64(values.get(l).copied().unwrap_or(0));
                }
            }
        };
        match &groups[..] {
            [] => {}
            // Every lane keeps the same registers (a converged warp): those rows, in order.
            [(None, keeping)] => (0..nregs).for_each(|r| row(h, r, *keeping)),
            [(Some(bits), keeping)] => {
                for (i, &word) in bits.iter().enumerate() {
                    let mut m = word;
                    while m != 0 {
                        row(h, i * 64 + m.trailing_zeros() as usize, *keeping);
                        m &= m - 1;
                    }
                }
            }
            // Diverged lanes: each register some group keeps, in order, with the lanes of the
            // groups that keep it. Taken 64 registers at a time from each group's bit word, so
            // that registers no group keeps cost nothing.
            _ => {
                for i in 0..nregs.div_ceil(64) {
                    let below_count = match nregs - i * 64 {
                        n if n >= 64 => u64::MAX,
                        n => (1u64 << n) - 1,
                    };
                    let words: SmallVec<[(u64, u64); 4]> = groups
                        .iter()
                        .map(|(bits, lanes)| {
                            let word = bits
                                .as_ref()
                                .map_or(u64::MAX, |b| b.get(i).copied().unwrap_or(0));
                            (word & below_count, *lanes)
                        })
                        .collect();
                    let mut kept_by_any = words.iter().fold(0, |m, (w, _)| m | w);
                    while kept_by_any != 0 {
                        let bit = kept_by_any.trailing_zeros();
                        kept_by_any &= kept_by_any - 1;
                        let keeping = words
                            .iter()
                            .filter(|(w, _)| w >> bit & 1 == 1)
                            .fold(0, |m, (_, lanes)| m | lanes);
                        row(h, i * 64 + bit as usize, keeping);
                    }
                }
            }
        }
    }
}

/// One word per lane of `real_lanes`, hashed once when every such lane has the same value (the
/// usual case: a converged warp's lanes share their depth, frame, function and call pc). The
/// leading tag says which encoding follows, so the hash stays a function of the values alone
/// and the two encodings cannot be confused.
/// Returns the one value when every lane has it.
#[inline]
fn write_lanes<H: Hasher>(h: &mut H, real_lanes: u64, value: impl Fn(usize) -> u64) -> Option<u64> {
    if real_lanes == 0 {
        return None;
    }
    let first = value(real_lanes.trailing_zeros() as usize);
    // Real lanes are the low lanes of a warp (only a block's last warp has fewer): a range is
    // walked without the bit iterator's loop-carried mask.
    let uniform = if real_lanes & real_lanes.wrapping_add(1) == 0 {
        (0..64 - real_lanes.leading_zeros() as usize).all(|l| value(l) == first)
    } else {
        lanes(real_lanes).all(|l| value(l) == first)
    };
    if uniform {
        h.write_u8(0);
        h.write_u64(first);
        Some(first)
    } else {
        h.write_u8(1);
        for l in lanes(real_lanes) {
            h.write_u64(value(l));
        }
        None
    }
}

/// Lanes of one call level that keep the same registers: the registers (`None`: every one)
/// and the lanes.
type KeptGroup = (Option<SmallVec<[u64; 4]>>, u64);

/// The registers every real lane of a completed warp exited with, at the call level it exited
/// from: what an observer of final registers reads ([`FinalRegisters::Observed`]).
fn hash_final_registers<H: Hasher>(w: &Warp, h: &mut H) {
    let ws = w.depth.len();
    for l in lanes(w.real & lane_mask(ws.min(64) as u32)) {
        let Some(level) = w.levels.get(w.depth[l] as usize) else {
            continue;
        };
        let nregs = level.regs.count();
        h.write_usize(nregs);
        for r in 0..nregs {
            h.write_u64(level.regs.get(r, l).unwrap_or(0));
        }
    }
}

/// The live registers of each lane of a warp at each call level, memoised for runs of lanes
/// that resume alike (all of a converged warp's lanes share one set).
struct Kept<'a> {
    live: &'a Liveness,
    final_registers: FinalRegisters,
    w: &'a Warp,
    /// The key of `bits`.
    key: Option<(usize, Resume)>,
    /// The live registers below the level's count, and how many.
    bits: SmallVec<[u64; 4]>,
    count: u32,
    /// `bits` is every register.
    all: bool,
}

/// What decides a lane's live registers at one level (with the level).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Resume {
    /// At its call depth under the SIMT stack: the addresses it may resume at, bit 0 for
    /// the warp pc, bit `1 + i` for token `i` (with its reconvergence point when bit 63 is
    /// set too).
    Tokens(u64),
    /// At its call depth under independent thread scheduling: its pc.
    Pc(Pc),
    /// A caller's level: the `call` the lane returns past.
    Call(Pc),
    /// A level deeper than the lane's call depth.
    Stale,
    /// The lane has exited.
    Exited,
    /// Nothing says where the lane resumes: every register.
    Unknown,
}

impl<'a> Kept<'a> {
    fn new(live: &'a Liveness, final_registers: FinalRegisters, w: &'a Warp) -> Kept<'a> {
        Kept {
            live,
            final_registers,
            w,
            key: None,
            bits: SmallVec::new(),
            count: 0,
            all: false,
        }
    }

    /// Makes [`Kept::current`] lane `l`'s live registers at level `k` of `nregs` registers;
    /// whether they had to be computed (the lane does not resume as the one asked before).
    fn refresh(&mut self, l: usize, k: usize, nregs: usize) -> bool {
        let resume = self.resume(l, k);
        if self.key == Some((k, resume)) {
            return false;
        }
        self.key = Some((k, resume));
        self.compute(resume, nregs);
        true
    }

    /// The live registers [`Kept::refresh`] last made current, and how many; `None` for every
    /// register.
    fn current(&self) -> Option<(&[u64], u32)> {
        (!self.all).then_some((&self.bits[..], self.count))
    }

    fn resume(&self, l: usize, k: usize) -> Resume {
        let w = self.w;
        if w.exited >> l & 1 == 1 {
            return Resume::Exited;
        }
        let depth = w.depth.get(l).map_or(0, |&d| d as usize);
        if k > depth {
            return Resume::Stale;
        }
        if k < depth {
            return Resume::Call(w.levels[k + 1].call_pc.get(l).copied().unwrap_or(0));
        }
        match &w.model {
            ModelState::Its(s) => Resume::Pc(s.lane_pc.get(l).copied().unwrap_or(0)),
            ModelState::Simt(s) if s.stack.len() < 63 => {
                let bit = 1u64 << l;
                // An active lane executes from the warp pc: the tokens that hold it are
                // reconvergence points it reaches by executing, where its registers are
                // what it computes on the way.
                if s.active & bit != 0 {
                    return Resume::Tokens(1);
                }
                // A lane disabled by `ret` or `brk` waits for a call or break token, past
                // others that hold it: every token that holds it (a union, sound).
                if (s.dis.ret | s.dis.brk) & bit != 0 {
                    let mut sig = 0;
                    for (i, t) in s.stack.iter().enumerate() {
                        sig |= (t.mask >> l & 1) << (i + 1);
                    }
                    return if sig == 0 {
                        Resume::Unknown
                    } else {
                        Resume::Tokens(sig | 1 << 63)
                    };
                }
                // A waiting lane resumes at the topmost token that holds it: `unwind` pops
                // tokens from the top and activates the lanes of the first that holds any
                // lane not disabled (thesis 5.4.1 `updExecState`).
                match s.stack.iter().rposition(|t| t.mask & bit != 0) {
                    Some(i) => Resume::Tokens(1 << (i + 1)),
                    None => Resume::Unknown,
                }
            }
            ModelState::Simt(_) => Resume::Unknown,
        }
    }

    fn compute(&mut self, resume: Resume, nregs: usize) {
        let live = self.live;
        let words = nregs.div_ceil(64);
        self.bits.clear();
        self.bits.resize(words, 0);
        self.all = false;
        let union = |set: LiveSet<'_>, bits: &mut SmallVec<[u64; 4]>, all: &mut bool| match set {
            LiveSet::All => *all = true,
            LiveSet::Bits(b) => {
                for (x, y) in bits.iter_mut().zip(b) {
                    *x |= y;
                }
            }
        };
        let (bits, all) = (&mut self.bits, &mut self.all);
        union(LiveSet::Bits(live.always()), bits, all);
        match resume {
            Resume::Unknown => *all = true,
            Resume::Exited => {
                if self.final_registers == FinalRegisters::Observed {
                    *all = true;
                }
            }
            Resume::Stale => union(live.stale(), bits, all),
            Resume::Call(pc) | Resume::Pc(pc) => union(live.live_in(pc), bits, all),
            Resume::Tokens(sig) => {
                let s = self.w.simt();
                if sig & 1 == 1 {
                    union(live.live_in(s.pc), bits, all);
                }
                for (i, t) in s.stack.iter().enumerate() {
                    if sig >> (i + 1) & 1 == 1 {
                        union(live.live_in(t.pc), bits, all);
                        if let Some(r) = t.reconv.filter(|_| sig >> 63 == 1) {
                            union(live.live_in(r), bits, all);
                        }
                    }
                }
            }
        }
        // Only the level's registers.
        if !nregs.is_multiple_of(64)
            && let Some(last) = bits.last_mut()
        {
            *last &= (1u64 << (nregs % 64)) - 1;
        }
        self.count = bits.iter().map(|b| b.count_ones()).sum();
    }
}

/// The SIMT stack's state ς: pc, target count, α, δ and the tokens.
fn hash_simt<H: Hasher>(s: &SimtState, h: &mut H) {
    let SimtState {
        pc,
        active,
        dis,
        stack,
        retry: _,
        waiting,
        targets,
    } = s;
    h.write_u64(pack32(*pc, *targets));
    h.write_u64(pack32(stack.len() as u32, *waiting as u32));
    h.write_u64(*active);
    let DisableMask { brk, ret, exit } = dis;
    h.write_u64(*brk);
    h.write_u64(*ret);
    h.write_u64(*exit);
    for t in stack {
        let SimtToken {
            kind,
            mask,
            pc,
            reconv,
            retry,
        } = t;
        h.write_u64(pack32(token_kind(*kind) as u32 | (*retry as u32) << 2, *pc));
        h.write_u64(*mask);
        h.write_u64(reconv.map_or(u64::MAX, u64::from));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_lane_words_are_hashed_once_when_uniform_and_stay_distinct() {
        let f = |mask: u64, values: &[u64]| {
            let mut h = StateHasher::new();
            write_lanes(&mut h, mask, |l| values[l]);
            h.finish128()
        };
        let words = |xs: &[u64]| {
            let mut h = StateHasher::new();
            xs.iter().for_each(|&x| h.write_u64(x));
            h.finish128()
        };
        // A converged warp: tag and one word, whatever the lane count.
        assert_eq!(f(0b1011, &[7, 7, 9, 7]), words(&[0, 7]));
        // Lanes that differ: tag, then each real lane's word in lane order.
        assert_eq!(f(0b1011, &[7, 8, 9, 7]), words(&[1, 7, 8, 7]));
        // Neither encoding is mistaken for the other, nor a value for a tag.
        assert_ne!(f(0b11, &[1, 1]), f(0b11, &[1, 0]));
        assert_ne!(f(0b11, &[0, 0]), f(0b11, &[0, 1]));
        assert_ne!(f(0b1, &[1]), f(0b11, &[0, 1]));
        assert_eq!(f(0, &[]), StateHasher::new().finish128());
    }

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
