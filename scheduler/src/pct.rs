//! PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte, ASPLOS
//! 2010): `pct:SEED:DEPTH`. Every *owner* of choices (a warp, a converged lane group named by
//! its lowest lane, a block's barriers, the block issuer) gets a random priority when first
//! seen; the enabled choice of the highest-priority owner runs; at `DEPTH - 1` change points,
//! drawn uniformly from the first `horizon` steps, the running owner drops below every
//! initial priority. A bug of depth `d` is found with probability at least `1/(n k^(d-1))`
//! for `n` owners and `k` steps. Several choices of one owner (`Target{k}`) are picked
//! uniformly. Seeded ChaCha8: the same seed gives the same schedule.
//!
//! Spin loops: strict priorities starve a lock holder behind a spinning owner forever (PCT
//! assumes terminating threads). So an owner that runs more than `max(horizon, 64)` steps in
//! a row is demoted below everyone (and below every earlier such demotion): runs stay fair
//! in the limit and end, while short priority inversions are still explored.

use crate::Scheduler;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use semantics::machine::Machine;
use std::collections::BTreeMap;
use traces::Choice;

/// Who a choice belongs to, for priorities.
fn owner(c: &Choice) -> u64 {
    match *c {
        Choice::Warp { block, warp } | Choice::Target { block, warp, .. } => {
            (block as u64) << 24 | (warp as u64) << 8
        }
        Choice::Lanes { block, warp, mask } => {
            (block as u64) << 24 | (warp as u64) << 8 | mask.trailing_zeros() as u64
        }
        Choice::Pick {
            block, warp, lane, ..
        } => (block as u64) << 24 | (warp as u64) << 8 | lane as u64,
        Choice::EndBarrier { block, .. } => (block as u64) << 24 | 0xff_ffff,
        Choice::Issue { .. } => u64::MAX - 1,
        Choice::Mem(_) => u64::MAX,
    }
}

/// The PCT scheduler.
#[derive(Debug, Clone)]
pub struct Pct {
    rng: ChaCha8Rng,
    depth: u32,
    /// Sorted step numbers at which the running owner is demoted.
    change_points: Vec<u64>,
    priorities: BTreeMap<u64, u64>,
    step: u64,
    demoted: u32,
    /// Consecutive steps of the last owner, and the bound on them.
    run: (u64, u64),
    patience: u64,
    /// The next starvation demotion's priority (decreasing).
    floor: u64,
}

/// Priority bands: initial priorities above `INITIAL`, change-point demotions just above
/// `CHANGE`, starvation demotions below it.
const INITIAL: u64 = 1 << 62;
const CHANGE: u64 = 1 << 61;

impl Pct {
    /// `horizon`: the expected number of steps of a run (change points fall before it).
    pub fn new(seed: u64, depth: u32, horizon: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let horizon = horizon.max(1);
        let mut change_points: Vec<u64> = (1..depth.max(1))
            .map(|_| rng.random_range(0..horizon))
            .collect();
        change_points.sort_unstable();
        Pct {
            rng,
            depth: depth.max(1),
            change_points,
            priorities: BTreeMap::new(),
            step: 0,
            demoted: 0,
            run: (u64::MAX, 0),
            patience: horizon.max(64),
            floor: CHANGE - 1,
        }
    }

    fn priority(&mut self, o: u64) -> u64 {
        if let Some(&p) = self.priorities.get(&o) {
            return p;
        }
        let p = INITIAL + self.rng.random_range(0..INITIAL);
        self.priorities.insert(o, p);
        p
    }

    fn best_owner(&mut self, enabled: &[Choice]) -> u64 {
        let mut best = (0u64, 0u64);
        let mut first = true;
        for c in enabled {
            let o = owner(c);
            let p = self.priority(o);
            if first || p > best.0 {
                best = (p, o);
                first = false;
            }
        }
        best.1
    }
}

impl Scheduler for Pct {
    fn pick(&mut self, _machine: &Machine, enabled: &[Choice]) -> Option<usize> {
        let mut o = self.best_owner(enabled);
        while self.change_points.first() == Some(&self.step) {
            self.change_points.remove(0);
            self.demoted += 1;
            let level = CHANGE + (self.depth - self.demoted.min(self.depth)) as u64;
            self.priorities.insert(o, level);
            o = self.best_owner(enabled);
        }
        if self.run.0 == o {
            self.run.1 += 1;
            if self.run.1 > self.patience {
                self.priorities.insert(o, self.floor);
                self.floor = self.floor.saturating_sub(1);
                o = self.best_owner(enabled);
                self.run = (o, 0);
            }
        } else {
            self.run = (o, 0);
        }
        self.step += 1;
        let mine: Vec<usize> = (0..enabled.len())
            .filter(|&i| owner(&enabled[i]) == o)
            .collect();
        Some(match mine.len() {
            0 => 0,
            1 => mine[0],
            n => mine[self.rng.random_range(0..n)],
        })
    }
}
