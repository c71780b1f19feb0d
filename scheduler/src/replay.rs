//! Strict replay of recorded choices (ARCHITECTURE.md section 5): every choice is checked
//! against the machine's enabled set before it is taken, recorded events are compared with the
//! events the replay produces, and the first divergence is reported with the step it happened
//! at. Also: resolving the compact format's enabled-set indices into choices, the reverse, and
//! a [`Recorder`] that wraps any scheduler.
//!
//! A lasso trace (`cycle_start`) is checked too: the machine state after the stem and after
//! the cycle must have the same fingerprint ([`Machine::state_fingerprint`]).

use crate::Scheduler;
use semantics::machine::{Machine, Termination};
use std::fmt;
use traces::{Choice, Event};

/// Why a replay stopped before the end of the trace.
#[derive(Debug, Clone, PartialEq)]
pub enum DivergenceKind {
    /// The recorded choice is not in the enabled set.
    NotEnabled { choice: Choice },
    /// The run ended (completed, deadlocked, faulted) before the trace did.
    Ended { termination: Termination },
    /// A compact trace's index is beyond the enabled set.
    IndexOutOfRange { index: u32 },
    /// The choice was enabled, but what it did differs from the recorded events.
    EventsDiffer {
        choice: Choice,
        recorded: Vec<Event>,
        replayed: Vec<Event>,
    },
}

/// The first point where a replay departs from its trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// 0-based index of the choice in the trace.
    pub step: usize,
    pub kind: DivergenceKind,
    /// The enabled set at that step.
    pub enabled: Vec<Choice>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            DivergenceKind::NotEnabled { choice } => {
                write!(f, "step {}: `{choice}` is not enabled", self.step)?;
            }
            DivergenceKind::Ended { termination } => {
                write!(
                    f,
                    "step {}: the run already ended ({termination})",
                    self.step
                )?;
            }
            DivergenceKind::IndexOutOfRange { index } => {
                write!(
                    f,
                    "step {}: index {index} is beyond the {} enabled choices",
                    self.step,
                    self.enabled.len()
                )?;
            }
            DivergenceKind::EventsDiffer { choice, .. } => {
                write!(
                    f,
                    "step {}: `{choice}` did something else than recorded (events differ)",
                    self.step
                )?;
            }
        }
        if !matches!(self.kind, DivergenceKind::Ended { .. }) {
            let list: Vec<String> = self.enabled.iter().map(Choice::to_string).collect();
            write!(f, "; enabled: [{}]", list.join(", "))?;
        }
        Ok(())
    }
}

/// The lasso check of a trace with a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleCheck {
    /// The state after the cycle is the state after the stem.
    Closed { fingerprint: u128 },
    /// They differ: the trace is not a lasso of this program.
    Open { stem_end: u128, cycle_end: u128 },
}

/// What a replay did.
#[derive(Debug, Clone, PartialEq)]
pub struct Replayed {
    /// Choices taken (all of them unless there is a divergence).
    pub taken: usize,
    pub divergence: Option<Divergence>,
    /// How the run ended, if it did within the trace.
    pub termination: Option<Termination>,
    /// The events of each step, when observed.
    pub events: Option<Vec<Vec<Event>>>,
    pub cycle: Option<CycleCheck>,
}

/// Replays `choices` on `machine` strictly. With `recorded` events, each step's events are
/// compared with them; with `observe`, the events are returned. `cycle_start` asks for the
/// lasso check.
pub fn replay(
    machine: &mut Machine,
    choices: &[Choice],
    recorded: Option<&[Vec<Event>]>,
    cycle_start: Option<usize>,
    observe: bool,
) -> Replayed {
    let watch = observe || recorded.is_some();
    let mut events: Vec<Vec<Event>> = Vec::new();
    let mut stem_end = None;
    let mut divergence = None;
    let mut taken = 0;
    for (i, c) in choices.iter().enumerate() {
        if cycle_start == Some(i) {
            stem_end = Some(machine.state_fingerprint());
        }
        if let Some(t) = machine.termination() {
            divergence = Some(Divergence {
                step: i,
                kind: DivergenceKind::Ended {
                    termination: t.clone(),
                },
                enabled: Vec::new(),
            });
            break;
        }
        if !machine.enabled().contains(c) {
            divergence = Some(Divergence {
                step: i,
                kind: DivergenceKind::NotEnabled { choice: *c },
                enabled: machine.enabled().to_vec(),
            });
            break;
        }
        let enabled_before = if recorded.is_some() {
            machine.enabled().to_vec()
        } else {
            Vec::new()
        };
        let mut ev = Vec::new();
        let ok = if watch {
            machine.step_observed(c, &mut ev).is_ok()
        } else {
            machine.step(c).is_ok()
        };
        if !ok {
            divergence = Some(Divergence {
                step: i,
                kind: DivergenceKind::NotEnabled { choice: *c },
                enabled: machine.enabled().to_vec(),
            });
            break;
        }
        if let Some(rec) = recorded.and_then(|r| r.get(i))
            && *rec != ev
        {
            divergence = Some(Divergence {
                step: i,
                kind: DivergenceKind::EventsDiffer {
                    choice: *c,
                    recorded: rec.clone(),
                    replayed: ev,
                },
                enabled: enabled_before,
            });
            break;
        }
        if watch {
            events.push(ev);
        }
        taken += 1;
    }
    let cycle = match (cycle_start, divergence.is_none()) {
        (Some(s), true) => {
            let stem_end = if s == choices.len() {
                machine.state_fingerprint()
            } else {
                stem_end.unwrap_or(0)
            };
            let cycle_end = machine.state_fingerprint();
            Some(if stem_end == cycle_end {
                CycleCheck::Closed {
                    fingerprint: cycle_end,
                }
            } else {
                CycleCheck::Open {
                    stem_end,
                    cycle_end,
                }
            })
        }
        _ => None,
    };
    Replayed {
        taken,
        divergence,
        termination: machine.termination().cloned(),
        events: observe.then_some(events),
        cycle,
    }
}

/// Resolves a compact trace's indices into choices by stepping a clone of `machine`.
pub fn resolve_indices(machine: &Machine, indices: &[u32]) -> Result<Vec<Choice>, Divergence> {
    let mut m = machine.clone();
    let mut out = Vec::with_capacity(indices.len());
    for (i, &k) in indices.iter().enumerate() {
        if let Some(t) = m.termination() {
            return Err(Divergence {
                step: i,
                kind: DivergenceKind::Ended {
                    termination: t.clone(),
                },
                enabled: Vec::new(),
            });
        }
        let Some(c) = m.enabled().get(k as usize).copied() else {
            return Err(Divergence {
                step: i,
                kind: DivergenceKind::IndexOutOfRange { index: k },
                enabled: m.enabled().to_vec(),
            });
        };
        if m.step(&c).is_err() {
            return Err(Divergence {
                step: i,
                kind: DivergenceKind::NotEnabled { choice: c },
                enabled: m.enabled().to_vec(),
            });
        }
        out.push(c);
    }
    Ok(out)
}

/// The enabled-set index of each choice (for the compact format), by stepping a clone of
/// `machine`.
pub fn indices_of(machine: &Machine, choices: &[Choice]) -> Result<Vec<u32>, Divergence> {
    let mut m = machine.clone();
    let mut out = Vec::with_capacity(choices.len());
    for (i, c) in choices.iter().enumerate() {
        let Some(k) = m.enabled().iter().position(|e| e == c) else {
            return Err(Divergence {
                step: i,
                kind: DivergenceKind::NotEnabled { choice: *c },
                enabled: m.enabled().to_vec(),
            });
        };
        if m.step(c).is_err() {
            return Err(Divergence {
                step: i,
                kind: DivergenceKind::NotEnabled { choice: *c },
                enabled: m.enabled().to_vec(),
            });
        }
        out.push(k as u32);
    }
    Ok(out)
}

/// Wraps a scheduler and records the choices it makes, up to an optional limit (a run of
/// 10^8 steps would otherwise hold gigabytes of choices only to report that it was too long).
pub struct Recorder<S> {
    pub inner: S,
    pub choices: Vec<Choice>,
    limit: usize,
    /// Choices taken beyond `limit` (not kept).
    pub dropped: u64,
}

impl<S: Scheduler> Recorder<S> {
    pub fn new(inner: S) -> Self {
        Self::with_limit(inner, usize::MAX)
    }

    /// Keeps at most `limit` choices; later ones are only counted in `dropped`.
    pub fn with_limit(inner: S, limit: usize) -> Self {
        Recorder {
            inner,
            choices: Vec::new(),
            limit,
            dropped: 0,
        }
    }

    /// Whether every choice taken was kept.
    pub fn complete(&self) -> bool {
        self.dropped == 0
    }
}

impl<S: Scheduler> Scheduler for Recorder<S> {
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> Option<usize> {
        let i = self
            .inner
            .pick(machine, enabled)?
            .min(enabled.len().saturating_sub(1));
        if let Some(c) = enabled.get(i) {
            if self.choices.len() < self.limit {
                self.choices.push(*c);
            } else {
                self.dropped += 1;
            }
        }
        Some(i)
    }
}
