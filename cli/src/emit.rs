//! Writing a command's report to stdout.
//!
//! A reader that went away (`cudasem litmus ... | head -1`: a broken pipe) ends the output
//! quietly, as Unix tools do: the command still exits with the code its result gives. Any other
//! write error (a full disk, `> /dev/full`) is an error of the command: the caller reports it on
//! stderr and exits 2, since a report nobody received must not look like a success.

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once stdout's reader has gone away: commands that print per input file stop early.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether stdout's reader has gone away (a broken pipe): nothing printed from now on is read.
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Writes `text` to stdout and flushes it. `Err` is the message for stderr when the write
/// failed for another reason than a closed pipe.
pub fn stdout(text: &str) -> Result<(), crate::error::Error> {
    crate::timeout::reporting();
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => Err(crate::error::Error::io(
            "cannot write the output to",
            "stdout",
            e,
        )),
    }
}

/// [`stdout`] for commands that return an [`crate::Exit`] directly: a write error is
/// reported here and turns the outcome into [`crate::Exit::BadInput`].
pub fn report(text: &str, outcome: crate::Exit) -> crate::Exit {
    match stdout(text) {
        Ok(()) => outcome,
        Err(error) => crate::failure::Failure::from(error).report(),
    }
}
