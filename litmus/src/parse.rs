//! Parser for herd-style PTX litmus tests (`conformance/ptx-litmus/README.md`, the grammar of
//! Dat3M's `LitmusPTX.g4`): name line, quoted comments, the `{ init }` section, the thread table
//! (placement header `P0@cta 0,gpu 0`, one row per `;`, cells separated by `|`) and the final
//! condition (`exists`, `~exists`, `forall` over `/\`, `\/`, `~`, `==`/`=`, `!=`).
//!
//! Everything the format can say is parsed into the AST, proxies and multi-GPU placements
//! included: deciding what cudasem can execute is the translator's job
//! ([`super::translate`]), which answers "unsupported" with a reason. Malformed input is a
//! [`ParseError`] with a 1-based line and column; the parser never panics.

use std::collections::BTreeSet;
use std::fmt;

/// A 1-based source position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Malformed litmus text; the CLI prefixes the file name (`file:line:col: message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub pos: Pos,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pos, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A parsed litmus test.
#[derive(Debug, Clone, PartialEq)]
pub struct LitmusTest {
    /// The name after `PTX`.
    pub name: String,
    /// The quoted comments, without quotes.
    pub comments: Vec<String>,
    pub init: Vec<Init>,
    /// Threads in column order (`P0`, `P1`, ...).
    pub threads: Vec<Thread>,
    pub condition: Condition,
}

/// One item of the `{ ... }` section.
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    /// `x = 1;`
    Location {
        name: String,
        value: InitValue,
        pos: Pos,
    },
    /// `P0:r1 = 1;` (also `0:r1 = 1`)
    Register {
        thread: usize,
        reg: String,
        value: InitValue,
        pos: Pos,
    },
    /// `y @ surface aliases x;`: `name` is a proxy view of `target`.
    Alias {
        name: String,
        proxy: Proxy,
        target: String,
        pos: Pos,
    },
}

/// An initial value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitValue {
    Int(i64),
    /// `&x` or a bare location name: the address of a location.
    Address(String),
}

/// Which proxy an access or alias goes through (PTX ISA "proxies").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Proxy {
    /// Ordinary loads and stores.
    Generic,
    /// `tld`.
    Texture,
    /// `suld`, `sust`, `suatom`, `sured`.
    Surface,
    /// `cold`.
    Constant,
}

impl Proxy {
    pub fn name(self) -> &'static str {
        match self {
            Proxy::Generic => "generic",
            Proxy::Texture => "texture",
            Proxy::Surface => "surface",
            Proxy::Constant => "constant",
        }
    }
}

/// A litmus thread: its placement and its instructions.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    /// The `i` of `Pi`.
    pub id: usize,
    pub cta: u32,
    pub gpu: u32,
    pub pos: Pos,
    pub instrs: Vec<Located>,
}

/// An instruction with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    pub instr: Instr,
    pub pos: Pos,
}

/// Memory-model semantics qualifiers (PTX ISA "memory consistency model").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sem {
    Weak,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    Sc,
}

impl Sem {
    pub fn name(self) -> &'static str {
        match self {
            Sem::Weak => "weak",
            Sem::Relaxed => "relaxed",
            Sem::Acquire => "acquire",
            Sem::Release => "release",
            Sem::AcqRel => "acq_rel",
            Sem::Sc => "sc",
        }
    }
}

/// Scope qualifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Cta,
    Gpu,
    Sys,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
}

/// Read-modify-write operations of `atom`/`red`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RmwOp {
    Add,
    Sub,
    Mul,
    Div,
    And,
    Or,
    Xor,
    Exch,
    /// Compare-and-swap: `atom...cas r, x, compare, new`.
    Cas,
}

/// Register-only arithmetic (`add r, a, b`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LocalOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// Branch conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BranchCond {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// `bar.cta.sync` or `bar.cta.arrive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierMode {
    Sync,
    Arrive,
}

/// A register or an immediate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Reg(String),
    Imm(i64),
}

/// What a fence instruction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FenceKind {
    /// `fence.sc.gpu`, `fence.acq_rel.cta`, `membar.*` (as `sc`).
    Memory { sem: Sem, scope: Scope },
    /// `fence.proxy.texture` etc.
    Proxy(Proxy),
    /// `fence.proxy.alias`.
    Alias,
}

/// One litmus instruction.
#[derive(Debug, Clone, PartialEq)]
pub enum Instr {
    /// `ld.sem{.scope} r, x` (`tld`, `suld`, `cold`: other proxies).
    Load {
        proxy: Proxy,
        sem: Sem,
        scope: Option<Scope>,
        dst: String,
        loc: String,
    },
    /// `st.sem{.scope} x, v` (`sust`: the surface proxy).
    Store {
        proxy: Proxy,
        sem: Sem,
        scope: Option<Scope>,
        loc: String,
        value: Value,
    },
    /// `atom.sem.scope.op r, x, v{, w}`.
    Atom {
        proxy: Proxy,
        sem: Sem,
        scope: Scope,
        op: RmwOp,
        dst: String,
        loc: String,
        operands: Vec<Value>,
    },
    /// `red.sem.scope.op x, v`.
    Red {
        proxy: Proxy,
        sem: Sem,
        scope: Scope,
        op: RmwOp,
        loc: String,
        value: Value,
    },
    Fence(FenceKind),
    /// `bar.cta.sync a{, b{, c}}`: Dat3M's operands (instance id, barrier id, quorum).
    Barrier {
        mode: BarrierMode,
        operands: Vec<Value>,
    },
    /// `add r, a, b` and friends; `mov r, v` is `Local { op: Add, a: v, b: 0 }`.
    Local {
        op: LocalOp,
        dst: String,
        a: Value,
        b: Value,
    },
    /// `beq a, b, LC01`.
    Branch {
        cond: BranchCond,
        a: Value,
        b: Value,
        label: String,
    },
    Goto(String),
    Label(String),
}

/// The condition's quantifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quantifier {
    /// `exists P`: some execution ends in a state satisfying P.
    Exists,
    /// `~exists P`: no execution does.
    NotExists,
    /// `forall P`: every execution does.
    Forall,
}

impl Quantifier {
    pub fn name(self) -> &'static str {
        match self {
            Quantifier::Exists => "exists",
            Quantifier::NotExists => "~exists",
            Quantifier::Forall => "forall",
        }
    }
}

/// The final condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub quantifier: Quantifier,
    pub expr: Expr,
    pub pos: Pos,
}

/// A proposition over a final state.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    /// `a == b` (`=` too) or `a != b`.
    Cmp {
        eq: bool,
        a: Term,
        b: Term,
    },
    Const(bool),
}

/// A value in a condition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Term {
    /// `P1:r0` (or `1:r0`).
    Reg {
        thread: usize,
        reg: String,
    },
    /// A memory location.
    Loc(String),
    Int(i64),
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Reg { thread, reg } => write!(f, "{thread}:{reg}"),
            Term::Loc(l) => f.write_str(l),
            Term::Int(v) => write!(f, "{v}"),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Or(a, b) => write!(f, "({a} \\/ {b})"),
            Expr::And(a, b) => write!(f, "({a} /\\ {b})"),
            Expr::Not(a) => write!(f, "~{a}"),
            Expr::Cmp { eq, a, b } => write!(f, "{a} {} {b}", if *eq { "==" } else { "!=" }),
            Expr::Const(b) => write!(f, "{b}"),
        }
    }
}

impl Expr {
    /// Evaluates the expression; `value` gives each register or location's final value.
    pub fn eval(&self, value: &dyn Fn(&Term) -> i64) -> bool {
        match self {
            Expr::Or(a, b) => a.eval(value) || b.eval(value),
            Expr::And(a, b) => a.eval(value) && b.eval(value),
            Expr::Not(a) => !a.eval(value),
            Expr::Cmp { eq, a, b } => (value(a) == value(b)) == *eq,
            Expr::Const(b) => *b,
        }
    }

    /// The registers and locations the expression reads, in sorted order.
    pub fn terms(&self, out: &mut BTreeSet<Term>) {
        match self {
            Expr::Or(a, b) | Expr::And(a, b) => {
                a.terms(out);
                b.terms(out);
            }
            Expr::Not(a) => a.terms(out),
            Expr::Cmp { a, b, .. } => {
                for t in [a, b] {
                    if !matches!(t, Term::Int(_)) {
                        out.insert(t.clone());
                    }
                }
            }
            Expr::Const(_) => {}
        }
    }
}

impl LitmusTest {
    /// The registers and locations the condition reads (herd prints these per outcome).
    pub fn observed(&self) -> Vec<Term> {
        let mut s = BTreeSet::new();
        self.condition.expr.terms(&mut s);
        s.into_iter().collect()
    }
}

/// Parses a litmus test.
pub fn parse(text: &str) -> Result<LitmusTest, ParseError> {
    let mut p = Cursor::new(text);
    p.skip_ws();
    let lang = p.word();
    if !lang.eq_ignore_ascii_case("PTX") {
        return Err(p.err_here(format!(
            "expected `PTX` at the start of a PTX litmus test, found `{lang}`"
        )));
    }
    // The name: the rest of the first line.
    let name = p.rest_of_line().trim().to_string();
    // Like Dat3M's grammar, everything up to the first `{` is the header: quoted comments,
    // which may themselves contain quotes (Manual/MICRO24-Fig4b-correct.litmus).
    let header_start = p.i;
    while p.peek().is_some_and(|c| c != '{') {
        p.bump();
    }
    if p.peek().is_none() {
        return Err(p.err_here("unexpected end of file: no initial state `{ ... }`".into()));
    }
    let header = p.src[header_start..p.i].trim();
    let comments: Vec<String> = if header.is_empty() {
        Vec::new()
    } else if header.matches('"').count().is_multiple_of(2) {
        header
            .split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    } else {
        vec![header.trim_matches('"').to_string()]
    };
    p.bump(); // `{`
    let init_start = p.i;
    while p.peek().is_some_and(|c| c != '}') {
        p.bump();
    }
    if p.peek().is_none() {
        return Err(p.err_here("unterminated initial state: missing `}`".into()));
    }
    let init = parse_init(&p, init_start, p.i)?;
    p.bump(); // `}`
    p.skip_ws();
    if p.peek() == Some(';') {
        p.bump();
    }

    // The thread table: rows up to the condition keyword.
    let mut rows: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut row_pos = Vec::new();
    loop {
        p.skip_ws();
        if p.peek().is_none() || p.at_condition() {
            break;
        }
        row_pos.push(p.pos());
        let mut cells = Vec::new();
        let mut cell_start = p.i;
        loop {
            match p.peek() {
                Some('|') => {
                    cells.push((cell_start, p.i));
                    p.bump();
                    cell_start = p.i;
                }
                Some(';') => {
                    cells.push((cell_start, p.i));
                    p.bump();
                    break;
                }
                Some(_) => p.bump(),
                None => return Err(p.err_here("unterminated row: missing `;`".into())),
            }
        }
        rows.push(cells);
    }
    if rows.is_empty() {
        return Err(p.err_here("expected the thread table (`P0@cta 0,gpu 0 | ... ;`)".into()));
    }
    let mut threads = Vec::new();
    for (k, &(s, e)) in rows[0].iter().enumerate() {
        threads.push(parse_header(&p, s, e, k)?);
    }
    for (r, row) in rows.iter().enumerate().skip(1) {
        if row.len() > threads.len() {
            return Err(ParseError {
                pos: row_pos[r],
                message: format!(
                    "row has {} cells but the table has {} threads",
                    row.len(),
                    threads.len()
                ),
            });
        }
        for (k, &(s, e)) in row.iter().enumerate() {
            let cell = Sub::new(&p, s, e);
            if cell.is_blank() {
                continue;
            }
            let instr = parse_instr(&cell)?;
            threads[k].instrs.push(Located {
                instr,
                pos: cell.start_pos(),
            });
        }
    }

    p.skip_ws();
    if p.peek().is_none() {
        return Err(
            p.err_here("expected the final condition (`exists`, `~exists` or `forall`)".into())
        );
    }
    let cond_pos = p.pos();
    let cond = Sub::new(&p, p.i, p.src.len());
    let condition = parse_condition(&cond, cond_pos)?;
    let test = LitmusTest {
        name,
        comments,
        init,
        threads,
        condition,
    };
    check(&test)?;
    Ok(test)
}

/// Cross-checks: labels defined once and branched to exist, condition threads exist.
fn check(test: &LitmusTest) -> Result<(), ParseError> {
    for t in &test.threads {
        let mut labels = BTreeSet::new();
        for l in &t.instrs {
            if let Instr::Label(name) = &l.instr
                && !labels.insert(name.clone())
            {
                return Err(ParseError {
                    pos: l.pos,
                    message: format!("label `{name}` defined twice in P{}", t.id),
                });
            }
        }
        for l in &t.instrs {
            if let Instr::Branch { label, .. } | Instr::Goto(label) = &l.instr
                && !labels.contains(label)
            {
                return Err(ParseError {
                    pos: l.pos,
                    message: format!("label `{label}` is not defined in P{}", t.id),
                });
            }
        }
    }
    for i in &test.init {
        if let Init::Register { thread, pos, .. } = i
            && *thread >= test.threads.len()
        {
            return Err(ParseError {
                pos: *pos,
                message: format!("P{thread} is not a thread of this test"),
            });
        }
    }
    for t in test.observed() {
        if let Term::Reg { thread, reg } = &t
            && *thread >= test.threads.len()
        {
            return Err(ParseError {
                pos: test.condition.pos,
                message: format!(
                    "the condition reads {thread}:{reg} but P{thread} is not a thread of this test"
                ),
            });
        }
    }
    Ok(())
}

/// A character cursor over the whole text that knows line and column.
struct Cursor<'a> {
    src: &'a str,
    i: usize,
    /// Byte offsets where lines start.
    line_starts: Vec<usize>,
}

impl<'a> Cursor<'a> {
    fn new(src: &'a str) -> Self {
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
    fn pos_at(&self, i: usize) -> Pos {
        let line = self.line_starts.partition_point(|&s| s <= i);
        let start = self.line_starts[line - 1];
        Pos {
            line: line as u32,
            col: self.src[start..i].chars().count() as u32 + 1,
        }
    }
    fn pos(&self) -> Pos {
        self.pos_at(self.i)
    }
    fn err_here(&self, message: String) -> ParseError {
        ParseError {
            pos: self.pos(),
            message,
        }
    }
    fn peek(&self) -> Option<char> {
        self.src[self.i..].chars().next()
    }
    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.i += c.len_utf8();
        }
    }
    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }
    fn word(&mut self) -> &'a str {
        let s = self.i;
        while self.peek().is_some_and(|c| !c.is_whitespace()) {
            self.bump();
        }
        &self.src[s..self.i]
    }
    fn rest_of_line(&mut self) -> &'a str {
        let s = self.i;
        while self.peek().is_some_and(|c| c != '\n') {
            self.bump();
        }
        &self.src[s..self.i]
    }
    fn at_condition(&self) -> bool {
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
enum Tok {
    /// Identifier-like word, dots included (`ld.acquire.gpu`, `r1`, `LC00`).
    Word(String),
    Int(i64),
    Punct(&'static str),
}

/// A slice of the text, tokenized on demand.
struct Sub<'c, 'a> {
    cur: &'c Cursor<'a>,
    start: usize,
    end: usize,
}

impl<'c, 'a> Sub<'c, 'a> {
    fn new(cur: &'c Cursor<'a>, start: usize, end: usize) -> Self {
        Sub { cur, start, end }
    }
    fn text(&self) -> &'a str {
        &self.cur.src[self.start..self.end]
    }
    fn is_blank(&self) -> bool {
        self.text().trim().is_empty()
    }
    fn start_pos(&self) -> Pos {
        let lead = self.text().len() - self.text().trim_start().len();
        self.cur.pos_at(self.start + lead)
    }
    fn tokens(&self) -> Result<Vec<(Tok, Pos)>, ParseError> {
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
    fn end_pos(&self) -> Pos {
        self.cur.pos_at(self.end)
    }
}

/// `P3` or `3` as a thread number.
fn thread_number(w: &str) -> Option<usize> {
    w.strip_prefix('P').unwrap_or(w).parse().ok()
}

fn parse_init(cur: &Cursor, start: usize, end: usize) -> Result<Vec<Init>, ParseError> {
    let mut items = Vec::new();
    let mut s = start;
    let src = cur.src;
    let mut boundaries: Vec<usize> = src[start..end]
        .char_indices()
        .filter(|&(_, c)| c == ';')
        .map(|(i, _)| start + i)
        .collect();
    boundaries.push(end);
    for e in boundaries {
        let sub = Sub::new(cur, s, e);
        s = e + 1;
        if sub.is_blank() {
            continue;
        }
        let toks = sub.tokens()?;
        let pos = sub.start_pos();
        let bad = |what: &str| ParseError {
            pos,
            message: format!("malformed initial value `{}`: {what}", sub.text().trim()),
        };
        let value_of = |ts: &[(Tok, Pos)]| -> Result<InitValue, ParseError> {
            match ts {
                [(Tok::Int(v), _)] => Ok(InitValue::Int(*v)),
                [(Tok::Punct("&"), _), (Tok::Word(w), _)] | [(Tok::Word(w), _)] => {
                    Ok(InitValue::Address(w.clone()))
                }
                _ => Err(bad("expected an integer or `&location`")),
            }
        };
        match toks.as_slice() {
            // P0:r1 = v   /  0:r1 = v
            [
                (first, _),
                (Tok::Punct(":"), _),
                (Tok::Word(reg), _),
                (Tok::Punct("="), _),
                rest @ ..,
            ] => {
                let thread = match first {
                    Tok::Word(w) => thread_number(w),
                    Tok::Int(v) => usize::try_from(*v).ok(),
                    Tok::Punct(_) => None,
                }
                .ok_or_else(|| bad("expected `P<n>:register`"))?;
                items.push(Init::Register {
                    thread,
                    reg: reg.clone(),
                    value: value_of(rest)?,
                    pos,
                });
            }
            [
                (Tok::Word(name), _),
                (Tok::Punct("@"), _),
                (Tok::Word(proxy), _),
                (Tok::Word(al), _),
                (Tok::Word(target), _),
            ] if al == "aliases" => {
                let proxy = match proxy.as_str() {
                    "generic" => Proxy::Generic,
                    "texture" => Proxy::Texture,
                    "surface" => Proxy::Surface,
                    "constant" => Proxy::Constant,
                    _ => return Err(bad("unknown proxy")),
                };
                items.push(Init::Alias {
                    name: name.clone(),
                    proxy,
                    target: target.clone(),
                    pos,
                });
            }
            // Optionally typed: `int x = 0`.
            [.., (Tok::Word(name), _), (Tok::Punct("="), _), v] => {
                items.push(Init::Location {
                    name: name.clone(),
                    value: value_of(std::slice::from_ref(v))?,
                    pos,
                });
            }
            [.., (Tok::Word(name), _), (Tok::Punct("="), _), amp, w] => {
                items.push(Init::Location {
                    name: name.clone(),
                    value: value_of(&[amp.clone(), w.clone()])?,
                    pos,
                });
            }
            _ => return Err(bad("expected `x = v`, `P0:r = v` or `y @ proxy aliases x`")),
        }
    }
    Ok(items)
}

fn parse_header(cur: &Cursor, s: usize, e: usize, k: usize) -> Result<Thread, ParseError> {
    let sub = Sub::new(cur, s, e);
    let pos = sub.start_pos();
    let toks = sub.tokens()?;
    let bad = || ParseError {
        pos,
        message: format!(
            "malformed thread header `{}`: expected `P{k}@cta N,gpu M`",
            sub.text().trim()
        ),
    };
    let (id, cta, gpu) = match toks.as_slice() {
        [
            (Tok::Word(p), _),
            (Tok::Punct("@"), _),
            (Tok::Word(c), _),
            (Tok::Int(cta), _),
            (Tok::Punct(","), _),
            (Tok::Word(g), _),
            (Tok::Int(gpu), _),
        ] if c == "cta" && g == "gpu" => (thread_number(p).ok_or_else(bad)?, *cta, *gpu),
        // Plain `P0` (no placement): one CTA, one GPU.
        [(Tok::Word(p), _)] => (thread_number(p).ok_or_else(bad)?, 0, 0),
        _ => return Err(bad()),
    };
    if id != k {
        return Err(ParseError {
            pos,
            message: format!(
                "thread column {k} is named P{id}: columns must be P0, P1, ... in order"
            ),
        });
    }
    let to_u32 = |v: i64| u32::try_from(v).map_err(|_| bad());
    Ok(Thread {
        id,
        cta: to_u32(cta)?,
        gpu: to_u32(gpu)?,
        pos,
        instrs: Vec::new(),
    })
}

fn sem_of(w: &str) -> Option<Sem> {
    Some(match w {
        "weak" => Sem::Weak,
        "relaxed" => Sem::Relaxed,
        "acquire" => Sem::Acquire,
        "release" => Sem::Release,
        "acq_rel" => Sem::AcqRel,
        "sc" => Sem::Sc,
        _ => return None,
    })
}

fn scope_of(w: &str) -> Option<Scope> {
    Some(match w {
        "cta" => Scope::Cta,
        "gpu" => Scope::Gpu,
        "sys" => Scope::Sys,
        _ => return None,
    })
}

fn rmw_of(w: &str) -> Option<RmwOp> {
    Some(match w {
        "add" => RmwOp::Add,
        "sub" => RmwOp::Sub,
        "mul" => RmwOp::Mul,
        "div" => RmwOp::Div,
        "and" => RmwOp::And,
        "or" => RmwOp::Or,
        "xor" => RmwOp::Xor,
        "exch" => RmwOp::Exch,
        "cas" => RmwOp::Cas,
        _ => return None,
    })
}

fn proxy_of(w: &str) -> Option<Proxy> {
    Some(match w {
        "generic" => Proxy::Generic,
        "texture" => Proxy::Texture,
        "surface" => Proxy::Surface,
        "constant" => Proxy::Constant,
        _ => return None,
    })
}

fn parse_instr(cell: &Sub) -> Result<Instr, ParseError> {
    let toks = cell.tokens()?;
    let pos = cell.start_pos();
    let text = cell.text().trim();
    let err = |m: String| ParseError {
        pos,
        message: format!("`{text}`: {m}"),
    };
    let Some((Tok::Word(head), _)) = toks.first() else {
        return Err(err("expected an instruction or a label".into()));
    };
    // Label: `LC00:`
    if toks.len() == 2 && toks[1].0 == Tok::Punct(":") {
        return Ok(Instr::Label(head.clone()));
    }
    // Operands: comma separated, each a single token.
    let rest = &toks[1..];
    let mut operands: Vec<(Tok, Pos)> = Vec::new();
    for (i, t) in rest.iter().enumerate() {
        if i % 2 == 1 {
            if t.0 != Tok::Punct(",") {
                return Err(ParseError {
                    pos: t.1,
                    message: format!("`{text}`: expected `,` between operands"),
                });
            }
        } else {
            operands.push(t.clone());
        }
    }
    if rest.len() % 2 == 0 && !rest.is_empty() {
        return Err(err("trailing `,`".into()));
    }
    let reg = |i: usize| -> Result<String, ParseError> {
        match operands.get(i) {
            Some((Tok::Word(w), _)) => Ok(w.clone()),
            Some((_, p)) => Err(ParseError {
                pos: *p,
                message: format!("`{text}`: operand {} must be a register", i + 1),
            }),
            None => Err(err(format!("missing operand {}", i + 1))),
        }
    };
    let loc = |i: usize| -> Result<String, ParseError> {
        match operands.get(i) {
            Some((Tok::Word(w), _)) => Ok(w.clone()),
            Some((_, p)) => Err(ParseError {
                pos: *p,
                message: format!("`{text}`: operand {} must be a location", i + 1),
            }),
            None => Err(err(format!("missing operand {}", i + 1))),
        }
    };
    let val = |i: usize| -> Result<Value, ParseError> {
        match operands.get(i) {
            Some((Tok::Word(w), _)) => Ok(Value::Reg(w.clone())),
            Some((Tok::Int(v), _)) => Ok(Value::Imm(*v)),
            Some((_, p)) => Err(ParseError {
                pos: *p,
                message: format!(
                    "`{text}`: operand {} must be a register or an integer",
                    i + 1
                ),
            }),
            None => Err(err(format!("missing operand {}", i + 1))),
        }
    };
    let arity = |n: usize| -> Result<(), ParseError> {
        if operands.len() == n {
            Ok(())
        } else {
            Err(err(format!(
                "expected {n} operands, found {}",
                operands.len()
            )))
        }
    };
    let parts: Vec<&str> = head.split('.').collect();
    let op = parts[0];
    let mods = &parts[1..];
    // `sem{.scope}` for ld/st.
    let sem_scope = |mods: &[&str]| -> Result<(Sem, Option<Scope>), ParseError> {
        match mods {
            [s] => Ok((
                sem_of(s).ok_or_else(|| err(format!("unknown semantics `.{s}`")))?,
                None,
            )),
            [s, sc] => Ok((
                sem_of(s).ok_or_else(|| err(format!("unknown semantics `.{s}`")))?,
                Some(scope_of(sc).ok_or_else(|| err(format!("unknown scope `.{sc}`")))?),
            )),
            // Herd's default for an unqualified access is weak.
            [] => Ok((Sem::Weak, None)),
            _ => Err(err("expected `.sem{.scope}`".into())),
        }
    };
    match op {
        "ld" | "tld" | "suld" | "cold" => {
            let proxy = match op {
                "ld" => Proxy::Generic,
                "tld" => Proxy::Texture,
                "suld" => Proxy::Surface,
                _ => Proxy::Constant,
            };
            let (sem, scope) = sem_scope(mods)?;
            arity(2)?;
            match val(1)? {
                // `ld r, 5` (Dat3M's localValue): a register move. Location operands are words,
                // so an integer here is a constant.
                Value::Imm(v) if proxy == Proxy::Generic => Ok(Instr::Local {
                    op: LocalOp::Add,
                    dst: reg(0)?,
                    a: Value::Imm(v),
                    b: Value::Imm(0),
                }),
                _ => Ok(Instr::Load {
                    proxy,
                    sem,
                    scope,
                    dst: reg(0)?,
                    loc: loc(1)?,
                }),
            }
        }
        "st" | "sust" => {
            let proxy = if op == "st" {
                Proxy::Generic
            } else {
                Proxy::Surface
            };
            let (sem, scope) = sem_scope(mods)?;
            arity(2)?;
            Ok(Instr::Store {
                proxy,
                sem,
                scope,
                loc: loc(0)?,
                value: val(1)?,
            })
        }
        "atom" | "suatom" | "red" | "sured" => {
            let proxy = if op.starts_with("su") {
                Proxy::Surface
            } else {
                Proxy::Generic
            };
            let [s, sc, o] = mods else {
                return Err(err("expected `.sem.scope.op`".into()));
            };
            let sem = sem_of(s).ok_or_else(|| err(format!("unknown semantics `.{s}`")))?;
            let scope = scope_of(sc).ok_or_else(|| err(format!("unknown scope `.{sc}`")))?;
            let rmw = rmw_of(o).ok_or_else(|| err(format!("unknown operation `.{o}`")))?;
            if op.ends_with("atom") {
                arity(if rmw == RmwOp::Cas { 4 } else { 3 })?;
                let operands = (2..operands.len()).map(&val).collect::<Result<_, _>>()?;
                Ok(Instr::Atom {
                    proxy,
                    sem,
                    scope,
                    op: rmw,
                    dst: reg(0)?,
                    loc: loc(1)?,
                    operands,
                })
            } else {
                if rmw == RmwOp::Cas || rmw == RmwOp::Exch {
                    return Err(err("`red` has no `.cas` or `.exch`".into()));
                }
                arity(2)?;
                Ok(Instr::Red {
                    proxy,
                    sem,
                    scope,
                    op: rmw,
                    loc: loc(0)?,
                    value: val(1)?,
                })
            }
        }
        "fence" => {
            arity(0)?;
            let kind = match mods {
                ["proxy", "alias"] => FenceKind::Alias,
                ["proxy", p] => FenceKind::Proxy(
                    proxy_of(p).ok_or_else(|| err(format!("unknown proxy `.{p}`")))?,
                ),
                [s, sc] => FenceKind::Memory {
                    sem: sem_of(s).ok_or_else(|| err(format!("unknown semantics `.{s}`")))?,
                    scope: scope_of(sc).ok_or_else(|| err(format!("unknown scope `.{sc}`")))?,
                },
                // PTX: `fence.scope` is `fence.acq_rel.scope`.
                [sc] if scope_of(sc).is_some() => FenceKind::Memory {
                    sem: Sem::AcqRel,
                    scope: scope_of(sc).unwrap_or(Scope::Sys),
                },
                _ => {
                    return Err(err(
                        "expected `fence.sem.scope` or `fence.proxy.kind`".into()
                    ));
                }
            };
            Ok(Instr::Fence(kind))
        }
        "membar" => {
            arity(0)?;
            // PTX ISA: membar.{cta,gl,sys} is fence.sc.{cta,gpu,sys}.
            let scope = match mods {
                ["cta"] => Scope::Cta,
                ["gl"] | ["gpu"] => Scope::Gpu,
                ["sys"] => Scope::Sys,
                _ => {
                    return Err(err(
                        "expected `membar.cta`, `membar.gl` or `membar.sys`".into()
                    ));
                }
            };
            Ok(Instr::Fence(FenceKind::Memory {
                sem: Sem::Sc,
                scope,
            }))
        }
        "bar" | "barrier" => {
            let mode = match mods {
                ["cta", "sync"] | ["sync"] => BarrierMode::Sync,
                ["cta", "arrive"] | ["arrive"] => BarrierMode::Arrive,
                _ => return Err(err("expected `bar.cta.sync` or `bar.cta.arrive`".into())),
            };
            if operands.is_empty() || operands.len() > 3 {
                return Err(err(format!(
                    "expected 1 to 3 operands, found {}",
                    operands.len()
                )));
            }
            let operands = (0..operands.len()).map(&val).collect::<Result<_, _>>()?;
            Ok(Instr::Barrier { mode, operands })
        }
        "add" | "sub" | "mul" | "div" => {
            let op = match op {
                "add" => LocalOp::Add,
                "sub" => LocalOp::Sub,
                "mul" => LocalOp::Mul,
                _ => LocalOp::Div,
            };
            arity(3)?;
            Ok(Instr::Local {
                op,
                dst: reg(0)?,
                a: val(1)?,
                b: val(2)?,
            })
        }
        "mov" => {
            arity(2)?;
            Ok(Instr::Local {
                op: LocalOp::Add,
                dst: reg(0)?,
                a: val(1)?,
                b: Value::Imm(0),
            })
        }
        "beq" | "bne" | "blt" | "ble" | "bgt" | "bge" => {
            let cond = match op {
                "beq" => BranchCond::Eq,
                "bne" => BranchCond::Ne,
                "blt" => BranchCond::Lt,
                "ble" => BranchCond::Le,
                "bgt" => BranchCond::Gt,
                _ => BranchCond::Ge,
            };
            arity(3)?;
            Ok(Instr::Branch {
                cond,
                a: val(0)?,
                b: val(1)?,
                label: reg(2)?,
            })
        }
        "goto" => {
            arity(1)?;
            Ok(Instr::Goto(reg(0)?))
        }
        _ => Err(err(format!("unknown instruction `{head}`"))),
    }
}

fn parse_condition(sub: &Sub, pos: Pos) -> Result<Condition, ParseError> {
    let toks = sub.tokens()?;
    let mut p = CondParser {
        toks: &toks,
        i: 0,
        end: sub.end_pos(),
    };
    let quantifier = match (p.peek().cloned(), p.toks.get(1).map(|t| &t.0)) {
        (Some(Tok::Word(w)), _) if w == "exists" => {
            p.i += 1;
            Quantifier::Exists
        }
        (Some(Tok::Word(w)), _) if w == "forall" => {
            p.i += 1;
            Quantifier::Forall
        }
        (Some(Tok::Punct("~")), Some(Tok::Word(w))) if w == "exists" => {
            p.i += 2;
            Quantifier::NotExists
        }
        _ => {
            return Err(ParseError {
                pos,
                message: "expected `exists`, `~exists` or `forall`".into(),
            });
        }
    };
    let expr = p.or()?;
    if let Some((t, tpos)) = p.toks.get(p.i) {
        return Err(ParseError {
            pos: *tpos,
            message: format!("unexpected `{}` after the condition", tok_text(t)),
        });
    }
    Ok(Condition {
        quantifier,
        expr,
        pos,
    })
}

fn tok_text(t: &Tok) -> String {
    match t {
        Tok::Word(w) => w.clone(),
        Tok::Int(v) => v.to_string(),
        Tok::Punct(p) => (*p).to_string(),
    }
}

struct CondParser<'t> {
    toks: &'t [(Tok, Pos)],
    i: usize,
    end: Pos,
}

impl CondParser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i).map(|t| &t.0)
    }
    fn here(&self) -> Pos {
        self.toks.get(self.i).map_or(self.end, |t| t.1)
    }
    fn err(&self, m: &str) -> ParseError {
        let found = self
            .peek()
            .map_or("end of file".to_string(), |t| format!("`{}`", tok_text(t)));
        ParseError {
            pos: self.here(),
            message: format!("{m}, found {found}"),
        }
    }
    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.and()?;
        while self.peek() == Some(&Tok::Punct("\\/")) {
            self.i += 1;
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }
    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut e = self.unary()?;
        while self.peek() == Some(&Tok::Punct("/\\")) {
            self.i += 1;
            e = Expr::And(Box::new(e), Box::new(self.unary()?));
        }
        Ok(e)
    }
    fn unary(&mut self) -> Result<Expr, ParseError> {
        match self.peek() {
            Some(Tok::Punct("~")) => {
                self.i += 1;
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some(Tok::Punct("(")) => {
                self.i += 1;
                let e = self.or()?;
                if self.peek() != Some(&Tok::Punct(")")) {
                    return Err(self.err("expected `)`"));
                }
                self.i += 1;
                Ok(e)
            }
            Some(Tok::Word(w)) if w == "true" || w == "false" => {
                let b = w == "true";
                self.i += 1;
                Ok(Expr::Const(b))
            }
            _ => {
                let a = self.term()?;
                let eq = match self.peek() {
                    Some(Tok::Punct("==")) | Some(Tok::Punct("=")) => true,
                    Some(Tok::Punct("!=")) => false,
                    _ => return Err(self.err("expected `==` or `!=`")),
                };
                self.i += 1;
                let b = self.term()?;
                Ok(Expr::Cmp { eq, a, b })
            }
        }
    }
    fn term(&mut self) -> Result<Term, ParseError> {
        let t = match (
            self.toks.get(self.i),
            self.toks.get(self.i + 1),
            self.toks.get(self.i + 2),
        ) {
            (Some((first, _)), Some((Tok::Punct(":"), _)), Some((Tok::Word(reg), _))) => {
                let thread = match first {
                    Tok::Word(w) => thread_number(w),
                    Tok::Int(v) => usize::try_from(*v).ok(),
                    Tok::Punct(_) => None,
                }
                .ok_or_else(|| self.err("expected `P<n>:register`"))?;
                self.i += 3;
                return Ok(Term::Reg {
                    thread,
                    reg: reg.clone(),
                });
            }
            (Some((Tok::Int(v), _)), _, _) => Term::Int(*v),
            (Some((Tok::Word(w), _)), _, _) => Term::Loc(w.clone()),
            _ => return Err(self.err("expected a register, a location or an integer")),
        };
        self.i += 1;
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MP: &str = "PTX MP\n\"comment\"\n{ x=0; y=0; P1:r1=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r1, y ;\n st.release.gpu y, 1 | ld.weak r2, x ;\n~exists (P1:r1 == 1 /\\ P1:r2 != 1)\n";

    #[test]
    fn parses_message_passing() {
        let t = parse(MP).expect("parses");
        assert_eq!(t.name, "MP");
        assert_eq!(t.comments, vec!["comment".to_string()]);
        assert_eq!(t.threads.len(), 2);
        assert_eq!(t.threads[1].cta, 1);
        assert_eq!(t.threads[0].instrs.len(), 2);
        assert_eq!(
            t.threads[1].instrs[0].instr,
            Instr::Load {
                proxy: Proxy::Generic,
                sem: Sem::Acquire,
                scope: Some(Scope::Gpu),
                dst: "r1".into(),
                loc: "y".into()
            }
        );
        assert_eq!(t.threads[1].instrs[0].pos, Pos { line: 5, col: 17 });
        assert_eq!(t.condition.quantifier, Quantifier::NotExists);
        assert_eq!(
            t.observed(),
            vec![
                Term::Reg {
                    thread: 1,
                    reg: "r1".into()
                },
                Term::Reg {
                    thread: 1,
                    reg: "r2".into()
                }
            ]
        );
    }

    #[test]
    fn errors_have_line_and_column() {
        let bad = MP.replace("ld.weak r2, x", "ld.weak r2 x");
        let e = parse(&bad).expect_err("malformed");
        assert_eq!(e.pos.line, 6);
        assert!(e.message.contains("`,`"), "{e}");
        let e = parse("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n goto LC07 ;\nexists (x == 0)\n")
            .expect_err("undefined label");
        assert_eq!(e.to_string(), "4:2: label `LC07` is not defined in P0");
    }

    #[test]
    fn conditions_with_constants_and_register_comparisons() {
        let t = parse("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists 0==0\n")
            .expect("parses");
        assert_eq!(
            t.condition.expr,
            Expr::Cmp {
                eq: true,
                a: Term::Int(0),
                b: Term::Int(0)
            }
        );
        let t = parse("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nforall (0:r0 = P0:r1 \\/ ~(x != 2))\n")
            .expect("parses");
        assert_eq!(t.condition.quantifier, Quantifier::Forall);
        assert_eq!(t.observed().len(), 3);
    }

    #[test]
    fn proxies_and_aliases_parse() {
        let t = parse("PTX t\n{ x=0; s @ surface aliases x; }\n P0@cta 0,gpu 1 ;\n sust.weak s, 1 ;\n fence.proxy.surface ;\n ld.weak r0, x ;\nforall (P0:r0 == 1)\n")
            .expect("parses");
        assert!(matches!(
            t.init[1],
            Init::Alias {
                proxy: Proxy::Surface,
                ..
            }
        ));
        assert_eq!(t.threads[0].gpu, 1);
        assert_eq!(
            t.threads[0].instrs[1].instr,
            Instr::Fence(FenceKind::Proxy(Proxy::Surface))
        );
    }
}
