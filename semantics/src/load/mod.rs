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
//! * [`lower`]: each body's instructions in order, the implicit `ret`/`exit` at the end of a
//!   body and `ret` to `exit` in kernels (step 5), label and branch-target resolution (`load`
//!   step 3), the source map ([`source_text`] gives the lines and the program hash);
//! * here: the pipeline, indirect-call candidates and the result slots of body-less functions;
//! * [`cfg`]: basic blocks and reconvergence points (the thesis's step 6 for ordinary PTX);
//! * [`shared_writes`]: where a thread may write shared memory before its next full-block
//!   barrier (the cached memory's shared loads at issue);
//! * [`liveness`]: the registers live at each address (computed on first use: the canonical
//!   state leaves out dead registers);
//! * [`may_write`]: per address, the global memory a thread there may still write, by
//!   provenance (computed on first use: the search asks whether a load reads only words no
//!   other warp will write).
//! * [`address_forms`]: per global access of a kernel, its address as an affine function of
//!   `%tid` and `%ctaid` under a launch (the machine computes it on first use: the search asks
//!   whether an access touches only words private to its warp).

pub mod address_forms;
mod cfg;
pub(crate) mod consts;
mod decode;
pub(crate) mod layout;
pub mod liveness;
mod lower;
pub mod may_write;
pub(crate) mod scope;
pub(crate) mod shared_writes;
mod source_text;
pub(crate) mod types;
pub(crate) mod unsupported;

pub use decode::SUPPORTED_OPCODES;
pub use source_text::{LineIndex, fnv1a};
pub use unsupported::Gap;

use crate::program::{CallTarget, FuncId, GuardPred, Op, Program};
use decode::{FnCx, ModuleCtx};
use ptx_parser::{Diagnostic, Item, Module, ScalarType, Severity};
use scope::Local;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Lowers and validates `module`. Warnings (unused names, ignored directives) come back with the
/// program; any error means no program.
pub fn load(module: &Module, source: &str) -> Result<(Program, Vec<Diagnostic>), Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let (functions, signatures, bodies) = collect_functions(module, &mut diags);
    let mut layout = layout::layout(module, &mut diags);
    layout::initialize(&mut layout, &functions, &mut diags);
    let extern_slots = extern_slots(module, &functions, layout.const_size);

    let (hash, lines) = source_text::hash_and_index_lines(source);
    let mctx = ModuleCtx {
        layout: &layout,
        functions: &functions,
        signatures: &signatures,
        module,
        extern_slots: &extern_slots,
    };
    let lower::Lowered {
        mut instructions,
        source_info,
        functions: mut out_functions,
        label_pcs,
        address_taken,
        extern_called,
        reads_block_identity,
    } = lower::lower_bodies(&bodies, &layout, &mctx, &lines, &mut diags);

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
    for (f, labels) in out_functions.iter_mut().zip(&label_pcs) {
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
    let mut variables = layout.variables;
    let const_size = extern_slot_variables(
        &extern_called,
        &extern_slots,
        layout.const_size,
        &mut variables,
    );
    let shared_writes = shared_writes::summarize(&instructions, &out_functions);
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
        shared_writes,
        reads_block_identity,
        liveness: Default::default(),
        may_write: Default::default(),
        hash,
    };
    Ok((program, diags))
}

/// The functions of a module with bodies and their definitions.
type Bodies<'a> = Vec<(&'a ptx_parser::Function, &'a ptx_parser::Block)>;

/// The module's functions: those with bodies get ids in module order (a second definition is
/// an error); every declaration gives a signature.
fn collect_functions<'a>(
    module: &'a Module,
    diags: &mut Vec<Diagnostic>,
) -> (
    FastMap<&'a str, FuncId>,
    FastMap<&'a str, &'a ptx_parser::Function>,
    Bodies<'a>,
) {
    let mut functions: FastMap<&str, FuncId> = FastMap::default();
    let mut signatures: FastMap<&str, &ptx_parser::Function> = FastMap::default();
    let mut bodies: Bodies<'a> = Vec::new();
    for item in &module.items {
        if let Item::Function(f) = item {
            let name: &str = &f.name.name;
            match &f.body {
                Some(body) => {
                    if let Some(&FuncId(earlier)) = functions.get(name) {
                        let first = bodies
                            .get(earlier as usize)
                            .map(|(g, _)| g.name.span)
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
    (functions, signatures, bodies)
}

/// The result slot of every body-less function the program calls (`.const`, after the
/// module's own constants): the launch gives its value (`extern_calls`). Returns the `.const`
/// size with them.
fn extern_slot_variables(
    extern_called: &BTreeSet<usize>,
    extern_slots: &[ExternSlot<'_>],
    const_size: u64,
    variables: &mut Vec<crate::program::Variable>,
) -> u64 {
    let mut const_size = const_size;
    for &k in extern_called {
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
    const_size
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
