//! Smoke tests: ordinary PTX kernels through loader and machine, every warp model.
mod machine_common;
use machine_common::*;
use semantics::machine::{ArgValue, Machine, Termination, WarpModel};

const VECADD: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry vecadd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    ld.param.u64 %rd3, [c];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mul.wide.s32 %rd7, %r5, 4;
    add.s64 %rd8, %rd4, %rd7;
    ld.global.u32 %r6, [%rd8];
    add.s64 %rd8, %rd5, %rd7;
    ld.global.u32 %r7, [%rd8];
    add.s32 %r6, %r6, %r7;
    add.s64 %rd8, %rd6, %rd7;
    st.global.u32 [%rd8], %r6;
DONE:
    ret;
}
"#;

fn vecadd(model: WarpModel, ws: u32) -> Vec<u32> {
    let p = load(VECADD);
    let n = 100u32;
    let a: Vec<u32> = (0..n).collect();
    let b: Vec<u32> = (0..n).map(|i| 1000 * i).collect();
    let l = launch(
        "vecadd",
        4,
        32,
        vec![
            u32_buffer("a", &a),
            u32_buffer("b", &b),
            zeros("c", n as usize),
        ],
        vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Buffer(2),
            ArgValue::Scalar {
                ty: ptx_parser::ScalarType::U32,
                bits: n as u64,
            },
        ],
    );
    let mut m = Machine::new(p, &l, &config(model, ws)).expect("launch");
    let t = run(&mut m, &mut scheduler::RoundRobin::new(), 100_000);
    assert_eq!(t, Termination::Completed);
    words(&m.buffer(2))
}

#[test]
fn vecadd_completes_under_every_model() {
    let expect: Vec<u32> = (0..100).map(|i| 1001 * i).collect();
    for (model, ws) in [
        (WarpModel::SimtStack, 32),
        (WarpModel::SimtStack, 3),
        (WarpModel::Its, 32),
        (WarpModel::Threads, 8),
    ] {
        assert_eq!(vecadd(model, ws), expect, "{model:?} warp size {ws}");
    }
}
