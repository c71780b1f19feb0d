//! The layered CUDA machine (thesis chapter 5): device -> context -> grid -> block -> warp -> thread.
//!
//! This file is the machine's public face: what a launch is, how the machine is configured, what a
//! run ends in. One transition is one [`traces::Choice`] from [`Machine::enabled`]; `run` loops
//! (schedulers) live in the `scheduler` crate.

pub(crate) mod block;
mod context;
mod device;
mod enabled;
pub(crate) mod exec;
mod fast;
mod footprint;
pub mod future;
mod grid;
mod invariants;
mod launch;
mod memory_ops;
mod pick;
mod private;
mod regs;
pub mod render;
mod settled;
mod size;
pub mod state_hash;
pub(crate) mod thread;
mod unchanged;
pub(crate) mod warp;

pub use footprint::{Footprint, FootprintKind};
pub use future::Futures;
pub use grid::{GridPhase, GridShape, GridView, GridWait, MAX_ACTIVE_GRIDS, NotResident, SmFull};

/// How much of a warp's state an observed step's [`Event::Executed`] carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EventDetail {
    /// Everything: what the renderers draw (`run --show stack`, perfetto, the debugger).
    #[default]
    Full,
    /// What [`crate::monitors`] read: the SIMT stack (`stack`) only on the `Executed` event of a
    /// barrier instruction (the barrier-divergence report names the token a missing lane waits
    /// in), empty elsewhere; no derivations (empty); and the accesses of a whole-warp scalar
    /// `ld`/`st` as one [`traces::Event::WarpMemory`] (addresses, no values) instead of one
    /// `Memory` event per lane. Copying the stack out on every warp step, building derivations
    /// and an event per lane are most of what recording costs, and the monitors need none of it.
    Monitors,
}
pub use thread::{type_signed, type_size};

pub use crate::program::FinalRegisters;
use crate::program::{FuncId, Pc, Program};
use memory_model::cached::{CacheConfig, Cached};
use memory_model::{Flat, Memory, MemoryEnv};
use ptx_parser::ScalarType;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use traces::{Choice, Event};

/// A kernel launch, resolved from a launch file or flags (the CLI reads files; this is plain data).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchConfig {
    /// Entry name; `None` when the module has exactly one entry.
    pub kernel: Option<String>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory (`.extern .shared x[]`).
    pub dynamic_shared_bytes: u32,
    /// Global-memory buffers, allocated in this order before the launch.
    pub buffers: Vec<BufferSpec>,
    /// One value per kernel parameter, in order.
    pub args: Vec<ArgValue>,
    /// Initial values overriding module variables' initializers (`globals: { "lock": 1 }`),
    /// written little-endian with the variable's element size.
    pub globals: Vec<(String, u64)>,
    /// Result slots of body-less functions (`f.extern`, see [`crate::load::extern_slot_name`])
    /// whose calls return one of several values: each lane's call takes one by a
    /// [`Choice::Pick`] (the values' bits, in order; deviation D28). A slot not named here
    /// holds the call's one fixed value (`globals`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extern_values: Vec<(String, Vec<u64>)>,
}

impl LaunchConfig {
    /// A one-dimensional launch of entry `kernel`: `grid` blocks of `block` threads, with no
    /// dynamic shared memory, buffers, arguments, globals or extern values (a kernel that takes
    /// no parameters: a translated litmus or AXB test, a thesis listing).
    pub fn kernel_1d(kernel: impl Into<String>, grid: u32, block: u32) -> LaunchConfig {
        LaunchConfig {
            kernel: Some(kernel.into()),
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            dynamic_shared_bytes: 0,
            buffers: Vec::new(),
            args: Vec::new(),
            globals: Vec::new(),
            extern_values: Vec::new(),
        }
    }
}

/// One launch of a program of several (thesis 5.7.3 (start)): a kernel, its grid and block,
/// its arguments, and the stream it is launched in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GridLaunch {
    /// Entry name; `None` when the module has exactly one entry.
    pub kernel: Option<String>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory (`.extern .shared x[]`).
    pub dynamic_shared_bytes: u32,
    /// One value per kernel parameter, in order ([`ArgValue::Buffer`] names the program's
    /// buffers).
    pub args: Vec<ArgValue>,
    /// Launches of one stream run one after the other, each starting when the previous one
    /// has completed; launches of different streams may run concurrently.
    pub stream: u32,
}

impl GridLaunch {
    /// The grid of a one-kernel launch, in stream `stream`.
    pub fn of(launch: &LaunchConfig, stream: u32) -> GridLaunch {
        GridLaunch {
            kernel: launch.kernel.clone(),
            grid: launch.grid,
            block: launch.block,
            dynamic_shared_bytes: launch.dynamic_shared_bytes,
            args: launch.args.clone(),
            stream,
        }
    }
}

/// A program of one or more launches in one context: the buffers, module-variable overrides
/// and body-less functions' values every launch shares, and the launches in issue order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProgramLaunch {
    pub buffers: Vec<BufferSpec>,
    pub globals: Vec<(String, u64)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extern_values: Vec<(String, Vec<u64>)>,
    pub launches: Vec<GridLaunch>,
}

impl ProgramLaunch {
    /// The program of one launch (stream 0).
    pub fn single(launch: &LaunchConfig) -> ProgramLaunch {
        ProgramLaunch {
            buffers: launch.buffers.clone(),
            globals: launch.globals.clone(),
            extern_values: launch.extern_values.clone(),
            launches: vec![GridLaunch::of(launch, 0)],
        }
    }

    /// The program of several resolved launches, `(stream, launch)` in issue order, which
    /// share one program's buffers, globals and extern values (taken from the first; a launch
    /// file's `launches:` resolve to exactly that). `None` when there is no launch.
    pub fn from_launches<'a>(
        launches: impl IntoIterator<Item = (u32, &'a LaunchConfig)>,
    ) -> Option<ProgramLaunch> {
        let mut it = launches.into_iter();
        let (stream, first) = it.next()?;
        let mut p = ProgramLaunch::single(first);
        p.launches[0].stream = stream;
        p.launches
            .extend(it.map(|(stream, l)| GridLaunch::of(l, stream)));
        Some(p)
    }
}

/// A named global-memory buffer with its initial contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferSpec {
    pub name: String,
    pub elem: ScalarType,
    /// Initial bytes (little-endian elements); its length is the buffer's size.
    pub bytes: Vec<u8>,
}

/// A kernel argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ArgValue {
    /// The global address of `buffers[i]`.
    Buffer(usize),
    /// A scalar's bits in the low bits, written with the parameter's size.
    Scalar { ty: ScalarType, bits: u64 },
    /// A null pointer (ZLUDA warp tests pass 0 for the missing input buffer).
    Null,
    /// A parameter passed by value as bytes (a struct or array, `.param .align A .b8 p[N]`):
    /// exactly the parameter's N bytes; `pointers` patches the global address of
    /// `buffers[index]` (8 bytes, little-endian) in at each byte `offset`.
    Bytes {
        bytes: Vec<u8>,
        pointers: Vec<(u32, usize)>,
    },
}

/// How a warp executes divergent code (`--warp-model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum WarpModel {
    /// The thesis's branching algorithm (5.4.1): active/disable masks and a token stack.
    #[default]
    SimtStack,
    /// Independent thread scheduling (Volta+): per-lane pcs; the scheduler picks a converged group.
    Its,
    /// Every thread alone, interleaved (seed 001's reference semantics).
    Threads,
}

impl WarpModel {
    /// Whether the lanes of a warp step on their own (ITS and threads: per-lane pcs, barriers
    /// count threads) rather than as one (the SIMT stack: one pc, barriers count warps).
    pub fn per_thread(self) -> bool {
        !matches!(self, WarpModel::SimtStack)
    }
}

/// Which memory system the device links to (`--memory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum MemoryKind {
    /// Sequentially consistent, an access completes inside its warp step.
    #[default]
    Flat,
    /// Thesis chapter 4: per-SM L1s, one L2, DRAM; `.global` and `.shared` accesses are memory
    /// programs in flight that run micro steps chosen by the scheduler (`Choice::Mem`).
    Cached,
}

/// The device's shape (thesis Fig. 3.2 constants); `--device FILE.ron` or flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeviceConfig {
    pub num_sms: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_sm: u32,
    pub max_warps_per_sm: u32,
    pub shared_mem_per_sm: u32,
    pub max_threads_per_block: u32,
    /// 32 on every NVIDIA GPU; smaller values (2, 3, 4) reproduce the thesis's figures.
    pub warp_size: u32,
}

/// Everything that configures a machine besides the program and the launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MachineConfig {
    pub warp_model: WarpModel,
    pub memory: MemoryKind,
    /// The caches' shape under [`MemoryKind::Cached`] (its `num_sms` follows `device`).
    pub cache: CacheConfig,
    pub device: DeviceConfig,
    /// Hardware behaviour: a warp that exits counts as arrived at every barrier of its block.
    /// The thesis's model does not do this (digest T20); off by default.
    pub exited_warps_arrive: bool,
    /// Bytes of `.local` memory per thread (frames of the call stack; beyond it a call or an
    /// access is an error). Default 64 KiB (the thesis's GTX 480 has 512 KiB).
    pub local_bytes_per_thread: u32,
    /// Check the thesis's safety invariants (chapter 6, digest §13) after every SIMT-stack step.
    /// Always on in debug builds.
    pub check_invariants: bool,
}

impl Default for MachineConfig {
    fn default() -> Self {
        MachineConfig {
            warp_model: WarpModel::default(),
            memory: MemoryKind::default(),
            cache: CacheConfig::default(),
            device: DeviceConfig::default(),
            exited_warps_arrive: false,
            local_bytes_per_thread: 64 * 1024,
            check_invariants: false,
        }
    }
}

impl Default for DeviceConfig {
    /// A Volta-class SM's limits (sm_70: 2048 threads, 64 warps, 32 blocks, 96 KiB shared per SM)
    /// on a deliberately small 16-SM device: more SMs add no behaviour, only state.
    fn default() -> Self {
        DeviceConfig {
            num_sms: 16,
            max_blocks_per_sm: 32,
            max_threads_per_sm: 2048,
            max_warps_per_sm: 64,
            shared_mem_per_sm: 96 * 1024,
            max_threads_per_block: 1024,
            warp_size: 32,
        }
    }
}

/// How a run ended. Misbehaviour of the program is a value, never a panic.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Termination {
    /// Every thread exited.
    Completed,
    /// Nothing is enabled but some threads have not exited: who waits where.
    Deadlock(Vec<WaitInfo>),
    /// The step bound was reached first (`--max-steps`).
    StepLimit,
    /// The time bound was reached first (`--timeout`): the run loop was told to stop from
    /// outside (the machine itself never reads the clock).
    TimeLimit,
    /// The program did something undefined or faulted (out-of-bounds, trap, stuck stack...).
    Error(MachineError),
}

/// One group of lanes stuck in a deadlock.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaitInfo {
    /// The grid of the block, only in a program of several grids (one grid is never named).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grid: Option<u32>,
    /// The block's index in its grid (`%ctaid`).
    pub block: [u32; 3],
    pub warp: u32,
    /// Bit i = lane i of the warp.
    pub lanes: u64,
    pub pc: crate::program::Pc,
    pub ptx_line: u32,
    /// `(file, line)` from `.loc`, if the PTX has line info.
    pub source_line: Option<(u32, u32)>,
    /// What it waits for, e.g. "barrier 0 (32 of 64 threads arrived)".
    pub waiting_for: String,
}

/// A fault of the program, located.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineError {
    pub kind: ErrorKind,
    /// The grid of the block, only in a program of several grids (one grid is never named).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grid: Option<u32>,
    /// The block's index in its grid (`%ctaid`).
    pub block: [u32; 3],
    pub thread: [u32; 3],
    pub pc: crate::program::Pc,
    pub ptx_line: u32,
    pub source_line: Option<(u32, u32)>,
    /// The whole story in one sentence: the instruction, the address, the buffer it missed.
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum ErrorKind {
    OutOfBounds,
    Misaligned,
    /// `trap`.
    Trap,
    /// The thesis semantics is stuck (⊥): e.g. `brk` without a break token, a bad branch target.
    Stuck,
    /// Barrier misuse: a thread count that is not a multiple of the warp size, an index >= 16...
    Barrier,
    /// Division of the whole launch's resources failed at run time (e.g. a call stack overflow).
    Resource,
}

impl fmt::Display for MachineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (", self.message)?;
        if let Some(g) = self.grid {
            write!(f, "grid {g} ")?;
        }
        write!(
            f,
            "block ({}, {}, {}), thread ({}, {}, {}), PTX line {})",
            self.block[0],
            self.block[1],
            self.block[2],
            self.thread[0],
            self.thread[1],
            self.thread[2],
            self.ptx_line
        )
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Termination::Completed => f.write_str("completed"),
            Termination::StepLimit => f.write_str("step limit reached"),
            Termination::TimeLimit => f.write_str("time limit reached"),
            Termination::Error(e) => write!(f, "error: {e}"),
            Termination::Deadlock(w) => {
                write!(f, "deadlock:")?;
                for i in w {
                    f.write_str("\n  ")?;
                    if let Some(g) = i.grid {
                        write!(f, "grid {g} ")?;
                    }
                    write!(
                        f,
                        "block ({}, {}, {}) warp {} lanes {:#x} at pc {} (PTX line {}): {}",
                        i.block[0],
                        i.block[1],
                        i.block[2],
                        i.warp,
                        i.lanes,
                        i.pc,
                        i.ptx_line,
                        i.waiting_for
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// The launch cannot start: the message says why (kernel, arguments, resources).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchError {
    pub message: String,
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LaunchError {}

/// A choice that is not enabled (a replay diverged). Program faults are not `StepError`s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepError {
    pub choice: Choice,
    pub message: String,
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "choice `{}` is not enabled: {}",
            self.choice, self.message
        )
    }
}

impl std::error::Error for StepError {}

/// What a launch resolved to (shared by clones of the machine).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LaunchInfo {
    pub entry: FuncId,
    pub entry_start: Pc,
    pub shape: GridShape,
    /// Static + dynamic shared bytes per block.
    pub shared_bytes: u32,
    pub dynamic_shared: u32,
    /// `.local` address of the kernel's frame (after module-scope `.local` variables).
    pub kernel_frame_base: u32,
    /// Global addresses of the launch buffers.
    pub buffers: Vec<u64>,
    /// Where the grid's parameters start in the one `.param` segment (0 for the first grid;
    /// each later grid's follow, so that a `.param` read resolves against the reading
    /// thread's grid).
    pub param_base: u64,
    /// The `.const` result slot of each body-less function whose calls pick from a set of
    /// values, with the values ([`LaunchConfig::extern_values`]).
    pub picks: Vec<(u64, Arc<[u64]>)>,
}

/// Occupancy of one SM (thesis 5.5: resident blocks, threads, warps, shared memory).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Sm {
    pub blocks: u32,
    pub threads: u32,
    pub warps: u32,
    pub shared: u32,
}

/// The CUDA machine of one kernel launch (thesis chapter 5: device, context, grid, blocks, warps,
/// threads) linked to a memory system. Cloning is a snapshot: warps and memory pages are shared
/// copy-on-write.
/// `PartialEq` compares the full state, history counters and caches included (the debugger's
/// `back` is checked against it).
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    program: Arc<Program>,
    /// What every grid of the program shares: the warp size, the buffers' addresses, the
    /// body-less functions' value sets (grid 0's launch; a grid's own shape is in `grids`).
    info: Arc<LaunchInfo>,
    /// What no step changes after launch (the configuration, the launch's caches), shared by
    /// every clone: explorers clone a machine per successor and keep one per unexpanded state.
    fixed: Arc<Fixed>,
    /// The memory environment (thesis chapter 4, 5.8.1): flat, or cached with its own DRAM
    /// (`--memory`). The machine asks it through [`MemoryEnv`], never which one it is.
    mem: Memory,
    /// Resident blocks by linear index.
    blocks: memory_model::BlockTable<block::Block>,
    /// Shared copy-on-write: only issue and completion change occupancy, and explorers clone
    /// the machine for every successor state.
    sms: Arc<[Sm]>,
    /// The program's grids in launch order (one per launch), shared copy-on-write: only issue,
    /// block completion and grid scheduling change them.
    grids: Arc<[grid::Grid]>,
    enabled: enabled::EnabledSet,
    steps: u64,
    /// Σ over warp steps of the lanes that executed (benchmarks' thread-instructions).
    thread_instructions: u64,
    /// Boxed: `None` in every state but the last of a run, and a clone copies the pointer.
    termination: Option<Box<Termination>>,
    checking: bool,
    scratch: Vec<u64>,
    /// The memory's [`MemoryEnv::generation`] when its choices were last copied into
    /// `enabled` (derived): an unchanged generation means unchanged memory choices.
    mem_generation: u64,
    /// Whether anything reads a thread's registers after it exits: which registers the
    /// canonical state keeps ([`Machine::set_final_registers`]).
    final_registers: FinalRegisters,
    /// Under [`FinalRegisters::Observed`], the warps of every completed block with the
    /// registers their threads exited with (a completed block leaves the resident blocks, and
    /// an observer reads its threads' final registers after the run); empty otherwise.
    /// Shared copy-on-write: only a block's completion adds to it.
    finals: Arc<BTreeMap<u32, SmallVec<[Arc<warp::Warp>; 1]>>>,
}

/// The part of a [`Machine`] that no step changes after launch.
#[derive(Debug, PartialEq)]
struct Fixed {
    config: MachineConfig,
    /// The launch's global segments and where the program's pointer provenances point
    /// ([`Machine::loads_only_settled_words`]), built on first use.
    segments: settled::SegmentCache,
    /// The launch's words private to one warp ([`Machine::accesses_only_private_words`]),
    /// built on first use.
    private: private::PrivateCache,
}

impl Machine {
    /// Prepares a launch: finds the kernel, checks arguments and resources, lays out memory.
    pub fn new(
        program: Arc<Program>,
        launch: &LaunchConfig,
        config: &MachineConfig,
    ) -> Result<Machine, LaunchError> {
        launch::new(program, launch, config)
    }

    /// Prepares a program of one or more launches in one context (thesis 5.7): one grid per
    /// launch, global blocks numbered grid after grid ([`Machine::grids`]). A grid starts once
    /// its stream predecessor has completed and fewer than 16 grids run; the `Issue` choices
    /// offer the next block of every running grid. One launch is exactly [`Machine::new`].
    /// Errors of launch `i` of several start `launch i of n: `.
    pub fn from_program(
        program: Arc<Program>,
        launch: &ProgramLaunch,
        config: &MachineConfig,
    ) -> Result<Machine, LaunchError> {
        launch::from_program(program, launch, config)
    }

    /// The enabled choices, in a deterministic order. Empty once terminated.
    pub fn enabled(&self) -> &[Choice] {
        &self.enabled
    }

    /// Takes one transition.
    pub fn step(&mut self, choice: &Choice) -> Result<(), StepError> {
        self.step_inner(choice, None, EventDetail::Full)
    }

    /// Takes one transition, appending what it did to `events` (in full detail).
    pub fn step_observed(
        &mut self,
        choice: &Choice,
        events: &mut Vec<Event>,
    ) -> Result<(), StepError> {
        self.step_inner(choice, Some(events), EventDetail::Full)
    }

    /// [`Machine::step_observed`] with the events in `detail`: the same events in the same
    /// order, differing only in what [`EventDetail`] leaves out.
    pub fn step_observed_with(
        &mut self,
        choice: &Choice,
        events: &mut Vec<Event>,
        detail: EventDetail,
    ) -> Result<(), StepError> {
        self.step_inner(choice, Some(events), detail)
    }

    /// `Some` once the run has completed, deadlocked or faulted.
    pub fn termination(&self) -> Option<&Termination> {
        self.termination.as_deref()
    }

    /// Ends the run with `StepLimit` (for run loops that hit their bound).
    pub fn stop_at_step_limit(&mut self) {
        self.stop_at(Termination::StepLimit);
    }

    /// Ends the run with `TimeLimit` (for run loops told to stop: `--timeout`).
    pub fn stop_at_time_limit(&mut self) {
        self.stop_at(Termination::TimeLimit);
    }

    fn stop_at(&mut self, bound: Termination) {
        if self.termination.is_none() {
            self.termination = Some(Box::new(bound));
            self.enabled.clear();
        }
    }

    /// Transitions taken so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Thread-instructions executed so far (per warp step, the lanes that executed it).
    pub fn thread_instructions(&self) -> u64 {
        self.thread_instructions
    }

    /// Current bytes of launch buffer `index` (empty if there is none), as a thread would read
    /// them: under cached memory, valid L2 bytes over DRAM's.
    pub fn buffer(&self, index: usize) -> Vec<u8> {
        self.info
            .buffers
            .get(index)
            .map(|b| self.observe_global(*b, self.mem.pages().read_global(*b)))
            .unwrap_or_default()
    }

    /// A reader of memory as threads would read it between steps, for debuggers
    /// ([`MemoryReader::read`]); one reader serves many reads.
    pub fn reader(&self) -> MemoryReader<'_> {
        MemoryReader {
            // A copy of the pages (copy-on-write: cheap), since a load may note what it touched.
            pages: self.mem.pages().clone(),
            memory: &self.mem,
        }
    }

    fn observe_global(&self, base: u64, mut bytes: Vec<u8>) -> Vec<u8> {
        self.mem.observe_global(base, &mut bytes);
        bytes
    }

    /// The cached memory environment (caches and in-flight memory programs), if configured.
    pub fn cache(&self) -> Option<&Cached> {
        self.mem.cached()
    }

    /// The memory environment (the seam: [`MemoryEnv`]).
    pub fn memory_env(&self) -> &Memory {
        &self.mem
    }

    /// Whether every memory access is performed inside the step that issues it (flat memory:
    /// [`MemoryEnv::performs_accesses_at_once`]); the reductions that reason about a step's
    /// accesses need it.
    pub fn performs_accesses_at_once(&self) -> bool {
        self.mem.performs_accesses_at_once()
    }

    /// The global address of launch buffer `index`.
    pub fn buffer_address(&self, index: usize) -> Option<u64> {
        self.info.buffers.get(index).copied()
    }

    /// A module `.global` or `.const` variable's bytes.
    pub fn variable(&self, name: &str) -> Option<Vec<u8>> {
        let v = self.program.variables.iter().find(|v| v.name == name)?;
        match v.space {
            crate::program::Space::Global => self
                .mem
                .pages()
                .global_named(name)
                .map(|s| self.observe_global(s.base, s.bytes())),
            crate::program::Space::Const => self.mem.pages().const_named(name).map(|s| s.bytes()),
            _ => None,
        }
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    pub fn config(&self) -> &MachineConfig {
        &self.fixed.config
    }

    /// Whether anything reads a thread's registers once it has exited ([`FinalRegisters`],
    /// by default [`FinalRegisters::Unobserved`]).
    pub fn final_registers(&self) -> FinalRegisters {
        self.final_registers
    }

    /// Says whether anything reads a thread's registers once it has exited. With
    /// [`FinalRegisters::Unobserved`] (the default) the canonical state
    /// ([`Machine::state_fingerprint`]) also leaves out the registers that only `exit` would
    /// read (and every register of an exited lane but `shfl` sources), which merges states that
    /// differ only there; a tool that compares states by final registers sets
    /// [`FinalRegisters::Observed`]. Every machine
    /// whose fingerprints are compared (a search and the replay of its lassos) must say the
    /// same. Clones keep the setting. Set it before the run: with `Observed`, a block that
    /// completes keeps its threads' final registers ([`Machine::register`] reads them, and the
    /// canonical state holds them), so that two runs that leave different values in the
    /// registers of exited threads end in different states.
    pub fn set_final_registers(&mut self, final_registers: FinalRegisters) {
        if self.final_registers == final_registers {
            return;
        }
        self.final_registers = final_registers;
        // The blocks' memoised fingerprints were taken under the other setting.
        let ids: Vec<u32> = self.blocks.iter().map(|(id, _)| id).collect();
        for id in ids {
            self.blocks.get_mut(id);
        }
    }

    /// The memory's paged bytes (read-only view; under cached memory DRAM's, see
    /// [`MemoryEnv::pages`]).
    pub fn memory(&self) -> &Flat {
        self.mem.pages()
    }

    /// Warp `warp` of resident block `block`, if there is one.
    #[inline]
    pub(crate) fn resident_warp(&self, block: u32, warp: u32) -> Option<&warp::Warp> {
        self.blocks
            .get(block)?
            .warps
            .get(warp as usize)
            .map(|w| &**w)
    }

    /// [`Machine::resident_warp`] to write (the block is copied on write; the warp is copied
    /// by the caller's `Arc::make_mut`, only when it writes).
    #[inline]
    pub(crate) fn resident_warp_mut(
        &mut self,
        block: u32,
        warp: u32,
    ) -> Option<&mut Arc<warp::Warp>> {
        self.blocks.get_mut(block)?.warps.get_mut(warp as usize)
    }

    /// A snapshot of one resident warp's SIMT state, for debuggers and tests.
    pub fn warp_view(&self, block: u32, warp: u32) -> Option<WarpView> {
        let w = self.resident_warp(block, warp)?;
        let ws = self.info.shape.warp_size;
        let (pc, active, disabled, lane_pcs, waiting) = match &w.model {
            warp::ModelState::Simt(s) => {
                (s.pc, s.active, s.dis, vec![s.pc; ws as usize], s.waiting)
            }
            // ITS has no warp pc, α, δ or warp-wide wait: the lowest live lane's pc, every
            // real lane active, dummy lanes exited.
            warp::ModelState::Its(s) => {
                let lead = (w.real & !w.exited).trailing_zeros() as usize;
                let dis = traces::DisableMask {
                    brk: 0,
                    ret: 0,
                    exit: warp::lane_mask(ws) & !w.real,
                };
                let pc = s
                    .lane_pc
                    .get(lead)
                    .or(s.lane_pc.first())
                    .copied()
                    .unwrap_or(0);
                (pc, w.real, dis, s.lane_pc.to_vec(), 0)
            }
        };
        Some(WarpView {
            pc,
            active,
            disabled,
            stack: w.public_stack(),
            lane_pcs,
            depth: w.depth.to_vec(),
            exited: w.exited,
            completed: w.completed,
            waiting,
        })
    }

    /// A register's value for one lane of a resident warp at the lane's current call depth;
    /// of a completed block, the value the lane exited with, where the machine keeps them
    /// ([`FinalRegisters::Observed`]).
    pub fn register(
        &self,
        block: u32,
        warp: u32,
        lane: u32,
        reg: crate::program::RegId,
    ) -> Option<u64> {
        let w = match self.blocks.get(block) {
            Some(b) => b.warps.get(warp as usize)?,
            None => self.finals.get(&block)?.get(warp as usize)?,
        };
        let d = *w.depth.get(lane as usize)? as usize;
        w.levels.get(d)?.regs.get(reg.0 as usize, lane as usize)
    }

    /// The barriers in use in a resident block (thesis 5.5.1 χ(b) ≠ ε), for debuggers.
    pub fn barrier_views(&self, block: u32) -> Option<Vec<BarrierView>> {
        let b = self.blocks.get(block)?;
        Some(
            b.shared
                .bars
                .iter()
                .enumerate()
                .filter(|(_, bar)| bar.in_use)
                .map(|(i, bar)| BarrierView {
                    index: i as u32,
                    arrived: bar.ac,
                    expected: bar.tc,
                    reduction: bar.red.map(|r| format!("{r:?}").to_lowercase()),
                })
                .collect(),
        )
    }
}

/// A warp's state as debuggers and tests see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarpView {
    /// The SIMT stack's warp pc; ITS/threads: the lowest live lane's pc.
    pub pc: Pc,
    /// α; ITS/threads: the real lanes.
    pub active: u64,
    /// δ; ITS/threads: the dummy lanes as exited.
    pub disabled: traces::DisableMask,
    /// Top first (empty under ITS/threads).
    pub stack: Vec<traces::Token>,
    /// ITS/threads: per-lane pcs; the SIMT stack: the warp pc for every lane.
    pub lane_pcs: Vec<Pc>,
    pub depth: Vec<u16>,
    pub exited: u64,
    pub completed: bool,
    /// The barriers the warp waits at (SIMT stack; 0 under ITS/threads, whose lanes wait one
    /// by one).
    pub waiting: u16,
}

/// A barrier in use, as debuggers see it (thesis `Barrier = ThreadCnt × ArrCnt × ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarrierView {
    pub index: u32,
    /// ac: arrivals so far (threads).
    pub arrived: u32,
    /// tc: the thread count it completes at.
    pub expected: u32,
    /// `Some("popc")` for a `bar.red` barrier.
    pub reduction: Option<String>,
}

/// Memory as threads would read it between steps ([`Machine::reader`]).
pub struct MemoryReader<'a> {
    pages: Flat,
    memory: &'a Memory,
}

impl MemoryReader<'_> {
    /// `size` bytes (1, 2, 4 or 8) at `address` in `space` as thread `who` would read them: the
    /// memory's bytes, and under cached memory, for `.global`, valid L2 bytes over DRAM's (what
    /// [`Machine::buffer`] shows; an SM's L1 is not consulted: it is one SM's view, and a load
    /// that misses it reads L2; thesis chapter 4). Little-endian in the low bits.
    pub fn read(
        &mut self,
        who: memory_model::Who,
        space: memory_model::MemSpace,
        address: u64,
        size: u32,
    ) -> Result<u64, memory_model::MemError> {
        use memory_model::MemorySystem;
        let value = self.pages.load(who, space, address, size)?;
        if space != memory_model::MemSpace::Global {
            return Ok(value);
        }
        let mut bytes = value.to_le_bytes()[..size as usize].to_vec();
        self.memory.observe_global(address, &mut bytes);
        let mut raw = [0u8; 8];
        raw[..bytes.len()].copy_from_slice(&bytes);
        Ok(u64::from_le_bytes(raw))
    }
}
