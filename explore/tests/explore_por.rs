//! Persistent sets with the cycle proviso (`explore::ample`, `Por::Persistent`) against the
//! full stateful search (`Por::None`), on everything small enough for both: the corpus kernels
//! under both warp models at warp and block level, the thesis's spin lock (Listing 6.2) and the
//! grid barrier at several grid sizes, and the AXB progress suite translated to PTX. The
//! outcomes (with their counts of distinct final states, faults aside) and the verdicts of the
//! models the reduction preserves must be equal, every lasso must replay and close, and the
//! models it does not preserve get no verdict. A persistent set that ignored a warp's other
//! choices, or a search without the cycle proviso, loses lassos here.

use corpus::{corpus_machines, kernels_dir, load_file, read_launch, resolve};
use explore::progress::suite::{self, ExpectedRow};
use explore::progress::{ProgressModel, axb};
use explore::{Exploration, Level, Limits, Por, explore_with};
use scheduler::Stop;
use scheduler::outcome::{Observe, Status};
use scheduler::replay::replay;
use semantics::machine::{Machine, MachineConfig, WarpModel};
use std::path::Path;
use std::sync::Arc;

/// States a search may take here (the kernels that need more are not compared), and for the
/// corpus, whose larger kernels would take minutes.
const MAX_STATES: usize = 100_000;
const CORPUS_MAX_STATES: usize = 10_000;

fn search(m: &Machine, level: Level, observe: &Observe, por: Por) -> Option<Exploration> {
    search_within(m, level, observe, por, MAX_STATES)
}

fn search_within(
    m: &Machine,
    level: Level,
    observe: &Observe,
    por: Por,
    max_states: usize,
) -> Option<Exploration> {
    let limits = Limits {
        max_states,
        ..Limits::default()
    };
    let x = explore_with(m, level, observe, limits, por, &Stop::never()).ok()?;
    x.bound_hit.is_none().then_some(x)
}

/// The lasso of `x` under `model`, if any, replays on `m` and its cycle closes.
fn lasso_replays(name: &str, m: &Machine, x: &Exploration, model: ProgressModel) {
    if let Some(lasso) = x.lasso(model) {
        corpus::assert_lasso_replays(&format!("{name} {model}"), m, &lasso.stem, &lasso.cycle);
    }
}

/// Compares the two searches of `m`; the states of both, or `None` when either is bounded out.
fn compare(name: &str, m: &Machine, level: Level, observe: &Observe) -> Option<(usize, usize)> {
    compare_within(name, m, level, observe, MAX_STATES)
}

fn compare_within(
    name: &str,
    m: &Machine,
    level: Level,
    observe: &Observe,
    max_states: usize,
) -> Option<(usize, usize)> {
    let full = search_within(m, level, observe, Por::None, max_states)?;
    let reduced = search_within(m, level, observe, Por::Persistent, max_states)?;
    let counts = |x: &Exploration| -> Vec<_> {
        x.outcomes
            .iter()
            .map(|(o, i)| {
                // Another warp's fault may end the run in a different state (ample.rs).
                let faulted = matches!(o.status, Status::Error { .. });
                (o.clone(), (!faulted).then_some(i.states))
            })
            .collect()
    };
    assert_eq!(counts(&reduced), counts(&full), "{name}: outcomes differ");
    for model in ProgressModel::ALL {
        if Por::Persistent.preserves(model) {
            assert_eq!(
                reduced.verdict(model),
                full.verdict(model),
                "{name} {model}: verdicts differ"
            );
            assert!(reduced.verdict(model).is_some());
            assert_eq!(reduced.lasso(model).is_some(), full.lasso(model).is_some());
            lasso_replays(name, m, &reduced, model);
        } else {
            assert_eq!(reduced.verdict(model), None, "{name} {model}");
            assert_eq!(reduced.lasso(model), None, "{name} {model}");
        }
    }
    assert!(reduced.states() <= full.states(), "{name}: more states");
    Some((full.states(), reduced.states()))
}

#[derive(Default)]
struct Tally {
    compared: usize,
    smaller: usize,
    states: [usize; 2],
}

impl Tally {
    fn add(&mut self, states: Option<(usize, usize)>) -> bool {
        let Some((full, reduced)) = states else {
            return false;
        };
        self.compared += 1;
        self.smaller += (reduced < full) as usize;
        self.states[0] += full;
        self.states[1] += reduced;
        true
    }

    fn print(&self, what: &str) {
        println!(
            "{what}: {} compared, {} smaller; states {} full -> {} reduced",
            self.compared, self.smaller, self.states[0], self.states[1]
        );
    }
}

#[test]
fn corpus_verdicts_and_outcomes_are_the_full_searchs() {
    let mut tally = Tally::default();
    for (name, m, observe) in corpus_machines() {
        for level in [Level::Warps, Level::Blocks] {
            let name = format!("{name} {level:?}");
            tally.add(compare_within(
                &name,
                &m,
                level,
                &observe,
                CORPUS_MAX_STATES,
            ));
        }
    }
    tally.print("corpus");
    assert!(tally.compared >= 20, "{} compared", tally.compared);
    assert!(tally.smaller >= 5, "{} smaller", tally.smaller);
}

/// A corpus kernel with its launch file's buffers and arguments, on `grid` blocks.
fn kernel(name: &str, grid: u32, model: WarpModel) -> (Machine, Observe) {
    let ptx = kernels_dir().join(format!("{name}.ptx"));
    let program = load_file(&ptx).unwrap();
    let launch = read_launch(&ptx.with_extension("ron")).unwrap();
    let mut resolved = resolve(&launch, &program).unwrap();
    resolved.config.grid = [grid, 1, 1];
    let observe = corpus::observe_globals(&program, resolved.print.clone());
    let config = MachineConfig {
        warp_model: model,
        ..MachineConfig::default()
    };
    let m = Machine::new(Arc::new(program), &resolved.config, &config).unwrap();
    (m, observe)
}

#[test]
fn spin_lock_and_grid_barrier_are_the_full_searchs() {
    let mut tally = Tally::default();
    for model in [WarpModel::SimtStack, WarpModel::Its] {
        for grid in 2..=3 {
            for name in ["spinlock", "grid_barrier"] {
                let (m, observe) = kernel(name, grid, model);
                let what = format!("{name} {grid} blocks {model:?}");
                assert!(
                    tally.add(compare(&what, &m, Level::Blocks, &observe)) || grid == 3,
                    "{what}: bounded out"
                );
            }
        }
    }
    tally.print("spin lock and grid barrier");
    assert!(tally.smaller >= 2, "{} smaller", tally.smaller);
}

fn progress_suite() -> Option<std::path::PathBuf> {
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/progress");
    suite::locate(std::env::var_os(suite::ENV).as_deref(), &default)
}

/// The AXB progress suite in the blocks layout (each test thread a block of one thread): the
/// reduced search's `unfair` and `fair` verdicts equal `expected.csv` (which the full search
/// matches, `progress_ptx`), and on every 8th test the two searches are compared whole.
#[test]
fn progress_suite_verdicts_are_the_full_searchs() {
    let Some(dir) = progress_suite() else {
        eprintln!("progress conformance suite not found; skipping");
        return;
    };
    let csv = std::fs::read_to_string(dir.join("expected.csv")).unwrap();
    let rows: Vec<ExpectedRow> = suite::parse_expected(&csv).unwrap();
    let observe = Observe::default();
    let mut tally = Tally::default();
    let mut mismatches = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let src =
            std::fs::read_to_string(dir.join("tests").join(format!("{}.txt", row.test))).unwrap();
        let test = axb::parse(&row.test, &src).unwrap();
        let text = explore::axb_ptx::translate(
            &test,
            explore::axb_ptx::Layout::Blocks,
            explore::axb_ptx::Read::Volatile,
        );
        let parsed = ptx_parser::parse(&text);
        let program = semantics::load(&parsed.module, &text).unwrap().0;
        let launch = explore::axb_ptx::launch(&test, explore::axb_ptx::Layout::Blocks);
        let m = Machine::new(Arc::new(program), &launch, &MachineConfig::default()).unwrap();
        let x = search(&m, Level::Blocks, &observe, Por::Persistent).expect("within the bound");
        for model in ProgressModel::ALL {
            if Por::Persistent.preserves(model) {
                let want = row.verdicts[model.index()];
                if x.verdict(model) != Some(want) {
                    mismatches.push(format!("{} {model}: {:?}", row.test, x.verdict(model)));
                }
                lasso_replays(&row.test, &m, &x, model);
            }
        }
        if i % 8 == 0 {
            tally.add(compare(&row.test, &m, Level::Blocks, &observe));
        }
    }
    tally.print("progress suite (every 8th)");
    assert!(mismatches.is_empty(), "{mismatches:?}");
    assert!(tally.compared >= 50, "{} compared", tally.compared);
}

/// The reduced search is the same at any number of threads: which successor is a state's
/// persistent singleton is decided as states are entered, in node order.
#[test]
fn the_reduced_search_is_the_same_at_any_jobs() {
    // States explored through a reduced set, over both kernels: the comparison must cover some
    // (the spin lock's exits are folded into transactions, which leaves it none of its own).
    let mut reduced = 0;
    for (name, grid) in [("grid_barrier", 3), ("spinlock", 3)] {
        let (m, observe) = kernel(name, grid, WarpModel::SimtStack);
        let run = |jobs| {
            let limits = Limits {
                max_states: 200_000,
                jobs,
                ..Limits::default()
            };
            explore_with(
                &m,
                Level::Blocks,
                &observe,
                limits,
                Por::Persistent,
                &Stop::never(),
            )
            .unwrap()
        };
        let (one, two) = (run(1), run(2));
        assert_eq!(one.states(), two.states(), "{name}");
        assert_eq!(one.transitions(), two.transitions(), "{name}");
        assert_eq!(one.reduced_states, two.reduced_states, "{name}");
        reduced += one.reduced_states;
        assert_eq!(one.outcomes, two.outcomes, "{name}");
        for model in ["unfair", "fair"] {
            let model: ProgressModel = model.parse().unwrap();
            assert_eq!(one.verdict(model), two.verdict(model), "{name}");
            assert_eq!(one.lasso(model), two.lasso(model), "{name}");
        }
    }
    assert!(reduced > 0, "no state was explored through a reduced set");
}

/// The cycle proviso: block 0 loops forever on steps of its own (every one a persistent
/// singleton), block 1 stores to global memory and exits. Without the proviso the reduced graph
/// follows block 0 alone round its loop and never lets block 1 run (the *ignoring* problem):
/// under weak `fair` the only cycle then leaves block 1 enabled and unscheduled, and the
/// verdict would be PASS, while block 0 really loops for ever in a fair run (block 1 done).
#[test]
fn the_cycle_proviso_keeps_a_warp_from_being_ignored() {
    let text = r#"
.version 6.0
.target sm_70
.address_size 64
.global .u32 x;
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    mov.u32 %r1, %ctaid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra LOOP;
    st.global.u32 [x], 1;
    ret;
LOOP:
    mov.u32 %r2, 0;
    bra.uni LOOP;
}
"#;
    let parsed = ptx_parser::parse(text);
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    let program = Arc::new(semantics::load(&parsed.module, text).unwrap().0);
    let launch = semantics::machine::LaunchConfig::kernel_1d("k", 2, 1);
    let m = Machine::new(program, &launch, &MachineConfig::default()).unwrap();
    let observe = Observe::default();
    let fair: ProgressModel = "fair".parse().unwrap();
    for folding in [explore::Folding::None, explore::Folding::Invisible] {
        let limits = Limits {
            folding,
            ..Limits::default()
        };
        let run =
            |por| explore_with(&m, Level::Blocks, &observe, limits, por, &Stop::never()).unwrap();
        let (full, reduced) = (run(Por::None), run(Por::Persistent));
        assert_eq!(full.verdict(fair), Some(explore::progress::Verdict::Fail));
        assert_eq!(reduced.verdict(fair), full.verdict(fair), "{folding}");
        lasso_replays("proviso", &m, &reduced, fair);
        if folding == explore::Folding::None {
            assert!(reduced.reduced_states > 0);
        }
    }
}

/// Block 0 stores 1 through `p` at offset `off`, then raises `flag`; block 1 loads `q[0]`, then
/// the flag, and records both in `out`. With `off = q - p` the store lands in `q`, which the
/// may-write summary names by the store's provenance (`p`): block 1's load of `q` then looks
/// settled although block 0 will write it, and folding it into block 1's next transaction would
/// lose the outcome `out = (0, 1)` (the load before the store, the flag after it).
const ESCAPE: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q, .param .u64 off, .param .u64 flag, .param .u64 out)
{
    .reg .pred %b;
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd2, [q];
    ld.param.u64 %rd3, [off];
    ld.param.u64 %rd4, [flag];
    ld.param.u64 %rd5, [out];
    mov.u32 %r1, %ctaid.x;
    setp.ne.u32 %b, %r1, 0;
    @%b bra READER;
    add.s64 %rd6, %rd1, %rd3;
    st.global.u32 [%rd6], 1;
    st.volatile.global.u32 [%rd4], 1;
    ret;
READER:
    ld.global.u32 %r2, [%rd2];
    ld.volatile.global.u32 %r3, [%rd4];
    st.global.u32 [%rd5], %r2;
    st.global.u32 [%rd5+4], %r3;
    ret;
}
"#;

fn escape_machine(off: Option<u64>) -> Machine {
    use semantics::machine::{ArgValue, BufferSpec, LaunchConfig};
    let parsed = ptx_parser::parse(ESCAPE);
    let program = Arc::new(semantics::load(&parsed.module, ESCAPE).unwrap().0);
    let buffer = |name: &str, words: usize| BufferSpec {
        name: name.into(),
        elem: ptx_parser::ScalarType::U32,
        bytes: vec![0; 4 * words],
    };
    let launch = |off: u64| LaunchConfig {
        args: vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Scalar {
                ty: ptx_parser::ScalarType::U64,
                bits: off,
            },
            ArgValue::Buffer(2),
            ArgValue::Buffer(3),
        ],
        buffers: vec![
            buffer("p", 1),
            buffer("q", 1),
            buffer("flag", 1),
            buffer("out", 2),
        ],
        ..LaunchConfig::kernel_1d("k", 2, 1)
    };
    let config = MachineConfig::default();
    let m = Machine::new(program.clone(), &launch(0), &config).unwrap();
    // The layout does not depend on the arguments: `q - p` lands in `q`.
    let off = off.unwrap_or_else(|| m.buffer_address(1).unwrap() - m.buffer_address(0).unwrap());
    Machine::new(program, &launch(off), &config).unwrap()
}

#[test]
fn a_store_that_leaves_its_buffer_makes_the_search_run_again_without_settled_loads() {
    let observe = Observe {
        buffers: vec![0, 1, 3],
        variables: Vec::new(),
        registers: Vec::new(),
    };
    let outs =
        |x: &Exploration| -> Vec<String> { x.outcomes.keys().map(|o| format!("{o:?}")).collect() };
    for (off, expect) in [
        (Some(0), explore::SettledLoads::Applied),
        (None, explore::SettledLoads::FellBack),
    ] {
        let m = escape_machine(off);
        let full = search(&m, Level::Blocks, &observe, Por::None).expect("full");
        let reduced = search(&m, Level::Blocks, &observe, Por::Persistent).expect("reduced");
        assert_eq!(full.settled_loads, explore::SettledLoads::Off);
        assert_eq!(outs(&reduced), outs(&full), "off {off:?}");
        assert_eq!(reduced.settled_loads, expect, "off {off:?}");
    }
    // The escaping store does reach `q`: the reader sees the store or not, the flag or not, in
    // all four combinations; the one with the flag but not the store is what a fold trusting
    // the summary would lose.
    let x = search(&escape_machine(None), Level::Blocks, &observe, Por::None).expect("full");
    assert_eq!(x.outcomes.len(), 4, "{:?}", outs(&x));
}

/// Under persistent sets the search starts with every warp parked at its first visible
/// instruction (`fold::park`): replaying the search's initial choices on a fresh machine leaves
/// no warp whose next step is one only it can see (its prologue: parameter loads, index
/// arithmetic). Without parking, the spin lock's blocks start at pc 0 and the states in which
/// one block has not run its prologue are nodes of every grid size. The unreduced search parks
/// nothing.
#[test]
fn the_reduced_search_starts_with_every_warp_parked() {
    for grid in [2, 3] {
        let (m, observe) = kernel("spinlock", grid, WarpModel::SimtStack);
        let x = search(&m, Level::Blocks, &observe, Por::Persistent).expect("decided");
        let mut fresh = m.clone();
        let r = replay(&mut fresh, &x.initial_choices, None, None, false);
        assert_eq!(r.divergence, None);
        let invisible: Vec<_> = fresh
            .enabled()
            .iter()
            .filter(|c| c.warp().is_some())
            .filter(|c| explore::fold::invisible(&fresh.footprint(c), false))
            .copied()
            .collect();
        assert!(
            invisible.is_empty(),
            "{grid} blocks: warps not parked at the root: {invisible:?}"
        );
        let unreduced = search(&m, Level::Blocks, &observe, Por::None).expect("decided");
        let mut fresh = m.clone();
        replay(&mut fresh, &unreduced.initial_choices, None, None, false);
        assert!(
            fresh
                .enabled()
                .iter()
                .any(|c| explore::fold::invisible(&fresh.footprint(c), false)),
            "{grid} blocks: the unreduced search starts where the launch does"
        );
    }
}

/// Issue 14's growth bound on the spin lock, as `explore --progress fair --level blocks` runs it
/// (persistent sets, symmetry over blocks): at most x3 states per added block. Parking every
/// warp at the root and folding the exits of warps alone in their blocks (both under persistent
/// sets only) take it from 65, 226, 603, 1,349 states at 2..5 blocks (x3.48 from 2 to 3) to
/// 43, 107, 212, 368; the verdict stays the full search's (compared above).
#[test]
fn the_spin_lock_grows_at_most_x3_per_block() {
    let mut last = None;
    for grid in 2..=5 {
        let (m, observe) = kernel("spinlock", grid, WarpModel::SimtStack);
        let x = explore::explore_symmetric(
            &m,
            Level::Blocks,
            &observe,
            Limits {
                max_states: MAX_STATES,
                ..Limits::default()
            },
            Por::Persistent,
            explore::Symmetry::Blocks,
            &Stop::never(),
        )
        .expect("explored");
        assert!(x.bound_hit.is_none(), "{grid} blocks: bounded");
        let states = x.states();
        if let Some(before) = last {
            assert!(
                states <= 3 * before,
                "{grid} blocks: {states} states, more than x3 the {before} of one block fewer"
            );
        }
        last = Some(states);
    }
}
