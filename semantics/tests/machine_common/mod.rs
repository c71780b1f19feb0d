//! Shared helpers of the machine tests: load PTX text, launch, run, read buffers.
#![allow(dead_code)]

use ptx_parser::ScalarType;
use semantics::Program;
use semantics::machine::{
    ArgValue, BufferSpec, GridLaunch, LaunchConfig, Machine, MachineConfig, Termination, WarpModel,
};
use std::sync::Arc;
use traces::{Choice, Event};

/// Parses and loads PTX; panics with the diagnostics on failure (test input is ours).
pub fn load(src: &str) -> Arc<Program> {
    let parsed = ptx_parser::parse(src);
    assert!(
        !parsed.has_errors(),
        "parse errors: {:#?}",
        parsed.diagnostics
    );
    match semantics::load(&parsed.module, src) {
        Ok((p, _)) => Arc::new(p),
        Err(d) => panic!("load errors: {d:#?}"),
    }
}

pub fn u32_buffer(name: &str, values: &[u32]) -> BufferSpec {
    BufferSpec {
        name: name.into(),
        elem: ScalarType::U32,
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

pub fn zeros(name: &str, n: usize) -> BufferSpec {
    u32_buffer(name, &vec![0; n])
}

pub fn launch(
    kernel: &str,
    grid: u32,
    block: u32,
    buffers: Vec<BufferSpec>,
    args: Vec<ArgValue>,
) -> LaunchConfig {
    LaunchConfig {
        kernel: Some(kernel.into()),
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_shared_bytes: 0,
        buffers,
        args,
        globals: vec![],
        extern_values: Vec::new(),
    }
}

pub fn config(model: WarpModel, warp_size: u32) -> MachineConfig {
    let mut c = MachineConfig {
        warp_model: model,
        check_invariants: true,
        ..MachineConfig::default()
    };
    c.device.warp_size = warp_size;
    c
}

pub fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Runs round-robin (or with `sched`) to the bound; also checks the incremental enabled set
/// against a recomputation at every step.
pub fn run(m: &mut Machine, sched: &mut dyn scheduler::Scheduler, max: u64) -> Termination {
    for _ in 0..max {
        if let Some(t) = m.termination() {
            return t.clone();
        }
        let mut inc = m.enabled().to_vec();
        let mut scratch = m.enabled_from_scratch();
        inc.sort();
        scratch.sort();
        assert_eq!(
            inc, scratch,
            "incremental enabled set differs from a recomputation"
        );
        let en = m.enabled();
        let i = sched
            .pick(m, en)
            .expect("the test schedulers always choose");
        let c = en[i];
        m.step(&c).expect("enabled choice refused");
    }
    m.stop_at_step_limit();
    m.termination().cloned().unwrap_or(Termination::StepLimit)
}

/// Runs observed, picking with `pick` (given the enabled set), recording events.
pub fn run_observed(
    m: &mut Machine,
    max: u64,
    mut pick: impl FnMut(&[Choice]) -> Choice,
) -> (Termination, Vec<Event>) {
    let mut events = Vec::new();
    for _ in 0..max {
        if let Some(t) = m.termination() {
            return (t.clone(), events);
        }
        let c = pick(m.enabled());
        m.step_observed(&c, &mut events)
            .expect("enabled choice refused");
    }
    m.stop_at_step_limit();
    (
        m.termination().cloned().unwrap_or(Termination::StepLimit),
        events,
    )
}

/// The corpus programs of several launches.
pub const PROGRAMS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/kernels/programs/");

/// A corpus program's PTX, loaded.
pub fn load_file(name: &str) -> Arc<semantics::Program> {
    let src = std::fs::read_to_string(format!("{PROGRAMS}{name}")).expect("corpus PTX");
    load(&src)
}

/// One launch of a program: `blocks` blocks of `threads` threads in `stream`.
pub fn grid(
    kernel: &str,
    blocks: u32,
    threads: u32,
    args: Vec<ArgValue>,
    stream: u32,
) -> GridLaunch {
    GridLaunch {
        kernel: Some(kernel.into()),
        grid: [blocks, 1, 1],
        block: [threads, 1, 1],
        dynamic_shared_bytes: 0,
        args,
        stream,
    }
}

/// An `.s32` scalar argument.
pub fn s32(v: i32) -> ArgValue {
    ArgValue::Scalar {
        ty: ScalarType::S32,
        bits: v as u32 as u64,
    }
}

/// Visits every distinct state (by fingerprint) reachable from `start` over every enabled
/// choice, depth first, each once; panics past `max` states. Returns how many it visited.
pub fn each_state(start: Machine, max: usize, mut visit: impl FnMut(&Machine)) -> usize {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![start];
    while let Some(m) = stack.pop() {
        if !seen.insert(m.state_fingerprint()) {
            continue;
        }
        assert!(seen.len() < max, "state space too large");
        visit(&m);
        for c in m.enabled().to_vec() {
            let mut n = m.clone();
            n.step(&c).expect("enabled choice refused");
            stack.push(n);
        }
    }
    seen.len()
}
