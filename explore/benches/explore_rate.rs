//! States per second of exhaustive exploration on litmus-size kernels (issue 5's goal: 500,000
//! per core for the stateful search), under flat and cached memory.
//!
//! Each bench reports items/s where an item is one state of that search: for the stateful
//! breadth-first explorer ([`explore`]) a node of its graph (machine state × units that have
//! stepped), for the sleep-set DFS ([`dfs::outcomes`]) a distinct machine state it expanded.
//! Kernels: `tests/kernels/mp/mp_weak.ptx` and `mp_release_acquire.ptx` (message passing, two
//! blocks of one thread), Listing 6.2 (a spin lock: a cyclic state space) with two blocks of
//! one thread.

use explore::dfs::{self, DfsConfig, Memo, Reduction};
use explore::{Level, Limits, explore};
use scheduler::outcome::Observe;
use semantics::machine::{ArgValue, BufferSpec, LaunchConfig, Machine, MachineConfig, MemoryKind};
use std::path::Path;
use std::sync::Arc;

fn main() {
    divan::main();
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn launch(text: &str, kernel: &str, launch: &LaunchConfig, memory: MemoryKind) -> Machine {
    let parsed = ptx_parser::parse(text);
    let program = semantics::load(&parsed.module, text).expect("loads").0;
    let mut l = launch.clone();
    l.kernel = Some(kernel.to_string());
    let config = MachineConfig {
        memory,
        ..MachineConfig::default()
    };
    Machine::new(Arc::new(program), &l, &config).expect("launches")
}

/// A message-passing kernel of `tests/kernels/mp/` as its `.ron` launches it: buffers `data`,
/// `flag` (one u32 each) and `out` (two), two blocks of one thread.
fn mp(name: &str, memory: MemoryKind) -> Machine {
    let u32s = |name: &str, n: usize| BufferSpec {
        name: name.to_string(),
        elem: ptx_parser::ScalarType::U32,
        bytes: vec![0; 4 * n],
    };
    let l = LaunchConfig {
        kernel: None,
        grid: [2, 1, 1],
        block: [1, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![u32s("data", 1), u32s("flag", 1), u32s("out", 2)],
        args: vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Buffer(2),
        ],
        globals: Vec::new(),
        extern_values: Vec::new(),
    };
    launch(
        &read(&format!("tests/kernels/mp/{name}.ptx")),
        "mp",
        &l,
        memory,
    )
}

fn listing_6_2(memory: MemoryKind) -> Machine {
    let l = LaunchConfig {
        kernel: None,
        grid: [2, 1, 1],
        block: [1, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: Vec::new(),
        args: Vec::new(),
        globals: Vec::new(),
        extern_values: Vec::new(),
    };
    launch(&read("tests/thesis/listing_6_2.ptx"), "kernel", &l, memory)
}

fn observe_out() -> Observe {
    Observe {
        buffers: vec![2],
        variables: Vec::new(),
        registers: Vec::new(),
    }
}

/// The stateful breadth-first search; items = its states.
fn bench_explore(bencher: divan::Bencher, m: &Machine, observe: &Observe) {
    let x = explore(m, Level::Blocks, observe, Limits::default()).expect("explores");
    assert!(x.bound_hit.is_none(), "complete");
    bencher
        .counter(divan::counter::ItemsCount::new(x.states()))
        .bench_local(|| explore(m, Level::Blocks, observe, Limits::default()));
}

/// The sleep-set DFS with state caching; items = distinct machine states it expanded.
fn bench_dfs(bencher: divan::Bencher, m: &Machine, observe: &Observe) {
    let config = DfsConfig {
        reduction: Reduction::SleepSets,
        memo: Memo::States,
        max_transitions: u64::MAX,
        folding: explore::Folding::Invisible,
    };
    let r = dfs::outcomes(m, observe, config);
    assert!(r.bound_hit.is_none(), "complete");
    bencher
        .counter(divan::counter::ItemsCount::new(r.states as usize))
        .bench_local(|| dfs::outcomes(m, observe, config));
}

#[divan::bench(sample_count = 20)]
fn stateful_mp_weak_flat(bencher: divan::Bencher) {
    bench_explore(bencher, &mp("mp_weak", MemoryKind::Flat), &observe_out());
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn stateful_mp_weak_cached(bencher: divan::Bencher) {
    bench_explore(bencher, &mp("mp_weak", MemoryKind::Cached), &observe_out());
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn stateful_mp_release_acquire_cached(bencher: divan::Bencher) {
    bench_explore(
        bencher,
        &mp("mp_release_acquire", MemoryKind::Cached),
        &observe_out(),
    );
}

#[divan::bench(sample_count = 20)]
fn stateful_listing_6_2_flat(bencher: divan::Bencher) {
    bench_explore(bencher, &listing_6_2(MemoryKind::Flat), &Observe::default());
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn dfs_sleep_mp_weak_cached(bencher: divan::Bencher) {
    bench_dfs(bencher, &mp("mp_weak", MemoryKind::Cached), &observe_out());
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn dfs_sleep_mp_release_acquire_cached(bencher: divan::Bencher) {
    bench_dfs(
        bencher,
        &mp("mp_release_acquire", MemoryKind::Cached),
        &observe_out(),
    );
}
