//! The cached memory's per-SM store stage (deviation D31) as the machine uses it: it is on for
//! a program with a `.cta` release launched as several CTAs on several SMs, so `.cta` message
//! passing between two CTAs on two SMs
//! reaches the weak outcome the PTX model allows (`Manual/MP-cta`), and it does not reach it
//! within one CTA, at `.gpu` scope, or with the thesis's micro steps (which have no stage).

mod machine_common;

use machine_common::*;
use memory_model::cached::{CacheConfig, MicroSteps, SilentActions};
use semantics::machine::{ArgValue, Machine, MachineConfig, MemoryKind, Termination, WarpModel};
use std::collections::BTreeSet;

const HEAD: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// Message passing over `out` (24 words): the writer stores `x = out[8]` weakly and releases
/// `y = out[16]` with `st.release.<scope>`; the reader acquires `y` with `ld.acquire.<scope>`,
/// then reads `x` weakly, and writes both to `out[0]`, `out[1]`. The writer is the thread
/// whose `%ctaid.x + %tid.x` is 0 (block 0 thread 0), the reader the other one.
fn mp(scope: &str) -> String {
    format!(
        "{HEAD}.visible .entry k(.param .u64 out)\n{{\n    .reg .u32 %t, %c, %r<3>;\n    .reg .u64 %o;\n    .reg .pred %p;\n    ld.param.u64 %o, [out];\n    mov.u32 %t, %tid.x;\n    mov.u32 %c, %ctaid.x;\n    add.u32 %t, %t, %c;\n    setp.ne.u32 %p, %t, 0;\n    @%p bra READER;\n    st.global.u32 [%o+32], 1;\n    st.release.{scope}.global.u32 [%o+64], 1;\n    bra DONE;\nREADER:\n    ld.acquire.{scope}.global.u32 %r1, [%o+64];\n    ld.global.u32 %r2, [%o+32];\n    st.global.u32 [%o], %r1;\n    st.global.u32 [%o+4], %r2;\nDONE:\n    ret;\n}}\n"
    )
}

/// `grid` blocks of `block` threads, warps of one thread, two SMs of one block each.
fn machine(src: &str, (grid, block): (u32, u32), micro_steps: MicroSteps) -> Machine {
    let mut cfg = MachineConfig {
        memory: MemoryKind::Cached,
        cache: CacheConfig {
            micro_steps,
            silent: SilentActions::None,
            ..CacheConfig::default()
        },
        ..config(WarpModel::SimtStack, 1)
    };
    cfg.device.num_sms = 2;
    cfg.device.max_blocks_per_sm = 1;
    let l = launch(
        "k",
        grid,
        block,
        vec![zeros("out", 24)],
        vec![ArgValue::Buffer(0)],
    );
    Machine::new(load(src), &l, &cfg).expect("launch")
}

/// The (flag, data) pairs the reader wrote over every schedule.
fn outcomes(start: Machine) -> BTreeSet<(u32, u32)> {
    let mut out = BTreeSet::new();
    each_state(start, 400_000, |m| match m.termination() {
        Some(Termination::Completed) => {
            let w = words(&m.buffer(0));
            out.insert((w[0], w[1]));
        }
        Some(t) => panic!("{t:?}"),
        None => {}
    });
    out
}

const WEAK: (u32, u32) = (1, 0);

#[test]
fn cta_message_passing_between_ctas_reaches_the_weak_outcome() {
    let two_ctas = outcomes(machine(&mp("cta"), (2, 1), MicroSteps::Folded));
    assert!(two_ctas.contains(&WEAK), "{two_ctas:?}");
    assert!(two_ctas.contains(&(1, 1)), "{two_ctas:?}");
}

#[test]
fn cta_message_passing_within_a_cta_or_at_gpu_scope_stays_ordered() {
    let one_cta = outcomes(machine(&mp("cta"), (1, 2), MicroSteps::Folded));
    assert!(!one_cta.contains(&WEAK), "{one_cta:?}");
    assert!(one_cta.contains(&(1, 1)), "{one_cta:?}");
    let gpu = outcomes(machine(&mp("gpu"), (2, 1), MicroSteps::Folded));
    assert!(!gpu.contains(&WEAK), "{gpu:?}");
    // The thesis's micro steps keep Listing 4.1 as it is: no stage.
    let thesis = outcomes(machine(&mp("cta"), (2, 1), MicroSteps::Thesis));
    assert!(!thesis.contains(&WEAK), "{thesis:?}");
}
