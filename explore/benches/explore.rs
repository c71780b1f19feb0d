//! Exploration throughput: states per second of the stateful search (goal: 500,000 per core
//! on litmus-size kernels), and the whole translated AXB suite (483 tests explored in the
//! blocks layout, all 11 verdicts each: 5313 verdicts).

use explore::axb_ptx::{Layout, Read, launch, translate};
use explore::progress::{ProgressModel, axb, suite};
use explore::{Level, Limits, explore};
use scheduler::outcome::Observe;
use semantics::machine::{Machine, MachineConfig, WarpModel};
use std::path::Path;
use std::sync::Arc;

fn main() {
    divan::main();
}

fn machine(test: &axb::AxbTest, layout: Layout, model: WarpModel) -> Machine {
    let text = translate(test, layout, Read::Volatile);
    let parsed = ptx_parser::parse(&text);
    let program = semantics::load(&parsed.module, &text).expect("loads").0;
    let launch = launch(test, layout);
    let config = MachineConfig {
        warp_model: model,
        ..MachineConfig::default()
    };
    Machine::new(Arc::new(program), &launch, &config).expect("launches")
}

fn tests() -> Vec<axb::AxbTest> {
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/progress");
    let Some(dir) = suite::locate(std::env::var_os(suite::ENV).as_deref(), &default) else {
        return Vec::new();
    };
    let mut files: Vec<_> = std::fs::read_dir(dir.join("tests"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .filter_map(|f| {
            let src = std::fs::read_to_string(f).ok()?;
            axb::parse(&f.display().to_string(), &src).ok()
        })
        .collect()
}

/// A three-thread test in the blocks layout: states explored per iteration are printed once.
#[divan::bench(sample_count = 10)]
fn explore_3t_blocks(bencher: divan::Bencher) {
    let t = tests()
        .into_iter()
        .rev()
        .find(|t| t.thread_count() == 3)
        .unwrap_or_else(|| {
            axb::parse(
                "3t",
                "THREAD0\natomic_exch_branch(0,1,1,0)\nTHREAD1\natomic_exch_branch(0,0,0,0)\nTHREAD2\natomic_exch_branch(0,1,1,0)\n",
            )
            .expect("parses")
        });
    let m = machine(&t, Layout::Blocks, WarpModel::SimtStack);
    let x = explore(&m, Level::Blocks, &Observe::default(), Limits::default()).expect("explores");
    eprintln!(
        "{}: {} states, {} machine states, {} transitions",
        t.name,
        x.states(),
        x.machine_states,
        x.transitions()
    );
    bencher.bench_local(|| explore(&m, Level::Blocks, &Observe::default(), Limits::default()));
}

/// All 483 tests in the blocks layout with all 11 verdicts (5313 verdicts).
#[divan::bench(sample_count = 1, sample_size = 1)]
fn translated_suite_5313_verdicts(bencher: divan::Bencher) {
    let tests = tests();
    let machines: Vec<Machine> = tests
        .iter()
        .map(|t| machine(t, Layout::Blocks, WarpModel::SimtStack))
        .collect();
    bencher.bench_local(|| {
        let mut states = 0;
        let mut fails = 0;
        for m in &machines {
            let x = explore(m, Level::Blocks, &Observe::default(), Limits::default())
                .expect("explores");
            states += x.states();
            for model in ProgressModel::ALL {
                fails += (x.verdict(model) == Some(explore::progress::Verdict::Fail)) as usize;
            }
        }
        eprintln!(
            "{} tests, {states} states, {fails} F verdicts",
            machines.len()
        );
    });
}
