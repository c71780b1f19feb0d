//! `cudasem cc FILE.cu [-o FILE.ptx]`: the PTX cudasem runs for a CUDA file (clang's NVPTX
//! backend with cudasem's CUDA header and line tables, as every command compiles `.cu`);
//! `--header` prints the shipped header.
//!
//! Exit codes: 0 compiled, 2 bad input (no clang, a compile error, an unwritable output).

use crate::Exit;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct CcArgs {
    /// The CUDA file.
    #[arg(required_unless_present = "header")]
    pub file: Option<PathBuf>,
    /// Write the PTX here (default: standard output).
    #[arg(short, long, value_name = "FILE.ptx")]
    pub output: Option<PathBuf>,
    /// Print cudasem's CUDA device header (the names a `.cu` file can use) and exit.
    #[arg(long, conflicts_with = "file")]
    pub header: bool,
}

pub fn run(args: CcArgs) -> Exit {
    let text = match (&args.file, args.header) {
        (_, true) => cuda_front::HEADER.to_string(),
        (Some(file), false) => {
            if !cuda_front::is_cuda_source(file) {
                eprintln!(
                    "error: {} is not a CUDA file\n  = help: `cudasem cc` compiles .cu files to PTX",
                    file.display()
                );
                return Exit::BadInput;
            }
            match crate::kernel_source::read_kernel(file) {
                Ok(ptx) => ptx,
                Err(error) => {
                    eprint!("{}", error.rendered());
                    return Exit::BadInput;
                }
            }
        }
        (None, false) => unreachable!("clap requires FILE without --header"),
    };
    let written = match &args.output {
        Some(path) => std::fs::write(path, &text)
            .map_err(|e| format!("error: cannot write {}: {e}", path.display())),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                // A closed pipe (`| head`) is not an error.
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(format!("error: cannot write the PTX: {e}"))
                }
                _ => Ok(()),
            }
        }
    };
    match written {
        Ok(()) => Exit::Clean,
        Err(message) => {
            eprintln!("{message}");
            Exit::BadInput
        }
    }
}
