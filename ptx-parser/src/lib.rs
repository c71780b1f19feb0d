//! `ptx-parser`: PTX text to an AST with spans.
//!
//! [`parse`] never panics and never stops at the first error: it returns the module it could
//! build and every diagnostic, recovering at `;` and `}`. Rendering diagnostics (with source lines
//! and carets) is the CLI's job; this crate only reports spans and messages.
//!
//! The AST prints back to PTX through `Display` (see `printer`), and [`strip_spans`] makes
//! ASTs comparable ignoring spans: `strip_spans(&parse(&m.to_string()).module) == strip_spans(&m)`.

pub mod ast;
mod diagnostic;
mod keywords;
mod lexer;
mod parser;
mod printer;
mod spans;
pub mod synthetic;

pub use ast::*;
pub use diagnostic::{Diagnostic, Severity};
pub use spans::strip_spans;

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
    // Spans are `u32` offsets; a larger file is refused up front rather than mis-spanned.
    if u32::try_from(source.len()).is_err() {
        let d = Diagnostic::error(Span::default(), "PTX file larger than 4 GiB")
            .with_label("file too large")
            .with_help("split the module into several files");
        return Parsed { module: Module::default(), diagnostics: vec![d] };
    }
    let mut p = parser::Parser::new(source);
    let module = p.parse_module();
    let mut diagnostics = p.diags;
    // Lexer and parser diagnostics interleave; report them in source order (stable, so
    // diagnostics at one place keep the order they were found in).
    diagnostics.sort_by_key(|d| d.span.start);
    Parsed { module, diagnostics }
}
