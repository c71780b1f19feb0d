//! Every core (issue 14, Build 4): the stateful search (`explore`, `--progress fair --level
//! blocks`) on the grid barrier (`tests/kernels/grid_barrier`, 32-thread blocks) and the
//! outcomes search split at depth 2 on IRIW-5, at 1, 2, 4, 8 and 16 worker threads. Items are
//! the states each search builds, so items/s is the state rate; the answer is the same at
//! every `jobs` (tests/explore_jobs.rs), only the time changes.
//!
//! `CUDASEM_BENCH_BLOCKS` (default 3) sets the grid barrier's blocks; `CUDASEM_ROOT` the
//! workspace (default: this crate's parent), to run the built bench elsewhere.

use explore::dfs::{DfsConfig, Memo, Reduction};
use explore::split::{self, Split};
use explore::{Folding, Level, Limits, explore};
use scheduler::outcome::Observe;
use semantics::machine::{Machine, MemoryKind};

mod common;
use common::{grid_barrier, read};

fn main() {
    divan::main();
}

/// A litmus family's machine and what its outcomes observe (the condition's registers and
/// locations).
fn litmus(name: &str) -> (Machine, Observe) {
    use litmus::{parse::parse, translate::translate};
    let text = read(&format!("tests/litmus/families/{name}.litmus"));
    let t = translate(&parse(&text).expect("parses"), MemoryKind::Flat).expect("translates");
    let m = litmus::start(&t).expect("launches");
    let observe = t.observe(m.program());
    (m, observe)
}

const JOBS: [usize; 5] = [1, 2, 4, 8, 16];

#[divan::bench(args = JOBS, sample_count = 1, sample_size = 1)]
fn grid_barrier_full(bencher: divan::Bencher, jobs: usize) {
    let blocks = std::env::var("CUDASEM_BENCH_BLOCKS")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(3);
    let m = grid_barrier(blocks);
    let observe = Observe {
        buffers: vec![3],
        variables: Vec::new(),
        registers: Vec::new(),
    };
    let limits = Limits {
        max_states: 50_000_000,
        folding: Folding::Invisible,
        jobs,
    };
    let mut states = 0;
    bencher
        .counter(divan::counter::ItemsCount::new(1usize))
        .bench_local(|| {
            let x = explore(&m, Level::Blocks, &observe, limits).expect("explores");
            states = x.states();
        });
    eprintln!("grid_barrier {blocks} blocks, jobs {jobs}: {states} states");
}

#[divan::bench(args = JOBS, sample_count = 1, sample_size = 1)]
fn iriw_5_outcomes_split(bencher: divan::Bencher, jobs: usize) {
    let (m, observe) = litmus("IRIW-5");
    let config = DfsConfig {
        reduction: Reduction::SleepSets,
        memo: Memo::States,
        max_transitions: u64::MAX,
        folding: Folding::Invisible,
    };
    let mut states = 0;
    bencher.bench_local(|| {
        let r = split::outcomes(
            &m,
            &observe,
            config,
            Split { depth: 2, jobs },
            &scheduler::Stop::never(),
        );
        states = r.states;
    });
    eprintln!("IRIW-5 outcomes split at depth 2, jobs {jobs}: {states} states");
}

/// The outcomes search at split depths 0 (unsplit), 1, 2 and 3 on one thread: what the split
/// costs in states (printed) and time.
#[divan::bench(args = [0, 1, 2, 3], sample_count = 1, sample_size = 1)]
fn iriw_5_outcomes_depth(bencher: divan::Bencher, depth: usize) {
    let (m, observe) = litmus("IRIW-5");
    let config = DfsConfig {
        reduction: Reduction::SleepSets,
        memo: Memo::States,
        max_transitions: u64::MAX,
        folding: Folding::Invisible,
    };
    let mut counts = (0, 0, 0);
    bencher.bench_local(|| {
        let r = split::outcomes(
            &m,
            &observe,
            config,
            Split { depth, jobs: 1 },
            &scheduler::Stop::never(),
        );
        counts = (r.states, r.transitions, r.outcomes.len());
    });
    eprintln!(
        "IRIW-5 outcomes split at depth {depth}: {} states, {} transitions, {} outcomes",
        counts.0, counts.1, counts.2
    );
}

/// The outcomes search (sleep sets, state cache, unsplit) on the SB-n and IRIW-n families:
/// executions explored against distinct outcomes (printed), the measure a partial-order
/// reduction improves.
#[divan::bench(args = ["SB-2", "SB-3", "SB-4", "SB-5", "IRIW-4", "IRIW-5", "IRIW-6"], sample_count = 1, sample_size = 1)]
fn families_executions(bencher: divan::Bencher, name: &str) {
    let (m, observe) = litmus(name);
    let config = DfsConfig {
        reduction: Reduction::SleepSets,
        memo: Memo::States,
        max_transitions: 50_000_000,
        folding: Folding::Invisible,
    };
    let mut r = None;
    bencher.bench_local(|| {
        r = Some(explore::dfs::outcomes(&m, &observe, config));
    });
    if let Some(r) = r {
        eprintln!(
            "{name}: {} executions, {} distinct outcomes, {} states, {} transitions, bound {:?}",
            r.executions,
            r.outcomes.len(),
            r.states,
            r.transitions,
            r.bound_hit
        );
    }
}

/// Source-set DPOR (stateless, with the fold) on the litmus families up to 8 threads: the
/// executions it makes (printed) are one per Mazurkiewicz trace on SB-n, MP-n and LB-n
/// (2^n - 1), against the hundreds of thousands of states of the sleep-set search above.
#[divan::bench(args = ["SB-4", "SB-8", "MP-8", "LB-8", "IRIW-4", "IRIW-6", "IRIW-8"], sample_count = 3, sample_size = 1)]
fn families_dpor(bencher: divan::Bencher, name: &str) {
    let (m, observe) = litmus(name);
    let config = DfsConfig {
        reduction: Reduction::SourceDpor,
        memo: Memo::Stateless { max_depth: 10_000 },
        max_transitions: 50_000_000,
        folding: Folding::Invisible,
    };
    let mut r = None;
    bencher.bench_local(|| {
        r = Some(explore::dfs::outcomes(&m, &observe, config));
    });
    if let Some(r) = r {
        eprintln!(
            "{name} (DPOR): {} executions, {} distinct outcomes, {} states, {} transitions, bound {:?}",
            r.executions,
            r.outcomes.len(),
            r.states,
            r.transitions,
            r.bound_hit
        );
    }
}
