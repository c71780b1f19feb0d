//! End-to-end `cudasem fuzz`: the same report at any `--jobs` (timings aside), the JSON keys,
//! and failures that print a replay command which reproduces them.

mod common;
use common::cudasem_here as cudasem;

/// The JSON report without its timing fields.
fn untimed(out: &str) -> serde_json::Value {
    let mut j: serde_json::Value = serde_json::from_str(out).unwrap();
    let o = j.as_object_mut().unwrap();
    o.remove("seconds");
    o.remove("runs_per_second");
    j
}

#[test]
fn same_report_at_any_jobs() {
    let base = [
        "fuzz",
        "tests/kernels/histogram_global.ptx",
        "--launch",
        "tests/kernels/histogram_global.ron",
        "--runs",
        "64",
        "--seed",
        "11",
        "--format",
        "json",
    ];
    let mut reports = Vec::new();
    for jobs in ["1", "3"] {
        let mut args = base.to_vec();
        args.extend(["--jobs", jobs]);
        let (code, out, err) = cudasem(&args);
        assert_eq!(code, 0, "{out}{err}");
        reports.push(untimed(&out));
    }
    assert_eq!(reports[0], reports[1]);
    let j = &reports[0];
    assert_eq!(j["runs"], 64);
    let total: u64 = j["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["count"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 64);
    assert!(j["failures"].as_array().unwrap().is_empty());
}

#[test]
fn pct_schedules_are_accepted() {
    let (code, out, err) = cudasem(&[
        "fuzz",
        "tests/kernels/spinlock.ptx",
        "--launch",
        "tests/kernels/spinlock.ron",
        "--runs",
        "20",
        "--schedule",
        "pct:3",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("20  completed  lock=[0] counter=[12]"),
        "{out}"
    );
    assert!(out.contains("runs/s"), "{out}");
}

#[test]
fn a_livelock_is_a_step_limit_failure_with_a_replay_command() {
    let (code, out, err) = cudasem(&[
        "fuzz",
        "tests/thesis/listing_6_2.ptx",
        "--launch",
        "tests/thesis/listing_6_2.ron",
        "--runs",
        "8",
        "--max-steps",
        "300",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("8  step-limit  lock=[0]"), "{out}");
    let line = out
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cudasem replay "))
        .unwrap();
    let args: Vec<&str> = line.split_whitespace().skip(1).collect();
    let (code, out, err) = cudasem(&args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("replayed 300 choices"), "{out}");
    assert!(out.contains("the run has not ended"), "{out}");
}

/// A spin lock that starts taken: every schedule spins until the bound. The minimised
/// schedule has no preemption (one block spins alone), the raw one many; both replay.
#[test]
fn a_step_limit_failure_is_minimised_to_fewest_preemptions() {
    let base = [
        "fuzz",
        "tests/kernels/spinlock.ptx",
        "--launch",
        "tests/kernels/spinlock.ron",
        "--buffer",
        "lock:s32:1:values:1",
        "--runs",
        "4",
        "--max-steps",
        "2000",
        "--format",
        "json",
    ];
    let failure = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let (code, out, err) = cudasem(&args);
        assert_eq!(code, 1, "{out}{err}");
        let j: serde_json::Value = serde_json::from_str(&out).unwrap();
        let f = j["failures"][0].clone();
        assert_eq!(f["status"], "step-limit", "{j}");
        f
    };
    let raw = failure(&["--no-minimise"]);
    let min = failure(&[]);
    assert!(raw["preemptions"].as_u64().unwrap() > 0, "{raw}");
    assert_eq!(min["preemptions"], 0, "{min}");
    for f in [raw, min] {
        let args: Vec<String> = f["replay"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .skip(1)
            .map(str::to_string)
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = cudasem(&args);
        assert_eq!(code, 1, "{out}{err}");
        assert!(out.contains("replayed 2000 choices"), "{out}");
        assert!(out.contains("the run has not ended"), "{out}");
    }
}

/// A violated expectation's replay command is minimised as a failing status is: to a schedule
/// with fewer preemptions whose run still violates that expectation (and says how), unless
/// `--no-minimise`.
#[test]
fn violated_expectations_are_minimised() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "fuzz",
            "tests/kernels/mp/mp_weak.ptx",
            "--launch",
            "tests/kernels/mp/mp_weak.ron",
            "--expect",
            "out[0] == 0",
            "--runs",
            "40",
            "--format",
            "json",
        ];
        args.extend(extra);
        let (code, out, err) = cudasem(&args);
        assert_eq!(code, 1, "{err}");
        let j: serde_json::Value = serde_json::from_str(&out).unwrap();
        let f = j["failures"][0].clone();
        assert_eq!(f["status"], "expectation violated", "{out}");
        f
    };
    let raw = run(&["--no-minimise"]);
    let min = run(&[]);
    let (p_raw, p_min) = (
        raw["preemptions"].as_u64().unwrap(),
        min["preemptions"].as_u64().unwrap(),
    );
    assert!(
        p_min < p_raw,
        "{p_min} preemptions minimised, {p_raw} before"
    );
    assert_eq!(min["first_run"], raw["first_run"]);
    assert!(
        min["violation"]
            .as_str()
            .unwrap()
            .starts_with("`out[0] == 0` fails"),
        "{min}"
    );
    // Its replay command shows the violation.
    let replay = min["replay"].as_str().unwrap();
    let argv: Vec<String> = replay
        .split_whitespace()
        .skip(1)
        .map(|w| w.trim_matches('\'').to_string())
        .collect();
    // The quoted expectation is one argument.
    let at = argv.iter().position(|w| w == "--expect").unwrap();
    let mut args: Vec<&str> = argv[..=at].iter().map(String::as_str).collect();
    args.push("out[0] == 0");
    let (_, out, err) = cudasem(&args);
    assert!(
        out.contains("EXPECTATION VIOLATED: `out[0] == 0` fails"),
        "{replay}\n{out}\n{err}"
    );
}
