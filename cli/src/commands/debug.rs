//! `cudasem debug FILE.ptx --launch L [run options]`: the interactive debugger. The logic is
//! `debugger::Session` (commands in, text out); this module is its line editor
//! (rustyline: history, completion of commands, labels, registers and buffers), its scripted
//! mode (commands from a file or from standard input that is not a terminal: plain text out,
//! each command echoed), its files (`trace save/load` as JSON Lines, the format of
//! `cudasem run --trace`) and its Ctrl-C handler.
//!
//! Ctrl-C (SIGINT) while a command runs interrupts it and the session goes on, in both modes.
//! At the REPL's prompt the line editor reads Ctrl-C as a key; a scripted session waiting for
//! its next command ends on it (exit code 130), as a filter reading standard input would.
//!
//! Exit codes: 0 after `quit` or the end of the script, 1 when a scripted command failed,
//! 2 bad input (files, launch), 130 Ctrl-C while a scripted session waited for input.

use crate::Exit;
use crate::commands::replay::TraceLaunch;
use crate::error::Error;
use crate::options::{Prepared, RunOptions, does_not_fit};
use debugger::{self, Host, HostError, Options, Policy, Session, TraceRecord};
use semantics::machine::{GridLaunch, LaunchConfig, MachineConfig};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The debugger's default bound on the steps of one `continue`: far below `run`'s, because the
/// session logs every choice (for `back` and `trace save`) and a non-terminating kernel should
/// come back to the prompt in seconds, not fill the memory.
pub const DEFAULT_DEBUG_MAX_STEPS: u64 = 10_000_000;

#[derive(clap::Args)]
pub struct DebugArgs {
    /// The PTX file, or a CUDA file (.cu, compiled with clang: docs/cuda.md).
    pub file: PathBuf,
    #[command(flatten)]
    pub options: RunOptions,
    /// The policy of `step` and `continue`: round-robin or random:SEED (`choose` overrides it).
    #[arg(long, value_name = "POLICY", default_value = "round-robin", value_parser = parse_policy)]
    pub schedule: Policy,
    /// The most steps one `continue` (or `until`, or `next` over a call) may take.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_DEBUG_MAX_STEPS)]
    pub max_steps: u64,
    /// Run the commands of this file (`-`: standard input) and exit: plain text, each command
    /// echoed after the prompt. Without it, a terminal gets the interactive REPL and other
    /// standard input is read as a script.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
}

/// `--schedule` of `debug`: the session's policy (round-robin or random:SEED).
fn parse_policy(text: &str) -> Result<Policy, Error> {
    match text.split_once(':') {
        None if text == "round-robin" => Ok(Policy::RoundRobin),
        Some(("random", seed)) => seed.parse().map(Policy::Random).map_err(|_| {
            Error::Usage(format!(
                "`{seed}` is not a seed: write random:SEED with SEED a number up to 2^64-1"
            ))
        }),
        _ if text == "random" => Err(Error::Usage(
            "random needs a seed: write random:SEED, e.g. random:7".to_string(),
        )),
        _ => Err(Error::Usage(format!(
            "unknown schedule `{text}`: write round-robin or random:SEED"
        ))),
    }
}

pub fn run(args: DebugArgs) -> Exit {
    match start(&args) {
        Ok(session) => drive(session, &args),
        Err(error) => crate::failure::Failure::from(error).report(),
    }
}

/// Loads the program and the launch and starts the session; `Err` is bad input.
fn start(args: &DebugArgs) -> Result<Session, Error> {
    crate::expectations::refuse_flag("debug", &args.options.launch.quick)?;
    let Prepared {
        ptx_path,
        text,
        program,
        resolution,
        config,
        ..
    } = args.options.prepare(&args.file)?;
    let options = Options {
        source: Some(Arc::from(text.as_str())),
        policy: args.schedule,
        max_steps: args.max_steps,
        ..Options::default()
    };
    // A program of several launches (thesis 5.7) is debugged as one machine of several grids.
    let (mut session, grids) = match resolution.program {
        None => (
            Session::new(program, resolution.first.config.clone(), config, options)
                .map_err(does_not_fit)?,
            Vec::new(),
        ),
        Some(grid_launches) => {
            let grids = grid_launches.launches.clone();
            let session = Session::from_program(program, grid_launches, config, options)
                .map_err(does_not_fit)?;
            (session, grids)
        }
    };
    session.set_host(Box::new(Files {
        launch: resolution.first.config,
        grids,
        config,
        ptx_path,
    }));
    Ok(session)
}

/// `trace save/load`: JSON Lines files as `cudasem run --trace` writes them.
struct Files {
    launch: LaunchConfig,
    /// Every launch of a program of several launches; empty for one kernel launch.
    grids: Vec<GridLaunch>,
    config: MachineConfig,
    ptx_path: String,
}

impl Files {
    /// The session's trace as JSON Lines, with `launch` as its launch.
    fn json_lines<L: serde::Serialize>(
        &self,
        t: &TraceRecord,
        launch: &L,
    ) -> Result<String, Error> {
        let mut trace = traces::Trace::new(t.program_hash, launch, &self.config, None);
        trace.choices = t.choices.clone();
        trace.policy = Some("debug".to_string());
        trace.program_path = Some(self.ptx_path.clone());
        traces::format::to_json_lines(&trace).map_err(|e| Error::Input(e.to_string()))
    }
}

impl Host for Files {
    fn save_trace(&mut self, path: &str, t: &TraceRecord) -> Result<(), HostError> {
        let text = if self.grids.is_empty() {
            self.json_lines(t, &self.launch)
        } else {
            // A program's trace records every launch, as `cudasem run --trace` writes it.
            self.json_lines(
                t,
                &TraceLaunch::of(&self.launch, None, None).with_grids(&self.grids),
            )
        }
        .map_err(|e| HostError::Format {
            path: path.to_string(),
            reason: e.to_string(),
        })?;
        std::fs::write(path, text).map_err(|e| HostError::Write {
            path: path.to_string(),
            reason: e.to_string(),
        })
    }

    fn load_trace(&mut self, path: &str) -> Result<TraceRecord, HostError> {
        let text = std::fs::read_to_string(path).map_err(|e| HostError::Read {
            path: path.to_string(),
            reason: e.to_string(),
        })?;
        let trace: traces::Trace<serde_json::Value, serde_json::Value> =
            traces::format::from_json_lines(&text).map_err(|e| HostError::Format {
                path: path.to_string(),
                reason: e.to_string(),
            })?;
        Ok(TraceRecord {
            program_hash: trace.program_hash,
            choices: trace.choices,
        })
    }

    /// A `.file` as the compiler wrote it (relative to where it ran), else the file of that
    /// name beside the kernel.
    fn source_text(&mut self, path: &str) -> Option<String> {
        std::fs::read_to_string(path).ok().or_else(|| {
            let name = std::path::Path::new(path).file_name()?;
            let beside = std::path::Path::new(&self.ptx_path).parent()?.join(name);
            std::fs::read_to_string(beside).ok()
        })
    }
}

/// Installs the Ctrl-C handler: while `busy` (a command runs, or is about to) it sets the
/// session's interrupt flag; otherwise a scripted session ends with exit code 130 and the REPL
/// (whose line editor normally reads Ctrl-C as a key) ignores it. The handler runs on the
/// `ctrlc` crate's own thread, so it may take locks and exit.
fn install_ctrlc(session: &Session, busy: Arc<AtomicBool>, scripted: bool) {
    let flag = session.interrupt_flag();
    let handler = move || {
        if busy.load(Ordering::SeqCst) {
            flag.request();
        } else if scripted {
            // No flush: the main thread holds the stdout lock while it waits for input, and
            // every answer was flushed when it was written.
            eprintln!("interrupted while waiting for a command");
            std::process::exit(130);
        }
    };
    // Only one handler per process (tests run the binary afresh), so a failure here only costs
    // the interrupt.
    if let Err(e) = ctrlc::set_handler(handler) {
        eprintln!("warning: Ctrl-C will not interrupt commands: {e}");
    }
}

fn drive(mut session: Session, args: &DebugArgs) -> Exit {
    let busy = Arc::new(AtomicBool::new(false));
    let script: Option<Box<dyn BufRead>> = match &args.script {
        Some(p) if p.as_os_str() == "-" => Some(Box::new(std::io::stdin().lock())),
        Some(p) => match std::fs::File::open(p) {
            Ok(f) => Some(Box::new(std::io::BufReader::new(f))),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", p.display());
                return Exit::BadInput;
            }
        },
        None if std::io::stdin().is_terminal() => None,
        None => Some(Box::new(std::io::stdin().lock())),
    };
    install_ctrlc(&session, busy.clone(), script.is_some());
    match script {
        Some(input) => scripted(&mut session, input, &busy),
        None => interactive(&mut session, &busy),
    }
}

/// Scripted mode: the banner, then each command echoed after the prompt and its answer. The
/// echo comes before the command runs (and is flushed), so whoever watches the output sees
/// what is running, e.g. a `continue` to interrupt.
///
/// A line that is not UTF-8 text is an error (the next lines still run, and the exit code is
/// 1, as for a command that failed); a script that cannot be read any further ends the session
/// with exit code 2.
fn scripted(session: &mut Session, mut input: impl BufRead, busy: &AtomicBool) -> Exit {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(session.banner().as_bytes());
    let _ = out.flush();
    let mut failed = false;
    let mut internal = false;
    let mut bytes = Vec::new();
    let mut number = 0u64;
    loop {
        bytes.clear();
        match input.read_until(b'\n', &mut bytes) {
            Ok(0) => break,
            Ok(_) => number += 1,
            Err(e) => {
                let _ = out.flush();
                eprintln!("error: cannot read the script after line {number}: {e}");
                return Exit::BadInput;
            }
        }
        let Ok(line) = std::str::from_utf8(&bytes) else {
            let _ = writeln!(
                out,
                "error: line {} of the script is not UTF-8 text: it was skipped",
                number
            );
            failed = true;
            continue;
        };
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        // Busy from before the echo: a Ctrl-C sent on seeing it reaches this command.
        busy.store(true, Ordering::SeqCst);
        let _ = writeln!(out, "(cudasem) {trimmed}");
        let _ = out.flush();
        let reply = session.handle(trimmed);
        busy.store(false, Ordering::SeqCst);
        let _ = out.write_all(reply.text.as_bytes());
        let _ = out.flush();
        match reply.outcome {
            debugger::Outcome::Quit => break,
            debugger::Outcome::Error => failed = true,
            debugger::Outcome::Internal => internal = true,
            debugger::Outcome::Ok => {}
        }
    }
    let _ = out.flush();
    if internal {
        Exit::Internal
    } else if failed {
        Exit::Misbehaved
    } else {
        Exit::Clean
    }
}

/// Completes the word under the cursor from the session's words.
struct Completion {
    words: Vec<String>,
}

impl rustyline::completion::Completer for Completion {
    type Candidate = String;
    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let head = &line[..pos];
        let start = head
            .rfind(|c: char| c.is_whitespace() || c == '[' || c == ':')
            .map_or(0, |i| i + 1);
        let prefix = &head[start..];
        let found = self
            .words
            .iter()
            .filter(|w| w.starts_with(prefix))
            .cloned()
            .collect();
        Ok((start, found))
    }
}

impl rustyline::hint::Hinter for Completion {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for Completion {}
impl rustyline::validate::Validator for Completion {}
impl rustyline::Helper for Completion {}

/// The REPL.
fn interactive(session: &mut Session, busy: &AtomicBool) -> Exit {
    let mut editor =
        match rustyline::Editor::<Completion, rustyline::history::DefaultHistory>::new() {
            Ok(e) => e,
            Err(e) => {
                eprintln!("error: cannot start the line editor: {e}");
                return Exit::BadInput;
            }
        };
    editor.set_helper(Some(Completion {
        words: session.completion_words(),
    }));
    print!("{}", session.banner());
    let mut last = String::new();
    loop {
        match editor.readline("(cudasem) ") {
            Ok(line) => {
                // An empty line repeats the last command (as gdb does: `step` again).
                let line = if line.trim().is_empty() {
                    last.clone()
                } else {
                    line
                };
                if line.trim().is_empty() {
                    continue;
                }
                let _ = editor.add_history_entry(line.as_str());
                busy.store(true, Ordering::SeqCst);
                let reply = session.handle(&line);
                busy.store(false, Ordering::SeqCst);
                print!("{}", reply.text);
                let _ = std::io::stdout().flush();
                if reply.outcome == debugger::Outcome::Quit {
                    return Exit::Clean;
                }
                last = line;
            }
            Err(rustyline::error::ReadlineError::Interrupted) => {
                println!("(Ctrl-C: `quit` leaves the debugger)");
            }
            Err(rustyline::error::ReadlineError::Eof) => return Exit::Clean,
            Err(e) => {
                eprintln!("error: {e}");
                return Exit::BadInput;
            }
        }
    }
}
