//! Campaigns larger than one machine (issue 14, Build 5; `docs/sharding.md`): a fuzz campaign
//! or an outcomes search is cut into `N` shards, shard `I` of them ([`Shard`], written `I/N`,
//! `0 <= I < N`, as Slurm's `SLURM_ARRAY_TASK_ID` and Kubernetes' `JOB_COMPLETION_INDEX`
//! count) runs anywhere and writes a report (serde: JSON in the CLI), and merging the `N`
//! reports gives exactly the report one unsharded run gives. The split is a function of the
//! inputs only (run indices for fuzzing, subtrees of the schedule tree for the outcomes
//! search), never of timing or of the number of shards a report came from.
//!
//! * fuzzing: shard `I` makes the runs `i` with `i mod N = I` ([`crate::fuzz::campaign_shard`],
//!   [`crate::fuzz::merge`]);
//! * the outcomes search: the schedule tree is cut at a prefix depth into subtrees in
//!   depth-first order, shard `I` explores those with index `k mod N = I`
//!   (the `explore` crate's `split` module).
//!
//! A report names its campaign by an opaque `campaign` text the caller chooses (the CLI: the
//! program's hash and the options that change results); merging reports of different
//! campaigns, a shard twice or a missing shard is refused ([`MergeError`]).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count` (`0 <= index < count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// The whole campaign: shard 0 of 1.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Whether item `k` (a run index, a subtree index) belongs to this shard.
    pub fn owns(self, k: u64) -> bool {
        k % u64::from(self.count.max(1)) == u64::from(self.index)
    }

    /// How many of the items `0..n` belong to this shard.
    pub fn len_of(self, n: u64) -> u64 {
        let count = u64::from(self.count.max(1));
        let index = u64::from(self.index);
        if n > index {
            (n - index).div_ceil(count)
        } else {
            0
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A shard that is not `I/N` with `0 <= I < N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bad shard `{0}`: expected I/N with 0 <= I < N, e.g. 0/4 for the first of four shards (Slurm: $SLURM_ARRAY_TASK_ID/N, Kubernetes: $JOB_COMPLETION_INDEX/N)"
)]
pub struct BadShard(pub String);

impl FromStr for Shard {
    type Err = BadShard;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadShard(s.to_string());
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// Why reports do not merge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("no report to merge")]
    Empty,
    #[error(
        "the reports come from different campaigns (`{first}` and `{other}`): merge only the shards of one run, made with the same file and options"
    )]
    Mixed { first: String, other: String },
    #[error(
        "the reports disagree on {what}: they are not shards of one run (same file, options and shard count)"
    )]
    Disagree { what: &'static str },
    #[error("a report names shard {shard}: not I/N with 0 <= I < N (a damaged report?)")]
    BadShard { shard: Shard },
    #[error("shard {shard} is given twice")]
    Duplicate { shard: Shard },
    #[error("shard {shard} is missing: run it (`--shard {shard}`) and pass its report too")]
    Missing { shard: Shard },
}

/// Checks that `shards` are each shard of one campaign exactly once: same campaign text and
/// shard count, every index present once.
pub fn check_complete<'a>(
    shards: impl IntoIterator<Item = (&'a str, Shard)>,
) -> Result<(), MergeError> {
    let mut first: Option<(&str, Shard)> = None;
    let mut seen: Vec<bool> = Vec::new();
    for (campaign, shard) in shards {
        // A report read from a file may hold any numbers.
        if shard.count == 0 || shard.index >= shard.count {
            return Err(MergeError::BadShard { shard });
        }
        let (c0, s0) = *first.get_or_insert((campaign, shard));
        if campaign != c0 {
            return Err(MergeError::Mixed {
                first: c0.to_string(),
                other: campaign.to_string(),
            });
        }
        if shard.count != s0.count {
            return Err(MergeError::Disagree {
                what: "the number of shards",
            });
        }
        seen.resize(shard.count as usize, false);
        let n = seen.len().max(1);
        let slot = &mut seen[shard.index as usize % n];
        if *slot {
            return Err(MergeError::Duplicate { shard });
        }
        *slot = true;
    }
    let Some((_, s0)) = first else {
        return Err(MergeError::Empty);
    };
    match seen.iter().position(|s| !s) {
        Some(i) => Err(MergeError::Missing {
            shard: Shard {
                index: i as u32,
                count: s0.count,
            },
        }),
        None => Ok(()),
    }
}

/// Serde for maps whose keys are not strings (outcomes): a list of `[key, value]` pairs, in
/// the map's order.
pub mod pairs {
    use serde::de::Deserializer;
    use serde::ser::Serializer;
    use serde::{Deserialize, Serialize};
    use std::collections::BTreeMap;

    pub fn serialize<K: Serialize, V: Serialize, S: Serializer>(
        map: &BTreeMap<K, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(map.iter())
    }

    pub fn deserialize<'de, K, V, D>(d: D) -> Result<BTreeMap<K, V>, D::Error>
    where
        K: Deserialize<'de> + Ord,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(Vec::<(K, V)>::deserialize(d)?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_partition() {
        let s: Shard = "2/4".parse().unwrap();
        assert_eq!(s, Shard { index: 2, count: 4 });
        assert_eq!(s.to_string(), "2/4");
        for bad in ["4/4", "1/0", "x/2", "3", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        // Every item in exactly one shard; len_of counts them.
        for n in 0..20u64 {
            let mut total = 0;
            for index in 0..4 {
                let sh = Shard { index, count: 4 };
                let owned = (0..n).filter(|&k| sh.owns(k)).count() as u64;
                assert_eq!(owned, sh.len_of(n));
                total += owned;
            }
            assert_eq!(total, n);
        }
    }

    #[test]
    fn incomplete_mixed_or_repeated_shards_do_not_merge() {
        let s = |index| Shard { index, count: 3 };
        assert_eq!(
            check_complete([("a", s(0)), ("a", s(2)), ("a", s(1))]),
            Ok(())
        );
        assert_eq!(
            check_complete([("a", s(0)), ("a", s(2))]),
            Err(MergeError::Missing { shard: s(1) })
        );
        assert_eq!(
            check_complete([("a", s(0)), ("a", s(0))]),
            Err(MergeError::Duplicate { shard: s(0) })
        );
        assert!(matches!(
            check_complete([("a", s(0)), ("b", s(1))]),
            Err(MergeError::Mixed { .. })
        ));
        assert_eq!(check_complete([]), Err(MergeError::Empty));
        for shard in [Shard { index: 0, count: 0 }, Shard { index: 3, count: 3 }] {
            assert_eq!(
                check_complete([("a", shard)]),
                Err(MergeError::BadShard { shard })
            );
        }
    }
}
