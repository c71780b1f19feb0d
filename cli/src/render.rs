//! Rendering of parser and loader diagnostics as `file:line:col` with the source line and a caret
//! (codespan-reporting), to stderr. Colour only on a terminal and when `NO_COLOR` is unset, so
//! that snapshots of the output are stable.

use codespan_reporting::diagnostic::{Diagnostic as Report, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor};
use ptx_parser::{Diagnostic, Severity};
use std::io::IsTerminal;

/// Converts a cudasem diagnostic to codespan's form, clamping spans into the source.
fn report(d: &Diagnostic, len: usize) -> Report<()> {
    let clamp = |s: ptx_parser::Span| {
        let start = (s.start as usize).min(len);
        start..(s.end as usize).clamp(start, len)
    };
    let mut labels = vec![Label::primary((), clamp(d.span)).with_message(&d.label)];
    labels.extend(
        d.secondary
            .iter()
            .map(|(s, m)| Label::secondary((), clamp(*s)).with_message(m)),
    );
    let base = match d.severity {
        Severity::Error => Report::error(),
        Severity::Warning => Report::warning(),
    };
    let mut r = base.with_message(&d.message).with_labels(labels);
    if let Some(h) = &d.help {
        r = r.with_notes(vec![format!("help: {h}")]);
    }
    r
}

/// Prints `diags` against `source` (named `path`) to stderr.
pub fn diagnostics(path: &str, source: &str, diags: &[Diagnostic]) {
    if diags.is_empty() {
        return;
    }
    let colour = std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal();
    let choice = if colour {
        termcolor::ColorChoice::Auto
    } else {
        termcolor::ColorChoice::Never
    };
    let stream = termcolor::StandardStream::stderr(choice);
    let mut lock = stream.lock();
    let file = SimpleFile::new(path, source);
    let config = term::Config::default();
    for d in diags {
        // A rendering failure (a span outside the file) falls back to a plain line.
        if term::emit_to_write_style(&mut lock, &config, &file, &report(d, source.len())).is_err() {
            eprintln!("{path}: {}", d.message);
        }
    }
}

/// 1-based (line, column) of a byte offset, for JSON output.
pub fn line_col(source: &str, offset: u32) -> (usize, usize) {
    let offset = (offset as usize).min(source.len());
    let before = source.get(..offset).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map(|i| offset - i).unwrap_or(offset + 1);
    (line, col)
}
