//! Compact strings of version 2 (printed): choices by identity, in a table of distinct
//! choices (kind letter and base 36 fields) and a body of table positions.

use super::numbers::{decode_numbers, encode_numbers};
use super::{COMPACT_PREFIX, Fields, FormatError};
use crate::{Choice, MemChoice};

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
pub(super) fn choice_fields(c: &Choice) -> (char, Vec<u64>) {
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
pub(super) const FIELD_DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";

pub(super) fn push_field(out: &mut String, mut v: u64) {
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
pub(super) fn choice_of(text: &str, entry: usize) -> Result<Choice, FormatError> {
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
