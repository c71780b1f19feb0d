//! Fuzzing throughput: random-schedule runs per second on litmus-size kernels (an AXB test
//! translated to PTX, Listing 6.2 with two blocks) and on a corpus kernel (spin lock), one
//! thread (the goal is 50,000 runs per second per core on litmus-size kernels).

use explore::axb_ptx::{Layout, Read, translate};
use explore::progress::axb;
use scheduler::fuzz::{FuzzPolicy, run_one};
use scheduler::outcome::Observe;
use semantics::machine::{LaunchConfig, Machine, MachineConfig};
use std::sync::Arc;

fn main() {
    divan::main();
}

fn machine(text: &str, kernel: &str, grid: u32, block: u32) -> Machine {
    let parsed = ptx_parser::parse(text);
    let program = semantics::load(&parsed.module, text).expect("loads").0;
    let launch = LaunchConfig::kernel_1d(kernel, grid, block);
    Machine::new(Arc::new(program), &launch, &MachineConfig::default()).expect("launches")
}

/// The paper's mutex (Fig. 2), two blocks of one thread.
fn mutex() -> Machine {
    let t = axb::parse(
        "fig2",
        "THREAD0\natomic_exch_branch(0,1,1,0)\natomic_store(0,0)\nTHREAD1\natomic_exch_branch(0,1,1,0)\natomic_store(0,0)\n",
    )
    .expect("parses");
    machine(&translate(&t, Layout::Blocks, Read::Atomic), "axb", 2, 1)
}

fn listing_6_2() -> Machine {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/thesis/listing_6_2.ptx"),
    )
    .expect("reads");
    machine(&text, "kernel", 2, 1)
}

#[divan::bench(sample_count = 20, sample_size = 200)]
fn axb_mutex_run(bencher: divan::Bencher) {
    let m = mutex();
    let observe = Observe {
        buffers: Vec::new(),
        variables: vec!["loc0".to_string()],
        registers: Vec::new(),
    };
    let mut seed = 0u64;
    bencher.bench_local(|| {
        seed += 1;
        run_one(&m, FuzzPolicy::Random, seed, 0, 100_000, &observe)
    });
}

#[divan::bench(sample_count = 20, sample_size = 200)]
fn listing_6_2_two_blocks_run(bencher: divan::Bencher) {
    let m = listing_6_2();
    let observe = Observe::default();
    let mut seed = 0u64;
    bencher.bench_local(|| {
        seed += 1;
        run_one(&m, FuzzPolicy::Random, seed, 0, 100_000, &observe)
    });
}
