//! Soundness of the sleep-set reduction (`explore::dfs`): on corpus kernels and on
//! litmus-size kernels (the PTX litmus suite translated, thesis listings), the set of final
//! outcomes found with sleep sets equals the one found without reduction, and equals the
//! breadth-first explorer's. Prints the reduction (transitions and executions) in numbers;
//! run with `--nocapture` to see them.

use corpus::{conformance_path, corpus_machines, litmus_files, observe_globals, workspace_root};

use explore::dfs::{DfsConfig, DfsReport, Memo, Reduction, outcomes};
use explore::{Level, Limits, explore};
use litmus::parse::parse;
use litmus::translate::translate;
use scheduler::outcome::{Observe, Outcome};
use scheduler::replay::replay;
use semantics::machine::{LaunchConfig, Machine, MachineConfig, MemoryKind};
use std::collections::BTreeSet;
use std::sync::Arc;

fn run(m: &Machine, observe: &Observe, reduction: Reduction, memo: Memo) -> DfsReport {
    outcomes(
        m,
        observe,
        DfsConfig {
            reduction,
            memo,
            // Enough for the unreduced stateless search of the small tests to finish.
            max_transitions: 100_000,
            // Sleep sets alone (the fold is compared with the unreduced search in
            // `explore_fold`).
            folding: explore::Folding::None,
        },
    )
}

fn keys(r: &DfsReport) -> BTreeSet<Outcome> {
    r.outcomes.keys().cloned().collect()
}

/// Every witness replays to its outcome.
fn witnesses_replay(m: &Machine, observe: &Observe, r: &DfsReport) {
    for (o, w) in &r.outcomes {
        let mut fresh = m.clone();
        let rr = replay(&mut fresh, w, None, None, false);
        assert_eq!(rr.divergence, None);
        let t = fresh.termination().expect("a witness ends the run");
        assert_eq!(&Outcome::of(&fresh, t, observe), o);
    }
}

#[derive(Default)]
struct Tally {
    compared: usize,
    full: [u64; 2],
    reduced: [u64; 2],
}

impl Tally {
    /// Compares the reduced search with the full one (and BFS when it fits); `false` when
    /// the full search was bounded out (nothing to compare).
    fn compare(&mut self, name: &str, m: &Machine, observe: &Observe, memo: Memo) -> bool {
        let full = run(m, observe, Reduction::None, memo);
        if full.bound_hit.is_some() {
            return false;
        }
        let reduced = run(m, observe, Reduction::SleepSets, memo);
        assert_eq!(reduced.bound_hit, None, "{name}");
        assert_eq!(keys(&reduced), keys(&full), "{name}: outcome sets differ");
        assert!(reduced.transitions <= full.transitions, "{name}");
        witnesses_replay(m, observe, &reduced);
        // The breadth-first explorer folds the same system choices: the same outcomes (on
        // small graphs: its termination oracle's SCC search is recursive).
        if memo == Memo::States && full.states <= 5_000 {
            let x = explore(
                m,
                Level::Blocks,
                observe,
                Limits {
                    max_states: 10_000,
                    folding: explore::Folding::None,
                    ..Default::default()
                },
            )
            .unwrap();
            if x.bound_hit.is_none() {
                let bfs: BTreeSet<Outcome> = x.outcomes.keys().cloned().collect();
                assert_eq!(bfs, keys(&full), "{name}: BFS differs");
            }
        }
        self.compared += 1;
        self.full[0] += full.transitions;
        self.full[1] += full.executions;
        self.reduced[0] += reduced.transitions;
        self.reduced[1] += reduced.executions;
        true
    }

    fn print(&self, what: &str) {
        println!(
            "{what}: {} searches; transitions {} -> {} ({:.1}x), executions {} -> {} ({:.1}x)",
            self.compared,
            self.full[0],
            self.reduced[0],
            self.full[0] as f64 / self.reduced[0].max(1) as f64,
            self.full[1],
            self.reduced[1],
            self.full[1] as f64 / self.reduced[1].max(1) as f64,
        );
    }
}

#[test]
fn litmus_outcomes_are_the_same_with_sleep_sets() {
    let dir = conformance_path().join("ptx-litmus");
    let mut files = Vec::new();
    litmus_files(&dir, &mut files);
    assert!(
        !files.is_empty(),
        "no litmus files under {}: this test needs the conformance suite",
        dir.display()
    );
    let (mut stateless, mut stateful) = (Tally::default(), Tally::default());
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let Ok(test) = parse(&text) else { continue };
        let Ok(t) = translate(&test, MemoryKind::Flat) else {
            continue;
        };
        let Ok(m) = litmus::start(&t) else {
            continue;
        };
        // Every global, and the condition's registers (the threads' final registers).
        let mut observe = observe_globals(m.program(), Vec::new());
        observe.registers = t.observe(m.program()).registers;
        let name = f.display().to_string();
        stateless.compare(&name, &m, &observe, Memo::Stateless { max_depth: 400 });
        stateful.compare(&name, &m, &observe, Memo::States);
    }
    stateless.print("litmus, stateless DFS");
    stateful.print("litmus, DFS with state caching");
    // Unreduced, most tests exceed the transition bound without state caching: few compare.
    assert!(stateless.compared >= 5, "{} compared", stateless.compared);
    assert!(stateful.compared >= 100, "{} compared", stateful.compared);
    // Litmus threads are mostly independent until they touch the same location: the
    // reduction must pay off on the suite as a whole.
    assert!(stateless.reduced[0] * 2 < stateless.full[0]);
}

#[test]
fn corpus_outcomes_are_the_same_with_sleep_sets() {
    let mut tally = Tally::default();
    let mut bounded = Vec::new();
    for (name, m, observe) in corpus_machines() {
        if !tally.compare(&name, &m, &observe, Memo::States) {
            bounded.push(name);
        }
    }
    tally.print("corpus, DFS with state caching");
    println!("bounded out without reduction: {bounded:?}");
    assert!(tally.compared >= 10, "{} compared", tally.compared);
}

/// Thesis Listing 6.2 (spin lock) with two blocks: a cyclic state space (the spinning block
/// loops), finite only with state caching; and a grid barrier.
#[test]
fn spin_loops_need_state_caching_and_keep_their_outcomes() {
    let text =
        std::fs::read_to_string(workspace_root().join("tests/thesis/listing_6_2.ptx")).unwrap();
    let parsed = ptx_parser::parse(&text);
    let p = Arc::new(semantics::load(&parsed.module, &text).unwrap().0);
    let launch = LaunchConfig::kernel_1d("kernel", 3, 1);
    let m = Machine::new(p.clone(), &launch, &MachineConfig::default()).unwrap();
    let observe = observe_globals(&p, Vec::new());
    let mut tally = Tally::default();
    assert!(tally.compare("listing 6.2, 3 blocks", &m, &observe, Memo::States));
    // Stateless, the spin loop runs into the depth bound.
    let r = run(
        &m,
        &observe,
        Reduction::SleepSets,
        Memo::Stateless { max_depth: 60 },
    );
    assert!(r.bound_hit.is_some());
    tally.print("listing 6.2");
}
