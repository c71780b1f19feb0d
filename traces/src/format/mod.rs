//! Trace formats (ARCHITECTURE.md section 5): RON (readable), JSON Lines (tools) and a compact
//! string (printed on every failure inside the exact `cudasem replay` command).
//!
//! * **RON**: the whole [`Trace`](crate::Trace) as one pretty-printed value.
//! * **JSON Lines**: a header line (the trace without `choices` and `events`), then one line per
//!   choice: the bare [`Choice`](crate::Choice), or `{"choice": ..., "events": [...]}` when events were
//!   recorded. `cudasem run --trace` writes this format (without events).
//! * **Compact, version 2** (printed): `cudasem2:HASH:COUNT:CYCLE:TABLE:BODY`. HASH is the
//!   program hash (hex), COUNT the number of choices (decimal), CYCLE the lasso's cycle start
//!   (decimal, or `-`). Choices are written by *identity*, never by their position in the
//!   machine's enabled set, so a string stays valid whatever order the machine lists its
//!   enabled choices in: TABLE lists the distinct choices, the most frequent first (ties in
//!   the order they first occur),
//!   each an upper-case kind letter and its fields in base 36 (`0-9a-z`) separated by `_`
//!   ([`Choice`](crate::Choice): `I` issue block_sm of grid 0, `J` issue grid_block_sm, `W` warp block_warp,
//!   `T` target block_warp_k, `L` lanes block_warp_mask, `R` the same for a contiguous mask:
//!   block_warp_first_count, `B` barrier end block_barrier, and
//!   the cached memory's `M` step op, `E` evict L1 sm_line, `F` evict L2 line, `K` write back
//!   L1 sm_line, `Q` write back L2 line, `X` flush sm; `P` pick block_warp_lane_k: a lane's
//!   result of a call to a function without a body); BODY gives each choice as its table
//!   position (base 62, below). The string needs the
//!   program, launch and configuration beside it (the replay command names them); a replayer
//!   checks each choice against the enabled set and reports the first one that is not enabled.
//! * **Compact, version 1** (read only): `cudasem1:HASH:CHECK:CYCLE:INDICES`: each choice as
//!   its index in the machine's enabled set at that step, with a checksum of the choices the
//!   indices stood for. Any change to the enabled set's order invalidates such strings (the
//!   checksum detects it), hence version 2.
//!
//! Numbers in both bodies (table positions, enabled-set indices) are base 62 (`0-9a-zA-Z`):
//! one character for 0..=61, `_` and three digits up to 238327, `.` and six digits beyond;
//! `-N-` (N in base 62) repeats the previous number N more times. Only characters a POSIX
//! shell leaves alone appear, so the string needs no quoting.
//!
//! [`detect`] tells the formats apart. Nothing here reads files.

mod compact_v1;
mod compact_v2;
mod numbers;
mod serial;

pub use compact_v1::CompactV1;
pub use compact_v2::CompactTrace;
pub use serial::{from_json_lines, from_ron, to_json_lines, to_ron};

use crate::TRACE_VERSION;

/// The most choices a compact trace expands to (512 MiB of indices): above the default step
/// bound of a run, far below what would exhaust memory.
pub const MAX_COMPACT_CHOICES: u64 = 1 << 27;

/// Why a trace could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// A JSON Lines line that is not what it should be (`line` is 1-based).
    #[error("line {line}: {message}")]
    Json { line: usize, message: String },
    /// RON syntax or shape.
    #[error("{0}")]
    Ron(String),
    /// Written by a newer cudasem.
    #[error("trace version {found} is newer than this cudasem reads (version {TRACE_VERSION})")]
    Version { found: u32 },
    /// A malformed compact string.
    #[error("compact trace: {0}")]
    Compact(String),
    /// Nothing in the input.
    #[error("the trace is empty")]
    Empty,
}

/// The three encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// One RON value.
    Ron,
    /// A header line and one line per choice.
    JsonLines,
    /// `cudasem2:...` or `cudasem1:...` (see the module documentation).
    Compact,
}

/// The prefix of the compact traces this cudasem prints (the `2` is the compact format's own
/// version, [`COMPACT_VERSION`]).
pub const COMPACT_PREFIX: &str = "cudasem2:";

/// The prefix of version 1 compact traces (enabled-set indices), still read.
pub const COMPACT_V1_PREFIX: &str = "cudasem1:";

/// The compact format's version this cudasem prints.
pub const COMPACT_VERSION: u32 = 2;

/// The version of a string shaped like a compact trace (`cudasem` + decimal version + `:`),
/// whether or not this cudasem reads that version.
pub fn compact_version(text: &str) -> Option<u32> {
    let rest = text.trim_start().strip_prefix("cudasem")?;
    let end = rest.find(':')?;
    let digits = &rest[..end];
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Which format `text` is in: compact if it starts like a compact trace of any version
/// (`cudasemN:`), JSON Lines if its first non-blank character is `{`, else RON.
pub fn detect(text: &str) -> Format {
    let t = text.trim_start();
    if compact_version(t).is_some() {
        Format::Compact
    } else if t.starts_with('{') {
        Format::JsonLines
    } else {
        Format::Ron
    }
}

pub(super) fn check_version(v: u32) -> Result<(), FormatError> {
    if v > TRACE_VERSION {
        Err(FormatError::Version { found: v })
    } else {
        Ok(())
    }
}

/// A compact string of either version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compact {
    /// Enabled-set indices: resolved against the machine, checked by the checksum.
    V1(CompactV1),
    /// Choices by identity.
    V2(CompactTrace),
}

/// The `:`-separated fields of a compact string after its version prefix, read in order; a
/// missing one is named in the error.
pub(super) struct Fields<'a> {
    fields: std::str::SplitN<'a, char>,
}

impl<'a> Fields<'a> {
    /// The fields of `text` (surrounding whitespace allowed) after `prefix`, at most `count`.
    pub(super) fn of(text: &'a str, prefix: &str, count: usize) -> Result<Fields<'a>, FormatError> {
        let rest = text
            .trim()
            .strip_prefix(prefix)
            .ok_or_else(|| FormatError::Compact(format!("does not start with `{prefix}`")))?;
        Ok(Fields {
            fields: rest.splitn(count, ':'),
        })
    }

    pub(super) fn next(&mut self, what: &str) -> Result<&'a str, FormatError> {
        self.fields
            .next()
            .ok_or_else(|| FormatError::Compact(format!("missing the {what} field")))
    }

    /// The program hash: 16 hex digits.
    pub(super) fn program_hash(&mut self) -> Result<u64, FormatError> {
        let hash = self.next("program hash")?;
        u64::from_str_radix(hash, 16).map_err(|_| {
            FormatError::Compact(format!("`{hash}` is not a program hash (16 hex digits)"))
        })
    }

    /// Where the lasso's cycle starts: a number, or `-` for none.
    pub(super) fn cycle_start(&mut self) -> Result<Option<usize>, FormatError> {
        let cycle = self.next("cycle start")?;
        if cycle == "-" {
            return Ok(None);
        }
        cycle.parse().map(Some).map_err(|_| {
            FormatError::Compact(format!("`{cycle}` is not a cycle start (a number or -)"))
        })
    }
}

/// Parses a compact string of any version this cudasem reads; another version is refused with
/// a message that names it.
pub fn parse_compact(text: &str) -> Result<Compact, FormatError> {
    match compact_version(text) {
        Some(1) => CompactV1::parse(text).map(Compact::V1),
        Some(COMPACT_VERSION) => CompactTrace::parse(text).map(Compact::V2),
        Some(v) => Err(FormatError::Compact(format!(
            "this is a version {v} string (`cudasem{v}:`), and this cudasem reads versions 1 and {COMPACT_VERSION}: replay it with the cudasem that printed it"
        ))),
        None => Err(FormatError::Compact(format!(
            "does not start with `{COMPACT_PREFIX}` (or `{COMPACT_V1_PREFIX}`)"
        ))),
    }
}

#[cfg(test)]
mod tests;
