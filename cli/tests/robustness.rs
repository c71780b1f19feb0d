//! Robust under faults and bad input (docs/reliability.md): a reader that goes away (`| head`)
//! ends the output quietly, a full disk is an error, Ctrl-C stops a command with its partial
//! report and exit code 130, and launches too large for memory or the device are refused before
//! anything is allocated, with exit code 2 and a message that says why.

mod common;

use common::{cudasem_here, workspace};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The spin lock of Listing 6.2: one warp never terminates under the SIMT stack.
const SPIN: [&str; 5] = [
    "tests/thesis/listing_6_2.ptx",
    "--grid",
    "1",
    "--block",
    "2",
];

/// A temporary folder for this test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let d =
            std::env::temp_dir().join(format!("cudasem-cli-robust-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        TempDir(d)
    }

    fn write(&self, file: &str, text: &str) -> String {
        let p = self.0.join(file);
        std::fs::write(&p, text).expect("write");
        p.display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn binary(args: &[String]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cudasem"));
    // Replay traces the binary writes go to the test target's scratch folder, not the system's.
    c.env("TMPDIR", env!("CARGO_TARGET_TMPDIR"));
    c.args(args)
        .current_dir(workspace())
        .env("NO_COLOR", "1")
        .env_remove("CUDASEM_LOG");
    c
}

/// Runs `cudasem ARGS` with stdout a pipe whose reader is closed at once: exit code and stderr.
fn with_closed_stdout(args: &[String]) -> (i32, String) {
    let mut child = binary(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the cudasem binary runs");
    // The reader goes away before the output (far more than a pipe buffers) is written.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_closed_pipe_ends_progress_and_litmus_quietly() {
    let d = TempDir::new("pipe");
    let axb = d.write(
        "t.txt",
        "THREAD0\natomic_store(0,1)\nTHREAD1\natomic_chk_branch(0,0,0)\n",
    );
    let mut args = strings(&["progress"]);
    // Far more output than a pipe holds, so the writes must meet the closed pipe.
    args.extend(std::iter::repeat_n(axb, 3000));
    let (code, err) = with_closed_stdout(&args);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let sb = d.write(
        "sb.litmus",
        "PTX SB\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.relaxed.gpu x, 1 | st.relaxed.gpu y, 1 ;\n ld.relaxed.gpu r0, y | ld.relaxed.gpu r1, x ;\nexists (P0:r0 == 1 /\\ P1:r1 == 1)\n",
    );
    let mut args = strings(&["litmus"]);
    args.extend(std::iter::repeat_n(sb, 300));
    let (code, err) = with_closed_stdout(&args);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_full_disk_is_an_error() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full on this system");
        return;
    };
    let mut args = strings(&["run"]);
    args.extend(strings(&[
        "tests/thesis/listing_6_2.ptx",
        "--grid",
        "1",
        "--block",
        "1",
    ]));
    let out = binary(&args)
        .stdout(Stdio::from(full))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write the output"), "{err}");
}

/// Starts `cudasem ARGS`, sends SIGINT after `after`, and returns exit code, stdout, stderr
/// and how long the command took after the signal.
fn interrupted(args: &[&str], after: Duration) -> (i32, String, String, Duration) {
    let child = binary(&strings(args))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the cudasem binary runs");
    std::thread::sleep(after);
    let sent = Instant::now();
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        sent.elapsed(),
    )
}

#[test]
fn ctrl_c_stops_run_check_and_fuzz_with_a_partial_report() {
    let mut run = vec!["run"];
    run.extend(SPIN);
    run.extend(["--format", "json"]);
    let (code, out, err, took) = interrupted(&run, Duration::from_millis(1500));
    assert_eq!(code, 130, "{out}{err}");
    assert!(err.contains("interrupted"), "{err}");
    let j: serde_json::Value = serde_json::from_str(out.trim()).expect("a JSON report");
    assert_eq!(j["status"], "time_limit", "{j}");
    assert!(
        j["note"].as_str().is_some_and(|n| n.contains("Ctrl-C")),
        "{j}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");

    let mut check = vec!["check"];
    check.extend(SPIN);
    let (code, out, err, _) = interrupted(&check, Duration::from_millis(1500));
    assert_eq!(code, 130, "{out}{err}");
    assert!(out.contains("Ctrl-C"), "{out}");

    let mut fuzz = vec!["fuzz"];
    fuzz.extend(SPIN);
    fuzz.extend(["--runs", "1000000", "--max-steps", "1000000000"]);
    let (code, out, err, _) = interrupted(&fuzz, Duration::from_millis(1500));
    assert_eq!(code, 130, "{out}{err}");
    assert!(out.contains("interrupted by Ctrl-C"), "{out}");
}

#[test]
fn a_launch_over_the_memory_budget_is_refused_before_allocation() {
    let start = Instant::now();
    // 2^31 s32 = 8 GiB: under the 16 GiB cap of one buffer, over a 64 MiB budget.
    let (code, _, err) = cudasem_here(&[
        "run",
        "tests/thesis/listing_6_2.ptx",
        "--grid",
        "1",
        "--block",
        "1",
        "--buffer",
        "big:s32:2147483648:range:0:1",
        "--max-memory",
        "64M",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("does not fit in memory"), "{err}");
    assert!(err.contains("8589934592 bytes"), "{err}");
    assert!(err.contains("--max-memory"), "{err}");
    // Refused from the sizes alone: the 8 GiB were never filled.
    assert!(start.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_range_leaving_its_type_is_found_without_building_it() {
    // 4e9 elements: the first one out of range is found by bisection, not by filling 16 GB.
    let (code, _, err) = cudasem_here(&[
        "run",
        "tests/thesis/listing_6_2.ptx",
        "--grid",
        "1",
        "--block",
        "1",
        "--buffer",
        "r:u32:4000000000:range:0:2",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("Range reaches 4294967296 at element 2147483648"),
        "{err}"
    );
}

#[test]
fn a_file_init_reads_no_more_than_the_buffer() {
    if !std::path::Path::new("/dev/zero").exists() {
        eprintln!("skipped: no /dev/zero on this system");
        return;
    }
    let (code, _, err) = cudasem_here(&[
        "run",
        "tests/thesis/listing_6_2.ptx",
        "--grid",
        "1",
        "--block",
        "1",
        "--buffer",
        "z:u32:16:file:/dev/zero",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/dev/zero has more than 64 bytes"), "{err}");
}

#[test]
fn an_absurd_device_is_refused() {
    let mut args = vec!["run"];
    args.extend(SPIN);
    args.extend(["--sms", "1000000000"]);
    let (code, _, err) = cudasem_here(&args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--sms 1000000000 is beyond"), "{err}");
}

#[test]
fn a_run_trace_replays_from_the_trace_alone() {
    let d = TempDir::new("trace");
    let trace = d.0.join("t.jsonl").display().to_string();
    let mut run = vec!["run"];
    run.extend(SPIN);
    run.extend(["--max-steps", "50", "--trace", &trace]);
    let (code, _, err) = cudasem_here(&run);
    assert_eq!(code, 1, "{err}");
    // No PTX file on the command line: the trace names it.
    let (_, out, err) = cudasem_here(&["replay", &trace]);
    assert!(out.contains("every choice was enabled"), "{out}{err}");
}

#[test]
fn a_replay_schedule_fails_at_the_first_choice_not_enabled() {
    let d = TempDir::new("strict");
    let trace = d.0.join("two.jsonl").display().to_string();
    // Recorded with two blocks; replayed on a launch of one, block 1 is never there.
    let (code, _, err) = cudasem_here(&[
        "run",
        "tests/thesis/listing_6_2.ptx",
        "--grid",
        "2",
        "--block",
        "2",
        "--max-steps",
        "40",
        "--trace",
        &trace,
    ]);
    assert_eq!(code, 1, "{err}");
    let schedule = format!("replay:{trace}");
    let mut run = vec!["run"];
    run.extend(SPIN);
    run.extend(["--max-steps", "40", "--schedule", &schedule]);
    let (code, out, err) = cudasem_here(&run);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("replay diverged at step"), "{err}");
    assert!(err.contains("is not enabled"), "{err}");
}

#[test]
fn a_long_failing_run_reproduces_by_its_command_line_without_a_trace_file() {
    // Two spinning warps alternate: their schedule does not compress into a short string.
    let (code, out, err) = cudasem_here(&[
        "run",
        "tests/thesis/listing_6_2.ptx",
        "--grid",
        "2",
        "--block",
        "2",
        "--max-steps",
        "300000",
    ]);
    assert_eq!(code, 1, "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("to reproduce:"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("cudasem run tests/thesis/listing_6_2.ptx"),
        "{line}"
    );
    assert!(
        !line.contains("cudasem replay"),
        "no trace file was asked for: {line}"
    );

    // Cut by time: the run bounded by the steps it made, no trace written.
    let mut run = vec!["run"];
    run.extend(SPIN);
    run.extend(["--timeout", "0.3"]);
    let (code, out, err) = cudasem_here(&run);
    assert_eq!(code, 1, "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("to reproduce:"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("--max-steps"), "{line}");
    assert!(!line.contains("--timeout"), "{line}");
    assert!(!line.contains("cudasem replay"), "{line}");
}

#[test]
fn an_exploration_over_the_memory_budget_stops_and_says_so() {
    // The spin lock's state space at 8 blocks outgrows 30 MiB within a second; the states
    // bound and the time bound are far away. Without symmetry: up to a permutation of its
    // blocks the spin lock has few states.
    let (code, out, err) = cudasem_here(&[
        "explore",
        "tests/kernels/spinlock.ptx",
        "--launch",
        "tests/kernels/spinlock.ron",
        "--grid",
        "8",
        "--symmetry",
        "none",
        "--max-states",
        "100000000",
        "--max-memory",
        "30M",
        "--timeout",
        "120",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    if out.is_empty() {
        // Not stopped within the grace period (a loaded machine): ended by the watchdog,
        // which says so.
        assert!(
            err.contains("memory budget reached") && err.contains("ended without a report"),
            "{err}"
        );
        return;
    }
    assert!(out.contains("memory budget reached"), "{out}");
    assert!(out.contains("nothing is proven"), "{out}");
}

#[test]
fn a_launch_counts_the_copies_a_run_keeps_and_its_printed_text() {
    // 24 MB of buffer: three copies and the printed text do not fit 40 MiB.
    let mut run = vec!["run"];
    run.extend(SPIN);
    run.extend(["--buffer", "big:u32:6000000", "--max-memory", "40M"]);
    let (code, _, err) = cudasem_here(&run);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("does not fit in memory"), "{err}");
}

/// The corpus spin lock on 8 blocks, every step a scheduling point and no symmetry: an
/// exploration that runs for seconds even in a release build, so the memory watchdog stops it
/// before it can finish (on 4 blocks with the default reductions it finished in 0.03 s, before
/// the watchdog's first look, and the tests below failed now and then).
const LONG_EXPLORATION: [&str; 9] = [
    "tests/kernels/spinlock.ptx",
    "--launch",
    "tests/kernels/spinlock.ron",
    "--grid",
    "8",
    "--reduction",
    "none",
    "--symmetry",
    "none",
];

/// Runs `command[0] KERNEL command[1..] EXTRA` with a memory budget of 4 MiB (below what the
/// process itself takes) and a time bound far away; gives the arguments and what it returned.
fn under_4_mib<'a>(
    command: &[&'a str],
    kernel: &[&'a str],
    extra: &[&'a str],
) -> (Vec<&'a str>, (i32, String, String)) {
    let mut args = vec![command[0]];
    args.extend(kernel);
    args.extend(&command[1..]);
    args.extend(["--max-memory", "4M", "--timeout", "120"]);
    args.extend(extra);
    let result = cudasem_here(&args);
    (args, result)
}

/// The memory budget stops every command that runs kernels the same way, and each report names
/// the bound that cut it in the same words (`memory budget reached: --max-memory 4.0 MiB`),
/// exit 1. The spin lock never ends, so only a bound stops it; 4 MiB is below what the process
/// itself takes, so the watchdog's first look stops it. (Before, `fuzz` did not stop at all: its
/// PCT horizon run and the skipped runs ignored the bound.)
#[test]
fn each_command_names_the_memory_budget_that_stopped_it() {
    // The thesis spin lock's state space is small: `explore` gets the corpus spin lock.
    let explore_kernel = LONG_EXPLORATION;
    let commands: [(&[&str], &[&str]); 5] = [
        (&["run"], &SPIN),
        (&["check"], &SPIN),
        (
            &["check", "--explore", "--max-schedules", "100000000"],
            &SPIN,
        ),
        (&["explore", "--max-states", "100000000"], &explore_kernel),
        (
            &["fuzz", "--runs", "100000000", "--max-steps", "1000000000"],
            &SPIN,
        ),
    ];
    for (command, kernel) in commands {
        let (args, (code, out, err)) = under_4_mib(command, kernel, &[]);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        if out.is_empty() {
            // Not stopped within the grace period (a loaded machine): ended by the watchdog,
            // which says so.
            assert!(
                err.contains("memory budget reached") && err.contains("ended without a report"),
                "{args:?}: {err}"
            );
            continue;
        }
        assert!(
            out.contains("memory budget reached: --max-memory 4.0 MiB"),
            "{args:?}: {out}"
        );
        assert!(!out.contains("time limit"), "{args:?}: {out}");
    }
}

/// A search or campaign cut by the memory budget says so in its JSON: `bound_hit` names the
/// memory bound and the older `time_limit_hit` flag stays false (it said true before: the memory
/// watchdog stops a search through the same flag as the clock).
#[test]
fn a_memory_cut_is_not_called_a_time_limit_in_json() {
    let explore_kernel = LONG_EXPLORATION;
    let commands: [(&[&str], &[&str]); 3] = [
        (&["explore", "--max-states", "100000000"], &explore_kernel),
        (
            &[
                "explore",
                "--search",
                "outcomes",
                "--max-transitions",
                "1000000000",
            ],
            &explore_kernel,
        ),
        (
            &["fuzz", "--runs", "100000000", "--max-steps", "1000000000"],
            &SPIN,
        ),
    ];
    for (command, kernel) in commands {
        let (args, (code, out, err)) = under_4_mib(command, kernel, &["--format", "json"]);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        if out.is_empty() {
            // Ended by the watchdog after its grace period (a loaded machine): no report.
            assert!(err.contains("memory budget reached"), "{args:?}: {err}");
            continue;
        }
        let j: serde_json::Value = serde_json::from_str(&out).expect("one JSON report");
        assert_eq!(j["bound_hit"]["bound"], "memory", "{args:?}: {j}");
        let flag = j
            .get("time_limit_hit")
            .or_else(|| j["bound"].get("time_limit_hit"))
            .expect("the time_limit_hit flag");
        assert_eq!(flag, false, "{args:?}: {j}");
    }
    // A run and a litmus test say `memory_limit` in their status, not `time_limit`.
    let litmus = workspace().join("tests/litmus/families/SB-4.litmus");
    let litmus = litmus.to_string_lossy();
    let commands: [&[&str]; 2] = [
        &[
            "run",
            SPIN[0],
            SPIN[1],
            SPIN[2],
            SPIN[3],
            SPIN[4],
            "--max-steps",
            "1000000000",
        ],
        &[
            "litmus",
            &litmus,
            "--memory",
            "cached",
            "--max-states",
            "100000000",
        ],
    ];
    for command in commands {
        let (args, (code, out, err)) = under_4_mib(command, &[], &["--format", "json"]);
        if out.is_empty() {
            assert!(err.contains("memory budget reached"), "{args:?}: {err}");
            continue;
        }
        // `litmus` exits 0 when it checked every file, cut or not.
        let expected_code = if args[0] == "run" { 1 } else { 0 };
        assert_eq!(code, expected_code, "{args:?}: {out}{err}");
        let j: serde_json::Value = serde_json::from_str(&out).expect("one JSON report");
        assert_eq!(j["status"], "memory_limit", "{args:?}: {j}");
        assert_eq!(j["bound_hit"]["bound"], "memory", "{args:?}: {j}");
    }
    // `check` names it among its errors.
    let (args, (_, out, err)) = under_4_mib(&["check"], &SPIN, &["--format", "json"]);
    if out.is_empty() {
        assert!(err.contains("memory budget reached"), "{args:?}: {err}");
    } else {
        let j: serde_json::Value = serde_json::from_str(&out).expect("one JSON report");
        let kinds: Vec<&str> = j["errors"]
            .as_array()
            .map(|e| e.iter().filter_map(|e| e["kind"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(kinds, ["memory_limit"], "{j}");
    }
}
