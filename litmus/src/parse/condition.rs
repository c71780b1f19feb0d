//! The final condition: `exists`, `~exists` or `forall` over `/\\`, `\\/`, `~`, `==`/`=` and
//! `!=` of registers and locations.

use super::ast::{Condition, Expr, Quantifier, Term};
use super::cursor::{Sub, Tok};
use super::error::{ParseError, Pos};
use super::init::thread_number;

pub(super) fn parse_condition(sub: &Sub, pos: Pos) -> Result<Condition, ParseError> {
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
