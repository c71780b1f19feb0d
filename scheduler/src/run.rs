//! The run loop, once: [`run_with`] steps a machine with a [`Scheduler`]'s choices within a
//! [`Budget`], and shows every step to an [`Observer`]. The plain runs ([`crate::run()`],
//! [`crate::try_run_until`]), the teaching views, `check`'s monitored schedules and the
//! campaigns of [`crate::fuzz`] are this loop with different observers.
//!
//! A run ends in one of four ways ([`Ended`]): the machine ends it (completion, deadlock, a
//! fault of the program), a bound of the budget cuts it, the scheduler has no choice to give,
//! or an observer stops it. Only the first says anything about how the program ends.
//!
//! [`run_with`] ends the machine at the bound that cut it (a report of the run says so);
//! [`run_resumable`] is the same loop leaving the machine where the bound found it, for the
//! debugger, whose `continue` goes on from where the last one stopped.

use crate::budget::{BoundHit, Budget};
use crate::{Refused, Scheduler, Stop};
use semantics::machine::{EventDetail, Machine, Termination};
use std::ops::ControlFlow;
use traces::{Choice, Event};

/// Sees the steps of a run, one at a time, and may stop it.
pub trait Observer {
    /// How much of each step's events this observer reads; `None` (the default): none, so the
    /// steps are taken without recording events (the fastest).
    fn detail(&self) -> Option<EventDetail> {
        None
    }

    /// One step was taken: `choice`, what it did (`events`, in [`Observer::detail`]'s detail,
    /// empty without one; an [`Event::Executed`] names the rule it applied) and the machine
    /// after it. [`ControlFlow::Break`] ends the run here.
    fn observe(&mut self, choice: &Choice, events: &[Event], machine: &Machine) -> ControlFlow<()>;
}

/// Observes nothing: the plain run.
impl Observer for () {
    fn observe(&mut self, _: &Choice, _: &[Event], _: &Machine) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }
}

/// An observer made of a closure (that reads no events).
pub struct Watch<F>(pub F);

impl<F: FnMut(&Choice, &Machine) -> ControlFlow<()>> Observer for Watch<F> {
    fn observe(&mut self, choice: &Choice, _: &[Event], machine: &Machine) -> ControlFlow<()> {
        (self.0)(choice, machine)
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// The machine ended it: completed, deadlocked, or the program faulted.
    Terminated(Termination),
    /// A bound of the budget cut it; [`run_with`] stops the machine with
    /// [`Termination::StepLimit`] or [`Termination::TimeLimit`], [`run_resumable`] leaves it
    /// as it was.
    Bound(BoundHit),
    /// The scheduler had no choice to give ([`Scheduler::pick`] returned `None`). The machine
    /// is left as it was: another run may go on from it.
    SchedulerStopped,
    /// An observer stopped the run after a step; the machine is left as it was.
    ObserverStopped,
}

impl Ended {
    /// The termination a report prints: the machine's own, or the bound's. A run that its
    /// scheduler or an observer stopped did not end: it reads as the step bound's
    /// [`Termination::StepLimit`], which claims nothing about how the program ends.
    pub fn termination(&self) -> Termination {
        match self {
            Ended::Terminated(t) => t.clone(),
            Ended::Bound(BoundHit::Time(_)) => Termination::TimeLimit,
            Ended::Bound(_) | Ended::SchedulerStopped | Ended::ObserverStopped => {
                Termination::StepLimit
            }
        }
    }

    /// The bound that cut the run, if one did.
    pub fn bound_hit(&self) -> Option<BoundHit> {
        match self {
            Ended::Bound(b) => Some(*b),
            _ => None,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    pub ended: Ended,
    /// Steps this run took (the machine's own count goes on across runs).
    pub taken: u64,
    /// The events of the last step this run took, in the observer's [`Observer::detail`]
    /// (empty without one, or when the run took no step): a caller that shows where a run
    /// stopped shows the step it stopped after (the debugger's `rule`) without recording
    /// every step's events.
    pub last_events: Vec<Event>,
}

/// Runs `machine` with `scheduler`'s choices until it ends, a bound of `budget` is hit (the
/// steps; the time when `stop` is requested), the scheduler gives no choice, or `observer`
/// stops it. Never hangs while `budget.steps` is bounded or `stop` can be set. A bound that
/// cuts the run ends the machine with [`Termination::StepLimit`] or
/// [`Termination::TimeLimit`].
///
/// The error is a refused enabled choice: the machine failed a step it listed as enabled, a
/// broken invariant of cudasem, never the program's fault. Its prefix is empty: a caller that
/// needs the schedule records it (a [`crate::replay::Recorder`]'s last choice is the refused
/// one).
pub fn run_with(
    machine: &mut Machine,
    scheduler: &mut dyn Scheduler,
    budget: &Budget,
    stop: &Stop,
    observer: &mut dyn Observer,
) -> Result<Ran, Refused> {
    let ran = run_resumable(machine, scheduler, budget, stop, observer)?;
    match ran.ended {
        Ended::Bound(BoundHit::Time(_)) => machine.stop_at_time_limit(),
        Ended::Bound(_) => machine.stop_at_step_limit(),
        _ => {}
    }
    Ok(ran)
}

/// [`run_with`], leaving the machine as the bound found it: a bound that cuts this run ends
/// the run, not the program, and another run may go on from there (the debugger's
/// `continue` after its step bound or an interrupt).
pub fn run_resumable(
    machine: &mut Machine,
    scheduler: &mut dyn Scheduler,
    budget: &Budget,
    stop: &Stop,
    observer: &mut dyn Observer,
) -> Result<Ran, Refused> {
    // Read once: the loop is the hot path of every plain run.
    let detail = observer.detail();
    let max_steps = budget.steps.unwrap_or(u64::MAX);
    let mut events: Vec<Event> = Vec::new();
    let mut taken = 0u64;
    let ended = loop {
        if let Some(t) = machine.termination() {
            break Ended::Terminated(t.clone());
        }
        if taken >= max_steps {
            break Ended::Bound(BoundHit::Steps(max_steps));
        }
        if stop.requested() {
            break Ended::Bound(budget.time_hit());
        }
        let enabled = machine.enabled();
        if enabled.is_empty() {
            // The machine decides termination after each step; an empty set before any step
            // means an empty launch.
            break Ended::Terminated(
                machine
                    .termination()
                    .cloned()
                    .unwrap_or(Termination::Completed),
            );
        }
        let Some(i) = scheduler.pick(machine, enabled) else {
            break Ended::SchedulerStopped;
        };
        let choice = enabled[i.min(enabled.len() - 1)];
        let step = machine.steps();
        let stepped = match detail {
            None => machine.step(&choice),
            Some(d) => {
                events.clear();
                machine.step_observed_with(&choice, &mut events, d)
            }
        };
        if let Err(e) = stepped {
            // The scheduler picked from the enabled set: a cudasem bug. Report, don't panic.
            return Err(Refused::new([], step, e));
        }
        taken += 1;
        if observer.observe(&choice, &events, machine).is_break() {
            break Ended::ObserverStopped;
        }
    };
    Ok(Ran {
        ended,
        taken,
        last_events: events,
    })
}
