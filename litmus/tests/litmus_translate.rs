//! The litmus translator: the PTX it writes loads, placement follows the CTAs, barriers get
//! Dat3M's participant counts, and unsupported constructs get a reason instead of a verdict.

use litmus::parse::parse;
use litmus::translate::{Slot, translate};
use litmus::{MemorySystem, Options, Status, check, load};
use semantics::machine::MemoryKind;

const MP: &str = "PTX MP\n{ x=0; y=0; P1:r3=5; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 | P2@cta 3,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r1, y | LC00: ;\n st.release.gpu y, 1 | ld.weak r2, x | atom.acq_rel.sys.sub r0, x, 1 ;\n red.acq_rel.gpu.add y, 2 | add r3, r3, 1 | beq r0, 1, LC00 ;\nexists (P1:r1 == 1 /\\ P1:r2 != 1 /\\ P1:r3 == 6 /\\ x == 0)\n";

/// The litmus check of `test` under cached memory, every other option the default.
fn check_cached(test: &litmus::parse::LitmusTest) -> litmus::Report {
    check(
        test,
        &Options {
            memory: MemorySystem::Cached,
            ..Options::default()
        },
    )
}

#[test]
fn translation_loads_and_places_threads() {
    let test = parse(MP).expect("parses");
    let t = translate(&test, MemoryKind::Flat).expect("supported");
    load(&t.ptx).unwrap_or_else(|e| panic!("{e}\n{}", t.ptx));
    // P0 and P1 share CTA 0 (block 0, warps 0 and 1); P2's CTA 3 is block 1.
    assert_eq!(t.placement, vec![(0, 0), (0, 1), (1, 0)]);
    assert_eq!(t.launch.grid, [2, 1, 1]);
    assert_eq!(t.launch.block, [2, 1, 1]);
    assert_eq!(t.config.device.warp_size, 1);
    assert_eq!(t.config.device.num_sms, 2);
    assert_eq!(t.config.device.max_blocks_per_sm, 1);
    assert!(
        t.ptx.contains("ld.acquire.gpu.global.s32 %t1_r1, [loc_y];"),
        "{}",
        t.ptx
    );
    assert!(
        t.ptx
            .contains("atom.acq_rel.sys.global.add.s32 %t2_r0, [loc_x], -1;"),
        "{}",
        t.ptx
    );
    assert!(
        t.ptx
            .contains("atom.acq_rel.gpu.global.add.s32 %scratch, [loc_y], 2;"),
        "{}",
        t.ptx
    );
    assert!(t.ptx.contains("mov.s32 %t1_r3, 5;"), "{}", t.ptx);
    assert_eq!(t.observed.len(), 4);
    assert_eq!(t.observed[3].1, Slot::Variable("loc_x".into()));
}

#[test]
fn flat_exploration_reaches_only_sc_outcomes() {
    let test = parse(MP).expect("parses");
    let r = check(&test, &Options::default());
    assert_eq!(r.status, Status::Ok);
    // MP under SC: seeing the flag means seeing the data.
    assert_eq!(r.holds, Some(false));
    assert!(r.outcomes.iter().all(|o| o.values[2] == 6));
    assert!(r.deadlocks == 0 && r.faults == 0);
}

#[test]
fn barriers_wait_for_the_threads_that_use_their_id() {
    let text = "PTX bars\n{ x=0; P1:r5=2; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 | P2@cta 0,gpu 0 | P3@cta 1,gpu 0 ;\n st.weak x, 1 | bar.cta.sync 1, r5 | bar.cta.sync 2 | bar.cta.sync 2 ;\n bar.cta.sync 2 | ld.weak r0, x | bar.cta.arrive 1, 1, 3 | ;\nforall (P1:r0 == 1)\n";
    let test = parse(text).expect("parses");
    let t = translate(&test, MemoryKind::Flat).expect("supported");
    load(&t.ptx).unwrap_or_else(|e| panic!("{e}\n{}", t.ptx));
    // id 2 in CTA 0: P0, P1 (via r5 = 2) and P2; in CTA 1 only P3. Quorum 3 is explicit.
    assert_eq!(t.ptx.matches("bar.cta.sync 2, 3;").count(), 3, "{}", t.ptx);
    assert_eq!(t.ptx.matches("bar.cta.sync 2, 1;").count(), 1, "{}", t.ptx);
    assert!(t.ptx.contains("bar.cta.arrive 1, 3;"), "{}", t.ptx);
}

#[test]
fn unsupported_constructs_name_a_reason() {
    let cases = [
        (
            "{ x=0; s @ surface aliases x; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;",
            "proxies",
        ),
        (
            "{ x=0; }\n P0@cta 0,gpu 0 ;\n fence.proxy.texture ;",
            "proxies",
        ),
        (
            "{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 1 ;\n st.weak x, 1 | ;",
            "multiple GPUs",
        ),
        (
            "{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r1, x ;\n bar.cta.sync r1 ;",
            "barrier id",
        ),
        (
            "{ x=0; }\n P0@cta 0,gpu 0 ;\n atom.relaxed.gpu.mul r0, x, 2 ;",
            "`atom.mul`",
        ),
    ];
    for (body, reason) in cases {
        let text = format!("PTX u\n{body}\nexists (x == 1)\n");
        let test = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let r = check(&test, &Options::default());
        match &r.status {
            Status::Unsupported(why) => assert!(why.contains(reason), "{why} for\n{text}"),
            other => panic!("{other:?} for\n{text}"),
        }
        assert_eq!(r.holds, None);
    }
}

#[test]
fn cached_memory_runs_the_same_test_and_places_ctas_on_their_own_sms() {
    // Message passing with weak accesses on two CTAs: flat memory never shows the stale
    // outcome, cached memory does (the two loads of P1 complete out of order).
    let mp2 = "PTX MP2\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.weak r1, y ;\n st.weak y, 1 | ld.weak r2, x ;\nexists (P1:r1 == 1 /\\ P1:r2 == 0)\n";
    let test = parse(mp2).expect("parses");
    let flat = check(&test, &Options::default());
    let cached = check_cached(&test);
    assert_eq!(cached.status, Status::Ok, "{:?}", cached.status);
    assert_eq!(cached.memory, MemorySystem::Cached);
    // Every sequentially consistent outcome is still reachable; the cached machine has more
    // states (memory programs in flight).
    for o in &flat.outcomes {
        assert!(
            cached.outcomes.iter().any(|c| c.values == o.values),
            "{:?} missing under cached memory",
            o.values
        );
    }
    assert!(cached.states > flat.states);
    assert_eq!(flat.holds, Some(false));
    assert_eq!(cached.holds, Some(true));
    assert!(
        cached.replay_flags.iter().any(|f| f == "cached"),
        "{:?}",
        cached.replay_flags
    );
}

/// Each location is a cache line of its own: the reader primes its L1 with `x`, then sees the
/// writer's `y` (a miss, from L2) and still the stale `x` (a hit), `.cta` fences keeping its
/// three loads in order. The PTX model allows it (the fence is not in the
/// writer's scope: no synchronization); flat memory does not reach it (sequentially
/// consistent), and neither did cached memory while the translation packed `x` and `y` into
/// one line (`y` can miss only after the line, and so the stale `x`, has left the L1).
#[test]
fn each_location_is_a_line_of_its_own_under_cached_memory() {
    let text = "PTX MP+primed\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.weak r2, x ;\n st.release.gpu y, 1 | fence.acq_rel.cta ;\n | ld.weak r0, y ;\n | fence.acq_rel.cta ;\n | ld.weak r1, x ;\nexists (P1:r2 == 0 /\\ P1:r0 == 1 /\\ P1:r1 == 0)\n";
    let test = parse(text).expect("parses");
    let t = translate(&test, MemoryKind::Cached).expect("translates");
    assert!(
        t.ptx.contains(".global .align 64 .s32 loc_x = 0;")
            && t.ptx.contains(".global .align 64 .s32 loc_y = 0;"),
        "{}",
        t.ptx
    );
    let flat = check(&test, &Options::default());
    assert_eq!((flat.status, flat.holds), (Status::Ok, Some(false)));
    let cached = check_cached(&test);
    assert_eq!(cached.status, Status::Ok, "{:?}", cached.status);
    assert_eq!(cached.holds, Some(true));
}

#[test]
fn the_state_bound_withholds_the_verdict() {
    let test = parse(MP).expect("parses");
    let r = check(
        &test,
        &Options {
            max_states: 10,
            ..Options::default()
        },
    );
    assert_eq!(r.status, Status::Bounded);
    assert_eq!(r.holds, None);
}

/// herd and Dat3M answer an `exists` test as soon as an execution reaches the outcome: a
/// bounded search that found a witness decides it; one that found none yet does not.
#[test]
fn a_reached_outcome_decides_a_bounded_search() {
    let text = "PTX EX\n{ x=0; y=0; P1:r0=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, x ;\n st.relaxed.gpu y, 1 | ld.relaxed.gpu r1, y ;\nexists (P1:r0 == 0)\n";
    let test = parse(text).expect("parses");
    let full = check(&test, &Options::default());
    assert_eq!(full.status, Status::Ok);
    assert_eq!(full.holds, Some(true));
    let mut decided_early = 0;
    for max_states in 1..full.states {
        let r = check(
            &test,
            &Options {
                max_states,
                ..Options::default()
            },
        );
        assert_eq!(r.status, Status::Bounded, "{max_states}");
        if r.outcomes.iter().any(|o| o.satisfies) {
            assert_eq!(r.holds, Some(true), "{max_states}");
            assert!(r.witness.is_some());
            decided_early += 1;
        } else {
            assert_eq!(r.holds, None, "{max_states}");
        }
    }
    assert!(decided_early > 0);
}
