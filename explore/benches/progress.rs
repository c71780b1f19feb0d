//! Time for the whole progress conformance matrix: 483 AXB tests × 11 models = 5313 verdicts
//! (explore each test's LTS once, then every model's check), plus the same with a lasso for
//! every F verdict. Data: `$CUDASEM_CONFORMANCE/progress`, else
//! `<workspace>/../shared/conformance/progress`; without it the benches time an empty suite.
//!
//! `cargo bench -p scheduler --bench progress`

use explore::progress::axb::{self, AxbTest};
use explore::progress::{ProgressModel, Verdict, suite};
use std::path::Path;
use std::sync::OnceLock;

fn main() {
    divan::main();
}

fn tests() -> &'static [AxbTest] {
    static TESTS: OnceLock<Vec<AxbTest>> = OnceLock::new();
    TESTS.get_or_init(|| {
        let default =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/progress");
        let Some(dir) = suite::locate(std::env::var_os(suite::ENV).as_deref(), &default) else {
            eprintln!(
                "progress suite not found: set {} (timing an empty suite)",
                suite::ENV
            );
            return Vec::new();
        };
        let mut files: Vec<_> = std::fs::read_dir(dir.join("tests"))
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "txt"))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
            .iter()
            .filter_map(|p| {
                std::fs::read_to_string(p)
                    .ok()
                    .and_then(|src| axb::parse(&p.display().to_string(), &src).ok())
            })
            .collect()
    })
}

/// All 5313 verdicts (483 explorations, 5313 checks).
#[divan::bench]
fn all_verdicts() -> usize {
    tests()
        .iter()
        .filter_map(|t| t.oracle().ok())
        .map(|o| o.verdicts().iter().filter(|v| **v == Verdict::Pass).count())
        .sum()
}

/// All verdicts plus a lasso for each of the F ones (what `cudasem progress --lasso` does).
#[divan::bench]
fn all_verdicts_with_lassos() -> usize {
    tests()
        .iter()
        .filter_map(|t| t.oracle().ok())
        .map(|o| {
            ProgressModel::ALL
                .iter()
                .filter_map(|m| o.counterexample(*m))
                .map(|cx| cx.cycle.len())
                .sum::<usize>()
        })
        .sum()
}

/// `sequential_in_order_hangs` for all 483 tests.
#[divan::bench]
fn sequential_in_order() -> usize {
    tests()
        .iter()
        .filter(|t| t.sequential_in_order_hangs())
        .count()
}
