//! The registers live at each address (`semantics::load::liveness`) and the canonical state
//! that leaves out dead ones ([`Machine::state_fingerprint`]): two states that differ only in a
//! dead register are one state, two that differ in a live one are not.

mod machine_common;

use machine_common::*;
use semantics::Program;
use semantics::machine::{ArgValue, FinalRegisters, Machine, WarpModel};
use semantics::program::{LiveSet, Pc, RegId};

/// The register of function `f` named `name`.
fn reg(p: &Program, f: usize, name: &str) -> u16 {
    p.functions[f]
        .registers
        .iter()
        .position(|r| r.name.as_str() == name)
        .unwrap_or_else(|| panic!("no register {name}")) as u16
}

/// The address of the `n`-th instruction (from 0) of function `f` whose PTX line contains
/// `text`.
fn pc_of(p: &Program, src: &str, f: usize, text: &str) -> Pc {
    let lines: Vec<&str> = src.lines().collect();
    let func = &p.functions[f];
    (func.start..func.end)
        .find(|&pc| lines[p.source[pc as usize].ptx_line as usize - 1].contains(text))
        .unwrap_or_else(|| panic!("no instruction `{text}`"))
}

/// Whether register `r` is live on entry to `pc`.
fn live(p: &Program, exit: FinalRegisters, pc: Pc, r: u16) -> bool {
    match p.liveness(exit).live_in(pc) {
        LiveSet::All => true,
        LiveSet::Bits(b) => b[r as usize / 64] >> (r % 64) & 1 == 1,
    }
}

const LOOP: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 buf)
{
    .reg .pred %p<3>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, 0;
SPIN:
    ld.volatile.global.u32 %r2, [%rd2];
    add.s32 %r1, %r1, 1;
    setp.lt.s32 %p1, %r2, 5;
    @%p1 bra SPIN;
    setp.eq.s32 %p2, %r1, 3;
    @%p2 bra TWO;
    mov.u32 %r3, 7;
    bra.uni JOIN;
TWO:
    mov.u32 %r3, 8;
JOIN:
    @%p2 mov.u32 %r4, 1;
    add.s32 %r5, %r3, %r4;
    st.global.u32 [%rd2], %r5;
    ret;
}
"#;

#[test]
fn a_loop_kills_what_it_reloads_and_a_branch_joins_what_both_sides_write() {
    let p = load(LOOP);
    let (r1, r2, r3, r4) = (
        reg(&p, 0, "%r1"),
        reg(&p, 0, "%r2"),
        reg(&p, 0, "%r3"),
        reg(&p, 0, "%r4"),
    );
    let (p1, rd1, rd2) = (reg(&p, 0, "%p1"), reg(&p, 0, "%rd1"), reg(&p, 0, "%rd2"));
    let spin = pc_of(&p, LOOP, 0, "ld.volatile");
    let branch = pc_of(&p, LOOP, 0, "setp.eq");
    let join = pc_of(&p, LOOP, 0, "@%p2 mov");
    let add = pc_of(&p, LOOP, 0, "add.s32 %r5");
    for exit in [FinalRegisters::Observed, FinalRegisters::Unobserved] {
        // The spin loop's head: the loaded value and the predicate are written before any
        // read on every path; the counter and the address are read.
        assert!(!live(&p, exit, spin, r2), "{exit:?}");
        assert!(!live(&p, exit, spin, p1), "{exit:?}");
        assert!(live(&p, exit, spin, r1), "{exit:?}");
        assert!(live(&p, exit, spin, rd2), "{exit:?}");
        // Both sides of the branch write %r3 before the join reads it.
        assert!(!live(&p, exit, branch, r3), "{exit:?}");
        assert!(live(&p, exit, join, r3), "{exit:?}");
        // A guarded write kills nothing: %r4 keeps its old value where %p2 is false.
        assert!(live(&p, exit, join, r4), "{exit:?}");
        assert!(live(&p, exit, add, r4), "{exit:?}");
    }
    // %rd1 is never read after the `cvta`: dead, unless the thread's final registers are
    // observed (then `exit` reads it).
    assert!(live(&p, FinalRegisters::Observed, spin, rd1));
    assert!(!live(&p, FinalRegisters::Unobserved, spin, rd1));
    // After the last loop the predicate written at the loop's exit is dead only if nothing
    // observes final registers.
    assert!(live(&p, FinalRegisters::Observed, add, p1));
    assert!(!live(&p, FinalRegisters::Unobserved, add, p1));
}

const CALL: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.func (.reg .u32 %out) inc(.reg .u32 %a)
{
    .reg .u32 %t;
    add.u32 %t, %a, 1;
    mov.u32 %out, %t;
    ret;
}
.visible .entry k(.param .u64 buf)
{
    .reg .u32 %x;
    .reg .u32 %y;
    .reg .u32 %z;
    .reg .u64 %b;
    ld.param.u64 %b, [buf];
    cvta.to.global.u64 %b, %b;
    mov.u32 %x, 5;
    mov.u32 %z, 1;
    call (%y), inc, (%x);
    add.u32 %z, %y, 2;
    st.global.u32 [%b], %z;
    ret;
}
"#;

#[test]
fn a_call_uses_its_arguments_and_a_return_its_return_registers() {
    let p = load(CALL);
    let (inc, k) = (0, 1);
    assert_eq!(p.functions[inc].name, "inc");
    let (out, a, t) = (reg(&p, inc, "%out"), reg(&p, inc, "%a"), reg(&p, inc, "%t"));
    let (x, y, z) = (reg(&p, k, "%x"), reg(&p, k, "%y"), reg(&p, k, "%z"));
    let entry = p.functions[inc].start;
    let ret = pc_of(&p, CALL, inc, "ret;");
    let call = pc_of(&p, CALL, k, "call");
    for exit in [FinalRegisters::Observed, FinalRegisters::Unobserved] {
        let l = p.liveness(exit);
        assert!(live(&p, exit, entry, a), "{exit:?}");
        assert!(!live(&p, exit, entry, t), "{exit:?}");
        assert!(!live(&p, exit, entry, out), "{exit:?}");
        // `ret` reads the return register and nothing else of the callee.
        assert!(live(&p, exit, ret, out), "{exit:?}");
        assert!(!live(&p, exit, ret, a), "{exit:?}");
        assert!(!live(&p, exit, ret, t), "{exit:?}");
        // The caller at the call: the argument, and the return register (written only when
        // the callee returns); %z is written after the call before any read.
        assert!(live(&p, exit, call, x), "{exit:?}");
        assert!(live(&p, exit, call, y), "{exit:?}");
        assert!(!live(&p, exit, call, z), "{exit:?}");
        // A level deeper than a lane's depth keeps what a callee reads before writing.
        let LiveSet::Bits(stale) = l.stale() else {
            panic!("the stale set is analysed")
        };
        assert_eq!(stale[0] >> a & 1, 1);
        assert_eq!(stale[0] >> t & 1, 0);
    }
}

/// What the kernel does with the values it loaded after the `membar`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum After {
    /// Stores `%v` as loaded: `%v` live.
    Store,
    /// Overwrites `%v` and `%old` before any read: both dead.
    Overwrite,
    /// Overwrites `%v` only: `%old` dead but for what `exit` reads.
    OverwriteV,
}

/// Thread 0 loads `%v` from `buf[0]`, exchanges `buf[0]` with 0 (so memory no longer tells
/// the runs apart; `%old` holds the old value too), then does `after` and stores `%v` to
/// `out`; the other threads branch to the end at once (under the SIMT stack they wait there,
/// at the reconvergence point, where `exit` reads every register).
fn kernel(after: After) -> String {
    format!(
        r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 buf, .param .u64 out)
{{
    .reg .u32 %v;
    .reg .u32 %old;
    .reg .u64 %b;
    .reg .u64 %o;
    .reg .u32 %t;
    .reg .pred %others;
    mov.u32 %t, %tid.x;
    setp.ne.u32 %others, %t, 0;
    @%others bra END;
    ld.param.u64 %b, [buf];
    ld.param.u64 %o, [out];
    cvta.to.global.u64 %b, %b;
    cvta.to.global.u64 %o, %o;
    ld.global.u32 %v, [%b];
    atom.global.exch.b32 %old, [%b], 0;
    membar.gl;
    {}
    st.global.u32 [%o], %v;
END:
    ret;
}}
"#,
        match after {
            After::Store => "",
            After::Overwrite => "mov.u32 %v, 9; mov.u32 %old, 0;",
            After::OverwriteV => "mov.u32 %v, 9;",
        }
    )
}

/// A machine of one block of `threads` threads of `kernel(after)` whose `buf[0]` holds
/// `value`, stepped until thread 0 is at the `membar` (memory equal whatever `value` was,
/// `%v` and `%old` holding `value`).
fn at_membar(after: After, value: u32, model: WarpModel, threads: u32) -> Machine {
    let src = kernel(after);
    let p = load(&src);
    let membar = pc_of(&p, &src, 0, "membar");
    let l = launch(
        "k",
        1,
        threads,
        vec![u32_buffer("buf", &[value]), zeros("out", 1)],
        vec![ArgValue::Buffer(0), ArgValue::Buffer(1)],
    );
    let mut m = Machine::new(p, &l, &config(model, 4)).expect("launch");
    for _ in 0..100 {
        if m.warp_view(0, 0).is_some_and(|w| w.lane_pcs[0] == membar) {
            return m;
        }
        let c = m.enabled()[0];
        m.step(&c).expect("enabled");
    }
    panic!("the thread never reached the membar")
}

#[test]
fn states_that_differ_in_a_dead_register_are_one_state() {
    for model in [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads] {
        // With 3 threads, under the SIMT stack, thread 0 is active and the others wait at the
        // `ret` (a token that holds thread 0 too): thread 0's registers are live where it
        // resumes, the warp pc, not where it will wait.
        for threads in [1, 3] {
            let a = at_membar(After::Overwrite, 1, model, threads);
            let b = at_membar(After::Overwrite, 2, model, threads);
            assert_eq!(a.buffer(0), b.buffer(0));
            assert_eq!(
                a.state_fingerprint(),
                b.state_fingerprint(),
                "{model:?} {threads}"
            );
        }
    }
}

#[test]
fn registers_only_exit_reads_are_dead_unless_final_registers_are_observed() {
    for model in [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads] {
        let mut a = at_membar(After::OverwriteV, 1, model, 1);
        let mut b = at_membar(After::OverwriteV, 2, model, 1);
        // %old (the exchange's unused result) reaches `exit` only: dead by default.
        assert_eq!(a.final_registers(), FinalRegisters::Unobserved);
        assert_eq!(a.state_fingerprint(), b.state_fingerprint(), "{model:?}");
        // Live while final registers are observed.
        a.set_final_registers(FinalRegisters::Observed);
        b.set_final_registers(FinalRegisters::Observed);
        assert_ne!(a.state_fingerprint(), b.state_fingerprint(), "{model:?}");
        a.set_final_registers(FinalRegisters::Unobserved);
        b.set_final_registers(FinalRegisters::Unobserved);
        assert_eq!(a.state_fingerprint(), b.state_fingerprint(), "{model:?}");
        // Setting it back takes the old fingerprints back (the blocks' memos are dropped).
        a.set_final_registers(FinalRegisters::Observed);
        b.set_final_registers(FinalRegisters::Observed);
        assert_ne!(a.state_fingerprint(), b.state_fingerprint(), "{model:?}");
        // Exited lanes: every register while observed, none (but `shfl` sources) otherwise.
        run(&mut a, &mut scheduler::RoundRobin::new(), 1000);
        run(&mut b, &mut scheduler::RoundRobin::new(), 1000);
        assert_eq!(a.buffer(1), b.buffer(1));
    }
}

#[test]
fn a_completed_block_keeps_its_final_registers_while_they_are_observed() {
    for model in [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads] {
        // %old (the exchange's result) differs, memory does not: only an observer of final
        // registers tells the ends apart, and only if the block leaves them behind.
        let ends = |exit: FinalRegisters| {
            let mut ends = [1, 2].map(|value| at_membar(After::OverwriteV, value, model, 1));
            for m in &mut ends {
                m.set_final_registers(exit);
                run(m, &mut scheduler::RoundRobin::new(), 1000);
            }
            ends
        };
        let [a, b] = ends(FinalRegisters::Observed);
        assert_eq!(a.buffer(1), b.buffer(1), "{model:?}");
        let old = RegId(reg(a.program(), 0, "%old"));
        assert_eq!(a.register(0, 0, 0, old), Some(1), "{model:?}");
        assert_eq!(b.register(0, 0, 0, old), Some(2), "{model:?}");
        assert_ne!(a.state_fingerprint(), b.state_fingerprint(), "{model:?}");
        // Unobserved (the default): the completed block leaves nothing behind.
        let [c, d] = ends(FinalRegisters::Unobserved);
        assert_eq!(c.register(0, 0, 0, old), None, "{model:?}");
        assert_eq!(c.state_fingerprint(), d.state_fingerprint(), "{model:?}");
    }
}

#[test]
fn states_that_differ_in_a_live_register_are_not() {
    for model in [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads] {
        // %v is stored after the membar: live, whatever reads final registers.
        let mut a = at_membar(After::Store, 1, model, 3);
        let mut b = at_membar(After::Store, 2, model, 3);
        for exit in [FinalRegisters::Observed, FinalRegisters::Unobserved] {
            a.set_final_registers(exit);
            b.set_final_registers(exit);
            assert_ne!(a.state_fingerprint(), b.state_fingerprint(), "{model:?}");
        }
        // The same runs to the end: they differ in `out`.
        let (mut a2, mut b2) = (a.clone(), b.clone());
        run(&mut a2, &mut scheduler::RoundRobin::new(), 1000);
        run(&mut b2, &mut scheduler::RoundRobin::new(), 1000);
        assert_ne!(a2.buffer(1), b2.buffer(1));
    }
}

#[test]
fn the_same_state_reached_with_different_dead_values_has_the_same_future() {
    // Runs from two states with one fingerprint (%v and %old dead) end in the same memory
    // and status.
    for model in [WarpModel::SimtStack, WarpModel::Its] {
        let mut a = at_membar(After::Overwrite, 1, model, 3);
        let mut b = at_membar(After::Overwrite, 2, model, 3);
        assert_eq!(a.state_fingerprint(), b.state_fingerprint());
        let ta = run(&mut a, &mut scheduler::RoundRobin::new(), 1000);
        let tb = run(&mut b, &mut scheduler::RoundRobin::new(), 1000);
        assert_eq!(ta, tb);
        assert_eq!(a.buffer(1), b.buffer(1));
        assert_eq!(words(&a.buffer(1)), vec![9]);
        assert_eq!(a.state_fingerprint(), b.state_fingerprint());
    }
}

/// Loads `%v` from `buf[0]` and zeroes `buf[0]`, calls `inc`, then with `overwrite` overwrites
/// `%v` before storing it (dead in the caller while the callee runs), else stores it (live).
fn caller(overwrite: bool) -> String {
    format!(
        r#"
.version 7.0
.target sm_70
.address_size 64
.func (.reg .u32 %out) inc(.reg .u32 %a)
{{
    .reg .u32 %t;
    add.u32 %t, %a, 1;
    membar.gl;
    mov.u32 %out, %t;
    ret;
}}
.visible .entry k(.param .u64 buf)
{{
    .reg .u32 %v;
    .reg .u32 %old;
    .reg .u32 %y;
    .reg .u64 %b;
    ld.param.u64 %b, [buf];
    cvta.to.global.u64 %b, %b;
    ld.global.u32 %v, [%b];
    atom.global.exch.b32 %old, [%b], 0;
    mov.u32 %old, 0;
    call (%y), inc, (%old);
    {}
    add.u32 %v, %v, %y;
    st.global.u32 [%b], %v;
    ret;
}}
"#,
        if overwrite { "mov.u32 %v, 3;" } else { "" }
    )
}

/// One thread of `caller(overwrite)` with `buf[0] = value`, stepped into `inc`'s `membar`.
fn in_callee(overwrite: bool, value: u32, model: WarpModel) -> Machine {
    let src = caller(overwrite);
    let p = load(&src);
    let membar = pc_of(&p, &src, 0, "membar");
    let l = launch(
        "k",
        1,
        1,
        vec![u32_buffer("buf", &[value])],
        vec![ArgValue::Buffer(0)],
    );
    let mut m = Machine::new(p, &l, &config(model, 4)).expect("launch");
    for _ in 0..100 {
        if m.warp_view(0, 0).is_some_and(|w| w.lane_pcs[0] == membar) {
            assert_eq!(m.warp_view(0, 0).unwrap().depth[0], 1);
            return m;
        }
        let c = m.enabled()[0];
        m.step(&c).expect("enabled");
    }
    panic!("the thread never reached the callee's membar")
}

#[test]
fn a_caller_keeps_the_registers_live_where_the_call_returns() {
    for model in [WarpModel::SimtStack, WarpModel::Its] {
        let (a, b) = (in_callee(true, 1, model), in_callee(true, 2, model));
        assert_eq!(a.state_fingerprint(), b.state_fingerprint(), "{model:?}");
        let (a, b) = (in_callee(false, 1, model), in_callee(false, 2, model));
        assert_ne!(a.state_fingerprint(), b.state_fingerprint(), "{model:?}");
    }
}
