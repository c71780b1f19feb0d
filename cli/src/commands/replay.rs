//! `cudasem replay TRACE [FILE.ptx] [run options]`: re-execute a recorded run and check it.
//!
//! TRACE is a trace file (RON, or JSON Lines as `cudasem run --trace` and `--save` write) or a
//! compact string (`cudasem2:...`, printed by every failing `fuzz` and `explore`). A file
//! carries its launch and configuration (the run options are then ignored) and names its PTX
//! file (FILE.ptx overrides it); a compact string needs FILE.ptx and the run options.
//!
//! Checks, in order: the program hash; every choice against the machine's enabled set (a
//! compact index against the enabled set's length, then the choices' checksum); recorded
//! events against the replayed ones; for a lasso, that the cycle returns to the state after
//! the stem. The first divergence is reported with its step. Then the final state is printed
//! like `cudasem run` does.
//!
//! `--check` runs the monitors of `cudasem check` along the replayed schedule and prints their
//! findings as `check` does; it is what `check` prints to reproduce a finding.
//!
//! Exit codes: 0 replayed and the kernel completed, 1 replayed and the run misbehaved (or the
//! lasso closed: the kernel may not terminate), 2 the trace does not match (divergence, hash)
//! or bad input.
//!
//! The trace's launch and configuration are mirrored here ([`TraceLaunch`], [`TraceConfig`])
//! with exactly the serialized shape of `semantics::machine::{LaunchConfig, MachineConfig}`,
//! so the JSON Lines that `cudasem run --trace` writes read back.

use crate::Outcome;
use crate::commands::run::load_program;
use crate::launch::{Elem, Resolved};
use crate::options::{RunOptions, Setup};
use crate::output::{PrintedBuffer, RunReport};
use ptx_parser::ScalarType;
use scheduler::replay::{CycleCheck, replay, resolve_indices};
use semantics::machine::{
    ArgValue, BufferSpec, DeviceConfig, GridLaunch, LaunchConfig, Machine, MachineConfig,
    MemoryKind, ProgramLaunch, Termination, WarpModel,
};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use traces::format::{self, Compact, CompactTrace, CompactV1, Format};
use traces::{Choice, Event, Trace};

#[derive(clap::Args)]
pub struct Args {
    /// A trace file (.ron or .jsonl) or a compact trace string (`cudasem2:...`).
    pub trace: String,
    /// The PTX file (required with a compact trace; overrides a trace file's `program_path`).
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub options: RunOptions,
    /// Print every step: the choice and what it executed (pc, lanes, active mask, token stack).
    #[arg(long)]
    pub events: bool,
    /// Write the replayed run, with its events, as a trace file (.ron for RON, else JSON Lines).
    #[arg(long, value_name = "OUT")]
    pub save: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = crate::commands::run::Format::Text)]
    pub format: crate::commands::run::Format,
    /// Run the monitors of `cudasem check` along the replayed schedule and report what they
    /// find (data races, barrier divergence, memory errors): what `check` prints to reproduce
    /// a finding.
    #[arg(long)]
    pub check: bool,
    /// With `--check`: the race model (as `cudasem check --race-model`).
    #[arg(long, value_enum, default_value_t = crate::commands::check::RaceModelArg::Interleaving, requires = "check")]
    pub race_model: crate::commands::check::RaceModelArg,
    /// With `--check`: a launch buffer whose contents are undefined (as `cudasem check
    /// --uninit`; repeatable).
    #[arg(long = "uninit", value_name = "BUFFER", requires = "check")]
    pub uninit: Vec<String>,
}

/// A buffer of a trace's launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceBuffer {
    pub name: String,
    /// The element type as `ScalarType` serializes it (`S32`).
    pub elem: String,
    /// The initial contents, when the trace carries them (a launch given by flags); empty when
    /// they come from the launch file ([`TraceBuffer::from_launch`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bytes: Vec<u8>,
    /// The initial contents are the launch file's buffer of this name, of this length and
    /// content hash (a trace copies no buffers from a launch file; replay checks they are
    /// still the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_launch: Option<LaunchBytes>,
}

/// Which bytes a launch file's buffer held when the trace was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchBytes {
    pub len: usize,
    /// FNV-1a of the bytes ([`content_hash`]).
    pub hash: u64,
}

/// FNV-1a (64 bits) of `bytes`: stable across runs and versions, so a trace's buffer hashes stay
/// comparable.
pub fn content_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// An argument of a trace's launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TraceArg {
    Buffer(usize),
    Scalar {
        ty: String,
        bits: u64,
    },
    Null,
    /// A by-value struct or byte array, with buffer addresses patched in at byte offsets.
    Bytes {
        bytes: Vec<u8>,
        pointers: Vec<(u32, usize)>,
    },
}

impl TraceArg {
    fn to_arg(&self) -> Result<ArgValue, String> {
        Ok(match self {
            TraceArg::Buffer(i) => ArgValue::Buffer(*i),
            TraceArg::Scalar { ty, bits } => ArgValue::Scalar {
                ty: scalar_of(ty)?,
                bits: *bits,
            },
            TraceArg::Null => ArgValue::Null,
            TraceArg::Bytes { bytes, pointers } => ArgValue::Bytes {
                bytes: bytes.clone(),
                pointers: pointers.clone(),
            },
        })
    }

    fn of(a: &ArgValue) -> TraceArg {
        match a {
            ArgValue::Buffer(i) => TraceArg::Buffer(*i),
            ArgValue::Scalar { ty, bits } => TraceArg::Scalar {
                ty: scalar_name(*ty),
                bits: *bits,
            },
            ArgValue::Null => TraceArg::Null,
            ArgValue::Bytes { bytes, pointers } => TraceArg::Bytes {
                bytes: bytes.clone(),
                pointers: pointers.clone(),
            },
        }
    }
}

/// A trace's launch: `LaunchConfig`'s serialized shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceLaunch {
    pub kernel: Option<String>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
    pub buffers: Vec<TraceBuffer>,
    pub args: Vec<TraceArg>,
    pub globals: Vec<(String, u64)>,
    /// The value sets of body-less functions' calls (`LaunchConfig::extern_values`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extern_values: Vec<(String, Vec<u64>)>,
    /// The launch file the buffers' initial contents come from (see [`TraceBuffer::from_launch`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_file: Option<String>,
    /// Names of the buffers to print (absent in `cudasem run --trace` files: then all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub print: Option<Vec<String>>,
    /// Every launch of a program of several launches, in launch order (the first is also the
    /// top-level `kernel`, `grid`, `block`, `args`); absent for one kernel launch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launches: Vec<TraceGrid>,
}

/// One launch of a program of several launches in a trace: `GridLaunch`'s serialized shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceGrid {
    pub kernel: Option<String>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
    pub args: Vec<TraceArg>,
    pub stream: u32,
}

/// A trace's device: `DeviceConfig`'s serialized shape.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TraceDevice {
    pub num_sms: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_sm: u32,
    pub max_warps_per_sm: u32,
    pub shared_mem_per_sm: u32,
    pub max_threads_per_block: u32,
    pub warp_size: u32,
}

/// A trace's configuration: `MachineConfig`'s serialized shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceConfig {
    pub warp_model: String,
    pub memory: String,
    /// The caches' shape (`--memory cached`); absent in traces of flat runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<memory_model::cached::CacheConfig>,
    pub device: TraceDevice,
    pub exited_warps_arrive: bool,
    pub local_bytes_per_thread: u32,
    pub check_invariants: bool,
}

/// The trace type the CLI reads and writes.
pub type CliTrace = Trace<TraceLaunch, TraceConfig>;

const SCALARS: [ScalarType; 24] = [
    ScalarType::S8,
    ScalarType::S16,
    ScalarType::S32,
    ScalarType::S64,
    ScalarType::U8,
    ScalarType::U16,
    ScalarType::U32,
    ScalarType::U64,
    ScalarType::F16,
    ScalarType::F16x2,
    ScalarType::Bf16,
    ScalarType::Bf16x2,
    ScalarType::Tf32,
    ScalarType::F32,
    ScalarType::F64,
    ScalarType::B8,
    ScalarType::B16,
    ScalarType::B32,
    ScalarType::B64,
    ScalarType::B128,
    ScalarType::Pred,
    ScalarType::TexRef,
    ScalarType::SamplerRef,
    ScalarType::SurfRef,
];

fn scalar_name(t: ScalarType) -> String {
    serde_json::to_value(t)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn scalar_of(name: &str) -> Result<ScalarType, String> {
    SCALARS
        .iter()
        .copied()
        .find(|t| scalar_name(*t) == name)
        .ok_or_else(|| format!("unknown element type `{name}` in the trace"))
}

fn warp_model_word(m: WarpModel) -> String {
    serde_json::to_value(m)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl TraceLaunch {
    /// The trace's launch; with `launch_file`, buffers name their bytes instead of copying them.
    pub fn of(
        launch: &LaunchConfig,
        print: Option<Vec<String>>,
        launch_file: Option<&str>,
    ) -> TraceLaunch {
        TraceLaunch {
            kernel: launch.kernel.clone(),
            grid: launch.grid,
            block: launch.block,
            dynamic_shared_bytes: launch.dynamic_shared_bytes,
            buffers: launch
                .buffers
                .iter()
                .map(|b| TraceBuffer {
                    name: b.name.clone(),
                    elem: scalar_name(b.elem),
                    bytes: if launch_file.is_some() {
                        Vec::new()
                    } else {
                        b.bytes.clone()
                    },
                    from_launch: launch_file.map(|_| LaunchBytes {
                        len: b.bytes.len(),
                        hash: content_hash(&b.bytes),
                    }),
                })
                .collect(),
            args: launch.args.iter().map(TraceArg::of).collect(),
            globals: launch.globals.clone(),
            extern_values: launch.extern_values.clone(),
            launch_file: launch_file.map(str::to_string),
            print,
            launches: Vec::new(),
        }
    }

    /// With every launch of a program of several launches (`grids`; empty for one launch).
    pub fn with_grids(self, grids: &[GridLaunch]) -> TraceLaunch {
        TraceLaunch {
            launches: grids
                .iter()
                .map(|g| TraceGrid {
                    kernel: g.kernel.clone(),
                    grid: g.grid,
                    block: g.block,
                    dynamic_shared_bytes: g.dynamic_shared_bytes,
                    args: g.args.iter().map(TraceArg::of).collect(),
                    stream: g.stream,
                })
                .collect(),
            ..self
        }
    }

    /// The program's launches (empty for one kernel launch).
    pub fn to_grids(&self) -> Result<Vec<GridLaunch>, String> {
        self.launches
            .iter()
            .map(|g| {
                Ok(GridLaunch {
                    kernel: g.kernel.clone(),
                    grid: g.grid,
                    block: g.block,
                    dynamic_shared_bytes: g.dynamic_shared_bytes,
                    args: g
                        .args
                        .iter()
                        .map(TraceArg::to_arg)
                        .collect::<Result<_, String>>()?,
                    stream: g.stream,
                })
            })
            .collect()
    }

    /// The launch this trace ran; buffers named by the launch file are read from it again
    /// (resolved against `program`), and must hold the bytes the trace recorded.
    pub fn to_launch(&self, program: &semantics::Program) -> Result<LaunchConfig, String> {
        let from_file = self.file_buffers(program)?;
        Ok(LaunchConfig {
            kernel: self.kernel.clone(),
            grid: self.grid,
            block: self.block,
            dynamic_shared_bytes: self.dynamic_shared_bytes,
            buffers: self
                .buffers
                .iter()
                .map(|b| {
                    let bytes = match (&b.from_launch, &from_file) {
                        (Some(want), Some(file)) => {
                            file_bytes(file, &b.name, *want, self.launch_file.as_deref())?
                        }
                        _ => b.bytes.clone(),
                    };
                    Ok(BufferSpec {
                        name: b.name.clone(),
                        elem: scalar_of(&b.elem)?,
                        bytes,
                    })
                })
                .collect::<Result<_, String>>()?,
            args: self
                .args
                .iter()
                .map(TraceArg::to_arg)
                .collect::<Result<_, String>>()?,
            globals: self.globals.clone(),
            extern_values: self.extern_values.clone(),
        })
    }
}

impl TraceLaunch {
    /// The launch file's buffers, when some buffer of the trace comes from it.
    fn file_buffers(
        &self,
        program: &semantics::Program,
    ) -> Result<Option<Vec<BufferSpec>>, String> {
        if self.buffers.iter().all(|b| b.from_launch.is_none()) {
            return Ok(None);
        }
        let Some(path) = &self.launch_file else {
            return Err("a buffer comes from a launch file, but the trace names none".into());
        };
        let launch = crate::launch::Launch::read(std::path::Path::new(path)).map_err(|e| {
            format!(
                "the trace's buffers come from the launch file {path}, which cannot be read: {e}"
            )
        })?;
        let no_longer =
            |e: String| format!("the trace's launch file {path} no longer resolves: {e}");
        // A program's buffers are its first launch's (every launch carries them).
        let resolved = if launch.launches.is_empty() {
            launch
                .resolve_within(program, crate::budget::bytes())
                .map_err(|e| no_longer(e.to_string()))?
        } else {
            launch
                .resolve_program(program, crate::budget::bytes())
                .map_err(|e| no_longer(e.to_string()))?
                .swap_remove(0)
                .resolved
        };
        Ok(Some(resolved.config.buffers))
    }
}

/// The bytes of the launch file's buffer `name`, which must be the ones the trace recorded.
fn file_bytes(
    file: &[BufferSpec],
    name: &str,
    want: LaunchBytes,
    path: Option<&str>,
) -> Result<Vec<u8>, String> {
    let path = path.unwrap_or("?");
    let b = file
        .iter()
        .find(|b| b.name == name)
        .ok_or_else(|| format!("the trace's launch file {path} has no buffer `{name}` any more"))?;
    if b.bytes.len() != want.len || content_hash(&b.bytes) != want.hash {
        return Err(format!(
            "buffer `{name}` of the launch file {path} changed since the trace was written (its initial contents differ): restore the file, or rerun the command that wrote the trace"
        ));
    }
    Ok(b.bytes.clone())
}

impl TraceConfig {
    pub fn of(c: &MachineConfig) -> TraceConfig {
        let d = c.device;
        TraceConfig {
            warp_model: warp_model_word(c.warp_model),
            memory: match c.memory {
                MemoryKind::Flat => "Flat",
                MemoryKind::Cached => "Cached",
            }
            .to_string(),
            cache: (c.memory == MemoryKind::Cached).then_some(c.cache),
            device: TraceDevice {
                num_sms: d.num_sms,
                max_blocks_per_sm: d.max_blocks_per_sm,
                max_threads_per_sm: d.max_threads_per_sm,
                max_warps_per_sm: d.max_warps_per_sm,
                shared_mem_per_sm: d.shared_mem_per_sm,
                max_threads_per_block: d.max_threads_per_block,
                warp_size: d.warp_size,
            },
            exited_warps_arrive: c.exited_warps_arrive,
            local_bytes_per_thread: c.local_bytes_per_thread,
            check_invariants: c.check_invariants,
        }
    }

    pub fn to_config(&self) -> Result<MachineConfig, String> {
        let warp_model = [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads]
            .into_iter()
            .find(|m| warp_model_word(*m) == self.warp_model)
            .ok_or_else(|| format!("unknown warp model `{}` in the trace", self.warp_model))?;
        let memory = match self.memory.as_str() {
            "Flat" => MemoryKind::Flat,
            "Cached" => MemoryKind::Cached,
            other => return Err(format!("unknown memory `{other}` in the trace")),
        };
        let d = self.device;
        Ok(MachineConfig {
            warp_model,
            memory,
            cache: self.cache.unwrap_or_default(),
            device: DeviceConfig {
                num_sms: d.num_sms,
                max_blocks_per_sm: d.max_blocks_per_sm,
                max_threads_per_sm: d.max_threads_per_sm,
                max_warps_per_sm: d.max_warps_per_sm,
                shared_mem_per_sm: d.shared_mem_per_sm,
                max_threads_per_block: d.max_threads_per_block,
                warp_size: d.warp_size,
            },
            exited_warps_arrive: self.exited_warps_arrive,
            local_bytes_per_thread: self.local_bytes_per_thread,
            check_invariants: self.check_invariants,
        })
    }
}

/// A trace of `setup`'s launch with these choices.
pub fn trace_of(
    setup: &Setup,
    choices: Vec<Choice>,
    policy: String,
    seed: Option<u64>,
) -> CliTrace {
    let print = setup
        .resolved
        .print
        .iter()
        .map(|&i| setup.resolved.config.buffers[i].name.clone())
        .collect();
    let mut t = Trace::new(
        setup.program.hash,
        TraceLaunch::of(
            &setup.resolved.config,
            Some(print),
            setup.launch_path.as_deref(),
        )
        .with_grids(&setup.grids),
        TraceConfig::of(&setup.config),
        seed,
    );
    t.choices = choices;
    t.policy = Some(policy);
    t.program_path = Some(setup.ptx_path.clone());
    t
}

/// The compact string of `choices` (version 2: the choices by identity).
pub fn compact_of(program_hash: u64, choices: &[Choice], cycle_start: Option<usize>) -> String {
    CompactTrace {
        program_hash,
        cycle_start,
        choices: choices.to_vec(),
    }
    .encode()
}

/// Reads a trace file (RON or JSON Lines, detected from its text).
pub fn read_trace_file(path: &str) -> Result<CliTrace, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "error: cannot read trace {path}: {e}\n  = help: TRACE is a trace file or a compact string starting with `cudasem2:`\n"
        )
    })?;
    match format::detect(&text) {
        Format::Ron => format::from_ron(&text),
        Format::JsonLines => format::from_json_lines(&text),
        Format::Compact => {
            return Err(format!(
                "error: {path} holds a compact trace: pass the string itself\n"
            ));
        }
    }
    .map_err(|e| format!("error: {path}: {e}\n"))
}

/// The longest compact trace printed inline: far below Linux's 128 KiB limit on one shell
/// argument, and still a line one can copy.
const INLINE_COMPACT_MAX: usize = 4096;

/// The longest schedule written to a replay trace file (about 30 MB of JSON Lines).
const TRACE_FILE_MAX_CHOICES: usize = 1_000_000;

/// `cudasem replay COMPACT FILE.ptx ...` when `choices` fit in a compact string short enough
/// to print inline; `None` when they do not.
pub fn compact_command(
    setup: &Setup,
    options: &RunOptions,
    choices: &[Choice],
    cycle_start: Option<usize>,
) -> Result<Option<String>, String> {
    let compact = compact_of(setup.program.hash, choices, cycle_start);
    Ok((compact.len() <= INLINE_COMPACT_MAX)
        .then(|| crate::options::replay_command(&compact, &setup.ptx_path, options)))
}

/// The `cudasem replay ...` command that reproduces `choices` on `setup`'s launch, the one
/// helper behind every failure that `run`, `fuzz` and `explore` print. Short schedules become
/// a compact string in the command itself; longer ones are written as a JSON Lines trace
/// into the system's temporary directory, named by the program hash and the choices'
/// checksum so that the same failure always names the same file.
pub fn reproduce(
    setup: &Setup,
    options: &RunOptions,
    choices: &[Choice],
    cycle_start: Option<usize>,
    policy: String,
    seed: Option<u64>,
) -> Result<String, String> {
    if let Some(command) = compact_command(setup, options, choices, cycle_start)? {
        return Ok(command);
    }
    if choices.len() > TRACE_FILE_MAX_CHOICES {
        return Ok(format!(
            "(none: the schedule's {} choices are more than the {TRACE_FILE_MAX_CHOICES} a replay trace is written for)",
            choices.len()
        ));
    }
    let path = std::env::temp_dir().join(format!(
        "cudasem-{:016x}-{:08x}-{}.jsonl",
        setup.program.hash,
        CompactV1::checksum_of(choices),
        choices.len()
    ));
    let mut trace = trace_of(setup, choices.to_vec(), policy, seed);
    trace.cycle_start = cycle_start;
    save_trace(&path, &trace)?;
    // The file carries the launch and configuration: only the PTX path is needed.
    Ok(crate::output::shell_command(&[
        "cudasem".to_string(),
        "replay".to_string(),
        path.display().to_string(),
        setup.ptx_path.clone(),
    ]))
}

/// Writes a trace file: RON for `.ron`, JSON Lines otherwise.
pub fn save_trace(path: &Path, trace: &CliTrace) -> Result<(), String> {
    let text = if path.extension().is_some_and(|e| e == "ron") {
        format::to_ron(trace)
    } else {
        format::to_json_lines(trace)
    }
    .map_err(|e| format!("error: cannot encode trace: {e}\n"))?;
    std::fs::write(path, text)
        .map_err(|e| format!("error: cannot write trace {}: {e}\n", path.display()))
}

/// One line per executed event of a step: `pc 3  lanes 0x2  active 0x2  stack [break 0x3 @7]`.
pub fn event_lines(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Executed {
                pc,
                lanes,
                active,
                stack,
                next_pc,
                derivation,
                ..
            } => {
                let tokens: Vec<String> = stack
                    .iter()
                    .map(|t| format!("{} {:#x} @{}", t.kind.name(), t.mask, t.pc))
                    .collect();
                Some(format!(
                    "pc {pc:>3} -> {next_pc:<3} lanes {lanes:#06x}  active {active:#06x}  stack [{}]  ({derivation})",
                    tokens.join(", ")
                ))
            }
            Event::BarrierCompleted { block, barrier, .. } => {
                Some(format!("barrier {barrier} of block {block} completed"))
            }
            Event::BlockCompleted { block, .. } => Some(format!("block {block} completed")),
            _ => None,
        })
        .collect()
}

pub fn run(args: Args) -> Outcome {
    crate::failure::Failure::outcome(run_inner(&args))
}

/// What a replay starts from: the launch as a ready [`Setup`] (from the trace file, or from
/// the PTX file and run options of a compact string) and the recorded schedule.
pub(crate) struct Loaded {
    pub setup: Setup,
    pub choices: Vec<Choice>,
    pub events: Option<Vec<Vec<Event>>>,
    pub cycle_start: Option<usize>,
}

pub(crate) fn load_trace(args: &Args) -> Result<Loaded, String> {
    let is_file = Path::new(&args.trace).is_file();
    if !is_file && format::detect(&args.trace) == Format::Compact {
        let compact = format::parse_compact(&args.trace).map_err(|e| format!("error: {e}\n"))?;
        let file = args.file.as_ref().ok_or(
            "error: a compact trace needs the PTX file and the launch: cudasem replay TRACE FILE.ptx --launch L.ron\n",
        )?;
        // A compact string re-resolves the launch file: programs of several launches replay
        // (and `--check`) as single launches do.
        let setup = args.options.setup(file)?;
        let (choices, cycle_start) = match compact {
            // By identity: the strict replay reports the first choice that is not enabled.
            Compact::V2(c) => {
                check_hash(&setup.ptx_path, setup.program.hash, c.program_hash)?;
                (c.choices, c.cycle_start)
            }
            // Enabled-set indices, resolved the way version 1 printed them.
            Compact::V1(c) => {
                check_hash(&setup.ptx_path, setup.program.hash, c.program_hash)?;
                let choices = resolve_indices(&setup.machine, &c.indices).map_err(|d| {
                    format!("replay diverged: {d}\n  = the trace does not belong to this program, launch and configuration\n")
                })?;
                if CompactV1::checksum_of(&choices) != c.checksum {
                    return Err(format!(
                        "replay diverged: the {} indices of this version 1 string resolve to other choices than were recorded (checksum {:08x}, recorded {:08x})\n  = version 1 strings name positions in the enabled set, whose order this cudasem may list differently: rerun the command that printed it to get a version 2 string\n",
                        choices.len(),
                        CompactV1::checksum_of(&choices),
                        c.checksum
                    ));
                }
                (choices, c.cycle_start)
            }
        };
        return Ok(Loaded {
            setup,
            choices,
            events: None,
            cycle_start,
        });
    }
    let trace = read_trace_file(&args.trace)?;
    let ptx: PathBuf = match (&args.file, &trace.program_path) {
        (Some(f), _) => f.clone(),
        (None, Some(p)) => PathBuf::from(p),
        (None, None) => {
            return Err(
                "error: the trace does not name its PTX file: cudasem replay TRACE FILE.ptx\n"
                    .to_string(),
            );
        }
    };
    let ptx_path = ptx.display().to_string();
    let text = crate::kernel_source::read_kernel(&ptx, |e| {
        format!("error: cannot read {ptx_path}: {e}\n")
    })?;
    let ptx_name = crate::kernel_source::ptx_name(&ptx);
    let program = Arc::new(load_program(&ptx_name, &text)?);
    check_hash(&ptx_path, program.hash, trace.program_hash)?;
    let launch = trace
        .launch
        .to_launch(&program)
        .map_err(|e| format!("error: {}: {e}\n", args.trace))?;
    let config = trace
        .config
        .to_config()
        .map_err(|e| format!("error: {}: {e}\n", args.trace))?;
    let kernel = launch
        .kernel
        .clone()
        .unwrap_or_else(|| "kernel".to_string());
    // A program of several launches: its launches share the first's buffers and globals.
    let grids = trace
        .launch
        .to_grids()
        .map_err(|e| format!("error: {}: {e}\n", args.trace))?;
    let machine = if grids.is_empty() {
        Machine::new(Arc::clone(&program), &launch, &config)
    } else {
        let program_launch = ProgramLaunch {
            buffers: launch.buffers.clone(),
            globals: launch.globals.clone(),
            extern_values: launch.extern_values.clone(),
            launches: grids.clone(),
        };
        Machine::from_program(Arc::clone(&program), &program_launch, &config)
    }
    .map_err(|e| format!("error: the trace's launch does not fit: {}\n", e.message))?;
    let elems: Vec<Elem> = launch
        .buffers
        .iter()
        .map(|b| Elem::from_scalar_type(b.elem).unwrap_or(Elem::U8))
        .collect();
    let print = launch
        .buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| {
            trace
                .launch
                .print
                .as_ref()
                .is_none_or(|names| names.contains(&b.name))
        })
        .map(|(i, _)| i)
        .collect();
    // `--expect` flags, bound to the trace's buffers (a trace file carries no expectations).
    let expect = {
        let buffers: Vec<(&str, Elem, u64)> = launch
            .buffers
            .iter()
            .zip(&elems)
            .map(|(b, e): (_, &Elem)| (b.name.as_str(), *e, (b.bytes.len() / e.size()) as u64))
            .collect();
        args.options
            .quick
            .expect
            .iter()
            .map(|text| {
                crate::launch::expect::Expectation::parse(text)
                    .and_then(|e| e.bind(&buffers))
                    .map_err(|e| {
                        format!(
                            "error: bad --expect `{text}`: {} (at column {})\n  = help: {}\n",
                            e.message,
                            e.at + 1,
                            e.help
                        )
                    })
            })
            .collect::<Result<Vec<_>, String>>()?
    };
    Ok(Loaded {
        setup: Setup {
            ptx_path,
            ptx_name,
            text,
            program,
            resolved: Resolved {
                config: launch,
                kernel,
                elems,
                print,
                expect,
            },
            launch_path: trace.launch.launch_file.clone(),
            config,
            machine,
            grids,
        },
        choices: trace.choices,
        events: trace.events,
        cycle_start: trace.cycle_start,
    })
}

/// The program must be the one the trace was recorded from.
fn check_hash(ptx_path: &str, have: u64, want: u64) -> Result<(), String> {
    if have == want {
        Ok(())
    } else {
        Err(format!(
            "replay refused: {ptx_path} has program hash {have:016x}, the trace was recorded from {want:016x}\n  = help: the PTX file changed since the trace was recorded, or it is another file\n"
        ))
    }
}

fn run_inner(args: &Args) -> Result<Outcome, crate::failure::Failure> {
    let loaded = load_trace(args)?;
    if args.check {
        return crate::commands::check::replay_checked(args, loaded);
    }
    let setup = &loaded.setup;
    let mut machine = setup.machine.clone();
    let r = replay(
        &mut machine,
        &loaded.choices,
        loaded.events.as_deref(),
        loaded.cycle_start,
        args.events || args.save.is_some(),
    );
    let mut out = String::new();
    if args.events
        && let Some(events) = &r.events
    {
        for (i, (c, ev)) in loaded.choices.iter().zip(events).enumerate() {
            if loaded.cycle_start == Some(i) {
                out.push_str("-- cycle (repeats forever) --\n");
            }
            out.push_str(&format!("{i:>6}  {c}\n"));
            for line in event_lines(ev) {
                out.push_str(&format!("          {line}\n"));
            }
        }
    }
    if let Some(path) = &args.save {
        let mut t: CliTrace = Trace::new(
            setup.program.hash,
            TraceLaunch::of(
                &setup.resolved.config,
                Some(
                    setup
                        .resolved
                        .print
                        .iter()
                        .map(|&i| setup.resolved.config.buffers[i].name.clone())
                        .collect(),
                ),
                setup.launch_path.as_deref(),
            )
            .with_grids(&setup.grids),
            TraceConfig::of(&setup.config),
            None,
        );
        t.choices = loaded.choices[..r.taken].to_vec();
        t.program_path = Some(setup.ptx_path.clone());
        t.cycle_start = loaded.cycle_start;
        t.events = r.events.clone();
        t.policy = Some("replay".to_string());
        save_trace(path, &t)?;
    }
    if let Some(d) = &r.divergence {
        let msg = format!(
            "{out}replay diverged after {} of {} choices: {d}\n",
            r.taken,
            loaded.choices.len()
        );
        if args.format == crate::commands::run::Format::Json {
            let j = serde_json::json!({
                "replayed": r.taken,
                "choices": loaded.choices.len(),
                "divergence": { "step": d.step, "message": d.to_string() },
            });
            crate::emit::stdout(&format!("{j}\n"))?;
        } else {
            eprint!("{msg}");
        }
        return Ok(Outcome::BadInput);
    }
    let buffers_bytes: Vec<Vec<u8>> = setup
        .resolved
        .print
        .iter()
        .map(|&i| machine.buffer(i))
        .collect();
    let termination = r.termination.clone();
    let lasso_text = match r.cycle {
        Some(CycleCheck::Closed { fingerprint }) => Some(format!(
            "the cycle closes: the state after choice {} recurs after choice {} (fingerprint {fingerprint:032x}); repeating it never terminates\n",
            loaded.cycle_start.unwrap_or(0),
            loaded.choices.len()
        )),
        Some(CycleCheck::Open {
            stem_end,
            cycle_end,
        }) => Some(format!(
            "the cycle does NOT close: state {stem_end:032x} after the stem, {cycle_end:032x} after the cycle\n"
        )),
        None => None,
    };
    let printed: Vec<PrintedBuffer> = setup
        .resolved
        .print
        .iter()
        .zip(&buffers_bytes)
        .map(|(&i, bytes)| PrintedBuffer {
            name: &setup.resolved.config.buffers[i].name,
            elem: setup.resolved.elems[i],
            bytes,
        })
        .collect();
    // The launch's expectations (a launch file's `expect`, `--expect`), on a completed run.
    let expectations = if termination == Some(Termination::Completed) {
        let all: Vec<Vec<u8>> = (0..setup.resolved.config.buffers.len())
            .map(|i| machine.buffer(i))
            .collect();
        crate::expectations::check(&setup.resolved, |i| all.get(i).map(Vec::as_slice))
    } else {
        Vec::new()
    };
    let violated = expectations.iter().any(|(_, v)| v.is_some());
    let outcome = match (&termination, &r.cycle) {
        (_, Some(CycleCheck::Open { .. })) => Outcome::BadInput,
        (_, Some(CycleCheck::Closed { .. })) => Outcome::Misbehaved,
        (Some(Termination::Completed), _) if violated => Outcome::Misbehaved,
        (Some(Termination::Completed), _) => Outcome::Clean,
        (Some(_), _) => Outcome::Misbehaved,
        // The trace ended before the run did (a step-limit failure, or a partial run).
        (None, _) => Outcome::Misbehaved,
    };
    let stopped = Termination::StepLimit;
    let report = RunReport {
        kernel: &setup.kernel_title(),
        ptx_path: &setup.ptx_name,
        files: &setup.program.files,
        buffers: printed,
        termination: termination.as_ref().unwrap_or(&stopped),
        steps: machine.steps(),
        max_steps: loaded.choices.len() as u64,
        setup: format!("{}, replay of {} choices", setup.setup_text(), r.taken),
        replay: String::new(),
        expectations,
        grids: crate::output::grid_kernels(&setup.machine),
    };
    match args.format {
        crate::commands::run::Format::Text => {
            out.push_str(&format!(
                "replayed {} choices: program hash {:016x} matches, every choice was enabled{}\n",
                r.taken,
                setup.program.hash,
                if loaded.events.is_some() {
                    ", every step's events match the recorded ones"
                } else {
                    ""
                }
            ));
            if let Some(l) = &lasso_text {
                out.push_str(l);
            }
            if termination.is_some() {
                out.push_str(&report.text());
            } else {
                out.push_str(&format!(
                    "the run has not ended after the trace's {} choices\n",
                    r.taken
                ));
            }
        }
        crate::commands::run::Format::Json => {
            let j = serde_json::json!({
                "replayed": r.taken,
                "choices": loaded.choices.len(),
                "divergence": serde_json::Value::Null,
                "program_hash": format!("{:016x}", setup.program.hash),
                "events_checked": loaded.events.is_some(),
                "lasso": lasso_text.as_ref().map(|_| matches!(r.cycle, Some(CycleCheck::Closed { .. }))),
                "ended": termination.is_some(),
                "run": serde_json::from_str::<serde_json::Value>(&report.json()).unwrap_or_default(),
            });
            out.push_str(&j.to_string());
            out.push('\n');
        }
    }
    crate::emit::stdout(&out)?;
    Ok(outcome)
}
