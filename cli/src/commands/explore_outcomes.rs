//! `cudasem explore --search outcomes`: the set of final outcomes only, by depth-first search
//! (`explore::dfs::outcomes`; ARCHITECTURE.md section 5).
//!
//! With the fold (the default) the search is source-set DPOR (Abdulla et al., "Source Sets: A
//! Foundation for Optimal Dynamic Partial Order Reduction", JACM 2017): one execution per
//! class of executions that order the dependent steps alike, and every final outcome. A
//! program whose schedules do not end within DPOR's depth bound (spin loops) or whose search
//! outgrows its budget is searched instead with sleep sets and a state cache, which makes spin
//! loops end. `--reduction none` explores every interleaving with the state cache. Nothing is
//! said about termination (JSON `terminates` and `lasso` are `null`): that needs the full state
//! graph (`--search full`).
//!
//! Exit codes: 0 the search is complete and no outcome is a failure, 1 a failing outcome
//! (deadlock, fault) or the bound was hit, 2 bad input.

use super::explore::ExploreArgs;
use crate::Exit;
use crate::commands::replay::{reproduce, save_trace, trace_of};
use crate::failure::Failure;
use crate::flags::OutputFormat;
use crate::options::Setup;
use explore::Folding;
use explore::dfs::{DfsBound, DfsConfig, DfsReport, Memo, Reduction};
use explore::split::{self, Split};
use scheduler::shard::Shard;
use serde_json::json;
use std::time::Instant;

/// Runs the search and renders its report.
pub fn run(args: &ExploreArgs, setup: &Setup) -> Result<(String, Exit), Failure> {
    if args.dot {
        return Err(Failure::BadInput(crate::error::Error::Refused(
            "error: --dot draws a lasso, and --search outcomes decides no termination (use --search full)\n"
                .to_string(),
        )));
    }
    let config = DfsConfig {
        reduction: match args.reduction {
            Folding::None => Reduction::None,
            Folding::Invisible => Reduction::SourceDpor,
        },
        memo: Memo::States,
        max_transitions: args.max_transitions,
        folding: args.reduction,
    };
    let start = Instant::now();
    let stop = args.timeout.start();
    let split = Split {
        depth: args.split_depth,
        jobs: args.jobs,
    };
    if let (Some(shard), Some(path)) = (args.shard, &args.report) {
        let argv = super::merge::recorded_argv();
        let campaign = super::merge::campaign(&argv, setup);
        let part = split::shard(
            &setup.machine,
            &setup.observe(),
            config,
            split,
            shard,
            &campaign,
            &stop,
        );
        crate::timeout::reporting();
        let seconds = start.elapsed().as_secs_f64();
        let failing = part.parts.iter().any(|(_, r)| {
            r.bound_hit.is_some()
                || r.refused.is_some()
                || r.outcomes.keys().any(|o| o.status.is_failure())
        }) || part.prefix.refused.is_some();
        // A bound that cut a subtree of this shard, named as every command names it.
        let cut = part
            .parts
            .iter()
            .find_map(|(_, r)| r.bound_hit)
            .and_then(|b| b.hit(args.timeout.millis()).map(crate::bounds::named));
        let note = match cut {
            Some(hit) => format!(" (cut by {hit}: see the merged report)"),
            None if failing => {
                " (a failing outcome or a refusal: see the merged report)".to_string()
            }
            None => String::new(),
        };
        let text = format!(
            "explore shard {shard}: {} of {} subtrees (split depth {}), {} outcomes{note} in {seconds:.3} s; report written to {}: combine the reports of all {} shards with `cudasem merge`\n",
            part.parts.len(),
            part.prefix.subtrees,
            args.split_depth,
            part.parts
                .iter()
                .flat_map(|(_, r)| r.outcomes.keys())
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            path.display(),
            shard.count
        );
        super::merge::write(
            path,
            argv,
            seconds,
            super::merge::ShardReport::Outcomes(part),
        )?;
        return Ok((
            text,
            if failing {
                Exit::Misbehaved
            } else {
                Exit::Clean
            },
        ));
    }
    let whole = split::shard(
        &setup.machine,
        &setup.observe(),
        config,
        split,
        Shard::WHOLE,
        "",
        &stop,
    );
    crate::timeout::reporting();
    let seconds = start.elapsed().as_secs_f64();
    let subtrees = whole.prefix.subtrees;
    let report = split::merge(&[whole]).map_err(|e| Failure::Internal {
        what: format!("the outcomes search's own report does not merge: {e}"),
        replay: None,
    })?;
    render(args, setup, &report, subtrees, seconds)
}

/// The report of a whole search (one run's, or merged from shards by `cudasem merge`).
/// `seconds` is the time spent searching (summed over shards).
pub fn render(
    args: &ExploreArgs,
    setup: &Setup,
    report: &DfsReport,
    subtrees: u64,
    seconds: f64,
) -> Result<(String, Exit), Failure> {
    if let Some(r) = &report.refused {
        return Err(Failure::refused(setup, &args.options, r));
    }
    let policy = "explore outcomes".to_string();

    // Every outcome's witness replay; failing outcomes (deadlocks, faults) with theirs.
    let mut witnesses = Vec::new();
    let mut failing = Vec::new();
    for (o, witness) in &report.outcomes {
        let cmd = reproduce(setup, &args.options, witness, None, policy.clone(), None)?;
        if o.status.is_failure() {
            failing.push((o, cmd.clone()));
        }
        witnesses.push(cmd);
    }
    let violations: Vec<Vec<String>> = report
        .outcomes
        .keys()
        .map(|o| setup.outcome_violations(o))
        .collect();
    let violated = violations.iter().any(|v| !v.is_empty());
    if let Some(path) = &args.save
        && let Some((_, witness)) = report.outcomes.iter().find(|(o, _)| o.status.is_failure())
    {
        let mut t = trace_of(setup, witness.clone(), policy.clone(), None);
        let mut m = setup.machine.clone();
        t.events = scheduler::replay::replay(&mut m, &t.choices, None, None, true).events;
        save_trace(path, &t)?;
    }
    let rate = crate::output::per_second(report.states as f64, seconds);
    let text = match args.format {
        OutputFormat::Text => text(
            args,
            setup,
            report,
            subtrees,
            &failing,
            &witnesses,
            &violations,
            seconds,
            rate,
        ),
        OutputFormat::Json => {
            let outcomes: Vec<_> = report
                .outcomes
                .keys()
                .zip(&witnesses)
                .zip(&violations)
                .map(|((o, witness), violated)| setup.outcome_json(o, violated, witness))
                .collect();
            let bound_hit = report
                .bound_hit
                .and_then(|b| b.hit(args.timeout.millis()).map(crate::bounds::named));
            let j = json!({
                "kernel": setup.kernel_title(),
                "setup": setup.setup_text(),
                "search": "outcomes",
                "terminates": null,
                "lasso": null,
                "states": report.states,
                "transitions": report.transitions,
                "executions": report.executions,
                "slept": report.slept,
                "split_depth": args.split_depth,
                "subtrees": subtrees,
                "bound": {
                    "max_transitions": args.max_transitions,
                    "hit": report.bound_hit.is_some(),
                    "time_limit_hit": crate::bounds::is_time(bound_hit),
                },
                "bound_hit": crate::bounds::json(bound_hit),
                "outcomes": outcomes,
                "seconds": seconds,
                "states_per_second": rate,
            });
            j.to_string() + "\n"
        }
    };
    let clean = report.bound_hit.is_none() && failing.is_empty() && !violated;
    Ok((text, if clean { Exit::Clean } else { Exit::Misbehaved }))
}

/// Under an outcome's line: the expectations it violates, then its witness replay.
pub(crate) fn outcome_details(s: &mut String, violations: &[String], witness: &str) {
    for v in violations {
        s.push_str(&format!("    EXPECTATION VIOLATED: {v}\n"));
    }
    s.push_str(&format!("    witness: {witness}\n"));
}

#[allow(clippy::too_many_arguments)]
fn text(
    args: &ExploreArgs,
    setup: &Setup,
    report: &DfsReport,
    subtrees: u64,
    failing: &[(&scheduler::outcome::Outcome, String)],
    witnesses: &[String],
    violations: &[Vec<String>],
    seconds: f64,
    rate: f64,
) -> String {
    let mut s = format!(
        "explored `{}` ({}, outcomes only: depth-first with sleep sets and state caching{}): {} states, {} transitions, {} executions ({} steps asleep) in {:.3} s ({:.0} states/s)\n",
        cuda_front::demangle(&setup.kernel_title()),
        setup.setup_text(),
        if args.split_depth > 0 {
            format!(
                ", split at depth {} into {subtrees} subtrees",
                args.split_depth
            )
        } else {
            String::new()
        },
        report.states,
        report.transitions,
        report.executions,
        report.slept,
        seconds,
        rate
    );
    match report.bound_hit {
        // Stateful search has no depth bound; kept for completeness of the match.
        Some(b @ (DfsBound::Transitions(_) | DfsBound::Depth(_))) => s.push_str(&format!(
            "bound: {} REACHED: the search is incomplete, outcomes may be missing\n",
            b.hit(None).map_or_else(String::new, |hit| hit.setting())
        )),
        Some(DfsBound::Time) => s.push_str(&format!(
            "bound: {}: the search is incomplete, outcomes may be missing\n",
            args.timeout.flag_text()
        )),
        // `outcomes_until` never halts on its own; kept for completeness of the match.
        Some(DfsBound::Halted) => {
            s.push_str("bound: the search was stopped: it is incomplete, outcomes may be missing\n")
        }
        None => s.push_str(&format!(
            "bound: --max-transitions {} not reached: every final outcome is listed\n",
            args.max_transitions
        )),
    }
    s.push_str(&format!("outcomes ({}):\n", report.outcomes.len()));
    for ((o, witness), violated) in report.outcomes.keys().zip(witnesses).zip(violations) {
        let data: Vec<String> = setup
            .data_text(&o.data)
            .into_iter()
            .map(|(n, v)| format!("{n}=[{}]", v.join(", ")))
            .collect();
        s.push_str(&format!("  {}  {}\n", o.status, data.join(" ")));
        outcome_details(&mut s, violated, witness);
    }
    for (o, cmd) in failing {
        s.push_str(&format!(
            "{} is reachable; to reproduce:\n  {cmd}\n",
            o.status
        ));
    }
    s.push_str("termination: not decided by this search (use --search full)\n");
    s
}
