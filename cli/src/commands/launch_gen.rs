//! `cudasem launch FILE.cu|FILE.ptx [--kernel K] [--threads N] [--block X] [-o FILE.ron]`: a
//! launch file written from the kernel's signature (`cuda_front::launch_gen`: every parameter,
//! buffers of N elements, types from the C++ signature or the PTX), which `cudasem run FILE
//! --launch FILE.ron` runs as it is.
//!
//! Exit codes: 0 written, 2 bad input (unreadable or invalid kernel file, no such kernel).

use crate::Outcome;
use cuda_front::launch_gen::{CudaSource, Hint};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The kernel file (PTX, or CUDA compiled with clang).
    pub file: PathBuf,
    /// The kernel to launch (PTX name or C++ name; needed when the module has several).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// Threads to launch in all; buffers get this many elements.
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u64).range(1..=(1 << 24)))]
    pub threads: u64,
    /// Threads per block in x (default 64 for a 1D kernel, 8x8 for 2D, 4x4x4 for 3D).
    #[arg(long, value_name = "X", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub block: Option<u32>,
    /// Write the launch file here (default: standard output).
    #[arg(short, long, value_name = "FILE.ron")]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args) -> Outcome {
    match run_inner(&args) {
        Ok(()) => Outcome::Clean,
        Err(message) => {
            if !message.is_empty() {
                eprint!("{message}");
                if !message.ends_with('\n') {
                    eprintln!();
                }
            }
            Outcome::BadInput
        }
    }
}

fn run_inner(args: &Args) -> Result<(), String> {
    let path = args.file.display().to_string();
    let ptx = crate::kernel_source::read_kernel(&args.file, |e| {
        format!("error: cannot read {path}: {e}")
    })?;
    let ptx_name = crate::kernel_source::ptx_name(&args.file);
    let program = crate::commands::run::load_program(&ptx_name, &ptx)?;
    // The C++ parameter names come from the `.cu` text at the kernel's line.
    let cuda_text = if cuda_front::is_cuda_source(&args.file) {
        std::fs::read_to_string(&args.file).ok()
    } else {
        None
    };
    let source = cuda_text.as_deref().map(|text| CudaSource {
        name: path.as_str(),
        text,
    });
    let hint = Hint {
        threads: args.threads,
        block_x: args.block,
    };
    let ron =
        cuda_front::launch_gen::generate(&program, args.kernel.as_deref(), &hint, &path, source)
            .map_err(|e| e.to_string())?;
    match &args.output {
        Some(out) => std::fs::write(out, ron)
            .map_err(|e| format!("error: cannot write {}: {e}", out.display())),
        None => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(ron.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(format!("error: cannot write the launch file: {e}"))
                }
                _ => Ok(()),
            }
        }
    }
}
