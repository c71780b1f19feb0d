//! Fairness for memory (`--memory cached`): a micro step of an in-flight operation is a step of
//! the unit that issued it, silent actions are the memory system's, owed nothing
//! (`explore::units`). Checked on Dat3M's liveness results for the CADP programs
//! (`PTXv7_5-Liveness-expected.csv`: 1 = every execution terminates under a fair scheduler):
//! translated to PTX, explored under `fair` at warp level (each litmus thread is a warp), the
//! verdict under cached memory equals the expected one and the flat one, and a lasso, when
//! there is one, replays and closes.

use corpus::conformance_path;
use explore::progress::{ProgressModel, Verdict};
use explore::{Folding, Level, Limits, explore};
use litmus::parse::parse;
use litmus::translate::translate;
use scheduler::outcome::Observe;
use scheduler::replay::{CycleCheck, replay};
use semantics::machine::MemoryKind;

/// The verdict under weak `fair` at warp level, with `memory`; `None` when bounded out.
fn verdict(path: &str, memory: MemoryKind, folding: Folding) -> Option<Verdict> {
    let text = std::fs::read_to_string(conformance_path().join("ptx-litmus").join(path)).unwrap();
    let test = parse(&text).unwrap();
    let t = translate(&test, memory).unwrap();
    let m = litmus::start(&t).unwrap();
    let limits = Limits {
        max_states: 300_000,
        folding,
        ..Limits::default()
    };
    let x = explore(&m, Level::Warps, &Observe::default(), limits).unwrap();
    let fair: ProgressModel = "fair".parse().unwrap();
    let v = x.verdict(fair)?;
    if let Some(l) = x.lasso(fair) {
        let mut all = l.stem.clone();
        all.extend_from_slice(&l.cycle);
        let mut fresh = m.clone();
        let r = replay(&mut fresh, &all, None, Some(l.stem.len()), false);
        assert_eq!(r.divergence, None, "{path}: the lasso does not replay");
        if !l.cycle.is_empty() {
            assert!(
                matches!(r.cycle, Some(CycleCheck::Closed { .. })),
                "{path}: the cycle does not close"
            );
        }
    }
    Some(v)
}

/// The example: P0 stores 1 then 0, P1 spins while it reads 1. Every fair execution
/// ends (P0's second store is eventually performed); charging P1's load micro steps to P0 made
/// a lasso in which P0 never ran its second store.
#[test]
fn cadp_4_simple_terminates_under_cached_memory() {
    let path = "CADP/2_threads_3_instructions/4_simple.litmus";
    if !conformance_path().join("ptx-litmus").join(path).is_file() {
        eprintln!("ptx-litmus conformance suite not found; skipping");
        return;
    }
    for folding in [Folding::None, Folding::Invisible] {
        assert_eq!(
            verdict(path, MemoryKind::Flat, folding),
            Some(Verdict::Pass)
        );
        assert_eq!(
            verdict(path, MemoryKind::Cached, folding),
            Some(Verdict::Pass),
            "{folding}"
        );
    }
}

/// Every CADP program of the liveness CSV (70, 2 and 3 threads): cached memory agrees with the
/// expected verdict, as flat memory does. (The CSV's other rows, barrier and quorum tests,
/// disagree under flat memory too: barrier counting, not memory.)
#[test]
fn cadp_programs_agree_with_dat3m() {
    let csv = conformance_path().join("ptx-litmus/PTXv7_5-Liveness-expected.csv");
    let Ok(csv) = std::fs::read_to_string(csv) else {
        eprintln!("ptx-litmus conformance suite not found; skipping");
        return;
    };
    let mut checked = 0;
    let mut wrong = Vec::new();
    for line in csv.lines() {
        let Some((path, expected)) = line.split_once(',') else {
            continue;
        };
        let Some(path) = path.strip_prefix("litmus/PTX/") else {
            continue;
        };
        if !path.starts_with("CADP/") {
            continue;
        }
        let expected = if expected.trim() == "1" {
            Verdict::Pass
        } else {
            Verdict::Fail
        };
        for memory in [MemoryKind::Flat, MemoryKind::Cached] {
            match verdict(path, memory, Folding::Invisible) {
                Some(v) if v == expected => {}
                Some(v) => wrong.push(format!("{path} {memory:?}: {v:?}, expected {expected:?}")),
                None => wrong.push(format!("{path} {memory:?}: bounded out")),
            }
        }
        checked += 1;
    }
    assert!(checked >= 70, "{checked} checked");
    assert!(
        wrong.is_empty(),
        "{} disagree:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
