//! The flag groups several commands take, declared once as clap `Args` structs that each
//! command flattens: the launch ([`LaunchArgs`]: the launch file and the [`QuickLaunch`] flags
//! that override it), the model ([`ModelArgs`]: warp model and memory system) and the machine
//! ([`MachineArgs`]: the device's shape and budget, hardware options).
//!
//! [`argv`] writes a group back as the flags that parse to it (defaults left out), walking
//! clap's own declaration of the group and the group's serialised fields: the replay commands
//! printed on failures cannot leave a flag out, and a test checks that parsing what it writes
//! gives the group back for a value of every flag.

use crate::error::Error;
use semantics::machine::{DeviceConfig, MachineConfig, MemoryKind, WarpModel};
use serde::{Serialize, Serializer};
use std::path::PathBuf;

/// The launch: a launch file and the flags that describe a launch or override its fields.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Serialize)]
pub struct LaunchArgs {
    /// The launch file (RON): kernel, grid, block, buffers, args, globals, print (docs/run.md).
    #[arg(id = "launch", long = "launch", value_name = "FILE.ron")]
    #[serde(rename = "launch", serialize_with = "lossy_path")]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    pub quick: Box<QuickLaunch>,
    /// Run only context N (from 0) of a launch file with `contexts: [...]` (thesis 5.8); without
    /// it, `run`, `fuzz`, `explore` and `check` run every context in turn.
    #[arg(long, value_name = "N")]
    pub context: Option<usize>,
}

/// Flags that describe a launch or override a launch file's fields.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Serialize)]
#[command(next_help_heading = "Launch flags (override the launch file's fields)")]
pub struct QuickLaunch {
    /// The kernel (.entry) to launch (overrides the launch file's `kernel`).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// Grid dimensions (overrides `grid`).
    #[arg(long, value_name = "X[,Y,Z]")]
    pub grid: Option<String>,
    /// Block dimensions (overrides `block`).
    #[arg(long, value_name = "X[,Y,Z]")]
    pub block: Option<String>,
    /// Bytes of dynamic shared memory (`.extern .shared`; overrides `shared`).
    #[arg(long, value_name = "BYTES")]
    pub shared: Option<u32>,
    /// A buffer: INIT is zeros, range:START:STEP, values:V1,V2,..., random:SEED:MIN:MAX or
    /// file:PATH. Replaces the launch file's buffer of the same name.
    #[arg(long = "buffer", value_name = "NAME:TYPE:LEN[:INIT]")]
    pub buffers: Vec<String>,
    /// A kernel argument: buffer:NAME, TYPE:VALUE (s32:100, f32:2.5) or null. Given at all,
    /// these replace the launch file's `args`.
    #[arg(long = "arg", value_name = "ARG")]
    pub args: Vec<String>,
    /// Initial value of a module variable (overrides `globals`).
    #[arg(long = "global", value_name = "NAME=VALUE")]
    pub globals: Vec<String>,
    /// Buffers to print, comma separated (overrides `print`; default all).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub print: Option<Vec<String>>,
    /// A register of one thread to print with the buffers (repeatable): `BLOCK.THREAD:%REG`,
    /// block and thread as linear indices (x fastest), `%REG` a register the kernel declares.
    /// Its final value tells outcomes apart (`explore`, `fuzz`), as a litmus test's condition
    /// reads its threads' registers; exited threads then keep their registers.
    #[arg(long = "print-register", value_name = "BLOCK.THREAD:%REG")]
    pub print_registers: Vec<String>,
    /// An expectation on the final buffers (repeatable; adds to the launch file's `expect`):
    /// `out == [1, 2, 3]`, `sum(out) == 8256`, `out[i] == 2*a[i]` (an index variable ranges
    /// over the buffer it indexes). A run that violates one fails (docs/run.md).
    #[arg(long = "expect", value_name = "EXPR")]
    pub expect: Vec<String>,
}

/// The model of execution: how warps execute divergent code, and the memory system.
#[derive(clap::Args, Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ModelArgs {
    /// How warps execute divergent code.
    #[arg(long, value_enum, default_value_t = WarpModelArg::SimtStack)]
    pub warp_model: WarpModelArg,
    /// The memory system.
    #[arg(long, value_enum, default_value_t = MemoryArg::Flat)]
    pub memory: MemoryArg,
}

impl Default for ModelArgs {
    fn default() -> ModelArgs {
        ModelArgs {
            warp_model: WarpModelArg::SimtStack,
            memory: MemoryArg::Flat,
        }
    }
}

/// The machine: the device's shape and the command's memory budget, and hardware options.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Serialize)]
pub struct MachineArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub device: Box<DeviceArgs>,
    /// Hardware behaviour: an exited warp counts as arrived at its block's barriers.
    #[arg(long)]
    pub exited_warps_arrive: bool,
    /// Check the SIMT stack's safety invariants (thesis chapter 6) after every step (slower).
    #[arg(long)]
    pub check_invariants: bool,
}

/// The device's shape.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Serialize)]
#[command(next_help_heading = "Device")]
pub struct DeviceArgs {
    /// The device's shape (RON, any subset of the fields below).
    #[arg(long, value_name = "FILE.ron")]
    #[serde(serialize_with = "lossy_path")]
    pub device: Option<PathBuf>,
    /// Number of SMs.
    #[arg(long, value_name = "N")]
    pub sms: Option<u32>,
    /// Threads per warp (32 on NVIDIA GPUs; small values reproduce the thesis's figures).
    #[arg(long, value_name = "N")]
    pub warp_size: Option<u32>,
    #[arg(long, value_name = "N")]
    pub max_blocks_per_sm: Option<u32>,
    #[arg(long, value_name = "N")]
    pub max_threads_per_sm: Option<u32>,
    #[arg(long, value_name = "N")]
    pub max_warps_per_sm: Option<u32>,
    #[arg(long, value_name = "BYTES")]
    pub shared_mem_per_sm: Option<u32>,
    #[arg(long, value_name = "N")]
    pub max_threads_per_block: Option<u32>,
    /// The memory budget of the command (bytes, or with a K, M, G or T suffix): a launch whose
    /// buffers exceed it is refused before anything is allocated. Default: half of the
    /// machine's memory.
    #[arg(long, value_name = "BYTES", value_parser = crate::budget::parse_size)]
    pub max_memory: Option<u64>,
    /// `--memory cached`: bytes per cache line (a power of two, 8 to 64; default 32).
    #[arg(long, value_name = "BYTES")]
    pub line_bytes: Option<u32>,
    /// `--memory cached`: lines per L1 (one L1 per SM; default 1024).
    #[arg(long, value_name = "N")]
    pub l1_lines: Option<u32>,
    /// `--memory cached`: lines of the L2 (default 16384).
    #[arg(long, value_name = "N")]
    pub l2_lines: Option<u32>,
    /// `--memory cached`: which silent cache actions the scheduler may take (thesis 4.6):
    /// none, observable (L1 evictions and flushes, the default) or all.
    #[arg(long, value_enum, value_name = "WHICH")]
    pub silent: Option<SilentArg>,
}

/// `--silent`: which silent rules of the cached memory are choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SilentArg {
    None,
    Observable,
    All,
}

/// `--warp-model`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WarpModelArg {
    /// The thesis's SIMT stack (lock-step, reconvergence at post-dominators).
    SimtStack,
    /// Independent thread scheduling (Volta+).
    Its,
    /// Every thread alone, interleaved.
    Threads,
}

impl WarpModelArg {
    pub(crate) fn model(self) -> WarpModel {
        match self {
            WarpModelArg::SimtStack => WarpModel::SimtStack,
            WarpModelArg::Its => WarpModel::Its,
            WarpModelArg::Threads => WarpModel::Threads,
        }
    }
}

/// `--format`: what a command prints (every command that has the flag takes these two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Readable text: tables and a status paragraph.
    Text,
    /// JSON for programs (each command's page in docs/ gives its fields).
    Json,
}

/// `--memory`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryArg {
    /// Sequentially consistent memory; an access completes inside its step.
    Flat,
    /// Thesis chapter 4: per-SM L1s (not coherent), one L2, DRAM; accesses are memory programs
    /// whose micro steps the scheduler interleaves.
    Cached,
}

/// A path as the flag's text (a path that is not UTF-8 is written lossily, as it is printed).
fn lossy_path<S: Serializer>(path: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match path {
        Some(p) => s.serialize_some(&p.to_string_lossy()),
        None => s.serialize_none(),
    }
}

/// The largest device cudasem models, far beyond any GPU (an H100 has 132 SMs of 2048 threads
/// and 228 KiB of shared memory): the machine allocates per SM and per resident block, so an
/// absurd `--sms 1000000000` must be refused before anything is allocated rather than abort.
const DEVICE_LIMITS: [(&str, u32); 5] = [
    ("sms", 4096),
    ("max-blocks-per-sm", 1024),
    ("max-threads-per-sm", 65_536),
    ("max-warps-per-sm", 2048),
    ("shared-mem-per-sm", 1 << 24),
];

impl MachineArgs {
    /// The machine configuration the flags describe under `model`: the device file, then the
    /// device flags over it.
    pub fn config(&self, model: ModelArgs) -> Result<MachineConfig, Error> {
        let d = &self.device;
        let mut device = DeviceConfig::default();
        if let Some(path) = &d.device {
            crate::launch::DeviceFile::read(path)?.apply(&mut device);
        }
        crate::launch::DeviceFile {
            num_sms: d.sms,
            max_blocks_per_sm: d.max_blocks_per_sm,
            max_threads_per_sm: d.max_threads_per_sm,
            max_warps_per_sm: d.max_warps_per_sm,
            shared_mem_per_sm: d.shared_mem_per_sm,
            max_threads_per_block: d.max_threads_per_block,
            warp_size: d.warp_size,
        }
        .apply(&mut device);
        if device.warp_size == 0 || device.warp_size > 64 {
            return Err(Error::Input(format!(
                "error: warp size {} is not supported\n  = help: warps have 1 to 64 lanes",
                device.warp_size
            )));
        }
        check_device_limits(&device)?;
        let mut cache = memory_model::cached::CacheConfig::default();
        if let Some(b) = d.line_bytes {
            cache.line_bytes = b;
        }
        if let Some(n) = d.l1_lines {
            cache.l1_lines = n;
        }
        if let Some(n) = d.l2_lines {
            cache.l2_lines = n;
        }
        if let Some(s) = d.silent {
            cache.silent = match s {
                SilentArg::None => memory_model::cached::SilentActions::None,
                SilentArg::Observable => memory_model::cached::SilentActions::Observable,
                SilentArg::All => memory_model::cached::SilentActions::All,
            };
        }
        Ok(MachineConfig {
            warp_model: model.warp_model.model(),
            memory: match model.memory {
                MemoryArg::Flat => MemoryKind::Flat,
                MemoryArg::Cached => MemoryKind::Cached,
            },
            cache,
            device,
            exited_warps_arrive: self.exited_warps_arrive,
            check_invariants: self.check_invariants,
            ..MachineConfig::default()
        })
    }
}

/// Refuses a device beyond [`DEVICE_LIMITS`].
fn check_device_limits(device: &DeviceConfig) -> Result<(), Error> {
    let values = [
        device.num_sms,
        device.max_blocks_per_sm,
        device.max_threads_per_sm,
        device.max_warps_per_sm,
        device.shared_mem_per_sm,
    ];
    for ((flag, limit), value) in DEVICE_LIMITS.iter().zip(values) {
        if value > *limit {
            return Err(Error::Input(format!(
                "error: --{flag} {value} is beyond what cudasem models (at most {limit})\n  = help: real GPUs stay far below it; the device is allocated up front"
            )));
        }
    }
    Ok(())
}

/// The flags that parse to `group`, in declaration order, defaults left out: for each flag
/// clap declares for the group, the serialised field of the same id (a repeated flag once per
/// value, a delimited list joined, a switch when set).
pub fn argv<T: clap::Args + Serialize>(group: &T) -> Vec<String> {
    let fields = match serde_json::to_value(group) {
        Ok(serde_json::Value::Object(fields)) => fields,
        // Every group is a struct of strings, numbers, switches and lossy paths.
        other => unreachable!("a flag group serialises as an object, not {other:?}"),
    };
    let command = T::augment_args(clap::Command::new("flags"));
    let mut argv = Vec::new();
    for arg in command.get_arguments() {
        let Some(long) = arg.get_long() else {
            continue;
        };
        let flag = format!("--{long}");
        let value = fields.get(arg.get_id().as_str()).unwrap_or_else(|| {
            unreachable!("the flag {flag} has no field of the same name to write it from")
        });
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .collect();
        match value {
            serde_json::Value::Null => {}
            serde_json::Value::Bool(set) => {
                if *set {
                    argv.push(flag);
                }
            }
            serde_json::Value::Array(items) => {
                let items: Vec<String> = items.iter().map(scalar_text).collect();
                match arg.get_value_delimiter() {
                    Some(delimiter) => {
                        argv.push(flag);
                        argv.push(items.join(&delimiter.to_string()));
                    }
                    None => {
                        for item in items {
                            argv.push(flag.clone());
                            argv.push(item);
                        }
                    }
                }
            }
            scalar => {
                let text = scalar_text(scalar);
                if defaults != [text.clone()] {
                    argv.push(flag);
                    argv.push(text);
                }
            }
        }
    }
    argv
}

/// A serialised field's value as the flag's text.
fn scalar_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::RunOptions;
    use clap::{Args as _, Parser};

    /// The shared groups as one command line.
    #[derive(Parser, Debug, PartialEq)]
    #[command(no_binary_name = true)]
    struct Flags {
        #[command(flatten)]
        options: RunOptions,
    }

    fn round_trip(options: &RunOptions) -> RunOptions {
        let argv = argv(options);
        match Flags::try_parse_from(&argv) {
            Ok(flags) => flags.options,
            Err(e) => panic!("{argv:?} does not parse: {e}"),
        }
    }

    /// A value for every flag, none of them the default.
    fn every_flag() -> RunOptions {
        RunOptions {
            launch: LaunchArgs {
                file: Some(PathBuf::from("dir with space/l.ron")),
                quick: Box::new(QuickLaunch {
                    kernel: Some("k".into()),
                    grid: Some("2,1,1".into()),
                    block: Some("4".into()),
                    shared: Some(128),
                    buffers: vec!["a:f32:8:range:0:1".into(), "b:u32:4".into()],
                    args: vec!["buffer:a".into(), "s32:-3".into()],
                    globals: vec!["g=7".into()],
                    print: Some(vec!["a".into(), "b".into()]),
                    print_registers: vec!["0.1:%r1".into(), "1.0:%p2".into()],
                    expect: vec!["a[i] == i".into(), "sum(b) == 0".into()],
                }),
                context: Some(1),
            },
            model: ModelArgs {
                warp_model: WarpModelArg::Its,
                memory: MemoryArg::Cached,
            },
            machine: MachineArgs {
                device: Box::new(DeviceArgs {
                    device: Some(PathBuf::from("d.ron")),
                    sms: Some(2),
                    warp_size: Some(8),
                    max_blocks_per_sm: Some(3),
                    max_threads_per_sm: Some(64),
                    max_warps_per_sm: Some(9),
                    shared_mem_per_sm: Some(4096),
                    max_threads_per_block: Some(32),
                    max_memory: Some(1 << 20),
                    line_bytes: Some(16),
                    l1_lines: Some(4),
                    l2_lines: Some(8),
                    silent: Some(SilentArg::All),
                }),
                exited_warps_arrive: true,
                check_invariants: true,
            },
        }
    }

    #[test]
    fn the_written_flags_parse_back_to_the_options() {
        let every = every_flag();
        assert_eq!(round_trip(&every), every);
        let default = RunOptions::default();
        assert_eq!(argv(&default), Vec::<String>::new());
        assert_eq!(round_trip(&default), default);
    }

    #[test]
    fn every_declared_flag_is_written() {
        let written = argv(&every_flag());
        let command = RunOptions::augment_args(clap::Command::new("flags"));
        for arg in command.get_arguments() {
            let flag = format!("--{}", arg.get_long().expect("shared flags are long"));
            assert!(
                written.contains(&flag),
                "{flag} is not written (add it to `every_flag`): {written:?}"
            );
        }
    }

    #[test]
    fn other_enum_values_round_trip() {
        for (warp_model, memory, silent) in [
            (WarpModelArg::Threads, MemoryArg::Flat, SilentArg::None),
            (
                WarpModelArg::SimtStack,
                MemoryArg::Cached,
                SilentArg::Observable,
            ),
        ] {
            let mut o = RunOptions {
                model: ModelArgs { warp_model, memory },
                ..RunOptions::default()
            };
            o.machine.device.silent = Some(silent);
            assert_eq!(round_trip(&o), o);
        }
    }

    proptest::proptest! {
        #[test]
        fn any_numbers_and_texts_round_trip(
            sms in proptest::option::of(1u32..5000),
            shared in proptest::option::of(proptest::num::u32::ANY),
            max_memory in proptest::option::of(1u64..(1 << 50)),
            kernel in proptest::option::of("[a-zA-Z_][a-zA-Z0-9_ $]{0,12}"),
            buffers in proptest::collection::vec("[a-z]{1,4}:[a-z0-9]{1,3}:[0-9]{1,3}( ,:x)?", 0..3),
            exited in proptest::bool::ANY,
        ) {
            let mut o = RunOptions::default();
            o.machine.device.sms = sms;
            o.machine.device.max_memory = max_memory;
            o.machine.exited_warps_arrive = exited;
            o.launch.quick.shared = shared;
            o.launch.quick.kernel = kernel;
            o.launch.quick.buffers = buffers;
            proptest::prop_assert_eq!(round_trip(&o), o);
        }
    }
}
