//! `cudasem explore FILE.ptx --launch L [--progress MODEL] [--level blocks|warps|lanes]
//! [--max-states N] [--symmetry blocks|none] [run options]`: exhaustive exploration (`explore`).
//!
//! Prints the bound and the state counts, the set of final outcomes, and the verdict:
//! "terminates under MODEL" (every execution fair under the model at the level ends), or
//! "may not terminate under MODEL" with a lasso: the stem (shortest, breadth-first), the cycle
//! step by step (choice, pc, lanes, active mask, token stack), why the cycle is fair under the
//! model (F, the units stepping in it, the units disabled on it), and the `cudasem replay`
//! command that re-executes it and checks that the cycle closes. With a bound hit, no verdict.
//! A line says whether the states were taken up to a permutation of the blocks
//! (`explore::symmetry`), or why not.
//!
//! Exit codes: 0 terminates and no outcome is a failure, 1 may not terminate, a failing
//! outcome (deadlock, fault) or no verdict (bound hit), 2 bad input.
//!
//! `--search outcomes` asks for the final outcomes only ([`super::explore_outcomes`]): a
//! sleep-set depth-first search, much cheaper than building the graph the verdict needs.

use crate::Exit;
use crate::commands::replay::{event_lines, reproduce, save_trace, trace_of};
use crate::error::Error;
use crate::failure::Failure;
use crate::flags::OutputFormat;
use crate::options::{RunOptions, Setup};
use explore::progress::{ProgressModel, Reason, Verdict};
use explore::{self, Exploration, Folding, Lasso, Level, Limits};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;
use traces::Choice;

#[derive(clap::Args)]
pub struct ExploreArgs {
    /// The PTX file, or a CUDA file (.cu, compiled with clang: docs/cuda.md).
    pub file: PathBuf,
    #[command(flatten)]
    pub options: RunOptions,
    /// The progress model: unfair, or fair, obe, hsa, hsa-obe, lobe, each optionally -strong
    /// (strong fairness towards nobody is unfairness, so there is no unfair-strong).
    #[arg(long, value_name = "MODEL", default_value = "fair", value_parser = parse_model)]
    pub progress: ProgressModel,
    /// The units the model is fair to: grids (of a program of several launches), blocks, warps
    /// or lanes (default: blocks for several blocks, else warps for several warps, else lanes).
    #[arg(long, value_name = "LEVEL", value_parser = parse_level)]
    pub level: Option<Level>,
    /// What to search for. `full`: every state and transition, the final outcomes and the
    /// termination verdict under --progress (with a lasso). `outcomes`: the final outcomes
    /// only, by depth-first search with source-set DPOR, or sleep sets and state caching where
    /// a schedule loops (much faster; no verdict).
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = Search::Full)]
    pub search: Search,
    /// Which steps are scheduling points. `fold`: only visible operations (memory, atomics,
    /// fences, barriers, exit); a warp's register-only steps run together with its next visible
    /// one, which gives the same outcomes, verdicts and lassos from far fewer states; with it the
    /// full search uses persistent sets under the unfair and fair models, and the outcomes search
    /// source-set DPOR. `none`: every step, nothing pruned (the unreduced search).
    #[arg(long, value_name = "R", default_value = "fold", value_parser = parse_folding)]
    pub reduction: Folding,
    /// `--search full`: `blocks` counts states up to a permutation of the blocks where no
    /// thread can tell its block from another (no `%ctaid` or `%smid` read, flat memory) and
    /// the model is unfair or fair: the same outcomes, verdict and lasso from far fewer states
    /// (docs/exploration.md, "Symmetry"); the report says when it does not apply, and why.
    /// `none`: concrete states. `--reduction none` turns it off too.
    #[arg(long, value_name = "S", default_value = "blocks", value_parser = parse_symmetry)]
    pub symmetry: explore::Symmetry,
    /// Bound on the explored states (machine state × units that have stepped) of
    /// `--search full`.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub max_states: usize,
    /// Bound on the steps computed by `--search outcomes`.
    #[arg(long, value_name = "N", default_value_t = 100_000_000)]
    pub max_transitions: u64,
    /// Worker threads (0: one per core; default 1). The states, outcomes, verdict and lasso
    /// are the same at any number: only the time changes. `--search outcomes` runs its subtrees
    /// (`--split-depth`) on them, so it needs a depth above 0 to use more than one.
    #[arg(long, value_name = "J", default_value_t = 1)]
    pub jobs: usize,
    /// `--search outcomes`: cut the schedule tree D steps below the start into subtrees searched
    /// apart (by --jobs threads or --shard machines). The outcomes do not change; the counted
    /// states grow with D; reports merge only with the same D.
    #[arg(long, value_name = "D", default_value_t = 0)]
    pub split_depth: usize,
    /// `--search outcomes`: explore only the subtrees k with k mod N = I (0 <= I < N); write the
    /// report with --report and combine all N with `cudasem merge` (docs/sharding.md).
    #[arg(long, value_name = "I/N", requires = "report", value_parser = crate::commands::merge::parse_shard)]
    pub shard: Option<scheduler::shard::Shard>,
    /// With --shard: write this shard's report (JSON) to FILE.
    #[arg(long, value_name = "FILE", requires = "shard")]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub timeout: crate::timeout::Timeout,
    /// Write the lasso (or the first failing outcome's run) as a trace file with its events
    /// (.ron for RON, else JSON Lines).
    #[arg(long, value_name = "OUT")]
    pub save: Option<PathBuf>,
    /// Write the lasso (or the first failing outcome's run) as a teaching page (as `cudasem
    /// view` does): one self-contained HTML file, the lasso's cycle marked.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Print the lasso as Graphviz instead of the report: the stem and the cycle, each edge
    /// labelled with its choice and the PTX instruction it executed.
    #[arg(long, conflicts_with = "format")]
    pub dot: bool,
}

/// `--search`: which exploration answers the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Search {
    /// The stateful breadth-first search: outcomes, verdict and lasso.
    Full,
    /// The final outcomes only (sleep-set depth-first search).
    Outcomes,
}

pub fn parse_model(s: &str) -> Result<ProgressModel, Error> {
    s.parse()
        .map_err(|e: explore::progress::UnknownModel| Error::Usage(e.to_string()))
}

/// `--reduction`, shared with `check` and `litmus`.
pub fn parse_folding(s: &str) -> Result<Folding, Error> {
    s.parse()
        .map_err(|e: explore::UnknownFolding| Error::Usage(e.to_string()))
}

fn parse_symmetry(s: &str) -> Result<explore::Symmetry, Error> {
    s.parse()
        .map_err(|e: explore::UnknownSymmetry| Error::Usage(e.to_string()))
}

fn parse_level(s: &str) -> Result<Level, Error> {
    s.parse()
        .map_err(|e: explore::UnknownLevel| Error::Usage(e.to_string()))
}

pub fn run(mut args: ExploreArgs) -> Exit {
    crate::contexts::per_context(&mut args, |a| Failure::outcome(run_inner(a)))
}

crate::per_context_args!(ExploreArgs, "--html" => html, "--save" => save);

/// `fair (weak)`, `lobe (strong)`.
pub fn model_text(m: ProgressModel) -> String {
    let name = m.name();
    match name.strip_suffix("_strong") {
        Some(stem) => format!("{} (strong)", stem.replace('_', "-")),
        None if name == "unfair" => "unfair".to_string(),
        None => format!("{} (weak)", name.replace('_', "-")),
    }
}

/// A step's choice as the lasso prints it: with several grids, a warp's step also names its
/// grid and its block in that grid (`warp 1.0 (grid 0 block 1)`; the choice itself numbers
/// blocks across grids, as replay strings do).
fn choice_label(m: &semantics::machine::Machine, c: &Choice) -> String {
    match c.warp() {
        Some((block, _)) => format!("{c}{}", m.grid_note(block)),
        None => c.to_string(),
    }
}

/// The lasso's steps with what each executed.
fn steps_text(setup: &Setup, stem: &[Choice], cycle: &[Choice]) -> (Vec<String>, Vec<String>) {
    let mut m = setup.machine.clone();
    let mut lines = |choices: &[Choice], offset: usize| {
        let mut out = Vec::new();
        for (i, c) in choices.iter().enumerate() {
            let label = choice_label(&m, c);
            let mut ev = Vec::new();
            if m.step_observed(c, &mut ev).is_err() {
                out.push(format!(
                    "{:>6}  {label}  (not enabled: internal error)",
                    offset + i
                ));
                break;
            }
            let ev = event_lines(&ev);
            match ev.first() {
                Some(first) => out.push(format!("{:>6}  {label:<24} {first}", offset + i)),
                None => out.push(format!("{:>6}  {label}", offset + i)),
            }
            for more in ev.iter().skip(1) {
                out.push(format!("{:>6}  {:<24} {more}", "", ""));
            }
        }
        out
    };
    let s = lines(stem, 0);
    let c = lines(cycle, stem.len());
    (s, c)
}

/// The grids that stay not resident in every state of the lasso's cycle, each with why at the
/// cycle's start (a program of several launches: "grid 1 (`producer`): 1 block not resident:
/// no SM has room ..."); empty for one kernel launch.
fn never_resident(setup: &Setup, stem: &[Choice], cycle: &[Choice]) -> Vec<String> {
    if setup.machine.grids().len() < 2 {
        return Vec::new();
    }
    let mut m = setup.machine.clone();
    if stem.iter().any(|c| m.step(c).is_err()) {
        return Vec::new();
    }
    let mut waits = m.grids_not_resident();
    for c in cycle {
        if m.step(c).is_err() {
            return Vec::new();
        }
        let now = m.grids_not_resident();
        waits.retain(|w| now.iter().any(|n| n.grid == w.grid));
    }
    waits.iter().map(ToString::to_string).collect()
}

/// Graphviz of a lasso: states `s0..`, stem edges in black, cycle edges in red back to the
/// cycle's first state (a double circle); each edge names its choice and, for a unit's step,
/// the PTX line and instruction it executed (from the program's text `ptx`). Without a
/// lasso, one node says the verdict.
fn lasso_dot(setup: &Setup, ptx: &str, title: &str, lasso: Option<&Lasso>) -> String {
    use std::fmt::Write as _;
    let esc = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    let lines: Vec<&str> = ptx.lines().collect();
    let mut out = String::new();
    let _ = writeln!(out, "digraph lasso {{");
    let _ = writeln!(out, "  label=\"{}\";", esc(title));
    let _ = writeln!(out, "  labelloc=t;");
    let _ = writeln!(
        out,
        "  node [shape=circle, fontname=\"monospace\", fontsize=10];"
    );
    let _ = writeln!(out, "  edge [fontname=\"monospace\", fontsize=9];");
    let Some(l) = lasso else {
        let _ = writeln!(out, "  s0 [label=\"s0\"];");
        let _ = writeln!(out, "}}");
        return out;
    };
    let start = l.stem.len();
    let total = start + l.cycle.len();
    for i in 0..total.max(start + 1) {
        let shape = if i == start {
            ", shape=doublecircle, color=red"
        } else {
            ""
        };
        let _ = writeln!(out, "  s{i} [label=\"s{i}\"{shape}];");
    }
    let mut m = setup.machine.clone();
    for (i, c) in l.stem.iter().chain(&l.cycle).enumerate() {
        let mut events = Vec::new();
        let what = if m.step_observed(c, &mut events).is_err() {
            "(not enabled: internal error)".to_string()
        } else {
            events
                .iter()
                .find_map(|e| match e {
                    traces::Event::Executed { pc, .. } => {
                        let line = setup
                            .program
                            .source
                            .get(*pc as usize)
                            .map_or(0, |s| s.ptx_line);
                        // The instruction without its comment, spaces collapsed.
                        let instr = lines
                            .get((line as usize).wrapping_sub(1))
                            .map_or("", |t| t.split("//").next().unwrap_or(""))
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" ");
                        Some(format!("line {line}: {instr}"))
                    }
                    _ => None,
                })
                .or_else(|| event_lines(&events).into_iter().next())
                .unwrap_or_default()
        };
        let to = if i + 1 == total && !l.cycle.is_empty() {
            start
        } else {
            i + 1
        };
        let style = if i >= start { ", color=red" } else { "" };
        let mut label = format!("{}\\l", esc(&c.to_string()));
        if !what.is_empty() {
            label.push_str(&format!("{}\\l", esc(&what)));
        }
        let _ = writeln!(out, "  s{i} -> s{to} [label=\"{label}\"{style}];");
    }
    let _ = writeln!(out, "}}");
    out
}

fn reason_text(x: &Exploration, lasso: &Lasso) -> String {
    let u = &x.units;
    match lasso.reason {
        Reason::Deadlock { blocked } => format!(
            "a deadlock: nothing can step, {} are live",
            u.names(blocked)
        ),
        Reason::WeakCycle {
            fair,
            stepping,
            disabled,
        } => {
            let mut s = format!(
                "F = {} all along the cycle; stepping in it: {}",
                u.names(fair),
                u.names(stepping)
            );
            if !disabled.is_empty() {
                s.push_str(&format!(
                    "; disabled somewhere on it (not continuously enabled, so weak fairness owes them nothing): {}",
                    u.names(disabled)
                ));
            }
            if fair.is_empty() {
                s.push_str("; the model guarantees no unit a step, so any cycle is fair");
            } else {
                s.push_str("; every unit of F is served, so the cycle is weakly fair");
            }
            s
        }
        Reason::StrongCycle { fair, stepping } => format!(
            "F = {} all along the cycle; stepping in it: {}; the cycle takes every step of an F unit enabled on it and none leaves it, so it is strongly fair",
            u.names(fair),
            u.names(stepping)
        ),
    }
}

fn run_inner(args: &ExploreArgs) -> Result<Exit, Failure> {
    if args.search == Search::Full && (args.shard.is_some() || args.split_depth > 0) {
        return Err(Failure::BadInput(Error::Refused(
            "error: --shard and --split-depth cut the outcomes search: add --search outcomes (the full search's verdict needs the whole state graph on one machine)\n"
                .to_string(),
        )));
    }
    let setup = args.options.setup(&args.file)?;
    if args.search == Search::Outcomes {
        let (text, outcome) = super::explore_outcomes::run(args, &setup)?;
        crate::emit::stdout(&text)?;
        return Ok(outcome);
    }
    let level = args.level.unwrap_or_else(|| default_level(&setup));
    let limits = Limits {
        max_states: args.max_states,
        folding: args.reduction,
        jobs: args.jobs,
    };
    let start = Instant::now();
    let stop = args.timeout.start();
    // Persistent sets only where they decide the model as the full graph does (`Por::preserves`).
    let por = match args.reduction {
        Folding::None => explore::Por::None,
        Folding::Invisible => explore::Por::for_model(args.progress),
    };
    // Symmetry likewise (`Symmetry::preserves`), and not in the unreduced search.
    let symmetry = match args.reduction {
        Folding::None => explore::Symmetry::None,
        Folding::Invisible => args.symmetry,
    };
    let model_blind = symmetry.preserves(args.progress);
    let x = explore::explore_symmetric(
        &setup.machine,
        level,
        &setup.observe(),
        limits,
        por,
        symmetry.for_model(args.progress),
        &stop,
    )
    .map(|mut x| {
        if !model_blind {
            x.symmetry =
                explore::SymmetryUse::NotApplicable(explore::NotApplicable::Model(args.progress));
        }
        x
    })
    .map_err(|e| match e {
        explore::ExploreFailure::Refused(r) => Failure::refused(&setup, &args.options, &r),
        units @ explore::ExploreFailure::TooManyUnits(_) => {
            Failure::BadInput(Error::Input(format!("error: {units}\n")))
        }
    })?;
    crate::timeout::reporting();
    let seconds = start.elapsed().as_secs_f64();
    let model = args.progress;
    let lasso = x.lasso(model);
    let report = Report {
        args,
        setup: &setup,
        x: &x,
        level,
        model,
        limits,
        seconds,
        verdict: x.verdict(model),
        lasso: lasso.as_ref(),
        witnesses: Witnesses::of(args, &setup, &x, lasso.as_ref(), model)?,
    };
    report.write_shown()?;
    let out = if args.dot {
        report.dot()
    } else {
        match args.format {
            OutputFormat::Text => report.text(),
            OutputFormat::Json => report.json(),
        }
    };
    crate::emit::stdout(&out)?;
    Ok(report.outcome())
}

/// The level a search runs at when `--level` is not given: the coarsest unit the launch has
/// several of.
fn default_level(setup: &Setup) -> Level {
    let m = &setup.machine;
    if m.total_blocks() > 1 {
        Level::Blocks
    } else if m.warps_per_block() > 1 {
        Level::Warps
    } else {
        Level::Lanes
    }
}

/// The replay commands a search's report prints: every outcome's witness, the failing outcomes
/// (deadlocks, faults) with theirs, the lasso's; and each outcome's violated expectations.
struct Witnesses {
    each: Vec<String>,
    /// A failing outcome's status, and its witness's replay command.
    failing: Vec<(String, String)>,
    violations: Vec<Vec<String>>,
    lasso: Option<String>,
}

impl Witnesses {
    fn of(
        args: &ExploreArgs,
        setup: &Setup,
        x: &Exploration,
        lasso: Option<&Lasso>,
        model: ProgressModel,
    ) -> Result<Witnesses, Failure> {
        let policy = format!("explore {}", model.name());
        let mut each = Vec::new();
        let mut failing = Vec::new();
        for (o, info) in &x.outcomes {
            let cmd = reproduce(
                setup,
                &args.options,
                &info.witness,
                None,
                policy.clone(),
                None,
            )?;
            if o.status.is_failure() {
                failing.push((o.status.to_string(), cmd.clone()));
            }
            each.push(cmd);
        }
        let violations = x
            .outcomes
            .keys()
            .map(|o| setup.outcome_violations(o))
            .collect();
        let lasso = match lasso {
            Some(l) => {
                let mut all = l.stem.clone();
                all.extend_from_slice(&l.cycle);
                Some(reproduce(
                    setup,
                    &args.options,
                    &all,
                    Some(l.stem.len()),
                    policy,
                    None,
                )?)
            }
            None => None,
        };
        Ok(Witnesses {
            each,
            failing,
            violations,
            lasso,
        })
    }
}

/// The JSON word for what the search did with symmetry.
fn symmetry_word(u: explore::SymmetryUse) -> &'static str {
    match u {
        explore::SymmetryUse::Off => "none",
        explore::SymmetryUse::NotApplicable(_) => "not_applied",
        explore::SymmetryUse::Applied => "blocks",
        explore::SymmetryUse::FellBack => "fell_back",
    }
}

/// The report's line on symmetry; none when it was not asked for.
fn symmetry_note(u: explore::SymmetryUse) -> Option<String> {
    match u {
        explore::SymmetryUse::Off => None,
        explore::SymmetryUse::NotApplicable(why) => Some(format!("not applied ({why})")),
        explore::SymmetryUse::Applied => Some(
            "blocks: states (and an outcome's terminal states) are counted up to a permutation of the blocks, which no thread can tell apart".to_string(),
        ),
        explore::SymmetryUse::FellBack => Some(
            "not applied: up to a permutation of the blocks the states have a cycle that permutes blocks, so the search ran again without symmetry".to_string(),
        ),
    }
}

/// The JSON word for whether the fold took loads of settled words as invisible.
fn settled_word(u: explore::SettledLoads) -> &'static str {
    match u {
        explore::SettledLoads::Off => "off",
        explore::SettledLoads::Applied => "folded",
        explore::SettledLoads::FellBack => "fell_back",
    }
}

/// The report's line when the search had to run again without folding loads of settled words.
const SETTLED_FELL_BACK: &str = "an access left the buffer its address was computed from (an index past its end into another), or reached a word that the launch's address analysis gives to another warp; folding loads of words no other warp writes again, and accesses of words private to one warp, assumes neither happens: the search ran again without folding them";

/// A finished search and what its report shows.
struct Report<'a> {
    args: &'a ExploreArgs,
    setup: &'a Setup,
    x: &'a Exploration,
    level: Level,
    model: ProgressModel,
    limits: Limits,
    seconds: f64,
    verdict: Option<Verdict>,
    lasso: Option<&'a Lasso>,
    witnesses: Witnesses,
}

impl Report<'_> {
    /// Clean when the launch terminates under the model, no outcome fails and no expectation
    /// is violated.
    fn outcome(&self) -> Exit {
        let violated = self.witnesses.violations.iter().any(|v| !v.is_empty());
        if self.terminates() == Some(true) && self.witnesses.failing.is_empty() && !violated {
            Exit::Clean
        } else {
            Exit::Misbehaved
        }
    }

    fn terminates(&self) -> Option<bool> {
        self.verdict.map(|v| v == Verdict::Pass)
    }

    fn rate(&self) -> f64 {
        crate::output::per_second(self.x.states() as f64, self.seconds)
    }

    /// What `--save` and `--html` write: the lasso, else the first failing outcome's run.
    fn write_shown(&self) -> Result<(), Failure> {
        let (args, setup, x, level, model) =
            (self.args, self.setup, self.x, self.level, self.model);
        let shown = match (
            self.lasso,
            x.outcomes.iter().find(|(o, _)| o.status.is_failure()),
        ) {
            (Some(l), _) => {
                let mut all = l.stem.clone();
                all.extend_from_slice(&l.cycle);
                Some((all, Some(l.stem.len())))
            }
            (None, Some((_, info))) => Some((info.witness.clone(), None)),
            (None, None) => None,
        };
        let Some((choices, cycle_start)) = &shown else {
            return Ok(());
        };
        let policy = format!("explore {}", model.name());
        if let Some(path) = &args.save {
            let mut t = trace_of(setup, choices.clone(), policy.clone(), None);
            t.cycle_start = *cycle_start;
            let mut m = setup.machine.clone();
            let r = scheduler::replay::replay(&mut m, &t.choices, None, None, true);
            t.events = r.events;
            save_trace(path, &t)?;
        }
        if let Some(path) = &args.html {
            let fairness = self.lasso.map(|l| {
                format!(
                    "Why the cycle is fair under {} at level {level}: {}.",
                    model_text(model),
                    reason_text(x, l)
                )
            });
            crate::commands::view::write_html_flag(
                setup,
                choices,
                *cycle_start,
                policy,
                fairness,
                path,
            )?;
        }
        Ok(())
    }

    /// `--dot`: the lasso drawn on the kernel's control-flow graph.
    fn dot(&self) -> String {
        let (model, level) = (self.model, self.level);
        // The PTX (compiled, for a `.cu` file) that the program's spans point into.
        let text = self.setup.text.clone();
        let title = match self.verdict {
            None => format!("no verdict (bounded out) under {}", model_text(model)),
            Some(Verdict::Pass) => format!("terminates under {}", model_text(model)),
            Some(Verdict::Fail) => format!(
                "may not terminate under {} at level {level}",
                model_text(model)
            ),
        };
        lasso_dot(self.setup, &text, &title, self.lasso)
    }

    /// The text report: the search's size and bound, the outcomes, the verdict.
    fn text(&self) -> String {
        let mut s = self.header_text();
        s.push_str(&self.outcomes_text());
        s.push_str(&self.verdict_text());
        s
    }

    /// What was explored, how fast, and whether a bound cut it.
    fn header_text(&self) -> String {
        let (args, setup, x, level, model) =
            (self.args, self.setup, self.x, self.level, self.model);
        let mut s = format!(
            "explored `{}` ({}, {} at level {}): {} states ({} machine states), {} transitions in {:.3} s ({:.0} states/s)\n",
            cuda_front::demangle(&setup.kernel_title()),
            setup.setup_text(),
            model_text(model),
            level,
            x.states(),
            x.machine_states,
            x.transitions(),
            self.seconds,
            self.rate()
        );
        match x.bound_hit {
            Some(b @ explore::Bound::States(_)) => s.push_str(&format!(
                "bound: {} REACHED: the exploration is incomplete, nothing is proven\n",
                b.hit(None).setting()
            )),
            Some(explore::Bound::Time) => s.push_str(&format!(
                "bound: {} after {} states: the exploration is incomplete, nothing is proven\n",
                args.timeout.flag_text(),
                x.states()
            )),
            None => s.push_str(&format!(
                "bound: --max-states {} not reached: the exploration is complete\n",
                self.limits.max_states
            )),
        }
        if let Some(note) = symmetry_note(x.symmetry) {
            s.push_str(&format!("symmetry: {note}\n"));
        }
        if x.settled_loads == explore::SettledLoads::FellBack {
            s.push_str(&format!("settled loads: {SETTLED_FELL_BACK}\n"));
        }
        s
    }

    /// Every final outcome with its witness, then how to reproduce the failing ones.
    fn outcomes_text(&self) -> String {
        let (setup, x, w) = (self.setup, self.x, &self.witnesses);
        let mut s = format!("outcomes ({}):\n", x.outcomes.len());
        for (((o, info), witness), violated) in x.outcomes.iter().zip(&w.each).zip(&w.violations) {
            let data: Vec<String> = setup
                .data_text(&o.data)
                .into_iter()
                .map(|(n, v)| format!("{n}=[{}]", v.join(", ")))
                .collect();
            s.push_str(&format!(
                "  {}  {}  ({} terminal state{})\n",
                o.status,
                data.join(" "),
                info.states,
                if info.states == 1 { "" } else { "s" }
            ));
            super::explore_outcomes::outcome_details(&mut s, violated, witness);
        }
        for (status, cmd) in &w.failing {
            s.push_str(&format!("{status} is reachable; to reproduce:\n  {cmd}\n"));
        }
        s
    }

    /// The verdict, and for a lasso its stem, cycle, why it is fair and how to replay it.
    fn verdict_text(&self) -> String {
        let (setup, x, level, model) = (self.setup, self.x, self.level, self.model);
        let mut s = String::new();
        match (self.verdict, self.lasso) {
            (None, _) => s.push_str(&format!(
                "verdict: none (bounded out) under {} at level {level}\n",
                model_text(model)
            )),
            (Some(Verdict::Pass), _) => s.push_str(&format!(
                "verdict: terminates under {} at level {level}\n",
                model_text(model)
            )),
            (Some(Verdict::Fail), lasso) => {
                s.push_str(&format!(
                    "verdict: may not terminate under {} at level {level}\n",
                    model_text(model)
                ));
                if let Some(l) = lasso {
                    let (stem, cycle) = steps_text(setup, &l.stem, &l.cycle);
                    s.push_str(&format!(
                        "lasso: a stem of {} steps, then a cycle of {} steps repeated forever\n",
                        l.stem.len(),
                        l.cycle.len()
                    ));
                    s.push_str(&format!("why it is fair: {}\n", reason_text(x, l)));
                    for wait in never_resident(setup, &l.stem, &l.cycle) {
                        s.push_str(&format!("never resident on the cycle: {wait}\n"));
                    }
                    s.push_str("stem:\n");
                    for line in stem {
                        s.push_str(&format!("{line}\n"));
                    }
                    s.push_str("cycle:\n");
                    for line in cycle {
                        s.push_str(&format!("{line}\n"));
                    }
                    if let Some(cmd) = &self.witnesses.lasso {
                        s.push_str(&format!(
                            "to replay it (checks that the cycle closes):\n  {cmd}\n"
                        ));
                    }
                }
            }
        }
        s
    }

    /// The JSON report: one object.
    fn json(&self) -> String {
        let (setup, x, level, model, w) =
            (self.setup, self.x, self.level, self.model, &self.witnesses);
        let lasso_json = self.lasso.map(|l| {
            let (stepping, reason) = (x.units.names(l.stepping), reason_text(x, l));
            json!({
                "stem": l.stem.iter().map(Choice::to_string).collect::<Vec<_>>(),
                "cycle": l.cycle.iter().map(Choice::to_string).collect::<Vec<_>>(),
                "stepping": stepping,
                "why": reason,
                "replay": w.lasso,
            })
        });
        let outcomes: Vec<_> = x
            .outcomes
            .iter()
            .zip(&w.each)
            .zip(&w.violations)
            .map(|(((o, info), witness), violated)| {
                let mut j = setup.outcome_json(o, violated, witness);
                j["terminal_states"] = info.states.into();
                j
            })
            .collect();
        let bound_hit = x
            .bound_hit
            .map(|b| crate::bounds::named(b.hit(self.args.timeout.millis())));
        let j = json!({
            "kernel": setup.kernel_title(),
            "setup": setup.setup_text(),
            "model": model.name(),
            "level": level.name(),
            "terminates": self.terminates(),
            "states": x.states(),
            "machine_states": x.machine_states,
            "transitions": x.transitions(),
            "bound": {
                "max_states": self.limits.max_states,
                "hit": x.bound_hit.is_some(),
                "time_limit_hit": crate::bounds::is_time(bound_hit),
            },
            "bound_hit": crate::bounds::json(bound_hit),
            "symmetry": symmetry_word(x.symmetry),
            "symmetry_note": symmetry_note(x.symmetry),
            "settled_loads": settled_word(x.settled_loads),
            "outcomes": outcomes,
            "lasso": lasso_json,
            "seconds": self.seconds,
            "states_per_second": self.rate(),
        });
        j.to_string() + "\n"
    }
}
