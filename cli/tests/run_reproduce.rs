//! End-to-end: every failing `cudasem run` prints a `cudasem replay ...` command, and running
//! that command reproduces the same failure (status, step count, error kind, printed buffers).
//! Covers each failure kind (step limit, out-of-bounds, deadlock, trap), short schedules
//! (compact string inline) and long ones (a trace file), and every policy family of
//! `--schedule` (random, pct, progress-model, replay:FILE).

use std::path::Path;

mod common;
use common::{cudasem_in as cudasem, workspace};

fn scratch(name: &str, files: &[(&str, &str)]) -> common::Scratch {
    let dir = common::Scratch::new("reproduce", name);
    for (file, text) in files {
        std::fs::write(dir.join(file), text).expect("write scratch file");
    }
    dir
}

fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// The words of the `to reproduce:` line (the printed arguments need no shell quoting here):
/// `cudasem replay ...`, or for a schedule too long to print, the deterministic `cudasem run`
/// command itself.
fn reproduce_line(stdout: &str) -> Vec<String> {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("to reproduce: "))
        .unwrap_or_else(|| panic!("no reproduce line in:\n{stdout}"));
    // The run command is followed by advice in parentheses.
    let line = line.split("  (").next().unwrap_or(line);
    assert!(
        line.starts_with("cudasem replay ") || line.starts_with("cudasem run "),
        "not a replay command: {line}"
    );
    line.split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// Runs `cudasem run ARGS` (text, then JSON), runs the printed replay command, and checks that
/// it ends the same way. Returns the replay command's words.
fn failure_reproduces(dir: &Path, args: &[&str], status: &str) -> Vec<String> {
    let (code, text, err) = cudasem(dir, args);
    assert_eq!(code, 1, "{text}{err}");
    let replay = reproduce_line(&text);

    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let (_, out, _) = cudasem(dir, &json_args);
    let run = json(&out);
    assert_eq!(run["status"], status, "{run}");
    let printed = run["replay"].as_str().unwrap_or_default();
    assert_eq!(
        printed.split("  (").next(),
        Some(&*replay_text(&replay)),
        "{run}"
    );

    let mut replay_args: Vec<&str> = replay.iter().map(String::as_str).collect();
    replay_args.extend(["--format", "json"]);
    let (code, out, err) = cudasem(dir, &replay_args);
    assert_eq!(code, 1, "replay of a failure exits 1: {out}{err}");
    let r = json(&out);
    let again = if replay[0] == "run" {
        &r
    } else {
        assert_eq!(r["divergence"], serde_json::Value::Null, "{r}");
        assert_eq!(r["replayed"], run["steps"], "{r}");
        &r["run"]
    };
    for key in ["status", "steps", "error", "deadlock", "buffers"] {
        assert_eq!(
            again[key], run[key],
            "`{key}` differs: run {run}, replay {again}"
        );
    }
    replay
}

fn replay_text(words: &[String]) -> String {
    format!("cudasem {}", words.join(" "))
}

const SPINLOCK: [&str; 6] = [
    "run",
    "tests/kernels/spinlock.ptx",
    "--launch",
    "tests/kernels/spinlock.ron",
    "--buffer",
    "lock:s32:1:values:1",
];

#[test]
fn a_step_limit_under_each_policy_family_reproduces() {
    let ws = workspace();
    for (policy, steps, inline) in [
        // 20000 random choices compress badly: the run command itself (no trace file).
        ("random:7", "20000", Some(false)),
        // PCT keeps running one warp, round-robin repeats itself: short compact strings.
        ("pct:3:2", "3000", Some(true)),
        ("round-robin", "3000", Some(true)),
        ("fair@blocks:1", "3000", None),
    ] {
        let mut args = SPINLOCK.to_vec();
        args.extend(["--max-steps", steps, "--schedule", policy]);
        let replay = failure_reproduces(&ws, &args, "step_limit");
        if let Some(inline) = inline {
            assert_eq!(
                replay[1].starts_with("cudasem2:"),
                inline,
                "{policy}: {replay:?}"
            );
            assert_eq!(replay[0] == "run", !inline, "{policy}: {replay:?}");
        }
    }
}

#[test]
fn replay_file_policy_continues_a_recorded_run() {
    let ws = workspace();
    let dir = scratch("replay-policy", &[]);
    let trace = dir.join("t.jsonl");
    let trace_s = trace.to_str().unwrap();
    // Record 40 steps of a random schedule (step limit), then run it again as a policy with a
    // larger bound: the first 40 choices are the recorded ones, the rest round-robin.
    let mut args = SPINLOCK.to_vec();
    args.extend([
        "--max-steps",
        "40",
        "--schedule",
        "random:5",
        "--trace",
        trace_s,
    ]);
    let (code, out, err) = cudasem(&ws, &args);
    assert_eq!(code, 1, "{out}{err}");
    let policy = format!("replay:{trace_s}");
    let mut args = SPINLOCK.to_vec();
    args.extend(["--max-steps", "200", "--schedule", &policy]);
    failure_reproduces(&ws, &args, "step_limit");

    // A trace of another program is refused, with exit code 2.
    let (code, _, err) = cudasem(
        &ws,
        &[
            "run",
            "tests/kernels/vecadd.ptx",
            "--launch",
            "tests/kernels/vecadd.ron",
            "--schedule",
            &policy,
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the trace was recorded from program"), "{err}");
}

#[test]
fn an_out_of_bounds_store_reproduces() {
    failure_reproduces(
        &workspace(),
        &[
            "run",
            "tests/kernels/vecadd.ptx",
            "--launch",
            "tests/kernels/vecadd.ron",
            "--buffer",
            "c:s32:100",
            "--arg",
            "buffer:a",
            "--arg",
            "buffer:b",
            "--arg",
            "buffer:c",
            "--arg",
            "s32:128",
            "--schedule",
            "random:3",
        ],
        "error",
    );
}

const TWO_BARRIERS: &str = "\
.version 7.0
.target sm_70
.address_size 64

.visible .entry stuck(.param .u64 out)
{
    .reg .u32 %r<2>;
    .reg .pred %p<2>;
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 32;
    @%p1 bra OTHER;
    bar.sync 0;
    bra.uni DONE;
OTHER:
    bar.sync 1;
DONE:
    ret;
}
";

/// Thread 1 of each block traps after storing its id.
const TRAP: &str = "\
.version 7.0
.target sm_70
.address_size 64

.visible .entry boom(.param .u64 out)
{
    .reg .u32 %r<3>;
    .reg .u64 %rd<3>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r1;
    setp.eq.u32 %p1, %r1, 1;
    @%p1 trap;
    ret;
}
";

#[test]
fn a_deadlock_and_a_trap_reproduce() {
    let dir = scratch(
        "deadlock",
        &[("stuck.ptx", TWO_BARRIERS), ("boom.ptx", TRAP)],
    );
    failure_reproduces(
        &dir,
        &[
            "run",
            "stuck.ptx",
            "--grid",
            "1",
            "--block",
            "64",
            "--buffer",
            "out:u32:1",
            "--arg",
            "buffer:out",
            "--schedule",
            "random:1",
        ],
        "deadlock",
    );
    failure_reproduces(
        &dir,
        &[
            "run",
            "boom.ptx",
            "--grid",
            "2",
            "--block",
            "2",
            "--warp-size",
            "1",
            "--buffer",
            "out:u32:4",
            "--arg",
            "buffer:out",
            "--schedule",
            "obe@warps:4",
        ],
        "error",
    );
}

#[test]
fn bad_policies_are_refused_with_the_expected_forms() {
    for (policy, says) in [
        ("pct:1", "pct needs a seed and a depth"),
        ("fair@cores", "unknown level `cores`"),
        ("dfs", "unknown schedule `dfs`"),
    ] {
        let mut args = SPINLOCK.to_vec();
        args.extend(["--schedule", policy]);
        let (code, _, err) = cudasem(&workspace(), &args);
        assert_eq!(code, 2, "{policy}: {err}");
        assert!(err.contains(says), "{policy}: {err}");
        assert!(err.contains("MODEL@LEVEL[:SEED]"), "{err}");
    }
}
