//! `cudasem view TRACE [FILE.ptx] -o run.html`: the teaching page of a recorded run.
//!
//! TRACE is anything `cudasem replay` takes (a `run --trace`, `explore --save` or `replay
//! --save` file, or a compact string with FILE.ptx and the run options). The run is replayed
//! (the program hash and every choice are checked as `replay` checks them) and written as one
//! self-contained HTML file (crate `view`): open it in any browser, offline.
//!
//! Long runs are windowed: `--window` steps in full from `--from`, the whole run as a sampled
//! overview; the page says which part it shows and how large it is.
//!
//! Exit codes: 0 the page was written, 2 bad input (unreadable or non-matching trace, unwritable
//! output).

use crate::Exit;
use crate::commands::replay;
use crate::error::Error;
use crate::failure::Failure;
use crate::options::{RunOptions, Setup};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use traces::Choice;

#[derive(clap::Args)]
pub struct ViewArgs {
    /// A trace file (.ron or .jsonl) or a compact trace string (`cudasem2:...`).
    pub trace: String,
    /// The PTX file (required with a compact trace or a `run --trace` file; overrides a trace
    /// file's `program_path`).
    pub file: Option<PathBuf>,
    /// The HTML file to write.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "OUT.html",
        default_value = "run.html"
    )]
    pub output: PathBuf,
    /// The first step shown in full (1 = the run's first step).
    #[arg(long, value_name = "STEP", default_value_t = 1)]
    pub from: u64,
    /// At most this many steps are shown in full; the page holds a sampled overview of the
    /// whole run and says what it leaves out.
    #[arg(long, value_name = "STEPS", default_value_t = view::DEFAULT_WINDOW)]
    pub window: u64,
    #[command(flatten)]
    pub options: RunOptions,
}

pub fn run(args: ViewArgs) -> Exit {
    Failure::outcome(run_inner(args))
}

/// The CUDA files a module's line tables name, those that can be read: as named, else beside
/// the PTX file.
fn cuda_sources(program: &semantics::Program, ptx_path: &str) -> BTreeMap<String, String> {
    let dir = Path::new(ptx_path).parent().unwrap_or(Path::new("."));
    program
        .files
        .values()
        .filter_map(|name| {
            let p = Path::new(name);
            let beside = p.file_name().map(|f| dir.join(f));
            let text = std::fs::read_to_string(p)
                .ok()
                .or_else(|| beside.and_then(|b| std::fs::read_to_string(b).ok()))?;
            Some((name.clone(), text))
        })
        .collect()
}

/// Writes the teaching page of `choices` (a schedule of `setup`'s launch) to `output`: what
/// `view` and the `--html FILE` flags of `run`, `explore`, `check` and `fuzz` share. `Ok` is the
/// line that says what was written; `Err` says why no page was (a schedule that does not
/// replay, an unwritable file), for the caller to prefix with what the schedule came from.
pub(crate) fn write_page(
    setup: &Setup,
    choices: &[Choice],
    options: &view::ViewOptions,
    output: &Path,
) -> Result<String, Error> {
    let sources = view::Sources {
        // A program of several launches is named by its kernels (`fill, add_one`).
        kernel: setup.kernel_title(),
        ptx_path: setup.ptx_path.clone(),
        ptx: setup.text.clone(),
        cu: cuda_sources(&setup.program, &setup.ptx_path),
        setup: setup.setup_text(),
    };
    let html = view::page(setup.machine.clone(), choices, &sources, options)
        .map_err(|e| Error::Input(e.to_string()))?;
    std::fs::write(output, &html).map_err(|e| Error::io("cannot write", output.display(), e))?;
    let total = choices.len() as u64;
    let from = options.from.min(total);
    let to = from.saturating_add(options.window).min(total);
    Ok(format!(
        "wrote {} ({} KiB): steps {} to {} of {total}{}; open it in a browser (it works offline)",
        output.display(),
        html.len().div_ceil(1024),
        (from + 1).min(to.max(1)),
        to,
        if to - from < total {
            " (windowed: --from and --window show other steps)"
        } else {
            ""
        }
    ))
}

/// The page of a whole schedule from its first step (`--html FILE` of `run`, `explore`,
/// `check`, `fuzz`): the default window, a lasso's cycle marked. The line saying what was
/// written goes to stderr (stdout holds the command's report, possibly JSON).
pub(crate) fn write_html_flag(
    setup: &Setup,
    choices: &[Choice],
    cycle_start: Option<usize>,
    policy: String,
    fairness: Option<String>,
    output: &Path,
) -> Result<(), Error> {
    let options = view::ViewOptions {
        from: 0,
        window: view::DEFAULT_WINDOW,
        cycle_start,
        policy: Some(policy),
        fairness,
    };
    let wrote = write_page(setup, choices, &options, output)
        .map_err(|e| Error::Input(format!("error: --html {}: {e}\n", output.display())))?;
    eprintln!("{wrote}");
    Ok(())
}

fn run_inner(args: ViewArgs) -> Result<Exit, Failure> {
    crate::expectations::refuse_flag("view", &args.options.launch.quick)?;
    if args.window == 0 {
        return Err(Error::Usage("error: --window must be at least 1\n".to_string()).into());
    }
    if args.from == 0 {
        return Err(Error::Usage("error: --from counts steps from 1\n".to_string()).into());
    }
    let replay_args = replay::ReplayArgs {
        trace: args.trace.clone(),
        file: args.file.clone(),
        options: args.options,
        events: false,
        save: None,
        format: crate::flags::OutputFormat::Text,
        check: false,
        race_model: crate::commands::check::RaceModelArg::Interleaving,
        uninit: Vec::new(),
    };
    let loaded = replay::load_trace(&replay_args)?;
    let setup = &loaded.setup;
    let policy = if Path::new(&args.trace).is_file() {
        replay::read_trace_file(&args.trace)
            .ok()
            .and_then(|t| t.policy)
    } else {
        None
    };
    let options = view::ViewOptions {
        from: args.from - 1,
        window: args.window,
        cycle_start: loaded.cycle_start,
        policy,
        fairness: None,
    };
    let wrote = write_page(setup, &loaded.choices, &options, &args.output)
        .map_err(|e| Error::Input(format!("error: {}: {e}\n", args.trace)))?;
    println!("{wrote}");
    Ok(Exit::Clean)
}
