//! One cell of the thread table: an instruction or a label.

use super::ast::{
    BarrierMode, BranchCond, FenceKind, Instr, LocalOp, Proxy, RmwOp, Scope, Sem, Value,
};
use super::cursor::{Sub, Tok};
use super::error::{ParseError, Pos};

fn sem_of(w: &str) -> Option<Sem> {
    Some(match w {
        "weak" => Sem::Weak,
        "relaxed" => Sem::Relaxed,
        "acquire" => Sem::Acquire,
        "release" => Sem::Release,
        "acq_rel" => Sem::AcqRel,
        "sc" => Sem::Sc,
        _ => return None,
    })
}

fn scope_of(w: &str) -> Option<Scope> {
    Some(match w {
        "cta" => Scope::Cta,
        "gpu" => Scope::Gpu,
        "sys" => Scope::Sys,
        _ => return None,
    })
}

fn rmw_of(w: &str) -> Option<RmwOp> {
    Some(match w {
        "add" => RmwOp::Add,
        "sub" => RmwOp::Sub,
        "mul" => RmwOp::Mul,
        "div" => RmwOp::Div,
        "and" => RmwOp::And,
        "or" => RmwOp::Or,
        "xor" => RmwOp::Xor,
        "exch" => RmwOp::Exch,
        "cas" => RmwOp::Cas,
        _ => return None,
    })
}

fn proxy_of(w: &str) -> Option<Proxy> {
    Some(match w {
        "generic" => Proxy::Generic,
        "texture" => Proxy::Texture,
        "surface" => Proxy::Surface,
        "constant" => Proxy::Constant,
        _ => return None,
    })
}

/// Parses one cell: a label (`LC00:`) or an instruction, `head op, op, ...` with each operand
/// one token.
pub(super) fn parse_instr(cell: &Sub) -> Result<Instr, ParseError> {
    let toks = cell.tokens()?;
    let text = cell.text().trim();
    let cell_err = |m: &str| ParseError {
        pos: cell.start_pos(),
        message: format!("`{text}`: {m}"),
    };
    let Some((Tok::Word(head), _)) = toks.first() else {
        return Err(cell_err("expected an instruction or a label"));
    };
    // Label: `LC00:`
    if toks.len() == 2 && toks[1].0 == Tok::Punct(":") {
        return Ok(Instr::Label(head.clone()));
    }
    let ops = Operands::split(text, cell.start_pos(), &toks[1..])?;
    let parts: Vec<&str> = head.split('.').collect();
    let (op, mods) = (parts[0], &parts[1..]);
    match op {
        "ld" | "tld" | "suld" | "cold" => load(op, mods, &ops),
        "st" | "sust" => store(op, mods, &ops),
        "atom" | "suatom" | "red" | "sured" => read_modify_write(op, mods, &ops),
        "fence" => fence(mods, &ops),
        "membar" => membar(mods, &ops),
        "bar" | "barrier" => barrier(mods, &ops),
        "add" | "sub" | "mul" | "div" => arithmetic(op, &ops),
        "mov" => {
            ops.arity(2)?;
            Ok(Instr::Local {
                op: LocalOp::Add,
                dst: ops.reg(0)?,
                a: ops.val(1)?,
                b: Value::Imm(0),
            })
        }
        "beq" | "bne" | "blt" | "ble" | "bgt" | "bge" => branch(op, &ops),
        "goto" => {
            ops.arity(1)?;
            Ok(Instr::Goto(ops.reg(0)?))
        }
        _ => Err(ops.err(format!("unknown instruction `{head}`"))),
    }
}

/// An instruction's operands: comma-separated single tokens, read by kind, with errors that
/// quote the instruction.
struct Operands<'t> {
    text: &'t str,
    pos: Pos,
    list: Vec<(Tok, Pos)>,
}

impl<'t> Operands<'t> {
    /// The operands of `rest` (the tokens after the instruction's head).
    fn split(text: &'t str, pos: Pos, rest: &[(Tok, Pos)]) -> Result<Operands<'t>, ParseError> {
        let mut list: Vec<(Tok, Pos)> = Vec::new();
        for (i, t) in rest.iter().enumerate() {
            if i % 2 == 1 {
                if t.0 != Tok::Punct(",") {
                    return Err(ParseError {
                        pos: t.1,
                        message: format!("`{text}`: expected `,` between operands"),
                    });
                }
            } else {
                list.push(t.clone());
            }
        }
        let ops = Operands { text, pos, list };
        // Operands sit at even positions: a list of even length ends with a `,`.
        if !rest.is_empty() && rest.len() & 1 == 0 {
            return Err(ops.err("trailing `,`".into()));
        }
        Ok(ops)
    }

    /// An error about the whole instruction.
    fn err(&self, m: String) -> ParseError {
        ParseError {
            pos: self.pos,
            message: format!("`{}`: {m}", self.text),
        }
    }

    fn len(&self) -> usize {
        self.list.len()
    }

    /// Operand `i`, which must be a word (register, location or label) described as `what`.
    fn word(&self, i: usize, what: &str) -> Result<String, ParseError> {
        match self.list.get(i) {
            Some((Tok::Word(w), _)) => Ok(w.clone()),
            Some((_, p)) => Err(ParseError {
                pos: *p,
                message: format!("`{}`: operand {} must be {what}", self.text, i + 1),
            }),
            None => Err(self.err(format!("missing operand {}", i + 1))),
        }
    }

    fn reg(&self, i: usize) -> Result<String, ParseError> {
        self.word(i, "a register")
    }

    fn loc(&self, i: usize) -> Result<String, ParseError> {
        self.word(i, "a location")
    }

    /// Operand `i` as a register or an integer.
    fn val(&self, i: usize) -> Result<Value, ParseError> {
        match self.list.get(i) {
            Some((Tok::Word(w), _)) => Ok(Value::Reg(w.clone())),
            Some((Tok::Int(v), _)) => Ok(Value::Imm(*v)),
            Some((_, p)) => Err(ParseError {
                pos: *p,
                message: format!(
                    "`{}`: operand {} must be a register or an integer",
                    self.text,
                    i + 1
                ),
            }),
            None => Err(self.err(format!("missing operand {}", i + 1))),
        }
    }

    /// Operands `from..` as values.
    fn vals(&self, from: usize) -> Result<Vec<Value>, ParseError> {
        (from..self.len()).map(|i| self.val(i)).collect()
    }

    fn arity(&self, n: usize) -> Result<(), ParseError> {
        if self.len() == n {
            Ok(())
        } else {
            Err(self.err(format!("expected {n} operands, found {}", self.len())))
        }
    }

    fn sem(&self, s: &str) -> Result<Sem, ParseError> {
        sem_of(s).ok_or_else(|| self.err(format!("unknown semantics `.{s}`")))
    }

    fn scope(&self, sc: &str) -> Result<Scope, ParseError> {
        scope_of(sc).ok_or_else(|| self.err(format!("unknown scope `.{sc}`")))
    }

    /// `sem{.scope}` of ld/st; herd's default for an unqualified access is weak.
    fn sem_scope(&self, mods: &[&str]) -> Result<(Sem, Option<Scope>), ParseError> {
        match mods {
            [s] => Ok((self.sem(s)?, None)),
            [s, sc] => Ok((self.sem(s)?, Some(self.scope(sc)?))),
            [] => Ok((Sem::Weak, None)),
            _ => Err(self.err("expected `.sem{.scope}`".into())),
        }
    }
}

/// `ld`, `tld`, `suld`, `cold` (generic, texture, surface, constant proxy loads).
fn load(op: &str, mods: &[&str], ops: &Operands) -> Result<Instr, ParseError> {
    let proxy = match op {
        "ld" => Proxy::Generic,
        "tld" => Proxy::Texture,
        "suld" => Proxy::Surface,
        _ => Proxy::Constant,
    };
    let (sem, scope) = ops.sem_scope(mods)?;
    ops.arity(2)?;
    match ops.val(1)? {
        // `ld r, 5` (Dat3M's localValue): a register move. Location operands are words,
        // so an integer here is a constant.
        Value::Imm(v) if proxy == Proxy::Generic => Ok(Instr::Local {
            op: LocalOp::Add,
            dst: ops.reg(0)?,
            a: Value::Imm(v),
            b: Value::Imm(0),
        }),
        _ => Ok(Instr::Load {
            proxy,
            sem,
            scope,
            dst: ops.reg(0)?,
            loc: ops.loc(1)?,
        }),
    }
}

/// `st`, `sust` (generic and surface proxy stores).
fn store(op: &str, mods: &[&str], ops: &Operands) -> Result<Instr, ParseError> {
    let proxy = if op == "st" {
        Proxy::Generic
    } else {
        Proxy::Surface
    };
    let (sem, scope) = ops.sem_scope(mods)?;
    ops.arity(2)?;
    Ok(Instr::Store {
        proxy,
        sem,
        scope,
        loc: ops.loc(0)?,
        value: ops.val(1)?,
    })
}

/// `atom`, `red` and their surface forms: `.sem.scope.op`.
fn read_modify_write(op: &str, mods: &[&str], ops: &Operands) -> Result<Instr, ParseError> {
    let proxy = if op.starts_with("su") {
        Proxy::Surface
    } else {
        Proxy::Generic
    };
    let [s, sc, o] = mods else {
        return Err(ops.err("expected `.sem.scope.op`".into()));
    };
    let sem = ops.sem(s)?;
    let scope = ops.scope(sc)?;
    let rmw = rmw_of(o).ok_or_else(|| ops.err(format!("unknown operation `.{o}`")))?;
    if op.ends_with("atom") {
        ops.arity(if rmw == RmwOp::Cas { 4 } else { 3 })?;
        let operands = ops.vals(2)?;
        return Ok(Instr::Atom {
            proxy,
            sem,
            scope,
            op: rmw,
            dst: ops.reg(0)?,
            loc: ops.loc(1)?,
            operands,
        });
    }
    if rmw == RmwOp::Cas || rmw == RmwOp::Exch {
        return Err(ops.err("`red` has no `.cas` or `.exch`".into()));
    }
    ops.arity(2)?;
    Ok(Instr::Red {
        proxy,
        sem,
        scope,
        op: rmw,
        loc: ops.loc(0)?,
        value: ops.val(1)?,
    })
}

/// `fence.sem.scope`, `fence.scope` (acq_rel), `fence.proxy.kind`.
fn fence(mods: &[&str], ops: &Operands) -> Result<Instr, ParseError> {
    ops.arity(0)?;
    let kind = match mods {
        ["proxy", "alias"] => FenceKind::Alias,
        ["proxy", p] => {
            FenceKind::Proxy(proxy_of(p).ok_or_else(|| ops.err(format!("unknown proxy `.{p}`")))?)
        }
        [s, sc] => FenceKind::Memory {
            sem: ops.sem(s)?,
            scope: ops.scope(sc)?,
        },
        // PTX: `fence.scope` is `fence.acq_rel.scope`.
        [sc] if scope_of(sc).is_some() => FenceKind::Memory {
            sem: Sem::AcqRel,
            scope: scope_of(sc).unwrap_or(Scope::Sys),
        },
        _ => {
            return Err(ops.err("expected `fence.sem.scope` or `fence.proxy.kind`".into()));
        }
    };
    Ok(Instr::Fence(kind))
}

/// `membar.{cta,gl,sys}`, which the PTX ISA defines as `fence.sc.{cta,gpu,sys}`.
fn membar(mods: &[&str], ops: &Operands) -> Result<Instr, ParseError> {
    ops.arity(0)?;
    let scope = match mods {
        ["cta"] => Scope::Cta,
        ["gl"] | ["gpu"] => Scope::Gpu,
        ["sys"] => Scope::Sys,
        _ => {
            return Err(ops.err("expected `membar.cta`, `membar.gl` or `membar.sys`".into()));
        }
    };
    Ok(Instr::Fence(FenceKind::Memory {
        sem: Sem::Sc,
        scope,
    }))
}

/// `bar.cta.sync` / `bar.cta.arrive` (and `barrier.`) with 1 to 3 operands.
fn barrier(mods: &[&str], ops: &Operands) -> Result<Instr, ParseError> {
    let mode = match mods {
        ["cta", "sync"] | ["sync"] => BarrierMode::Sync,
        ["cta", "arrive"] | ["arrive"] => BarrierMode::Arrive,
        _ => return Err(ops.err("expected `bar.cta.sync` or `bar.cta.arrive`".into())),
    };
    if ops.len() == 0 || ops.len() > 3 {
        return Err(ops.err(format!("expected 1 to 3 operands, found {}", ops.len())));
    }
    Ok(Instr::Barrier {
        mode,
        operands: ops.vals(0)?,
    })
}

/// `add`, `sub`, `mul`, `div` of registers and integers.
fn arithmetic(op: &str, ops: &Operands) -> Result<Instr, ParseError> {
    let op = match op {
        "add" => LocalOp::Add,
        "sub" => LocalOp::Sub,
        "mul" => LocalOp::Mul,
        _ => LocalOp::Div,
    };
    ops.arity(3)?;
    Ok(Instr::Local {
        op,
        dst: ops.reg(0)?,
        a: ops.val(1)?,
        b: ops.val(2)?,
    })
}

/// `beq a, b, LABEL` and the other comparisons.
fn branch(op: &str, ops: &Operands) -> Result<Instr, ParseError> {
    let cond = match op {
        "beq" => BranchCond::Eq,
        "bne" => BranchCond::Ne,
        "blt" => BranchCond::Lt,
        "ble" => BranchCond::Le,
        "bgt" => BranchCond::Gt,
        _ => BranchCond::Ge,
    };
    ops.arity(3)?;
    Ok(Instr::Branch {
        cond,
        a: ops.val(0)?,
        b: ops.val(1)?,
        label: ops.reg(2)?,
    })
}
