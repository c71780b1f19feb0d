//! The syntax tree of a litmus test: what the format can say, proxies and multi-GPU
//! placements included (the translator decides what cudasem can execute).

use super::error::Pos;
use std::collections::BTreeSet;
use std::fmt;

/// A parsed litmus test.
#[derive(Debug, Clone, PartialEq)]
pub struct LitmusTest {
    /// The name after `PTX`.
    pub name: String,
    /// The quoted comments, without quotes.
    pub comments: Vec<String>,
    pub init: Vec<Init>,
    /// Threads in column order (`P0`, `P1`, ...).
    pub threads: Vec<Thread>,
    pub condition: Condition,
}

/// One item of the `{ ... }` section.
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    /// `x = 1;`
    Location {
        name: String,
        value: InitValue,
        pos: Pos,
    },
    /// `P0:r1 = 1;` (also `0:r1 = 1`)
    Register {
        thread: usize,
        reg: String,
        value: InitValue,
        pos: Pos,
    },
    /// `y @ surface aliases x;`: `name` is a proxy view of `target`.
    Alias {
        name: String,
        proxy: Proxy,
        target: String,
        pos: Pos,
    },
}

/// An initial value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitValue {
    Int(i64),
    /// `&x` or a bare location name: the address of a location.
    Address(String),
}

/// Which proxy an access or alias goes through (PTX ISA "proxies").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Proxy {
    /// Ordinary loads and stores.
    Generic,
    /// `tld`.
    Texture,
    /// `suld`, `sust`, `suatom`, `sured`.
    Surface,
    /// `cold`.
    Constant,
}

impl Proxy {
    pub fn name(self) -> &'static str {
        match self {
            Proxy::Generic => "generic",
            Proxy::Texture => "texture",
            Proxy::Surface => "surface",
            Proxy::Constant => "constant",
        }
    }
}

/// A litmus thread: its placement and its instructions.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    /// The `i` of `Pi`.
    pub id: usize,
    pub cta: u32,
    pub gpu: u32,
    pub pos: Pos,
    pub instrs: Vec<Located>,
}

/// An instruction with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    pub instr: Instr,
    pub pos: Pos,
}

/// Memory-model semantics qualifiers (PTX ISA "memory consistency model").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sem {
    Weak,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    Sc,
}

impl Sem {
    pub fn name(self) -> &'static str {
        match self {
            Sem::Weak => "weak",
            Sem::Relaxed => "relaxed",
            Sem::Acquire => "acquire",
            Sem::Release => "release",
            Sem::AcqRel => "acq_rel",
            Sem::Sc => "sc",
        }
    }
}

/// Scope qualifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Cta,
    Gpu,
    Sys,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
}

/// Read-modify-write operations of `atom`/`red`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RmwOp {
    Add,
    Sub,
    Mul,
    Div,
    And,
    Or,
    Xor,
    Exch,
    /// Compare-and-swap: `atom...cas r, x, compare, new`.
    Cas,
}

/// Register-only arithmetic (`add r, a, b`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LocalOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// Branch conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BranchCond {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// `bar.cta.sync` or `bar.cta.arrive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierMode {
    Sync,
    Arrive,
}

/// A register or an immediate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Reg(String),
    Imm(i64),
}

/// What a fence instruction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FenceKind {
    /// `fence.sc.gpu`, `fence.acq_rel.cta`, `membar.*` (as `sc`).
    Memory { sem: Sem, scope: Scope },
    /// `fence.proxy.texture` etc.
    Proxy(Proxy),
    /// `fence.proxy.alias`.
    Alias,
}

/// One litmus instruction.
#[derive(Debug, Clone, PartialEq)]
pub enum Instr {
    /// `ld.sem{.scope} r, x` (`tld`, `suld`, `cold`: other proxies).
    Load {
        proxy: Proxy,
        sem: Sem,
        scope: Option<Scope>,
        dst: String,
        loc: String,
    },
    /// `st.sem{.scope} x, v` (`sust`: the surface proxy).
    Store {
        proxy: Proxy,
        sem: Sem,
        scope: Option<Scope>,
        loc: String,
        value: Value,
    },
    /// `atom.sem.scope.op r, x, v{, w}`.
    Atom {
        proxy: Proxy,
        sem: Sem,
        scope: Scope,
        op: RmwOp,
        dst: String,
        loc: String,
        operands: Vec<Value>,
    },
    /// `red.sem.scope.op x, v`.
    Red {
        proxy: Proxy,
        sem: Sem,
        scope: Scope,
        op: RmwOp,
        loc: String,
        value: Value,
    },
    Fence(FenceKind),
    /// `bar.cta.sync a{, b{, c}}`: Dat3M's operands (instance id, barrier id, quorum).
    Barrier {
        mode: BarrierMode,
        operands: Vec<Value>,
    },
    /// `add r, a, b` and friends; `mov r, v` is `Local { op: Add, a: v, b: 0 }`.
    Local {
        op: LocalOp,
        dst: String,
        a: Value,
        b: Value,
    },
    /// `beq a, b, LC01`.
    Branch {
        cond: BranchCond,
        a: Value,
        b: Value,
        label: String,
    },
    Goto(String),
    Label(String),
}

/// The condition's quantifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quantifier {
    /// `exists P`: some execution ends in a state satisfying P.
    Exists,
    /// `~exists P`: no execution does.
    NotExists,
    /// `forall P`: every execution does.
    Forall,
}

impl Quantifier {
    pub fn name(self) -> &'static str {
        match self {
            Quantifier::Exists => "exists",
            Quantifier::NotExists => "~exists",
            Quantifier::Forall => "forall",
        }
    }
}

/// The final condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub quantifier: Quantifier,
    pub expr: Expr,
    pub pos: Pos,
}

/// A proposition over a final state.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    /// `a == b` (`=` too) or `a != b`.
    Cmp {
        eq: bool,
        a: Term,
        b: Term,
    },
    Const(bool),
}

/// A value in a condition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Term {
    /// `P1:r0` (or `1:r0`).
    Reg {
        thread: usize,
        reg: String,
    },
    /// A memory location.
    Loc(String),
    Int(i64),
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Reg { thread, reg } => write!(f, "{thread}:{reg}"),
            Term::Loc(l) => f.write_str(l),
            Term::Int(v) => write!(f, "{v}"),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Or(a, b) => write!(f, "({a} \\/ {b})"),
            Expr::And(a, b) => write!(f, "({a} /\\ {b})"),
            Expr::Not(a) => write!(f, "~{a}"),
            Expr::Cmp { eq, a, b } => write!(f, "{a} {} {b}", if *eq { "==" } else { "!=" }),
            Expr::Const(b) => write!(f, "{b}"),
        }
    }
}

impl Expr {
    /// Evaluates the expression; `value` gives each register or location's final value.
    pub fn eval(&self, value: &dyn Fn(&Term) -> i64) -> bool {
        match self {
            Expr::Or(a, b) => a.eval(value) || b.eval(value),
            Expr::And(a, b) => a.eval(value) && b.eval(value),
            Expr::Not(a) => !a.eval(value),
            Expr::Cmp { eq, a, b } => (value(a) == value(b)) == *eq,
            Expr::Const(b) => *b,
        }
    }

    /// The registers and locations the expression reads, in sorted order.
    pub fn terms(&self, out: &mut BTreeSet<Term>) {
        match self {
            Expr::Or(a, b) | Expr::And(a, b) => {
                a.terms(out);
                b.terms(out);
            }
            Expr::Not(a) => a.terms(out),
            Expr::Cmp { a, b, .. } => {
                for t in [a, b] {
                    if !matches!(t, Term::Int(_)) {
                        out.insert(t.clone());
                    }
                }
            }
            Expr::Const(_) => {}
        }
    }
}

impl LitmusTest {
    /// The registers and locations the condition reads (herd prints these per outcome).
    pub fn observed(&self) -> Vec<Term> {
        let mut s = BTreeSet::new();
        self.condition.expr.terms(&mut s);
        s.into_iter().collect()
    }
}
