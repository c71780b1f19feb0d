//! Trace formats (ARCHITECTURE.md section 5): RON (readable), JSON Lines (tools) and a compact
//! string (printed on every failure inside the exact `cudasem replay` command).
//!
//! * **RON**: the whole [`Trace`] as one pretty-printed value.
//! * **JSON Lines**: a header line (the trace without `choices` and `events`), then one line per
//!   choice: the bare [`Choice`], or `{"choice": ..., "events": [...]}` when events were
//!   recorded. `cudasem run --trace` writes this format (without events).
//! * **Compact**: `cudasem1:HASH:CHECK:CYCLE:INDICES`: the program hash (hex), a checksum of the
//!   choices (hex, [`CompactTrace::checksum_of`]), the lasso's cycle start (decimal, or `-`),
//!   and each choice as its *index in the machine's enabled set* at that step, so the string
//!   needs the program, launch and configuration beside it (the replay command names them),
//!   and a replayer resolves indices against the machine. Index digits are base 62
//!   (`0-9a-zA-Z`): one character for 0..=61, `_` and three digits up to 238327, `.` and six
//!   digits beyond; `-N-` (N in base 62) repeats the previous index N more times. Only
//!   characters a POSIX shell leaves alone appear, so the string needs no quoting.
//!
//! [`detect`] tells the three apart. Nothing here reads files.

use crate::{Choice, Event, MemChoice, TRACE_VERSION, Trace};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

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
    /// `cudasem1:...` (see the module documentation).
    Compact,
}

/// The prefix of compact traces (the `1` is the compact format's own version).
pub const COMPACT_PREFIX: &str = "cudasem1:";

/// Which format `text` is in: compact if it starts with [`COMPACT_PREFIX`], JSON Lines if its
/// first non-blank character is `{`, else RON.
pub fn detect(text: &str) -> Format {
    let t = text.trim_start();
    if t.starts_with(COMPACT_PREFIX) {
        Format::Compact
    } else if t.starts_with('{') {
        Format::JsonLines
    } else {
        Format::Ron
    }
}

fn check_version(v: u32) -> Result<(), FormatError> {
    if v > TRACE_VERSION {
        Err(FormatError::Version { found: v })
    } else {
        Ok(())
    }
}

/// The trace as pretty RON.
pub fn to_ron<L: Serialize, C: Serialize>(trace: &Trace<L, C>) -> Result<String, FormatError> {
    let pretty = ron::ser::PrettyConfig::new()
        .depth_limit(3)
        .separate_tuple_members(false);
    ron::ser::to_string_pretty(trace, pretty).map_err(|e| FormatError::Ron(e.to_string()))
}

/// Reads a RON trace.
pub fn from_ron<L: DeserializeOwned, C: DeserializeOwned>(
    text: &str,
) -> Result<Trace<L, C>, FormatError> {
    let t: Trace<L, C> = ron::from_str(text).map_err(|e| FormatError::Ron(e.to_string()))?;
    check_version(t.version)?;
    Ok(t)
}

/// One JSON Lines step line.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum StepLine {
    Full { choice: Choice, events: Vec<Event> },
    Bare(Choice),
}

/// The trace as JSON Lines (see the module documentation).
pub fn to_json_lines<L: Serialize, C: Serialize>(
    trace: &Trace<L, C>,
) -> Result<String, FormatError> {
    let err = |e: serde_json::Error| FormatError::Json {
        line: 0,
        message: e.to_string(),
    };
    let mut header = serde_json::to_value(trace).map_err(err)?;
    if let Some(obj) = header.as_object_mut() {
        obj.insert("choices".to_string(), serde_json::Value::Array(Vec::new()));
        obj.remove("events");
    }
    let mut out = serde_json::to_string(&header).map_err(err)?;
    out.push('\n');
    for (i, c) in trace.choices.iter().enumerate() {
        let line = match trace.events.as_ref().and_then(|e| e.get(i)) {
            Some(events) => serde_json::to_string(&StepLine::Full {
                choice: *c,
                events: events.clone(),
            }),
            None => serde_json::to_string(c),
        }
        .map_err(err)?;
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

/// Reads JSON Lines. Unknown header keys are ignored (`cudasem run --trace` adds `schedule` and
/// `max_steps`); events are kept when every step line has them.
pub fn from_json_lines<L: DeserializeOwned, C: DeserializeOwned>(
    text: &str,
) -> Result<Trace<L, C>, FormatError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (i, first) = lines.next().ok_or(FormatError::Empty)?;
    let mut trace: Trace<L, C> = serde_json::from_str(first).map_err(|e| FormatError::Json {
        line: i + 1,
        message: format!("bad trace header: {e}"),
    })?;
    check_version(trace.version)?;
    let mut events = Vec::new();
    let mut all_events = true;
    for (i, line) in lines {
        let step: StepLine = serde_json::from_str(line).map_err(|e| FormatError::Json {
            line: i + 1,
            message: format!("not a choice: {e}"),
        })?;
        match step {
            StepLine::Full { choice, events: ev } => {
                trace.choices.push(choice);
                events.push(ev);
            }
            StepLine::Bare(choice) => {
                trace.choices.push(choice);
                all_events = false;
            }
        }
    }
    if all_events && !events.is_empty() {
        trace.events = Some(events);
    }
    Ok(trace)
}

/// A compact trace: choices as indices into the enabled sets (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompactTrace {
    pub program_hash: u64,
    /// [`CompactTrace::checksum_of`] the choices the indices stand for.
    pub checksum: u32,
    /// A lasso's cycle start (an index into `indices`).
    pub cycle_start: Option<usize>,
    pub indices: Vec<u32>,
}

const DIGITS: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

fn digit_value(c: u8) -> Option<u32> {
    DIGITS.iter().position(|&d| d == c).map(|p| p as u32)
}

fn push_base62(out: &mut String, mut v: u64, width: usize) {
    let mut buf = vec![b'0'; width];
    for slot in buf.iter_mut().rev() {
        *slot = DIGITS[(v % 62) as usize];
        v /= 62;
    }
    out.extend(buf.into_iter().map(char::from));
}

fn base62(mut v: u64) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(DIGITS[(v % 62) as usize]);
        v /= 62;
        if v == 0 {
            break;
        }
    }
    digits.reverse();
    digits.into_iter().map(char::from).collect()
}

/// The most choices a compact trace expands to (512 MiB of indices): above the default step
/// bound of a run, far below what would exhaust memory.
pub const MAX_COMPACT_CHOICES: u64 = 1 << 27;

impl CompactTrace {
    /// A stable 32-bit checksum of a choice sequence (FNV-1a over a fixed encoding of each
    /// choice's kind and fields).
    pub fn checksum_of(choices: &[Choice]) -> u32 {
        let mut h: u32 = 0x811c_9dc5;
        let mut eat = |x: u64| {
            for b in x.to_le_bytes() {
                h ^= b as u32;
                h = h.wrapping_mul(0x0100_0193);
            }
        };
        for c in choices {
            match *c {
                Choice::Issue { grid, block, sm } => {
                    eat(0);
                    eat(grid as u64);
                    eat(block as u64);
                    eat(sm as u64);
                }
                Choice::Warp { block, warp } => {
                    eat(1);
                    eat(block as u64);
                    eat(warp as u64);
                }
                Choice::Target { block, warp, k } => {
                    eat(2);
                    eat(block as u64);
                    eat(warp as u64);
                    eat(k as u64);
                }
                Choice::Lanes { block, warp, mask } => {
                    eat(3);
                    eat(block as u64);
                    eat(warp as u64);
                    eat(mask);
                }
                Choice::EndBarrier { block, barrier } => {
                    eat(4);
                    eat(block as u64);
                    eat(barrier as u64);
                }
                Choice::Mem(m) => match m {
                    MemChoice::Step { op } => {
                        eat(5);
                        eat(op as u64);
                    }
                    MemChoice::EvictL1 { sm, line } => {
                        eat(6);
                        eat(sm as u64);
                        eat(line);
                    }
                    MemChoice::EvictL2 { line } => {
                        eat(7);
                        eat(line);
                    }
                    MemChoice::WriteBackL1 { sm, line } => {
                        eat(8);
                        eat(sm as u64);
                        eat(line);
                    }
                    MemChoice::WriteBackL2 { line } => {
                        eat(9);
                        eat(line);
                    }
                    MemChoice::Flush { sm } => {
                        eat(10);
                        eat(sm as u64);
                    }
                },
            }
        }
        h
    }

    /// The compact string.
    pub fn encode(&self) -> String {
        let mut out = format!(
            "{COMPACT_PREFIX}{:016x}:{:08x}:{}:",
            self.program_hash,
            self.checksum,
            self.cycle_start
                .map_or_else(|| "-".to_string(), |c| c.to_string())
        );
        let mut i = 0;
        while i < self.indices.len() {
            let v = self.indices[i];
            if v < 62 {
                out.push(char::from(DIGITS[v as usize]));
            } else if v < 62 * 62 * 62 {
                out.push('_');
                push_base62(&mut out, v as u64, 3);
            } else {
                out.push('.');
                push_base62(&mut out, v as u64, 6);
            }
            let mut run = 0u64;
            while i + 1 + (run as usize) < self.indices.len()
                && self.indices[i + 1 + run as usize] == v
            {
                run += 1;
            }
            // A run pays off from three repeats on (`-N-` is at least three characters).
            if run >= 3 {
                out.push('-');
                out.push_str(&base62(run));
                out.push('-');
                i += 1 + run as usize;
            } else {
                i += 1;
            }
        }
        out
    }

    /// Parses a compact string (surrounding whitespace allowed).
    pub fn parse(text: &str) -> Result<CompactTrace, FormatError> {
        let err = |m: String| FormatError::Compact(m);
        let rest = text
            .trim()
            .strip_prefix(COMPACT_PREFIX)
            .ok_or_else(|| err(format!("does not start with `{COMPACT_PREFIX}`")))?;
        let mut fields = rest.splitn(4, ':');
        let mut next = |what: &str| {
            fields
                .next()
                .ok_or_else(|| err(format!("missing the {what} field")))
        };
        let hash = next("program hash")?;
        let program_hash = u64::from_str_radix(hash, 16)
            .map_err(|_| err(format!("`{hash}` is not a program hash (16 hex digits)")))?;
        let check = next("checksum")?;
        let checksum = u32::from_str_radix(check, 16)
            .map_err(|_| err(format!("`{check}` is not a checksum (8 hex digits)")))?;
        let cycle = next("cycle start")?;
        let cycle_start = if cycle == "-" {
            None
        } else {
            Some(
                cycle
                    .parse()
                    .map_err(|_| err(format!("`{cycle}` is not a cycle start (a number or -)")))?,
            )
        };
        let body = next("choices")?.as_bytes();
        let mut indices: Vec<u32> = Vec::new();
        let mut at = 0;
        // `at`: where the token starts (for messages); its digits follow the marker.
        let fixed = |at: usize, width: usize| -> Result<u64, FormatError> {
            let digits = body
                .get(at + 1..at + 1 + width)
                .ok_or_else(|| err(format!("truncated index at character {at}")))?;
            digits.iter().try_fold(0u64, |v, &c| {
                let d = digit_value(c)
                    .ok_or_else(|| err(format!("bad digit `{}` at character {at}", c as char)))?;
                v.checked_mul(62)
                    .and_then(|v| v.checked_add(d as u64))
                    .ok_or_else(|| err(format!("number too large at character {at}")))
            })
        };
        while at < body.len() {
            match body[at] {
                b'_' => {
                    indices.push(fixed(at, 3)? as u32);
                    at += 4;
                }
                b'.' => {
                    let v = fixed(at, 6)?;
                    indices.push(
                        u32::try_from(v)
                            .map_err(|_| err(format!("index {v} too large at character {at}")))?,
                    );
                    at += 7;
                }
                b'-' => {
                    let end = body[at + 1..]
                        .iter()
                        .position(|&c| c == b'-')
                        .ok_or_else(|| err(format!("unclosed repeat at character {at}")))?;
                    let n = fixed(at, end)?;
                    let last = *indices
                        .last()
                        .ok_or_else(|| err("a repeat before the first index".to_string()))?;
                    // Bounded before anything is allocated: a short string must not expand
                    // into gigabytes of indices.
                    if n.saturating_add(indices.len() as u64) > MAX_COMPACT_CHOICES {
                        return Err(err(format!(
                            "repeat count {n} too large: a compact trace holds at most {MAX_COMPACT_CHOICES} choices"
                        )));
                    }
                    indices.extend(std::iter::repeat_n(last, n as usize));
                    at += end + 2;
                }
                c => {
                    indices
                        .push(digit_value(c).ok_or_else(|| {
                            err(format!("bad character `{}` at {at}", c as char))
                        })?);
                    at += 1;
                }
            }
        }
        if cycle_start.is_some_and(|c| c > indices.len()) {
            return Err(err(format!(
                "cycle start {} is beyond the {} choices",
                cycle_start.unwrap_or(0),
                indices.len()
            )));
        }
        Ok(CompactTrace {
            program_hash,
            checksum,
            cycle_start,
            indices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_round_trips_with_runs_and_large_indices() {
        let indices: Vec<u32> = [0, 0, 0, 0, 0, 0, 1, 61, 62, 3843, 300_000, 7, 7, 7, 2]
            .into_iter()
            .chain(std::iter::repeat_n(5, 1000))
            .collect();
        let t = CompactTrace {
            program_hash: 0xdead_beef_0123_4567,
            checksum: 0x1234_abcd,
            cycle_start: Some(3),
            indices,
        };
        let s = t.encode();
        assert_eq!(
            s,
            "cudasem1:deadbeef01234567:1234abcd:3:0-5-1Z_010_0ZZ.001g2I77725-g7-"
        );
        assert!(
            s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
        );
        assert_eq!(CompactTrace::parse(&s), Ok(t));
        assert_eq!(detect(&s), Format::Compact);
    }

    #[test]
    fn compact_repeats_and_numbers_are_bounded_before_allocation() {
        // Found by the CLI's fuzz harness: a long repeat count overflowed, and a short one
        // near 2^32 asked for 16 GiB of indices.
        let long = "cudasem1:a80691b78f85c997:ad1f0ba4:-:0-fa348d1a5ccd339d:f37c76e4:-:0";
        assert!(
            CompactTrace::parse(long)
                .unwrap_err()
                .to_string()
                .contains("too large")
        );
        let huge = "cudasem1:a80691b78f85c997:ad1f0ba4:-:0-4GfFC3-";
        assert!(
            CompactTrace::parse(huge)
                .unwrap_err()
                .to_string()
                .contains("at most")
        );
    }

    #[test]
    fn compact_errors_say_what() {
        let e = |s: &str| CompactTrace::parse(s).unwrap_err().to_string();
        assert_eq!(e("x"), "compact trace: does not start with `cudasem1:`");
        assert_eq!(
            e("cudasem1:zz:0:-:0"),
            "compact trace: `zz` is not a program hash (16 hex digits)"
        );
        assert_eq!(
            e("cudasem1:1:0:-:0-3"),
            "compact trace: unclosed repeat at character 1"
        );
        assert_eq!(
            e("cudasem1:1:0:-:_0"),
            "compact trace: truncated index at character 0"
        );
    }

    #[test]
    fn json_lines_and_ron_round_trip() {
        let mut t: Trace<String, u32> = Trace::new(7, "launch".to_string(), 3, Some(9));
        t.choices = vec![
            Choice::Issue {
                grid: 0,
                block: 0,
                sm: 1,
            },
            Choice::Warp { block: 0, warp: 0 },
        ];
        t.policy = Some("random:9".to_string());
        t.cycle_start = Some(1);
        let j = to_json_lines(&t).unwrap();
        assert_eq!(j.lines().count(), 3);
        assert_eq!(detect(&j), Format::JsonLines);
        assert_eq!(from_json_lines::<String, u32>(&j), Ok(t.clone()));
        let r = to_ron(&t).unwrap();
        assert_eq!(detect(&r), Format::Ron);
        assert_eq!(from_ron::<String, u32>(&r), Ok(t.clone()));
        t.events = Some(vec![Vec::new(), Vec::new()]);
        let j = to_json_lines(&t).unwrap();
        assert_eq!(from_json_lines::<String, u32>(&j), Ok(t));
    }

    #[test]
    fn newer_versions_are_refused() {
        let mut t: Trace<u8, u8> = Trace::new(1, 0, 0, None);
        t.version = TRACE_VERSION + 1;
        let j = to_json_lines(&t).unwrap();
        assert_eq!(
            from_json_lines::<u8, u8>(&j),
            Err(FormatError::Version {
                found: TRACE_VERSION + 1
            })
        );
    }
}
