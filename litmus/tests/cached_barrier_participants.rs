//! Barriers under cached memory order memory among their participants only (PTX ISA,
//! "Parallel Synchronization and Communication Instructions: bar, barrier": "when the barrier
//! completes, prior memory accesses requested by this thread are performed relative to all
//! threads participating in the barrier"; deviation D24). The litmus translation gives each
//! (CTA, barrier id) the number of threads that name it as its thread count, so a barrier only
//! one thread names counts one thread: its instance orders nothing for any other thread, and
//! the store-buffering outcome the PTX model allows is reachable (`Manual/SB+bar-diff-cta`,
//! `Manual/SB+bar-const-diff`), while two threads that meet at one barrier still see each
//! other's earlier stores. Each test is explored completely, folded and unfolded (the
//! unreduced search), with the same outcomes.

use explore::Folding;
use litmus::parse::parse;
use litmus::{MemorySystem, Options, Report, Status, check};
use std::collections::BTreeSet;

/// The outcomes of `text` under cached memory, explored completely; the same with every step
/// a scheduling point (the unreduced search) and with invisible steps folded.
fn outcomes(text: &str) -> (Report, BTreeSet<Vec<i64>>) {
    let test = parse(text).expect("the test parses");
    let run = |folding| {
        let report = check(
            &test,
            &Options {
                memory: MemorySystem::Cached,
                max_states: 2_000_000,
                folding,
                ..Options::default()
            },
        );
        assert_eq!(
            report.status,
            Status::Ok,
            "{}: {:?}",
            report.name,
            report.status
        );
        let set: BTreeSet<Vec<i64>> = report.outcomes.iter().map(|o| o.values.clone()).collect();
        (report, set)
    };
    let (_, unfolded) = run(Folding::None);
    let (report, folded) = run(Folding::Invisible);
    assert_eq!(
        folded, unfolded,
        "{}: folding changed the outcomes",
        report.name
    );
    (report, folded)
}

/// Store buffering through a barrier: P0 `st x; bar <a>; ld y`, P1 `st y; bar <b>; ld x`, P0 in
/// CTA 0 and P1 in CTA `cta1`. The condition's terms are (P0:r0, P1:r1).
fn sb(a: u32, b: u32, cta1: u32) -> String {
    format!(
        "PTX SB-bar\n{{\nx=0;\ny=0;\nP0:r0=0;\nP1:r1=0;\n}}\n \
         P0@cta 0,gpu 0 | P1@cta {cta1},gpu 0 ;\n \
         st.weak x, 1   | st.weak y, 1   ;\n \
         bar.cta.sync {a} | bar.cta.sync {b} ;\n \
         ld.weak r0, y  | ld.weak r1, x  ;\n\
         forall\n(P0:r0 == 1 \\/ P1:r1 == 1)\n"
    )
}

/// Whether the store-buffering outcome (both loads read 0) is among `outcomes`.
fn store_buffering(report: &Report, outcomes: &BTreeSet<Vec<i64>>) -> bool {
    assert_eq!(report.terms.len(), 2);
    outcomes.contains(&vec![0, 0])
}

#[test]
fn barriers_of_different_ctas_do_not_order_their_threads() {
    // `Manual/SB+bar-diff-cta`: one barrier id, two CTAs: each instance has one participant.
    let (report, outcomes) = outcomes(&sb(1, 1, 1));
    assert!(store_buffering(&report, &outcomes), "{outcomes:?}");
    assert_eq!(report.holds, Some(false));
}

#[test]
fn barriers_of_different_ids_do_not_order_their_threads() {
    // `Manual/SB+bar-const-diff`: one CTA, barriers 0 and 1.
    let (report, outcomes) = outcomes(&sb(0, 1, 0));
    assert!(store_buffering(&report, &outcomes), "{outcomes:?}");
    assert_eq!(report.holds, Some(false));
}

#[test]
fn a_barrier_both_threads_meet_at_orders_their_stores() {
    // `Manual/SB+bar-const-equal`: one CTA, one barrier, two participants: forbidden.
    let (report, outcomes) = outcomes(&sb(1, 1, 0));
    assert!(!store_buffering(&report, &outcomes), "{outcomes:?}");
    assert_eq!(report.holds, Some(true));
}

/// Message passing through a barrier of one CTA: P0 `st x, 1; bar 1`, P1 `bar 1; ld x`
/// (`Barrier/barrier-inscope`'s shape). The reader must see the store: the barrier has two
/// participants and P0 arrives only with its store performed.
#[test]
fn a_barrier_with_two_participants_passes_a_message() {
    let text = "PTX MP-bar\n{\nx=0;\nP1:r0=0;\n}\n \
                P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n \
                st.weak x, 1   | bar.cta.sync 1 ;\n \
                bar.cta.sync 1 | ld.weak r0, x  ;\n\
                forall (P1:r0 == 1)\n";
    let (report, outcomes) = outcomes(text);
    assert_eq!(outcomes, BTreeSet::from([vec![1]]));
    assert_eq!(report.holds, Some(true));
}

/// A thread alone at its barrier still reads its own store after it: same-address order
/// within a thread is kept by the memory (D17), not by the barrier.
#[test]
fn a_thread_alone_at_a_barrier_reads_its_own_store() {
    let text = "PTX own-store\n{\nx=0;\nP0:r0=0;\n}\n \
                P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
                st.weak x, 1   | st.weak x, 2   ;\n \
                bar.cta.sync 1 | bar.cta.sync 1 ;\n \
                ld.weak r0, x  |                ;\n\
                forall (P0:r0 == 1 \\/ P0:r0 == 2)\n";
    let (report, outcomes) = outcomes(text);
    assert_eq!(report.holds, Some(true), "{outcomes:?}");
    assert!(outcomes.contains(&vec![1]) && outcomes.contains(&vec![2]));
}
