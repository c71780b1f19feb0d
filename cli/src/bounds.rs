//! Which bound cut a command, in one vocabulary ([`scheduler::BoundHit`]): each search names
//! the bound that cut it (`explore::Bound::hit`, `explore::dfs::DfsBound::hit`,
//! `litmus::Status::bound_hit`), a run's here, so every command names a bound with the same words in
//! its text (`--max-states 1000 REACHED`, from [`BoundHit::setting`]) and the same JSON
//! object (`"bound_hit": {"bound": "states", "limit": 1000}`, `null` when no bound cut it).
//! The time bound's text stays [`crate::timeout::cause_text`]'s, which also tells an interrupt
//! and the memory budget apart from the clock.
//!
//! The loops below the CLI see one stop flag, set by the clock, Ctrl-C or the memory
//! watchdog, and call what it cut the time bound; [`stopped`] names the memory bound
//! (`{"bound": "memory", "limit": BYTES}`) where the memory watchdog set it.

use scheduler::BoundHit;
use semantics::machine::Termination;

/// The bound a stop flag cut, with `time_ms` the time bound: the memory bound where the memory
/// watchdog set the flag (`--max-memory`), else the time bound (the clock, or Ctrl-C).
pub fn stopped(time_ms: Option<u64>) -> BoundHit {
    stopped_by(
        time_ms,
        crate::timeout::over_budget(),
        crate::budget::bytes(),
    )
}

/// [`stopped`] with the watchdog's state given: `over_budget`, the memory budget `bytes`.
fn stopped_by(time_ms: Option<u64>, over_budget: bool, bytes: u64) -> BoundHit {
    if over_budget {
        BoundHit::Memory(bytes)
    } else {
        BoundHit::Time(time_ms)
    }
}

/// A bound a loop below the CLI reported, named as [`stopped`] names a stop flag's cut.
pub fn named(hit: BoundHit) -> BoundHit {
    match hit {
        BoundHit::Time(ms) => stopped(ms),
        other => other,
    }
}

/// Whether `hit` is the time bound (the clock or an interrupt), as the JSON's older
/// `time_limit_hit` flag says: not a cut by the memory budget, which stops the loops through
/// the same flag.
pub fn is_time(hit: Option<BoundHit>) -> bool {
    matches!(hit, Some(BoundHit::Time(_)))
}

/// The bound of a run that ended in `t`, if a bound ended it. `time_ms` is the time bound as
/// `--timeout` gave it ([`crate::timeout::Timeout::millis`]), here and below.
pub fn of_run(t: &Termination, max_steps: u64, time_ms: Option<u64>) -> Option<BoundHit> {
    match t {
        Termination::StepLimit => Some(BoundHit::Steps(max_steps)),
        Termination::TimeLimit => Some(stopped(time_ms)),
        _ => None,
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
    use explore::dfs::DfsBound;
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
        // The searches name their own bounds (`explore::Bound::hit`, `DfsBound::hit`,
        // `litmus::Status::bound_hit`); the JSON is this module's.
        assert_eq!(
            json(DfsBound::Time.hit(two)).to_string(),
            r#"{"bound":"time","limit":2500}"#
        );
        assert_eq!(json(None), serde_json::Value::Null);
    }

    #[test]
    fn a_stop_flag_set_by_the_memory_watchdog_names_the_memory_bound() {
        assert_eq!(
            stopped_by(Some(2500), false, 1 << 20),
            BoundHit::Time(Some(2500))
        );
        let memory = stopped_by(Some(2500), true, 40 << 20);
        assert_eq!(memory, BoundHit::Memory(40 << 20));
        assert_eq!(memory.to_string(), "the memory bound (--max-memory 40M)");
        assert_eq!(
            json(Some(memory)).to_string(),
            r#"{"bound":"memory","limit":41943040}"#
        );
        // Not cut by a stop flag: named as the loop named it.
        assert_eq!(named(BoundHit::Steps(4)), BoundHit::Steps(4));
    }
}
