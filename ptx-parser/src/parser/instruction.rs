//! Instructions (PTX ISA 9): optional guard, opcode, dotted modifiers and operands.
//!
//! The parser knows no per-opcode grammar: any identifier is an opcode and any dotted words after
//! it are modifiers (also when separated by spaces, as in the thesis's `ld .param .f64 a, [p];`),
//! so files using instructions cudasem does not execute still parse; `semantics::load` judges
//! them. Only operand syntax is known: symbols with components, `!p`, immediates and constant
//! expressions, addresses, `{...}` vectors, `(...)` call lists, `p|q` pairs and the sink `_`.

use super::{PResult, Parser, Reported};
use crate::ast::{
    Address, Component, ConstExpr, Guard, Ident, Instruction, Modifier, Modifiers, Name, Operand, Operands, Span,
    Statement, UnaryOp,
};
use crate::lexer::{Tok, Token};

use super::expr::{binary_op, starts_expr};

impl Parser<'_> {
    /// At `@` or the opcode; consumes through the final `;`, pushing the instruction on
    /// `statements`.
    ///
    /// The instruction is parsed in place, in a slot pushed on the block's vector first: it is
    /// a few hundred bytes (most of a module's memory), and building it elsewhere would copy it
    /// whole into the vector, and through the `Result` and the `Statement` on the way. On an
    /// error the slot is removed again.
    pub(crate) fn instruction(&mut self, statements: &mut Vec<Statement>) -> PResult<()> {
        let start = self.peek().start;
        statements.push(Statement::Instruction(Instruction {
            guard: None,
            opcode: Ident { name: Name::const_new(""), span: Span::default() },
            modifiers: Modifiers::new(),
            operands: Operands::new(),
            span: Span::default(),
        }));
        let parsed = match statements.last_mut() {
            Some(Statement::Instruction(ins)) => self.instruction_into(start, ins),
            _ => Err(Reported),
        };
        if parsed.is_err() {
            statements.pop();
        }
        parsed
    }

    /// Fills the empty instruction `ins`, which starts at byte `start`.
    fn instruction_into(&mut self, start: u32, ins: &mut Instruction) -> PResult<()> {
        if let Some(at) = self.eat(Tok::At) {
            let negated = self.eat(Tok::Bang).is_some();
            let p = self.expect(Tok::Ident, "a predicate after `@`", None)?;
            ins.guard = Some(Box::new(Guard { negated, predicate: self.ident(p), span: at.span().to(p.span()) }));
        }
        let op = self.expect(Tok::Ident, "an opcode", None)?;
        ins.opcode = self.ident(op);
        while self.at(Tok::Dotted) {
            let t = self.bump();
            let name = self.text(t).get(1..).unwrap_or("");
            ins.modifiers.push(Modifier { name: name.into(), span: t.span() });
        }
        // Operands go straight into the instruction's inline vector (not through the scratch
        // stack, which only nested lists need): one move per operand instead of three.
        if !self.at(Tok::Semi) {
            loop {
                let operand = self.operand()?;
                ins.operands.push(operand);
                if self.eat(Tok::Comma).is_none() {
                    break;
                }
            }
        }
        let end = self.expect(
            Tok::Semi,
            "`,` or `;` after the operand",
            Some("instructions must end with `;` and separate operands with `,`"),
        )?;
        ins.span = Span::new(start as usize, end.end as usize);
        Ok(())
    }

    /// One operand.
    pub(crate) fn operand(&mut self) -> PResult<Operand> {
        let t = self.peek();
        match t.kind {
            Tok::Underscore => {
                self.bump();
                self.pair_rest(Operand::Sink(t.span()))
            }
            Tok::Bang if self.peek_at(1).kind == Tok::Ident => {
                self.bump();
                let inner = self.symbol_operand()?;
                let span = t.span().to(inner.span());
                Ok(Operand::Not(Box::new(inner), span))
            }
            // `[name, ...]`: a texture/surface operand list, not an address.
            Tok::LBracket if self.peek_at(1).kind == Tok::Ident && self.peek_at(2).kind == Tok::Comma => {
                self.bump();
                let (items, span) =
                    self.operand_seq(t, Tok::RBracket, "`,` or `]` in the texture or surface operand")?;
                Ok(Operand::Bracketed(items, span))
            }
            Tok::LBracket => self.address().map(|a| Operand::Address(Box::new(a))),
            Tok::LBrace => {
                self.bump();
                let (items, span) = self.operand_seq(t, Tok::RBrace, "`,` or `}` in the vector operand")?;
                Ok(Operand::Vector(items, span))
            }
            Tok::LParen => self.paren_operand(),
            Tok::Ident => {
                if self.text(t) == "generic" && self.peek_at(1).kind == Tok::LParen {
                    return self.expr().map(Operand::Immediate);
                }
                let sym = self.symbol_operand()?;
                if self.at(Tok::Pipe) {
                    return self.pair_rest(sym);
                }
                // `name+4` outside brackets (e.g. `mov.u64 %rd1, arr+4;`): an address
                // expression, kept as a constant expression over the symbol.
                match sym {
                    Operand::Symbol { name, component: None, .. } if binary_op(self.kind()).is_some() => {
                        let e = self.binary_rest(ConstExpr::Symbol(name), 0)?;
                        self.conditional_rest(e).map(Operand::Immediate)
                    }
                    sym => Ok(sym),
                }
            }
            k if starts_expr(k) => self.expr().map(Operand::Immediate),
            _ => self.expected("an operand", None),
        }
    }

    /// `p|q`, `_|q`, `p|_` (setp, shfl): continues a pair after its first half, if any.
    fn pair_rest(&mut self, first: Operand) -> PResult<Operand> {
        if self.eat(Tok::Pipe).is_none() {
            return Ok(first);
        }
        let second = match self.kind() {
            Tok::Underscore => Operand::Sink(self.bump().span()),
            Tok::Ident => self.symbol_operand()?,
            _ => return self.expected("a predicate or `_` after `|`", None),
        };
        let span = first.span().to(second.span());
        Ok(Operand::Pair(Box::new(first), Box::new(second), span))
    }

    /// `%r1`, `%tid.x`, `input.w`: an identifier with an optional vector component.
    fn symbol_operand(&mut self) -> PResult<Operand> {
        let t = self.expect(Tok::Ident, "a register or symbol", None)?;
        let name = self.ident(t);
        let next = self.peek();
        if next.kind == Tok::Dotted
            && let Some(c) = Component::from_directive(self.text(next))
        {
            self.bump();
            return Ok(Operand::Symbol { name, component: Some(c), span: t.span().to(next.span()) });
        }
        Ok(Operand::Symbol { name, component: None, span: t.span() })
    }

    /// Pushes operands separated by `,` on the operand scratch stack up to (not past) `close`.
    fn operands_until(&mut self, close: Tok) -> PResult<()> {
        if self.at(close) {
            return Ok(());
        }
        loop {
            let op = self.operand()?;
            self.scratch_operands.push(op);
            if self.eat(Tok::Comma).is_none() {
                return Ok(());
            }
        }
    }

    /// Operands separated by `,` up to `close`, one nesting level inside the opening bracket
    /// `open` (already consumed). Returns the items and the span from `open` to `close`.
    fn operand_seq(&mut self, open: Token, close: Tok, what: &str) -> PResult<(Vec<Operand>, crate::ast::Span)> {
        self.enter(open.span())?;
        let base = self.scratch_operands.len();
        let closed = self.operands_until(close).and_then(|()| self.expect(close, what, None));
        self.leave();
        match closed {
            Ok(c) => Ok((self.scratch_operands.drain(base..).collect(), open.span().to(c.span()))),
            Err(e) => {
                self.scratch_operands.truncate(base);
                Err(e)
            }
        }
    }

    /// `(a, b)` is a call's argument list; `(4*8)` (one non-symbol element) is a parenthesised
    /// immediate, which may continue as an expression (`(4*8)+1`).
    fn paren_operand(&mut self) -> PResult<Operand> {
        let open = self.bump();
        let (mut items, span) = self.operand_seq(open, Tok::RParen, "`,` or `)` in the parenthesised list")?;
        if items.len() == 1
            && matches!(items.first(), Some(Operand::Immediate(_)))
            && let Some(Operand::Immediate(e)) = items.pop()
        {
            let e = if binary_op(self.kind()).is_some() { self.binary_rest(e, 0)? } else { e };
            return self.conditional_rest(e).map(Operand::Immediate);
        }
        Ok(Operand::List(items, span))
    }

    /// `[%rd1]`, `[%rd1+8]`, `[%rd1-4]`, `[%rd1+-4]`, `[name+4]`, `[0x100]`. A `-` offset is
    /// stored as `Neg` of its first term, so `[a-4]` and `[a+-4]` are the same AST and print as
    /// `[a+-4]`.
    fn address(&mut self) -> PResult<Address> {
        let open = self.bump();
        let mut base = None;
        let mut offset = None;
        if self.at(Tok::Ident) && !(self.text(self.peek()) == "generic" && self.peek_at(1).kind == Tok::LParen) {
            let b = self.bump();
            base = Some(self.ident(b));
            let t = self.peek();
            match t.kind {
                Tok::Plus => {
                    self.bump();
                    offset = Some(self.expr()?);
                }
                Tok::Minus => {
                    self.bump();
                    let neg = self.unary_operand(UnaryOp::Neg, t)?;
                    let e = self.binary_rest(neg, super::expr::precedence(crate::ast::BinaryOp::Add))?;
                    offset = Some(e);
                }
                _ => {}
            }
        } else {
            offset = Some(self.expr()?);
        }
        let close = self.expect(
            Tok::RBracket,
            "`]` closing the address",
            Some("an address is `[reg]`, `[reg+offset]`, `[var+offset]` or `[constant]`"),
        )?;
        Ok(Address { base, offset, span: open.span().to(close.span()) })
    }
}
