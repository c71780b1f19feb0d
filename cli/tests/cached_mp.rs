//! Issue 4's message-passing kernels (`tests/kernels/mp/`) explored exhaustively under
//! `--memory cached`: block 0 stores data then flag, block 1 loads flag then data. The stale
//! outcome `out = [1, 0]` must be reachable with plain (weak) accesses and with `.volatile` flag
//! accesses alone, and never with release/acquire, `.volatile` + `membar.gl`, or `.relaxed.gpu` +
//! `fence.acq_rel.gpu`, as the PTX memory model requires.

use std::collections::BTreeSet;
use std::process::Command;

mod common;
use common::workspace;

/// The `out` values of every final outcome of an exhaustive exploration.
fn outcomes(kernel: &str, silent: &str) -> BTreeSet<Vec<String>> {
    let ptx = format!("tests/kernels/mp/{kernel}.ptx");
    let ron = format!("tests/kernels/mp/{kernel}.ron");
    let out = Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        // One block per SM: the two blocks get different L1s.
        .args(["explore", &ptx, "--launch", &ron, "--memory", "cached"])
        .args(["--max-blocks-per-sm", "1"])
        .args(["--silent", silent, "--format", "json"])
        .current_dir(workspace())
        .env("NO_COLOR", "1")
        .output()
        .expect("the cudasem binary runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{kernel}: not JSON ({e}): {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(
        json["bound"]["hit"], false,
        "{kernel}: the exploration must be complete"
    );
    json["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .map(|o| {
            assert_eq!(o["status"], "completed", "{kernel}: {o}");
            o["data"][0][1]
                .as_array()
                .expect("out values")
                .iter()
                // Outcome values are JSON numbers, as in `run`.
                .map(|v| {
                    v.as_i64()
                        .map_or_else(|| format!("not a number: {v}"), |n| n.to_string())
                })
                .collect()
        })
        .collect()
}

fn out(flag: &str, data: &str) -> Vec<String> {
    vec![flag.to_string(), data.to_string()]
}

#[test]
fn weak_message_passing_shows_the_stale_outcome() {
    let seen = outcomes("mp_weak", "none");
    assert!(seen.contains(&out("1", "0")), "{seen:?}");
    // And the three sequentially consistent outcomes.
    for o in [out("0", "0"), out("0", "1"), out("1", "1")] {
        assert!(seen.contains(&o), "{seen:?}");
    }
}

#[test]
fn volatile_flag_without_fences_still_shows_it() {
    let seen = outcomes("mp_volatile_only", "none");
    assert!(seen.contains(&out("1", "0")), "{seen:?}");
}

#[test]
fn release_acquire_never_shows_it() {
    // With the observable silent actions too (L1 evictions and flushes as choices).
    let seen = outcomes("mp_release_acquire", "observable");
    assert!(!seen.contains(&out("1", "0")), "{seen:?}");
    assert!(seen.contains(&out("1", "1")), "{seen:?}");
}

#[test]
fn volatile_with_membar_gl_never_shows_it() {
    let seen = outcomes("mp_volatile_membar", "none");
    assert!(!seen.contains(&out("1", "0")), "{seen:?}");
    assert!(seen.contains(&out("1", "1")), "{seen:?}");
}

#[test]
fn relaxed_with_fence_acq_rel_never_shows_it() {
    let seen = outcomes("mp_relaxed_fence", "none");
    assert!(!seen.contains(&out("1", "0")), "{seen:?}");
    assert!(seen.contains(&out("1", "1")), "{seen:?}");
}
