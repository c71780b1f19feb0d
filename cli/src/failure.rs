//! Why a command failed, as a type: bad input (exit 2) or an internal error, a broken
//! invariant of cudasem itself (exit 3). Bad input says what to change; an internal error says
//! that it is a bug in cudasem and gives the command line that reproduces it, to report.
//!
//! Plain `String` errors convert into [`Failure::BadInput`] (`?` works on the helpers that
//! return them); only [`Failure::internal`] makes the other kind.

use crate::Outcome;

/// A command's failure.
#[derive(Debug)]
pub enum Failure {
    /// The input or usage is wrong: the message (already in `error: ...` form) says why. Empty
    /// when it was already rendered (PTX diagnostics).
    BadInput(String),
    /// An invariant of cudasem broke: what broke.
    Internal(String),
}

impl Failure {
    /// An internal error: `what` broke.
    pub fn internal(what: impl std::fmt::Display) -> Failure {
        Failure::Internal(what.to_string())
    }

    /// Prints the failure to stderr and gives the outcome it maps to.
    pub fn report(self) -> Outcome {
        match self {
            Failure::BadInput(message) => {
                if !message.is_empty() {
                    eprint!("{message}");
                    if !message.ends_with('\n') {
                        eprintln!();
                    }
                }
                Outcome::BadInput
            }
            Failure::Internal(what) => {
                eprintln!("error: internal error: {}", what.trim_end());
                eprintln!(
                    "  = this is a bug in cudasem, not in the program: please report it with the command that shows it:"
                );
                eprintln!("    {}", own_command_line());
                Outcome::Internal
            }
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::BadInput(message)
    }
}

/// The command line as typed, with `cudasem` for the binary's path.
fn own_command_line() -> String {
    let mut argv: Vec<String> = std::env::args().collect();
    if let Some(first) = argv.first_mut() {
        *first = "cudasem".to_string();
    }
    crate::output::shell_command(&argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_get_their_own_exit_code_and_strings_are_bad_input() {
        assert!(matches!(
            Failure::internal("an invariant").report(),
            Outcome::Internal
        ));
        let f: Failure = "error: no such file\n".to_string().into();
        assert!(matches!(f, Failure::BadInput(_)));
        assert!(matches!(f.report(), Outcome::BadInput));
    }
}
