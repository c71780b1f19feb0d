//! The cost of [`Machine::loads_only_settled_words`], which the search's fold asks for every
//! global load it meets: on the corpus grid barrier (`tests/kernels/grid_barrier`, 32-thread
//! blocks) at 8 blocks, with every block resident, for a warp at
//!
//! * `in_load`: its load of `in[]`, settled from the start (every other warp is looked at);
//! * `spin_load`: its spin's load of `count` while other blocks have still to add to it (the
//!   first warp found that may write it ends the look);
//! * `partial_load`: a load of `partial[]` after the grid barrier (every other warp is looked
//!   at).
//!
//! `analyse` is the summary's one-time cost on that program ([`MayWrite::analyse`]).

use semantics::machine::{Machine, MachineConfig};
use semantics::program::{MayWrite, Pc};
use std::sync::Arc;
use traces::Choice;

fn main() {
    divan::main();
}

const GRID_BARRIER: &str = include_str!("../../tests/kernels/grid_barrier.ptx");
const BLOCKS: u32 = 8;

fn program() -> Arc<semantics::Program> {
    let parsed = ptx_parser::parse(GRID_BARRIER);
    Arc::new(
        semantics::load(&parsed.module, GRID_BARRIER)
            .expect("loads")
            .0,
    )
}

/// The address of the first instruction whose PTX line contains `text`.
fn pc_of(p: &semantics::Program, text: &str) -> Pc {
    let lines: Vec<&str> = GRID_BARRIER.lines().collect();
    (0..p.instructions.len() as Pc)
        .find(|&pc| lines[p.source[pc as usize].ptx_line as usize - 1].contains(text))
        .expect("instruction")
}

/// A machine (and the choice) where some warp is about to execute the load at `pc` for the
/// `nth` time overall, running the lowest enabled choice for `lead` steps and round-robin
/// after.
fn at_load(text: &str, nth: usize, lead: usize) -> (Machine, Choice) {
    let p = program();
    let pc = pc_of(&p, text);
    let launch = corpus::bench_support::grid_barrier_launch(BLOCKS);
    let mut m = Machine::new(p, &launch, &MachineConfig::default()).expect("launch");
    let mut seen = 0;
    for step in 0..1_000_000usize {
        let enabled = m.enabled().to_vec();
        let c = enabled[if step < lead { 0 } else { step % enabled.len() }];
        if let Choice::Warp { block, warp } = c
            && m.warp_view(block, warp).map(|v| v.pc) == Some(pc)
        {
            seen += 1;
            if seen == nth {
                return (m, c);
            }
        }
        m.step(&c).expect("enabled");
    }
    panic!("no load at `{text}`");
}

fn bench_query(bencher: divan::Bencher, (m, c): (Machine, Choice), expect: bool) {
    assert_eq!(m.loads_only_settled_words(&c), expect);
    bencher.bench(|| divan::black_box(&m).loads_only_settled_words(divan::black_box(&c)));
}

#[divan::bench]
fn in_load(bencher: divan::Bencher) {
    // The last block's load, once every block is resident.
    bench_query(
        bencher,
        at_load("ld.global.u32 \t%r23", BLOCKS as usize, 0),
        true,
    );
}

#[divan::bench]
fn spin_load(bencher: divan::Bencher) {
    // Block 0 runs ahead and spins alone.
    bench_query(
        bencher,
        at_load("ld.volatile.global.u32 \t%r27", 1, 2000),
        false,
    );
}

#[divan::bench]
fn partial_load(bencher: divan::Bencher) {
    bench_query(
        bencher,
        at_load("ld.volatile.global.u32 \t%r33", 1, 0),
        true,
    );
}

#[divan::bench]
fn analyse(bencher: divan::Bencher) {
    let p = program();
    bencher.bench(|| MayWrite::analyse(divan::black_box(&p)));
}
