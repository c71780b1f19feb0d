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

pub mod command;
mod gdb;
pub mod history;
mod source;
mod view;

use command::{Command, Condition, Location, MemTarget, Operand, ThreadSel, TraceOp, WatchTarget};
use history::History;
use ptx_parser::ScalarType;
use semantics::Program;
use semantics::machine::{LaunchConfig, LaunchError, Machine, MachineConfig, Termination};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use traces::{AccessKind, Choice, Event, MemSpace};

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
    fn save_trace(&mut self, path: &str, trace: &TraceRecord) -> Result<(), String>;
    fn load_trace(&mut self, path: &str) -> Result<TraceRecord, String>;
}

/// A host without files (`trace save/load` answer that they are unavailable).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoFiles;

impl Host for NoFiles {
    fn save_trace(&mut self, _: &str, _: &TraceRecord) -> Result<(), String> {
        Err("this session has no file access".to_string())
    }
    fn load_trace(&mut self, _: &str) -> Result<TraceRecord, String> {
        Err("this session has no file access".to_string())
    }
}

/// Traces kept in memory, by path (tests, and sessions embedded in other tools).
#[derive(Debug, Default, Clone)]
pub struct MemoryFiles {
    pub traces: BTreeMap<String, TraceRecord>,
}

impl Host for MemoryFiles {
    fn save_trace(&mut self, path: &str, trace: &TraceRecord) -> Result<(), String> {
        self.traces.insert(path.to_string(), trace.clone());
        Ok(())
    }
    fn load_trace(&mut self, path: &str) -> Result<TraceRecord, String> {
        self.traces
            .get(path)
            .cloned()
            .ok_or_else(|| format!("no trace `{path}`"))
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

/// How a command's error text says that it is an internal error ([`Outcome::Internal`]).
const INTERNAL: &str = "internal: ";

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
    fn error(text: String) -> Reply {
        match text.strip_prefix(INTERNAL) {
            Some(what) => Reply {
                text: format!(
                    "error: internal error: {what}\n  = this is a bug in cudasem, not in the program: please report it with the commands that led here\n"
                ),
                outcome: Outcome::Internal,
            },
            None => Reply {
                text: format!("error: {text}\n"),
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
    Interrupted,
    StepBound,
    Failed(String),
}

/// An interactive debugging session of one kernel launch.
pub struct Session {
    program: Arc<Program>,
    launch: LaunchConfig,
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
    interrupt: Arc<AtomicBool>,
    host: Box<dyn Host>,
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
        let history = History::new(&machine, options.snapshot_every, options.max_snapshots);
        Ok(Session {
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
            interrupt: Arc::new(AtomicBool::new(false)),
            host: Box::new(NoFiles),
            watched: BTreeMap::new(),
            displays: Vec::new(),
        })
    }

    /// Files for `trace save/load`.
    pub fn set_host(&mut self, host: Box<dyn Host>) {
        self.host = host;
    }

    /// The flag that interrupts a running `continue` (set it from a Ctrl-C handler).
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
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
        let kernel = self.kernel_name();
        let l = &self.launch;
        format!(
            "cudasem debugger: kernel {kernel}, grid ({},{},{}), block ({},{},{}), warp size {}, {} warp model, policy {}\n\
             stopped before step 0; `help` lists the commands\n",
            l.grid[0],
            l.grid[1],
            l.grid[2],
            l.block[0],
            l.block[1],
            l.block[2],
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
            Err(e) => Reply::error(e),
        };
        self.interrupt.store(false, Ordering::Relaxed);
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
            Command::Focus(at) => self.cmd_focus(at),
            Command::FocusThread { block, thread } => {
                let ws = self.warp_size().max(1);
                self.cmd_focus(command::ThreadSel {
                    block,
                    warp: Some(thread / ws),
                    lane: Some(thread % ws),
                })
            }
            Command::List(line) => self.cmd_list(line),
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
                    Err(format!(
                        "only {now} steps were taken: `back {now}` returns to the start"
                    ))
                } else {
                    self.back_to(now - n)
                }
            }
            Command::BackTo(s) => {
                let now = self.history.len();
                if s > now {
                    Err(format!(
                        "step {s} is ahead of the current step {now}; `back` goes backwards only"
                    ))
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

    // ----- stepping -------------------------------------------------------------------------

    fn kernel_name(&self) -> String {
        self.program
            .functions
            .iter()
            .find(|f| {
                f.kind == semantics::program::FunctionKind::Entry
                    && self.launch.kernel.as_deref().is_none_or(|k| k == f.name)
            })
            .map_or_else(|| "?".to_string(), |f| f.name.clone())
    }

    fn warp_size(&self) -> u32 {
        self.config.device.warp_size
    }

    fn threads_per_block(&self) -> u32 {
        self.launch.block.iter().product()
    }

    fn warps_per_block(&self) -> u32 {
        self.threads_per_block().div_ceil(self.warp_size().max(1))
    }

    fn total_blocks(&self) -> u32 {
        self.launch.grid.iter().product()
    }

    /// Lanes of warp `w` that are threads (the last warp of a block may be underpopulated).
    fn lanes_in_warp(&self, w: u32) -> u32 {
        let ws = self.warp_size();
        self.threads_per_block().saturating_sub(w * ws).min(ws)
    }

    /// Takes one choice, recording it.
    fn take(&mut self, choice: Choice) -> Result<(), String> {
        let mut events = Vec::new();
        self.machine
            .step_observed(&choice, &mut events)
            .map_err(|e| e.to_string())?;
        self.history.record(choice, &self.machine);
        self.last_events = events;
        if let Some((b, w)) = view::choice_warp(&choice) {
            if self.focus.block != b || self.focus.warp != w {
                self.focus = Focus {
                    block: b,
                    warp: w,
                    lane: self.focus.lane.min(self.lanes_in_warp(w).saturating_sub(1)),
                };
            }
            if self
                .resume_from
                .is_some_and(|(rb, rw, _)| rb == b && rw == w)
            {
                self.resume_from = None;
            }
        }
        Ok(())
    }

    /// The pc a choice would execute at, if it steps a warp or lanes.
    fn choice_pc(&self, c: &Choice) -> Option<(u32, u32, u32, u64)> {
        let (b, w) = view::choice_warp(c)?;
        let v = self.machine.warp_view(b, w)?;
        match c {
            Choice::Lanes { mask, .. } => {
                let lane = mask.trailing_zeros() as usize;
                Some((b, w, *v.lane_pcs.get(lane)?, *mask))
            }
            _ => Some((b, w, v.pc, v.active)),
        }
    }

    /// The breakpoint `c` would run into, with the lanes that satisfy its condition.
    fn breakpoint_hit(&self, c: &Choice, temp: &[u32]) -> Option<(Option<u32>, u32, u32, u64)> {
        let (b, w, pc, lanes) = self.choice_pc(c)?;
        if self.resume_from == Some((b, w, pc)) {
            return None;
        }
        if temp.contains(&pc) {
            return Some((None, b, w, lanes));
        }
        for bp in &self.breakpoints {
            if !bp.pcs.contains(&pc) {
                continue;
            }
            match &bp.condition {
                None => return Some((Some(bp.id), b, w, lanes)),
                Some(cond) => {
                    let hits = self.condition_lanes(cond, b, w, lanes);
                    if hits != 0 {
                        return Some((Some(bp.id), b, w, hits));
                    }
                }
            }
        }
        None
    }

    /// The lanes of `lanes` in which `cond` holds (a register unknown to a lane: false there).
    fn condition_lanes(&self, cond: &Condition, b: u32, w: u32, lanes: u64) -> u64 {
        let mut out = 0;
        for lane in 0..self.lanes_in_warp(w) {
            if lanes >> lane & 1 == 0 {
                continue;
            }
            let a = self.operand_value(&cond.lhs, b, w, lane);
            let z = self.operand_value(&cond.rhs, b, w, lane);
            if let (Some(a), Some(z)) = (a, z)
                && cond.cmp.holds(a, z)
            {
                out |= 1 << lane;
            }
        }
        out
    }

    fn operand_value(&self, o: &Operand, b: u32, w: u32, lane: u32) -> Option<i128> {
        match o {
            Operand::Int(v) => Some(*v),
            Operand::Lane => Some(lane as i128),
            Operand::Tid => Some((w * self.warp_size() + lane) as i128),
            Operand::Reg(name) => {
                let (ty, bits) = self.register_value(name, b, w, lane).ok()?;
                Some(view::integer_value(ty, bits))
            }
        }
    }

    /// Takes steps until `limit` steps were taken, `pick` has nothing, a breakpoint or
    /// watchpoint or the end is reached, or the interrupt flag is set. With `lines`, one line
    /// per step is appended.
    fn run(
        &mut self,
        limit: u64,
        temp: &[u32],
        pick: &mut dyn FnMut(&Session) -> Option<Choice>,
        mut lines: Option<&mut String>,
    ) -> (Stop, u64) {
        let mut taken = 0u64;
        loop {
            if self.machine.termination().is_some() || self.machine.enabled().is_empty() {
                return (Stop::Terminated, taken);
            }
            if taken >= limit {
                return (Stop::Done, taken);
            }
            // Cleared when the command ends (`handle`), so it only ever stops the command that
            // was running (or about to run) when it came.
            if self.interrupt.load(Ordering::Relaxed) {
                return (Stop::Interrupted, taken);
            }
            let Some(choice) = pick(self) else {
                return (Stop::Done, taken);
            };
            if let Some((id, b, w, lanes)) = self.breakpoint_hit(&choice, temp) {
                let pc = self.choice_pc(&choice).map_or(0, |x| x.2);
                self.resume_from = Some((b, w, pc));
                self.focus = Focus {
                    block: b,
                    warp: w,
                    lane: if lanes == 0 {
                        0
                    } else {
                        lanes.trailing_zeros()
                    },
                };
                return match id {
                    Some(id) => {
                        if let Some(bp) = self.breakpoints.iter_mut().find(|x| x.id == id) {
                            bp.hits += 1;
                        }
                        (
                            Stop::Breakpoint {
                                id,
                                block: b,
                                warp: w,
                                lanes,
                            },
                            taken,
                        )
                    }
                    None => (Stop::Done, taken),
                };
            }
            if let Err(e) = self.take(choice) {
                return (Stop::Failed(e), taken);
            }
            taken += 1;
            if let Some(out) = lines.as_deref_mut() {
                out.push_str(&self.step_line());
            }
            if let Some(text) = self.watch_hits() {
                return (Stop::Watchpoint(text), taken);
            }
        }
    }

    /// The policy's next choice.
    fn policy_pick(s: &Session) -> Option<Choice> {
        let en = s.machine.enabled();
        if en.is_empty() {
            return None;
        }
        let i = s
            .options
            .policy
            .pick(en, s.history.choices().last(), s.history.len());
        en.get(i.min(en.len() - 1)).copied()
    }

    /// What a run ended in, as text.
    fn stop_text(&self, stop: &Stop, taken: u64) -> String {
        let mut s = String::new();
        match stop {
            Stop::Done => {}
            Stop::Breakpoint {
                id,
                block,
                warp,
                lanes,
            } => {
                let bp = self.breakpoints.iter().find(|b| b.id == *id);
                let _ = writeln!(
                    s,
                    "{} {id} at {}: block {block} warp {warp}, after {taken} step{}{}",
                    if bp.is_some_and(|b| b.temporary) {
                        "temporary breakpoint"
                    } else {
                        "breakpoint"
                    },
                    bp.map_or("?", |b| b.name.as_str()),
                    plural(taken),
                    if bp.is_some_and(|b| b.temporary) {
                        " (deleted)"
                    } else {
                        ""
                    }
                );
                s.push_str(&self.warp_summary(*block, *warp, Some(*lanes)));
            }
            Stop::Watchpoint(text) => s.push_str(text),
            Stop::Terminated => {
                let t = self
                    .machine
                    .termination()
                    .cloned()
                    .unwrap_or(Termination::Completed);
                let _ = writeln!(
                    s,
                    "the kernel ended after {} steps: {t}",
                    self.history.len()
                );
            }
            Stop::Interrupted => {
                let _ = writeln!(
                    s,
                    "interrupted after {taken} step{}, at step {}; the session goes on. The last step:",
                    plural(taken),
                    self.history.len()
                );
                s.push_str(&self.step_line());
            }
            Stop::StepBound => {
                let _ = writeln!(
                    s,
                    "stopped at the step bound after {taken} steps (now at step {}): no breakpoint, \
                     watchpoint or end of the kernel came; the kernel may not terminate",
                    self.history.len()
                );
                let _ = writeln!(
                    s,
                    "`continue` runs up to {} more steps (`--max-steps N` sets the bound); `where` \
                     and `warps` show where the warps are",
                    self.options.max_steps
                );
            }
            Stop::Failed(e) => {
                let _ = writeln!(s, "the step failed: {e}");
            }
        }
        s
    }

    fn cmd_step(&mut self, n: u64) -> Result<String, String> {
        if n == 0 {
            return Err("`step 0` takes no step".to_string());
        }
        let verbose = n <= 64;
        let mut lines = String::new();
        let (stop, taken) = self.run(
            n,
            &[],
            &mut Session::policy_pick,
            verbose.then_some(&mut lines),
        );
        if !verbose {
            let _ = writeln!(
                lines,
                "took {taken} steps; now at step {}",
                self.history.len()
            );
            lines.push_str(&self.step_line());
        }
        lines.push_str(&self.stop_text(&stop, taken));
        Ok(lines)
    }

    fn cmd_continue(&mut self, until: Option<&[u32]>) -> Result<String, String> {
        let limit = self.options.max_steps;
        let (mut stop, taken) = self.run(
            limit,
            until.unwrap_or_default(),
            &mut Session::policy_pick,
            None,
        );
        if matches!(stop, Stop::Done) && taken >= limit {
            stop = Stop::StepBound;
        }
        let mut s = self.stop_text(&stop, taken);
        if until.is_some() && matches!(stop, Stop::Done) {
            let _ = writeln!(
                s,
                "reached after {taken} step{}: block {} warp {}",
                plural(taken),
                self.focus.block,
                self.focus.warp
            );
            s.push_str(&self.warp_summary(self.focus.block, self.focus.warp, None));
        }
        Ok(s)
    }

    /// The enabled choices of warp `(b, w)` (and of lane `lane`'s group).
    fn warp_choices(&self, b: u32, w: u32, lane: Option<u32>) -> Vec<Choice> {
        self.machine
            .enabled()
            .iter()
            .filter(|c| view::choice_warp(c) == Some((b, w)))
            .filter(|c| match (lane, c) {
                (Some(l), Choice::Lanes { mask, .. }) => mask >> l & 1 == 1,
                (Some(_), _) => false,
                _ => true,
            })
            .copied()
            .collect()
    }

    /// Why warp `(b, w)` cannot step now.
    fn why_not(&self, b: u32, w: u32) -> String {
        if self.machine.termination().is_some() {
            return "the kernel has ended".to_string();
        }
        if b >= self.total_blocks() || w >= self.warps_per_block() {
            return format!(
                "there is no warp {w} in block {b} (grid of {} blocks, {} warps per block)",
                self.total_blocks(),
                self.warps_per_block()
            );
        }
        match self.machine.warp_view(b, w) {
            None => format!("block {b} is not resident (not issued yet, or completed)"),
            Some(v) if v.completed => format!("warp {w} of block {b} has completed"),
            Some(v) if v.waiting != 0 => format!(
                "warp {w} of block {b} waits at barrier{} {}",
                if v.waiting.count_ones() == 1 { "" } else { "s" },
                view::bits_text(v.waiting as u64)
            ),
            Some(_) => format!("warp {w} of block {b} is not enabled"),
        }
    }

    fn cmd_warp(&mut self, b: u32, w: u32, lane: Option<u32>) -> Result<String, String> {
        if lane.is_some() && self.config.warp_model == semantics::machine::WarpModel::SimtStack {
            return Err(format!(
                "under the simt-stack model lanes step together as a warp: write `warp {b} {w}`"
            ));
        }
        let cs = self.warp_choices(b, w, lane);
        let choice = match cs.as_slice() {
            [] => {
                return Err(match lane {
                    Some(l) if self.machine.warp_view(b, w).is_some() => {
                        format!(
                            "no group of warp {b}.{w} holding lane {l} is enabled; {}",
                            self.why_not(b, w)
                        )
                    }
                    _ => self.why_not(b, w),
                });
            }
            [c] => *c,
            many => {
                let mut s = format!(
                    "warp {b}.{w} has {} enabled choices; pick one with `choose N`:\n",
                    many.len()
                );
                for (i, c) in self.machine.enabled().iter().enumerate() {
                    if many.contains(c) {
                        let _ = writeln!(s, "  {i}: {}", self.choice_text(c));
                    }
                }
                return Err(s.trim_end().to_string());
            }
        };
        // Stepping a chosen warp ignores a breakpoint at its own pc (the user asked for it).
        self.resume_from = None;
        self.take(choice)?;
        let mut s = self.step_line();
        s.push_str(&self.after_step_text());
        Ok(s)
    }

    /// Watchpoint hits and the end of the run after a single step.
    fn after_step_text(&mut self) -> String {
        let mut s = String::new();
        if let Some(t) = self.watch_hits() {
            s.push_str(&t);
        }
        if self.machine.termination().is_some() {
            s.push_str(&self.stop_text(&Stop::Terminated, 1));
        }
        s
    }

    /// The deepest call depth of the warp's active lanes (0 if none).
    fn call_depth(&self, b: u32, w: u32) -> u16 {
        self.machine.warp_view(b, w).map_or(0, |v| {
            (0..v.depth.len())
                .filter(|l| v.active >> l & 1 == 1)
                .map(|l| v.depth[l])
                .max()
                .unwrap_or(0)
        })
    }

    fn cmd_next(&mut self) -> Result<String, String> {
        let (b, w) = (self.focus.block, self.focus.warp);
        let first = match self.warp_choices(b, w, None).first() {
            Some(c) => *c,
            None => return Err(self.why_not(b, w)),
        };
        let depth = self.call_depth(b, w);
        self.resume_from = None;
        self.take(first)?;
        let mut s = self.step_line();
        if self.call_depth(b, w) > depth && self.machine.termination().is_none() {
            // Over the call: until the warp is back at this depth.
            let (stop, taken) = self.run_warp_until(b, w, move |d| d <= depth);
            let _ = writeln!(
                s,
                "stepped over the call ({taken} more step{})",
                plural(taken)
            );
            s.push_str(&self.stop_text(&stop, taken));
            if matches!(stop, Stop::Done) {
                self.focus.block = b;
                self.focus.warp = w;
                s.push_str(&self.warp_summary(b, w, None));
            }
        } else {
            s.push_str(&self.after_step_text());
        }
        Ok(s)
    }

    fn cmd_choices(&self) -> String {
        let en = self.machine.enabled();
        if en.is_empty() {
            return "no choice is enabled: the kernel has ended\n".to_string();
        }
        let mut s = format!(
            "{} enabled choice{} at step {}:\n",
            en.len(),
            plural(en.len() as u64),
            self.history.len()
        );
        for (i, c) in en.iter().enumerate() {
            let _ = writeln!(s, "  {i}: {}", self.choice_text(c));
        }
        s
    }

    fn cmd_choose(&mut self, i: usize) -> Result<String, String> {
        let en = self.machine.enabled();
        let Some(c) = en.get(i).copied() else {
            return Err(if en.is_empty() {
                "no choice is enabled: the kernel has ended".to_string()
            } else {
                format!(
                    "there are {} choices (0 to {}); `choices` lists them",
                    en.len(),
                    en.len() - 1
                )
            });
        };
        self.resume_from = None;
        self.take(c)?;
        let mut s = self.step_line();
        s.push_str(&self.after_step_text());
        Ok(s)
    }

    fn back_to(&mut self, step: u64) -> Result<String, String> {
        let mut events = Vec::new();
        let m = self
            .history
            .state_at(step, Some(&mut events))
            .map_err(|e| format!("{INTERNAL}the replay diverged: {e}"))?;
        self.machine = m;
        self.history.truncate(step);
        self.last_events = events;
        self.resume_from = None;
        self.refresh_watched();
        if let Some((b, w)) = self.history.choices().last().and_then(view::choice_warp) {
            self.focus.block = b;
            self.focus.warp = w;
        }
        let mut s = format!("back at step {step}\n");
        if self.history.is_empty() {
            s.push_str("(the start: no step taken)\n");
        } else {
            s.push_str(&self.step_line());
        }
        Ok(s)
    }

    // ----- breakpoints and watchpoints -------------------------------------------------------

    /// The launched kernel.
    fn kernel(&self) -> Option<semantics::program::FuncId> {
        let name = self.kernel_name();
        self.program
            .functions
            .iter()
            .position(|f| f.name == name)
            .map(|i| semantics::program::FuncId(i as u32))
    }

    /// A location's pcs (several for a source line entered in several places) and its name.
    fn resolve(&self, loc: &Location) -> Result<(Vec<u32>, String), String> {
        let p = &self.program;
        let ptx_line = |line: u32| {
            p.source
                .iter()
                .position(|s| s.ptx_line >= line)
                .map(|pc| {
                    (
                        vec![pc as u32],
                        format!("PTX line {}", p.source[pc].ptx_line),
                    )
                })
                .ok_or_else(|| {
                    format!(
                        "no instruction on or after PTX line {line} (the last is on line {})",
                        p.source.last().map_or(0, |s| s.ptx_line)
                    )
                })
        };
        match loc {
            Location::Pc(pc) => {
                if (*pc as usize) < p.instructions.len() {
                    Ok((vec![*pc], format!("pc {pc}")))
                } else {
                    Err(format!(
                        "pc {pc} is beyond the program (addresses 0 to {})",
                        p.instructions.len().saturating_sub(1)
                    ))
                }
            }
            Location::PtxLine(line) => ptx_line(*line),
            // A bare number is a source line where the PTX has them (what a CUDA programmer
            // means), a PTX line otherwise (hand-written PTX, the thesis's listings).
            Location::Line(line) if source::has_lines(p) => {
                source::resolve(p, None, *line, self.kernel())
            }
            Location::Line(line) => ptx_line(*line),
            Location::SourceLine { file, line } => {
                source::resolve(p, Some(file), *line, self.kernel())
            }
            Location::Label { function, name } => {
                let mut found = Vec::new();
                for f in &p.functions {
                    if function.as_ref().is_some_and(|n| *n != f.name) {
                        continue;
                    }
                    for (l, pc) in &f.labels {
                        if l == name {
                            found.push((f.name.clone(), *pc));
                        }
                    }
                }
                match found.as_slice() {
                    [] => {
                        let labels: Vec<&str> = p
                            .functions
                            .iter()
                            .flat_map(|f| f.labels.iter().map(|(l, _)| l.as_str()))
                            .collect();
                        Err(format!(
                            "no label `{name}`{}; labels: {}",
                            function
                                .as_ref()
                                .map(|f| format!(" in `{f}`"))
                                .unwrap_or_default(),
                            if labels.is_empty() {
                                "none".to_string()
                            } else {
                                labels.join(", ")
                            }
                        ))
                    }
                    [(_, pc)] => Ok((vec![*pc], name.clone())),
                    many => Err(format!(
                        "label `{name}` is in several functions ({}): write FUNCTION:{name}",
                        many.iter()
                            .map(|(f, _)| f.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                }
            }
        }
    }

    fn cmd_break(
        &mut self,
        at: &Location,
        condition: Option<Condition>,
        temporary: bool,
    ) -> Result<String, String> {
        let (pcs, name) = self.resolve(at)?;
        if let Some(c) = &condition {
            // Check the registers now, against the functions of the breakpoint.
            for pc in &pcs {
                let f = self
                    .program
                    .function_of(*pc)
                    .map(|f| self.program.function(f));
                for o in [&c.lhs, &c.rhs] {
                    if let Operand::Reg(r) = o
                        && f.is_some_and(|f| !f.registers.iter().any(|x| x.name == *r))
                    {
                        return Err(format!("no register `{r}` in the function of {name}"));
                    }
                }
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        let kind = if temporary {
            "temporary breakpoint"
        } else {
            "breakpoint"
        };
        let mut s = format!("{kind} {id} at {name}");
        if let Some(c) = &condition {
            let _ = write!(s, " if {c}");
        }
        s.push_str(&self.locations_text(&pcs));
        self.breakpoints.push(Breakpoint {
            id,
            pcs,
            name,
            condition,
            hits: 0,
            temporary,
        });
        Ok(s)
    }

    /// `: pc 3 (...)` for one address, else a line per address.
    fn locations_text(&self, pcs: &[u32]) -> String {
        match pcs {
            [pc] => format!(": {}\n", self.pc_text(*pc)),
            _ => {
                let mut s = format!(", {} locations:\n", pcs.len());
                for pc in pcs {
                    let _ = writeln!(s, "      {}", self.pc_text(*pc));
                }
                s
            }
        }
    }

    fn cmd_watch(&mut self, t: &WatchTarget) -> Result<String, String> {
        let (space, address, ty, block, name) = match t {
            WatchTarget::Named { name, index } => {
                let r = self.named_region(name)?;
                let size = semantics::machine::type_size(r.ty) as u64;
                if *index >= r.len {
                    return Err(format!(
                        "`{name}` has {} elements: index {index} is out of range",
                        r.len
                    ));
                }
                (
                    r.space,
                    r.address + index * size,
                    r.ty,
                    None,
                    format!("{name}[{index}]"),
                )
            }
            WatchTarget::Shared { address, ty, block } => {
                let ty = ty.unwrap_or(ScalarType::U32);
                if let Some(b) = block
                    && *b >= self.total_blocks()
                {
                    return Err(format!(
                        "there is no block {b} (the grid has {})",
                        self.total_blocks()
                    ));
                }
                let name = match block {
                    Some(b) => format!(".shared[{address:#x}] of block {b}"),
                    None => format!(".shared[{address:#x}]"),
                };
                (MemSpace::Shared, *address, ty, *block, name)
            }
            WatchTarget::Global { address, ty } => {
                let ty = ty.unwrap_or(ScalarType::U32);
                (
                    MemSpace::Global,
                    *address,
                    ty,
                    None,
                    format!(".global[{address:#x}]"),
                )
            }
        };
        let id = self.next_id;
        self.next_id += 1;
        self.watchpoints.push(Watchpoint {
            id,
            space,
            address,
            ty,
            block,
            name: name.clone(),
            hits: 0,
        });
        self.refresh_watched();
        let now = match space {
            MemSpace::Shared => match block {
                Some(b) => self
                    .read_value(space, address, ty, b)
                    .map(|v| view::value_text(ty, v))
                    .unwrap_or_else(|| "not resident".to_string()),
                None => "per block".to_string(),
            },
            _ => self
                .read_value(space, address, ty, 0)
                .map(|v| view::value_text(ty, v))
                .unwrap_or_else(|| "unmapped".to_string()),
        };
        Ok(format!(
            "watchpoint {id} on {name} ({}, now {now})\n",
            ty.directive()
        ))
    }

    fn cmd_delete(&mut self, id: Option<u32>) -> Result<String, String> {
        match id {
            None => {
                let n = self.breakpoints.len() + self.watchpoints.len();
                self.breakpoints.clear();
                self.watchpoints.clear();
                self.watched.clear();
                Ok(format!(
                    "deleted {n} breakpoint{} and watchpoint{}\n",
                    plural(n as u64),
                    plural(n as u64)
                ))
            }
            Some(id) => {
                let before = self.breakpoints.len() + self.watchpoints.len();
                self.breakpoints.retain(|b| b.id != id);
                self.watchpoints.retain(|w| w.id != id);
                self.watched.retain(|(w, _), _| *w != id);
                if before == self.breakpoints.len() + self.watchpoints.len() {
                    Err(format!(
                        "no breakpoint or watchpoint {id}; `info breakpoints` lists them"
                    ))
                } else {
                    Ok(format!("deleted {id}\n"))
                }
            }
        }
    }

    fn info_breakpoints(&self) -> String {
        if self.breakpoints.is_empty() && self.watchpoints.is_empty() {
            return "no breakpoints or watchpoints\n".to_string();
        }
        let mut s = String::new();
        let mut rows: Vec<(u32, String)> = Vec::new();
        for b in &self.breakpoints {
            let mut t = format!("{:<3} breakpoint  {}", b.id, b.name);
            if let [pc] = b.pcs.as_slice() {
                let _ = write!(t, " ({})", self.pc_text(*pc));
            }
            if let Some(c) = &b.condition {
                let _ = write!(t, " if {c}");
            }
            let _ = write!(t, ", hit {} time{}", b.hits, plural(b.hits));
            if b.pcs.len() > 1 {
                t.push_str(&self.locations_text(&b.pcs));
            }
            rows.push((b.id, t.trim_end().to_string()));
        }
        for w in &self.watchpoints {
            rows.push((
                w.id,
                format!(
                    "{:<3} watchpoint  {} ({}), hit {} time{}",
                    w.id,
                    w.name,
                    w.ty.directive(),
                    w.hits,
                    plural(w.hits)
                ),
            ));
        }
        rows.sort();
        for (_, t) in rows {
            s.push_str(&t);
            s.push('\n');
        }
        s
    }

    /// Re-reads every watched value (after `back`, `trace load` or a new watchpoint).
    fn refresh_watched(&mut self) {
        self.watched.clear();
        let blocks = self.total_blocks();
        let ws: Vec<Watchpoint> = self.watchpoints.clone();
        for w in &ws {
            let keys: Vec<u32> = match (w.space, w.block) {
                (MemSpace::Shared, Some(b)) => vec![b],
                (MemSpace::Shared, None) => (0..blocks).collect(),
                _ => vec![0],
            };
            for b in keys {
                if let Some(v) = self.read_value(w.space, w.address, w.ty, b) {
                    self.watched.insert((w.id, b), v);
                }
            }
        }
    }

    /// Checks the last step's writes against the watchpoints.
    fn watch_hits(&mut self) -> Option<String> {
        if self.watchpoints.is_empty() {
            return None;
        }
        let mut out = String::new();
        let events = std::mem::take(&mut self.last_events);
        let wps = self.watchpoints.clone();
        for w in &wps {
            let size = semantics::machine::type_size(w.ty) as u64;
            let mut writers: Vec<(u32, u32, u32)> = Vec::new();
            let mut blocks: Vec<u32> = Vec::new();
            for e in &events {
                if let Event::Memory {
                    block,
                    warp,
                    lane,
                    kind: AccessKind::Store | AccessKind::Atomic { .. },
                    space,
                    address,
                    size: n,
                    ..
                } = e
                    && *space == w.space
                    && w.block.is_none_or(|b| b == *block)
                    && *address < w.address + size
                    && w.address < address + *n as u64
                {
                    writers.push((*block, *warp, *lane));
                    let key = if w.space == MemSpace::Shared {
                        *block
                    } else {
                        0
                    };
                    if !blocks.contains(&key) {
                        blocks.push(key);
                    }
                }
            }
            for key in blocks {
                let new = self.read_value(w.space, w.address, w.ty, key);
                let old = self.watched.get(&(w.id, key)).copied();
                if let Some(v) = new {
                    self.watched.insert((w.id, key), v);
                }
                if let Some(x) = self.watchpoints.iter_mut().find(|x| x.id == w.id) {
                    x.hits += 1;
                }
                let who: Vec<String> = writers
                    .iter()
                    .filter(|(b, _, _)| w.space != MemSpace::Shared || *b == key)
                    .map(|(b, wa, l)| format!("{b}.{wa} lane {l}"))
                    .collect();
                let _ = writeln!(
                    out,
                    "watchpoint {} {}{}: {} -> {} (written at step {} by warp {})",
                    w.id,
                    w.name,
                    if w.space == MemSpace::Shared && w.block.is_none() {
                        format!(" of block {key}")
                    } else {
                        String::new()
                    },
                    old.map_or_else(|| "?".to_string(), |v| view::value_text(w.ty, v)),
                    new.map_or_else(|| "?".to_string(), |v| view::value_text(w.ty, v)),
                    self.history.len(),
                    who.join(", ")
                );
            }
        }
        self.last_events = events;
        (!out.is_empty()).then_some(out)
    }

    // ----- inspection -------------------------------------------------------------------------

    /// A value of `ty` at `address` in `space` (`block` selects the shared memory).
    fn read_value(&self, space: MemSpace, address: u64, ty: ScalarType, block: u32) -> Option<u64> {
        view::read(
            &self.machine,
            space,
            address,
            semantics::machine::type_size(ty),
            block,
        )
    }

    /// A launch buffer or module variable by name.
    fn named_region(&self, name: &str) -> Result<view::Region, String> {
        if let Some(i) = self.launch.buffers.iter().position(|b| b.name == name) {
            let b = &self.launch.buffers[i];
            let size = semantics::machine::type_size(b.elem).max(1) as u64;
            return Ok(view::Region {
                space: MemSpace::Global,
                address: self.machine.buffer_address(i).unwrap_or(0),
                ty: b.elem,
                len: b.bytes.len() as u64 / size,
            });
        }
        if let Some(v) = self.program.variables.iter().find(|v| v.name == name) {
            use semantics::program::Space;
            let space = match v.space {
                Space::Global => MemSpace::Global,
                Space::Shared => MemSpace::Shared,
                Space::Const => MemSpace::Const,
                _ => {
                    return Err(format!(
                        "`{name}` is not in .global, .shared or .const memory"
                    ));
                }
            };
            let size = semantics::machine::type_size(v.ty).max(1) as u64;
            return Ok(view::Region {
                space,
                address: v.address,
                ty: v.ty,
                len: (v.size / size).max(1),
            });
        }
        let mut names: Vec<&str> = self
            .launch
            .buffers
            .iter()
            .map(|b| b.name.as_str())
            .collect();
        names.extend(self.program.variables.iter().map(|v| v.name.as_str()));
        Err(format!(
            "no buffer or variable `{name}`; there are: {}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ))
    }

    fn cmd_mem(&self, t: &MemTarget) -> Result<String, String> {
        let (region, start, end, block, title) = match t {
            MemTarget::Named { name, start, end } => {
                let r = self.named_region(name)?;
                let start = start.unwrap_or(0);
                let end = end.unwrap_or(r.len);
                if end > r.len || start >= r.len.max(1) {
                    return Err(format!(
                        "`{name}` has {} elements (0 to {}): {start}..{end} is out of range",
                        r.len,
                        r.len.saturating_sub(1)
                    ));
                }
                let title = format!("{name}: {}[{}]", r.ty.directive(), r.len);
                (r, start, end, self.focus.block, title)
            }
            MemTarget::Shared {
                address,
                count,
                ty,
                block,
            } => {
                let ty = ty.unwrap_or(ScalarType::U32);
                let b = block.unwrap_or(self.focus.block);
                let r = view::Region {
                    space: MemSpace::Shared,
                    address: *address,
                    ty,
                    len: *count,
                };
                (
                    r,
                    0,
                    *count,
                    b,
                    format!(
                        ".shared of block {b} at {address:#x}: {} x {count}",
                        ty.directive()
                    ),
                )
            }
            MemTarget::Global { address, count, ty } => {
                let ty = ty.unwrap_or(ScalarType::U32);
                let r = view::Region {
                    space: MemSpace::Global,
                    address: *address,
                    ty,
                    len: *count,
                };
                (
                    r,
                    0,
                    *count,
                    0,
                    format!(".global at {address:#x}: {} x {count}", ty.directive()),
                )
            }
        };
        if end - start > 4096 {
            return Err("at most 4096 elements at a time".to_string());
        }
        let size = semantics::machine::type_size(region.ty) as u64;
        let mut values = Vec::new();
        for i in start..end {
            let a = region.address + i * size;
            match view::read(&self.machine, region.space, a, size as u32, block) {
                Some(v) => values.push(view::value_text(region.ty, v)),
                None => {
                    return Err(format!(
                        "{} address {a:#x} is not mapped{}",
                        memory_space_name(region.space),
                        if region.space == MemSpace::Shared {
                            format!(" in block {block} (is the block resident? `blocks`)")
                        } else {
                            String::new()
                        }
                    ));
                }
            }
        }
        let mut s = format!("{title}\n");
        s.push_str(&view::rows(&values, start));
        Ok(s)
    }

    /// The function a lane is in, from its call depth (registers are per function).
    fn lane_function(
        &self,
        b: u32,
        w: u32,
        lane: u32,
    ) -> Result<&semantics::program::Function, String> {
        let v = self
            .machine
            .warp_view(b, w)
            .ok_or_else(|| self.why_not(b, w))?;
        let pc = if self.config.warp_model == semantics::machine::WarpModel::SimtStack {
            v.pc
        } else {
            *v.lane_pcs.get(lane as usize).unwrap_or(&v.pc)
        };
        let depth = *v.depth.get(lane as usize).unwrap_or(&0);
        let active_depth = self.call_depth(b, w);
        let f = if depth == 0 {
            self.program
                .functions
                .iter()
                .position(|f| f.name == self.kernel_name())
                .map(|i| semantics::program::FuncId(i as u32))
        } else if depth == active_depth
            || self.config.warp_model != semantics::machine::WarpModel::SimtStack
        {
            self.program.function_of(pc)
        } else {
            None
        };
        f.map(|f| self.program.function(f)).ok_or_else(|| {
            format!("lane {lane} waits in a caller's frame (call depth {depth}); its registers show when it is active again")
        })
    }

    /// A register's type and raw bits in one lane.
    fn register_value(
        &self,
        name: &str,
        b: u32,
        w: u32,
        lane: u32,
    ) -> Result<(ScalarType, u64), String> {
        if lane >= self.lanes_in_warp(w) {
            return Err(format!(
                "warp {w} has {} lane{} (0 to {})",
                self.lanes_in_warp(w),
                plural(self.lanes_in_warp(w) as u64),
                self.lanes_in_warp(w).saturating_sub(1)
            ));
        }
        let f = self.lane_function(b, w, lane)?;
        let Some(i) = f.registers.iter().position(|r| r.name == name) else {
            let mut near: Vec<&str> = f.registers.iter().map(|r| r.name.as_str()).collect();
            near.truncate(12);
            return Err(format!(
                "no register `{name}` in `{}`; its registers include {}",
                f.name,
                near.join(", ")
            ));
        };
        let ty = f.registers[i].ty;
        let bits = self
            .machine
            .register(b, w, lane, semantics::program::RegId(i as u16))
            .ok_or_else(|| format!("register `{name}` of lane {lane} is not readable now"))?;
        Ok((ty, bits))
    }

    fn cmd_print(
        &self,
        reg: &str,
        at: ThreadSel,
        format: Option<command::Radix>,
    ) -> Result<String, String> {
        let b = at.block.unwrap_or(self.focus.block);
        let w = at.warp.unwrap_or(self.focus.warp);
        let l = at.lane.unwrap_or(self.focus.lane);
        if !self
            .program
            .functions
            .iter()
            .any(|f| f.registers.iter().any(|r| r.name == reg))
        {
            return Err(format!(
                "no register `{reg}` in this program (`regs` lists the focused warp's registers)"
            ));
        }
        if b >= self.total_blocks() {
            return Err(format!(
                "there is no block {b} (the grid has {})",
                self.total_blocks()
            ));
        }
        if w >= self.warps_per_block() {
            return Err(format!(
                "there is no warp {w} (blocks have {})",
                self.warps_per_block()
            ));
        }
        let (ty, bits) = self.register_value(reg, b, w, l)?;
        let active = self
            .machine
            .warp_view(b, w)
            .is_some_and(|v| v.active >> l & 1 == 1);
        let value = match format {
            Some(radix) => radix.text(bits, semantics::machine::type_size(ty)),
            None => view::value_text(ty, bits),
        };
        Ok(format!(
            "{reg} = {value} ({}, block {b} warp {w} lane {l}{})\n",
            ty.directive(),
            if active { "" } else { ", inactive" }
        ))
    }

    fn cmd_regs(&self) -> Result<String, String> {
        let (b, w) = (self.focus.block, self.focus.warp);
        let v = self
            .machine
            .warp_view(b, w)
            .ok_or_else(|| self.why_not(b, w))?;
        let lanes = self.lanes_in_warp(w);
        let mut columns: Vec<(String, Vec<String>)> = Vec::new();
        let mut function_name = String::new();
        let mut per_lane: Vec<Option<&semantics::program::Function>> = Vec::new();
        for l in 0..lanes {
            per_lane.push(self.lane_function(b, w, l).ok());
        }
        if let Some(f) = per_lane.iter().flatten().next() {
            function_name = f.name.clone();
            for (i, r) in f.registers.iter().enumerate() {
                let vals = (0..lanes)
                    .map(|l| match per_lane[l as usize] {
                        Some(g) if g.name == f.name => self
                            .machine
                            .register(b, w, l, semantics::program::RegId(i as u16))
                            .map_or_else(|| "?".to_string(), |x| view::value_text(r.ty, x)),
                        _ => "·".to_string(),
                    })
                    .collect();
                columns.push((r.name.to_string(), vals));
            }
        }
        let mut s = format!(
            "registers of block {b} warp {w} in `{function_name}` (lane marks: * active, b/r/x disabled by break/return/exit)\n"
        );
        s.push_str(&view::lane_table(&columns, lanes, &v));
        Ok(s)
    }

    /// `pc 19 (line 52, DIVERGE+0): mul.lo.u32 %c, %a, %b;`
    fn pc_text(&self, pc: u32) -> String {
        view::pc_text(&self.program, self.options.source.as_deref(), pc)
    }

    fn cmd_where(&self) -> Result<String, String> {
        let (b, w) = (self.focus.block, self.focus.warp);
        let v = self
            .machine
            .warp_view(b, w)
            .ok_or_else(|| self.why_not(b, w))?;
        let mut s = format!(
            "block {b} warp {w} lane {} at step {}\n",
            self.focus.lane,
            self.history.len()
        );
        if self.config.warp_model == semantics::machine::WarpModel::SimtStack {
            let _ = writeln!(s, "  {}", self.pc_text(v.pc));
            if let Some(src) = view::source_text(&self.program, v.pc) {
                let _ = writeln!(s, "  source {src}");
            }
        } else {
            let mut groups: BTreeMap<u32, u64> = BTreeMap::new();
            for l in 0..self.lanes_in_warp(w) {
                if v.exited >> l & 1 == 0 {
                    *groups.entry(v.lane_pcs[l as usize]).or_default() |= 1 << l;
                }
            }
            for (pc, m) in groups {
                let _ = writeln!(s, "  lanes {}: {}", view::bits_text(m), self.pc_text(pc));
            }
        }
        Ok(s)
    }

    /// A warp's SIMT state: one thesis-style row plus, with `lanes`, the lanes at a stop.
    fn warp_summary(&self, b: u32, w: u32, lanes: Option<u64>) -> String {
        let Some(v) = self.machine.warp_view(b, w) else {
            return format!("  {}\n", self.why_not(b, w));
        };
        let n = self.lanes_in_warp(w);
        let ws = self.warp_size();
        let mut s = format!("  {}\n", self.pc_text(v.pc));
        if let Some(src) = view::source_text(&self.program, v.pc) {
            let _ = writeln!(s, "  source {src}");
        }
        if self.config.warp_model == semantics::machine::WarpModel::SimtStack {
            let real = lane_mask(n);
            let inactive = real & !v.active & !v.exited;
            let _ = writeln!(
                s,
                "  α {}  δ {}  τ {}",
                semantics::machine::render::mask_string(v.active, ws),
                semantics::machine::render::disable_string(&v.disabled, ws),
                view::stack_text(&self.program, &v.stack, ws)
            );
            let _ = write!(s, "  active lanes {}", view::bits_text(v.active & real));
            if inactive != 0 {
                let _ = write!(s, "; inactive lanes {}", view::bits_text(inactive));
                if let Some(t) = v.stack.iter().find(|t| t.mask & inactive != 0) {
                    let _ = write!(
                        s,
                        " (they resume from the {} token at {})",
                        t.kind.name(),
                        view::line_of(&self.program, t.pc)
                    );
                }
            }
            if v.exited & real != 0 {
                let _ = write!(s, "; exited lanes {}", view::bits_text(v.exited & real));
            }
            s.push('\n');
        }
        if let Some(m) = lanes
            && m != v.active
        {
            let _ = writeln!(s, "  condition holds in lanes {}", view::bits_text(m));
        }
        s
    }

    fn cmd_stack(&self) -> Result<String, String> {
        let (b, w) = (self.focus.block, self.focus.warp);
        let v = self
            .machine
            .warp_view(b, w)
            .ok_or_else(|| self.why_not(b, w))?;
        if self.config.warp_model != semantics::machine::WarpModel::SimtStack {
            return Ok(format!(
                "block {b} warp {w}: the {} model has no token stack; `where` shows the lanes' pcs\n",
                view::model_name(self.config.warp_model)
            ));
        }
        let ws = self.warp_size();
        let row = semantics::machine::render::StackRow {
            pc: v.pc,
            active: v.active,
            disabled: v.disabled,
            stack: v.stack.clone(),
        };
        let program = &self.program;
        let label = |pc: u32| Some(view::line_label(program, pc));
        let mut s = format!(
            "block {b} warp {w}, next instruction {}\n",
            self.pc_text(v.pc)
        );
        s.push_str(&semantics::machine::render::stack_table(
            &[row],
            ws,
            true,
            &label,
        ));
        if v.waiting != 0 {
            let _ = writeln!(
                s,
                "waiting at barrier {}",
                view::bits_text(v.waiting as u64)
            );
        }
        Ok(s)
    }

    fn cmd_stack_table(&self, rows: Option<u64>) -> Result<String, String> {
        let (b, w) = (self.focus.block, self.focus.warp);
        if self.config.warp_model != semantics::machine::WarpModel::SimtStack {
            return Err(format!(
                "the {} model has no token stack",
                view::model_name(self.config.warp_model)
            ));
        }
        // Replay (at most the last 100000 steps) to collect the warp's rows.
        let now = self.history.len();
        let from = now.saturating_sub(100_000);
        let mut m = self
            .history
            .state_at(from, None)
            .map_err(|e| format!("{INTERNAL}{e}"))?;
        let mut events = Vec::new();
        for c in &self.history.choices()[from as usize..] {
            m.step_observed(c, &mut events)
                .map_err(|e| format!("{INTERNAL}{e}"))?;
            events.retain(
                |e| matches!(e, Event::Executed { block, warp, .. } if *block == b && *warp == w),
            );
        }
        let mut all = semantics::machine::render::stack_rows(&events, b, w);
        if let Some(n) = rows {
            let skip = all.len().saturating_sub(n as usize);
            all.drain(..skip);
        }
        let program = &self.program;
        let label = |pc: u32| Some(view::line_label(program, pc));
        let mut s = format!(
            "block {b} warp {w}: per step the PTX line executed, then α, δ and τ after it (tokens name PTX lines)\n"
        );
        s.push_str(&semantics::machine::render::stack_table(
            &all,
            self.warp_size(),
            true,
            &label,
        ));
        Ok(s)
    }

    fn cmd_warps(&self) -> String {
        let ws = self.warp_size();
        let enabled: Vec<(u32, u32)> = self
            .machine
            .enabled()
            .iter()
            .filter_map(view::choice_warp)
            .collect();
        let mut rows: Vec<[String; 7]> = vec![[
            "warp".into(),
            "pc".into(),
            "line".into(),
            "α".into(),
            "δ".into(),
            "|τ|".into(),
            "state".into(),
        ]];
        for b in 0..self.total_blocks() {
            for w in 0..self.warps_per_block() {
                let Some(v) = self.machine.warp_view(b, w) else {
                    continue;
                };
                let state = if v.completed {
                    "completed".to_string()
                } else if v.waiting != 0 {
                    format!("waits at barrier {}", view::bits_text(v.waiting as u64))
                } else if enabled.contains(&(b, w)) {
                    "enabled".to_string()
                } else {
                    "blocked".to_string()
                };
                let mark = if (b, w) == (self.focus.block, self.focus.warp) {
                    "→"
                } else {
                    " "
                };
                rows.push([
                    format!("{mark}{b}.{w}"),
                    v.pc.to_string(),
                    view::line_of(&self.program, v.pc),
                    semantics::machine::render::mask_string(v.active, ws),
                    semantics::machine::render::disable_string(&v.disabled, ws),
                    v.stack.len().to_string(),
                    state,
                ]);
            }
        }
        if rows.len() == 1 {
            return "no resident warps\n".to_string();
        }
        view::table(&rows)
    }

    /// Issued blocks, from the log: blocks are issued in linear order (deviation D8).
    fn issued(&self) -> BTreeMap<u32, u32> {
        self.history
            .choices()
            .iter()
            .filter_map(|c| match c {
                Choice::Issue { block, sm, .. } => Some((*block, *sm)),
                _ => None,
            })
            .collect()
    }

    fn cmd_blocks(&self) -> String {
        let issued = self.issued();
        let mut s = format!(
            "{} block{} in the grid\n",
            self.total_blocks(),
            plural(self.total_blocks() as u64)
        );
        let mut unscheduled = Vec::new();
        for b in 0..self.total_blocks() {
            match issued.get(&b) {
                None => unscheduled.push(b),
                Some(sm) => {
                    let resident = self.machine.warp_view(b, 0).is_some();
                    if resident {
                        let done = (0..self.warps_per_block())
                            .filter(|w| self.machine.warp_view(b, *w).is_some_and(|v| v.completed))
                            .count();
                        let _ = writeln!(
                            s,
                            "  block {b}: resident on SM {sm}, {done} of {} warps completed",
                            self.warps_per_block()
                        );
                    } else {
                        let _ = writeln!(s, "  block {b}: completed (ran on SM {sm})");
                    }
                }
            }
        }
        if !unscheduled.is_empty() {
            let _ = writeln!(s, "  not issued yet: {}", ranges(&unscheduled));
        }
        s
    }

    /// `caches`: per-SM L1 lines, L2 lines, in-flight memory programs and bank locks (cached
    /// memory); thesis 4.2-4.6.
    fn cmd_caches(&self) -> String {
        let Some(c) = self.machine.cache() else {
            return "caches: this session runs flat memory (sequentially consistent, no caches); \
                    start it with `--memory cached` for thesis chapter 4's L1/L2 and memory programs\n"
                .to_string();
        };
        let cfg = *c.config();
        let mut s = String::new();
        let (l1_counts, l2_count) = c.line_count();
        let line = |s: &mut String, l: &memory_model::cached::LineView| {
            let words: Vec<String> = l
                .bytes
                .chunks(4)
                .enumerate()
                .map(|(i, w)| {
                    let m = (l.valid >> (i * 4)) & 0xF;
                    if m == 0xF {
                        let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                        let star = if (l.dirty >> (i * 4)) & 0xF != 0 {
                            "*"
                        } else {
                            ""
                        };
                        format!("{v:#010x}{star}")
                    } else if m == 0 {
                        "----------".to_string()
                    } else {
                        "??????????".to_string()
                    }
                })
                .collect();
            let owner = l
                .who
                .map(|w| format!(" (block {} thread {})", w.block, w.thread))
                .unwrap_or_default();
            let mut flags = Vec::new();
            if !l.pins.is_empty() {
                flags.push(format!("pinned by {:?}", l.pins));
            }
            if l.fill_pending {
                flags.push("fill pending".to_string());
            }
            if l.doomed {
                flags.push("doomed".to_string());
            }
            if l.class == memory_model::cached::EvClass::First {
                flags.push("evict-first".to_string());
            }
            let _ = writeln!(
                s,
                "  {} {:#x}{owner}: {}{}",
                memory_model::space_name(l.space),
                l.addr,
                words.join(" "),
                if flags.is_empty() {
                    String::new()
                } else {
                    format!("  [{}]", flags.join(", "))
                }
            );
        };
        let _ = writeln!(
            s,
            "lines of {} bytes (words little-endian, * dirty, ---------- not valid); silent rules: {:?}",
            cfg.line_bytes, cfg.silent
        );
        for (sm, n) in l1_counts.iter().enumerate() {
            let lines = c.l1_lines(sm as u32);
            if lines.is_empty() {
                continue;
            }
            let _ = writeln!(s, "L1 of SM {sm} ({n} of {} lines):", cfg.l1_lines);
            for l in &lines {
                line(&mut s, l);
            }
        }
        let _ = writeln!(s, "L2 ({l2_count} of {} lines):", cfg.l2_lines);
        for l in &c.l2_lines() {
            line(&mut s, l);
        }
        let ops = c.ops();
        if ops.is_empty() {
            let _ = writeln!(s, "no memory operation in flight");
        }
        for op in &ops {
            let r = &op.request;
            let _ = writeln!(
                s,
                "op {}: block {} thread {} on SM {}, {} {:#x} ({} bytes, {:?}){}",
                op.id,
                r.who.block,
                r.who.thread,
                r.sm,
                op.program.unwrap_or("(no program)"),
                r.addr,
                r.size,
                r.order,
                if op.deps.is_empty() {
                    String::new()
                } else {
                    format!(", waits for ops {:?}", op.deps)
                }
            );
            for (i, stm) in op.listing.iter().enumerate() {
                let mark = if i == op.pc { "→" } else { " " };
                let _ = writeln!(s, "   {mark} {stm}");
            }
        }
        for l in c.locks() {
            let _ = writeln!(
                s,
                "bank lock: block {} bank {} held by op {}",
                l.block, l.bank, l.holder
            );
        }
        s
    }

    fn cmd_barriers(&self) -> String {
        let mut s = String::new();
        for b in 0..self.total_blocks() {
            let Some(bars) = self.machine.barrier_views(b) else {
                continue;
            };
            for bar in bars {
                let waiting: Vec<String> = (0..self.warps_per_block())
                    .filter(|w| {
                        self.machine
                            .warp_view(b, *w)
                            .is_some_and(|v| v.waiting >> bar.index & 1 == 1)
                    })
                    .map(|w| w.to_string())
                    .collect();
                let _ = writeln!(
                    s,
                    "block {b} barrier {}: {} of {} threads arrived{}{}; warps waiting: {}",
                    bar.index,
                    bar.arrived,
                    bar.expected,
                    bar.reduction
                        .map(|r| format!(", bar.red.{r}"))
                        .unwrap_or_default(),
                    if bar.arrived >= bar.expected {
                        ", ready to end (endBar)"
                    } else {
                        ""
                    },
                    if waiting.is_empty() {
                        "none".to_string()
                    } else {
                        waiting.join(", ")
                    }
                );
            }
        }
        if s.is_empty() {
            s.push_str("no barrier is in use\n");
        }
        s
    }

    fn choice_text(&self, c: &Choice) -> String {
        match c {
            Choice::Issue { block, sm, .. } => {
                format!("issue block {block} on SM {sm} (issueBlocks)")
            }
            Choice::EndBarrier { block, barrier } => {
                format!("end barrier {barrier} of block {block} (endBar)")
            }
            Choice::Warp { block, warp }
            | Choice::Target { block, warp, .. }
            | Choice::Lanes { block, warp, .. } => {
                let at = self
                    .choice_pc(c)
                    .map(|(_, _, pc, _)| self.pc_text(pc))
                    .unwrap_or_default();
                match c {
                    Choice::Target { k, .. } => {
                        format!("warp {block}.{warp} target group {k}: {at}")
                    }
                    Choice::Lanes { mask, .. } => {
                        format!("warp {block}.{warp} lanes {}: {at}", view::bits_text(*mask))
                    }
                    _ => format!("warp {block}.{warp}: {at}"),
                }
            }
            Choice::Mem(_) | Choice::Pick { .. } => c.to_string(),
        }
    }

    /// One line for the last step: what it executed and the warp's state after it.
    fn step_line(&self) -> String {
        let step = self.history.len();
        let ws = self.warp_size();
        let mut s = String::new();
        for e in &self.last_events {
            match e {
                Event::Executed {
                    block,
                    warp,
                    pc,
                    lanes,
                    active,
                    disabled,
                    stack,
                    derivation,
                    ..
                } => {
                    let _ = writeln!(s, "[{step}] warp {block}.{warp} {}", self.pc_text(*pc));
                    if self.config.warp_model == semantics::machine::WarpModel::SimtStack {
                        let _ = writeln!(
                            s,
                            "      lanes {}  →  α {}  δ {}  τ {}   ({derivation})",
                            view::bits_text(*lanes),
                            semantics::machine::render::mask_string(*active, ws),
                            semantics::machine::render::disable_string(disabled, ws),
                            view::stack_text(&self.program, stack, ws)
                        );
                    } else {
                        let _ = writeln!(
                            s,
                            "      lanes {}   ({derivation})",
                            view::bits_text(*lanes)
                        );
                    }
                }
                Event::BlockIssued { block, sm, .. } => {
                    let _ = writeln!(s, "[{step}] block {block} issued on SM {sm}");
                }
                Event::MemoryStep {
                    choice,
                    operations,
                    delivered,
                    derivation,
                } => {
                    let _ = writeln!(s, "[{step}] {choice}: {operations}   ({derivation})");
                    if let Some((block, warp, lane, value)) = delivered {
                        let _ = writeln!(
                            s,
                            "      delivered {value:#x} to warp {block}.{warp} lane {lane}"
                        );
                    }
                }
                Event::BarrierCompleted { block, barrier, .. } => {
                    let _ = writeln!(
                        s,
                        "[{step}] barrier {barrier} of block {block} completed (endBar)"
                    );
                }
                Event::BarrierArrived {
                    block,
                    warp,
                    barrier,
                    arrived,
                    expected,
                    ..
                } => {
                    let _ = writeln!(
                        s,
                        "      warp {block}.{warp} arrived at barrier {barrier}: {arrived} of {expected} threads"
                    );
                }
                Event::WarpCompleted { block, warp, .. } => {
                    let _ = writeln!(s, "      warp {block}.{warp} completed");
                }
                Event::BlockCompleted { block, .. } => {
                    let _ = writeln!(s, "      block {block} completed");
                }
                Event::Memory { .. } | Event::WarpMemory { .. } => {}
            }
        }
        if s.is_empty() && step > 0 {
            let _ = writeln!(
                s,
                "[{step}] {}",
                self.history
                    .choices()
                    .last()
                    .map(|c| c.to_string())
                    .unwrap_or_default()
            );
        }
        s
    }

    fn cmd_rule(&self) -> String {
        if self.last_events.is_empty() {
            return "no step taken yet\n".to_string();
        }
        let mut seen: Vec<&traces::Derivation> = Vec::new();
        let mut s = format!(
            "step {}: {}\n",
            self.history.len(),
            self.history
                .choices()
                .last()
                .map(|c| c.to_string())
                .unwrap_or_default()
        );
        let mut rules: Vec<traces::Rule> = Vec::new();
        for e in &self.last_events {
            let d = e.derivation();
            if seen.contains(&d) {
                continue;
            }
            seen.push(d);
            let _ = writeln!(s, "derivation: {d}");
            for r in &d.0 {
                if !rules.contains(r) {
                    rules.push(*r);
                }
            }
        }
        for r in rules {
            s.push('\n');
            s.push_str(&semantics::rules::doc(r).render());
        }
        s
    }

    fn cmd_trace(&mut self, op: TraceOp) -> Result<String, String> {
        match op {
            TraceOp::Save(path) => {
                let t = TraceRecord {
                    program_hash: self.program.hash,
                    choices: self.history.choices().to_vec(),
                };
                self.host.save_trace(&path, &t)?;
                Ok(format!(
                    "saved {} choice{} to {path}\n",
                    t.choices.len(),
                    plural(t.choices.len() as u64)
                ))
            }
            TraceOp::Load(path) => {
                let t = self.host.load_trace(&path)?;
                if t.program_hash != self.program.hash {
                    return Err(format!(
                        "{path} was recorded for another program (hash {:#x}, this one {:#x})",
                        t.program_hash, self.program.hash
                    ));
                }
                // Replay on a copy: a trace that diverges leaves the session as it was.
                let mut m = self.initial.clone();
                let mut h =
                    History::new(&m, self.options.snapshot_every, self.options.max_snapshots);
                let mut note = String::new();
                for (i, c) in t.choices.iter().enumerate() {
                    if !m.enabled().contains(c) {
                        let _ = writeln!(
                            note,
                            "choice {i} (`{c}`) is not enabled there: stopped at step {i}"
                        );
                        break;
                    }
                    m.step(c).map_err(|e| format!("{INTERNAL}{e}"))?;
                    h.record(*c, &m);
                }
                let n = h.len();
                self.machine = m;
                self.history = h;
                self.last_events.clear();
                self.resume_from = None;
                if n > 0 {
                    let mut events = Vec::new();
                    if let Ok(m) = self.history.state_at(n, Some(&mut events)) {
                        self.machine = m;
                        self.last_events = events;
                    }
                }
                self.refresh_watched();
                let mut s = format!(
                    "replayed {n} of {} choices from {path}; now at step {n}\n",
                    t.choices.len()
                );
                s.push_str(&note);
                s.push_str(&self.step_line());
                Ok(s)
            }
        }
    }

    fn cmd_status(&self) -> String {
        let state = match self.machine.termination() {
            Some(t) => format!("ended: {t}"),
            None => format!(
                "running, {} choice{} enabled",
                self.machine.enabled().len(),
                plural(self.machine.enabled().len() as u64)
            ),
        };
        format!(
            "step {}; {state}\npolicy {}; focus block {} warp {} lane {}; {} snapshot{} for `back`\n",
            self.history.len(),
            self.options.policy.text(),
            self.focus.block,
            self.focus.warp,
            self.focus.lane,
            self.history.snapshot_count(),
            plural(self.history.snapshot_count() as u64)
        )
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn lane_mask(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

fn memory_space_name(s: MemSpace) -> &'static str {
    match s {
        MemSpace::Global => ".global",
        MemSpace::Shared => ".shared",
        MemSpace::Local => ".local",
        MemSpace::Const => ".const",
        MemSpace::Param => ".param",
    }
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
        let user = Reply::error("no breakpoint 3".to_string());
        assert_eq!(user.outcome, Outcome::Error);
        assert_eq!(user.text, "error: no breakpoint 3\n");
        let bug = Reply::error(format!("{INTERNAL}the replay diverged: step 4"));
        assert_eq!(bug.outcome, Outcome::Internal);
        assert!(
            bug.text
                .starts_with("error: internal error: the replay diverged: step 4\n")
        );
        assert!(bug.text.contains("this is a bug in cudasem"));
    }
}
