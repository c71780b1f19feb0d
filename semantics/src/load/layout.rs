//! Layout of module variables (thesis 5.1.3, `load` steps 4 and 5; PTX ISA 5.1 and 5.4).
//!
//! Every `.global` and `.const` variable, and every `.shared` one (module or function scope: a
//! function-scope `.shared` is static and per block like a module one), gets an aligned address
//! in its state space, in declaration order, starting at 0. `.extern .shared x[]` (dynamic shared
//! memory) is placed after all static shared variables; all dynamic ones share that address.
//! Initializers are folded to little-endian bytes: scalars, arrays, nested lists (flattened in
//! order, the rest zero), and symbols (a variable's address in its own space, a function's
//! address, `generic(x)`: x's address plus a relocation the machine applies with its generic
//! mapping).

use super::consts::{self, Value};
use super::scope::{align_up, size_align};
use super::types;
use super::unsupported;
use crate::program::GLOBAL_VARIABLES_BASE;
use crate::program::{FuncId, Program, Space, Variable};
use ptx_parser::{
    Block, ConstExpr, Diagnostic, Ident, Initializer, Item, Linkage, Module, ScalarType, Span,
    StateSpace, Statement, VariableDecl,
};

/// Identifies a function-scope static declaration (its span).
pub(crate) type StaticKey = (u32, u32);

pub(crate) fn static_key(v: &VariableDecl) -> StaticKey {
    (v.span.start, v.span.end)
}

/// The module's variables after layout.
#[derive(Debug, Default)]
pub(crate) struct ModuleLayout<'a> {
    pub variables: Vec<Variable>,
    /// The declarations, parallel to `variables`.
    pub decls: Vec<&'a VariableDecl>,
    /// Module-scope names.
    pub names: crate::load::FastMap<&'a str, usize>,
    /// Function-scope statics.
    pub statics: crate::load::FastMap<StaticKey, usize>,
    pub global_size: u64,
    pub const_size: u64,
    pub shared_size: u64,
    /// Module-scope `.reg` declarations (the thesis's `%stackBase`, Listing 5.2).
    pub module_regs: Vec<&'a VariableDecl>,
}

fn space_of(v: &VariableDecl, diags: &mut Vec<Diagnostic>) -> Option<Space> {
    Some(match v.space {
        StateSpace::Global => Space::Global,
        StateSpace::Const => Space::Const,
        // `.shared::cluster` would need distributed shared memory: cudasem has one CTA per cluster,
        // where the two coincide (PTX ISA 5.1.5).
        StateSpace::Shared | StateSpace::SharedCta | StateSpace::SharedCluster => Space::Shared,
        StateSpace::Local => {
            diags.push(unsupported::diag(
                v.span,
                ".local (module scope)",
                unsupported::Gap::ModuleLocal,
            ));
            return None;
        }
        StateSpace::Tex => {
            diags.push(unsupported::diag(v.span, ".tex", unsupported::Gap::Texture));
            return None;
        }
        StateSpace::Sreg | StateSpace::Param | StateSpace::Reg => {
            diags.push(
                Diagnostic::error(
                    v.span,
                    format!(
                        "`{}` variables cannot be declared at module scope",
                        v.space.directive()
                    ),
                )
                .with_label("module-scope declaration")
                .with_help("declare registers and parameters inside a function"),
            );
            return None;
        }
    })
}

/// Counts the scalar leaves of an initializer (for arrays sized by their initializer).
fn leaves(init: &Initializer, depth: u32) -> u64 {
    match init {
        Initializer::Expr(_) => 1,
        Initializer::List(items, _) if depth < 64 => {
            items.iter().map(|i| leaves(i, depth + 1)).sum()
        }
        Initializer::List(..) | Initializer::Field { .. } => 0,
    }
}

fn collect_leaves<'a>(
    init: &'a Initializer,
    out: &mut Vec<&'a ConstExpr>,
    depth: u32,
    diags: &mut Vec<Diagnostic>,
) {
    match init {
        Initializer::Expr(e) => out.push(e),
        // Only texture and sampler variables (rejected before layout) have named fields.
        Initializer::Field { span, .. } => diags.push(
            Diagnostic::error(
                *span,
                "a named field belongs in a texture or sampler initializer",
            )
            .with_label("here")
            .with_help("initialise data variables with values: `= {1, 2, 3}`"),
        ),
        Initializer::List(items, span) => {
            if depth >= 64 {
                diags.push(
                    Diagnostic::error(*span, "initializer nested too deeply")
                        .with_label("here")
                        .with_help("use at most 64 levels of `{ }` in an initializer"),
                );
                return;
            }
            for i in items {
                collect_leaves(i, out, depth + 1, diags);
            }
        }
    }
}

/// Lays out all module variables and function-scope statics (addresses and sizes).
pub(crate) fn layout<'a>(module: &'a Module, diags: &mut Vec<Diagnostic>) -> ModuleLayout<'a> {
    let mut l = ModuleLayout::default();
    let mut dynamic = Vec::new();
    for item in &module.items {
        match item {
            Item::Variable(v) if v.space == StateSpace::Reg => l.module_regs.push(v),
            Item::Variable(v) => {
                if let Some(&earlier) = l.names.get(&*v.name.name) {
                    let first = l.decls.get(earlier).map(|d| d.span).unwrap_or_default();
                    // `.extern` declarations may precede the definition.
                    if v.linkage.contains(&Linkage::Extern)
                        || l.decls
                            .get(earlier)
                            .is_some_and(|d| d.linkage.contains(&Linkage::Extern))
                    {
                        continue;
                    }
                    diags.push(
                        Diagnostic::error(
                            v.name.span,
                            format!("module variable `{}` is declared twice", v.name.name),
                        )
                        .with_label("second declaration")
                        .with_secondary(first, "first declared here")
                        .with_help("rename one of the variables"),
                    );
                    continue;
                }
                if let Some(i) = add(&mut l, v, &mut dynamic, diags) {
                    l.names.insert(&v.name.name, i);
                }
            }
            Item::Function(f) => {
                if let Some(b) = &f.body {
                    statics(&mut l, b, &mut dynamic, diags, 0);
                }
            }
            _ => {}
        }
    }
    // Dynamic shared memory starts after the static shared variables, at the strictest alignment
    // any dynamic declaration asks for.
    let align = dynamic
        .iter()
        .filter_map(|&i| l.variables.get(i).map(|v: &Variable| v.align))
        .max()
        .unwrap_or(1);
    let base = align_up(l.shared_size, align);
    for i in dynamic {
        if let Some(v) = l.variables.get_mut(i) {
            v.address = base;
        }
    }
    l
}

fn statics<'a>(
    l: &mut ModuleLayout<'a>,
    b: &'a Block,
    dynamic: &mut Vec<usize>,
    diags: &mut Vec<Diagnostic>,
    depth: u32,
) {
    if depth > 200 {
        return; // the scope walk reports the nesting
    }
    for s in &b.statements {
        match s {
            Statement::Variable(v)
                if !matches!(
                    v.space,
                    StateSpace::Reg | StateSpace::Local | StateSpace::Param | StateSpace::Sreg
                ) =>
            {
                if let Some(i) = add(l, v, dynamic, diags) {
                    l.statics.insert(static_key(v), i);
                }
            }
            Statement::Block(inner) => statics(l, inner, dynamic, diags, depth + 1),
            _ => {}
        }
    }
}

fn add<'a>(
    l: &mut ModuleLayout<'a>,
    v: &'a VariableDecl,
    dynamic: &mut Vec<usize>,
    diags: &mut Vec<Diagnostic>,
) -> Option<usize> {
    let space = space_of(v, diags)?;
    if matches!(
        v.ty.scalar,
        ScalarType::TexRef | ScalarType::SamplerRef | ScalarType::SurfRef
    ) {
        diags.push(unsupported::diag(
            v.span,
            v.ty.scalar.directive(),
            unsupported::Gap::Texture,
        ));
        return None;
    }
    let is_dynamic = space == Space::Shared
        && v.linkage.contains(&Linkage::Extern)
        && v.array.first() == Some(&None);
    let unsized_elems = match &v.init {
        Some(init) => {
            let known: u64 = v
                .array
                .iter()
                .skip(1)
                .map(|d| d.unwrap_or(1))
                .product::<u64>()
                .max(1);
            leaves(init, 0).div_ceil(known.saturating_mul(v.ty.vector.max(1) as u64))
        }
        None => 0,
    };
    let (size, align) = size_align(v.ty.scalar, v.ty.vector, &v.array, v.align, unsized_elems);
    if size > 1 << 40 {
        diags.push(
            Diagnostic::error(
                v.span,
                format!("variable `{}` is too large ({size} bytes)", v.name.name),
            )
            .with_label("too large")
            .with_help("declare a smaller array"),
        );
        return None;
    }
    let address = if is_dynamic {
        0
    } else {
        let end = match space {
            Space::Global => &mut l.global_size,
            Space::Const => &mut l.const_size,
            _ => &mut l.shared_size,
        };
        // `.global` addresses are generic addresses too: keep page 0 free so that a null pointer
        // never lands on a module variable. The alignment applies to the address itself, so it
        // is taken after the base is added (an `.align` above the base's 64 KiB holds too).
        let base = if space == Space::Global {
            GLOBAL_VARIABLES_BASE
        } else {
            0
        };
        let a = align_up(base + *end, align);
        *end = a - base + size;
        a
    };
    if is_dynamic && v.init.is_some() {
        diags.push(
            Diagnostic::error(v.span, "dynamic shared memory cannot be initialized")
                .with_label("initializer on `.extern .shared`")
                .with_help("remove the initializer"),
        );
    }
    if space == Space::Shared && v.init.is_some() && !is_dynamic {
        diags.push(
            Diagnostic::error(v.span, "`.shared` variables cannot be initialized")
                .with_label("initializer on `.shared`")
                .with_help(
                    "remove the initializer and store the values at run time (PTX ISA 5.1.5)",
                ),
        );
    }
    let i = l.variables.len();
    l.variables.push(Variable {
        name: v.name.name.as_str().to_owned(),
        space,
        address,
        size: if is_dynamic { 0 } else { size },
        align,
        ty: v.ty.scalar,
        init: Vec::new(),
        dynamic: is_dynamic,
        generic_relocations: Vec::new(),
    });
    l.decls.push(v);
    if is_dynamic {
        dynamic.push(i);
    }
    Some(i)
}

/// Folds every initializer into bytes. `functions` resolves function names (their addresses).
pub(crate) fn initialize(
    l: &mut ModuleLayout<'_>,
    functions: &crate::load::FastMap<&str, FuncId>,
    diags: &mut Vec<Diagnostic>,
) {
    for i in 0..l.variables.len() {
        let (Some(v), Some(decl)) = (l.variables.get(i), l.decls.get(i)) else {
            continue;
        };
        let Some(init) = &decl.init else { continue };
        if v.space == Space::Shared {
            continue; // reported by `add`
        }
        let ty = v.ty;
        let elem = types::size(ty) as u64;
        let capacity = v.size;
        let mut exprs = Vec::new();
        collect_leaves(init, &mut exprs, 0, diags);
        if (exprs.len() as u64).saturating_mul(elem) > capacity {
            diags.push(
                Diagnostic::error(
                    init_span(init),
                    format!(
                        "initializer has {} elements but `{}` holds {}",
                        exprs.len(),
                        decl.name.name,
                        capacity / elem.max(1)
                    ),
                )
                .with_label("too many elements")
                .with_help("remove elements or enlarge the array"),
            );
            continue;
        }
        let mut bytes = Vec::with_capacity(capacity as usize);
        let mut relocations = Vec::new();
        let names = &l.names;
        let variables = &l.variables;
        for e in exprs {
            let mut generic_target = None;
            let mut symbol = |id: &Ident, generic: bool| -> Result<u64, Diagnostic> {
                if let Some(&j) = names.get(&*id.name) {
                    let target = &variables[j];
                    if generic {
                        generic_target = Some(target.space);
                    }
                    return Ok(target.address);
                }
                if let Some(&f) = functions.get(&*id.name) {
                    return Ok(Program::function_address(f));
                }
                Err(Diagnostic::error(
                    id.span,
                    format!("undefined symbol `{}` in initializer", id.name),
                )
                .with_label("not a module variable or function")
                .with_help("declare the variable or function at module scope, or fix the name"))
            };
            match consts::fold(e, &mut symbol)
                .and_then(|value| initializer_bits(value, ty, e.span()))
            {
                Ok(bits) => {
                    if let Some(space) = generic_target {
                        relocations.push((bytes.len() as u64, space));
                    }
                    bytes.extend_from_slice(&bits.to_le_bytes()[..elem.min(8) as usize]);
                }
                Err(d) => {
                    diags.push(d);
                    bytes.extend(std::iter::repeat_n(0, elem.min(8) as usize));
                }
            }
        }
        bytes.resize(capacity as usize, 0);
        if let Some(v) = l.variables.get_mut(i) {
            v.init = bytes;
            v.generic_relocations = relocations;
        }
    }
}

fn init_span(init: &Initializer) -> Span {
    match init {
        Initializer::Expr(e) => e.span(),
        Initializer::List(_, s) | Initializer::Field { span: s, .. } => *s,
    }
}

/// An initializer element as the bits of `ty`: integers truncate (negative ones sign-extend
/// first), integers convert to float types by value (as C initializers do), float literals round
/// to `.f32` where needed; a float for an integer variable is an error.
fn initializer_bits(value: Value, ty: ScalarType, span: Span) -> Result<u64, Diagnostic> {
    match value {
        Value::Int { bits, unsigned } if types::is_float(ty) => {
            let f = if unsigned {
                bits as f64
            } else {
                bits as i64 as f64
            };
            Ok(float_bits(f, ty))
        }
        Value::Int { bits, .. } => Ok(truncate(bits, ty)),
        Value::Float { value, .. } if types::is_float(ty) => Ok(float_bits(value, ty)),
        Value::Float { value, f32_literal } if types::kind(ty) == types::Kind::Bits => {
            Ok(if f32_literal {
                (value as f32).to_bits() as u64
            } else {
                value.to_bits()
            } & mask(ty))
        }
        Value::Float { .. } => Err(Diagnostic::error(
            span,
            format!(
                "floating-point initializer for a `{}` variable",
                ty.directive()
            ),
        )
        .with_label("floating-point value")
        .with_help("write an integer value, or declare the variable with a floating-point type")),
    }
}

pub(crate) fn float_bits(f: f64, ty: ScalarType) -> u64 {
    match ty {
        ScalarType::F64 => f.to_bits(),
        ScalarType::F16 => half::f16::from_f64(f).to_bits() as u64,
        ScalarType::Bf16 => half::bf16::from_f64(f).to_bits() as u64,
        _ => (f as f32).to_bits() as u64,
    }
}

pub(crate) fn mask(ty: ScalarType) -> u64 {
    match types::size(ty) {
        1 => 0xFF,
        2 => 0xFFFF,
        4 => 0xFFFF_FFFF,
        _ => u64::MAX,
    }
}

pub(crate) fn truncate(bits: u64, ty: ScalarType) -> u64 {
    if ty == ScalarType::Pred {
        return u64::from(bits != 0);
    }
    bits & mask(ty)
}
