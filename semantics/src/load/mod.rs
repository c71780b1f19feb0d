//! `load`: a parsed PTX module to a [`Program`] (thesis 5.1.3, `load`), or every error found.

use crate::program::Program;
use ptx_parser::{Diagnostic, Module};

/// Lowers and validates `module`. Warnings (unused names, ignored directives) come back with the
/// program; any error means no program.
pub fn load(module: &Module, source: &str) -> Result<(Program, Vec<Diagnostic>), Vec<Diagnostic>> {
    let _ = (module, source);
    todo!("loader")
}
