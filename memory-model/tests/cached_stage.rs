//! The per-SM store stage (deviation D31, folded micro steps): a `.cta` release waits for its
//! thread's earlier stores to be *staged* on its SM (every load of the SM reads them) rather
//! than to have reached L2, so message passing at `.cta` scope between two CTAs on two SMs
//! reaches the weak outcome the PTX model allows (`Manual/MP-cta`), while everything the model
//! forbids stays unreachable: within one CTA, with `.gpu`/`.sys` scopes, coherence through a
//! staged value, cumulativity from a `.cta` synchronisation on to `.gpu`, IRIW with `.sc`
//! fences.
//!
//! Every scenario is an exhaustive exploration of the engine's choices with the folded micro
//! steps (the stage is not part of the thesis's micro steps).

mod common;

use common::*;
use memory_model::cached::{Cached, MemOrder, Request, Scope, SilentActions};
use memory_model::{Flat, MemSpace, Who};
use std::collections::BTreeSet;

const G: MemSpace = MemSpace::Global;

fn scoped(mut r: Request, scope: Scope) -> Request {
    r.scope = Some(scope);
    r
}

fn release_st(w: Who, sm: u32, addr: u64, value: u64, scope: Scope) -> Request {
    scoped(st(w, sm, G, addr, value, MemOrder::Release), scope)
}

fn acquire_ld(w: Who, sm: u32, addr: u64, reg: u32, scope: Scope) -> Request {
    scoped(ld(w, sm, G, addr, None, MemOrder::Acquire, reg), scope)
}

fn weak_ld(w: Who, sm: u32, addr: u64, reg: u32) -> Request {
    ld(w, sm, G, addr, None, MemOrder::Weak, reg)
}

fn weak_st(w: Who, sm: u32, addr: u64, value: u64) -> Request {
    st(w, sm, G, addr, value, MemOrder::Weak)
}

/// Explores `threads` over `dram` with the folded micro steps, the stage on or off, no silent
/// actions; asserts no deadlock.
fn explore_stage<O: Ord + std::fmt::Debug>(
    stage: bool,
    dram: Flat,
    threads: Vec<Thread>,
    observe: impl Fn(&Sys) -> O,
) -> BTreeSet<O> {
    let mut cached = Cached::new(config_folded(SilentActions::None));
    cached.set_sm_stage(stage);
    let e = explore(Sys::new(cached, dram, threads), observe);
    assert_eq!(e.deadlocks, 0);
    e.outcomes
}

/// How the writer releases the flag and the reader acquires it.
#[derive(Clone, Copy)]
enum Sync {
    /// `st.release.<scope> flag` / `ld.acquire.<scope> flag`.
    Accesses,
    /// `fence.acq_rel.<scope>; st.relaxed.<scope> flag` / `ld.relaxed.<scope> flag;
    /// fence.acq_rel.<scope>`.
    Fences,
}

/// `Manual/MP-cta`: the writer (block 0, SM 0) stores `x = 1` weakly and releases `y = 1`; the
/// reader acquires `y` (register 1) and reads `x` weakly (register 2). `same_cta`: the reader
/// is thread 1 of block 0 on SM 0; else block 1 on SM 1. `x` and `y` lie in different lines.
fn mp(sync: Sync, scope: Scope, same_cta: bool, stage: bool) -> BTreeSet<(u64, u64)> {
    let (dram, x) = dram_with(&[0; 64]);
    let y = x + 64;
    let a = who(0, 0);
    let (b, sm_b) = if same_cta {
        (who(0, 1), 0)
    } else {
        (who(1, 0), 1)
    };
    let mut wa = vec![issue(weak_st(a, 0, x, 1))];
    let mut rb = Vec::new();
    match sync {
        Sync::Accesses => {
            wa.push(issue(release_st(a, 0, y, 1, scope)));
            rb.push(issue(acquire_ld(b, sm_b, y, 1, scope)));
        }
        Sync::Fences => {
            wa.push(issue(scoped(fence(a, 0), scope)));
            wa.push(issue(scoped(st(a, 0, G, y, 1, MemOrder::Relaxed), scope)));
            rb.push(issue(scoped(
                ld(b, sm_b, G, y, None, MemOrder::Relaxed, 1),
                scope,
            )));
            rb.push(issue(scoped(fence(b, sm_b), scope)));
        }
    }
    rb.push(issue(weak_ld(b, sm_b, x, 2)));
    let threads = vec![Thread { who: a, instrs: wa }, Thread { who: b, instrs: rb }];
    explore_stage(stage, dram, threads, |s| (s.reg(b, 1), s.reg(b, 2)))
}

const WEAK: (u64, u64) = (1, 0);

/// The outcome `Manual/MP-cta` asks about is reached between two CTAs once the stage is on (it
/// was not without it: the release waited for `x` to reach L2), and only there.
#[test]
fn a_cta_release_lets_another_cta_see_the_flag_before_the_data() {
    for sync in [Sync::Accesses, Sync::Fences] {
        let diff = mp(sync, Scope::Cta, false, true);
        assert!(diff.contains(&WEAK), "{diff:?}");
        let without = mp(sync, Scope::Cta, false, false);
        assert!(!without.contains(&WEAK), "{without:?}");
        // One CTA: release and acquire synchronise; the reader's SM has `x` staged or in L2.
        let same = mp(sync, Scope::Cta, true, true);
        assert!(!same.contains(&WEAK), "{same:?}");
        assert!(same.contains(&(1, 1)), "{same:?}");
        // `.gpu` and `.sys` synchronise between CTAs: the release waits for L2 as before.
        for scope in [Scope::Gpu, Scope::Sys] {
            let wide = mp(sync, scope, false, true);
            assert!(!wide.contains(&WEAK), "{wide:?}");
            assert!(wide.contains(&(1, 1)), "{wide:?}");
        }
    }
}

/// CoRW through a staged value: thread 1 of the writer's CTA reads `x` (register 1) and then
/// stores `x = 2`; once it has read the staged 1, L2 never ends with 1 (the second store is
/// staged after the first left). CoWW seen by a third thread of the SM reading `x` twice
/// (registers 2 and 3): never the final value then an older one.
#[test]
fn coherence_through_a_staged_value_never_goes_back() {
    let (dram, x) = dram_with(&[0; 16]);
    let (a, b, c) = (who(0, 0), who(0, 1), who(0, 2));
    let threads = vec![
        Thread {
            who: a,
            instrs: vec![issue(weak_st(a, 0, x, 1))],
        },
        Thread {
            who: b,
            instrs: vec![
                issue(weak_ld(b, 0, x, 1)),
                Instr::WaitSelf,
                issue(weak_st(b, 0, x, 2)),
            ],
        },
        Thread {
            who: c,
            instrs: vec![
                issue(weak_ld(c, 0, x, 2)),
                Instr::WaitSelf,
                issue(weak_ld(c, 0, x, 3)),
            ],
        },
    ];
    let out = explore_stage(true, dram, threads, |s| {
        (s.reg(b, 1), s.reg(c, 2), s.reg(c, 3), s.global(x))
    });
    // The staged 1 is read before it reaches L2 (the stage is doing something).
    assert!(out.iter().any(|o| o.0 == 1), "{out:?}");
    for &(rb, c1, c2, last) in &out {
        assert!(
            !(rb == 1 && last == 1),
            "CoRW: read 1 then stored 2, L2 ends 1: {out:?}"
        );
        // Coherence order is the order the stores reach L2, ending with `last`: a read of
        // `last` is never followed by an older value.
        assert!(!(c1 == last && c2 != last), "CoRR/CoWW went back: {out:?}");
    }
}

/// Cumulativity: the writer stages `x = 1` and releases `y` at `.cta`; a thread of its CTA
/// acquires `y` at `.cta` and releases `z` at `.gpu`; a thread of another CTA on another SM
/// acquires `z` at `.gpu` and must then read `x = 1` (causality order: program order,
/// synchronizes-with twice). The `.gpu` release waits for its SM's stage to drain.
#[test]
fn a_gpu_release_after_a_cta_synchronisation_carries_the_staged_store() {
    let (dram, x) = dram_with(&[0; 64]);
    let (y, z) = (x + 32, x + 64);
    let (a, b, d) = (who(0, 0), who(0, 1), who(1, 0));
    let threads = vec![
        Thread {
            who: a,
            instrs: vec![
                issue(weak_st(a, 0, x, 1)),
                issue(release_st(a, 0, y, 1, Scope::Cta)),
            ],
        },
        Thread {
            who: b,
            instrs: vec![
                issue(acquire_ld(b, 0, y, 1, Scope::Cta)),
                issue(release_st(b, 0, z, 1, Scope::Gpu)),
            ],
        },
        Thread {
            who: d,
            instrs: vec![
                issue(acquire_ld(d, 1, z, 2, Scope::Gpu)),
                issue(weak_ld(d, 1, x, 3)),
            ],
        },
    ];
    let out = explore_stage(true, dram, threads, |s| {
        (s.reg(b, 1), s.reg(d, 2), s.reg(d, 3))
    });
    assert!(!out.contains(&(1, 1, 0)), "{out:?}");
    assert!(out.contains(&(1, 1, 1)), "{out:?}");
}

/// IRIW with `fence.sc.gpu` between the readers' loads: each writer shares its SM with one
/// reader (another CTA on the same SM), which can read the staged store early; the fence waits
/// for the SM's stage to drain, so the two readers never disagree on the order of the writes.
#[test]
fn iriw_with_gpu_fences_stays_forbidden() {
    let (dram, x) = dram_with(&[0; 64]);
    let y = x + 64;
    let (w1, r1, w2, r2) = (who(0, 0), who(1, 0), who(2, 0), who(3, 0));
    let sc_fence = |w: Who, sm: u32| {
        let mut f = scoped(fence(w, sm), Scope::Gpu);
        f.order = MemOrder::Sc;
        f
    };
    let threads = vec![
        Thread {
            who: w1,
            instrs: vec![issue(weak_st(w1, 0, x, 1))],
        },
        Thread {
            who: r1,
            instrs: vec![
                issue(scoped(
                    ld(r1, 0, G, x, None, MemOrder::Relaxed, 1),
                    Scope::Gpu,
                )),
                issue(sc_fence(r1, 0)),
                issue(scoped(
                    ld(r1, 0, G, y, None, MemOrder::Relaxed, 2),
                    Scope::Gpu,
                )),
            ],
        },
        Thread {
            who: w2,
            instrs: vec![issue(scoped(
                st(w2, 1, G, y, 1, MemOrder::Relaxed),
                Scope::Gpu,
            ))],
        },
        Thread {
            who: r2,
            instrs: vec![
                issue(scoped(
                    ld(r2, 1, G, y, None, MemOrder::Relaxed, 1),
                    Scope::Gpu,
                )),
                issue(sc_fence(r2, 1)),
                issue(scoped(
                    ld(r2, 1, G, x, None, MemOrder::Relaxed, 2),
                    Scope::Gpu,
                )),
            ],
        },
    ];
    let out = explore_stage(true, dram, threads, |s| {
        (s.reg(r1, 1), s.reg(r1, 2), s.reg(r2, 1), s.reg(r2, 2))
    });
    assert!(!out.contains(&(1, 0, 1, 0)), "{out:?}");
    // Each reader alone can see its SM's write first.
    assert!(out.contains(&(1, 0, 0, 0)), "{out:?}");
    assert!(out.contains(&(0, 0, 1, 0)), "{out:?}");
}

/// Without a `.cta` release nothing is staged differently: the stage on or off gives the same
/// outcomes of plain message passing between two CTAs (weak accesses), and of store buffering.
#[test]
fn the_stage_changes_no_outcome_of_weak_message_passing() {
    let run = |stage: bool| {
        let (dram, x) = dram_with(&[0; 64]);
        let y = x + 64;
        let (a, b) = (who(0, 0), who(0, 1));
        let threads = vec![
            Thread {
                who: a,
                instrs: vec![issue(weak_st(a, 0, x, 1)), issue(weak_st(a, 0, y, 1))],
            },
            Thread {
                who: b,
                instrs: vec![issue(weak_ld(b, 0, y, 1)), issue(weak_ld(b, 0, x, 2))],
            },
        ];
        explore_stage(stage, dram, threads, |s| (s.reg(b, 1), s.reg(b, 2)))
    };
    assert_eq!(run(true), run(false));
}
