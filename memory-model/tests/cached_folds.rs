//! Folded micro steps (issue 15: fewer micro steps per access, the same behaviours). Under
//! `MicroSteps::Folded` the yields of the listings that only separate a left mover from the
//! step before it, or a right mover from the step after it, do not end a micro step
//! (`memory-model/src/cached/program.rs`, `Fold`). Checked here: the step structure of every
//! path (how many steps, which operations each runs), that the thesis's structure is still
//! there under `MicroSteps::Thesis`, and, on small concurrent programs explored exhaustively,
//! that both give the same outcomes and deadlocks while folding removes states.
//! `cached_props.rs` compares the two on random programs.

mod common;

use common::*;
use memory_model::cached::{
    CacheConfig, Cached, MemChoice, MemOrder, MicroSteps, Request, Scope, SilentActions,
};
use memory_model::{Flat, MemSpace, Who};

const G: MemSpace = MemSpace::Global;
const S: MemSpace = MemSpace::Shared;
const L: MemSpace = MemSpace::Local;

const A: Who = Who {
    block: 0,
    thread: 0,
};

/// Issues `r` alone and steps it to its end; the operations of each micro step.
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
    assert!(c.idle());
    steps
}

fn setup(micro_steps: MicroSteps) -> (Cached, Flat, u64) {
    let (mut dram, x) = dram_with(&[0; 64]);
    dram.create_block(0, 64, 2);
    let cfg = CacheConfig {
        micro_steps,
        ..config(SilentActions::All)
    };
    (Cached::new(cfg), dram, x)
}

fn acquire(mut r: Request, scope: Scope) -> Request {
    r.order = MemOrder::Acquire;
    r.scope = Some(scope);
    r
}

#[test]
fn folded_load_paths() {
    let (mut c, mut d, x) = setup(MicroSteps::Folded);
    let weak = |sm, addr| ld(A, sm, G, addr, None, MemOrder::Weak, 1);
    // Listing 4.2, both caches miss: 4 steps instead of 6 (readMem joins the L2 fill, the
    // delivery joins the L1 read).
    assert_eq!(
        run(&mut c, &mut d, weak(0, x)),
        vec![
            vec!["reserveL1"],
            vec!["reserveL2"],
            vec!["readMem", "updateL2", "readL2"],
            vec!["updateL1", "readL1", "writeToRegs", "releaseRegs"],
        ]
    );
    // L2 hit (another SM's L1 is empty): 3 instead of 4; L1 hit: 1 instead of 2.
    assert_eq!(run(&mut c, &mut d, weak(1, x)).len(), 3);
    assert_eq!(
        run(&mut c, &mut d, weak(0, x)),
        vec![vec!["readL1", "writeToRegs", "releaseRegs"]]
    );
    // A strong load: miss 2 instead of 4, hit 1 instead of 2.
    let relaxed = ld(A, 0, G, x + 128, None, MemOrder::Relaxed, 1);
    assert_eq!(
        run(&mut c, &mut d, relaxed),
        vec![
            vec!["reserveL2"],
            vec![
                "readMem",
                "updateL2",
                "readL2",
                "invalidateL1",
                "writeToRegs",
                "releaseRegs"
            ],
        ]
    );
    assert_eq!(run(&mut c, &mut d, relaxed).len(), 1);
    // An acquire above `.cta` flushes the SM's L1 when it ends: that end keeps its own step
    // (other ops of the SM can observe a flush); at `.cta` there is no flush and it folds.
    let gpu = acquire(ld(A, 0, G, x + 192, None, MemOrder::Weak, 1), Scope::Gpu);
    assert_eq!(
        run(&mut c, &mut d, gpu),
        vec![
            vec!["reserveL2"],
            vec!["readMem", "updateL2", "readL2", "invalidateL1"],
            vec!["writeToRegs", "releaseRegs", "flushL1"],
        ]
    );
    let cta = acquire(ld(A, 0, G, x + 192, None, MemOrder::Weak, 1), Scope::Cta);
    assert_eq!(run(&mut c, &mut d, cta).len(), 1);
}

#[test]
fn folded_store_atomic_shared_local_paths() {
    let (mut c, mut d, x) = setup(MicroSteps::Folded);
    // Listing 4.1: every step is visible (L1 line, L2 line, L1 line): unchanged.
    assert_eq!(
        run(&mut c, &mut d, st(A, 0, G, x, 7, MemOrder::Weak)).len(),
        3
    );
    // Listing 4.4: a miss takes 5 instead of 6 (readMem joins updateL2).
    let steps = run(&mut c, &mut d, atom(A, 0, G, x + 128, 1, 1));
    assert_eq!(steps.len(), 5);
    assert_eq!(steps[2], ["readMem", "updateL2"]);
    // Shared memory: a load is one step, a store one, an atomic two (lock and read, then write
    // and unlock; instead of 2, 1 and 5).
    assert_eq!(
        run(&mut c, &mut d, ld(A, 0, S, 0, None, MemOrder::Weak, 1)),
        vec![vec!["readMem", "writeToRegs", "releaseRegs"]]
    );
    assert_eq!(
        run(&mut c, &mut d, st(A, 0, S, 0, 3, MemOrder::Weak)).len(),
        1
    );
    assert_eq!(
        run(&mut c, &mut d, atom(A, 0, S, 0, 1, 1)),
        vec![
            vec!["lock", "readMem", "atomOp"],
            vec!["writeMem", "unlock", "writeToRegs", "releaseRegs"],
        ]
    );
    // A local store (Listing 4.3 without `.cs`): one step instead of 2.
    assert_eq!(
        run(&mut c, &mut d, st(A, 0, L, 16, 3, MemOrder::Weak)),
        vec![vec!["writeL1", "classifyNormalL1", "releaseRegs"]]
    );
}

/// The thesis's structure is kept under `MicroSteps::Thesis` (what the scenarios T2-T14 use).
#[test]
fn thesis_micro_steps_are_unchanged() {
    let (mut c, mut d, x) = setup(MicroSteps::Thesis);
    assert_eq!(
        run(&mut c, &mut d, ld(A, 0, G, x, None, MemOrder::Weak, 1)).len(),
        6
    );
    assert_eq!(
        run(&mut c, &mut d, ld(A, 0, S, 0, None, MemOrder::Weak, 1)).len(),
        2
    );
    assert_eq!(run(&mut c, &mut d, atom(A, 0, S, 0, 1, 1)).len(), 5);
    assert_eq!(
        run(&mut c, &mut d, st(A, 0, L, 16, 3, MemOrder::Weak)).len(),
        2
    );
}

/// Both structures explored on the same program; the outcomes and deadlocks agree
/// (`explore_both` asserts it) and folding removes states. Returns the (thesis, folded)
/// state counts.
fn compare<O: Ord + std::fmt::Debug>(
    silent: SilentActions,
    dram: Flat,
    threads: Vec<Thread>,
    observe: impl Fn(&Sys) -> O + Copy,
) -> (usize, usize, Explored<O>) {
    let thesis = explore(
        Sys::new(Cached::new(config(silent)), dram.clone(), threads.clone()),
        observe,
    );
    let folded = explore_both(silent, dram, threads, observe);
    assert!(
        folded.states < thesis.states,
        "no state removed: {} vs {}",
        folded.states,
        thesis.states
    );
    (thesis.states, folded.states, folded)
}

/// Message passing through shared memory with `.cta` fences, and load buffering: the weak
/// outcomes the engine allows stay reachable, the forbidden ones stay unreachable.
#[test]
fn shared_memory_litmus_shapes_keep_their_outcomes() {
    let (mut dram, _) = dram_with(&[0; 16]);
    dram.create_block(0, 64, 2);
    let (a, b) = (who(0, 0), who(0, 1));
    let cta_fence = |w| {
        let mut f = fence(w, 0);
        f.order = MemOrder::Sc;
        f.scope = Some(Scope::Cta);
        f
    };
    // MP: a writes data (0) then flag (4) with a fence between; b reads flag then data.
    let threads = vec![
        Thread {
            who: a,
            instrs: vec![
                issue(st(a, 0, S, 0, 1, MemOrder::Weak)),
                issue(cta_fence(a)),
                issue(st(a, 0, S, 4, 1, MemOrder::Weak)),
            ],
        },
        Thread {
            who: b,
            instrs: vec![
                issue(ld(b, 0, S, 4, None, MemOrder::Weak, 1)),
                issue(cta_fence(b)),
                issue(ld(b, 0, S, 0, None, MemOrder::Weak, 2)),
            ],
        },
    ];
    let (_, _, e) = compare(SilentActions::None, dram.clone(), threads, |s| {
        (s.reg(b, 1), s.reg(b, 2))
    });
    assert!(!e.outcomes.contains(&(1, 0)), "{:?}", e.outcomes);
    assert!(e.outcomes.contains(&(1, 1)) && e.outcomes.contains(&(0, 0)));
    // LB without fences: each thread loads one word and stores the other; the loads may
    // both see the other thread's store (no order between different addresses).
    let lb = |w: Who, load: u64, store: u64| Thread {
        who: w,
        instrs: vec![
            issue(ld(w, 0, S, load, None, MemOrder::Weak, 1)),
            issue(st(w, 0, S, store, 1, MemOrder::Weak)),
        ],
    };
    let threads = vec![lb(a, 0, 4), lb(b, 4, 0)];
    let (_, _, e) = compare(SilentActions::None, dram, threads, |s| {
        (s.reg(a, 1), s.reg(b, 1))
    });
    assert!(e.outcomes.contains(&(1, 1)), "{:?}", e.outcomes);
}

/// Three threads incrementing one shared word with atomics while a fourth reads it: the bank
/// lock keeps every increment, and every intermediate value is readable.
#[test]
fn shared_atomics_keep_their_outcomes() {
    let (mut dram, _) = dram_with(&[0; 16]);
    dram.create_block(0, 64, 4);
    let threads: Vec<Thread> = (0..3)
        .map(|t| {
            let w = who(0, t);
            Thread {
                who: w,
                instrs: vec![issue(atom(w, 0, S, 8, 1, 1))],
            }
        })
        .chain([Thread {
            who: who(0, 3),
            instrs: vec![issue(ld(who(0, 3), 0, S, 8, None, MemOrder::Weak, 1))],
        }])
        .collect();
    let (thesis, folded, e) = compare(SilentActions::None, dram, threads, |s| {
        let mut olds = [
            s.reg(who(0, 0), 1),
            s.reg(who(0, 1), 1),
            s.reg(who(0, 2), 1),
        ];
        olds.sort();
        (olds, s.reg(who(0, 3), 1))
    });
    let reads: Vec<u64> = e.outcomes.iter().map(|(_, r)| *r).collect();
    assert!(e.outcomes.iter().all(|(olds, _)| *olds == [0, 1, 2]));
    for v in 0..=3 {
        assert!(reads.contains(&v), "{v} not read: {reads:?}");
    }
    assert!(folded * 2 < thesis, "{folded} vs {thesis}");
}

/// Global message passing between two SMs with a release store and an acquire load (`.gpu`),
/// every silent rule offered: the stale outcome stays unreachable, and the weak loads' folds
/// (delivery with the L1 read, readMem with the L2 fill) remove states.
#[test]
fn global_message_passing_keeps_its_outcomes() {
    let (dram, x) = dram_with(&[0; 64]);
    let flag = x + 64;
    let (a, b) = (who(0, 0), who(1, 0));
    let mut release = st(a, 0, G, flag, 1, MemOrder::Release);
    release.scope = Some(Scope::Gpu);
    let threads = vec![
        Thread {
            who: a,
            instrs: vec![issue(st(a, 0, G, x, 1, MemOrder::Weak)), issue(release)],
        },
        Thread {
            who: b,
            instrs: vec![
                issue(ld(b, 1, G, x, None, MemOrder::Weak, 3)),
                issue(acquire(
                    ld(b, 1, G, flag, None, MemOrder::Weak, 1),
                    Scope::Gpu,
                )),
                issue(ld(b, 1, G, x, None, MemOrder::Weak, 2)),
            ],
        },
    ];
    let (_, _, e) = compare(SilentActions::Observable, dram, threads, |s| {
        (s.reg(b, 1), s.reg(b, 2))
    });
    assert!(!e.outcomes.contains(&(1, 0)), "{:?}", e.outcomes);
    assert!(e.outcomes.contains(&(1, 1)) && e.outcomes.contains(&(0, 0)));
}

/// `Cached::load_at_issue` (deviation D30): a weak shared load may be performed at issue only
/// under folded micro steps, while no op writing its block's shared memory is in flight, when
/// it would wait for none of its thread's ops; never a strong or a global load.
#[test]
fn shared_loads_at_issue() {
    let b = who(0, 1);
    let other_block = who(1, 0);
    let load = |w| ld(w, 0, S, 4, None, MemOrder::Weak, 1);
    let (mut c, mut d, x) = setup(MicroSteps::Folded);
    d.create_block(1, 64, 1);
    assert!(c.load_at_issue(&load(A)));
    assert!(!c.load_at_issue(&ld(A, 0, S, 4, None, MemOrder::Relaxed, 1)));
    assert!(!c.load_at_issue(&ld(A, 0, G, x, None, MemOrder::Weak, 1)));
    // A shared store of another thread of the block in flight: no load of the block.
    let store = c.issue(st(b, 0, S, 8, 7, MemOrder::Weak));
    assert!(!c.load_at_issue(&load(A)));
    assert!(c.load_at_issue(&load(other_block)));
    while c.op_who(store).is_some() {
        c.step(MemChoice::Step { op: store }, &mut d)
            .unwrap_or_else(|e| panic!("{e:?}"));
    }
    assert!(c.load_at_issue(&load(A)));
    // A shared atomic in flight likewise.
    c.issue(atom(b, 0, S, 0, 1, 2));
    assert!(!c.load_at_issue(&load(A)));
    // The thread's own acquire in flight: the load would wait for it.
    let (mut c, _, x) = setup(MicroSteps::Folded);
    c.issue(acquire(ld(A, 0, G, x, None, MemOrder::Weak, 2), Scope::Gpu));
    assert!(!c.load_at_issue(&load(A)));
    assert!(c.load_at_issue(&load(b)));
    // The thesis's steps keep every load in flight.
    let (c, _, _) = setup(MicroSteps::Thesis);
    assert!(!c.load_at_issue(&load(A)));
}

/// Thread `a` stores a word, waits for its store (`WaitSelf` stands for the machine's
/// barrier) and loads it; thread `b` joins `a` and loads it twice. With no store left to
/// issue, every load is performed at issue: the outcome of the thesis's steps, fewer states.
#[test]
fn shared_loads_at_issue_keep_the_outcomes() {
    let (mut dram, _) = dram_with(&[0; 16]);
    dram.create_block(0, 64, 2);
    let (a, b) = (who(0, 0), who(0, 1));
    let observe = |s: &Sys| (s.reg(a, 1), s.reg(b, 1), s.reg(b, 2));
    let threads = vec![
        Thread {
            who: a,
            instrs: vec![
                Instr::Issue(st(a, 0, S, 0, 5, MemOrder::Weak)),
                Instr::WaitSelf,
                Instr::Issue(ld(a, 0, S, 0, None, MemOrder::Weak, 1)),
            ],
        },
        Thread {
            who: b,
            instrs: vec![
                Instr::Join(0),
                Instr::Issue(ld(b, 0, S, 0, None, MemOrder::Weak, 1)),
                Instr::Issue(ld(b, 0, S, 0, None, MemOrder::Weak, 2)),
            ],
        },
    ];
    let folded = explore_both(SilentActions::None, dram.clone(), threads.clone(), observe);
    let at_issue = explore(
        Sys::with_loads_at_issue(
            Cached::new(config_folded(SilentActions::None)),
            dram,
            threads,
        ),
        observe,
    );
    assert_eq!(folded.outcomes, at_issue.outcomes);
    assert_eq!(
        at_issue.outcomes.into_iter().collect::<Vec<_>>(),
        vec![(5, 5, 5)]
    );
    assert!(
        at_issue.states < folded.states,
        "{} vs {}",
        at_issue.states,
        folded.states
    );
}
