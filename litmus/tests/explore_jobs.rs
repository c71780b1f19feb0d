//! Every core, deterministically (issue 14, Build 4): the stateful search and the outcomes
//! search give the same result at any number of worker threads. Compared at jobs 1, 2 and 4 on
//! every corpus kernel and on the litmus families small enough: the whole exploration's debug
//! form (the state graph with its node and edge order, outcomes with their witnesses, counts),
//! the verdict and the lasso under every progress model; for the outcomes search the report.

use corpus::{corpus_machines, workspace_root};
use explore::progress::ProgressModel;
use explore::{Exploration, Folding, Level, Limits, explore};
use litmus::parse::parse;
use litmus::translate::translate;
use scheduler::outcome::Observe;
use semantics::machine::{Machine, MemoryKind};

/// Everything an exploration answers, printed: what must not depend on `jobs`.
fn answer(x: &Exploration) -> String {
    // The options differ by `jobs` alone.
    let mut same = x.clone();
    same.limits.jobs = 1;
    let mut s = format!("{same:?}\n");
    for m in ProgressModel::ALL {
        s.push_str(&format!("{m:?}: {:?} {:?}\n", x.verdict(m), x.lasso(m)));
    }
    s
}

fn limits(jobs: usize, folding: Folding) -> Limits {
    Limits {
        max_states: 3_000,
        folding,
        jobs,
    }
}

/// The litmus families with what their outcomes observe (the condition's registers and
/// locations).
fn litmus_machines() -> Vec<(String, Machine, Observe)> {
    let dir = workspace_root().join("tests/litmus/families");
    let mut out = Vec::new();
    for name in ["MP-2", "MP-3", "SB-2", "SB-3", "LB-2", "LB-3", "IRIW-4"] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.litmus"))).unwrap();
        let t = translate(&parse(&text).unwrap(), MemoryKind::Flat).unwrap();
        let m = litmus::start(&t).unwrap();
        let observe = t.observe(m.program());
        out.push((name.to_string(), m, observe));
    }
    out
}

#[test]
fn the_stateful_search_is_the_same_at_any_jobs() {
    let mut compared = 0;
    let mut cases: Vec<(String, Machine, Observe, Level)> = corpus_machines()
        .into_iter()
        .map(|(n, m, o)| (n, m, o, Level::Blocks))
        .collect();
    let corpus_len = cases.len();
    cases.extend(
        litmus_machines()
            .into_iter()
            .map(|(n, m, o)| (n, m, o, Level::Warps)),
    );
    for (i, (name, m, observe, level)) in cases.iter().enumerate() {
        // The unreduced search on the litmus tests only (the kernels' is large and slow).
        let foldings: &[Folding] = if i < corpus_len {
            &[Folding::Invisible]
        } else {
            &[Folding::Invisible, Folding::None]
        };
        for &folding in foldings {
            let Ok(one) = explore(m, *level, observe, limits(1, folding)) else {
                continue;
            };
            let one = answer(&one);
            for jobs in [2, 4] {
                let many = explore(m, *level, observe, limits(jobs, folding)).unwrap();
                let other = answer(&many);
                assert!(
                    one == other,
                    "{name} ({folding}): jobs {jobs} differs from jobs 1"
                );
            }
            compared += 1;
        }
    }
    assert!(compared >= 20, "only {compared} cases compared");
}
