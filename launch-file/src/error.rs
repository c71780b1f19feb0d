//! A bad launch, as the user reads it: the message, where in the launch file (line, column and
//! the line's text under a caret) and what to do.

use std::fmt;

/// A bad launch: what is wrong, where (file, line, column, when it comes from a file) and what to
/// do about it.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchError {
    pub message: String,
    pub location: Option<Location>,
    pub help: Option<String>,
}

/// A 1-based position in a launch file, with the line's text for the caret.
#[derive(Debug, Clone, PartialEq)]
pub struct Location {
    pub path: String,
    pub line: usize,
    pub col: usize,
    pub line_text: String,
}

impl LaunchError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        LaunchError {
            message: message.into(),
            location: None,
            help: None,
        }
    }
    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    pub(crate) fn at(mut self, location: Option<Location>) -> Self {
        if self.location.is_none() {
            self.location = location;
        }
        self
    }
}

impl fmt::Display for LaunchError {
    /// `error: MESSAGE`, then ` --> path:line:col` with the line and a caret, then `= help:`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error: {}", self.message)?;
        if let Some(loc) = &self.location {
            let number = loc.line.to_string();
            let pad = " ".repeat(number.len());
            writeln!(f, "{pad}--> {}:{}:{}", loc.path, loc.line, loc.col)?;
            writeln!(f, "{pad} |")?;
            writeln!(f, "{number} | {}", loc.line_text)?;
            // The caret goes under the column's character (columns count characters).
            let before: String = loc
                .line_text
                .chars()
                .take(loc.col.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            writeln!(f, "{pad} | {before}^")?;
        }
        if let Some(help) = &self.help {
            writeln!(f, "  = help: {help}")?;
        }
        Ok(())
    }
}
