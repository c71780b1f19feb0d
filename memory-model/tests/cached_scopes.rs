//! Scopes under cached memory (issue 15 item 5): a `.cta` acquire (load, atomic or fence) skips
//! the flush of its SM's L1, so a thread of ANOTHER CTA (another SM) that the model does not
//! synchronise with can now be read stale, while threads of ONE CTA (one SM, one L1) still see
//! everything the PTX model promises them. And strong loads drop their SM's L1 line of the
//! address once they have read L2, which that argument needs (and which the model asks for in
//! any case: a morally strong read orders later weak reads of the thread, "causality order").
//!
//! Every scenario is an exhaustive exploration of the engine's choices; each weak outcome is
//! checked both ways: reachable between two CTAs on two SMs, unreachable within one CTA.

mod common;

use common::*;
use memory_model::cached::{MemOrder, Request, Scope, SilentActions};
use memory_model::{MemSpace, Who};
use std::collections::BTreeSet;

const G: MemSpace = MemSpace::Global;

fn scoped(mut r: Request, scope: Scope) -> Request {
    r.scope = Some(scope);
    r
}

fn fence_at(w: Who, sm: u32, scope: Scope) -> Request {
    scoped(fence(w, sm), scope)
}

fn acquire_rmw(w: Who, sm: u32, addr: u64, reg: u32, scope: Scope) -> Request {
    let mut r = atom(w, sm, G, addr, 0, reg);
    r.order = MemOrder::Acquire;
    scoped(r, scope)
}

/// How the reader acquires the flag (its value goes to register 1).
#[derive(Clone, Copy)]
enum Acquire {
    /// `ld.acquire.<scope> flag`.
    Load,
    /// `atom.acquire.<scope>.add flag, 0`.
    Atomic,
    /// `ld.relaxed.<scope> flag; fence.acq_rel.<scope>`.
    Fence,
}

/// Message passing with a stale line: the writer stores `data` then releases `flag`
/// (`st.release.<scope>`, or a fence and a relaxed store for [`Acquire::Fence`]); the reader
/// first reads `data` weakly (its SM's L1 now holds 0), then acquires `flag` at `scope` and
/// reads `data` weakly again. `same_cta`: both threads in block 0 on SM 0; else the writer is
/// block 0 on SM 0 and the reader block 1 on SM 1. Returns the (flag, data) pairs the reader
/// can see. The flag lies in another cache line than the data.
fn mp(acquire: Acquire, scope: Scope, same_cta: bool) -> BTreeSet<(u64, u64)> {
    mp_at(acquire, scope, same_cta, 64)
}

/// [`mp`] with the flag `flag_offset` bytes after the data (4: the same 32-byte line).
fn mp_at(acquire: Acquire, scope: Scope, same_cta: bool, flag_offset: u64) -> BTreeSet<(u64, u64)> {
    let (dram, data) = dram_with(&[0; 64]);
    let flag = data + flag_offset;
    let a = who(0, 0);
    let (b, sm_b) = if same_cta {
        (who(0, 1), 0)
    } else {
        (who(1, 0), 1)
    };
    let mut wa = vec![issue(st(a, 0, G, data, 1, MemOrder::Weak))];
    match acquire {
        Acquire::Fence => {
            wa.push(issue(fence_at(a, 0, scope)));
            wa.push(issue(scoped(
                st(a, 0, G, flag, 1, MemOrder::Relaxed),
                scope,
            )));
        }
        Acquire::Load | Acquire::Atomic => wa.push(issue(scoped(
            st(a, 0, G, flag, 1, MemOrder::Release),
            scope,
        ))),
    }
    let mut rb = vec![
        issue(ld(b, sm_b, G, data, None, MemOrder::Weak, 9)),
        Instr::WaitSelf,
    ];
    match acquire {
        Acquire::Load => rb.push(issue(scoped(
            ld(b, sm_b, G, flag, None, MemOrder::Acquire, 1),
            scope,
        ))),
        Acquire::Atomic => rb.push(issue(acquire_rmw(b, sm_b, flag, 1, scope))),
        Acquire::Fence => {
            rb.push(issue(scoped(
                ld(b, sm_b, G, flag, None, MemOrder::Relaxed, 1),
                scope,
            )));
            rb.push(issue(fence_at(b, sm_b, scope)));
        }
    }
    rb.push(issue(ld(b, sm_b, G, data, None, MemOrder::Weak, 2)));
    let threads = vec![Thread { who: a, instrs: wa }, Thread { who: b, instrs: rb }];
    // No silent actions: the stale line stays unless a rule of a program removes it.
    let e = explore_both(SilentActions::None, dram, threads, |s| {
        (s.reg(b, 1), s.reg(b, 2))
    });
    assert_eq!(e.deadlocks, 0);
    e.outcomes
}

const STALE: (u64, u64) = (1, 0);

#[test]
fn a_cta_acquire_load_does_not_order_another_ctas_data() {
    // Different CTAs: `.cta` release/acquire do not synchronise (PTX ISA 8, "morally strong":
    // each operation must be in the other's scope); the reader keeps its stale line.
    let diff = mp(Acquire::Load, Scope::Cta, false);
    assert!(diff.contains(&STALE), "{diff:?}");
    // One CTA: they synchronise, and the writer's store dropped the line of the shared L1.
    let same = mp(Acquire::Load, Scope::Cta, true);
    assert!(!same.contains(&STALE), "{same:?}");
    assert!(same.contains(&(1, 1)));
    // `.gpu` between CTAs synchronises: the acquire flushes the reader's L1.
    let gpu = mp(Acquire::Load, Scope::Gpu, false);
    assert!(!gpu.contains(&STALE), "{gpu:?}");
}

/// Flag and data in one line: the strong flag load drops only the flag's bytes of the reader's
/// L1 line, so the stale datum stays reachable between CTAs (and not within one).
#[test]
fn a_cta_acquire_of_a_flag_beside_the_data_leaves_the_data_stale() {
    let diff = mp_at(Acquire::Load, Scope::Cta, false, 4);
    assert!(diff.contains(&STALE), "{diff:?}");
    let same = mp_at(Acquire::Load, Scope::Cta, true, 4);
    assert!(!same.contains(&STALE), "{same:?}");
    let gpu = mp_at(Acquire::Load, Scope::Gpu, false, 4);
    assert!(!gpu.contains(&STALE), "{gpu:?}");
}

#[test]
fn a_cta_acquire_atomic_does_not_order_another_ctas_data() {
    let diff = mp(Acquire::Atomic, Scope::Cta, false);
    assert!(diff.contains(&STALE), "{diff:?}");
    let same = mp(Acquire::Atomic, Scope::Cta, true);
    assert!(!same.contains(&STALE), "{same:?}");
    assert!(same.contains(&(1, 1)));
    let gpu = mp(Acquire::Atomic, Scope::Gpu, false);
    assert!(!gpu.contains(&STALE), "{gpu:?}");
}

#[test]
fn a_cta_fence_does_not_order_another_ctas_data() {
    let diff = mp(Acquire::Fence, Scope::Cta, false);
    assert!(diff.contains(&STALE), "{diff:?}");
    let same = mp(Acquire::Fence, Scope::Cta, true);
    assert!(!same.contains(&STALE), "{same:?}");
    assert!(same.contains(&(1, 1)));
    let sys = mp(Acquire::Fence, Scope::Sys, false);
    assert!(!sys.contains(&STALE), "{sys:?}");
}

/// A reader fills its L1 with `x = 0`, reads `x` with a strong load at `scope` (register 1),
/// then weakly again (register 2); a writer stores `x = 1` with `st.relaxed.<scope>`.
fn strong_then_weak(scope: Scope, same_cta: bool) -> BTreeSet<(u64, u64)> {
    let (dram, x) = dram_with(&[0; 64]);
    let a = who(0, 0);
    let (b, sm_b) = if same_cta {
        (who(0, 1), 0)
    } else {
        (who(1, 0), 1)
    };
    let threads = vec![
        Thread {
            who: a,
            instrs: vec![issue(scoped(st(a, 0, G, x, 1, MemOrder::Relaxed), scope))],
        },
        Thread {
            who: b,
            instrs: vec![
                issue(ld(b, sm_b, G, x, None, MemOrder::Weak, 9)),
                Instr::WaitSelf,
                issue(scoped(ld(b, sm_b, G, x, None, MemOrder::Relaxed, 1), scope)),
                issue(ld(b, sm_b, G, x, None, MemOrder::Weak, 2)),
            ],
        },
    ];
    let e = explore_both(SilentActions::None, dram, threads, |s| {
        (s.reg(b, 1), s.reg(b, 2))
    });
    assert_eq!(e.deadlocks, 0);
    e.outcomes
}

/// The write is observed by a morally strong read (observation order), which precedes the
/// weak read in program order (base causality order): the weak read may not return the value
/// the write overwrote (PTX ISA 8, axiom "Causality"). Before strong loads dropped their SM's
/// line, the weak read hit the line filled before the write.
#[test]
fn a_weak_load_after_a_strong_one_never_reads_older() {
    // Another CTA, `.gpu` scope: the stale line of the reader's SM.
    let gpu = strong_then_weak(Scope::Gpu, false);
    assert!(!gpu.contains(&STALE), "{gpu:?}");
    assert!(gpu.contains(&(1, 1)) && gpu.contains(&(0, 0)));
    // One CTA, `.cta` scope: the writer's store is in L2 but has not yet dropped the shared
    // L1's line (thesis T3) when the strong load reads it.
    let cta = strong_then_weak(Scope::Cta, true);
    assert!(!cta.contains(&STALE), "{cta:?}");
    assert!(cta.contains(&(1, 1)) && cta.contains(&(0, 0)));
}

/// A `.cta` fence still orders the accesses of its own thread: a stale line of the thread's
/// own store is never read after it (the store dropped it), and a `.cta` fence is no weaker
/// than no fence for another CTA either.
#[test]
fn a_cta_fence_keeps_the_threads_own_order() {
    let (dram, x) = dram_with(&[0; 64]);
    let a = who(0, 0);
    let b = who(1, 0);
    let threads = vec![
        Thread {
            who: a,
            instrs: vec![
                issue(ld(a, 0, G, x, None, MemOrder::Weak, 9)),
                Instr::WaitSelf,
                issue(st(a, 0, G, x, 1, MemOrder::Weak)),
                issue(fence_at(a, 0, Scope::Cta)),
                issue(ld(a, 0, G, x, None, MemOrder::Weak, 1)),
            ],
        },
        Thread {
            who: b,
            instrs: vec![issue(ld(b, 1, G, x, None, MemOrder::Weak, 1))],
        },
    ];
    let e = explore_both(SilentActions::None, dram, threads, |s| s.reg(a, 1));
    assert_eq!(e.outcomes, [1].into_iter().collect());
}

/// Store buffering with a fence between each thread's store and load, in one CTA (SM 0):
/// returns the (r1, r2) pairs.
fn sb(fence_order: MemOrder, scope: Scope) -> BTreeSet<(u64, u64)> {
    let (dram, x) = dram_with(&[0; 64]);
    let y = x + 64;
    let a = who(0, 0);
    let b = who(0, 1);
    let side = |w: Who, mine: u64, other: u64| {
        let mut f = fence_at(w, 0, scope);
        f.order = fence_order;
        vec![
            issue(scoped(st(w, 0, G, mine, 1, MemOrder::Release), scope)),
            issue(f),
            issue(scoped(
                ld(w, 0, G, other, None, MemOrder::Acquire, 1),
                scope,
            )),
        ]
    };
    let threads = vec![
        Thread {
            who: a,
            instrs: side(a, x, y),
        },
        Thread {
            who: b,
            instrs: side(b, y, x),
        },
    ];
    let e = explore_both(SilentActions::None, dram, threads, |s| {
        (s.reg(a, 1), s.reg(b, 1))
    });
    assert_eq!(e.deadlocks, 0);
    e.outcomes
}

/// `SB+acq_rel-cta`: an acq_rel fence does not order a write before a later read (PTX ISA 8:
/// only `fence.sc` does, axiom "FenceSC"), so both loads may miss both stores, at any scope;
/// with `fence.sc` they may not.
#[test]
fn an_acq_rel_fence_lets_a_later_load_pass_an_earlier_store() {
    for scope in [Scope::Cta, Scope::Gpu] {
        let acq_rel = sb(MemOrder::AcqRel, scope);
        assert!(acq_rel.contains(&(0, 0)), "{scope:?}: {acq_rel:?}");
        let sc = sb(MemOrder::Sc, scope);
        assert!(!sc.contains(&(0, 0)), "{scope:?}: {sc:?}");
        assert!(sc.contains(&(1, 1)) && sc.contains(&(0, 1)) && sc.contains(&(1, 0)));
    }
}

/// The release half of an acq_rel fence still orders every earlier access before later
/// writes: message passing through `st.weak; fence.acq_rel; st.relaxed` is never stale for
/// the acquiring reader (another CTA, `.gpu` scope on both sides).
#[test]
fn an_acq_rel_fence_still_orders_earlier_accesses_before_later_writes() {
    let gpu = mp(Acquire::Fence, Scope::Gpu, false);
    assert!(!gpu.contains(&STALE), "{gpu:?}");
    assert!(gpu.contains(&(1, 1)));
}

/// `.cluster` reaches the cached memory as the program wrote it (one vocabulary, no mapping on
/// the way) and acts as `.gpu` there: no cache is shared by a cluster and by nothing wider, so
/// message passing between two CTAs is never stale at `.cluster` scope, whichever way the
/// reader acquires, and every scenario has the outcomes it has at `.gpu` scope.
#[test]
fn cluster_scope_acts_as_gpu_scope() {
    for acquire in [Acquire::Load, Acquire::Atomic, Acquire::Fence] {
        for same_cta in [false, true] {
            let cluster = mp(acquire, Scope::Cluster, same_cta);
            assert!(!cluster.contains(&STALE), "{cluster:?}");
            assert_eq!(cluster, mp(acquire, Scope::Gpu, same_cta));
        }
    }
    assert_eq!(
        sb(MemOrder::AcqRel, Scope::Cluster),
        sb(MemOrder::AcqRel, Scope::Gpu)
    );
}
