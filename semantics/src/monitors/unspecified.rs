//! Results PTX leaves unspecified: an integer `div` or `rem` whose divisor is zero (PTX ISA
//! 9.7.1.8 `div`, 9.7.1.9 `rem`: "Division by zero yields an unspecified, machine-specific
//! value"). The machine runs on with the value its ALU gives; like a read of uninitialised
//! memory, a program whose output depends on it is wrong on some GPU, so `check` reports it.
//!
//! The machine marks the lanes in the instruction's `Executed` event (`unspecified`, read before
//! the instruction overwrites its divisor); this monitor keeps one finding per pc, with the first
//! lane that hit it, and counts the rest.

use super::{Monitors, Pc};
use crate::program::{BinaryOp, Op};
use serde::Serialize;

/// Which unspecified result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum UnspecifiedKind {
    /// An integer `div` by zero.
    DivisionByZero,
    /// An integer `rem` by zero.
    RemainderByZero,
}

impl UnspecifiedKind {
    /// What a reader is told.
    pub fn describe(self) -> &'static str {
        match self {
            UnspecifiedKind::DivisionByZero => {
                "integer division by zero (the result is unspecified, PTX ISA 9.7.1.8)"
            }
            UnspecifiedKind::RemainderByZero => {
                "integer remainder by zero (the result is unspecified, PTX ISA 9.7.1.9)"
            }
        }
    }
}

/// An instruction that computed an unspecified result, with the first thread that did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnspecifiedResult {
    pub kind: UnspecifiedKind,
    /// The grid of a program of several launches (`None` for one kernel launch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grid: Option<u32>,
    /// Linear block index in its grid.
    pub block: u32,
    pub block_idx: [u32; 3],
    /// Linear thread index in the block and its `%tid`.
    pub thread: u32,
    pub thread_idx: [u32; 3],
    pub warp: u32,
    pub lane: u32,
    pub pc: Pc,
    pub ptx_line: u32,
    pub source_line: Option<(u32, u32)>,
    /// The lanes of the warp that hit it at the first occurrence.
    pub lanes: u64,
    /// The step (1-based transition count) of the first occurrence.
    pub step: u64,
    /// How many warp instructions hit it in the run.
    pub occurrences: u64,
}

impl Monitors {
    /// The `Executed` event of `(block, warp)` at `pc` marked `lanes` as unspecified.
    pub(crate) fn unspecified(&mut self, block: u32, warp: u32, pc: Pc, lanes: u64) {
        if lanes == 0 || !self.config.memory {
            return;
        }
        if let Some(f) = self.findings.unspecified.iter_mut().find(|f| f.pc == pc) {
            f.occurrences += 1;
            return;
        }
        let kind = match self.program.instructions.get(pc as usize).map(|i| &i.op) {
            Some(Op::Binary {
                op: BinaryOp::Rem, ..
            }) => UnspecifiedKind::RemainderByZero,
            _ => UnspecifiedKind::DivisionByZero,
        };
        if self.full() {
            return;
        }
        let lane = lanes.trailing_zeros();
        let shape = self.shape(block);
        let thread = warp * shape.grid.warp_size + lane;
        let (ptx_line, source_line) = self.lines(pc);
        self.findings.unspecified.push(UnspecifiedResult {
            kind,
            grid: shape.grid_index,
            block: shape.local_block(block),
            block_idx: shape.block_idx(block),
            thread,
            thread_idx: shape.grid.tid(thread),
            warp,
            lane,
            pc,
            ptx_line,
            source_line,
            lanes,
            step: self.step,
            occurrences: 1,
        });
    }
}
