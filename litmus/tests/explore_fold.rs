//! The fold of invisible steps (`explore::fold`) against the unreduced search
//! (`Folding::None`), on everything small enough for both: corpus kernels (SIMT stack and
//! ITS), the PTX litmus suite, the AXB progress tests translated to PTX, the thesis's spin lock
//! and kernels that loop forever on invisible steps alone. Compared: the outcome sets, the
//! termination verdict under every progress model, the existence of a lasso (and that the
//! folded search's lasso replays step by step and closes), and witnesses replaying to their
//! outcomes. The reduction is printed (`--nocapture`).

use corpus::{conformance_path, corpus_machines, litmus_files, observe_globals, workspace_root};

use explore::dfs::{DfsConfig, Memo, Reduction, outcomes};
use explore::progress::ProgressModel;
use explore::{Exploration, Folding, Level, Limits, explore};
use litmus::parse::parse;
use litmus::translate::translate;
use scheduler::outcome::{Observe, Outcome};
use scheduler::replay::{CycleCheck, replay};
use semantics::machine::{ArgValue, LaunchConfig, Machine, MachineConfig, MemoryKind, WarpModel};
use std::collections::BTreeSet;
use std::sync::Arc;

fn limits(folding: Folding, max_states: usize) -> Limits {
    Limits {
        max_states,
        folding,
        ..Limits::default()
    }
}

/// The conformance root: `$CUDASEM_CONFORMANCE`, else `<workspace>/../shared/conformance`.
fn replays_closed(m: &Machine, stem: &[traces::Choice], cycle: &[traces::Choice]) -> bool {
    let mut all = stem.to_vec();
    all.extend_from_slice(cycle);
    let mut fresh = m.clone();
    let r = replay(&mut fresh, &all, None, Some(stem.len()), false);
    r.divergence.is_none()
        && (cycle.is_empty() || matches!(r.cycle, Some(CycleCheck::Closed { .. })))
}

struct Tally {
    /// The unreduced search's state bound: larger programs are not compared.
    bound: usize,
    compared: usize,
    states: [usize; 2],
    lassos: usize,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            bound: 20_000,
            compared: 0,
            states: [0; 2],
            lassos: 0,
        }
    }
}

impl Tally {
    /// Compares the stateful search with and without the fold; `false` when the unreduced
    /// search is bounded out (nothing to compare).
    fn compare(&mut self, name: &str, m: &Machine, level: Level, observe: &Observe) -> bool {
        let Ok(full) = explore(m, level, observe, limits(Folding::None, self.bound)) else {
            return false;
        };
        if full.bound_hit.is_some() {
            return false;
        }
        let folded = explore(m, level, observe, limits(Folding::Invisible, self.bound)).unwrap();
        assert_eq!(folded.bound_hit, None, "{name}: the fold is bounded out");
        assert_eq!(
            keys(&folded),
            keys(&full),
            "{name} {level}: outcome sets differ"
        );
        assert!(
            folded.states() <= full.states(),
            "{name}: {} states folded, {} unreduced",
            folded.states(),
            full.states()
        );
        for (o, info) in &folded.outcomes {
            let mut fresh = m.clone();
            let r = replay(&mut fresh, &info.witness, None, None, false);
            assert_eq!(r.divergence, None, "{name}: witness of {o:?}");
            let t = fresh.termination().expect("a witness ends the run");
            assert_eq!(&Outcome::of(&fresh, t, observe), o, "{name}: witness");
        }
        for model in ProgressModel::ALL {
            assert_eq!(
                folded.verdict(model),
                full.verdict(model),
                "{name} {level} {model}: verdicts differ"
            );
            let (a, b) = (folded.lasso(model), full.lasso(model));
            assert_eq!(a.is_some(), b.is_some(), "{name} {level} {model}: lassos");
            if let Some(l) = a {
                assert!(
                    replays_closed(m, &l.stem, &l.cycle),
                    "{name} {level} {model}: the folded lasso does not replay"
                );
                self.lassos += 1;
            }
        }
        self.compared += 1;
        self.states[0] += full.states();
        self.states[1] += folded.states();
        true
    }

    fn print(&self, what: &str) {
        println!(
            "{what}: {} searches, {} lassos; states {} -> {} ({:.1}x)",
            self.compared,
            self.lassos,
            self.states[0],
            self.states[1],
            self.states[0] as f64 / self.states[1].max(1) as f64
        );
    }
}

fn keys(x: &Exploration) -> BTreeSet<Outcome> {
    x.outcomes.keys().cloned().collect()
}

/// The outcomes-only search: unreduced against sleep sets with the fold.
fn compare_dfs(name: &str, m: &Machine, observe: &Observe, max_transitions: u64) {
    let run = |reduction, folding| {
        outcomes(
            m,
            observe,
            DfsConfig {
                reduction,
                memo: Memo::States,
                max_transitions,
                folding,
            },
        )
    };
    let full = run(Reduction::None, Folding::None);
    if full.bound_hit.is_some() {
        return;
    }
    let folded = run(Reduction::SleepSets, Folding::Invisible);
    assert_eq!(folded.bound_hit, None, "{name}");
    let k =
        |r: &explore::dfs::DfsReport| -> BTreeSet<Outcome> { r.outcomes.keys().cloned().collect() };
    assert_eq!(k(&folded), k(&full), "{name}: DFS outcome sets differ");
    for (o, w) in &folded.outcomes {
        let mut fresh = m.clone();
        let r = replay(&mut fresh, w, None, None, false);
        assert_eq!(r.divergence, None, "{name}");
        let t = fresh.termination().expect("ends");
        assert_eq!(&Outcome::of(&fresh, t, observe), o, "{name}");
    }
}

fn ptx_machine(text: &str, grid: u32, block: u32, model: WarpModel) -> (Machine, Observe) {
    ptx_machine_with(text, grid, block, model, |_| {})
}

fn ptx_machine_with(
    text: &str,
    grid: u32,
    block: u32,
    model: WarpModel,
    edit: impl FnOnce(&mut LaunchConfig),
) -> (Machine, Observe) {
    let parsed = ptx_parser::parse(text);
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    let p = semantics::load(&parsed.module, text).unwrap().0;
    let observe = observe_globals(&p, Vec::new());
    let launch = LaunchConfig::kernel_1d("kernel", grid, block);
    let mut launch = launch;
    edit(&mut launch);
    let config = MachineConfig {
        warp_model: model,
        ..MachineConfig::default()
    };
    (
        Machine::new(Arc::new(p), &launch, &config).unwrap(),
        observe,
    )
}

/// [`ptx_machine`] for a kernel with one `.u32` parameter (7).
fn param_machine(text: &str, grid: u32, block: u32, model: WarpModel) -> (Machine, Observe) {
    let (m, observe) = ptx_machine_with(text, grid, block, model, |l| {
        l.args = vec![ArgValue::Scalar {
            ty: ptx_parser::ScalarType::U32,
            bits: 7,
        }];
    });
    (m, observe)
}

/// Block 0 spins forever on register-only steps; the other blocks store and exit.
const LOCAL_SPIN: &str = r#"
.version 6.0
.target sm_70
.address_size 64
.global .u32 flag = 0;
.visible .entry kernel()
{
    .reg .u32 %r<4>;
    .reg .pred %p;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, 0;
    setp.eq.u32 %p, %r1, 0;
    @%p bra SPIN;
    st.global.u32 [flag], %r1;
    exit;
SPIN:
    add.u32 %r2, %r2, 0;
    xor.b32 %r3, %r2, 1;
    bra SPIN;
}
"#;

/// Each block counts to N on registers (3 steps per iteration), then stores its count.
fn local_count(n: u32) -> String {
    format!(
        r#"
.version 6.0
.target sm_70
.address_size 64
.global .u32 flag = 0;
.visible .entry kernel()
{{
    .reg .u32 %r<4>;
    .reg .pred %p;
    mov.u32 %r2, 0;
LOOP:
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p, %r2, {n};
    @%p bra LOOP;
    mov.u32 %r1, %ctaid.x;
    add.u32 %r2, %r2, %r1;
    st.global.u32 [flag], %r2;
    exit;
}}
"#
    )
}

/// Each block sums its threads' ids plus a kernel parameter through shared memory between two
/// barriers; then every thread stores the sum to `out[ctaid]`. Threads with `tid >= live` skip
/// to the exit (a warp of them leaves its sibling alone in the block). No lane diverges from
/// its warp, so a warp alone in its block has two visible steps: the store and the exit.
fn block_private(live: u32) -> String {
    format!(
        r#"
.version 6.0
.target sm_70
.address_size 64
.global .u32 out[4];
.visible .entry kernel(.param .u32 k)
{{
    .reg .u32 %r<8>;
    .reg .u64 %rd<4>;
    .reg .pred %p<3>;
    .shared .u32 s[64];
    .shared .u32 sum;
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, {live};
    @%p1 bra END;
    ld.param.u32 %r2, [k];
    mov.u64 %rd3, s;
    mul.wide.u32 %rd1, %r1, 4;
    add.u64 %rd3, %rd3, %rd1;
    add.u32 %r5, %r1, %r2;
    st.shared.u32 [%rd3], %r5;
    setp.eq.u32 %p2, %r1, 0;
    @%p2 st.shared.u32 [sum], 0;
    bar.sync 0, {live};
    ld.shared.u32 %r5, [%rd3];
    atom.shared.add.u32 %r6, [sum], %r5;
    bar.sync 0, {live};
    ld.shared.u32 %r6, [sum];
    mov.u32 %r7, %ctaid.x;
    mul.wide.u32 %rd1, %r7, 4;
    mov.u64 %rd2, out;
    add.u64 %rd2, %rd2, %rd1;
    st.global.u32 [%rd2], %r6;
END:
    exit;
}}
"#
    )
}

#[test]
fn a_warp_alone_in_its_block_folds_its_shared_memory_and_barriers() {
    let mut tally = Tally::default();
    // One warp per block: its parameter load, shared accesses and barriers are invisible, so
    // each block has two scheduling points (the global store and the exit): 3^3 states
    // (before shared memory and barriers of a lone warp were folded: 1,331).
    let (m, observe) = param_machine(&block_private(32), 3, 32, WarpModel::SimtStack);
    assert!(tally.compare("one warp per block", &m, Level::Blocks, &observe));
    let x = explore(
        &m,
        Level::Blocks,
        &observe,
        limits(Folding::Invisible, 100_000),
    )
    .unwrap();
    assert_eq!(x.states(), 27, "one warp per block");
    assert_eq!(x.outcomes.len(), 1);
    compare_dfs("one warp per block", &m, &observe, 200_000);
    // Two live warps per block: shared memory and barriers stay scheduling points.
    let (m, observe) = param_machine(&block_private(64), 1, 64, WarpModel::SimtStack);
    assert!(tally.compare("two warps per block", &m, Level::Warps, &observe));
    // The second warp exits first: the first is alone from then on.
    let (m, observe) = param_machine(&block_private(32), 2, 64, WarpModel::SimtStack);
    assert!(tally.compare("one warp left", &m, Level::Warps, &observe));
    compare_dfs("one warp left", &m, &observe, 200_000);
    // Lane level and independent thread scheduling.
    let (m, observe) = param_machine(&block_private(4), 2, 4, WarpModel::Its);
    assert!(tally.compare("its lanes", &m, Level::Lanes, &observe));
    tally.print("block-private");
}

/// Thread 0 of each block stores `out[ctaid]`; the other lanes branch round it, and the warp
/// reconverges at the exit (an implicit `sync` there, deviation D2).
const DIVERGENT_STORE: &str = r#"
.version 6.0
.target sm_70
.address_size 64
.global .u32 out[4];
.visible .entry kernel()
{
    .reg .u32 %r<4>;
    .reg .u64 %rd<4>;
    .reg .pred %p;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p, %r1, 0;
    @%p bra DONE;
    mov.u32 %r2, %ctaid.x;
    mul.wide.u32 %rd1, %r2, 4;
    mov.u64 %rd2, out;
    add.u64 %rd2, %rd2, %rd1;
    st.global.u32 [%rd2], %r2;
DONE:
    exit;
}
"#;

#[test]
fn a_reconvergence_sync_is_invisible() {
    // Per block: the store, then the reconvergence sync folded with the exit: two scheduling
    // points, 3^3 states for three blocks. (When the sync was charged the exit it sits on,
    // 5^3 = 125.)
    let mut tally = Tally::default();
    let (m, observe) = ptx_machine(DIVERGENT_STORE, 3, 32, WarpModel::SimtStack);
    assert!(tally.compare("divergent store", &m, Level::Blocks, &observe));
    let x = explore(
        &m,
        Level::Blocks,
        &observe,
        limits(Folding::Invisible, 100_000),
    )
    .unwrap();
    assert_eq!(x.states(), 27);
    compare_dfs("divergent store", &m, &observe, 200_000);
    tally.print("divergent store");
}

#[test]
fn a_unit_looping_on_invisible_steps_is_still_a_lasso() {
    let mut tally = Tally::default();
    for grid in [1, 2, 3] {
        for model in [WarpModel::SimtStack, WarpModel::Its] {
            let (m, observe) = ptx_machine(LOCAL_SPIN, grid, 1, model);
            for level in [Level::Blocks, Level::Lanes] {
                let name = format!("local spin, {grid} blocks, {model:?}");
                assert!(tally.compare(&name, &m, level, &observe), "{name}");
                let x = explore(&m, level, &observe, limits(Folding::Invisible, 20_000)).unwrap();
                for model in ["unfair", "fair", "fair_strong", "obe"] {
                    let l = x.lasso(model.parse().unwrap());
                    assert!(l.is_some(), "{name}: no lasso under {model}");
                }
            }
        }
    }
    tally.print("local spin");
}

#[test]
fn long_invisible_runs_are_cut_and_keep_their_outcomes() {
    let mut tally = Tally::default();
    // 1,800 invisible steps: longer than one transaction may be.
    let (m, observe) = ptx_machine(&local_count(600), 1, 1, WarpModel::SimtStack);
    assert!(tally.compare("count 600", &m, Level::Blocks, &observe));
    let (m, observe) = ptx_machine(&local_count(5), 3, 1, WarpModel::SimtStack);
    assert!(tally.compare("count 5, 3 blocks", &m, Level::Blocks, &observe));
    compare_dfs("count 5, 3 blocks", &m, &observe, 200_000);
    let (m, observe) = ptx_machine(&local_count(5), 1, 3, WarpModel::Its);
    assert!(tally.compare("count 5, 3 lanes", &m, Level::Lanes, &observe));
    tally.print("local counts");
}

#[test]
fn thesis_spin_lock_keeps_verdicts_and_lassos() {
    let text =
        std::fs::read_to_string(workspace_root().join("tests/thesis/listing_6_2.ptx")).unwrap();
    let mut tally = Tally::default();
    for (grid, block, model, level) in [
        (1, 2, WarpModel::SimtStack, Level::Lanes),
        (1, 2, WarpModel::SimtStack, Level::Blocks),
        (2, 1, WarpModel::SimtStack, Level::Blocks),
        (3, 1, WarpModel::SimtStack, Level::Blocks),
        (1, 2, WarpModel::Its, Level::Lanes),
        (1, 3, WarpModel::Threads, Level::Lanes),
        (2, 2, WarpModel::Its, Level::Warps),
    ] {
        let (m, observe) = ptx_machine(&text, grid, block, model);
        let name = format!("listing 6.2 {grid}x{block} {model:?}");
        assert!(tally.compare(&name, &m, level, &observe), "{name}");
        compare_dfs(&name, &m, &observe, 200_000);
    }
    tally.print("listing 6.2");
    assert!(tally.lassos > 0);
}

#[test]
fn corpus_kernels_keep_outcomes_verdicts_and_lassos() {
    // Most corpus kernels run 32 or more threads: only the small ones fit the unreduced search.
    let mut tally = Tally {
        bound: 6_000,
        ..Tally::default()
    };
    let mut bounded = Vec::new();
    for (name, m, observe) in corpus_machines() {
        let level = if m.total_blocks() > 1 {
            Level::Blocks
        } else {
            Level::Warps
        };
        if !tally.compare(&name, &m, level, &observe) {
            bounded.push(name.clone());
        }
        compare_dfs(&name, &m, &observe, 30_000);
    }
    tally.print("corpus");
    println!("bounded out without the fold: {bounded:?}");
    assert!(tally.compared >= 10, "{} compared", tally.compared);
    assert!(tally.states[1] < tally.states[0]);
}

/// The litmus explorer and the stateful search on every translated litmus test, flat memory.
#[test]
fn litmus_tests_keep_outcomes_and_verdicts() {
    let dir = conformance_path().join("ptx-litmus");
    let mut files = Vec::new();
    litmus_files(&dir, &mut files);
    assert!(
        !files.is_empty(),
        "no litmus files under {}: this test needs the conformance suite",
        dir.display()
    );
    let mut tally = Tally::default();
    let (mut litmus_compared, mut litmus_states) = (0usize, [0usize; 2]);
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let Ok(test) = parse(&text) else { continue };
        let Ok(t) = translate(&test, MemoryKind::Flat) else {
            continue;
        };
        let Ok(m) = litmus::start(&t) else {
            continue;
        };
        // Every global, and the condition's registers (the threads' final registers).
        let mut observe = observe_globals(m.program(), Vec::new());
        observe.registers = t.observe(m.program()).registers;
        let name = f.display().to_string();
        let stop = scheduler::Stop::never();
        let full = litmus::search::explore_until(m.clone(), &t, 20_000, Folding::None, &stop);
        if !full.bounded {
            let folded =
                litmus::search::explore_until(m.clone(), &t, 20_000, Folding::Invisible, &stop);
            assert!(!folded.bounded, "{name}");
            let k = |x: &litmus::search::Exploration| -> Vec<Vec<i64>> {
                x.outcomes.keys().cloned().collect()
            };
            assert_eq!(k(&folded), k(&full), "{name}: litmus outcomes differ");
            assert_eq!(folded.deadlocks > 0, full.deadlocks > 0, "{name}");
            assert_eq!(folded.faults > 0, full.faults > 0, "{name}");
            litmus_compared += 1;
            litmus_states[0] += full.states;
            litmus_states[1] += folded.states;
        }
        let level = if m.total_blocks() > 1 {
            Level::Blocks
        } else {
            Level::Warps
        };
        tally.compare(&name, &m, level, &observe);
    }
    println!(
        "litmus explorer: {litmus_compared} tests; states {} -> {} ({:.1}x)",
        litmus_states[0],
        litmus_states[1],
        litmus_states[0] as f64 / litmus_states[1].max(1) as f64
    );
    tally.print("litmus, stateful search");
    assert!(litmus_compared >= 100, "{litmus_compared} compared");
    assert!(tally.compared >= 100, "{} compared", tally.compared);
}

/// The AXB progress tests translated to PTX (both layouts): every verdict and lasso of the
/// unreduced search.
#[test]
fn progress_tests_keep_verdicts_and_lassos() {
    use explore::axb_ptx::{Layout, Read, launch, translate};
    use explore::progress::{axb, suite};
    let default = conformance_path().join("progress");
    let Some(dir) = suite::locate(std::env::var_os(suite::ENV).as_deref(), &default) else {
        eprintln!("progress conformance suite not found; skipping");
        return;
    };
    let csv = std::fs::read_to_string(dir.join("expected.csv")).unwrap();
    let rows = suite::parse_expected(&csv).unwrap();
    let mut tally = Tally::default();
    // Every fourth test: the whole suite runs folded in `progress_ptx`.
    for row in rows.iter().step_by(4) {
        let src =
            std::fs::read_to_string(dir.join("tests").join(format!("{}.txt", row.test))).unwrap();
        let test = axb::parse(&row.test, &src).unwrap();
        for (layout, read, model, level) in [
            (
                Layout::Blocks,
                Read::Volatile,
                WarpModel::SimtStack,
                Level::Blocks,
            ),
            (Layout::Lanes, Read::Atomic, WarpModel::Its, Level::Lanes),
        ] {
            let text = translate(&test, layout, read);
            let parsed = ptx_parser::parse(&text);
            let p = semantics::load(&parsed.module, &text).unwrap().0;
            let launch = launch(&test, layout);
            let config = MachineConfig {
                warp_model: model,
                ..MachineConfig::default()
            };
            let m = Machine::new(Arc::new(p), &launch, &config).unwrap();
            let name = format!("{} {layout:?}", row.test);
            tally.compare(&name, &m, level, &Observe::default());
        }
    }
    tally.print("progress tests");
    assert!(tally.compared >= 100, "{} compared", tally.compared);
}
