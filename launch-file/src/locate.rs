//! Locating text in the launch file for errors found after RON has read it: a field, a map
//! key, the items of a list, outside comments and strings.

use crate::{Launch, Location};

/// The 1-based `line`'s text.
pub(crate) fn line_text(text: &str, line: usize) -> String {
    text.lines()
        .nth(line.saturating_sub(1))
        .unwrap_or("")
        .trim_end_matches('\r')
        .to_string()
}

impl Launch {
    /// The first occurrence of `needle` at or after byte `from` (and after the start of the
    /// launch's own text: a context's), outside comments.
    pub(crate) fn locate(&self, needle: &str, from: usize) -> Option<Location> {
        let (path, text) = self.source.as_ref()?;
        let masked = mask_comments(text);
        let from = from.max(self.start);
        let at = masked.get(from..)?.find(needle)? + from;
        Some(location_of(path, text, at))
    }

    /// `needle` followed by `:` (a map key), searching from `from`.
    pub(crate) fn locate_key(&self, needle: &str, from: Option<usize>) -> Option<Location> {
        let (path, text) = self.source.as_ref()?;
        let masked = mask_comments(text);
        let mut start = from.unwrap_or(0).max(self.start);
        while let Some(i) = masked.get(start..).and_then(|s| s.find(needle)) {
            let at = start + i;
            let after = masked[at + needle.len()..].trim_start();
            if after.starts_with(':') {
                return Some(location_of(path, text, at));
            }
            start = at + needle.len();
        }
        None
    }

    /// The `name:` field of the launch (the first after the start of its own text).
    pub(crate) fn locate_field(&self, name: &str) -> Option<Location> {
        let (path, text) = self.source.as_ref()?;
        find_field_from(text, self.start, name).map(|at| location_of(path, text, at))
    }
}

/// Byte offset of `name:` as an identifier outside comments at or after byte `from`, if present.
pub(crate) fn find_field_from(text: &str, from: usize, name: &str) -> Option<usize> {
    let masked = mask_comments(text);
    let bytes = masked.as_bytes();
    let mut start = from.min(masked.len());
    while let Some(i) = masked[start..].find(name) {
        let at = start + i;
        let before_ok = at == 0
            || !(bytes[at - 1].is_ascii_alphanumeric()
                || bytes[at - 1] == b'_'
                || bytes[at - 1] == b'"');
        let after = masked[at + name.len()..].trim_start();
        if before_ok && after.starts_with(':') {
            return Some(at);
        }
        start = at + name.len();
    }
    None
}

/// The text with `//` and `/* */` comments blanked (same byte offsets), strings left intact.
pub(crate) fn mask_comments(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < b.len() {
        let c = b[i];
        if in_string {
            out.push(c);
            if c == b'\\' && i + 1 < b.len() {
                out.push(b[i + 1]);
                i += 2;
                continue;
            }
            if c == b'"' {
                in_string = false;
            }
            i += 1;
        } else if c == b'"' {
            in_string = true;
            out.push(c);
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                out.push(if b[i] == b'\n' { b'\n' } else { b' ' });
                i += 1;
            }
            let end = (i + 2).min(b.len());
            out.extend(std::iter::repeat_n(b' ', end - i));
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes, and only outside strings at ASCII bytes,
    // except inside comments, where multi-byte characters became spaces: still valid UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// Byte offset of `name:` at the top level of the outer `( ... )` (not inside a launch of
/// `launches` or a buffer), outside comments and strings.
pub(crate) fn find_top_field(text: &str, name: &str) -> Option<usize> {
    find_top_field_from(text, 0, name)
}

/// [`find_top_field`] of the `( ... )` that opens at byte `from` (a context of `contexts`).
pub(crate) fn find_top_field_from(text: &str, from: usize, name: &str) -> Option<usize> {
    let masked = mask_comments(text);
    let b = masked.as_bytes();
    // Up to the parenthesis that closes the one opened first.
    let mut opened = false;
    outside_strings(&masked, from)
        .take_while(|&(_, _, depth)| {
            opened |= depth > 0;
            !(opened && depth <= 0)
        })
        .find(|&(i, c, depth)| {
            depth == 1
                && !b"\"([{)]}".contains(&c)
                && b[i..].starts_with(name.as_bytes())
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
                && masked
                    .get(i + name.len()..)
                    .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|(i, ..)| i)
}

/// Byte offsets of the items of the list that starts after `from` whose first character is
/// `first`: each item's opening parenthesis (`[ (..), (..) ]`, `first` = `(`) or quote
/// (`[ "..", ".." ]`, `first` = `"`).
pub(crate) fn list_item_starts(text: &str, from: usize, first: u8) -> Vec<usize> {
    let masked = mask_comments(text);
    let Some(open) = masked.get(from..).and_then(|s| s.find('[')) else {
        return Vec::new();
    };
    let mut starts = Vec::new();
    for (i, c, depth) in outside_strings(&masked, from + open) {
        match c {
            b'"' | b'(' | b'[' | b'{' if depth == 1 && c == first => starts.push(i),
            b')' | b']' | b'}' if depth == 1 => break,
            _ => {}
        }
    }
    starts
}

/// The bytes of `masked` from byte `from` on that are outside strings (a string's opening quote
/// included), each with its offset and the bracket depth before it (depth counted from `from`).
fn outside_strings(masked: &str, from: usize) -> impl Iterator<Item = (usize, u8, i32)> + '_ {
    let mut depth = 0i32;
    let mut in_string = false;
    let mut escaped = false;
    masked
        .bytes()
        .enumerate()
        .skip(from)
        .filter_map(move |(i, c)| {
            if in_string {
                if escaped {
                    escaped = false;
                } else if c == b'\\' {
                    escaped = true;
                } else if c == b'"' {
                    in_string = false;
                }
                return None;
            }
            let before = depth;
            match c {
                b'"' => in_string = true,
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                _ => {}
            }
            Some((i, c, before))
        })
}

pub(crate) fn location_of(path: &str, text: &str, at: usize) -> Location {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = text[line_start..at.min(text.len())].chars().count() + 1;
    Location {
        path: path.to_string(),
        line,
        col,
        line_text: line_text(text, line),
    }
}
