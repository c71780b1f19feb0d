//! The outcomes search ([`super::dfs`]) split at a prefix depth (issue 14, Builds 4 and 5): on
//! every core of one machine and across machines, with the same answer whatever ran it.
//!
//! The schedule tree is cut `depth` transactions below the initial state. The prefix (the
//! first `depth` levels) is walked depth-first with sleep sets, as the search itself walks it,
//! but without the state cache: each node at depth `depth`, and each final state above it, is
//! the root of one *subtree*, numbered in depth-first order, with the sleep set the walk gives
//! it. Each subtree is searched on its own (`dfs::search_from`: sleep sets and its own state
//! cache), so subtrees can run in any order, on any thread or machine. The answer is then
//! assembled in subtree order: an outcome's witness is the one of the first subtree that
//! reached it, counts are sums (the prefix's transitions and slept choices counted once),
//! the bound and a refusal are the first subtree's that has one. It is therefore a function of
//! the machine, the configuration and `depth` only: the same at any `jobs`
//! ([`Split::jobs`]), and the same merged from shards ([`merge`]) as from one run.
//!
//! Soundness: the prefix walk with sleep sets and a search of each subtree with its inherited
//! sleep set explore together what one sleep-set search without a state cache at the top
//! levels explores; the state cache inside a subtree keeps the rule of [`super::dfs`] (a state is
//! revisited with the choices asleep on both visits). Subtrees do not share their caches, so a
//! state reached in two subtrees is explored in both: `states` and `transitions` count the
//! work done, and grow with `depth`. `depth` 0 is the unsplit search. With
//! [`super::dfs::Reduction::SourceDpor`] each subtree is searched with DPOR
//! ([`super::dpor`]): the prefix explores every awake choice, so the races whose backtrack
//! points would lie in the prefix need none, and races inside a subtree are reversed there.
//!
//! Bounds: `max_transitions` bounds each subtree's search (so that a subtree's answer does not
//! depend on the others'); a stateless search's `max_depth` counts from the initial state.

use super::dfs::{DfsConfig, DfsReport, Memo, Sleeper, search_from, transition};
use super::{branches, settle};
use rayon::prelude::*;
use scheduler::outcome::Observe;
use scheduler::shard::{MergeError, Shard, check_complete};
use scheduler::{Refused, Stop};
use semantics::machine::Machine;
use serde::{Deserialize, Serialize};
use traces::Choice;

/// How the search is cut and run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// Transactions from the initial state to the subtrees' roots (0: one subtree, the whole
    /// search). Part of the answer: the counts depend on it.
    pub depth: usize,
    /// Worker threads (0: one per core). Not part of the answer.
    pub jobs: usize,
}

/// What the walk of the prefix cost, and a refusal in it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Prefix {
    pub transitions: u64,
    pub slept: u64,
    /// Subtrees the prefix has (every shard's walk finds them all).
    pub subtrees: u64,
    /// The machine refused an enabled choice in the prefix (a cudasem bug).
    pub refused: Option<Refused>,
}

/// One shard's report: its subtrees' answers, by subtree index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomesShard {
    /// The caller's name for the search (module header of [`scheduler::shard`]).
    pub campaign: String,
    pub shard: Shard,
    pub depth: usize,
    pub prefix: Prefix,
    /// `(subtree index, its answer)` in index order.
    pub parts: Vec<(u64, DfsReport)>,
}

/// The root of one subtree.
struct Root {
    machine: Machine,
    path: Vec<Choice>,
    sleep: Vec<Sleeper>,
}

/// The whole search split at `split.depth`, its subtrees run on `split.jobs` threads: the
/// answer [`merge`] gives from every shard.
pub fn outcomes(
    machine: &Machine,
    observe: &Observe,
    config: DfsConfig,
    split: Split,
    stop: &Stop,
) -> DfsReport {
    let whole = shard(machine, observe, config, split, Shard::WHOLE, "", stop);
    merge(&[whole]).unwrap_or_else(|_| DfsReport::empty())
}

/// Shard `shard` of the search split at `split.depth`: the subtrees it owns, searched on
/// `split.jobs` threads.
pub fn shard(
    machine: &Machine,
    observe: &Observe,
    config: DfsConfig,
    split: Split,
    shard: Shard,
    campaign: &str,
    stop: &Stop,
) -> OutcomesShard {
    let mut prefix = Prefix::default();
    let mut roots: Vec<(u64, Root)> = Vec::new();
    let mut root = machine.clone();
    let mut path = Vec::new();
    match settle(&mut root, &mut path) {
        Err(e) => prefix.refused = Some(Refused::new(&path, root.steps(), e)),
        Ok(()) => {
            let start = Root {
                machine: root,
                path,
                sleep: Vec::new(),
            };
            if let Err(r) = walk(start, split.depth, config, shard, &mut prefix, &mut roots) {
                prefix.refused = Some(r);
            }
        }
    }
    let search = |(k, r): (u64, Root)| {
        let mut config = config;
        if let Memo::Stateless { max_depth } = config.memo {
            config.memo = Memo::Stateless {
                max_depth: max_depth.saturating_sub(split.depth),
            };
        }
        let report = search_from(
            r.machine,
            r.path,
            r.sleep,
            observe,
            config,
            stop,
            &mut |_| true,
        );
        (k, report)
    };
    let parts: Vec<(u64, DfsReport)> = match super::worker_pool(split.jobs) {
        Some(pool) => pool.install(|| roots.into_par_iter().map(search).collect()),
        None => roots.into_iter().map(search).collect(),
    };
    OutcomesShard {
        campaign: campaign.to_string(),
        shard,
        depth: split.depth,
        prefix,
        parts,
    }
}

/// Walks the prefix depth-first below `node`, numbering the subtrees' roots and keeping those
/// `shard` owns (the others are dropped at once).
fn walk(
    node: Root,
    depth: usize,
    config: DfsConfig,
    shard: Shard,
    prefix: &mut Prefix,
    roots: &mut Vec<(u64, Root)>,
) -> Result<(), Refused> {
    if depth == 0 || node.machine.termination().is_some() {
        let k = prefix.subtrees;
        prefix.subtrees += 1;
        if shard.owns(k) {
            roots.push((k, node));
        }
        return Ok(());
    }
    let Root {
        machine,
        path,
        mut sleep,
    } = node;
    let enabled = branches(&machine);
    for c in enabled {
        if sleep.iter().any(|(s, _)| *s == c) {
            prefix.slept += 1;
            continue;
        }
        let mut child = machine.clone();
        let mut child_path = path.clone();
        prefix.transitions += 1;
        let child_sleep = transition(&mut child, c, &mut sleep, config, &mut child_path)?;
        let next = Root {
            machine: child,
            path: child_path,
            sleep: child_sleep,
        };
        walk(next, depth - 1, config, shard, prefix, roots)?;
    }
    Ok(())
}

/// The answer of the whole search from the reports of all its shards (module header): the
/// same as one unsharded run's ([`outcomes`]). Refused when the reports are not each shard of
/// one search exactly once.
pub fn merge(shards: &[OutcomesShard]) -> Result<DfsReport, MergeError> {
    check_complete(shards.iter().map(|s| (s.campaign.as_str(), s.shard)))?;
    let first = &shards[0];
    if shards
        .iter()
        .any(|s| s.depth != first.depth || s.prefix != first.prefix)
    {
        return Err(MergeError::Disagree {
            what: "the split of the schedule tree",
        });
    }
    let mut parts: Vec<&(u64, DfsReport)> = shards.iter().flat_map(|s| &s.parts).collect();
    parts.sort_by_key(|(k, _)| *k);
    let complete = first.prefix.refused.is_some()
        || parts.iter().enumerate().all(|(i, (k, _))| *k == i as u64)
            && parts.len() as u64 == first.prefix.subtrees;
    if !complete {
        return Err(MergeError::Disagree {
            what: "which subtrees each shard explored",
        });
    }
    let mut out = DfsReport::empty();
    out.transitions = first.prefix.transitions;
    out.slept = first.prefix.slept;
    out.refused = first.prefix.refused.clone();
    for (_, r) in parts {
        for (o, w) in &r.outcomes {
            out.outcomes.entry(o.clone()).or_insert_with(|| w.clone());
        }
        out.transitions += r.transitions;
        out.executions += r.executions;
        out.states += r.states;
        out.slept += r.slept;
        if out.bound_hit.is_none() {
            out.bound_hit = r.bound_hit;
        }
        if out.refused.is_none() {
            out.refused = r.refused.clone();
        }
    }
    Ok(out)
}
