//! Expectations: what a launch's final buffers must satisfy, written in a launch file's
//! `expect: [...]` section or with `--expect EXPR` flags.
//!
//! The language is small and has no Rust in it:
//! - a buffer equal to values or to another buffer: `out == [1, 2, 3]`, `out == a`;
//! - expressions over elements: `sum(out) == 8256`, `out[i] == 2*a[i]`, `out[0] <= max(a)`;
//!   an identifier that is not a buffer is an index variable: it ranges over the indices of the
//!   buffers it indexes, and every value of it must satisfy the expectation;
//! - comparisons `== != < <= > >=`, arithmetic `+ - * / %`, `&& || !`, parentheses;
//! - functions `sum(b)`, `len(b)`, `min(b)`, `max(b)` over a buffer, `min(x, y)`, `max(x, y)`,
//!   `abs(x)` over numbers;
//! - integer (`42`, `0x2a`) and float (`2.5`, `1e-3`) literals.
//!
//! Values are typed by the buffer's element type: an element of a `u32` buffer is unsigned, of
//! an `f32` buffer a single-precision float. Integer arithmetic is exact (128 bits, division
//! truncates toward zero as in C); arithmetic with a float is done in the float's precision, and
//! a float literal takes the precision of the float it meets (`out[0] == 0.1` on an `f32` buffer
//! compares with 0.1 rounded to single precision). Float sums are accumulated in double
//! precision.
//!
//! Three steps: [`Expectation::parse`] (syntax, with the offset of an error),
//! [`Expectation::bind`] (names against the launch's buffers, kinds of every subexpression), and
//! [`Bound::check`] (evaluation over final buffers, the first violating element and its values).

use crate::{Elem, ElemKind};
use std::fmt;

/// An expectation as written, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// The text as written.
    pub text: String,
    expr: Expr,
}

/// A syntax or binding error: what is wrong, at which character of the expectation's text, and
/// what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectError {
    pub message: String,
    /// 0-based character offset into the expectation's text.
    pub at: usize,
    pub help: String,
}

/// An expectation bound to the launch's buffers, ready to check.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// The text as written.
    pub text: String,
    expr: Expr,
    /// The launch's buffers the expectation reads (indices into the launch's buffer list), with
    /// their names and element types.
    pub buffers: Vec<(usize, String, Elem)>,
    /// Index variables with the length of the buffers they range over.
    vars: Vec<(String, u64)>,
}

/// A violated expectation: the expectation and where it fails, with the values involved.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub expectation: String,
    /// The index variables' values at the first failing point (`i = 3`), empty without any.
    pub at: Vec<(String, u64)>,
    /// The values read at that point, in order: `out[3] = 5`, `sum(out) = 8200`.
    pub values: Vec<(String, String)>,
    /// Why it fails, when it is not simply false: an index out of range, a division by zero.
    pub error: Option<String>,
}

impl fmt::Display for Violation {
    /// `out[i] == 2*a[i] fails at i = 3: out[3] = 5, a[3] = 3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` fails", self.expectation)?;
        if !self.at.is_empty() {
            let at: Vec<String> = self.at.iter().map(|(n, v)| format!("{n} = {v}")).collect();
            write!(f, " at {}", at.join(", "))?;
        }
        if let Some(e) = &self.error {
            write!(f, ": {e}")?;
        }
        if !self.values.is_empty() {
            let values: Vec<String> = self
                .values
                .iter()
                .map(|(n, v)| format!("{n} = {v}"))
                .collect();
            write!(
                f,
                "{}{}",
                if self.error.is_some() { "; " } else { ": " },
                values.join(", ")
            )?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Syntax
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinOp {
    fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
        }
    }
    fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// The functions of the language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    Sum,
    Len,
    Min,
    Max,
    Abs,
}

impl Func {
    fn of(name: &str) -> Option<Func> {
        Some(match name {
            "sum" => Func::Sum,
            "len" => Func::Len,
            "min" => Func::Min,
            "max" => Func::Max,
            "abs" => Func::Abs,
            _ => return None,
        })
    }
    fn name(self) -> &'static str {
        match self {
            Func::Sum => "sum",
            Func::Len => "len",
            Func::Min => "min",
            Func::Max => "max",
            Func::Abs => "abs",
        }
    }
}

/// An expression; `at` fields are character offsets for errors. Names are resolved by
/// [`Expectation::bind`]: `Name` becomes `Buffer` or `Var`.
#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Int(i128),
    Float(f64),
    Name(String, usize),
    /// A whole buffer (by its position in [`Bound::buffers`]).
    Buffer(usize),
    /// An index variable (by its position in [`Bound::vars`]).
    Var(usize),
    Index(String, usize, Box<Expr>),
    /// `buffer[index]` bound: the buffer's position in [`Bound::buffers`].
    Element(usize, Box<Expr>),
    Call(Func, Vec<Expr>, usize),
    List(Vec<Expr>, usize),
    Not(Box<Expr>, usize),
    Neg(Box<Expr>, usize),
    Binary(BinOp, Box<Expr>, Box<Expr>, usize),
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Int(i128),
    Float(f64),
    Ident(String),
    Op(&'static str),
    End,
}

const OPERATORS: [&str; 20] = [
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%", "!", "(", ")", "[", "]",
    ",", "=",
];

fn tokens(text: &str) -> Result<Vec<(Token, usize)>, ExpectError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            let hex = c == '0' && matches!(chars.get(i + 1), Some('x' | 'X'));
            if hex {
                i += 2;
                while i < chars.len() && (chars[i].is_ascii_hexdigit() || chars[i] == '_') {
                    i += 1;
                }
            } else {
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric()
                        || chars[i] == '.'
                        || chars[i] == '_'
                        || ((chars[i] == '-' || chars[i] == '+')
                            && matches!(chars[i - 1], 'e' | 'E')))
                {
                    i += 1;
                }
            }
            let word: String = chars[start..i].iter().filter(|&&c| c != '_').collect();
            let bad = || ExpectError {
                message: format!("`{word}` is not a number"),
                at: start,
                help: "write an integer (42, -7, 0x2a) or a float (2.5, 1e-3)".to_string(),
            };
            let token = if hex {
                Token::Int(i128::from_str_radix(&word[2..], 16).map_err(|_| bad())?)
            } else if word.contains(['.', 'e', 'E']) {
                Token::Float(word.parse().map_err(|_| bad())?)
            } else {
                Token::Int(word.parse().map_err(|_| bad())?)
            };
            out.push((token, start));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Token::Ident(chars[start..i].iter().collect()), start));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            match OPERATORS.iter().find(|op| rest.starts_with(**op)) {
                Some(&"=") => {
                    return Err(ExpectError {
                        message: "`=` is not a comparison".to_string(),
                        at: i,
                        help: "compare with `==`".to_string(),
                    });
                }
                Some(op) => {
                    out.push((Token::Op(op), i));
                    i += op.chars().count();
                }
                None => {
                    return Err(ExpectError {
                        message: format!("unexpected character `{c}`"),
                        at: i,
                        help: "an expectation uses buffers, numbers, `[ ]`, `( )`, + - * / %, comparisons, && || ! and sum/len/min/max/abs".to_string(),
                    });
                }
            }
        }
    }
    out.push((Token::End, chars.len()));
    Ok(out)
}

struct Parser {
    tokens: Vec<(Token, usize)>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.at].0
    }
    fn offset(&self) -> usize {
        self.tokens[self.at].1
    }
    fn eat(&mut self, op: &str) -> bool {
        if *self.peek() == Token::Op(op_static(op)) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, op: &'static str, what: &str) -> Result<(), ExpectError> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{op}` {what}"), format!("add `{op}`")))
        }
    }
    fn error(&self, message: String, help: String) -> ExpectError {
        ExpectError {
            message: format!("{message}, found {}", describe(self.peek())),
            at: self.offset(),
            help,
        }
    }

    fn or(&mut self) -> Result<Expr, ExpectError> {
        let mut left = self.and()?;
        while let Token::Op("||") = self.peek() {
            let at = self.offset();
            self.at += 1;
            left = Expr::Binary(BinOp::Or, Box::new(left), Box::new(self.and()?), at);
        }
        Ok(left)
    }
    fn and(&mut self) -> Result<Expr, ExpectError> {
        let mut left = self.not()?;
        while let Token::Op("&&") = self.peek() {
            let at = self.offset();
            self.at += 1;
            left = Expr::Binary(BinOp::And, Box::new(left), Box::new(self.not()?), at);
        }
        Ok(left)
    }
    fn not(&mut self) -> Result<Expr, ExpectError> {
        let at = self.offset();
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.not()?), at));
        }
        self.comparison()
    }
    fn comparison(&mut self) -> Result<Expr, ExpectError> {
        let left = self.sum()?;
        let op = match self.peek() {
            Token::Op("==") => BinOp::Eq,
            Token::Op("!=") => BinOp::Ne,
            Token::Op("<") => BinOp::Lt,
            Token::Op("<=") => BinOp::Le,
            Token::Op(">") => BinOp::Gt,
            Token::Op(">=") => BinOp::Ge,
            _ => return Ok(left),
        };
        let at = self.offset();
        self.at += 1;
        let right = self.sum()?;
        if let Token::Op(o @ ("==" | "!=" | "<" | "<=" | ">" | ">=")) = self.peek() {
            return Err(ExpectError {
                message: format!("comparisons do not chain (a second `{o}`)"),
                at: self.offset(),
                help: "join two comparisons with `&&`: `0 <= x && x < 8`".to_string(),
            });
        }
        Ok(Expr::Binary(op, Box::new(left), Box::new(right), at))
    }
    fn sum(&mut self) -> Result<Expr, ExpectError> {
        let mut left = self.product()?;
        loop {
            let op = match self.peek() {
                Token::Op("+") => BinOp::Add,
                Token::Op("-") => BinOp::Sub,
                _ => return Ok(left),
            };
            let at = self.offset();
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.product()?), at);
        }
    }
    fn product(&mut self) -> Result<Expr, ExpectError> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Token::Op("*") => BinOp::Mul,
                Token::Op("/") => BinOp::Div,
                Token::Op("%") => BinOp::Rem,
                _ => return Ok(left),
            };
            let at = self.offset();
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.unary()?), at);
        }
    }
    fn unary(&mut self) -> Result<Expr, ExpectError> {
        let at = self.offset();
        if self.eat("-") {
            return Ok(match self.unary()? {
                Expr::Int(v) => Expr::Int(-v),
                Expr::Float(v) => Expr::Float(-v),
                e => Expr::Neg(Box::new(e), at),
            });
        }
        self.primary()
    }
    fn primary(&mut self) -> Result<Expr, ExpectError> {
        let at = self.offset();
        match self.peek().clone() {
            Token::Int(v) => {
                self.at += 1;
                Ok(Expr::Int(v))
            }
            Token::Float(v) => {
                self.at += 1;
                Ok(Expr::Float(v))
            }
            Token::Op("(") => {
                self.at += 1;
                let e = self.or()?;
                self.expect(")", "to close `(`")?;
                Ok(e)
            }
            Token::Op("[") => {
                self.at += 1;
                let mut items = Vec::new();
                if !self.eat("]") {
                    loop {
                        items.push(self.sum()?);
                        if self.eat("]") {
                            break;
                        }
                        self.expect(",", "between values or `]` to close the list")?;
                    }
                }
                Ok(Expr::List(items, at))
            }
            Token::Ident(name) => {
                self.at += 1;
                if self.eat("(") {
                    let func = Func::of(&name).ok_or_else(|| ExpectError {
                        message: format!("unknown function `{name}`"),
                        at,
                        help: "the functions are sum, len, min, max and abs".to_string(),
                    })?;
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.or()?);
                            if self.eat(")") {
                                break;
                            }
                            self.expect(",", "between arguments or `)` to close the call")?;
                        }
                    }
                    Ok(Expr::Call(func, args, at))
                } else if self.eat("[") {
                    let index = self.sum()?;
                    self.expect("]", "to close the index")?;
                    Ok(Expr::Index(name, at, Box::new(index)))
                } else {
                    Ok(Expr::Name(name, at))
                }
            }
            _ => Err(self.error(
                "expected a value".to_string(),
                "write a buffer (`out`), an element (`out[i]`), a number, a list `[1, 2]` or a call `sum(out)`".to_string(),
            )),
        }
    }
}

fn op_static(op: &str) -> &'static str {
    OPERATORS.iter().find(|o| **o == op).copied().unwrap_or("")
}

fn describe(t: &Token) -> String {
    match t {
        Token::Int(v) => format!("`{v}`"),
        Token::Float(v) => format!("`{v}`"),
        Token::Ident(n) => format!("`{n}`"),
        Token::Op(o) => format!("`{o}`"),
        Token::End => "the end".to_string(),
    }
}

impl Expectation {
    /// An expectation's text that did not parse (for locating its error).
    pub fn unparsed(text: &str) -> Expectation {
        Expectation {
            text: text.to_string(),
            expr: Expr::Int(0),
        }
    }

    /// Parses an expectation's text.
    pub fn parse(text: &str) -> Result<Expectation, ExpectError> {
        let mut p = Parser {
            tokens: tokens(text)?,
            at: 0,
        };
        if *p.peek() == Token::End {
            return Err(ExpectError {
                message: "the expectation is empty".to_string(),
                at: 0,
                help: "write a condition on the final buffers, e.g. `sum(out) == 8256`".to_string(),
            });
        }
        let expr = p.or()?;
        if *p.peek() != Token::End {
            return Err(p.error(
                "expected an operator or the end".to_string(),
                "join conditions with `&&` or `||`".to_string(),
            ));
        }
        Ok(Expectation {
            text: text.to_string(),
            expr,
        })
    }

    /// Names the buffers: every identifier that names one of `buffers` (name, element type,
    /// length, in the launch's order) is that buffer, every other one an index variable; checks
    /// that the expectation is a condition and that every part is used as what it is.
    pub fn bind(&self, buffers: &[(&str, Elem, u64)]) -> Result<Bound, ExpectError> {
        let mut b = Binder {
            launch: buffers,
            used: Vec::new(),
            vars: Vec::new(),
        };
        let expr = b.expr(&self.expr)?;
        let mut vars = Vec::new();
        for (name, at, len) in b.vars {
            let len = len.ok_or_else(|| ExpectError {
                message: format!("`{name}` is neither a buffer nor an index"),
                at,
                help: format!(
                    "an index variable ranges over the buffer it indexes: use it as `BUF[{name}]`; the buffers are: {}",
                    names(buffers)
                ),
            })?;
            vars.push((name, len));
        }
        Bound {
            text: self.text.clone(),
            expr,
            buffers: b.used,
            vars,
        }
        .checked()
    }
}

fn names(buffers: &[(&str, Elem, u64)]) -> String {
    if buffers.is_empty() {
        "(none)".to_string()
    } else {
        buffers.iter().map(|b| b.0).collect::<Vec<_>>().join(", ")
    }
}

// ---------------------------------------------------------------------------------------------
// Binding and kinds
// ---------------------------------------------------------------------------------------------

/// What a subexpression is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Number,
    /// A whole buffer or a list of values.
    Array,
}

impl Kind {
    fn text(self) -> &'static str {
        match self {
            Kind::Bool => "a condition",
            Kind::Number => "a number",
            Kind::Array => "a whole buffer or list",
        }
    }
}

struct Binder<'a> {
    launch: &'a [(&'a str, Elem, u64)],
    used: Vec<(usize, String, Elem)>,
    /// Index variables: name, first offset, length of the buffers it indexes.
    vars: Vec<(String, usize, Option<u64>)>,
}

impl Binder<'_> {
    fn buffer(&mut self, name: &str) -> Option<usize> {
        let i = self.launch.iter().position(|b| b.0 == name)?;
        Some(match self.used.iter().position(|u| u.0 == i) {
            Some(p) => p,
            None => {
                self.used.push((i, name.to_string(), self.launch[i].1));
                self.used.len() - 1
            }
        })
    }
    fn var(&mut self, name: &str, at: usize) -> usize {
        match self.vars.iter().position(|v| v.0 == name) {
            Some(p) => p,
            None => {
                self.vars.push((name.to_string(), at, None));
                self.vars.len() - 1
            }
        }
    }

    fn expr(&mut self, e: &Expr) -> Result<Expr, ExpectError> {
        Ok(match e {
            Expr::Name(name, at) => match self.buffer(name) {
                Some(b) => Expr::Buffer(b),
                None => {
                    if Func::of(name).is_some() {
                        return Err(ExpectError {
                            message: format!("`{name}` is a function"),
                            at: *at,
                            help: format!("call it: `{name}(out)`"),
                        });
                    }
                    Expr::Var(self.var(name, *at))
                }
            },
            Expr::Index(name, at, index) => {
                let b = self.buffer(name).ok_or_else(|| ExpectError {
                    message: format!("unknown buffer `{name}`"),
                    at: *at,
                    help: format!("the buffers are: {}", names(self.launch)),
                })?;
                let index = self.expr(index)?;
                if let Expr::Var(v) = index {
                    // A variable used directly as an index ranges over that buffer.
                    let len = self.launch[self.used[b].0].2;
                    let (vname, _, range) = &mut self.vars[v];
                    match range {
                        None => *range = Some(len),
                        Some(l) if *l != len => {
                            return Err(ExpectError {
                                message: format!(
                                    "`{vname}` indexes buffers of different lengths ({l} and {len} for `{name}`)"
                                ),
                                at: *at,
                                help: format!(
                                    "give each buffer its own index variable, or index `{name}` with an expression of `{vname}`"
                                ),
                            });
                        }
                        Some(_) => {}
                    }
                }
                Expr::Element(b, Box::new(index))
            }
            Expr::Call(f, args, at) => Expr::Call(
                *f,
                args.iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<_, _>>()?,
                *at,
            ),
            Expr::List(items, at) => Expr::List(
                items
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<_, _>>()?,
                *at,
            ),
            Expr::Not(x, at) => Expr::Not(Box::new(self.expr(x)?), *at),
            Expr::Neg(x, at) => Expr::Neg(Box::new(self.expr(x)?), *at),
            Expr::Binary(op, l, r, at) => {
                Expr::Binary(*op, Box::new(self.expr(l)?), Box::new(self.expr(r)?), *at)
            }
            other => other.clone(),
        })
    }
}

impl Bound {
    /// The kind of `e`, checked: every operator gets the kinds it takes.
    fn kind_checked(&self, e: &Expr) -> Result<Kind, ExpectError> {
        let want = |k: Kind, want: Kind, at: usize, what: &str| -> Result<(), ExpectError> {
            if k == want {
                Ok(())
            } else {
                Err(ExpectError {
                    message: format!("{what} takes {}, not {}", want.text(), k.text()),
                    at,
                    help: match k {
                        Kind::Array => {
                            "index the buffer (`out[i]`) or reduce it (`sum(out)`)".to_string()
                        }
                        Kind::Bool => "conditions join with && || ! only".to_string(),
                        Kind::Number => "compare numbers to make a condition".to_string(),
                    },
                })
            }
        };
        Ok(match e {
            Expr::Int(_) | Expr::Float(_) | Expr::Var(_) | Expr::Element(..) => {
                if let Expr::Element(_, i) = e {
                    let k = self.kind_checked(i)?;
                    want(k, Kind::Number, 0, "an index")?;
                }
                Kind::Number
            }
            Expr::Buffer(_) => Kind::Array,
            Expr::List(items, at) => {
                for i in items {
                    let k = self.kind_checked(i)?;
                    want(k, Kind::Number, *at, "a list")?;
                }
                Kind::Array
            }
            Expr::Call(f, args, at) => {
                let kinds: Vec<Kind> = args
                    .iter()
                    .map(|a| self.kind_checked(a))
                    .collect::<Result<_, _>>()?;
                let ok = matches!(
                    (f, kinds.as_slice()),
                    (Func::Sum | Func::Len | Func::Min | Func::Max, [Kind::Array])
                        | (Func::Min | Func::Max, [Kind::Number, Kind::Number])
                        | (Func::Abs, [Kind::Number])
                );
                if !ok {
                    return Err(ExpectError {
                        message: format!("`{}` does not take {} argument{}{}", f.name(), kinds.len(), if kinds.len() == 1 { "" } else { "s" },
                            if kinds.is_empty() { String::new() } else { format!(" ({})", kinds.iter().map(|k| k.text()).collect::<Vec<_>>().join(", ")) }),
                        at: *at,
                        help: "sum(b), len(b), min(b), max(b) take a buffer; min(x, y), max(x, y) and abs(x) take numbers".to_string(),
                    });
                }
                Kind::Number
            }
            Expr::Not(x, at) => {
                want(self.kind_checked(x)?, Kind::Bool, *at, "`!`")?;
                Kind::Bool
            }
            Expr::Neg(x, at) => {
                want(self.kind_checked(x)?, Kind::Number, *at, "`-`")?;
                Kind::Number
            }
            Expr::Binary(op, l, r, at) => {
                let (kl, kr) = (self.kind_checked(l)?, self.kind_checked(r)?);
                let what = format!("`{}`", op.symbol());
                match op {
                    BinOp::And | BinOp::Or => {
                        want(kl, Kind::Bool, *at, &what)?;
                        want(kr, Kind::Bool, *at, &what)?;
                    }
                    BinOp::Eq | BinOp::Ne if kl == Kind::Array || kr == Kind::Array => {
                        want(kl, Kind::Array, *at, &format!("{what} with a whole buffer"))?;
                        want(kr, Kind::Array, *at, &format!("{what} with a whole buffer"))?;
                    }
                    _ => {
                        want(kl, Kind::Number, *at, &what)?;
                        want(kr, Kind::Number, *at, &what)?;
                    }
                }
                if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
                    Kind::Bool
                } else {
                    Kind::Number
                }
            }
            Expr::Name(..) | Expr::Index(..) => Kind::Bool,
        })
    }

    /// The bound expectation, when it is a condition whose every part has the kinds it takes.
    fn checked(self) -> Result<Bound, ExpectError> {
        match self.kind_checked(&self.expr)? {
            Kind::Bool => Ok(self),
            other => Err(ExpectError {
                message: format!("the expectation is {}, not a condition", other.text()),
                at: 0,
                help: "compare it: `sum(out) == 8256`, `out == [1, 2, 3]`, `out[i] == 2*a[i]`"
                    .to_string(),
            }),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------------------------

/// Float precisions, narrowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Precision {
    F16,
    F32,
    F64,
}

impl Precision {
    fn round(self, v: f64) -> f64 {
        match self {
            Precision::F16 => half::f16::from_f64(v).to_f64(),
            Precision::F32 => v as f32 as f64,
            Precision::F64 => v,
        }
    }
}

/// A value: integers exact, floats with their precision (`None`: a literal, which takes the
/// precision of what it meets).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Val {
    Int(i128),
    Float(f64, Option<Precision>),
    Bool(bool),
}

impl Val {
    fn text(self) -> String {
        match self {
            Val::Int(v) => v.to_string(),
            Val::Float(v, Some(Precision::F32 | Precision::F16)) => format!("{:?}", v as f32),
            Val::Float(v, _) => format!("{v:?}"),
            Val::Bool(b) => b.to_string(),
        }
    }
    fn float(self) -> f64 {
        match self {
            Val::Int(v) => v as f64,
            Val::Float(v, _) => v,
            Val::Bool(b) => b as u8 as f64,
        }
    }
}

/// Why evaluation stopped (an index out of range, a division by zero, an overflow).
type EvalError = String;

struct Eval<'a> {
    bound: &'a Bound,
    /// The bytes of each buffer in [`Bound::buffers`].
    data: &'a [&'a [u8]],
    env: Vec<u64>,
    /// What was read, in order (`out[3]` and its value), for the report.
    seen: Vec<(String, String)>,
}

fn element(elem: Elem, bytes: &[u8], i: u64) -> Option<Val> {
    let size = elem.size();
    let start = usize::try_from(i).ok()?.checked_mul(size)?;
    let chunk = bytes.get(start..start + size)?;
    let mut raw = [0u8; 8];
    raw[..size].copy_from_slice(chunk);
    let bits = u64::from_le_bytes(raw);
    Some(match (elem.kind(), elem) {
        (ElemKind::Float, Elem::F16) => Val::Float(
            half::f16::from_bits(bits as u16).to_f64(),
            Some(Precision::F16),
        ),
        (ElemKind::Float, Elem::F32) => {
            Val::Float(f32::from_bits(bits as u32) as f64, Some(Precision::F32))
        }
        (ElemKind::Float, _) => Val::Float(f64::from_bits(bits), Some(Precision::F64)),
        (ElemKind::Signed, _) => {
            let shift = 64 - 8 * size as u32;
            Val::Int((((bits << shift) as i64) >> shift) as i128)
        }
        (ElemKind::Unsigned, _) => Val::Int(bits as i128),
    })
}

/// The precision two floats (or a float and an integer) compute in.
fn precision(a: Val, b: Val) -> Option<Precision> {
    match (a, b) {
        (Val::Float(_, p), Val::Float(_, q)) => p.max(q),
        (Val::Float(_, p), _) | (_, Val::Float(_, p)) => p,
        _ => None,
    }
}

fn arith(op: BinOp, a: Val, b: Val) -> Result<Val, EvalError> {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => {
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div | BinOp::Rem if y == 0 => {
                    return Err(format!("{} {} {}: division by zero", x, op.symbol(), y));
                }
                BinOp::Div => x.checked_div(y),
                BinOp::Rem => x.checked_rem(y),
                _ => None,
            };
            r.map(Val::Int)
                .ok_or_else(|| format!("{x} {} {y} overflows", op.symbol()))
        }
        _ => {
            let p = precision(a, b);
            let round = |v: f64| p.map_or(v, |p| p.round(v));
            let (x, y) = (round(a.float()), round(b.float()));
            let r = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                BinOp::Rem => x % y,
                _ => f64::NAN,
            };
            Ok(Val::Float(round(r), p))
        }
    }
}

fn compare(op: BinOp, a: Val, b: Val) -> bool {
    use std::cmp::Ordering;
    let ord = match (a, b) {
        (Val::Int(x), Val::Int(y)) => Some(x.cmp(&y)),
        _ => {
            let p = precision(a, b);
            let round = |v: f64| p.map_or(v, |p| p.round(v));
            round(a.float()).partial_cmp(&round(b.float()))
        }
    };
    match (op, ord) {
        (BinOp::Ne, None) => true,
        (_, None) => false,
        (BinOp::Eq, Some(o)) => o == Ordering::Equal,
        (BinOp::Ne, Some(o)) => o != Ordering::Equal,
        (BinOp::Lt, Some(o)) => o == Ordering::Less,
        (BinOp::Le, Some(o)) => o != Ordering::Greater,
        (BinOp::Gt, Some(o)) => o == Ordering::Greater,
        (BinOp::Ge, Some(o)) => o != Ordering::Less,
        _ => false,
    }
}

impl Eval<'_> {
    fn note(&mut self, name: String, v: Val) {
        let entry = (name, v.text());
        if !self.seen.contains(&entry) {
            self.seen.push(entry);
        }
    }

    fn buffer_len(&self, b: usize) -> u64 {
        (self.data[b].len() / self.bound.buffers[b].2.size()) as u64
    }

    fn element(&mut self, b: usize, i: i128) -> Result<Val, EvalError> {
        let (_, name, elem) = &self.bound.buffers[b];
        let len = self.buffer_len(b);
        let v = u64::try_from(i)
            .ok()
            .and_then(|i| element(*elem, self.data[b], i))
            .ok_or_else(|| format!("{name}[{i}] is out of range ({name} has {len} elements)"))?;
        self.note(format!("{name}[{i}]"), v);
        Ok(v)
    }

    /// The elements of an array expression (a buffer or a list), with each one's name for the
    /// report (`out[2]`, or `[2]` for a list's).
    fn array(&mut self, e: &Expr) -> Result<Vec<(String, Val)>, EvalError> {
        match e {
            Expr::Buffer(b) => {
                let (_, name, elem) = &self.bound.buffers[*b];
                Ok((0..self.buffer_len(*b))
                    .filter_map(|i| {
                        element(*elem, self.data[*b], i).map(|v| (format!("{name}[{i}]"), v))
                    })
                    .collect())
            }
            Expr::List(items, _) => items
                .iter()
                .enumerate()
                .map(|(i, x)| Ok((format!("[{i}]"), self.value(x)?)))
                .collect(),
            _ => Err("not an array".to_string()),
        }
    }

    fn value(&mut self, e: &Expr) -> Result<Val, EvalError> {
        Ok(match e {
            Expr::Int(v) => Val::Int(*v),
            Expr::Float(v) => Val::Float(*v, None),
            Expr::Var(v) => Val::Int(self.env[*v] as i128),
            Expr::Element(b, index) => {
                let i = match self.value(index)? {
                    Val::Int(i) => i,
                    Val::Float(f, _) if f.fract() == 0.0 => f as i128,
                    other => return Err(format!("index {} is not an integer", other.text())),
                };
                self.element(*b, i)?
            }
            Expr::Call(f, args, _) => self.call(*f, args)?,
            Expr::Not(x, _) => Val::Bool(!self.truth(x)?),
            Expr::Neg(x, _) => match self.value(x)? {
                Val::Int(v) => Val::Int(-v),
                Val::Float(v, p) => Val::Float(-v, p),
                b => b,
            },
            Expr::Binary(op, l, r, _) => match op {
                BinOp::And => Val::Bool(self.truth(l)? && self.truth(r)?),
                BinOp::Or => Val::Bool(self.truth(l)? || self.truth(r)?),
                BinOp::Eq | BinOp::Ne if self.is_array(l) => {
                    let equal = self.arrays_equal(l, r)?;
                    Val::Bool(equal == (*op == BinOp::Eq))
                }
                op if op.is_comparison() => {
                    let (a, b) = (self.value(l)?, self.value(r)?);
                    Val::Bool(compare(*op, a, b))
                }
                op => {
                    let (a, b) = (self.value(l)?, self.value(r)?);
                    arith(*op, a, b)?
                }
            },
            Expr::Buffer(_) | Expr::List(..) | Expr::Name(..) | Expr::Index(..) => {
                return Err("a whole buffer is not a value".to_string());
            }
        })
    }

    fn is_array(&self, e: &Expr) -> bool {
        matches!(e, Expr::Buffer(_) | Expr::List(..))
    }

    /// `l == r` for arrays; the first difference (or the lengths) goes into the report.
    fn arrays_equal(&mut self, l: &Expr, r: &Expr) -> Result<bool, EvalError> {
        let (a, b) = (self.array(l)?, self.array(r)?);
        let len_name = |e: &Expr| match e {
            Expr::Buffer(b) => format!("len({})", self.bound.buffers[*b].1),
            _ => "len([...])".to_string(),
        };
        if a.len() != b.len() {
            let (la, lb) = (len_name(l), len_name(r));
            self.seen.push((la, a.len().to_string()));
            self.seen.push((lb, b.len().to_string()));
            return Ok(false);
        }
        for ((na, va), (nb, vb)) in a.iter().zip(&b) {
            if !compare(BinOp::Eq, *va, *vb) {
                // A list's element is named by the buffer's (`out[2] = 7, expected 3`).
                if nb.starts_with('[') {
                    self.seen.push((
                        na.clone(),
                        format!("{} (expected {})", va.text(), vb.text()),
                    ));
                } else if na.starts_with('[') {
                    self.seen.push((
                        nb.clone(),
                        format!("{} (expected {})", vb.text(), va.text()),
                    ));
                } else {
                    self.note(na.clone(), *va);
                    self.note(nb.clone(), *vb);
                }
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn call(&mut self, f: Func, args: &[Expr]) -> Result<Val, EvalError> {
        let v = match (f, args) {
            (Func::Len, [x]) => Val::Int(self.array(x)?.len() as i128),
            (Func::Sum, [x]) => {
                let items = self.array(x)?;
                let mut int: i128 = 0;
                let mut float = 0.0f64;
                let mut is_float = false;
                for (_, v) in items {
                    match v {
                        Val::Int(i) => {
                            int = int.checked_add(i).ok_or("the sum overflows")?;
                        }
                        other => {
                            is_float = true;
                            float += other.float();
                        }
                    }
                }
                if is_float {
                    Val::Float(float + int as f64, Some(Precision::F64))
                } else {
                    Val::Int(int)
                }
            }
            (Func::Min | Func::Max, [x]) => {
                let items = self.array(x)?;
                let want = if f == Func::Min { BinOp::Lt } else { BinOp::Gt };
                let mut best: Option<Val> = None;
                for (_, v) in items {
                    if best.is_none_or(|b| compare(want, v, b)) {
                        best = Some(v);
                    }
                }
                best.ok_or("an empty list has no minimum or maximum")?
            }
            (Func::Min | Func::Max, [x, y]) => {
                let (a, b) = (self.value(x)?, self.value(y)?);
                let want = if f == Func::Min { BinOp::Le } else { BinOp::Ge };
                if compare(want, a, b) { a } else { b }
            }
            (Func::Abs, [x]) => match self.value(x)? {
                Val::Int(v) => Val::Int(v.abs()),
                Val::Float(v, p) => Val::Float(v.abs(), p),
                b => b,
            },
            _ => return Err(format!("`{}` has the wrong arguments", f.name())),
        };
        if let [Expr::Buffer(b)] = args {
            let name = format!("{}({})", f.name(), self.bound.buffers[*b].1);
            self.note(name, v);
        }
        Ok(v)
    }

    fn truth(&mut self, e: &Expr) -> Result<bool, EvalError> {
        match self.value(e)? {
            Val::Bool(b) => Ok(b),
            other => Err(format!("{} is not a condition", other.text())),
        }
    }
}

impl Bound {
    /// Checks the expectation against final buffers: `data[k]` holds the bytes of
    /// `self.buffers[k]`. Every value of the index variables is tried in order (the first
    /// variable outermost); the first that fails is reported.
    pub fn check(&self, data: &[&[u8]]) -> Result<(), Violation> {
        let mut env = vec![0u64; self.vars.len()];
        if self.vars.iter().any(|v| v.1 == 0) {
            return Ok(());
        }
        loop {
            let mut eval = Eval {
                bound: self,
                data,
                env: env.clone(),
                seen: Vec::new(),
            };
            let result = eval.truth(&self.expr);
            let at = || {
                self.vars
                    .iter()
                    .zip(&env)
                    .map(|((n, _), v)| (n.clone(), *v))
                    .collect()
            };
            match result {
                Ok(true) => {}
                Ok(false) => {
                    return Err(Violation {
                        expectation: self.text.clone(),
                        at: at(),
                        values: eval.seen,
                        error: None,
                    });
                }
                Err(e) => {
                    return Err(Violation {
                        expectation: self.text.clone(),
                        at: at(),
                        values: eval.seen,
                        error: Some(e),
                    });
                }
            }
            // The next assignment, the last variable innermost.
            let mut k = self.vars.len();
            loop {
                if k == 0 {
                    return Ok(());
                }
                k -= 1;
                env[k] += 1;
                if env[k] < self.vars[k].1 {
                    break;
                }
                env[k] = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_s32(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    fn bytes_f32(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn check(text: &str, buffers: &[(&str, Elem, Vec<u8>)]) -> Result<(), String> {
        let launch: Vec<(&str, Elem, u64)> = buffers
            .iter()
            .map(|(n, e, b)| (*n, *e, (b.len() / e.size()) as u64))
            .collect();
        let e = Expectation::parse(text).map_err(|e| format!("parse@{}: {}", e.at, e.message))?;
        let bound = e
            .bind(&launch)
            .map_err(|e| format!("bind@{}: {}", e.at, e.message))?;
        let data: Vec<&[u8]> = bound
            .buffers
            .iter()
            .map(|(i, _, _)| buffers[*i].2.as_slice())
            .collect();
        bound.check(&data).map_err(|v| v.to_string())
    }

    #[test]
    fn buffer_equal_to_values() {
        let out = ("out", Elem::S32, bytes_s32(&[1, 2, 3]));
        assert_eq!(
            check("out == [1, 2, 3]", std::slice::from_ref(&out)),
            Ok(())
        );
        assert_eq!(
            check("out == [1, 5, 3]", std::slice::from_ref(&out)),
            Err("`out == [1, 5, 3]` fails: out[1] = 2 (expected 5)".to_string())
        );
        assert_eq!(
            check("out == [1, 2]", std::slice::from_ref(&out)),
            Err("`out == [1, 2]` fails: len(out) = 3, len([...]) = 2".to_string())
        );
        assert_eq!(check("out != [1, 2, 4]", &[out]), Ok(()));
    }

    #[test]
    fn every_index_must_satisfy() {
        let out = ("out", Elem::S32, bytes_s32(&[0, 2, 4, 5]));
        let a = ("a", Elem::S32, bytes_s32(&[0, 1, 2, 3]));
        assert_eq!(
            check("out[i] == 2*a[i]", &[out.clone(), a.clone()]),
            Err("`out[i] == 2*a[i]` fails at i = 3: out[3] = 5, a[3] = 3".to_string())
        );
        assert_eq!(
            check(
                "out[i] >= a[i] && out[i] % 1 == 0",
                &[out.clone(), a.clone()]
            ),
            Ok(())
        );
        assert_eq!(
            check(
                "sum(out) == 11 && len(a) == 4 && max(a) == 3 && min(out) == 0",
                &[out.clone(), a]
            ),
            Ok(())
        );
        assert_eq!(
            check("sum(out) == 12", std::slice::from_ref(&out)),
            Err("`sum(out) == 12` fails: sum(out) = 11".to_string())
        );
        let e = check("out[i + 1] >= out[i]", &[out]).unwrap_err();
        assert!(
            e.contains("at i = 3: out[4] is out of range (out has 4 elements)"),
            "{e}"
        );
    }

    #[test]
    fn floats_take_the_buffers_precision() {
        let out = ("out", Elem::F32, bytes_f32(&[0.1, 2.5]));
        assert_eq!(
            check(
                "out[0] == 0.1 && out == [0.1, 2.5]",
                std::slice::from_ref(&out)
            ),
            Ok(())
        );
        assert!(check("out[0] == 0.2", std::slice::from_ref(&out)).is_err());
        assert_eq!(check("abs(sum(out) - 2.6) < 1e-6", &[out]), Ok(()));
    }

    #[test]
    fn unsigned_elements_read_unsigned() {
        let out = ("out", Elem::U32, bytes_s32(&[-1]));
        assert_eq!(check("out[0] == 4294967295 && out[0] > 0", &[out]), Ok(()));
    }

    #[test]
    fn syntax_errors_say_where() {
        let e = Expectation::parse("sum(out) = 8").unwrap_err();
        assert_eq!((e.at, e.message.as_str()), (9, "`=` is not a comparison"));
        let e = Expectation::parse("out[i == 2").unwrap_err();
        assert_eq!(
            (e.at, e.message.as_str()),
            (6, "expected `]` to close the index, found `==`")
        );
        let e = Expectation::parse("1 < x < 3").unwrap_err();
        assert_eq!(e.at, 6);
        let e = Expectation::parse("frob(out) == 1").unwrap_err();
        assert_eq!((e.at, e.message.as_str()), (0, "unknown function `frob`"));
        assert_eq!(
            Expectation::parse("").unwrap_err().message,
            "the expectation is empty"
        );
    }

    #[test]
    fn binding_errors_say_where() {
        let launch = [("out", Elem::S32, 4), ("a", Elem::S32, 8)];
        let bind = |t: &str| Expectation::parse(t).unwrap().bind(&launch).map(|_| ());
        assert_eq!(bind("x[0] == 1").unwrap_err().message, "unknown buffer `x`");
        assert_eq!(
            bind("k == 1").unwrap_err().message,
            "`k` is neither a buffer nor an index"
        );
        assert_eq!(
            bind("sum(out)").unwrap_err().message,
            "the expectation is a number, not a condition"
        );
        assert!(
            bind("out[i] == a[i]")
                .unwrap_err()
                .message
                .contains("different lengths")
        );
        assert!(bind("out + 1 == 2").is_err());
        assert!(bind("out == 3").is_err());
        assert_eq!(bind("out[i] == a[2*i]"), Ok(()));
    }
}
