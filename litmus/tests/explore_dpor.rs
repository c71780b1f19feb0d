//! Source-set DPOR (`explore::dpor`, `Reduction::SourceDpor`) against the unreduced search
//! (`Reduction::None` with the state cache, every step a scheduling point), on everything
//! small enough for the unreduced search: the litmus families, the PTX litmus suite (Dat3M's
//! tests) under flat memory and some under cached memory, and the corpus kernels under both
//! warp models. The outcome sets must be equal exactly, and DPOR's witnesses must replay to
//! their outcomes. The reduction is printed (`--nocapture`). A DPOR that forgets to reverse a
//! race loses outcomes here; one that reverses too much fails the exact counts of
//! [`dpor_explores_one_execution_per_trace`].

use corpus::{conformance_path, corpus_machines, litmus_files, observe_globals, workspace_root};

use explore::Folding;
use explore::dfs::{DfsBound, DfsConfig, DfsReport, Memo, Reduction, outcomes_until};
use litmus::parse::parse;
use litmus::translate::translate;
use scheduler::Stop;
use scheduler::outcome::{Observe, Outcome};
use scheduler::replay::replay;
use semantics::machine::{Machine, MemoryKind};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const STATELESS: Memo = Memo::Stateless { max_depth: 400 };

/// One search, cut after 100,000 transitions or 20 seconds (a test's budget per search: a
/// kernel whose searches take longer is not compared, and the tally says so).
fn run(
    m: &Machine,
    observe: &Observe,
    reduction: Reduction,
    memo: Memo,
    folding: Folding,
) -> DfsReport {
    let stop = Arc::new(Stop::new());
    let done = Arc::new(AtomicBool::new(false));
    let timer = {
        let (stop, done) = (stop.clone(), done.clone());
        std::thread::spawn(move || {
            let start = Instant::now();
            while !done.load(Ordering::Relaxed) {
                if start.elapsed() > Duration::from_secs(20) {
                    stop.request();
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let r = outcomes_until(
        m,
        observe,
        DfsConfig {
            reduction,
            memo,
            max_transitions: 100_000,
            folding,
        },
        &stop,
    );
    done.store(true, Ordering::Relaxed);
    let _ = timer.join();
    r
}

fn keys(r: &DfsReport) -> BTreeSet<Outcome> {
    r.outcomes.keys().cloned().collect()
}

/// Every witness replays step by step to its outcome.
fn witnesses_replay(name: &str, m: &Machine, observe: &Observe, r: &DfsReport) {
    for (o, w) in &r.outcomes {
        let mut fresh = m.clone();
        let rr = replay(&mut fresh, w, None, None, false);
        assert_eq!(rr.divergence, None, "{name}");
        let t = fresh.termination().expect("a witness ends the run");
        assert_eq!(&Outcome::of(&fresh, t, observe), o, "{name}");
    }
}

fn litmus_machine(path: &std::path::Path, memory: MemoryKind) -> Option<(Machine, Observe)> {
    let text = std::fs::read_to_string(path).ok()?;
    let test = parse(&text).ok()?;
    let t = translate(&test, memory).ok()?;
    let m = litmus::start(&t).ok()?;
    // Every global, and the condition's registers (the threads' final registers).
    let mut observe = observe_globals(m.program(), Vec::new());
    observe.registers = t.observe(m.program()).registers;
    Some((m, observe))
}

#[derive(Default)]
struct Tally {
    compared: usize,
    /// DPOR ran into its depth bound (a spin loop): not compared.
    deep: Vec<String>,
    /// Searches with the state cache that gave DPOR up (at its depth bound) and compared.
    fell_back: usize,
    /// DPOR ran into the transition or time bound.
    cut: Vec<String>,
    /// Transitions of the unreduced and the DPOR search.
    transitions: [u64; 2],
    executions: [u64; 2],
}

impl Tally {
    /// Compares DPOR (with the fold; also without it when `unfolded`) with the unreduced
    /// search; `false` when either is bounded out.
    fn compare(&mut self, name: &str, m: &Machine, observe: &Observe, unfolded: bool) -> bool {
        let start = std::time::Instant::now();
        // The fold is checked against the unreduced search in `explore_fold`; here the
        // unreduced search folds when it does not fit otherwise.
        let mut full = run(m, observe, Reduction::None, Memo::States, Folding::None);
        if full.bound_hit.is_some() {
            full = run(
                m,
                observe,
                Reduction::None,
                Memo::States,
                Folding::Invisible,
            );
            if full.bound_hit.is_some() {
                return false;
            }
        }
        let foldings: &[Folding] = if unfolded {
            &[Folding::Invisible, Folding::None]
        } else {
            &[Folding::Invisible]
        };
        let mut deep = false;
        for &folding in foldings {
            let dpor = run(m, observe, Reduction::SourceDpor, STATELESS, folding);
            match dpor.bound_hit {
                None => {}
                Some(DfsBound::Depth(_)) => {
                    self.deep.push(name.to_string());
                    deep = true;
                    break;
                }
                // A kernel whose lane groups interleave (ITS) or whose memory micro steps do
                // (cached memory) may pass the transition bound: every step of one warp, and
                // every micro step, is dependent with the others, and a stateless search
                // meets the states where their orders join again and again.
                Some(DfsBound::Transitions(_) | DfsBound::Time) => {
                    if folding == Folding::None {
                        // Unfolded, the micro steps of cached memory grow much faster.
                        continue;
                    }
                    self.cut.push(name.to_string());
                    return false;
                }
                Some(b) => panic!("{name}: DPOR bounded out ({b:?})"),
            }
            assert_eq!(
                keys(&dpor),
                keys(&full),
                "{name} ({folding}): DPOR's outcome set differs from the unreduced search's"
            );
            witnesses_replay(name, m, observe, &dpor);
            if folding == Folding::Invisible {
                self.transitions[0] += full.transitions;
                self.transitions[1] += dpor.transitions;
                self.executions[0] += full.executions;
                self.executions[1] += dpor.executions;
            }
        }
        // Every 4th: the sleep-set search with the state cache is checked on the whole
        // suite in `explore_sleep_sets`.
        if deep && self.deep.len() % 4 == 1 {
            // Under the state cache, SourceDpor gives up DPOR at the depth bound and the
            // sleep-set search answers: the same outcomes.
            let auto = run(
                m,
                observe,
                Reduction::SourceDpor,
                Memo::States,
                Folding::Invisible,
            );
            if auto.bound_hit.is_none() {
                assert_eq!(
                    keys(&auto),
                    keys(&full),
                    "{name}: DPOR with the state cache"
                );
                self.fell_back += 1;
            }
        }
        let secs = start.elapsed().as_secs_f64();
        if secs > 2.0 {
            println!("{name}: {secs:.1} s");
        }
        self.compared += !deep as usize;
        !deep
    }

    fn print(&self, what: &str) {
        println!(
            "{what}: {} compared; transitions {} unreduced -> {} DPOR, executions {} -> {}; too deep for DPOR (loops): {} ({} of them compared with the state cache); DPOR cut by the transition or time bound: {:?}",
            self.compared,
            self.transitions[0],
            self.transitions[1],
            self.executions[0],
            self.executions[1],
            self.deep.len(),
            self.fell_back,
            self.cut
        );
    }
}

fn suite(memory: MemoryKind, keep: impl Fn(&str, usize) -> bool) -> Tally {
    let dir = conformance_path().join("ptx-litmus");
    let mut files = Vec::new();
    litmus_files(&dir, &mut files);
    assert!(
        !files.is_empty(),
        "no litmus files under {}: this test needs the conformance suite",
        dir.display()
    );
    let mut tally = Tally::default();
    for (i, f) in files.iter().enumerate() {
        if !keep(&f.display().to_string(), i) {
            continue;
        }
        let Some((m, observe)) = litmus_machine(f, memory) else {
            continue;
        };
        tally.compare(&f.display().to_string(), &m, &observe, true);
    }
    tally
}

#[test]
fn litmus_suite_flat_outcomes_are_the_unreduced_ones() {
    let tally = suite(MemoryKind::Flat, |_, _| true);
    tally.print("PTX litmus suite, flat memory");
    // Most of the suite (the CADP forward-progress tests) loops: DPOR meets its depth bound
    // there, and the search with the state cache answers.
    assert!(tally.compared >= 50, "{} compared", tally.compared);
    assert!(tally.fell_back >= 50, "{} fell back", tally.fell_back);
    // The reduction pays off on the suite as a whole.
    assert!(tally.transitions[1] * 2 < tally.transitions[0]);
}

#[test]
fn litmus_suite_cached_outcomes_are_the_unreduced_ones() {
    // The tests without a loop (not the CADP forward-progress tests): the cached
    // memory's micro steps make each test far larger.
    let tally = suite(MemoryKind::Cached, |f, _| !f.contains("CADP"));
    tally.print("PTX litmus suite, cached memory (no CADP)");
    assert!(tally.compared >= 5, "{} compared", tally.compared);
}

#[test]
fn litmus_families_outcomes_are_the_unreduced_ones() {
    let mut tally = Tally::default();
    for name in ["MP-2", "MP-3", "SB-2", "SB-3", "LB-2", "LB-3", "IRIW-4"] {
        let path = workspace_root().join(format!("tests/litmus/families/{name}.litmus"));
        let (m, observe) = litmus_machine(&path, MemoryKind::Flat).expect("a family test");
        assert!(
            tally.compare(name, &m, &observe, true),
            "{name}: not compared"
        );
    }
    tally.print("litmus families");
}

#[test]
fn corpus_outcomes_are_the_unreduced_ones() {
    let mut tally = Tally::default();
    let mut bounded = Vec::new();
    for (name, m, observe) in corpus_machines() {
        if !tally.compare(&name, &m, &observe, false) {
            bounded.push(name);
        }
    }
    tally.print("corpus");
    println!("not compared: {bounded:?}");
    assert!(tally.compared >= 10, "{} compared", tally.compared);
}

/// The families' Mazurkiewicz traces, counted by hand. In SB-n (a ring: thread i writes x_i,
/// then reads x_{i+1}) every other pair of accesses commutes, and a trace is fixed by whether
/// each read comes before the write of its location: 2^n orders, less the one where every
/// read comes first (a cycle with program order), so 2^n - 1 traces, each with its own outcome.
/// MP-n and LB-n likewise have 2^n - 1. Source-DPOR explores exactly one execution per trace
/// here; the stateless sleep-set search, which explores every awake choice, takes far more
/// transitions to find the same ones.
#[test]
fn dpor_explores_one_execution_per_trace() {
    for family in ["SB", "MP", "LB"] {
        for n in 2..=5u32 {
            let name = format!("{family}-{n}");
            let path = workspace_root().join(format!("tests/litmus/families/{name}.litmus"));
            let (m, observe) = litmus_machine(&path, MemoryKind::Flat).expect("a family test");
            let dpor = run(
                &m,
                &observe,
                Reduction::SourceDpor,
                STATELESS,
                Folding::Invisible,
            );
            assert_eq!(dpor.bound_hit, None, "{name}");
            let traces = (1u64 << n) - 1;
            assert_eq!(dpor.executions, traces, "{name}: executions");
            assert_eq!(dpor.outcomes.len() as u64, traces, "{name}: outcomes");
            if n == 4 {
                let sleep = run(
                    &m,
                    &observe,
                    Reduction::SleepSets,
                    STATELESS,
                    Folding::Invisible,
                );
                assert_eq!(keys(&sleep), keys(&dpor), "{name}");
                // (SB-4: 133 transitions against 999.)
                assert!(
                    dpor.transitions * 5 < sleep.transitions,
                    "{name}: {} transitions with DPOR, {} with sleep sets",
                    dpor.transitions,
                    sleep.transitions
                );
            }
        }
    }
    // IRIW-4: two writers and two readers with a fence between their loads; under flat
    // memory the fences change nothing, so the traces are the orders of each read with the
    // write of its location: 2^4 less the one where both readers see the writes in opposite
    // orders (not sequentially consistent) = 15.
    let path = workspace_root().join("tests/litmus/families/IRIW-4.litmus");
    let (m, observe) = litmus_machine(&path, MemoryKind::Flat).expect("IRIW-4");
    let dpor = run(
        &m,
        &observe,
        Reduction::SourceDpor,
        STATELESS,
        Folding::Invisible,
    );
    assert_eq!(dpor.executions, 15);
    let sleep = run(
        &m,
        &observe,
        Reduction::SleepSets,
        STATELESS,
        Folding::Invisible,
    );
    assert!(
        dpor.executions < sleep.executions,
        "{} vs {}",
        dpor.executions,
        sleep.executions
    );
}

/// Thesis Listing 6.2 (spin lock), 3 blocks: the spinning block loops, so stateless DPOR runs
/// into its depth bound; under the state cache `SourceDpor` gives DPOR up there and the
/// sleep-set search with the state cache answers, with the unreduced search's outcomes.
#[test]
fn spin_loops_fall_back_to_the_state_cache() {
    let text =
        std::fs::read_to_string(workspace_root().join("tests/thesis/listing_6_2.ptx")).unwrap();
    let parsed = ptx_parser::parse(&text);
    let p = Arc::new(semantics::load(&parsed.module, &text).unwrap().0);
    let launch = semantics::machine::LaunchConfig::kernel_1d("kernel", 3, 1);
    let m = Machine::new(
        p.clone(),
        &launch,
        &semantics::machine::MachineConfig::default(),
    )
    .unwrap();
    let observe = observe_globals(&p, Vec::new());
    let full = run(&m, &observe, Reduction::None, Memo::States, Folding::None);
    assert_eq!(full.bound_hit, None);
    let dpor = run(
        &m,
        &observe,
        Reduction::SourceDpor,
        STATELESS,
        Folding::Invisible,
    );
    assert!(
        matches!(dpor.bound_hit, Some(DfsBound::Depth(_))),
        "{:?}",
        dpor.bound_hit
    );
    let auto = run(
        &m,
        &observe,
        Reduction::SourceDpor,
        Memo::States,
        Folding::Invisible,
    );
    assert_eq!(auto.bound_hit, None);
    assert_eq!(keys(&auto), keys(&full));
    witnesses_replay("listing 6.2", &m, &observe, &auto);
}

/// What one litmus search found, to compare: outcomes with their counts of distinct final
/// states, deadlocked and faulting final states.
type Answer = (Vec<(Vec<i64>, usize)>, usize, usize);

fn answer(r: &litmus::search::Exploration) -> Answer {
    (
        r.outcomes.iter().map(|(v, n)| (v.clone(), *n)).collect(),
        r.deadlocks,
        r.faults,
    )
}

/// The litmus command's search (`litmus::search`) with DPOR tried first (`explore_staged`
/// with no quick stateful stage): under flat memory with the fold it decides a test by DPOR
/// where DPOR ends, and by the stateful search where DPOR gives up (a test that spins, at the
/// first schedule that comes back to a state or reaches DPOR's depth bound). Either way its
/// outcomes, their counts of distinct final states and its deadlocked and faulting final
/// states are those of the stateful search without the fold (`--reduction none`, which never
/// runs DPOR), and its witnesses replay to their outcomes. Every test of the suite but the CADP
/// forward-progress tests (every 8th of those), and the families.
#[test]
fn litmus_search_answers_as_the_stateful_search() {
    use litmus::search::{Searched, explore_staged, explore_until};
    let mut files = corpus::litmus_suite_sample();
    files.extend(corpus::litmus_families(4));
    let never = Stop::never();
    let (mut by_dpor, mut by_states, mut skipped) = (0, 0, 0);
    for f in &files {
        let name = f.display().to_string();
        let Some((m, _)) = litmus_machine(f, MemoryKind::Flat) else {
            continue;
        };
        let test = parse(&std::fs::read_to_string(f).unwrap()).unwrap();
        let t = translate(&test, MemoryKind::Flat).unwrap();
        let staged = explore_staged(m.clone(), &t, 200_000, Folding::Invisible, 0, &never);
        let plain = explore_until(m.clone(), &t, 200_000, Folding::None, &never);
        assert_eq!(plain.searched, Searched::States, "{name}");
        if staged.bounded || plain.bounded {
            skipped += 1;
            continue;
        }
        assert_eq!(
            answer(&staged),
            answer(&plain),
            "{name}: the answers differ"
        );
        match staged.searched {
            Searched::Dpor => by_dpor += 1,
            // A test that loops (the CADP forward-progress tests, some others) or whose
            // executions exceed DPOR's budget.
            Searched::States => by_states += 1,
        }
        for (values, path) in &staged.paths {
            let mut fresh = m.clone();
            let rr = replay(&mut fresh, path, None, None, false);
            assert_eq!(rr.divergence, None, "{name}");
            assert_eq!(&litmus::search::observe(&fresh, &t), values, "{name}");
        }
    }
    println!(
        "litmus search, DPOR first: {by_dpor} decided by DPOR, {by_states} by the stateful search (DPOR gave up), {skipped} bounded out"
    );
    assert!(by_dpor >= 80, "{by_dpor} decided by DPOR");
    assert!(
        by_states >= 30,
        "{by_states} decided by the stateful search"
    );
}

/// The litmus command: a small test is decided by the stateful search within its first
/// stage, as before DPOR (the same state counts); a test that spins likewise.
#[test]
fn litmus_command_decides_small_and_spinning_tests_statefully() {
    for name in ["MP-3", "SB-4"] {
        let path = workspace_root().join(format!("tests/litmus/families/{name}.litmus"));
        let test = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let r = litmus::check(&test, &litmus::Options::default());
        assert_eq!(r.status, litmus::Status::Ok, "{name}");
        assert_eq!(r.searched, litmus::search::Searched::States, "{name}");
    }
    let path = workspace_root().join("examples/litmus/CADP-4_simple.litmus");
    let test = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let r = litmus::check(&test, &litmus::Options::default());
    assert_eq!(r.status, litmus::Status::Ok);
    assert_eq!(r.searched, litmus::search::Searched::States);
}

/// MP-8, SB-8, LB-8 and IRIW-8 are decided, with the 2^n − 1 outcomes of the first three: by
/// DPOR or by the stateful search with persistent sets over several warps, whichever ends
/// first (without persistent sets the stateful search alone does not end in 30 s).
#[test]
fn litmus_command_decides_the_eight_thread_families() {
    for family in ["MP", "SB", "LB", "IRIW"] {
        let path = workspace_root().join(format!("tests/litmus/families/{family}-8.litmus"));
        let test = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let r = litmus::check(&test, &litmus::Options::default());
        assert_eq!(r.status, litmus::Status::Ok, "{family}-8");
        assert!(r.holds.is_some(), "{family}-8");
        if family != "IRIW" {
            assert_eq!(r.outcomes.len(), 255, "{family}-8");
        }
    }
}
