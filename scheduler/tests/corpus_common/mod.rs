//! What the replay tests share: the workspace, the corpus kernels as machines
//! under the warp models asked for, and the module variables the CLI observes.

use launch_file as launch;
use scheduler::outcome::Observe;
use semantics::machine::{Machine, MachineConfig, WarpModel};
use std::path::PathBuf;
use std::sync::Arc;

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.global` module variable of at most 8 bytes, as the CLI observes them.
pub fn observe_globals(p: &semantics::Program, buffers: Vec<usize>) -> Observe {
    Observe {
        buffers,
        variables: p
            .variables
            .iter()
            .filter(|v| v.space == semantics::program::Space::Global && v.size <= 64)
            .map(|v| v.name.clone())
            .collect(),
    }
}

/// The corpus kernels with launch files (not the 64K-thread benchmarks), under the SIMT stack
/// and ITS.
#[allow(dead_code)] // each test crate includes this module; replay_fidelity uses `corpus_under`
pub fn corpus() -> Vec<(String, Machine, Observe)> {
    corpus_under(&[WarpModel::SimtStack, WarpModel::Its])
}

/// The corpus kernels with launch files (not the 64K-thread benchmarks) under each of `models`.
pub fn corpus_under(models: &[WarpModel]) -> Vec<(String, Machine, Observe)> {
    let dir = workspace().join("tests/kernels");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for ptx in files {
        let ron = ptx.with_extension("ron");
        let name = ptx.file_stem().unwrap().to_string_lossy().into_owned();
        if !ron.is_file() || name.starts_with("bench_") {
            continue;
        }
        let text = std::fs::read_to_string(&ptx).unwrap();
        let parsed = ptx_parser::parse(&text);
        let Ok((program, _)) = semantics::load(&parsed.module, &text) else {
            continue;
        };
        let resolved = launch::Launch::read(&ron)
            .unwrap()
            .resolve(&program)
            .unwrap();
        let observe = observe_globals(&program, resolved.print.clone());
        let program = Arc::new(program);
        for &model in models {
            let config = MachineConfig {
                warp_model: model,
                ..MachineConfig::default()
            };
            if let Ok(m) = Machine::new(Arc::clone(&program), &resolved.config, &config) {
                out.push((format!("{name} {model:?}"), m, observe.clone()));
            }
        }
    }
    out
}
