//! End-to-end `cudasem debug` in scripted mode (commands on standard input, plain text out),
//! as snapshot tests that together use every command: a walk through Listing 5.5 that prints
//! Figure 5.2's rows, a breakpoint inside a divergent branch showing the inactive lanes, a
//! watchpoint on a shared-memory word, `choices`/`choose`, `back`, `trace save/load`, errors
//! that keep the session alive. Also `cudasem rules`, `run --show stack` and
//! `run --trace-format perfetto` (checked structurally as Chrome trace JSON).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

mod common;
use common::workspace;

/// Exit code and stdout (stderr appended) of `cudasem ARGS` in `dir` with `stdin`.
fn cudasem_in(dir: &Path, args: &[&str], stdin: impl AsRef<[u8]>) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CUDASEM_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the cudasem binary runs");
    if let Some(mut input) = child.stdin.take() {
        // A command refused as bad input exits before it reads its script: the pipe is then
        // closed, which is no failure of the test (its exit code and message are checked).
        match input.write_all(stdin.as_ref()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
            _ => {}
        }
    }
    let out = child.wait_with_output().expect("cudasem ends");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

fn debug(ptx: &str, launch: &str, extra: &[&str], script: &str) -> (i32, String) {
    let mut args = vec!["debug", ptx, "--launch", launch];
    args.extend_from_slice(extra);
    cudasem_in(&workspace(), &args, script)
}

const L55: (&str, &str) = (
    "tests/thesis/listing_5_5.ptx",
    "tests/thesis/listing_5_5.ron",
);

#[test]
fn figure_5_2_walk() {
    // Line 56 is listing line 1 (setp); the last 9 rows of the table are Figure 5.2's rows,
    // labelled by PTX line instead of listing line: 56 57 58 62 64 59 60 64 66 = 1 2 3 7 9 4 5 9 10.
    let (code, out) = debug(
        L55.0,
        L55.1,
        &["--warp-size", "2"],
        "break 56\ncontinue\nstep 9\nstack table 9\nquit\n",
    );
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn breakpoint_in_divergent_branch_shows_inactive_lanes() {
    let (code, out) = debug(
        L55.0,
        L55.1,
        &["--warp-size", "2"],
        "break DIVERGE\ninfo breakpoints\ncontinue\nstack\nwhere\nregs\nprint %c\nprint %a lane 1\nwarps\nblocks\nrule\nnext\ndelete 1\nbreak SYNC if %a == 7\ncontinue\nuntil AFTER_SYNC\ncontinue\nmem c\nmem r[0..1]\nstatus\n",
    );
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn watchpoint_on_a_shared_word() {
    let (code, out) = debug(
        "tests/kernels/histogram_shared.ptx",
        "tests/kernels/histogram_shared.ron",
        &[],
        "watch .shared 0x8 s32 block 1\ninfo breakpoints\ncontinue\ncontinue\nmem .shared 0 10 s32 block 1\nbarriers\nblocks\ncaches\ndelete\ninfo breakpoints\n",
    );
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn caches_under_cached_memory() {
    // Message passing between two blocks: a store's memory program in flight (Listing 4.1 with the
    // current statement marked), the memory choices among `choices`, and at the end the dirty
    // L2 lines that hold the results.
    let (code, out) = debug(
        "tests/kernels/mp/mp_weak.ptx",
        "tests/kernels/mp/mp_weak.ron",
        &["--memory", "cached", "--max-blocks-per-sm", "1"],
        "step 14\ncaches\nchoices\nstep 3\ncaches\ncontinue\ncaches\nmem out\n",
    );
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn choices_choose_and_back() {
    // Two warps: the user schedules warp 1 before warp 0, goes back and takes the same choices
    // again, and the state is the same (`status` and `warps` agree; the library tests compare
    // the full machine state).
    let (code, out) = debug(
        "tests/kernels/divergent_if_else.ptx",
        "tests/kernels/divergent_if_else.ron",
        &[],
        "choices\nchoose 0\nchoices\nchoose 1\nchoose 1\nchoose 0\nwarps\nback 3\nwarps\nchoose 1\nchoose 1\nchoose 0\nwarps\nback to 1\nstatus\nwarp 0 1\nrule\n",
    );
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn trace_save_and_load_continue_from_a_prefix() {
    let dir = common::Scratch::new("debug", "trace");
    let ptx = workspace().join(L55.0).display().to_string();
    let ron = workspace().join(L55.1).display().to_string();
    let (code, out) = cudasem_in(
        &dir,
        &["debug", &ptx, "--launch", &ron, "--warp-size", "2"],
        "step 20\ntrace save prefix.jsonl\ncontinue\ntrace load prefix.jsonl\nwhere\n",
    );
    assert_eq!(code, 0, "{out}");
    let tail = out.split("(cudasem) trace save").nth(1).unwrap_or_default();
    insta::assert_snapshot!(tail);
    let saved = std::fs::read_to_string(dir.join("prefix.jsonl")).expect("the trace was written");
    assert_eq!(saved.lines().count(), 21, "a header and 20 choices");
}

/// A script line that is not UTF-8 text is an error (exit code 1), and the lines after it still
/// run; standard input that ends without a final newline or `quit` ends the session after its
/// last command.
#[test]
fn a_script_line_that_is_not_text_is_an_error_and_the_rest_runs() {
    let mut script = b"step\n".to_vec();
    script.extend_from_slice(b"break L\xff\xfe\n");
    script.extend_from_slice(b"step");
    let (code, out) = cudasem_in(
        &workspace(),
        &["debug", L55.0, "--launch", L55.1, "--warp-size", "2"],
        script,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "error: line 2 of the script is not UTF-8 text: it was skipped\n(cudasem) step\n[2] "
        ),
        "{out}"
    );
    assert!(!out.contains("panicked"), "{out}");
}

#[test]
fn errors_keep_the_session_alive() {
    let (code, out) = debug(
        L55.0,
        L55.1,
        &["--warp-size", "2"],
        "frobnicate\nstep 3\nprint %nope\nmem c[2..1]\nmem c[0..9]\nmem nothing[0]\nbreak NOPE\nbreak 100000\nwarp 5 5\nlane 0 0 1\nback 3\nback to 7\nchoose 99\nstep x\ntrace load /nonexistent/t.jsonl\nwatch c[7]\ndelete 4\nhelp\nhelp break\nstep\n",
    );
    assert_eq!(code, 1, "a scripted error is exit code 1\n{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn rules_command() {
    let (code, out) = cudasem_in(&workspace(), &["rules", "bra_guard"], "");
    assert_eq!(code, 0);
    insta::assert_snapshot!(out);
    let (code, index) = cudasem_in(&workspace(), &["rules"], "");
    assert_eq!(code, 0);
    assert!(index.contains("crs/bra_guard"), "{index}");
    assert!(index.contains("thread/bra"), "{index}");
    let (code, all) = cudasem_in(&workspace(), &["rules", "all"], "");
    assert_eq!(code, 0);
    assert!(all.contains("cudasem: D1:"), "deviations are listed");
    let (code, err) = cudasem_in(&workspace(), &["rules", "no_such_rule"], "");
    assert_eq!(code, 2);
    assert!(err.contains("no rule `no_such_rule`"), "{err}");
}

#[test]
fn run_show_stack_prints_the_thesis_table() {
    let (code, out) = cudasem_in(
        &workspace(),
        &[
            "run",
            L55.0,
            "--launch",
            L55.1,
            "--warp-size",
            "2",
            "--show",
            "stack",
        ],
        "",
    );
    assert_eq!(code, 0);
    insta::assert_snapshot!(out);
}

#[test]
fn perfetto_trace_is_chrome_trace_json() {
    let path = std::env::temp_dir().join(format!("cudasem-perfetto-{}.json", std::process::id()));
    let p = path.display().to_string();
    let (code, out) = cudasem_in(
        &workspace(),
        &[
            "run",
            "tests/kernels/divergent_if_else.ptx",
            "--launch",
            "tests/kernels/divergent_if_else.ron",
            "--trace",
            &p,
            "--trace-format",
            "perfetto",
        ],
        "",
    );
    assert_eq!(code, 0, "{out}");
    let text = std::fs::read_to_string(&path).expect("the trace was written");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let events = doc["traceEvents"]
        .as_array()
        .expect("traceEvents is an array");
    let mut slices = 0;
    let mut tracks = std::collections::BTreeSet::new();
    let mut divergent = false;
    for e in events {
        let ph = e["ph"].as_str().expect("every event has a phase");
        assert!(e["pid"].is_u64(), "pid: {e}");
        match ph {
            "M" => {
                assert!(matches!(
                    e["name"].as_str(),
                    Some("process_name" | "thread_name")
                ));
                assert!(e["args"]["name"].is_string());
            }
            "X" => {
                slices += 1;
                assert!(e["name"].is_string() && e["ts"].is_u64() && e["dur"].is_u64());
                assert!(e["tid"].is_u64());
                tracks.insert((e["pid"].as_u64(), e["tid"].as_u64()));
                let lanes = e["args"]["lanes"].as_str().expect("lanes");
                divergent |= lanes.contains('0') && lanes.contains('1');
            }
            "C" => assert!(e["args"]["lanes"].is_u64()),
            other => panic!("unexpected phase {other}"),
        }
    }
    assert!(slices > 0);
    assert_eq!(tracks.len(), 2, "a track per warp (64 threads, 2 warps)");
    assert!(
        divergent,
        "a divergent branch shows as a slice of some lanes"
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn lane_steps_one_group_under_its() {
    // Under `its` the two lanes of Listing 5.5 split at the branch; `lane 0 0 1` steps lane 1's
    // group only, and `where` shows both groups' pcs.
    let (code, out) = debug(
        L55.0,
        L55.1,
        &["--warp-model", "its", "--warp-size", "2"],
        "until 58\nstep\nchoices\nlane 0 0 1\nlane 0 0 1\nwhere\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("lanes 1: pc 21 (line 64, SYNC)") && out.contains("lanes 0: pc 20"),
        "{out}"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn next_steps_over_a_call() {
    // `next` on a `call.uni` runs the callee to its return and stops at the instruction after
    // the call, in the caller.
    let (code, out) = debug(
        "tests/kernels/noinline_func.ptx",
        "tests/kernels/noinline_func.ron",
        &[],
        "until 66\nnext\nwhere\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("stepped over the call"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn finish_runs_the_focused_warp_back_to_its_caller() {
    // Into `mix` by one step at the `call.uni`; `finish` returns to the instruction after the
    // call (depth 0); a second `finish`, in the kernel itself, is refused and the session goes on.
    let (code, out) = debug(
        "tests/kernels/noinline_func.ptx",
        "tests/kernels/noinline_func.ron",
        &[],
        "until 66\nstep\nfinish\nfinish\nwhere\n",
    );
    assert_eq!(code, 1, "the refused `finish` is a scripted error\n{out}");
    assert!(out.contains("returned to call depth 0"), "{out}");
    assert!(
        out.contains("is in the kernel itself, not in a call"),
        "{out}"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn gdb_commands_in_one_scripted_session() {
    // tbreak stops once and is gone; print in each format; display follows a step (and says
    // so when the register is not in the callee); cuda-gdb's `thread` focus; list marks the
    // focused instruction; finish returns to the caller.
    let (code, out) = debug(
        "tests/kernels/noinline_func.ptx",
        "tests/kernels/noinline_func.ron",
        &[],
        "tbreak 66\ncontinue\ninfo breakpoints\nprint/x %r14\nprint/d %r14\nprint/t %r14\nprint/u %r14\ndisplay/x %r14\nstep\ninfo display\nundisplay\ncuda thread 3\nlist\nfinish\nprint %r14\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("(deleted)") && out.contains("no breakpoints"),
        "{out}"
    );
    assert!(out.contains("focus: block 0 warp 0 lane 3"), "{out}");
    assert!(out.contains("returned to call depth 0"), "{out}");
    insta::assert_snapshot!(out);
}

/// `--context N` picks one context of a launch file of several, as `run` does (the debugger
/// loads its launch as every command does); without it such a file is refused.
#[test]
fn context_picks_one_context_of_a_launch_file() {
    let ptx = "tests/kernels/programs/stream_race.ptx";
    let launch = "tests/kernels/programs/two_contexts.ron";
    let (code, out) = debug(ptx, launch, &["--context", "1"], "continue\nquit\n");
    assert_eq!(code, 0, "{out}");
    // Context 1 launches add_one in stream 1 (context 0: in stream 0).
    assert!(
        out.contains("kernel add_one, grid (2,1,1), block (32,1,1), stream 1"),
        "{out}"
    );
    assert!(out.contains("completed"), "{out}");
    let (code, out) = debug(ptx, launch, &[], "quit\n");
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("give this command --context N to pick one"),
        "{out}"
    );
}
