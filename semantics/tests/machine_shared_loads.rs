//! Weak shared loads performed at issue under cached memory (deviation D30; issue 15, the tiled
//! matmul): with folded micro steps, a weak `ld.shared` is read in its warp step, as under flat
//! memory, when no shared write of the block is in flight and no thread of the block can
//! write shared memory before the loading threads next arrive at a full-block barrier. Checked
//! here: that it happens where the condition holds and not where it fails, and that on small
//! kernels explored exhaustively the outcomes equal those of the thesis's micro steps.

mod machine_common;

use machine_common::*;
use memory_model::MemSpace;
use memory_model::cached::{CacheConfig, MicroSteps, RequestKind, SilentActions};
use semantics::machine::{ArgValue, Machine, MachineConfig, MemoryKind, Termination, WarpModel};
use semantics::program::{Op, Space};
use std::collections::BTreeSet;

const HEAD: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// A kernel of `k(.param .u64 out)` with four shared words `sh`, `%t` = `%tid.x` and `%o` =
/// the output buffer, running `body`.
fn kernel(body: &str) -> String {
    format!(
        "{HEAD}.visible .entry k(.param .u64 out)\n{{\n    .shared .align 4 .b32 sh[4];\n    .reg .u32 %t, %r<4>, %a<4>;\n    .reg .u64 %o, %d;\n    .reg .pred %p<3>;\n    ld.param.u64 %o, [out];\n    mov.u32 %t, %tid.x;\n{body}\n    ret;\n}}\n"
    )
}

/// Each of `n` threads (a power of two, at most 4) stores `t + 1` into word `t`, `barrier`,
/// then loads word `t + 1 mod n` and writes it out.
fn rotate(barrier: &str, n: u32) -> String {
    kernel(&format!(
        "    shl.b32 %a1, %t, 2;\n    mov.u32 %a0, sh;\n    add.u32 %a1, %a0, %a1;\n    add.u32 %r1, %t, 1;\n    st.shared.u32 [%a1], %r1;\n    {barrier}\n    and.b32 %r2, %r1, {};\n    shl.b32 %r2, %r2, 2;\n    add.u32 %a2, %a0, %r2;\n    ld.shared.u32 %r3, [%a2];\n    mul.wide.u32 %d, %t, 4;\n    add.u64 %d, %o, %d;\n    st.global.u32 [%d], %r3;",
        n - 1
    ))
}

/// A launch of one block of `threads` threads in warps of `ws` under cached memory.
fn machine(
    src: &str,
    (threads, ws): (u32, u32),
    model: WarpModel,
    micro_steps: MicroSteps,
) -> Machine {
    let cfg = MachineConfig {
        memory: MemoryKind::Cached,
        cache: CacheConfig {
            micro_steps,
            silent: SilentActions::None,
            ..CacheConfig::default()
        },
        ..config(model, ws)
    };
    let l = launch(
        "k",
        1,
        threads,
        vec![zeros("out", threads as usize)],
        vec![ArgValue::Buffer(0)],
    );
    Machine::new(load(src), &l, &cfg).expect("launch")
}

/// Whether a shared load is in flight.
fn shared_load_in_flight(m: &Machine) -> bool {
    m.cache().is_some_and(|c| {
        c.ops().iter().any(|o| {
            o.request.space == MemSpace::Shared
                && matches!(o.request.kind, RequestKind::Load { .. })
        })
    })
}

/// Runs round-robin to the end; whether a shared load was ever in flight, and the output.
fn run_watching(mut m: Machine) -> (bool, Vec<u32>) {
    let mut rr = scheduler::RoundRobin::new();
    let mut seen = false;
    for _ in 0..100_000 {
        if let Some(t) = m.termination() {
            assert_eq!(*t, Termination::Completed);
            return (seen, words(&m.buffer(0)));
        }
        let en = m.enabled();
        let c =
            en[scheduler::Scheduler::pick(&mut rr, &m, en).expect("round robin always chooses")];
        m.step(&c).expect("enabled choice refused");
        seen |= shared_load_in_flight(&m);
    }
    panic!("no end")
}

/// What an exhaustive exploration found: the outputs of completed runs, whether some run
/// deadlocked, whether some state had a shared load in flight, and the states.
#[derive(Debug)]
struct Explored {
    outcomes: BTreeSet<Vec<u32>>,
    deadlock: bool,
    loads_in_flight: bool,
    states: usize,
}

fn explore(start: Machine) -> Explored {
    let mut out = Explored {
        outcomes: BTreeSet::new(),
        deadlock: false,
        loads_in_flight: false,
        states: 0,
    };
    out.states = each_state(start, 400_000, |m| {
        out.loads_in_flight |= shared_load_in_flight(m);
        match m.termination() {
            Some(Termination::Completed) => {
                out.outcomes.insert(words(&m.buffer(0)));
            }
            Some(_) => out.deadlock = true,
            None => {}
        }
    });
    out
}

/// Explores `src` with the thesis's and the folded micro steps: the same outcomes and
/// deadlocks, fewer states folded. Returns the folded exploration.
fn explore_both(src: &str, shape: (u32, u32), model: WarpModel) -> Explored {
    let thesis = explore(machine(src, shape, model, MicroSteps::Thesis));
    let folded = explore(machine(src, shape, model, MicroSteps::Folded));
    assert_eq!(thesis.outcomes, folded.outcomes, "{model:?}");
    assert_eq!(thesis.deadlock, folded.deadlock, "{model:?}");
    assert!(
        folded.states < thesis.states,
        "{model:?}: {} vs {}",
        folded.states,
        thesis.states
    );
    folded
}

const MODELS: [WarpModel; 2] = [WarpModel::SimtStack, WarpModel::Its];

/// After a full-block barrier nothing can write the words: the loads are read in their warp
/// step (no shared load is ever in flight), and the result is the flat one. The thesis's micro
/// steps keep every load in flight.
#[test]
fn loads_after_a_full_barrier_are_performed_at_issue() {
    let src = rotate("bar.sync 0;", 4);
    for model in MODELS {
        let (in_flight, out) = run_watching(machine(&src, (4, 2), model, MicroSteps::Folded));
        assert!(!in_flight, "{model:?}");
        assert_eq!(out, [2, 3, 4, 1]);
        let (in_flight, out) = run_watching(machine(&src, (4, 2), model, MicroSteps::Thesis));
        assert!(in_flight, "{model:?}");
        assert_eq!(out, [2, 3, 4, 1]);
        let explored = explore_both(&src, (4, 2), model);
        let one: BTreeSet<Vec<u32>> = [vec![2, 3, 4, 1]].into();
        assert_eq!(explored.outcomes, one);
        assert!(!explored.loads_in_flight, "{model:?}");
    }
}

/// Without a barrier, or with one that counts fewer threads than the block (it can complete
/// without the loading thread), another warp may still store: the loads stay in flight, and
/// every outcome of the thesis's steps (a load seeing the store or not) stays reachable.
#[test]
fn loads_that_a_store_may_follow_stay_in_flight() {
    for barrier in ["", "bar.sync 1, 1;"] {
        let src = rotate(barrier, 2);
        for model in MODELS {
            let explored = explore_both(&src, (2, 1), model);
            assert!(explored.loads_in_flight, "{barrier} {model:?}");
            assert!(explored.outcomes.len() > 1, "{barrier} {model:?}");
        }
    }
}

/// Thread 0 loads word 0 and then raises a flag in global memory; thread 1 waits for the flag,
/// passes a barrier that counts only itself, and stores 7 into word 0. Under the thesis's
/// steps thread 0's load may still be in flight when the store lands, so it may read 7: the
/// load must not be performed at issue, although thread 1 crosses a barrier first.
#[test]
fn a_partial_barrier_does_not_order_a_later_store() {
    let src = kernel(
        "    mov.u32 %a0, sh;\n    add.u64 %d, %o, 4;\n    setp.ne.u32 %p1, %t, 0;\n    @%p1 bra WRITER;\n    ld.shared.u32 %r1, [%a0];\n    st.global.u32 [%d], 1;\n    st.global.u32 [%o], %r1;\n    bra DONE;\nWRITER:\n    ld.volatile.global.u32 %r2, [%d];\n    setp.eq.u32 %p2, %r2, 0;\n    @%p2 bra WRITER;\n    bar.sync 1, 1;\n    st.shared.u32 [%a0], 7;\nDONE:",
    );
    for model in MODELS {
        let explored = explore_both(&src, (2, 1), model);
        assert!(explored.loads_in_flight, "{model:?}");
        let firsts: BTreeSet<u32> = explored.outcomes.iter().map(|o| o[0]).collect();
        assert_eq!(firsts, [0, 7].into(), "{model:?}");
    }
}

/// The load-time summary (`Program::shared_writes`): where a thread may write shared memory
/// before it waits at a full barrier. `extra` is added to the kernel's end (after its `ret`).
fn may_write_at_loads(extra: &str) -> Vec<bool> {
    let src = kernel(&format!(
        "    mov.u32 %a0, sh;\n    st.shared.u32 [%a0], 1;\n    bar.sync 0;\nLOOP:\n    ld.shared.u32 %r1, [%a0];\n    add.u32 %r2, %r2, 1;\n    setp.lt.u32 %p1, %r2, 4;\n    @%p1 bra LOOP;\n    bar.sync 0;\n    ld.shared.u32 %r3, [%a0];\n    @%p1 bar.sync 0;\n    st.shared.u32 [%a0], %r3;\n    ret;\n{extra}"
    ));
    let p = load(&src);
    p.instructions
        .iter()
        .enumerate()
        .filter(|(_, i)| {
            matches!(
                i.op,
                Op::Ld {
                    space: Space::Shared,
                    ..
                }
            )
        })
        .map(|(pc, _)| p.shared_writes.may_write(pc as u32))
        .collect()
}

/// A load in a loop closed by a full barrier is quiet; one followed by a guarded barrier (which
/// a thread may skip) and a store is not; a barrier number some instruction uses with a thread
/// count is no full barrier.
#[test]
fn the_summary_follows_paths_to_full_barriers() {
    assert_eq!(may_write_at_loads(""), [false, true]);
    assert_eq!(may_write_at_loads("    bar.arrive 0, 64;\n"), [true, true]);
}
