//! Replay fidelity (ARCHITECTURE.md section 5): 200 random schedules over the corpus
//! (`tests/kernels/*.ptx` with their launch files, under the three warp models) are recorded
//! with their events, written as JSON Lines, read back, and replayed strictly: every replay
//! takes every choice and produces identical events. Deliberately altered traces are rejected
//! at exactly the altered step. Compact strings round-trip: version 2 by the choices'
//! identities (independent of the enabled sets' order), version 1 through the enabled-set
//! indices. A schedule step the machine refuses is reported, not skipped.

use scheduler::replay::{DivergenceKind, Recorder, indices_of, replay, resolve_indices};
use scheduler::{Random, run};
use semantics::machine::{Machine, WarpModel};
use traces::format::{
    Compact, CompactTrace, CompactV1, from_json_lines, parse_compact, to_json_lines,
};
use traces::{Choice, Trace};

/// The corpus under the three warp models.
fn kernels() -> Vec<(String, Machine)> {
    corpus::corpus_machines_under(&[WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads])
        .into_iter()
        .map(|(name, m, _)| (name, m))
        .collect()
}

/// Records a random run: choices and the events of each.
fn record(m: &Machine, seed: u64, max_steps: u64) -> (Vec<Choice>, Vec<Vec<traces::Event>>) {
    let mut rec = Recorder::new(Random::new(seed));
    let mut m1 = m.clone();
    run(&mut m1, &mut rec, max_steps);
    let mut m2 = m.clone();
    let r = replay(&mut m2, &rec.choices, None, None, true);
    assert_eq!(r.divergence, None);
    (rec.choices, r.events.unwrap())
}

#[test]
fn two_hundred_random_schedules_replay_with_identical_events() {
    let ks = kernels();
    assert!(ks.len() >= 30, "{} kernels", ks.len());
    let mut replayed = 0;
    let mut steps = 0;
    for i in 0..200u64 {
        let (name, m) = &ks[(i as usize * 7) % ks.len()];
        let (choices, events) = record(m, i, 20_000);
        let mut t: Trace<String, String> = Trace::new(0, name.clone(), String::new(), Some(i));
        t.choices = choices;
        t.events = Some(events);
        let text = to_json_lines(&t).unwrap();
        let back: Trace<String, String> = from_json_lines(&text).unwrap();
        assert_eq!(back, t, "{name}: JSON Lines round trip");
        let mut fresh = m.clone();
        let r = replay(
            &mut fresh,
            &back.choices,
            back.events.as_deref(),
            None,
            false,
        );
        assert_eq!(r.divergence, None, "{name} seed {i}");
        assert_eq!(r.taken, back.choices.len());
        // The compact form (version 2, by identity) decodes to the same choices without the
        // machine, and they replay.
        let c = CompactTrace {
            program_hash: 0,
            cycle_start: None,
            choices: back.choices.clone(),
        };
        let Compact::V2(parsed) = parse_compact(&c.encode()).unwrap() else {
            panic!("{name}: not a version 2 string")
        };
        assert_eq!(parsed.choices, back.choices, "{name} seed {i}: compact");
        let r = replay(&mut m.clone(), &parsed.choices, None, None, false);
        assert_eq!(r.divergence, None, "{name} seed {i}: compact replay");
        // Version 1 strings (enabled-set indices) still resolve.
        let idx = indices_of(m, &back.choices).unwrap();
        let c = CompactV1 {
            program_hash: 0,
            checksum: CompactV1::checksum_of(&back.choices),
            cycle_start: None,
            indices: idx,
        };
        let Compact::V1(parsed) = parse_compact(&c.encode()).unwrap() else {
            panic!("{name}: not a version 1 string")
        };
        let resolved = resolve_indices(m, &parsed.indices).unwrap();
        assert_eq!(
            resolved, back.choices,
            "{name} seed {i}: compact v1 round trip"
        );
        assert_eq!(CompactV1::checksum_of(&resolved), parsed.checksum);
        replayed += 1;
        steps += back.choices.len();
    }
    assert_eq!(replayed, 200);
    assert!(steps > 1000);
}

#[test]
fn altered_traces_are_rejected_at_the_altered_step() {
    let ks = kernels();
    let (name, m) = ks
        .iter()
        .find(|(n, _)| n.starts_with("spinlock SimtStack"))
        .unwrap();
    let (choices, events) = record(m, 3, 100_000);
    assert!(choices.len() > 50, "{name}");
    let k = choices.len() / 2;

    // A choice that is not enabled at step k.
    let mut bad = choices.clone();
    bad[k] = Choice::Warp {
        block: 999,
        warp: 0,
    };
    let r = replay(&mut m.clone(), &bad, None, None, false);
    let d = r.divergence.unwrap();
    assert_eq!(d.step, k);
    assert_eq!(r.taken, k);
    assert!(matches!(d.kind, DivergenceKind::NotEnabled { .. }));
    assert!(!d.enabled.is_empty());

    // An altered event at step k: the choice is enabled, what it did differs.
    let mut bad_events = events.clone();
    let j = (k..events.len()).find(|&j| !events[j].is_empty()).unwrap();
    bad_events[j].pop();
    let r = replay(&mut m.clone(), &choices, Some(&bad_events), None, false);
    let d = r.divergence.unwrap();
    assert_eq!(d.step, j);
    assert!(matches!(d.kind, DivergenceKind::EventsDiffer { .. }));

    // A trace that goes on after the run ended.
    let mut longer = choices.clone();
    longer.push(choices[0]);
    let r = replay(&mut m.clone(), &longer, None, None, false);
    let d = r.divergence.unwrap();
    assert_eq!(d.step, choices.len());
    assert!(matches!(d.kind, DivergenceKind::Ended { .. }));

    // A compact index beyond the enabled set.
    let mut idx = indices_of(m, &choices).unwrap();
    idx[k] = 1000;
    let d = resolve_indices(m, &idx).unwrap_err();
    assert_eq!(d.step, k);
    assert!(matches!(
        d.kind,
        DivergenceKind::IndexOutOfRange { index: 1000 }
    ));
}

/// A version 2 string names choices, not positions: the same string decodes to the same
/// schedule whatever order a machine lists its enabled choices in, where a version 1 string's
/// indices, read against the same sets in another order, name other choices.
#[test]
fn compact_strings_do_not_depend_on_the_enabled_sets_order() {
    let ks = kernels();
    let (name, m) = ks
        .iter()
        .find(|(n, _)| n.starts_with("spinlock SimtStack"))
        .unwrap();
    let (choices, _) = record(m, 5, 100_000);
    // The enabled set before each step, as the machine lists it and reversed.
    let mut sets = Vec::new();
    let mut walk = m.clone();
    for c in &choices {
        sets.push(walk.enabled().to_vec());
        walk.step(c).unwrap();
    }
    assert!(
        sets.iter().any(|s| s.len() > 1),
        "{name}: no choice to make"
    );
    let indices_in = |order: &dyn Fn(&[Choice]) -> Vec<Choice>| -> Vec<u32> {
        choices
            .iter()
            .zip(&sets)
            .map(|(c, s)| order(s).iter().position(|e| e == c).unwrap() as u32)
            .collect()
    };
    let reversed_order = |s: &[Choice]| s.iter().rev().copied().collect::<Vec<_>>();
    let as_listed = indices_in(&|s| s.to_vec());
    // Version 1 read against reordered sets: other choices.
    let misread: Vec<Choice> = as_listed
        .iter()
        .zip(&sets)
        .map(|(&i, s)| reversed_order(s)[i as usize])
        .collect();
    assert_ne!(
        misread, choices,
        "{name}: reordering should change a v1 reading"
    );
    // Version 2: the string is a function of the choices alone (no enabled set is consulted
    // to write or read it), and the strict replay checks membership, not position.
    let s = CompactTrace {
        program_hash: 1,
        cycle_start: None,
        choices: choices.clone(),
    }
    .encode();
    let Compact::V2(decoded) = parse_compact(&s).unwrap() else {
        panic!("not a version 2 string")
    };
    assert_eq!(decoded.choices, choices);
    let r = replay(&mut m.clone(), &decoded.choices, None, None, false);
    assert_eq!(r.divergence, None);
}

/// A schedule step the machine refuses is reported with the prefix before it, never skipped
/// (the preemption count of a schedule that does not replay would mean nothing).
#[test]
fn preemptions_report_a_refused_step() {
    let ks = kernels();
    let (name, m) = ks
        .iter()
        .find(|(n, _)| n.starts_with("spinlock SimtStack"))
        .unwrap();
    let (good, _) = record(m, 2, 100_000);
    assert!(good.len() > 10, "{name}");
    assert!(scheduler::fuzz::preemptions(m, &good).is_ok());
    let alien = Choice::Warp {
        block: 999,
        warp: 0,
    };
    let mut bad = good.clone();
    bad.insert(5, alien);
    let r = scheduler::fuzz::preemptions(m, &bad).unwrap_err();
    assert_eq!(r.prefix, good[..5].to_vec());
    assert_eq!(r.choice, alien);
    assert_eq!(r.step, 5);
    assert_eq!(r.schedule(), bad[..6].to_vec());
}
