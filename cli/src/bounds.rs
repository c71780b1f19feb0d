//! Which bound cut a command, in one vocabulary ([`scheduler::BoundHit`]): the bound types of
//! each search are read into it here, so every command names a bound with the same words in
//! its text (`--max-states 1000 REACHED`, from [`BoundHit::setting`]) and the same JSON
//! object (`"bound_hit": {"bound": "states", "limit": 1000}`, `null` when no bound cut it).
//! The time bound's text stays [`crate::timeout::cause_text`]'s, which also tells an interrupt
//! and the memory budget apart from the clock.

use explore::dfs::DfsBound;
use scheduler::BoundHit;
use semantics::machine::Termination;

/// The bound of a run that ended in `t`, if a bound ended it. `time_ms` is the time bound as
/// `--timeout` gave it ([`crate::timeout::Timeout::millis`]), here and below.
pub fn of_run(t: &Termination, max_steps: u64, time_ms: Option<u64>) -> Option<BoundHit> {
    match t {
        Termination::StepLimit => Some(BoundHit::Steps(max_steps)),
        Termination::TimeLimit => Some(BoundHit::Time(time_ms)),
        _ => None,
    }
}

/// The bound that cut a stateful search (`explore --search full`).
pub fn of_states(b: explore::Bound, time_ms: Option<u64>) -> BoundHit {
    match b {
        explore::Bound::States(n) => BoundHit::States(n as u64),
        explore::Bound::Time => BoundHit::Time(time_ms),
    }
}

/// The bound that cut a stateless search (`explore --search outcomes`); `None` for a search
/// its caller halted, which is no bound.
pub fn of_dfs(b: DfsBound, time_ms: Option<u64>) -> Option<BoundHit> {
    match b {
        DfsBound::Transitions(n) => Some(BoundHit::Transitions(n)),
        DfsBound::Depth(d) => Some(BoundHit::Depth(d as u64)),
        DfsBound::Time => Some(BoundHit::Time(time_ms)),
        DfsBound::Halted => None,
    }
}

/// The bound that cut a litmus test's search, if one did.
pub fn of_litmus(
    status: &litmus::Status,
    max_states: usize,
    time_ms: Option<u64>,
) -> Option<BoundHit> {
    match status {
        litmus::Status::Bounded => Some(BoundHit::States(max_states as u64)),
        litmus::Status::TimeLimit => Some(BoundHit::Time(time_ms)),
        litmus::Status::Ok | litmus::Status::Unsupported(_) => None,
    }
}

/// The JSON of a bound hit: `{"bound": "steps", "limit": 100}`, or `null`.
pub fn json(hit: Option<BoundHit>) -> serde_json::Value {
    // A `BoundHit` is an enum of numbers: serialising it cannot fail.
    serde_json::to_value(hit).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn every_search_names_its_bound_in_the_one_vocabulary() {
        let none = None;
        let two = crate::timeout::Timeout {
            timeout: Some(Duration::from_millis(2500)),
        }
        .millis();
        assert_eq!(
            of_run(&Termination::StepLimit, 100, none),
            Some(BoundHit::Steps(100))
        );
        assert_eq!(
            of_run(&Termination::TimeLimit, 100, two),
            Some(BoundHit::Time(Some(2500)))
        );
        assert_eq!(of_run(&Termination::Completed, 100, two), None);
        assert_eq!(
            of_states(explore::Bound::States(7), none).setting(),
            "--max-states 7"
        );
        assert_eq!(
            of_dfs(DfsBound::Transitions(9), none).unwrap().setting(),
            "--max-transitions 9"
        );
        assert_eq!(
            of_dfs(DfsBound::Depth(2000), none).unwrap().setting(),
            "depth 2000"
        );
        assert_eq!(of_dfs(DfsBound::Halted, none), None);
        assert_eq!(
            json(of_dfs(DfsBound::Time, two)).to_string(),
            r#"{"bound":"time","limit":2500}"#
        );
        assert_eq!(json(None), serde_json::Value::Null);
        assert_eq!(
            of_litmus(&litmus::Status::Bounded, 10, none),
            Some(BoundHit::States(10))
        );
        assert_eq!(of_litmus(&litmus::Status::Ok, 10, none), None);
    }
}
