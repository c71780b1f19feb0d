//! Expectations (`expect:` in a launch file, `--expect` flags) end to end: `run` reports a
//! violated one as a failure naming the first failing element, `fuzz` counts the runs that
//! violate it and `--fail-on-divergence` makes schedule-dependent output a failure, `explore`
//! gives every outcome a witness replay and flags the outcomes that violate it, the replay
//! command shows the violation again, and bad expectations are errors with a location.

mod common;
use common::{cudasem_here as cudasem, workspace};

const VECADD: &str = "tests/kernels/vecadd.ptx";
const VECADD_EXPECT: &str = "examples/expect/vecadd.ron";
const RACE: &str = "tests/kernels/race/add_neighbour.ptx";
const RACE_EXPECT: &str = "examples/expect/race.ron";

fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// The `cudasem replay ...` command printed in `text` after `marker`, split into arguments
/// (the commands print shell-quoted arguments; these have no quotes).
fn replay_args(text: &str, marker: &str) -> Vec<String> {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("no `{marker}` in:\n{text}"));
    let line = text[at + marker.len()..]
        .trim_start()
        .lines()
        .next()
        .unwrap_or("");
    let mut args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    assert_eq!(args.first().map(String::as_str), Some("cudasem"), "{line}");
    args.remove(0);
    args
}

#[test]
fn run_checks_the_launch_files_expectations() {
    let (code, stdout, stderr) = cudasem(&["run", VECADD, "--launch", VECADD_EXPECT]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("expectation holds: `c[i] == a[i] + b[i] || i >= 100`\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("expectation holds: `sum(c) == 90100`\n"),
        "{stdout}"
    );
}

#[test]
fn run_reports_the_first_failing_element() {
    let (code, stdout, stderr) = cudasem(&[
        "run",
        VECADD,
        "--launch",
        VECADD_EXPECT,
        "--expect",
        "c[i] == a[i] + b[i]",
        "--expect",
        "c == [1000, 998]",
    ]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("EXPECTATION VIOLATED: `c[i] == a[i] + b[i]` fails at i = 100: c[100] = 0, a[100] = 100, b[100] = 700\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "EXPECTATION VIOLATED: `c == [1000, 998]` fails: len(c) = 128, len([...]) = 2\n"
        ),
        "{stdout}"
    );
    // The file's own expectations still hold.
    assert!(
        stdout.contains("expectation holds: `sum(c) == 90100`"),
        "{stdout}"
    );
    // The replay command runs the same schedule and checks the same expectations.
    let replay = replay_args(&stdout, "to reproduce:");
    assert_eq!(replay[0], "replay");
    assert!(replay.iter().any(|a| a == "--expect"), "{replay:?}");

    let (code, stdout, _) = cudasem(&[
        "run",
        VECADD,
        "--launch",
        VECADD_EXPECT,
        "--expect",
        "sum(c) == 90101",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1);
    let j = json(&stdout);
    assert_eq!(j["status"], "completed");
    let e = &j["expectations"];
    assert_eq!(e[2]["expect"], "sum(c) == 90100");
    assert_eq!(e[2]["holds"], true);
    assert_eq!(e[3]["holds"], false);
    assert_eq!(e[3]["violation"], "`sum(c) == 90101` fails: sum(c) = 90100");
    assert!(j["replay"].is_string(), "{j}");
}

#[test]
fn bad_expectations_name_where_and_what_to_do() {
    let (code, _, stderr) = cudasem(&[
        "run",
        VECADD,
        "--launch",
        VECADD_EXPECT,
        "--expect",
        "sum(c) = 1",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("error: bad --expect `sum(c) = 1`: `=` is not a comparison (at column 8)"),
        "{stderr}"
    );
    assert!(stderr.contains("help: compare with `==`"), "{stderr}");

    let (code, _, stderr) = cudasem(&[
        "run",
        VECADD,
        "--launch",
        VECADD_EXPECT,
        "--expect",
        "d[i] == 0",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown buffer `d`"), "{stderr}");
    assert!(stderr.contains("the buffers are: a, b, c"), "{stderr}");

    // In a launch file: the file, line and column of the offending character.
    let dir = common::Scratch::new("expect", "bad_file");
    let text = std::fs::read_to_string(workspace().join(VECADD_EXPECT))
        .expect("example")
        .replace("\"sum(c) == 90100\"", "\"sum(c) == 90100 &&\"");
    let ron = dir.join("bad.ron");
    std::fs::write(&ron, &text).expect("write");
    let ron = ron.display().to_string();
    let (code, _, stderr) = cudasem(&["run", VECADD, "--launch", &ron]);
    assert_eq!(code, 2, "{stderr}");
    let line = text
        .lines()
        .position(|l| l.contains("90100 &&"))
        .map(|i| i + 1)
        .expect("line");
    let col = text
        .lines()
        .nth(line - 1)
        .expect("line")
        .find('"')
        .expect("quote")
        + 2
        + 18;
    assert!(
        stderr.contains(&format!("--> {ron}:{line}:{col}")),
        "{stderr}"
    );
    assert!(
        stderr.contains("bad expectation: expected a value, found the end"),
        "{stderr}"
    );
}

#[test]
fn fuzz_counts_the_runs_that_violate_an_expectation() {
    let args = [
        "fuzz",
        RACE,
        "--launch",
        RACE_EXPECT,
        "--warp-model",
        "threads",
        "--runs",
        "40",
        "--seed",
        "3",
    ];
    let (code, stdout, stderr) = cudasem(&args);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("completed  out=[3, 3, 2]  (violates an expectation)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("expectation violated: ")
            && stdout
                .contains("`out == [1, 3, 2]` fails: out[0] = 3 (expected 1); it reproduces with:"),
        "{stdout}"
    );
    // The printed replay shows the violation again.
    let replay = replay_args(&stdout, "it reproduces with:");
    let replay: Vec<&str> = replay.iter().map(String::as_str).collect();
    let (code, out, err) = cudasem(&replay);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("EXPECTATION VIOLATED: `out == [1, 3, 2]` fails: out[0] = 3 (expected 1)"),
        "{out}"
    );

    let mut with_json = args.to_vec();
    with_json.extend(["--format", "json"]);
    let (_, stdout, _) = cudasem(&with_json);
    let j = json(&stdout);
    let failures = j["failures"].as_array().expect("failures");
    assert_eq!(failures.len(), 1, "{j}");
    assert_eq!(failures[0]["status"], "expectation violated");
    let violating: u64 = j["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .filter(|o| o["violations"].as_array().is_some_and(|v| !v.is_empty()))
        .map(|o| o["count"].as_u64().expect("count"))
        .sum();
    assert_eq!(failures[0]["count"].as_u64(), Some(violating));
    assert!(violating > 0 && violating < 40, "{j}");
    // Outcome values are JSON numbers, as in `run`.
    for o in j["outcomes"].as_array().expect("outcomes") {
        let values = o["data"][0][1].as_array().expect("values");
        assert!(values.iter().all(serde_json::Value::is_i64), "{o}");
    }
}

#[test]
fn fail_on_divergence_makes_schedule_dependent_output_a_failure() {
    let base = [
        "fuzz",
        RACE,
        "--launch",
        RACE_EXPECT,
        "--warp-model",
        "threads",
        "--runs",
        "40",
        "--expect",
        "out[1] == 3",
    ];
    // Without the expectation file's own, and without the flag, two outcomes are no failure.
    let dir = common::Scratch::new("expect", "divergence");
    let plain = std::fs::read_to_string(workspace().join(RACE_EXPECT))
        .expect("example")
        .replace("expect: [\"out == [1, 3, 2]\"],", "");
    let ron = dir.join("race.ron");
    std::fs::write(&ron, plain).expect("write");
    let ron = ron.display().to_string();
    let mut args = base.to_vec();
    args[3] = &ron;
    let (code, stdout, stderr) = cudasem(&args);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("outcomes (2 distinct)"), "{stdout}");
    args.push("--fail-on-divergence");
    let (code, stdout, _) = cudasem(&args);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("DIVERGENCE: 2 distinct outcomes"),
        "{stdout}"
    );
    // Each outcome with the replay of its first run.
    assert_eq!(stdout.matches("      first run ").count(), 2, "{stdout}");
}

#[test]
fn explore_gives_every_outcome_a_witness_and_flags_violations() {
    for search in ["full", "outcomes"] {
        let (code, stdout, stderr) = cudasem(&[
            "explore",
            RACE,
            "--launch",
            RACE_EXPECT,
            "--warp-model",
            "threads",
            "--search",
            search,
            "--format",
            "json",
        ]);
        assert_eq!(code, 1, "{search}: {stdout}{stderr}");
        let j = json(&stdout);
        let outcomes = j["outcomes"].as_array().expect("outcomes");
        assert_eq!(outcomes.len(), 2, "{j}");
        for o in outcomes {
            let replay = o["replay"].as_str().expect("every outcome has a witness");
            assert!(replay.starts_with("cudasem replay "), "{replay}");
            let out = &o["data"][0][1];
            let violated = !o["violations"].as_array().expect("violations").is_empty();
            // JSON outcome values are numbers.
            assert_eq!(violated, out[0] != 1, "{o}");
            assert!(out[0].is_u64(), "{o}");
            // The witness reaches this outcome, and its replay says whether it violates.
            let args: Vec<&str> = replay.split_whitespace().skip(1).collect();
            let (code, text, err) = cudasem(&args);
            assert_eq!(code, if violated { 1 } else { 0 }, "{text}{err}");
            assert!(
                text.contains(&format!("[  0] {}", out[0]))
                    || text.contains(&format!("[0] {}", out[0])),
                "{text}"
            );
        }
    }
    let (_, text, _) = cudasem(&[
        "explore",
        RACE,
        "--launch",
        RACE_EXPECT,
        "--warp-model",
        "threads",
    ]);
    assert_eq!(
        text.matches("    witness: cudasem replay ").count(),
        2,
        "{text}"
    );
    assert!(
        text.contains(
            "    EXPECTATION VIOLATED: `out == [1, 3, 2]` fails: out[0] = 3 (expected 1)\n"
        ),
        "{text}"
    );
}

#[test]
fn commands_that_check_no_expectations_refuse_the_flag() {
    for command in ["check", "debug"] {
        let (code, _, stderr) = cudasem(&[
            command,
            RACE,
            "--launch",
            RACE_EXPECT,
            "--expect",
            "out[0] == 1",
        ]);
        assert_eq!(code, 2, "{command}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "`cudasem {command}` does not check expectations (--expect)"
            )),
            "{command}: {stderr}"
        );
    }
    // The launch file's own `expect:` section does not stop them.
    let (code, _, stderr) = cudasem(&["check", VECADD, "--launch", VECADD_EXPECT]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn replaying_a_trace_file_checks_expect_flags() {
    let dir = common::Scratch::new("expect", "trace");
    let trace = dir.join("t.jsonl").display().to_string();
    let (code, _, stderr) = cudasem(&["run", VECADD, "--launch", VECADD_EXPECT, "--trace", &trace]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = cudasem(&["replay", &trace, "--expect", "sum(c) == 90100"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("expectation holds: `sum(c) == 90100`"),
        "{stdout}"
    );
    let (code, stdout, stderr) = cudasem(&["replay", &trace, "--expect", "c[99] == 0"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("EXPECTATION VIOLATED: `c[99] == 0` fails: c[99] = 802"),
        "{stdout}"
    );
    let (code, _, stderr) = cudasem(&["replay", &trace, "--expect", "z[0] == 0"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("bad --expect `z[0] == 0`: unknown buffer `z`"),
        "{stderr}"
    );
}

#[test]
fn snapshots_of_a_violated_run_and_a_bad_launch_file() {
    // A schedule under which thread 0 reads A[1] after thread 1 rewrote it.
    let (code, stdout, stderr) = cudasem(&[
        "run",
        RACE,
        "--launch",
        RACE_EXPECT,
        "--warp-model",
        "threads",
        "--schedule",
        "random:6",
    ]);
    assert_eq!(code, 1, "{stderr}");
    insta::assert_snapshot!("run_violated", stdout);

    let dir = common::Scratch::new("expect", "snapshot");
    let text = "(\n    kernel: \"vecadd\",\n    grid: (1, 1, 1),\n    block: (4, 1, 1),\n    buffers: { \"c\": (type: \"s32\", len: 4) },\n    args: [Buffer(\"c\"), Buffer(\"c\"), Buffer(\"c\"), Scalar(type: \"s32\", value: 4)],\n    expect: [\"c[0] == 0\", \"sum(c) => 3\"],\n)\n";
    std::fs::write(dir.join("bad.ron"), text).expect("write");
    let ptx = workspace().join(VECADD).display().to_string();
    let (code, _, stderr) = common::cudasem_in(&dir, &["run", &ptx, "--launch", "bad.ron"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("bad_launch_file_expectation", stderr);
}
