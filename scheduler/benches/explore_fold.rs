//! The fold of invisible steps (`scheduler::explore::fold`) against the unreduced search, on
//! the grid barrier (`tests/kernels/grid_barrier`, two blocks of 32 threads, `--progress fair
//! --level blocks`) and the MP-4 litmus family member (`tests/litmus/families/MP-4.litmus`,
//! flat memory). Items are the states each search builds, so items/s is its state rate and
//! the time per iteration is what one exploration costs with and without the fold.

use scheduler::explore::{Folding, Level, Limits, explore};
use scheduler::litmus::{self, Options};
use scheduler::outcome::Observe;
use semantics::machine::{ArgValue, BufferSpec, LaunchConfig, Machine, MachineConfig};
use std::path::Path;
use std::sync::Arc;

fn main() {
    divan::main();
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// `grid_barrier.ron` with `blocks` blocks of 32 threads.
fn grid_barrier(blocks: u32) -> Machine {
    let text = read("tests/kernels/grid_barrier.ptx");
    let parsed = ptx_parser::parse(&text);
    let program = semantics::load(&parsed.module, &text).expect("loads").0;
    let n = 32 * blocks as usize;
    let s32s = |name: &str, values: Vec<i32>| BufferSpec {
        name: name.to_string(),
        elem: ptx_parser::ScalarType::S32,
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    };
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
    Machine::new(Arc::new(program), &l, &MachineConfig::default()).expect("launches")
}

const FOLDINGS: [Folding; 2] = [Folding::None, Folding::Invisible];

#[divan::bench(args = FOLDINGS)]
fn grid_barrier_2_blocks(bencher: divan::Bencher, folding: Folding) {
    let m = grid_barrier(2);
    let observe = Observe {
        buffers: vec![3],
        variables: Vec::new(),
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
