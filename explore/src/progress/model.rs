//! The 11 progress models of Sorensen et al., OOPSLA 2021 (digest §3).
//!
//! A progress model is a monitor that, before every step, names the set F of units guaranteed
//! eventual (fair) execution (paper §4.1, digest §3.3). Every model of the paper is a pure
//! function of *(which units have stepped, which are still live)* (digest §3.4, closed forms
//! checked against the artifact), so a model here is plain data and [`ProgressModel::fair_set`]
//! that function. Weak and strong fairness (digest §3.1) share F and differ only in the
//! termination check ([`super::oracle`]).

use super::units::UnitSet;
use std::fmt;
use std::str::FromStr;

/// Which units a model guarantees fair execution (paper Table 1, digest §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ModelKind {
    /// No unit is ever guaranteed a step: F = ∅.
    Unfair,
    /// Heterogeneous System Architecture: the live unit with the lowest id, F = {min live}.
    Hsa,
    /// Occupancy-Bound Execution: units that have taken a step, F = stepped ∩ live.
    Obe,
    /// HSA and OBE together: F = (stepped ∩ live) ∪ {min live}.
    HsaObe,
    /// Linear OBE: every live unit with an id up to that of a unit that has stepped,
    /// F = {t ∈ live | t ≤ max stepped}.
    Lobe,
    /// Every live unit: F = live.
    Fair,
}

/// Weak or strong fairness towards the units of F (digest §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Strength {
    /// A unit of F that stays enabled is eventually scheduled: forbids starvation cycles.
    Weak,
    /// A transition of an F unit enabled infinitely often is eventually taken: also forbids
    /// livelock (digest §4.3, "transition-level strong fairness").
    Strong,
}

/// One of the 11 models: [`ModelKind`] × [`Strength`], with `Unfair` only weak (strong
/// fairness towards nobody is unfairness; digest §4.4 on why CADP's strong formula is
/// vacuous there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProgressModel {
    pub kind: ModelKind,
    pub strength: Strength,
}

impl ModelKind {
    /// The five kinds that come in a weak and a strong variant, in the column order of
    /// `expected.csv`.
    pub const FAIRISH: [ModelKind; 5] = [
        ModelKind::Hsa,
        ModelKind::Obe,
        ModelKind::HsaObe,
        ModelKind::Lobe,
        ModelKind::Fair,
    ];

    /// The column-name stem (`hsa_obe`).
    pub const fn name(self) -> &'static str {
        match self {
            ModelKind::Unfair => "unfair",
            ModelKind::Hsa => "hsa",
            ModelKind::Obe => "obe",
            ModelKind::HsaObe => "hsa_obe",
            ModelKind::Lobe => "lobe",
            ModelKind::Fair => "fair",
        }
    }

    /// F before the next step, given the units that have stepped at least once (terminated
    /// ones included) and the live (not terminated) units. Digest §3.4, closed forms.
    pub fn fair_set(self, stepped: UnitSet, live: UnitSet) -> UnitSet {
        let lowest_live = live.min().map_or(UnitSet::EMPTY, UnitSet::single);
        match self {
            ModelKind::Unfair => UnitSet::EMPTY,
            ModelKind::Hsa => lowest_live,
            ModelKind::Obe => stepped.intersection(live),
            ModelKind::HsaObe => stepped.intersection(live).union(lowest_live),
            // LNT `LOBE`: a step by `tid` inserts every non-terminated t <= tid; terminations
            // only remove; so F = live ∩ {0..=max stepped}.
            ModelKind::Lobe => match stepped.max() {
                Some(m) => live.intersection(UnitSet::up_to(m)),
                None => UnitSet::EMPTY,
            },
            ModelKind::Fair => live,
        }
    }
}

impl ProgressModel {
    pub const UNFAIR: ProgressModel = ProgressModel::new(ModelKind::Unfair, Strength::Weak);

    /// The 11 models in the column order of `expected.csv`: `unfair`, the five weak, the five
    /// strong.
    pub const ALL: [ProgressModel; 11] = {
        let mut all = [ProgressModel::UNFAIR; 11];
        let mut i = 0;
        while i < 5 {
            all[1 + i] = ProgressModel::new(ModelKind::FAIRISH[i], Strength::Weak);
            all[6 + i] = ProgressModel::new(ModelKind::FAIRISH[i], Strength::Strong);
            i += 1;
        }
        all
    };

    /// `Unfair` is normalised to `Weak` (see the type's documentation).
    pub const fn new(kind: ModelKind, strength: Strength) -> Self {
        let strength = match kind {
            ModelKind::Unfair => Strength::Weak,
            _ => strength,
        };
        ProgressModel { kind, strength }
    }

    /// The `expected.csv` column name: `unfair`, `hsa`, ..., `hsa_obe_strong`.
    pub const fn name(self) -> &'static str {
        match (self.kind, self.strength) {
            (ModelKind::Unfair, _) => "unfair",
            (ModelKind::Hsa, Strength::Weak) => "hsa",
            (ModelKind::Obe, Strength::Weak) => "obe",
            (ModelKind::HsaObe, Strength::Weak) => "hsa_obe",
            (ModelKind::Lobe, Strength::Weak) => "lobe",
            (ModelKind::Fair, Strength::Weak) => "fair",
            (ModelKind::Hsa, Strength::Strong) => "hsa_strong",
            (ModelKind::Obe, Strength::Strong) => "obe_strong",
            (ModelKind::HsaObe, Strength::Strong) => "hsa_obe_strong",
            (ModelKind::Lobe, Strength::Strong) => "lobe_strong",
            (ModelKind::Fair, Strength::Strong) => "fair_strong",
        }
    }

    /// The position of this model in [`ProgressModel::ALL`].
    pub fn index(self) -> usize {
        ProgressModel::ALL
            .iter()
            .position(|m| *m == self)
            .unwrap_or(0)
    }

    /// F before the next step (see [`ModelKind::fair_set`]; the strength does not change F).
    pub fn fair_set(self, stepped: UnitSet, live: UnitSet) -> UnitSet {
        self.kind.fair_set(stepped, live)
    }
}

impl fmt::Display for ProgressModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A model name that is none of the 11.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown progress model `{0}` (expected one of: unfair, hsa, obe, hsa_obe, lobe, fair, \
     optionally with `_strong` or `_weak`; `-` may replace `_`, `+` may join hsa+obe)"
)]
pub struct UnknownModel(pub String);

impl FromStr for ProgressModel {
    type Err = UnknownModel;

    /// Accepts the `expected.csv` column names (`hsa_obe`, `lobe_strong`), hyphenated spellings
    /// (`hsa-obe`, `lobe-strong`), `hsa+obe`, an explicit `_weak` suffix, any letter case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm: String = s
            .trim()
            .chars()
            .map(|c| {
                if c == '-' || c == '+' {
                    '_'
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect();
        let (stem, strength) = if let Some(stem) = norm.strip_suffix("_strong") {
            (stem, Strength::Strong)
        } else if let Some(stem) = norm.strip_suffix("_weak") {
            (stem, Strength::Weak)
        } else {
            (norm.as_str(), Strength::Weak)
        };
        let kind = match stem {
            "unfair" if strength == Strength::Weak => ModelKind::Unfair,
            "hsa" => ModelKind::Hsa,
            "obe" => ModelKind::Obe,
            "hsa_obe" => ModelKind::HsaObe,
            "lobe" => ModelKind::Lobe,
            "fair" => ModelKind::Fair,
            _ => return Err(UnknownModel(s.to_string())),
        };
        Ok(ProgressModel::new(kind, strength))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(units: &[usize]) -> UnitSet {
        units.iter().copied().collect()
    }

    #[test]
    fn names_round_trip_in_csv_order() {
        let names: Vec<&str> = ProgressModel::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(
            names,
            [
                "unfair",
                "hsa",
                "obe",
                "hsa_obe",
                "lobe",
                "fair",
                "hsa_strong",
                "obe_strong",
                "hsa_obe_strong",
                "lobe_strong",
                "fair_strong"
            ]
        );
        for (i, m) in ProgressModel::ALL.iter().enumerate() {
            assert_eq!(m.name().parse::<ProgressModel>(), Ok(*m));
            assert_eq!(m.name().replace('_', "-").parse::<ProgressModel>(), Ok(*m));
            assert_eq!(m.index(), i);
        }
        assert_eq!(
            "HSA+OBE".parse(),
            Ok(ProgressModel::new(ModelKind::HsaObe, Strength::Weak))
        );
        assert_eq!(
            "lobe_weak".parse(),
            Ok(ProgressModel::new(ModelKind::Lobe, Strength::Weak))
        );
        assert!("unfair_strong".parse::<ProgressModel>().is_err());
        assert!("obe3".parse::<ProgressModel>().is_err());
        assert_eq!(
            ProgressModel::new(ModelKind::Unfair, Strength::Strong),
            ProgressModel::UNFAIR
        );
    }

    /// Three units; unit 1 has stepped, unit 0 has terminated (after stepping), unit 2 has not
    /// started.
    #[test]
    fn fair_sets_in_a_mixed_situation() {
        let stepped = set(&[0, 1]);
        let live = set(&[1, 2]);
        let f = |k: ModelKind| k.fair_set(stepped, live);
        assert_eq!(f(ModelKind::Unfair), UnitSet::EMPTY);
        assert_eq!(f(ModelKind::Fair), set(&[1, 2]));
        assert_eq!(f(ModelKind::Obe), set(&[1]));
        assert_eq!(f(ModelKind::Hsa), set(&[1]));
        assert_eq!(f(ModelKind::HsaObe), set(&[1]));
        assert_eq!(f(ModelKind::Lobe), set(&[1]));
    }

    /// Unit 2 has stepped first: LOBE owes units 0 and 1 too (paper Table 1), OBE only unit 2,
    /// HSA only unit 0.
    #[test]
    fn lobe_covers_lower_ids_of_a_stepped_unit() {
        let stepped = set(&[2]);
        let live = set(&[0, 1, 2, 3]);
        assert_eq!(ModelKind::Lobe.fair_set(stepped, live), set(&[0, 1, 2]));
        assert_eq!(ModelKind::Obe.fair_set(stepped, live), set(&[2]));
        assert_eq!(ModelKind::Hsa.fair_set(stepped, live), set(&[0]));
        assert_eq!(ModelKind::HsaObe.fair_set(stepped, live), set(&[0, 2]));
        assert_eq!(ModelKind::Fair.fair_set(stepped, live), live);
    }

    /// Before any step OBE and LOBE owe nobody; HSA owes unit 0. With everybody terminated
    /// every F is empty.
    #[test]
    fn start_and_end() {
        let live = set(&[0, 1]);
        assert_eq!(
            ModelKind::Obe.fair_set(UnitSet::EMPTY, live),
            UnitSet::EMPTY
        );
        assert_eq!(
            ModelKind::Lobe.fair_set(UnitSet::EMPTY, live),
            UnitSet::EMPTY
        );
        assert_eq!(ModelKind::Hsa.fair_set(UnitSet::EMPTY, live), set(&[0]));
        assert_eq!(ModelKind::HsaObe.fair_set(UnitSet::EMPTY, live), set(&[0]));
        for k in ModelKind::FAIRISH {
            assert_eq!(
                k.fair_set(set(&[0, 1]), UnitSet::EMPTY),
                UnitSet::EMPTY,
                "{k:?}"
            );
        }
    }

    /// LOBE's "lower than a stepped unit" counts units that have stepped and since terminated
    /// (LNT: terminating removes only the terminating unit from F).
    #[test]
    fn lobe_remembers_terminated_steppers() {
        let stepped = set(&[1]);
        let live = set(&[0, 2]);
        assert_eq!(ModelKind::Lobe.fair_set(stepped, live), set(&[0]));
        assert_eq!(ModelKind::Obe.fair_set(stepped, live), UnitSet::EMPTY);
    }
}
