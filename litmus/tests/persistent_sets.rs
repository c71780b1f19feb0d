//! Persistent sets (`explore::ample::persistent_sets` from the warps' future footprints under
//! flat memory; `explore::dependence::block_persistent_sets` from the places memory micro steps
//! touch under cached memory, issue 15 item 4) against the unreduced searches, on the litmus
//! families and the PTX litmus suite:
//! * the litmus command's stateful search (`litmus::search::explore_until`, a depth-first
//!   search with a visited set) with them must give the outcomes with their counts of distinct
//!   final states, the deadlocks and the faults of the same search without them and of the
//!   search without any reduction (`--reduction none`), and its witnesses must replay (under
//!   cached memory only whether a deadlock is reached is compared: states that differ only in
//!   the ids of in-flight ops may be counted apart, `explore::dependence`'s header);
//! * the stateful breadth-first search (`explore::explore_with`, `Por::Persistent`, which now
//!   builds them too) must give the outcomes and the preserved verdicts of `Por::None`;
//! * they must cut the states: on the families under flat memory MP-n and LB-n at most x3 per
//!   added thread, MP-2 under cached memory below half of the fold alone's.
//!
//! A persistent set that left out a warp (a block) whose steps conflict with the set's next
//! steps loses an outcome here.

use corpus::{
    conformance_path, litmus_families, litmus_family, litmus_suite_sample, observe_globals,
};
use explore::progress::ProgressModel;
use explore::{Folding, Level, Limits, Por, explore_with};
use litmus::parse::parse;
use litmus::search::{Exploration, explore_until, explore_until_with};
use litmus::translate::{Translation, translate};
use scheduler::Stop;
use scheduler::outcome::{Observe, Status};
use scheduler::replay::replay;
use semantics::machine::{Machine, MemoryKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MAX_STATES: usize = 200_000;
/// Under cached memory: the reduced search's bound (the fold alone gets 4 times as many
/// states, the search without any reduction 8 times).
const MAX_CACHED_STATES: usize = 60_000;

/// The machine, translation and observation of a litmus file under `memory` (`None` when it
/// cannot be translated).
fn litmus_machine(path: &Path, memory: MemoryKind) -> Option<(Machine, Translation, Observe)> {
    let text = std::fs::read_to_string(path).ok()?;
    let test = parse(&text).ok()?;
    let t = translate(&test, memory).ok()?;
    let m = litmus::start(&t).ok()?;
    let mut observe = observe_globals(m.program(), Vec::new());
    observe.registers = t.observe(m.program()).registers;
    Some((m, t, observe))
}

/// Outcomes with their counts, deadlocks (under cached memory: whether one is reached), whether
/// a fault was found (another warp's fault may end a run in a different state:
/// `explore_until_with`).
type Answer = (BTreeMap<Vec<i64>, usize>, usize, bool);

fn answer(r: &Exploration, memory: MemoryKind) -> Answer {
    let deadlocks = match memory {
        MemoryKind::Flat => r.deadlocks,
        MemoryKind::Cached => (r.deadlocks > 0) as usize,
    };
    (r.outcomes.clone(), deadlocks, r.faults > 0)
}

fn search(m: &Machine, t: &Translation, folding: Folding, por: Por, max: usize) -> Exploration {
    explore_until_with(m.clone(), t, max, folding, por, &Stop::never())
}

/// The litmus search with persistent sets, without them, and without any reduction: same
/// answers, every witness replays to its outcome; the states of each (`None` when bounded).
fn compare_litmus(path: &Path, memory: MemoryKind) -> Option<[usize; 3]> {
    let name = path.display().to_string();
    let (m, t, _) = litmus_machine(path, memory)?;
    let bounds = match memory {
        MemoryKind::Flat => [MAX_STATES; 3],
        MemoryKind::Cached => [1, 4, 8].map(|k| k * MAX_CACHED_STATES),
    };
    let reduced = explore_until(m.clone(), &t, bounds[0], Folding::Invisible, &Stop::never());
    let folded = search(&m, &t, Folding::Invisible, Por::None, bounds[1]);
    let none = search(&m, &t, Folding::None, Por::None, bounds[2]);
    if reduced.bounded || folded.bounded || none.bounded {
        return None;
    }
    assert!(reduced.refused.is_none(), "{name}: refused");
    assert_eq!(
        answer(&reduced, memory),
        answer(&folded, memory),
        "{name}: vs the fold alone"
    );
    assert_eq!(
        answer(&reduced, memory),
        answer(&none, memory),
        "{name}: vs no reduction"
    );
    assert!(reduced.states <= folded.states, "{name}: more states");
    for (values, path) in &reduced.paths {
        let mut fresh = m.clone();
        let r = replay(&mut fresh, path, None, None, false);
        assert_eq!(r.divergence, None, "{name}: the witness diverges");
        assert_eq!(&litmus::search::observe(&fresh, &t), values, "{name}");
    }
    Some([reduced.states, folded.states, none.states])
}

/// Compares every test of `files` (`compare_litmus`); how many were compared, how many of those
/// the sets made smaller, and the states of the three searches over them.
fn compare_all(files: &[PathBuf], memory: MemoryKind) -> (usize, usize) {
    let (mut compared, mut smaller) = (0, 0);
    let mut states = [0usize; 3];
    for f in files {
        let Some(s) = compare_litmus(f, memory) else {
            continue;
        };
        compared += 1;
        smaller += (s[0] < s[1]) as usize;
        for (total, n) in states.iter_mut().zip(s) {
            *total += n;
        }
    }
    println!(
        "{memory:?}: {compared} compared, {smaller} smaller; states: {} persistent sets, {} fold alone, {} no reduction",
        states[0], states[1], states[2]
    );
    (compared, smaller)
}

#[test]
fn persistent_sets_keep_the_litmus_answers_on_the_suite_and_the_families() {
    let mut files = litmus_suite_sample();
    files.extend(litmus_families(4));
    let (compared, smaller) = compare_all(&files, MemoryKind::Flat);
    assert!(compared > 100, "only {compared} tests compared");
    assert!(smaller > 0);
}

#[test]
fn block_sets_keep_the_cached_litmus_answers_on_the_suite_and_the_families() {
    let mut files = litmus_suite_sample();
    files.extend(["MP", "SB", "LB"].map(|name| litmus_family(name, 2)));
    let (compared, smaller) = compare_all(&files, MemoryKind::Cached);
    assert!(compared > 40, "only {compared} tests compared");
    assert!(2 * smaller > compared, "{smaller} of {compared} smaller");
}

/// The sets cut MP-2's states under cached memory (before them, the search with
/// `Por::Persistent` visited every state the fold alone did).
#[test]
fn block_sets_cut_the_states_of_mp_2_under_cached_memory() {
    let (m, t, _) = litmus_machine(&litmus_family("MP", 2), MemoryKind::Cached).expect("MP-2");
    let reduced = search(
        &m,
        &t,
        Folding::Invisible,
        Por::Persistent,
        MAX_CACHED_STATES,
    );
    let folded = search(&m, &t, Folding::Invisible, Por::None, MAX_CACHED_STATES);
    assert!(!reduced.bounded && !folded.bounded);
    assert!(
        2 * reduced.states < folded.states,
        "{} -> {} states",
        folded.states,
        reduced.states
    );
}

/// A single-CTA litmus test of `litmus/tests/cta` (every thread in CTA 0: one SM, one shared
/// L1, each thread its own warp).
fn single_cta_test(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/cta/{name}.litmus"))
}

/// Sets at the grain of cache lines (`explore::dependence`, `line_sets`) on MP, SB, LB and CoRR
/// with both threads in one CTA: the answers of the fold alone and of `--reduction none`
/// (`compare_litmus`: outcomes with their counts of distinct final states, deadlocks, faults,
/// witnesses that replay). They cut the states of the two tests without weak loads (no line
/// is ever in an L1): SB-cta and CoRR-cta took 1,133 + 88 states with the block and warp sets
/// alone, 709 + 48 with the line sets.
#[test]
fn line_sets_keep_the_single_cta_answers_and_cut_their_states() {
    let mut relaxed = 0;
    for name in ["MP-cta", "SB-cta", "LB-cta", "CoRR-cta"] {
        let [reduced, folded, none] =
            compare_litmus(&single_cta_test(name), MemoryKind::Cached).expect(name);
        println!("{name}: {none} no reduction, {folded} fold alone, {reduced} sets");
        if name == "SB-cta" || name == "CoRR-cta" {
            relaxed += reduced;
        }
    }
    assert!(relaxed < 900, "SB-cta + CoRR-cta: {relaxed} states");
}

/// The flush of an SM's L1 taken into the line sets (`line_sets`, "Taking the flush in"):
/// single-CTA tests whose weak loads fill the L1 and whose acquires above `.cta`, fences or
/// silent flushes empty it (MP with `.gpu` release/acquire and weak loads, SB with `.gpu`
/// fences and weak accesses, CoRR with weak loads and a third warp loading another line, and
/// MP-cta) keep the answers of the fold alone and of `--reduction none` (`compare_litmus`).
/// Before, a step on a line its L1 held, or a fill, dropped its candidate: 10,232 + 6,184 +
/// 4,216 + 934 = 21,566 states; with the flush taken in, 18,285.
#[test]
fn line_sets_take_the_l1_flush_in_and_keep_the_single_cta_answers() {
    let mut states = 0;
    for name in ["MP-gpu-cta", "SB-fence-cta", "CoRR-weak-cta", "MP-cta"] {
        let [reduced, folded, none] =
            compare_litmus(&single_cta_test(name), MemoryKind::Cached).expect(name);
        println!("{name}: {none} no reduction, {folded} fold alone, {reduced} sets");
        states += reduced;
    }
    assert!(states < 19_500, "{states} states");
}

/// SB round three threads of one CTA: the line sets keep the fold alone's answers (no
/// reduction needs a million states) in 38,531 states (the block and warp sets alone: 88,674;
/// the fold alone 944,399). Slow in a debug build: `cargo test --release -p litmus --test
/// persistent_sets -- --ignored`.
#[test]
#[ignore]
fn line_sets_keep_the_answers_of_sb_round_three_threads_of_one_cta() {
    let (m, t, _) =
        litmus_machine(&single_cta_test("SB3-cta"), MemoryKind::Cached).expect("SB3-cta");
    let reduced = search(&m, &t, Folding::Invisible, Por::Persistent, 1_000_000);
    let folded = search(&m, &t, Folding::Invisible, Por::None, 2_000_000);
    assert!(!reduced.bounded && !folded.bounded, "bounded");
    assert_eq!(
        answer(&reduced, MemoryKind::Cached),
        answer(&folded, MemoryKind::Cached)
    );
    assert!(reduced.states < 60_000, "{} states", reduced.states);
}

/// The tests the sets newly decide within the litmus command's bound (1M states) under cached
/// memory, against the fold alone with a larger bound: the same outcomes and counts. Slow
/// (minutes, millions of states): `cargo test --release -p litmus --test persistent_sets --
/// --ignored`.
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
        let path = manual.join(format!("{name}.litmus"));
        let (m, t, _) = litmus_machine(&path, MemoryKind::Cached).expect(name);
        let reduced = search(&m, &t, Folding::Invisible, Por::Persistent, 1_000_000);
        let folded = search(&m, &t, Folding::Invisible, Por::None, 30_000_000);
        println!("{name}: {} -> {} states", folded.states, reduced.states);
        assert!(!reduced.bounded && !folded.bounded, "{name}: bounded");
        assert_eq!(
            answer(&reduced, MemoryKind::Cached),
            answer(&folded, MemoryKind::Cached),
            "{name}"
        );
    }
}

/// The states of the litmus search with persistent sets on `name`-2..=`max`.
fn family_states(name: &str, max: usize) -> Vec<usize> {
    (2..=max)
        .map(|n| {
            let (m, t, _) =
                litmus_machine(&litmus_family(name, n), MemoryKind::Flat).expect("a family test");
            let r = explore_until(m, &t, MAX_STATES, Folding::Invisible, &Stop::never());
            assert!(!r.bounded, "{name}-{n}");
            r.states
        })
        .collect()
}

#[test]
fn persistent_sets_grow_mp_and_lb_at_most_x3_per_thread() {
    for name in ["MP", "LB"] {
        let states = family_states(name, 6);
        println!("{name}-2..6: {states:?}");
        for (n, w) in states.windows(2).enumerate() {
            assert!(
                w[1] <= 3 * w[0],
                "{name}-{} -> {name}-{}: {} -> {} states",
                n + 2,
                n + 3,
                w[0],
                w[1]
            );
        }
    }
}

/// The stateful breadth-first search on a litmus machine, at warp level, within the bound.
fn bfs(m: &Machine, observe: &Observe, por: Por) -> explore::Exploration {
    let limits = Limits {
        max_states: MAX_STATES,
        ..Limits::default()
    };
    let x = explore_with(m, Level::Warps, observe, limits, por, &Stop::never()).expect("explores");
    assert!(x.bound_hit.is_none());
    x
}

#[test]
fn the_stateful_search_with_sets_keeps_outcomes_and_verdicts_and_cuts_states() {
    for f in &litmus_families(4) {
        let name = f.display().to_string();
        let (m, _, observe) = litmus_machine(f, MemoryKind::Flat).expect("a family test");
        let full = bfs(&m, &observe, Por::None);
        let reduced = bfs(&m, &observe, Por::Persistent);
        let counts = |x: &explore::Exploration| -> Vec<_> {
            x.outcomes
                .iter()
                .map(|(o, i)| {
                    let faulted = matches!(o.status, Status::Error { .. });
                    (o.clone(), (!faulted).then_some(i.states))
                })
                .collect()
        };
        assert_eq!(counts(&reduced), counts(&full), "{name}: outcomes differ");
        for model in ProgressModel::ALL {
            if Por::Persistent.preserves(model) {
                assert_eq!(
                    reduced.verdict(model),
                    full.verdict(model),
                    "{name} {model}"
                );
                assert_eq!(reduced.lasso(model).is_some(), full.lasso(model).is_some());
            }
        }
        println!("{name}: {} -> {} states", full.states(), reduced.states());
        assert!(reduced.states() <= full.states(), "{name}: more states");
        // Sets over several warps: MP-4 and LB-4 in less than half the states (singletons
        // alone left 1,000 of 1,000: every transaction of these tests touches global memory).
        if name.ends_with("MP-4.litmus") || name.ends_with("LB-4.litmus") {
            assert!(
                2 * reduced.states() < full.states(),
                "{name}: {} -> {} states",
                full.states(),
                reduced.states()
            );
        }
    }
}

/// A warp's future footprint (`Machine::future_independent`) holds what it may still do, and
/// no more: MP-2's reader will load `x`, so the writer's store to `x` is dependent with its
/// future until it has loaded it, and independent after.
#[test]
fn a_warps_future_footprint_shrinks_as_it_runs() {
    use semantics::machine::FootprintKind;
    use traces::Choice;
    let (mut m, _, _) = litmus_machine(&litmus_family("MP", 2), MemoryKind::Flat).expect("MP-2");
    explore::settle(&mut m, &mut Vec::new()).expect("settles");
    let futures = m.future_footprints();
    let (writer, reader) = (
        Choice::Warp { block: 0, warp: 0 },
        Choice::Warp { block: 1, warp: 0 },
    );
    let writes = |m: &Machine, c: &Choice| {
        matches!(
            m.footprint(c).kind,
            FootprintKind::Memory {
                global_writes: Some(_),
                ..
            }
        )
    };
    let reads = |m: &Machine, c: &Choice| {
        matches!(
            m.footprint(c).kind,
            FootprintKind::Memory {
                global_reads: Some(_),
                ..
            }
        )
    };
    while !writes(&m, &writer) {
        m.step(&writer).expect("the writer steps");
    }
    let store_x = m.footprint(&writer);
    assert!(!m.future_independent(&futures, (1, 0), &store_x));
    // Its own future is not asked about: a warp is dependent with itself anyway.
    let mut loads = 0;
    while loads < 2 {
        loads += reads(&m, &reader) as usize;
        m.step(&reader).expect("the reader steps");
    }
    assert!(m.future_independent(&futures, (1, 0), &store_x));
}
