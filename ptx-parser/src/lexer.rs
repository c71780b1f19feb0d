//! The PTX lexer: source text to a flat vector of [`Token`]s (kind plus byte span).
//!
//! Tokens carry no data; the parser reads a token's text back from the source through its span,
//! and pulls tokens on demand, so lexing allocates nothing. Whitespace and comments are skipped.
//! Characters that start no token become [`Tok::Error`] tokens rather than diagnostics, because
//! some of them legitimately sit inside raw regions (a `.section` body) that the parser copies
//! verbatim; the parser reports an error token only when it meets one where it expects syntax.
//! An unterminated `/* ...` comment runs to the end of the file and is reported here.

use crate::ast::Span;
use crate::diagnostic::Diagnostic;
use logos::Logos;

/// Token kinds. Literal kinds are split by syntax so the parser never re-scans their text to
/// classify them.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f\v]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(skip r"/\*([^*]|\*+[^*/])*\*+/")]
pub(crate) enum Tok {
    /// `%r1`, `$L__BB0_2`, `__local_depot0`, `ld`, `sm_70`.
    #[regex(r"[a-zA-Z][a-zA-Z0-9_$]*")]
    #[regex(r"[_$%][a-zA-Z0-9_$]+")]
    Ident,
    /// `.reg`, `.u32`, `.shared::cta`, `.1d`, `.L2::128B`: a dot and identifier characters.
    #[regex(r"\.[a-zA-Z0-9_$]+(::[a-zA-Z0-9_$]+)*")]
    Dotted,
    /// Decimal or octal integer, optional `U` suffix.
    #[regex(r"[0-9]+[uU]?")]
    DecInt,
    /// `0x1F`, optional `U` suffix.
    #[regex(r"0[xX][0-9a-fA-F]+[uU]?")]
    HexInt,
    /// `0b101`, optional `U` suffix.
    #[regex(r"0[bB][01]+[uU]?")]
    BinInt,
    /// `0f3F800000`.
    #[regex(r"0[fF][0-9a-fA-F]{8}")]
    HexF32,
    /// `0d3FF0000000000000`.
    #[regex(r"0[dD][0-9a-fA-F]{16}")]
    HexF64,
    /// `1.5`, `2e3`, `1.5e-3`.
    #[regex(r"[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?")]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+")]
    DecFloat,
    /// `"..."` on one line, with backslash escapes kept raw.
    #[regex(r#""([^"\\\n]|\\[^\n])*""#)]
    Str,
    /// `/*` without a closing `*/`: the rest of the file is a comment.
    #[token("/*")]
    OpenComment,

    #[token(";")]
    Semi,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("<=")]
    Le,
    #[token(">=")]
    Ge,
    #[token("==")]
    EqEq,
    #[token("!=")]
    Ne,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("@")]
    At,
    #[token("!")]
    Bang,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("|")]
    Pipe,
    #[token("&")]
    Amp,
    #[token("^")]
    Caret,
    #[token("~")]
    Tilde,
    #[token("?")]
    Question,
    #[token("=")]
    Assign,
    #[token("_")]
    Underscore,

    /// A character that starts no token.
    Error,
    /// End of input; the lexer appends exactly one, so the parser can always peek.
    Eof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Tok,
    pub start: u32,
    pub end: u32,
}

impl Token {
    pub fn span(self) -> Span {
        Span { start: self.start, end: self.end }
    }
}

/// A streaming lexer: the parser pulls tokens one at a time through a small lookahead window,
/// so no token vector is ever built (a 5 MB file would need a 15 MB one).
pub(crate) struct Lexer<'s> {
    inner: logos::Lexer<'s, Tok>,
    done: bool,
}

impl<'s> Lexer<'s> {
    /// `source` must be at most `u32::MAX` bytes; the caller checks.
    pub fn new(source: &'s str) -> Self {
        Lexer { inner: Tok::lexer(source), done: false }
    }

    /// The next token; after the end, `Eof` forever. An unterminated `/*` is reported to
    /// `diagnostics` and ends the input.
    pub fn next_token(&mut self, diagnostics: &mut Vec<Diagnostic>) -> Token {
        if !self.done {
            if let Some(result) = self.inner.next() {
                let range = self.inner.span();
                let (start, end) = (range.start as u32, range.end as u32);
                match result {
                    Ok(Tok::OpenComment) => {
                        diagnostics.push(unterminated_comment(Span { start, end }));
                        self.done = true;
                    }
                    Ok(kind) => return Token { kind, start, end },
                    Err(()) => {
                        return Token { kind: Tok::Error, start, end };
                    }
                }
            }
            self.done = true;
        }
        let len = self.inner.source().len() as u32;
        Token { kind: Tok::Eof, start: len, end: len }
    }
}

/// The diagnostic for a `/*` that is never closed; out of line, so that the per-token path of
/// [`Lexer::next_token`] stays small.
#[cold]
#[inline(never)]
fn unterminated_comment(span: Span) -> Diagnostic {
    Diagnostic::error(span, "unterminated block comment")
        .with_label("this comment is never closed")
        .with_help("close the comment with `*/`")
}

/// Lexes all of `source` into a vector ending with one `Eof` (for tests and tools).
#[cfg(test)]
pub(crate) fn lex(source: &str, diagnostics: &mut Vec<Diagnostic>) -> Vec<Token> {
    let mut lexer = Lexer::new(source);
    let mut tokens = Vec::new();
    loop {
        let t = lexer.next_token(diagnostics);
        tokens.push(t);
        if t.kind == Tok::Eof {
            return tokens;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(Tok, &str)> {
        let mut d = Vec::new();
        lex(src, &mut d).into_iter().map(|t| (t.kind, &src[t.start as usize..t.end as usize])).collect()
    }

    #[test]
    fn identifiers_and_dotted_words() {
        use Tok::*;
        assert_eq!(
            kinds("%r1 $L__BB0_2 __local_depot0 %tid.x .shared::cta % _ .v4"),
            vec![
                (Ident, "%r1"),
                (Ident, "$L__BB0_2"),
                (Ident, "__local_depot0"),
                (Ident, "%tid"),
                (Dotted, ".x"),
                (Dotted, ".shared::cta"),
                (Percent, "%"),
                (Underscore, "_"),
                (Dotted, ".v4"),
                (Eof, ""),
            ]
        );
    }

    #[test]
    fn literals() {
        use Tok::*;
        assert_eq!(
            kinds("12 0x1fU 017 0b101 0f3F800000 0d3FF0000000000000 1.5 2e3 \"a\\\"b\" 7.0"),
            vec![
                (DecInt, "12"),
                (HexInt, "0x1fU"),
                (DecInt, "017"),
                (BinInt, "0b101"),
                (HexF32, "0f3F800000"),
                (HexF64, "0d3FF0000000000000"),
                (DecFloat, "1.5"),
                (DecFloat, "2e3"),
                (Str, "\"a\\\"b\""),
                (DecFloat, "7.0"),
                (Eof, ""),
            ]
        );
    }

    #[test]
    fn comments_and_operators() {
        use Tok::*;
        assert_eq!(
            kinds("a // x\n /* y\n */ << >= != && || ; b"),
            vec![
                (Ident, "a"),
                (Shl, "<<"),
                (Ge, ">="),
                (Ne, "!="),
                (AndAnd, "&&"),
                (OrOr, "||"),
                (Semi, ";"),
                (Ident, "b"),
                (Eof, ""),
            ]
        );
    }

    #[test]
    fn errors_are_tokens_and_unterminated_comment_is_reported() {
        let mut d = Vec::new();
        let toks = lex("a #### b /* never closed", &mut d);
        let k: Vec<Tok> = toks.iter().map(|t| t.kind).collect();
        let e = Tok::Error;
        assert_eq!(k, vec![Tok::Ident, e, e, e, e, Tok::Ident, Tok::Eof]);
        assert_eq!(d.len(), 1);
        assert!(d[0].message.contains("unterminated"));
    }
}
