//! Persistent sets of blocks under cached memory (`explore::dependence::block_persistent_sets`,
//! issue 15 item 4) against the unreduced searches, on the PTX litmus suite and the families:
//! * the litmus command's stateful search with them (`Por::Persistent`) must give the outcomes
//!   with their counts of distinct final states of the same search without them and of the
//!   search without any reduction (`--reduction none`), reach a deadlock exactly when those do
//!   (their number may differ by states that differ only in the ids of in-flight ops: the
//!   module's header), and its witnesses must replay on the cached machine;
//! * they must cut the states (MP-2 below the fold alone).
//!
//! A set that left out a choice of another block that can touch the set's places loses an
//! outcome here.

use corpus::{conformance_path, litmus_files, workspace_root};
use explore::{Folding, Por};
use litmus::parse::parse;
use litmus::search::{Exploration, explore_until_with};
use litmus::translate::{Translation, translate};
use scheduler::Stop;
use scheduler::replay::replay;
use semantics::machine::{Machine, MemoryKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MAX_STATES: usize = 60_000;

/// The machine and translation of a litmus file under cached memory (`None` when it cannot be
/// translated).
fn cached_machine(path: &Path) -> Option<(Machine, Translation)> {
    let text = std::fs::read_to_string(path).ok()?;
    let test = parse(&text).ok()?;
    let t = translate(&test, MemoryKind::Cached).ok()?;
    let m = litmus::start(&t).ok()?;
    Some((m, t))
}

fn family(name: &str, n: usize) -> PathBuf {
    workspace_root().join(format!("tests/litmus/families/{name}-{n}.litmus"))
}

/// Outcomes with their counts, whether a deadlock and whether a fault was found.
type Answer = (BTreeMap<Vec<i64>, usize>, bool, bool);

fn answer(r: &Exploration) -> Answer {
    (r.outcomes.clone(), r.deadlocks > 0, r.faults > 0)
}

fn search(m: &Machine, t: &Translation, folding: Folding, por: Por, max: usize) -> Exploration {
    explore_until_with(m.clone(), t, max, folding, por, &Stop::never())
}

/// The search with the sets, with the fold alone, and without any reduction: same answers,
/// every witness replays to its outcome; the states of each (`None` when one is bounded).
fn compare(path: &Path) -> Option<[usize; 3]> {
    let name = path.display().to_string();
    let (m, t) = cached_machine(path)?;
    let reduced = search(&m, &t, Folding::Invisible, Por::Persistent, MAX_STATES);
    if reduced.bounded {
        return None;
    }
    let folded = search(&m, &t, Folding::Invisible, Por::None, 4 * MAX_STATES);
    if folded.bounded {
        return None;
    }
    let none = search(&m, &t, Folding::None, Por::None, 8 * MAX_STATES);
    if none.bounded {
        return None;
    }
    assert!(reduced.refused.is_none(), "{name}: refused");
    assert_eq!(
        answer(&reduced),
        answer(&folded),
        "{name}: vs the fold alone"
    );
    assert_eq!(answer(&reduced), answer(&none), "{name}: vs no reduction");
    assert!(reduced.states <= folded.states, "{name}: more states");
    for (values, path) in &reduced.paths {
        let mut fresh = m.clone();
        let r = replay(&mut fresh, path, None, None, false);
        assert_eq!(r.divergence, None, "{name}: the witness diverges");
        assert_eq!(&litmus::search::observe(&fresh, &t), values, "{name}");
    }
    Some([reduced.states, folded.states, none.states])
}

#[test]
fn block_sets_keep_the_cached_litmus_answers_on_the_suite_and_the_families() {
    let dir = conformance_path().join("ptx-litmus");
    let mut files = Vec::new();
    litmus_files(&dir, &mut files);
    assert!(!files.is_empty(), "no litmus files under {}", dir.display());
    // The CADP forward-progress tests spin: every 8th of them.
    let mut cadp = 0;
    files.retain(|f| {
        !f.display().to_string().contains("CADP") || {
            cadp += 1;
            cadp % 8 == 1
        }
    });
    for name in ["MP", "SB", "LB"] {
        files.push(family(name, 2));
    }
    let (mut compared, mut smaller) = (0, 0);
    let mut states = [0usize; 3];
    for f in &files {
        let Some(s) = compare(f) else {
            continue;
        };
        compared += 1;
        smaller += (s[0] < s[1]) as usize;
        for (total, n) in states.iter_mut().zip(s) {
            *total += n;
        }
    }
    println!(
        "{compared} compared, {smaller} smaller; states: {} block sets, {} fold alone, {} no reduction",
        states[0], states[1], states[2]
    );
    assert!(compared > 40, "only {compared} tests compared");
    assert!(2 * smaller > compared, "{smaller} of {compared} smaller");
}

/// The sets cut MP-2's states under cached memory (before them, the search with
/// `Por::Persistent` visited every state the fold alone did).
#[test]
fn block_sets_cut_the_states_of_mp_2_under_cached_memory() {
    let (m, t) = cached_machine(&family("MP", 2)).expect("MP-2");
    let reduced = search(&m, &t, Folding::Invisible, Por::Persistent, MAX_STATES);
    let folded = search(&m, &t, Folding::Invisible, Por::None, MAX_STATES);
    assert!(!reduced.bounded && !folded.bounded);
    println!(
        "MP-2 cached: {} -> {} states",
        folded.states, reduced.states
    );
    assert!(
        2 * reduced.states < folded.states,
        "{} -> {} states",
        folded.states,
        reduced.states
    );
}

/// The tests the sets newly decide within the litmus command's bound (1M states) under cached
/// memory, against the fold alone with a larger bound: the same outcomes and counts. Slow
/// (minutes, millions of states): `cargo test --release -p litmus --test
/// cached_persistent_sets -- --ignored`.
#[test]
#[ignore]
fn block_sets_keep_the_answers_of_the_tests_they_newly_decide() {
    let manual = conformance_path().join("ptx-litmus/Manual");
    for name in [
        "Coherence-weak",
        "Cause-base-weak",
        "SB+sc-gpu-multiFence",
        "Cause-base-strong",
    ] {
        let (m, t) = cached_machine(&manual.join(format!("{name}.litmus"))).expect(name);
        let reduced = search(&m, &t, Folding::Invisible, Por::Persistent, 1_000_000);
        let folded = search(&m, &t, Folding::Invisible, Por::None, 30_000_000);
        println!("{name}: {} -> {} states", folded.states, reduced.states);
        assert!(!reduced.bounded && !folded.bounded, "{name}: bounded");
        assert_eq!(answer(&reduced), answer(&folded), "{name}");
    }
}
