//! What a stateful search pays per transition (issue 14, "cheaper states"; docs/exploration.md,
//! "Cheap states"): clone a machine, step one warp, fingerprint the result, on the corpus grid
//! barrier (`tests/kernels/grid_barrier`) with 8 blocks of 32 threads under flat memory.
//!
//! The parents are 64 states of a random run (the prologue passed, blocks at different points
//! of the reduction and the spin), each fingerprinted once as the search does when it finds
//! it, so that their memos are filled. Each iteration takes one parent:
//! * `clone_step_fingerprint`: clone it, step its first enabled choice, fingerprint the child
//!   (the memoised fingerprint: only what the step wrote is rehashed);
//! * `clone_step_fingerprint_from_scratch`: the same with the fingerprint from scratch
//!   (every block and register row rehashed: the cost without memos);
//! * `clone`: the clone alone.
//!
//! Divan's allocation profiler counts the bytes each iteration allocates: for
//! `clone_step_fingerprint`, what a child state that the search keeps costs beyond what it
//! shares with its parent.

use corpus::launch::Launch;
use corpus::{kernels_dir, load_file};
use semantics::machine::{Machine, MachineConfig};
use std::path::Path;
use std::sync::Arc;

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    divan::main();
}

const BLOCKS: u32 = 8;

/// The grid barrier's launch for `BLOCKS` blocks of 32 threads (its buffers grow with the grid,
/// as `bench/explore-families.sh` writes them).
fn launch_text() -> String {
    let n = BLOCKS;
    format!(
        r#"(
    kernel: "grid_barrier",
    grid: ({n}, 1, 1),
    block: (32, 1, 1),
    buffers: {{
        "in": (type: "s32", len: {len}, init: Range(start: 1, step: 1)),
        "partial": (type: "s32", len: {n}),
        "count": (type: "s32", len: 1),
        "out": (type: "s32", len: {n}),
    }},
    args: [Buffer("in"), Buffer("partial"), Buffer("count"), Buffer("out"), Scalar(type: "s32", value: {len})],
)"#,
        len = 32 * n
    )
}

fn grid_barrier() -> Machine {
    let ptx = kernels_dir().join("grid_barrier.ptx");
    let program = load_file(&ptx).expect("the corpus grid barrier loads");
    let launch = Launch::from_ron(&launch_text(), "grid_barrier.ron", Path::new("."))
        .expect("the launch parses");
    let resolved = launch.resolve(&program).expect("the launch resolves");
    Machine::new(
        Arc::new(program),
        &resolved.config,
        &MachineConfig::default(),
    )
    .expect("the machine starts")
}

/// 64 states along a random run (xorshift over the enabled choices), each fingerprinted.
fn parents() -> Vec<Machine> {
    let mut m = grid_barrier();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut out = Vec::new();
    for step in 0..4000 {
        let enabled = m.enabled();
        if enabled.is_empty() {
            break;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let choice =
            enabled[(x.wrapping_mul(0x2545_F491_4F6C_DD1D) % enabled.len() as u64) as usize];
        m.step(&choice).expect("an enabled choice steps");
        if step % 50 == 49 && out.len() < 64 {
            m.state_fingerprint();
            out.push(m.clone());
        }
    }
    assert!(!out.is_empty(), "the run produced parents");
    out
}

fn child(parent: &Machine) -> Machine {
    let mut m = parent.clone();
    if let Some(&c) = m.enabled().first() {
        m.step(&c).expect("an enabled choice steps");
    }
    m
}

#[divan::bench]
fn clone_step_fingerprint(bencher: divan::Bencher) {
    let parents = parents();
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % parents.len();
        let m = child(&parents[i]);
        (m.state_fingerprint(), m)
    });
}

#[divan::bench]
fn clone_step_fingerprint_from_scratch(bencher: divan::Bencher) {
    let parents = parents();
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % parents.len();
        let m = child(&parents[i]);
        (m.state_fingerprint_from_scratch(), m)
    });
}

#[divan::bench]
fn clone(bencher: divan::Bencher) {
    let parents = parents();
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % parents.len();
        parents[i].clone()
    });
}
