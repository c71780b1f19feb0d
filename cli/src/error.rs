//! What goes wrong in a step of a command, as a type: a flag's value written wrong, a launch
//! file's diagnostic, a PTX module that did not load, other input the command cannot use, a
//! command the input rules out, a file that cannot be read or written, a broken invariant of
//! cudasem itself. [`crate::failure::Failure`] turns an [`Error`] into what the command prints
//! and its exit code (2 for every kind but [`Error::Internal`], which is 3).
//!
//! Each kind's text is the one the user reads: `error: ...` with `  = help: ...` lines where
//! the command says what to do, except [`Error::Usage`] (clap prints it after its own
//! `error: invalid value ...`) and [`Error::Io`], which [`crate::failure::Failure`] frames.

use crate::launch::LaunchError;

/// Why a step of a command failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag's value written wrong (`--timeout x`): what is wrong and how to write it.
    #[error("{0}")]
    Usage(String),
    /// A launch or device file written wrong, or a launch the program does not take: the
    /// launch file's own diagnostic (file, line and column with a caret, what to do).
    #[error("{0}")]
    Launch(LaunchError),
    /// The PTX (or CUDA) module `file` did not parse or load. Its diagnostics (file, line and
    /// column with a caret) were rendered to stderr as they were found: nothing more to print.
    #[error("")]
    Load { file: String },
    /// Other input the command cannot use (a trace of another program, a device beyond what
    /// cudasem models, no launch at all): the message as the user reads it.
    #[error("{0}")]
    Input(String),
    /// The command does not take this input or flag (a program of several launches where one
    /// launch is needed, `--expect` where nothing checks it): what to do instead.
    #[error("{0}")]
    Refused(String),
    /// `path` could not be read or written (`action`: "cannot read", "cannot write the
    /// report"...), with what to do when there is more to say than the system's reason.
    #[error("{action} {path}: {source}{}", help.map(|h| format!("\n  = help: {h}")).unwrap_or_default())]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
        help: Option<&'static str>,
    },
    /// An invariant of cudasem broke: a bug in cudasem, not in the program or the input.
    #[error("{0}")]
    Internal(String),
}

impl Error {
    /// `action path: source`, with nothing more to say.
    pub fn io(action: &'static str, path: impl std::fmt::Display, source: std::io::Error) -> Error {
        Error::Io {
            action,
            path: path.to_string(),
            source,
            help: None,
        }
    }

    /// The text printed on stderr for this error, as `error: ...` lines (empty when it was
    /// already rendered).
    pub fn rendered(&self) -> String {
        match self {
            Error::Io { .. } => format!("error: {self}\n"),
            _ => self.to_string(),
        }
    }
}

impl From<LaunchError> for Error {
    fn from(e: LaunchError) -> Error {
        Error::Launch(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_name_the_path_and_the_help() {
        let e = Error::Io {
            action: "cannot read trace",
            path: "t.jsonl".to_string(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
            help: Some("TRACE is a file"),
        };
        assert_eq!(
            e.rendered(),
            "error: cannot read trace t.jsonl: gone\n  = help: TRACE is a file\n"
        );
        let plain = Error::io("cannot write", "p.html", std::io::Error::other("full"));
        assert_eq!(plain.to_string(), "cannot write p.html: full");
        assert_eq!(
            Error::Load {
                file: "k.ptx".into()
            }
            .rendered(),
            ""
        );
    }
}
