//! Where a thread may write shared memory before it next waits at a full-block barrier: the
//! program's half of the condition under which the cached memory performs a weak `ld.shared` at
//! its issue (docs/internals/cached-memory.md, "Shared loads at issue"; deviation D30).
//!
//! A barrier is *full* when every barrier instruction of the module that names its number waits
//! for (or counts) every thread of the block: no thread count, and the number an immediate.
//! Then the barrier completes only once every live thread of the block has arrived, and a
//! thread arrives only with no memory operation in flight (deviation D24). A thread at `pc` is
//! *quiet* when every path from `pc` (before executing it) reaches an unguarded
//! `bar.sync`/`barrier.sync`/`bar.red` of a full barrier, or leaves the kernel (`exit`, `trap`),
//! before an instruction that can write shared memory: an `st` or `atom`/`red` on `.shared` or
//! on a generic address. Calls, returns from functions and the thesis dialect's `sync`/`brk`
//! continue somewhere the function's graph does not say, so they count as writes.

use crate::program::{BarrierKind, Function, Instr, Op, Space, Src};

/// The summary of a module: per address whether a thread there may write shared memory before
/// it waits at a full barrier, and which barrier numbers are full.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SharedWrites {
    /// Per address: `true` when some path from it reaches a shared write first.
    pub ahead: Vec<bool>,
    /// Bit `b`: barrier `b` is full (see the module's header).
    pub full_barriers: u16,
}

impl SharedWrites {
    /// Whether a thread at `pc` may write shared memory before it waits at a full barrier
    /// (an address outside every function: yes).
    #[inline]
    pub fn may_write(&self, pc: u32) -> bool {
        self.ahead.get(pc as usize).copied().unwrap_or(true)
    }

    /// Whether a thread that waits for the barriers `waiting` (bit per number, non-zero) is held
    /// until every live thread of its block arrives at one of them.
    #[inline]
    pub fn held(&self, waiting: u16) -> bool {
        waiting != 0 && waiting & !self.full_barriers == 0
    }
}

/// The bit of barrier number `b` (none for a number past the 16 barriers, which the machine
/// rejects when it executes the instruction).
fn barrier_bit(b: u64) -> u16 {
    u32::try_from(b)
        .ok()
        .and_then(|b| 1u16.checked_shl(b))
        .unwrap_or(0)
}

/// The barrier numbers every barrier instruction of which is a full-block one; none when some
/// barrier's number is a register (it may name any barrier).
fn full_barriers(instructions: &[Instr]) -> u16 {
    let mut named = 0u16;
    let mut partial = 0u16;
    for ins in instructions {
        if let Op::Barrier { id, count, .. } = &ins.op {
            let Src::Imm(b) = id else { return 0 };
            let bit = barrier_bit(*b);
            named |= bit;
            if count.is_some() {
                partial |= bit;
            }
        }
    }
    named & !partial
}

/// What a thread at an instruction may do before a full barrier, given what it may do after it
/// (`after`: the join over the instruction's successors).
fn transfer(ins: &Instr, full: u16, after: bool) -> bool {
    match &ins.op {
        Op::St { space, .. } | Op::Atom { space, .. } => {
            matches!(space, Space::Shared | Space::Generic) || after
        }
        Op::Call { .. } | Op::Ret | Op::Sync | Op::Brk => true,
        Op::Exit | Op::Trap if ins.guard.is_none() => false,
        Op::Barrier {
            kind: BarrierKind::Sync | BarrierKind::Red { .. },
            id: Src::Imm(b),
            ..
        } if ins.guard.is_none() && full & barrier_bit(*b) != 0 => false,
        _ => after,
    }
}

/// The summary of `instructions`, function by function over each function's basic blocks: the
/// least fixed point of [`transfer`] (a backward "may" analysis: every address starts quiet,
/// and becomes noisy when some successor is).
pub(crate) fn summarize(instructions: &[Instr], functions: &[Function]) -> SharedWrites {
    let full = full_barriers(instructions);
    let mut ahead = vec![true; instructions.len()];
    for f in functions {
        let blocks = &f.cfg.blocks;
        // The value at each block's first address.
        let mut entry = vec![false; blocks.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for (k, bb) in blocks.iter().enumerate().rev() {
                let mut v = bb.successors.iter().any(|&s| entry[s]);
                for pc in (bb.start..bb.end).rev() {
                    v = transfer(&instructions[pc as usize], full, v);
                    ahead[pc as usize] = v;
                }
                if v && !entry[k] {
                    entry[k] = true;
                    changed = true;
                }
            }
        }
    }
    SharedWrites {
        ahead,
        full_barriers: full,
    }
}
