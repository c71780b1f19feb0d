//! Address forms ([`semantics::load::address_forms`]): which accesses get an affine address in
//! `%tid`/`%ctaid` under a launch, and which stay unknown because the machine's fixed-width
//! arithmetic, a merge point or a loop could make the form wrong.

mod machine_common;

use machine_common::load;
use semantics::load::address_forms::{Affine, LaunchConstants, access_forms};
use semantics::program::FuncId;

/// Each access is commented with what its address is; `p` is 4096, `s` is 7.
const KERNEL: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 s)
{
    .reg .pred %q<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r9, [s];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.s32 %r4, %r1, %r2, %r3;
    mul.wide.s32 %rd2, %r4, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], 1;
    add.s32 %r5, %r4, -1;
    mul.wide.s32 %rd4, %r5, 4;
    add.s64 %rd5, %rd1, %rd4;
    st.global.u32 [%rd5+4], 2;
    mul.lo.s32 %r6, %r4, %r9;
    cvt.u64.u32 %rd6, %r6;
    add.s64 %rd7, %rd1, %rd6;
    ld.global.u32 %r7, [%rd7];
    mul.lo.s32 %r8, %r4, %r4;
    cvt.u64.u32 %rd8, %r8;
    add.s64 %rd9, %rd1, %rd8;
    ld.global.u32 %r7, [%rd9];
    mov.u64 %rd10, %rd1;
    setp.eq.u32 %q1, %r3, 0;
    @%q1 add.s64 %rd10, %rd10, 8;
    st.global.u32 [%rd10], 3;
    mov.u64 %rd11, %rd1;
    mov.u32 %r10, 0;
LOOP:
    st.global.u32 [%rd11], %r10;
    add.s64 %rd11, %rd11, 4;
    add.s32 %r10, %r10, 1;
    setp.lt.u32 %q2, %r10, 3;
    @%q2 bra LOOP;
    ld.global.u64 %rd12, [%rd1];
    st.global.u32 [%rd12], 4;
    ret;
}
"#;

fn forms(block_dim: u32, grid_dim: u32) -> Vec<Option<Affine>> {
    let program = load(KERNEL);
    let param = |offset: u32, size: u32| match (offset, size) {
        (0, 8) => Some(4096),
        (8, 4) => Some(7),
        _ => None,
    };
    let launch = LaunchConstants {
        block_dim: [block_dim, 1, 1],
        grid_dim: [grid_dim, 1, 1],
        global_window: 0,
        param: &param,
    };
    access_forms(&program, FuncId(0), &launch)
        .into_iter()
        .map(|a| a.address)
        .collect()
}

#[test]
fn affine_addresses_are_exact_and_the_rest_unknown() {
    let f = forms(32, 4);
    assert_eq!(f.len(), 8, "{f:?}");
    let at = |form: &Option<Affine>, tid: u32, ctaid: u32| {
        form.map(|a| a.eval([tid, 0, 0], [ctaid, 0, 0]))
    };
    // p + 4 * (ctaid * 32 + tid).
    assert_eq!(at(&f[0], 5, 2), Some(4096 + 4 * (2 * 32 + 5)));
    // `i - 1` is -1 for thread 0 of block 0: a negative register reads differently at each
    // width and signedness (`mul.wide.s32` sign-extends it), so the form is not kept.
    assert_eq!(f[1], None);
    // p + i * s, with `s` the launch's 7 (`mul.lo` by a constant).
    assert_eq!(at(&f[2], 3, 1), Some(4096 + 7 * 35));
    // `i * i` is not affine.
    assert_eq!(f[3], None);
    // Guarded: `p + 8` for thread 0, `p` for the others; two forms at one address.
    assert_eq!(f[4], None);
    // A loop's pointer: a different form on each iteration.
    assert_eq!(f[5], None);
    // A loaded pointer, and the load that read it (p).
    assert_eq!(at(&f[6], 9, 3), Some(4096));
    assert_eq!(f[7], None);
}

#[test]
fn a_result_that_may_wrap_is_unknown() {
    // With 2^29 threads per block, `i * 7` passes 2^31 for the last ones: `mul.lo.s32` wraps
    // there, so its form is dropped, while `4 * i` (a 64-bit `mul.wide`) still fits.
    let f = forms(1 << 29, 1);
    assert!(f[0].is_some());
    assert_eq!(f[2], None);
}
