//! The digest's derived test cases (seed 003 digest §15, T9-T24) and run bounds/faults.
//! T1-T6 are in `machine_thesis.rs`; T7/T8 are loader cases; T23 (register blocking) does not
//! arise under flat memory (every register write completes inside its step).
mod machine_common;
use machine_common::*;
use ptx_parser::ScalarType;
use semantics::machine::{ArgValue, ErrorKind, Machine, MachineConfig, Termination, WarpModel};
use traces::Choice;

const HEAD: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// Runs `kernel(out)` with one u32 output buffer of `n` words; returns the termination and `out`.
fn run_out(
    src: &str,
    block: u32,
    cfg: MachineConfig,
    n: usize,
    init: u32,
) -> (Termination, Vec<u32>) {
    let p = load(&format!("{HEAD}{src}"));
    let l = launch(
        "k",
        1,
        block,
        vec![u32_buffer("out", &vec![init; n])],
        vec![ArgValue::Buffer(0)],
    );
    let mut m = Machine::new(p, &l, &cfg).expect("launch");
    let t = run(&mut m, &mut scheduler::RoundRobin::new(), 100_000);
    (t, words(&m.buffer(0)))
}

/// A kernel `k(out)` in the thesis dialect that calls `f(out + 4*tid)` and then adds 10 to
/// `out[tid]` at X (so every lane must be back at X exactly once).
fn with_caller(f_body: &str, extra: &str) -> String {
    format!(
        r#"{extra}
.func f(.param .u64 o)
{{
    .reg .u32 %t;
    .reg .u32 %v;
    .reg .pred %p;
    .reg .u64 %a;
    ld.param.u64 %a, [o];
    mov.u32 %t, %tid.x;
{f_body}
}}
.visible .entry k(.param .u64 out)
{{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u32 %t;
    .reg .u32 %v;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    {{
    .param .b64 p0;
    st.param.b64 [p0], %o;
    preRet X;
    call.uni f, (p0);
    }}
X:
    ld.global.u32 %v, [%o];
    add.u32 %v, %v, 10;
    st.global.u32 [%o], %v;
    exit;
}}
"#
    )
}

fn simt(ws: u32) -> MachineConfig {
    config(WarpModel::SimtStack, ws)
}

#[test]
fn t9_uniform_ret_on_the_taken_path_does_not_resurrect() {
    let src = with_caller(
        "    setp.lt.u32 %p, %t, 2;
    ssy S;
    @%p bra T;
    st.global.u32 [%a], 1;
    bra SY;
T:
    ret;
SY:
    sync;
S:
    ld.global.u32 %v, [%a];
    add.u32 %v, %v, 100;
    st.global.u32 [%a], %v;
    ret;",
        "",
    );
    // Lanes 0, 1 return on the taken path: they must not run S (+100).
    assert_eq!(
        run_out(&src, 4, simt(4), 4, 0),
        (Termination::Completed, vec![10, 10, 111, 111])
    );
}

#[test]
fn t10_uniform_ret_on_the_not_taken_path_pops_one_token() {
    let src = with_caller(
        "    setp.lt.u32 %p, %t, 2;
    ssy S;
    @%p bra T;
    ret;
T:
    st.global.u32 [%a], 1;
SY:
    sync;
S:
    ld.global.u32 %v, [%a];
    add.u32 %v, %v, 100;
    st.global.u32 [%a], %v;
    ret;",
        "",
    );
    assert_eq!(
        run_out(&src, 4, simt(4), 4, 0),
        (Termination::Completed, vec![111, 111, 10, 10])
    );
}

#[test]
fn t11_both_paths_return() {
    let src = with_caller(
        "    setp.lt.u32 %p, %t, 2;
    ssy S;
    @%p bra T;
    ret;
T:
    ret;
SY:
    sync;
S:
    st.global.u32 [%a], 99;
    ret;",
        "",
    );
    assert_eq!(
        run_out(&src, 4, simt(4), 4, 0),
        (Termination::Completed, vec![10, 10, 10, 10])
    );
}

#[test]
fn t12_enable_checks_the_token_mask() {
    // Lane 0 returns from f early; the others call g inside f. Popping g's call token must not
    // re-enable lane 0 (it would run Y: +1).
    let src = with_caller(
        "    setp.eq.u32 %p, %t, 0;
    @%p ret;
    {
    .param .b64 q0;
    st.param.b64 [q0], %a;
    preRet Y;
    call.uni g, (q0);
    }
Y:
    ld.global.u32 %v, [%a];
    add.u32 %v, %v, 1;
    st.global.u32 [%a], %v;
    ret;",
        ".func g(.param .u64 o)
{
    .reg .u64 %a;
    .reg .u32 %v;
    ld.param.u64 %a, [o];
    ld.global.u32 %v, [%a];
    add.u32 %v, %v, 1000;
    st.global.u32 [%a], %v;
    ret;
}",
    );
    assert_eq!(
        run_out(&src, 4, simt(4), 4, 0),
        (Termination::Completed, vec![10, 1011, 1011, 1011])
    );
}

const ORDINARY_CALLS: &str = r#"
.func g(.param .u64 o)
{
    .reg .u64 %a;
    .reg .u32 %v;
    ld.param.u64 %a, [o];
    ld.global.u32 %v, [%a];
    add.u32 %v, %v, 1000;
    st.global.u32 [%a], %v;
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u32 %t;
    .reg .u32 %v;
    .reg .pred %q;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    setp.lt.u32 %q, %t, 3;
    {
    .param .b64 p0;
    st.param.b64 [p0], %o;
    @%q call g, (p0);
    }
    ld.global.u32 %v, [%o];
    add.u32 %v, %v, 10;
    st.global.u32 [%o], %v;
    ret;
}
"#;

#[test]
fn t13_conditional_call_parks_the_non_callers() {
    for (model, ws) in [
        (WarpModel::SimtStack, 4),
        (WarpModel::Its, 4),
        (WarpModel::Threads, 4),
    ] {
        assert_eq!(
            run_out(ORDINARY_CALLS, 4, config(model, ws), 4, 0),
            (Termination::Completed, vec![1010, 1010, 1010, 10]),
            "{model:?}"
        );
    }
}

#[test]
fn t14_indirect_call_with_three_targets() {
    let src = include_str!("../../tests/kernels/indirect_call.ptx");
    let p = load(src);
    let s32 = |name: &str, v: Vec<i32>| semantics::machine::BufferSpec {
        name: name.into(),
        elem: ScalarType::S32,
        bytes: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    };
    let expect: Vec<u32> = (0..32)
        .map(|i: i32| {
            let x = 10 + i;
            [x + 1, 2 * x, -x][(i % 3) as usize] as u32
        })
        .collect();
    for (model, ws) in [
        (WarpModel::SimtStack, 32),
        (WarpModel::SimtStack, 4),
        (WarpModel::Its, 32),
        (WarpModel::Threads, 32),
    ] {
        for seed in 0..3 {
            let l = launch(
                "indirect_call",
                1,
                32,
                vec![
                    s32("sel", (0..32).collect()),
                    s32("in", (10..42).collect()),
                    s32("out", vec![0; 32]),
                ],
                vec![
                    ArgValue::Buffer(0),
                    ArgValue::Buffer(1),
                    ArgValue::Buffer(2),
                    ArgValue::Scalar {
                        ty: ScalarType::S32,
                        bits: 32,
                    },
                ],
            );
            let mut m = Machine::new(p.clone(), &l, &config(model, ws)).unwrap();
            let t = run(&mut m, &mut scheduler::Random::new(seed), 100_000);
            assert_eq!(t, Termination::Completed, "{model:?} ws {ws} seed {seed}");
            assert_eq!(words(&m.buffer(2)), expect, "{model:?} ws {ws} seed {seed}");
        }
    }
}

#[test]
fn t15_indirect_branch_with_guard_false_lanes() {
    let src = r#"
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u32 %t;
    .reg .u32 %sel;
    .reg .pred %p;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    and.b32 %sel, %t, 1;
    setp.ne.u32 %p, %t, 3;
TARGETS: .branchtargets A, B;
    @%p brx.idx %sel, TARGETS;
    st.global.u32 [%o], 7;
    bra.uni E;
A:
    st.global.u32 [%o], 1;
    bra.uni E;
B:
    st.global.u32 [%o], 2;
E:
    ret;
}
"#;
    for model in [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads] {
        assert_eq!(
            run_out(src, 4, config(model, 4), 4, 0),
            (Termination::Completed, vec![1, 2, 1, 7]),
            "{model:?}"
        );
    }
}

#[test]
fn t16_divergent_exit() {
    let src = r#"
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u32 %t;
    .reg .pred %p;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    setp.lt.u32 %p, %t, 2;
    @%p exit;
    st.global.u32 [%o], 1;
    exit;
}
"#;
    assert_eq!(
        run_out(src, 4, simt(4), 4, 0),
        (Termination::Completed, vec![0, 0, 1, 1])
    );
}

#[test]
fn t17_brk_without_a_break_token_is_stuck() {
    let src = r#"
.visible .entry k(.param .u64 out)
{
    .reg .u32 %t;
    mov.u32 %t, %tid.x;
    brk;
    exit;
}
"#;
    let (t, _) = run_out(src, 4, simt(4), 4, 0);
    let Termination::Error(e) = t else {
        panic!("expected an error, got {t:?}")
    };
    assert_eq!(e.kind, ErrorKind::Stuck);
    assert!(
        e.message.contains("brk without a break token"),
        "{}",
        e.message
    );
}

#[test]
fn t18_vote_over_the_active_lanes() {
    let src = r#"
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u32 %t;
    .reg .u32 %r<5>;
    .reg .pred %p<6>;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 16;
    add.u64 %o, %o, %off;
    setp.eq.u32 %p1, %t, 2;
    @%p1 bra SKIP;
    setp.ne.u32 %p2, %t, 1;
    vote.all.pred %p3, %p2;
    vote.any.pred %p4, %p2;
    vote.uni.pred %p5, %p2;
    vote.ballot.b32 %r4, %p2;
    selp.u32 %r1, 1, 0, %p3;
    selp.u32 %r2, 1, 0, %p4;
    selp.u32 %r3, 1, 0, %p5;
    st.global.v4.u32 [%o], {%r1, %r2, %r3, %r4};
SKIP:
    ret;
}
"#;
    let (t, out) = run_out(src, 4, simt(4), 16, 5);
    assert_eq!(t, Termination::Completed);
    // Lanes 0, 1, 3: all = 0, any = 1, uni = 0, ballot = 0b1001; lane 2 wrote nothing.
    assert_eq!(out, vec![0, 1, 0, 9, 0, 1, 0, 9, 5, 5, 5, 5, 0, 1, 0, 9]);
}

const BARRIER_PARTIAL: &str = r#"
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u32 %t;
    .reg .pred %p;
    .reg .pred %q;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    setp.eq.u32 %p, %t, 0;
    setp.ge.u32 %q, %t, 4;
    or.pred %p, %p, %q;
    @%p bar.sync 0;
    st.global.u32 [%o], 1;
    ret;
}
"#;

#[test]
fn t19_a_partial_warp_arrives_as_a_whole_warp() {
    assert_eq!(
        run_out(BARRIER_PARTIAL, 8, simt(4), 8, 0),
        (Termination::Completed, vec![1; 8])
    );
}

const EXIT_BEFORE_BARRIER: &str = r#"
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u32 %t;
    .reg .pred %p;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    setp.ge.u32 %p, %t, 4;
    @%p bra LEAVE;
    bar.sync 0;
    st.global.u32 [%o], 1;
LEAVE:
    exit;
}
"#;

/// Runs EXIT_BEFORE_BARRIER preferring warp `first` until it cannot move.
fn t20_run(first: u32, exited_arrive: bool) -> Termination {
    let p = load(&format!("{HEAD}{EXIT_BEFORE_BARRIER}"));
    let l = launch("k", 1, 8, vec![zeros("out", 8)], vec![ArgValue::Buffer(0)]);
    let mut cfg = simt(4);
    cfg.exited_warps_arrive = exited_arrive;
    let mut m = Machine::new(p, &l, &cfg).unwrap();
    let (t, _) = run_observed(&mut m, 10_000, |en| {
        *en.iter()
            .find(|c| matches!(c, Choice::Warp { warp, .. } if *warp == first))
            .unwrap_or(&en[0])
    });
    t
}

#[test]
fn t20_a_warp_that_exits_after_the_barrier_is_initialised_deadlocks_the_model() {
    let t = t20_run(0, false);
    let Termination::Deadlock(w) = t else {
        panic!("expected a deadlock, got {t:?}")
    };
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].warp, 0);
    assert!(
        w[0].waiting_for
            .contains("barrier 0 (4 of 8 threads arrived)"),
        "{}",
        w[0].waiting_for
    );
    assert!(
        w[0].waiting_for.contains("exited without arriving"),
        "{}",
        w[0].waiting_for
    );
    // Hardware behaviour, by flag.
    assert_eq!(t20_run(0, true), Termination::Completed);
    // Warp 1 exits before the barrier is initialised: the default count is one warp.
    assert_eq!(t20_run(1, false), Termination::Completed);
}

#[test]
fn t21_bar_red_popc_over_participating_lanes() {
    let src = r#"
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u32 %t;
    .reg .u32 %r;
    .reg .u32 %b;
    .reg .pred %p;
    .reg .pred %g;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    mov.u32 %r, 777;
    and.b32 %b, %t, 1;
    setp.ne.u32 %p, %b, 0;
    setp.ge.u32 %g, %t, 5;
    @%g bar.red.popc.u32 %r, 0, %p;
    st.global.u32 [%o], %r;
    ret;
}
"#;
    let (t, out) = run_out(src, 64, simt(32), 64, 0);
    assert_eq!(t, Termination::Completed);
    let mut expect = vec![30u32; 64];
    expect[..5].fill(777);
    assert_eq!(out, expect);
    // Threads model: arrival is per thread, so the 5 guard-false threads never arrive.
    let (t, _) = run_out(src, 64, config(WarpModel::Threads, 32), 64, 0);
    let Termination::Deadlock(w) = t else {
        panic!("expected a deadlock, got {t:?}")
    };
    assert!(
        w[0].waiting_for
            .contains("barrier 0 (59 of 64 threads arrived)"),
        "{}",
        w[0].waiting_for
    );
}

#[test]
fn t22_bar_arrive_and_bar_sync_on_one_barrier() {
    let src = r#"
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u64 %s;
    .reg .u32 %t;
    .reg .u32 %v;
    .reg .pred %p;
    .shared .align 4 .u32 box;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    setp.lt.u32 %p, %t, 32;
    @!%p bra CONSUMER;
    st.shared.u32 [box], 42;
    bar.arrive 1, 64;
    ret;
CONSUMER:
    bar.sync 1, 64;
    ld.shared.u32 %v, [box];
    st.global.u32 [%o], %v;
    ret;
}
"#;
    let (t, out) = run_out(src, 64, simt(32), 64, 0);
    assert_eq!(t, Termination::Completed);
    assert_eq!(&out[32..], &[42; 32]);
    assert_eq!(&out[..32], &[0; 32]);
}

#[test]
fn t24_dummy_lanes_fill_the_last_warp() {
    let src = r#"
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u32 %t;
    .reg .u32 %r;
    .reg .pred %p;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    setp.ge.u32 %p, %t, 0;
    bar.sync 0;
    vote.ballot.b32 %r, %p;
    st.global.u32 [%o], %r;
    ret;
}
"#;
    let (t, out) = run_out(src, 33, simt(32), 33, 0);
    assert_eq!(t, Termination::Completed);
    assert_eq!(&out[..32], &[u32::MAX; 32]);
    assert_eq!(out[32], 1);
}

#[test]
fn a_runaway_loop_stops_at_the_step_limit() {
    let src = r#"
.visible .entry k(.param .u64 out)
{
L:
    bra.uni L;
}
"#;
    for model in [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads] {
        assert_eq!(
            run_out(src, 4, config(model, 4), 1, 0).0,
            Termination::StepLimit
        );
    }
}

#[test]
fn an_out_of_bounds_store_names_the_buffer() {
    let src = r#"
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u32 %t;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    st.global.u32 [%o], %t;
    ret;
}
"#;
    let (t, out) = run_out(src, 130, simt(32), 128, 0);
    let Termination::Error(e) = t else {
        panic!("expected an error, got {t:?}")
    };
    assert_eq!(e.kind, ErrorKind::OutOfBounds);
    assert!(
        e.message
            .contains("is 0 bytes past the end of buffer `out` (512 bytes at"),
        "{}",
        e.message
    );
    assert_eq!(e.thread, [128, 0, 0]);
    assert!(e.ptx_line > 0);
    assert_eq!(out.len(), 128);
}

#[test]
fn launch_errors_explain_themselves() {
    let p = load(&format!("{HEAD}{BARRIER_PARTIAL}"));
    let l = launch(
        "nope",
        1,
        8,
        vec![zeros("out", 8)],
        vec![ArgValue::Buffer(0)],
    );
    let e = Machine::new(p.clone(), &l, &simt(4)).unwrap_err();
    assert_eq!(
        e.message,
        "kernel `nope` not found; the module's entries are: k"
    );
    let l = launch("k", 1, 8, vec![zeros("out", 8)], vec![]);
    assert!(
        Machine::new(p.clone(), &l, &simt(4))
            .unwrap_err()
            .message
            .contains("takes 1 parameters")
    );
    let l = launch(
        "k",
        1,
        2048,
        vec![zeros("out", 8)],
        vec![ArgValue::Buffer(0)],
    );
    assert!(
        Machine::new(p, &l, &simt(4))
            .unwrap_err()
            .message
            .contains("more than the device's 1024 per block")
    );
}

#[test]
fn generic_initializers_point_into_their_space_and_null_is_not_a_variable() {
    // `generic(c)` of a `.const` variable is a generic address in the const window (PTX ISA
    // 5.4.4); a generic load through it reads the constant.
    let src = r#"
.const .align 4 .u32 c = 1234;
.global .align 8 .u64 p = generic(c);
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %q;
    .reg .u32 %v;
    ld.param.u64 %o, [out];
    ld.global.u64 %q, [p];
    ld.u32 %v, [%q];
    st.global.u32 [%o], %v;
    ret;
}
"#;
    let (t, out) = run_out(src, 1, MachineConfig::default(), 1, 0);
    assert_eq!(t, Termination::Completed);
    assert_eq!(out, vec![1234]);

    // A null pointer never lands on a module variable: `.global` variables live above page 0.
    let src = r#"
.global .align 4 .u32 g = 7;
.visible .entry k(.param .u64 out)
{
    .reg .u64 %z;
    .reg .u32 %v;
    mov.u64 %z, 0;
    ld.global.u32 %v, [%z];
    ret;
}
"#;
    let (t, _) = run_out(src, 1, MachineConfig::default(), 1, 0);
    match t {
        Termination::Error(e) => assert_eq!(e.kind, ErrorKind::OutOfBounds, "{}", e.message),
        other => panic!("a null load must fault, got {other:?}"),
    }
}

/// Module-scope `.reg` variables are one per thread (the thesis's `%stackBase`, Listing 5.3
/// after the stack transformation): a value set before a call is seen by the callee, and what
/// the callee writes is seen after the return, lane by lane, under every warp model.
#[test]
fn module_registers_follow_a_thread_into_calls_and_back() {
    let src = "
.reg .u32 %g;
.func twice()
{
    .reg .u32 %x;
    mov.u32 %x, %g;
    add.u32 %g, %g, %x;
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u32 %t;
    .reg .pred %p;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    add.u32 %g, %t, 1;
    setp.lt.u32 %p, %t, 2;
    @%p call twice;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    st.global.u32 [%o], %g;
    ret;
}
";
    for model in [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads] {
        // Lanes 0 and 1 call (g = 2 * (tid + 1)); lanes 2 and 3 do not (g = tid + 1).
        assert_eq!(
            run_out(src, 4, config(model, 4), 4, 0),
            (Termination::Completed, vec![2, 4, 3, 4]),
            "{model:?}"
        );
    }
}

/// Lanes 0-3 name membermask 0x0F and lanes 4-7 name 0xF0 at the same `vote.sync`,
/// `match.sync` and `redux.sync`: each lane's result covers its own mask's lanes only (PTX ISA
/// 9.7.13.6 "vote.sync": the membermask is per thread), under every warp model.
#[test]
fn warp_sync_collectives_use_each_lanes_own_membermask() {
    let src = r#"
.visible .entry k(.param .u64 out)
{
    .reg .u64 %o;
    .reg .u64 %off;
    .reg .u32 %t;
    .reg .u32 %m;
    .reg .u32 %v;
    .reg .u32 %r<5>;
    .reg .pred %p<4>;
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 16;
    add.u64 %o, %o, %off;
    setp.lt.u32 %p1, %t, 4;
    selp.u32 %m, 15, 240, %p1;
    setp.ne.u32 %p2, %t, 6;
    vote.sync.ballot.b32 %r1, %p2, %m;
    vote.sync.all.pred %p3, %p2, %m;
    selp.u32 %r2, 1, 0, %p3;
    and.b32 %v, %t, 1;
    match.any.sync.b32 %r3, %v, %m;
    redux.sync.add.u32 %r4, %t, %m;
    st.global.v4.u32 [%o], {%r1, %r2, %r3, %r4};
    ret;
}
"#;
    for model in [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads] {
        let (t, out) = run_out(src, 8, config(model, 8), 32, 0);
        assert_eq!(t, Termination::Completed, "{model:?}");
        let mut want = Vec::new();
        for lane in 0..8u32 {
            let (ballot, all, same, sum) = if lane < 4 {
                (0x0F, 1, if lane % 2 == 0 { 0x05 } else { 0x0A }, 6)
            } else {
                (0xB0, 0, if lane % 2 == 0 { 0x50 } else { 0xA0 }, 22)
            };
            want.extend([ballot, all, same, sum]);
        }
        assert_eq!(out, want, "{model:?}");
    }
}

/// A struct by value (`.param .align 8 .b8 s[16]`): its bytes land at the parameter's offset,
/// a buffer address is patched in where `pointers` says, and a wrong size is refused with the
/// parameter's name and both sizes.
#[test]
fn struct_parameter_bytes_and_pointers() {
    let src = format!(
        r#"{HEAD}
.visible .entry k(.param .u32 pad, .param .align 8 .b8 s[16])
{{
    .reg .u32 %v;
    .reg .u64 %p;
    ld.param.u64 %p, [s];
    ld.param.u32 %v, [s+8];
    st.global.u32 [%p], %v;
    ld.param.u32 %v, [s+12];
    st.global.u32 [%p+4], %v;
    ret;
}}
"#
    );
    let p = load(&src);
    let struct_arg = |bytes: Vec<u8>| {
        launch(
            "k",
            1,
            1,
            vec![zeros("out", 2)],
            vec![
                ArgValue::Scalar {
                    ty: ScalarType::U32,
                    bits: 0,
                },
                ArgValue::Bytes {
                    bytes,
                    pointers: vec![(0, 0)],
                },
            ],
        )
    };
    let bytes = [
        vec![0; 8],
        41u32.to_le_bytes().to_vec(),
        42u32.to_le_bytes().to_vec(),
    ]
    .concat();
    let cfg = config(WarpModel::SimtStack, 32);
    let mut m = Machine::new(p.clone(), &struct_arg(bytes), &cfg).expect("launch");
    let t = run(&mut m, &mut scheduler::RoundRobin::new(), 10_000);
    assert_eq!(t, Termination::Completed);
    assert_eq!(words(&m.buffer(0)), [41, 42]);
    let e = Machine::new(p, &struct_arg(vec![0; 12]), &cfg).unwrap_err();
    assert!(
        e.message
            .contains("parameter `s` is 16 bytes, the argument gives 12 bytes"),
        "{}",
        e.message
    );
}
