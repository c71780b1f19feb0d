//! One vocabulary of bounds: a [`Budget`] (every bound a run or a search may have) and a
//! [`BoundHit`] (which of them cut it, with its value), printed the same way by every command,
//! in text ([`BoundHit`]'s `Display`, [`BoundHit::setting`]) and in JSON (its `Serialize`:
//! `{"bound": "steps", "limit": 100}`).
//!
//! A run that hits a bound proves nothing about what lies beyond it: the callers say so next
//! to the bound. The time bound is not measured here: the library never reads the clock
//! (ARCHITECTURE.md section 1), so a caller arms a watchdog that sets a [`crate::Stop`] flag,
//! and the budget only records the bound for the report.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The bounds of a run or a search; `None` is unbounded. The run loop ([`crate::run_with`])
/// reads `steps`, and the [`crate::Stop`] flag for `time` (and for the memory budget, which a
/// caller's watchdog measures: it names that cut [`BoundHit::Memory`]); `states`, `transitions` and `depth`
/// are the bounds of the searches above this crate, named here so that every command reports
/// them alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Budget {
    /// Transitions of the machine in one run (`--max-steps`).
    pub steps: Option<u64>,
    /// Distinct states a stateful search stores (`--max-states`).
    pub states: Option<u64>,
    /// Transitions a stateless search computes (`--max-transitions`).
    pub transitions: Option<u64>,
    /// The length of one schedule of a search (its depth bound).
    pub depth: Option<u64>,
    /// The time bound in milliseconds (`--timeout`), enforced through a [`crate::Stop`].
    pub time_ms: Option<u64>,
}

impl Budget {
    /// No bound at all.
    pub const UNBOUNDED: Budget = Budget {
        steps: None,
        states: None,
        transitions: None,
        depth: None,
        time_ms: None,
    };

    /// At most `max_steps` transitions per run, nothing else.
    pub fn steps(max_steps: u64) -> Budget {
        Budget {
            steps: Some(max_steps),
            ..Budget::UNBOUNDED
        }
    }

    /// The time bound's hit (the [`crate::Stop`] flag was set).
    pub fn time_hit(&self) -> BoundHit {
        BoundHit::Time(self.time_ms)
    }
}

/// Which bound of a [`Budget`] cut a run or a search, with the bound's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "bound", content = "limit", rename_all = "snake_case")]
pub enum BoundHit {
    /// The step bound of a run.
    Steps(u64),
    /// The state bound of a stateful search.
    States(u64),
    /// The transition bound of a stateless search.
    Transitions(u64),
    /// The depth bound of one schedule of a search.
    Depth(u64),
    /// The schedule bound of `check --explore`: a budget of that many schedules' worth of
    /// transitions.
    Schedules(u64),
    /// The time bound (in milliseconds when known): the [`crate::Stop`] flag was set, by the
    /// clock or an interrupt.
    Time(Option<u64>),
    /// The memory bound in bytes: the [`crate::Stop`] flag was set because the process's
    /// memory passed `--max-memory`.
    Memory(u64),
}

impl BoundHit {
    /// The bound's name in one word, as JSON writes it (`steps`, `states`, `transitions`,
    /// `depth`, `time`, `memory`).
    pub fn name(&self) -> &'static str {
        match self {
            BoundHit::Steps(_) => "steps",
            BoundHit::States(_) => "states",
            BoundHit::Transitions(_) => "transitions",
            BoundHit::Depth(_) => "depth",
            BoundHit::Schedules(_) => "schedules",
            BoundHit::Time(_) => "time",
            BoundHit::Memory(_) => "memory",
        }
    }

    /// The bound as the user set it: the flag with its value (`--max-steps 100`,
    /// `--timeout 2`, `--max-memory 512M`), or for the depth bound, which no flag sets,
    /// `depth 2000`; a time bound of unknown value is `time`.
    pub fn setting(&self) -> String {
        match *self {
            BoundHit::Steps(n) => format!("--max-steps {n}"),
            BoundHit::States(n) => format!("--max-states {n}"),
            BoundHit::Transitions(n) => format!("--max-transitions {n}"),
            BoundHit::Depth(d) => format!("depth {d}"),
            BoundHit::Schedules(n) => format!("--max-schedules {n}"),
            BoundHit::Time(Some(ms)) => format!("--timeout {}", seconds(ms)),
            BoundHit::Time(None) => "time".to_string(),
            BoundHit::Memory(bytes) => format!("--max-memory {}", size(bytes)),
        }
    }
}

/// `512M`, `3G`, `1000`: a byte count as `--max-memory` takes it (K, M, G and T are powers of
/// 1024), in the largest unit that divides it.
fn size(bytes: u64) -> String {
    for (shift, unit) in [(40, 'T'), (30, 'G'), (20, 'M'), (10, 'K')] {
        if bytes != 0 && bytes.trailing_zeros() >= shift {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// `1.5`, `2`: a time bound in seconds, as `--timeout` takes it.
fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}", ms / 1000)
    } else {
        format!("{}", ms as f64 / 1000.0)
    }
}

/// `the step bound (--max-steps 100)`, `the depth bound (depth 2000)`, `the time bound`.
impl fmt::Display for BoundHit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = match self {
            BoundHit::Steps(_) => "step",
            BoundHit::States(_) => "state",
            BoundHit::Transitions(_) => "transition",
            BoundHit::Depth(_) => "depth",
            BoundHit::Schedules(_) => "schedule",
            BoundHit::Time(_) => "time",
            BoundHit::Memory(_) => "memory",
        };
        match self {
            BoundHit::Time(None) => write!(f, "the time bound"),
            _ => write!(f, "the {word} bound ({})", self.setting()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_is_named_in_text_and_json() {
        let hits = [
            BoundHit::Steps(100),
            BoundHit::States(7),
            BoundHit::Transitions(9),
            BoundHit::Depth(2000),
            BoundHit::Schedules(10),
            BoundHit::Time(Some(1500)),
            BoundHit::Time(None),
            BoundHit::Memory(512 << 20),
            BoundHit::Memory(1000),
        ];
        let texts = [
            "the step bound (--max-steps 100)",
            "the state bound (--max-states 7)",
            "the transition bound (--max-transitions 9)",
            "the depth bound (depth 2000)",
            "the schedule bound (--max-schedules 10)",
            "the time bound (--timeout 1.5)",
            "the time bound",
            "the memory bound (--max-memory 512M)",
            "the memory bound (--max-memory 1000)",
        ];
        let jsons = [
            r#"{"bound":"steps","limit":100}"#,
            r#"{"bound":"states","limit":7}"#,
            r#"{"bound":"transitions","limit":9}"#,
            r#"{"bound":"depth","limit":2000}"#,
            r#"{"bound":"schedules","limit":10}"#,
            r#"{"bound":"time","limit":1500}"#,
            r#"{"bound":"time","limit":null}"#,
            r#"{"bound":"memory","limit":536870912}"#,
            r#"{"bound":"memory","limit":1000}"#,
        ];
        for ((hit, text), json) in hits.into_iter().zip(texts).zip(jsons) {
            assert_eq!(hit.to_string(), text);
            let written = serde_json::to_string(&hit).unwrap();
            assert_eq!(written, json);
            assert!(written.contains(hit.name()), "{written}");
            assert_eq!(serde_json::from_str::<BoundHit>(&written).unwrap(), hit);
        }
    }

    #[test]
    fn the_time_bound_is_named_with_its_value() {
        let timed = Budget {
            time_ms: Some(2000),
            ..Budget::steps(3)
        };
        assert_eq!(timed.steps, Some(3));
        assert_eq!(timed.time_hit().to_string(), "the time bound (--timeout 2)");
        assert_eq!(Budget::UNBOUNDED.time_hit(), BoundHit::Time(None));
    }
}
