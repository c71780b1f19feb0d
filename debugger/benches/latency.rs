//! Debugger latencies after a long run: one `step`, and `back 1`, each after 1 million steps
//! (goals: under 10 ms and under 100 ms). The kernel spins in 4 warps of 32 lanes, so the
//! session holds a million-entry choice log and its bounded snapshots.

use debugger::{Options, Session};
use semantics::machine::{ArgValue, BufferSpec, LaunchConfig, MachineConfig};
use std::sync::Arc;

const SPIN: &str = "
.version 6.0
.target sm_70
.address_size 64
.visible .entry spin(.param .u64 spin_param_0)
{
	.reg .pred 	%p;
	.reg .u32 	%r;
	mov.u32 	%r, 0;
LOOP:
	add.u32 	%r, %r, 1;
	setp.ne.u32 	%p, %r, 0;
	@%p bra 	LOOP;
	ret;
}
";

const STEPS: u64 = 1_000_000;

fn session_after_a_million_steps() -> Session {
    let parsed = ptx_parser::parse(SPIN);
    let (program, _) = semantics::load(&parsed.module, SPIN).expect("the spin kernel loads");
    let launch = LaunchConfig {
        kernel: Some("spin".into()),
        grid: [1, 1, 1],
        block: [128, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![BufferSpec {
            name: "unused".into(),
            elem: ptx_parser::ScalarType::U32,
            bytes: vec![0; 4],
        }],
        args: vec![ArgValue::Buffer(0)],
        globals: vec![],
        extern_values: Vec::new(),
    };
    let mut s = Session::new(
        Arc::new(program),
        launch,
        MachineConfig::default(),
        Options::default(),
    )
    .expect("the launch fits");
    s.handle(&format!("step {STEPS}"));
    assert_eq!(s.step_count(), STEPS);
    s
}

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 50)]
fn step_after_1m_steps(bencher: divan::Bencher) {
    let mut s = session_after_a_million_steps();
    bencher.bench_local(|| s.handle("step"));
}

#[divan::bench(sample_count = 50)]
fn back_1_after_1m_steps(bencher: divan::Bencher) {
    let mut s = session_after_a_million_steps();
    // Each sample goes back one step and forward again, so it always starts at 1M steps.
    bencher.bench_local(|| {
        s.handle("back 1");
        s.handle("step");
    });
}
