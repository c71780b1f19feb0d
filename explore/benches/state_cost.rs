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

use divan::AllocProfiler;
use explore::progress::{ModelKind, ProgressModel, Strength};
use explore::{Folding, Level, Limits, Por, Symmetry, explore_symmetric};
use scheduler::Stop;
use scheduler::outcome::Observe;
use semantics::machine::{ArgValue, BufferSpec, LaunchConfig, Machine, MachineConfig};
use std::alloc::{GlobalAlloc, Layout};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Divan's profiler, and a process-wide count of live heap bytes with its peak (divan's
/// counts are per thread and per sample; this one gives the bytes per state).
struct Counting {
    divan: AllocProfiler,
}

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { self.divan.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { self.divan.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.divan.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { self.divan.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting {
    divan: AllocProfiler::system(),
};

fn main() {
    divan::main();
}

fn read(rel: &str) -> String {
    let root = std::env::var_os("CUDASEM_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn machine(file: &str, launch: &LaunchConfig) -> Machine {
    let text = read(file);
    let parsed = ptx_parser::parse(&text);
    let program = semantics::load(&parsed.module, &text).expect("loads").0;
    Machine::new(Arc::new(program), launch, &MachineConfig::default()).expect("launches")
}

fn s32s(name: &str, values: Vec<i32>) -> BufferSpec {
    BufferSpec {
        name: name.to_string(),
        elem: ptx_parser::ScalarType::S32,
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

/// `grid_barrier_launch N` of bench/explore-families.sh: `blocks` blocks of 32 threads.
fn grid_barrier(blocks: u32) -> Machine {
    let n = 32 * blocks as usize;
    let l = LaunchConfig {
        kernel: Some("grid_barrier".to_string()),
        grid: [blocks, 1, 1],
        block: [32, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![
            s32s("in", (1..=n as i32).collect()),
            s32s("partial", vec![0; blocks as usize]),
            s32s("count", vec![0]),
            s32s("out", vec![0; blocks as usize]),
        ],
        args: vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Buffer(2),
            ArgValue::Buffer(3),
            ArgValue::Scalar {
                ty: ptx_parser::ScalarType::S32,
                bits: n as u64,
            },
        ],
        globals: Vec::new(),
        extern_values: Vec::new(),
    };
    machine("tests/kernels/grid_barrier.ptx", &l)
}

/// `tests/kernels/spinlock.ron` with `blocks` blocks.
fn spinlock(blocks: u32) -> Machine {
    let l = LaunchConfig {
        kernel: Some("spinlock".to_string()),
        grid: [blocks, 1, 1],
        block: [32, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![s32s("lock", vec![0]), s32s("counter", vec![0])],
        args: vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Scalar {
                ty: ptx_parser::ScalarType::S32,
                bits: 3,
            },
        ],
        globals: Vec::new(),
        extern_values: Vec::new(),
    };
    machine("tests/kernels/spinlock.ptx", &l)
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
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let states = run().states();
    let peak = PEAK.load(Ordering::Relaxed) - base;
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
