//! Every persistent set the cached litmus search may pick keeps every terminal state: on small
//! litmus tests under cached memory, the unreduced graph of transactions (the fold, system
//! choices settled) is built whole, and at each of its states every set
//! `explore::dependence::block_persistent_sets_sharing` offers (block sets and line sets) must
//! lead to every terminal state the state itself reaches (Godefroid, "Partial-Order Methods for
//! the Verification of Concurrent Systems", theorem 4.3, state by state). This checks each
//! candidate, not only the one a search happens to pick, and names the state, the set and the
//! lost successor when one fails.

use corpus::conformance_path;
use explore::fold::{self, Folding};
use explore::{ample, dependence, settle};
use litmus::parse::parse;
use litmus::translate::translate;
use semantics::machine::{Futures, Machine, MemoryKind};
use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use traces::Choice;

/// The largest unreduced graph built (states); a larger test is skipped.
const MAX_GRAPH: usize = 20_000;

type Edges = HashMap<u128, Vec<(Vec<Choice>, u128)>>;

/// Each transaction's machine and choices, and the sets offered (indices into them).
type Offered = (Vec<(Machine, Vec<Choice>)>, Vec<Vec<usize>>);

/// The transactions of `m` (one per enabled choice) and the sets offered at `m`.
fn successors(m: &Machine, futures: &OnceCell<Futures>) -> Offered {
    let enabled = m.enabled();
    let mut out = Vec::new();
    let mut judged = Vec::new();
    for &choice in enabled {
        let mut next = m.clone();
        let mut taken = Vec::new();
        let fp = fold::step_folded(
            &mut next,
            &choice,
            Folding::Invisible,
            None,
            None,
            true,
            fold::Forward {
                fences: false,
                provenance_rules: None,
                exits: false,
            },
            &mut taken,
        )
        .expect("an enabled choice is taken");
        let before = taken.len();
        settle(&mut next, &mut taken).expect("system choices settle");
        judged.push(ample::Judged::of(fp, &next, taken.len() > before));
        out.push((next, taken));
    }
    let sets = if enabled.len() > 1 {
        dependence::block_persistent_sets_sharing(m, enabled, &judged, futures)
    } else {
        Vec::new()
    };
    (out, sets)
}

/// The sets at states of `path`'s test that lose a terminal state (a description of each), or
/// `None` when the test is not translated, its graph has a cycle or exceeds [`MAX_GRAPH`].
fn sets_losing_terminal_states(path: &Path) -> Option<Vec<String>> {
    let test = parse(&std::fs::read_to_string(path).ok()?).ok()?;
    let t = translate(&test, MemoryKind::Cached).ok()?;
    let mut root = litmus::start(&t).ok()?;
    settle(&mut root, &mut Vec::new()).ok()?;
    let futures = OnceCell::new();
    let mut seen: HashSet<u128> = HashSet::from([root.state_fingerprint()]);
    let mut edges: Edges = HashMap::new();
    let mut sets_at: HashMap<u128, Vec<Vec<usize>>> = HashMap::new();
    let mut stack = vec![root];
    while let Some(m) = stack.pop() {
        let key = m.state_fingerprint();
        if m.termination().is_some() {
            edges.insert(key, Vec::new());
            continue;
        }
        let (out, sets) = successors(&m, &futures);
        sets_at.insert(key, sets);
        let mut es = Vec::new();
        for (next, taken) in out {
            let k = next.state_fingerprint();
            es.push((taken, k));
            if seen.insert(k) {
                stack.push(next);
            }
        }
        edges.insert(key, es);
        if seen.len() > MAX_GRAPH {
            return None;
        }
    }
    // The terminal states below each state, bottom-up in a topological order (litmus tests
    // without loops are acyclic; one with a cycle is skipped).
    let mut indegree: HashMap<u128, usize> = edges.keys().map(|k| (*k, 0)).collect();
    for es in edges.values() {
        for (_, c) in es {
            *indegree.get_mut(c)? += 1;
        }
    }
    let mut order = Vec::new();
    let mut ready: Vec<u128> = indegree
        .iter()
        .filter(|(_, d)| **d == 0)
        .map(|(k, _)| *k)
        .collect();
    while let Some(k) = ready.pop() {
        order.push(k);
        for (_, c) in &edges[&k] {
            let d = indegree.get_mut(c)?;
            *d -= 1;
            if *d == 0 {
                ready.push(*c);
            }
        }
    }
    if order.len() != edges.len() {
        return None;
    }
    let mut terminal: HashMap<u128, HashSet<u128>> = HashMap::new();
    for k in order.iter().rev() {
        let mut below = HashSet::new();
        if edges[k].is_empty() {
            below.insert(*k);
        }
        for (_, c) in &edges[k] {
            below.extend(terminal[c].iter().copied());
        }
        terminal.insert(*k, below);
    }
    let mut bad = Vec::new();
    for (k, sets) in &sets_at {
        for set in sets {
            let kept: HashSet<u128> = set
                .iter()
                .flat_map(|&i| terminal[&edges[k][i].1].iter().copied())
                .collect();
            if let Some((taken, _)) = edges[k].iter().find(|(_, c)| !terminal[c].is_subset(&kept)) {
                bad.push(format!(
                    "{}: at {k:032x} the set {set:?} of {} transactions loses a terminal state \
                     below {taken:?}",
                    path.display(),
                    edges[k].len()
                ));
            }
        }
    }
    Some(bad)
}

fn check(files: &[PathBuf]) -> usize {
    let mut checked = 0;
    let mut bad = Vec::new();
    for f in files {
        if let Some(b) = sets_losing_terminal_states(f) {
            checked += 1;
            bad.extend(b);
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    checked
}

fn litmus_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "litmus"));
    files.sort();
    files
}

/// The single-CTA files: every warp shares one L1 (line sets).
#[test]
fn every_set_keeps_the_terminal_states_of_the_single_cta_tests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cta");
    let checked = check(&litmus_files(&dir));
    assert!(checked >= 3, "{checked} checked");
}

/// The suite's Manual folder (a CTA per thread mostly: block sets). Before the end of a run
/// was judged dependent with every silent cache rule, `MP-dlb-no-fence-2` lost a final state
/// here: a block's last exit was a set alone while another SM's L1 could still evict a line.
#[test]
fn every_set_keeps_the_terminal_states_of_the_suite_tests() {
    let dir = conformance_path().join("ptx-litmus/Manual");
    if !dir.is_dir() {
        eprintln!(
            "the PTX litmus suite is absent ({}): set CUDASEM_CONFORMANCE",
            dir.display()
        );
        return;
    }
    let checked = check(&litmus_files(&dir));
    assert!(checked >= 40, "{checked} checked");
}
