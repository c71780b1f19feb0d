//! The termination oracle on hand-written programs: the paper's running example (Fig. 2,
//! digest §2.2 and §4.4), the named smoke tests of digest §7.6 item 3, lassos replayed on the
//! AXB machine, and a blocking [`UnitSystem`] for the deadlock and disabled-unit cases that
//! AXB cannot express.

use explore::progress::axb::{self, AxbTest};
use explore::progress::{
    Counterexample, Limits, Oracle, ProgressModel, Reason, Strength, StrongCheck, Unit, UnitSet,
    UnitSystem, Verdict, explore,
};

fn test(src: &str) -> AxbTest {
    axb::parse("inline.txt", src).expect("valid test")
}

/// The 11 verdicts as `unfair | 5 weak | 5 strong` letters.
fn vector(t: &AxbTest) -> String {
    let v = t.oracle().expect("explore").verdicts().map(Verdict::letter);
    let s: String = v.iter().collect();
    format!("{} {} {}", &s[0..1], &s[1..6], &s[6..11])
}

const MUTEX: &str = "THREAD0\natomic_exch_branch(0,1,1,0)\natomic_store(0,0)\n\
                     THREAD1\natomic_exch_branch(0,1,1,0)\natomic_store(0,0)\n";

/// Digest §4.4: the Fig. 2 mutex fails HSA (T0 spins while T1, not owed anything, holds the
/// lock) and passes every other model; unfair fails (CADP's formula would say P, §4.4).
#[test]
fn paper_running_example_mutex() {
    assert_eq!(vector(&test(MUTEX)), "F FPPPP FPPPP");
}

/// Digest §7.6 item 3: the named smoke tests (artifact ids) with their vectors.
#[test]
fn named_smoke_tests() {
    let cases = [
        (
            "2t_2i_5 ProdCons inc",
            "THREAD0\natomic_store(0,1)\nTHREAD1\natomic_chk_branch(0,0,0)",
            "F PFPPP PFPPP",
        ),
        (
            "2t_2i_4 ProdCons dec",
            "THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_store(0,1)",
            "F FFFFP FFFFP",
        ),
        (
            "2t_3i_22 simplified mutex",
            "THREAD0\natomic_chk_branch(0,1,0)\nTHREAD1\natomic_store(0,1)\natomic_store(0,0)",
            "F FPPPP FPPPP",
        ),
        (
            "2t_2i_0 dining philosophers",
            "THREAD0\natomic_exch_branch(0,1,0,0)\nTHREAD1\natomic_exch_branch(0,0,1,0)",
            "F FFFFF PPPPP",
        ),
        (
            "2t_4i_67 bidirectional ProdCons",
            "THREAD0\natomic_store(0,1)\natomic_chk_branch(0,1,1)\nTHREAD1\natomic_chk_branch(0,0,0)\natomic_store(0,0)",
            "F FFFFP FFFFP",
        ),
        (
            "3t_3i_7 LOBE not HSA+OBE",
            "THREAD0\natomic_exch_branch(0,1,1,0)\nTHREAD1\natomic_exch_branch(0,0,0,0)\nTHREAD2\natomic_exch_branch(0,1,1,0)",
            "F FFFPP FFFPP",
        ),
        (
            "2t_4i_60 HSA+OBE and LOBE only",
            "THREAD0\natomic_exch_branch(0,1,1,0)\nTHREAD1\natomic_exch_branch(0,1,1,END)\natomic_store(0,0)\natomic_exch_branch(0,0,0,2)",
            "F FFPPP FFPPP",
        ),
        (
            "2t_3i_4 all but unfair",
            "THREAD0\natomic_store(0,1)\natomic_store(0,0)\nTHREAD1\natomic_chk_branch(0,1,0)",
            "F PPPPP PPPPP",
        ),
        (
            "2t_3i_54 strong HSA not strong OBE",
            "THREAD0\natomic_exch_branch(0,0,1,0)\nTHREAD1\natomic_exch_branch(0,0,0,0)\natomic_exch_branch(0,1,1,0)",
            "F FFFFF PFPPP",
        ),
        (
            "2t_4i_22 strong HSA+OBE/LOBE only",
            "THREAD0\natomic_exch_branch(0,1,1,0)\nTHREAD1\natomic_exch_branch(0,0,1,2)\natomic_exch_branch(0,1,0,1)\natomic_exch_branch(0,1,0,0)",
            "F FFFFF FFPPP",
        ),
        (
            "2t_4i_4 strong fair only",
            "THREAD0\natomic_store(0,1)\natomic_exch_branch(0,1,1,1)\nTHREAD1\natomic_exch_branch(0,0,0,0)\natomic_exch_branch(0,0,1,0)",
            "F FFFFF FFFFP",
        ),
    ];
    for (name, src, want) in cases {
        assert_eq!(vector(&test(src)), want, "{name}");
    }
}

/// Replays `cx` on the AXB machine and checks it is a fair non-terminating execution: the stem
/// starts at the initial state, each step is the machine's, the cycle returns to the stem's end,
/// F is constant on the cycle, and (weak) every F unit steps in it, or (strong) every F step
/// from a cycle state is taken in the cycle, none of which can finish fairly.
fn check_lasso(t: &AxbTest, oracle: &Oracle<axb::AxbState>, cx: &Counterexample) {
    let lts = oracle.lts();
    let mut state = t.initial_state();
    for step in cx.stem.iter().chain(&cx.cycle) {
        assert_eq!(lts.node(step.from).state, state);
        state = t
            .step(&state, step.unit)
            .expect("the stepping unit is live");
        assert_eq!(lts.node(step.to).state, state);
    }
    let start = cx.loop_node(lts.initial());
    assert!(!cx.cycle.is_empty());
    assert_eq!(
        cx.cycle.last().map(|s| s.to),
        Some(start),
        "the cycle closes"
    );
    assert_eq!(state, lts.node(start).state);
    let fair = oracle.fair_set(cx.model, start);
    for step in &cx.cycle {
        assert_eq!(
            oracle.fair_set(cx.model, step.from),
            fair,
            "F constant along the cycle"
        );
    }
    let stepping: UnitSet = cx.cycle.iter().map(|s| s.unit).collect();
    match cx.reason {
        Reason::WeakCycle {
            fair: f,
            stepping: s,
            disabled,
        } => {
            assert_eq!((f, s, disabled), (fair, stepping, UnitSet::EMPTY));
            assert!(
                fair.is_subset(stepping),
                "every unit of F steps in the cycle"
            );
        }
        Reason::StrongCycle {
            fair: f,
            stepping: s,
        } => {
            assert_eq!((f, s), (fair, stepping));
            for step in &cx.cycle {
                for u in fair.iter() {
                    let next = t
                        .step(&lts.node(step.from).state, u)
                        .expect("F units are live");
                    let taken = cx.cycle.iter().any(|c| {
                        c.from == step.from && c.unit == u && lts.node(c.to).state == next
                    });
                    assert!(
                        taken,
                        "strong: the F step of T{u} from a cycle state is taken in the cycle"
                    );
                }
            }
        }
        Reason::Deadlock { .. } => panic!("AXB tests cannot deadlock"),
    }
}

#[test]
fn mutex_lassos_replay() {
    let t = test(MUTEX);
    let oracle = t.oracle().expect("explore");
    for model in ["unfair", "hsa", "hsa_strong"] {
        let model: ProgressModel = model.parse().expect("model");
        let cx = oracle.counterexample(model).expect("fails");
        check_lasso(&t, &oracle, &cx);
    }
    // HSA: T1 takes the lock, T0 (the owed unit) spins; the stem is one step, the cycle T0's spin.
    let cx = oracle
        .counterexample("hsa".parse().expect("model"))
        .expect("fails");
    // (T0's first spin changes `stepped`, so the cycle starts after it.)
    assert_eq!(
        cx.stem.iter().map(|s| s.unit).collect::<Vec<_>>(),
        vec![1, 0]
    );
    assert_eq!(cx.cycle.iter().map(|s| s.unit).collect::<Vec<_>>(), vec![0]);
    assert_eq!(
        cx.reason,
        Reason::WeakCycle {
            fair: UnitSet::single(0),
            stepping: UnitSet::single(0),
            disabled: UnitSet::EMPTY
        }
    );
    assert!(
        oracle
            .counterexample("obe".parse().expect("model"))
            .is_none()
    );
}

/// Dining philosophers (2t_2i_0): a livelock every weak model admits, broken by strong
/// fairness; the weak-fair lasso must have both threads step.
#[test]
fn livelock_lasso_under_weak_fair() {
    let t = test("THREAD0\natomic_exch_branch(0,1,0,0)\nTHREAD1\natomic_exch_branch(0,0,1,0)");
    let oracle = t.oracle().expect("explore");
    let fair: ProgressModel = "fair".parse().expect("model");
    let cx = oracle.counterexample(fair).expect("weak fair fails");
    check_lasso(&t, &oracle, &cx);
    assert!(matches!(cx.reason, Reason::WeakCycle { stepping, .. } if stepping == UnitSet::all(2)));
    assert!(
        oracle
            .counterexample(ProgressModel::new(fair.kind, Strength::Strong))
            .is_none()
    );
}

/// Strong-fairness witnesses on tests that fail strong models (2t_2i_4, 2t_4i_4).
#[test]
fn strong_lassos_replay() {
    for src in [
        "THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_store(0,1)",
        "THREAD0\natomic_store(0,1)\natomic_exch_branch(0,1,1,1)\nTHREAD1\natomic_exch_branch(0,0,0,0)\natomic_exch_branch(0,0,1,0)",
    ] {
        let t = test(src);
        let oracle = t.oracle().expect("explore");
        for model in ProgressModel::ALL {
            if let Some(cx) = oracle.counterexample(model) {
                check_lasso(&t, &oracle, &cx);
            }
        }
    }
}

/// A tiny system with blocking, which AXB cannot express: unit 0 waits for a flag nobody sets
/// (disabled forever), unit 1 spins forever (`spin`) or has terminated (`!spin`).
struct Blocking {
    spin: bool,
}

impl UnitSystem for Blocking {
    /// (unit 0 done, unit 1 done)
    type State = (bool, bool);

    fn unit_count(&self) -> usize {
        2
    }

    fn initial(&self) -> (bool, bool) {
        (false, !self.spin)
    }

    fn done(&self, s: &(bool, bool)) -> UnitSet {
        [(s.0, 0), (s.1, 1)]
            .into_iter()
            .filter(|(d, _)| *d)
            .map(|(_, u)| u)
            .collect()
    }

    fn successors(&self, s: &(bool, bool), out: &mut Vec<(Unit, (bool, bool))>) {
        if !s.1 {
            out.push((1, *s));
        }
    }
}

#[test]
fn deadlock_fails_every_model() {
    let oracle =
        Oracle::new(explore(&Blocking { spin: false }, Limits::default()).expect("explore"));
    for model in ProgressModel::ALL {
        assert_eq!(oracle.verdict(model), Verdict::Fail, "{model}");
        let cx = oracle.counterexample(model).expect("fails");
        assert_eq!(
            cx.reason,
            Reason::Deadlock {
                blocked: UnitSet::single(0)
            }
        );
        assert!(cx.stem.is_empty() && cx.cycle.is_empty());
    }
}

/// Unit 0 is never enabled, so weak fairness owes it nothing on unit 1's spin: a fair
/// non-termination under every model, with unit 0 reported as disabled on the cycle.
#[test]
fn disabled_units_are_not_owed_a_step() {
    let oracle =
        Oracle::new(explore(&Blocking { spin: true }, Limits::default()).expect("explore"));
    // The paper's fixpoint would call strong HSA a pass here (F = {0} is never empty); the
    // oracle switches to fair end components because unit 0 is live but disabled.
    assert_eq!(oracle.strong_check(), StrongCheck::FairEndComponent);
    for model in ProgressModel::ALL {
        assert_eq!(oracle.verdict(model), Verdict::Fail, "{model}");
    }
    let cx = oracle
        .counterexample("fair".parse().expect("model"))
        .expect("fails");
    assert_eq!(cx.cycle.iter().map(|s| s.unit).collect::<Vec<_>>(), vec![1]);
    assert_eq!(
        cx.reason,
        Reason::WeakCycle {
            fair: UnitSet::all(2),
            stepping: UnitSet::single(1),
            disabled: UnitSet::single(0)
        }
    );
}

#[test]
fn in_order_sequential_run() {
    // ProdCons decreasing id: T0 alone spins on a flag only T1 sets.
    assert!(
        test("THREAD0\natomic_chk_branch(0,0,0)\nTHREAD1\natomic_store(0,1)")
            .sequential_in_order_hangs()
    );
    // Increasing id: T0 sets the flag first.
    assert!(
        !test("THREAD0\natomic_store(0,1)\nTHREAD1\natomic_chk_branch(0,0,0)")
            .sequential_in_order_hangs()
    );
    assert!(!test(MUTEX).sequential_in_order_hangs());
}

#[test]
fn state_bound_is_reported() {
    let t = test(MUTEX);
    let err = explore(&t, Limits { max_states: 3 })
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "state bound hit: more than 3 states (raise the bound or shrink the program)"
    );
}
