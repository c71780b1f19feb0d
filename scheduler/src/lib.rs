//! `scheduler`: who picks the next [`Choice`] from a machine's enabled set, and the run loop.
//!
//! * [`Scheduler`]: the seam (ARCHITECTURE.md section 5): `pick` returns an index into the
//!   enabled set; it may look at the machine.
//! * [`RoundRobin`]: rotates through the enabled set, one step each.
//! * [`Random`]: uniform choices from a seeded ChaCha8 generator (replayable by seed).
//! * [`pct`]: PCT; [`replay`]: strict replay with divergence reports; [`fuzz`]: parallel
//!   seeded campaigns; [`shard`]: splitting a campaign and merging its reports; [`outcome`]:
//!   final outcomes. Exhaustive exploration, the progress models and the policies by name
//!   live in the `explore` crate above this one, litmus tests in `litmus` above that.
//! * [`run`]: steps until the machine terminates or `max_steps` transitions were taken;
//!   [`run_until`] also stops when a [`Stop`] flag is set (the CLI's `--timeout`).

pub mod fuzz;
pub mod outcome;
pub mod pct;
pub mod refused;
pub mod replay;
pub mod shard;
pub mod stop;

pub use refused::Refused;
pub use stop::Stop;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use semantics::machine::{Machine, Termination};
use traces::Choice;

/// Picks one of the enabled choices.
pub trait Scheduler {
    /// `enabled` is `machine.enabled()`, never empty; returns an index into it.
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> usize;
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
    fn pick(&mut self, _machine: &Machine, enabled: &[Choice]) -> usize {
        let i = self.next % enabled.len();
        self.next = i + 1;
        i
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
    fn pick(&mut self, _machine: &Machine, enabled: &[Choice]) -> usize {
        self.rng.random_range(0..enabled.len())
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
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> usize {
        if let Some(c) = self.choices.get(self.at) {
            self.at += 1;
            if let Some(i) = enabled.iter().position(|e| e == c) {
                return i;
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

/// [`run`], and stops with [`Termination::TimeLimit`] when `stop` is requested. A refused
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
/// of cudasem, not a state of the program). The refusal's prefix is empty: a caller that
/// needs the schedule records it (a [`replay::Recorder`]'s last choice is the refused one).
pub fn try_run_until(
    machine: &mut Machine,
    scheduler: &mut dyn Scheduler,
    max_steps: u64,
    stop: &Stop,
) -> Result<Termination, Refused> {
    let mut taken = 0u64;
    loop {
        if let Some(t) = machine.termination() {
            return Ok(t.clone());
        }
        if taken >= max_steps {
            machine.stop_at_step_limit();
            return Ok(Termination::StepLimit);
        }
        if stop.requested() {
            machine.stop_at_time_limit();
            return Ok(Termination::TimeLimit);
        }
        let enabled = machine.enabled();
        if enabled.is_empty() {
            // The machine decides termination after each step; an empty set before any step
            // means an empty launch.
            return Ok(machine
                .termination()
                .cloned()
                .unwrap_or(Termination::Completed));
        }
        let i = scheduler.pick(machine, enabled).min(enabled.len() - 1);
        let choice = enabled[i];
        let step = machine.steps();
        if let Err(e) = machine.step(&choice) {
            // A scheduler picked from the enabled set: this is a cudasem bug. Report, don't panic.
            return Err(Refused::new([], step, e));
        }
        taken += 1;
    }
}
