//! PTX memory-model litmus tests (herd format, `conformance/ptx-litmus/`): parse, translate to
//! a PTX module and launch, explore every execution, and give the condition's verdict.
//!
//! * [`parse`]: litmus text → [`parse::LitmusTest`] (errors with line and column).
//! * [`translate`]: a test → PTX + launch + machine configuration, or an
//!   [`translate::Unsupported`] reason (proxies, several GPUs, ...).
//! * [`search`]: exhaustive search collecting the final outcomes: source-set DPOR under flat
//!   memory where it ends without a depth or budget cut, else the stateful search (DFS over
//!   state fingerprints).
//! * [`check`]: the three together; the result ([`Report`]) is what `cudasem litmus` prints.
//!
//! Memory systems ([`MemorySystem`]): `Flat` (sequentially consistent: only SC outcomes are
//! reached, so every reached outcome is one the PTX model allows) and `Cached` (the per-SM L1
//! caches of thesis chapter 4: CTAs sit on distinct SMs, and memory choices (`Choice::Mem`) are
//! branching points of the search).

pub mod parse;
pub mod search;
pub mod translate;

use explore::progress::{ProgressModel, Verdict};
use explore::{Lasso, Level, Limits};
use parse::{LitmusTest, Quantifier, Term};
use scheduler::{BoundHit, Budget};
use semantics::machine::{FinalRegisters, Machine, MemoryKind};
use std::sync::Arc;
use traces::Choice;
use traces::format::CompactTrace;

/// Which memory system runs the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemorySystem {
    /// Sequentially consistent flat memory.
    Flat,
    /// Per-SM L1 caches, shared L2 (thesis chapter 4).
    Cached,
}

impl MemorySystem {
    /// The machine's memory kind.
    pub fn kind(self) -> MemoryKind {
        match self {
            MemorySystem::Flat => MemoryKind::Flat,
            MemorySystem::Cached => MemoryKind::Cached,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            MemorySystem::Flat => "flat",
            MemorySystem::Cached => "cached",
        }
    }
}

/// How to check a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub memory: MemorySystem,
    /// Stop after this many distinct states (then the status is [`Status::Bounded`]).
    pub max_states: usize,
    /// Which steps are scheduling points ([`explore::fold`]).
    pub folding: explore::Folding,
    /// Also decide termination under this progress model (Dat3M's liveness mode; `litmus
    /// --progress MODEL`): the stateful search of [`explore`] on the test's machine,
    /// each litmus thread a unit ([`Liveness`]).
    pub progress: Option<ProgressModel>,
    /// Worker threads of that search (0: one per core); its answer is the same at any number.
    pub jobs: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            memory: MemorySystem::Flat,
            max_states: 1_000_000,
            folding: explore::Folding::Invisible,
            progress: None,
            jobs: 1,
        }
    }
}

/// The termination verdict of a litmus program under a progress model (Dat3M's liveness
/// check): does every execution fair under the model end? Each litmus thread is a unit (a warp
/// of one lane, so [`Level::Warps`]). A FAIL comes with a lasso: a stem and a cycle the
/// threads can repeat forever under the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Liveness {
    pub model: ProgressModel,
    /// Nodes of the state graph (machine state × threads that have stepped).
    pub states: usize,
    /// `None` when a bound cut the search, or it could not run (`error`).
    pub verdict: Option<Verdict>,
    pub lasso: Option<Lasso>,
    /// The lasso as the compact string `cudasem replay` takes (with the emitted PTX and
    /// [`Report::replay_flags`]); it checks that the cycle closes.
    pub replay: Option<String>,
    /// Why there is no verdict, when the search could not run (too many threads, a refused
    /// choice).
    pub error: Option<String>,
}

/// How the check ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Every execution explored: the verdict stands.
    Ok,
    /// The test uses something cudasem does not model; no verdict.
    Unsupported(String),
    /// The state bound cut the search; no verdict.
    Bounded,
    /// The time bound (`--timeout`) cut the search; no verdict.
    TimeLimit,
}

impl Status {
    pub fn word(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Unsupported(_) => "unsupported",
            Status::Bounded => "bounded",
            Status::TimeLimit => "time_limit",
        }
    }

    /// The bound that cut the search, in the one vocabulary of bounds ([`BoundHit`]), if one
    /// did: `max_states` is the state bound the search ran under ([`Options::max_states`]),
    /// `time_ms` the time bound as set, when known.
    pub fn bound_hit(&self, max_states: usize, time_ms: Option<u64>) -> Option<BoundHit> {
        match self {
            Status::Bounded => Some(BoundHit::States(max_states as u64)),
            Status::TimeLimit => Some(BoundHit::Time(time_ms)),
            Status::Ok | Status::Unsupported(_) => None,
        }
    }
}

impl Options {
    /// These options with the budget's state bound, when it sets one (the time bound is the
    /// [`scheduler::Stop`] of [`check_until`]).
    pub fn with_budget(self, budget: &Budget) -> Options {
        Options {
            max_states: budget.states.map_or(self.max_states, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            }),
            ..self
        }
    }
}

/// One reached final outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutcomeCount {
    /// Values of [`Report::terms`], in order.
    pub values: Vec<i64>,
    /// Distinct completed final states with these values.
    pub states: usize,
    /// Whether the condition's proposition is true of it.
    pub satisfies: bool,
}

/// A replayable execution reaching a final state that witnesses `exists` or refutes
/// `~exists`/`forall`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witness {
    pub values: Vec<i64>,
    /// Every choice from the initial state.
    pub choices: Vec<Choice>,
    /// The compact string `cudasem replay` takes (with the emitted PTX and [`Report::replay_flags`]).
    pub compact: String,
}

/// The result of checking one test.
#[derive(Debug, Clone)]
pub struct Report {
    pub name: String,
    pub quantifier: Quantifier,
    /// The condition's proposition, printed.
    pub condition: String,
    pub memory: MemorySystem,
    pub status: Status,
    /// Whether the condition as written holds (the CSVs' 1); `None` when a bound cut the search
    /// before an outcome decided it.
    pub holds: Option<bool>,
    /// The registers and locations the condition reads.
    pub terms: Vec<Term>,
    pub outcomes: Vec<OutcomeCount>,
    pub witness: Option<Witness>,
    /// States the search visited; what it counts depends on the search that decided the test
    /// ([`Report::searched`]).
    pub states: usize,
    /// Which search decided the test ([`search::Searched::counts`] says what `states` counts).
    pub searched: search::Searched,
    pub deadlocks: usize,
    pub faults: usize,
    pub first_fault: Option<String>,
    /// The machine refused one of its enabled choices (a cudasem bug): no verdict. With the
    /// compact string of the schedule that shows it.
    pub refused: Option<(scheduler::Refused, String)>,
    /// The translated PTX (absent when unsupported before translation).
    pub ptx: Option<String>,
    /// The flags `cudasem replay` needs besides the compact string and the PTX file.
    pub replay_flags: Vec<String>,
    /// The termination verdict, when [`Options::progress`] asked for one.
    pub liveness: Option<Liveness>,
}

/// herd's `Observation`: how the final outcomes relate to the condition's proposition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observation {
    /// Every final outcome satisfies it.
    Always,
    /// Some do, some do not.
    Sometimes,
    /// None does.
    Never,
}

impl Observation {
    pub const fn name(self) -> &'static str {
        match self {
            Observation::Always => "Always",
            Observation::Sometimes => "Sometimes",
            Observation::Never => "Never",
        }
    }
}

impl Report {
    /// herd's `Positive`/`Negative` witness counts: final states that satisfy the proposition
    /// and those that do not (herd counts candidate executions; cudasem distinct final states).
    pub fn positive_negative(&self) -> (usize, usize) {
        self.outcomes.iter().fold((0, 0), |(p, n), o| {
            if o.satisfies {
                (p + o.states, n)
            } else {
                (p, n + o.states)
            }
        })
    }

    /// herd's `Observation`, when the search was complete (a bounded search knows only that
    /// the proposition is sometimes satisfied, or sometimes not).
    pub fn observation(&self) -> Option<Observation> {
        let (p, n) = self.positive_negative();
        match (p, n) {
            (0, 0) => None,
            (_, 0) | (0, _) if self.status != Status::Ok => None,
            (_, 0) => Some(Observation::Always),
            (0, _) => Some(Observation::Never),
            _ => Some(Observation::Sometimes),
        }
    }

    fn unsupported(test: &LitmusTest, memory: MemorySystem, reason: String) -> Report {
        Report {
            name: test.name.clone(),
            quantifier: test.condition.quantifier,
            condition: test.condition.expr.to_string(),
            memory,
            status: Status::Unsupported(reason),
            holds: None,
            terms: test.observed(),
            outcomes: Vec::new(),
            witness: None,
            states: 0,
            searched: search::Searched::States,
            deadlocks: 0,
            faults: 0,
            first_fault: None,
            refused: None,
            ptx: None,
            replay_flags: Vec::new(),
            liveness: None,
        }
    }

    /// Outcome formatted herd-style.
    pub fn outcome_text(&self, values: &[i64]) -> String {
        search::format_outcome(&self.terms, &values.to_vec())
    }
}

/// Translates, explores and judges `test`.
pub fn check(test: &LitmusTest, options: &Options) -> Report {
    check_until(test, options, &scheduler::Stop::never())
}

/// [`check`], with the search cut short ([`Status::TimeLimit`]) when `stop` is requested.
pub fn check_until(test: &LitmusTest, options: &Options, stop: &scheduler::Stop) -> Report {
    let t = match translate::translate(test, options.memory.kind()) {
        Ok(t) => t,
        Err(u) => return Report::unsupported(test, options.memory, u.reason),
    };
    let mut report = Report::unsupported(test, options.memory, String::new());
    report.ptx = Some(t.ptx.clone());
    let machine = match start(&t) {
        Ok(m) => m,
        Err(e) => {
            report.status = Status::Unsupported(e.to_string());
            return report;
        }
    };
    let program_hash = machine.program().hash;
    report.replay_flags = vec![
        "--grid".into(),
        t.launch.grid[0].to_string(),
        "--block".into(),
        t.launch.block[0].to_string(),
        "--warp-size".into(),
        t.config.device.warp_size.to_string(),
        "--sms".into(),
        t.config.device.num_sms.to_string(),
        "--max-blocks-per-sm".into(),
        t.config.device.max_blocks_per_sm.to_string(),
    ];
    if t.config.memory == MemoryKind::Cached {
        // The witness's choices include memory steps: it replays only on the cached machine.
        report
            .replay_flags
            .extend(["--memory".into(), "cached".into()]);
    }
    let found = search::explore_staged(
        machine.clone(),
        &t,
        options.max_states,
        options.folding,
        search::QUICK_STATES,
        stop,
    );
    report.states = found.states;
    report.searched = found.searched;
    report.deadlocks = found.deadlocks;
    report.faults = found.faults;
    report.first_fault = found.first_fault.clone();
    report.refused = found.refused.as_ref().map(|r| {
        let compact = CompactTrace {
            program_hash,
            cycle_start: None,
            choices: r.schedule(),
        }
        .encode();
        (r.clone(), compact)
    });
    let expr = &test.condition.expr;
    let satisfies = |values: &Vec<i64>| {
        expr.eval(&|term: &Term| match term {
            Term::Int(v) => *v,
            other => t
                .observed
                .iter()
                .position(|(o, _)| o == other)
                .and_then(|i| values.get(i).copied())
                .unwrap_or(0),
        })
    };
    report.outcomes = found
        .outcomes
        .iter()
        .map(|(values, &states)| OutcomeCount {
            values: values.clone(),
            states,
            satisfies: satisfies(values),
        })
        .collect();
    let (holds, witness) =
        search::verdict(test.condition.quantifier, found.outcomes.keys(), satisfies);
    report.status = if found.timed_out {
        Status::TimeLimit
    } else if found.bounded {
        Status::Bounded
    } else {
        Status::Ok
    };
    // A reached outcome decides the condition whatever cut the search (as herd and Dat3M
    // answer): an `exists` whose proposition some execution satisfies holds, a `~exists` or
    // `forall` that some execution refutes does not. Without one, only a complete search
    // decides.
    if report.refused.is_none() && (report.status == Status::Ok || witness.is_some()) {
        report.holds = Some(holds);
    }
    if let Some(model) = options.progress {
        report.liveness = Some(liveness(&machine, model, options, stop));
    }
    // A witness is shown even when bounded: the execution it names is real.
    if let Some(values) = witness
        && let Some(choices) = found.paths.get(values)
    {
        let compact = CompactTrace {
            program_hash,
            cycle_start: None,
            choices: choices.clone(),
        }
        .encode();
        report.witness = Some(Witness {
            values: values.clone(),
            choices: choices.clone(),
            compact,
        });
    }
    report
}

/// Whether every execution of the test's machine that is fair under `model` ends ([`Liveness`]).
fn liveness(
    machine: &Machine,
    model: ProgressModel,
    options: &Options,
    stop: &scheduler::Stop,
) -> Liveness {
    let limits = Limits {
        max_states: options.max_states,
        folding: options.folding,
        jobs: options.jobs,
    };
    let observe = scheduler::outcome::Observe::default();
    let mut answer = Liveness {
        model,
        states: 0,
        verdict: None,
        lasso: None,
        replay: None,
        error: None,
    };
    // Persistent sets where they decide `model` exactly as the full graph does.
    let por = match options.folding {
        explore::Folding::None => explore::Por::None,
        explore::Folding::Invisible => explore::Por::for_model(model),
    };
    match explore::explore_with(machine, Level::Warps, &observe, limits, por, stop) {
        Ok(x) => {
            answer.states = x.states();
            answer.verdict = x.verdict(model);
            answer.lasso = x.lasso(model);
            answer.replay = answer.lasso.as_ref().map(|l| {
                let mut choices = l.stem.clone();
                choices.extend_from_slice(&l.cycle);
                CompactTrace {
                    program_hash: machine.program().hash,
                    cycle_start: Some(l.stem.len()),
                    choices,
                }
                .encode()
            });
        }
        Err(e) => answer.error = Some(e.to_string()),
    }
    answer
}

/// Why a translated test does not run: a cudasem bug in the translation, reported as the
/// test's status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    #[error("the translated PTX does not load: {0}")]
    Load(LoadError),
    #[error("the translated launch does not start: {0}")]
    Launch(semantics::machine::LaunchError),
}

/// PTX text that does not parse or load: its first diagnostic (errors first), with its line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error("line {line}: {message}")]
    At { line: usize, message: String },
    /// A failure without a diagnostic.
    #[error("unknown error")]
    Unknown,
}

/// The machine of a translated test in its initial state: what [`check`] explores and a
/// witness's choices replay on. The error says why the translation does not run.
pub fn start(t: &translate::Translation) -> Result<Machine, StartError> {
    let program = load(&t.ptx).map_err(StartError::Load)?;
    let mut machine =
        Machine::new(Arc::new(program), &t.launch, &t.config).map_err(StartError::Launch)?;
    // The condition reads the threads' final registers (translate's module header).
    machine.set_final_registers(FinalRegisters::Observed);
    Ok(machine)
}

/// Parses and loads PTX text; the error is the first diagnostic.
pub fn load(ptx: &str) -> Result<semantics::Program, LoadError> {
    let parsed = ptx_parser::parse(ptx);
    if parsed.has_errors() {
        return Err(first_message(ptx, &parsed.diagnostics));
    }
    semantics::load(&parsed.module, ptx)
        .map(|(p, _)| p)
        .map_err(|d| first_message(ptx, &d))
}

fn first_message(ptx: &str, d: &[ptx_parser::Diagnostic]) -> LoadError {
    d.iter()
        .find(|d| d.severity == ptx_parser::Severity::Error)
        .or(d.first())
        .map_or(LoadError::Unknown, |d| {
            let start = (d.span.start as usize).min(ptx.len());
            LoadError::At {
                line: ptx[..start].matches('\n').count() + 1,
                message: d.message.clone(),
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_litmus_search_names_its_bound_in_the_one_vocabulary() {
        assert_eq!(
            Status::Bounded.bound_hit(10, None),
            Some(BoundHit::States(10))
        );
        assert_eq!(
            Status::TimeLimit.bound_hit(10, Some(1500)),
            Some(BoundHit::Time(Some(1500)))
        );
        assert_eq!(Status::Ok.bound_hit(10, None), None);
        assert_eq!(Status::Unsupported(String::new()).bound_hit(10, None), None);
        let budget = Budget {
            states: Some(3),
            ..Budget::UNBOUNDED
        };
        assert_eq!(Options::default().with_budget(&budget).max_states, 3);
        assert_eq!(
            Options::default().with_budget(&Budget::UNBOUNDED),
            Options::default()
        );
    }
}
