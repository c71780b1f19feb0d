//! Units of progress on the CUDA machine (progress digest §7.1): which unit a choice steps, and
//! which units have terminated, at a chosen [`Level`].
//!
//! * `grids`: unit `g` = grid `g` of a program of several launches (thesis 5.7: the grids of
//!   a context), a step of any of its warps is a step of the grid;
//! * `blocks`: unit `b` = block `b` of the grid (the paper's workgroups; global block numbers
//!   across a program's grids, named by grid and block in the grid: `grid 1 block 0`);
//! * `warps`: unit `b * warps_per_block + w` = warp `w` of block `b`;
//! * `lanes`: unit `b * threads_per_block + t` = thread `t` of block `b` (a lane; under `its`
//!   and `threads` a `Lanes` choice steps its whole converged group, under `simt-stack` a warp
//!   step steps the active lanes α).
//!
//! Memory (`--memory cached`, thesis chapter 4): a fair memory system eventually performs every
//! operation it accepted, whatever the progress model promises the threads. So each in-flight
//! operation is a fairness unit of its own: unit `count + 1 + i` is the operation in slot `i`
//! of the cached memory's table ([`Units::op_units`], at most [`MAX_OP_SLOTS`] of them; an
//! operation in a higher slot is charged to the unit whose thread issued it). These units are
//! owed a step under every model while they are live (`Lts::owed`), are live until the run ends,
//! and their steps make no program unit "have stepped". Silent actions (evictions,
//! write-backs, flushes) are steps of one more unit, *the memory system* (`count`), which
//! counts as terminated from the start: no model owes it a step. So the oracle never charges
//! one unit's step to another: before, every memory micro step was charged to the lowest live
//! unit, and a writer whose second store never ran counted as stepping through a reader's
//! loads.
//!
//! Choices that belong to no unit are *system* choices and are folded into the preceding step
//! (see [`settle`]): `Issue` (a block becomes resident as soon as an SM has room, on the
//! lowest-numbered such SM) and `EndBarrier` (a complete barrier releases its warps at once).
//! Why: issue and barrier completion are not steps of a unit under any progress model (OBE's
//! "has stepped" means "executed an instruction"), delaying them only delays the units they
//! enable, and blocks are issued in linear order anyway (deviation D8), so the choice of SM is
//! the only behaviour folded away (it is observable through `%smid` alone). A block that can
//! never be issued (the device is full of blocks that never finish) is a live unit that is
//! never enabled, so weak fairness does not owe it a step.
//!
//! One exception: when the blocks of several grids compete for room (thesis 5.7: the grids of
//! a context share the SMs), the grid whose block takes a free SM first decides which blocks
//! become resident at all, so [`settle`] leaves those issues to the search, which branches
//! over the grids ([`branches`]; [`issues_compete`] says when).

use crate::progress::{MAX_UNITS, Unit, UnitSet};
use semantics::machine::state_hash::BlockStatus;
use semantics::machine::{GridPhase, Machine, StepError};
use std::fmt;
use std::str::FromStr;
use traces::{Choice, MemChoice, lane_mask};

/// The most in-flight memory operations that are fairness units of their own.
pub const MAX_OP_SLOTS: u32 = 16;

/// The level progress models apply at (`--level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// Grids of a program of several launches (one unit for a one-kernel launch).
    Grids,
    /// Blocks (CTAs) of the grid.
    Blocks,
    /// Warps, numbered across the grid.
    Warps,
    /// Lanes (threads), numbered across the grid.
    Lanes,
}

impl Level {
    pub const fn name(self) -> &'static str {
        match self {
            Level::Grids => "grids",
            Level::Blocks => "blocks",
            Level::Warps => "warps",
            Level::Lanes => "lanes",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A level name that is none of the three.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown level `{0}` (expected grids, blocks, warps or lanes)")]
pub struct UnknownLevel(pub String);

impl FromStr for Level {
    type Err = UnknownLevel;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "grids" | "grid" | "kernels" => Ok(Level::Grids),
            "blocks" | "block" | "ctas" => Ok(Level::Blocks),
            "warps" | "warp" => Ok(Level::Warps),
            "lanes" | "lane" | "threads" => Ok(Level::Lanes),
            _ => Err(UnknownLevel(s.to_string())),
        }
    }
}

/// The machine's units at one level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Units {
    pub level: Level,
    /// Whether the machine has a memory system with choices of its own (cached memory): then
    /// unit [`Units::count`] is the memory system.
    memory: bool,
    /// In-flight operation slots that are units of their own (after the memory system).
    op_slots: u32,
    grids: u32,
    blocks: u32,
    warps_per_block: u32,
    threads_per_block: u32,
    warp_size: u32,
    /// The global block number of each grid's block 0, for names, in a program of several
    /// grids (empty for one: its names do not say the grid).
    grid_bases: Vec<u32>,
}

/// More units than a progress model handles.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{count} {level} are more than the {MAX_UNITS} units a progress model handles (choose a coarser --level or a smaller launch)"
)]
pub struct TooManyUnits {
    pub count: usize,
    pub level: Level,
}

impl Units {
    pub fn new(machine: &Machine, level: Level) -> Result<Units, TooManyUnits> {
        let u = Units {
            level,
            memory: !machine.performs_accesses_at_once(),
            op_slots: 0,
            grids: machine.grids().len() as u32,
            blocks: machine.total_blocks(),
            warps_per_block: machine.warps_per_block(),
            threads_per_block: machine.threads_per_block(),
            warp_size: machine.warp_size(),
            grid_bases: Vec::new(),
        };
        let count = u.count_u64();
        if count + u.memory as u64 > MAX_UNITS as u64 {
            return Err(TooManyUnits {
                count: count as usize,
                level,
            });
        }
        let op_slots = if u.memory {
            (MAX_UNITS as u64 - count - 1).min(MAX_OP_SLOTS as u64) as u32
        } else {
            0
        };
        let grids = machine.grids();
        let grid_bases = if grids.len() > 1 {
            grids.iter().map(|g| g.base).collect()
        } else {
            Vec::new()
        };
        Ok(Units {
            op_slots,
            grid_bases,
            ..u
        })
    }

    fn count_u64(&self) -> u64 {
        let b = self.blocks as u64;
        match self.level {
            Level::Grids => self.grids as u64,
            Level::Blocks => b,
            Level::Warps => b * self.warps_per_block as u64,
            Level::Lanes => b * self.threads_per_block as u64,
        }
    }

    /// The blocks of the launch, in every grid.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// The units of the program (blocks, warps or lanes).
    pub fn count(&self) -> usize {
        self.count_u64() as usize
    }

    /// The units of the state graph: the program's, then the memory system's and its
    /// operation slots' if it has them.
    pub fn graph_units(&self) -> usize {
        self.count() + self.memory as usize + self.op_slots as usize
    }

    /// The in-flight operation slots' units: owed a step under every model while live.
    pub fn op_units(&self) -> UnitSet {
        let start = self.count() + 1;
        (0..self.op_slots as usize).fold(UnitSet::EMPTY, |s, i| s.with((start + i) as Unit))
    }

    /// The units whose steps make no unit "have stepped": the memory system's.
    pub fn memory_units(&self) -> UnitSet {
        self.op_units()
            .union(self.memory_unit().map_or(UnitSet::EMPTY, UnitSet::single))
    }

    /// The memory system's unit (cached memory): it steps silent actions, is never owed a
    /// step and counts as terminated.
    pub fn memory_unit(&self) -> Option<Unit> {
        self.memory.then(|| self.count() as Unit)
    }

    /// The unit of thread `thread` of block `block`.
    fn of_thread(&self, machine: &Machine, block: u32, thread: u32) -> UnitSet {
        UnitSet::single(match self.level {
            Level::Grids => machine.grid_of_block(block).0 as Unit,
            Level::Blocks => block as Unit,
            Level::Warps => (block * self.warps_per_block + thread / self.warp_size.max(1)) as Unit,
            Level::Lanes => (block * self.threads_per_block + thread) as Unit,
        })
    }

    /// The unit a memory choice steps: its operation's slot for a micro step of an in-flight
    /// operation (the issuing thread's unit past [`MAX_OP_SLOTS`]), the memory system's for a
    /// silent action.
    fn of_memory(&self, machine: &Machine, choice: &MemChoice) -> UnitSet {
        let system = self.memory_unit().map_or(UnitSet::EMPTY, UnitSet::single);
        let MemChoice::Step { op } = *choice else {
            return system;
        };
        if op < self.op_slots {
            return UnitSet::single(self.count() + 1 + op as Unit);
        }
        machine
            .cache()
            .and_then(|c| c.ops().into_iter().find(|o| o.id == op))
            .map_or(system, |o| {
                self.of_thread(machine, o.request.who.block, o.request.who.thread)
            })
    }

    /// The units a choice steps; empty for system choices (`Issue`, `EndBarrier`). A memory
    /// choice steps the unit that issued its operation, or the memory system (module header).
    pub fn of(&self, machine: &Machine, choice: &Choice) -> UnitSet {
        let (block, warp, lanes) = match *choice {
            Choice::Warp { block, warp } | Choice::Target { block, warp, .. } => {
                (block, warp, machine.warp_active(block, warp))
            }
            Choice::Lanes { block, warp, mask } => (block, warp, mask),
            // A lane's pick of a body-less call's result: a step of that lane.
            Choice::Pick {
                block, warp, lane, ..
            } => (block, warp, 1u64 << lane),
            Choice::Mem(m) => return self.of_memory(machine, &m),
            Choice::Issue { .. } | Choice::EndBarrier { .. } => {
                return UnitSet::EMPTY;
            }
        };
        match self.level {
            Level::Grids => UnitSet::single(machine.grid_of_block(block).0 as Unit),
            Level::Blocks => UnitSet::single(block as Unit),
            Level::Warps => UnitSet::single((block * self.warps_per_block + warp) as Unit),
            Level::Lanes => {
                let base = (block * self.threads_per_block + warp * self.warp_size) as u64;
                let real = self
                    .threads_per_block
                    .saturating_sub(warp * self.warp_size)
                    .min(self.warp_size);
                let lanes = lanes & lane_mask(real);
                if lanes == 0 || base >= MAX_UNITS as u64 {
                    // A step of no real lane (cannot happen for an enabled choice): charge the
                    // warp's first lane so the edge still names a unit.
                    return UnitSet::single(base as Unit);
                }
                UnitSet::from_bits(lanes << base)
            }
        }
    }

    /// `set` with every unit of block `b` renamed to the same unit of block `map[b]` (a
    /// permutation of the blocks, [`crate::symmetry::block_map`]); grids, the memory system
    /// and its slots keep their names.
    pub fn rename_blocks(&self, set: UnitSet, map: &[u32]) -> UnitSet {
        let per_block = match self.level {
            Level::Grids => return set,
            Level::Blocks => 1,
            Level::Warps => self.warps_per_block,
            Level::Lanes => self.threads_per_block,
        } as usize;
        let program = self.count();
        set.iter().fold(UnitSet::EMPTY, |out, u| {
            let renamed = if u < program {
                let (block, rest) = (u / per_block, u % per_block);
                map.get(block).map_or(u, |&b| b as usize * per_block + rest)
            } else {
                u
            };
            out.with(renamed)
        })
    }

    /// The units that have terminated (the memory system's unit always has, the operation
    /// slots when the run has ended).
    pub fn done(&self, machine: &Machine) -> UnitSet {
        let mut done = self.memory_unit().map_or(UnitSet::EMPTY, UnitSet::single);
        if machine.termination().is_some() {
            done = done.union(self.op_units());
        }
        if self.level == Level::Grids {
            for (g, grid) in machine.grids().iter().enumerate() {
                if grid.phase == GridPhase::Completed {
                    done = done.with(g as Unit);
                }
            }
            return done;
        }
        for b in 0..self.blocks {
            let status = machine.block_status(b);
            match self.level {
                Level::Grids => {}
                Level::Blocks => {
                    if status == BlockStatus::Completed {
                        done = done.with(b as Unit);
                    }
                }
                Level::Warps => {
                    for w in 0..self.warps_per_block {
                        if machine.warp_completed(b, w) {
                            done = done.with((b * self.warps_per_block + w) as Unit);
                        }
                    }
                }
                Level::Lanes => {
                    for w in 0..self.warps_per_block {
                        let base = b * self.threads_per_block + w * self.warp_size;
                        let real = self
                            .threads_per_block
                            .saturating_sub(w * self.warp_size)
                            .min(self.warp_size);
                        let exited = machine.warp_exited_lanes(b, w) & lane_mask(real);
                        done = done.union(UnitSet::from_bits(exited << base));
                    }
                }
            }
        }
        done
    }

    /// A unit's name: `block 1`, `warp 0.1` (block.warp), `lane 0.0.1` (block.warp.lane); in a
    /// program of several grids with the grid first and the block numbered in its grid
    /// (`grid 1 block 0`, `grid 1 warp 0.1`, `grid 1 lane 0.0.1`).
    pub fn name(&self, unit: Unit) -> String {
        if Some(unit) == self.memory_unit() {
            return "the memory system".to_string();
        }
        if self.op_units().contains(unit) {
            return format!("memory op slot {}", unit - self.count() - 1);
        }
        let u = unit as u32;
        let (block, rest) = match self.level {
            Level::Grids => return format!("grid {u}"),
            Level::Blocks => (u, String::new()),
            Level::Warps => (
                u / self.warps_per_block,
                format!(".{}", u % self.warps_per_block),
            ),
            Level::Lanes => {
                let t = u % self.threads_per_block;
                (
                    u / self.threads_per_block,
                    format!(".{}.{}", t / self.warp_size, t % self.warp_size),
                )
            }
        };
        let kind = match self.level {
            Level::Blocks => "block",
            Level::Warps => "warp",
            _ => "lane",
        };
        match self.grid_of(block) {
            Some((grid, local)) => format!("grid {grid} {kind} {local}{rest}"),
            None => format!("{kind} {block}{rest}"),
        }
    }

    /// `(grid, block in the grid)` of global block `block` in a program of several grids.
    fn grid_of(&self, block: u32) -> Option<(usize, u32)> {
        let grid = self
            .grid_bases
            .partition_point(|&base| base <= block)
            .checked_sub(1)?;
        Some((grid, block - self.grid_bases[grid]))
    }

    /// `{block 0, block 1}`.
    pub fn names(&self, set: UnitSet) -> String {
        let names: Vec<String> = set.iter().map(|u| self.name(u)).collect();
        format!("{{{}}}", names.join(", "))
    }
}

/// Whether a choice is a system choice (folded by [`settle`]).
pub fn is_system(choice: &Choice) -> bool {
    matches!(
        choice,
        Choice::Issue { .. } | Choice::EndBarrier { .. } | Choice::Mem(_)
    )
}

/// Takes system choices until none is enabled that may be folded, appending them to `taken`:
/// an `Issue` first, by lowest (grid, SM), else the first complete barrier by (block,
/// barrier). The error is an enabled choice the machine refused (a cudasem bug,
/// [`scheduler::Refused`]).
///
/// Issues are folded unless the blocks of several grids compete for room ([`issues_compete`]):
/// then which grid takes a free SM first decides which blocks become resident (a consumer
/// spinning on a flag whose producer never gets an SM), so the issues stay enabled and the
/// search branches over them ([`branches`]). A grid's own blocks are issued in linear order
/// (deviation D8) on the lowest-numbered SM with room: the choice of SM is folded away, as for
/// one grid (it is observable through `%smid` alone).
pub fn settle(machine: &mut Machine, taken: &mut Vec<Choice>) -> Result<(), StepError> {
    loop {
        if machine.termination().is_some() {
            return Ok(());
        }
        let enabled = machine.enabled();
        let release = enabled
            .iter()
            .filter_map(|c| match *c {
                Choice::EndBarrier { block, barrier } => Some(((block, barrier), *c)),
                _ => None,
            })
            .min_by_key(|(key, _)| *key)
            .map(|(_, c)| c);
        let issue = first_issue(enabled)
            .filter(|_| !several_grids_issue(enabled) || !issues_compete(machine));
        let Some(c) = issue.or(release) else {
            return Ok(());
        };
        machine.step(&c)?;
        taken.push(c);
    }
}

/// The enabled `Issue` of lowest (grid, SM).
fn first_issue(enabled: &[Choice]) -> Option<Choice> {
    enabled
        .iter()
        .filter_map(|c| match *c {
            Choice::Issue { grid, sm, .. } => Some(((grid, sm), *c)),
            _ => None,
        })
        .min_by_key(|(key, _)| *key)
        .map(|(_, c)| c)
}

/// Whether blocks of more than one grid can be issued now.
fn several_grids_issue(enabled: &[Choice]) -> bool {
    let mut grids = enabled.iter().filter_map(|c| match *c {
        Choice::Issue { grid, .. } => Some(grid),
        _ => None,
    });
    grids
        .next()
        .is_some_and(|first| grids.any(|grid| grid != first))
}

/// Whether the order in which the grids' blocks are issued can change which blocks become
/// resident: issuing every block that fits, lowest (grid, SM) first, leaves a started grid
/// with blocks that found no room. When every waiting block fits, the order only permutes
/// issues that commute (each block still finds room), and folding them loses nothing.
pub fn issues_compete(machine: &Machine) -> bool {
    let mut m = machine.clone();
    while let Some(c) = first_issue(m.enabled()) {
        if m.step(&c).is_err() {
            // A refused enabled issue is a cudasem bug, reported by the search when it takes
            // it: here, branch rather than fold.
            return true;
        }
    }
    m.grids()
        .iter()
        .any(|g| g.phase == GridPhase::Active && g.issued < g.shape.blocks)
}

/// The choices a search takes from a settled state ([`settle`]): when issues of several grids
/// compete for room, one per grid (its next block on the lowest-numbered SM with room, in grid
/// order); otherwise every enabled choice, in the machine's order.
pub fn branches(machine: &Machine) -> Vec<Choice> {
    let enabled = machine.enabled();
    if !enabled.iter().any(|c| matches!(c, Choice::Issue { .. })) {
        return enabled.to_vec();
    }
    let mut per_grid: Vec<Choice> = Vec::new();
    for c in enabled {
        let Choice::Issue { grid, sm, .. } = *c else {
            continue;
        };
        let same = per_grid
            .iter_mut()
            .find(|p| matches!(p, Choice::Issue { grid: g, .. } if *g == grid));
        match same {
            Some(p) => {
                if matches!(p, Choice::Issue { sm: s, .. } if *s > sm) {
                    *p = *c;
                }
            }
            None => per_grid.push(*c),
        }
    }
    per_grid.sort_by_key(|c| match *c {
        Choice::Issue { grid, .. } => grid,
        _ => u32::MAX,
    });
    per_grid
}
