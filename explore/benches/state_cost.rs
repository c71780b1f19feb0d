//! What a state of the stateful search costs (issue 14, Build 3 and 4): states per second and
//! the peak of live heap bytes per state on the grid barrier (`tests/kernels/grid_barrier`,
//! 32-thread blocks, `--progress fair --level blocks`) and on the corpus spin lock, at
//! `jobs` 1 and 2. Items are the nodes each search builds, so items/s is the state rate; the
//! peak bytes per state (every live allocation of the process, the search's records and the
//! machines it keeps) are printed once per case, on stderr.
//!
//! * `grid_barrier_unreduced`: 8 blocks, no reduction (`--reduction none`), cut at 100,000
//!   states;
//! * `grid_barrier_default`: 8 blocks with the default reductions (the fold, persistent
//!   sets, symmetry over blocks): the whole search, 6,596 states;
//! * `spinlock_default`: the spin lock at 6 blocks, default reductions.
//!
//! `CUDASEM_ROOT` names the workspace (default: this crate's parent), to run the built bench
//! elsewhere.

use corpus::bench_support::{CountingAlloc, grid_barrier, peak_bytes, restart_peak, spinlock};
use divan::AllocProfiler;
use explore::progress::{ModelKind, ProgressModel, Strength};
use explore::{Folding, Level, Limits, Por, Symmetry, explore_symmetric};
use scheduler::Stop;
use scheduler::outcome::Observe;
use semantics::machine::Machine;

/// Divan's profiler, counted process-wide (bytes per state: a search's workers allocate on
/// several threads, and divan's counts are per thread).
#[global_allocator]
static ALLOC: CountingAlloc<AllocProfiler> = CountingAlloc::new(AllocProfiler::system());

fn main() {
    divan::main();
}

const FAIR: ProgressModel = ProgressModel::new(ModelKind::Fair, Strength::Weak);

/// The search `explore --progress fair --level blocks` runs: with the default reductions
/// (`reduced`) or none, on `jobs` threads, cut at `max_states`.
fn bench_search(
    bencher: divan::Bencher,
    name: &str,
    m: &Machine,
    reduced: bool,
    max_states: usize,
    jobs: usize,
) {
    let limits = Limits {
        max_states,
        folding: if reduced {
            Folding::Invisible
        } else {
            Folding::None
        },
        jobs,
    };
    let (por, symmetry) = if reduced {
        (Por::for_model(FAIR), Symmetry::Blocks.for_model(FAIR))
    } else {
        (Por::None, Symmetry::None)
    };
    let run = || {
        explore_symmetric(
            m,
            Level::Blocks,
            &Observe::default(),
            limits,
            por,
            symmetry,
            &Stop::never(),
        )
        .expect("explores")
    };
    let base = restart_peak();
    let states = run().states();
    let peak = peak_bytes() - base;
    eprintln!(
        "{name}, jobs {jobs}: {states} states, peak {} live heap bytes per state",
        peak / states.max(1)
    );
    bencher
        .counter(divan::counter::ItemsCount::new(states))
        .bench_local(run);
}

const JOBS: [usize; 2] = [1, 2];

#[divan::bench(args = JOBS, sample_count = 3, sample_size = 1)]
fn grid_barrier_unreduced(bencher: divan::Bencher, jobs: usize) {
    let m = grid_barrier(8);
    bench_search(
        bencher,
        "grid barrier, 8 blocks, unreduced",
        &m,
        false,
        100_000,
        jobs,
    );
}

#[divan::bench(args = JOBS, sample_count = 3, sample_size = 1)]
fn grid_barrier_default(bencher: divan::Bencher, jobs: usize) {
    let m = grid_barrier(8);
    bench_search(
        bencher,
        "grid barrier, 8 blocks, default",
        &m,
        true,
        1_000_000,
        jobs,
    );
}

#[divan::bench(args = JOBS, sample_count = 3, sample_size = 1)]
fn spinlock_default(bencher: divan::Bencher, jobs: usize) {
    let m = spinlock(6);
    bench_search(
        bencher,
        "spin lock, 6 blocks, default",
        &m,
        true,
        1_000_000,
        jobs,
    );
}
