//! Helpers shared by the end-to-end tests of the `cudasem` binary: where the workspace is, and
//! running the binary with a clean environment. (Each test file includes this module and uses
//! what it needs.)
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root: corpus paths in the tests are relative to it.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// Exit code, stdout and stderr of `cudasem ARGS` run in `dir` (no colours, no log filter from
/// the caller's environment).
pub fn cudasem_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CUDASEM_LOG")
        .output()
        .expect("the cudasem binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Whether clang runs here (`$CUDASEM_CLANG`, else `clang` on PATH), as cudasem finds it: the
/// tests that compile `.cu` files skip, saying so, without it.
pub fn clang_available() -> bool {
    let clang = std::env::var_os("CUDASEM_CLANG").unwrap_or_else(|| "clang".into());
    Command::new(clang)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `cudasem ARGS` from the workspace root.
pub fn cudasem_here(args: &[&str]) -> (i32, String, String) {
    cudasem_in(&workspace(), args)
}

/// A scratch folder in the temporary directory, removed (with what the test wrote into it)
/// when dropped, so that the test suite leaves nothing behind.
pub struct Scratch(PathBuf);

impl Scratch {
    /// A fresh, empty folder `cudasem-cli-PREFIX-PID-NAME`.
    pub fn new(prefix: &str, name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "cudasem-cli-{prefix}-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
