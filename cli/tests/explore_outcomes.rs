//! `cudasem explore --search outcomes` (sleep-set DFS with state caching) finds exactly the
//! final outcomes of the full stateful search, on the message-passing kernels under
//! `--memory cached` (the stale `out = [1, 0]` for `mp_weak`, never for `mp_release_acquire`)
//! and on corpus kernels with spin loops (state caching must end them), in fewer states.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// The JSON report of `cudasem explore PTX --launch RON EXTRA... --format json`.
fn explore(ptx: &str, ron: &str, extra: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        .args(["explore", ptx, "--launch", ron, "--format", "json"])
        .args(extra)
        .current_dir(workspace())
        .env("NO_COLOR", "1")
        .env_remove("CUDASEM_LOG")
        .output()
        .expect("the cudasem binary runs");
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{ptx} {extra:?}: not JSON ({e}): {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// (status, data) of every outcome.
fn outcome_set(j: &Value) -> BTreeSet<String> {
    j["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .map(|o| format!("{} {}", o["status"], o["data"]))
        .collect()
}

/// Both searches on one launch: same outcomes, and the outcomes search claims no verdict.
/// (Its `states` are not compared: under DPOR they are nodes of the schedule tree, which on a
/// tiny kernel may outnumber the full search's distinct states.) Returns the outcome set.
fn same_outcomes(ptx: &str, ron: &str, extra: &[&str]) -> BTreeSet<String> {
    let full = explore(ptx, ron, extra);
    let mut args = extra.to_vec();
    args.extend(["--search", "outcomes"]);
    let fast = explore(ptx, ron, &args);
    assert_eq!(full["bound"]["hit"], false, "{ptx}: full search complete");
    assert_eq!(
        fast["bound"]["hit"], false,
        "{ptx}: outcomes search complete"
    );
    assert_eq!(fast["search"], "outcomes");
    assert!(fast["terminates"].is_null(), "{ptx}: {fast}");
    assert!(fast["lasso"].is_null(), "{ptx}: {fast}");
    let (a, b) = (outcome_set(&full), outcome_set(&fast));
    assert!(!a.is_empty(), "{ptx}: some outcome");
    assert_eq!(a, b, "{ptx}: the two searches disagree");
    let (sf, so) = (
        full["states"].as_u64().expect("states"),
        fast["states"].as_u64().expect("states"),
    );
    eprintln!("{ptx} {extra:?}: full {sf} states, outcomes {so} states");
    b
}

fn mp(kernel: &str) -> BTreeSet<String> {
    same_outcomes(
        &format!("tests/kernels/mp/{kernel}.ptx"),
        &format!("tests/kernels/mp/{kernel}.ron"),
        &["--memory", "cached", "--silent", "none"],
    )
}

/// The stale read: the flag seen, the data not.
fn stale(set: &BTreeSet<String>) -> bool {
    set.iter().any(|o| o.contains("[1,0]"))
}

#[test]
fn mp_weak_cached_has_the_stale_outcome_in_both_searches() {
    let set = mp("mp_weak");
    assert!(stale(&set), "{set:?}");
}

#[test]
fn mp_release_acquire_cached_never_has_the_stale_outcome() {
    let set = mp("mp_release_acquire");
    assert!(!stale(&set), "{set:?}");
}

#[test]
fn mp_volatile_kernels_agree() {
    let only = mp("mp_volatile_only");
    assert!(stale(&only), "{only:?}");
    let fenced = mp("mp_volatile_membar");
    assert!(!stale(&fenced), "{fenced:?}");
}

#[test]
fn spin_locks_and_corpus_kernels_agree() {
    // Listing 6.2 and 6.1 with two blocks: spin loops, a cyclic state space.
    same_outcomes(
        "tests/thesis/listing_6_2.ptx",
        "tests/thesis/listing_6_2.two_blocks.ron",
        &[],
    );
    same_outcomes(
        "tests/thesis/listing_6_1.ptx",
        "tests/thesis/listing_6_1.two_blocks.ron",
        &[],
    );
    same_outcomes(
        "tests/kernels/divergent_if_else.ptx",
        "tests/kernels/divergent_if_else.ron",
        &["--max-states", "200000"],
    );
}

#[test]
fn outcomes_search_text_reports_bound_and_no_verdict() {
    let out = Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        .args([
            "explore",
            "tests/thesis/listing_6_2.ptx",
            "--launch",
            "tests/thesis/listing_6_2.two_blocks.ron",
            "--search",
            "outcomes",
        ])
        .current_dir(workspace())
        .env_remove("CUDASEM_LOG")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("sleep sets"), "{text}");
    assert!(text.contains("--max-transitions"), "{text}");
    assert!(text.contains("termination: not decided"), "{text}");
    // A tiny bound: reported, and the exit code says incomplete.
    let cut = Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        .args([
            "explore",
            "tests/thesis/listing_6_2.ptx",
            "--launch",
            "tests/thesis/listing_6_2.two_blocks.ron",
            "--search",
            "outcomes",
            "--max-transitions",
            "3",
        ])
        .current_dir(workspace())
        .env_remove("CUDASEM_LOG")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&cut.stdout);
    assert!(text.contains("REACHED"), "{text}");
    assert_eq!(cut.status.code(), Some(1), "{text}");
}
