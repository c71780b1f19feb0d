//! The interactive debugger's logic: a [`Session`] that takes one command line and answers
//! with text ([`Session::handle`]). The REPL of `cudasem debug` (line editing, history,
//! completion, Ctrl-C) and the scripted sessions of the tests are two thin callers of it.
//!
//! Nothing here prints, reads files or looks at a clock (ARCHITECTURE.md section 1 (invariants)): files go
//! through the caller's [`Host`] (`trace save/load`), and Ctrl-C arrives as an interrupt flag
//! that running commands poll.
//!
//! * [`command`]: the command language, parsed into an enum, with help texts and examples.
//! * [`history`]: reverse stepping: the choice log plus bounded snapshots; `back` restores the
//!   nearest snapshot and replays, which is exact because the machine is deterministic given
//!   its choices.
//! * `view`: the renderings (registers, memory, warps, the thesis-style stack table).
//! * `source`: source lines (`break kernel.cu:12`) as the addresses where warps enter them.
//!
//! The session schedules with a *stateless* policy (a function of the enabled set, the last
//! choice and the step number), so that after `back` the same commands take the same choices.

mod breakpoints;
pub mod command;
mod error;
mod examine;
mod gdb;
mod grids;
mod help;
pub mod history;
mod inspect;
mod source;
mod stepping;
mod view;

pub use error::{DebugError, HostError, SyntaxError};

use command::{Command, Condition, Location, Operand, ThreadSel, TraceOp, WatchTarget};
use history::History;
use ptx_parser::ScalarType;
use semantics::Program;
use semantics::machine::{
    GridLaunch, LaunchConfig, LaunchError, Machine, MachineConfig, ProgramLaunch, Termination,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use traces::{AccessKind, Choice, Event, MemSpace, lane_mask};

/// The session's scheduling policy for `step`, `continue`, `next` and `until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// The first enabled choice after the previous choice (in the choices' order), wrapping:
    /// every warp gets its turn.
    RoundRobin,
    /// A uniformly random enabled choice, from the seed and the step number only.
    Random(u64),
}

impl Policy {
    /// An index into `enabled` (never empty).
    pub fn pick(self, enabled: &[Choice], last: Option<&Choice>, step: u64) -> usize {
        match self {
            Policy::RoundRobin => last
                .and_then(|l| enabled.iter().position(|c| c > l))
                .unwrap_or(0),
            Policy::Random(seed) => {
                // splitmix64 of (seed, step): stateless, so `back` and replays agree.
                let mut z = seed ^ step.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                (z % enabled.len() as u64) as usize
            }
        }
    }

    pub fn text(self) -> String {
        match self {
            Policy::RoundRobin => "round-robin".to_string(),
            Policy::Random(s) => format!("random:{s}"),
        }
    }
}

/// A recorded run as `trace save` writes and `trace load` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceRecord {
    pub program_hash: u64,
    pub choices: Vec<Choice>,
}

/// What the session needs from its caller: files. The CLI writes JSON Lines traces (the format
/// of `cudasem run --trace`); tests keep them in memory.
pub trait Host {
    fn save_trace(&mut self, path: &str, trace: &TraceRecord) -> Result<(), HostError>;
    fn load_trace(&mut self, path: &str) -> Result<TraceRecord, HostError>;
    /// The text of a source file the PTX's `.file` directive names (for `list`); `None` when
    /// the host cannot read it.
    fn source_text(&mut self, _path: &str) -> Option<String> {
        None
    }
}

/// A host without files (`trace save/load` answer that they are unavailable).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoFiles;

impl Host for NoFiles {
    fn save_trace(&mut self, _: &str, _: &TraceRecord) -> Result<(), HostError> {
        Err(HostError::NoFiles)
    }
    fn load_trace(&mut self, _: &str) -> Result<TraceRecord, HostError> {
        Err(HostError::NoFiles)
    }
}

/// Traces kept in memory, by path (tests, and sessions embedded in other tools).
#[derive(Debug, Default, Clone)]
pub struct MemoryFiles {
    pub traces: BTreeMap<String, TraceRecord>,
    /// Source texts by path, as a PTX `.file` directive names them.
    pub sources: BTreeMap<String, String>,
}

impl Host for MemoryFiles {
    fn save_trace(&mut self, path: &str, trace: &TraceRecord) -> Result<(), HostError> {
        self.traces.insert(path.to_string(), trace.clone());
        Ok(())
    }
    fn load_trace(&mut self, path: &str) -> Result<TraceRecord, HostError> {
        self.traces
            .get(path)
            .cloned()
            .ok_or_else(|| HostError::NoTrace(path.to_string()))
    }
    fn source_text(&mut self, path: &str) -> Option<String> {
        self.sources.get(path).cloned()
    }
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// The command was malformed or could not be done; the session is unchanged.
    Error,
    /// An invariant of cudasem broke while doing the command (a recorded schedule the machine
    /// no longer takes): a bug in cudasem, not in the program or the command.
    Internal,
    /// `quit`.
    Quit,
}

/// The answer to one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub text: String,
    pub outcome: Outcome,
}

impl Reply {
    fn ok(text: String) -> Reply {
        Reply {
            text,
            outcome: Outcome::Ok,
        }
    }
    fn error(e: DebugError) -> Reply {
        match e {
            DebugError::Internal(_) => Reply {
                text: format!(
                    "error: {e}\n  = this is a bug in cudasem, not in the program: please report it with the commands that led here\n"
                ),
                outcome: Outcome::Internal,
            },
            _ => Reply {
                text: format!("error: {e}\n"),
                outcome: Outcome::Error,
            },
        }
    }
}

/// Session settings beyond the program and the launch.
#[derive(Debug, Clone)]
pub struct Options {
    /// The PTX text (for `where` and step lines); `None` prints no instruction text.
    pub source: Option<Arc<str>>,
    pub policy: Policy,
    /// Bound on the steps one `continue`/`until`/`next` may take.
    pub max_steps: u64,
    /// A snapshot every this many steps to begin with (the spacing doubles as they fill up).
    pub snapshot_every: u64,
    /// At most this many snapshots.
    pub max_snapshots: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            source: None,
            policy: Policy::RoundRobin,
            max_steps: 100_000_000,
            snapshot_every: 64,
            max_snapshots: 512,
        }
    }
}

/// A breakpoint: before a warp executes the instruction at one of `pcs` (one for a label, a
/// PTX line or an address; a source line may be entered at several).
#[derive(Debug, Clone)]
struct Breakpoint {
    id: u32,
    pcs: Vec<u32>,
    /// How the user named it (`DIVERGE`, `PTX line 52`, `vecadd.cu:12`).
    name: String,
    condition: Option<Condition>,
    hits: u64,
    /// `tbreak`: deleted when the command that stopped at it ends.
    temporary: bool,
}

/// A watchpoint: after a step that writes any byte of `[address, address + size)`.
#[derive(Debug, Clone)]
struct Watchpoint {
    id: u32,
    space: MemSpace,
    address: u64,
    ty: ScalarType,
    /// For `.shared`: only this block's memory; `None`: every block.
    block: Option<u32>,
    name: String,
    hits: u64,
}

/// The thread the inspection commands look at by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Focus {
    block: u32,
    warp: u32,
    lane: u32,
}

/// Why a run of steps stopped.
enum Stop {
    /// The requested number of steps was taken (or the `next`/`until` target reached).
    Done,
    Breakpoint {
        id: u32,
        block: u32,
        warp: u32,
        lanes: u64,
    },
    Watchpoint(String),
    Terminated,
    /// The interrupt flag (Ctrl-C) stopped the run; the session goes on.
    Interrupted,
    /// A bound of the run's budget cut it (the step bound of `--max-steps`).
    Bound(scheduler::BoundHit),
    Failed(DebugError),
}

/// An interactive debugging session of one kernel launch.
pub struct Session {
    program: Arc<Program>,
    /// The launches: one for a kernel launch, several for a program (thesis 5.7).
    launch: ProgramLaunch,
    config: MachineConfig,
    options: Options,
    initial: Machine,
    machine: Machine,
    history: History,
    breakpoints: Vec<Breakpoint>,
    watchpoints: Vec<Watchpoint>,
    next_id: u32,
    focus: Focus,
    /// The events of the last step (for `rule`).
    last_events: Vec<Event>,
    /// A warp that stopped at a breakpoint at this pc does not stop there again on resuming.
    resume_from: Option<(u32, u32, u32)>,
    /// Ctrl-C: the stop flag of the run loop, cleared when each command ends.
    interrupt: scheduler::Stop,
    host: Box<dyn Host>,
    /// The texts of the `.file`s the host could read, by file index (for `list`).
    source_files: BTreeMap<u32, Arc<str>>,
    /// Watchpoint values last seen, by (watchpoint, block).
    watched: BTreeMap<(u32, u32), u64>,
    /// `display`: registers printed after every command that steps.
    displays: Vec<gdb::Display>,
}

impl Session {
    /// Starts a session before the first step.
    pub fn new(
        program: Arc<Program>,
        launch: LaunchConfig,
        config: MachineConfig,
        options: Options,
    ) -> Result<Session, LaunchError> {
        let machine = Machine::new(program.clone(), &launch, &config)?;
        let launch = ProgramLaunch {
            launches: vec![GridLaunch::of(&launch, 0)],
            buffers: launch.buffers,
            globals: launch.globals,
            extern_values: launch.extern_values,
        };
        Ok(Session::start(program, launch, config, options, machine))
    }

    /// Starts a session of a program of several launches before the first step: grids in
    /// one stream run one after the other, grids of different streams may run concurrently
    /// (thesis 5.7). Blocks are numbered across grids, as the machine numbers them.
    pub fn from_program(
        program: Arc<Program>,
        launch: ProgramLaunch,
        config: MachineConfig,
        options: Options,
    ) -> Result<Session, LaunchError> {
        let machine = Machine::from_program(program.clone(), &launch, &config)?;
        Ok(Session::start(program, launch, config, options, machine))
    }

    fn start(
        program: Arc<Program>,
        launch: ProgramLaunch,
        config: MachineConfig,
        options: Options,
        machine: Machine,
    ) -> Session {
        let history = History::new(&machine, options.snapshot_every, options.max_snapshots);
        Session {
            program,
            launch,
            config,
            options,
            initial: machine.clone(),
            machine,
            history,
            breakpoints: Vec::new(),
            watchpoints: Vec::new(),
            next_id: 1,
            focus: Focus::default(),
            last_events: Vec::new(),
            resume_from: None,
            interrupt: scheduler::Stop::new(),
            host: Box::new(NoFiles),
            source_files: BTreeMap::new(),
            watched: BTreeMap::new(),
            displays: Vec::new(),
        }
    }

    /// Files for `trace save/load`.
    pub fn set_host(&mut self, host: Box<dyn Host>) {
        self.host = host;
        self.source_files = self
            .program
            .files
            .iter()
            .filter_map(|(&index, path)| {
                let text = self.host.source_text(path)?;
                Some((index, Arc::from(text.as_str())))
            })
            .collect();
    }

    /// The flag that interrupts a running `continue` (request it from a Ctrl-C handler).
    pub fn interrupt_flag(&self) -> scheduler::Stop {
        self.interrupt.clone()
    }

    /// The machine now (tests compare it with earlier clones).
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// Steps taken since the start.
    pub fn step_count(&self) -> u64 {
        self.history.len()
    }

    /// The choices taken since the start.
    pub fn choices_taken(&self) -> &[Choice] {
        self.history.choices()
    }

    /// Snapshots held for `back`.
    pub fn snapshot_count(&self) -> usize {
        self.history.snapshot_count()
    }

    /// The first lines a session prints.
    pub fn banner(&self) -> String {
        if self.launch.launches.len() > 1 {
            return self.program_banner();
        }
        let kernel = Self::readable_name(&self.kernel_name());
        let l = &self.launch.launches[0];
        format!(
            "cudasem debugger: kernel {kernel}, {}, warp size {}, {} warp model, policy {}\n\
             stopped before step 0; `help` lists the commands\n",
            grids::shape(l),
            self.config.device.warp_size,
            view::model_name(self.config.warp_model),
            self.options.policy.text()
        )
    }

    /// Words for completion: commands, labels, register names, buffer and variable names.
    pub fn completion_words(&self) -> Vec<String> {
        let mut words: Vec<String> = command::COMMANDS.iter().map(|s| s.to_string()).collect();
        for f in &self.program.functions {
            words.extend(f.labels.iter().map(|(l, _)| l.to_string()));
            words.extend(f.registers.iter().map(|r| r.name.to_string()));
        }
        words.extend(self.launch.buffers.iter().map(|b| b.name.clone()));
        words.extend(self.program.variables.iter().map(|v| v.name.clone()));
        words.extend(
            [
                "breakpoints",
                "table",
                "to",
                "save",
                "load",
                "block",
                "lane",
                ".shared",
                ".global",
            ]
            .map(String::from),
        );
        words.sort();
        words.dedup();
        words
    }

    /// Handles one command line. Never panics on user input; errors answer with a message and
    /// leave the session as it was.
    ///
    /// The interrupt flag stops the command that is running when it is set (or that starts
    /// while it is set: a caller may set it between echoing a command and handling it), and is
    /// cleared when the command ends, so an interrupt never reaches a later command.
    pub fn handle(&mut self, line: &str) -> Reply {
        let before = self.history.len();
        let mut reply = match command::parse(line) {
            Ok(None) => Reply::ok(String::new()),
            Ok(Some(c)) => self.execute(c),
            Err(e) => Reply::error(e.into()),
        };
        self.interrupt.clear();
        // A `tbreak` that stopped this command is spent.
        self.breakpoints.retain(|b| !(b.temporary && b.hits > 0));
        if self.history.len() != before && reply.outcome == Outcome::Ok {
            reply.text.push_str(&self.displays_text());
        }
        reply
    }

    fn execute(&mut self, c: Command) -> Reply {
        let result = match c {
            Command::Quit => {
                return Reply {
                    text: String::new(),
                    outcome: Outcome::Quit,
                };
            }
            Command::Help(t) => command::help(t.as_deref()),
            Command::Step(n) => self.cmd_step(n),
            Command::Warp { block, warp } => self.cmd_warp(block, warp, None),
            Command::Lane { block, warp, lane } => self.cmd_warp(block, warp, Some(lane)),
            Command::Next => self.cmd_next(),
            Command::Continue => self.cmd_continue(None),
            Command::Finish => self.cmd_finish(),
            Command::Until(loc) => self
                .resolve(&loc)
                .and_then(|(pcs, _)| self.cmd_continue(Some(&pcs))),
            Command::Break {
                at,
                condition,
                temporary,
            } => self.cmd_break(&at, condition, temporary),
            Command::Watch(t) => self.cmd_watch(&t),
            Command::Delete(id) => self.cmd_delete(id),
            Command::InfoBreakpoints => Ok(self.info_breakpoints()),
            Command::Print {
                register,
                at,
                format,
            } => self.cmd_print(&register, at, format),
            Command::Display { register, format } => self.cmd_display(register, format),
            Command::Undisplay(id) => self.cmd_undisplay(id),
            Command::InfoDisplay => Ok(self.info_display()),
            Command::InfoGrids => Ok(self.cmd_info_grids()),
            Command::Focus(at) => self.cmd_focus(at),
            Command::FocusThread { block, thread } => {
                let ws = self.warp_size().max(1);
                self.cmd_focus(command::ThreadSel {
                    block,
                    warp: Some(thread / ws),
                    lane: Some(thread % ws),
                })
            }
            Command::List(at) => self.cmd_list(at),
            Command::Regs => self.cmd_regs(),
            Command::Mem(t) => self.cmd_mem(&t),
            Command::Where => self.cmd_where(),
            Command::Stack { table: None } => self.cmd_stack(),
            Command::Stack { table: Some(n) } => self.cmd_stack_table(n),
            Command::Warps => Ok(self.cmd_warps()),
            Command::Blocks => Ok(self.cmd_blocks()),
            Command::Barriers => Ok(self.cmd_barriers()),
            Command::Caches => Ok(self.cmd_caches()),
            Command::Choices => Ok(self.cmd_choices()),
            Command::Choose(i) => self.cmd_choose(i),
            Command::Back(n) => {
                let now = self.history.len();
                if n > now {
                    Err(
                        format!("only {now} steps were taken: `back {now}` returns to the start")
                            .into(),
                    )
                } else {
                    self.back_to(now - n)
                }
            }
            Command::BackTo(s) => {
                let now = self.history.len();
                if s > now {
                    Err(format!(
                        "step {s} is ahead of the current step {now}; `back` goes backwards only"
                    )
                    .into())
                } else {
                    self.back_to(s)
                }
            }
            Command::Rule => Ok(self.cmd_rule()),
            Command::Trace(op) => self.cmd_trace(op),
            Command::Status => Ok(self.cmd_status()),
        };
        match result {
            Ok(text) => Reply::ok(text),
            Err(e) => Reply::error(e),
        }
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `.global`: a space as PTX writes it in a directive.
fn memory_space_name(s: MemSpace) -> String {
    format!(".{}", memory_model::space_name(s))
}

/// `0-3, 7`.
fn ranges(xs: &[u32]) -> String {
    let mut m = Vec::new();
    let mut i = 0;
    while i < xs.len() {
        let start = xs[i];
        while i + 1 < xs.len() && xs[i + 1] == xs[i] + 1 {
            i += 1;
        }
        m.push(if start == xs[i] {
            start.to_string()
        } else {
            format!("{start}-{}", xs[i])
        });
        i += 1;
    }
    m.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_are_told_apart_from_command_errors() {
        let user = Reply::error("no breakpoint 3".into());
        assert_eq!(user.outcome, Outcome::Error);
        assert_eq!(user.text, "error: no breakpoint 3\n");
        let bug = Reply::error(DebugError::Internal(
            "the replay diverged: step 4".to_string(),
        ));
        assert_eq!(bug.outcome, Outcome::Internal);
        assert!(
            bug.text
                .starts_with("error: internal error: the replay diverged: step 4\n")
        );
        assert!(bug.text.contains("this is a bug in cudasem"));
    }
}
