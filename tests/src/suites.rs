//! The corpus and the conformance suites as the test crates of other workspace members use them:
//! where the suites are, every litmus file below a folder, and every corpus kernel that has a
//! launch file as a machine under the warp models asked for, with what the CLI observes of it.

use crate::workspace_root;
use scheduler::outcome::Observe;
use semantics::machine::{Machine, MachineConfig, WarpModel};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the conformance suites are: `$CUDASEM_CONFORMANCE`, else `<workspace>/../shared/conformance`
/// (whether or not it exists; [`crate::conformance_dir`] says how to provide it when absent).
pub fn conformance_path() -> PathBuf {
    match std::env::var_os("CUDASEM_CONFORMANCE") {
        Some(d) => PathBuf::from(d),
        None => workspace_root()
            .join("..")
            .join("shared")
            .join("conformance"),
    }
}

/// Every `.litmus` file below `dir`, in path order (a missing folder gives none).
pub fn litmus_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            litmus_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "litmus") {
            out.push(p);
        }
    }
}

/// The PTX litmus suite as the reduction comparisons run it: every test below
/// `ptx-litmus` but the CADP forward-progress tests, which spin (every 8th of those), in path
/// order. Panics when the suite is absent (the comparisons need it).
pub fn litmus_suite_sample() -> Vec<PathBuf> {
    let dir = conformance_path().join("ptx-litmus");
    let mut files = Vec::new();
    litmus_files(&dir, &mut files);
    assert!(!files.is_empty(), "no litmus files under {}", dir.display());
    let mut cadp = 0;
    files.retain(|f| {
        !f.display().to_string().contains("CADP") || {
            cadp += 1;
            cadp % 8 == 1
        }
    });
    files
}

/// MP-n, SB-n and LB-n for n = 2..=`max_n`, then IRIW-4 (the families both reduction
/// comparisons add to the suite).
pub fn litmus_families(max_n: usize) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = (2..=max_n)
        .flat_map(|n| ["MP", "SB", "LB"].map(|name| litmus_family(name, n)))
        .collect();
    files.push(litmus_family("IRIW", 4));
    files
}

/// The litmus family test `NAME-N` (`tests/litmus/families`, e.g. MP-3).
pub fn litmus_family(name: &str, n: usize) -> PathBuf {
    crate::workspace_root().join(format!("tests/litmus/families/{name}-{n}.litmus"))
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
        registers: Vec::new(),
    }
}

/// The corpus kernels with launch files (not the 64K-thread benchmarks), under the SIMT stack
/// and ITS.
pub fn corpus_machines() -> Vec<(String, Machine, Observe)> {
    corpus_machines_under(&[WarpModel::SimtStack, WarpModel::Its])
}

/// The corpus kernels with launch files (not the 64K-thread benchmarks) under each of `models`,
/// named `kernel Model`.
pub fn corpus_machines_under(models: &[WarpModel]) -> Vec<(String, Machine, Observe)> {
    let mut files = crate::ptx_files(&crate::kernels_dir());
    files.retain(|p| {
        p.with_extension("ron").is_file()
            && !p
                .file_stem()
                .is_some_and(|s| s.to_string_lossy().starts_with("bench_"))
    });
    let mut out = Vec::new();
    for ptx in files {
        let name = ptx.file_stem().unwrap().to_string_lossy().into_owned();
        let Ok(program) = crate::load_file(&ptx) else {
            continue;
        };
        let launch =
            crate::read_launch(&ptx.with_extension("ron")).unwrap_or_else(|e| panic!("{e}"));
        let resolved = crate::resolve(&launch, &program).unwrap_or_else(|e| panic!("{e}"));
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
