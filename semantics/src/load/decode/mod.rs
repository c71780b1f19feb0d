//! Instruction decoding: one PTX instruction (opcode, modifiers in any order, untyped operands)
//! to one [`Op`] (thesis 5.1.3 steps 1, 4 and the `load` step 1: operands resolved, modifiers
//! turned into fields, immediates converted to the operation's bit pattern).
//!
//! This file holds the shared machinery: the per-instruction context [`Cx`], modifier
//! classification ([`Mods`]), operand resolution (registers, special registers, variables,
//! functions, labels, immediates, addresses) and the dispatch on the opcode word
//! ([`SUPPORTED_OPCODES`] is exactly the set the dispatch accepts). The families live in
//! `alu.rs` (arithmetic, logic, comparisons, conversions; `narrow.rs` the packing `cvt`s), `intx.rs` (`lop3 bmsk szext fns mul24
//! mad24 sad dp4a dp2a cvt.pack`), `video.rs` (scalar video instructions), `mem.rs`
//! (ld/st/atom/red/cvta/fences), `control.rs` (branches, calls, the thesis dialect) and
//! `warp.rs` (barriers, votes, shuffles).

mod alu;
mod control;
mod intx;
mod mem;
mod narrow;
mod offset;
mod tensor;
mod video;
mod warp;

use super::consts::{self, Value};
use super::layout::{self, ModuleLayout};
use super::scope::{FnEnv, Local};
use super::types;
use super::unsupported::{self, Gap};
use crate::program::{Dim, FuncId, Op, PredSrc, Program, RegId, Space, SpecialReg, Src};
use ptx_parser::{
    Component, ConstExpr, Diagnostic, Function, Ident, Instruction, Modifier, Operand, ScalarType,
    Span,
};
use smallvec::SmallVec;
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

/// One classified modifier.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum M {
    Ty(ScalarType),
    Space(Space),
    Order(crate::program::MemOrder),
    Scope(crate::program::Scope),
    Cache(crate::program::CacheOp),
    Vector(u8),
    Round(crate::program::Rounding),
    /// A word whose meaning the family knows (`lo`, `wide`, `sync`, `uni`, `ftz`, ...).
    Word(&'static str),
    /// A performance hint with no semantic effect (`.L2::64B`, `.L1::evict_last`).
    Hint,
    /// Valid PTX that cudasem does not decode.
    Unsupported(Gap),
}

/// Classified modifiers of an instruction.
pub(crate) struct Mods<'a> {
    pub list: SmallVec<[(M, &'a Modifier); 6]>,
}

impl Mods<'_> {
    /// The types, in source order.
    pub fn types(&self) -> SmallVec<[(ScalarType, Span); 2]> {
        self.list
            .iter()
            .filter_map(|(m, md)| {
                if let M::Ty(t) = m {
                    Some((*t, md.span))
                } else {
                    None
                }
            })
            .collect()
    }
    pub fn has(&self, word: &str) -> bool {
        self.list
            .iter()
            .any(|(m, _)| matches!(m, M::Word(w) if crate::load::short_eq(w, word)))
    }
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

    /// Classifies every modifier with `classify`; unknown ones are reported.
    pub fn mods(&mut self, classify: impl Fn(&str) -> Option<M>) -> Option<Mods<'a>> {
        let ins = self.ins;
        let mut list = SmallVec::new();
        let mut ok = true;
        for md in &ins.modifiers {
            match classify(&md.name).or_else(|| known_unsupported(&md.name)) {
                Some(M::Unsupported(gap)) => {
                    let d = unsupported::modifier(md.span, &self.full_name(), &md.name, gap);
                    self.push_diag(d);
                    ok = false;
                }
                Some(M::Hint) => {}
                Some(m) => list.push((m, md)),
                None => {
                    let full = self.full_name();
                    self.error(
                        md.span,
                        format!("unknown modifier `.{}` in `{full}`", md.name),
                        "unknown modifier",
                        format!(
                            "remove `.{}`; docs/ptx-subset.md lists the modifiers of `{}`",
                            md.name, ins.opcode.name
                        ),
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(Mods { list })
    }

    /// The one value `pick` finds among the modifiers, reporting contradictory ones.
    /// [`Cx::one`] for a modifier the instruction cannot do without: when none is given, reports
    /// "`full` needs WHAT" (WHAT with its article, e.g. "a mode") with `help`, and gives `None`.
    pub fn required<T: PartialEq + Copy>(
        &mut self,
        mods: &Mods<'_>,
        what: &str,
        help: &str,
        pick: impl Fn(&M) -> Option<T>,
    ) -> Option<T> {
        let found = self.one(mods, pick);
        if found.is_none() {
            let noun = what
                .strip_prefix("an ")
                .or_else(|| what.strip_prefix("a "))
                .unwrap_or(what);
            let message = format!("`{}` needs {what}", self.full_name());
            self.error(self.ins.span, message, &format!("missing {noun}"), help);
        }
        found
    }

    pub fn one<T: PartialEq + Copy>(
        &mut self,
        mods: &Mods<'_>,
        pick: impl Fn(&M) -> Option<T>,
    ) -> Option<T> {
        let mut found: Option<(T, &Modifier)> = None;
        for (m, md) in &mods.list {
            if let Some(v) = pick(m) {
                match found {
                    Some((prev, pmd)) if prev != v => {
                        let full = self.full_name();
                        let d = Diagnostic::error(
                            md.span,
                            format!(
                                "contradictory modifiers `.{}` and `.{}` in `{full}`",
                                pmd.name, md.name
                            ),
                        )
                        .with_label("contradicts the earlier modifier")
                        .with_secondary(pmd.span, "earlier modifier")
                        .with_help("keep only one of them");
                        self.push_diag(d);
                    }
                    Some(_) => {}
                    None => found = Some((v, md)),
                }
            }
        }
        found.map(|(v, _)| v)
    }

    /// The instruction's single type, required.
    pub fn ty(&mut self, mods: &Mods<'_>) -> Option<ScalarType> {
        let tys = mods.types();
        match tys.as_slice() {
            [(t, _)] => Some(*t),
            [] => {
                let full = self.full_name();
                self.error(
                    self.ins.span,
                    format!("`{full}` needs a type"),
                    "missing type",
                    format!("add a type such as `.u32` or `.f32` to `{full}`"),
                );
                None
            }
            [_, (_, s), ..] => {
                let full = self.full_name();
                self.error(
                    *s,
                    format!("`{full}` has more than one type"),
                    "extra type",
                    "keep only one type modifier",
                );
                None
            }
        }
    }

    /// Reports a type outside `allowed`.
    pub fn require_ty(
        &mut self,
        ty: ScalarType,
        allowed: impl Fn(ScalarType) -> bool,
        what: &str,
    ) -> bool {
        if types::is_unsupported(ty) {
            self.unsupported(if matches!(ty, ScalarType::B128) {
                Gap::WideVectors
            } else {
                Gap::HalfFloat
            });
            return false;
        }
        if !allowed(ty) {
            let full = self.full_name();
            self.error(
                self.ins.span,
                format!("type `{}` is not allowed in `{full}`", ty.directive()),
                "wrong type",
                format!("`{}` takes {what}", self.ins.opcode.name),
            );
            return false;
        }
        true
    }

    /// Checks the operand count.
    pub fn arity(&mut self, counts: &[usize]) -> bool {
        let n = self.ins.operands.len();
        if counts.contains(&n) {
            return true;
        }
        let want = counts
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(" or ");
        let full = self.full_name();
        self.error(
            self.ins.span,
            format!("`{full}` takes {want} operands, found {n}"),
            "wrong number of operands",
            format!("write `{full}` with {want} operands (PTX ISA chapter 9)"),
        );
        false
    }

    // ---- names ----

    pub fn resolve(&mut self, name: &Ident, component: Option<Component>) -> Named {
        // Borrowed once: each deref of the inline-or-heap name string costs a branch.
        let name: &str = name.name.as_str();
        if name.starts_with('%')
            && let Some(s) = special(name, component)
        {
            return Named::Special(s);
        }
        if let Some(l) = self.f.env.lookup(self.scope, name, self.pos) {
            return Named::Local(l);
        }
        if let Some(&i) = self.f.m.layout.names.get(name) {
            return Named::Var(i);
        }
        if let Some(&id) = self.f.m.functions.get(name) {
            return Named::Func(id);
        }
        if self.f.m.signatures.contains_key(name) {
            return Named::Bodiless;
        }
        if let Some(l) = self.f.env.label(self.scope, name) {
            return Named::Label(l);
        }
        Named::Undefined
    }

    #[cold]
    #[inline(never)]
    fn undefined(&mut self, name: &Ident) {
        let n = &name.name;
        if n.starts_with('%') && is_known_special(n) {
            let gap = if n.starts_with("%cluster") || n.starts_with("%is_explicit_cluster") {
                Gap::Clusters
            } else {
                Gap::Other
            };
            let d = Diagnostic::error(
                name.span,
                format!("unsupported special register `{n}` (gap: `{}`)", gap.key()),
            )
            .with_label("special register outside the subset")
            .with_help("docs/ptx-subset.md lists the special registers cudasem provides");
            self.push_diag(d);
        } else if n.starts_with("%")
            && !n.starts_with("%r")
            && !n.starts_with("%f")
            && !n.starts_with("%p")
            && special_prefix(n)
        {
            self.error(
                name.span,
                format!("unknown special register `{n}`"),
                "unknown special register",
                "see docs/ptx-subset.md for the special registers (e.g. `%tid.x`, `%laneid`)",
            );
        } else {
            self.error(
                name.span,
                format!("undefined name `{n}`"),
                "not declared in this scope",
                format!("declare `{n}` (e.g. `.reg .b32 {n};`) or fix the spelling"),
            );
        }
    }

    /// A destination register (scalar). `ty`: the size it must be compatible with.
    pub fn dst(&mut self, op: &Operand, ty: Option<ScalarType>) -> Option<RegId> {
        self.reg_operand(op, ty, true, false)
    }

    /// A destination that may be a `_` sink (`None` inside `Some`).
    pub fn dst_or_sink(&mut self, op: &Operand, ty: Option<ScalarType>) -> Option<Option<RegId>> {
        if let Operand::Sink(_) = op {
            return Some(None);
        }
        self.dst(op, ty).map(Some)
    }

    /// A register operand; `mem` relaxes the size rule as loads and stores do.
    pub fn reg_operand(
        &mut self,
        op: &Operand,
        ty: Option<ScalarType>,
        is_dst: bool,
        mem: bool,
    ) -> Option<RegId> {
        match op {
            Operand::Symbol {
                name,
                component,
                span,
            } => {
                let named = self.resolve(name, *component);
                self.reg_named(named, name, *component, *span, ty, is_dst, mem)
            }
            other => {
                let what = operand_kind(other);
                let msg = if is_dst {
                    format!("{what} cannot be a destination")
                } else {
                    format!("expected a register, found {what}")
                };
                self.error(
                    other.span(),
                    msg,
                    "expected a register",
                    "use a register declared with `.reg`",
                );
                None
            }
        }
    }

    /// [`Cx::reg_operand`] for a symbol already resolved to `named` (sources resolve once and
    /// come here when the name is a register, instead of resolving it a second time).
    #[allow(clippy::too_many_arguments)]
    fn reg_named(
        &mut self,
        named: Named,
        name: &Ident,
        component: Option<Component>,
        span: Span,
        ty: Option<ScalarType>,
        is_dst: bool,
        mem: bool,
    ) -> Option<RegId> {
        let span = &span;
        let component = &component;
        match named {
            Named::Local(Local::Reg {
                id,
                ty: rty,
                vector,
            }) => {
                let id = match (vector, component) {
                    (1, None) => id,
                    (_, Some(c)) if component_index(*c).is_none() => {
                        self.error(
                            *span,
                            format!(
                                "the selector `{}` of `{}` belongs to video instructions",
                                c.directive(),
                                name.name
                            ),
                            "operand selector",
                            "byte and half-word selectors (`.b0`-`.b3`, `.h0`, `.h1`) select parts of video instruction operands; extract the part with `bfe` or `prmt` elsewhere",
                        );
                        return None;
                    }
                    (1, Some(_)) => {
                        self.error(
                            *span,
                            format!("`{}` is not a vector register", name.name),
                            "component of a scalar",
                            "remove the `.x`/`.y`/`.z`/`.w` component",
                        );
                        return None;
                    }
                    (_, Some(c)) => {
                        let k = component_index(*c).unwrap_or(0);
                        if k >= vector as u16 {
                            self.error(
                                *span,
                                format!("`{}` has only {vector} components", name.name),
                                "component out of range",
                                "use a component the vector has",
                            );
                            return None;
                        }
                        RegId(id.0 + k)
                    }
                    (_, None) => {
                        self.error(
                            *span,
                            format!("vector register `{}` where a scalar is required", name.name),
                            "vector register",
                            format!("name one component, e.g. `{}.x`", name.name),
                        );
                        return None;
                    }
                };
                if let Some(t) = ty {
                    self.check_ty(rty, t, *span, &name.name, mem);
                }
                Some(id)
            }
            Named::Special(_) if is_dst => {
                self.error(
                    *span,
                    format!("special register `{}` cannot be written", name.name),
                    "read-only",
                    "write to an ordinary register",
                );
                None
            }
            Named::Undefined => {
                self.undefined(name);
                None
            }
            _ => {
                self.error(
                    *span,
                    format!("`{}` is not a register", name.name),
                    "expected a register",
                    "use a register declared with `.reg`",
                );
                None
            }
        }
    }

    pub fn check_ty(
        &mut self,
        reg: ScalarType,
        inst: ScalarType,
        span: Span,
        name: &str,
        mem: bool,
    ) {
        let ok = if mem {
            types::compatible_mem(reg, inst)
        } else {
            types::compatible(reg, inst)
        };
        if !ok {
            let full = self.full_name();
            self.error(
                span,
                format!("register `{name}` is `{}` but `{full}` needs a `{}` operand here", reg.directive(), inst.directive()),
                "type mismatch",
                format!("use a register declared `{}` (or a bit type of the same size), or convert with `cvt`", inst.directive()),
            );
        }
    }

    /// A source operand of type `ty`: register, special register, immediate, or the address of a
    /// variable or function.
    pub fn src(&mut self, op: &Operand, ty: ScalarType) -> Option<Src> {
        self.src_with(op, ty, false)
    }

    /// [`Cx::src`] with the size rule of loads, stores and conversions (`mem`: wider registers).
    pub fn src_with(&mut self, op: &Operand, ty: ScalarType, mem: bool) -> Option<Src> {
        match op {
            Operand::Symbol {
                name,
                component,
                span,
            } => match self.resolve(name, *component) {
                named @ Named::Local(Local::Reg { .. }) => self
                    .reg_named(named, name, *component, *span, Some(ty), false, mem)
                    .map(Src::Reg),
                Named::Special(s) => Some(Src::Special(s)),
                Named::Local(Local::Frame { offset, .. }) => Some(Src::FrameAddr(offset)),
                Named::Local(Local::KernelParam { offset, .. }) => Some(Src::Imm(offset as u64)),
                Named::Local(Local::Static(i)) | Named::Var(i) => {
                    Some(Src::Imm(self.var_address(i)))
                }
                Named::Func(id) => {
                    self.f.address_taken.insert(id);
                    Some(Src::Imm(Program::function_address(id)))
                }
                Named::Bodiless => {
                    self.unsupported(Gap::ExternCalls);
                    None
                }
                Named::Label(_) => {
                    self.error(*span, format!("label `{}` cannot be used as a value", name.name), "label", "PTX takes labels only as branch targets; use a function address or `brx.idx`");
                    None
                }
                Named::Undefined if &*name.name == WARP_SZ && component.is_none() => {
                    Some(Src::Special(SpecialReg::WarpSz))
                }
                Named::Undefined => {
                    self.undefined(name);
                    None
                }
            },
            Operand::Immediate(e) => match self.register_offset(e) {
                Some(found) => self.register_plus_offset(found, e, ty),
                None => self.imm(e, ty).map(Src::Imm),
            },
            // The thesis's lowered form (Listings 5.2, 5.3): `[v]` as a value is `V[[v]]`, the frame
            // offset of a `.local`/`.param` frame variable or a variable's address.
            Operand::Address(a)
                if a.base.as_ref().is_some_and(|b| {
                    !matches!(
                        self.resolve(b, None),
                        Named::Local(Local::Reg { .. }) | Named::Undefined
                    )
                }) =>
            {
                let (addr, _) = self.address(op, Space::Generic)?;
                Some(Src::Imm(addr.offset as u64))
            }
            other => {
                let what = operand_kind(other);
                self.error(
                    other.span(),
                    format!("expected a register or constant, found {what}"),
                    "wrong kind of operand",
                    "use a register, a constant or a variable name here",
                );
                None
            }
        }
    }

    /// A predicate source `p` or `!p`.
    pub fn pred(&mut self, op: &Operand) -> Option<PredSrc> {
        match op {
            Operand::Not(inner, _) => self.pred(inner).map(|p| PredSrc {
                negated: !p.negated,
                ..p
            }),
            other => self.src(other, ScalarType::Pred).map(|src| PredSrc {
                src,
                negated: false,
            }),
        }
    }

    pub fn var_address(&self, i: usize) -> u64 {
        self.f
            .m
            .layout
            .variables
            .get(i)
            .map(|v| v.address)
            .unwrap_or(0)
    }

    /// Folds an immediate and converts it to `ty`'s bit pattern (PTX ISA 4.5: float literals
    /// round to `.f32` for single-precision operations; negative integers are sign-extended and
    /// truncated).
    pub fn imm(&mut self, e: &ConstExpr, ty: ScalarType) -> Option<u64> {
        let layout = self.f.m.layout;
        let functions = self.f.m.functions;
        let mut symbols = |id: &Ident, _generic: bool| -> Result<u64, Diagnostic> {
            if let Some(&i) = layout.names.get(&*id.name) {
                return Ok(layout.variables.get(i).map(|v| v.address).unwrap_or(0));
            }
            if let Some(&f) = functions.get(&*id.name) {
                return Ok(Program::function_address(f));
            }
            consts::no_symbols(id, false)
        };
        let value = match consts::fold(e, &mut symbols) {
            Ok(v) => v,
            Err(d) => {
                self.push_diag(d);
                return None;
            }
        };
        match immediate_bits(value, ty) {
            Ok(bits) => Some(bits),
            Err(msg) => {
                self.error(
                    e.span(),
                    msg,
                    "wrong kind of constant",
                    if types::is_float(ty) {
                        "write a floating-point constant such as `1.0` or `0f3F800000`"
                    } else {
                        "write an integer constant"
                    },
                );
                None
            }
        }
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

/// Converts a folded constant to the bits of an operation of type `ty`.
pub(crate) fn immediate_bits(value: Value, ty: ScalarType) -> Result<u64, String> {
    match value {
        Value::Int { .. } if types::is_float(ty) => Err(format!(
            "integer constant used where `{}` needs a floating-point constant",
            ty.directive()
        )),
        Value::Int { bits, .. } => Ok(layout::truncate(bits, ty)),
        Value::Float { .. } if types::is_packed_half(ty) => Err(format!(
            "a floating-point constant cannot be a `{}` operand (two packed halves)",
            ty.directive()
        )),
        Value::Float { value, .. } if types::is_float(ty) => Ok(layout::float_bits(value, ty)),
        Value::Float { value, f32_literal } if types::kind(ty) == types::Kind::Bits => {
            Ok(if f32_literal || types::size(ty) == 4 {
                (value as f32).to_bits() as u64
            } else {
                value.to_bits()
            } & layout::mask(ty))
        }
        Value::Float { .. } => Err(format!(
            "floating-point constant used where `{}` needs an integer",
            ty.directive()
        )),
    }
}

/// The element a vector component names; `None` for the video selectors `.b0`-`.h1`.
fn component_index(c: Component) -> Option<u16> {
    Some(match c {
        Component::X => 0,
        Component::Y => 1,
        Component::Z => 2,
        Component::W => 3,
        Component::B0
        | Component::B1
        | Component::B2
        | Component::B3
        | Component::H0
        | Component::H1 => return None,
    })
}

pub(crate) fn operand_kind(op: &Operand) -> &'static str {
    match op {
        Operand::Symbol { .. } => "a name",
        Operand::Not(..) => "a negated predicate",
        Operand::Immediate(_) => "an immediate",
        Operand::Address(_) => "an address `[...]`",
        Operand::Vector(..) => "a vector `{...}`",
        Operand::List(..) => "a parenthesised list",
        Operand::Bracketed(..) => "a texture or surface operand `[name, {...}]`",
        Operand::Pair(..) => "a predicate pair `p|q`",
        Operand::Sink(_) => "`_`",
    }
}

/// The special register `name` (PTX ISA 10); a 3-D one without a component means `.x`.
pub(crate) fn special(name: &str, component: Option<Component>) -> Option<SpecialReg> {
    let dim = || match component {
        None | Some(Component::X) => Some(Dim::X),
        Some(Component::Y) => Some(Dim::Y),
        Some(Component::Z) => Some(Dim::Z),
        Some(_) => None,
    };
    let scalar = |s: SpecialReg| if component.is_none() { Some(s) } else { None };
    match name {
        "%tid" => dim().map(SpecialReg::Tid),
        "%ntid" => dim().map(SpecialReg::Ntid),
        "%ctaid" => dim().map(SpecialReg::Ctaid),
        "%nctaid" => dim().map(SpecialReg::Nctaid),
        "%laneid" => scalar(SpecialReg::LaneId),
        "%warpid" => scalar(SpecialReg::WarpId),
        "%nwarpid" => scalar(SpecialReg::NWarpId),
        "%smid" => scalar(SpecialReg::SmId),
        "%nsmid" => scalar(SpecialReg::NSmId),
        "%gridid" => scalar(SpecialReg::GridId),
        "%lanemask_eq" => scalar(SpecialReg::LanemaskEq),
        "%lanemask_le" => scalar(SpecialReg::LanemaskLe),
        "%lanemask_lt" => scalar(SpecialReg::LanemaskLt),
        "%lanemask_ge" => scalar(SpecialReg::LanemaskGe),
        "%lanemask_gt" => scalar(SpecialReg::LanemaskGt),
        "%clock" => scalar(SpecialReg::Clock),
        "%clock64" => scalar(SpecialReg::Clock64),
        "%globaltimer" => scalar(SpecialReg::GlobalTimer),
        "%dynamic_smem_size" => scalar(SpecialReg::DynamicSmemSize),
        "%total_smem_size" => scalar(SpecialReg::TotalSmemSize),
        _ => None,
    }
}

/// Special registers PTX defines that cudasem does not provide.
fn is_known_special(name: &str) -> bool {
    name.starts_with("%cluster")
        || name.starts_with("%nclusterid")
        || name.starts_with("%is_explicit_cluster")
        || name.starts_with("%pm")
        || name.starts_with("%envreg")
        || name.starts_with("%reserved_smem")
        || matches!(
            name,
            "%clock_hi"
                | "%globaltimer_lo"
                | "%globaltimer_hi"
                | "%aggr_smem_size"
                | "%current_graph_exec"
        )
}

/// Names that look like a special register (`%` followed by letters only, no digits).
fn special_prefix(name: &str) -> bool {
    name.len() > 1
        && name[1..]
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_')
}

/// Modifiers that are PTX but outside the subset, whatever the opcode.
fn known_unsupported(name: &str) -> Option<M> {
    Some(match name {
        "NaN" | "xorsign" | "abs" | "oob" | "mmio" | "unified" | "noftz" | "L2::cache_hint" => {
            M::Unsupported(Gap::Modifiers)
        }
        "relu" | "satfinite" | "f16" | "f16x2" | "bf16" | "bf16x2" | "tf32" | "e4m3x2"
        | "e5m2x2" | "e4m3" | "e5m2" | "e2m1x2" | "e3m2x2" | "e2m3x2" | "ue8m0x2" | "e2m1x4"
        | "e4m3x4" | "e5m2x4" | "e2m3x4" | "e3m2x4" | "rna" | "rs" => {
            M::Unsupported(Gap::HalfFloat)
        }
        "b128" => M::Unsupported(Gap::WideVectors),
        "cluster" | "shared::cluster" => M::Unsupported(Gap::Clusters),
        _ => {
            // Cache-eviction and prefetch-size hints: performance only (docs/ptx-subset.md).
            if name.starts_with("L1::") || name.starts_with("L2::") {
                M::Hint
            } else {
                return None;
            }
        }
    })
}

// ---- modifier vocabularies shared by the families ----

pub(crate) fn m_ty(name: &str) -> Option<M> {
    types::parse(name).map(M::Ty)
}

pub(crate) fn m_space(name: &str) -> Option<M> {
    Some(M::Space(match name {
        "global" => Space::Global,
        "shared" | "shared::cta" => Space::Shared,
        "local" => Space::Local,
        "const" => Space::Const,
        "param" | "param::entry" | "param::func" => Space::Param,
        _ => return None,
    }))
}

pub(crate) fn m_order(name: &str) -> Option<M> {
    use crate::program::MemOrder as O;
    Some(M::Order(match name {
        "weak" => O::Weak,
        "volatile" => O::Volatile,
        "relaxed" => O::Relaxed,
        "acquire" => O::Acquire,
        "release" => O::Release,
        "acq_rel" => O::AcqRel,
        "sc" => O::Sc,
        _ => return None,
    }))
}

pub(crate) fn m_scope(name: &str) -> Option<M> {
    use crate::program::Scope as S;
    Some(M::Scope(match name {
        "cta" => S::Cta,
        "gpu" => S::Gpu,
        "sys" => S::Sys,
        _ => return None,
    }))
}

pub(crate) fn m_round(name: &str) -> Option<M> {
    use crate::program::Rounding as R;
    Some(M::Round(match name {
        "rn" => R::Rn,
        "rz" => R::Rz,
        "rm" => R::Rm,
        "rp" => R::Rp,
        "rni" => R::Rni,
        "rzi" => R::Rzi,
        "rmi" => R::Rmi,
        "rpi" => R::Rpi,
        _ => return None,
    }))
}

/// A fixed word of a family.
pub(crate) fn m_word(name: &str, words: &[&'static str]) -> Option<M> {
    words
        .iter()
        .find(|w| crate::load::short_eq(w, name))
        .map(|w| M::Word(w))
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
        "mov" => alu::mov(&mut cx),
        "cvt" => alu::cvt(&mut cx),
        "add" | "sub" | "mul" | "mad" | "fma" | "div" | "rem" | "min" | "max" | "abs" | "neg"
        | "and" | "or" | "xor" | "not" | "cnot" | "shl" | "shr" | "selp" | "bfe" | "bfi"
        | "brev" | "clz" | "popc" | "prmt" | "bfind" | "copysign" | "rcp" | "sqrt" | "rsqrt"
        | "ex2" | "lg2" | "sin" | "cos" | "tanh" | "addc" | "subc" | "madc" | "shf" => {
            alu::arith(&mut cx, opcode)
        }
        "setp" | "set" => alu::setp(&mut cx, opcode == "set"),
        "lop3" => intx::lop3(&mut cx),
        "bmsk" | "szext" => intx::bmsk_szext(&mut cx, opcode == "szext"),
        "fns" => intx::fns(&mut cx),
        "mul24" | "mad24" => intx::mul24(&mut cx, opcode == "mad24"),
        "sad" => intx::sad(&mut cx),
        "dp4a" | "dp2a" => intx::dot(&mut cx, opcode == "dp2a"),
        "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr" | "vset" => {
            video::video(&mut cx, opcode)
        }
        "slct" => alu::slct(&mut cx),
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
