//! Micro-step structure of the programs (T13, after cudasem's merge of `writeToRegs` and
//! `releaseRegs` into one last micro step), local write-back (T10) and flush (T11).

mod common;

use common::*;
use memory_model::cached::{
    CacheOp, Cached, EvClass, MemChoice, MemOrder, Request, RequestKind, SilentActions,
};
use memory_model::{Flat, MemSpace, Who};

const G: MemSpace = MemSpace::Global;
const S: MemSpace = MemSpace::Shared;
const L: MemSpace = MemSpace::Local;

/// Issues `r` alone and steps it to its end; returns the operations of each micro step. Ops
/// the request put in flight besides (the release half of an acq_rel fence) are then run to
/// their end too, so the next request starts from an idle thread.
fn run(c: &mut Cached, dram: &mut Flat, r: Request) -> Vec<Vec<&'static str>> {
    let op = c.issue(r);
    let mut steps = Vec::new();
    loop {
        let rep = c
            .step(MemChoice::Step { op }, dram)
            .unwrap_or_else(|e| panic!("{e:?}"));
        steps.push(rep.operations.to_vec());
        if rep.ended.is_some() {
            break;
        }
        assert!(steps.len() < 20, "runaway program");
    }
    while c.thread_busy(r.who) {
        let mut choices = Vec::new();
        c.enabled(&mut choices);
        let Some(next) = choices
            .into_iter()
            .find(|m| matches!(m, MemChoice::Step { .. }))
        else {
            panic!("{:?} stays busy with nothing to step", r.who)
        };
        c.step(next, dram).unwrap_or_else(|e| panic!("{e:?}"));
    }
    steps
}

fn counts(c: &mut Cached, dram: &mut Flat, r: Request) -> usize {
    run(c, dram, r).len()
}

fn setup() -> (Cached, Flat, u64) {
    let (mut dram, x) = dram_with(&[0; 64]);
    dram.create_block(0, 64, 2);
    (Cached::new(config(SilentActions::All)), dram, x)
}

const A: Who = Who {
    block: 0,
    thread: 0,
};

#[test]
fn t13_load_paths() {
    let (mut c, mut d, x) = setup();
    // Listing 4.2: both miss 6, L2 hit 4 (another SM's L1 is empty), L1 hit 2.
    let steps = run(&mut c, &mut d, ld(A, 0, G, x, None, MemOrder::Weak, 1));
    assert_eq!(
        steps,
        vec![
            vec!["reserveL1"],
            vec!["reserveL2"],
            vec!["readMem"],
            vec!["updateL2", "readL2"],
            vec!["updateL1", "readL1"],
            vec!["writeToRegs", "releaseRegs"],
        ]
    );
    assert_eq!(
        counts(&mut c, &mut d, ld(A, 1, G, x, None, MemOrder::Weak, 1)),
        4
    );
    assert_eq!(
        counts(&mut c, &mut d, ld(A, 0, G, x, None, MemOrder::Weak, 1)),
        2
    );
    // L2 only (.cg, strong): hit 2, miss 4.
    let cg = Some(CacheOp::Cg);
    assert_eq!(
        counts(&mut c, &mut d, ld(A, 0, G, x, cg, MemOrder::Weak, 1)),
        2
    );
    assert_eq!(
        counts(
            &mut c,
            &mut d,
            ld(A, 0, G, x + 128, None, MemOrder::Relaxed, 1)
        ),
        4
    );
    // .cs: the lines are classified evict-first.
    let cs = Some(CacheOp::Cs);
    let steps = run(&mut c, &mut d, ld(A, 0, G, x + 64, cs, MemOrder::Weak, 1));
    assert_eq!(steps[0], ["reserveL1", "classifyFirstL1"]);
    assert_eq!(steps.len(), 6);
    assert!(
        c.l1_lines(0)
            .iter()
            .any(|l| l.addr == x + 64 && l.class == EvClass::First)
    );
}

#[test]
fn t13_store_atomic_shared_fence_paths() {
    let (mut c, mut d, x) = setup();
    let steps = run(&mut c, &mut d, st(A, 0, G, x, 7, MemOrder::Weak));
    assert_eq!(
        steps,
        vec![
            vec!["discardL1"],
            vec!["writeL2", "classifyNormalL2"],
            vec!["invalidateL1", "releaseRegs"]
        ]
    );
    // Listing 4.4: L2 hit 3 (the store left the line in L2), miss 6.
    let steps = run(&mut c, &mut d, atom(A, 0, G, x, 1, 1));
    assert_eq!(steps[1], ["readL2", "atomOp", "writeL2"]);
    assert_eq!(steps.len(), 3);
    assert_eq!(counts(&mut c, &mut d, atom(A, 0, G, x + 128, 1, 1)), 6);
    // Listing 4.5: 5; shared load 2, shared store 1; fence 1; local store (4.3) 2.
    assert_eq!(counts(&mut c, &mut d, atom(A, 0, S, 0, 1, 1)), 5);
    assert_eq!(
        counts(&mut c, &mut d, ld(A, 0, S, 0, None, MemOrder::Weak, 1)),
        2
    );
    assert_eq!(counts(&mut c, &mut d, st(A, 0, S, 0, 3, MemOrder::Weak)), 1);
    assert_eq!(run(&mut c, &mut d, fence(A, 0)), vec![vec!["flushL1"]]);
    assert_eq!(
        counts(&mut c, &mut d, st(A, 0, L, 16, 3, MemOrder::Weak)),
        2
    );
    assert!(c.idle());
}

fn local_store(cop: Option<CacheOp>, addr: u64, value: u64) -> Request {
    let mut r = st(A, 0, L, addr, value, MemOrder::Weak);
    r.kind = RequestKind::Store { cop, value };
    r
}

/// T10: a local store dirties L1 (class first); only wb_L1 then wb_L2 bring it to DRAM; a dirty
/// line is never evicted.
#[test]
fn t10_local_write_back_chain() {
    let (mut c, mut d, _) = setup();
    run(&mut c, &mut d, local_store(Some(CacheOp::Cs), 16, 9));
    let l1 = c.l1_lines(0);
    assert_eq!(l1.len(), 1);
    let line = l1[0].key;
    assert_eq!((l1[0].space, l1[0].who, l1[0].addr), (L, Some(A), 0));
    assert_eq!(l1[0].class, EvClass::First);
    assert_eq!(l1[0].dirty, 0xF << 16);
    let mut en = Vec::new();
    c.enabled(&mut en);
    assert_eq!(en, vec![MemChoice::WriteBackL1 { sm: 0, line }]);
    let rep = c
        .step(MemChoice::WriteBackL1 { sm: 0, line }, &mut d)
        .unwrap();
    assert_eq!(rep.operations.as_slice(), ["wb_L1"]);
    assert_eq!(c.l1_lines(0)[0].dirty, 0);
    assert_eq!(c.l2_lines()[0].dirty, 0xF << 16);
    assert_eq!(d.read_local(A, 16, 4), [0; 4], "DRAM changes only by wb_L2");
    en.clear();
    c.enabled(&mut en);
    assert_eq!(
        en,
        vec![
            MemChoice::EvictL1 { sm: 0, line },
            MemChoice::WriteBackL2 { line }
        ]
    );
    c.step(MemChoice::WriteBackL2 { line }, &mut d).unwrap();
    assert_eq!(d.read_local(A, 16, 4), [9, 0, 0, 0]);
    c.step(MemChoice::EvictL1 { sm: 0, line }, &mut d).unwrap();
    c.step(MemChoice::EvictL2 { line }, &mut d).unwrap();
    // The value comes back from DRAM through both levels.
    let mut reads = Vec::new();
    let op = c.issue(ld(A, 0, L, 16, None, MemOrder::Weak, 1));
    loop {
        let rep = c.step(MemChoice::Step { op }, &mut d).unwrap();
        reads.extend(rep.delivered.map(|d| d.value));
        if rep.ended.is_some() {
            break;
        }
    }
    assert_eq!(reads, [9]);
}

/// T11: a flush invalidates every global L1 line and no local one (dirty flags kept); the next
/// `.ca` load misses L1 and sees L2.
#[test]
fn t11_flush_keeps_local_lines() {
    let (mut c, mut d, x) = setup();
    run(&mut c, &mut d, ld(A, 0, G, x, None, MemOrder::Weak, 1));
    run(&mut c, &mut d, local_store(None, 8, 4));
    // Another SM's store updates L2; SM 0's L1 keeps the old line.
    run(&mut c, &mut d, st(A, 1, G, x, 6, MemOrder::Weak));
    assert_eq!(c.l1_lines(0).len(), 2);
    let rep = c.step(MemChoice::Flush { sm: 0 }, &mut d).unwrap();
    assert_eq!(rep.operations.as_slice(), ["flush"]);
    let l1 = c.l1_lines(0);
    assert_eq!(l1.len(), 1);
    assert_eq!((l1[0].space, l1[0].dirty), (L, 0xF << 8));
    let steps = run(&mut c, &mut d, ld(A, 0, G, x, None, MemOrder::Weak, 1));
    assert_eq!(steps.len(), 4, "L1 miss, L2 hit");
    let mut c2 = c.clone();
    let op = c2.issue(ld(A, 0, G, x, None, MemOrder::Weak, 1));
    let v = (0..2)
        .filter_map(|_| c2.step(MemChoice::Step { op }, &mut d).unwrap().delivered)
        .map(|d| d.value)
        .collect::<Vec<_>>();
    assert_eq!(v, [6]);
}

/// A10 repair: a flush while a `.ca` fill is in flight dooms the pinned line; the load still
/// completes from it, and new lookups do not see it.
#[test]
fn flush_during_fill_dooms_the_line() {
    let (mut c, mut d, x) = setup();
    let op = c.issue(ld(A, 0, G, x, None, MemOrder::Weak, 1));
    c.step(MemChoice::Step { op }, &mut d).unwrap(); // reserveL1
    c.flush_l1(0);
    let l1 = c.l1_lines(0);
    assert_eq!(l1.len(), 1);
    assert!(l1[0].doomed && l1[0].pins == [op]);
    let mut v = None;
    loop {
        let rep = c.step(MemChoice::Step { op }, &mut d).unwrap();
        v = v.or(rep.delivered.map(|d| d.value));
        if rep.ended.is_some() {
            break;
        }
    }
    assert_eq!(v, Some(0));
    assert!(
        c.l1_lines(0).is_empty(),
        "the doomed line goes with its last pin"
    );
}

/// ⊥ and choices that are not enabled are errors, never panics.
#[test]
fn bad_requests_and_choices_are_errors() {
    let (mut c, mut d, x) = setup();
    assert!(
        c.step(MemChoice::Step { op: 3 }, &mut d).is_err(),
        "no such op"
    );
    assert!(
        c.step(MemChoice::Flush { sm: 0 }, &mut d).is_err(),
        "nothing to flush"
    );
    let mut bad = ld(A, 9, G, x, None, MemOrder::Weak, 1);
    let op = c.issue(bad);
    assert!(c.step(MemChoice::Step { op }, &mut d).is_err(), "no sm 9");
    bad.sm = 0;
    bad.addr = x + 2;
    let op = c.issue(bad);
    assert!(
        c.step(MemChoice::Step { op }, &mut d).is_err(),
        "misaligned"
    );
    let mut konst = ld(A, 0, MemSpace::Const, 0, None, MemOrder::Weak, 1);
    konst.size = 4;
    let op = c.issue(konst);
    assert!(
        c.step(MemChoice::Step { op }, &mut d).is_err(),
        "no program"
    );
}

/// The `Step` choices the engine keeps incrementally, against a scan of every op.
fn steps_agree(c: &Cached) {
    let mut kept = Vec::new();
    c.enabled(&mut kept);
    kept.retain(|m| matches!(m, MemChoice::Step { .. }));
    let mut scratch = Vec::new();
    c.enabled_steps_from_scratch(&mut scratch);
    assert_eq!(kept, scratch, "the incremental enabled steps drifted");
    assert!(c.indexes_consistent(), "the indexes drifted");
}

/// A read that waits for a fill is enabled again when the line it pins fills, also when a
/// flush doomed that line in between (the engine re-tests waiting reads only when their line's
/// valid bytes change, and a doomed line's fill must count: issue 15's fill journal).
#[test]
fn a_read_waiting_on_a_doomed_line_wakes_when_it_fills() {
    let (mut c, mut d, x) = setup();
    let b = Who {
        block: 0,
        thread: 1,
    };
    let first = c.issue(ld(A, 0, G, x, None, MemOrder::Weak, 1));
    let second = c.issue(ld(b, 0, G, x + 4, None, MemOrder::Weak, 2));
    c.step(MemChoice::Step { op: first }, &mut d).unwrap(); // reserveL1
    steps_agree(&c);
    // The line is reserved: the second load joins it and waits at readL1.
    let rep = c.step(MemChoice::Step { op: second }, &mut d).unwrap();
    assert_eq!(rep.operations.to_vec(), ["readL1"]);
    assert!(!c.offers(&MemChoice::Step { op: second }), "it waits");
    steps_agree(&c);
    c.flush_l1(0);
    let l1 = c.l1_lines(0);
    assert!(l1.len() == 1 && l1[0].doomed && l1[0].pins == [first, second]);
    steps_agree(&c);
    let mut filled = false;
    while c.thread_busy(A) {
        let rep = c.step(MemChoice::Step { op: first }, &mut d).unwrap();
        filled |= rep.operations.contains(&"updateL1");
        steps_agree(&c);
        if filled {
            break;
        }
    }
    assert!(filled);
    assert!(
        c.offers(&MemChoice::Step { op: second }),
        "the fill of the doomed line wakes the waiting read"
    );
    let rep = c.step(MemChoice::Step { op: second }, &mut d).unwrap();
    assert_eq!(rep.operations.to_vec(), ["readL1"]);
    steps_agree(&c);
}

/// Global memory seen through L2 (`overlay_global`): valid L2 bytes over DRAM's, for ranges
/// that start and end inside lines and span several.
#[test]
fn overlay_global_reads_valid_l2_bytes_over_dram() {
    let (mut c, mut d, x) = setup();
    // A store's bytes reach L2 (no write-back to DRAM): x+36..x+40 in the second line.
    run(
        &mut c,
        &mut d,
        st(A, 0, G, x + 36, 0x0403_0201, MemOrder::Weak),
    );
    for (start, len) in [(0u64, 64usize), (33, 9), (37, 1), (30, 34), (39, 2)] {
        let mut bytes: Vec<u8> = (0..len).map(|i| 0xa0 + i as u8).collect();
        c.overlay_global(x + start, &mut bytes);
        let want: Vec<u8> = (0..len)
            .map(|i| match start + i as u64 {
                a @ 36..=39 => (a - 35) as u8,
                _ => 0xa0 + i as u8,
            })
            .collect();
        assert_eq!(bytes, want, "range {start}+{len}");
    }
}

/// `any_thread_busy` (a warp's lanes at once) says what `thread_busy` says of the lanes one by
/// one, as ops of some threads of two blocks are issued and end.
#[test]
fn any_thread_busy_agrees_with_thread_busy_lane_by_lane() {
    let (mut c, mut dram, x) = setup();
    dram.create_block(1, 64, 40);
    let busy_lanes = |c: &Cached, block: u32, tid_base: u32, lanes: u64| {
        (0..64)
            .filter(|l| lanes >> l & 1 != 0)
            .any(|l| c.thread_busy(who(block, tid_base + l)))
    };
    let check = |c: &Cached| {
        for block in [0, 1, 2] {
            for tid_base in [0, 32] {
                for lanes in [0, 1, 0b10, 0b1010, 0xffff_ffff, u64::MAX >> 1, 1 << 3] {
                    assert_eq!(
                        c.any_thread_busy(block, tid_base, lanes),
                        busy_lanes(c, block, tid_base, lanes),
                        "block {block}, threads from {tid_base}, lanes {lanes:#x}"
                    );
                }
            }
        }
    };
    check(&c);
    let ops: Vec<_> = [(0, 1), (0, 3), (1, 35), (1, 33)]
        .into_iter()
        .map(|(b, t)| {
            c.issue(ld(
                who(b, t),
                0,
                G,
                x + 4 * t as u64,
                None,
                MemOrder::Weak,
                1,
            ))
        })
        .collect();
    check(&c);
    assert!(c.any_thread_busy(1, 32, 0b1010));
    assert!(!c.any_thread_busy(1, 0, 0xffff_ffff));
    for op in ops {
        while c.op_who(op).is_some() {
            c.step(MemChoice::Step { op }, &mut dram)
                .unwrap_or_else(|e| panic!("{e:?}"));
            check(&c);
        }
    }
    assert!(!c.any_thread_busy(0, 0, u64::MAX));
}
