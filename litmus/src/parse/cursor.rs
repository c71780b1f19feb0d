//! The text as the parser walks it: a cursor over characters that knows lines and columns,
//! and slices of it tokenized on demand.

use super::error::{ParseError, Pos};

/// A character cursor over the whole text that knows line and column.
pub(super) struct Cursor<'a> {
    pub(super) src: &'a str,
    pub(super) i: usize,
    /// Byte offsets where lines start.
    pub(super) line_starts: Vec<usize>,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(src: &'a str) -> Self {
        let mut line_starts = vec![0];
        for (i, c) in src.char_indices() {
            if c == '\n' {
                line_starts.push(i + 1);
            }
        }
        Cursor {
            src,
            i: 0,
            line_starts,
        }
    }
    pub(super) fn pos_at(&self, i: usize) -> Pos {
        let line = self.line_starts.partition_point(|&s| s <= i);
        let start = self.line_starts[line - 1];
        Pos {
            line: line as u32,
            col: self.src[start..i].chars().count() as u32 + 1,
        }
    }
    pub(super) fn pos(&self) -> Pos {
        self.pos_at(self.i)
    }
    pub(super) fn err_here(&self, message: String) -> ParseError {
        ParseError {
            pos: self.pos(),
            message,
        }
    }
    pub(super) fn peek(&self) -> Option<char> {
        self.src[self.i..].chars().next()
    }
    pub(super) fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.i += c.len_utf8();
        }
    }
    pub(super) fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }
    pub(super) fn word(&mut self) -> &'a str {
        let s = self.i;
        while self.peek().is_some_and(|c| !c.is_whitespace()) {
            self.bump();
        }
        &self.src[s..self.i]
    }
    pub(super) fn rest_of_line(&mut self) -> &'a str {
        let s = self.i;
        while self.peek().is_some_and(|c| c != '\n') {
            self.bump();
        }
        &self.src[s..self.i]
    }
    pub(super) fn at_condition(&self) -> bool {
        let rest = &self.src[self.i..];
        let kw = |k: &str| {
            rest.strip_prefix(k)
                .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
        };
        kw("exists") || kw("forall") || rest.starts_with('~')
    }
}

/// A token of an instruction, an init item or the condition.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    /// Identifier-like word, dots included (`ld.acquire.gpu`, `r1`, `LC00`).
    Word(String),
    Int(i64),
    Punct(&'static str),
}

/// A slice of the text, tokenized on demand.
pub(super) struct Sub<'c, 'a> {
    pub(super) cur: &'c Cursor<'a>,
    pub(super) start: usize,
    pub(super) end: usize,
}

impl<'c, 'a> Sub<'c, 'a> {
    pub(super) fn new(cur: &'c Cursor<'a>, start: usize, end: usize) -> Self {
        Sub { cur, start, end }
    }
    pub(super) fn text(&self) -> &'a str {
        &self.cur.src[self.start..self.end]
    }
    pub(super) fn is_blank(&self) -> bool {
        self.text().trim().is_empty()
    }
    pub(super) fn start_pos(&self) -> Pos {
        let lead = self.text().len() - self.text().trim_start().len();
        self.cur.pos_at(self.start + lead)
    }
    pub(super) fn tokens(&self) -> Result<Vec<(Tok, Pos)>, ParseError> {
        let t = self.text();
        let mut out = Vec::new();
        let b = t.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i] as char;
            let pos = self.cur.pos_at(self.start + i);
            if c.is_whitespace() {
                i += 1;
                continue;
            }
            if c.is_ascii_alphabetic() || c == '_' || c == '%' || c == '$' {
                let s = i;
                while i < b.len()
                    && ((b[i] as char).is_ascii_alphanumeric()
                        || matches!(b[i], b'_' | b'.' | b'$' | b'%'))
                {
                    i += 1;
                }
                out.push((Tok::Word(t[s..i].to_string()), pos));
                continue;
            }
            if c.is_ascii_digit() || (c == '-' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
                let s = i;
                i += 1;
                while i < b.len() && (b[i] as char).is_ascii_alphanumeric() {
                    i += 1;
                }
                let lit = &t[s..i];
                let (neg, digits) = match lit.strip_prefix('-') {
                    Some(d) => (true, d),
                    None => (false, lit),
                };
                let v = if let Some(h) = digits.strip_prefix("0x").or(digits.strip_prefix("0X")) {
                    i64::from_str_radix(h, 16)
                } else {
                    digits.parse::<i64>()
                };
                let v = v.map_err(|_| ParseError {
                    pos,
                    message: format!("`{lit}` is not an integer"),
                })?;
                out.push((Tok::Int(if neg { -v } else { v }), pos));
                continue;
            }
            const PUNCTS: [&str; 14] = [
                "/\\", "\\/", "==", "!=", "=", "~", "(", ")", ",", ":", "@", "&", "!", "+",
            ];
            match PUNCTS.iter().find(|p| t[i..].starts_with(**p)) {
                Some(p) => {
                    out.push((Tok::Punct(p), pos));
                    i += p.len();
                }
                None => {
                    let ch = t[i..].chars().next().unwrap_or('?');
                    return Err(ParseError {
                        pos,
                        message: format!("unexpected character `{ch}`"),
                    });
                }
            }
        }
        Ok(out)
    }
    pub(super) fn end_pos(&self) -> Pos {
        self.cur.pos_at(self.end)
    }
}
