//! Constant expressions (PTX ISA 4.6): literals, symbols, `generic(x)`, unary and binary
//! operators with C precedence, and `c ? a : b`. Also the literal decoders shared with the
//! rest of the parser.
//!
//! Binary operators use precedence climbing, so a long `a + b + c + ...` chain is a loop, not
//! recursion; only parentheses, unary operators and `?:` recurse, and each counts against the
//! parser's nesting limit.

use super::{PResult, Parser, Reported};
use crate::ast::{BinaryOp, ConstExpr, FloatLiteral, UnaryOp};
use crate::diagnostic::Diagnostic;
use crate::lexer::{Tok, Token};

/// Binding strength of each binary operator (higher binds tighter), as in C.
pub(crate) fn precedence(op: BinaryOp) -> u8 {
    use BinaryOp::*;
    match op {
        Mul | Div | Rem => 10,
        Add | Sub => 9,
        Shl | Shr => 8,
        Lt | Le | Gt | Ge => 7,
        Eq | Ne => 6,
        BitAnd => 5,
        BitXor => 4,
        BitOr => 3,
        LogicalAnd => 2,
        LogicalOr => 1,
    }
}

pub(crate) fn binary_op(kind: Tok) -> Option<BinaryOp> {
    use BinaryOp::*;
    Some(match kind {
        Tok::Star => Mul,
        Tok::Slash => Div,
        Tok::Percent => Rem,
        Tok::Plus => Add,
        Tok::Minus => Sub,
        Tok::Shl => Shl,
        Tok::Shr => Shr,
        Tok::Lt => Lt,
        Tok::Le => Le,
        Tok::Gt => Gt,
        Tok::Ge => Ge,
        Tok::EqEq => Eq,
        Tok::Ne => Ne,
        Tok::Amp => BitAnd,
        Tok::Caret => BitXor,
        Tok::Pipe => BitOr,
        Tok::AndAnd => LogicalAnd,
        Tok::OrOr => LogicalOr,
        _ => return None,
    })
}

/// True when the token can start a constant expression.
pub(crate) fn starts_expr(kind: Tok) -> bool {
    matches!(
        kind,
        Tok::DecInt
            | Tok::HexInt
            | Tok::BinInt
            | Tok::HexF32
            | Tok::HexF64
            | Tok::DecFloat
            | Tok::Ident
            | Tok::LParen
            | Tok::Minus
            | Tok::Plus
            | Tok::Bang
            | Tok::Tilde
    )
}

/// Why a literal token's text is not a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LiteralError {
    #[error("integer literal `{0}` does not fit in 64 bits")]
    IntTooLarge(String),
    #[error("invalid digit in integer literal `{0}`")]
    IntDigit(String),
    #[error("invalid float literal `{0}`")]
    HexFloat(String),
    #[error("float literal `{0}` is out of range")]
    FloatRange(String),
}

/// Decodes an integer token's text: `(value, unsigned suffix)`, or why not.
pub(crate) fn int_value(text: &str, kind: Tok) -> Result<(u64, bool), LiteralError> {
    let (digits, unsigned) = match text.strip_suffix(['u', 'U']) {
        Some(d) => (d, true),
        None => (text, false),
    };
    let (digits, radix) = match kind {
        Tok::HexInt => (digits.get(2..).unwrap_or(""), 16),
        Tok::BinInt => (digits.get(2..).unwrap_or(""), 2),
        // A leading zero means octal, as in C.
        _ if digits.len() > 1 && digits.starts_with('0') => (digits.get(1..).unwrap_or(""), 8),
        _ => (digits, 10),
    };
    match u64::from_str_radix(digits, radix) {
        Ok(v) => Ok((v, unsigned)),
        Err(e) => match e.kind() {
            std::num::IntErrorKind::PosOverflow => Err(LiteralError::IntTooLarge(text.to_string())),
            _ => Err(LiteralError::IntDigit(text.to_string())),
        },
    }
}

/// Decodes a float token: `(bits, kind)`, or why not.
pub(crate) fn float_value(text: &str, kind: Tok) -> Result<(u64, FloatLiteral), LiteralError> {
    let hex = text.get(2..).unwrap_or("");
    match kind {
        Tok::HexF32 => u64::from_str_radix(hex, 16)
            .map(|b| (b, FloatLiteral::HexF32))
            .map_err(|_| LiteralError::HexFloat(text.to_string())),
        Tok::HexF64 => u64::from_str_radix(hex, 16)
            .map(|b| (b, FloatLiteral::HexF64))
            .map_err(|_| LiteralError::HexFloat(text.to_string())),
        _ => match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok((v.to_bits(), FloatLiteral::Decimal)),
            _ => Err(LiteralError::FloatRange(text.to_string())),
        },
    }
}

impl Parser<'_> {
    /// A full constant expression, including `?:`.
    pub(crate) fn expr(&mut self) -> PResult<ConstExpr> {
        let cond = self.binary(0)?;
        self.conditional_rest(cond)
    }

    /// Continues `cond ? a : b` when the next token is `?`.
    pub(crate) fn conditional_rest(&mut self, cond: ConstExpr) -> PResult<ConstExpr> {
        let Some(q) = self.eat(Tok::Question) else {
            return Ok(cond);
        };
        self.enter(q.span())?;
        let result = (|| {
            let then = self.expr()?;
            self.expect(Tok::Colon, "`:` of a `?:` expression", None)?;
            let otherwise = self.expr()?;
            let span = cond.span().to(otherwise.span());
            Ok(ConstExpr::Conditional {
                cond: Box::new(cond),
                then: Box::new(then),
                otherwise: Box::new(otherwise),
                span,
            })
        })();
        self.leave();
        result
    }

    fn binary(&mut self, min_prec: u8) -> PResult<ConstExpr> {
        let lhs = self.unary()?;
        self.binary_rest(lhs, min_prec)
    }

    /// Continues a binary expression whose left operand is already parsed: consumes operators
    /// binding at least as tightly as `min_prec`. Each operator makes the (left-deep) tree one
    /// level deeper, so each counts against the nesting limit: the AST's recursive `Drop`,
    /// `Clone` and printer must never meet a tree deeper than that.
    pub(crate) fn binary_rest(&mut self, mut lhs: ConstExpr, min_prec: u8) -> PResult<ConstExpr> {
        let mut entered = 0;
        let result = loop {
            let Some(op) = binary_op(self.kind()) else { break Ok(lhs) };
            let prec = precedence(op);
            if prec < min_prec {
                break Ok(lhs);
            }
            let t = self.bump();
            if let Err(e) = self.enter(t.span()) {
                break Err(e);
            }
            entered += 1;
            let rhs = match self.binary(prec + 1) {
                Ok(rhs) => rhs,
                Err(e) => break Err(e),
            };
            let span = lhs.span().to(rhs.span());
            lhs = ConstExpr::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs), span };
        };
        for _ in 0..entered {
            self.leave();
        }
        result
    }

    pub(crate) fn unary(&mut self) -> PResult<ConstExpr> {
        let t = self.peek();
        let op = match t.kind {
            Tok::Minus => UnaryOp::Neg,
            Tok::Plus => UnaryOp::Plus,
            Tok::Tilde => UnaryOp::Not,
            Tok::Bang => UnaryOp::LogicalNot,
            _ => return self.primary(),
        };
        self.bump();
        self.unary_operand(op, t)
    }

    /// The operand of the prefix operator `op`, whose token `at` was just consumed.
    pub(crate) fn unary_operand(&mut self, op: UnaryOp, at: Token) -> PResult<ConstExpr> {
        self.enter(at.span())?;
        let operand = self.unary();
        self.leave();
        let operand = operand?;
        let span = at.span().to(operand.span());
        Ok(ConstExpr::Unary { op, operand: Box::new(operand), span })
    }

    fn primary(&mut self) -> PResult<ConstExpr> {
        let t = self.peek();
        match t.kind {
            Tok::DecInt | Tok::HexInt | Tok::BinInt | Tok::HexF32 | Tok::HexF64 | Tok::DecFloat => self.literal(),
            Tok::Ident => {
                self.bump();
                if self.text(t) == "generic" && self.at(Tok::LParen) {
                    self.bump();
                    let name = self.expect(Tok::Ident, "a variable name inside `generic(...)`", None)?;
                    let close = self.expect(Tok::RParen, "`)`", None)?;
                    return Ok(ConstExpr::Generic(self.ident(name), t.span().to(close.span())));
                }
                Ok(ConstExpr::Symbol(self.ident(t)))
            }
            Tok::LParen => {
                self.bump();
                self.enter(t.span())?;
                let inner = self.expr();
                self.leave();
                let inner = inner?;
                self.expect(Tok::RParen, "`)`", None)?;
                // Parentheses make no node: the printer re-inserts them where precedence needs.
                Ok(inner)
            }
            _ => self.expected("a constant expression", None),
        }
    }

    /// An integer or float literal token.
    pub(crate) fn literal(&mut self) -> PResult<ConstExpr> {
        let t = self.bump();
        let text = self.text(t);
        let span = t.span();
        let decoded = match t.kind {
            Tok::DecInt | Tok::HexInt | Tok::BinInt => {
                int_value(text, t.kind).map(|(value, unsigned)| ConstExpr::Int { value, unsigned, span })
            }
            _ => float_value(text, t.kind).map(|(bits, kind)| ConstExpr::Float { bits, kind, span }),
        };
        decoded.map_err(|msg| {
            self.push(Diagnostic::error(span, msg.to_string()).with_label("invalid literal"));
            Reported
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The literal errors read as the messages did when they were strings.
    #[test]
    fn literal_errors_name_the_literal() {
        let int = |text, kind| int_value(text, kind).unwrap_err().to_string();
        let float = |text, kind| float_value(text, kind).unwrap_err().to_string();
        assert_eq!(
            int("99999999999999999999", Tok::DecInt),
            "integer literal `99999999999999999999` does not fit in 64 bits"
        );
        assert_eq!(int("09", Tok::DecInt), "invalid digit in integer literal `09`");
        assert_eq!(float("0fZZ", Tok::HexF32), "invalid float literal `0fZZ`");
        assert_eq!(float("1e999", Tok::DecFloat), "float literal `1e999` is out of range");
        assert_eq!(int_value("0x10u", Tok::HexInt), Ok((16, true)));
    }
}
