//! The trace file of a run: the launch as a trace records it ([`TraceLaunch`]: buffers of a
//! launch file named by length and content hash instead of copied, the buffers to print, every
//! launch of a program) and the machine's configuration ([`TraceConfig`], a `MachineConfig`);
//! reading and writing trace files.
//!
//! Everything else is the semantics' own types (`ArgValue`, `GridLaunch`, `MachineConfig`) as
//! serde writes them, with two exceptions that keep trace files byte for byte what they have
//! always been: a flat run's trace carries no cache shape, and the words of an element type,
//! a warp model and a memory kind are written as strings (`"S32"` in RON, where serde's own
//! spelling of an enum would be `S32`): see the modules `word` and `in_trace` below.

use crate::error::Error;
use crate::options::Setup;
use ptx_parser::ScalarType;
use semantics::machine::{ArgValue, BufferSpec, GridLaunch, LaunchConfig, MachineConfig};
use serde::{Deserialize, Serialize};
use std::path::Path;
use traces::format::{self, CompactTrace, Format};
use traces::{Choice, Trace};

/// A buffer of a trace's launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceBuffer {
    pub name: String,
    #[serde(with = "word")]
    pub elem: ScalarType,
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

/// A trace's launch: a `LaunchConfig` whose buffers may name a launch file's bytes instead of
/// holding them, with the buffers to print and every launch of a program of several launches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceLaunch {
    pub kernel: Option<String>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
    pub buffers: Vec<TraceBuffer>,
    #[serde(with = "in_trace::args")]
    pub args: Vec<ArgValue>,
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
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "in_trace::grids"
    )]
    pub launches: Vec<GridLaunch>,
}

/// A trace's machine configuration. It is written as `MachineConfig` serializes, except that
/// the caches' shape is left out for a flat run (which has no caches); reading a trace without
/// one takes the default shape.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "in_trace::Config", into = "in_trace::Config")]
pub struct TraceConfig(pub MachineConfig);

/// The trace type the CLI reads and writes.
pub type CliTrace = Trace<TraceLaunch, TraceConfig>;

/// A unit-variant enum (`ScalarType`, `WarpModel`, `MemoryKind`) written as the string of serde's
/// name for it (`"S32"`), as trace files have always written these words; read back from it.
mod word {
    use serde::de::{DeserializeOwned, Error as _, value::StrDeserializer};
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<T: Serialize, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        match serde_json::to_value(value).map_err(S::Error::custom)? {
            serde_json::Value::String(name) => s.serialize_str(&name),
            other => Err(S::Error::custom(format!("{other} is not a word"))),
        }
    }

    pub fn deserialize<'de, T: DeserializeOwned, D: Deserializer<'de>>(
        d: D,
    ) -> Result<T, D::Error> {
        let name = String::deserialize(d)?;
        T::deserialize(StrDeserializer::<D::Error>::new(&name))
            .map_err(|e| D::Error::custom(format!("`{name}` in the trace: {e}")))
    }
}

/// How a trace writes the semantics' launch types: serde's own shape of each (serde's `remote`
/// definitions, which the compiler checks field by field against the real type), with the
/// [`word`]s written as strings.
mod in_trace {
    use super::word;
    use memory_model::cached::CacheConfig;
    use ptx_parser::ScalarType;
    use semantics::machine::{
        ArgValue, DeviceConfig, GridLaunch, MachineConfig, MemoryKind, WarpModel,
    };
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(remote = "ArgValue")]
    enum Arg {
        Buffer(usize),
        Scalar {
            #[serde(with = "word")]
            ty: ScalarType,
            bits: u64,
        },
        Null,
        Bytes {
            bytes: Vec<u8>,
            pointers: Vec<(u32, usize)>,
        },
    }

    #[derive(Serialize, Deserialize)]
    #[serde(remote = "GridLaunch")]
    struct Grid {
        kernel: Option<String>,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_shared_bytes: u32,
        #[serde(with = "args")]
        args: Vec<ArgValue>,
        stream: u32,
    }

    /// A list of values of a remote definition, written as a sequence of it.
    macro_rules! list_of {
        ($module:ident, $ty:ty, $remote:ident) => {
            pub mod $module {
                use super::*;

                struct Out<'a>(&'a $ty);

                impl Serialize for Out<'_> {
                    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                        $remote::serialize(self.0, s)
                    }
                }

                struct In($ty);

                impl<'de> Deserialize<'de> for In {
                    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<In, D::Error> {
                        $remote::deserialize(d).map(In)
                    }
                }

                pub fn serialize<S: Serializer>(list: &[$ty], s: S) -> Result<S::Ok, S::Error> {
                    s.collect_seq(list.iter().map(Out))
                }

                pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<$ty>, D::Error> {
                    Ok(Vec::<In>::deserialize(d)?
                        .into_iter()
                        .map(|x| x.0)
                        .collect())
                }
            }
        };
    }
    list_of!(args, ArgValue, Arg);
    list_of!(grids, GridLaunch, Grid);

    /// `MachineConfig`'s fields as a trace writes them (see [`super::TraceConfig`]).
    #[derive(Serialize, Deserialize)]
    pub struct Config {
        #[serde(with = "word")]
        warp_model: WarpModel,
        #[serde(with = "word")]
        memory: MemoryKind,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache: Option<CacheConfig>,
        device: DeviceConfig,
        exited_warps_arrive: bool,
        local_bytes_per_thread: u32,
        check_invariants: bool,
    }

    impl From<super::TraceConfig> for Config {
        fn from(super::TraceConfig(c): super::TraceConfig) -> Config {
            Config {
                warp_model: c.warp_model,
                memory: c.memory,
                cache: (c.memory == MemoryKind::Cached).then_some(c.cache),
                device: c.device,
                exited_warps_arrive: c.exited_warps_arrive,
                local_bytes_per_thread: c.local_bytes_per_thread,
                check_invariants: c.check_invariants,
            }
        }
    }

    impl From<Config> for super::TraceConfig {
        fn from(c: Config) -> super::TraceConfig {
            super::TraceConfig(MachineConfig {
                warp_model: c.warp_model,
                memory: c.memory,
                cache: c.cache.unwrap_or_default(),
                device: c.device,
                exited_warps_arrive: c.exited_warps_arrive,
                local_bytes_per_thread: c.local_bytes_per_thread,
                check_invariants: c.check_invariants,
            })
        }
    }
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
                    elem: b.elem,
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
            args: launch.args.clone(),
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
            launches: grids.to_vec(),
            ..self
        }
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
                        elem: b.elem,
                        bytes,
                    })
                })
                .collect::<Result<_, Error>>()?,
            args: self.args.clone(),
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
        TraceConfig(setup.config),
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

#[cfg(test)]
mod tests {
    use super::*;
    use semantics::machine::{MemoryKind, WarpModel};

    /// Traces written before the trace's launch and configuration were the semantics' types
    /// (cli/tests/fixtures/old_traces/README.md) read, and write back byte for byte.
    #[test]
    fn traces_written_before_read_and_write_back_the_same() {
        let ron = include_str!("../../../tests/fixtures/old_traces/program_cached.ron");
        let t: CliTrace = format::from_ron(ron).unwrap();
        assert_eq!(t.config.0.memory, MemoryKind::Cached);
        assert_eq!(t.launch.launches.len(), 2);
        assert_eq!(format::to_ron(&t).unwrap(), ron);

        let jsonl = include_str!("../../../tests/fixtures/old_traces/flags_its.jsonl");
        let t: CliTrace = format::from_json_lines(jsonl).unwrap();
        assert_eq!(t.config.0.warp_model, WarpModel::Its);
        assert_eq!(
            t.launch.args[3],
            ArgValue::Scalar {
                ty: ScalarType::S32,
                bits: 2
            }
        );
        assert_eq!(format::to_json_lines(&t).unwrap(), jsonl);
    }

    /// A flat run's trace has no cache shape; a cached run's has one, and both read back to
    /// the configuration they were written from.
    #[test]
    fn the_cache_shape_is_written_for_cached_runs_only() {
        for memory in [MemoryKind::Flat, MemoryKind::Cached] {
            let config = MachineConfig {
                memory,
                warp_model: WarpModel::Threads,
                ..MachineConfig::default()
            };
            let json = serde_json::to_string(&TraceConfig(config)).unwrap();
            assert_eq!(
                json.contains("\"cache\""),
                memory == MemoryKind::Cached,
                "{json}"
            );
            assert!(json.contains(r#""warp_model":"Threads""#), "{json}");
            let back: TraceConfig = serde_json::from_str(&json).unwrap();
            assert_eq!(back.0, config);
        }
    }

    /// The element types and warp models are written as quoted words in RON (as they always
    /// were), and an unknown one is refused, naming it.
    #[test]
    fn words_are_quoted_in_ron_and_an_unknown_one_is_refused() {
        let b = TraceBuffer {
            name: "x".to_string(),
            elem: ScalarType::F16x2,
            bytes: vec![1],
            from_launch: None,
        };
        let launch = LaunchConfig {
            kernel: None,
            grid: [1, 1, 1],
            block: [1, 1, 1],
            dynamic_shared_bytes: 0,
            buffers: vec![BufferSpec {
                name: b.name.clone(),
                elem: b.elem,
                bytes: b.bytes.clone(),
            }],
            args: Vec::new(),
            globals: Vec::new(),
            extern_values: Vec::new(),
        };
        let launch = TraceLaunch::of(&launch, None, None);
        assert_eq!(launch.buffers, std::slice::from_ref(&b));
        let t: CliTrace = Trace::new(1, launch, TraceConfig(MachineConfig::default()), None);
        let ron = format::to_ron(&t).unwrap();
        assert!(ron.contains(r#"elem: "F16x2""#), "{ron}");
        assert!(ron.contains(r#"warp_model: "SimtStack""#), "{ron}");
        assert_eq!(
            format::from_ron::<TraceLaunch, TraceConfig>(&ron).unwrap(),
            t
        );
        let bad = r#"{"name":"x","elem":"S33"}"#;
        let e = serde_json::from_str::<TraceBuffer>(bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`S33` in the trace"), "{e}");
    }

    /// The traces of the fuzzing corpus (written by `cudasem run --trace`) still read.
    #[test]
    fn the_fuzz_corpus_traces_read() {
        for text in [
            include_str!("../../../fuzz-corpus/trace/two_blocks.jsonl"),
            include_str!("../../../fuzz-corpus/trace/spin.jsonl"),
        ] {
            let t: CliTrace = format::from_json_lines(text).unwrap();
            assert!(!t.choices.is_empty());
        }
    }
}
