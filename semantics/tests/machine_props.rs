//! Property tests: random schedules never violate the safety invariants (checked inside the
//! machine at every SIMT step: `check_invariants`) and give the same final memory as
//! round-robin for race-free kernels; the SIMT stack, ITS and threads models give the same final
//! memory on terminating race-free kernels (seed 001's theorem).
mod machine_common;
use machine_common::*;
use proptest::prelude::*;
use semantics::machine::{ArgValue, Machine, Termination, WarpModel};

const HEAD: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// A shared-memory tree reduction (barriers in a loop) followed by divergent nested loops and a
/// device-function call: out[tid] = f(tid) + block sum.
const KERNEL: &str = r#"
.func (.param .b32 r) tri(.param .b32 n)
{
    .reg .u32 %n;
    .reg .u32 %s;
    .reg .pred %p;
    ld.param.u32 %n, [n];
    mov.u32 %s, 0;
L:
    setp.eq.u32 %p, %n, 0;
    @%p bra D;
    add.u32 %s, %s, %n;
    sub.u32 %n, %n, 1;
    bra.uni L;
D:
    st.param.b32 [r], %s;
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u64 %sa;
    .reg .u64 %sb;
    .reg .u32 %t;
    .reg .u32 %v<4>;
    .reg .u32 %stride;
    .reg .u32 %m;
    .reg .pred %p<4>;
    .shared .align 4 .u32 buf[64];
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    mov.u64 %sa, buf;
    add.u64 %sa, %sa, %off;
    st.shared.u32 [%sa], %t;
    bar.sync 0;
    mov.u32 %stride, 32;
RED:
    setp.ge.u32 %p1, %t, %stride;
    @%p1 bra SKIP;
    mul.wide.u32 %sb, %stride, 4;
    add.u64 %sb, %sa, %sb;
    ld.shared.u32 %v1, [%sb];
    ld.shared.u32 %v2, [%sa];
    add.u32 %v2, %v2, %v1;
    st.shared.u32 [%sa], %v2;
SKIP:
    bar.sync 0;
    shr.u32 %stride, %stride, 1;
    setp.ne.u32 %p2, %stride, 0;
    @%p2 bra RED;
    and.b32 %m, %t, 7;
    {
    .param .b32 a0;
    .param .b32 r0;
    st.param.b32 [a0], %m;
    call (r0), tri, (a0);
    ld.param.b32 %v3, [r0];
    }
    ld.shared.u32 %v1, [buf];
    add.u32 %v3, %v3, %v1;
    st.global.u32 [%o], %v3;
    ret;
}
"#;

fn expected() -> Vec<u32> {
    let sum: u32 = (0..64).sum();
    (0..64u32)
        .map(|t| (0..=(t & 7)).sum::<u32>() + sum)
        .collect()
}

fn run_with(model: WarpModel, ws: u32, seed: Option<u64>) -> (Termination, Vec<u32>) {
    let p = load(&format!("{HEAD}{KERNEL}"));
    let l = launch(
        "k",
        1,
        64,
        vec![zeros("out", 64)],
        vec![ArgValue::Buffer(0)],
    );
    let mut m = Machine::new(p, &l, &config(model, ws)).expect("launch");
    let t = match seed {
        Some(s) => run(&mut m, &mut scheduler::Random::new(s), 200_000),
        None => run(&mut m, &mut scheduler::RoundRobin::new(), 200_000),
    };
    (t, words(&m.buffer(0)))
}

#[test]
fn every_model_computes_the_same_result_round_robin() {
    for (model, ws) in [
        (WarpModel::SimtStack, 32),
        (WarpModel::SimtStack, 4),
        (WarpModel::SimtStack, 3),
        (WarpModel::Its, 32),
        (WarpModel::Threads, 32),
    ] {
        assert_eq!(
            run_with(model, ws, None),
            (Termination::Completed, expected()),
            "{model:?} ws {ws}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_schedules_agree_with_round_robin(seed in any::<u64>(), ws in prop::sample::select(vec![2u32, 3, 8, 32])) {
        for model in [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads] {
            let (t, out) = run_with(model, ws, Some(seed));
            prop_assert_eq!(t, Termination::Completed);
            prop_assert_eq!(out, expected());
        }
    }
}
