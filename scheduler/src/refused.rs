//! An enabled choice the machine refused to take. [`Machine::step`] fails only for a choice
//! that is not enabled (a program's faults are terminations, not step errors), so a choice
//! taken from the machine's own enabled set that fails is a broken invariant of cudasem, never
//! the program's fault. Explorers and run loops stop with this error instead of skipping the
//! choice, and carry the schedule that leads to it so the CLI can print its replay command.
//!
//! [`Machine::step`]: semantics::machine::Machine::step

use semantics::machine::StepError;
use serde::{Deserialize, Serialize};
use traces::Choice;

/// An enabled choice whose step failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("the machine refused its own enabled choice `{choice}` at step {step}: {message}")]
pub struct Refused {
    /// The choices from the initial state up to the refused one (excluded), when the refusing
    /// loop knows them; empty when its caller records the schedule itself.
    pub prefix: Vec<Choice>,
    /// The machine's step count when it refused.
    pub step: u64,
    pub choice: Choice,
    /// What the machine said.
    pub message: String,
}

impl Refused {
    /// The refusal `error` after the choices of `prefix`, at machine step `step`.
    pub fn new<'a>(
        prefix: impl IntoIterator<Item = &'a Choice>,
        step: u64,
        error: StepError,
    ) -> Refused {
        Refused {
            prefix: prefix.into_iter().copied().collect(),
            step,
            choice: error.choice,
            message: error.message,
        }
    }

    /// The schedule that reproduces the refusal: the prefix, then the refused choice.
    pub fn schedule(&self) -> Vec<Choice> {
        let mut s = self.prefix.clone();
        s.push(self.choice);
        s
    }
}
