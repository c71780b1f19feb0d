//! Scheduling policies by name (`--schedule`): `round-robin`, `random:SEED`,
//! `pct:SEED:DEPTH`, `replay:FILE` (the CLI reads the file) and progress-model policies
//! `MODEL@LEVEL[:SEED]` (`fair@blocks`, `obe-strong@warps:7`, `lobe@lanes`).
//!
//! A progress-model policy ([`ProgressPolicy`]) only produces schedules that are fair under
//! its model at its level (digest §7.3, the "starvation phase" of `WithinModel`): it tracks
//! which units have stepped and terminated, computes F before each step, and runs an enabled
//! unit of F, the one that has waited longest (ties by seed), so every unit of F that stays
//! enabled is eventually scheduled (weak fairness by construction; the strong variants
//! schedule the same way, which is also strongly fair towards F). Units outside F run only
//! when no unit of F is enabled, chosen at random. System choices (issue, barrier completion)
//! are taken first, as exploration folds them (`explore::settle`).

use crate::progress::{ProgressModel, Unit, UnitSet};
use crate::{Level, Units, is_system};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use scheduler::pct::Pct;
use scheduler::{Random, RoundRobin, Scheduler};
use semantics::machine::Machine;
use std::fmt;
use std::str::FromStr;
use traces::Choice;

/// A policy as named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    RoundRobin,
    Random {
        seed: u64,
    },
    Pct {
        seed: u64,
        depth: u32,
    },
    /// Replays the trace in a file, then round-robin.
    Replay {
        file: String,
    },
    Progress {
        model: ProgressModel,
        level: Level,
        seed: u64,
    },
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Policy::RoundRobin => f.write_str("round-robin"),
            Policy::Random { seed } => write!(f, "random:{seed}"),
            Policy::Pct { seed, depth } => write!(f, "pct:{seed}:{depth}"),
            Policy::Replay { file } => write!(f, "replay:{file}"),
            Policy::Progress { model, level, seed } => {
                write!(f, "{}@{level}:{seed}", model.name().replace('_', "-"))
            }
        }
    }
}

/// A policy name that does not parse: the message says what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadPolicy(pub String);

const EXPECTED: &str = "write round-robin, random:SEED, pct:SEED:DEPTH, replay:FILE or MODEL@LEVEL[:SEED] (MODEL: unfair, fair, obe, hsa, hsa-obe, lobe, optionally -strong; LEVEL: blocks, warps, lanes)";

impl FromStr for Policy {
    type Err = BadPolicy;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = |m: String| BadPolicy(format!("{m}: {EXPECTED}"));
        let num = |s: &str, what: &str| {
            s.parse::<u64>()
                .map_err(|_| bad(format!("`{s}` is not a {what}")))
        };
        if text == "round-robin" {
            return Ok(Policy::RoundRobin);
        }
        if let Some((model, rest)) = text.split_once('@') {
            let model: ProgressModel = model.parse().map_err(|e| bad(format!("{e}")))?;
            let (level, seed) = match rest.split_once(':') {
                Some((l, s)) => (l, num(s, "seed")?),
                None => (rest, 0),
            };
            let level: Level = level.parse().map_err(|e| bad(format!("{e}")))?;
            return Ok(Policy::Progress { model, level, seed });
        }
        let parts: Vec<&str> = text.splitn(2, ':').collect();
        match parts.as_slice() {
            ["random", seed] => Ok(Policy::Random {
                seed: num(seed, "seed")?,
            }),
            ["pct", rest] => {
                let (seed, depth) = rest
                    .split_once(':')
                    .ok_or_else(|| bad("pct needs a seed and a depth".to_string()))?;
                let depth = num(depth, "depth")?;
                if depth == 0 || depth > 1000 {
                    return Err(bad(format!("depth {depth} is not in 1..=1000")));
                }
                Ok(Policy::Pct {
                    seed: num(seed, "seed")?,
                    depth: depth as u32,
                })
            }
            ["replay", file] if !file.is_empty() => Ok(Policy::Replay {
                file: file.to_string(),
            }),
            _ => Err(bad(format!("unknown schedule `{text}`"))),
        }
    }
}

impl Policy {
    /// The scheduler for every policy but `Replay` (whose choices the caller loads).
    /// `horizon` is PCT's expected run length.
    pub fn scheduler(&self, machine: &Machine, horizon: u64) -> Option<Box<dyn Scheduler>> {
        Some(match *self {
            Policy::RoundRobin => Box::new(RoundRobin::new()),
            Policy::Random { seed } => Box::new(Random::new(seed)),
            Policy::Pct { seed, depth } => Box::new(Pct::new(seed, depth, horizon)),
            Policy::Progress { model, level, seed } => {
                Box::new(ProgressPolicy::new(machine, model, level, seed).ok()?)
            }
            Policy::Replay { .. } => return None,
        })
    }

    pub fn seed(&self) -> Option<u64> {
        match *self {
            Policy::Random { seed } | Policy::Pct { seed, .. } | Policy::Progress { seed, .. } => {
                Some(seed)
            }
            _ => None,
        }
    }
}

/// Schedules only executions fair under a progress model (see the module documentation).
#[derive(Debug, Clone)]
pub struct ProgressPolicy {
    model: ProgressModel,
    units: Units,
    rng: ChaCha8Rng,
    stepped: UnitSet,
    /// Per unit: the step at which it last ran (0 = never).
    last: Vec<u64>,
    step: u64,
}

impl ProgressPolicy {
    pub fn new(
        machine: &Machine,
        model: ProgressModel,
        level: Level,
        seed: u64,
    ) -> Result<Self, crate::TooManyUnits> {
        let units = Units::new(machine, level)?;
        Ok(ProgressPolicy {
            model,
            rng: ChaCha8Rng::seed_from_u64(seed),
            stepped: UnitSet::EMPTY,
            last: vec![0; units.count()],
            units,
            step: 0,
        })
    }
}

impl Scheduler for ProgressPolicy {
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> Option<usize> {
        self.step += 1;
        if let Some(i) = enabled.iter().position(is_system) {
            return Some(i);
        }
        let live = UnitSet::all(self.units.count()).difference(self.units.done(machine));
        let fair = self.model.fair_set(self.stepped, live);
        let of: Vec<UnitSet> = enabled.iter().map(|c| self.units.of(machine, c)).collect();
        // The longest-waiting unit of F with an enabled choice.
        let mut best: Option<(u64, Unit)> = None;
        for set in &of {
            for u in set.intersection(fair).iter() {
                let key = (self.last.get(u).copied().unwrap_or(0), u);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
        }
        let candidates: Vec<usize> = match best {
            Some((_, u)) => (0..enabled.len()).filter(|&i| of[i].contains(u)).collect(),
            None => (0..enabled.len()).collect(),
        };
        let i = match candidates.len() {
            0 => 0,
            1 => candidates[0],
            n => candidates[self.rng.random_range(0..n)],
        };
        for u in of[i].iter() {
            if let Some(l) = self.last.get_mut(u) {
                *l = self.step;
            }
        }
        self.stepped = self.stepped.union(of[i]);
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_print() {
        for s in [
            "round-robin",
            "random:7",
            "pct:3:2",
            "replay:t.jsonl",
            "fair@blocks:0",
            "obe-strong@warps:9",
            "hsa-obe@lanes:1",
        ] {
            let p: Policy = s.parse().unwrap();
            assert_eq!(p.to_string(), s);
        }
        assert_eq!(
            "lobe@lanes".parse::<Policy>().unwrap().to_string(),
            "lobe@lanes:0"
        );
        let e = |s: &str| s.parse::<Policy>().unwrap_err().to_string();
        assert!(e("pct:1").starts_with("pct needs a seed and a depth"));
        assert!(e("random:x").starts_with("`x` is not a seed"));
        assert!(e("fair@cores").starts_with("unknown level `cores`"));
        assert!(e("pct:1:0").starts_with("depth 0 is not in 1..=1000"));
    }
}
