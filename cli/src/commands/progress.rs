//! `cudasem progress TEST.txt... [--model M]... [--format text|json] [--lasso]`: the verdicts of
//! the GPU progress models (Sorensen et al., OOPSLA 2021; digest `seed000_progress.md`) on AXB
//! litmus tests, with lasso counterexamples for the `F` ones.
//!
//! One line (text) or one JSON object (json) per test, models in the column order of
//! `conformance/progress/expected.csv`. Exit 0 when every file was analysed, 2 when one could
//! not be read or parsed (`file:line: what`), the other files still being reported.

use crate::Exit;
use crate::flags::OutputFormat;
use explore::progress::axb::{self, AxbState, AxbTest};
use explore::progress::lts::{ExploreError, Limits};
use explore::progress::{
    Counterexample, NodeId, Oracle, ProgressModel, Reason, Transition, UnitSet,
};
use serde_json::{Value, json};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ProgressArgs {
    /// AXB test files (`THREAD<k>` blocks of atomic_exch_branch / atomic_chk_branch / atomic_store).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Only these models (repeat or separate by commas): unfair, hsa, obe, hsa_obe, lobe, fair,
    /// each also `_strong`; `-` may replace `_`. Default: all 11.
    #[arg(long = "model", value_delimiter = ',')]
    pub models: Vec<ProgressModel>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Print a lasso (stem and cycle, with states) for every `F` verdict.
    #[arg(long)]
    pub lasso: bool,
    /// Give up on a test whose reachable states (AXB state and the set of units that stepped)
    /// exceed this bound: it gets no verdict.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_states)]
    pub max_states: usize,
    /// The time bound of the whole command (a test it cuts gets no verdict, later tests are not
    /// analysed).
    #[command(flatten)]
    pub timeout: crate::timeout::Timeout,
    /// The memory budget of the command (bytes, or with a K, M, G or T suffix): reaching it
    /// stops as `--timeout` does. Default: half of the machine's memory.
    #[arg(long, value_name = "BYTES", value_parser = crate::budget::parse_size)]
    pub max_memory: Option<u64>,
}

pub fn run(args: ProgressArgs) -> Exit {
    let models: Vec<ProgressModel> = if args.models.is_empty() {
        ProgressModel::ALL.to_vec()
    } else {
        args.models.clone()
    };
    // `sequential_in_order_hangs` is a column of expected.csv: shown with the full default set.
    let show_sequential = args.models.is_empty();
    let mut outcome = Exit::Clean;
    for file in &args.files {
        let path = file.display().to_string();
        let source = match std::fs::read_to_string(file) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: cannot read `{path}`: {e}");
                outcome = outcome.worst(Exit::BadInput);
                continue;
            }
        };
        let test = match axb::parse(&path, &source) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                outcome = outcome.worst(Exit::BadInput);
                continue;
            }
        };
        let stop = args.timeout.start();
        let limits = Limits {
            max_states: args.max_states,
        };
        let oracle = match test.oracle_until(limits, &stop) {
            Ok(o) => o,
            Err(e) => {
                let this = match e {
                    // A test too large for the progress models: the user's to shrink.
                    ExploreError::TooManyUnits(_) => {
                        eprintln!("error: {path}: {e}");
                        Exit::BadInput
                    }
                    // The state bound cut the exploration: no verdict, as any bound does.
                    ExploreError::StateBound(n) => {
                        let hit = scheduler::BoundHit::States(n as u64);
                        eprintln!(
                            "{path}: stopped by {hit}: more than {n} states; no verdict (raise \
                             the bound or shrink the program)"
                        );
                        if let Err(exit) = bounded_row(&test, hit, args.format) {
                            return exit;
                        }
                        Exit::Misbehaved
                    }
                    // Time, memory or Ctrl-C: this test has no verdict, and the command ends.
                    ExploreError::Stopped(states) => {
                        eprintln!(
                            "{path}: stopped: {} after {states} states; no verdict",
                            args.timeout.flag_text()
                        );
                        let hit = crate::bounds::stopped(args.timeout.millis());
                        if let Err(exit) = bounded_row(&test, hit, args.format) {
                            return exit;
                        }
                        return outcome.worst(Exit::Misbehaved);
                    }
                    // The LTS broke an invariant of its construction: a bug in cudasem.
                    ExploreError::NotMonotone { .. } => {
                        crate::failure::Failure::internal(format!("{path}: {e}")).report()
                    }
                };
                outcome = outcome.worst(this);
                continue;
            }
        };
        let sequential = show_sequential.then(|| test.sequential_in_order_hangs());
        let row = Row {
            test: &test,
            oracle: &oracle,
            models: &models,
            sequential,
            lasso: args.lasso,
        };
        let text = match args.format {
            OutputFormat::Text => row.text(),
            OutputFormat::Json => format!("{}\n", row.json_line()),
        };
        if let Err(error) = crate::emit::stdout(&text) {
            eprint!("{}", error.rendered());
            return Exit::BadInput;
        }
        if crate::emit::closed() {
            break;
        }
    }
    outcome
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// One test's answer: its verdict under each model, whether the sequential in-order run
/// hangs (when asked), and with `lasso` each non-termination's lasso.
struct Row<'a> {
    test: &'a AxbTest,
    oracle: &'a Oracle<AxbState>,
    models: &'a [ProgressModel],
    sequential: Option<bool>,
    lasso: bool,
}

impl Row<'_> {
    /// `2t_2i_5: unfair=F hsa=P ...`, then with `lasso` two or three indented lines per F verdict.
    fn text(&self) -> String {
        let mut out = format!("{}:", self.test.name);
        for m in self.models {
            out += &format!(" {}={}", m.name(), self.oracle.verdict(*m).letter());
        }
        if let Some(s) = self.sequential {
            out += &format!(" sequential_in_order_hangs={}", yes_no(s));
        }
        out.push('\n');
        if self.lasso {
            for m in self.models {
                let Some(cx) = self.oracle.counterexample(*m) else {
                    continue;
                };
                let units = |ts: &[Transition]| {
                    ts.iter()
                        .map(|t| format!("T{}", t.unit))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                let or_empty = |s: String| {
                    if s.is_empty() {
                        "(none)".to_string()
                    } else {
                        s
                    }
                };
                out += &format!(
                    "  {}: stem: {}; cycle: {} ({})\n",
                    m.name(),
                    or_empty(units(&cx.stem)),
                    or_empty(units(&cx.cycle)),
                    why(&cx)
                );
                out += &format!(
                    "    stem:  {}\n",
                    states(
                        self.test,
                        self.oracle,
                        &cx.stem,
                        self.oracle.lts().initial()
                    )
                );
                let start = cx.loop_node(self.oracle.lts().initial());
                out += &format!(
                    "    cycle: {}\n",
                    states(self.test, self.oracle, &cx.cycle, start)
                );
            }
        }
        out
    }

    /// `{"test": ..., "verdicts": {...}, ...}` on one line. Built by hand so that the verdicts keep
    /// the column order of expected.csv (`serde_json::Map` sorts its keys).
    fn json_line(&self) -> String {
        let verdicts: Vec<(String, Value)> = self
            .models
            .iter()
            .map(|m| {
                (
                    m.name().to_string(),
                    Value::String(self.oracle.verdict(*m).letter().to_string()),
                )
            })
            .collect();
        let mut fields = vec![
            (
                "test".to_string(),
                Value::String(self.test.name.clone()).to_string(),
            ),
            ("verdicts".to_string(), ordered_object(&verdicts)),
            ("bound_hit".to_string(), "null".to_string()),
        ];
        if let Some(s) = self.sequential {
            fields.push((
                "sequential_in_order_hangs".to_string(),
                Value::String(yes_no(s).into()).to_string(),
            ));
        }
        if self.lasso {
            let lassos: Vec<(String, Value)> = self
                .models
                .iter()
                .filter_map(|m| {
                    self.oracle.counterexample(*m).map(|cx| {
                        (
                            m.name().to_string(),
                            json_lasso(self.test, self.oracle, &cx),
                        )
                    })
                })
                .collect();
            fields.push(("lassos".to_string(), ordered_object(&lassos)));
        }
        raw_object(&fields)
    }
}

/// `pc=(0,0) mem=(0) -T1-> pc=(0,end) mem=(1)`.
fn states(
    test: &AxbTest,
    oracle: &Oracle<AxbState>,
    steps: &[Transition],
    start: NodeId,
) -> String {
    let lts = oracle.lts();
    let mut out = test.describe(&lts.node(start).state);
    for t in steps {
        out += &format!(" -T{}-> {}", t.unit, test.describe(&lts.node(t.to).state));
    }
    out
}

/// `{T0,T1}`.
fn threads(s: UnitSet) -> String {
    format!(
        "{{{}}}",
        s.iter()
            .map(|u| format!("T{u}"))
            .collect::<Vec<_>>()
            .join(",")
    )
}

/// `T0 steps`, `T0 and T1 both step`, `T0, T1 and T2 all step`.
fn stepping(s: UnitSet) -> String {
    let names: Vec<String> = s.iter().map(|u| format!("T{u}")).collect();
    match names.as_slice() {
        [] => "no thread steps".to_string(),
        [one] => format!("{one} steps"),
        [a, b] => format!("{a} and {b} both step"),
        [init @ .., last] => format!("{} and {last} all step", init.join(", ")),
    }
}

/// Why the lasso is a non-termination that the model allows.
fn why(cx: &Counterexample) -> String {
    let model = cx.model.name();
    match cx.reason {
        Reason::Deadlock { blocked } => {
            format!("deadlock: {} live, no thread can step", threads(blocked))
        }
        Reason::WeakCycle {
            fair,
            stepping: s,
            disabled,
        } => {
            let mut w = format!("{}; F = {} under {model}", stepping(s), threads(fair));
            if fair.is_empty() {
                w += ": no thread is owed a step";
            }
            if !disabled.is_empty() {
                w += &format!("; {} disabled on the cycle", threads(disabled));
            }
            w
        }
        Reason::StrongCycle { fair, stepping: s } => format!(
            "{}; F = {} under {model}; the cycle takes every step of an F thread from its states and none leaves them",
            stepping(s),
            threads(fair)
        ),
    }
}

/// A JSON object with its keys in the given order.
/// The JSON line of a test a bound cut (`--format json`): no verdicts, and the bound, as every
/// command names it (`"bound_hit": {"bound": "states", "limit": N}`). The text says it on
/// standard error. `Err` is the exit of a standard output that cannot be written.
fn bounded_row(test: &AxbTest, hit: scheduler::BoundHit, format: OutputFormat) -> Result<(), Exit> {
    if format != OutputFormat::Json {
        return Ok(());
    }
    let line = raw_object(&[
        (
            "test".to_string(),
            Value::String(test.name.clone()).to_string(),
        ),
        ("verdicts".to_string(), "null".to_string()),
        (
            "bound_hit".to_string(),
            crate::bounds::json(Some(hit)).to_string(),
        ),
    ]);
    crate::emit::stdout(&format!("{line}\n")).map_err(|error| {
        eprint!("{}", error.rendered());
        Exit::BadInput
    })
}

fn ordered_object(fields: &[(String, Value)]) -> String {
    let raw: Vec<(String, String)> = fields
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect();
    raw_object(&raw)
}

/// A JSON object from keys and already-serialised values, in order.
fn raw_object(fields: &[(String, String)]) -> String {
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}:{v}", Value::String(k.clone())))
        .collect();
    format!("{{{}}}", body.join(","))
}

fn json_lasso(test: &AxbTest, oracle: &Oracle<AxbState>, cx: &Counterexample) -> Value {
    let lts = oracle.lts();
    let steps = |ts: &[Transition]| -> Vec<Value> {
        ts.iter()
            .map(|t| json!({"thread": t.unit, "to": test.describe(&lts.node(t.to).state)}))
            .collect()
    };
    let set = |s: UnitSet| s.iter().collect::<Vec<_>>();
    let (kind, fair, step_set, disabled) = match cx.reason {
        Reason::Deadlock { blocked } => ("deadlock", UnitSet::EMPTY, UnitSet::EMPTY, blocked),
        Reason::WeakCycle {
            fair,
            stepping,
            disabled,
        } => ("weak-cycle", fair, stepping, disabled),
        Reason::StrongCycle { fair, stepping } => ("strong-cycle", fair, stepping, UnitSet::EMPTY),
    };
    json!({
        "start": test.describe(&lts.node(lts.initial()).state),
        "stem": steps(&cx.stem),
        "loop_start": test.describe(&lts.node(cx.loop_node(lts.initial())).state),
        "cycle": steps(&cx.cycle),
        "kind": kind,
        "fair": set(fair),
        "stepping": set(step_set),
        "disabled": set(disabled),
        "why": why(cx),
    })
}
