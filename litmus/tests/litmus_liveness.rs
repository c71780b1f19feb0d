//! `litmus --progress MODEL` (issue 14, Build 7; Dat3M's liveness mode): the termination
//! verdict of a litmus program under a progress model, with a lasso that replays step by step
//! and closes its cycle.

use explore::Folding;
use explore::progress::{ProgressModel, Verdict};
use litmus::parse::parse;
use litmus::translate::translate;
use litmus::{Options, check, start};
use scheduler::replay::{CycleCheck, replay};
use semantics::machine::MemoryKind;

/// P0 spins until P1's store is visible.
const SPIN: &str = "PTX spin
{ x=0; }
 P0@cta 0,gpu 0       | P1@cta 1,gpu 0      ;
 LC00:                | st.relaxed.gpu x, 1 ;
 ld.relaxed.gpu r0, x | mov r1, 1           ;
 beq r0, 0, LC00      | mov r2, 1           ;
exists (P0:r0 == 1)
";

/// No loop: every execution ends under every model.
const SB: &str = "PTX SB
{ x=0; y=0; }
 P0@cta 0,gpu 0       | P1@cta 1,gpu 0       ;
 st.relaxed.gpu x, 1  | st.relaxed.gpu y, 1  ;
 ld.relaxed.gpu r0, y | ld.relaxed.gpu r0, x ;
exists (P0:r0 == 0 /\\ P1:r0 == 0)
";

fn options(model: &str, folding: Folding) -> Options {
    Options {
        progress: Some(model.parse::<ProgressModel>().unwrap()),
        folding,
        ..Options::default()
    }
}

#[test]
fn a_spin_loop_terminates_under_fairness_only() {
    let test = parse(SPIN).unwrap();
    let t = translate(&test, MemoryKind::Flat).unwrap();
    for folding in [Folding::Invisible, Folding::None] {
        let fair = check(&test, &options("fair", folding));
        let l = fair.liveness.as_ref().unwrap();
        assert_eq!(l.verdict, Some(Verdict::Pass), "{folding}: fair");
        assert!(l.lasso.is_none() && l.replay.is_none());
        // The condition's answer is unchanged by the liveness question.
        assert_eq!(fair.holds, Some(true));

        let unfair = check(&test, &options("unfair", folding));
        let l = unfair.liveness.as_ref().unwrap();
        assert_eq!(l.verdict, Some(Verdict::Fail), "{folding}: unfair");
        let lasso = l.lasso.as_ref().expect("a lasso");
        assert!(!lasso.cycle.is_empty(), "a spin, not a deadlock");
        assert!(l.replay.as_ref().unwrap().starts_with("cudasem2:"));
        let mut m = start(&t).unwrap();
        let mut all = lasso.stem.clone();
        all.extend_from_slice(&lasso.cycle);
        let r = replay(&mut m, &all, None, Some(lasso.stem.len()), false);
        assert!(r.divergence.is_none(), "{folding}: the lasso replays");
        assert!(
            matches!(r.cycle, Some(CycleCheck::Closed { .. })),
            "{folding}: the cycle closes"
        );
    }
}

#[test]
fn loop_free_tests_terminate_and_no_progress_asked_gives_none() {
    let test = parse(SB).unwrap();
    for model in ["unfair", "fair", "obe-strong"] {
        let r = check(&test, &options(model, Folding::Invisible));
        let l = r.liveness.unwrap();
        assert_eq!(l.verdict, Some(Verdict::Pass), "{model}");
        assert!(l.states > 0);
    }
    assert!(check(&test, &Options::default()).liveness.is_none());
}

/// `litmus --progress` under `unfair` and `fair` explores persistent sets (with the fold): on
/// every program of Dat3M's liveness results its verdicts are the unreduced search's, and each
/// of its lassos replays and closes.
#[test]
fn reduced_verdicts_are_the_unreduced_ones_on_the_liveness_suite() {
    let root = corpus::conformance_path().join("ptx-litmus");
    let Ok(csv) = std::fs::read_to_string(root.join("PTXv7_5-Liveness-expected.csv")) else {
        eprintln!("ptx-litmus conformance suite not found; skipping");
        return;
    };
    let mut compared = 0;
    for path in csv
        .lines()
        .filter_map(|l| l.split_once(',')?.0.strip_prefix("litmus/PTX/"))
    {
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        let test = parse(&text).unwrap();
        let t = translate(&test, MemoryKind::Flat).unwrap();
        for model in ["unfair", "fair"] {
            let reduced = check(&test, &options(model, Folding::Invisible));
            let full = check(&test, &options(model, Folding::None));
            let (r, f) = (reduced.liveness.unwrap(), full.liveness.unwrap());
            assert_eq!(r.verdict, f.verdict, "{path} under {model}");
            assert_eq!(r.lasso.is_some(), f.lasso.is_some(), "{path} under {model}");
            if let Some(lasso) = &r.lasso {
                let mut m = start(&t).unwrap();
                let mut all = lasso.stem.clone();
                all.extend_from_slice(&lasso.cycle);
                let run = replay(&mut m, &all, None, Some(lasso.stem.len()), false);
                assert!(
                    run.divergence.is_none(),
                    "{path} under {model}: the lasso replays"
                );
                if !lasso.cycle.is_empty() {
                    assert!(
                        matches!(run.cycle, Some(CycleCheck::Closed { .. })),
                        "{path} under {model}: the cycle closes"
                    );
                }
            }
            compared += 1;
        }
    }
    assert!(compared >= 180, "{compared} compared");
}
