//! `cudasem debug FILE.ptx --launch L [run options]`: the interactive debugger. The logic is
//! `scheduler::debugger::Session` (commands in, text out); this module is its line editor
//! (rustyline: history, completion of commands, labels, registers and buffers), its scripted
//! mode (commands from a file or from standard input that is not a terminal: plain text out,
//! each command echoed), its files (`trace save/load` as JSON Lines, the format of
//! `cudasem run --trace`) and its Ctrl-C handler (which interrupts a running `continue`).
//!
//! Exit codes: 0 after `quit` or the end of the script, 1 when a scripted command failed,
//! 2 bad input (files, launch).

use crate::Outcome;
use crate::commands::run::{
    DeviceArgs, MemoryArg, QuickLaunch, Schedule, WarpModelArg, load_program,
};
use scheduler::debugger::{self, Host, Options, Policy, Session, TraceRecord};
use semantics::machine::{LaunchConfig, MachineConfig};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    /// The PTX file.
    pub file: PathBuf,
    /// The launch file (RON), as for `cudasem run`.
    #[arg(long, value_name = "FILE.ron")]
    pub launch: Option<PathBuf>,
    #[command(flatten)]
    pub quick: Box<QuickLaunch>,
    /// How warps execute divergent code.
    #[arg(long, value_enum, default_value_t = WarpModelArg::SimtStack)]
    pub warp_model: WarpModelArg,
    /// The memory system.
    #[arg(long, value_enum, default_value_t = MemoryArg::Flat)]
    pub memory: MemoryArg,
    /// The policy of `step` and `continue`: round-robin or random:SEED (`choose` overrides it).
    #[arg(long, value_name = "POLICY", default_value = "round-robin", value_parser = crate::commands::run::parse_schedule)]
    pub schedule: Schedule,
    /// The most steps one `continue` may take.
    #[arg(long, value_name = "N", default_value_t = crate::commands::run::DEFAULT_MAX_STEPS)]
    pub max_steps: u64,
    #[command(flatten)]
    pub device: Box<DeviceArgs>,
    /// Hardware behaviour: an exited warp counts as arrived at its block's barriers.
    #[arg(long)]
    pub exited_warps_arrive: bool,
    /// Check the SIMT stack's safety invariants after every step.
    #[arg(long)]
    pub check_invariants: bool,
    /// Run the commands of this file (`-`: standard input) and exit: plain text, each command
    /// echoed after the prompt. Without it, a terminal gets the interactive REPL and other
    /// standard input is read as a script.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
}

pub fn run(args: Args) -> Outcome {
    match start(&args) {
        Ok(session) => drive(session, &args),
        Err(message) => {
            if !message.is_empty() {
                eprint!("{message}");
                if !message.ends_with('\n') {
                    eprintln!();
                }
            }
            Outcome::BadInput
        }
    }
}

/// Loads the program and the launch and starts the session; `Err` is bad input.
fn start(args: &Args) -> Result<Session, String> {
    let ptx_path = args.file.display().to_string();
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| format!("error: cannot read {ptx_path}: {e}"))?;
    let program = load_program(&ptx_path, &text)?;
    let resolved =
        crate::commands::run::resolve_launch(args.launch.as_deref(), &args.quick, &program)?;
    let config = machine_config(args)?;
    let options = Options {
        source: Some(Arc::from(text.as_str())),
        policy: match args.schedule {
            Schedule::RoundRobin => Policy::RoundRobin,
            Schedule::Random(seed) => Policy::Random(seed),
        },
        max_steps: args.max_steps,
        ..Options::default()
    };
    let mut session = Session::new(Arc::new(program), resolved.config.clone(), config, options)
        .map_err(|e| {
            format!(
                "error: the launch does not fit the machine: {}\n",
                e.message
            )
        })?;
    session.set_host(Box::new(Files {
        launch: resolved.config,
        config,
        ptx_path,
    }));
    Ok(session)
}

fn machine_config(args: &Args) -> Result<MachineConfig, String> {
    crate::commands::run::machine_config_of(
        &args.device,
        args.warp_model,
        args.memory,
        args.exited_warps_arrive,
        args.check_invariants,
    )
}

/// `trace save/load`: JSON Lines files as `cudasem run --trace` writes them.
struct Files {
    launch: LaunchConfig,
    config: MachineConfig,
    ptx_path: String,
}

impl Host for Files {
    fn save_trace(&mut self, path: &str, t: &TraceRecord) -> Result<(), String> {
        let mut trace = traces::Trace::new(t.program_hash, &self.launch, &self.config, None);
        trace.choices = t.choices.clone();
        trace.policy = Some("debug".to_string());
        trace.program_path = Some(self.ptx_path.clone());
        let text = traces::format::to_json_lines(&trace).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}"))
    }

    fn load_trace(&mut self, path: &str) -> Result<TraceRecord, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
        let trace: traces::Trace<serde_json::Value, serde_json::Value> =
            traces::format::from_json_lines(&text).map_err(|e| format!("{path}: {e}"))?;
        Ok(TraceRecord {
            program_hash: trace.program_hash,
            choices: trace.choices,
        })
    }
}

fn drive(mut session: Session, args: &Args) -> Outcome {
    let flag = session.interrupt_flag();
    // Ctrl-C while a command runs sets the flag (the command stops and the session lives on);
    // at the prompt the line editor sees Ctrl-C as a key. A second handler cannot be installed
    // (tests run the binary afresh), so a failure here only costs the interrupt.
    let _ = ctrlc::set_handler(move || flag.store(true, std::sync::atomic::Ordering::Relaxed));
    match &args.script {
        Some(p) if p.as_os_str() == "-" => scripted(&mut session, std::io::stdin().lock()),
        Some(p) => match std::fs::File::open(p) {
            Ok(f) => scripted(&mut session, std::io::BufReader::new(f)),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", p.display());
                Outcome::BadInput
            }
        },
        None if std::io::stdin().is_terminal() => interactive(&mut session),
        None => scripted(&mut session, std::io::stdin().lock()),
    }
}

/// Scripted mode: the banner, then each command echoed after the prompt and its answer.
fn scripted(session: &mut Session, input: impl BufRead) -> Outcome {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(session.banner().as_bytes());
    let mut failed = false;
    for line in input.lines() {
        let Ok(line) = line else { break };
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let reply = session.handle(trimmed);
        let _ = writeln!(out, "(cudasem) {trimmed}");
        let _ = out.write_all(reply.text.as_bytes());
        match reply.outcome {
            debugger::Outcome::Quit => break,
            debugger::Outcome::Error => failed = true,
            debugger::Outcome::Ok => {}
        }
    }
    let _ = out.flush();
    if failed {
        Outcome::Misbehaved
    } else {
        Outcome::Clean
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
fn interactive(session: &mut Session) -> Outcome {
    let mut editor =
        match rustyline::Editor::<Completion, rustyline::history::DefaultHistory>::new() {
            Ok(e) => e,
            Err(e) => {
                eprintln!("error: cannot start the line editor: {e}");
                return Outcome::BadInput;
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
                let reply = session.handle(&line);
                print!("{}", reply.text);
                let _ = std::io::stdout().flush();
                if reply.outcome == debugger::Outcome::Quit {
                    return Outcome::Clean;
                }
                last = line;
            }
            Err(rustyline::error::ReadlineError::Interrupted) => {
                println!("(Ctrl-C: `quit` leaves the debugger)");
            }
            Err(rustyline::error::ReadlineError::Eof) => return Outcome::Clean,
            Err(e) => {
                eprintln!("error: {e}");
                return Outcome::BadInput;
            }
        }
    }
}
