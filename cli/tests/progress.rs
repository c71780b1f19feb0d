//! `cudasem progress` end to end: text, json, `--lasso`, several files in one process, and
//! bad input (exit 2 with `file:line`). Verdicts are compared with `expected.csv` rows read at
//! test time (`$CUDASEM_CONFORMANCE/progress`, else `<workspace>/../shared/conformance/progress`;
//! tests that need the suite print a note and pass without it).

use explore::progress::suite::{self, ExpectedRow};
use explore::progress::{ProgressModel, Verdict};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cudasem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        .args(args)
        .output()
        .expect("run cudasem")
}

fn suite_dir() -> Option<PathBuf> {
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/progress");
    let dir = suite::locate(std::env::var_os(suite::ENV).as_deref(), &default);
    if dir.is_none() {
        eprintln!(
            "progress suite not found: set {} to the conformance root to run this test; skipping",
            suite::ENV
        );
    }
    dir
}

fn expected(dir: &Path) -> Vec<ExpectedRow> {
    suite::parse_expected(
        &std::fs::read_to_string(dir.join("expected.csv")).expect("read expected.csv"),
    )
    .expect("parse")
}

fn row<'a>(rows: &'a [ExpectedRow], test: &str) -> &'a ExpectedRow {
    rows.iter()
        .find(|r| r.test == test)
        .expect("test in expected.csv")
}

fn test_path(dir: &Path, test: &str) -> String {
    dir.join("tests")
        .join(format!("{test}.txt"))
        .display()
        .to_string()
}

/// The text line `cudasem progress` should print for an expected.csv row.
fn expected_line(r: &ExpectedRow) -> String {
    let mut line = format!("{}:", r.test);
    for (m, v) in ProgressModel::ALL.iter().zip(r.verdicts) {
        line += &format!(" {}={}", m.name(), v.letter());
    }
    line + &format!(
        " sequential_in_order_hangs={}",
        if r.sequential_in_order_hangs {
            "yes"
        } else {
            "no"
        }
    )
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn text_one_line_per_test() {
    let Some(dir) = suite_dir() else { return };
    let rows = expected(&dir);
    let tests = ["2t_2i_5", "3t_3i_7", "2t_4i_22"];
    let paths: Vec<String> = tests.iter().map(|t| test_path(&dir, t)).collect();
    let out = cudasem(&["progress", &paths[0], &paths[1], &paths[2]]);
    assert_eq!(out.status.code(), Some(0));
    let want: Vec<String> = tests.iter().map(|t| expected_line(row(&rows, t))).collect();
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), want);
}

/// `--format json` over the whole suite in one process: one object per line, all 5313
/// verdicts and the 483 `sequential_in_order_hangs` as in expected.csv, keys in column order.
#[test]
fn json_whole_suite_matches_expected_csv() {
    let Some(dir) = suite_dir() else { return };
    let rows = expected(&dir);
    let mut args = vec!["progress".to_string(), "--format".into(), "json".into()];
    args.extend(rows.iter().map(|r| test_path(&dir, &r.test)));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = cudasem(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), rows.len());
    for (line, r) in lines.iter().zip(&rows) {
        let v: Value = serde_json::from_str(line).expect("one JSON object per line");
        assert_eq!(v["test"], r.test.as_str());
        let verdicts = v["verdicts"].as_object().expect("verdicts object");
        let keys: Vec<&str> = verdicts.keys().map(String::as_str).collect();
        let names: Vec<&str> = ProgressModel::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(keys.len(), 11);
        for (m, want) in ProgressModel::ALL.iter().zip(r.verdicts) {
            assert_eq!(
                verdicts[m.name()],
                want.letter().to_string().as_str(),
                "{} {m}",
                r.test
            );
        }
        // Column order is kept in the text itself (serde_json's map sorts when parsing).
        let positions: Vec<usize> = names
            .iter()
            .map(|n| line.find(&format!("\"{n}\":")).expect("key present"))
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{line}");
        assert_eq!(
            v["sequential_in_order_hangs"],
            if r.sequential_in_order_hangs {
                "yes"
            } else {
                "no"
            }
        );
        assert!(v.get("lassos").is_none());
    }
}

/// `--lasso`: one readable lasso per F verdict, none for P; json lassos close their cycle.
#[test]
fn lassos_for_fail_verdicts() {
    let Some(dir) = suite_dir() else { return };
    let rows = expected(&dir);
    let test = "2t_2i_0"; // dining philosophers: fails every weak model, passes every strong one
    let r = row(&rows, test);
    let path = test_path(&dir, test);
    let out = cudasem(&["progress", "--lasso", &path]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for (m, v) in ProgressModel::ALL.iter().zip(r.verdicts) {
        let head = format!("  {}: stem: ", m.name());
        let found: Vec<&str> = text.lines().filter(|l| l.starts_with(&head)).collect();
        match v {
            Verdict::Fail => {
                assert_eq!(found.len(), 1, "{m}: {text}");
                assert!(
                    found[0].contains("; cycle: T")
                        && found[0].contains(&format!("under {}", m.name())),
                    "{}",
                    found[0]
                );
            }
            Verdict::Pass => assert!(found.is_empty(), "{m}: {text}"),
        }
    }
    let out = cudasem(&[
        "progress",
        "--lasso",
        "--format",
        "json",
        "--model",
        "hsa-obe,fair,fair-strong",
        &path,
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_str(stdout(&out).trim()).expect("json");
    let verdicts = v["verdicts"].as_object().expect("verdicts");
    assert_eq!(
        verdicts.keys().collect::<Vec<_>>(),
        ["fair", "fair_strong", "hsa_obe"]
    );
    let lassos = v["lassos"].as_object().expect("lassos");
    for (name, verdict) in verdicts {
        let model: ProgressModel = name.parse().expect("model name");
        assert_eq!(
            verdict,
            r.verdicts[model.index()].letter().to_string().as_str()
        );
        assert_eq!(lassos.contains_key(name), verdict == "F", "{name}");
    }
    for (name, l) in lassos {
        let cycle = l["cycle"].as_array().expect("cycle");
        assert!(!cycle.is_empty(), "{name}");
        assert_eq!(
            cycle.last().map(|s| &s["to"]),
            Some(&l["loop_start"]),
            "{name}: the cycle closes"
        );
        assert_eq!(l["kind"], "weak-cycle");
    }
    // Under weak fair both philosophers step forever, each owed a step.
    assert_eq!(lassos["fair"]["fair"], serde_json::json!([0, 1]));
    assert_eq!(lassos["fair"]["stepping"], serde_json::json!([0, 1]));
}

#[test]
fn malformed_file_reports_file_line_and_exits_2() {
    let dir = std::env::temp_dir().join(format!("cudasem-progress-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("bad.txt");
    std::fs::write(
        &bad,
        "THREAD0\natomic_store(0,1)\n\natomic_exch_branch(0,1,END)\n",
    )
    .expect("write");
    let good = dir.join("good.txt");
    std::fs::write(
        &good,
        "THREAD0\natomic_store(0,1)\nTHREAD1\natomic_chk_branch(0,0,0)\n",
    )
    .expect("write");
    let (bad_s, good_s) = (bad.display().to_string(), good.display().to_string());
    let out = cudasem(&["progress", &bad_s, &good_s]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{bad_s}:4: `atomic_exch_branch` takes 4 arguments, found 3"
        )),
        "{err}"
    );
    // The good file is still reported.
    assert!(
        stdout(&out).starts_with("good: unfair=F hsa=P obe=F"),
        "{}",
        stdout(&out)
    );
    let missing = dir.join("missing.txt").display().to_string();
    let out = cudasem(&["progress", &missing]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("cannot read `{missing}`")));
    let out = cudasem(&["progress", "--model", "obe3", &good_s]);
    assert_eq!(out.status.code(), Some(2), "clap usage errors exit 2");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An AXB test whose state space is far too large to finish: 8 threads of 12 exchanges each.
fn huge_test() -> PathBuf {
    let mut text = String::new();
    for t in 0..8 {
        text += &format!("THREAD{t}\n");
        for i in 0..12 {
            let target = if i < 11 {
                (i + 1).to_string()
            } else {
                "END".into()
            };
            text += &format!("atomic_exch_branch({},2,{},{target})\n", i % 4, (t + i) % 2);
        }
        text += "\n";
    }
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("progress_huge.txt");
    std::fs::write(&path, text).expect("write the test");
    path
}

/// Every bound of `progress` stops it with no verdict, exit 1, and names itself in the words
/// the other commands use: the state bound, `--timeout`, the memory budget.
#[test]
fn each_bound_stops_progress_and_says_which() {
    let huge = huge_test();
    let huge = huge.to_str().expect("utf-8 path");
    let cases: [(&[&str], &str); 3] = [
        (
            &["--max-states", "1000"],
            "stopped by the state bound (--max-states 1000): more than 1000 states",
        ),
        (
            &["--max-states", "1000000000", "--timeout", "0.3"],
            "--timeout 0.3 reached after",
        ),
        (
            &[
                "--max-states",
                "1000000000",
                "--max-memory",
                "30M",
                "--timeout",
                "120",
            ],
            "memory budget reached: --max-memory 30.0 MiB",
        ),
    ];
    for (flags, says) in cases {
        let mut args = vec!["progress", huge];
        args.extend_from_slice(flags);
        let out = cudasem(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flags:?}: {err}");
        assert!(
            err.contains(says) && err.contains("no verdict"),
            "{flags:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{flags:?}: a verdict was printed");
    }
}
