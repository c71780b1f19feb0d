//! Final outcomes of runs, as fuzzing and exploration count them: how the run ended and the
//! bytes of the observed buffers and module variables ([`Observe`]).

use semantics::machine::{ErrorKind, Machine, Termination};
use semantics::program::RegId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What of the final machine an outcome records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observe {
    /// Launch buffers by index.
    pub buffers: Vec<usize>,
    /// Module `.global` / `.const` variables by name.
    pub variables: Vec<String>,
    /// Registers of threads, read from the final machine: a register of a thread that has
    /// exited only where the machine keeps them (`FinalRegisters::Observed`; litmus tests read
    /// their condition's registers so).
    pub registers: Vec<FinalRegister>,
}

/// One register of one thread (its block, warp and lane), as [`Observe`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FinalRegister {
    pub block: u32,
    pub warp: u32,
    pub lane: u32,
    pub reg: RegId,
}

/// How a run ended, without the details that vary between equivalent runs (step counts,
/// messages with addresses).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Status {
    /// Every thread exited.
    Completed,
    /// Nothing enabled, some threads live.
    Deadlock,
    /// The step bound was hit (the kernel may not terminate under this schedule).
    StepLimit,
    /// The time bound was hit (`--timeout`): the run was stopped from outside.
    TimeLimit,
    /// A fault: its kind and PTX line.
    Error { kind: String, ptx_line: u32 },
}

impl Status {
    pub fn of(t: &Termination) -> Status {
        match t {
            Termination::Completed => Status::Completed,
            Termination::Deadlock(_) => Status::Deadlock,
            Termination::StepLimit => Status::StepLimit,
            Termination::TimeLimit => Status::TimeLimit,
            Termination::Error(e) => Status::Error {
                kind: error_kind_word(e.kind).to_string(),
                ptx_line: e.ptx_line,
            },
        }
    }

    /// Whether this ending is a failure of the program.
    pub fn is_failure(&self) -> bool {
        !matches!(self, Status::Completed)
    }

    /// `completed`, `deadlock`, `step-limit`, `time-limit`, `error`.
    pub fn word(&self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Deadlock => "deadlock",
            Status::StepLimit => "step-limit",
            Status::TimeLimit => "time-limit",
            Status::Error { .. } => "error",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Error { kind, ptx_line } => write!(f, "error ({kind}, PTX line {ptx_line})"),
            other => f.write_str(other.word()),
        }
    }
}

/// The word for an error kind (`out-of-bounds`, ...).
pub fn error_kind_word(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::OutOfBounds => "out-of-bounds",
        ErrorKind::Misaligned => "misaligned",
        ErrorKind::Trap => "trap",
        ErrorKind::Stuck => "stuck",
        ErrorKind::Barrier => "barrier",
        ErrorKind::Resource => "resource",
    }
}

/// A final outcome: the status and the observed bytes, in [`Observe`] order (buffers, then
/// variables, then registers, each little-endian in 8 bytes, empty where the machine has none). Ordered, so histograms print in a stable order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Outcome {
    pub status: Status,
    pub data: Vec<Vec<u8>>,
}

impl Outcome {
    pub fn of(machine: &Machine, termination: &Termination, observe: &Observe) -> Outcome {
        let mut data: Vec<Vec<u8>> = observe.buffers.iter().map(|&i| machine.buffer(i)).collect();
        data.extend(
            observe
                .variables
                .iter()
                .map(|v| machine.variable(v).unwrap_or_default()),
        );
        data.extend(observe.registers.iter().map(|r| {
            machine
                .register(r.block, r.warp, r.lane, r.reg)
                .map_or_else(Vec::new, |v| v.to_le_bytes().to_vec())
        }));
        Outcome {
            status: Status::of(termination),
            data,
        }
    }
}
