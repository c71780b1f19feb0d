//! End-to-end `cudasem explore`: Listing 6.2's lasso under the SIMT stack (with the break token
//! in every cycle step and a replay command that closes the cycle), proofs of termination under
//! ITS and with two blocks, the JSON keys, and a bound that withholds the verdict.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// Exit code, stdout, stderr of `cudasem ARGS` run from the workspace root.
fn cudasem(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        .args(args)
        .current_dir(workspace())
        .env_remove("CUDASEM_LOG")
        .output()
        .expect("the cudasem binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The arguments of the `cudasem replay ...` line in `text` (no argument needs quoting).
fn replay_args(text: &str) -> Vec<String> {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cudasem replay "))
        .unwrap_or_else(|| panic!("no replay command in:\n{text}"));
    line.split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect()
}

const L62: &str = "tests/thesis/listing_6_2.ptx";

#[test]
fn listing_6_2_one_warp_simt_stack_has_a_replayable_lasso() {
    let (code, out, err) = cudasem(&["explore", L62, "--launch", "tests/thesis/listing_6_2.ron"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("the exploration is complete"), "{out}");
    assert!(
        out.contains("verdict: may not terminate under fair (weak) at level lanes"),
        "{out}"
    );
    assert!(out.contains("disabled somewhere on it"), "{out}");
    let cycle: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "cycle:")
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .collect();
    assert!(!cycle.is_empty(), "{out}");
    for l in &cycle {
        assert!(
            l.contains("break 0x3"),
            "the break token is never popped: {l}"
        );
    }
    let args = replay_args(&out);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = cudasem(&args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("every choice was enabled"), "{out}");
    assert!(out.contains("the cycle closes"), "{out}");
}

#[test]
fn listing_6_2_terminates_under_its_with_fair_lanes() {
    let (code, out, err) = cudasem(&[
        "explore",
        L62,
        "--launch",
        "tests/thesis/listing_6_2.ron",
        "--warp-model",
        "its",
        "--progress",
        "fair",
        "--level",
        "lanes",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("verdict: terminates under fair (weak) at level lanes"),
        "{out}"
    );
    assert!(out.contains("completed  lock=[1]"), "{out}");
}

#[test]
fn listing_6_2_two_blocks_fair_terminates_unfair_has_a_lasso() {
    let launch = "tests/thesis/listing_6_2.two_blocks.ron";
    let (code, out, _) = cudasem(&[
        "explore",
        L62,
        "--launch",
        launch,
        "--progress",
        "fair",
        "--level",
        "blocks",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{out}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["terminates"], true);
    assert!(j["lasso"].is_null());
    assert!(j["states"].as_u64().unwrap() > 0);
    assert_eq!(j["outcomes"].as_array().unwrap().len(), 1);
    let (code, out, _) = cudasem(&[
        "explore",
        L62,
        "--launch",
        launch,
        "--progress",
        "unfair",
        "--level",
        "blocks",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["terminates"], false);
    assert!(!j["lasso"]["cycle"].as_array().unwrap().is_empty());
    assert!(
        j["lasso"]["replay"]
            .as_str()
            .unwrap()
            .starts_with("cudasem replay cudasem2:")
    );
}

#[test]
fn a_bound_withholds_the_verdict() {
    let (code, out, _) = cudasem(&[
        "explore",
        L62,
        "--launch",
        "tests/thesis/listing_6_2.two_blocks.ron",
        "--max-states",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(j["terminates"].is_null());
    assert!(j["lasso"].is_null());
    assert_eq!(j["bound"]["hit"], true);
    assert_eq!(j["bound"]["max_states"], 2);
}

#[test]
fn grid_barrier_on_a_device_too_small_has_a_lasso_under_fair() {
    let args = [
        "explore",
        "tests/kernels/grid_barrier.ptx",
        "--grid",
        "2",
        "--block",
        "1",
        "--buffer",
        "in:s32:2:values:1,2",
        "--buffer",
        "partial:s32:2",
        "--buffer",
        "count:s32:1",
        "--buffer",
        "out:s32:2",
        "--arg",
        "buffer:in",
        "--arg",
        "buffer:partial",
        "--arg",
        "buffer:count",
        "--arg",
        "buffer:out",
        "--arg",
        "s32:2",
        "--print",
        "out",
        "--progress",
        "fair",
        "--level",
        "blocks",
    ];
    let (code, out, err) = cudasem(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("completed  out=[3, 3]"), "{out}");
    let mut small: Vec<&str> = args.to_vec();
    small.extend(["--sms", "1", "--max-blocks-per-sm", "1"]);
    let (code, out, err) = cudasem(&small);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("may not terminate under fair (weak) at level blocks"),
        "{out}"
    );
    assert!(out.contains("{block 1}"), "{out}");
    let replay = replay_args(&out);
    let replay: Vec<&str> = replay.iter().map(String::as_str).collect();
    let (code, out, err) = cudasem(&replay);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("the cycle closes"), "{out}");
}

/// `--dot` draws Listing 6.2's lasso (one warp, SIMT stack): stem edges, then red cycle edges
/// back to the doubly circled state, each labelled with its choice and PTX instruction.
#[test]
fn explore_dot_draws_the_lasso() {
    let (code, out, err) = cudasem(&[
        "explore",
        L62,
        "--launch",
        "tests/thesis/listing_6_2.ron",
        "--dot",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.starts_with("digraph lasso {"), "{out}");
    // The last red (cycle) edge returns to the doubly circled state where the cycle starts.
    let start = out
        .lines()
        .find(|l| l.contains("doublecircle"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no cycle start in {out}"));
    let red: Vec<&str> = out.lines().filter(|l| l.contains("color=red]")).collect();
    let last = red
        .last()
        .unwrap_or_else(|| panic!("no cycle edge in {out}"));
    assert!(last.contains(&format!("-> {start} ")), "{last}");
    insta::assert_snapshot!("listing_6_2_lasso_dot", out);
}

const SPINLOCK: [&str; 4] = [
    "explore",
    "tests/kernels/spinlock.ptx",
    "--launch",
    "tests/kernels/spinlock.ron",
];

/// The states count of a text report's first line.
fn states_of(out: &str) -> u64 {
    let first = out.lines().next().unwrap_or_default();
    let (_, rest) = first.split_once("): ").expect("a header line");
    rest.split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn the_spin_lock_is_explored_up_to_a_permutation_of_its_blocks() {
    let run = |extra: &[&str]| {
        let mut args = SPINLOCK.to_vec();
        args.extend_from_slice(&["--grid", "3", "--level", "blocks"]);
        args.extend_from_slice(extra);
        let (code, out, err) = cudasem(&args);
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains("verdict: terminates under"), "{out}");
        out
    };
    let sym = run(&[]);
    assert!(
        sym.contains("symmetry: blocks: states (and an outcome's terminal states) are counted up to a permutation of the blocks"),
        "{sym}"
    );
    let plain = run(&["--symmetry", "none"]);
    assert!(!plain.contains("symmetry:"), "{plain}");
    let unreduced = run(&["--reduction", "none"]);
    assert!(!unreduced.contains("symmetry:"), "{unreduced}");
    assert!(states_of(&sym) < states_of(&plain), "{sym}{plain}");
    // The outcomes are the same, counts of terminal states aside.
    let outcomes = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.starts_with("  completed"))
            .map(|l| l.split("  (").next().unwrap().to_string())
            .collect()
    };
    assert_eq!(outcomes(&sym), outcomes(&plain));
    // A model whose F depends on the units' names gets no symmetry, and the report says why.
    let obe = run(&["--progress", "obe"]);
    assert!(
        obe.contains(
            "symmetry: not applied (the progress model obe depends on which unit is which"
        ),
        "{obe}"
    );
    assert_eq!(
        states_of(&obe),
        states_of(&run(&["--progress", "obe", "--symmetry", "none"]))
    );
}

#[test]
fn a_kernel_that_reads_ctaid_says_why_symmetry_is_not_applied() {
    let (_, out, err) = cudasem(&[
        "explore",
        "tests/kernels/grid_barrier.ptx",
        "--launch",
        "tests/kernels/grid_barrier.ron",
        "--grid",
        "2",
        "--max-states",
        "20",
        "--format",
        "json",
    ]);
    let j: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    assert_eq!(j["symmetry"], "not_applied");
    assert!(
        j["symmetry_note"]
            .as_str()
            .unwrap()
            .contains("the kernel reads %ctaid"),
        "{out}"
    );
}

#[test]
fn the_symmetric_search_is_the_same_at_any_jobs() {
    let run = |jobs: &str| {
        let mut args = SPINLOCK.to_vec();
        args.extend_from_slice(&[
            "--grid",
            "3",
            "--progress",
            "unfair",
            "--format",
            "json",
            "--jobs",
            jobs,
        ]);
        let (code, out, err) = cudasem(&args);
        assert_eq!(code, 1, "{out}{err}");
        let mut j: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(j["symmetry"], "blocks");
        assert!(!j["lasso"]["cycle"].as_array().unwrap().is_empty());
        for timing in ["seconds", "states_per_second"] {
            j.as_object_mut().unwrap().remove(timing);
        }
        j
    };
    assert_eq!(run("1"), run("2"));
}

#[test]
fn an_unknown_symmetry_is_a_usage_error() {
    let mut args = SPINLOCK.to_vec();
    args.extend_from_slice(&["--symmetry", "warps"]);
    let (code, out, err) = cudasem(&args);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("unknown symmetry `warps`"), "{err}");
}

/// The grid barrier's loads of `in[]` and, once every block has added to the counter, of the
/// counter and the partial sums, read words no other block writes again: the default search
/// folds them (JSON `settled_loads`), and decides the barrier in far fewer states than
/// `--reduction none`, with the same verdict.
#[test]
fn loads_of_settled_words_are_folded_by_the_default_search() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "explore",
            "tests/kernels/grid_barrier.ptx",
            "--launch",
            "tests/kernels/grid_barrier.ron",
            "--grid",
            "2",
            "--progress",
            "fair",
            "--level",
            "blocks",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let (code, out, err) = cudasem(&args);
        assert_eq!(code, 0, "{out}{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    };
    let folded = run(&[]);
    let none = run(&["--reduction", "none"]);
    assert_eq!(folded["settled_loads"], "folded", "{folded}");
    assert_eq!(none["settled_loads"], "off", "{none}");
    assert_eq!(folded["terminates"], true, "{folded}");
    assert_eq!(none["terminates"], true, "{none}");
    assert!(
        folded["states"].as_u64() < none["states"].as_u64(),
        "{folded} {none}"
    );
    assert_eq!(folded["outcomes"].as_array().map(Vec::len), Some(1));
    assert_eq!(none["outcomes"].as_array().map(Vec::len), Some(1));
}
