//! Trace formats (ARCHITECTURE.md section 5): RON (readable), JSON Lines (tools) and a compact
//! string (printed on every failure inside the exact `cudasem replay` command).
//!
//! * **RON**: the whole [`Trace`] as one pretty-printed value.
//! * **JSON Lines**: a header line (the trace without `choices` and `events`), then one line per
//!   choice: the bare [`Choice`], or `{"choice": ..., "events": [...]}` when events were
//!   recorded. `cudasem run --trace` writes this format (without events).
//! * **Compact, version 2** (printed): `cudasem2:HASH:COUNT:CYCLE:TABLE:BODY`. HASH is the
//!   program hash (hex), COUNT the number of choices (decimal), CYCLE the lasso's cycle start
//!   (decimal, or `-`). Choices are written by *identity*, never by their position in the
//!   machine's enabled set, so a string stays valid whatever order the machine lists its
//!   enabled choices in: TABLE lists the distinct choices, the most frequent first (ties in
//!   the order they first occur),
//!   each an upper-case kind letter and its fields in base 36 (`0-9a-z`) separated by `_`
//!   ([`Choice`]: `I` issue block_sm of grid 0, `J` issue grid_block_sm, `W` warp block_warp,
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

/// Appends `numbers` in the compact body encoding (module documentation): base 62 digits, runs
/// of one number as `-N-`.
fn encode_numbers(out: &mut String, numbers: &[u32]) {
    let mut i = 0;
    while i < numbers.len() {
        let v = numbers[i];
        if v < 62 {
            out.push(char::from(DIGITS[v as usize]));
        } else if v < 62 * 62 * 62 {
            out.push('_');
            push_base62(out, v as u64, 3);
        } else {
            out.push('.');
            push_base62(out, v as u64, 6);
        }
        let run = numbers[i + 1..].iter().take_while(|&&n| n == v).count();
        // A run pays off from three repeats on (`-N-` is at least three characters).
        if run >= 3 {
            out.push('-');
            out.push_str(&base62(run as u64));
            out.push('-');
            i += 1 + run;
        } else {
            i += 1;
        }
    }
}

/// Reads the compact body encoding, at most [`MAX_COMPACT_CHOICES`] numbers.
fn decode_numbers(body: &str) -> Result<Vec<u32>, FormatError> {
    let err = |m: String| FormatError::Compact(m);
    let body = body.as_bytes();
    let mut numbers: Vec<u32> = Vec::new();
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
        if numbers.len() as u64 >= MAX_COMPACT_CHOICES {
            return Err(err(format!(
                "a compact trace holds at most {MAX_COMPACT_CHOICES} choices"
            )));
        }
        match body[at] {
            b'_' => {
                numbers.push(fixed(at, 3)? as u32);
                at += 4;
            }
            b'.' => {
                let v = fixed(at, 6)?;
                numbers.push(
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
                let last = *numbers
                    .last()
                    .ok_or_else(|| err("a repeat before the first index".to_string()))?;
                // Bounded before anything is allocated: a short string must not expand
                // into gigabytes of indices.
                if n.saturating_add(numbers.len() as u64) > MAX_COMPACT_CHOICES {
                    return Err(err(format!(
                        "repeat count {n} too large: a compact trace holds at most {MAX_COMPACT_CHOICES} choices"
                    )));
                }
                numbers.extend(std::iter::repeat_n(last, n as usize));
                at += end + 2;
            }
            c => {
                numbers.push(
                    digit_value(c)
                        .ok_or_else(|| err(format!("bad character `{}` at {at}", c as char)))?,
                );
                at += 1;
            }
        }
    }
    Ok(numbers)
}

/// A version 1 compact trace: choices as indices into the enabled sets (see the module
/// documentation). Read, no longer printed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompactV1 {
    pub program_hash: u64,
    /// [`CompactV1::checksum_of`] the choices the indices stand for.
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

impl CompactV1 {
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
                Choice::Pick {
                    block,
                    warp,
                    lane,
                    k,
                } => {
                    eat(11);
                    eat(block as u64);
                    eat(warp as u64);
                    eat(lane as u64);
                    eat(k as u64);
                }
            }
        }
        h
    }

    /// The compact string.
    pub fn encode(&self) -> String {
        let mut out = format!(
            "{COMPACT_V1_PREFIX}{:016x}:{:08x}:{}:",
            self.program_hash,
            self.checksum,
            self.cycle_start
                .map_or_else(|| "-".to_string(), |c| c.to_string())
        );
        encode_numbers(&mut out, &self.indices);
        out
    }

    /// Parses a compact string (surrounding whitespace allowed).
    pub fn parse(text: &str) -> Result<CompactV1, FormatError> {
        let err = |m: String| FormatError::Compact(m);
        let mut fields = Fields::of(text, COMPACT_V1_PREFIX, 4)?;
        let program_hash = fields.program_hash()?;
        let check = fields.next("checksum")?;
        let checksum = u32::from_str_radix(check, 16)
            .map_err(|_| err(format!("`{check}` is not a checksum (8 hex digits)")))?;
        let cycle_start = fields.cycle_start()?;
        let indices = decode_numbers(fields.next("choices")?)?;
        if cycle_start.is_some_and(|c| c > indices.len()) {
            return Err(err(format!(
                "cycle start {} is beyond the {} choices",
                cycle_start.unwrap_or(0),
                indices.len()
            )));
        }
        Ok(CompactV1 {
            program_hash,
            checksum,
            cycle_start,
            indices,
        })
    }
}

/// A compact trace (version 2): the choices themselves, by identity (see the module
/// documentation).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompactTrace {
    pub program_hash: u64,
    /// A lasso's cycle start (an index into `choices`).
    pub cycle_start: Option<usize>,
    pub choices: Vec<Choice>,
}

/// A choice's table entry: its kind letter (upper case) and fields (module documentation).
fn choice_fields(c: &Choice) -> (char, Vec<u64>) {
    match *c {
        // Grid 0, the only grid of a launch, leaves its field out.
        Choice::Issue { grid: 0, block, sm } => ('I', vec![block.into(), sm.into()]),
        Choice::Issue { grid, block, sm } => ('J', vec![grid.into(), block.into(), sm.into()]),
        Choice::Warp { block, warp } => ('W', vec![block.into(), warp.into()]),
        Choice::Target { block, warp, k } => ('T', vec![block.into(), warp.into(), k.into()]),
        // A contiguous group of lanes (the usual case) as its first lane and count.
        Choice::Lanes { block, warp, mask }
            if mask != 0 && ((mask >> mask.trailing_zeros()).wrapping_add(1)).is_power_of_two()
                || mask == u64::MAX =>
        {
            let (first, count) = (mask.trailing_zeros(), mask.count_ones());
            (
                'R',
                vec![block.into(), warp.into(), first.into(), count.into()],
            )
        }
        Choice::Lanes { block, warp, mask } => ('L', vec![block.into(), warp.into(), mask]),
        Choice::EndBarrier { block, barrier } => ('B', vec![block.into(), barrier.into()]),
        Choice::Mem(m) => match m {
            MemChoice::Step { op } => ('M', vec![op.into()]),
            MemChoice::EvictL1 { sm, line } => ('E', vec![sm.into(), line]),
            MemChoice::EvictL2 { line } => ('F', vec![line]),
            MemChoice::WriteBackL1 { sm, line } => ('K', vec![sm.into(), line]),
            MemChoice::WriteBackL2 { line } => ('Q', vec![line]),
            MemChoice::Flush { sm } => ('X', vec![sm.into()]),
        },
        Choice::Pick {
            block,
            warp,
            lane,
            k,
        } => ('P', vec![block.into(), warp.into(), lane.into(), k.into()]),
    }
}

/// Table fields: base 36, lower case, so that an upper-case kind letter starts each entry.
const FIELD_DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";

fn push_field(out: &mut String, mut v: u64) {
    let mut digits = [0u8; 13];
    let mut n = 0;
    loop {
        digits[n] = FIELD_DIGITS[(v % 36) as usize];
        n += 1;
        v /= 36;
        if v == 0 {
            break;
        }
    }
    out.extend(digits[..n].iter().rev().map(|&d| char::from(d)));
}

/// The choice of a table entry (`entry` is its position, for messages).
fn choice_of(text: &str, entry: usize) -> Result<Choice, FormatError> {
    let err = |m: String| FormatError::Compact(format!("table entry {entry} `{text}`: {m}"));
    let mut chars = text.chars();
    let kind = chars.next().ok_or_else(|| err("empty".to_string()))?;
    let rest = chars.as_str();
    let fields: Vec<u64> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split('_')
            .map(|f| {
                if f.is_empty() {
                    return Err(err("an empty field".to_string()));
                }
                f.bytes().try_fold(0u64, |v, c| {
                    let d = FIELD_DIGITS
                        .iter()
                        .position(|&x| x == c)
                        .ok_or_else(|| err(format!("bad digit `{}`", c as char)))?;
                    v.checked_mul(36)
                        .and_then(|v| v.checked_add(d as u64))
                        .ok_or_else(|| err("a field too large".to_string()))
                })
            })
            .collect::<Result<_, _>>()?
    };
    let want = match kind {
        'R' | 'P' => 4,
        'J' | 'T' | 'L' => 3,
        'I' | 'W' | 'B' | 'E' | 'K' => 2,
        'M' | 'F' | 'Q' | 'X' => 1,
        _ => {
            return Err(err(format!(
                "`{kind}` is not a choice kind (one of I J W T L R B M E F K Q X P)"
            )));
        }
    };
    if fields.len() != want {
        return Err(err(format!("{} fields, `{kind}` has {want}", fields.len())));
    }
    let small = |i: usize| {
        u32::try_from(fields[i]).map_err(|_| err(format!("field {} too large", fields[i])))
    };
    Ok(match kind {
        'I' => Choice::Issue {
            grid: 0,
            block: small(0)?,
            sm: small(1)?,
        },
        'J' => Choice::Issue {
            grid: small(0)?,
            block: small(1)?,
            sm: small(2)?,
        },
        'W' => Choice::Warp {
            block: small(0)?,
            warp: small(1)?,
        },
        'T' => Choice::Target {
            block: small(0)?,
            warp: small(1)?,
            k: small(2)?,
        },
        'L' => Choice::Lanes {
            block: small(0)?,
            warp: small(1)?,
            mask: fields[2],
        },
        'R' => {
            let (first, count) = (fields[2], fields[3]);
            if count == 0 || first.checked_add(count).is_none_or(|end| end > 64) {
                return Err(err(format!(
                    "{count} lanes from lane {first} are not lanes of a warp (at most 64)"
                )));
            }
            let ones = if count == 64 {
                u64::MAX
            } else {
                (1u64 << count) - 1
            };
            Choice::Lanes {
                block: small(0)?,
                warp: small(1)?,
                mask: ones << first,
            }
        }
        'B' => Choice::EndBarrier {
            block: small(0)?,
            barrier: small(1)?,
        },
        'M' => Choice::Mem(MemChoice::Step { op: small(0)? }),
        'E' => Choice::Mem(MemChoice::EvictL1 {
            sm: small(0)?,
            line: fields[1],
        }),
        'F' => Choice::Mem(MemChoice::EvictL2 { line: fields[0] }),
        'K' => Choice::Mem(MemChoice::WriteBackL1 {
            sm: small(0)?,
            line: fields[1],
        }),
        'Q' => Choice::Mem(MemChoice::WriteBackL2 { line: fields[0] }),
        'P' => Choice::Pick {
            block: small(0)?,
            warp: small(1)?,
            lane: small(2)?,
            k: small(3)?,
        },
        _ => Choice::Mem(MemChoice::Flush { sm: small(0)? }),
    })
}

impl CompactTrace {
    /// The compact string: the table of distinct choices, the most frequent first (ties in
    /// order of first occurrence), then each choice as its table position: the choices a
    /// schedule takes most get one-character positions even when a launch has more than 62
    /// distinct choices. Deterministic: a function of the choices alone.
    pub fn encode(&self) -> String {
        let mut out = format!(
            "{COMPACT_PREFIX}{:016x}:{}:{}:",
            self.program_hash,
            self.choices.len(),
            self.cycle_start
                .map_or_else(|| "-".to_string(), |c| c.to_string())
        );
        // Distinct choices with their count and first occurrence.
        let mut seen: std::collections::HashMap<Choice, (u64, usize)> =
            std::collections::HashMap::new();
        for (i, c) in self.choices.iter().enumerate() {
            seen.entry(*c).or_insert((0, i)).0 += 1;
        }
        let mut table: Vec<(Choice, u64, usize)> = seen
            .into_iter()
            .map(|(c, (n, first))| (c, n, first))
            .collect();
        table.sort_by_key(|&(_, n, first)| (std::cmp::Reverse(n), first));
        let mut position: std::collections::HashMap<Choice, u32> =
            std::collections::HashMap::with_capacity(table.len());
        for (k, (c, _, _)) in table.iter().enumerate() {
            position.insert(*c, k as u32);
            let (kind, fields) = choice_fields(c);
            out.push(kind);
            for (i, f) in fields.into_iter().enumerate() {
                if i > 0 {
                    out.push('_');
                }
                push_field(&mut out, f);
            }
        }
        let refs: Vec<u32> = self
            .choices
            .iter()
            .map(|c| position.get(c).copied().unwrap_or(0))
            .collect();
        out.push(':');
        encode_numbers(&mut out, &refs);
        out
    }

    /// Parses a version 2 compact string (surrounding whitespace allowed). Only the string is
    /// checked here; whether its choices are enabled is the replay's business.
    pub fn parse(text: &str) -> Result<CompactTrace, FormatError> {
        let err = |m: String| FormatError::Compact(m);
        let mut fields = Fields::of(text, COMPACT_PREFIX, 5)?;
        let program_hash = fields.program_hash()?;
        let count = fields.next("choice count")?;
        let count: u64 = count
            .parse()
            .map_err(|_| err(format!("`{count}` is not a choice count (a number)")))?;
        let cycle_start = fields.cycle_start()?;
        let table_text = fields.next("choice table")?;
        let body = fields.next("choices")?;
        // Each entry starts at an upper-case kind letter.
        if table_text
            .bytes()
            .next()
            .is_some_and(|b| !b.is_ascii_uppercase())
        {
            return Err(err(format!(
                "the choice table `{table_text}` does not start with a kind letter"
            )));
        }
        let starts: Vec<usize> = table_text
            .bytes()
            .enumerate()
            .filter(|(_, b)| b.is_ascii_uppercase())
            .map(|(i, _)| i)
            .chain(std::iter::once(table_text.len()))
            .collect();
        let table: Vec<Choice> = starts
            .windows(2)
            .enumerate()
            .map(|(i, w)| choice_of(&table_text[w[0]..w[1]], i))
            .collect::<Result<_, _>>()?;
        let refs = decode_numbers(body)?;
        if refs.len() as u64 != count {
            return Err(err(format!(
                "{} choices where the string says {count}: it was cut short or changed (copy the whole string)",
                refs.len()
            )));
        }
        let choices = refs
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                table.get(r as usize).copied().ok_or_else(|| {
                    err(format!(
                        "choice {i} names table entry {r}, the table has {}",
                        table.len()
                    ))
                })
            })
            .collect::<Result<Vec<Choice>, _>>()?;
        if cycle_start.is_some_and(|c| c > choices.len()) {
            return Err(err(format!(
                "cycle start {} is beyond the {} choices",
                cycle_start.unwrap_or(0),
                choices.len()
            )));
        }
        Ok(CompactTrace {
            program_hash,
            cycle_start,
            choices,
        })
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
struct Fields<'a> {
    fields: std::str::SplitN<'a, char>,
}

impl<'a> Fields<'a> {
    /// The fields of `text` (surrounding whitespace allowed) after `prefix`, at most `count`.
    fn of(text: &'a str, prefix: &str, count: usize) -> Result<Fields<'a>, FormatError> {
        let rest = text
            .trim()
            .strip_prefix(prefix)
            .ok_or_else(|| FormatError::Compact(format!("does not start with `{prefix}`")))?;
        Ok(Fields {
            fields: rest.splitn(count, ':'),
        })
    }

    fn next(&mut self, what: &str) -> Result<&'a str, FormatError> {
        self.fields
            .next()
            .ok_or_else(|| FormatError::Compact(format!("missing the {what} field")))
    }

    /// The program hash: 16 hex digits.
    fn program_hash(&mut self) -> Result<u64, FormatError> {
        let hash = self.next("program hash")?;
        u64::from_str_radix(hash, 16).map_err(|_| {
            FormatError::Compact(format!("`{hash}` is not a program hash (16 hex digits)"))
        })
    }

    /// Where the lasso's cycle starts: a number, or `-` for none.
    fn cycle_start(&mut self) -> Result<Option<usize>, FormatError> {
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
mod tests {
    use super::*;

    #[test]
    fn compact_round_trips_with_runs_and_large_indices() {
        let indices: Vec<u32> = [0, 0, 0, 0, 0, 0, 1, 61, 62, 3843, 300_000, 7, 7, 7, 2]
            .into_iter()
            .chain(std::iter::repeat_n(5, 1000))
            .collect();
        let t = CompactV1 {
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
        assert_eq!(CompactV1::parse(&s), Ok(t));
        assert_eq!(detect(&s), Format::Compact);
    }

    #[test]
    fn compact_repeats_and_numbers_are_bounded_before_allocation() {
        // Found by the CLI's fuzz harness: a long repeat count overflowed, and a short one
        // near 2^32 asked for 16 GiB of indices.
        let long = "cudasem1:a80691b78f85c997:ad1f0ba4:-:0-fa348d1a5ccd339d:f37c76e4:-:0";
        assert!(
            CompactV1::parse(long)
                .unwrap_err()
                .to_string()
                .contains("too large")
        );
        let huge = "cudasem1:a80691b78f85c997:ad1f0ba4:-:0-4GfFC3-";
        assert!(
            CompactV1::parse(huge)
                .unwrap_err()
                .to_string()
                .contains("at most")
        );
    }

    #[test]
    fn compact_errors_say_what() {
        let e = |s: &str| CompactV1::parse(s).unwrap_err().to_string();
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

    fn sample() -> Vec<Choice> {
        let mut v = vec![
            Choice::Issue {
                grid: 0,
                block: 0,
                sm: 0,
            },
            Choice::Issue {
                grid: 0,
                block: 1,
                sm: 1,
            },
        ];
        v.extend(std::iter::repeat_n(Choice::Warp { block: 0, warp: 0 }, 100));
        v.push(Choice::Warp { block: 1, warp: 70 });
        v.push(Choice::Lanes {
            block: 1,
            warp: 0,
            mask: u64::MAX,
        });
        v.push(Choice::EndBarrier {
            block: 0,
            barrier: 15,
        });
        v.push(Choice::Mem(MemChoice::EvictL1 {
            sm: 3,
            line: 0x1000,
        }));
        v.push(Choice::Warp { block: 0, warp: 0 });
        v
    }

    #[test]
    fn compact_v2_names_choices_by_identity() {
        let t = CompactTrace {
            program_hash: 0xdead_beef_0123_4567,
            cycle_start: Some(4),
            choices: sample(),
        };
        let s = t.encode();
        assert_eq!(
            s,
            "cudasem2:deadbeef01234567:107:4:W0_0I0_0I1_1W1_1yR1_0_0_1sB0_fE3_35s:120-1B-34560"
        );
        assert!(
            s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
        );
        assert_eq!(detect(&s), Format::Compact);
        assert_eq!(CompactTrace::parse(&s), Ok(t.clone()));
        assert_eq!(parse_compact(&s), Ok(Compact::V2(t)));
    }

    #[test]
    fn compact_v2_errors_say_what() {
        let e = |s: &str| parse_compact(s).unwrap_err().to_string();
        // Cut short when copied: the count says so.
        assert!(
            e("cudasem2:00000000000000aa:5:-:W0_0:0-2-")
                .contains("3 choices where the string says 5"),
        );
        assert!(e("cudasem2:00000000000000aa:1:-:W0_0:1").contains("names table entry 1"));
        assert!(e("cudasem2:00000000000000aa:1:-:Z0_0:0").contains("not a choice kind"));
        assert!(e("cudasem2:00000000000000aa:1:-:w0_0:0").contains("does not start with a kind"));
        assert!(e("cudasem2:00000000000000aa:1:-:W0:0").contains("1 fields, `W` has 2"));
        assert!(e("cudasem2:00000000000000aa:1:-:W0__1:0").contains("an empty field"));
        assert!(e("cudasem2:00000000000000aa:1:-:W0_.:0").contains("bad digit `.`"));
        assert!(e("cudasem2:00000000000000aa:1:-:Wzzzzzzz_0:0").contains("too large"));
        assert!(e("cudasem2:00000000000000aa:1:-:Wzzzzzzzzzzzzzzzzz_0:0").contains("too large"));
        assert!(e("cudasem2:00000000000000aa:1:9:W0_0:0").contains("cycle start 9"));
        assert!(e("cudasem2:00000000000000aa:1:-:R0_0_1s_2:0").contains("not lanes of a warp"));
        assert!(e("cudasem2:00000000000000aa:1:-:R0_0_0_0:0").contains("not lanes of a warp"));
        let v9 = e("cudasem9:00000000000000aa:1:-:W0_0:0");
        assert!(v9.contains("version 9 string") && v9.contains("reads versions 1 and 2"));
        assert_eq!(detect("cudasem9:x"), Format::Compact);
        assert_eq!(compact_version("cudasemx:1"), None);
    }

    proptest::proptest! {
        #[test]
        fn compact_v2_round_trips(
            raw in proptest::collection::vec((0u8..13, 0u32..200, 0u32..100, proptest::num::u64::ANY), 0..300),
            cycle in proptest::option::of(0usize..300),
            hash in proptest::num::u64::ANY,
        ) {
            let choices: Vec<Choice> = raw
                .iter()
                .map(|&(kind, a, b, x)| match kind {
                    0 => Choice::Issue { grid: a % 2, block: a, sm: b },
                    1 => Choice::Warp { block: a, warp: b },
                    2 => Choice::Target { block: a, warp: b, k: (x % 5) as u32 },
                    3 => Choice::Lanes { block: a, warp: b, mask: x },
                    // A contiguous group: `first` and `count` within 64 lanes.
                    11 => {
                        let first = x % 64;
                        let count = 1 + (x >> 6) % (64 - first);
                        let ones = if count == 64 { u64::MAX } else { (1u64 << count) - 1 };
                        Choice::Lanes { block: a, warp: b, mask: ones << first }
                    }
                    4 => Choice::EndBarrier { block: a, barrier: b % 16 },
                    5 => Choice::Mem(MemChoice::Step { op: a.wrapping_mul(100_000) }),
                    6 => Choice::Mem(MemChoice::EvictL1 { sm: b, line: x }),
                    7 => Choice::Mem(MemChoice::EvictL2 { line: x }),
                    8 => Choice::Mem(MemChoice::WriteBackL1 { sm: b, line: x }),
                    9 => Choice::Mem(MemChoice::WriteBackL2 { line: x }),
                    12 => Choice::Pick { block: a, warp: b, lane: (x % 64) as u32, k: (x >> 6) as u32 },
                    _ => Choice::Mem(MemChoice::Flush { sm: b }),
                })
                .collect();
            let cycle_start = cycle.filter(|&c| c <= choices.len());
            let t = CompactTrace { program_hash: hash, cycle_start, choices };
            let s = t.encode();
            proptest::prop_assert!(s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b)));
            proptest::prop_assert_eq!(parse_compact(&s), Ok(Compact::V2(t)));
        }

        #[test]
        fn compact_parsing_never_panics(s in "cudasem[12]:[0-9a-f]{0,16}:[0-9]{0,3}:[-0-9]{0,2}:[IJWTLBMEFKQXPa-z0-9_.]{0,30}:[a-zA-Z0-9_.-]{0,30}") {
            let _ = parse_compact(&s);
        }
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
