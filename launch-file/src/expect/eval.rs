//! Evaluation over the final buffers: values typed by their buffer's element type, exact
//! integers, floats in their precision, and the first violating element with its values.

use super::syntax::{BinOp, Expr, Func};
use super::{Bound, Violation};
use crate::{Elem, ElemKind};

/// Float precisions, narrowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Precision {
    F16,
    F32,
    F64,
}

impl Precision {
    pub(super) fn round(self, v: f64) -> f64 {
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
pub(super) enum Val {
    Int(i128),
    Float(f64, Option<Precision>),
    Bool(bool),
}

impl Val {
    pub(super) fn text(self) -> String {
        match self {
            Val::Int(v) => v.to_string(),
            Val::Float(v, Some(Precision::F32 | Precision::F16)) => format!("{:?}", v as f32),
            Val::Float(v, _) => format!("{v:?}"),
            Val::Bool(b) => b.to_string(),
        }
    }
    pub(super) fn float(self) -> f64 {
        match self {
            Val::Int(v) => v as f64,
            Val::Float(v, _) => v,
            Val::Bool(b) => b as u8 as f64,
        }
    }
}

/// Why evaluation stopped (an index out of range, a division by zero, an overflow).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum EvalError {
    #[error("{x} {op} {y}: division by zero")]
    DivisionByZero { x: i128, op: &'static str, y: i128 },
    #[error("{x} {op} {y} overflows")]
    Overflow { x: i128, op: &'static str, y: i128 },
    #[error("{name}[{index}] is out of range ({name} has {len} elements)")]
    OutOfRange { name: String, index: i128, len: u64 },
    #[error("not an array")]
    NotAnArray,
    #[error("index {0} is not an integer")]
    IndexNotInteger(String),
    #[error("a whole buffer is not a value")]
    WholeBuffer,
    #[error("the sum overflows")]
    SumOverflows,
    #[error("an empty list has no minimum or maximum")]
    EmptyList,
    #[error("`{0}` has the wrong arguments")]
    WrongArguments(&'static str),
    #[error("{0} is not a condition")]
    NotACondition(String),
}

pub(super) struct Eval<'a> {
    bound: &'a Bound,
    /// The bytes of each buffer in [`Bound::buffers`].
    data: &'a [&'a [u8]],
    env: Vec<u64>,
    /// What was read, in order (`out[3]` and its value), for the report.
    seen: Vec<(String, String)>,
}

pub(super) fn element(elem: Elem, bytes: &[u8], i: u64) -> Option<Val> {
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
pub(super) fn precision(a: Val, b: Val) -> Option<Precision> {
    match (a, b) {
        (Val::Float(_, p), Val::Float(_, q)) => p.max(q),
        (Val::Float(_, p), _) | (_, Val::Float(_, p)) => p,
        _ => None,
    }
}

pub(super) fn arith(op: BinOp, a: Val, b: Val) -> Result<Val, EvalError> {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => {
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div | BinOp::Rem if y == 0 => {
                    return Err(EvalError::DivisionByZero {
                        x,
                        op: op.symbol(),
                        y,
                    });
                }
                BinOp::Div => x.checked_div(y),
                BinOp::Rem => x.checked_rem(y),
                _ => None,
            };
            r.map(Val::Int).ok_or(EvalError::Overflow {
                x,
                op: op.symbol(),
                y,
            })
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

pub(super) fn compare(op: BinOp, a: Val, b: Val) -> bool {
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
    pub(super) fn note(&mut self, name: String, v: Val) {
        let entry = (name, v.text());
        if !self.seen.contains(&entry) {
            self.seen.push(entry);
        }
    }

    pub(super) fn buffer_len(&self, b: usize) -> u64 {
        (self.data[b].len() / self.bound.buffers[b].2.size()) as u64
    }

    pub(super) fn element(&mut self, b: usize, i: i128) -> Result<Val, EvalError> {
        let (_, name, elem) = &self.bound.buffers[b];
        let len = self.buffer_len(b);
        let v = u64::try_from(i)
            .ok()
            .and_then(|i| element(*elem, self.data[b], i))
            .ok_or_else(|| EvalError::OutOfRange {
                name: name.clone(),
                index: i,
                len,
            })?;
        self.note(format!("{name}[{i}]"), v);
        Ok(v)
    }

    /// The elements of an array expression (a buffer or a list), with each one's name for the
    /// report (`out[2]`, or `[2]` for a list's).
    pub(super) fn array(&mut self, e: &Expr) -> Result<Vec<(String, Val)>, EvalError> {
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
            _ => Err(EvalError::NotAnArray),
        }
    }

    pub(super) fn value(&mut self, e: &Expr) -> Result<Val, EvalError> {
        Ok(match e {
            Expr::Int(v) => Val::Int(*v),
            Expr::Float(v) => Val::Float(*v, None),
            Expr::Var(v) => Val::Int(self.env[*v] as i128),
            Expr::Element(b, index) => {
                let i = match self.value(index)? {
                    Val::Int(i) => i,
                    Val::Float(f, _) if f.fract() == 0.0 => f as i128,
                    other => return Err(EvalError::IndexNotInteger(other.text())),
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
                return Err(EvalError::WholeBuffer);
            }
        })
    }

    pub(super) fn is_array(&self, e: &Expr) -> bool {
        matches!(e, Expr::Buffer(_) | Expr::List(..))
    }

    /// `l == r` for arrays; the first difference (or the lengths) goes into the report.
    pub(super) fn arrays_equal(&mut self, l: &Expr, r: &Expr) -> Result<bool, EvalError> {
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

    pub(super) fn call(&mut self, f: Func, args: &[Expr]) -> Result<Val, EvalError> {
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
                            int = int.checked_add(i).ok_or(EvalError::SumOverflows)?;
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
                best.ok_or(EvalError::EmptyList)?
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
            _ => return Err(EvalError::WrongArguments(f.name())),
        };
        if let [Expr::Buffer(b)] = args {
            let name = format!("{}({})", f.name(), self.bound.buffers[*b].1);
            self.note(name, v);
        }
        Ok(v)
    }

    pub(super) fn truth(&mut self, e: &Expr) -> Result<bool, EvalError> {
        match self.value(e)? {
            Val::Bool(b) => Ok(b),
            other => Err(EvalError::NotACondition(other.text())),
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
                        error: Some(e.to_string()),
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
