//! Reproducing a check: the `cudasem replay ... --check` command of the reported schedule, the
//! teaching page of it (`--html`), and `cudasem replay TRACE --check`, which runs the monitors
//! along a recorded schedule.

use super::render::{Render, Report};
use super::schedules::{Checked, KEEP_CHOICES, Setup};
use super::{BenignArg, CheckArgs, Mode, RaceModelArg};
use crate::Exit;
use crate::error::Error;
use crate::failure::Failure;
use crate::options::{self, RunOptions};
use crate::output::shell_command;
use semantics::machine::Termination;
use semantics::monitors::MonitorConfig;
use traces::Choice;

/// `--html FILE`: the teaching page of the schedule the report describes (the failing one,
/// else the last one checked), as `cudasem view` draws it.
pub(super) fn html_page(
    base: &options::Setup,
    result: &Checked,
    path: &std::path::Path,
) -> Result<(), Failure> {
    if result.choices.len() >= KEEP_CHOICES {
        return Err(Error::Refused(format!(
            "error: --html {}: the schedule is longer than the {KEEP_CHOICES} steps a check keeps; write its page with `cudasem run ... --html` and the same --schedule\n",
            path.display()
        ))
        .into());
    }
    let policy = result
        .policy
        .as_ref()
        .map_or_else(|| "check --explore".to_string(), |p| p.to_string());
    crate::commands::view::write_html_flag(base, &result.choices, None, policy, None, path)?;
    Ok(())
}

/// The `cudasem replay ... --check` command that reproduces the reported schedule with the
/// monitors on (the helper behind every failure's replay command, plus `check`'s own flags).
pub(super) fn reproduce(
    setup: &Setup,
    options: &RunOptions,
    args: &CheckArgs,
    result: &Checked,
    mode: &Mode,
    seed: Option<u64>,
) -> Result<String, Error> {
    let policy = match (mode, seed) {
        (_, Some(s)) => format!("random:{s}"),
        (Mode::One(p), None) => p.to_string(),
        _ => "explore".to_string(),
    };
    let kept_all = result.choices.len() as u64 == result.steps;
    if !kept_all || result.termination == Termination::TimeLimit {
        let Some(made_by) = &result.policy else {
            return Ok(format!(
                "(none: the schedule's {} steps were too many to keep; a smaller --max-steps keeps them)",
                result.steps
            ));
        };
        // A deterministic schedule too long to keep (or cut by time): the command with its
        // policy, bounded by the steps it took, reproduces it.
        return Ok(crate::options::own_command(
            &[
                ("--schedule", true),
                ("--schedules", true),
                ("--explore", false),
                ("--max-schedules", true),
                ("--max-steps", true),
                ("--timeout", true),
                ("--format", true),
            ],
            &[
                "--schedule".to_string(),
                made_by.to_string(),
                "--max-steps".to_string(),
                result.steps.to_string(),
            ],
        ));
    }
    let replay = crate::commands::replay::reproduce(
        &setup.base,
        options,
        &result.choices,
        None,
        policy,
        seed,
    )?;
    let mut flags = vec!["--check".to_string()];
    if args.race_model != RaceModelArg::Interleaving {
        flags.push("--race-model".to_string());
        flags.push(args.race_model.name().to_string());
    }
    for b in &args.uninit {
        flags.push("--uninit".to_string());
        flags.push(b.clone());
    }
    Ok(format!("{replay} {}", shell_command(&flags)))
}

/// `cudasem replay TRACE --check`: the monitors along a recorded schedule, reported as `check`
/// reports one schedule. A recorded choice that is not enabled is a divergence (bad input).
pub(crate) fn replay_checked(
    args: &crate::commands::replay::ReplayArgs,
    loaded: crate::commands::replay::Loaded,
) -> Result<Exit, Failure> {
    let total = loaded.choices.len();
    let uninit = Setup::uninit_buffers(&loaded.setup, &args.uninit)?;
    let setup = Setup {
        base: loaded.setup,
        monitors: MonitorConfig {
            race_model: args.race_model.model(),
            ..MonitorConfig::default()
        },
        uninit,
        budget: scheduler::Budget::steps(total as u64),
        stop: scheduler::Stop::never(),
        // A replay reports every finding of the schedule.
        benign: BenignArg::Report,
    };
    let choices = loaded.choices;
    let mut at = 0usize;
    let mut diverged: Option<(usize, Choice, Vec<Choice>)> = None;
    let result = setup.check(&mut scheduler::from_fn(|_, enabled| {
        let c = choices.get(at)?;
        match enabled.iter().position(|e| e == c) {
            Some(i) => {
                at += 1;
                Some(i)
            }
            None => {
                diverged = Some((at, *c, enabled.to_vec()));
                None
            }
        }
    }))?;
    if let Some((step, c, enabled)) = diverged {
        let list: Vec<String> = enabled.iter().map(Choice::to_string).collect();
        return Err(Error::Input(format!(
            "replay diverged after {step} of {total} choices: step {step}: `{c}` is not enabled; enabled: [{}]\n",
            list.join(", ")
        ))
        .into());
    }
    let coverage = if result.cut {
        format!("this replayed schedule only; the trace's {total} choices end before the run does")
    } else {
        format!("this replayed schedule only ({total} choices)")
    };
    let ctx = Render::of(&setup.base);
    let title = setup.base.kernel_title();
    let report = Report {
        kernel: &title,
        race_model: args.race_model.model(),
        result: &result,
        complete: false,
        coverage,
        schedules: 1,
        seed: None,
        replay: Vec::new(),
        // A replay reports every finding of the schedule, benign races included.
        benign_left_out: 0,
        search_bound_hit: None,
    };
    Ok(report.print(&ctx, args.format))
}
