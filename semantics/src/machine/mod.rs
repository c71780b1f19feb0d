//! The layered CUDA machine (thesis chapter 5): device -> context -> grid -> block -> warp -> thread.
//!
//! This file is the machine's public face: what a launch is, how the machine is configured, what a
//! run ends in. One transition is one [`traces::Choice`] from [`Machine::enabled`]; `run` loops
//! (schedulers) live in the `scheduler` crate.

use ptx_parser::ScalarType;
use serde::Serialize;

/// A kernel launch, resolved from a launch file or flags (the CLI reads files; this is plain data).
#[derive(Debug, Clone, PartialEq, Serialize)]
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
}

/// A named global-memory buffer with its initial contents.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BufferSpec {
    pub name: String,
    pub elem: ScalarType,
    /// Initial bytes (little-endian elements); its length is the buffer's size.
    pub bytes: Vec<u8>,
}

/// A kernel argument.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum ArgValue {
    /// The global address of `buffers[i]`.
    Buffer(usize),
    /// A scalar's bits in the low bits, written with the parameter's size.
    Scalar { ty: ScalarType, bits: u64 },
    /// A null pointer (ZLUDA warp tests pass 0 for the missing input buffer).
    Null,
}

/// How a warp executes divergent code (`--warp-model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
pub enum WarpModel {
    /// The thesis's branching algorithm (5.4.1): active/disable masks and a token stack.
    #[default]
    SimtStack,
    /// Independent thread scheduling (Volta+): per-lane pcs; the scheduler picks a converged group.
    Its,
    /// Every thread alone, interleaved (seed 001's reference semantics).
    Threads,
}

/// Which memory system the device links to (`--memory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
pub enum MemoryKind {
    /// Sequentially consistent, an access completes inside its warp step.
    #[default]
    Flat,
}

/// The device's shape (thesis Fig. 3.2 constants); `--device FILE.ron` or flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
pub struct MachineConfig {
    pub warp_model: WarpModel,
    pub memory: MemoryKind,
    pub device: DeviceConfig,
    /// Hardware behaviour: a warp that exits counts as arrived at every barrier of its block.
    /// The thesis's model does not do this (digest T20); off by default.
    pub exited_warps_arrive: bool,
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
    /// The program did something undefined or faulted (out-of-bounds, trap, stuck stack...).
    Error(MachineError),
}

/// One group of lanes stuck in a deadlock.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaitInfo {
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
