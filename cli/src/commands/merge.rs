//! `cudasem merge REPORT...`: the reports of every shard of one `fuzz --shard I/N` or `explore
//! --search outcomes --shard I/N` run, combined into exactly what the unsharded run prints
//! (docs/sharding.md; `scheduler::shard`).
//!
//! A shard's report file ([`ReportFile`], JSON) holds the library's shard report and the run's
//! own command line (without the flags that do not change the answer: `--shard`, `--report`,
//! `--jobs`, `--format` and the side outputs). `merge` parses that command line again, loads the
//! kernel and launch file as the run did (so it runs where the shards' paths resolve), checks
//! that they are the ones the shards ran (the campaign text holds the program's and the launch
//! file's hashes) and prints the merged report with the command's own printer.
//!
//! Exit codes: those of the merged command (0 clean, 1 a failure), 2 bad input: a missing,
//! unreadable or corrupt report, reports of different runs, a shard missing or given twice.

use crate::Exit;
use crate::commands::{explore, explore_outcomes, fuzz};
use crate::error::Error;
use crate::failure::Failure;
use crate::flags::OutputFormat;
use crate::options::Setup;
use ::explore::split::OutcomesShard;
use clap::Parser;
use scheduler::fuzz::FuzzShard;
use scheduler::shard::{BadShard, Shard};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The report files of every shard of one run (written by `--shard I/N --report FILE`), in
    /// any order.
    #[arg(required = true, value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    /// Output format (as the unsharded command's `--format`).
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

/// `--shard I/N`.
pub fn parse_shard(s: &str) -> Result<Shard, Error> {
    s.parse().map_err(|e: BadShard| Error::Usage(e.to_string()))
}

/// What identifies a shard report file (and its version).
const FORMAT: &str = "cudasem shard report 1";

/// A shard's report file.
#[derive(Serialize, Deserialize)]
pub struct ReportFile {
    /// [`FORMAT`].
    pub format: String,
    /// The run's arguments after `cudasem` (the subcommand first), without the flags of
    /// [`NOT_RECORDED`].
    pub argv: Vec<String>,
    /// The shard's wall-clock time (the merged report prints the sum: the work done).
    pub seconds: f64,
    pub report: ShardReport,
}

/// The library's report of one shard.
#[derive(Serialize, Deserialize)]
pub enum ShardReport {
    Outcomes(OutcomesShard),
    Fuzz(FuzzShard),
}

/// Flags of a sharded run that do not change its answer (`(flag, takes a value)`): not part
/// of the campaign, and not recorded.
const NOT_RECORDED: &[(&str, bool)] = &[
    ("--shard", true),
    ("--report", true),
    ("--jobs", true),
    ("--format", true),
    ("--save", true),
    ("--html", true),
    ("--save-failures", true),
    ("--clang", true),
];

/// The recorded command line: this process's arguments without [`NOT_RECORDED`].
pub fn recorded_argv() -> Vec<String> {
    crate::options::own_args(NOT_RECORDED)
}

/// The campaign text of a sharded run: its recorded command line and what it ran on (the
/// program's and the launch file's hashes, the set-up). Shards merge only with equal texts
/// (the outcomes search's split depth is checked from the reports themselves).
pub fn campaign(argv: &[String], setup: &Setup) -> String {
    let launch = setup
        .launch_path
        .as_deref()
        .and_then(|p| std::fs::read(p).ok())
        .map_or(0, |b| semantics::load::fnv1a(&b));
    format!(
        "{} | program {:016x} | launch {launch:016x} | {}",
        crate::output::shell_command(argv),
        setup.program.hash,
        setup.setup_text()
    )
}

/// Writes a shard's report file.
pub fn write(
    path: &Path,
    argv: Vec<String>,
    seconds: f64,
    report: ShardReport,
) -> Result<(), Error> {
    let file = ReportFile {
        format: FORMAT.to_string(),
        argv,
        seconds,
        report,
    };
    let text = serde_json::to_string(&file).map_err(|e| {
        Error::io(
            "cannot write the report",
            path.display(),
            std::io::Error::other(e),
        )
    })?;
    std::fs::write(path, text + "\n")
        .map_err(|e| Error::io("cannot write the report", path.display(), e))
}

/// The commands whose shards merge, parsed from a report's command line.
#[derive(Parser)]
#[command(name = "cudasem", no_binary_name = true)]
enum Recorded {
    Explore(explore::ExploreArgs),
    Fuzz(fuzz::FuzzArgs),
}

pub fn run(args: MergeArgs) -> Exit {
    Failure::outcome(run_inner(&args))
}

fn read(path: &Path) -> Result<ReportFile, Error> {
    let p = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io("cannot read the report", path.display(), e))?;
    let file: ReportFile = serde_json::from_str(&text).map_err(|e| {
        Error::Input(format!(
            "error: {p} is not a cudasem shard report ({e}): pass the files written by `--shard I/N --report FILE`\n"
        ))
    })?;
    if file.format != FORMAT {
        return Err(Error::Input(format!(
            "error: {p} is a report of another format (`{}`; this cudasem reads `{FORMAT}`): merge with the cudasem that wrote it\n",
            file.format
        )));
    }
    Ok(file)
}

fn run_inner(args: &MergeArgs) -> Result<Exit, Failure> {
    let files: Vec<ReportFile> = args
        .reports
        .iter()
        .map(|p| read(p))
        .collect::<Result<_, _>>()?;
    let argv = files[0].argv.clone();
    if let Some((i, _)) = files.iter().enumerate().find(|(_, f)| f.argv != argv) {
        return Err(Failure::BadInput(Error::Input(format!(
            "error: {} and {} are reports of different runs (`cudasem {}` and `cudasem {}`): merge only the shards of one run\n",
            args.reports[0].display(),
            args.reports[i].display(),
            argv.join(" "),
            files[i].argv.join(" ")
        ))));
    }
    let seconds: f64 = files.iter().map(|f| f.seconds).sum();
    let recorded = Recorded::try_parse_from(&argv).map_err(|e| {
        Error::Input(format!(
            "error: {}: the report's command line does not parse ({}): a damaged report?\n",
            args.reports[0].display(),
            e.to_string().lines().next().unwrap_or("")
        ))
    })?;
    let bad = |e: scheduler::shard::MergeError| {
        Failure::BadInput(Error::Input(format!("error: merge: {e}\n")))
    };
    let (text, outcome) = match recorded {
        Recorded::Explore(mut run) => {
            run.format = args.format;
            let setup = load(&run.options, &run.file, &argv)?;
            let shards = of_kind(files, &args.reports, |r| match r {
                ShardReport::Outcomes(s) => Some(s),
                ShardReport::Fuzz(_) => None,
            })?;
            check_campaign(&shards[0].campaign, &argv, &setup)?;
            let report = ::explore::split::merge(&shards).map_err(bad)?;
            let subtrees = shards[0].prefix.subtrees;
            explore_outcomes::render(&run, &setup, &report, subtrees, seconds)?
        }
        Recorded::Fuzz(mut run) => {
            run.format = args.format;
            let setup = load(&run.options, &run.file, &argv)?;
            let shards = of_kind(files, &args.reports, |r| match r {
                ShardReport::Fuzz(s) => Some(s),
                ShardReport::Outcomes(_) => None,
            })?;
            check_campaign(&shards[0].campaign, &argv, &setup)?;
            let report = scheduler::fuzz::merge(&shards).map_err(bad)?;
            fuzz::render(&run, &setup, &report, seconds)?
        }
    };
    crate::emit::stdout(&text)?;
    Ok(outcome)
}

/// Loads the kernel as the shards did.
fn load(
    options: &crate::options::RunOptions,
    file: &Path,
    argv: &[String],
) -> Result<Setup, Failure> {
    options.setup(file).map_err(|e| {
        Failure::BadInput(Error::Input(format!(
            "{}error: merge loads the kernel and launch of the shards' run (`cudasem {}`): run it where their paths resolve\n",
            e.rendered(),
            argv.join(" ")
        )))
    })
}

/// The shards' reports, each of the kind `own` takes (the first report's command): a report
/// of another command is refused, naming its file.
fn of_kind<T>(
    files: Vec<ReportFile>,
    paths: &[PathBuf],
    own: fn(ShardReport) -> Option<T>,
) -> Result<Vec<T>, Failure> {
    files
        .into_iter()
        .zip(paths)
        .map(|(f, p)| {
            own(f.report).ok_or_else(|| {
                Failure::BadInput(Error::Input(format!(
                    "error: {} is a report of another command: merge the shards of one `fuzz` or one `explore --search outcomes` run\n",
                    p.display()
                )))
            })
        })
        .collect()
}

/// Refuses to merge when the kernel or launch file changed since the shards ran.
fn check_campaign(recorded: &str, argv: &[String], setup: &Setup) -> Result<(), Failure> {
    if campaign(argv, setup) == recorded {
        return Ok(());
    }
    Err(Failure::BadInput(Error::Input(format!(
        "error: the kernel or launch file is not the one the shards ran (`cudasem {}`): it changed since, or merge runs in another directory; run the shards again or merge where they ran\n",
        argv.join(" ")
    ))))
}
