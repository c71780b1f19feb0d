//! End-to-end `--print-register BLOCK.THREAD:%REG`: a litmus test's translated PTX
//! (`litmus --emit-ptx`) keeps its outcome in the reader's final registers, and `explore`,
//! `fuzz`, `run` and `replay` show them and tell outcomes apart by them, as `litmus` does;
//! bad specifications are bad input naming the flag.

mod common;

use common::{Scratch, cudasem_here};

/// MP with two threads in two CTAs: the reader's registers take three value pairs.
const MP: &str = "tests/litmus/families/MP-2.litmus";

/// `litmus --emit-ptx` of [`MP`] into a scratch folder; the PTX file's path.
fn translated(scratch: &Scratch) -> String {
    let dir = scratch.to_path_buf().display().to_string();
    let (code, _, err) = cudasem_here(&["litmus", MP, "--emit-ptx", &dir]);
    assert_eq!(code, 0, "{err}");
    scratch.to_path_buf().join("MP-2.ptx").display().to_string()
}

const LAUNCH: [&str; 6] = ["--kernel", "litmus", "--grid", "2", "--block", "1"];
const REGISTERS: [&str; 4] = [
    "--print-register",
    "1.0:%t1_r0",
    "--print-register",
    "1.0:%t1_r1",
];

fn args<'a>(command: &'a str, ptx: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![command, ptx];
    a.extend(LAUNCH);
    a.extend(more);
    a
}

#[test]
fn explore_tells_outcomes_apart_by_final_registers() {
    let scratch = Scratch::new("print-register", "explore");
    let ptx = translated(&scratch);
    // Memory alone ends the same in every run: one outcome.
    let (code, out, err) = cudasem_here(&args("explore", &ptx, &[]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("outcomes (1)"), "{out}");
    // The reader's registers: the three outcomes `litmus` lists (never r0=1, r1=0).
    let (code, out, err) = cudasem_here(&args("explore", &ptx, &REGISTERS));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("outcomes (3)"), "{out}");
    for (r0, r1) in [(0, 0), (0, 1), (1, 1)] {
        let shown = format!("%t1_r0@1.0=[{r0}] %t1_r1@1.0=[{r1}]");
        assert!(out.contains(&shown), "no {shown} in:\n{out}");
    }
    assert!(!out.contains("%t1_r0@1.0=[1] %t1_r1@1.0=[0]"), "{out}");
    // The stateless search finds the same three.
    let mut outcomes = REGISTERS.to_vec();
    outcomes.extend(["--search", "outcomes"]);
    let (code, out, err) = cudasem_here(&args("explore", &ptx, &outcomes));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("outcomes (3)"), "{out}");
}

#[test]
fn a_witness_replays_to_the_registers_it_was_listed_with() {
    let scratch = Scratch::new("print-register", "replay");
    let ptx = translated(&scratch);
    let (_, out, _) = cudasem_here(&args("explore", &ptx, &REGISTERS));
    // The witness of the outcome r0=0, r1=1: its replay command carries the flags.
    let lines: Vec<&str> = out.lines().map(str::trim).collect();
    let at = lines
        .iter()
        .position(|l| l.contains("%t1_r0@1.0=[0] %t1_r1@1.0=[1]"))
        .expect("the outcome is listed");
    let replay = lines[at + 1]
        .strip_prefix("witness: cudasem ")
        .expect("a witness line follows");
    let replay: Vec<&str> = replay.split_whitespace().collect();
    assert!(replay.contains(&"--print-register"), "{replay:?}");
    let mut run = replay.clone();
    run.push("--format");
    run.push("json");
    let (code, out, err) = cudasem_here(&run);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        json["run"]["buffers"]["%t1_r0@1.0"],
        serde_json::json!([0]),
        "{out}"
    );
    assert_eq!(
        json["run"]["buffers"]["%t1_r1@1.0"],
        serde_json::json!([1]),
        "{out}"
    );
}

#[test]
fn fuzz_and_run_print_the_registers() {
    let scratch = Scratch::new("print-register", "fuzz");
    let ptx = translated(&scratch);
    let mut fuzz = REGISTERS.to_vec();
    fuzz.extend(["--runs", "200"]);
    let (code, out, err) = cudasem_here(&args("fuzz", &ptx, &fuzz));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("%t1_r1@1.0=["), "{out}");
    // Round-robin runs the writer first: the reader sees both stores.
    let (code, out, err) = cudasem_here(&args("run", &ptx, &REGISTERS));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("%t1_r0@1.0: s32[1]\n  [0] 1"), "{out}");
}

#[test]
fn a_bad_register_spec_is_bad_input_that_says_what_to_write() {
    let scratch = Scratch::new("print-register", "bad");
    let ptx = translated(&scratch);
    for (spec, says) in [
        ("2.0:%t1_r0", "the grid has 2 block(s)"),
        ("1.1:%t1_r0", "a block has 1 thread(s)"),
        ("1.0:%nope", "`%nope` is not a register of `litmus`"),
        ("1:%t1_r0", "its thread is not BLOCK.THREAD"),
        ("1.0", "it has no `:%REG`"),
        ("a.0:%t1_r0", "its block `a` is not a number"),
    ] {
        let (code, out, err) = cudasem_here(&args("explore", &ptx, &["--print-register", spec]));
        assert_eq!(code, 2, "{spec}: {out}{err}");
        assert!(
            err.contains(&format!("--print-register {spec}: {says}")),
            "{spec}: {err}"
        );
        assert!(err.contains("help:"), "{err}");
    }
}
