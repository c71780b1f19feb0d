//! Machine throughput (docs/internals/machine.md): thread-instructions per second on 64K-thread
//! launches under flat memory, the SIMT stack and round-robin scheduling.
//!
//! * `alu`: 256 blocks × 256 threads; each thread runs a 64-iteration integer hash loop
//!   (`tests/kernels/bench_alu` inlined).
//! * `memory`: 256 blocks × 256 threads; each thread does 32 rounds of a global load, an add
//!   and a global store on its own element, plus a shared-memory round trip.
//!
//! * `memory_flat_512` / `memory_cached_512`: the memory kernel on 512 threads under flat and
//!   cached memory (their ratio is the cost of the memory programs).
//! * `alu_cached`: `alu` at full size under cached memory (issue 15's goal: at most 5x `alu`;
//!   the same thread-instructions, so the throughputs compare directly).
//!
//! Divan reports the time per launch and, as its item throughput (`Mitem/s`), thread-instructions
//! per second: the items of one launch are `Machine::thread_instructions` (per warp step, the
//! lanes that executed it). `CUDASEM_BENCH_COUNTS=1` prints the counts per launch.

use ptx_parser::ScalarType;
use semantics::machine::{
    ArgValue, BufferSpec, LaunchConfig, Machine, MachineConfig, MemoryKind, Termination,
};
use std::sync::Arc;

fn main() {
    // `CUDASEM_BENCH_COUNTS=1`: print each kernel's thread-instructions per launch first (to turn
    // callgrind's instruction counts into instructions per thread-instruction).
    if std::env::var_os("CUDASEM_BENCH_COUNTS").is_some() {
        for (name, make) in [
            ("alu", alu_machine as fn() -> Machine),
            ("memory", mem_machine),
        ] {
            let mut m = make();
            let count = run(&mut m);
            println!(
                "{name}: {count} thread-instructions, {} warp steps per launch ({N} threads)",
                m.steps()
            );
        }
    }
    divan::main();
}

const ALU: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry bench_alu(.param .u64 p0, .param .u64 p1, .param .u32 p2)
{
    .reg .pred %p<3>;
    .reg .b32 %r<23>;
    .reg .b64 %rd<10>;
    ld.param.u32 %r9, [p2];
    mov.u32 %r10, %ctaid.x;
    mov.u32 %r11, %ntid.x;
    mov.u32 %r12, %tid.x;
    mad.lo.s32 %r1, %r10, %r11, %r12;
    setp.ge.s32 %p1, %r1, %r9;
    @%p1 bra LBB0_4;
    ld.param.u64 %rd4, [p0];
    ld.param.u64 %rd5, [p1];
    cvta.to.global.u64 %rd1, %rd5;
    cvta.to.global.u64 %rd2, %rd4;
    cvt.s64.s32 %rd3, %r1;
    mul.wide.s32 %rd6, %r1, 4;
    add.s64 %rd7, %rd2, %rd6;
    ld.global.u32 %r22, [%rd7];
    mov.u32 %r21, 64;
    mov.u32 %r20, 0;
LBB0_2:
    mad.lo.s32 %r15, %r22, 1664525, 1013904223;
    shr.u32 %r16, %r15, 13;
    xor.b32 %r17, %r16, %r15;
    add.s32 %r18, %r20, %r17;
    shl.b32 %r19, %r18, 7;
    xor.b32 %r22, %r19, %r18;
    add.s32 %r21, %r21, -1;
    add.s32 %r20, %r20, -1640531527;
    setp.eq.s32 %p2, %r21, 0;
    @%p2 bra LBB0_3;
    bra.uni LBB0_2;
LBB0_3:
    shl.b64 %rd8, %rd3, 2;
    add.s64 %rd9, %rd1, %rd8;
    st.global.u32 [%rd9], %r22;
LBB0_4:
    ret;
}
"#;

const MEMORY: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry bench_mem(.param .u64 p0)
{
    .reg .pred %p<2>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<6>;
    .shared .align 4 .b8 tile[1024];
    ld.param.u64 %rd1, [p0];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.s32 %r4, %r1, %r2, %r3;
    mul.wide.s32 %rd2, %r4, 4;
    add.s64 %rd3, %rd1, %rd2;
    shl.b32 %r8, %r3, 2;
    mov.u64 %rd4, tile;
    cvt.u64.u32 %rd5, %r8;
    add.s64 %rd4, %rd4, %rd5;
    mov.u32 %r5, 32;
LOOP:
    ld.global.u32 %r6, [%rd3];
    add.s32 %r6, %r6, %r5;
    st.global.u32 [%rd3], %r6;
    st.shared.u32 [%rd4], %r6;
    ld.shared.u32 %r7, [%rd4];
    add.s32 %r5, %r5, -1;
    setp.ne.s32 %p1, %r5, 0;
    @%p1 bra LOOP;
    ret;
}
"#;

fn program(src: &str) -> Arc<semantics::Program> {
    let parsed = ptx_parser::parse(src);
    let (p, _) = semantics::load(&parsed.module, src).unwrap_or_else(|d| panic!("{d:?}"));
    Arc::new(p)
}

const N: u32 = 65536;

fn alu_machine() -> Machine {
    alu_machine_with(MachineConfig::default())
}

fn alu_cached_machine() -> Machine {
    alu_machine_with(MachineConfig {
        memory: MemoryKind::Cached,
        ..MachineConfig::default()
    })
}

fn alu_machine_with(config: MachineConfig) -> Machine {
    let l = LaunchConfig {
        kernel: Some("bench_alu".into()),
        grid: [N / 256, 1, 1],
        block: [256, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![
            BufferSpec {
                name: "in".into(),
                elem: ScalarType::U32,
                bytes: (0..N).flat_map(|i| i.to_le_bytes()).collect(),
            },
            BufferSpec {
                name: "out".into(),
                elem: ScalarType::U32,
                bytes: vec![0; N as usize * 4],
            },
        ],
        args: vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Scalar {
                ty: ScalarType::S32,
                bits: N as u64,
            },
        ],
        globals: vec![],
        extern_values: Vec::new(),
    };
    Machine::new(program(ALU), &l, &config).expect("launch")
}

fn mem_machine() -> Machine {
    mem_machine_with(N, MachineConfig::default())
}

/// The memory kernel on `n` threads under `config` (the cached comparison uses fewer threads:
/// every access there is a memory program of several scheduler steps).
fn mem_machine_with(n: u32, config: MachineConfig) -> Machine {
    let l = LaunchConfig {
        kernel: Some("bench_mem".into()),
        grid: [n / 256, 1, 1],
        block: [256, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![BufferSpec {
            name: "a".into(),
            elem: ScalarType::U32,
            bytes: vec![0; n as usize * 4],
        }],
        args: vec![ArgValue::Buffer(0)],
        globals: vec![],
        extern_values: Vec::new(),
    };
    Machine::new(program(MEMORY), &l, &config).expect("launch")
}

/// Threads of the flat-versus-cached comparison.
const SMALL: u32 = 512;

fn small_flat() -> Machine {
    mem_machine_with(SMALL, MachineConfig::default())
}

fn small_cached() -> Machine {
    let config = MachineConfig {
        memory: MemoryKind::Cached,
        ..MachineConfig::default()
    };
    mem_machine_with(SMALL, config)
}

fn run(m: &mut Machine) -> u64 {
    let t = scheduler::run(m, &mut scheduler::RoundRobin::new(), u64::MAX);
    assert_eq!(t, Termination::Completed);
    m.thread_instructions()
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn alu(bencher: divan::Bencher) {
    let count = run(&mut alu_machine());
    bencher
        .counter(divan::counter::ItemsCount::new(count))
        .with_inputs(alu_machine)
        .bench_local_values(|mut m| run(&mut m));
}

/// `alu` under cached memory (thesis chapter 4: each lane's load and store a memory program
/// of several micro steps; its one load and one store per thread are most of the extra cost).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn alu_cached(bencher: divan::Bencher) {
    let count = run(&mut alu_cached_machine());
    bencher
        .counter(divan::counter::ItemsCount::new(count))
        .with_inputs(alu_cached_machine)
        .bench_local_values(|mut m| run(&mut m));
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn memory(bencher: divan::Bencher) {
    let count = run(&mut mem_machine());
    bencher
        .counter(divan::counter::ItemsCount::new(count))
        .with_inputs(mem_machine)
        .bench_local_values(|mut m| run(&mut m));
}

/// `memory` on 512 threads under flat memory: the baseline of `memory_cached`.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn memory_flat_512(bencher: divan::Bencher) {
    let count = run(&mut small_flat());
    bencher
        .counter(divan::counter::ItemsCount::new(count))
        .with_inputs(small_flat)
        .bench_local_values(|mut m| run(&mut m));
}

/// `memory` on 512 threads under cached memory (thesis chapter 4: every global and shared
/// access a memory program whose micro steps the round-robin scheduler interleaves).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn memory_cached_512(bencher: divan::Bencher) {
    let count = run(&mut small_cached());
    bencher
        .counter(divan::counter::ItemsCount::new(count))
        .with_inputs(small_cached)
        .bench_local_values(|mut m| run(&mut m));
}
