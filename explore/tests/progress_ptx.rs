//! The AXB progress tests translated to PTX (`explore::axb_ptx`) and explored on the CUDA
//! machine (progress digest §7.6 item 2):
//! * blocks layout (each test thread a block of one thread), `--level blocks`: all 11 verdicts
//!   of every test equal `expected.csv`;
//! * lanes layout (test threads = lanes of one warp) under the SIMT stack: exactly the tests
//!   marked `sequential_in_order_hangs` fail to terminate (under `fair` at lane level);
//! * lanes layout under ITS, `fair` at lane level: exactly the tests whose weak `fair` verdict
//!   is F fail.
//!
//! The whole suite runs (483 tests, three layouts); reads are `ld.volatile.global` in the
//! blocks layout and atomics in the lanes layouts, so both translations are exercised.

use explore::axb_ptx::{Layout, Read, launch, translate};
use explore::progress::suite::{self, ExpectedRow};
use explore::progress::{ModelKind, ProgressModel, Strength, Verdict, axb};
use explore::{Level, Limits, explore};
use scheduler::outcome::Observe;
use semantics::machine::{Machine, MachineConfig, WarpModel};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn suite_dir() -> Option<PathBuf> {
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/progress");
    let dir = suite::locate(std::env::var_os(suite::ENV).as_deref(), &default);
    if dir.is_none() {
        eprintln!(
            "progress conformance suite not found; set {} to the conformance root. Skipping.",
            suite::ENV
        );
    }
    dir
}

fn machine(test: &axb::AxbTest, layout: Layout, read: Read, model: WarpModel) -> Machine {
    let text = translate(test, layout, read);
    let parsed = ptx_parser::parse(&text);
    assert!(
        !parsed.has_errors(),
        "{}: {:?}\n{text}",
        test.name,
        parsed.diagnostics
    );
    let program = semantics::load(&parsed.module, &text)
        .unwrap_or_else(|d| panic!("{}: {d:?}\n{text}", test.name))
        .0;
    let launch = launch(test, layout);
    let config = MachineConfig {
        warp_model: model,
        ..MachineConfig::default()
    };
    Machine::new(Arc::new(program), &launch, &config).unwrap()
}

#[test]
fn translated_suite_matches_expected_csv() {
    let Some(dir) = suite_dir() else { return };
    let csv = std::fs::read_to_string(dir.join("expected.csv")).unwrap();
    let rows: Vec<ExpectedRow> = suite::parse_expected(&csv).unwrap();
    assert_eq!(rows.len(), 483);
    let fair = ProgressModel::new(ModelKind::Fair, Strength::Weak);
    let observe = Observe::default();
    let mut mismatches = Vec::new();
    let (mut simt_hangs, mut its_fails) = (0, 0);
    for row in &rows {
        let file = dir.join("tests").join(format!("{}.txt", row.test));
        let src = std::fs::read_to_string(&file).unwrap();
        let test = axb::parse(&row.test, &src).unwrap();

        let m = machine(&test, Layout::Blocks, Read::Volatile, WarpModel::SimtStack);
        let x = explore(&m, Level::Blocks, &observe, Limits::default()).unwrap();
        for (i, model) in ProgressModel::ALL.iter().enumerate() {
            let got = x.verdict(*model);
            if got != Some(row.verdicts[i]) {
                mismatches.push(format!(
                    "{} blocks {model}: got {got:?}, expected {:?}",
                    row.test, row.verdicts[i]
                ));
            }
        }

        let m = machine(&test, Layout::Lanes, Read::Atomic, WarpModel::SimtStack);
        let x = explore(&m, Level::Lanes, &observe, Limits::default()).unwrap();
        let hangs = x.verdict(fair) == Some(Verdict::Fail);
        simt_hangs += hangs as usize;
        if hangs != row.sequential_in_order_hangs {
            mismatches.push(format!(
                "{} lanes simt-stack: hangs {hangs}, expected {}",
                row.test, row.sequential_in_order_hangs
            ));
        }

        let m = machine(&test, Layout::Lanes, Read::Atomic, WarpModel::Its);
        let x = explore(&m, Level::Lanes, &observe, Limits::default()).unwrap();
        let got = x.verdict(fair);
        its_fails += (got == Some(Verdict::Fail)) as usize;
        let want = row.verdicts[fair.index()];
        if got != Some(want) {
            mismatches.push(format!(
                "{} lanes its fair: got {got:?}, expected {want:?}",
                row.test
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(40)].join("\n")
    );
    assert_eq!(simt_hangs, 246);
    assert_eq!(its_fails, 160);
}
