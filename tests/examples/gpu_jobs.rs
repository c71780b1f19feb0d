//! Writes the corpus kernels as jobs for `scripts/gpu-compare.py`, which runs them on a real
//! NVIDIA GPU and compares the GPU's buffers with cudasem's.
//!
//! A job is one launch: the PTX file, the kernel, the grid, the block, the dynamic shared bytes,
//! every buffer's initial bytes, every argument, the module globals the launch file sets, and the
//! distinct final buffer sets cudasem reached under round-robin, eight random schedules and
//! independent thread scheduling (a schedule-dependent kernel may end in several). A launch that
//! cudasem cannot take as one kernel (a program of several launches) is listed with the reason.
//!
//! Not used by the tests or CI: `cargo run -p corpus --example gpu_jobs -- OUT.json [DIR...]`
//! (default: the corpus, `tests/kernels` and `tests/kernels/nvcc`).

use corpus::*;
use semantics::machine::{ArgValue, LaunchConfig, Termination, WarpModel};
use serde_json::{Value as Json, json};
use std::path::Path;
use std::sync::Arc;

/// Above this many threads a launch is run under round-robin only (the bench kernels).
const MANY_THREADS: u64 = 4096;
const MAX_STEPS: u64 = 50_000_000;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn arg_json(arg: &ArgValue) -> Json {
    match arg {
        ArgValue::Buffer(i) => json!({ "buffer": i }),
        ArgValue::Null => json!({ "null": true }),
        ArgValue::Scalar { ty, bits } => {
            let size = semantics::machine::type_size(*ty) as usize;
            json!({ "bytes": hex(&bits.to_le_bytes()[..size.min(8)]) })
        }
        ArgValue::Bytes { bytes, pointers } => json!({ "bytes": hex(bytes), "pointers": pointers }),
    }
}

/// The distinct final buffer sets of the launch under several schedules, or why it failed.
fn outcomes(
    program: &Arc<semantics::Program>,
    launch: &LaunchConfig,
) -> Result<Vec<Vec<String>>, HarnessError> {
    let threads: u64 = launch
        .grid
        .iter()
        .chain(&launch.block)
        .map(|&d| d as u64)
        .product();
    let mut runs = vec![(WarpModel::SimtStack, Schedule::RoundRobin)];
    if threads <= MANY_THREADS {
        runs.extend((1..=8).map(|s| (WarpModel::SimtStack, Schedule::Random(s))));
        runs.push((WarpModel::Its, Schedule::RoundRobin));
    }
    let mut seen: Vec<Vec<String>> = Vec::new();
    for (model, schedule) in runs {
        let run = run_launch(program, launch, &config_with(model), schedule, MAX_STEPS)?;
        match &run.termination {
            Termination::Completed => {}
            other => {
                return Err(HarnessError::Mismatch(format!(
                    "cudasem: {other:?} under {}",
                    schedule.flag()
                )));
            }
        }
        let buffers: Vec<String> = (0..launch.buffers.len())
            .map(|i| hex(&run.buffer(i)))
            .collect();
        if !seen.contains(&buffers) {
            seen.push(buffers);
        }
    }
    Ok(seen)
}

fn job(root: &Path, ron: &Path) -> Json {
    let name = ron
        .strip_prefix(root)
        .unwrap_or(ron)
        .with_extension("")
        .display()
        .to_string();
    let ptx = ron.with_extension("ptx");
    let skip = |why: String| json!({ "name": name, "skip": why });
    let program = match load_file(&ptx) {
        Ok(p) => Arc::new(p),
        Err(e) => return skip(format!("cudasem cannot load it: {e}")),
    };
    let launch = read_launch(ron).map(|mut launch| {
        // A `.cu` kernel's launch file names it as written in C++; its PTX entry is mangled
        // (resolved as `cudasem run` resolves it).
        if let Some(name) = &launch.kernel
            && let Ok(f) = cuda_front::launch_gen::select_kernel(&program, Some(name))
        {
            launch.kernel = Some(f.name.clone());
        }
        launch
    });
    let resolved = match launch.and_then(|l| resolve(&l, &program)) {
        Ok(r) => r,
        Err(e) => return skip(e.to_string().lines().next().unwrap_or("").to_string()),
    };
    let launch = &resolved.config;
    let kernel = match &launch.kernel {
        Some(k) => k.clone(),
        None => match program
            .functions
            .iter()
            .find(|f| f.kind == semantics::program::FunctionKind::Entry)
        {
            Some(f) => f.name.clone(),
            None => return skip("no entry".into()),
        },
    };
    let globals: Vec<Json> = launch
        .globals
        .iter()
        .filter_map(|(g, value)| {
            let var = program.variables.iter().find(|v| &v.name == g)?;
            let size = semantics::machine::type_size(var.ty) as usize;
            Some(json!({ "name": g, "bytes": hex(&value.to_le_bytes()[..size.min(8)]) }))
        })
        .collect();
    let outcomes = match outcomes(&program, launch) {
        Ok(o) => json!(o),
        Err(e) => return skip(e.to_string()),
    };
    json!({
        "name": name,
        "ptx": ptx.strip_prefix(root).unwrap_or(&ptx).display().to_string(),
        "kernel": kernel,
        "grid": launch.grid,
        "block": launch.block,
        "shared": launch.dynamic_shared_bytes,
        "buffers": launch.buffers.iter().map(|b| json!({ "name": b.name, "bytes": hex(&b.bytes) })).collect::<Vec<_>>(),
        "args": launch.args.iter().map(arg_json).collect::<Vec<_>>(),
        "globals": globals,
        "cudasem": outcomes,
    })
}

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "gpu-jobs.json".into());
    let root = workspace_root();
    let dir = kernels_dir();
    let mut dirs: Vec<std::path::PathBuf> = std::env::args().skip(2).map(Into::into).collect();
    if dirs.is_empty() {
        dirs = vec![dir.clone(), dir.join("nvcc")];
    }
    let mut rons = Vec::new();
    for sub in dirs {
        for ptx in ptx_files(&sub) {
            if ptx.with_extension("ron").is_file() {
                rons.push(ptx.with_extension("ron"));
            }
        }
    }
    let jobs: Vec<Json> = rons
        .iter()
        .map(|ron| {
            eprintln!("{}", ron.display());
            job(&root, ron)
        })
        .collect();
    let text = serde_json::to_string_pretty(&json!({ "jobs": jobs })).expect("JSON");
    if let Err(e) = std::fs::write(&out, text) {
        eprintln!("cannot write {out}: {e}");
        std::process::exit(2);
    }
    eprintln!("{} jobs written to {out}", jobs.len());
}
