//! The outcomes search on the litmus families (tests/litmus/families, flat memory) under each
//! reduction (issue 14, Build 2): executions, distinct outcomes, states, transitions and time,
//! n = 2..8 per family, a row stopped once a case passes the time bound. Prints a Markdown
//! table. An example, not a test: it measures.
//!
//!   cargo run --release -p litmus --example dpor_scale -- [SECONDS] [FAMILY...]
//!
//! Reductions: `sleep+states` (sleep sets with the state cache, the `--search outcomes`
//! search before DPOR), `sleep` (stateless sleep sets), `dpor` (stateless source-DPOR), all with
//! the fold of invisible steps.

mod common;
use common::read;
use explore::Folding;
use explore::dfs::{DfsConfig, Memo, Reduction, outcomes_each};
use litmus::translate::Translation;
use scheduler::Stop;
use scheduler::outcome::Observe;
use semantics::machine::{Machine, MemoryKind};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn litmus(name: &str) -> Option<(Machine, Translation)> {
    use litmus::{parse::parse, translate::translate};
    let root = std::env::var_os("CUDASEM_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    let rel = format!("tests/litmus/families/{name}.litmus");
    if !root.join(&rel).exists() {
        return None;
    }
    let text = read(&rel);
    let t = translate(&parse(&text).ok()?, MemoryKind::Flat).ok()?;
    let m = litmus::start(&t).ok()?;
    Some((m, t))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seconds: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(30);
    let families: Vec<String> = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        ["MP", "SB", "LB", "IRIW"].map(String::from).to_vec()
    };
    // The litmus outcome is the condition's registers (kept as the threads' final registers)
    // and locations: each execution is replayed to read them.
    let observe = Observe::default();
    let reductions = [
        ("sleep+states", Reduction::SleepSets, Memo::States),
        (
            "sleep",
            Reduction::SleepSets,
            Memo::Stateless { max_depth: 10_000 },
        ),
        (
            "dpor",
            Reduction::SourceDpor,
            Memo::Stateless { max_depth: 10_000 },
        ),
    ];
    println!("| test | reduction | executions | distinct outcomes | states | transitions | s |");
    println!("|---|---|---|---|---|---|---|");
    for family in &families {
        for (label, reduction, memo) in reductions {
            for n in 2..=8 {
                let name = format!("{family}-{n}");
                let Some((m, t)) = litmus(&name) else {
                    continue;
                };
                let config = DfsConfig {
                    reduction,
                    memo,
                    max_transitions: u64::MAX,
                    folding: Folding::Invisible,
                };
                let stop = Arc::new(Stop::new());
                let timer = {
                    let stop = stop.clone();
                    std::thread::spawn(move || {
                        let start = Instant::now();
                        while start.elapsed() < Duration::from_secs(seconds) {
                            if stop.requested() {
                                return;
                            }
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        stop.request();
                    })
                };
                let start = Instant::now();
                let mut distinct = BTreeSet::new();
                let r = outcomes_each(&m, &observe, config, &stop, &mut |choices| {
                    let mut end = m.clone();
                    for c in choices {
                        if end.step(c).is_err() {
                            break;
                        }
                    }
                    distinct.insert(litmus::search::observe(&end, &t));
                    true
                });
                let secs = start.elapsed().as_secs_f64();
                stop.request();
                let _ = timer.join();
                let cut = r
                    .bound_hit
                    .map_or(String::new(), |b| format!(" (cut: {b:?})"));
                println!(
                    "| {name} | {label} | {} | {} | {} | {} | {secs:.2}{cut} |",
                    r.executions,
                    distinct.len(),
                    r.states,
                    r.transitions,
                );
                if r.bound_hit.is_some() {
                    break;
                }
            }
        }
    }
}
