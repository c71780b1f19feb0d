//! The expectation language's syntax tree: operators, functions and expressions.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BinOp {
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
    pub(super) fn symbol(self) -> &'static str {
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
    pub(super) fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// The functions of the language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Func {
    Sum,
    Len,
    Min,
    Max,
    Abs,
}

impl Func {
    pub(super) fn of(name: &str) -> Option<Func> {
        Some(match name {
            "sum" => Func::Sum,
            "len" => Func::Len,
            "min" => Func::Min,
            "max" => Func::Max,
            "abs" => Func::Abs,
            _ => return None,
        })
    }
    pub(super) fn name(self) -> &'static str {
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
pub(super) enum Expr {
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
