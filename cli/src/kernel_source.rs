//! The one place a kernel file is read: PTX as it is; a CUDA file (`.cu`) compiled to PTX first
//! with clang's NVPTX backend and cudasem's CUDA header (`cuda_front::compile`), so every
//! command that takes PTX takes `.cu` too, and reports cite `.cu` lines (line tables are on).
//!
//! The compiler is `--clang PATH` (a global flag), else `$CUDASEM_CLANG`, else `clang` on PATH.

use crate::error::Error;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `--clang PATH`, set once by `main`.
static CLANG: OnceLock<PathBuf> = OnceLock::new();

/// Records the `--clang` flag (the first call wins).
pub fn set_clang(path: Option<PathBuf>) {
    if let Some(p) = path {
        let _ = CLANG.set(p);
    }
}

/// The clang to run: `--clang`, then `$CUDASEM_CLANG`, then `clang` (found on PATH).
pub fn clang() -> PathBuf {
    if let Some(p) = CLANG.get() {
        return p.clone();
    }
    match std::env::var_os("CUDASEM_CLANG") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from("clang"),
    }
}

/// The name reports give the PTX of `path` (`FILE:LINE` of a PTX instruction, diagnostics):
/// the file itself, or for a `.cu` file `FILE.cu.ptx`, the PTX that `cudasem cc FILE.cu -o
/// FILE.cu.ptx` writes. Commands printed for the user (replays) name `path` itself.
pub fn ptx_name(path: &Path) -> String {
    if cuda_front::is_cuda_source(path) {
        format!("{}.ptx", path.display())
    } else {
        path.display().to_string()
    }
}

/// The PTX text of `path`: the file itself, or for a `.cu` file the PTX clang compiles from it
/// (clang's warnings go to stderr). `Err` is a file that cannot be read, or clang's failure.
pub fn read_kernel(path: &Path) -> Result<String, Error> {
    if !cuda_front::is_cuda_source(path) {
        return std::fs::read_to_string(path)
            .map_err(|e| Error::io("cannot read", path.display(), e));
    }
    match cuda_front::compile(&clang(), path) {
        Ok(compiled) => {
            if !compiled.warnings.is_empty() {
                eprint!("{}", compiled.warnings);
            }
            Ok(compiled.ptx)
        }
        Err(e) => Err(Error::Input(e.to_string())),
    }
}
