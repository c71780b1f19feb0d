//! [`strip_spans`]: a copy of a module with every span reset, so that two ASTs can be compared
//! "ignoring spans" with `==` (round-trip tests, the loader's snapshot tests).

use crate::ast::*;

/// Returns a copy of `m` with every [`Span`] set to `Span::default()`.
pub fn strip_spans(m: &Module) -> Module {
    let mut m = m.clone();
    m.strip();
    m
}

/// Resets every span inside a node. One impl per node type; the compiler's exhaustiveness
/// checks on the destructuring patterns below keep it complete when the AST grows.
trait Strip {
    fn strip(&mut self);
}

impl<T: Strip> Strip for Vec<T> {
    fn strip(&mut self) {
        self.iter_mut().for_each(Strip::strip);
    }
}

impl<T: Strip, const N: usize> Strip for smallvec::SmallVec<[T; N]> {
    fn strip(&mut self) {
        self.iter_mut().for_each(Strip::strip);
    }
}

impl<T: Strip> Strip for Option<T> {
    fn strip(&mut self) {
        if let Some(x) = self {
            x.strip();
        }
    }
}

impl<T: Strip> Strip for Box<T> {
    fn strip(&mut self) {
        (**self).strip();
    }
}

impl Strip for Span {
    fn strip(&mut self) {
        *self = Span::default();
    }
}

impl Strip for Ident {
    fn strip(&mut self) {
        self.span.strip();
    }
}

impl Strip for Module {
    fn strip(&mut self) {
        let Module { version: _, target, address_size: _, items, span } = self;
        target.strip();
        items.strip();
        span.strip();
    }
}

impl Strip for Item {
    fn strip(&mut self) {
        match self {
            Item::Function(f) => f.strip(),
            Item::Variable(v) => v.strip(),
            Item::File(f) => f.span.strip(),
            Item::Section(s) => s.span.strip(),
            Item::Pragma(p) => p.span.strip(),
        }
    }
}

impl Strip for Function {
    fn strip(&mut self) {
        let Function { linkage: _, kind: _, name, return_params, params, performance, body, span } = self;
        name.strip();
        return_params.strip();
        params.strip();
        performance.strip();
        body.strip();
        span.strip();
    }
}

impl Strip for Param {
    fn strip(&mut self) {
        let Param { space: _, ptr: _, align: _, ty: _, name, array: _, span } = self;
        name.strip();
        span.strip();
    }
}

impl Strip for PerfDirective {
    fn strip(&mut self) {
        match self {
            PerfDirective::MaxNtid(_, s)
            | PerfDirective::ReqNtid(_, s)
            | PerfDirective::MinNctaPerSm(_, s)
            | PerfDirective::MaxNctaPerSm(_, s)
            | PerfDirective::MaxNreg(_, s)
            | PerfDirective::NoReturn(s) => s.strip(),
            PerfDirective::Pragma(p) => p.span.strip(),
        }
    }
}

impl Strip for Block {
    fn strip(&mut self) {
        self.statements.strip();
        self.span.strip();
    }
}

impl Strip for Statement {
    fn strip(&mut self) {
        match self {
            Statement::Label(l) => l.strip(),
            Statement::Instruction(i) => i.strip(),
            Statement::Variable(v) => v.strip(),
            Statement::Block(b) => b.strip(),
            Statement::Loc(l) => l.span.strip(),
            Statement::Pragma(p) => p.span.strip(),
            Statement::CallPrototype(c) => {
                let CallPrototype { label, return_params, params, span } = c;
                label.strip();
                return_params.strip();
                params.strip();
                span.strip();
            }
            Statement::BranchTargets(t) | Statement::CallTargets(t) => {
                let TargetList { label, targets, span } = t;
                label.strip();
                targets.strip();
                span.strip();
            }
        }
    }
}

impl Strip for VariableDecl {
    fn strip(&mut self) {
        let VariableDecl { linkage: _, space: _, align: _, ty: _, name, range: _, array: _, init, span } = self;
        name.strip();
        init.strip();
        span.strip();
    }
}

impl Strip for Initializer {
    fn strip(&mut self) {
        match self {
            Initializer::Expr(e) => e.strip(),
            Initializer::List(items, span) => {
                items.strip();
                span.strip();
            }
            Initializer::Field { name, value, span } => {
                name.strip();
                value.strip();
                span.strip();
            }
        }
    }
}

impl Strip for ConstExpr {
    fn strip(&mut self) {
        match self {
            ConstExpr::Int { span, .. } | ConstExpr::Float { span, .. } => span.strip(),
            ConstExpr::Symbol(i) => i.strip(),
            ConstExpr::Unary { operand, span, .. } => {
                operand.strip();
                span.strip();
            }
            ConstExpr::Binary { lhs, rhs, span, .. } => {
                lhs.strip();
                rhs.strip();
                span.strip();
            }
            ConstExpr::Conditional { cond, then, otherwise, span } => {
                cond.strip();
                then.strip();
                otherwise.strip();
                span.strip();
            }
            ConstExpr::Generic(i, span) => {
                i.strip();
                span.strip();
            }
        }
    }
}

impl Strip for Instruction {
    fn strip(&mut self) {
        let Instruction { guard, opcode, modifiers, operands, span } = self;
        if let Some(g) = guard {
            g.predicate.strip();
            g.span.strip();
        }
        opcode.strip();
        modifiers.iter_mut().for_each(|m| m.span.strip());
        operands.strip();
        span.strip();
    }
}

impl Strip for Operand {
    fn strip(&mut self) {
        match self {
            Operand::Symbol { name, component: _, span } => {
                name.strip();
                span.strip();
            }
            Operand::Not(inner, span) => {
                inner.strip();
                span.strip();
            }
            Operand::Immediate(e) => e.strip(),
            Operand::Address(a) => {
                a.base.strip();
                a.offset.strip();
                a.span.strip();
            }
            Operand::Vector(items, span) | Operand::List(items, span) | Operand::Bracketed(items, span) => {
                items.strip();
                span.strip();
            }
            Operand::Pair(a, b, span) => {
                a.strip();
                b.strip();
                span.strip();
            }
            Operand::Sink(span) => span.strip(),
        }
    }
}
