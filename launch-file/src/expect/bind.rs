//! Binding: names against the launch's buffers (the others are index variables) and the
//! kind of every subexpression checked.

use super::syntax::{BinOp, Expr, Func};
use super::{Bound, ExpectError, Expectation};
use crate::Elem;

impl Expectation {
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

pub(super) fn names(buffers: &[(&str, Elem, u64)]) -> String {
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
pub(super) enum Kind {
    Bool,
    Number,
    /// A whole buffer or a list of values.
    Array,
}

impl Kind {
    pub(super) fn text(self) -> &'static str {
        match self {
            Kind::Bool => "a condition",
            Kind::Number => "a number",
            Kind::Array => "a whole buffer or list",
        }
    }
}

pub(super) struct Binder<'a> {
    launch: &'a [(&'a str, Elem, u64)],
    used: Vec<(usize, String, Elem)>,
    /// Index variables: name, first offset, length of the buffers it indexes.
    vars: Vec<(String, usize, Option<u64>)>,
}

impl Binder<'_> {
    pub(super) fn buffer(&mut self, name: &str) -> Option<usize> {
        let i = self.launch.iter().position(|b| b.0 == name)?;
        Some(match self.used.iter().position(|u| u.0 == i) {
            Some(p) => p,
            None => {
                self.used.push((i, name.to_string(), self.launch[i].1));
                self.used.len() - 1
            }
        })
    }
    pub(super) fn var(&mut self, name: &str, at: usize) -> usize {
        match self.vars.iter().position(|v| v.0 == name) {
            Some(p) => p,
            None => {
                self.vars.push((name.to_string(), at, None));
                self.vars.len() - 1
            }
        }
    }

    pub(super) fn expr(&mut self, e: &Expr) -> Result<Expr, ExpectError> {
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
    pub(super) fn kind_checked(&self, e: &Expr) -> Result<Kind, ExpectError> {
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
    pub(super) fn checked(self) -> Result<Bound, ExpectError> {
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
