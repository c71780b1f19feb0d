//! The scoreboard under cached memory (thesis 5.8.1, blocked registers): a warp whose next
//! instruction reads a register a load in flight will write, or drains its lanes' memory
//! operations, has no choices until the op ends, and gets them back (once) when it does. The
//! machine keeps this incrementally (issue 15: an ended op that unblocks its warp appends the
//! warp's choices without a pass over the enabled set); checked here against a recomputation
//! of the enabled set at every step, under round-robin and random schedules.

mod machine_common;

use machine_common::*;
use memory_model::cached::{CacheConfig, MicroSteps, SilentActions};
use semantics::machine::{ArgValue, Machine, MachineConfig, MemoryKind, Termination, WarpModel};
use traces::Choice;

const HEAD: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// `out[t] = in[t] + 1` for thread `t`, the add reading the loaded register at once (the
/// warp waits for the load), then a barrier (drains the thread's store) and a second
/// round: an atomic adds `in[t ^ 1]` to `out[t]` and its result (the old value) is read at once,
/// plus `in[t ^ 1]`, stored again: `out[t] = in[t] + 1 + in[t ^ 1]`.
fn kernel() -> String {
    format!(
        "{HEAD}.visible .entry k(.param .u64 in, .param .u64 out)\n{{\n    .reg .u32 %t, %r<4>;\n    .reg .u64 %i, %o, %d, %e;\n    ld.param.u64 %i, [in];\n    ld.param.u64 %o, [out];\n    mov.u32 %t, %tid.x;\n    mul.wide.u32 %d, %t, 4;\n    add.u64 %e, %i, %d;\n    add.u64 %d, %o, %d;\n    ld.global.u32 %r0, [%e];\n    add.u32 %r1, %r0, 1;\n    st.global.u32 [%d], %r1;\n    bar.sync 0;\n    xor.b32 %r2, %t, 1;\n    mul.wide.u32 %e, %r2, 4;\n    add.u64 %e, %i, %e;\n    ld.global.u32 %r2, [%e];\n    atom.global.add.u32 %r3, [%d], %r2;\n    add.u32 %r3, %r3, %r2;\n    st.global.u32 [%d], %r3;\n    ret;\n}}\n"
    )
}

const THREADS: u32 = 8;

fn machine(micro_steps: MicroSteps) -> Machine {
    let cfg = MachineConfig {
        memory: MemoryKind::Cached,
        cache: CacheConfig {
            micro_steps,
            silent: SilentActions::None,
            ..CacheConfig::default()
        },
        ..config(WarpModel::SimtStack, 4)
    };
    let input: Vec<u32> = (0..THREADS).map(|t| 10 * t + 3).collect();
    let l = launch(
        "k",
        1,
        THREADS,
        vec![u32_buffer("in", &input), zeros("out", THREADS as usize)],
        vec![ArgValue::Buffer(0), ArgValue::Buffer(1)],
    );
    Machine::new(load(&kernel()), &l, &cfg).expect("launch")
}

fn expected() -> Vec<u32> {
    let input: Vec<u32> = (0..THREADS).map(|t| 10 * t + 3).collect();
    (0..THREADS as usize)
        .map(|t| input[t] + 1 + input[t ^ 1])
        .collect()
}

/// Whether some resident warp had no choice while it had not completed (it waited for memory
/// or at the barrier), seen along a round-robin run.
fn some_warp_waited(mut m: Machine) -> bool {
    let mut rr = scheduler::RoundRobin::new();
    let mut waited = false;
    while m.termination().is_none() {
        let en = m.enabled();
        let warps: Vec<u32> = en
            .iter()
            .filter_map(|c| match c {
                Choice::Warp { warp, .. } => Some(*warp),
                _ => None,
            })
            .collect();
        let in_flight = m.cache().is_some_and(|c| !c.ops().is_empty());
        waited |= in_flight && warps.len() < 2 && !warps.is_empty();
        let c = en[scheduler::Scheduler::pick(&mut rr, &m, en).expect("round robin chooses")];
        m.step(&c).expect("enabled choice refused");
    }
    waited
}

#[test]
fn a_warp_waiting_for_its_load_gets_its_choice_back_once_round_robin() {
    for micro in [MicroSteps::Thesis, MicroSteps::Folded] {
        let mut m = machine(micro);
        let t = run(&mut m, &mut scheduler::RoundRobin::new(), 100_000);
        assert_eq!(t, Termination::Completed, "{micro:?}");
        assert_eq!(words(&m.buffer(1)), expected(), "{micro:?}");
        assert!(
            some_warp_waited(machine(micro)),
            "{micro:?}: no warp waited"
        );
    }
}

#[test]
fn a_warp_waiting_for_its_load_gets_its_choice_back_once_random() {
    for micro in [MicroSteps::Thesis, MicroSteps::Folded] {
        for seed in 0..40 {
            let mut m = machine(micro);
            let t = run(&mut m, &mut scheduler::Random::new(seed), 100_000);
            assert_eq!(t, Termination::Completed, "{micro:?} seed {seed}");
            assert_eq!(words(&m.buffer(1)), expected(), "{micro:?} seed {seed}");
        }
    }
}

/// One thread per warp (warp size 1) stores, then arrives at `bar.sync 0, COUNT`
/// (deviation D24: a barrier orders memory among its participants, PTX ISA 9.7.13.1).
fn barrier_machine(threads: u32, count: u32) -> Machine {
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 out)\n{{\n    .reg .u32 %t;\n    .reg .u64 %o, %d;\n    ld.param.u64 %o, [out];\n    mov.u32 %t, %tid.x;\n    mul.wide.u32 %d, %t, 4;\n    add.u64 %d, %o, %d;\n    st.global.u32 [%d], 1;\n    bar.sync 0, {count};\n    ret;\n}}\n"
    );
    let cfg = MachineConfig {
        memory: MemoryKind::Cached,
        cache: CacheConfig {
            silent: SilentActions::None,
            ..CacheConfig::default()
        },
        ..config(WarpModel::SimtStack, 1)
    };
    let l = launch(
        "k",
        1,
        threads,
        vec![zeros("out", threads as usize)],
        vec![ArgValue::Buffer(0)],
    );
    Machine::new(load(&src), &l, &cfg).expect("launch")
}

/// Steps warp 0 until its store is in flight and it stands at the barrier; then whether its
/// warp step (the arrival) is enabled.
fn arrives_with_its_store_in_flight(mut m: Machine) -> bool {
    loop {
        let en = m.enabled().to_vec();
        let in_flight = m.cache().is_some_and(|c| !c.ops().is_empty());
        if in_flight {
            return en.contains(&Choice::Warp { block: 0, warp: 0 });
        }
        let c = en
            .iter()
            .find(|c| matches!(c, Choice::Warp { warp: 0, .. } | Choice::Issue { .. }))
            .copied()
            .expect("warp 0 steps to its store");
        m.step(&c).expect("enabled choice refused");
    }
}

#[test]
fn a_barrier_of_one_thread_does_not_wait_for_the_threads_store() {
    // Count 1: the arriving thread is the instance's only participant; nothing to order.
    assert!(arrives_with_its_store_in_flight(barrier_machine(1, 1)));
    assert!(arrives_with_its_store_in_flight(barrier_machine(2, 1)));
    // Count 2: the other thread participates and must see the store after the barrier.
    assert!(!arrives_with_its_store_in_flight(barrier_machine(2, 2)));
    // Both complete, the store performed.
    for (threads, count) in [(1, 1), (2, 1), (2, 2)] {
        let mut m = barrier_machine(threads, count);
        let t = run(&mut m, &mut scheduler::RoundRobin::new(), 10_000);
        assert_eq!(
            t,
            Termination::Completed,
            "{threads} threads, count {count}"
        );
        assert_eq!(words(&m.buffer(0)), vec![1; threads as usize]);
    }
}
