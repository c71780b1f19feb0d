//! The parser: tokens into an expression, by precedence climbing (`||`, `&&`, `!`,
//! comparisons, sums, products, unary minus, primaries), each error at its token's offset.

use super::lexer::{Token, describe, op_static, tokens};
use super::syntax::{BinOp, Expr, Func};
use super::{ExpectError, Expectation};

pub(super) struct Parser {
    tokens: Vec<(Token, usize)>,
    at: usize,
}

impl Parser {
    pub(super) fn peek(&self) -> &Token {
        &self.tokens[self.at].0
    }
    pub(super) fn offset(&self) -> usize {
        self.tokens[self.at].1
    }
    pub(super) fn eat(&mut self, op: &str) -> bool {
        if *self.peek() == Token::Op(op_static(op)) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    pub(super) fn expect(&mut self, op: &'static str, what: &str) -> Result<(), ExpectError> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{op}` {what}"), format!("add `{op}`")))
        }
    }
    pub(super) fn error(&self, message: String, help: String) -> ExpectError {
        ExpectError {
            message: format!("{message}, found {}", describe(self.peek())),
            at: self.offset(),
            help,
        }
    }

    pub(super) fn or(&mut self) -> Result<Expr, ExpectError> {
        let mut left = self.and()?;
        while let Token::Op("||") = self.peek() {
            let at = self.offset();
            self.at += 1;
            left = Expr::Binary(BinOp::Or, Box::new(left), Box::new(self.and()?), at);
        }
        Ok(left)
    }
    pub(super) fn and(&mut self) -> Result<Expr, ExpectError> {
        let mut left = self.not()?;
        while let Token::Op("&&") = self.peek() {
            let at = self.offset();
            self.at += 1;
            left = Expr::Binary(BinOp::And, Box::new(left), Box::new(self.not()?), at);
        }
        Ok(left)
    }
    pub(super) fn not(&mut self) -> Result<Expr, ExpectError> {
        let at = self.offset();
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.not()?), at));
        }
        self.comparison()
    }
    pub(super) fn comparison(&mut self) -> Result<Expr, ExpectError> {
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
    pub(super) fn sum(&mut self) -> Result<Expr, ExpectError> {
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
    pub(super) fn product(&mut self) -> Result<Expr, ExpectError> {
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
    pub(super) fn unary(&mut self) -> Result<Expr, ExpectError> {
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
    pub(super) fn primary(&mut self) -> Result<Expr, ExpectError> {
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
}
