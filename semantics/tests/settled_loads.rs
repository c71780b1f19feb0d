//! Loads of settled words ([`Machine::loads_only_settled_words`]): a load is settled when no
//! other warp may write the memory it reads from the current state on; and the check that a
//! store stays in the memory its provenance names ([`Machine::writes_within_provenance`]).

mod machine_common;

use machine_common::*;
use semantics::machine::{ArgValue, Machine, MachineConfig, MemoryKind, WarpModel};
use semantics::program::Pc;
use std::sync::Arc;
use traces::Choice;

/// The address of the first instruction of the kernel (function 0) whose PTX line contains
/// `text`.
fn pc_of(p: &semantics::Program, src: &str, text: &str) -> Pc {
    let lines: Vec<&str> = src.lines().collect();
    let f = &p.functions[0];
    (f.start..f.end)
        .find(|&pc| lines[p.source[pc as usize].ptx_line as usize - 1].contains(text))
        .unwrap_or_else(|| panic!("no instruction `{text}`"))
}

/// Block 0 stores into `in`, then every block loads `in` and `ro` and stores to `out`.
const ONE_WRITER: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 ro, .param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [ro];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %ctaid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra LOAD;
    st.global.u32 [%rd1], 7;
LOAD:
    ld.global.u32 %r2, [%rd2];
    ld.global.u32 %r3, [%rd1];
    ld.volatile.global.u32 %r4, [%rd1+4];
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd3, %rd4;
    st.global.u32 [%rd5], %r3;
    atom.global.add.u32 %r5, [%rd2], 0;
    ret;
}
"#;

fn one_writer(blocks: u32, config: &MachineConfig) -> (Arc<semantics::Program>, Machine) {
    let p = load(ONE_WRITER);
    let l = launch(
        "k",
        blocks,
        1,
        vec![
            zeros("in", 2),
            zeros("ro", 1),
            zeros("out", blocks as usize),
        ],
        vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Buffer(2),
        ],
    );
    let m = Machine::new(p.clone(), &l, config).expect("launch");
    (p, m)
}

/// The choice that steps warp 0 of `block` (the whole warp, or under ITS its one lane).
fn warp_choice(m: &Machine, block: u32) -> Choice {
    *m.enabled()
        .iter()
        .find(|c| matches!(c, Choice::Warp { block: b, .. } | Choice::Lanes { block: b, .. } if *b == block))
        .unwrap_or_else(|| panic!("block {block} cannot step: {:?}", m.enabled()))
}

/// Issues the next block.
fn issue(m: &mut Machine) {
    let c = *m
        .enabled()
        .iter()
        .find(|c| matches!(c, Choice::Issue { .. }))
        .expect("a block to issue");
    m.step(&c).unwrap();
}

/// Steps warp 0 of `block` until it stands at `pc`.
fn run_to(m: &mut Machine, block: u32, pc: Pc) {
    for _ in 0..100 {
        if m.warp_view(block, 0).map(|v| v.pc) == Some(pc) {
            return;
        }
        let c = warp_choice(m, block);
        m.step(&c).unwrap();
    }
    panic!("block {block} never reached pc {pc}");
}

fn settled(m: &Machine, block: u32) -> bool {
    m.loads_only_settled_words(&warp_choice(m, block))
}

fn flat(model: WarpModel) -> MachineConfig {
    config(model, 32)
}

#[test]
fn a_load_is_settled_once_no_other_warp_may_write_its_buffer() {
    for model in [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads] {
        let (p, mut m) = one_writer(2, &flat(model));
        let at = |text| pc_of(&p, ONE_WRITER, text);
        issue(&mut m);
        issue(&mut m);
        // Block 1 skips the store and stands at the load of `ro`: block 0's atomic on `ro` is
        // still ahead of it.
        run_to(&mut m, 1, at("ld.global.u32 %r2"));
        assert!(
            !settled(&m, 1),
            "{model:?}: block 0's atomic on `ro` is ahead"
        );
        // `in`: block 0 has not stored yet.
        run_to(&mut m, 1, at("ld.global.u32 %r3"));
        assert!(
            !settled(&m, 1),
            "{model:?}: block 0 may still store to `in`"
        );
        run_to(&mut m, 0, at("st.global.u32 [%rd1]"));
        assert!(!settled(&m, 1), "{model:?}: block 0 stands at its store");
        // A store is never a settled load.
        assert!(!settled(&m, 0));
        run_to(&mut m, 0, at("ld.global.u32 %r2"));
        assert!(settled(&m, 1), "{model:?}: block 0 is past its store");
        // A volatile load of a settled word is settled too.
        run_to(&mut m, 1, at("ld.volatile"));
        assert!(settled(&m, 1), "{model:?}: volatile load");
        // Block 1 never stores to `in`: block 0's own load of it is settled as well.
        run_to(&mut m, 0, at("ld.global.u32 %r3"));
        assert!(settled(&m, 0), "{model:?}: block 1 never stores to `in`");
    }
}

#[test]
fn a_block_not_issued_yet_runs_its_kernel_from_the_entry() {
    let (p, mut m) = one_writer(2, &flat(WarpModel::SimtStack));
    let at = |text| pc_of(&p, ONE_WRITER, text);
    issue(&mut m);
    run_to(&mut m, 0, at("ld.global.u32 %r3"));
    // Block 1 is not issued: from the entry it may store to `in` (the analysis does not know
    // that only block 0 takes the store).
    assert!(!settled(&m, 0));
    issue(&mut m);
    assert!(!settled(&m, 0), "block 1 at its entry");
    run_to(&mut m, 1, at("ld.global.u32 %r2"));
    assert!(settled(&m, 0), "block 1 has branched past the store");
}

#[test]
fn cached_memory_has_no_settled_loads() {
    let mut c = flat(WarpModel::SimtStack);
    c.memory = MemoryKind::Cached;
    let (p, mut m) = one_writer(1, &c);
    issue(&mut m);
    let pc = pc_of(&p, ONE_WRITER, "ld.global.u32 %r3");
    // One block alone: under flat memory its load of `in` is settled (nobody else writes).
    let (_, mut f) = one_writer(1, &flat(WarpModel::SimtStack));
    issue(&mut f);
    run_to(&mut f, 0, pc);
    assert!(settled(&f, 0));
    for _ in 0..200 {
        if m.warp_view(0, 0).map(|v| v.pc) == Some(pc) {
            break;
        }
        // Memory micro steps and the warp, in order.
        let c = m.enabled()[0];
        m.step(&c).unwrap();
    }
    assert_eq!(m.warp_view(0, 0).map(|v| v.pc), Some(pc));
    assert!(!settled(&m, 0));
}

/// A store through `p` at an index the launch gives: with a large index it lands in `q`.
const ESCAPE: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q, .param .u64 off)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd2, [off];
    ld.param.u64 %rd4, [q];
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], 1;
    ld.global.u32 %r1, [%rd4];
    ret;
}
"#;

#[test]
fn a_store_that_leaves_its_buffer_breaks_the_assumption_and_is_reported() {
    let p = load(ESCAPE);
    let store = pc_of(&p, ESCAPE, "st.global");
    let load_q = pc_of(&p, ESCAPE, "ld.global");
    let run = |off: u64| {
        let l = launch(
            "k",
            2,
            1,
            vec![zeros("p", 4), zeros("q", 4)],
            vec![
                ArgValue::Buffer(0),
                ArgValue::Buffer(1),
                ArgValue::Scalar {
                    ty: ptx_parser::ScalarType::U64,
                    bits: off,
                },
            ],
        );
        let mut m = Machine::new(p.clone(), &l, &flat(WarpModel::SimtStack)).unwrap();
        issue(&mut m);
        issue(&mut m);
        run_to(&mut m, 0, store);
        run_to(&mut m, 1, load_q);
        m
    };
    // In bounds: the store stays in `p`, and `q` is settled for block 1 although block 0 has
    // not stored yet (its store names `p`).
    let m = run(4);
    assert!(m.writes_within_provenance(&warp_choice(&m, 0)));
    assert!(settled(&m, 1));
    // `q` is the next buffer: a distance of `q - p` lands in it. The summary says the store
    // writes `p`; the check catches that it does not.
    let (bp, bq) = (m.buffer_address(0).unwrap(), m.buffer_address(1).unwrap());
    let m = run(bq - bp);
    assert!(!m.writes_within_provenance(&warp_choice(&m, 0)));
    // Loads and steps that store nothing satisfy it.
    assert!(m.writes_within_provenance(&warp_choice(&m, 1)));
}

/// A generic store through a kernel pointer: it may write the buffer.
const GENERIC: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 a)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [a];
    mov.u32 %r1, %ctaid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra LOAD;
    st.u32 [%rd1], 5;
LOAD:
    ld.u32 %r2, [%rd1];
    ret;
}
"#;

#[test]
fn a_generic_store_may_hit_global_memory() {
    let p = load(GENERIC);
    let l = launch("k", 2, 1, vec![zeros("a", 1)], vec![ArgValue::Buffer(0)]);
    let mut m = Machine::new(p.clone(), &l, &flat(WarpModel::SimtStack)).unwrap();
    issue(&mut m);
    issue(&mut m);
    let load_pc = pc_of(&p, GENERIC, "ld.u32");
    run_to(&mut m, 1, load_pc);
    // The generic load reads global memory that block 0's generic store may write.
    assert!(!settled(&m, 1));
    run_to(&mut m, 0, load_pc);
    assert!(settled(&m, 1));
}

const GRID_BARRIER: &str = include_str!("../../tests/kernels/grid_barrier.ptx");

/// The grid barrier of the corpus, round-robin: the load of `in[]` is settled from the start;
/// the spin's load of `count` is settled exactly once every block has added to it; the loads
/// of `partial[]` (after the barrier, once every block has stored its partial) always are.
#[test]
fn the_grid_barriers_read_only_and_finished_buffers_are_settled() {
    let p = load(GRID_BARRIER);
    let at = |text: &str| pc_of(&p, GRID_BARRIER, text);
    let load_in = at("ld.global.u32 \t%r23");
    let spin = at("ld.volatile.global.u32 \t%r27");
    let add = at("atom.global.add.u32");
    let partial_loads: Vec<Pc> = ["%r33", "%r35", "%r37", "%r39", "%r40"]
        .iter()
        .map(|r| at(&format!("ld.volatile.global.u32 \t{r}")))
        .collect();
    for blocks in [2u32, 3] {
        let n = blocks * 32;
        let l = launch(
            "grid_barrier",
            blocks,
            32,
            vec![
                u32_buffer("in", &(1..=n).collect::<Vec<_>>()),
                zeros("partial", blocks as usize),
                zeros("count", 1),
                zeros("out", blocks as usize),
            ],
            vec![
                ArgValue::Buffer(0),
                ArgValue::Buffer(1),
                ArgValue::Buffer(2),
                ArgValue::Buffer(3),
                s32(n as i32),
            ],
        );
        let mut m = Machine::new(p.clone(), &l, &flat(WarpModel::SimtStack)).unwrap();
        let mut added = 0;
        let (mut in_loads, mut spins_before, mut spins_after, mut partials) = (0, 0, 0, 0);
        for step in 0..100_000usize {
            if m.termination().is_some() {
                break;
            }
            let enabled = m.enabled().to_vec();
            // First the lowest choice (block 0 runs ahead and spins alone), then round-robin.
            let c = enabled[if step < 400 { 0 } else { step % enabled.len() }];
            if let Choice::Warp { block, warp } = c {
                let pc = m.warp_view(block, warp).unwrap().pc;
                let settled = m.loads_only_settled_words(&c);
                if pc == load_in {
                    assert!(settled, "in[] is read-only");
                    in_loads += 1;
                } else if pc == spin {
                    assert_eq!(settled, added == blocks, "count after {added} adds");
                    if settled {
                        spins_after += 1;
                    } else {
                        spins_before += 1;
                    }
                } else if partial_loads.contains(&pc) {
                    assert!(settled, "partial[] after the barrier");
                    partials += 1;
                } else if pc == add {
                    assert!(!settled, "an atomic is no load");
                    added += 1;
                }
                assert!(m.writes_within_provenance(&c));
            }
            m.step(&c).unwrap();
        }
        assert_eq!(
            m.termination(),
            Some(&semantics::machine::Termination::Completed)
        );
        assert_eq!(in_loads, blocks, "one warp load of in[] per block");
        assert_eq!(partials, blocks * blocks, "every block reads every partial");
        assert!(spins_before > 0, "block 0 spun before the last add");
        assert!(spins_after > 0, "some block spun after the last add");
    }
}

/// Loads that fault: lanes past the end of the buffer, and a misaligned one.
const FAULTS: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 a)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [a];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r2, [%rd3];
    ld.global.u32 %r3, [%rd1+2];
    ret;
}
"#;

#[test]
fn a_load_that_faults_is_not_settled() {
    let p = load(FAULTS);
    let indexed = pc_of(&p, FAULTS, "ld.global.u32 %r2");
    let misaligned = pc_of(&p, FAULTS, "ld.global.u32 %r3");
    let machine = |threads: u32| {
        let l = launch(
            "k",
            1,
            threads,
            vec![zeros("a", 1)],
            vec![ArgValue::Buffer(0)],
        );
        let mut m = Machine::new(p.clone(), &l, &flat(WarpModel::SimtStack)).unwrap();
        issue(&mut m);
        run_to(&mut m, 0, indexed);
        m
    };
    let mut m = machine(1);
    assert!(settled(&m, 0), "in bounds and aligned, and no other warp");
    run_to(&mut m, 0, misaligned);
    assert!(!settled(&m, 0), "misaligned");
    m.step(&warp_choice(&m, 0)).unwrap();
    assert!(m.termination().is_some(), "the misaligned load faults");
    // Two lanes: the second reads past the end of the one-word buffer.
    let m = machine(2);
    assert!(!settled(&m, 0), "lane 1 is out of bounds");
}

/// Block 0 calls `wait`, and stores to `a` after it returns; block 1 loads `a`.
const AFTER_RETURN: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.func wait()
{
    .reg .b32 %r<2>;
    mov.u32 %r1, 1;
    add.u32 %r1, %r1, 1;
    ret;
}
.visible .entry k(.param .u64 a)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [a];
    mov.u32 %r1, %ctaid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra LOAD;
    call wait, ();
    st.global.u32 [%rd1], 5;
LOAD:
    ld.global.u32 %r2, [%rd1];
    ret;
}
"#;

#[test]
fn a_caller_writes_after_its_callee_returns() {
    let p = load(AFTER_RETURN);
    let kernel = p.entry("k").unwrap().0 as usize;
    let wait = p.functions.iter().position(|f| f.name == "wait").unwrap();
    let line = |f: usize, text: &str| {
        let lines: Vec<&str> = AFTER_RETURN.lines().collect();
        let func = &p.functions[f];
        (func.start..func.end)
            .find(|&pc| lines[p.source[pc as usize].ptx_line as usize - 1].contains(text))
            .unwrap()
    };
    for model in [WarpModel::SimtStack, WarpModel::Its] {
        let l = launch("k", 2, 1, vec![zeros("a", 1)], vec![ArgValue::Buffer(0)]);
        let mut m = Machine::new(p.clone(), &l, &flat(model)).unwrap();
        issue(&mut m);
        issue(&mut m);
        run_to(&mut m, 1, line(kernel, "ld.global"));
        // Inside the callee nothing is ahead of block 0's pc; its caller's frame stores to `a`.
        run_to(&mut m, 0, line(wait, "add.u32"));
        assert_eq!(m.warp_view(0, 0).unwrap().depth[0], 1, "{model:?}");
        assert!(
            !settled(&m, 1),
            "{model:?}: block 0 stores after its call returns"
        );
        run_to(&mut m, 0, line(kernel, "ld.global"));
        assert!(settled(&m, 1), "{model:?}: block 0 is past its store");
    }
}

/// Block 0's warp diverges: lane 0 takes `OTHER` (first: the branch's target runs first),
/// while lane 1 waits on the SIMT stack to store to `a` on the fall-through path; block 1 loads
/// `a` (its lane 0 stores before it).
const DIVERGED: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 a)
{
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [a];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %tid.x;
    add.u32 %r3, %r1, %r2;
    setp.ne.u32 %p1, %r3, 1;
    @%p1 bra OTHER;
    st.global.u32 [%rd1], 5;
    bra.uni JOIN;
OTHER:
    add.u32 %r3, %r3, 1;
    add.u32 %r3, %r3, 1;
JOIN:
    ld.global.u32 %r4, [%rd1];
    ret;
}
"#;

#[test]
fn lanes_waiting_on_the_simt_stack_may_still_write() {
    let p = load(DIVERGED);
    let store = pc_of(&p, DIVERGED, "st.global");
    let join = pc_of(&p, DIVERGED, "ld.global");
    let other = pc_of(&p, DIVERGED, "add.u32 %r3, %r3, 1");
    let l = launch("k", 2, 2, vec![zeros("a", 1)], vec![ArgValue::Buffer(0)]);
    let mut m = Machine::new(p.clone(), &l, &flat(WarpModel::SimtStack)).unwrap();
    issue(&mut m);
    issue(&mut m);
    // Block 1 at its load, reconverged (not at the implicit `sync` of the join).
    for _ in 0..100 {
        let v = m.warp_view(1, 0).unwrap();
        if v.pc == join && v.stack.is_empty() {
            break;
        }
        m.step(&warp_choice(&m, 1)).unwrap();
    }
    let (mut stored, mut other_with_store_pending) = (false, 0);
    for _ in 0..100 {
        let v = m.warp_view(0, 0).unwrap();
        if v.pc == join && v.stack.is_empty() {
            break;
        }
        assert_eq!(
            settled(&m, 1),
            stored,
            "block 0 at pc {} (stored: {stored})",
            v.pc
        );
        if !stored && (other..other + 2).contains(&v.pc) {
            other_with_store_pending += 1;
        }
        stored |= v.pc == store;
        m.step(&warp_choice(&m, 0)).unwrap();
    }
    assert!(stored);
    // The warp ran `OTHER` while lane 1 waited on the stack to store: the case this is about.
    assert!(other_with_store_pending > 0);
    assert!(settled(&m, 1));
}

/// Block 0 stores through an `end` pointer (one past its buffer) at `end[-1]`; block 1 loads
/// the buffer through its `begin` pointer.
const END_POINTER: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 begin, .param .u64 end)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [begin];
    ld.param.u64 %rd2, [end];
    mov.u32 %r1, %ctaid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra LOAD;
    st.global.u32 [%rd2+-4], 9;
LOAD:
    ld.global.u32 %r2, [%rd1];
    ret;
}
"#;

#[test]
fn an_end_pointer_names_the_buffer_it_ends() {
    let p = load(END_POINTER);
    let store = pc_of(&p, END_POINTER, "st.global");
    let load_pc = pc_of(&p, END_POINTER, "ld.global");
    let machine = |end: u64| {
        let l = launch(
            "k",
            2,
            1,
            vec![zeros("a", 1)],
            vec![
                ArgValue::Buffer(0),
                ArgValue::Scalar {
                    ty: ptx_parser::ScalarType::U64,
                    bits: end,
                },
            ],
        );
        Machine::new(p.clone(), &l, &flat(WarpModel::SimtStack)).unwrap()
    };
    // The buffer's address (the layout does not depend on the arguments).
    let begin = machine(0).buffer_address(0).unwrap();
    let mut m = machine(begin + 4);
    issue(&mut m);
    issue(&mut m);
    run_to(&mut m, 0, store);
    run_to(&mut m, 1, load_pc);
    assert!(m.writes_within_provenance(&warp_choice(&m, 0)));
    assert!(
        !settled(&m, 1),
        "block 0 may still write the word through `end`"
    );
    run_to(&mut m, 0, load_pc);
    assert!(settled(&m, 1));
}
