//! The recursive-descent parser's core: the token cursor, error reporting and recovery.
//!
//! Grammar lives in the sibling modules (`directives` for module level, `function`, `declaration`,
//! `instruction`, `expr`). Every parse function returns [`PResult`]: `Err(Reported)` means a
//! diagnostic has already been pushed and the caller should recover, never that parsing stops.
//! Recovery skips to the next `;` or `}` at the right brace nesting (rust-analyzer style), so
//! one malformed statement costs one diagnostic and the rest of the file is still parsed.
//!
//! Nothing here can panic on input: token access goes through [`Parser::peek_at`], which
//! returns the final `Eof` token past the end, and all recursion is bounded by [`MAX_DEPTH`].

mod declaration;
mod directives;
pub(crate) mod expr;
mod function;
mod instruction;

use crate::ast::{Ident, Module, Operand, Span};
use crate::diagnostic::Diagnostic;
use crate::lexer::{Lexer, Tok, Token};

/// How deeply blocks, parenthesised expressions, vectors and initializer lists may nest. Deeper
/// input is reported, not parsed, so that hostile input cannot overflow the stack.
pub(crate) const MAX_DEPTH: u32 = 256;

/// Marker that a diagnostic was pushed; the caller recovers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reported;

pub(crate) type PResult<T> = Result<T, Reported>;

/// The most statements reserved for a function body ahead of parsing it (about 90 KB): a
/// larger body grows its vector as it goes.
pub(crate) const MAX_BODY_RESERVE: usize = 256;

/// How many tokens the parser can see ahead (`peek_at(0..LOOKAHEAD)`); labels and call
/// prototypes need three (`name : .callprototype`).
const LOOKAHEAD: usize = 3;

pub(crate) struct Parser<'s> {
    src: &'s str,
    lexer: Lexer<'s>,
    /// The next `LOOKAHEAD` tokens; `window[0]` is the current one.
    window: [Token; LOOKAHEAD],
    /// Tokens consumed so far (to check that loops make progress).
    pos: usize,
    /// End offset of the last consumed token.
    prev_end: u32,
    pub(crate) diags: Vec<Diagnostic>,
    depth: u32,
    /// Set once an unexpected end of file has been reported, so that the enclosing unclosed
    /// blocks do not each report it again.
    pub(crate) eof_reported: bool,
    /// How many statements to reserve for the next function body: the most any body so far had,
    /// up to [`MAX_BODY_RESERVE`] (the bodies of one file tend to be alike).
    pub(crate) body_reserve: usize,
    /// Scratch stack for operand lists: nested lists push their items here and move them into an
    /// exactly sized `Vec` when complete, so the AST's vectors never over-allocate or regrow.
    /// Each user drains or truncates back to the length it found.
    pub(crate) scratch_operands: Vec<Operand>,
}

impl<'s> Parser<'s> {
    /// `src` must be at most `u32::MAX` bytes.
    pub(crate) fn new(src: &'s str) -> Self {
        let mut lexer = Lexer::new(src);
        let mut diags = Vec::new();
        let window = std::array::from_fn(|_| lexer.next_token(&mut diags));
        Parser {
            src,
            lexer,
            window,
            pos: 0,
            prev_end: 0,
            diags,
            depth: 0,
            eof_reported: false,
            body_reserve: 0,
            scratch_operands: Vec::new(),
        }
    }

    pub(crate) fn parse_module(&mut self) -> Module {
        directives::module(self)
    }

    // ---- cursor ----------------------------------------------------------------------------

    pub(crate) fn peek(&self) -> Token {
        self.peek_at(0)
    }

    /// The token `n` ahead of the cursor (`n < LOOKAHEAD`), or `Eof` past the end.
    pub(crate) fn peek_at(&self, n: usize) -> Token {
        match self.window.get(n) {
            Some(t) => *t,
            None => {
                let len = self.src.len() as u32;
                Token { kind: Tok::Eof, start: len, end: len }
            }
        }
    }

    pub(crate) fn kind(&self) -> Tok {
        self.peek().kind
    }

    pub(crate) fn at(&self, kind: Tok) -> bool {
        self.kind() == kind
    }

    /// The end offset of the last consumed token (for spans that end at it).
    pub(crate) fn prev_end(&self) -> u32 {
        self.prev_end
    }

    pub(crate) fn text(&self, t: Token) -> &'s str {
        self.src.get(t.start as usize..t.end as usize).unwrap_or("")
    }

    pub(crate) fn src_slice(&self, start: u32, end: u32) -> &'s str {
        self.src.get(start as usize..end as usize).unwrap_or("")
    }

    pub(crate) fn source(&self) -> &'s str {
        self.src
    }

    /// Consumes and returns the current token; at `Eof` stays there.
    pub(crate) fn bump(&mut self) -> Token {
        let t = self.peek();
        if t.kind != Tok::Eof {
            self.pos += 1;
            self.prev_end = t.end;
            let [a, b, c] = &mut self.window;
            *a = *b;
            *b = *c;
            *c = self.lexer.next_token(&mut self.diags);
        }
        t
    }

    pub(crate) fn eat(&mut self, kind: Tok) -> Option<Token> {
        if self.at(kind) { Some(self.bump()) } else { None }
    }

    pub(crate) fn ident(&self, t: Token) -> Ident {
        Ident { name: self.text(t).into(), span: t.span() }
    }

    // ---- diagnostics ---------------------------------------------------------------------

    /// How to name a found token in a message: `` `foo` `` or "end of file".
    pub(crate) fn describe(&self, t: Token) -> String {
        match t.kind {
            Tok::Eof => "end of file".to_string(),
            _ => {
                let text = self.text(t);
                let mut shown: String = text.chars().take(40).collect();
                if shown.len() < text.len() {
                    shown.push_str("...");
                }
                format!("`{shown}`")
            }
        }
    }

    pub(crate) fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// Reports "expected X, found Y" at the current token and returns `Err(Reported)`.
    /// Cold and out of line, so that the paths which succeed (nearly every call of
    /// [`Parser::expect`]) stay small enough to inline.
    #[cold]
    #[inline(never)]
    pub(crate) fn expected<T>(&mut self, what: &str, help: Option<&str>) -> PResult<T> {
        let t = self.peek();
        let found = self.describe(t);
        let message = if t.kind == Tok::Error {
            format!("unexpected character {found}, expected {what}")
        } else {
            format!("expected {what}, found {found}")
        };
        let mut d = Diagnostic::error(t.span(), message).with_label(format!("expected {what}"));
        if let Some(help) = help {
            d = d.with_help(help);
        }
        self.push(d);
        Err(Reported)
    }

    /// Consumes a token of `kind` or reports that `what` was expected.
    pub(crate) fn expect(&mut self, kind: Tok, what: &str, help: Option<&str>) -> PResult<Token> {
        match self.eat(kind) {
            Some(t) => Ok(t),
            None => self.expected(what, help),
        }
    }

    /// Parses an unsigned decimal/hex/octal/binary integer token that must fit `u32`.
    pub(crate) fn expect_u32(&mut self, what: &str) -> PResult<u32> {
        let t = self.peek();
        let value = self.expect_u64(what)?;
        match u32::try_from(value) {
            Ok(v) => Ok(v),
            Err(_) => self.report(
                Diagnostic::error(t.span(), format!("{what} {value} does not fit in 32 bits")).with_label("too large"),
            ),
        }
    }

    pub(crate) fn expect_u64(&mut self, what: &str) -> PResult<u64> {
        let t = self.peek();
        if !matches!(t.kind, Tok::DecInt | Tok::HexInt | Tok::BinInt) {
            return self.expected(what, None);
        }
        self.bump();
        match expr::int_value(self.text(t), t.kind) {
            Ok((v, _)) => Ok(v),
            Err(msg) => self.report(Diagnostic::error(t.span(), msg.to_string()).with_label("invalid integer")),
        }
    }

    /// Pushes `d` and returns `Err(Reported)`; cold, like every error path of the parser.
    #[cold]
    #[inline(never)]
    pub(crate) fn report<T>(&mut self, d: Diagnostic) -> PResult<T> {
        self.push(d);
        Err(Reported)
    }

    // ---- nesting ---------------------------------------------------------------------------

    /// Enters one nesting level; reports and returns `Err` past [`MAX_DEPTH`].
    pub(crate) fn enter(&mut self, at: Span) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            return self.too_deep(at);
        }
        self.depth += 1;
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&mut self, at: Span) -> PResult<()> {
        self.report(
            Diagnostic::error(at, format!("nesting deeper than {MAX_DEPTH} levels"))
                .with_label("too deeply nested")
                .with_help("flatten the nested blocks, lists or parentheses"),
        )
    }

    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    // ---- recovery --------------------------------------------------------------------------

    /// Statement-level recovery inside a block: skips to just after the next `;`, or to just
    /// before a `}` (which closes the enclosing block), a `{` (which opens a new statement) or a
    /// declaration directive (a likely new statement after a missing `;`). Always consumes at
    /// least one token unless at `}` / `Eof`, so callers make progress.
    pub(crate) fn recover_statement(&mut self) {
        let mut first = true;
        loop {
            let t = self.peek();
            match t.kind {
                Tok::Eof | Tok::RBrace => return,
                Tok::Semi => {
                    self.bump();
                    return;
                }
                Tok::LBrace if !first => return,
                Tok::Dotted if !first && starts_body_statement(self.text(t)) => return,
                _ => {
                    self.bump();
                }
            }
            first = false;
        }
    }

    /// Module-level recovery: skips to just after a `;` or a `}` that closes back to brace
    /// depth 0 (the end of a skipped body), or to just before a directive that starts a
    /// module-level item.
    pub(crate) fn recover_module_item(&mut self) {
        let mut depth: u32 = 0;
        let mut first = true;
        loop {
            let t = self.peek();
            match t.kind {
                Tok::Eof => return,
                Tok::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    if depth <= 1 {
                        self.bump();
                        return;
                    }
                    depth -= 1;
                }
                Tok::Dotted if depth == 0 && !first && starts_module_item(self.text(t)) => return,
                _ => {}
            }
            self.bump();
            first = false;
        }
    }

    /// Skips a balanced `{ ... }` starting at the current `{` (used past the depth limit).
    pub(crate) fn skip_balanced_braces(&mut self) {
        let mut depth: u64 = 0;
        loop {
            let t = self.bump();
            match t.kind {
                Tok::Eof => return,
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }
}

/// Directives that begin a statement inside a body (recovery stops before them).
fn starts_body_statement(word: &str) -> bool {
    matches!(word, ".reg" | ".local" | ".shared" | ".param" | ".loc" | ".pragma")
}

/// Directives that begin a module-level item (recovery stops before them).
fn starts_module_item(word: &str) -> bool {
    matches!(
        word,
        ".version"
            | ".target"
            | ".address_size"
            | ".visible"
            | ".extern"
            | ".weak"
            | ".common"
            | ".entry"
            | ".func"
            | ".file"
            | ".section"
    )
}
