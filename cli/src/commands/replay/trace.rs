//! The trace file of a run: its launch and configuration, mirrored ([`TraceLaunch`],
//! [`TraceConfig`]) with exactly the serialized shape of
//! `semantics::machine::{LaunchConfig, MachineConfig}`, so the JSON Lines that
//! `cudasem run --trace` writes read back; reading and writing trace files.

use crate::error::Error;
use crate::options::Setup;
use ptx_parser::ScalarType;
use semantics::machine::{
    ArgValue, BufferSpec, DeviceConfig, GridLaunch, LaunchConfig, MachineConfig, MemoryKind,
    WarpModel,
};
use serde::{Deserialize, Serialize};
use std::path::Path;
use traces::format::{self, CompactTrace, Format};
use traces::{Choice, Trace};

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
    fn to_arg(&self) -> Result<ArgValue, Error> {
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

fn scalar_of(name: &str) -> Result<ScalarType, Error> {
    SCALARS
        .iter()
        .copied()
        .find(|t| scalar_name(*t) == name)
        .ok_or_else(|| Error::Input(format!("unknown element type `{name}` in the trace")))
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
    pub fn to_grids(&self) -> Result<Vec<GridLaunch>, Error> {
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
                        .collect::<Result<_, Error>>()?,
                    stream: g.stream,
                })
            })
            .collect()
    }

    /// The launch this trace ran; buffers named by the launch file are read from it again
    /// (resolved against `program`), and must hold the bytes the trace recorded.
    pub fn to_launch(&self, program: &semantics::Program) -> Result<LaunchConfig, Error> {
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
                .collect::<Result<_, Error>>()?,
            args: self
                .args
                .iter()
                .map(TraceArg::to_arg)
                .collect::<Result<_, Error>>()?,
            globals: self.globals.clone(),
            extern_values: self.extern_values.clone(),
        })
    }
}

impl TraceLaunch {
    /// The launch file's buffers, when some buffer of the trace comes from it.
    fn file_buffers(&self, program: &semantics::Program) -> Result<Option<Vec<BufferSpec>>, Error> {
        if self.buffers.iter().all(|b| b.from_launch.is_none()) {
            return Ok(None);
        }
        let Some(path) = &self.launch_file else {
            return Err(Error::Input(
                "a buffer comes from a launch file, but the trace names none".to_string(),
            ));
        };
        let launch = crate::launch::Launch::read(std::path::Path::new(path)).map_err(|e| {
            Error::Input(format!(
                "the trace's buffers come from the launch file {path}, which cannot be read: {e}"
            ))
        })?;
        let no_longer = |e: String| {
            Error::Input(format!(
                "the trace's launch file {path} no longer resolves: {e}"
            ))
        };
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
) -> Result<Vec<u8>, Error> {
    let path = path.unwrap_or("?");
    let b = file.iter().find(|b| b.name == name).ok_or_else(|| {
        Error::Input(format!(
            "the trace's launch file {path} has no buffer `{name}` any more"
        ))
    })?;
    if b.bytes.len() != want.len || content_hash(&b.bytes) != want.hash {
        return Err(Error::Input(format!(
            "buffer `{name}` of the launch file {path} changed since the trace was written (its initial contents differ): restore the file, or rerun the command that wrote the trace"
        )));
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

    pub fn to_config(&self) -> Result<MachineConfig, Error> {
        let warp_model = [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads]
            .into_iter()
            .find(|m| warp_model_word(*m) == self.warp_model)
            .ok_or_else(|| {
                Error::Input(format!(
                    "unknown warp model `{}` in the trace",
                    self.warp_model
                ))
            })?;
        let memory = match self.memory.as_str() {
            "Flat" => MemoryKind::Flat,
            "Cached" => MemoryKind::Cached,
            other => {
                return Err(Error::Input(format!(
                    "unknown memory `{other}` in the trace"
                )));
            }
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
pub fn read_trace_file(path: &str) -> Result<CliTrace, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        action: "cannot read trace",
        path: path.to_string(),
        source,
        help: Some("TRACE is a trace file or a compact string starting with `cudasem2:`"),
    })?;
    match format::detect(&text) {
        Format::Ron => format::from_ron(&text),
        Format::JsonLines => format::from_json_lines(&text),
        Format::Compact => {
            return Err(Error::Input(format!(
                "error: {path} holds a compact trace: pass the string itself\n"
            )));
        }
    }
    .map_err(|e| Error::Input(format!("error: {path}: {e}\n")))
}

/// Writes a trace file: RON for `.ron`, JSON Lines otherwise.
pub fn save_trace(path: &Path, trace: &CliTrace) -> Result<(), Error> {
    let text = if path.extension().is_some_and(|e| e == "ron") {
        format::to_ron(trace)
    } else {
        format::to_json_lines(trace)
    }
    .map_err(|e| Error::Input(format!("error: cannot encode trace: {e}\n")))?;
    std::fs::write(path, text).map_err(|e| Error::io("cannot write trace", path.display(), e))
}
