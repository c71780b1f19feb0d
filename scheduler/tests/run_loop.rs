//! The one run loop (`scheduler::run_with`): a scheduler that gives no choice stops a run
//! cleanly, an observer sees exactly the steps a replay of the run records and may stop it,
//! and each bound of the budget that cuts a run is named.

use scheduler::replay::{Recorder, replay};
use scheduler::run::Observer;
use scheduler::{
    BoundHit, Budget, Ended, Random, RoundRobin, Scheduler, Stop, run_resumable, run_with,
};
use semantics::machine::{EventDetail, Machine, Termination, WarpModel};
use std::ops::ControlFlow;
use traces::{Choice, Event};

/// The corpus kernels that take more than a handful of steps.
fn kernels() -> Vec<(String, Machine)> {
    let ks: Vec<(String, Machine)> =
        corpus::corpus_machines_under(&[WarpModel::SimtStack, WarpModel::Its])
            .into_iter()
            .map(|(name, m, _)| (name, m))
            .filter(|(_, m)| {
                let mut m = m.clone();
                scheduler::run(&mut m, &mut RoundRobin::new(), 10) == Termination::StepLimit
            })
            .collect();
    assert!(ks.len() >= 20, "{} kernels", ks.len());
    ks
}

/// Gives `n` choices (round-robin), then none.
struct Only {
    n: usize,
    inner: RoundRobin,
}

impl Scheduler for Only {
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> Option<usize> {
        self.n = self.n.checked_sub(1)?;
        self.inner.pick(machine, enabled)
    }
}

/// Keeps every step: its choice, its events in full, the machine's step count after it.
#[derive(Default)]
struct Steps {
    seen: Vec<(Choice, Vec<Event>, u64)>,
    stop_after: Option<usize>,
}

impl Observer for Steps {
    fn detail(&self) -> Option<EventDetail> {
        Some(EventDetail::Full)
    }
    fn observe(&mut self, choice: &Choice, events: &[Event], machine: &Machine) -> ControlFlow<()> {
        self.seen.push((*choice, events.to_vec(), machine.steps()));
        if Some(self.seen.len()) == self.stop_after {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

#[test]
fn a_scheduler_without_a_choice_stops_the_run_and_leaves_the_machine_running() {
    for (name, m) in kernels() {
        let mut m = m.clone();
        let mut only = Only {
            n: 5,
            inner: RoundRobin::new(),
        };
        let ran = run_with(
            &mut m,
            &mut only,
            &Budget::UNBOUNDED,
            &Stop::never(),
            &mut (),
        )
        .unwrap();
        assert_eq!(ran.ended, Ended::SchedulerStopped, "{name}");
        assert_eq!(ran.taken, 5, "{name}");
        assert_eq!(m.steps(), 5, "{name}");
        // Not a bound: the machine is not stopped, and another run goes on from it.
        assert_eq!(m.termination(), None, "{name}");
        assert_eq!(ran.ended.bound_hit(), None, "{name}");
        let rest = run_with(
            &mut m,
            &mut RoundRobin::new(),
            &Budget::steps(3),
            &Stop::never(),
            &mut (),
        )
        .unwrap();
        assert_eq!(m.steps(), 5 + rest.taken, "{name}");
    }
}

#[test]
fn an_observer_sees_exactly_the_steps_a_replay_records() {
    for (i, (name, m)) in kernels().into_iter().enumerate() {
        let mut run = m.clone();
        let mut recorder = Recorder::new(Random::new(i as u64));
        let mut steps = Steps::default();
        let ran = run_with(
            &mut run,
            &mut recorder,
            &Budget::steps(5_000),
            &Stop::never(),
            &mut steps,
        )
        .unwrap();
        assert_eq!(ran.taken as usize, steps.seen.len(), "{name}");
        let choices: Vec<Choice> = steps.seen.iter().map(|s| s.0).collect();
        assert_eq!(choices, recorder.choices, "{name}");
        let counts: Vec<u64> = steps.seen.iter().map(|s| s.2).collect();
        assert_eq!(counts, (1..=ran.taken).collect::<Vec<_>>(), "{name}");
        let mut fresh = m.clone();
        let replayed = replay(&mut fresh, &recorder.choices, None, None, true);
        assert_eq!(replayed.divergence, None, "{name}");
        let events: Vec<Vec<Event>> = steps.seen.into_iter().map(|s| s.1).collect();
        assert_eq!(Some(events), replayed.events, "{name}");
        assert!(
            replayed
                .events
                .iter()
                .flatten()
                .flatten()
                .any(|e| matches!(e, Event::Executed { .. })),
            "{name}: the events name the rules applied"
        );
    }
}

#[test]
fn an_observer_may_stop_the_run() {
    let (name, m) = kernels().swap_remove(0);
    let mut m = m.clone();
    let mut steps = Steps {
        stop_after: Some(3),
        ..Steps::default()
    };
    let ran = run_with(
        &mut m,
        &mut RoundRobin::new(),
        &Budget::UNBOUNDED,
        &Stop::never(),
        &mut steps,
    )
    .unwrap();
    assert_eq!(ran.ended, Ended::ObserverStopped, "{name}");
    assert_eq!((ran.taken, m.steps()), (3, 3), "{name}");
    assert_eq!(m.termination(), None, "{name}");
}

#[test]
fn each_bound_that_cuts_a_run_is_named() {
    let (name, m) = kernels().swap_remove(0);
    let mut stepped = m.clone();
    let ran = run_with(
        &mut stepped,
        &mut RoundRobin::new(),
        &Budget::steps(4),
        &Stop::never(),
        &mut (),
    )
    .unwrap();
    assert_eq!(ran.ended, Ended::Bound(BoundHit::Steps(4)), "{name}");
    assert_eq!(ran.ended.termination(), Termination::StepLimit);
    assert_eq!(stepped.termination(), Some(&Termination::StepLimit));
    assert_eq!(
        ran.ended.bound_hit().unwrap().to_string(),
        "the step bound (--max-steps 4)"
    );

    let stop = Stop::new();
    stop.request();
    let timed = Budget {
        time_ms: Some(2500),
        ..Budget::steps(1_000)
    };
    let mut late = m.clone();
    let ran = run_with(&mut late, &mut RoundRobin::new(), &timed, &stop, &mut ()).unwrap();
    assert_eq!(
        ran.ended,
        Ended::Bound(BoundHit::Time(Some(2500))),
        "{name}"
    );
    assert_eq!(ran.ended.termination(), Termination::TimeLimit);
    assert_eq!(late.termination(), Some(&Termination::TimeLimit));
    assert_eq!(
        serde_json::to_string(&ran.ended.bound_hit()).unwrap(),
        r#"{"bound":"time","limit":2500}"#
    );

    // A run that ends on its own names no bound.
    let mut whole = m.clone();
    let ran = run_with(
        &mut whole,
        &mut RoundRobin::new(),
        &Budget::steps(1_000_000),
        &Stop::never(),
        &mut (),
    )
    .unwrap();
    assert!(matches!(ran.ended, Ended::Terminated(_)), "{name}");
    assert_eq!(ran.ended.bound_hit(), None);
}

#[test]
fn a_resumable_run_cut_by_a_bound_goes_on_to_the_end_of_one_whole_run() {
    for (name, m) in kernels() {
        let mut whole = m.clone();
        let mut whole_recorder = Recorder::new(RoundRobin::new());
        let all = run_with(
            &mut whole,
            &mut whole_recorder,
            &Budget::steps(20_000),
            &Stop::never(),
            &mut (),
        )
        .unwrap();
        // In pieces of 7 steps, each cut by the step bound, then an interrupt, then the rest.
        let mut pieces = m.clone();
        let mut recorder = Recorder::new(RoundRobin::new());
        let mut taken = 0;
        for _ in 0..3 {
            let ran = run_resumable(
                &mut pieces,
                &mut recorder,
                &Budget::steps(7),
                &Stop::never(),
                &mut (),
            )
            .unwrap();
            taken += ran.taken;
            if let Ended::Bound(hit) = ran.ended {
                assert_eq!(hit, BoundHit::Steps(7), "{name}");
                assert_eq!(
                    pieces.termination(),
                    None,
                    "{name}: the bound ends the run only"
                );
            }
        }
        let interrupt = Stop::new();
        interrupt.request();
        let ran = run_resumable(
            &mut pieces,
            &mut recorder,
            &Budget::UNBOUNDED,
            &interrupt,
            &mut (),
        )
        .unwrap();
        if pieces.termination().is_none() {
            assert_eq!(ran.ended, Ended::Bound(BoundHit::Time(None)), "{name}");
            assert_eq!(ran.taken, 0, "{name}");
        }
        interrupt.clear();
        let mut last = Steps::default();
        let rest = run_resumable(
            &mut pieces,
            &mut recorder,
            &Budget::steps(20_000 - taken),
            &interrupt,
            &mut last,
        )
        .unwrap();
        assert_eq!(recorder.choices, whole_recorder.choices, "{name}");
        assert_eq!(rest.ended.termination(), all.ended.termination(), "{name}");
        match all.ended {
            Ended::Terminated(_) => {
                assert_eq!(pieces.termination(), whole.termination(), "{name}")
            }
            _ => assert_eq!(pieces.termination(), None, "{name}: cut, not ended"),
        }
        // The run hands back its last step's events: those its observer saw last.
        match last.seen.last() {
            Some(s) => assert_eq!(rest.last_events, s.1, "{name}"),
            None => assert!(rest.last_events.is_empty(), "{name}"),
        }
    }
}
