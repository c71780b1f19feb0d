//! Every core and every machine (issue 14, Builds 4 and 5): the outcomes search split at a
//! prefix depth finds the outcome set of the unsplit search, gives the same report at jobs 1
//! and 2, and the reports of its shards, written as JSON and read back, merge into exactly the
//! unsharded report; a fuzz campaign's shards merge into exactly the unsharded campaign.
//! Incomplete or mixed sets of shards are refused.

use corpus::{corpus_machines, workspace_root};
use explore::Folding;
use explore::dfs::{self, DfsConfig, DfsReport, Memo, Reduction};
use explore::split::{self, OutcomesShard, Split};
use litmus::parse::parse;
use litmus::translate::translate;
use scheduler::Stop;
use scheduler::fuzz::{self, FuzzConfig, FuzzPolicy, FuzzShard};
use scheduler::outcome::{Observe, Outcome};
use scheduler::shard::{MergeError, Shard};
use semantics::machine::{Machine, MemoryKind};
use std::collections::BTreeSet;

fn config() -> DfsConfig {
    DfsConfig {
        reduction: Reduction::SleepSets,
        memo: Memo::States,
        max_transitions: 10_000,
        folding: Folding::Invisible,
    }
}

fn keys(r: &DfsReport) -> BTreeSet<Outcome> {
    r.outcomes.keys().cloned().collect()
}

fn cases() -> Vec<(String, Machine, Observe)> {
    let mut out = corpus_machines();
    let dir = workspace_root().join("tests/litmus/families");
    for name in ["MP-3", "SB-3", "LB-3", "IRIW-4"] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.litmus"))).unwrap();
        let t = translate(&parse(&text).unwrap(), MemoryKind::Flat).unwrap();
        let m = litmus::start(&t).unwrap();
        let observe = t.observe(m.program());
        out.push((name.to_string(), m, observe));
    }
    out
}

/// Each shard's report, through JSON and back.
fn shards(m: &Machine, observe: &Observe, depth: usize, count: u32) -> Vec<OutcomesShard> {
    (0..count)
        .map(|index| {
            let s = split::shard(
                m,
                observe,
                config(),
                Split { depth, jobs: 1 },
                Shard { index, count },
                "test",
                &Stop::never(),
            );
            let json = serde_json::to_string(&s).unwrap();
            serde_json::from_str(&json).unwrap()
        })
        .collect()
}

#[test]
fn split_and_sharded_outcome_searches_answer_as_one() {
    let mut compared = 0;
    for (name, m, observe) in cases() {
        let whole = dfs::outcomes(&m, &observe, config());
        if whole.bound_hit.is_some() || whole.refused.is_some() {
            continue;
        }
        // Depth 0 is the unsplit search itself.
        let d0 = split::outcomes(
            &m,
            &observe,
            config(),
            Split { depth: 0, jobs: 1 },
            &Stop::never(),
        );
        assert_eq!(d0, whole, "{name}: depth 0");
        for depth in [1, 2] {
            let one = split::outcomes(
                &m,
                &observe,
                config(),
                Split { depth, jobs: 1 },
                &Stop::never(),
            );
            let two = split::outcomes(
                &m,
                &observe,
                config(),
                Split { depth, jobs: 2 },
                &Stop::never(),
            );
            assert_eq!(one, two, "{name}: depth {depth}, jobs 1 and 2 differ");
            if one.bound_hit.is_some() {
                continue;
            }
            assert_eq!(
                keys(&one),
                keys(&whole),
                "{name}: depth {depth}, outcome sets differ"
            );
            // Witnesses replay to their outcomes.
            for (o, w) in &one.outcomes {
                let mut fresh = m.clone();
                let r = scheduler::replay::replay(&mut fresh, w, None, None, false);
                assert!(r.divergence.is_none(), "{name}: witness diverges");
                let t = fresh.termination().expect("a witness ends");
                assert_eq!(&Outcome::of(&fresh, t, &observe), o, "{name}: witness");
            }
            for count in [2, 3] {
                let merged = split::merge(&shards(&m, &observe, depth, count)).unwrap();
                assert_eq!(merged, one, "{name}: depth {depth}, {count} shards merged");
            }
        }
        compared += 1;
    }
    assert!(compared >= 15, "only {compared} compared");
}

#[test]
fn incomplete_or_mixed_outcome_shards_are_refused() {
    let (_, m, observe) = cases().into_iter().find(|(n, ..)| n == "SB-3").unwrap();
    let mut s = shards(&m, &observe, 2, 3);
    let missing = split::merge(&s[..2]).unwrap_err();
    assert_eq!(
        missing,
        MergeError::Missing {
            shard: Shard { index: 2, count: 3 }
        }
    );
    assert!(missing.to_string().contains("--shard 2/3"));
    s[1].campaign = "another".into();
    assert!(matches!(split::merge(&s), Err(MergeError::Mixed { .. })));
    let mut d = shards(&m, &observe, 2, 2);
    d[1].depth = 1;
    assert!(matches!(split::merge(&d), Err(MergeError::Disagree { .. })));
}

#[test]
fn fuzz_shards_merge_into_the_unsharded_campaign() {
    let mut compared = 0;
    for (name, m, observe) in cases().into_iter().step_by(3) {
        for policy in [FuzzPolicy::Random, FuzzPolicy::Pct { depth: 2 }] {
            let config = FuzzConfig {
                runs: 23,
                seed: 7,
                policy,
                max_steps: 20_000,
                jobs: 2,
                observe: observe.clone(),
                stop: Stop::never(),
            };
            let Ok(whole) = fuzz::campaign(&m, &config, &|_| {}) else {
                continue;
            };
            let parts: Vec<FuzzShard> = (0..4)
                .map(|index| {
                    let s = fuzz::campaign_shard(
                        &m,
                        &config,
                        Shard { index, count: 4 },
                        name.as_str(),
                        &|_| {},
                    )
                    .unwrap();
                    serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap()
                })
                .collect();
            assert_eq!(parts.iter().map(|p| p.report.runs).sum::<u64>(), 23);
            assert_eq!(fuzz::merge(&parts).unwrap(), whole, "{name}: merged shards");
            assert!(matches!(
                fuzz::merge(&parts[1..]),
                Err(MergeError::Missing { .. })
            ));
            compared += 1;
        }
    }
    assert!(compared >= 6, "only {compared} compared");
}
