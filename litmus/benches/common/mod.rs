//! What the exploration benches share: reading a corpus file (from `$CUDASEM_ROOT`, default this
//! crate's parent, so a built bench can run elsewhere) and the grid barrier machine.
#![allow(dead_code)]

use semantics::machine::{ArgValue, BufferSpec, LaunchConfig, Machine, MachineConfig};
use std::path::PathBuf;
use std::sync::Arc;

/// A corpus file's text.
pub fn read(rel: &str) -> String {
    let root = std::env::var_os("CUDASEM_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// `grid_barrier.ron` with `blocks` blocks of 32 threads.
pub fn grid_barrier(blocks: u32) -> Machine {
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
