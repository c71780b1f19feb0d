//! Persistent sets over several warps (`explore::ample::persistent_sets`, from the warps' future
//! footprints) against the unreduced searches, on the litmus families and the PTX litmus suite
//! under flat memory:
//! * the litmus command's stateful search (`litmus::search::explore_until`, a depth-first
//!   search with a visited set) with them must give the outcomes with their counts of distinct
//!   final states, and the deadlocks, of the same search without them and of the search
//!   without any reduction (`--reduction none`), and its witnesses must replay;
//! * the stateful breadth-first search (`explore::explore_with`, `Por::Persistent`, which now
//!   builds them too) must give the outcomes and the preserved verdicts of `Por::None`;
//! * on the families they must cut the states (MP-n and LB-n at most x3 per added thread).
//!
//! A persistent set that left out a warp whose future conflicts with the set's next steps
//! loses an outcome here.

use corpus::{conformance_path, litmus_files, observe_globals, workspace_root};
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

/// The machine, translation and observation of a litmus file under flat memory (`None` when
/// it cannot be translated).
fn litmus_machine(path: &Path) -> Option<(Machine, Translation, Observe)> {
    let text = std::fs::read_to_string(path).ok()?;
    let test = parse(&text).ok()?;
    let t = translate(&test, MemoryKind::Flat).ok()?;
    let m = litmus::start(&t).ok()?;
    let mut observe = observe_globals(m.program(), Vec::new());
    observe.registers = t.observe(m.program()).registers;
    Some((m, t, observe))
}

fn family(name: &str, n: usize) -> PathBuf {
    workspace_root().join(format!("tests/litmus/families/{name}-{n}.litmus"))
}

/// Outcomes with their counts, deadlocks, whether a fault was found (another warp's fault may
/// end a run in a different state: `explore_until_with`).
type Answer = (BTreeMap<Vec<i64>, usize>, usize, bool);

fn answer(r: &Exploration) -> Answer {
    (r.outcomes.clone(), r.deadlocks, r.faults > 0)
}

/// The litmus search with persistent sets, without them, and without any reduction: same
/// answers, every witness replays to its outcome; the states of each (`None` when bounded).
fn compare_litmus(path: &Path) -> Option<[usize; 3]> {
    let name = path.display().to_string();
    let (m, t, _) = litmus_machine(path)?;
    let never = Stop::never();
    let reduced = explore_until(m.clone(), &t, MAX_STATES, Folding::Invisible, &never);
    let folded = explore_until_with(
        m.clone(),
        &t,
        MAX_STATES,
        Folding::Invisible,
        Por::None,
        &never,
    );
    let none = explore_until_with(m.clone(), &t, MAX_STATES, Folding::None, Por::None, &never);
    if reduced.bounded || folded.bounded || none.bounded {
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
fn persistent_sets_keep_the_litmus_answers_on_the_suite_and_the_families() {
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
    for n in 2..=4 {
        for name in ["MP", "SB", "LB"] {
            files.push(family(name, n));
        }
    }
    files.push(family("IRIW", 4));
    let (mut compared, mut smaller) = (0, 0);
    let mut states = [0usize; 3];
    for f in &files {
        let Some(s) = compare_litmus(f) else {
            continue;
        };
        compared += 1;
        smaller += (s[0] < s[1]) as usize;
        for (total, n) in states.iter_mut().zip(s) {
            *total += n;
        }
    }
    println!(
        "{compared} compared, {smaller} smaller; states: {} persistent sets, {} fold alone, {} no reduction",
        states[0], states[1], states[2]
    );
    assert!(compared > 100, "only {compared} tests compared");
    assert!(smaller > 0);
}

/// The states of the litmus search with persistent sets on `name`-2..=`max`.
fn family_states(name: &str, max: usize) -> Vec<usize> {
    (2..=max)
        .map(|n| {
            let (m, t, _) = litmus_machine(&family(name, n)).expect("a family test");
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
    let mut files: Vec<PathBuf> = Vec::new();
    for n in 2..=4 {
        for name in ["MP", "SB", "LB"] {
            files.push(family(name, n));
        }
    }
    files.push(family("IRIW", 4));
    for f in &files {
        let name = f.display().to_string();
        let (m, _, observe) = litmus_machine(f).expect("a family test");
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
    let (mut m, _, _) = litmus_machine(&family("MP", 2)).expect("MP-2");
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
