//! The may-write summary (`semantics::load::may_write`): per address, the global memory a
//! thread there may still write, named by where the store's address came from.

mod machine_common;

use machine_common::*;
use semantics::Program;
use semantics::program::{Atom, FuncId, Pc, Provenance};

/// The address of the first instruction of function `f` whose PTX line contains `text`.
fn pc_of(p: &Program, src: &str, f: usize, text: &str) -> Pc {
    let lines: Vec<&str> = src.lines().collect();
    let func = &p.functions[f];
    (func.start..func.end)
        .find(|&pc| lines[p.source[pc as usize].ptx_line as usize - 1].contains(text))
        .unwrap_or_else(|| panic!("no instruction `{text}`"))
}

/// The set of the atom `atom` alone.
fn just(p: &Program, atom: Atom) -> Provenance {
    let i = p
        .may_write()
        .atoms()
        .iter()
        .position(|a| *a == atom)
        .unwrap_or_else(|| panic!("no atom {atom:?} in {:?}", p.may_write().atoms()));
    Provenance::atom(i)
}

/// Kernel `entry`'s parameter word at byte `offset`, 8 bytes.
fn param(entry: u32, offset: u32) -> Atom {
    Atom::Param {
        entry: FuncId(entry),
        offset,
        size: 8,
    }
}

const TWO_POINTERS: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 b, .param .u64 c)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    ld.param.u64 %rd9, [c];
    cvta.to.global.u64 %rd3, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd3, %rd4;
    st.global.u32 [%rd5], %r1;
    ld.global.u64 %rd6, [%rd9];
    st.global.u32 [%rd6], %r1;
    mov.u64 %rd7, 4096;
    st.global.u32 [%rd7], %r1;
    add.s64 %rd8, %rd2, %rd4;
    atom.global.add.u32 %r2, [%rd8+4], 1;
    st.shared.u32 [%rd8], %r1;
    ld.global.u32 %r3, [%rd3];
    ret;
}
"#;

#[test]
fn a_store_through_a_parameter_writes_that_parameter_and_a_loaded_pointer_is_top() {
    let p = load(TWO_POINTERS);
    let mw = p.may_write();
    let a = just(&p, param(0, 0));
    let b = just(&p, param(0, 8));
    let at = |text| pc_of(&p, TWO_POINTERS, 0, text);
    // Through `a`, moved through cvta and pointer arithmetic with an index.
    assert_eq!(mw.own(at("st.global.u32 [%rd5]")), a);
    // Through a pointer loaded from memory (even from `c`'s buffer), or a plain integer: Top.
    assert!(mw.own(at("st.global.u32 [%rd6]")).is_top());
    assert!(mw.own(at("st.global.u32 [%rd7]")).is_top());
    // An atomic through `b`; a shared store and a load write no global memory.
    assert_eq!(mw.own(at("atom.global")), b);
    assert_eq!(mw.own(at("st.shared")), Provenance::EMPTY);
    assert_eq!(mw.own(at("ld.global.u32 %r3")), Provenance::EMPTY);
    // Ahead: everything before the Top stores, only `b` after them, nothing at the end.
    assert!(mw.ahead(at("ld.param.u64 %rd1")).is_top());
    assert!(mw.ahead(at("mov.u64 %rd7")).is_top());
    assert_eq!(mw.ahead(at("add.s64 %rd8")), b);
    assert_eq!(mw.ahead(at("st.shared")), Provenance::EMPTY);
    assert_eq!(mw.ahead(at("ret")), Provenance::EMPTY);
}

const LOOP: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 b, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, 0;
    mov.u64 %rd3, %rd1;
LOOP:
    st.global.u32 [%rd3], %r2;
    add.s64 %rd3, %rd3, 4;
    add.s32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, %r1;
    @%p1 bra LOOP;
    st.global.u32 [%rd2], %r2;
    @%p1 st.global.u32 [%rd2+4], %r2;
    ret;
}
"#;

#[test]
fn a_loop_keeps_its_store_ahead_until_it_is_left() {
    let p = load(LOOP);
    let mw = p.may_write();
    let a = just(&p, param(0, 0));
    let b = just(&p, param(0, 8));
    let at = |text| pc_of(&p, LOOP, 0, text);
    // The pointer stepped through the loop keeps `a` (the loop's back edge joins).
    assert_eq!(mw.own(at("st.global.u32 [%rd3]")), a);
    // Anywhere in the loop (the back edge), both stores are ahead; after it, only `b`'s.
    assert_eq!(mw.ahead(at("add.s32 %r2, %r2, 1")), a.join(b));
    assert_eq!(mw.ahead(at("@%p1 bra LOOP")), a.join(b));
    assert_eq!(mw.ahead(at("st.global.u32 [%rd2], %r2")), b);
    // A guarded store may write.
    assert_eq!(mw.ahead(at("@%p1 st.global")), b);
    assert_eq!(mw.ahead(at("ret")), Provenance::EMPTY);
}

const CALL: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.global .align 4 .u32 counter;
.global .align 4 .u32 other[4];
.func bump()
{
    .reg .b32 %r<2>;
    atom.global.add.u32 %r1, [counter], 1;
    ret;
}
.func store_through(.param .u64 p)
{
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    st.global.u32 [%rd1], 1;
    ret;
}
.visible .entry k(.param .u64 a)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [a];
    call bump, ();
    mov.u64 %rd2, other;
    st.global.u32 [%rd2+4], 2;
    {
    .param .b64 arg;
    st.param.b64 [arg], %rd1;
    call store_through, (arg);
    }
    ret;
}
"#;

#[test]
fn a_call_writes_what_its_callee_may_write() {
    let p = load(CALL);
    let mw = p.may_write();
    let counter = p
        .variables
        .iter()
        .position(|v| v.name == "counter")
        .unwrap() as u32;
    let other = p.variables.iter().position(|v| v.name == "other").unwrap() as u32;
    let counter = just(&p, Atom::Variable(counter));
    let other = just(&p, Atom::Variable(other));
    let kernel = p.entry("k").unwrap().0 as usize;
    let bump = p.functions.iter().position(|f| f.name == "bump").unwrap();
    let store = p
        .functions
        .iter()
        .position(|f| f.name == "store_through")
        .unwrap();
    // A module variable named by an absolute address, and by its address in a register.
    assert_eq!(mw.own(pc_of(&p, CALL, bump, "atom.global")), counter);
    let at = |text| pc_of(&p, CALL, kernel, text);
    assert_eq!(mw.own(at("st.global.u32 [%rd2+4]")), other);
    // A device function's parameter is Top (the analysis does not follow arguments).
    assert!(mw.own(pc_of(&p, CALL, store, "st.global")).is_top());
    // Before the first call: everything; between the calls: `other` and the second callee's
    // Top; after the last call: nothing.
    assert!(mw.ahead(at("call bump")).is_top());
    assert!(mw.ahead(at("mov.u64 %rd2")).is_top());
    assert_eq!(mw.ahead(pc_of(&p, CALL, bump, "ret")), Provenance::EMPTY);
    assert_eq!(mw.ahead(pc_of(&p, CALL, bump, "atom.global")), counter);
    let ret = (p.functions[kernel].start..p.functions[kernel].end)
        .rev()
        .find(|&pc| {
            matches!(
                p.instructions[pc as usize].op,
                semantics::program::Op::Ret | semantics::program::Op::Exit
            )
        })
        .unwrap();
    assert_eq!(mw.ahead(ret), Provenance::EMPTY);
}

const CALL_BUMP_ONLY: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.global .align 4 .u32 counter;
.func bump()
{
    .reg .b32 %r<2>;
    atom.global.add.u32 %r1, [counter], 1;
    ret;
}
.visible .entry k(.param .u64 a)
{
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [a];
    st.global.u32 [%rd1], 1;
    call bump, ();
    ret;
}
"#;

#[test]
fn the_callee_is_ahead_of_the_call_and_not_after_it() {
    let p = load(CALL_BUMP_ONLY);
    let mw = p.may_write();
    let counter = p
        .variables
        .iter()
        .position(|v| v.name == "counter")
        .unwrap() as u32;
    let counter = just(&p, Atom::Variable(counter));
    let kernel = p.entry("k").unwrap().0;
    let a = just(&p, param(kernel, 0));
    let kernel = kernel as usize;
    let at = |text| pc_of(&p, CALL_BUMP_ONLY, kernel, text);
    assert_eq!(mw.ahead(at("st.global")), a.join(counter));
    assert_eq!(mw.ahead(at("call bump")), counter);
    assert_eq!(mw.ahead(at("call bump") + 1), Provenance::EMPTY);
}

const GENERIC: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 a)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<6>;
    .shared .align 4 .u32 s[32];
    ld.param.u64 %rd1, [a];
    mov.u32 %r1, %tid.x;
    st.u32 [%rd1], %r1;
    mov.u64 %rd2, s;
    cvta.shared.u64 %rd3, %rd2;
    st.u32 [%rd3], %r1;
    ret;
}
"#;

#[test]
fn a_generic_store_writes_global_memory_by_its_provenance() {
    let p = load(GENERIC);
    let mw = p.may_write();
    let at = |text| pc_of(&p, GENERIC, 0, text);
    // A generic store through a kernel pointer may hit that buffer.
    assert_eq!(mw.own(at("st.u32 [%rd1]")), just(&p, param(0, 0)));
    // Through a shared address moved to the generic window: no global buffer.
    assert_eq!(mw.own(at("st.u32 [%rd3]")), just(&p, Atom::NonGlobal));
    assert!(!mw.own(at("st.u32 [%rd3]")).is_top());
}
