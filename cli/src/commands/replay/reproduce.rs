//! The `cudasem replay ...` command that reproduces a schedule: a compact string in the command
//! itself while it is short, else a JSON Lines trace file.

use super::trace::{compact_of, save_trace, trace_of};
use crate::error::Error;
use crate::options::{RunOptions, Setup};
use traces::Choice;
use traces::format::CompactV1;

/// The longest compact trace printed inline: far below Linux's 128 KiB limit on one shell
/// argument, and still a line one can copy.
const INLINE_COMPACT_MAX: usize = 4096;

/// The longest schedule written to a replay trace file (about 30 MB of JSON Lines).
const TRACE_FILE_MAX_CHOICES: usize = 1_000_000;

/// `cudasem replay COMPACT FILE.ptx ...` when `choices` fit in a compact string short enough
/// to print inline; `None` when they do not.
pub fn compact_command(
    setup: &Setup,
    options: &RunOptions,
    choices: &[Choice],
    cycle_start: Option<usize>,
) -> Result<Option<String>, Error> {
    let compact = compact_of(setup.program.hash, choices, cycle_start);
    Ok((compact.len() <= INLINE_COMPACT_MAX)
        .then(|| crate::options::replay_command(&compact, &setup.ptx_path, options)))
}

/// The `cudasem replay ...` command that reproduces `choices` on `setup`'s launch, the one
/// helper behind every failure that `run`, `fuzz` and `explore` print. Short schedules become
/// a compact string in the command itself; longer ones are written as a JSON Lines trace
/// into the system's temporary directory, named by the program hash and the choices'
/// checksum so that the same failure always names the same file.
pub fn reproduce(
    setup: &Setup,
    options: &RunOptions,
    choices: &[Choice],
    cycle_start: Option<usize>,
    policy: String,
    seed: Option<u64>,
) -> Result<String, Error> {
    if let Some(command) = compact_command(setup, options, choices, cycle_start)? {
        return Ok(command);
    }
    if choices.len() > TRACE_FILE_MAX_CHOICES {
        return Ok(format!(
            "(none: the schedule's {} choices are more than the {TRACE_FILE_MAX_CHOICES} a replay trace is written for)",
            choices.len()
        ));
    }
    let path = std::env::temp_dir().join(format!(
        "cudasem-{:016x}-{:08x}-{}.jsonl",
        setup.program.hash,
        CompactV1::checksum_of(choices),
        choices.len()
    ));
    let mut trace = trace_of(setup, choices.to_vec(), policy, seed);
    trace.cycle_start = cycle_start;
    save_trace(&path, &trace)?;
    // The file carries the launch and configuration: only the PTX path is needed.
    Ok(crate::output::shell_command(&[
        "cudasem".to_string(),
        "replay".to_string(),
        path.display().to_string(),
        setup.ptx_path.clone(),
    ]))
}
