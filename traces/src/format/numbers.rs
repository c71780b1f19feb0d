//! The compact bodies' numbers: base 62 digits, wider numbers behind `_` and `.`, runs of one
//! number as `-N-`.

use super::{FormatError, MAX_COMPACT_CHOICES};

/// of one number as `-N-`.
pub(super) fn encode_numbers(out: &mut String, numbers: &[u32]) {
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
pub(super) fn decode_numbers(body: &str) -> Result<Vec<u32>, FormatError> {
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
pub(super) const DIGITS: &[u8; 62] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

pub(super) fn digit_value(c: u8) -> Option<u32> {
    DIGITS.iter().position(|&d| d == c).map(|p| p as u32)
}

pub(super) fn push_base62(out: &mut String, mut v: u64, width: usize) {
    let mut buf = vec![b'0'; width];
    for slot in buf.iter_mut().rev() {
        *slot = DIGITS[(v % 62) as usize];
        v /= 62;
    }
    out.extend(buf.into_iter().map(char::from));
}

pub(super) fn base62(mut v: u64) -> String {
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
