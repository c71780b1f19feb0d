//! Shared helpers of the corpus harnesses (`tests/tests/*.rs`): where the corpus and the
//! conformance data live, loading a PTX file into a program, reading a launch file exactly as
//! `cudasem run` does, running a launch under a schedule, and decoding buffers.
//!
//! Launch files are read by the `launch-file` crate, as `cudasem run` reads them.

pub use launch_file as launch;

pub mod bench_support;
mod suites;
pub use suites::{
    conformance_path, corpus_machines, corpus_machines_under, litmus_families, litmus_family,
    litmus_files, litmus_suite_sample, observe_globals,
};

use launch::{Launch, LaunchError, Resolved};
use ptx_parser::{Diagnostic, Severity};
use scheduler::{Random, RoundRobin, Scheduler};
use semantics::Program;
use semantics::machine::{LaunchConfig, Machine, MachineConfig, Termination, WarpModel};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use traces::Choice;

/// Why a harness could not set a case up, or why a result differs from the expected one.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error(
        "conformance data absent at {}: set CUDASEM_CONFORMANCE to the folder holding zluda/ (the shared conformance checkout)",
        .0.display()
    )]
    ConformanceAbsent(PathBuf),
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A PTX file that does not parse or load: its diagnostics as `file:line:col: message`.
    #[error("{0}")]
    Load(String),
    #[error("{0}")]
    Launch(LaunchError),
    /// A launch the machine refuses.
    #[error("{0}")]
    Refused(String),
    /// A result that differs from the expected one (the first difference).
    #[error("{0}")]
    Mismatch(String),
}

/// The workspace root (this crate lives in `<root>/tests`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// `tests/kernels`: the `.cu`/`.ptx`/`.ron` corpus.
pub fn kernels_dir() -> PathBuf {
    workspace_root().join("tests").join("kernels")
}

/// The conformance data: `$CUDASEM_CONFORMANCE`, else `<workspace>/../shared/conformance`.
/// `Err` says how to provide it.
pub fn conformance_dir() -> Result<PathBuf, HarnessError> {
    let dir = conformance_path();
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(HarnessError::ConformanceAbsent(dir))
    }
}

/// Every `.ptx` file directly in `dir`, sorted by name.
pub fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Why a file did not become a program: the diagnostics, one per line (`line:col: message`).
#[derive(Debug, Clone)]
pub struct LoadFailure {
    pub diagnostics: Vec<Diagnostic>,
    pub text: String,
}

impl LoadFailure {
    /// `file:line:col: message` per error.
    pub fn render(&self, path: &str) -> String {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| {
                let start = (d.span.start as usize).min(self.text.len());
                let before = &self.text[..start];
                let line = before.matches('\n').count() + 1;
                let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!("{path}:{line}:{col}: {}", d.message)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Parses and loads PTX text.
pub fn load_text(text: &str) -> Result<Program, LoadFailure> {
    let parsed = ptx_parser::parse(text);
    if parsed.has_errors() {
        return Err(LoadFailure {
            diagnostics: parsed.diagnostics,
            text: text.to_string(),
        });
    }
    semantics::load(&parsed.module, text)
        .map(|(program, _warnings)| program)
        .map_err(|diagnostics| LoadFailure {
            diagnostics,
            text: text.to_string(),
        })
}

/// Reads, parses and loads a PTX file; `Err` is a readable message.
pub fn load_file(path: &Path) -> Result<Program, HarnessError> {
    let text = std::fs::read_to_string(path).map_err(|source| HarnessError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    load_text(&text).map_err(|f| HarnessError::Load(f.render(&path.display().to_string())))
}

/// Reads a launch file (as `cudasem run --launch` does).
pub fn read_launch(path: &Path) -> Result<Launch, HarnessError> {
    Launch::read(path).map_err(HarnessError::Launch)
}

/// Resolves a launch against a program.
pub fn resolve(launch: &Launch, program: &Program) -> Result<Resolved, HarnessError> {
    launch.resolve(program).map_err(HarnessError::Launch)
}

/// A scheduling policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    RoundRobin,
    Random(u64),
}

impl Schedule {
    /// Round-robin and `seeds` random seeds (1..=seeds).
    pub fn round_robin_and_random(seeds: u64) -> Vec<Schedule> {
        std::iter::once(Schedule::RoundRobin)
            .chain((1..=seeds).map(Schedule::Random))
            .collect()
    }
    /// The `--schedule` spelling.
    pub fn flag(self) -> String {
        match self {
            Schedule::RoundRobin => "round-robin".to_string(),
            Schedule::Random(seed) => format!("random:{seed}"),
        }
    }
    fn scheduler(self) -> Box<dyn Scheduler> {
        match self {
            Schedule::RoundRobin => Box::new(RoundRobin::new()),
            Schedule::Random(seed) => Box::new(Random::new(seed)),
        }
    }
}

/// The `--warp-model` spelling.
pub fn warp_model_flag(model: WarpModel) -> &'static str {
    match model {
        WarpModel::SimtStack => "simt-stack",
        WarpModel::Its => "its",
        WarpModel::Threads => "threads",
    }
}

pub const WARP_MODELS: [WarpModel; 3] = [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads];

/// A finished run: how it ended and the final machine (buffers, variables).
pub struct Run {
    pub termination: Termination,
    pub machine: Machine,
}

impl Run {
    /// The final bytes of launch buffer `index`.
    pub fn buffer(&self, index: usize) -> Vec<u8> {
        self.machine.buffer(index)
    }
}

/// Runs `launch` on `program` under `config` and `schedule` for at most `max_steps` steps.
/// `Err` is a launch the machine refuses.
pub fn run_launch(
    program: &Arc<Program>,
    launch: &LaunchConfig,
    config: &MachineConfig,
    schedule: Schedule,
    max_steps: u64,
) -> Result<Run, HarnessError> {
    let mut machine = Machine::new(Arc::clone(program), launch, config)
        .map_err(|e| HarnessError::Refused(e.message))?;
    let mut scheduler = schedule.scheduler();
    let termination = scheduler::run(&mut machine, scheduler.as_mut(), max_steps);
    Ok(Run {
        termination,
        machine,
    })
}

/// A machine configuration with this warp model and otherwise the defaults.
pub fn config_with(model: WarpModel) -> MachineConfig {
    MachineConfig {
        warp_model: model,
        ..MachineConfig::default()
    }
}

// -- decoding ------------------------------------------------------------------------------------

pub fn as_i32(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
pub fn as_u32(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
pub fn as_f32(bytes: &[u8]) -> Vec<f32> {
    as_u32(bytes).into_iter().map(f32::from_bits).collect()
}
pub fn as_u64(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect()
}
pub fn as_i64(bytes: &[u8]) -> Vec<i64> {
    as_u64(bytes).into_iter().map(|x| x as i64).collect()
}
pub fn as_f64(bytes: &[u8]) -> Vec<f64> {
    as_u64(bytes).into_iter().map(f64::from_bits).collect()
}
pub fn as_u8(bytes: &[u8]) -> Vec<u8> {
    bytes.to_vec()
}
pub fn as_i16(bytes: &[u8]) -> Vec<i16> {
    bytes
        .chunks_exact(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect()
}

/// `Ok` when equal, else the first differing index with both values and the lengths.
pub fn compare<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: &[T],
    want: &[T],
) -> Result<(), HarnessError> {
    if got.len() != want.len() {
        return Err(HarnessError::Mismatch(format!(
            "{what}: {} elements, expected {}",
            got.len(),
            want.len()
        )));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => {
            let wrong = got.iter().zip(want).filter(|(g, w)| g != w).count();
            Err(HarnessError::Mismatch(format!(
                "{what}[{i}] = {:?}, expected {:?} ({wrong} of {} elements differ)",
                got[i],
                want[i],
                got.len()
            )))
        }
    }
}

/// Floats compared by bits (NaN payloads and signed zeros included).
pub fn compare_f32_bits(what: &str, got: &[f32], want: &[f32]) -> Result<(), HarnessError> {
    let g: Vec<u32> = got.iter().map(|x| x.to_bits()).collect();
    let w: Vec<u32> = want.iter().map(|x| x.to_bits()).collect();
    compare(what, &g, &w).map_err(|e| {
        HarnessError::Mismatch(format!(
            "{e} (bits; got {:?}, want {:?} at the first difference)",
            first_diff(got, want).0,
            first_diff(got, want).1
        ))
    })
}

pub fn compare_f64_bits(what: &str, got: &[f64], want: &[f64]) -> Result<(), HarnessError> {
    let g: Vec<u64> = got.iter().map(|x| x.to_bits()).collect();
    let w: Vec<u64> = want.iter().map(|x| x.to_bits()).collect();
    compare(what, &g, &w).map_err(|e| {
        HarnessError::Mismatch(format!(
            "{e} (bits; got {:?}, want {:?} at the first difference)",
            first_diff(got, want).0,
            first_diff(got, want).1
        ))
    })
}

fn first_diff<T: Copy + Default + PartialEq>(got: &[T], want: &[T]) -> (T, T) {
    match got.iter().zip(want).find(|(g, w)| g != w) {
        Some((g, w)) => (*g, *w),
        None => (T::default(), T::default()),
    }
}

/// Asserts that the lasso `stem` then `cycle` (a search's counterexample to termination)
/// replays on a copy of `m` step by step without diverging, and that its cycle, when it has
/// one, returns to the state it starts from.
pub fn assert_lasso_replays(what: &str, m: &Machine, stem: &[Choice], cycle: &[Choice]) {
    let mut all = stem.to_vec();
    all.extend_from_slice(cycle);
    let mut fresh = m.clone();
    let r = scheduler::replay::replay(&mut fresh, &all, None, Some(stem.len()), false);
    assert_eq!(r.divergence, None, "{what}: the lasso diverges");
    if !cycle.is_empty() {
        assert!(
            matches!(r.cycle, Some(scheduler::replay::CycleCheck::Closed { .. })),
            "{what}: the cycle does not close"
        );
    }
}
