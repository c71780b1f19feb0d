//! The fold of invisible steps (`explore::fold`) against the unreduced search, on
//! the grid barrier (`tests/kernels/grid_barrier`, two blocks of 32 threads, `--progress fair
//! --level blocks`) and the MP-4 litmus family member (`tests/litmus/families/MP-4.litmus`,
//! flat memory). Items are the states each search builds, so items/s is its state rate and
//! the time per iteration is what one exploration costs with and without the fold.

use explore::{Folding, Level, Limits, explore};
use litmus::{self, Options};
use scheduler::outcome::Observe;

mod common;
use common::{grid_barrier, read};

fn main() {
    divan::main();
}

const FOLDINGS: [Folding; 2] = [Folding::None, Folding::Invisible];

#[divan::bench(args = FOLDINGS)]
fn grid_barrier_2_blocks(bencher: divan::Bencher, folding: Folding) {
    let m = grid_barrier(2);
    let observe = Observe {
        buffers: vec![3],
        variables: Vec::new(),
        registers: Vec::new(),
    };
    let limits = Limits {
        folding,
        ..Limits::default()
    };
    let x = explore(&m, Level::Blocks, &observe, limits).expect("explores");
    assert!(x.bound_hit.is_none(), "complete");
    bencher
        .counter(divan::counter::ItemsCount::new(x.states()))
        .bench_local(|| explore(&m, Level::Blocks, &observe, limits));
}

#[divan::bench(args = FOLDINGS)]
fn litmus_mp_4(bencher: divan::Bencher, folding: Folding) {
    let test = litmus::parse::parse(&read("tests/litmus/families/MP-4.litmus")).expect("parses");
    let options = Options {
        folding,
        ..Options::default()
    };
    let r = litmus::check(&test, &options);
    assert_eq!(r.status, litmus::Status::Ok);
    bencher
        .counter(divan::counter::ItemsCount::new(r.states))
        .bench_local(|| litmus::check(&test, &options));
}
