//! PTX fidelity cases where cudasem once answered differently from NVIDIA hardware or from
//! ptxas: each kernel runs on the machine and its output is compared with the hardware's answer
//! (ZLUDA's hardware-checked vectors, or the PTX ISA's definition).
mod machine_common;
use machine_common::*;
use semantics::machine::{ArgValue, Machine, MachineConfig, MemoryKind, Termination, WarpModel};

const HEAD: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// Loads `body` as the body of `k(.param .u64 out)` (with `%o` holding `out`), runs one block of
/// `block` threads with `n` zeroed output words, and returns the termination and the words.
fn run_body(
    decls: &str,
    body: &str,
    block: u32,
    warp_size: u32,
    n: usize,
) -> (Termination, Vec<u32>) {
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 out)\n{{\n    .reg .u64 %o;\n{decls}\n    ld.param.u64 %o, [out];\n{body}\n    ret;\n}}\n"
    );
    let p = load(&src);
    let l = launch(
        "k",
        1,
        block,
        vec![zeros("out", n)],
        vec![ArgValue::Buffer(0)],
    );
    let mut m = Machine::new(p, &l, &config(WarpModel::SimtStack, warp_size)).expect("launch");
    let t = run(&mut m, &mut scheduler::RoundRobin::new(), 100_000);
    (t, words(&m.buffer(0)))
}

/// ZLUDA's `sub_cc`/`subc_cc` on hardware: a subtraction leaves CC.CF = 1 exactly when it did
/// not borrow, `addc` adds that flag, and `subc` subtracts its complement.
#[test]
fn carry_flag_after_a_subtraction_is_the_inverted_borrow() {
    let (t, out) = run_body(
        "    .reg .u32 %r<12>;",
        r#"
    sub.cc.u32 %r1, 0, 1;
    addc.u32 %r2, 0, 0;
    sub.cc.u32 %r3, 5, 1;
    addc.u32 %r4, 0, 0;
    sub.cc.u32 %r5, 0, 1;
    subc.u32 %r6, 10, 2;
    sub.cc.u32 %r7, 3, 1;
    subc.cc.u32 %r8, 10, 2;
    addc.u32 %r9, 0, 0;
    add.cc.u32 %r10, 1, 1;
    subc.u32 %r11, 10, 2;
    st.global.v4.u32 [%o], {%r1, %r2, %r3, %r4};
    st.global.v4.u32 [%o+16], {%r5, %r6, %r7, %r8};
    st.global.v2.u32 [%o+32], {%r9, %r11};"#,
        1,
        32,
        10,
    );
    assert_eq!(t, Termination::Completed);
    assert_eq!(
        out,
        [u32::MAX, 0, 4, 1, u32::MAX, 7, 2, 8, 1, 7],
        "sub.cc then addc/subc"
    );
}

/// `WARP_SZ` (PTX ISA "Special Registers: WARP_SZ") is a run-time constant: the warp width.
#[test]
fn warp_sz_reads_the_warp_width() {
    let body = r#"
    mov.u32 %r1, WARP_SZ;
    add.u32 %r2, %r1, WARP_SZ;
    st.global.v2.u32 [%o], {%r1, %r2};"#;
    let (t, out) = run_body("    .reg .u32 %r<3>;", body, 1, 32, 2);
    assert_eq!(t, Termination::Completed);
    assert_eq!(out, [32, 64]);
    let (_, out) = run_body("    .reg .u32 %r<3>;", body, 1, 4, 2);
    assert_eq!(out, [4, 8], "a machine with 4-lane warps has WARP_SZ = 4");
}

/// `reg + imm` as a value operand outside brackets (ptxas accepts `st.u64 [a], %rd + 8;`).
#[test]
fn register_plus_constant_is_a_value_operand() {
    let (t, out) = run_body(
        "    .reg .u64 %rd<4>;\n    .reg .u32 %r<4>;",
        r#"
    mov.u64 %rd1, 100;
    st.global.u64 [%o], %rd1 + 1;
    add.u64 %rd2, %rd1 + 4, 10;
    st.global.u64 [%o+8], %rd2;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %r1 - 3;
    st.global.u32 [%o+16], %r2;
    mov.u32 %r3, 0x10 + %r1;
    st.global.u32 [%o+20], %r3;"#,
        1,
        32,
        6,
    );
    assert_eq!(t, Termination::Completed);
    assert_eq!(out, [101, 0, 114, 0, (-3i32) as u32, 16]);
}

/// A float operand cannot be `reg + constant`: a diagnostic, not a silent integer add.
#[test]
fn register_plus_constant_on_a_float_operand_is_refused() {
    let src = format!(
        "{HEAD}.visible .entry k()\n{{\n    .reg .f32 %f<3>;\n    add.f32 %f1, %f2 + 1, 1.0;\n    ret;\n}}\n"
    );
    let parsed = ptx_parser::parse(&src);
    assert!(!parsed.has_errors());
    let Err(err) = semantics::load(&parsed.module, &src) else {
        panic!("a float `reg + 1` loaded");
    };
    let text = format!("{err:?}");
    assert!(text.contains("needs an integer operand"), "{text}");
}

/// `st.const` is valid PTX until it runs: it loads, a kernel that never executes it completes,
/// and executing it faults with "const address ... is read-only" (flat and cached memory).
#[test]
fn st_const_loads_and_faults_when_it_runs() {
    let src = |guard: &str| {
        format!(
            "{HEAD}.const .align 4 .u32 c[4] = {{1, 2, 3, 4}};\n.visible .entry k(.param .u64 out)\n{{\n    .reg .u32 %r<3>;\n    .reg .pred %p;\n    .reg .u64 %o;\n    ld.param.u64 %o, [out];\n    mov.u32 %r1, %tid.x;\n    setp.eq.u32 %p, %r1, 99;\n    {guard} st.const.u32 [c+4], %r1;\n    ld.const.u32 %r2, [c+4];\n    st.global.u32 [%o], %r2;\n    ret;\n}}\n"
        )
    };
    for memory in [MemoryKind::Flat, MemoryKind::Cached] {
        let cfg = MachineConfig {
            memory,
            ..config(WarpModel::SimtStack, 32)
        };
        let l = launch("k", 1, 1, vec![zeros("out", 1)], vec![ArgValue::Buffer(0)]);
        let mut m = Machine::new(load(&src("@%p")), &l, &cfg).expect("launch");
        let t = run_plain(&mut m);
        assert_eq!(t, Termination::Completed, "{memory:?}");
        assert_eq!(words(&m.buffer(0)), [2]);
        let mut m = Machine::new(load(&src("")), &l, &cfg).expect("launch");
        match run_plain(&mut m) {
            Termination::Error(e) => {
                let text = format!("{e:?}");
                assert!(
                    text.contains("const address") && text.contains("read-only"),
                    "{text}"
                );
            }
            other => panic!("{memory:?}: st.const ran: {other:?}"),
        }
    }
}

/// Runs round-robin to the end (without `run`'s enabled-set recomputation, which does not list
/// cached memory's choices).
fn run_plain(m: &mut Machine) -> Termination {
    let mut rr = scheduler::RoundRobin::new();
    for _ in 0..100_000 {
        if let Some(t) = m.termination() {
            return t.clone();
        }
        let en = m.enabled();
        let c = en[scheduler::Scheduler::pick(&mut rr, m, en).expect("round-robin always chooses")];
        m.step(&c).expect("enabled choice refused");
    }
    Termination::StepLimit
}

/// `.align` is honoured for any power of two, above the 64 KiB at which module globals start
/// included: the address a kernel reads is a multiple of it.
#[test]
fn align_above_64_kib_is_honoured() {
    let src = format!(
        "{HEAD}.global .u32 z;\n.global .align 131072 .b8 x[4];\n.global .align 1048576 .b8 y[4];\n.visible .entry k(.param .u64 out)\n{{\n    .reg .u64 %rd<4>;\n    ld.param.u64 %rd1, [out];\n    mov.u64 %rd2, x;\n    mov.u64 %rd3, y;\n    st.global.v2.u64 [%rd1], {{%rd2, %rd3}};\n    ret;\n}}\n"
    );
    let l = launch("k", 1, 1, vec![zeros("out", 4)], vec![ArgValue::Buffer(0)]);
    let mut m = Machine::new(load(&src), &l, &config(WarpModel::SimtStack, 32)).expect("launch");
    assert_eq!(run_plain(&mut m), Termination::Completed);
    let w = words(&m.buffer(0));
    let (x, y) = (
        w[0] as u64 | (w[1] as u64) << 32,
        w[2] as u64 | (w[3] as u64) << 32,
    );
    assert_ne!(x, 0);
    assert_eq!(x % (128 << 10), 0, "x at {x:#x}");
    assert_eq!(y % (1 << 20), 0, "y at {y:#x}");
}
