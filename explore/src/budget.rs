//! The searches' bounds in the one vocabulary of bounds (issue 14, Build 6): each search takes
//! its bounds from a [`Budget`] and says which one cut it as a [`BoundHit`], so a caller reports
//! every search alike without a mapping of its own.
//!
//! * the stateful search ([`crate::explore_with`]): [`Limits::with_budget`] takes the state
//!   bound, [`Bound::hit`] names the bound that cut it;
//! * the stateless searches ([`crate::dfs`]): [`DfsConfig::with_budget`] takes the transition
//!   bound, [`DfsBound::hit`] names the bound (none for a search its caller halted).
//!
//! The time bound is a [`scheduler::Stop`] the caller arms; the budget records its value
//! (`time_ms`) for the report only.

use crate::dfs::{DfsBound, DfsConfig};
use crate::{Bound, Limits};
use scheduler::{BoundHit, Budget};

/// A bound of a `u64` budget as a count in memory (a bound beyond memory is no bound).
fn count(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

impl Limits {
    /// These limits with the budget's state bound, when it sets one (its other bounds are not
    /// the stateful search's).
    pub fn with_budget(self, budget: &Budget) -> Limits {
        Limits {
            max_states: budget.states.map_or(self.max_states, count),
            ..self
        }
    }
}

impl Bound {
    /// The bound that cut a stateful search; `time_ms` is the time bound as set, when known.
    pub fn hit(self, time_ms: Option<u64>) -> BoundHit {
        match self {
            Bound::States(n) => BoundHit::States(n as u64),
            Bound::Time => BoundHit::Time(time_ms),
        }
    }
}

impl DfsConfig {
    /// This configuration with the budget's transition bound, when it sets one.
    pub fn with_budget(self, budget: &Budget) -> DfsConfig {
        DfsConfig {
            max_transitions: budget.transitions.unwrap_or(self.max_transitions),
            ..self
        }
    }
}

impl DfsBound {
    /// The bound that cut a stateless search; `None` for a search its caller halted, which no
    /// bound cut. `time_ms` is the time bound as set, when known.
    pub fn hit(self, time_ms: Option<u64>) -> Option<BoundHit> {
        match self {
            DfsBound::Transitions(n) => Some(BoundHit::Transitions(n)),
            DfsBound::Depth(d) => Some(BoundHit::Depth(d as u64)),
            DfsBound::Time => Some(BoundHit::Time(time_ms)),
            DfsBound::Halted => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dfs::{Memo, Reduction};
    use crate::{Folding, Level, explore_with};
    use scheduler::Stop;

    #[test]
    fn every_search_names_its_bound_in_the_one_vocabulary() {
        assert_eq!(Bound::States(7).hit(None), BoundHit::States(7));
        assert_eq!(Bound::States(7).hit(None).setting(), "--max-states 7");
        assert_eq!(Bound::Time.hit(Some(2500)), BoundHit::Time(Some(2500)));
        assert_eq!(
            DfsBound::Transitions(9).hit(None).map(|h| h.setting()),
            Some("--max-transitions 9".to_string())
        );
        assert_eq!(DfsBound::Depth(2000).hit(None), Some(BoundHit::Depth(2000)));
        assert_eq!(DfsBound::Time.hit(None), Some(BoundHit::Time(None)));
        assert_eq!(DfsBound::Halted.hit(Some(1)), None);
    }

    #[test]
    fn a_budget_sets_the_bounds_it_names_and_no_other() {
        let limits = Limits::default();
        assert_eq!(limits.with_budget(&Budget::UNBOUNDED), limits);
        let budget = Budget {
            states: Some(12),
            transitions: Some(34),
            ..Budget::UNBOUNDED
        };
        assert_eq!(limits.with_budget(&budget).max_states, 12);
        assert_eq!(limits.with_budget(&budget).jobs, limits.jobs);
        let config = DfsConfig {
            reduction: Reduction::SleepSets,
            memo: Memo::States,
            max_transitions: 5,
            folding: Folding::Invisible,
        };
        assert_eq!(config.with_budget(&Budget::UNBOUNDED).max_transitions, 5);
        assert_eq!(config.with_budget(&budget).max_transitions, 34);
    }

    /// A state bound from a budget cuts the stateful search, which names it as the budget does.
    #[test]
    fn the_stateful_search_reports_the_budgets_state_bound() {
        let text = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<2>;\nmov.u32 %r1, %tid.x;\nadd.u32 %r1, %r1, 1;\nret;\n}\n";
        let parsed = ptx_parser::parse(text);
        let program = semantics::load(&parsed.module, text).expect("loads").0;
        let launch = semantics::machine::LaunchConfig {
            kernel: None,
            grid: [3, 1, 1],
            block: [1, 1, 1],
            dynamic_shared_bytes: 0,
            buffers: Vec::new(),
            args: Vec::new(),
            globals: Vec::new(),
            extern_values: Vec::new(),
        };
        let m = semantics::machine::Machine::new(
            std::sync::Arc::new(program),
            &launch,
            &semantics::machine::MachineConfig::default(),
        )
        .expect("launches");
        let budget = Budget {
            states: Some(2),
            ..Budget::UNBOUNDED
        };
        let limits = Limits {
            folding: Folding::None,
            ..Limits::default()
        }
        .with_budget(&budget);
        let x = explore_with(
            &m,
            Level::Blocks,
            &Default::default(),
            limits,
            crate::Por::None,
            &Stop::never(),
        )
        .expect("explores");
        let hit = x.bound_hit.map(|b| b.hit(budget.time_ms));
        assert_eq!(hit, Some(BoundHit::States(2)));
        assert_eq!(x.states(), 2);
    }
}
