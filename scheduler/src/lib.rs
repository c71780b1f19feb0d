//! `scheduler`: who picks the next [`Choice`] from a machine's enabled set, and the run loop.
//!
//! * [`Scheduler`]: the seam (ARCHITECTURE.md section 5): `pick` returns an index into the
//!   enabled set, or `None` to stop the run; it may look at the machine.
//! * [`RoundRobin`]: rotates through the enabled set, one step each.
//! * [`Random`]: uniform choices from a seeded ChaCha8 generator (replayable by seed).
//! * [`pct`]: PCT; [`replay`]: strict replay with divergence reports; [`fuzz`]: parallel
//!   seeded campaigns; [`shard`]: splitting a campaign and merging its reports; [`outcome`]:
//!   final outcomes. Exhaustive exploration, the progress models and the policies by name
//!   live in the `explore` crate above this one, litmus tests in `litmus` above that.
//! * [`run_with`]: the one run loop: steps until the machine terminates, a bound of a
//!   [`Budget`] is hit ([`BoundHit`] says which), the scheduler stops or an [`Observer`] does.
//!   [`run()`], [`run_until`] and [`try_run_until`] are that loop with no observer and a step
//!   bound.

pub mod budget;
pub mod fuzz;
pub mod outcome;
pub mod pct;
pub mod refused;
pub mod replay;
pub mod run;
pub mod shard;
pub mod stop;

pub use budget::{BoundHit, Budget};
pub use refused::Refused;
pub use run::{Ended, Observer, Ran, run_resumable, run_with};
pub use stop::Stop;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use semantics::machine::{Machine, Termination};
use traces::Choice;

/// Picks one of the enabled choices, or stops the run.
pub trait Scheduler {
    /// `enabled` is `machine.enabled()`, never empty; returns an index into it (an index past
    /// the end takes the last choice), or `None`: this scheduler has no choice to give (a
    /// replayed schedule ran out, a user stopped), and the run stops before another step.
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> Option<usize>;
}

/// A scheduler made of a closure, as [`std::iter::from_fn`] makes an iterator.
pub fn from_fn<F: FnMut(&Machine, &[Choice]) -> Option<usize>>(pick: F) -> FromFn<F> {
    FromFn(pick)
}

/// The scheduler of [`from_fn`].
pub struct FromFn<F>(F);

impl<F: FnMut(&Machine, &[Choice]) -> Option<usize>> Scheduler for FromFn<F> {
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> Option<usize> {
        (self.0)(machine, enabled)
    }
}

/// Round-robin over the enabled set: each call takes the entry after the last one taken.
#[derive(Debug, Clone, Default)]
pub struct RoundRobin {
    next: usize,
}

impl RoundRobin {
    pub fn new() -> Self {
        RoundRobin { next: 0 }
    }
}

impl Scheduler for RoundRobin {
    fn pick(&mut self, _machine: &Machine, enabled: &[Choice]) -> Option<usize> {
        let i = self.next % enabled.len();
        self.next = i + 1;
        Some(i)
    }
}

/// Uniformly random choices from a seeded ChaCha8 generator.
#[derive(Debug, Clone)]
pub struct Random {
    rng: ChaCha8Rng,
    seed: u64,
}

impl Random {
    pub fn new(seed: u64) -> Self {
        Random {
            rng: ChaCha8Rng::seed_from_u64(seed),
            seed,
        }
    }
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

impl Scheduler for Random {
    fn pick(&mut self, _machine: &Machine, enabled: &[Choice]) -> Option<usize> {
        Some(self.rng.random_range(0..enabled.len()))
    }
}

/// Replays a list of choices, then falls back to round-robin.
#[derive(Debug, Clone)]
pub struct Replay {
    choices: Vec<Choice>,
    at: usize,
    fallback: RoundRobin,
}

impl Replay {
    pub fn new(choices: Vec<Choice>) -> Self {
        Replay {
            choices,
            at: 0,
            fallback: RoundRobin::new(),
        }
    }
}

impl Scheduler for Replay {
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> Option<usize> {
        if let Some(c) = self.choices.get(self.at) {
            self.at += 1;
            if let Some(i) = enabled.iter().position(|e| e == c) {
                return Some(i);
            }
        }
        self.fallback.pick(machine, enabled)
    }
}

/// Runs `machine` until it terminates or `max_steps` more transitions were taken (then
/// [`Termination::StepLimit`]). Never hangs.
pub fn run(machine: &mut Machine, scheduler: &mut dyn Scheduler, max_steps: u64) -> Termination {
    run_until(machine, scheduler, max_steps, &Stop::never())
}

/// [`run()`], and stops with [`Termination::TimeLimit`] when `stop` is requested. A refused
/// enabled choice (a cudasem bug, [`try_run_until`]) ends the run as an internal
/// [`Termination::Error`]; loops that report such bugs call [`try_run_until`].
pub fn run_until(
    machine: &mut Machine,
    scheduler: &mut dyn Scheduler,
    max_steps: u64,
    stop: &Stop,
) -> Termination {
    try_run_until(machine, scheduler, max_steps, stop).unwrap_or_else(|r| {
        Termination::Error(semantics::machine::MachineError {
            kind: semantics::machine::ErrorKind::Stuck,
            grid: None,
            block: [0; 3],
            thread: [0; 3],
            pc: 0,
            ptx_line: 0,
            source_line: None,
            message: format!("internal: {r}"),
        })
    })
}

/// [`run_until`], with a refused enabled choice as the typed error it is (a broken invariant
/// of cudasem, not a state of the program): [`run_with`] with a step bound and no observer.
pub fn try_run_until(
    machine: &mut Machine,
    scheduler: &mut dyn Scheduler,
    max_steps: u64,
    stop: &Stop,
) -> Result<Termination, Refused> {
    run_with(machine, scheduler, &Budget::steps(max_steps), stop, &mut ())
        .map(|ran| ran.ended.termination())
}
