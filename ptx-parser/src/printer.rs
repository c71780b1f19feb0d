//! The pretty-printer: `Display` for the AST, producing PTX text that parses back to an equal
//! AST (ignoring spans).
//!
//! What the AST does not keep is normalised: integers print in decimal (with their `U`
//! suffix), a `-` address offset prints as `+-`, components print as `.x .y .z .w` (video
//! selectors as `.b0`-`.b3 .h0 .h1`), and
//! parentheses are inserted only where precedence needs them. Hex float literals print in
//! their own kind; decimal floats print in Rust's shortest round-tripping form, which re-lexes
//! to the same bits.

use std::fmt::{self, Display, Formatter, Write};

use crate::ast::*;
use crate::parser::expr::precedence;

const INDENT: &str = "\t";

impl Display for Module {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some((major, minor)) = self.version {
            writeln!(f, ".version {major}.{minor}")?;
        }
        if !self.target.is_empty() {
            f.write_str(".target ")?;
            comma_list(f, &self.target, |f, t| f.write_str(&t.name))?;
            f.write_char('\n')?;
        }
        if let Some(n) = self.address_size {
            writeln!(f, ".address_size {n}")?;
        }
        for item in &self.items {
            f.write_char('\n')?;
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

impl Display for Item {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Item::Function(func) => write!(f, "{func}"),
            Item::Variable(v) => writeln!(f, "{v}"),
            Item::File(file) => writeln!(f, "{file}"),
            Item::Section(s) => writeln!(f, ".section {} {{{}}}", s.name, s.body),
            Item::Pragma(p) => writeln!(f, "{p}"),
        }
    }
}

impl Display for FileDirective {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".file {} \"{}\"", self.index, self.path)?;
        for n in &self.extra {
            write!(f, ", {n}")?;
        }
        Ok(())
    }
}

impl Display for Pragma {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".pragma \"{}\";", self.text)
    }
}

impl Display for Function {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for l in &self.linkage {
            write!(f, "{} ", l.directive())?;
        }
        f.write_str(match self.kind {
            FunctionKind::Entry => ".entry ",
            FunctionKind::Func => ".func ",
        })?;
        if !self.return_params.is_empty() {
            params(f, &self.return_params)?;
            f.write_char(' ')?;
        }
        f.write_str(&self.name.name)?;
        params(f, &self.params)?;
        f.write_char('\n')?;
        for d in &self.performance {
            writeln!(f, "{d}")?;
        }
        match &self.body {
            Some(body) => {
                write_block(f, body, 0)?;
                f.write_char('\n')
            }
            None => f.write_str(";\n"),
        }
    }
}

fn params(f: &mut Formatter<'_>, list: &[Param]) -> fmt::Result {
    f.write_char('(')?;
    comma_list(f, list, |f, p| write!(f, "{p}"))?;
    f.write_char(')')
}

impl Display for Param {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.space.directive())?;
        if let Some(a) = self.align {
            write!(f, " .align {a}")?;
        }
        write!(f, " {}", self.ty)?;
        if let Some(ptr) = &self.ptr {
            f.write_str(" .ptr")?;
            if let Some(s) = ptr.space {
                write!(f, " {}", s.directive())?;
            }
            if let Some(a) = ptr.align {
                write!(f, " .align {a}")?;
            }
        }
        write!(f, " {}", self.name.name)?;
        dims(f, &self.array)
    }
}

fn dims(f: &mut Formatter<'_>, array: &[Option<u64>]) -> fmt::Result {
    for d in array {
        match d {
            Some(n) => write!(f, "[{n}]")?,
            None => f.write_str("[]")?,
        }
    }
    Ok(())
}

impl Display for VarType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.vector != 1 {
            write!(f, ".v{} ", self.vector)?;
        }
        f.write_str(self.scalar.directive())
    }
}

impl Display for PerfDirective {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            PerfDirective::MaxNtid(v, _) => {
                f.write_str(".maxntid ")?;
                comma_list(f, v, |f, n| write!(f, "{n}"))
            }
            PerfDirective::ReqNtid(v, _) => {
                f.write_str(".reqntid ")?;
                comma_list(f, v, |f, n| write!(f, "{n}"))
            }
            PerfDirective::MinNctaPerSm(n, _) => write!(f, ".minnctapersm {n}"),
            PerfDirective::MaxNctaPerSm(n, _) => write!(f, ".maxnctapersm {n}"),
            PerfDirective::MaxNreg(n, _) => write!(f, ".maxnreg {n}"),
            PerfDirective::NoReturn(_) => f.write_str(".noreturn"),
            PerfDirective::Pragma(p) => write!(f, "{p}"),
        }
    }
}

impl Display for Block {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_block(f, self, 0)
    }
}

fn write_block(f: &mut Formatter<'_>, block: &Block, depth: usize) -> fmt::Result {
    f.write_str("{\n")?;
    for s in &block.statements {
        for _ in 0..=depth {
            f.write_str(INDENT)?;
        }
        match s {
            Statement::Block(b) => write_block(f, b, depth + 1)?,
            other => write!(f, "{other}")?,
        }
        f.write_char('\n')?;
    }
    for _ in 0..depth {
        f.write_str(INDENT)?;
    }
    f.write_char('}')
}

impl Display for Statement {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Statement::Label(l) => write!(f, "{}:", l.name),
            Statement::Instruction(i) => write!(f, "{i}"),
            Statement::Variable(v) => write!(f, "{v}"),
            Statement::Block(b) => write!(f, "{b}"),
            Statement::Loc(l) => write!(f, "{l}"),
            Statement::Pragma(p) => write!(f, "{p}"),
            Statement::CallPrototype(c) => write!(f, "{c}"),
            Statement::BranchTargets(t) => target_list(f, t, ".branchtargets"),
            Statement::CallTargets(t) => target_list(f, t, ".calltargets"),
        }
    }
}

fn target_list(f: &mut Formatter<'_>, t: &TargetList, directive: &str) -> fmt::Result {
    write!(f, "{}: {directive} ", t.label.name)?;
    comma_list(f, &t.targets, |f, i| f.write_str(&i.name))?;
    f.write_char(';')
}

impl Display for Loc {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".loc {} {} {}", self.file, self.line, self.column)?;
        if let Some(rest) = &self.rest {
            f.write_str(rest)?;
        }
        Ok(())
    }
}

impl Display for CallPrototype {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}: .callprototype ", self.label.name)?;
        params(f, &self.return_params)?;
        f.write_str(" _ ")?;
        params(f, &self.params)?;
        f.write_char(';')
    }
}

impl Display for VariableDecl {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for l in &self.linkage {
            write!(f, "{} ", l.directive())?;
        }
        f.write_str(self.space.directive())?;
        if let Some(a) = self.align {
            write!(f, " .align {a}")?;
        }
        write!(f, " {} {}", self.ty, self.name.name)?;
        if let Some(n) = self.range {
            write!(f, "<{n}>")?;
        }
        dims(f, &self.array)?;
        if let Some(init) = &self.init {
            write!(f, " = {init}")?;
        }
        f.write_char(';')
    }
}

impl Display for Initializer {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Initializer::Expr(e) => write!(f, "{e}"),
            Initializer::List(items, _) => {
                f.write_char('{')?;
                comma_list(f, items, |f, i| write!(f, "{i}"))?;
                f.write_char('}')
            }
            Initializer::Field { name, value, .. } => write!(f, "{} = {value}", name.name),
        }
    }
}

impl Display for Instruction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "{g} ")?;
        }
        f.write_str(&self.opcode.name)?;
        for m in &self.modifiers {
            write!(f, ".{}", m.name)?;
        }
        if !self.operands.is_empty() {
            f.write_char(' ')?;
            comma_list(f, &self.operands, |f, o| write!(f, "{o}"))?;
        }
        f.write_char(';')
    }
}

impl Display for Guard {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_char('@')?;
        if self.negated {
            f.write_char('!')?;
        }
        f.write_str(&self.predicate.name)
    }
}

impl Display for Operand {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Symbol { name, component, .. } => {
                f.write_str(&name.name)?;
                if let Some(c) = component {
                    f.write_str(c.directive())?;
                }
                Ok(())
            }
            Operand::Not(inner, _) => write!(f, "!{inner}"),
            // A compound immediate is parenthesised so that an operand starting with a symbol
            // (`arr+4`) or containing `|` cannot be read back as a symbol or a pair.
            Operand::Immediate(e @ (ConstExpr::Binary { .. } | ConstExpr::Conditional { .. })) => {
                write!(f, "({e})")
            }
            Operand::Immediate(e) => write!(f, "{e}"),
            Operand::Address(a) => write!(f, "{a}"),
            Operand::Vector(items, _) => {
                f.write_char('{')?;
                comma_list(f, items, |f, o| write!(f, "{o}"))?;
                f.write_char('}')
            }
            Operand::List(items, _) => {
                f.write_char('(')?;
                comma_list(f, items, |f, o| write!(f, "{o}"))?;
                f.write_char(')')
            }
            Operand::Bracketed(items, _) => {
                f.write_char('[')?;
                comma_list(f, items, |f, o| write!(f, "{o}"))?;
                f.write_char(']')
            }
            Operand::Pair(a, b, _) => write!(f, "{a}|{b}"),
            Operand::Sink(_) => f.write_char('_'),
        }
    }
}

impl Display for Address {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        match (&self.base, &self.offset) {
            (Some(b), Some(o)) => write!(f, "{}+{o}", b.name)?,
            (Some(b), None) => f.write_str(&b.name)?,
            (None, Some(o)) => write!(f, "{o}")?,
            (None, None) => {}
        }
        f.write_char(']')
    }
}

impl Display for ConstExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            ConstExpr::Int { value, unsigned, .. } => {
                write!(f, "{value}")?;
                if *unsigned {
                    f.write_char('U')?;
                }
                Ok(())
            }
            ConstExpr::Float { bits, kind, .. } => match kind {
                FloatLiteral::HexF32 => write!(f, "0f{bits:08X}"),
                FloatLiteral::HexF64 => write!(f, "0d{bits:016X}"),
                FloatLiteral::Decimal => {
                    // `{:?}` is the shortest text that parses back to the same f64 and always
                    // has a `.` or an exponent, so it re-lexes as a decimal float.
                    write!(f, "{:?}", f64::from_bits(*bits))
                }
            },
            ConstExpr::Symbol(i) => f.write_str(&i.name),
            ConstExpr::Generic(i, _) => write!(f, "generic({})", i.name),
            ConstExpr::Unary { op, operand, .. } => {
                f.write_str(match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Not => "~",
                    UnaryOp::LogicalNot => "!",
                    UnaryOp::Plus => "+",
                })?;
                match **operand {
                    ConstExpr::Binary { .. } | ConstExpr::Conditional { .. } => {
                        write!(f, "({operand})")
                    }
                    _ => write!(f, "{operand}"),
                }
            }
            ConstExpr::Binary { op, lhs, rhs, .. } => {
                let prec = precedence(*op);
                // Left-associative: the left child needs parentheses only when it binds less
                // tightly, the right child also when it binds equally.
                child(f, lhs, |p| p < prec)?;
                write!(f, " {} ", binary_symbol(*op))?;
                child(f, rhs, |p| p <= prec)
            }
            ConstExpr::Conditional { cond, then, otherwise, .. } => {
                child(f, cond, |_| false)?;
                f.write_str(" ? ")?;
                child(f, then, |_| false)?;
                f.write_str(" : ")?;
                child(f, otherwise, |_| false)
            }
        }
    }
}

/// Writes a sub-expression, parenthesised when it is a binary expression whose precedence
/// satisfies `needs_parens`, or a conditional (which binds loosest of all).
fn child(f: &mut Formatter<'_>, e: &ConstExpr, needs_parens: impl Fn(u8) -> bool) -> fmt::Result {
    match e {
        ConstExpr::Binary { op, .. } if needs_parens(precedence(*op)) => write!(f, "({e})"),
        ConstExpr::Conditional { .. } => write!(f, "({e})"),
        _ => write!(f, "{e}"),
    }
}

fn binary_symbol(op: BinaryOp) -> &'static str {
    use BinaryOp::*;
    match op {
        Mul => "*",
        Div => "/",
        Rem => "%",
        Add => "+",
        Sub => "-",
        Shl => "<<",
        Shr => ">>",
        Lt => "<",
        Le => "<=",
        Gt => ">",
        Ge => ">=",
        Eq => "==",
        Ne => "!=",
        BitAnd => "&",
        BitXor => "^",
        BitOr => "|",
        LogicalAnd => "&&",
        LogicalOr => "||",
    }
}

fn comma_list<T>(
    f: &mut Formatter<'_>,
    items: &[T],
    mut each: impl FnMut(&mut Formatter<'_>, &T) -> fmt::Result,
) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        each(f, item)?;
    }
    Ok(())
}
