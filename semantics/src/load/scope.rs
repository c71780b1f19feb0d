//! Names inside a function: the `{}` scope tree, register allocation, frame layout and labels
//! (thesis 5.1.3 step 3 and step 7, Listing 5.4; PTX ISA 5.1.x and 11.1).
//!
//! PTX scoping is static and block-wide: a declaration anywhere in a block is visible in the whole
//! block, including before it, and hides outer declarations of the same name; labels scope the
//! same way (the inner `BLOCK` of Listing 5.4 wins). The walk here flattens the body into its
//! instructions, each tagged with its scope, and records every declaration and label per scope;
//! lookups then walk the scope chain. Registers get dense per-function ids (`%r<5>` is `%r0..%r4`,
//! a `.v4` register takes four consecutive ids); a shadowed name is shown as `r#1` by the debugger.
//! Function-scope `.local`/`.param` variables and a `.func`'s formal `.param`s get aligned offsets
//! in the function's frame: return parameters first (offset 0), then parameters, then the body's
//! variables in declaration order (thesis 5.1.3 step 3, Listing 5.3).

use super::layout::{self, StaticKey};
use super::types;
use crate::program::{FrameVariable, ParamInfo, ParamLoc, RegId, RegisterInfo, Space};
use ptx_parser::{
    Block, CallPrototype, Diagnostic, Function, Instruction, Name, Param, ScalarType, Span,
    StateSpace, Statement, TargetList, VariableDecl,
};

/// Deepest `{}` nesting followed (no unbounded recursion on hostile input).
const MAX_BLOCK_DEPTH: u32 = 200;

/// What a name declared inside a function denotes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Local {
    /// A register (first id) of `vector` consecutive ids.
    Reg {
        id: RegId,
        ty: ScalarType,
        vector: u8,
    },
    /// A frame-resident variable (`.local`, `.param` in a body, a `.func`'s `.param` parameter).
    Frame {
        offset: u32,
        size: u32,
        space: Space,
        ty: ScalarType,
    },
    /// A kernel parameter at `offset` in the launch's parameter buffer.
    KernelParam {
        offset: u32,
        size: u32,
        ty: ScalarType,
    },
    /// A function-scope `.shared`/`.global`/`.const` variable: index into `Program::variables`.
    Static(usize),
}

/// `%r<5>`: names `prefix0 .. prefix{count-1}`.
#[derive(Debug)]
struct RangeDecl<'a> {
    prefix: &'a str,
    position: u32,
    base: u32,
    count: u32,
    ty: ScalarType,
    vector: u8,
}

/// One declaration of a name (not of a range) in the scope `scope`: the declaration is visible
/// to the instructions from flat index `position` on (declare before use; Listing 5.4, line 9
/// still sees the outer `r`).
#[derive(Debug, Clone, Copy)]
struct Decl {
    scope: u32,
    local: Local,
    span: Span,
    position: u32,
}

/// The declarations of one name, at most one per scope; nearly always exactly one.
type Decls = smallvec::SmallVec<[Decl; 1]>;

#[derive(Debug, Default)]
pub(crate) struct Scope<'a> {
    parent: Option<u32>,
    ranges: Vec<RangeDecl<'a>>,
    labels: crate::load::FastMap<&'a str, u32>,
    protos: crate::load::FastMap<&'a str, &'a CallPrototype>,
    /// `.branchtargets` and `.calltargets` lists by label.
    targets: crate::load::FastMap<&'a str, (&'a TargetList, bool)>,
}

/// An instruction of the flattened body.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FlatInstr<'a> {
    pub ins: &'a Instruction,
    pub scope: u32,
    /// The `.loc` in force.
    pub loc: Option<(u32, u32, u32)>,
}

/// A label: it names the instruction `stmt` of the flattened body (or the end when `stmt` is the
/// number of instructions).
#[derive(Debug, Clone)]
pub(crate) struct LabelInfo {
    pub name: Name,
    pub stmt: u32,
    pub span: Span,
}

/// A function body after the scope walk.
#[derive(Debug, Default)]
pub(crate) struct FnEnv<'a> {
    pub scopes: Vec<Scope<'a>>,
    pub instrs: Vec<FlatInstr<'a>>,
    pub labels: Vec<LabelInfo>,
    pub registers: Vec<RegisterInfo>,
    pub frame: Vec<FrameVariable>,
    pub frame_size: u32,
    pub params: Vec<ParamInfo>,
    pub return_params: Vec<ParamInfo>,
    pub param_size: u32,
    /// Names declared in nested `{ }` blocks, or in the body over a parameter: the only ones that
    /// can shadow (and so need `#k` display names); `None` in the list means "check everything".
    shadow_candidates: Vec<Option<&'a str>>,
    /// Every declared name of the function (all scopes in one table, so that a lookup hashes
    /// the name once rather than once per enclosing scope).
    names: crate::load::FastMap<&'a str, Decls>,
}

impl<'a> FnEnv<'a> {
    /// Looks `name` up from `scope` outwards, as seen by the instruction at flat index `at`.
    pub(crate) fn lookup(&self, scope: u32, name: &str, at: u32) -> Option<Local> {
        // `name` split as a range member (`%r12` is `%r` and 12), once for the whole chain.
        let mut member = None;
        let decls = self.names.get(name);
        self.innermost(scope, |i, sc| {
            if let Some(d) = decls.and_then(|ds| ds.iter().find(|d| d.scope == i))
                && d.position <= at
            {
                return Some(d.local);
            }
            if !sc.ranges.is_empty()
                && let Some((prefix, k)) = *member.get_or_insert_with(|| range_member(name))
            {
                return lookup_range(&sc.ranges, prefix, k, at);
            }
            None
        })
    }

    /// The first answer of `find` from `scope` outwards through the enclosing scopes: a name
    /// declared in an inner scope hides the same name in the outer ones.
    fn innermost<T>(
        &self,
        scope: u32,
        mut find: impl FnMut(u32, &Scope<'a>) -> Option<T>,
    ) -> Option<T> {
        let mut s = Some(scope);
        while let Some(i) = s {
            let sc = self.scopes.get(i as usize)?;
            if let Some(found) = find(i, sc) {
                return Some(found);
            }
            s = sc.parent;
        }
        None
    }

    /// The label `name` as seen from `scope` (inner labels hide outer ones): its index.
    pub(crate) fn label(&self, scope: u32, name: &str) -> Option<u32> {
        self.innermost(scope, |_, sc| sc.labels.get(name).copied())
    }

    /// The `.branchtargets` (`false`) or `.calltargets` (`true`) list named `name`.
    pub(crate) fn target_list(&self, scope: u32, name: &str) -> Option<(&'a TargetList, bool)> {
        self.innermost(scope, |_, sc| sc.targets.get(name).copied())
    }

    pub(crate) fn prototype(&self, scope: u32, name: &str) -> Option<&'a CallPrototype> {
        self.innermost(scope, |_, sc| sc.protos.get(name).copied())
    }

    /// Allocates `vector` consecutive register ids named `name` (`name.x`... for vectors).
    pub(crate) fn new_register(
        &mut self,
        name: &str,
        ty: ScalarType,
        vector: u8,
        span: Span,
    ) -> Result<RegId, Diagnostic> {
        let first = self.registers.len();
        if first + vector as usize > u16::MAX as usize {
            return Err(
                Diagnostic::error(span, "too many registers in one function")
                    .with_label("register limit exceeded here")
                    .with_help(format!(
                        "cudasem allows at most {} registers per function; split the function",
                        u16::MAX
                    )),
            );
        }
        if vector <= 1 {
            self.registers.push(RegisterInfo {
                name: Name::from(name),
                ty,
            });
        } else {
            for c in ["x", "y", "z", "w", "4", "5", "6", "7"]
                .iter()
                .take(vector as usize)
            {
                self.registers.push(RegisterInfo {
                    name: Name::from(format!("{name}.{c}")),
                    ty,
                });
            }
        }
        Ok(RegId(first as u16))
    }

    /// Shadowed names are shown as `name#1`, `name#2`... (the first declaration keeps `name`), so
    /// that the debugger can tell Listing 5.4's two `r`s apart.
    pub(crate) fn rename_shadowed(&mut self) {
        if self.shadow_candidates.is_empty() {
            return;
        }
        let mut renames = Vec::new();
        if self.shadow_candidates.contains(&None) {
            let mut seen: crate::load::FastMap<&str, u32> = crate::load::FastMap::default();
            for (i, r) in self.registers.iter().enumerate() {
                let n = seen.entry(r.name.as_str()).or_insert(0);
                if *n > 0 {
                    renames.push((i, shadowed_name(&r.name, *n)));
                }
                *n += 1;
            }
        } else {
            let mut names: Vec<&str> = self.shadow_candidates.iter().flatten().copied().collect();
            names.sort_unstable();
            names.dedup();
            for name in names {
                let mut n = 0;
                for (i, r) in self.registers.iter().enumerate() {
                    // Vector registers show as `v.x`: compare the part before the component
                    // (`name` is an identifier, so it holds no `.` itself).
                    let is_name = r
                        .name
                        .strip_prefix(name)
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'));
                    if is_name {
                        if n > 0 {
                            renames.push((i, shadowed_name(&r.name, n)));
                        }
                        n += 1;
                    }
                }
            }
        }
        for (i, name) in renames {
            if let Some(r) = self.registers.get_mut(i) {
                r.name = name;
            }
        }
    }
}

/// `name#n`: the display name of the `n`th shadowing declaration of `name`.
fn shadowed_name(name: &str, n: u32) -> Name {
    Name::from(format!("{name}#{n}"))
}

/// Adds one to the decimal number that `s` ends with from byte `start` on (`%r19` -> `%r20`,
/// `%r99` -> `%r100`).
fn increment_decimal(s: &mut String, start: usize) {
    let nines = s
        .bytes()
        .skip(start)
        .rev()
        .take_while(|&b| b == b'9')
        .count();
    let keep = s.len() - nines;
    let last = if keep > start {
        s.as_bytes().get(keep - 1).copied()
    } else {
        None
    };
    match last {
        // `..d99` -> `..(d+1)00`
        Some(d) => {
            s.truncate(keep - 1);
            s.push(char::from(d + 1));
        }
        // `99` -> `100`
        None => {
            s.truncate(start);
            s.push('1');
        }
    }
    s.extend(std::iter::repeat_n('0', nines));
}

/// `%r12` as a possible member of a range `%r<N>`: the prefix and the number, or `None` when the
/// name does not end in a number (`%r01` is not `%r1`: a range's names have no leading zeros).
fn range_member(name: &str) -> Option<(&str, u32)> {
    let digits = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (prefix, number) = name.split_at(digits);
    if number.is_empty() || (number.len() > 1 && number.starts_with('0')) {
        return None;
    }
    // `u32` accumulation by hand (cheaper than `str::parse` on this hot path); overflow is `None`
    // as with `parse`.
    let mut k: u32 = 0;
    for d in number.bytes() {
        k = k.checked_mul(10)?.checked_add((d - b'0') as u32)?;
    }
    Some((prefix, k))
}

/// The register `prefix` `k` of the latest range declared before `at`, if any.
fn lookup_range(ranges: &[RangeDecl<'_>], prefix: &str, k: u32, at: u32) -> Option<Local> {
    ranges
        .iter()
        .rev()
        .find(|r| crate::load::short_eq(r.prefix, prefix) && k < r.count && r.position <= at)
        .map(|r| Local::Reg {
            id: RegId((r.base + k * r.vector as u32) as u16),
            ty: r.ty,
            vector: r.vector,
        })
}

/// Size and alignment of a declared variable or parameter: element size times vector width times
/// the array dimensions (an unsized dimension counts as `unsized_elems`).
pub(crate) fn size_align(
    ty: ScalarType,
    vector: u8,
    array: &[Option<u64>],
    align: Option<u32>,
    unsized_elems: u64,
) -> (u64, u32) {
    let elem = types::size(ty) as u64 * vector.max(1) as u64;
    let count = array.iter().fold(1u64, |acc, d| {
        acc.saturating_mul(d.unwrap_or(unsized_elems))
    });
    let natural = elem.clamp(1, 16) as u32;
    (
        elem.saturating_mul(count),
        align.filter(|a| a.is_power_of_two()).unwrap_or(natural),
    )
}

pub(crate) fn align_up(x: u64, align: u32) -> u64 {
    let a = align.max(1) as u64;
    x.div_ceil(a).saturating_mul(a)
}

/// Walks `f`'s parameters and body. `statics` maps function-scope static declarations to their
/// module variable; diagnostics go to `diags`.
pub(crate) fn build<'a>(
    f: &'a Function,
    body: &'a Block,
    statics: &crate::load::FastMap<StaticKey, usize>,
    module_regs: &[&'a VariableDecl],
    diags: &mut Vec<Diagnostic>,
) -> FnEnv<'a> {
    let mut env = FnEnv::default();
    // Scope 0 holds the module-scope registers (ids 0..n, the same in every function) and the
    // parameters; the body is scope 1, its child.
    env.scopes.push(Scope::default());
    module_registers(&mut env, module_regs);
    let frame_end = if f.kind == ptx_parser::FunctionKind::Entry {
        kernel_params(&mut env, f, diags);
        0
    } else {
        func_params(&mut env, f, diags)
    };
    let mut walk = Walk {
        env,
        frame_end,
        statics,
        loc: None,
        diags,
    };
    // Most statements of a body are instructions: size the flat list once.
    walk.env.instrs.reserve(body.statements.len());
    walk.block(body, 0, 0);
    let Walk {
        mut env, frame_end, ..
    } = walk;
    env.frame_size = u32::try_from(align_up(frame_end, 8)).unwrap_or(u32::MAX);
    env
}

/// The module-scope registers in scope 0 (a later one of the same name replaces the earlier).
fn module_registers<'a>(env: &mut FnEnv<'a>, module_regs: &[&'a VariableDecl]) {
    for v in module_regs {
        let vector = v.ty.vector.max(1);
        if let Ok(id) = env.new_register(&v.name.name, v.ty.scalar, vector, v.name.span) {
            // A later module register of the same name replaces the earlier one.
            let decl = Decl {
                scope: 0,
                local: Local::Reg {
                    id,
                    ty: v.ty.scalar,
                    vector,
                },
                span: v.name.span,
                position: 0,
            };
            let decls = env.names.entry(&v.name.name).or_default();
            decls.clear();
            decls.push(decl);
        }
    }
}

/// A kernel's parameters: `.param` only, at offsets in the parameter buffer; no return values.
fn kernel_params<'a>(env: &mut FnEnv<'a>, f: &'a Function, diags: &mut Vec<Diagnostic>) {
    let mut offset = 0u64;
    for p in &f.params {
        let (size, align) = param_size_align(p);
        offset = align_up(offset, align);
        let loc = ParamLoc::Frame {
            offset: offset as u32,
            size: size as u32,
        };
        let local = Local::KernelParam {
            offset: offset as u32,
            size: size as u32,
            ty: p.ty.scalar,
        };
        if p.space != StateSpace::Param {
            diags.push(
                Diagnostic::error(
                    p.span,
                    "kernel parameters must be in the `.param` state space",
                )
                .with_label("not `.param`")
                .with_help("declare the parameter as `.param .TYPE name`"),
            );
        }
        declare(
            &mut env.names,
            0,
            &p.name.name,
            local,
            p.name.span,
            0,
            diags,
        );
        env.params.push(ParamInfo {
            name: p.name.name.as_str().to_owned(),
            ty: p.ty.scalar,
            size: size as u32,
            align,
            loc,
        });
        offset += size;
    }
    env.param_size = offset as u32;
    if !f.return_params.is_empty() {
        diags.push(
            Diagnostic::error(f.name.span, "a kernel cannot return values")
                .with_label("`.entry` with return parameters")
                .with_help("remove the return parameter list, or make this a `.func`"),
        );
    }
}

/// A `.func`'s return parameters then parameters: registers, or frame slots; returns the end of
/// the frame they take.
fn func_params<'a>(env: &mut FnEnv<'a>, f: &'a Function, diags: &mut Vec<Diagnostic>) -> u64 {
    let mut frame_end = 0u64;
    for (is_ret, p) in f
        .return_params
        .iter()
        .map(|p| (true, p))
        .chain(f.params.iter().map(|p| (false, p)))
    {
        func_param(env, p, is_ret, &mut frame_end, diags);
    }
    frame_end
}

/// One parameter of a `.func`: a `.reg` parameter is a register, any other a slot of the frame
/// at `frame_end`.
fn func_param<'a>(
    env: &mut FnEnv<'a>,
    p: &'a Param,
    is_ret: bool,
    frame_end: &mut u64,
    diags: &mut Vec<Diagnostic>,
) {
    let (size, align) = param_size_align(p);
    let (local, loc) = if p.space == StateSpace::Reg {
        match env.new_register(&p.name.name, p.ty.scalar, p.ty.vector, p.name.span) {
            Ok(id) => (
                Local::Reg {
                    id,
                    ty: p.ty.scalar,
                    vector: p.ty.vector.max(1),
                },
                ParamLoc::Reg(id),
            ),
            Err(d) => {
                diags.push(d);
                return;
            }
        }
    } else {
        *frame_end = align_up(*frame_end, align);
        let offset = *frame_end as u32;
        *frame_end += size;
        env.frame.push(FrameVariable {
            name: p.name.name.as_str().to_owned(),
            offset,
            size: size as u32,
        });
        // `.local` parameters are the thesis's lowered form (Listing 5.2, step 3).
        let space = if p.space == StateSpace::Local {
            Space::Local
        } else {
            Space::Param
        };
        (
            Local::Frame {
                offset,
                size: size as u32,
                space,
                ty: p.ty.scalar,
            },
            ParamLoc::Frame {
                offset,
                size: size as u32,
            },
        )
    };
    declare(
        &mut env.names,
        0,
        &p.name.name,
        local,
        p.name.span,
        0,
        diags,
    );
    // A `.reg .vN` parameter is passed as its N components, each a register of its own
    // (consecutive ids); the caller passes a `.vN` register or `{a, b, ...}` likewise.
    let parts = match loc {
        ParamLoc::Reg(id) if p.ty.vector > 1 => (0..p.ty.vector as u16)
            .map(|k| {
                (
                    format!("{}.{k}", p.name.name),
                    size as u32 / p.ty.vector as u32,
                    ParamLoc::Reg(RegId(id.0 + k)),
                )
            })
            .collect(),
        _ => vec![(p.name.name.as_str().to_owned(), size as u32, loc)],
    };
    for (name, size, loc) in parts {
        let info = ParamInfo {
            name,
            ty: p.ty.scalar,
            size,
            align,
            loc,
        };
        if is_ret {
            env.return_params.push(info)
        } else {
            env.params.push(info)
        }
    }
}

fn param_size_align(p: &Param) -> (u64, u32) {
    size_align(p.ty.scalar, p.ty.vector, &p.array, p.align, 0)
}

fn declare<'a>(
    names: &mut crate::load::FastMap<&'a str, Decls>,
    scope: u32,
    name: &'a str,
    local: Local,
    span: Span,
    position: u32,
    diags: &mut Vec<Diagnostic>,
) {
    let decls = names.entry(name).or_default();
    if let Some(Decl { span: earlier, .. }) = decls.iter().find(|d| d.scope == scope) {
        diags.push(
            Diagnostic::error(
                span,
                format!("`{name}` is declared twice in the same scope"),
            )
            .with_label("second declaration")
            .with_secondary(*earlier, "first declared here")
            .with_help("rename one of them, or put one in its own `{ }` block"),
        );
        return;
    }
    decls.push(Decl {
        scope,
        local,
        span,
        position,
    });
}

struct Walk<'a, 'd> {
    env: FnEnv<'a>,
    frame_end: u64,
    statics: &'d crate::load::FastMap<StaticKey, usize>,
    loc: Option<(u32, u32, u32)>,
    diags: &'d mut Vec<Diagnostic>,
}

impl<'a> Walk<'a, '_> {
    fn block(&mut self, block: &'a Block, parent: u32, depth: u32) {
        if depth > MAX_BLOCK_DEPTH {
            self.diags.push(
                Diagnostic::error(block.span, "`{ }` blocks nested too deeply")
                    .with_label("here")
                    .with_help(format!("nest blocks at most {MAX_BLOCK_DEPTH} levels deep")),
            );
            return;
        }
        let id = self.env.scopes.len() as u32;
        self.env.scopes.push(Scope {
            parent: Some(parent),
            ..Scope::default()
        });
        for s in &block.statements {
            match s {
                Statement::Instruction(ins) => self.env.instrs.push(FlatInstr {
                    ins,
                    scope: id,
                    loc: self.loc,
                }),
                Statement::Label(l) => {
                    let index = self.env.labels.len() as u32;
                    let scope = &mut self.env.scopes[id as usize];
                    if let Some(&earlier) = scope.labels.get(&*l.name) {
                        let first = self
                            .env
                            .labels
                            .get(earlier as usize)
                            .map(|l| l.span)
                            .unwrap_or_default();
                        self.diags.push(
                            Diagnostic::error(
                                l.span,
                                format!("label `{}` is defined twice in the same scope", l.name),
                            )
                            .with_label("second definition")
                            .with_secondary(first, "first defined here")
                            .with_help(
                                "rename one of the labels (an inner `{ }` block may reuse a name)",
                            ),
                        );
                        continue;
                    }
                    scope.labels.insert(&l.name, index);
                    let stmt = self.env.instrs.len() as u32;
                    self.env.labels.push(LabelInfo {
                        name: l.name.clone(),
                        stmt,
                        span: l.span,
                    });
                }
                Statement::Variable(v) => self.variable(v, id),
                Statement::Block(b) => self.block(b, id, depth + 1),
                Statement::Loc(l) => self.loc = Some((l.file, l.line, l.column)),
                Statement::Pragma(_) => {}
                Statement::CallPrototype(p) => {
                    let scope = &mut self.env.scopes[id as usize];
                    scope.protos.insert(&p.label.name, p);
                }
                Statement::BranchTargets(t) => {
                    self.env.scopes[id as usize]
                        .targets
                        .insert(&t.label.name, (t, false));
                }
                Statement::CallTargets(t) => {
                    self.env.scopes[id as usize]
                        .targets
                        .insert(&t.label.name, (t, true));
                }
            }
        }
    }

    fn variable(&mut self, v: &'a VariableDecl, scope: u32) {
        match v.space {
            StateSpace::Reg => self.register_decl(v, scope),
            StateSpace::Local | StateSpace::Param => self.frame_variable(v, scope),
            _ => {
                if let Some(&index) = self.statics.get(&layout::static_key(v)) {
                    declare(
                        &mut self.env.names,
                        scope,
                        &v.name.name,
                        Local::Static(index),
                        v.name.span,
                        self.env.instrs.len() as u32,
                        self.diags,
                    );
                }
            }
        }
    }

    /// A `.reg` declaration: one register, or `%r<N>`, a range of N.
    fn register_decl(&mut self, v: &'a VariableDecl, scope: u32) {
        let vector = v.ty.vector.max(1);
        if v.ty.scalar == ScalarType::Pred && vector > 1 {
            self.diags.push(
                Diagnostic::error(v.span, "predicate registers cannot be vectors")
                    .with_label("`.pred` vector")
                    .with_help("declare scalar `.pred` registers"),
            );
            return;
        }
        if !v.array.is_empty() {
            self.diags.push(
                Diagnostic::error(v.span, "register arrays are not allowed")
                    .with_label("array of registers")
                    .with_help("use a parameterized name `%r<N>` to declare N registers"),
            );
            return;
        }
        if scope >= 2
            || self
                .env
                .names
                .get(&*v.name.name)
                .is_some_and(|ds| ds.iter().any(|d| d.scope == 0))
        {
            self.env.shadow_candidates.push(if v.range.is_some() {
                None
            } else {
                Some(&v.name.name)
            });
        }
        match v.range {
            None => match self
                .env
                .new_register(&v.name.name, v.ty.scalar, vector, v.name.span)
            {
                Ok(id) => {
                    let l = Local::Reg {
                        id,
                        ty: v.ty.scalar,
                        vector,
                    };
                    declare(
                        &mut self.env.names,
                        scope,
                        &v.name.name,
                        l,
                        v.name.span,
                        self.env.instrs.len() as u32,
                        self.diags,
                    );
                }
                Err(d) => self.diags.push(d),
            },
            Some(count) => self.register_range(v, scope, count),
        }
    }

    /// `%r<count>`: the registers `%r0 .. %r{count-1}`, declared as one range of the scope.
    fn register_range(&mut self, v: &'a VariableDecl, scope: u32, count: u32) {
        let vector = v.ty.vector.max(1);
        let base = self.env.registers.len() as u32;
        if base as u64 + count as u64 * vector as u64 > u16::MAX as u64 {
            self.diags.push(
                Diagnostic::error(v.span, "too many registers in one function")
                    .with_label("register limit exceeded here")
                    .with_help(format!(
                        "cudasem allows at most {} registers per function",
                        u16::MAX
                    )),
            );
            return;
        }
        self.env.registers.reserve(count as usize * vector as usize);
        let prefix: &str = &v.name.name;
        // The names `prefix0`, `prefix1`, ... are spelled in one buffer by counting in decimal,
        // and each copied into a `Name` (inline when short): no allocation and no number
        // formatting per register.
        let mut spelled = String::with_capacity(prefix.len() + 10);
        spelled.push_str(prefix);
        spelled.push('0');
        for k in 0..count {
            if k > 0 {
                increment_decimal(&mut spelled, prefix.len());
            }
            let name = Name::from(spelled.as_str());
            if vector == 1 {
                self.env.registers.push(RegisterInfo {
                    name,
                    ty: v.ty.scalar,
                });
            } else {
                // Cannot fail: the total was checked above.
                let _ = self
                    .env
                    .new_register(&name, v.ty.scalar, vector, v.name.span);
            }
        }
        let position = self.env.instrs.len() as u32;
        self.env.scopes[scope as usize].ranges.push(RangeDecl {
            prefix: &v.name.name,
            position,
            base,
            count,
            ty: v.ty.scalar,
            vector,
        });
    }

    /// A function-scope `.local`/`.param` variable: a slot of the frame (an initializer is
    /// ignored, with a warning).
    fn frame_variable(&mut self, v: &'a VariableDecl, scope: u32) {
        let vector = v.ty.vector.max(1);
        let (size, align) = size_align(v.ty.scalar, vector, &v.array, v.align, 0);
        self.frame_end = align_up(self.frame_end, align);
        let offset = u32::try_from(self.frame_end).unwrap_or(u32::MAX);
        self.frame_end = self.frame_end.saturating_add(size);
        let size = u32::try_from(size).unwrap_or(u32::MAX);
        let space = if v.space == StateSpace::Local {
            Space::Local
        } else {
            Space::Param
        };
        self.env.frame.push(FrameVariable {
            name: v.name.name.as_str().to_owned(),
            offset,
            size,
        });
        let l = Local::Frame {
            offset,
            size,
            space,
            ty: v.ty.scalar,
        };
        declare(
            &mut self.env.names,
            scope,
            &v.name.name,
            l,
            v.name.span,
            self.env.instrs.len() as u32,
            self.diags,
        );
        if v.init.is_some() {
            self.diags.push(
                Diagnostic::warning(
                    v.span,
                    "initializer of a function-scope `.local`/`.param` variable is ignored",
                )
                .with_label("ignored")
                .with_help("PTX does not allow initializing these; store the value explicitly"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::increment_decimal;
    use proptest::prelude::*;

    proptest! {
        /// Counting in the spelled name gives the names `format!` gives.
        #[test]
        fn increment_decimal_counts(prefix in "[%a-z_]{0,6}", start in 0u32..1_000_000, steps in 1u32..300) {
            let mut spelled = format!("{prefix}{start}");
            for k in start + 1..=start + steps {
                increment_decimal(&mut spelled, prefix.len());
                prop_assert_eq!(&spelled, &format!("{prefix}{k}"));
            }
        }
    }
}
