//! Why a command failed, as a type: bad input (exit 2) or an internal error, a broken
//! invariant of cudasem itself (exit 3). Bad input says what to change; an internal error says
//! that it is a bug in cudasem and gives the command line that reproduces it, to report, and
//! the `cudasem replay` command of the schedule that shows it when there is one. (A program
//! that misbehaves is no failure of the command: its report exits 1.)
//!
//! An [`Error`] converts into a [`Failure`] (`?` works on the helpers that return one): its
//! [`Error::Internal`] kind into [`Failure::Internal`], every other kind into
//! [`Failure::BadInput`].

use crate::Exit;
use crate::error::Error;

/// A command's failure.
#[derive(Debug)]
pub enum Failure {
    /// The input or usage is wrong: the error says why (nothing more when it was already
    /// rendered, as PTX diagnostics are).
    BadInput(Error),
    /// An invariant of cudasem broke: what broke, and the replay command of the schedule that
    /// shows it, when one is known.
    Internal {
        what: String,
        replay: Option<String>,
    },
}

impl Failure {
    /// An internal error: `what` broke.
    pub fn internal(what: impl std::fmt::Display) -> Failure {
        Failure::Internal {
            what: what.to_string(),
            replay: None,
        }
    }

    /// The machine refused one of its own enabled choices: an internal error, with the replay
    /// command of the schedule that leads to the refusal on `setup`'s (fresh) machine when the
    /// refusal knows every choice before it.
    pub fn refused(
        setup: &crate::options::Setup,
        options: &crate::options::RunOptions,
        refused: &scheduler::Refused,
    ) -> Failure {
        let complete = refused.prefix.len() as u64 == refused.step;
        let replay = complete
            .then(|| {
                crate::commands::replay::reproduce(
                    setup,
                    options,
                    &refused.schedule(),
                    None,
                    "refused".to_string(),
                    None,
                )
                .ok()
            })
            .flatten();
        Failure::Internal {
            what: refused.to_string(),
            replay,
        }
    }

    /// Runs a command body and reports its failure: the outcome to exit with.
    pub fn outcome(result: Result<Exit, Failure>) -> Exit {
        result.unwrap_or_else(Failure::report)
    }

    /// Prints the failure to stderr and gives the outcome it maps to.
    pub fn report(self) -> Exit {
        match self {
            Failure::BadInput(error) => {
                let message = error.rendered();
                if !message.is_empty() {
                    eprint!("{message}");
                    if !message.ends_with('\n') {
                        eprintln!();
                    }
                }
                Exit::BadInput
            }
            Failure::Internal { what, replay } => {
                eprintln!("error: internal error: {}", what.trim_end());
                eprintln!(
                    "  = this is a bug in cudasem, not in the program: please report it with the command that shows it:"
                );
                eprintln!("    {}", own_command_line());
                if let Some(replay) = replay {
                    eprintln!("  = the schedule that shows it: {replay}");
                }
                Exit::Internal
            }
        }
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        match error {
            Error::Internal(what) => Failure::internal(what),
            other => Failure::BadInput(other),
        }
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
    fn internal_errors_get_their_own_exit_code_and_the_others_are_bad_input() {
        assert!(matches!(
            Failure::internal("an invariant").report(),
            Exit::Internal
        ));
        let internal: Failure = Error::Internal("an invariant".to_string()).into();
        assert!(matches!(internal.report(), Exit::Internal));
        for error in [
            Error::Usage("`x` is not a number".to_string()),
            Error::Input("error: no such file\n".to_string()),
            Error::Refused("error: one launch only\n".to_string()),
            Error::Load {
                file: "k.ptx".to_string(),
            },
            Error::io("cannot read", "k.ptx", std::io::Error::other("gone")),
        ] {
            let f: Failure = error.into();
            assert!(matches!(f, Failure::BadInput(_)));
            assert!(matches!(f.report(), Exit::BadInput));
        }
        let with_replay = Failure::Internal {
            what: "the machine refused its own enabled choice".to_string(),
            replay: Some("cudasem replay cudasem2:... k.ptx".to_string()),
        };
        assert!(matches!(with_replay.report(), Exit::Internal));
    }
}
