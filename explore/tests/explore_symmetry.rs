//! The symmetry reduction over identical blocks (`explore::symmetry`) against the search
//! without it, on kernels whose blocks no thread can tell apart: the thesis's spin lock
//! (Listing 6.2 shape) at 2..4 blocks, a barrier-and-atomics kernel at 2..3 blocks, a lock never
//! released and a flag that never reaches its target (both loop for ever for some schedule),
//! and a token passed back and forth for ever, whose quotient has a cycle that permutes blocks
//! (the fallback). The verdicts of the models symmetry preserves, the outcome sets and the
//! lassos' existence must be equal; every lasso of the symmetric search must replay on a fresh
//! machine, close its cycle, and be fair under its model (checked here step by step, not by the
//! search's oracle). A kernel that reads `%ctaid` gets no symmetry, and says why.

use corpus::{kernels_dir, load_file, read_launch, resolve};
use explore::progress::{ModelKind, ProgressModel, UnitSet, Verdict};
use explore::{
    Exploration, Level, Limits, NotApplicable, Por, Symmetry, SymmetryUse, branches,
    explore_symmetric,
};
use scheduler::Stop;
use scheduler::outcome::Observe;
use scheduler::replay::{CycleCheck, replay};
use semantics::machine::{LaunchConfig, Machine, MachineConfig};
use std::collections::BTreeSet;
use std::sync::Arc;

const MAX_STATES: usize = 200_000;

fn search(
    m: &Machine,
    observe: &Observe,
    por: Por,
    symmetry: Symmetry,
    jobs: usize,
) -> Exploration {
    let limits = Limits {
        max_states: MAX_STATES,
        jobs,
        ..Limits::default()
    };
    let x = explore_symmetric(
        m,
        Level::Blocks,
        observe,
        limits,
        por,
        symmetry,
        &Stop::never(),
    )
    .expect("explored");
    assert_eq!(x.bound_hit, None, "bounded out");
    x
}

/// A machine of `blocks` blocks of `threads` threads running kernel `k` of `text`.
fn inline(text: &str, blocks: u32, threads: u32) -> Machine {
    inline_with(text, blocks, threads, &MachineConfig::default())
}

fn inline_with(text: &str, blocks: u32, threads: u32, config: &MachineConfig) -> Machine {
    let parsed = ptx_parser::parse(text);
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    let program = Arc::new(semantics::load(&parsed.module, text).unwrap().0);
    let launch = LaunchConfig::kernel_1d("k", blocks, threads);
    Machine::new(program, &launch, config).unwrap()
}

fn observe(vars: &[&str]) -> Observe {
    Observe {
        buffers: Vec::new(),
        variables: vars.iter().map(|v| v.to_string()).collect(),
        registers: Vec::new(),
    }
}

/// A corpus kernel with its launch file's buffers and arguments, on `grid` blocks.
fn corpus_kernel(name: &str, grid: u32) -> (Machine, Observe) {
    let ptx = kernels_dir().join(format!("{name}.ptx"));
    let program = load_file(&ptx).unwrap();
    let launch = read_launch(&ptx.with_extension("ron")).unwrap();
    let mut resolved = resolve(&launch, &program).unwrap();
    resolved.config.grid = [grid, 1, 1];
    let observe = corpus::observe_globals(&program, resolved.print.clone());
    let m = Machine::new(
        Arc::new(program),
        &resolved.config,
        &MachineConfig::default(),
    )
    .unwrap();
    (m, observe)
}

/// The models symmetry preserves.
fn preserved() -> impl Iterator<Item = ProgressModel> {
    ProgressModel::ALL
        .into_iter()
        .filter(|m| Symmetry::Blocks.preserves(*m))
}

/// `x`'s lasso under `model`, if any, replays on `m`, its cycle closes, and it is fair: under
/// `fair`, every unit live on the cycle steps in it or is disabled somewhere on it; a deadlock
/// (no cycle) ends with nothing enabled and the run not ended.
fn lasso_is_fair(name: &str, m: &Machine, x: &Exploration, model: ProgressModel) {
    let Some(lasso) = x.lasso(model) else {
        return;
    };
    let mut all = lasso.stem.clone();
    all.extend_from_slice(&lasso.cycle);
    let r = replay(&mut m.clone(), &all, None, Some(lasso.stem.len()), false);
    assert_eq!(r.divergence, None, "{name} {model}: the lasso diverges");
    let mut at = m.clone();
    for c in &lasso.stem {
        at.step(c).expect("the stem replays");
    }
    if lasso.cycle.is_empty() {
        assert!(branches(&at).is_empty(), "{name} {model}: not a deadlock");
        assert!(
            at.termination()
                .is_none_or(|t| !matches!(t, semantics::machine::Termination::Completed))
        );
        return;
    }
    assert!(
        matches!(r.cycle, Some(CycleCheck::Closed { .. })),
        "{name} {model}: the cycle does not close"
    );
    let units = &x.units;
    let live = UnitSet::all(units.count()).difference(units.done(&at));
    let (mut stepping, mut disabled) = (UnitSet::EMPTY, UnitSet::EMPTY);
    for c in &lasso.cycle {
        let enabled = branches(&at)
            .iter()
            .fold(UnitSet::EMPTY, |s, c| s.union(units.of(&at, c)));
        disabled = disabled.union(live.difference(enabled));
        stepping = stepping.union(units.of(&at, c));
        at.step(c).expect("the cycle replays");
    }
    if model.kind == ModelKind::Fair {
        let starved = live.difference(stepping).difference(disabled);
        assert!(
            starved.is_empty(),
            "{name} {model}: {} starve on the cycle",
            units.names(starved)
        );
    }
}

/// Compares the searches with and without symmetry on `m`, with and without persistent sets;
/// returns the states of both searches without persistent sets.
fn compare(name: &str, m: &Machine, observe: &Observe, expect: SymmetryUse) -> (usize, usize) {
    let mut states = (0, 0);
    for por in [Por::None, Por::Persistent] {
        let plain = search(m, observe, por, Symmetry::None, 1);
        let sym = search(m, observe, por, Symmetry::Blocks, 1);
        assert_eq!(plain.symmetry, SymmetryUse::Off);
        assert_eq!(sym.symmetry, expect, "{name}");
        let outcomes = |x: &Exploration| x.outcomes.keys().cloned().collect::<BTreeSet<_>>();
        assert_eq!(
            outcomes(&sym),
            outcomes(&plain),
            "{name} {por:?}: outcomes differ"
        );
        for model in preserved() {
            if !por.preserves(model) {
                continue;
            }
            assert!(sym.verdict(model).is_some(), "{name} {model}");
            assert_eq!(
                sym.verdict(model),
                plain.verdict(model),
                "{name} {por:?} {model}: verdicts differ"
            );
            assert_eq!(sym.lasso(model).is_some(), plain.lasso(model).is_some());
            lasso_is_fair(name, m, &sym, model);
        }
        for model in ProgressModel::ALL {
            if !Symmetry::Blocks.preserves(model) && sym.symmetry.applied() {
                assert_eq!(sym.verdict(model), None, "{name} {model}");
                assert_eq!(sym.lasso(model), None, "{name} {model}");
            }
        }
        assert!(
            sym.machine_states <= plain.machine_states,
            "{name}: more states"
        );
        // Identical at any number of threads.
        let two = search(m, observe, por, Symmetry::Blocks, 2);
        assert_eq!(two.states(), sym.states(), "{name}: --jobs 2");
        assert_eq!(two.transitions(), sym.transitions(), "{name}: --jobs 2");
        assert_eq!(two.outcomes, sym.outcomes, "{name}: --jobs 2");
        for model in preserved() {
            assert_eq!(
                two.lasso(model),
                sym.lasso(model),
                "{name} {model}: --jobs 2"
            );
        }
        if por == Por::None {
            states = (plain.machine_states, sym.machine_states);
        }
    }
    states
}

#[test]
fn the_spin_lock_is_decided_as_without_symmetry_from_fewer_states() {
    let mut last = 0;
    for grid in 2..=4 {
        let (m, observe) = corpus_kernel("spinlock", grid);
        let (plain, sym) = compare(
            &format!("spinlock {grid} blocks"),
            &m,
            &observe,
            SymmetryUse::Applied,
        );
        assert!(sym < plain, "{grid} blocks: {sym} of {plain} states");
        assert!(sym > last);
        last = sym;
        let fair: ProgressModel = "fair".parse().unwrap();
        let x = search(&m, &observe, Por::Persistent, Symmetry::Blocks, 1);
        assert_eq!(x.verdict(fair), Some(Verdict::Pass));
        assert_eq!(x.verdict("obe".parse().unwrap()), None);
    }
}

/// Every thread adds one to a counter, the block waits at a barrier, and each thread stores the
/// counter it then sees: blocks that pass the barrier in different orders store different
/// values.
const BARRIER_ATOMICS: &str = r#"
.version 6.0
.target sm_70
.address_size 64
.global .u32 ctr;
.global .u32 out[2];
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x;
    atom.global.add.u32 %r2, [ctr], 1;
    bar.sync 0;
    ld.global.u32 %r4, [ctr];
    shl.b32 %r6, %r1, 2;
    mov.u64 %rd1, out;
    cvt.u64.u32 %rd2, %r6;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
    ret;
}
"#;

#[test]
fn a_barrier_and_atomics_kernel_is_decided_as_without_symmetry() {
    // Warps of 32 lanes (one warp a block), and of one lane (two warps a block, which the
    // barrier holds apart: 3 blocks of those are too many states for the search without
    // symmetry here).
    for (grid, warp_size) in [(2, 32), (3, 32), (2, 1)] {
        let mut config = MachineConfig::default();
        config.device.warp_size = warp_size;
        let m = inline_with(BARRIER_ATOMICS, grid, 2, &config);
        let name = format!("barrier and atomics, {grid} blocks, warps of {warp_size}");
        let (plain, sym) = compare(&name, &m, &observe(&["ctr", "out"]), SymmetryUse::Applied);
        assert!(sym < plain, "{name}: {sym} of {plain} states");
    }
}

/// The lock is taken and never released: the blocks that lose spin for ever once the winner
/// has exited (a fair cycle of self-loops).
const LOCK_NEVER_RELEASED: &str = r#"
.version 6.0
.target sm_70
.address_size 64
.global .u32 lock;
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<2>;
LOOP:
    atom.global.cas.b32 %r1, [lock], 0, 1;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra LOOP;
    ret;
}
"#;

/// Each block adds one to a flag, then waits for it to reach 3, which two blocks never make it.
const FLAG_NEVER_REACHED: &str = r#"
.version 6.0
.target sm_70
.address_size 64
.global .u32 flag;
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    atom.global.add.u32 %r1, [flag], 1;
WAIT:
    ld.volatile.global.u32 %r2, [flag];
    setp.lt.u32 %p1, %r2, 3;
    @%p1 bra WAIT;
    ret;
}
"#;

#[test]
fn kernels_that_loop_for_ever_get_the_same_verdicts_and_fair_lassos() {
    let fair: ProgressModel = "fair".parse().unwrap();
    for grid in 2..=3 {
        let m = inline(LOCK_NEVER_RELEASED, grid, 1);
        compare(
            &format!("lock never released, {grid} blocks"),
            &m,
            &observe(&["lock"]),
            SymmetryUse::Applied,
        );
        let x = search(&m, &observe(&["lock"]), Por::None, Symmetry::Blocks, 1);
        assert_eq!(x.verdict(fair), Some(Verdict::Fail));
    }
    // Two blocks never bring the flag to 3; three do, once all have added.
    for (grid, verdict) in [(2, Verdict::Fail), (3, Verdict::Pass)] {
        let m = inline(FLAG_NEVER_REACHED, grid, 1);
        compare(
            &format!("flag never reached, {grid} blocks"),
            &m,
            &observe(&["flag"]),
            SymmetryUse::Applied,
        );
        let x = search(&m, &observe(&["flag"]), Por::None, Symmetry::Blocks, 1);
        assert_eq!(x.verdict(fair), Some(verdict), "{grid} blocks");
    }
}

/// Two identical blocks take a lock and release it, for ever: from the state where both wait,
/// block 1 taking the lock reaches the state where block 0 holds it with the blocks swapped, an
/// edge of the quotient that is not exact, on a cycle of the quotient. The search falls back.
const TOKEN_FOR_EVER: &str = r#"
.version 6.0
.target sm_70
.address_size 64
.global .u32 lock;
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
LOOP:
    atom.global.cas.b32 %r1, [lock], 0, 1;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra LOOP;
    atom.global.exch.b32 %r2, [lock], 0;
    bra.uni LOOP;
}
"#;

#[test]
fn a_quotient_cycle_that_permutes_blocks_falls_back_to_the_search_without_symmetry() {
    let fair: ProgressModel = "fair".parse().unwrap();
    for grid in 2..=3 {
        let m = inline(TOKEN_FOR_EVER, grid, 1);
        let name = format!("token for ever, {grid} blocks");
        let (plain, fell_back) = compare(&name, &m, &observe(&["lock"]), SymmetryUse::FellBack);
        // The fallback is the search without symmetry.
        assert_eq!(fell_back, plain, "{name}");
        let x = search(&m, &observe(&["lock"]), Por::None, Symmetry::Blocks, 1);
        assert_eq!(x.verdict(fair), Some(Verdict::Fail));
    }
}

#[test]
fn a_kernel_that_reads_its_block_number_gets_no_symmetry() {
    let text = r#"
.version 6.0
.target sm_70
.address_size 64
.global .u32 x;
.visible .entry k()
{
    .reg .b32 %r<2>;
    mov.u32 %r1, %ctaid.x;
    st.global.u32 [x], %r1;
    ret;
}
"#;
    let m = inline(text, 2, 1);
    let x = search(&m, &observe(&["x"]), Por::None, Symmetry::Blocks, 1);
    assert_eq!(
        x.symmetry,
        SymmetryUse::NotApplicable(NotApplicable::ReadsBlockIdentity)
    );
    // Both orders of the stores are outcomes, as without symmetry.
    assert_eq!(x.outcomes.len(), 2);
    let (m, globals) = corpus_kernel("grid_barrier", 2);
    let x = search(&m, &globals, Por::Persistent, Symmetry::Blocks, 1);
    assert_eq!(
        x.symmetry,
        SymmetryUse::NotApplicable(NotApplicable::ReadsBlockIdentity)
    );
    // One block: nothing to permute.
    let m = inline(LOCK_NEVER_RELEASED, 1, 1);
    let x = search(&m, &observe(&["lock"]), Por::None, Symmetry::Blocks, 1);
    assert_eq!(
        x.symmetry,
        SymmetryUse::NotApplicable(NotApplicable::OneBlock)
    );
}

/// A node's units that have stepped, renamed through a block permutation: each unit of block `b`
/// becomes the same unit of block `map[b]`, at every level.
#[test]
fn units_are_renamed_block_by_block() {
    let mut config = MachineConfig::default();
    config.device.warp_size = 1;
    let m = inline_with(LOCK_NEVER_RELEASED, 3, 2, &config);
    let set = |units: &[usize]| units.iter().fold(UnitSet::EMPTY, |s, &u| s.with(u));
    let map = [2, 0, 1];
    let blocks = explore::Units::new(&m, Level::Blocks).unwrap();
    assert_eq!(blocks.rename_blocks(set(&[0, 2]), &map), set(&[2, 1]));
    // Warps 0.0, 0.1 and 1.1 (two a block) become 2.0, 2.1 and 0.1.
    let warps = explore::Units::new(&m, Level::Warps).unwrap();
    assert_eq!(warps.rename_blocks(set(&[0, 1, 3]), &map), set(&[4, 5, 1]));
    let grids = explore::Units::new(&m, Level::Grids).unwrap();
    assert_eq!(grids.rename_blocks(set(&[0]), &map), set(&[0]));
}
