//! `load`: a parsed PTX module to a [`Program`] (thesis 5.1.3, the code transformations and
//! `load`), or every error found.
//!
//! The pipeline, one module per step:
//! * [`layout`]: module variables (and function-scope statics) get addresses and folded
//!   initializer bytes ([`consts`] folds constant expressions, thesis step 2);
//! * [`scope`]: per function, the `{}` scope tree, register ids, the frame layout of `.local` and
//!   `.param` variables and formal parameters, kernel parameter offsets, labels (steps 3 and 7);
//! * [`decode`]: every instruction to an [`crate::program::Op`], validating operands and
//!   modifiers (steps 1 and 4); anything outside the subset is an error naming a documented
//!   [`Gap`] ([`unsupported`]);
//! * here: the implicit `ret`/`exit` at the end of a body and `ret` to `exit` in kernels (step 5),
//!   label and branch-target resolution (`load` step 3), the source map ([`source_text`] gives
//!   the lines and the program hash);
//! * [`cfg`]: basic blocks and reconvergence points (the thesis's step 6 for ordinary PTX).

mod cfg;
pub(crate) mod consts;
mod decode;
pub(crate) mod layout;
pub(crate) mod scope;
mod source_text;
pub(crate) mod types;
pub(crate) mod unsupported;

pub use decode::SUPPORTED_OPCODES;
pub use source_text::{LineIndex, fnv1a};
pub use unsupported::Gap;

use crate::program::{
    CallTarget, FuncId, Function, FunctionKind, GuardPred, Instr, Op, Pc, Program, SourceInfo,
};
use decode::{FnCx, ModuleCtx};
use ptx_parser::{Diagnostic, Item, Module, PerfDirective, ScalarType, Severity, Span};
use scope::Local;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Lowers and validates `module`. Warnings (unused names, ignored directives) come back with the
/// program; any error means no program.
pub fn load(module: &Module, source: &str) -> Result<(Program, Vec<Diagnostic>), Vec<Diagnostic>> {
    let mut diags = Vec::new();

    // Functions: those with bodies get ids in module order; declarations give signatures.
    let mut functions: FastMap<&str, FuncId> = FastMap::default();
    let mut signatures: FastMap<&str, &ptx_parser::Function> = FastMap::default();
    let mut bodies = Vec::new();
    for item in &module.items {
        if let Item::Function(f) = item {
            let name: &str = &f.name.name;
            match &f.body {
                Some(body) => {
                    if let Some(&FuncId(earlier)) = functions.get(name) {
                        let first = bodies
                            .get(earlier as usize)
                            .map(|(g, _): &(&ptx_parser::Function, _)| g.name.span)
                            .unwrap_or_default();
                        diags.push(
                            Diagnostic::error(
                                f.name.span,
                                format!("function `{name}` is defined twice"),
                            )
                            .with_label("second definition")
                            .with_secondary(first, "first defined here")
                            .with_help("rename one of the functions"),
                        );
                        continue;
                    }
                    functions.insert(name, FuncId(bodies.len() as u32));
                    signatures.insert(name, f);
                    bodies.push((f, body));
                }
                None => {
                    signatures.entry(name).or_insert(f);
                }
            }
        }
    }

    let mut layout = layout::layout(module, &mut diags);
    layout::initialize(&mut layout, &functions, &mut diags);
    let extern_slots = extern_slots(module, &functions, layout.const_size);

    let (hash, lines) = source_text::hash_and_index_lines(source);
    let mut line_cursor = 0;
    let mctx = ModuleCtx {
        layout: &layout,
        functions: &functions,
        signatures: &signatures,
        module,
        extern_slots: &extern_slots,
    };
    let mut extern_called: BTreeSet<usize> = BTreeSet::new();
    let mut instructions: Vec<Instr> = Vec::new();
    let mut source_info: Vec<SourceInfo> = Vec::new();
    let mut out_functions: Vec<Function> = Vec::with_capacity(bodies.len());
    let mut label_pcs_of: Vec<Vec<Pc>> = Vec::with_capacity(bodies.len());
    let mut address_taken = BTreeSet::new();
    // Reused by every instruction's decoding (see `decode::decode`).
    let mut ops: Vec<Op> = Vec::with_capacity(4);
    let mut op_guards: Vec<(usize, Option<GuardPred>)> = Vec::new();

    for (f, body) in &bodies {
        let is_entry = f.kind == ptx_parser::FunctionKind::Entry;
        let mut env = scope::build(f, body, &layout.statics, &layout.module_regs, &mut diags);
        let flat = std::mem::take(&mut env.instrs);
        let start = instructions.len() as Pc;
        let mut stmt_pc: Vec<Pc> = Vec::with_capacity(flat.len() + 1);
        {
            let mut fcx = FnCx {
                env: &mut env,
                m: &mctx,
                diags: &mut diags,
                is_entry,
                address_taken: &mut address_taken,
                extern_called: &mut extern_called,
            };
            for (k, fi) in flat.iter().enumerate() {
                stmt_pc.push(instructions.len() as Pc);
                let guard = match &fi.ins.guard {
                    None => None,
                    Some(g) => match guard_reg(&fcx, fi.scope, k as u32, g) {
                        Ok(r) => Some(r),
                        Err(d) => {
                            fcx.diags.push(d);
                            continue;
                        }
                    },
                };
                if decode::decode(
                    &mut fcx,
                    fi.ins,
                    (fi.scope, k as u32),
                    guard,
                    &mut ops,
                    &mut op_guards,
                ) {
                    let info = SourceInfo {
                        span: fi.ins.span,
                        ptx_line: lines.line_near(fi.ins.span.start, &mut line_cursor),
                        loc: fi.loc,
                    };
                    for (i, op) in ops.drain(..).enumerate() {
                        let guard = op_guards
                            .iter()
                            .find(|(at, _)| *at == i)
                            .map_or(guard, |&(_, g)| g);
                        instructions.push(Instr { guard, op });
                        source_info.push(info.clone());
                    }
                }
            }
        }
        let body_end = instructions.len() as Pc;
        stmt_pc.push(body_end);
        // Thesis 5.1.3 step 5: every path ends in `ret` (`exit` in kernels); a trailing label
        // names the appended instruction (`load` step 3).
        let falls_off = match instructions.last() {
            _ if body_end == start => true,
            Some(Instr {
                guard: None,
                op:
                    Op::Ret | Op::Exit | Op::Trap | Op::Bra { .. } | Op::BraIndirect { .. } | Op::Brk,
            }) => false,
            _ => true,
        };
        let trailing_label = env.labels.iter().any(|l| l.stmt as usize == flat.len());
        if falls_off || trailing_label {
            let close = Span {
                start: body.span.end.saturating_sub(1),
                end: body.span.end,
            };
            instructions.push(Instr {
                guard: None,
                op: if is_entry { Op::Exit } else { Op::Ret },
            });
            source_info.push(SourceInfo {
                span: close,
                ptx_line: lines.line_near(close.start, &mut line_cursor),
                loc: None,
            });
        }
        let end = instructions.len() as Pc;
        let label_pcs: Vec<Pc> = env
            .labels
            .iter()
            .map(|l| stmt_pc.get(l.stmt as usize).copied().unwrap_or(body_end))
            .collect();
        let mut explicit = false;
        for ins in &mut instructions[start as usize..end as usize] {
            match &mut ins.op {
                Op::Bra { target, .. }
                | Op::Ssy { target }
                | Op::PreBrk { target }
                | Op::PreRet { target } => {
                    *target = label_pcs.get(*target as usize).copied().unwrap_or(end);
                }
                Op::BraIndirect { targets, .. } => {
                    for t in targets.iter_mut() {
                        *t = label_pcs.get(*t as usize).copied().unwrap_or(end);
                    }
                }
                _ => {}
            }
            explicit |= matches!(
                ins.op,
                Op::Ssy { .. } | Op::Sync | Op::Brk | Op::PreBrk { .. } | Op::PreRet { .. }
            );
        }
        let ntid = |d: &[u32]| {
            [
                d.first().copied().unwrap_or(1),
                d.get(1).copied().unwrap_or(1),
                d.get(2).copied().unwrap_or(1),
            ]
        };
        let mut reqntid = None;
        let mut maxntid = None;
        for p in &f.performance {
            match p {
                PerfDirective::ReqNtid(d, _) => reqntid = Some(ntid(d)),
                PerfDirective::MaxNtid(d, _) => maxntid = Some(ntid(d)),
                _ => {}
            }
        }
        let labels = std::mem::take(&mut env.labels)
            .into_iter()
            .zip(&label_pcs)
            .map(|(l, &pc)| (l.name, pc))
            .collect();
        out_functions.push(Function {
            name: f.name.name.as_str().to_owned(),
            kind: if is_entry {
                FunctionKind::Entry
            } else {
                FunctionKind::Func
            },
            start,
            end,
            params: std::mem::take(&mut env.params),
            return_params: std::mem::take(&mut env.return_params),
            registers: {
                env.rename_shadowed();
                std::mem::take(&mut env.registers)
            },
            frame_size: env.frame_size,
            frame: std::mem::take(&mut env.frame),
            param_size: env.param_size,
            labels,
            reqntid,
            maxntid,
            cfg: Default::default(),
            explicit_reconvergence: explicit,
            span: f.span,
        });
        label_pcs_of.push(label_pcs);
    }

    // Indirect-call candidates: every function whose address the program takes.
    let candidates: Box<[FuncId]> = address_taken.iter().copied().collect();
    for ins in &mut instructions {
        if let Op::Call {
            target: CallTarget::Indirect { candidates: c, .. },
            ..
        } = &mut ins.op
            && c.is_empty()
        {
            *c = candidates.clone();
        }
    }

    let mut reconvergence = vec![None; instructions.len()];
    let mut cfg_scratch = cfg::Scratch::default();
    for (f, labels) in out_functions.iter_mut().zip(&label_pcs_of) {
        f.cfg = cfg::build(
            &instructions,
            f.start,
            f.end,
            labels,
            &mut reconvergence,
            &mut cfg_scratch,
        );
    }

    if diags.iter().any(|d| d.severity == Severity::Error) {
        diags.sort_by_key(|d| d.span.start);
        return Err(diags);
    }
    let files: BTreeMap<u32, String> = module
        .items
        .iter()
        .filter_map(|i| {
            if let Item::File(f) = i {
                Some((f.index, f.path.to_string()))
            } else {
                None
            }
        })
        .collect();
    // The result slot of every body-less function the program calls (`.const`, after the
    // module's own constants): the launch gives its value (`extern_calls`).
    let mut variables = layout.variables;
    let mut const_size = layout.const_size;
    for &k in &extern_called {
        if let Some(slot) = extern_slots.get(k) {
            variables.push(crate::program::Variable {
                name: extern_slot_name(slot.name),
                space: crate::program::Space::Const,
                address: slot.address,
                size: 8,
                align: 8,
                ty: slot.ty,
                init: Vec::new(),
                dynamic: false,
                generic_relocations: Vec::new(),
            });
            const_size = const_size.max(slot.address + 8);
        }
    }
    let program = Program {
        instructions,
        source: source_info,
        functions: out_functions,
        global_size: layout.global_size,
        const_size,
        shared_size: layout.shared_size,
        global_registers: module_register_slots(&layout.module_regs),
        variables,
        files,
        reconvergence,
        hash,
    };
    Ok((program, diags))
}

/// The `.const` variable holding the value a call to the body-less function `function` returns
/// (a name no PTX identifier can spell: identifiers have no `.`).
pub fn extern_slot_name(function: &str) -> String {
    format!("{function}{EXTERN_SLOT_SUFFIX}")
}

/// The suffix of [`extern_slot_name`]: the launch finds the slots by it.
pub const EXTERN_SLOT_SUFFIX: &str = ".extern";

/// A body-less function's result slot.
pub(crate) struct ExternSlot<'a> {
    pub name: &'a str,
    pub address: u64,
    /// The type of its (first) return parameter; `.b32` when it returns nothing.
    pub ty: ScalarType,
}

/// One 8-byte slot per function declared without a body, in module order, after `const_size`.
fn extern_slots<'a>(
    module: &'a Module,
    functions: &FastMap<&'a str, FuncId>,
    const_size: u64,
) -> Vec<ExternSlot<'a>> {
    let mut out: Vec<ExternSlot<'a>> = Vec::new();
    let base = const_size.next_multiple_of(8);
    for item in &module.items {
        if let Item::Function(f) = item {
            let name: &str = &f.name.name;
            if f.body.is_some()
                || functions.contains_key(name)
                || out.iter().any(|s| s.name == name)
            {
                continue;
            }
            let ty = f
                .return_params
                .first()
                .map(|p| p.ty.scalar)
                .unwrap_or(ScalarType::B32);
            out.push(ExternSlot {
                name,
                address: base + 8 * out.len() as u64,
                ty,
            });
        }
    }
    out
}

/// The register of a guard `@p` / `@!p`; it must be a `.pred` register.
fn guard_reg(
    fcx: &FnCx<'_, '_>,
    scope: u32,
    at: u32,
    g: &ptx_parser::Guard,
) -> Result<GuardPred, Diagnostic> {
    match fcx.env.lookup(scope, &g.predicate.name, at) {
        Some(Local::Reg {
            id,
            ty: ScalarType::Pred,
            vector: 1,
        }) => Ok(GuardPred {
            reg: id,
            negated: g.negated,
        }),
        Some(_) => Err(Diagnostic::error(
            g.predicate.span,
            format!("guard `{}` is not a predicate register", g.predicate.name),
        )
        .with_label("not `.pred`")
        .with_help("guard with a register declared `.reg .pred`, set by `setp`")),
        None => Err(Diagnostic::error(
            g.predicate.span,
            format!("undefined predicate `{}`", g.predicate.name),
        )
        .with_label("not declared in this scope")
        .with_help(format!(
            "declare it with `.reg .pred {};`",
            g.predicate.name
        ))),
    }
}

/// A fast, non-cryptographic hasher for the loader's name tables (FxHash's mixing step). Name
/// tables are only looked up, never iterated, so their order cannot reach any output.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            // Byte by byte: a copy of a variable-length tail would be a `memcpy` call, which
            // costs more than the few bytes of a short name.
            let w = rest.iter().rev().fold(0u64, |w, &b| (w << 8) | b as u64);
            self.add(w);
        }
    }
    #[inline]
    fn write_u8(&mut self, b: u8) {
        self.add(b as u64);
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.add(v as u64);
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }
    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// String equality for the loader's short names and modifiers (`%r`, `ftz`): a short inline
/// loop instead of a `memcmp` call; strings over 16 bytes fall back to `==`.
#[inline]
pub(crate) fn short_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    if a.len() > 16 {
        return a == b;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x ^ y;
    }
    diff == 0
}

/// A hash map for name lookups (see [`FxHasher`]).
pub(crate) type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;

/// One entry per register slot the module-scope `.reg` declarations take, in id order: a vector
/// register takes one slot per element (as [`scope`] allocates them in every function).
fn module_register_slots(regs: &[&ptx_parser::VariableDecl]) -> Vec<crate::program::RegisterInfo> {
    let mut out = Vec::new();
    for v in regs {
        let vector = v.ty.vector.max(1) as usize;
        for c in ["x", "y", "z", "w", "4", "5", "6", "7"].iter().take(vector) {
            let name = if vector == 1 {
                v.name.name.to_string()
            } else {
                format!("{}.{c}", v.name.name)
            };
            out.push(crate::program::RegisterInfo {
                name: name.as_str().into(),
                ty: v.ty.scalar,
            });
        }
    }
    out
}
