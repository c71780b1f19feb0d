//! Reverse stepping: the choice log plus snapshots every `every` steps.
//!
//! The machine is deterministic given its choices (ARCHITECTURE.md section 1 (invariants)), so the state
//! after step `s` is the nearest snapshot at or before `s` with the logged choices from there
//! replayed: exact, not approximate. Snapshots are machine clones, which share unchanged warps
//! and memory pages copy-on-write, so each costs what changed since the previous one. Their
//! number is bounded: when `max` are held, every other one is dropped and the spacing doubles,
//! so memory stays bounded on long runs and replaying costs at most about `2 * steps / max`
//! steps.

use semantics::machine::{Machine, StepError};
use traces::{Choice, Event};

/// The choices taken since the start and snapshots of the states between.
#[derive(Debug, Clone)]
pub struct History {
    /// `choices[i]` led from the state after step `i` to the state after step `i + 1`.
    choices: Vec<Choice>,
    /// `(step, state after that many steps)`, ascending; the first is step 0.
    snapshots: Vec<(u64, Machine)>,
    every: u64,
    max: usize,
}

impl History {
    /// `initial` is the machine before any step; a snapshot every `every` steps, at most `max`.
    pub fn new(initial: &Machine, every: u64, max: usize) -> History {
        History {
            choices: Vec::new(),
            snapshots: vec![(0, initial.clone())],
            every: every.max(1),
            max: max.max(2),
        }
    }

    /// Steps taken (the length of the choice log).
    pub fn len(&self) -> u64 {
        self.choices.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.choices.is_empty()
    }

    pub fn choices(&self) -> &[Choice] {
        &self.choices
    }

    /// Snapshots held (for tests and benchmarks: memory stays bounded).
    pub fn snapshot_count(&self) -> usize {
        self.snapshots.len()
    }

    /// Records that `choice` was taken and `after` is the resulting state.
    pub fn record(&mut self, choice: Choice, after: &Machine) {
        self.choices.push(choice);
        let step = self.len();
        if step.is_multiple_of(self.every) {
            self.snapshots.push((step, after.clone()));
            if self.snapshots.len() > self.max {
                // Keep the snapshots on the doubled grid; step 0 is on every grid.
                self.every *= 2;
                let every = self.every;
                self.snapshots.retain(|(s, _)| s % every == 0);
            }
        }
    }

    /// The state after `step` steps (`step <= len`), rebuilt from the nearest snapshot.
    /// With `events`, the last replayed step's events are appended (nothing if `step` is 0).
    pub fn state_at(
        &self,
        step: u64,
        mut events: Option<&mut Vec<Event>>,
    ) -> Result<Machine, StepError> {
        let step = step.min(self.len());
        // With events wanted, start one step earlier so that the last step can be observed.
        let from_limit = if events.is_some() && step > 0 {
            step - 1
        } else {
            step
        };
        let i = self.snapshots.partition_point(|(s, _)| *s <= from_limit);
        // partition_point >= 1: the first snapshot is step 0 <= from_limit.
        let (start, snapshot) = &self.snapshots[i.saturating_sub(1)];
        let mut m = snapshot.clone();
        for s in *start..step {
            let c = &self.choices[s as usize];
            match events.as_deref_mut() {
                Some(ev) if s + 1 == step => m.step_observed(c, ev)?,
                _ => m.step(c)?,
            }
        }
        Ok(m)
    }

    /// Forgets everything after `step` (the session went back there and takes new choices).
    pub fn truncate(&mut self, step: u64) {
        self.choices.truncate(step as usize);
        self.snapshots.retain(|(s, _)| *s <= step);
    }
}
