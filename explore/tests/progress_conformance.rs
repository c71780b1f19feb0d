//! The termination oracle against the paper artifact's verdicts: 483 AXB tests × 11 progress
//! models (5313 verdicts) and `sequential_in_order_hangs`, as in `conformance/progress/
//! expected.csv` (digest §7.6 item 1). Also the per-model pass counts of the README and the
//! inclusions between models (digest §3.4).

use explore::progress::suite::{self, ExpectedRow};
use explore::progress::{ProgressModel, StrongCheck, Verdict, axb};
use std::path::{Path, PathBuf};

fn suite_dir() -> Option<PathBuf> {
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/progress");
    let dir = suite::locate(std::env::var_os(suite::ENV).as_deref(), &default);
    if dir.is_none() {
        eprintln!(
            "progress conformance suite not found (looked at ${}/progress, else {}); set {} to the \
             conformance root to run this test. Skipping.",
            suite::ENV,
            default.display(),
            suite::ENV
        );
    }
    dir
}

fn expected(dir: &Path) -> Vec<ExpectedRow> {
    let csv = std::fs::read_to_string(dir.join("expected.csv")).expect("read expected.csv");
    suite::parse_expected(&csv).expect("parse expected.csv")
}

#[test]
fn all_5313_verdicts_and_in_order_hangs_match_expected_csv() {
    let Some(dir) = suite_dir() else { return };
    let rows = expected(&dir);
    assert_eq!(rows.len(), 483, "expected.csv rows");
    let mut mismatches = Vec::new();
    let mut passes = [0usize; 11];
    let mut hangs = 0;
    for row in &rows {
        let file = dir.join("tests").join(format!("{}.txt", row.test));
        let src = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        let test = axb::parse(&file.display().to_string(), &src).unwrap_or_else(|e| panic!("{e}"));
        let oracle = test
            .oracle()
            .unwrap_or_else(|e| panic!("{}: {e}", row.test));
        for (i, model) in ProgressModel::ALL.iter().enumerate() {
            let got = oracle.verdict(*model);
            if got == Verdict::Pass {
                passes[i] += 1;
            }
            if got != row.verdicts[i] {
                mismatches.push(format!(
                    "{} {}: got {} expected {}",
                    row.test,
                    model,
                    got.letter(),
                    row.verdicts[i].letter()
                ));
            }
        }
        let seq = test.sequential_in_order_hangs();
        hangs += usize::from(seq);
        if seq != row.sequential_in_order_hangs {
            mismatches.push(format!("{} sequential_in_order_hangs: got {seq}", row.test));
        }
    }
    for (m, p) in ProgressModel::ALL.iter().zip(passes) {
        println!("{:>15}: {p:>3} P", m.name());
    }
    println!("sequential_in_order_hangs: {hangs} yes");
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    // The README's (and the paper's) totals.
    assert_eq!(passes, [0, 90, 24, 111, 122, 323, 184, 113, 221, 232, 483]);
    assert_eq!(hangs, 246);
}

/// Every F verdict comes with a lasso that replays on the AXB machine (see also the unit
/// tests in `progress_oracle.rs`); every P verdict with none. The paper's strong fixpoint and
/// the fair-end-component check (the one for machines with blocking) agree everywhere.
#[test]
fn every_fail_has_a_replayable_lasso() {
    let Some(dir) = suite_dir() else { return };
    for row in expected(&dir) {
        let file = dir.join("tests").join(format!("{}.txt", row.test));
        let src = std::fs::read_to_string(&file).expect("read test");
        let test = axb::parse(&file.display().to_string(), &src).expect("parse test");
        let oracle = test.oracle().expect("explore");
        assert_eq!(oracle.strong_check(), StrongCheck::BackwardFixpoint);
        for model in ProgressModel::ALL {
            assert_eq!(
                oracle.verdict_by(model, StrongCheck::BackwardFixpoint),
                oracle.verdict_by(model, StrongCheck::FairEndComponent),
                "{} {model}",
                row.test
            );
            let cx = oracle.counterexample(model);
            assert_eq!(
                cx.is_some(),
                oracle.verdict(model) == Verdict::Fail,
                "{} {model}",
                row.test
            );
            if let Some(cx) = cx {
                let lts = oracle.lts();
                // The stem starts at the initial state, each step is the machine's step, the cycle
                // closes.
                let mut cur = lts.initial();
                for t in cx.stem.iter().chain(&cx.cycle) {
                    assert_eq!(t.from, cur, "{} {model}: lasso is not a path", row.test);
                    let next = test
                        .step(&lts.node(t.from).state, t.unit)
                        .expect("unit live");
                    assert_eq!(
                        next,
                        lts.node(t.to).state,
                        "{} {model}: step mismatch",
                        row.test
                    );
                    cur = t.to;
                }
                assert!(
                    !cx.cycle.is_empty(),
                    "{} {model}: AXB tests never deadlock",
                    row.test
                );
                assert_eq!(
                    cur,
                    cx.loop_node(lts.initial()),
                    "{} {model}: cycle does not close",
                    row.test
                );
            }
        }
    }
}

/// Digest §3.4: pass sets nest HSA ⊆ HSA+OBE ⊆ LOBE ⊆ fair and OBE ⊆ HSA+OBE, weak ⊆ strong.
#[test]
fn pass_sets_nest_as_the_models_do() {
    let Some(dir) = suite_dir() else { return };
    let idx = |n: &str| {
        n.parse::<ProgressModel>()
            .map(ProgressModel::index)
            .expect("model")
    };
    for row in expected(&dir) {
        let pass = |n: &str| row.verdicts[idx(n)] == Verdict::Pass;
        for s in ["", "_strong"] {
            let m = |k: &str| format!("{k}{s}");
            for (lo, hi) in [
                ("hsa", "hsa_obe"),
                ("obe", "hsa_obe"),
                ("hsa_obe", "lobe"),
                ("lobe", "fair"),
            ] {
                assert!(
                    !pass(&m(lo)) || pass(&m(hi)),
                    "{}: {} passes but {} fails",
                    row.test,
                    m(lo),
                    m(hi)
                );
            }
        }
        for k in ["hsa", "obe", "hsa_obe", "lobe", "fair"] {
            assert!(
                !pass(k) || pass(&format!("{k}_strong")),
                "{}: weak {k} passes, strong fails",
                row.test
            );
        }
    }
}
