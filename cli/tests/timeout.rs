//! The time bound (`--timeout`): a command that would run for long stops at it, says so, exits
//! 1 and claims nothing it did not finish. The spin lock of Listing 6.2 in one warp never
//! terminates under the SIMT stack, so only a bound ends it; the step bound is far away.

mod common;

use common::cudasem_here;
use serde_json::Value;
use std::time::Instant;

const SPIN: [&str; 5] = [
    "tests/thesis/listing_6_2.ptx",
    "--grid",
    "1",
    "--block",
    "2",
];

fn json(out: &str) -> Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn run_stops_at_the_time_limit() {
    let mut args = vec!["run"];
    args.extend(SPIN);
    args.extend(["--timeout", "0.3", "--format", "json"]);
    let start = Instant::now();
    let (code, out, err) = cudasem_here(&args);
    assert_eq!(code, 1, "{err}");
    let j = json(&out);
    assert_eq!(j["status"], "time_limit", "{j}");
    assert!(j["note"].as_str().is_some_and(|n| n.contains("--timeout")));
    // Stopped by the bound, not by the 100M-step limit (which would take far longer).
    assert!(j["steps"].as_u64().is_some_and(|s| s < 100_000_000), "{j}");
    assert!(start.elapsed().as_secs() < 60);
}

#[test]
fn fuzz_stops_and_counts_only_finished_runs() {
    let mut args = vec!["fuzz"];
    args.extend(SPIN);
    args.extend([
        "--runs",
        "1000000",
        "--max-steps",
        "1000000000",
        "--timeout",
        "0.3",
        "--format",
        "json",
    ]);
    let (code, out, err) = cudasem_here(&args);
    assert_eq!(code, 1, "{err}");
    let j = json(&out);
    assert_eq!(j["time_limit_hit"], true, "{j}");
    // The bound in the words every command uses.
    assert_eq!(j["bound_hit"]["bound"], "time", "{j}");
    assert_eq!(j["bound_hit"]["limit"], 300, "{j}");
    assert_eq!(j["runs_asked"], 1_000_000);
    // Every counted run finished: none of them is a time-limit outcome.
    let counted: u64 = j["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .map(|o| {
            assert_ne!(o["status"], "time-limit", "{o}");
            o["count"].as_u64().expect("count")
        })
        .sum();
    assert_eq!(Some(counted), j["runs"].as_u64());
}

#[test]
fn check_stops_at_the_time_limit() {
    let mut args = vec!["check"];
    args.extend(SPIN);
    args.extend(["--timeout", "0.3", "--format", "json"]);
    let (code, out, err) = cudasem_here(&args);
    assert_eq!(code, 1, "{err}");
    let j = json(&out);
    assert_eq!(j["complete"], false);
    assert!(
        j["errors"]
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["kind"] == "time_limit")),
        "{j}"
    );
    // The coverage names the bound that stopped it, not a kernel that failed to complete.
    assert!(
        j["coverage"]
            .as_str()
            .is_some_and(|c| c.contains("(--timeout 0.3 reached)")),
        "{j}"
    );
}

#[test]
fn a_bad_timeout_is_a_usage_error() {
    let mut args = vec!["run"];
    args.extend(SPIN);
    args.extend(["--timeout", "0"]);
    let (code, _, err) = cudasem_here(&args);
    assert_eq!(code, 2);
    assert!(err.contains("positive"), "{err}");
}

/// The spin-lock corpus kernel (many threads in one block, blocks spinning on one lock) has
/// millions of states without the symmetry reduction over its identical blocks (with it, some
/// eight thousand at 8 blocks): a short time bound cuts every search first.
const BIG: [&str; 5] = [
    "tests/kernels/spinlock.ptx",
    "--launch",
    "tests/kernels/spinlock.ron",
    "--grid",
    "8",
];

#[test]
fn explore_stops_and_proves_nothing() {
    for search in ["full", "outcomes"] {
        let mut args = vec!["explore"];
        args.extend(BIG);
        args.extend([
            "--search",
            search,
            "--max-states",
            "100000000",
            "--symmetry",
            "none",
            "--timeout",
            "0.3",
            "--format",
            "json",
        ]);
        let (code, out, err) = cudasem_here(&args);
        assert_eq!(code, 1, "{search}: {err}");
        let j = json(&out);
        assert_eq!(j["bound"]["time_limit_hit"], true, "{search}: {j}");
        assert_eq!(j["bound"]["hit"], true, "{search}: {j}");
        assert!(j["terminates"].is_null(), "{search}: no verdict: {j}");
    }
}

#[test]
fn litmus_stops_without_a_verdict() {
    let root = std::env::var_os("CUDASEM_CONFORMANCE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| common::workspace().join("../shared/conformance"));
    let dir = root.join("ptx-litmus/Manual");
    let file = dir.join("Cause-base-strong.litmus");
    if !file.is_file() {
        eprintln!(
            "conformance data absent ({}): test skipped; set CUDASEM_CONFORMANCE or put shared/ beside the checkout",
            file.display()
        );
        return;
    }
    let file = file.display().to_string();
    let (code, out, err) = cudasem_here(&[
        "litmus",
        &file,
        "--memory",
        "cached",
        "--timeout",
        "0.2",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let j = json(&out);
    assert_eq!(j["status"], "time_limit", "{j}");
    assert!(j["holds"].is_null(), "{j}");
}
