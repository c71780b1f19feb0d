//! Constant folding of PTX constant expressions (PTX ISA 4.6, "Constant Expressions"; thesis 5.1.3
//! step 2: `10 / 2 + 3` becomes `8`).
//!
//! Integers are 64 bits wide and follow C's rules on `u64`/`i64`: a literal is signed unless it
//! has a `U` suffix (or does not fit in `i64`), a binary operation is unsigned when either operand
//! is, and `/ % >>` pick the signed or unsigned form accordingly. Arithmetic wraps (two's
//! complement), shift amounts are taken modulo 64, and division by zero is a diagnostic.
//! Floating-point literals (`0f...`, `0d...`, `1.5`) fold only under unary `-`/`+` and the four
//! basic operations, in `f64`.

use ptx_parser::{BinaryOp, ConstExpr, Diagnostic, FloatLiteral, Ident, Span, UnaryOp};

/// Deepest expression nesting the folder follows before giving up (no unbounded recursion).
const MAX_DEPTH: u32 = 256;

/// A folded constant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    /// Two's-complement bits and whether C would treat the value as unsigned.
    Int { bits: u64, unsigned: bool },
    /// A floating-point constant: `f32_literal` when written `0fXXXXXXXX` (exact as `.f32`).
    Float { value: f64, f32_literal: bool },
}

impl Value {
    pub(crate) fn int(bits: u64) -> Value {
        Value::Int {
            bits,
            unsigned: false,
        }
    }
}

/// How symbols in an expression are given a value: `Ok(address)` or an error diagnostic.
/// The flag says the symbol was written `generic(name)`.
pub(crate) type SymbolValue<'a> = dyn FnMut(&Ident, bool) -> Result<u64, Diagnostic> + 'a;

/// Folds `e` to a value; symbols are asked of `symbols`.
pub(crate) fn fold(e: &ConstExpr, symbols: &mut SymbolValue<'_>) -> Result<Value, Diagnostic> {
    fold_at(e, symbols, 0)
}

/// Folds `e` and requires an integer (array sizes, offsets, counts).
pub(crate) fn fold_int(e: &ConstExpr, symbols: &mut SymbolValue<'_>) -> Result<u64, Diagnostic> {
    match fold(e, symbols)? {
        Value::Int { bits, .. } => Ok(bits),
        Value::Float { .. } => Err(Diagnostic::error(
            e.span(),
            "expected an integer constant, found a floating-point one",
        )
        .with_label("floating-point constant")
        .with_help("write an integer constant here")),
    }
}

/// A folder for contexts where symbols are not allowed (immediates of arithmetic).
pub(crate) fn no_symbols(id: &Ident, _generic: bool) -> Result<u64, Diagnostic> {
    Err(
        Diagnostic::error(id.span, format!("`{}` is not a constant", id.name))
            .with_label("not a constant")
            .with_help("only integer and floating-point literals and operators may appear here"),
    )
}

fn fold_at(e: &ConstExpr, symbols: &mut SymbolValue<'_>, depth: u32) -> Result<Value, Diagnostic> {
    if depth > MAX_DEPTH {
        return Err(
            Diagnostic::error(e.span(), "constant expression nested too deeply")
                .with_label("here")
                .with_help(format!(
                    "simplify the expression (at most {MAX_DEPTH} levels of nesting)"
                )),
        );
    }
    match e {
        ConstExpr::Int {
            value, unsigned, ..
        } => Ok(Value::Int {
            bits: *value,
            unsigned: *unsigned || *value > i64::MAX as u64,
        }),
        ConstExpr::Float { bits, kind, .. } => Ok(match kind {
            FloatLiteral::HexF32 => Value::Float {
                value: f32::from_bits(*bits as u32) as f64,
                f32_literal: true,
            },
            FloatLiteral::HexF64 | FloatLiteral::Decimal => Value::Float {
                value: f64::from_bits(*bits),
                f32_literal: false,
            },
        }),
        ConstExpr::Symbol(id) => Ok(Value::int(symbols(id, false)?)),
        ConstExpr::Generic(id, _) => Ok(Value::int(symbols(id, true)?)),
        ConstExpr::Unary { op, operand, span } => {
            let v = fold_at(operand, symbols, depth + 1)?;
            unary(*op, v, *span)
        }
        ConstExpr::Binary { op, lhs, rhs, span } => {
            let a = fold_at(lhs, symbols, depth + 1)?;
            let b = fold_at(rhs, symbols, depth + 1)?;
            binary(*op, a, b, *span)
        }
        ConstExpr::Conditional {
            cond,
            then,
            otherwise,
            ..
        } => {
            let c = fold_at(cond, symbols, depth + 1)?;
            let t = fold_at(then, symbols, depth + 1)?;
            let o = fold_at(otherwise, symbols, depth + 1)?;
            Ok(if truth(c) { t } else { o })
        }
    }
}

fn truth(v: Value) -> bool {
    match v {
        Value::Int { bits, .. } => bits != 0,
        Value::Float { value, .. } => value != 0.0,
    }
}

fn unary(op: UnaryOp, v: Value, span: Span) -> Result<Value, Diagnostic> {
    Ok(match (op, v) {
        (UnaryOp::Plus, v) => v,
        (UnaryOp::Neg, Value::Int { bits, unsigned }) => Value::Int {
            bits: bits.wrapping_neg(),
            unsigned,
        },
        (UnaryOp::Neg, Value::Float { value, f32_literal }) => Value::Float {
            value: -value,
            f32_literal,
        },
        (UnaryOp::Not, Value::Int { bits, unsigned }) => Value::Int {
            bits: !bits,
            unsigned,
        },
        (UnaryOp::LogicalNot, v) => Value::int(u64::from(!truth(v))),
        (UnaryOp::Not, Value::Float { .. }) => return Err(float_op(span, "~")),
    })
}

fn float_op(span: Span, op: &str) -> Diagnostic {
    Diagnostic::error(
        span,
        format!("operator `{op}` is not defined on floating-point constants"),
    )
    .with_label("floating-point operand")
    .with_help("use integer operands, or compute the value and write it as a `0f`/`0d` literal")
}

fn binary(op: BinaryOp, a: Value, b: Value, span: Span) -> Result<Value, Diagnostic> {
    use BinaryOp as B;
    match (a, b) {
        (
            Value::Int {
                bits: x,
                unsigned: ua,
            },
            Value::Int {
                bits: y,
                unsigned: ub,
            },
        ) => {
            let unsigned = ua || ub;
            let (sx, sy) = (x as i64, y as i64);
            let cmp = |c: bool| Ok(Value::int(u64::from(c)));
            let bits = match op {
                B::Add => x.wrapping_add(y),
                B::Sub => x.wrapping_sub(y),
                B::Mul => x.wrapping_mul(y),
                B::Div | B::Rem => {
                    if y == 0 {
                        return Err(Diagnostic::error(
                            span,
                            "division by zero in a constant expression",
                        )
                        .with_label("divisor is zero")
                        .with_help("change the divisor to a non-zero constant"));
                    }
                    match (op, unsigned) {
                        (B::Div, true) => x / y,
                        (B::Div, false) => sx.wrapping_div(sy) as u64,
                        (_, true) => x % y,
                        (_, false) => sx.wrapping_rem(sy) as u64,
                    }
                }
                B::Shl => x.wrapping_shl(y as u32),
                // C: `>>` of a signed value is arithmetic (what every compiler does).
                B::Shr if ua => x.wrapping_shr(y as u32),
                B::Shr => sx.wrapping_shr(y as u32) as u64,
                B::Lt => return cmp(if unsigned { x < y } else { sx < sy }),
                B::Le => return cmp(if unsigned { x <= y } else { sx <= sy }),
                B::Gt => return cmp(if unsigned { x > y } else { sx > sy }),
                B::Ge => return cmp(if unsigned { x >= y } else { sx >= sy }),
                B::Eq => return cmp(x == y),
                B::Ne => return cmp(x != y),
                B::BitAnd => x & y,
                B::BitXor => x ^ y,
                B::BitOr => x | y,
                B::LogicalAnd => return cmp(x != 0 && y != 0),
                B::LogicalOr => return cmp(x != 0 || y != 0),
            };
            Ok(Value::Int { bits, unsigned })
        }
        _ => {
            // Mixed int/float promotes to double, as in C.
            let f = |v: Value| match v {
                Value::Int {
                    bits,
                    unsigned: true,
                } => bits as f64,
                Value::Int {
                    bits,
                    unsigned: false,
                } => bits as i64 as f64,
                Value::Float { value, .. } => value,
            };
            let (x, y) = (f(a), f(b));
            let value = match op {
                B::Add => x + y,
                B::Sub => x - y,
                B::Mul => x * y,
                B::Div => x / y,
                B::Lt => return Ok(Value::int(u64::from(x < y))),
                B::Le => return Ok(Value::int(u64::from(x <= y))),
                B::Gt => return Ok(Value::int(u64::from(x > y))),
                B::Ge => return Ok(Value::int(u64::from(x >= y))),
                B::Eq => return Ok(Value::int(u64::from(x == y))),
                B::Ne => return Ok(Value::int(u64::from(x != y))),
                other => return Err(float_op(span, binary_symbol(other))),
            };
            Ok(Value::Float {
                value,
                f32_literal: false,
            })
        }
    }
}

fn binary_symbol(op: BinaryOp) -> &'static str {
    use BinaryOp as B;
    match op {
        B::Mul => "*",
        B::Div => "/",
        B::Rem => "%",
        B::Add => "+",
        B::Sub => "-",
        B::Shl => "<<",
        B::Shr => ">>",
        B::Lt => "<",
        B::Le => "<=",
        B::Gt => ">",
        B::Ge => ">=",
        B::Eq => "==",
        B::Ne => "!=",
        B::BitAnd => "&",
        B::BitXor => "^",
        B::BitOr => "|",
        B::LogicalAnd => "&&",
        B::LogicalOr => "||",
    }
}
