//! `cudasem litmus FILE.litmus... [--memory flat|cached] [--format text|json] [--max-states N]
//! [--emit-ptx DIR]`: herd-style PTX memory-model litmus tests (`litmus`).
//!
//! For each file: the final outcomes reached over every execution (herd-style `1:r0=1; x=2;`,
//! with the number of distinct final machine states showing each), the condition's verdict
//! (`holds`: the condition as written holds, the meaning of the expected CSVs' 1) and, for a
//! reachable `exists` or a violated `~exists`/`forall`, a witness: the choice sequence and a
//! compact string for `cudasem replay` (with the PTX that `--emit-ptx` writes). JSON: one object
//! per file with `status` (`ok`, `unsupported`, `bounded`, `time_limit`, `memory_limit`), `bound_hit` (which
//! bound cut the search, as every command names it), `holds`, `outcomes`, `witness`.
//!
//! Exit codes: 0 every file was checked (an "unsupported" verdict included), 2 a file could not
//! be read or parsed (`file:line:col: message`; the other files are still checked).

use crate::Exit;
use crate::error::Error;
use crate::flags::{MemoryArg, OutputFormat};
use explore::progress::Verdict;
use litmus::parse::{self, LitmusTest};
use litmus::{self, Liveness, MemorySystem, Options, Report, Status};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct LitmusArgs {
    /// Litmus files (herd format, PTX flavour).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The memory system.
    #[arg(long, value_enum, default_value_t = MemoryArg::Flat)]
    pub memory: MemoryArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Bound on the distinct states explored per test; a test that hits it gets no verdict.
    /// (A litmus state is small: 5,000,000 states of a 4-thread test under cached memory take
    /// about 300 MB; `--max-memory` bounds the process.)
    #[arg(long, value_name = "N", default_value_t = 5_000_000)]
    pub max_states: usize,
    /// Which steps are scheduling points: `fold` (visible operations only; a thread's
    /// register-only steps run with its next visible one; under flat memory the search also
    /// explores only a persistent set of threads where one is known, Godefroid, "Partial-Order
    /// Methods for the Verification of Concurrent Systems", chapter 4) or `none` (every step,
    /// every interleaving).
    #[arg(
        long,
        value_name = "R",
        default_value = "fold",
        value_parser = super::explore::parse_folding
    )]
    pub reduction: explore::Folding,
    /// The time bound of each test's search (a test that hits it gets no verdict).
    #[command(flatten)]
    pub timeout: crate::timeout::Timeout,
    /// The memory budget of the command (bytes, or with a K, M, G or T suffix): a search that
    /// reaches it stops as at `--timeout` (no verdict). Default: half of the machine's memory.
    #[arg(long, value_name = "BYTES", value_parser = crate::budget::parse_size)]
    pub max_memory: Option<u64>,
    /// Also decide whether the litmus program terminates under MODEL (Dat3M's liveness check;
    /// models as `explore --progress` takes them: unfair, fair, obe, hsa, hsa-obe, lobe, each
    /// optionally -strong), each litmus thread a unit: the verdict, and for a program that may
    /// not terminate a lasso and its replay command.
    #[arg(long, value_name = "MODEL", value_parser = super::explore::parse_model)]
    pub progress: Option<explore::progress::ProgressModel>,
    /// Worker threads of the --progress search (0: one per core; default 1). Its verdict, lasso
    /// and state count are the same at any number: only the time changes.
    #[arg(long, value_name = "J", default_value_t = 1)]
    pub jobs: usize,
    /// Write each test's translated PTX to DIR/<file stem>.ptx (for `cudasem replay`).
    #[arg(long, value_name = "DIR")]
    pub emit_ptx: Option<PathBuf>,
    /// Write the teaching page of each test's witness (`cudasem view`): to OUT.html for one
    /// test, to OUT.html/<file stem>.html (a folder) for several. A test without a witness gets
    /// no page.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
}

pub fn run(args: LitmusArgs) -> Exit {
    let options = Options {
        memory: match args.memory {
            MemoryArg::Flat => MemorySystem::Flat,
            MemoryArg::Cached => MemorySystem::Cached,
        },
        max_states: args.max_states,
        folding: args.reduction,
        progress: args.progress,
        jobs: args.jobs,
    };
    if let Some(dir) = &args.emit_ptx
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!("error: cannot create `{}`: {e}", dir.display());
        return Exit::BadInput;
    }
    let mut outcome = Exit::Clean;
    for file in &args.files {
        let path = file.display().to_string();
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot read `{path}`: {e}");
                outcome = outcome.worst(Exit::BadInput);
                continue;
            }
        };
        let test = match parse::parse(&text) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {path}:{e}");
                outcome = outcome.worst(Exit::BadInput);
                continue;
            }
        };
        let start = Instant::now();
        let stop = args.timeout.start();
        let report = litmus::check_until(&test, &options, &stop);
        let seconds = start.elapsed().as_secs_f64();
        let ptx_path = match (&args.emit_ptx, &report.ptx) {
            (Some(dir), Some(ptx)) => {
                let stem = file
                    .file_stem()
                    .map_or("litmus".into(), |s| s.to_string_lossy().to_string());
                let p = dir.join(format!("{stem}.ptx"));
                if let Err(e) = std::fs::write(&p, ptx) {
                    eprintln!("error: cannot write `{}`: {e}", p.display());
                    outcome = outcome.worst(Exit::BadInput);
                }
                Some(p)
            }
            _ => None,
        };
        if let Some((refused, compact)) = &report.refused {
            let internal = crate::failure::Failure::Internal {
                what: format!("{path}: {refused}"),
                replay: Some(replay_line(&report, compact, ptx_path.as_deref())),
            }
            .report();
            outcome = outcome.worst(internal);
            continue;
        }
        let hit = report
            .status
            .bound_hit(args.max_states, args.timeout.millis())
            .map(crate::bounds::named);
        let text = match args.format {
            OutputFormat::Text => text_report(
                &path,
                &test,
                &report,
                seconds,
                ptx_path.as_deref(),
                hit,
                &args.timeout.flag_text(),
            ),
            OutputFormat::Json => format!(
                "{}\n",
                json_report(&path, &test, &report, ptx_path.as_deref(), hit)
            ),
        };
        if let Err(error) = crate::emit::stdout(&text) {
            eprint!("{}", error.rendered());
            return Exit::BadInput;
        }
        if let (Some(out), Some(witness)) = (&args.html, &report.witness) {
            let page = if args.files.len() == 1 {
                out.clone()
            } else {
                let stem = file
                    .file_stem()
                    .map_or("litmus".into(), |s| s.to_string_lossy().to_string());
                out.join(format!("{stem}.html"))
            };
            let ptx_name = ptx_path
                .as_ref()
                .map_or(format!("{path}.ptx"), |p| p.display().to_string());
            match witness_page(&test, &options, witness, &ptx_name, &page) {
                Ok(line) => eprintln!("{line}"),
                Err(e) => {
                    eprintln!("error: --html {}: {e}", page.display());
                    outcome = outcome.worst(Exit::BadInput);
                }
            }
        }
        if crate::emit::closed() {
            break;
        }
    }
    outcome
}

fn replay_line(report: &Report, compact: &str, ptx: Option<&Path>) -> String {
    let ptx = ptx.map_or("<the PTX from --emit-ptx DIR>".to_string(), |p| {
        p.display().to_string()
    });
    format!(
        "cudasem replay {compact} {ptx} {}",
        report.replay_flags.join(" ")
    )
}

fn text_report(
    path: &str,
    test: &LitmusTest,
    report: &Report,
    seconds: f64,
    ptx: Option<&Path>,
    bound_hit: Option<scheduler::BoundHit>,
    cause: &str,
) -> String {
    let mut s = format!(
        "Test {} ({path}), memory {}\n",
        test.name,
        report.memory.name()
    );
    s.push_str(&format!(
        "Condition: {} {}\n",
        report.quantifier.name(),
        report.condition
    ));
    if let Status::Unsupported(reason) = &report.status {
        s.push_str(&format!("Status: unsupported: {reason}\n\n"));
        return s;
    }
    s.push_str(&format!(
        "Explored {} states in {seconds:.3} s: {} outcomes, {} deadlocked and {} faulting final states\n",
        report.states,
        report.outcomes.len(),
        report.deadlocks,
        report.faults
    ));
    if let Some(f) = &report.first_fault {
        s.push_str(&format!("First fault: {f}\n"));
    }
    s.push_str("Outcomes (final states reaching each; * = satisfies the proposition):\n");
    for o in &report.outcomes {
        s.push_str(&format!(
            "  {:>6}{} {}\n",
            o.states,
            if o.satisfies { " *" } else { "  " },
            report.outcome_text(&o.values)
        ));
    }
    match &report.status {
        Status::Bounded => s.push_str(&format!(
            "Status: bounded: {} cut the search\n",
            bound_hit.map_or_else(|| "the state bound".to_string(), |hit| hit.to_string())
        )),
        Status::TimeLimit => {
            // The time bound, Ctrl-C or the memory budget: say which.
            s.push_str(&format!(
                "Status: time_limit: the search was cut ({cause})\n"
            ))
        }
        _ => s.push_str("Status: ok\n"),
    }
    match report.holds {
        Some(h) => s.push_str(&format!(
            "Verdict: the condition {} (holds: {h}){}\n",
            if h { "holds" } else { "does not hold" },
            if report.status == Status::Ok {
                ""
            } else {
                "; decided by the witness below"
            }
        )),
        None => s.push_str("Verdict: none (no outcome decides the condition yet)\n"),
    }
    // herd7's summary lines, for side-by-side comparison (herd counts candidate executions,
    // cudasem distinct final states).
    let (pos, neg) = report.positive_negative();
    s.push_str(&format!(
        "herd: {} Witnesses Positive: {pos} Negative: {neg} Observation {} {} {pos} {neg}{}\n",
        match report.holds {
            Some(true) => "Ok",
            Some(false) => "No",
            None => "?",
        },
        test.name,
        report.observation().map_or("?", |o| o.name()),
        if report.status == Status::Ok {
            ""
        } else {
            " (bounded: counts so far)"
        }
    ));
    if let Some(l) = &report.liveness {
        s.push_str(&liveness_text(report, l, ptx));
    }
    if let Some(w) = &report.witness {
        s.push_str(&format!(
            "Witness: {}\n  choices: {}\n  replay: {}\n",
            report.outcome_text(&w.values),
            w.choices
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            replay_line(report, &w.compact, ptx)
        ));
    }
    s.push('\n');
    s
}

/// The JSON of one test; `bound_hit`: the bound that cut its search.
fn json_report(
    path: &str,
    test: &LitmusTest,
    report: &Report,
    ptx: Option<&Path>,
    bound_hit: Option<scheduler::BoundHit>,
) -> Value {
    let outcomes: Vec<Value> = report
        .outcomes
        .iter()
        .map(|o| {
            let values: serde_json::Map<String, Value> = report
                .terms
                .iter()
                .zip(&o.values)
                .map(|(t, v)| (t.to_string(), json!(v)))
                .collect();
            json!({
                "outcome": report.outcome_text(&o.values),
                "values": values,
                "final_states": o.states,
                "satisfies": o.satisfies,
            })
        })
        .collect();
    let witness = report.witness.as_ref().map(|w| {
        json!({
            "outcome": report.outcome_text(&w.values),
            "choices": w.choices.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            "compact": w.compact,
            "replay": replay_line(report, &w.compact, ptx),
        })
    });
    json!({
        "file": path,
        "name": test.name,
        "memory": report.memory.name(),
        "condition": format!("{} {}", report.quantifier.name(), report.condition),
        "status": match report.status {
            // The memory watchdog stops the search through the time bound's flag.
            Status::TimeLimit if crate::timeout::over_budget() => "memory_limit",
            _ => report.status.word(),
        },
        "bound_hit": crate::bounds::json(bound_hit),
        "reason": match &report.status { Status::Unsupported(r) => Some(r.clone()), _ => None },
        "holds": report.holds,
        "herd": {
            "result": report.holds.map(|h| if h { "Ok" } else { "No" }),
            "positive": report.positive_negative().0,
            "negative": report.positive_negative().1,
            "observation": report.observation().map(|o| o.name()),
        },
        "outcomes": outcomes,
        "counts": "distinct final machine states",
        "witness": witness,
        "states": report.states,
        "states_counted": report.searched.counts(),
        "deadlocks": report.deadlocks,
        "faults": report.faults,
        "ptx": ptx.map(|p| p.display().to_string()),
        "termination": report.liveness.as_ref().map(|l| liveness_json(report, l, ptx)),
    })
}

/// `Termination under MODEL: ...`, with the lasso and its replay command when it may not
/// terminate.
fn liveness_text(report: &Report, l: &Liveness, ptx: Option<&Path>) -> String {
    let model = super::explore::model_text(l.model);
    let mut s = match (l.verdict, &l.error) {
        (_, Some(e)) => format!("Termination under {model}: no verdict: {e}\n"),
        (None, None) => format!(
            "Termination under {model}: no verdict: a bound cut the search after {} states (--max-states, --timeout)\n",
            l.states
        ),
        (Some(Verdict::Pass), None) => format!(
            "Termination under {model}: terminates (P): every execution fair under the model ends ({} states)\n",
            l.states
        ),
        (Some(Verdict::Fail), None) => format!(
            "Termination under {model}: may not terminate (F): an execution fair under the model runs forever ({} states)\n",
            l.states
        ),
    };
    if let Some(lasso) = &l.lasso {
        let choices = |cs: &[traces::Choice]| {
            cs.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if lasso.cycle.is_empty() {
            s.push_str(&format!(
                "  lasso: a deadlock after {} steps: {}\n",
                lasso.stem.len(),
                choices(&lasso.stem)
            ));
        } else {
            s.push_str(&format!(
                "  lasso: stem of {} steps: {}\n  cycle of {} steps, repeated forever: {}\n",
                lasso.stem.len(),
                choices(&lasso.stem),
                lasso.cycle.len(),
                choices(&lasso.cycle)
            ));
        }
    }
    if let Some(compact) = &l.replay {
        s.push_str(&format!(
            "  replay (checks that the cycle closes): {}\n",
            replay_line(report, compact, ptx)
        ));
    }
    s
}

fn liveness_json(report: &Report, l: &Liveness, ptx: Option<&Path>) -> Value {
    json!({
        "model": l.model.name(),
        "terminates": l.verdict.map(|v| v == Verdict::Pass),
        "verdict": l.verdict.map(|v| v.letter().to_string()),
        "states": l.states,
        "error": l.error,
        "lasso": l.lasso.as_ref().map(|lasso| json!({
            "stem": lasso.stem.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            "cycle": lasso.cycle.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
        })),
        "compact": l.replay,
        "replay": l.replay.as_ref().map(|c| replay_line(report, c, ptx)),
    })
}

/// Writes the teaching page of a litmus test's witness: the translated kernel run along the
/// witness's choices (`cudasem view`).
fn witness_page(
    test: &LitmusTest,
    options: &Options,
    witness: &litmus::Witness,
    ptx_name: &str,
    page: &Path,
) -> Result<String, Error> {
    let t = litmus::translate::translate(test, options.memory.kind())
        .map_err(|u| Error::Input(u.reason))?;
    let machine = litmus::start(&t).map_err(|e| Error::Input(e.to_string()))?;
    if let Some(dir) = page.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir.display(), e))?;
    }
    let sources = view::Sources {
        kernel: litmus::translate::ENTRY.to_string(),
        ptx_path: ptx_name.to_string(),
        ptx: t.ptx.clone(),
        cu: Default::default(),
        setup: format!(
            "litmus test {}, {} memory",
            test.name,
            options.memory.name()
        ),
    };
    let view_options = view::ViewOptions {
        policy: Some("the litmus witness".to_string()),
        ..Default::default()
    };
    let html = view::page(machine, &witness.choices, &sources, &view_options)
        .map_err(|e| Error::Input(e.to_string()))?;
    std::fs::write(page, &html).map_err(|e| Error::io("cannot write", page.display(), e))?;
    Ok(format!(
        "wrote {} ({} KiB): the witness, {} steps; open it in a browser (it works offline)",
        page.display(),
        html.len().div_ceil(1024),
        witness.choices.len()
    ))
}
