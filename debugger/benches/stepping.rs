//! Stepping speed: a `continue` over a whole long kernel, the corpus's `bench_alu` (65,536
//! threads, 2,048 warps, about 1.5 million steps), with a conditional breakpoint at its last
//! instruction that never holds (so every warp reaching it evaluates the condition and the
//! run goes to the end), the same without a breakpoint, and with a watchpoint that is never
//! written (every step's events are then recorded). The session logs every choice and keeps
//! its snapshots as it does for a user.

use debugger::{Options, Session};
use semantics::machine::{ArgValue, BufferSpec, LaunchConfig, MachineConfig};
use std::sync::Arc;

const BENCH_ALU: &str = include_str!("../../tests/kernels/bench_alu.ptx");
const THREADS: u32 = 65_536;

/// The launch of `tests/kernels/bench_alu.ron`: 256 blocks of 256, `in[i] = i`.
fn session() -> Session {
    let parsed = ptx_parser::parse(BENCH_ALU);
    let (program, _) = semantics::load(&parsed.module, BENCH_ALU).expect("bench_alu loads");
    let input: Vec<u8> = (0..THREADS).flat_map(|i| i.to_le_bytes()).collect();
    let launch = LaunchConfig {
        kernel: Some("bench_alu".into()),
        grid: [256, 1, 1],
        block: [256, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![
            BufferSpec {
                name: "in".into(),
                elem: ptx_parser::ScalarType::U32,
                bytes: input,
            },
            BufferSpec {
                name: "out".into(),
                elem: ptx_parser::ScalarType::U32,
                bytes: vec![0; THREADS as usize * 4],
            },
        ],
        args: vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Scalar {
                ty: ptx_parser::ScalarType::S32,
                bits: THREADS as u64,
            },
        ],
        globals: vec![],
        extern_values: Vec::new(),
    };
    Session::new(
        Arc::new(program),
        launch,
        MachineConfig::default(),
        Options::default(),
    )
    .expect("the launch fits")
}

fn main() {
    divan::main();
}

fn continue_to_the_end(bencher: divan::Bencher, breakpoint: Option<&str>) {
    bencher
        .with_inputs(|| {
            let mut s = session();
            if let Some(b) = breakpoint {
                let reply = s.handle(b);
                assert_eq!(reply.outcome, debugger::Outcome::Ok, "{}", reply.text);
            }
            s
        })
        .bench_local_values(|mut s| {
            let reply = s.handle("continue");
            assert!(reply.text.contains("the kernel ended"), "{}", reply.text);
            s
        });
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn continue_bench_alu(bencher: divan::Bencher) {
    continue_to_the_end(bencher, None);
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn continue_bench_alu_breakpoint_at_ret(bencher: divan::Bencher) {
    continue_to_the_end(bencher, Some("break LBB0_4 if %r1 < 0"));
}

/// A watchpoint on an input the kernel only reads: every step's events are recorded and
/// checked, and the run still goes to the end.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn continue_bench_alu_watching_an_input(bencher: divan::Bencher) {
    continue_to_the_end(bencher, Some("watch in[5]"));
}
