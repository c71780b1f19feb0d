//! Launch files of several contexts (`contexts: [...]`, thesis 5.8): `run`, `fuzz`, `explore`
//! and `check` run each context in turn, as its own program.
//!
//! The thesis's device steps one context at a time and contexts share no memory (separate
//! virtual address spaces), so every interleaving of the contexts' steps gives each context the
//! results it gets alone, and the device terminates iff every context does: running them one
//! after the other loses nothing (docs/run.md, "Several contexts"). Text output heads each
//! context's report with `context N:`; JSON output is an array with one report per context (a
//! context whose input was bad has `null`); the exit code is the worst of the contexts'.

use crate::Exit;
use crate::error::Error;
use crate::options::RunOptions;
use launch_file::Launch;

/// The launch of context `context` (`--context N`) of a file with `contexts`; the launch as
/// read without `--context` (resolution then refuses a file of several contexts with a located
/// error, in the commands that do not run each context).
pub fn select(launch: Launch, context: Option<usize>) -> Result<Launch, Error> {
    let Some(i) = context else { return Ok(launch) };
    match launch.contexts.len() {
        0 => Err(Error::Refused(format!(
            "error: --context {i}: the launch file has no `contexts: [...]` (it is one context)\n  = help: leave out --context\n"
        ))),
        n if i >= n => Err(Error::Refused(format!(
            "error: --context {i}: the launch file holds {n} contexts, 0 to {}\n",
            n - 1
        ))),
        _ => Ok(launch.contexts[i].clone()),
    }
}

/// How many contexts `run`, `fuzz`, `explore` and `check` run in turn for `options`: those of
/// its launch file's `contexts`; 0 (the command runs once) for a file without them, with
/// `--context N`, or without a readable launch file (the command then reports that itself).
pub fn count(options: &RunOptions) -> usize {
    if options.launch.context.is_some() {
        return 0;
    }
    options
        .launch
        .file
        .as_deref()
        .and_then(|path| Launch::read(path).ok())
        .map_or(0, |l| l.contexts.len())
}

/// With `n` contexts, a flag that names one output file (`--html`, `--trace`, `--save`...)
/// would have each context's file written over the last: refused (exit 2), saying to pick a
/// context. `flags`: each flag and whether it was given. `None`: none was.
pub fn refuse_files(n: usize, flags: &[(&str, bool)]) -> Option<Exit> {
    let (flag, _) = flags.iter().find(|(_, given)| *given)?;
    eprint!(
        "error: {flag} names one output, and the launch file holds {n} contexts\n  = help: add --context N to write context N's (0 to {})\n",
        n - 1
    );
    Some(Exit::BadInput)
}

/// What [`per_context`] needs of a command's arguments (`run`, `fuzz`, `explore`, `check`).
pub trait PerContext {
    /// The launch, model and machine flags (`--context` among them).
    fn options(&mut self) -> &mut RunOptions;
    /// The flags that name one output file, each with whether it was given.
    fn output_files(&self) -> Vec<(&'static str, bool)>;
    /// Whether the report is JSON (then an array of one report per context).
    fn json(&self) -> bool;
}

/// `impl PerContext for ARGS`, whose fields are `options` (the `RunOptions`), `format` (text
/// or JSON) and these output-file flags: `per_context_args!(RunArgs, "--html" => html)`.
#[macro_export]
macro_rules! per_context_args {
    ($args:ty, $($flag:literal => $field:ident),+) => {
        impl $crate::contexts::PerContext for $args {
            fn options(&mut self) -> &mut $crate::options::RunOptions {
                &mut self.options
            }

            fn output_files(&self) -> Vec<(&'static str, bool)> {
                vec![$(($flag, self.$field.is_some())),+]
            }

            fn json(&self) -> bool {
                self.format == $crate::flags::OutputFormat::Json
            }
        }
    };
}

/// Runs a command (`one`, given its arguments): once for a launch file of one context or
/// with `--context N`, else once per context with `--context` set to it (after refusing the
/// flags that name one output file).
pub fn per_context<A: PerContext>(args: &mut A, one: impl Fn(&A) -> Exit) -> Exit {
    let n = count(args.options());
    if n == 0 {
        return one(args);
    }
    if let Some(refused) = refuse_files(n, &args.output_files()) {
        return refused;
    }
    let json = args.json();
    each(n, json, |i| {
        args.options().launch.context = Some(i);
        one(args)
    })
}

/// Runs `one` for each of `n` contexts, heading each report, and gives the worst outcome.
pub fn each(n: usize, json: bool, mut one: impl FnMut(usize) -> Exit) -> Exit {
    let mut worst = Exit::Clean;
    let print = |text: &str| crate::emit::stdout(text).is_ok();
    if json && !print("[") {
        return Exit::BadInput;
    }
    for i in 0..n {
        let head = match (json, i) {
            (true, 0) => String::new(),
            (true, _) => ",".to_string(),
            (false, _) => format!("context {i}:\n"),
        };
        if !print(&head) {
            return Exit::BadInput;
        }
        let outcome = one(i);
        // A context whose input was bad printed nothing on stdout (its error is on stderr).
        if json && matches!(outcome, Exit::BadInput) && !print("null") {
            return Exit::BadInput;
        }
        worst = worst.worst(outcome);
    }
    if json && !print("]\n") {
        return Exit::BadInput;
    }
    worst
}
