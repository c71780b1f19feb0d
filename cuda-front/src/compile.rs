//! Compiling a `.cu` file to PTX with clang's NVPTX backend, without the CUDA SDK.
//!
//! The command is the one `tests/kernels/README.md` documents, plus what makes ordinary CUDA
//! compile and reports cite `.cu` lines:
//!
//! ```text
//! clang --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_70 -O2 -gline-tables-only
//!       -fdebug-compilation-dir=. -fdebug-prefix-map=TMP=<cudasem>
//!       -Xclang -target-feature -Xclang +ptx70    (+ptx64 before clang 11)
//!       -include TMP/cudasem_cuda.h -I TMP/include -S FILE.cu -o -
//! ```
//!
//! `TMP` is a fresh temporary folder holding the shipped header ([`crate::HEADER`]) and empty
//! stand-ins for the SDK headers a `.cu` file commonly includes. The debug prefix map keeps
//! that folder's random name out of the PTX, so the same `.cu` file always gives the same PTX
//! text (and program hash: recorded traces replay against a recompiled file).
//!
//! This module is the crate's only I/O: it runs the compiler the caller names (the CLI finds it)
//! and writes the temporary folder. Everything else here is a pure function of its arguments.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The command that installs clang on the Debian/Ubuntu machines cudasem is developed on.
pub const INSTALL_HINT: &str = "apt-get install -y clang";

/// The SDK headers a `.cu` file may `#include` that the shipped header replaces (they are empty
/// files on clang's include path: the shipped header is already included).
pub const STAND_IN_HEADERS: &[&str] = &[
    "cuda.h",
    "cuda_runtime.h",
    "cuda_runtime_api.h",
    "device_launch_parameters.h",
    "cooperative_groups.h",
    "cooperative_groups/reduce.h",
    "cuda_fp16.h",
    "device_functions.h",
    "device_atomic_functions.h",
    "math_functions.h",
    // The shipped header by name, for files that include it explicitly (the corpus does, so
    // that scripts/regen-ptx.sh compiles them with plain clang too).
    "cudasem_cuda.h",
];

/// A clang version, from `clang --version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClangVersion {
    pub major: u32,
    pub minor: u32,
}

impl ClangVersion {
    /// Reads `clang version 14.0.6` (or `Ubuntu clang version 18.1.3 (...)`, `Apple clang
    /// version ...`) from the output of `clang --version`.
    pub fn parse(version_output: &str) -> Option<ClangVersion> {
        let line = version_output
            .lines()
            .find(|l| l.contains("clang version"))?;
        let rest = &line[line.find("clang version")? + "clang version".len()..];
        let number = rest.split_whitespace().next()?;
        let mut parts = number.split('.').map(|p| p.parse::<u32>().ok());
        let major = parts.next()??;
        let minor = parts.next().flatten().unwrap_or(0);
        Some(ClangVersion { major, minor })
    }

    /// The PTX ISA version to target: warp intrinsics (`shfl.sync`, `vote.sync`, `activemask`)
    /// need PTX 6.0 or later, which clang only emits when asked; clang 11 added PTX 7.0.
    pub fn ptx_feature(self) -> &'static str {
        if self.major >= 11 { "+ptx70" } else { "+ptx64" }
    }
}

/// The arguments given to clang for `input`, with the shipped header in `header_dir` (as laid
/// out by [`compile`]).
pub fn clang_args(input: &Path, header_dir: &Path, version: ClangVersion) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "--cuda-device-only",
        "-nocudainc",
        "-nocudalib",
        "--cuda-gpu-arch=sm_70",
        "-O2",
        // Line tables: every instruction gets a `.loc` with its `.cu` line, so reports cite it.
        "-gline-tables-only",
        // Relative inputs keep relative names in `.file` (and the PTX does not depend on the
        // folder it was compiled in).
        "-fdebug-compilation-dir=.",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    let mut prefix_map = OsString::from("-fdebug-prefix-map=");
    prefix_map.push(header_dir);
    prefix_map.push("=<cudasem>");
    args.push(prefix_map);
    for a in [
        "-Xclang",
        "-target-feature",
        "-Xclang",
        version.ptx_feature(),
    ] {
        args.push(a.into());
    }
    args.push("-include".into());
    args.push(header_dir.join(HEADER_NAME).into_os_string());
    args.push("-I".into());
    args.push(header_dir.join("include").into_os_string());
    args.push("-S".into());
    args.push(input.as_os_str().to_owned());
    args.push("-o".into());
    args.push("-".into());
    args
}

/// The shipped header's file name in the temporary folder (and in clang's messages).
pub const HEADER_NAME: &str = "cudasem_cuda.h";

/// A successful compilation.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The PTX text.
    pub ptx: String,
    /// What clang printed on success (warnings), as it printed it.
    pub warnings: String,
    pub version: ClangVersion,
}

/// Why a `.cu` file gave no PTX.
#[derive(Debug, Clone, PartialEq)]
pub enum CompileError {
    /// The input file cannot be read.
    Unreadable { path: PathBuf, reason: String },
    /// The compiler could not be started.
    ClangMissing { clang: PathBuf, reason: String },
    /// It ran but is not a clang cudasem knows (`--version` did not say `clang version N`).
    NotClang { clang: PathBuf, output: String },
    /// Compilation failed: clang's diagnostics, as it printed them.
    Failed { path: PathBuf, diagnostics: String },
    /// The temporary folder could not be written.
    TempDir(String),
}

impl fmt::Display for CompileError {
    /// `error: ...` with a `= help:` line saying what to do (clang's own diagnostics first for a
    /// failed compilation).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Unreadable { path, reason } => {
                writeln!(f, "error: cannot read {}: {reason}", path.display())
            }
            CompileError::ClangMissing { clang, reason } => writeln!(
                f,
                "error: cannot run clang (`{}`): {reason}\n  = help: cudasem compiles .cu files \
                 with clang's NVPTX backend: install it (`{INSTALL_HINT}`), or name it with \
                 --clang PATH or the CUDASEM_CLANG environment variable; or give the PTX file",
                clang.display()
            ),
            CompileError::NotClang { clang, output } => writeln!(
                f,
                "error: `{}` does not look like clang (`--version` printed: {})\n  = help: name \
                 clang with --clang PATH or CUDASEM_CLANG",
                clang.display(),
                output.lines().next().unwrap_or("nothing")
            ),
            CompileError::Failed { path, diagnostics } => {
                write!(f, "{diagnostics}")?;
                if !diagnostics.is_empty() && !diagnostics.ends_with('\n') {
                    writeln!(f)?;
                }
                writeln!(
                    f,
                    "error: clang could not compile {} (its messages are above)\n  = help: \
                     cudasem's CUDA header gives the standard device names (threadIdx, \
                     __syncthreads, __shfl_down_sync, atomicAdd, cooperative_groups...); host \
                     code and the CUDA libraries are not available",
                    path.display()
                )
            }
            CompileError::TempDir(reason) => {
                writeln!(
                    f,
                    "error: cannot write a temporary folder for clang: {reason}"
                )
            }
        }
    }
}

/// Whether `path` names CUDA source (`.cu`), which [`compile`] turns into PTX, rather than PTX.
pub fn is_cuda_source(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "cu")
}

/// The version of the clang at `clang`.
pub fn clang_version(clang: &Path) -> Result<ClangVersion, CompileError> {
    let output =
        Command::new(clang)
            .arg("--version")
            .output()
            .map_err(|e| CompileError::ClangMissing {
                clang: clang.to_owned(),
                reason: e.to_string(),
            })?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    ClangVersion::parse(&text).ok_or_else(|| CompileError::NotClang {
        clang: clang.to_owned(),
        output: text,
    })
}

/// Compiles `input` with the clang at `clang` (module doc: the exact command).
pub fn compile(clang: &Path, input: &Path) -> Result<Compiled, CompileError> {
    // Clang's own message for a missing input is terse; say it as every command does.
    if let Err(e) = std::fs::metadata(input).and_then(|m| {
        if m.is_file() {
            Ok(())
        } else {
            Err(std::io::Error::other("not a file"))
        }
    }) {
        return Err(CompileError::Unreadable {
            path: input.to_owned(),
            reason: e.to_string(),
        });
    }
    let version = clang_version(clang)?;
    let dir = tempfile::Builder::new()
        .prefix("cudasem-cc-")
        .tempdir()
        .map_err(|e| CompileError::TempDir(e.to_string()))?;
    lay_out_headers(dir.path()).map_err(|e| CompileError::TempDir(e.to_string()))?;
    let output = Command::new(clang)
        .args(clang_args(input, dir.path(), version))
        .output()
        .map_err(|e| CompileError::ClangMissing {
            clang: clang.to_owned(),
            reason: e.to_string(),
        })?;
    let stderr = String::from_utf8_lossy(&output.stderr)
        .replace(&dir.path().display().to_string(), "<cudasem>");
    if !output.status.success() {
        return Err(CompileError::Failed {
            path: input.to_owned(),
            diagnostics: stderr,
        });
    }
    let ptx = String::from_utf8_lossy(&output.stdout).into_owned();
    Ok(Compiled {
        ptx: tidy_file_names(&ptx),
        warnings: stderr,
        version,
    })
}

/// Writes the shipped header and the empty stand-ins into `dir`.
fn lay_out_headers(dir: &Path) -> std::io::Result<()> {
    std::fs::write(dir.join(HEADER_NAME), crate::HEADER)?;
    for name in STAND_IN_HEADERS {
        let path = dir.join("include").join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(
            path,
            "// cudasem: the shipped header (cudasem_cuda.h) gives these names\n",
        )?;
    }
    Ok(())
}

/// `.file 1 "./k.cu"` becomes `.file 1 "k.cu"`: the name as the user wrote it on the command
/// line (clang prefixes the compilation folder, `.`, to relative inputs).
pub fn tidy_file_names(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with(".file") {
            out.push_str(&line.replacen("\"./", "\"", 1));
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_the_usual_banners() {
        let v = |s: &str| ClangVersion::parse(s);
        assert_eq!(
            v("Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu"),
            Some(ClangVersion {
                major: 14,
                minor: 0
            })
        );
        assert_eq!(
            v("Ubuntu clang version 18.1.3 (1ubuntu1)").map(|v| v.major),
            Some(18)
        );
        assert_eq!(
            v("clang version 10.0.0 ").map(|v| v.ptx_feature()),
            Some("+ptx64")
        );
        assert_eq!(v("gcc (Debian 12.2.0-14) 12.2.0"), None);
    }

    #[test]
    fn arguments_include_the_header_and_line_tables() {
        let args = clang_args(
            Path::new("k.cu"),
            Path::new("/tmp/x"),
            ClangVersion {
                major: 14,
                minor: 0,
            },
        );
        let text: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(text.contains(&"-gline-tables-only".to_string()));
        assert!(text.contains(&"+ptx70".to_string()));
        assert!(text.contains(&"/tmp/x/cudasem_cuda.h".to_string()));
        assert!(text.contains(&"-fdebug-prefix-map=/tmp/x=<cudasem>".to_string()));
        assert_eq!(text.last().map(String::as_str), Some("-"));
    }

    #[test]
    fn file_names_lose_the_compilation_folder() {
        let ptx = "\t.file\t1 \"./k.cu\"\n\t.file\t2 \"/abs/h.h\"\nmov.u32 %r1, 0;\n";
        assert_eq!(
            tidy_file_names(ptx),
            "\t.file\t1 \"k.cu\"\n\t.file\t2 \"/abs/h.h\"\nmov.u32 %r1, 0;\n"
        );
    }
}
