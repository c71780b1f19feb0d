//! `ptx-parser`: PTX text to an AST with spans.
//!
//! [`parse`] never panics and never stops at the first error: it returns the module it could
//! build and every diagnostic, recovering at `;` and `}`. Rendering diagnostics (with source lines
//! and carets) is the CLI's job; this crate only reports spans and messages.

pub mod ast;
mod diagnostic;

pub use ast::*;
pub use diagnostic::{Diagnostic, Severity};

/// The result of parsing: the (possibly partial) module and all diagnostics, in source order.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub module: Module,
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    /// True when some diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }
}

/// Parses a whole PTX file.
pub fn parse(source: &str) -> Parsed {
    let _ = source;
    todo!("parser")
}
