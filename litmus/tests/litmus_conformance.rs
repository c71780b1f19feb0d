//! PTX memory-model litmus conformance (`conformance/ptx-litmus`, found at
//! `$CUDASEM_CONFORMANCE/ptx-litmus`, else `<workspace>/../shared/conformance/ptx-litmus`).
//!
//! * Parse coverage: every file under Manual, Barrier, Nvidia and CADP parses (all of them,
//!   proxies included: unsupported constructs are the translator's verdict, not parse errors).
//! * Soundness (asserted: 0 violations): for every non-proxy test of Manual, Barrier and Nvidia
//!   listed in `PTXv6_0-expected.csv` (else `PTXv7_5-expected.csv`), run with flat memory, a
//!   test the model forbids (`exists` with 0: unreachable; `~exists`/`forall` with 1: holds)
//!   must not be contradicted by a reached outcome.
//! * Completeness (reported, not asserted: flat memory is sequentially consistent and reaches
//!   only SC outcomes): for tests whose condition the model lets fail or succeed the other way
//!   (`exists` with 1, `~exists`/`forall` with 0), whether cudasem reached that outcome. The
//!   table goes to stdout and `target/litmus-report.md`.

use litmus::parse::{Quantifier, parse};
use litmus::{MemorySystem, Options, Status, check};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn suite() -> Option<PathBuf> {
    let dir = match std::env::var_os("CUDASEM_CONFORMANCE") {
        Some(d) => PathBuf::from(d).join("ptx-litmus"),
        None => workspace().join("../shared/conformance/ptx-litmus"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "PTX litmus conformance files not found at {}; set CUDASEM_CONFORMANCE to the conformance folder to run this check",
            dir.display()
        );
        None
    }
}

fn litmus_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            litmus_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "litmus") {
            out.push(p);
        }
    }
}

/// `litmus/PTX/Manual/x.litmus,1` → (`Manual/x.litmus`, true).
fn expected(dir: &Path, csv: &str) -> BTreeMap<String, bool> {
    let text = std::fs::read_to_string(dir.join(csv)).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (path, v) = l.trim().rsplit_once(',')?;
            let rel = path.strip_prefix("litmus/PTX/")?;
            Some((rel.to_string(), v.trim() == "1"))
        })
        .collect()
}

#[test]
fn every_litmus_file_parses() {
    let Some(dir) = suite() else { return };
    let mut files = Vec::new();
    for sub in ["Manual", "Barrier", "Nvidia", "CADP"] {
        litmus_files(&dir.join(sub), &mut files);
    }
    assert!(files.len() > 700, "only {} litmus files found", files.len());
    let mut errors = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        if let Err(e) = parse(&text) {
            errors.push(format!("{}:{e}", f.display()));
        }
    }
    println!(
        "parsed {} of {} litmus files",
        files.len() - errors.len(),
        files.len()
    );
    assert!(errors.is_empty(), "parse errors:\n{}", errors.join("\n"));
}

#[test]
fn flat_memory_is_sound_against_the_ptx_model() {
    conformance(MemorySystem::Flat, 200_000);
}

/// The cached memory (thesis chapter 4 with the PTX qualifier mapping of ARCHITECTURE.md):
/// 0 violations; tests too big for the bound are reported as bounded (no verdict claimed), and
/// a bounded search that already reached a forbidden outcome still counts as a violation.
#[test]
fn cached_memory_is_sound_against_the_ptx_model() {
    conformance(MemorySystem::Cached, 40_000);
}

fn conformance(memory: MemorySystem, max_states: usize) {
    let Some(dir) = suite() else { return };
    let v6 = expected(&dir, "PTXv6_0-expected.csv");
    let v75 = expected(&dir, "PTXv7_5-expected.csv");
    let mut files = Vec::new();
    for sub in ["Manual", "Barrier", "Nvidia"] {
        litmus_files(&dir.join(sub), &mut files);
    }
    let options = Options {
        max_states,
        memory,
        ..Options::default()
    };
    let mut violations = Vec::new();
    let mut rows = String::new();
    let (mut run, mut unsupported, mut allowed, mut reached, mut forbidden) = (0, 0, 0, 0, 0);
    let mut bounded = 0;
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut total_states = 0usize;
    let start = std::time::Instant::now();
    for f in &files {
        let rel = f
            .strip_prefix(&dir)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        if rel.contains("/proxy/") {
            continue;
        }
        let Some(&model) = v6.get(&rel).or_else(|| v75.get(&rel)) else {
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let test = match parse(&text) {
            Ok(t) => t,
            Err(e) => {
                violations.push(format!("{rel}: does not parse: {e}"));
                continue;
            }
        };
        let report = check(&test, &options);
        total_states += report.states;
        let q = test.condition.quantifier;
        // The model's reading: "the condition's outcome is forbidden" when the test says the
        // condition-violating (~exists/forall) or condition-satisfying (exists) outcome cannot
        // happen.
        let model_forbids = match q {
            Quantifier::Exists => !model,
            Quantifier::NotExists | Quantifier::Forall => model,
        };
        let (verdict, note) = match &report.status {
            Status::Ok => {
                run += 1;
                let holds = report.holds.unwrap_or(false);
                // The outcome the condition talks about is reached when exists holds or
                // ~exists/forall fails.
                let outcome_reached = match q {
                    Quantifier::Exists => holds,
                    _ => !holds,
                };
                if model_forbids {
                    forbidden += 1;
                    if outcome_reached {
                        violations.push(format!(
                            "{rel}: the model forbids it, cudasem reached it (holds = {holds}; witness {:?})",
                            report.witness.as_ref().map(|w| report.outcome_text(&w.values))
                        ));
                        ("VIOLATION", String::new())
                    } else {
                        ("sound", String::new())
                    }
                } else {
                    allowed += 1;
                    if outcome_reached {
                        reached += 1;
                        ("reached", String::new())
                    } else {
                        let why = if report.outcomes.is_empty() {
                            "no execution completes"
                        } else if memory == MemorySystem::Flat {
                            "not an SC outcome, or only after a deadlock"
                        } else {
                            "not reachable by the cached machine (complete search)"
                        };
                        ("not reached", why.to_string())
                    }
                }
            }
            Status::Unsupported(reason) => {
                unsupported += 1;
                let key = reason.split(':').next().unwrap_or("").to_string();
                *reasons.entry(key).or_default() += 1;
                ("unsupported", reason.clone())
            }
            Status::Bounded | Status::TimeLimit => {
                // Flat memory explores every test completely; a bound there is a regression.
                // Under cached memory the bound is honest: no verdict, unless a forbidden
                // outcome was already reached.
                // `exists P` / `~exists P` talk about an outcome satisfying P, `forall P` about
                // one that does not.
                let condition_reached = report.outcomes.iter().any(|o| match q {
                    Quantifier::Exists | Quantifier::NotExists => o.satisfies,
                    Quantifier::Forall => !o.satisfies,
                });
                if memory == MemorySystem::Flat {
                    violations.push(format!("{rel}: state bound hit ({} states)", report.states));
                } else if model_forbids && condition_reached {
                    violations.push(format!(
                        "{rel}: the model forbids it, cudasem reached it before the bound"
                    ));
                }
                bounded += 1;
                if model_forbids {
                    forbidden += 1;
                    ("bounded", "sound so far".to_string())
                } else {
                    // Completeness counts what a bounded search already reached.
                    allowed += 1;
                    if condition_reached {
                        reached += 1;
                        ("bounded", "reached".to_string())
                    } else {
                        ("bounded", "not reached within the bound".to_string())
                    }
                }
            }
        };
        let _ = writeln!(
            rows,
            "| {rel} | {} | {} | {verdict} | {} | {} | {} | {note} |",
            q.name(),
            if model { 1 } else { 0 },
            report.outcomes.len(),
            report.states,
            report.deadlocks
        );
    }
    let elapsed = start.elapsed().as_secs_f64();
    let pct = if allowed == 0 {
        100.0
    } else {
        100.0 * reached as f64 / allowed as f64
    };
    let mut md = String::new();
    let name = memory.name();
    let _ = writeln!(md, "# PTX litmus conformance ({name} memory)\n");
    let _ = writeln!(
        md,
        "Tests run: {run}; unsupported: {unsupported} ({reasons:?}); cut by the bound of {max_states} states (no verdict): {bounded}.\n\nSoundness: {} violations over {forbidden} tests the model forbids.\n\nCompleteness: {reached} of {allowed} model-allowed outcomes reached ({pct:.1}%).\n\nStates explored: {total_states} in {elapsed:.2} s.\n",
        violations.len()
    );
    md.push_str("| test | quantifier | model (CSV) | cudasem | outcomes | states | deadlocks | note |\n|---|---|---|---|---|---|---|---|\n");
    md.push_str(&rows);
    println!("{md}");
    let _ = std::fs::create_dir_all(workspace().join("target"));
    let _ = std::fs::write(
        workspace().join(format!("target/litmus-report-{name}.md")),
        &md,
    );
    assert!(run > 50, "only {run} tests ran");
    assert!(
        violations.is_empty(),
        "soundness violations:\n{}",
        violations.join("\n")
    );
}
