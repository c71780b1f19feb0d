//! The thesis's figures as snapshot tests (seed 003, Listings 5.5-5.7 -> Figures 5.2-5.4; digest
//! T1-T3) and Listing 6.2 (T4-T6), on the thesis-dialect listings of `tests/thesis/`.
//!
//! Rows are labelled with the listing's line numbers (the `// listing line N` comments of the PTX
//! files); rows of prelude/epilogue instructions outside the listing are left out, so the tables
//! read like the figures.
mod machine_common;
use machine_common::*;
use semantics::Program;
use semantics::machine::render::{stack_rows, stack_table};
use semantics::machine::{ArgValue, LaunchConfig, Machine, Termination, WarpModel};
use std::collections::VecDeque;
use traces::Choice;

const L55: &str = include_str!("../../tests/thesis/listing_5_5.ptx");
const L56: &str = include_str!("../../tests/thesis/listing_5_6.ptx");
const L57: &str = include_str!("../../tests/thesis/listing_5_7.ptx");
const L62: &str = include_str!("../../tests/thesis/listing_6_2.ptx");

/// pc -> "N" for instructions marked `// listing line N`, and caller lines as their names.
fn labeller<'a>(p: &'a Program, src: &'a str) -> impl Fn(u32) -> Option<String> + 'a {
    let lines: Vec<&str> = src.lines().collect();
    move |pc: u32| {
        let line = p.source.get(pc as usize)?.ptx_line as usize;
        let text = lines.get(line.checked_sub(1)?)?;
        if text.contains("every lane is back at X") {
            return Some("x".to_string());
        }
        let i = text.find("// listing line ")?;
        let rest = &text[i + "// listing line ".len()..];
        Some(rest.split(':').next()?.trim().to_string())
    }
}

fn args(n: usize) -> Vec<ArgValue> {
    (0..n).map(ArgValue::Buffer).collect()
}

fn table(p: &Program, src: &str, events: &[traces::Event], ws: u32, delta: bool) -> String {
    let label = labeller(p, src);
    stack_table(&stack_rows(events, 0, 0), ws, delta, &label)
}

/// Picks issues first, then `Target{k}` from `ks` in order, else the first choice.
fn picker(ks: Vec<u32>) -> impl FnMut(&[Choice]) -> Choice {
    let mut ks: VecDeque<u32> = ks.into();
    move |en: &[Choice]| {
        if let Some(c) = en.iter().find(|c| matches!(c, Choice::Issue { .. })) {
            return *c;
        }
        if en.iter().any(|c| matches!(c, Choice::Target { .. })) {
            let k = ks.pop_front().unwrap_or(0);
            return *en
                .iter()
                .find(|c| matches!(c, Choice::Target { k: kk, .. } if *kk == k))
                .unwrap_or(&en[0]);
        }
        en[0]
    }
}

#[test]
fn figure_5_2_listing_5_5() {
    let p = load(L55);
    let l = launch(
        "listing_5_5",
        1,
        2,
        vec![
            u32_buffer("a", &[3, 7]),
            u32_buffer("b", &[3, 2]),
            u32_buffer("d", &[3, 5]),
            zeros("r", 2),
            zeros("c", 2),
        ],
        args(5),
    );
    let mut m = Machine::new(p.clone(), &l, &config(WarpModel::SimtStack, 2)).unwrap();
    let (t, ev) = run_observed(&mut m, 1000, picker(vec![]));
    assert_eq!(t, Termination::Completed);
    assert_eq!(words(&m.buffer(3)), [3, 1]);
    assert_eq!(words(&m.buffer(4)), [9, 5]);
    insta::assert_snapshot!(table(&p, L55, &ev, 2, false), @r"
    pc  α   τ
    1   11  ε
    2   11  (sync, 11, 10)
    3   10  (diverge, 01, 4) :: (sync, 11, 10)
    7   10  (diverge, 01, 4) :: (sync, 11, 10)
    9   01  (sync, 11, 10)
    4   01  (sync, 11, 10)
    5   01  (sync, 11, 10)
    9   11  ε
    10  11  ε
    ");
}

fn run_5_6(ks: Vec<u32>) -> (Machine, Vec<traces::Event>, std::sync::Arc<Program>) {
    let p = load(L56);
    let l = launch(
        "listing_5_6",
        1,
        4,
        vec![
            u32_buffer("sel", &[2, 1, 0, 1]),
            u32_buffer("a", &[9, 6, 4, 8]),
            u32_buffer("b", &[3, 2, 5, 4]),
            u32_buffer("d", &[2, 2, 4, 3]),
            zeros("r", 4),
            zeros("c", 4),
        ],
        args(6),
    );
    let mut m = Machine::new(p.clone(), &l, &config(WarpModel::SimtStack, 4)).unwrap();
    let (t, ev) = run_observed(&mut m, 1000, picker(ks));
    assert_eq!(t, Termination::Completed);
    (m, ev, p)
}

#[test]
fn figure_5_3_listing_5_6() {
    // Target groups are ordered by address: PATH-1 < PATH-2 < PATH-3. The figure picks PATH-2
    // (k = 1 of 3), then PATH-3 (k = 1 of the remaining PATH-1, PATH-3); the third pass is uniform.
    let (m, ev, p) = run_5_6(vec![1, 1]);
    assert_eq!(words(&m.buffer(4)), [3, 4, 5, 4]);
    assert_eq!(words(&m.buffer(5)), [6, 8, 20, 12]);
    insta::assert_snapshot!(table(&p, L56, &ev, 4, false), @r"
    pc  α     τ
    1   1111  (sync, 1111, 13)
    2   0101  (diverge, 1010, 2) :: (sync, 1111, 13)
    7   0101  (diverge, 1010, 2) :: (sync, 1111, 13)
    8   0101  (diverge, 1010, 2) :: (sync, 1111, 13)
    12  1010  (sync, 1111, 13)
    2   1000  (diverge, 0010, 2) :: (sync, 1111, 13)
    10  1000  (diverge, 0010, 2) :: (sync, 1111, 13)
    12  0010  (sync, 1111, 13)
    2   0010  (sync, 1111, 13)
    4   0010  (sync, 1111, 13)
    5   0010  (sync, 1111, 13)
    12  1111  ε
    13  1111  ε
    ");
}

#[test]
fn listing_5_6_every_target_order_gives_the_same_result() {
    // T2's property: for every order of target choices the lanes compute the same values.
    for k0 in 0..3 {
        for k1 in 0..2 {
            let (m, _, _) = run_5_6(vec![k0, k1]);
            assert_eq!(words(&m.buffer(4)), [3, 4, 5, 4], "order {k0} {k1}");
            assert_eq!(words(&m.buffer(5)), [6, 8, 20, 12], "order {k0} {k1}");
        }
    }
}

#[test]
fn figure_5_4_listing_5_7() {
    let p = load(L57);
    let l = launch(
        "listing_5_7",
        1,
        3,
        vec![
            u32_buffer("a", &[7, 4, 6]),
            u32_buffer("b", &[2, 4, 6]),
            u32_buffer("d", &[5, 1, 4]),
            u32_buffer("p2", &[0, 1, 0]),
            zeros("r", 3),
            zeros("c", 3),
            zeros("done", 3),
        ],
        args(7),
    );
    let mut m = Machine::new(p.clone(), &l, &config(WarpModel::SimtStack, 3)).unwrap();
    let (t, ev) = run_observed(&mut m, 1000, picker(vec![]));
    assert_eq!(t, Termination::Completed);
    assert_eq!(words(&m.buffer(4)), [1, 0, 25]);
    assert_eq!(words(&m.buffer(5)), [5, 0, 100]);
    assert_eq!(words(&m.buffer(6)), [1, 1, 1]);
    // The caller's `X` rows: every lane active, δ = 000 (T3).
    let rows = stack_rows(&ev, 0, 0);
    let at_x = &rows[rows.len() - 2];
    assert_eq!((at_x.active, at_x.disabled.any()), (0b111, 0));
    insta::assert_snapshot!(table(&p, L57, &ev, 3, true), @r"
    pc  α    δ    τ
    1   111  000  (call, 111, x)
    2   111  000  (sync, 111, 10) :: (call, 111, x)
    3   011  000  (diverge, 100, 4) :: (sync, 111, 10) :: (call, 111, x)
    7   001  0r0  (diverge, 100, 4) :: (sync, 111, 10) :: (call, 111, x)
    9   100  0r0  (sync, 111, 10) :: (call, 111, x)
    4   100  0r0  (sync, 111, 10) :: (call, 111, x)
    5   100  0r0  (sync, 111, 10) :: (call, 111, x)
    9   101  0r0  (call, 111, x)
    10  101  0r0  (call, 111, x)
    11  111  000  ε
    x   111  000  ε
    ");
}

fn listing_6_2(
    grid: u32,
    block: u32,
    model: WarpModel,
    ws: u32,
    max: u64,
) -> (Termination, Machine) {
    let p = load(L62);
    let l = LaunchConfig {
        kernel: Some("kernel".into()),
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![],
        args: vec![],
        globals: vec![],
        extern_values: Vec::new(),
    };
    let mut m = Machine::new(p, &l, &config(model, ws)).unwrap();
    let t = run(&mut m, &mut scheduler::RoundRobin::new(), max);
    (t, m)
}

#[test]
fn t4_listing_6_2_one_warp_of_two_never_terminates() {
    let (t, m) = listing_6_2(1, 2, WarpModel::SimtStack, 32, 2000);
    assert_eq!(t, Termination::StepLimit);
    assert_eq!(m.variable("lock").unwrap(), 0u32.to_le_bytes());
    let w = m.warp_view(0, 0).unwrap();
    assert_eq!(w.stack.len(), 1, "only the break token");
    assert_eq!(w.stack[0].kind, traces::TokenKind::Break);
    assert_eq!(w.active.count_ones(), 1);
    assert_eq!(
        w.disabled.brk.count_ones(),
        1,
        "the winner is parked with δ = break"
    );
}

#[test]
fn t5_listing_6_2_two_blocks_of_one_thread_terminate() {
    let (t, m) = listing_6_2(2, 1, WarpModel::SimtStack, 32, 10_000);
    assert_eq!(t, Termination::Completed);
    assert_eq!(m.variable("lock").unwrap(), 1u32.to_le_bytes());
    // Warp size 1: two warps of one block.
    let (t, m) = listing_6_2(1, 2, WarpModel::SimtStack, 1, 10_000);
    assert_eq!(t, Termination::Completed);
    assert_eq!(m.variable("lock").unwrap(), 1u32.to_le_bytes());
    // Independent thread scheduling also terminates under round-robin (a fair schedule).
    let (t, m) = listing_6_2(1, 2, WarpModel::Its, 32, 10_000);
    assert_eq!(t, Termination::Completed);
    assert_eq!(m.variable("lock").unwrap(), 1u32.to_le_bytes());
}

/// A warp's view says where its lanes are under either model: under ITS its `pc` is the lowest
/// live lane's (not the kernel's entry, which ITS warps do not keep), under the SIMT stack
/// every lane's pc is the warp's.
#[test]
fn warp_view_shows_where_the_lanes_are_under_each_model() {
    for model in [WarpModel::SimtStack, WarpModel::Its] {
        let (t, m) = listing_6_2(1, 2, model, 32, 6);
        assert_eq!(t, Termination::StepLimit, "{model:?}");
        let entry = m.program().functions[0].start;
        let v = m.warp_view(0, 0).unwrap();
        let lead = (!v.exited).trailing_zeros() as usize;
        assert_eq!(v.pc, v.lane_pcs[lead], "{model:?}");
        assert_ne!(
            v.pc, entry,
            "{model:?}: five steps in, the lanes left the entry"
        );
        if model == WarpModel::SimtStack {
            assert!(v.lane_pcs.iter().all(|&pc| pc == v.pc), "{v:?}");
        }
    }
}

#[test]
fn t6_listing_6_2_one_thread_terminates() {
    let (t, m) = listing_6_2(1, 1, WarpModel::SimtStack, 32, 10_000);
    assert_eq!(t, Termination::Completed);
    assert_eq!(m.variable("lock").unwrap(), 1u32.to_le_bytes());
}

/// Listing 5.3 after the stack transformation (thesis 5.1.3 step 3): the module-scope
/// `%stackBase` register moves the callee's frame, the callee reads its `.local` parameter
/// through it and writes its `.local` return value, and the caller reads `r` back: 3 * 9.
#[test]
fn listing_5_3_after_the_stack_transformation_returns_27() {
    let p = load(include_str!("../../tests/thesis/listing_5_3_after.ptx"));
    let l = LaunchConfig {
        kernel: Some("kernelEntryPoint".into()),
        grid: [1, 1, 1],
        block: [2, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![zeros("out", 4)],
        args: vec![ArgValue::Buffer(0)],
        globals: vec![],
        extern_values: Vec::new(),
    };
    for model in [WarpModel::SimtStack, WarpModel::Its] {
        let mut m = Machine::new(p.clone(), &l, &config(model, 32)).unwrap();
        let t = run(&mut m, &mut scheduler::RoundRobin::new(), 1000);
        assert_eq!(t, Termination::Completed, "{model:?}");
        // Two u64 results, read as u32 words.
        assert_eq!(words(&m.buffer(0)), vec![27, 0, 27, 0], "{model:?}");
    }
}
