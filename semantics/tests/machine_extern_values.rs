//! Calls to functions without a body whose launch gives a set of values (deviation D28): each
//! lane's call returns its own pick, a `Choice::Pick`; enumerating the choices reaches every
//! combination of values and nothing else; replaying a chosen sequence reproduces it exactly.

mod machine_common;

use machine_common::{config, launch, load, words, zeros};
use semantics::machine::{ArgValue, Machine, Termination, WarpModel};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use traces::Choice;

/// `out[tid] = nondet()`, with a guarded second call that only odd threads make:
/// `out[tid] += nondet()` when `tid` is odd.
const PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.extern .func (.param .b32 r) nondet();
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    mov.u32 %r1, %tid.x;
    { .param .b32 rv;
      call (rv), nondet, ();
      ld.param.b32 %r2, [rv];
    }
    and.b32 %r3, %r1, 1;
    setp.ne.u32 %p1, %r3, 0;
    @%p1 bra ODD;
    bra DONE;
ODD:
    { .param .b32 rv2;
      call (rv2), nondet, ();
      ld.param.b32 %r4, [rv2];
    }
    add.u32 %r2, %r2, %r4;
DONE:
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
}
"#;

fn machine(threads: u32, values: &[u64], model: WarpModel) -> Machine {
    let program = load(PTX);
    let mut l = launch(
        "k",
        1,
        threads,
        vec![zeros("out", threads as usize)],
        vec![ArgValue::Buffer(0)],
    );
    l.globals = vec![("nondet.extern".to_string(), values[0])];
    if values.len() > 1 {
        l.extern_values = vec![("nondet.extern".to_string(), values.to_vec())];
    }
    Machine::new(Arc::clone(&program), &l, &config(model, 32)).expect("launches")
}

/// Every final `out` over every schedule (depth-first over all enabled choices, each state
/// once: its fingerprint covers the lanes' picks).
fn outcomes(m: &Machine, seen: &mut HashSet<u128>, out: &mut BTreeSet<Vec<u32>>, picks: &mut u64) {
    if !seen.insert(m.state_fingerprint()) {
        return;
    }
    match m.termination() {
        Some(Termination::Completed) => {
            out.insert(words(&m.buffer(0)));
            return;
        }
        Some(t) => panic!("unexpected end: {t}"),
        None => {}
    }
    for c in m.enabled() {
        if matches!(c, Choice::Pick { .. }) {
            *picks += 1;
        }
        let mut next = m.clone();
        next.step(c).expect("an enabled choice is taken");
        assert_eq!(
            {
                let mut a = next.enabled().to_vec();
                a.sort();
                a
            },
            {
                let mut b = next.enabled_from_scratch();
                b.sort();
                b
            },
            "the incremental enabled set after {c}"
        );
        outcomes(&next, seen, out, picks);
    }
}

#[test]
fn every_combination_of_picked_values_is_reached() {
    let values = [0u64, 1, 7];
    for model in [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads] {
        let m = machine(2, &values, model);
        let mut got = BTreeSet::new();
        let mut picks = 0;
        outcomes(&m, &mut HashSet::new(), &mut got, &mut picks);
        // Thread 0 calls once (v), thread 1 twice (a + b): |values|^3 schedules, and the
        // outcomes are every (v, a + b).
        let mut want = BTreeSet::new();
        for &v in &values {
            for &a in &values {
                for &b in &values {
                    want.insert(vec![v as u32, (a + b) as u32]);
                }
            }
        }
        assert_eq!(got, want, "{model:?}");
        assert!(picks > 0);
    }
}

#[test]
fn one_value_offers_no_choice() {
    let m = machine(2, &[5], WarpModel::SimtStack);
    let mut got = BTreeSet::new();
    let mut picks = 0;
    outcomes(&m, &mut HashSet::new(), &mut got, &mut picks);
    assert_eq!(picks, 0);
    assert_eq!(got, BTreeSet::from([vec![5, 10]]));
}

#[test]
fn the_lanes_pick_in_ascending_order_before_the_call_executes() {
    let mut m = machine(4, &[2, 3], WarpModel::SimtStack);
    m.step(&Choice::Issue {
        grid: 0,
        block: 0,
        sm: 0,
    })
    .unwrap();
    // mov %tid, then the call: the warp offers lane 0's picks, and nothing else of the warp.
    m.step(&Choice::Warp { block: 0, warp: 0 }).unwrap();
    let pick = |lane, k| Choice::Pick {
        block: 0,
        warp: 0,
        lane,
        k,
    };
    assert_eq!(m.enabled(), &[pick(0, 0), pick(0, 1)]);
    let refused = m
        .clone()
        .step(&Choice::Warp { block: 0, warp: 0 })
        .unwrap_err();
    assert!(refused.message.contains("pick"), "{refused}");
    assert!(
        m.clone().step(&pick(1, 0)).is_err(),
        "lane 1 picks after lane 0"
    );
    assert!(
        m.clone().step(&pick(0, 2)).is_err(),
        "there is no third value"
    );
    for (lane, k) in [(0, 1), (1, 0), (2, 1), (3, 1)] {
        m.step(&pick(lane, k)).unwrap();
    }
    assert_eq!(m.enabled(), &[Choice::Warp { block: 0, warp: 0 }]);
    // The odd lanes' second call: lanes 1 and 3 only (the guard of the branch around it).
    while !m.enabled().iter().any(|c| matches!(c, Choice::Pick { .. })) {
        let c = m.enabled()[0];
        m.step(&c).unwrap();
    }
    assert_eq!(m.enabled(), &[pick(1, 0), pick(1, 1)]);
    m.step(&pick(1, 1)).unwrap();
    assert_eq!(m.enabled(), &[pick(3, 0), pick(3, 1)]);
    m.step(&pick(3, 0)).unwrap();
    while m.termination().is_none() {
        let c = m.enabled()[0];
        m.step(&c).unwrap();
    }
    assert_eq!(m.termination(), Some(&Termination::Completed));
    // Lane 0: 3; lane 1: 2 + 3; lane 2: 3; lane 3: 3 + 2.
    assert_eq!(words(&m.buffer(0)), vec![3, 5, 3, 5]);
}

#[test]
fn replaying_the_choices_reproduces_the_picked_values() {
    // A run that takes the last value where it can, recorded, then replayed on a fresh machine.
    let values = [0u64, 1, 7, 9];
    let mut m = machine(3, &values, WarpModel::Its);
    let mut taken = Vec::new();
    while m.termination().is_none() {
        let c = *m.enabled().last().unwrap();
        taken.push(c);
        m.step(&c).unwrap();
    }
    let mut r = machine(3, &values, WarpModel::Its);
    for c in &taken {
        r.step(c).unwrap();
    }
    assert_eq!(r.termination(), Some(&Termination::Completed));
    assert_eq!(words(&r.buffer(0)), words(&m.buffer(0)));
    assert!(taken.iter().any(|c| matches!(c, Choice::Pick { k: 3, .. })));
    assert_ne!(words(&m.buffer(0)), vec![0, 0, 0]);
}

#[test]
fn a_set_naming_no_result_slot_is_refused() {
    let program = load(PTX);
    let mut l = launch("k", 1, 1, vec![zeros("out", 1)], vec![ArgValue::Buffer(0)]);
    l.extern_values = vec![("other.extern".to_string(), vec![1, 2])];
    let e = Machine::new(program, &l, &config(WarpModel::SimtStack, 32)).unwrap_err();
    assert!(e.message.contains("`other.extern`"), "{e}");
}

#[test]
fn picked_results_make_the_kernel_schedule_dependent() {
    use semantics::monitors::ScheduleDependence;
    let program = load(PTX);
    let mut l = launch("k", 1, 2, vec![zeros("out", 2)], vec![ArgValue::Buffer(0)]);
    l.globals = vec![("nondet.extern".to_string(), 3)];
    // One fixed value: nothing to choose, one schedule decides.
    let fixed = ScheduleDependence::of_launch(&program, &l);
    assert!(fixed.schedule_independent() && fixed.picks.is_empty());
    // A set: both calls of `nondet` are choices.
    l.extern_values = vec![("nondet.extern".to_string(), vec![3, 4])];
    let set = ScheduleDependence::of_launch(&program, &l);
    assert_eq!(set.picks.len(), 2);
    assert!(!set.schedule_independent());
}
