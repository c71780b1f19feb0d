//! Cost of the monitors (`semantics::monitors`) relative to a plain run, on the three 65,536-thread
//! corpus kernels (`tests/kernels/bench_{alu,reduce,matmul}`), round-robin, SIMT stack, flat memory:
//!
//! * `plain`: `Machine::step` (the fast path, no events);
//! * `observed`: `Machine::step_observed` with the events thrown away (what recording costs);
//! * `monitors`: `step_observed_with(.., EventDetail::Monitors)` (the events the monitors read)
//!   plus every monitor (races under `interleaving`, barrier divergence, memory checks).
//!
//! The goal is `monitors / plain <= 2`. `CUDASEM_BENCH_RATIO=N` times N launches of each
//! variant, keeps the fastest, and prints the ratios (for the report); `CUDASEM_BENCH_ONLY=matmul`
//! restricts it to some kernels, `CUDASEM_BENCH_VARIANT=plain|observed|monitors` runs one variant
//! only (for a profiler), and `CUDASEM_BENCH_CHECKS=rbm` picks the monitors (races, barriers,
//! memory; `CUDASEM_BENCH_CHECKS=` none: what recording the events and feeding them costs).

use ptx_parser::ScalarType;
use semantics::machine::{ArgValue, BufferSpec, EventDetail, LaunchConfig, Machine, MachineConfig};
use semantics::monitors::{MonitorConfig, Monitors};
use std::sync::Arc;
use traces::Event;

const KERNELS: [&str; 3] = ["alu", "reduce", "matmul"];

fn main() {
    if let Some(n) = std::env::var_os("CUDASEM_BENCH_RATIO") {
        // `CUDASEM_BENCH_RATIO=N`: the best of N launches per variant (other processes share the
        // machine; the minimum is the least disturbed), the variants taking turns.
        // `CUDASEM_BENCH_ONLY=k1,k2`: these kernels.
        let repeat: usize = n.to_str().and_then(|s| s.parse().ok()).unwrap_or(1).max(1);
        let only = std::env::var("CUDASEM_BENCH_ONLY").unwrap_or_default();
        for k in KERNELS {
            if !only.is_empty() && !only.split(',').any(|o| o == k) {
                continue;
            }
            let (program, launch) = setup(k);
            let t = |f: &dyn Fn() -> u64| {
                let mut best = f64::INFINITY;
                let mut steps = 0;
                for _ in 0..repeat {
                    let start = std::time::Instant::now();
                    steps = f();
                    best = best.min(start.elapsed().as_secs_f64());
                }
                (best, steps)
            };
            if let Ok(variant) = std::env::var("CUDASEM_BENCH_VARIANT") {
                // One variant alone (for a profiler).
                let run: &dyn Fn() -> u64 = match variant.as_str() {
                    "plain" => &|| plain(&program, &launch),
                    "observed" => &|| observed(&program, &launch),
                    _ => &|| monitored(&program, &launch),
                };
                let (time, steps) = t(run);
                println!("{k}: {steps} steps; {variant} {time:.3}s");
                continue;
            }
            // The variants take turns, so that a slow spell of the machine falls on all three.
            let variants: [&dyn Fn() -> u64; 3] = [
                &|| plain(&program, &launch),
                &|| observed(&program, &launch),
                &|| monitored(&program, &launch),
            ];
            let mut best = [f64::INFINITY; 3];
            let mut steps = 0;
            for _ in 0..repeat {
                for (b, f) in best.iter_mut().zip(variants) {
                    let start = std::time::Instant::now();
                    steps = f();
                    *b = b.min(start.elapsed().as_secs_f64());
                }
            }
            let [plain, observed, monitored] = best;
            println!(
                "{k}: {steps} steps; plain {plain:.3}s, observed {observed:.3}s ({:.2}x), monitors {monitored:.3}s ({:.2}x)",
                observed / plain,
                monitored / plain
            );
        }
        return;
    }
    divan::main();
}

fn bytes_u32(n: usize, f: impl Fn(usize) -> u32) -> Vec<u8> {
    (0..n).flat_map(|i| f(i).to_le_bytes()).collect()
}

/// The program and launch of `tests/kernels/bench_<name>` (as its `.ron` says).
fn setup(name: &str) -> (Arc<semantics::Program>, LaunchConfig) {
    let text = match name {
        "alu" => include_str!("../../tests/kernels/bench_alu.ptx"),
        "reduce" => include_str!("../../tests/kernels/bench_reduce.ptx"),
        _ => include_str!("../../tests/kernels/bench_matmul.ptx"),
    };
    let parsed = ptx_parser::parse(text);
    let (program, _) = semantics::load(&parsed.module, text).expect("bench kernel loads");
    let n = 65536usize;
    let buf = |name: &str, elem, bytes| BufferSpec {
        name: name.to_string(),
        elem,
        bytes,
    };
    let scalar = |v: u64| ArgValue::Scalar {
        ty: ScalarType::S32,
        bits: v,
    };
    let launch = match name {
        "alu" | "reduce" => LaunchConfig {
            kernel: Some(format!("bench_{name}")),
            grid: [256, 1, 1],
            block: [256, 1, 1],
            dynamic_shared_bytes: 0,
            buffers: vec![
                buf("in", ScalarType::U32, bytes_u32(n, |i| i as u32)),
                buf(
                    "out",
                    ScalarType::U32,
                    vec![0; if name == "alu" { n * 4 } else { 256 * 4 }],
                ),
            ],
            args: vec![ArgValue::Buffer(0), ArgValue::Buffer(1), scalar(n as u64)],
            globals: vec![],
            extern_values: Vec::new(),
        },
        _ => LaunchConfig {
            kernel: Some("bench_matmul".to_string()),
            grid: [16, 16, 1],
            block: [16, 16, 1],
            dynamic_shared_bytes: 0,
            buffers: vec![
                buf("A", ScalarType::F32, bytes_u32(n, |_| 0.5f32.to_bits())),
                buf("B", ScalarType::F32, bytes_u32(n, |_| 2.0f32.to_bits())),
                buf("C", ScalarType::F32, vec![0; n * 4]),
            ],
            args: vec![
                ArgValue::Buffer(0),
                ArgValue::Buffer(1),
                ArgValue::Buffer(2),
                scalar(256),
            ],
            globals: vec![],
            extern_values: Vec::new(),
        },
    };
    (Arc::new(program), launch)
}

fn machine(program: &Arc<semantics::Program>, launch: &LaunchConfig) -> Machine {
    Machine::new(program.clone(), launch, &MachineConfig::default()).expect("bench launch fits")
}

/// Round-robin as `scheduler::RoundRobin` does it (the scheduler crate depends on this one).
fn next(machine: &Machine, rr: &mut usize) -> Option<traces::Choice> {
    let enabled = machine.enabled();
    if enabled.is_empty() {
        return None;
    }
    let i = *rr % enabled.len();
    *rr = i + 1;
    Some(enabled[i])
}

fn plain(program: &Arc<semantics::Program>, launch: &LaunchConfig) -> u64 {
    let mut m = machine(program, launch);
    let mut rr = 0;
    while let Some(c) = next(&m, &mut rr) {
        if m.step(&c).is_err() {
            break;
        }
    }
    m.steps()
}

fn observed(program: &Arc<semantics::Program>, launch: &LaunchConfig) -> u64 {
    let mut m = machine(program, launch);
    let mut rr = 0;
    let mut events: Vec<Event> = Vec::new();
    while let Some(c) = next(&m, &mut rr) {
        events.clear();
        if m.step_observed(&c, &mut events).is_err() {
            break;
        }
    }
    m.steps()
}

fn monitored(program: &Arc<semantics::Program>, launch: &LaunchConfig) -> u64 {
    let mut m = machine(program, launch);
    let mut cfg = MonitorConfig::default();
    if let Ok(v) = std::env::var("CUDASEM_BENCH_CHECKS") {
        cfg.races = v.contains('r');
        cfg.barriers = v.contains('b');
        cfg.memory = v.contains('m');
    }
    let mut monitors = Monitors::new(&m, launch, cfg);
    let mut rr = 0;
    let mut events: Vec<Event> = Vec::new();
    while let Some(c) = next(&m, &mut rr) {
        events.clear();
        if m.step_observed_with(&c, &mut events, EventDetail::Monitors)
            .is_err()
        {
            break;
        }
        monitors.observe(&events);
    }
    assert!(monitors.finish().is_clean(), "bench kernels are race free");
    m.steps()
}

#[divan::bench(args = KERNELS, sample_count = 3, sample_size = 1)]
fn run_plain(bencher: divan::Bencher, kernel: &str) {
    let (program, launch) = setup(kernel);
    bencher.bench_local(|| plain(&program, &launch));
}

#[divan::bench(args = KERNELS, sample_count = 3, sample_size = 1)]
fn run_observed(bencher: divan::Bencher, kernel: &str) {
    let (program, launch) = setup(kernel);
    bencher.bench_local(|| observed(&program, &launch));
}

#[divan::bench(args = KERNELS, sample_count = 3, sample_size = 1)]
fn run_monitors(bencher: divan::Bencher, kernel: &str) {
    let (program, launch) = setup(kernel);
    bencher.bench_local(|| monitored(&program, &launch));
}
