//! Threads, shards and merge (issue 14, Builds 4 and 5; docs/sharding.md): `--jobs` changes no
//! answer of `explore` (both searches) or `litmus --progress`; `fuzz --shard I/N` and `explore
//! --search outcomes --shard I/N` write reports that `cudasem merge` combines into exactly what
//! the unsharded run prints (text and JSON, timings aside); bad shards and reports are refused
//! with exit 2.

mod common;

use common::{Scratch, cudasem_here, cudasem_in, workspace};
use serde_json::Value;

const MP: [&str; 3] = [
    "tests/kernels/mp/mp_weak.ptx",
    "--launch",
    "tests/kernels/mp/mp_weak.ron",
];
const SPIN: [&str; 3] = [
    "tests/kernels/spinlock.ptx",
    "--launch",
    "tests/kernels/spinlock.ron",
];

fn args<'a>(head: &[&'a str], kernel: &[&'a str], tail: &[&'a str]) -> Vec<&'a str> {
    head.iter()
        .chain(kernel)
        .chain(tail)
        .copied()
        .collect::<Vec<_>>()
}

/// The text report without its timings (`... in 0.123 s (4567 states/s)`, `... in 0.1 s: 30
/// runs/s`): the only part that may differ between runs.
fn untimed_text(s: &str) -> String {
    s.lines()
        .map(|l| match l.rfind(" in ") {
            Some(i) if l.ends_with("/s)") || l.ends_with("/s") => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The JSON report without its timing fields, at any depth.
fn untimed_json(s: &str) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for k in ["seconds", "states_per_second", "runs_per_second"] {
                    m.remove(k);
                }
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v: Value = serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"));
    strip(&mut v);
    v
}

/// Runs `cudasem ARGS` from the workspace root, expecting exit `code`; its stdout.
fn ok(args: &[&str], code: i32) -> String {
    let (rc, out, err) = cudasem_here(args);
    assert_eq!(rc, code, "cudasem {args:?}: {out}\n{err}");
    out
}

#[test]
fn jobs_change_no_answer_of_explore() {
    for extra in [
        vec!["--search", "full"],
        vec!["--search", "full", "--progress", "unfair"],
        vec!["--search", "outcomes", "--split-depth", "2"],
    ] {
        let base = args(&["explore"], &MP, &extra);
        let one = ok(&args(&base, &[], &["--jobs", "1", "--format", "json"]), 0);
        let two = ok(&args(&base, &[], &["--jobs", "2", "--format", "json"]), 0);
        let j1 = untimed_json(&one);
        assert!(
            j1["outcomes"].as_array().is_some_and(|o| o.len() > 1),
            "several outcomes: {one}"
        );
        assert_eq!(j1, untimed_json(&two), "{extra:?}");
    }
    // The spin lock may not terminate unfairly: the same lasso at any --jobs.
    let base = args(
        &["explore"],
        &SPIN,
        &["--grid", "2", "--progress", "unfair"],
    );
    let one = ok(&args(&base, &[], &["--jobs", "1", "--format", "json"]), 1);
    let two = ok(&args(&base, &[], &["--jobs", "2", "--format", "json"]), 1);
    assert!(!untimed_json(&one)["lasso"].is_null(), "{one}");
    assert_eq!(untimed_json(&one), untimed_json(&two));
}

#[test]
fn litmus_progress_gives_the_verdict_and_a_lasso_that_replays() {
    let file = "examples/litmus/CADP-4_simple.litmus";
    let scratch = Scratch::new("shards", "litmus");
    let dir = scratch.display().to_string();
    // P0 spins until P1's store: it may spin forever unfairly, never under fairness.
    let fair = ok(&["litmus", file, "--progress", "fair"], 0);
    assert!(
        fair.contains("Termination under fair (weak): terminates (P)"),
        "{fair}"
    );
    assert!(!fair.contains("lasso"), "{fair}");
    let unfair = ok(
        &["litmus", file, "--progress", "unfair", "--emit-ptx", &dir],
        0,
    );
    assert!(
        unfair.contains("Termination under unfair: may not terminate (F)"),
        "{unfair}"
    );
    assert!(unfair.contains("  cycle of "), "{unfair}");
    let replay = unfair
        .lines()
        .find_map(|l| l.split_once("replay (checks that the cycle closes): "))
        .map(|(_, cmd)| cmd.to_string())
        .expect("a replay command");
    let argv: Vec<&str> = replay.split_whitespace().skip(1).collect();
    let (rc, out, err) = cudasem_in(&workspace(), &argv);
    assert!(
        out.contains("the cycle closes"),
        "{replay}: {rc}\n{out}\n{err}"
    );
    // JSON, and the same answer at any --jobs.
    let j = |jobs: &str| {
        untimed_json(&ok(
            &[
                "litmus",
                file,
                "--progress",
                "unfair",
                "--format",
                "json",
                "--jobs",
                jobs,
            ],
            0,
        ))
    };
    let (one, two) = (j("1"), j("2"));
    assert_eq!(one["termination"]["terminates"], false, "{one}");
    assert_eq!(one["termination"]["verdict"], "F");
    assert!(one["termination"]["lasso"]["cycle"].is_array());
    assert_eq!(one, two);
    // Without --progress: no termination verdict.
    let none = untimed_json(&ok(&["litmus", file, "--format", "json"], 0));
    assert!(none["termination"].is_null());
    // A loop-free test terminates under every model; an unknown model is bad usage.
    let mp = ok(
        &[
            "litmus",
            "examples/litmus/MP-gpu.litmus",
            "--progress",
            "obe-strong",
        ],
        0,
    );
    assert!(mp.contains("terminates (P)"), "{mp}");
    let (rc, _, err) = cudasem_here(&["litmus", file, "--progress", "sometimes"]);
    assert_eq!(rc, 2, "{err}");
}

/// Runs `head... --shard i/n --report DIR/shard-i.json` for each shard, then `cudasem merge`
/// (text and JSON), and compares with the unsharded command's output.
fn merge_equals_unsharded(command: &[&str], n: usize, code: i32) {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let scratch = Scratch::new("shards", &format!("merge-{call}"));
    let mut reports = Vec::new();
    for i in 0..n {
        let shard = format!("{i}/{n}");
        let report = scratch
            .join(format!("shard-{i}.json"))
            .display()
            .to_string();
        let (rc, out, err) = cudasem_here(&args(
            command,
            &[],
            &["--shard", &shard, "--report", &report],
        ));
        assert!(
            rc == 0 || rc == 1,
            "{command:?} {shard}: {rc}\n{out}\n{err}"
        );
        assert!(out.contains("cudasem merge"), "{out}");
        reports.push(report);
    }
    // Any order.
    reports.reverse();
    let mut merge = vec!["merge"];
    merge.extend(reports.iter().map(String::as_str));
    let whole = ok(command, code);
    let merged = ok(&merge, code);
    assert_eq!(untimed_text(&merged), untimed_text(&whole), "{command:?}");
    let whole = ok(&args(command, &[], &["--format", "json"]), code);
    let merged = ok(&args(&merge, &[], &["--format", "json"]), code);
    assert_eq!(untimed_json(&merged), untimed_json(&whole), "{command:?}");
}

#[test]
fn merged_fuzz_shards_print_the_unsharded_campaign() {
    // Several outcomes, each with its first run's replay command.
    merge_equals_unsharded(
        &args(
            &["fuzz"],
            &MP,
            &["--runs", "200", "--seed", "5", "--fail-on-divergence"],
        ),
        3,
        1,
    );
    // Step-limit failures (minimised), and a violated expectation.
    merge_equals_unsharded(
        &args(
            &["fuzz"],
            &SPIN,
            &["--grid", "2", "--runs", "40", "--max-steps", "120"],
        ),
        3,
        1,
    );
    merge_equals_unsharded(
        &args(&["fuzz"], &MP, &["--runs", "60", "--expect", "out[1] == 1"]),
        3,
        1,
    );
    // More shards than runs: the empty shards merge too.
    merge_equals_unsharded(&args(&["fuzz"], &MP, &["--runs", "2"]), 3, 0);
}

#[test]
fn merged_outcomes_shards_print_the_unsharded_search() {
    merge_equals_unsharded(
        &args(
            &["explore"],
            &MP,
            &["--search", "outcomes", "--split-depth", "2"],
        ),
        3,
        0,
    );
    merge_equals_unsharded(
        &args(
            &["explore"],
            &SPIN,
            &["--grid", "2", "--search", "outcomes", "--split-depth", "3"],
        ),
        3,
        0,
    );
    // Outcomes that violate an expectation: found by the shards, printed by the merge.
    merge_equals_unsharded(
        &args(
            &["explore"],
            &MP,
            &[
                "--search",
                "outcomes",
                "--split-depth",
                "1",
                "--expect",
                "out == [1, 1]",
            ],
        ),
        2,
        1,
    );
}

#[test]
fn bad_shards_and_reports_are_refused() {
    let scratch = Scratch::new("shards", "bad");
    let report = |name: &str| scratch.join(name).display().to_string();
    let fuzz = |seed: &str, shard: &str, file: &str| {
        cudasem_here(&args(
            &["fuzz"],
            &MP,
            &[
                "--runs", "20", "--seed", seed, "--shard", shard, "--report", file,
            ],
        ))
    };
    for shard in ["3/3", "0/0", "x/2", "1"] {
        let (rc, _, err) = fuzz("1", shard, &report("x.json"));
        assert_eq!(rc, 2, "{shard}: {err}");
        assert!(err.contains("expected I/N with 0 <= I < N"), "{err}");
    }
    // --shard without --report, and on the full search.
    let (rc, _, err) = cudasem_here(&args(&["fuzz"], &MP, &["--shard", "0/2"]));
    assert_eq!(rc, 2, "{err}");
    let (rc, _, err) = cudasem_here(&args(
        &["explore"],
        &MP,
        &["--shard", "0/2", "--report", &report("y.json")],
    ));
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("--search outcomes"), "{err}");

    let (a0, a1, a2, b1) = (
        report("a0.json"),
        report("a1.json"),
        report("a2.json"),
        report("b1.json"),
    );
    for (shard, file) in [("0/3", &a0), ("1/3", &a1), ("2/3", &a2)] {
        assert_eq!(fuzz("1", shard, file).0, 0);
    }
    assert_eq!(fuzz("2", "1/3", &b1).0, 0);
    let merge = |files: &[&str]| {
        let mut argv = vec!["merge"];
        argv.extend(files);
        cudasem_here(&argv)
    };
    let refused = |files: &[&str], says: &str| {
        let (rc, out, err) = merge(files);
        assert_eq!(rc, 2, "{files:?}: {out}\n{err}");
        assert!(err.contains(says), "{files:?}: {err}");
        assert!(out.is_empty(), "{out}");
    };
    assert_eq!(merge(&[&a0, &a1, &a2]).0, 0);
    refused(&[&a0, &a2], "shard 1/3 is missing");
    refused(&[&a0, &a1, &a1, &a2], "shard 1/3 is given twice");
    refused(&[&a0, &b1, &a2], "reports of different runs");
    refused(&[&a0, &a1, &report("none.json")], "cannot read the report");
    let corrupt = report("corrupt.json");
    std::fs::write(
        &corrupt,
        "{\"format\": \"cudasem shard report 1\", \"argv\": [",
    )
    .unwrap();
    refused(&[&a0, &a1, &corrupt], "is not a cudasem shard report");
    std::fs::write(&corrupt, "[1, 2, 3]\n").unwrap();
    refused(&[&corrupt], "is not a cudasem shard report");
    // A report of the other command.
    let o1 = report("o1.json");
    let (rc, _, err) = cudasem_here(&args(
        &["explore"],
        &MP,
        &[
            "--search",
            "outcomes",
            "--split-depth",
            "1",
            "--shard",
            "1/3",
            "--report",
            &o1,
        ],
    ));
    assert_eq!(rc, 0, "{err}");
    refused(&[&a0, &o1, &a2], "reports of different runs");
}

#[test]
fn merge_refuses_a_kernel_changed_since_the_shards_ran() {
    let scratch = Scratch::new("shards", "changed");
    let ws = workspace();
    for f in ["mp_weak.ptx", "mp_weak.ron"] {
        std::fs::copy(ws.join("tests/kernels/mp").join(f), scratch.join(f)).unwrap();
    }
    let run = |shard: &str| {
        cudasem_in(
            &scratch,
            &[
                "fuzz",
                "mp_weak.ptx",
                "--launch",
                "mp_weak.ron",
                "--runs",
                "10",
                "--shard",
                shard,
                "--report",
                &format!("r{}.json", &shard[..1]),
            ],
        )
    };
    assert_eq!(run("0/2").0, 0);
    assert_eq!(run("1/2").0, 0);
    assert_eq!(cudasem_in(&scratch, &["merge", "r0.json", "r1.json"]).0, 0);
    let ron = std::fs::read_to_string(scratch.join("mp_weak.ron")).unwrap();
    std::fs::write(scratch.join("mp_weak.ron"), format!("// changed\n{ron}")).unwrap();
    let (rc, _, err) = cudasem_in(&scratch, &["merge", "r0.json", "r1.json"]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("not the one the shards ran"), "{err}");
}
