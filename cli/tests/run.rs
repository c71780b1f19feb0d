//! End-to-end `cudasem run`: corpus kernels in text and JSON, every exit code, bad launch files
//! (error messages with line and column, snapshotted), the step bound on a spin loop, an
//! out-of-bounds store naming the buffer it missed, a barrier deadlock saying who waits where,
//! quick launches from flags, and `--trace`.

mod common;
use common::{cudasem_in as cudasem, workspace};

/// `cudasem ARGS` from the workspace root (corpus paths are relative to it).
fn in_workspace(args: &[&str]) -> (i32, String, String) {
    cudasem(&workspace(), args)
}

/// A fresh scratch folder holding `files`.
fn scratch(name: &str, files: &[(&str, &str)]) -> common::Scratch {
    let dir = common::Scratch::new("run", name);
    for (file, text) in files {
        std::fs::write(dir.join(file), text).expect("write scratch file");
    }
    dir
}

fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

fn vecadd_ptx() -> String {
    workspace()
        .join("tests/kernels/vecadd.ptx")
        .display()
        .to_string()
}

#[test]
fn vecadd_text() {
    let (code, stdout, stderr) = in_workspace(&[
        "run",
        "tests/kernels/vecadd.ptx",
        "--launch",
        "tests/kernels/vecadd.ron",
    ]);
    assert_eq!(code, 0, "{stderr}");
    insta::assert_snapshot!("vecadd_text", stdout);
}

#[test]
fn vecadd_json_under_every_warp_model() {
    for model in ["simt-stack", "its", "threads"] {
        let (code, stdout, stderr) = in_workspace(&[
            "run",
            "tests/kernels/vecadd.ptx",
            "--launch",
            "tests/kernels/vecadd.ron",
            "--format",
            "json",
            "--warp-model",
            model,
            "--schedule",
            "random:5",
        ]);
        assert_eq!(code, 0, "{model}: {stderr}");
        let v = json(&stdout);
        assert_eq!(v["status"], "completed");
        assert!(v["steps"].as_u64().is_some_and(|s| s > 0));
        let c: Vec<i64> = v["buffers"]["c"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect();
        let want: Vec<i64> = (0..128)
            .map(|i| if i < 100 { i + (1000 - 3 * i) } else { 0 })
            .collect();
        assert_eq!(c, want, "{model}");
        assert!(
            v.get("replay").is_none(),
            "a clean run prints no reproduce line"
        );
    }
}

#[test]
fn floats_print_so_they_read_back() {
    let (code, stdout, stderr) = in_workspace(&[
        "run",
        "tests/kernels/saxpy.ptx",
        "--launch",
        "tests/kernels/saxpy.ron",
        "--format",
        "json",
        "--print",
        "y",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v = json(&stdout);
    let y = v["buffers"]["y"].as_array().unwrap();
    // y[i] = fma(2.5, 0.5 i, 1 + 0.25 i) for i < 100: exact in f32.
    assert_eq!(y[3].as_f64(), Some(2.5 * 1.5 + 1.75));
    assert_eq!(y.len(), 128);
}

#[test]
fn quick_launch_from_flags() {
    let (code, stdout, stderr) = in_workspace(&[
        "run",
        "tests/kernels/vecadd.ptx",
        "--grid",
        "1",
        "--block",
        "8",
        "--buffer",
        "a:s32:8:range:0:1",
        "--buffer",
        "b:s32:8:values:10,20,30",
        "--buffer",
        "c:s32:8",
        "--arg",
        "buffer:a",
        "--arg",
        "buffer:b",
        "--arg",
        "buffer:c",
        "--arg",
        "s32:6",
        "--print",
        "c",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("c: s32[8]\n  [0] 10 21 32  3  4  5  0  0\ncompleted after "),
        "{stdout}"
    );
}

#[test]
fn step_bound_on_a_spin_loop() {
    // The lock starts taken: every block spins forever.
    let (code, stdout, stderr) = in_workspace(&[
        "run",
        "tests/kernels/spinlock.ptx",
        "--launch",
        "tests/kernels/spinlock.ron",
        "--buffer",
        "lock:s32:1:values:1",
        "--max-steps",
        "5000",
        "--schedule",
        "random:7",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stdout.contains("stopped after 5000 steps (--max-steps 5000); the kernel may not terminate under this schedule"),
        "{stdout}"
    );
    // A random schedule of 5000 steps does not fit an inline compact string: the command
    // itself reproduces it (no trace file is written that was not asked for).
    assert!(
        stdout.contains("to reproduce: cudasem run tests/kernels/spinlock.ptx")
            && stdout.contains("--schedule random:7"),
        "{stdout}"
    );
    let (code, stdout, _) = in_workspace(&[
        "run",
        "tests/kernels/spinlock.ptx",
        "--launch",
        "tests/kernels/spinlock.ron",
        "--buffer",
        "lock:s32:1:values:1",
        "--max-steps",
        "5000",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1);
    let v = json(&stdout);
    assert_eq!(v["status"], "step_limit");
    assert_eq!(v["steps"], 5000);
    // A compact string inline, or the (deterministic) run command itself.
    assert!(
        v["replay"].as_str().is_some_and(|r| {
            r.starts_with("cudasem replay cudasem2:")
                || r.starts_with("cudasem run tests/kernels/spinlock.ptx")
        }),
        "{v}"
    );
}

#[test]
fn out_of_bounds_names_the_buffer() {
    // n = 128 but c holds 100 elements.
    let args = [
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
        "--print",
        "a",
    ];
    let (code, stdout, stderr) = in_workspace(&args);
    assert_eq!(code, 1, "{stderr}");
    let status = &stdout[stdout.find("error after").unwrap_or(0)..];
    assert!(status.contains("out-of-bounds access"), "{status}");
    assert!(status.contains("buffer `c`"), "{status}");
    assert!(status.contains("tests/kernels/vecadd.ptx:"), "{status}");
    assert!(
        status.contains("to reproduce: cudasem replay cudasem2:")
            && status.contains(
                " tests/kernels/vecadd.ptx --launch tests/kernels/vecadd.ron --buffer c:s32:100"
            ),
        "{status}"
    );
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let v = json(&in_workspace(&json_args).1);
    assert_eq!(v["status"], "error");
    assert_eq!(v["error"]["kind"], "out_of_bounds");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("buffer `c`")
    );
    assert!(v["error"]["ptx_line"].as_u64().is_some_and(|l| l > 0));
}

/// Warp 0 waits at barrier 0, warp 1 at barrier 1; each barrier expects all 64 threads.
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

#[test]
fn deadlock_says_who_waits_where() {
    let dir = scratch("deadlock", &[("stuck.ptx", TWO_BARRIERS)]);
    let args = [
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
        "--print",
        "out",
    ];
    let (code, stdout, stderr) = cudasem(&dir, &args);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.contains("deadlock after"), "{stdout}");
    assert!(
        stdout.contains("block (0,0,0) warp 0 lanes 0-31"),
        "{stdout}"
    );
    assert!(
        stdout.contains("block (0,0,0) warp 1 lanes 0-31"),
        "{stdout}"
    );
    assert!(
        stdout.contains("barrier 0") && stdout.contains("barrier 1"),
        "{stdout}"
    );
    assert!(stdout.contains("(stuck.ptx:"), "{stdout}");
    assert!(
        stdout.contains("to reproduce: cudasem replay cudasem2:")
            && stdout.contains(" stuck.ptx --grid 1 --block 64"),
        "{stdout}"
    );
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let v = json(&cudasem(&dir, &json_args).1);
    assert_eq!(v["status"], "deadlock");
    let waits = v["deadlock"].as_array().unwrap();
    assert_eq!(waits.len(), 2, "{v}");
    assert_eq!(waits[0]["lanes"], "0-31");
    assert!(
        waits[0]["waiting_for"]
            .as_str()
            .unwrap()
            .contains("barrier")
    );
}

#[test]
fn trace_has_a_header_and_one_line_per_step() {
    let dir = scratch("trace", &[]);
    let trace = dir.join("t.jsonl");
    let trace_arg = trace.display().to_string();
    let (code, stdout, stderr) = in_workspace(&[
        "run",
        "tests/kernels/vecadd.ptx",
        "--launch",
        "tests/kernels/vecadd.ron",
        "--schedule",
        "random:3",
        "--format",
        "json",
        "--trace",
        &trace_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let steps = json(&stdout)["steps"].as_u64().unwrap();
    let text = std::fs::read_to_string(&trace).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len() as u64, steps + 1);
    let header = json(lines[0]);
    assert_eq!(header["version"], 1);
    assert_eq!(header["seed"], 3);
    assert_eq!(header["schedule"], "random:3");
    assert_eq!(header["launch"]["kernel"], "vecadd");
    assert!(header["program_hash"].as_u64().is_some());
    for line in &lines[1..] {
        let _: traces::Choice =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
}

#[test]
fn unreadable_and_malformed_inputs_exit_2() {
    let (code, _, stderr) = in_workspace(&[
        "run",
        "tests/kernels/no_such.ptx",
        "--launch",
        "tests/kernels/vecadd.ron",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("cannot read tests/kernels/no_such.ptx"),
        "{stderr}"
    );

    let (code, _, stderr) = in_workspace(&[
        "run",
        "tests/kernels/vecadd.ptx",
        "--launch",
        "tests/kernels/no_such.ron",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("cannot read launch file tests/kernels/no_such.ron"),
        "{stderr}"
    );

    let (code, _, stderr) = in_workspace(&["run", "tests/kernels/vecadd.ptx"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no launch given"), "{stderr}");
    assert!(
        stderr.contains("cudasem launch KERNEL -o FILE.ron"),
        "{stderr}"
    );

    let dir = scratch(
        "bad_ptx",
        &[(
            "bad.ptx",
            ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n    frobnicate.u32 %r1;\n    ret;\n}\n",
        )],
    );
    let (code, _, stderr) = cudasem(&dir, &["run", "bad.ptx", "--grid", "1", "--block", "1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bad.ptx:6:"), "{stderr}");

    let (code, _, stderr) = in_workspace(&[
        "run",
        "tests/kernels/vecadd.ptx",
        "--launch",
        "tests/kernels/vecadd.ron",
        "--schedule",
        "random",
    ]);
    assert_eq!(code, 2, "usage errors exit 2: {stderr}");
}

/// Runs vecadd with `launch.ron` holding `text`; expects exit 2 and returns stderr.
fn bad_launch(name: &str, text: &str) -> String {
    let dir = scratch(name, &[("launch.ron", text)]);
    let (code, stdout, stderr) = cudasem(&dir, &["run", &vecadd_ptx(), "--launch", "launch.ron"]);
    assert_eq!(code, 2, "{name}: {stdout}{stderr}");
    stderr
}

const GOOD_HEAD: &str =
    "(\n    kernel: \"vecadd\",\n    grid: (2, 1, 1),\n    block: (64, 1, 1),\n";

#[test]
fn struct_arguments_by_value_and_their_errors() {
    let ptx = workspace()
        .join("tests/kernels/struct_arg.ptx")
        .display()
        .to_string();
    // Two fields for a 24-byte struct: refused, located, with what to do.
    let text = "(\n    grid: 1,\n    block: 4,\n    buffers: { \"out\": (type: \"f32\", len: 4) },\n    args: [\n        Struct([Scalar(type: \"s32\", value: 1), Scalar(type: \"f32\", value: 2.5)]),\n        Buffer(\"out\"),\n    ],\n)\n";
    let dir = scratch("struct_size", &[("launch.ron", text)]);
    let (code, stdout, stderr) = cudasem(&dir, &["run", &ptx, "--launch", "launch.ron"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "argument 1 is Struct of 8 bytes but parameter `struct_arg_param_0` is 24 bytes"
        ) && stderr.contains("launch.ron:5:")
            && stderr.contains("help: give exactly 24 bytes"),
        "{stderr}"
    );
    // The same kernel from flags: the struct's bytes, the pointer left null and n = 0, so no
    // thread dereferences it; out stays zero.
    let zeros = vec!["0"; 24].join(",");
    let (code, stdout, stderr) = cudasem(
        &dir,
        &[
            "run",
            &ptx,
            "--grid",
            "1",
            "--block",
            "4",
            "--buffer",
            "out:f32:4",
            "--arg",
            &format!("bytes:{zeros}"),
            "--arg",
            "buffer:out",
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("completed"), "{stdout}");
    // The corpus launch, traced and replayed: the trace carries the struct's bytes and the
    // buffer address patched into them.
    let ron = workspace()
        .join("tests/kernels/struct_arg.ron")
        .display()
        .to_string();
    let (code, run_out, stderr) =
        cudasem(&dir, &["run", &ptx, "--launch", &ron, "--trace", "t.jsonl"]);
    assert_eq!(code, 0, "{run_out}{stderr}");
    let (code, replay_out, stderr) = cudasem(&dir, &["replay", "t.jsonl"]);
    assert_eq!(code, 0, "{replay_out}{stderr}");
    // The `out` buffer as printed (replay prints every buffer, after a header).
    let out = |text: &str| {
        text.lines()
            .skip_while(|l| !l.starts_with("out:"))
            .take_while(|l| !l.starts_with("completed"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(out(&run_out).contains("  [  0]  -1.5   2.0"), "{run_out}");
    assert_eq!(out(&replay_out), out(&run_out));
}

/// `debug` takes a program of several launches as `run` does (cli/tests/programs.rs): the
/// two passes of the reduction run to the end, one after the other in their stream.
#[test]
fn debug_runs_a_program_of_several_launches_to_its_end() {
    let ptx = workspace()
        .join("tests/kernels/programs/two_pass_reduce.ptx")
        .display()
        .to_string();
    let ron = workspace()
        .join("tests/kernels/programs/two_pass_reduce.ron")
        .display()
        .to_string();
    let dir = scratch(
        "program",
        &[("s.gdb", "info grids\ncontinue\ninfo grids\nquit\n")],
    );
    let script = dir.join("s.gdb").display().to_string();
    let (code, stdout, stderr) = cudasem(
        &dir,
        &["debug", &ptx, "--launch", &ron, "--script", &script],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("a program of 2 launches"), "{stdout}");
    assert!(stdout.contains("1     pass2   0       waiting"), "{stdout}");
    assert!(
        stdout.contains("1     pass2   0       completed"),
        "{stdout}"
    );
}

#[test]
fn bad_launch_syntax() {
    let text = format!(
        "{GOOD_HEAD}    buffers: {{\n        \"a\": (type: \"s32\", len: 128)\n        \"b\": (type: \"s32\", len: 128),\n    }},\n)\n"
    );
    insta::assert_snapshot!("bad_launch_syntax", bad_launch("syntax", &text));
}

#[test]
fn bad_launch_unknown_type() {
    let text = format!(
        "{GOOD_HEAD}    buffers: {{\n        \"a\": (type: \"s33\", len: 128),\n    }},\n)\n"
    );
    insta::assert_snapshot!("bad_launch_unknown_type", bad_launch("unknown_type", &text));
}

#[test]
fn bad_launch_unknown_buffer() {
    let text = format!(
        "{GOOD_HEAD}    buffers: {{\n        \"a\": (type: \"s32\", len: 128),\n        \"c\": (type: \"s32\", len: 128),\n    }},\n    args: [Buffer(\"a\"), Buffer(\"b\"), Buffer(\"c\"), Scalar(type: \"s32\", value: 100)],\n)\n"
    );
    insta::assert_snapshot!(
        "bad_launch_unknown_buffer",
        bad_launch("unknown_buffer", &text)
    );
}

#[test]
fn bad_launch_argument_count() {
    let text = format!(
        "{GOOD_HEAD}    buffers: {{\n        \"a\": (type: \"s32\", len: 128),\n        \"c\": (type: \"s32\", len: 128),\n    }},\n    args: [Buffer(\"a\"), Buffer(\"c\"), Scalar(type: \"s32\", value: 100)],\n)\n"
    );
    insta::assert_snapshot!(
        "bad_launch_argument_count",
        bad_launch("argument_count", &text)
    );
}

#[test]
fn bad_launch_values_too_long_and_out_of_range() {
    let text = format!(
        "{GOOD_HEAD}    buffers: {{\n        \"a\": (type: \"s32\", len: 2, init: Values([1, 2, 3])),\n    }},\n)\n"
    );
    insta::assert_snapshot!(
        "bad_launch_values_too_long",
        bad_launch("values_too_long", &text)
    );
    let text = format!(
        "{GOOD_HEAD}    buffers: {{\n        \"a\": (type: \"u8\", len: 4, init: Values([1, 256])),\n    }},\n)\n"
    );
    insta::assert_snapshot!(
        "bad_launch_value_out_of_range",
        bad_launch("value_out_of_range", &text)
    );
}

#[test]
fn bad_launch_unknown_field_and_kernel() {
    let text = format!("{GOOD_HEAD}    bufers: {{}},\n)\n");
    insta::assert_snapshot!(
        "bad_launch_unknown_field",
        bad_launch("unknown_field", &text)
    );
    let text = "(\n    kernel: \"vecsub\",\n    grid: (1),\n    block: (1),\n)\n";
    insta::assert_snapshot!(
        "bad_launch_unknown_kernel",
        bad_launch("unknown_kernel", text)
    );
}

#[test]
fn device_file_and_flags() {
    let dir = scratch(
        "device",
        &[
            ("dev.ron", "(warp_size: 16, num_sms: 2)\n"),
            ("bad.ron", "(warp_sise: 16)\n"),
        ],
    );
    let ptx = vecadd_ptx();
    let ron = workspace()
        .join("tests/kernels/vecadd.ron")
        .display()
        .to_string();
    let (code, stdout, stderr) = cudasem(
        &dir,
        &[
            "run", &ptx, "--launch", &ron, "--device", "dev.ron", "--format", "json",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json(&stdout)["buffers"]["c"][99], 99 + 1000 - 3 * 99);
    let (code, _, stderr) = cudasem(
        &dir,
        &["run", &ptx, "--launch", &ron, "--device", "bad.ron"],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("bad.ron:1:"), "{stderr}");
    let (code, _, stderr) = cudasem(&dir, &["run", &ptx, "--launch", &ron, "--warp-size", "0"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("warp size 0"), "{stderr}");
}

/// Making room in a full cache is not a silent action: an L2 of one or four lines, all dirty,
/// writes a victim back when a program needs room, whatever `--silent` offers (this run used to
/// end in "deadlock ... waiting for nothing enabled"), and the buffers are the flat run's.
#[test]
fn a_tiny_l2_full_of_dirty_lines_makes_room() {
    let buffers = |out: &str| -> String {
        out.lines()
            .filter(|l| !l.starts_with("completed after"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let vecadd = [
        "run",
        "tests/kernels/vecadd.ptx",
        "--launch",
        "tests/kernels/vecadd.ron",
    ];
    let (code, flat, err) = in_workspace(&vecadd);
    assert_eq!(code, 0, "{err}");
    for lines in ["1", "4"] {
        for silent in ["none", "observable", "all"] {
            let mut args = vecadd.to_vec();
            args.extend([
                "--memory",
                "cached",
                "--l2-lines",
                lines,
                "--silent",
                silent,
            ]);
            let (code, out, err) = in_workspace(&args);
            assert_eq!(code, 0, "--l2-lines {lines} --silent {silent}: {out}{err}");
            assert!(out.contains("completed after"), "{out}");
            assert_eq!(
                buffers(&out),
                buffers(&flat),
                "--l2-lines {lines} --silent {silent}"
            );
        }
    }
}
