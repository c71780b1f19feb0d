//! What one stored state costs (issue 14, Build 3): states per second and bytes per state of
//! the stateful search on the grid barrier (`tests/kernels/grid_barrier`, 2 and 3 blocks of 32
//! threads, what `explore --progress fair --level blocks` runs: the fold and the persistent
//! sets) and of the litmus search on two members of the litmus families
//! (`tests/litmus/families/MP-4` and `SB-4`, flat memory, [`litmus::check`]), alone and with
//! `--progress fair` (then the stateful search runs on the litmus machine too).
//!
//! Items are the states each search reports (the explorer's nodes, machine state × units that
//! have stepped; the litmus search's distinct machine states), so divan's items/s is the state
//! rate. Divan's [`AllocProfiler`] is the global allocator: its `max alloc` row is the peak of
//! live heap bytes during one iteration. Each bench also prints, once, that peak divided by the
//! states (bytes per state, everything the search holds at its peak: state maps, graph, edge
//! records, the frontier's machines) and what the result keeps after the search.
//!
//!   cargo bench -p litmus --bench state_cost

use corpus::bench_support::{CountingAlloc, live_bytes, peak_bytes, restart_peak};
use divan::AllocProfiler;
use explore::progress::{ModelKind, ProgressModel, Strength};
use explore::{Level, Limits, Por, explore_with};
use litmus::{self, Options};
use scheduler::Stop;
use scheduler::outcome::Observe;

mod common;
use common::{grid_barrier, read};

/// Divan's profiler, counted process-wide (bytes per state: a search's workers allocate on
/// several threads, and divan's counts are per thread).
#[global_allocator]
static ALLOC: CountingAlloc<AllocProfiler> = CountingAlloc::new(AllocProfiler::system());

fn main() {
    divan::main();
}

/// Runs `search` once outside divan's timing and prints its states, its peak of live heap
/// bytes above what was live before it, and the bytes its result keeps, per state.
fn measure<R>(name: &str, search: impl FnOnce() -> R, states: impl Fn(&R) -> usize) -> usize {
    let before = restart_peak();
    let start = std::time::Instant::now();
    let r = search();
    let secs = start.elapsed().as_secs_f64();
    let peak = peak_bytes() - before;
    let kept = live_bytes().saturating_sub(before);
    let n = states(&r);
    drop(r);
    let per = |b: usize| b as f64 / n.max(1) as f64;
    eprintln!(
        "{name}: {n} states, {:.0} states/s, peak {:.1} MB = {:.0} B/state, result keeps {:.0} B/state",
        n as f64 / secs,
        peak as f64 / 1e6,
        per(peak),
        per(kept),
    );
    n
}

/// `explore --progress fair --level blocks` on the grid barrier: the fold and persistent sets.
#[divan::bench(args = [2, 3], sample_count = 3, sample_size = 1)]
fn grid_barrier_fair(bencher: divan::Bencher, blocks: u32) {
    let m = grid_barrier(blocks);
    let observe = Observe {
        buffers: vec![3],
        variables: Vec::new(),
        registers: Vec::new(),
    };
    let por = Por::for_model(ProgressModel::new(ModelKind::Fair, Strength::Weak));
    let run = || {
        explore_with(
            &m,
            Level::Blocks,
            &observe,
            Limits::default(),
            por,
            &Stop::never(),
        )
        .expect("explores")
    };
    let states = measure(&format!("grid_barrier {blocks} blocks"), run, |x| {
        assert!(x.bound_hit.is_none(), "complete");
        x.states()
    });
    bencher
        .counter(divan::counter::ItemsCount::new(states))
        .bench_local(run);
}

/// A litmus family member under flat memory, as `cudasem litmus` checks it.
#[divan::bench(args = ["MP-4", "SB-4"], sample_count = 3, sample_size = 1)]
fn litmus_family(bencher: divan::Bencher, name: &str) {
    let test = litmus::parse::parse(&read(&format!("tests/litmus/families/{name}.litmus")))
        .expect("parses");
    let options = Options::default();
    let run = || litmus::check(&test, &options);
    let states = measure(&format!("litmus {name}"), run, |r| {
        assert_eq!(r.status, litmus::Status::Ok);
        r.states
    });
    bencher
        .counter(divan::counter::ItemsCount::new(states))
        .bench_local(run);
}

/// A litmus family member with `litmus --progress fair`: the outcomes search, then the
/// stateful search of [`explore`] on the same machine for the termination verdict; items are
/// that search's nodes, and the bytes per state are the whole check's peak over them.
#[divan::bench(args = ["MP-4", "SB-4"], sample_count = 3, sample_size = 1)]
fn litmus_family_progress_fair(bencher: divan::Bencher, name: &str) {
    let test = litmus::parse::parse(&read(&format!("tests/litmus/families/{name}.litmus")))
        .expect("parses");
    let options = Options {
        progress: Some(ProgressModel::new(ModelKind::Fair, Strength::Weak)),
        ..Options::default()
    };
    let run = || litmus::check(&test, &options);
    let states = measure(&format!("litmus --progress fair {name}"), run, |r| {
        let liveness = r
            .liveness
            .as_ref()
            .expect("a termination verdict was asked for");
        assert!(liveness.verdict.is_some(), "decided");
        liveness.states
    });
    bencher
        .counter(divan::counter::ItemsCount::new(states))
        .bench_local(run);
}
