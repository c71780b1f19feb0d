//! Instruction decoding: one PTX instruction (opcode, modifiers in any order, untyped operands)
//! to one [`Op`] (thesis 5.1.3 steps 1, 4 and the `load` step 1: operands resolved, modifiers
//! turned into fields, immediates converted to the operation's bit pattern).
//!
//! This file holds the per-instruction context [`Cx`] and the dispatch on the opcode word
//! ([`SUPPORTED_OPCODES`] is exactly the set the dispatch accepts); `modifiers.rs` classifies
//! modifiers ([`Mods`]) and `operands.rs` resolves operands (registers, special registers,
//! variables, functions, labels, immediates, addresses). The families live in `alu.rs`
//! (arithmetic, logic, comparisons, conversions; `narrow.rs` the packing `cvt`s), `intx.rs`
//! (`lop3 bmsk szext fns mul24 mad24 sad dp4a dp2a cvt.pack`), `video.rs` (scalar video
//! instructions), `mem.rs` (ld/st/atom/red/cvta/fences), `control.rs` (branches, calls, the
//! thesis dialect), `warp.rs` (barriers, votes, shuffles) and `tensor.rs` (`mma`, `ldmatrix`,
//! `cp.async`).

mod alu;
mod compare;
mod control;
mod intx;
mod mem;
mod modifiers;
mod moves;
mod narrow;
mod offset;
mod operands;
mod tensor;
mod video;
mod warp;

pub(crate) use modifiers::{M, Mods, m_order, m_round, m_scope, m_space, m_ty, m_word};
pub(crate) use operands::operand_kind;

use super::layout::ModuleLayout;
use super::scope::{FnEnv, Local};
use super::unsupported::{self, Gap};
use crate::program::{FuncId, Op, SpecialReg};
use ptx_parser::{Diagnostic, Function, Instruction, Span};
use std::collections::BTreeSet;

/// `WARP_SZ`, PTX's predefined identifier for the warp size (PTX ISA "Special Registers:
/// WARP_SZ"): a run-time constant, so a source operand reading the machine's warp width (32
/// unless the configuration narrows warps), not a constant to fold.
const WARP_SZ: &str = "WARP_SZ";

/// The opcode words the decoder dispatches on (the first word of an instruction; `bar.sync` is
/// `bar`). `docs/ptx-subset.md` documents each; a test keeps the two in step.
pub const SUPPORTED_OPCODES: &[&str] = &[
    // alu.rs
    "mov",
    "add",
    "sub",
    "mul",
    "mad",
    "fma",
    "div",
    "rem",
    "min",
    "max",
    "abs",
    "neg",
    "and",
    "or",
    "xor",
    "not",
    "cnot",
    "shl",
    "shr",
    "selp",
    "setp",
    "set",
    "slct",
    "bfe",
    "bfi",
    "brev",
    "clz",
    "popc",
    "prmt",
    "bfind",
    "copysign",
    "rcp",
    "sqrt",
    "rsqrt",
    "ex2",
    "lg2",
    "sin",
    "cos",
    "tanh",
    "addc",
    "subc",
    "madc",
    "shf",
    "cvt",
    // intx.rs
    "lop3",
    "bmsk",
    "szext",
    "fns",
    "mul24",
    "mad24",
    "sad",
    "dp4a",
    "dp2a",
    // video.rs
    "vadd",
    "vsub",
    "vabsdiff",
    "vmin",
    "vmax",
    "vshl",
    "vshr",
    "vset",
    // mem.rs
    "ld",
    "ldu",
    "st",
    "cvta",
    "isspacep",
    "atom",
    "red",
    "membar",
    "fence",
    "prefetch",
    "prefetchu",
    // warp.rs
    "bar",
    "barrier",
    "vote",
    "shfl",
    "match",
    "redux",
    "activemask",
    // tensor.rs
    "mma",
    "ldmatrix",
    "cp",
    // control.rs
    "bra",
    "brx",
    "call",
    "ret",
    "exit",
    "trap",
    "nanosleep",
    "pmevent",
    "ssy",
    "sync",
    "brk",
    "break",
    "preBrk",
    "preRet",
];

/// What the decoder needs to know about the module.
pub(crate) struct ModuleCtx<'a> {
    pub layout: &'a ModuleLayout<'a>,
    /// Functions with bodies.
    pub functions: &'a crate::load::FastMap<&'a str, FuncId>,
    /// Every declared function (the definition when there is one): signatures for `call`.
    pub signatures: &'a crate::load::FastMap<&'a str, &'a Function>,
    pub module: &'a ptx_parser::Module,
    /// The result slots of the functions declared without a body.
    pub extern_slots: &'a [crate::load::ExternSlot<'a>],
}

impl ModuleCtx<'_> {
    /// The function that defines a label `name` somewhere (for "branch into another function");
    /// only asked on the error path, so a walk is fine.
    pub(crate) fn label_owner(&self, name: &str) -> Option<String> {
        fn has(b: &ptx_parser::Block, name: &str, depth: u32) -> bool {
            depth < 200
                && b.statements.iter().any(|s| match s {
                    ptx_parser::Statement::Label(l) => &*l.name == name,
                    ptx_parser::Statement::Block(inner) => has(inner, name, depth + 1),
                    _ => false,
                })
        }
        self.module.items.iter().find_map(|i| match i {
            ptx_parser::Item::Function(f) if f.body.as_ref().is_some_and(|b| has(b, name, 0)) => {
                Some(f.name.name.as_str().to_owned())
            }
            _ => None,
        })
    }
}

/// Decoding state of one function.
pub(crate) struct FnCx<'a, 'e> {
    pub env: &'e mut FnEnv<'a>,
    pub m: &'e ModuleCtx<'a>,
    pub diags: &'e mut Vec<Diagnostic>,
    pub is_entry: bool,
    /// Functions whose address the program takes (indirect-call candidates).
    pub address_taken: &'e mut BTreeSet<FuncId>,
    /// The body-less functions called (indices into [`ModuleCtx::extern_slots`]).
    pub extern_called: &'e mut BTreeSet<usize>,
    /// Set when an instruction reads a special register that tells blocks apart
    /// ([`SpecialReg::tells_blocks_apart`]).
    pub reads_block_identity: &'e mut bool,
}

/// Decoding state of one instruction.
pub(crate) struct Cx<'a, 'e, 'f> {
    pub f: &'f mut FnCx<'a, 'e>,
    pub ins: &'a Instruction,
    pub scope: u32,
    /// The instruction's flat index in its function (declarations before it are visible).
    pub pos: u32,
    /// Ops produced (usually one; `mov.vN` produces several).
    pub out: Vec<Op>,
    /// The instruction's guard, resolved (the caller applies it to every op in `out`).
    pub guard: Option<crate::program::GuardPred>,
    /// Ops of `out` (by index) that take this guard instead of the instruction's.
    pub guard_overrides: Vec<(usize, Option<crate::program::GuardPred>)>,
    failed: bool,
}

/// What a name in an operand denotes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Named {
    Local(Local),
    Special(SpecialReg),
    /// A module variable (index into `Program::variables`).
    Var(usize),
    Func(FuncId),
    /// A declared function without a body.
    Bodiless,
    /// A label (index into the function's labels).
    Label(u32),
    Undefined,
}

impl<'a, 'e, 'f> Cx<'a, 'e, 'f> {
    /// The instruction as written up to its operands (`ld.global.v4.f32`), for diagnostics.
    #[cold]
    pub fn full_name(&self) -> String {
        let mut s = self.ins.opcode.name.as_str().to_owned();
        for m in &self.ins.modifiers {
            s.push('.');
            s.push_str(&m.name);
        }
        s
    }

    // Diagnostics are the rare path: kept out of line, so that the decoding paths that succeed
    // (nearly every instruction) stay small.
    #[cold]
    #[inline(never)]
    pub fn error(
        &mut self,
        span: Span,
        message: impl Into<String>,
        label: &str,
        help: impl Into<String>,
    ) {
        self.failed = true;
        self.f.diags.push(
            Diagnostic::error(span, message)
                .with_label(label)
                .with_help(help),
        );
    }

    pub fn push_diag(&mut self, d: Diagnostic) {
        if d.severity == ptx_parser::Severity::Error {
            self.failed = true;
        }
        self.f.diags.push(d);
    }

    #[cold]
    #[inline(never)]
    pub fn unsupported(&mut self, gap: Gap) {
        let d = unsupported::diag(self.ins.span, &self.full_name(), gap);
        self.push_diag(d);
    }

    /// Refuses the instruction for a type outside the subset (`types::is_unsupported`, or a
    /// half-precision type where the instruction takes none): `.b128` is the wide-vector gap,
    /// every other such type the half-precision one.
    pub fn unsupported_type(&mut self, ty: ptx_parser::ScalarType) {
        self.unsupported(if ty == ptx_parser::ScalarType::B128 {
            Gap::WideVectors
        } else {
            Gap::HalfFloat
        });
    }

    /// Emits the op (the caller applies the guard).
    pub fn emit(&mut self, op: Op) {
        self.out.push(op);
    }

    /// Emits the op under `guard` instead of the instruction's.
    pub fn emit_guarded(&mut self, op: Op, guard: Option<crate::program::GuardPred>) {
        self.guard_overrides.push((self.out.len(), guard));
        self.out.push(op);
    }
}

/// Decodes one instruction into zero or more ops (the guard `guard` is applied by the caller,
/// except to the ops `guards` lists with their own), appended to `out` after clearing it: the
/// caller passes the same buffers for every instruction, so decoding allocates no vector per
/// instruction. Errors go to the diagnostics; the result is `false` (and `out` unspecified)
/// when the instruction could not be decoded.
pub(crate) fn decode<'a>(
    f: &mut FnCx<'a, '_>,
    ins: &'a Instruction,
    (scope, pos): (u32, u32),
    guard: Option<crate::program::GuardPred>,
    out: &mut Vec<Op>,
    guards: &mut Vec<(usize, Option<crate::program::GuardPred>)>,
) -> bool {
    out.clear();
    guards.clear();
    let mut cx = Cx {
        f,
        ins,
        scope,
        pos,
        out: std::mem::take(out),
        guard,
        guard_overrides: std::mem::take(guards),
        failed: false,
    };
    let opcode: &str = &ins.opcode.name;
    match opcode {
        "mov" => moves::mov(&mut cx),
        "cvt" => moves::cvt(&mut cx),
        "add" | "sub" | "mul" | "mad" | "fma" | "div" | "rem" | "min" | "max" | "abs" | "neg"
        | "and" | "or" | "xor" | "not" | "cnot" | "shl" | "shr" | "selp" | "bfe" | "bfi"
        | "brev" | "clz" | "popc" | "prmt" | "bfind" | "copysign" | "rcp" | "sqrt" | "rsqrt"
        | "ex2" | "lg2" | "sin" | "cos" | "tanh" | "addc" | "subc" | "madc" | "shf" => {
            alu::arith(&mut cx, opcode)
        }
        "setp" | "set" => compare::setp(&mut cx, opcode == "set"),
        "lop3" => intx::lop3(&mut cx),
        "bmsk" | "szext" => intx::bmsk_szext(&mut cx, opcode == "szext"),
        "fns" => intx::fns(&mut cx),
        "mul24" | "mad24" => intx::mul24(&mut cx, opcode == "mad24"),
        "sad" => intx::sad(&mut cx),
        "dp4a" | "dp2a" => intx::dot(&mut cx, opcode == "dp2a"),
        "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr" | "vset" => {
            video::video(&mut cx, opcode)
        }
        "slct" => compare::slct(&mut cx),
        "ld" | "ldu" | "st" => mem::ld_st(&mut cx, opcode),
        "cvta" | "isspacep" => mem::cvta(&mut cx, opcode == "isspacep"),
        "atom" | "red" => mem::atom(&mut cx, opcode == "red"),
        "membar" | "fence" => mem::fence(&mut cx, opcode == "fence"),
        "prefetch" | "prefetchu" => mem::prefetch(&mut cx),
        "bar" | "barrier" => warp::barrier(&mut cx, opcode == "barrier"),
        "vote" => warp::vote(&mut cx),
        "shfl" => warp::shfl(&mut cx),
        "match" => warp::match_sync(&mut cx),
        "redux" => warp::redux(&mut cx),
        "activemask" => warp::activemask(&mut cx),
        "mma" => tensor::mma(&mut cx),
        "ldmatrix" => tensor::ldmatrix(&mut cx),
        "cp" => tensor::cp(&mut cx),
        "bra" => control::bra(&mut cx),
        "brx" => control::brx(&mut cx),
        "call" => control::call(&mut cx),
        "ret" | "exit" | "trap" | "nanosleep" | "pmevent" | "sync" | "brk" | "break" => {
            control::simple(&mut cx, opcode)
        }
        "ssy" | "preBrk" | "preRet" => control::push_token(&mut cx, opcode),
        _ => {
            cx.unsupported(Gap::of_opcode(opcode));
        }
    }
    *out = cx.out;
    *guards = cx.guard_overrides;
    !cx.failed
}
