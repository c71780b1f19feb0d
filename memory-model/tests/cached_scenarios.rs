//! The thesis's scenarios (digest §4: T2, T3, T5-T9, T14) and the ordering rules O1-O3, as
//! exact outcome sets of an exhaustive exploration of the cached engine.

mod common;

use common::*;
use memory_model::cached::{
    AtomType, CacheOp, Cached, MemChoice, MemOrder, RequestKind, SilentActions,
};
use memory_model::{MemSpace, Who};
use std::collections::BTreeSet;

const G: MemSpace = MemSpace::Global;
const S: MemSpace = MemSpace::Shared;

fn set<T: Ord + Clone>(xs: &[T]) -> BTreeSet<T> {
    xs.iter().cloned().collect()
}

fn thread(w: Who, instrs: Vec<Instr>) -> Thread {
    Thread { who: w, instrs }
}

/// T2 (Ch. 2.3.2): B on SM 1 read `x` through `.ca` (its L1 holds the old value); A on SM 0
/// stores 5; after the store ended, B reads again.
fn t2(second: (Option<CacheOp>, MemOrder), silent: SilentActions) -> BTreeSet<(u64, u64)> {
    let (dram, x) = dram_with(&[0; 64]);
    let a = who(0, 0);
    let b = who(1, 0);
    let threads = vec![
        thread(a, vec![issue(st(a, 0, G, x, 5, MemOrder::Weak))]),
        thread(
            b,
            vec![
                issue(ld(b, 1, G, x, Some(CacheOp::Ca), MemOrder::Weak, 1)),
                Instr::WaitSelf,
                Instr::Join(0),
                issue(ld(b, 1, G, x, second.0, second.1, 2)),
            ],
        ),
    ];
    let sys = Sys::new(Cached::new(config(silent)), dram, threads);
    let e = explore(sys, |s| (s.reg(b, 1), s.reg(b, 2)));
    assert_eq!(e.deadlocks, 0);
    e.outcomes
}

#[test]
fn t2_other_sm_reads_stale_through_ca_only() {
    let ca = (Some(CacheOp::Ca), MemOrder::Weak);
    // Stale (0, 0): the L1 line survived the store; (0, 5): it was evicted or flushed first.
    assert_eq!(
        t2(ca, SilentActions::Observable),
        set(&[(0, 0), (0, 5), (5, 5)])
    );
    // Without silent evictions the line stays: the new value never reaches B through `.ca`.
    assert_eq!(t2(ca, SilentActions::None), set(&[(0, 0), (5, 5)]));
    // `.cg` and `.volatile` read L2, the coherence point: never stale.
    let cg = (Some(CacheOp::Cg), MemOrder::Weak);
    assert_eq!(t2(cg, SilentActions::Observable), set(&[(0, 5), (5, 5)]));
    let volatile = (None, MemOrder::Volatile);
    assert_eq!(
        t2(volatile, SilentActions::Observable),
        set(&[(0, 5), (5, 5)])
    );
}

/// T3 (4.7): W and R on the same SM. R's first load may refill the L1 between W's `discardL1`
/// and `writeL2`; R's second load, issued once L2 already holds W's value, can still read the
/// stale line (until W's store takes its last step, `invalidateL1`).
#[test]
fn t3_same_sm_stale_line_after_store() {
    let (dram, x) = dram_with(&[0; 64]);
    let w = who(0, 0);
    let r = who(0, 1);
    let threads = vec![
        thread(w, vec![issue(st(w, 0, G, x, 5, MemOrder::Weak))]),
        thread(
            r,
            vec![
                issue(ld(r, 0, G, x, None, MemOrder::Weak, 1)),
                Instr::WaitSelf,
                Instr::AwaitL2(x, 5),
                issue(ld(r, 0, G, x, None, MemOrder::Weak, 2)),
            ],
        ),
    ];
    let sys = Sys::new(Cached::new(config(SilentActions::None)), dram, threads);
    let e = explore(sys, |s| (s.reg(r, 1), s.reg(r, 2)));
    // (0, 5): R's line was discarded by W's first step; (0, 0): T3's interleaving.
    assert_eq!(e.outcomes, set(&[(0, 0), (0, 5), (5, 5)]));
}

/// The writer itself never reads its own store's old value back (PTX coherence), even when a
/// thread of the same SM refills the L1 line with the old value in the middle of the store.
#[test]
fn a_thread_reads_its_own_store_even_after_a_same_sm_refill() {
    let (dram, x) = dram_with(&[0; 64]);
    let w = who(0, 0);
    let r = who(0, 1);
    let threads = vec![
        thread(
            w,
            vec![
                issue(st(w, 0, G, x, 5, MemOrder::Weak)),
                issue(ld(w, 0, G, x, None, MemOrder::Weak, 1)),
            ],
        ),
        thread(
            r,
            vec![
                issue(ld(r, 0, G, x, None, MemOrder::Weak, 1)),
                Instr::WaitSelf,
                issue(ld(r, 0, G, x, None, MemOrder::Weak, 2)),
            ],
        ),
    ];
    let sys = Sys::new(
        Cached::new(config(SilentActions::Observable)),
        dram,
        threads,
    );
    let e = explore(sys, |s| s.reg(w, 1));
    assert_eq!(e.outcomes, set(&[5]));
}

/// T5 (Listing 4.5): a shared atomic add 1 racing `st.shared 5`, initial 0: (final, old).
#[test]
fn t5_shared_atomic_racing_plain_store() {
    let (mut dram, _) = dram_with(&[0]);
    dram.create_block(0, 64, 2);
    let a = who(0, 0);
    let b = who(0, 1);
    let threads = vec![
        thread(a, vec![issue(atom(a, 0, S, 0, 1, 1))]),
        thread(b, vec![issue(st(b, 0, S, 0, 5, MemOrder::Weak))]),
    ];
    let sys = Sys::new(Cached::new(config(SilentActions::All)), dram, threads);
    let e = explore(sys, |s| {
        let f = s.dram.clone().read_local_line_shared(0);
        (f, s.reg(a, 1))
    });
    assert_eq!(e.outcomes, set(&[(6, 5), (1, 0), (5, 0)]));
}

trait SharedWord {
    fn read_local_line_shared(self, off: u64) -> u64;
}

impl SharedWord for memory_model::Flat {
    fn read_local_line_shared(mut self, off: u64) -> u64 {
        use memory_model::MemorySystem;
        self.load(who(0, 0), S, off, 4).unwrap_or(u64::MAX)
    }
}

/// T6: two shared atomics on one address serialize through the bank locks.
#[test]
fn t6_shared_atomics_serialize() {
    let (mut dram, _) = dram_with(&[0]);
    dram.create_block(0, 64, 2);
    let a = who(0, 0);
    let b = who(0, 1);
    let threads = vec![
        thread(a, vec![issue(atom(a, 0, S, 8, 1, 1))]),
        thread(b, vec![issue(atom(b, 0, S, 8, 1, 1))]),
    ];
    let sys = Sys::new(Cached::new(config(SilentActions::All)), dram, threads);
    let e = explore(sys, |s| {
        (
            s.dram.clone().read_local_line_shared(8),
            s.reg(a, 1),
            s.reg(b, 1),
        )
    });
    assert_eq!(e.outcomes, set(&[(2, 0, 1), (2, 1, 0)]));
}

/// T7: two global atomics on one address from different SMs: the RMW is one micro step at L2.
#[test]
fn t7_global_atomics_are_atomic() {
    let (dram, x) = dram_with(&[10; 64]);
    let a = who(0, 0);
    let b = who(1, 0);
    let threads = vec![
        thread(a, vec![issue(atom(a, 0, G, x, 1, 1))]),
        thread(b, vec![issue(atom(b, 1, G, x, 1, 1))]),
    ];
    let sys = Sys::new(Cached::new(config(SilentActions::All)), dram, threads);
    let e = explore(sys, |s| {
        (s.global(x), s.reg(a, 1), s.reg(a, 1) + s.reg(b, 1))
    });
    assert_eq!(e.outcomes, set(&[(12, 10, 21), (12, 11, 21)]));
}

/// T8: a global atomic racing a store: `updateL2` never overwrites the newer written bytes.
#[test]
fn t8_global_atomic_racing_store_never_loses_it() {
    let (dram, x) = dram_with(&[0; 64]);
    let a = who(0, 0);
    let b = who(1, 0);
    let threads = vec![
        thread(a, vec![issue(atom(a, 0, G, x, 1, 1))]),
        thread(b, vec![issue(st(b, 1, G, x, 5, MemOrder::Weak))]),
    ];
    for silent in [SilentActions::None, SilentActions::All] {
        let sys = Sys::new(Cached::new(config(silent)), dram.clone(), threads.clone());
        let e = explore(sys, |s| (s.global(x), s.reg(a, 1)));
        assert_eq!(e.outcomes, set(&[(5, 0), (6, 5)]), "{silent:?}");
    }
}

/// T9: a line pinned by a `.ca` read blocks the same SM's store at `discardL1` and any silent
/// eviction until the read's `readL1` unpins it.
#[test]
fn t9_pinned_line_blocks_discard_and_eviction() {
    let (dram, x) = dram_with(&[3; 64]);
    let r = who(0, 0);
    let w = who(0, 1);
    let mut s = Sys::new(
        Cached::new(config(SilentActions::Observable)),
        dram,
        vec![thread(
            r,
            vec![issue(ld(r, 0, G, x, None, MemOrder::Weak, 1))],
        )],
    );
    let read = MemChoice::Step { op: 0 };
    let rep = s.take(read);
    assert_eq!(rep.operations.as_slice(), ["reserveL1"]);
    let store = s.cached.issue(st(w, 0, G, x, 9, MemOrder::Weak));
    let evict = MemChoice::EvictL1 { sm: 0, line: x };
    // Steps the read until its readL1 unpins the line; the store is never offered before.
    while s.cached.l1_lines(0).iter().any(|l| !l.pins.is_empty()) {
        let cs = s.choices();
        assert!(!cs.contains(&evict), "a pinned line is never evicted");
        assert!(
            !cs.contains(&MemChoice::Step { op: store }),
            "discardL1 must wait: {cs:?}"
        );
        s.take(read);
    }
    assert!(s.choices().contains(&evict));
    assert!(s.choices().contains(&MemChoice::Step { op: store }));
    s.take(read); // writeToRegs; releaseRegs; end
    assert_eq!(s.reg(r, 1), 3);
    assert!(s.choices().contains(&MemChoice::Step { op: store }));
    assert!(s.choices().contains(&evict));
    assert_eq!(
        s.take(MemChoice::Step { op: store }).operations.as_slice(),
        ["discardL1"]
    );
    assert!(s.cached.l1_lines(0).is_empty());
}

/// T14: shared atomics whose bank sets overlap but differ never deadlock (all-or-nothing
/// locking) and stay atomic.
#[test]
fn t14_bank_locks_all_or_nothing() {
    let (mut dram, _) = dram_with(&[0]);
    dram.create_block(0, 256, 3);
    let (a, b, c) = (who(0, 0), who(0, 1), who(0, 2));
    let mut wide = atom(a, 0, S, 0, 1, 1);
    wide.size = 8; // banks 0 and 1
    if let RequestKind::Atomic { rmw, .. } = &mut wide.kind {
        rmw.ty = AtomType::U64;
    }
    let threads = vec![
        thread(a, vec![issue(wide)]),
        thread(b, vec![issue(atom(b, 0, S, 4, 1, 1))]), // bank 1
        thread(c, vec![issue(atom(c, 0, S, 128, 1, 1))]), // bank 0 (word 32)
    ];
    let sys = Sys::new(Cached::new(config(SilentActions::None)), dram, threads);
    let e = explore(sys, |s| {
        let mut m = s.dram.clone();
        use memory_model::MemorySystem;
        (
            m.load(a, S, 0, 8).unwrap(),
            m.load(a, S, 128, 4).unwrap(),
            s.reg(b, 1),
        )
    });
    assert_eq!(e.deadlocks, 0);
    // b's old value is the high word of a's 8-byte add (0 either way): a adds to the low word.
    assert_eq!(e.outcomes, set(&[(1 + (1 << 32), 1, 0)]));
}

/// O1: a thread's accesses to one location keep program order (PTX coherence).
#[test]
fn d1_same_location_program_order() {
    let (dram, x) = dram_with(&[0; 64]);
    let a = who(0, 0);
    let b = who(1, 0);
    let same = vec![thread(
        a,
        vec![
            issue(st(a, 0, G, x, 1, MemOrder::Weak)),
            issue(st(a, 0, G, x, 2, MemOrder::Weak)),
            issue(ld(a, 0, G, x, Some(CacheOp::Cg), MemOrder::Weak, 1)),
        ],
    )];
    let sys = Sys::new(Cached::new(config(SilentActions::All)), dram.clone(), same);
    let e = explore(sys, |s| (s.global(x), s.reg(a, 1)));
    assert_eq!(e.outcomes, set(&[(2, 2)]));
    // Two threads: nothing orders them (the check above can fail).
    let two = vec![
        thread(a, vec![issue(st(a, 0, G, x, 1, MemOrder::Weak))]),
        thread(b, vec![issue(st(b, 1, G, x, 2, MemOrder::Weak))]),
    ];
    let sys = Sys::new(Cached::new(config(SilentActions::None)), dram, two);
    let e = explore(sys, |s| s.global(x));
    assert_eq!(e.outcomes, set(&[1, 2]));
}

/// Message passing: A writes data then flag; B (another SM, with data in its L1) reads flag
/// then data. Returns the (flag, data) pairs B can see.
fn mp(
    flag_store: MemOrder,
    flag_load: (Option<CacheOp>, MemOrder),
    fences: bool,
) -> BTreeSet<(u64, u64)> {
    let (dram, data) = dram_with(&[0; 64]);
    let flag = data + 64;
    let a = who(0, 0);
    let b = who(1, 0);
    let mut wa = vec![issue(st(a, 0, G, data, 1, MemOrder::Weak))];
    if fences {
        wa.push(issue(fence(a, 0)));
    }
    wa.push(issue(st(a, 0, G, flag, 1, flag_store)));
    let mut rb = vec![
        issue(ld(b, 1, G, data, None, MemOrder::Weak, 9)),
        Instr::WaitSelf,
        issue(ld(b, 1, G, flag, flag_load.0, flag_load.1, 1)),
    ];
    if fences {
        rb.push(issue(fence(b, 1)));
    }
    rb.push(issue(ld(b, 1, G, data, None, MemOrder::Weak, 2)));
    let threads = vec![thread(a, wa), thread(b, rb)];
    let sys = Sys::new(
        Cached::new(config(SilentActions::Observable)),
        dram,
        threads,
    );
    let e = explore(sys, |s| (s.reg(b, 1), s.reg(b, 2)));
    assert_eq!(e.deadlocks, 0);
    e.outcomes
}

#[test]
fn d2_d3_release_acquire_forbid_stale_message() {
    let acquire = (None, MemOrder::Acquire);
    let weak = (None, MemOrder::Weak);
    // Release store + acquire load: (1, 0) is forbidden.
    let ra = mp(MemOrder::Release, acquire, false);
    assert!(!ra.contains(&(1, 0)), "{ra:?}");
    assert!(ra.contains(&(1, 1)) && ra.contains(&(0, 0)));
    // A weak flag store may overtake the data store (O2 is what forbids it above).
    assert!(mp(MemOrder::Weak, acquire, false).contains(&(1, 0)));
    // A weak flag load leaves the stale data line in B's L1 (O3 + flush forbid it above).
    assert!(mp(MemOrder::Release, weak, false).contains(&(1, 0)));
    // Volatile flag accesses with fences on both sides (membar.gl): forbidden too.
    let fenced = mp(MemOrder::Volatile, (None, MemOrder::Volatile), true);
    assert!(!fenced.contains(&(1, 0)), "{fenced:?}");
    // ... and without the fences, allowed.
    assert!(mp(MemOrder::Volatile, (None, MemOrder::Volatile), false).contains(&(1, 0)));
}
