//! Memory instructions (PTX ISA 9.7.9 and 9.7.12-9.7.13): `ld ldu st` with every state space and
//! generic addressing, memory-model qualifiers, cache operators and vectors; `atom red`;
//! `cvta isspacep`; `membar fence`; `prefetch` (a no-op). Thesis 5.1.1: `ld`, `st`, `atom`,
//! `membar` with explicit spaces; generic addressing and `red` go beyond it.
//!
//! Addresses: `[%rd+8]` is register-based; `[x+4]` of a module variable or kernel parameter is
//! absolute in that variable's space; `[x+4]` of a frame variable is relative to the frame. A
//! generic `ld`/`st` that names a variable directly (`ld.u32 %r, [x]`) is decoded in the
//! variable's own space: the generic address of `x` and its address in its space denote the same
//! location (PTX ISA 6.4.1.1), and the machine then needs no generic mapping for it.

use super::moves::Elem;
use super::{Cx, M, Named, m_order, m_scope, m_space, m_ty, m_word};
use crate::load::scope::Local;
use crate::load::types;
use crate::load::unsupported::Gap;
use crate::program::{
    AddrBase, Address, AtomOp, AtomType, CacheOp, MemOrder, MemQualifiers, Op, Scope, Space, Src,
    VecDst,
};
use ptx_parser::{Operand, ScalarType};

fn m_cache(n: &str) -> Option<M> {
    Some(M::Cache(match n {
        "ca" => CacheOp::Ca,
        "cg" => CacheOp::Cg,
        "cs" => CacheOp::Cs,
        "lu" => CacheOp::Lu,
        "cv" => CacheOp::Cv,
        "wb" => CacheOp::Wb,
        "wt" => CacheOp::Wt,
        _ => return None,
    }))
}

fn m_vec(n: &str) -> Option<M> {
    match n {
        "v2" => Some(M::Vector(2)),
        "v4" => Some(M::Vector(4)),
        "v8" => Some(M::Vector(8)),
        _ => None,
    }
}

impl Cx<'_, '_, '_> {
    /// Resolves a `[...]` operand for an access in `space`; returns the address and the space the
    /// access really uses (a named variable's space for generic accesses).
    pub(super) fn address(&mut self, op: &Operand, space: Space) -> Option<(Address, Space)> {
        let Operand::Address(a) = op else {
            self.error(
                op.span(),
                format!(
                    "expected an address `[...]`, found {}",
                    super::operand_kind(op)
                ),
                "not an address",
                "write the address in brackets, e.g. `[%rd1+4]`",
            );
            return None;
        };
        let offset = match &a.offset {
            Some(e) => {
                let layout = self.f.m.layout;
                let mut sym = |id: &ptx_parser::Ident, _g: bool| match layout.names.get(&*id.name) {
                    Some(&i) => Ok(layout.variables.get(i).map(|v| v.address).unwrap_or(0)),
                    None => crate::load::consts::no_symbols(id, false),
                };
                match crate::load::consts::fold_int(e, &mut sym) {
                    Ok(v) => v as i64,
                    Err(d) => {
                        self.push_diag(d);
                        return None;
                    }
                }
            }
            None => 0,
        };
        let Some(base) = &a.base else {
            return Some((
                Address {
                    base: AddrBase::Absolute,
                    offset,
                },
                space,
            ));
        };
        let (addr, implied) = match self.resolve(base, None) {
            Named::Local(Local::Reg { id, ty, vector }) => {
                if vector != 1 || !(types::is_int(ty) && matches!(types::size(ty), 4 | 8)) {
                    self.error(
                        base.span,
                        format!("`{}` cannot hold an address", base.name),
                        "not a 32/64-bit integer register",
                        "use a `.u64`/`.b64` (or `.u32`) register as the address base",
                    );
                    return None;
                }
                (
                    Address {
                        base: AddrBase::Reg(id),
                        offset,
                    },
                    None,
                )
            }
            Named::Local(Local::Frame {
                offset: fo,
                space: fs,
                ..
            }) => (
                Address {
                    base: AddrBase::Frame,
                    offset: fo as i64 + offset,
                },
                Some(fs),
            ),
            Named::Local(Local::KernelParam { offset: po, .. }) => (
                Address {
                    base: AddrBase::Absolute,
                    offset: po as i64 + offset,
                },
                Some(Space::Param),
            ),
            Named::Local(Local::Static(i)) | Named::Var(i) => {
                let vs = self
                    .f
                    .m
                    .layout
                    .variables
                    .get(i)
                    .map(|v| v.space)
                    .unwrap_or(Space::Global);
                (
                    Address {
                        base: AddrBase::Absolute,
                        offset: self.var_address(i) as i64 + offset,
                    },
                    Some(vs),
                )
            }
            Named::Undefined => {
                self.undefined(base);
                return None;
            }
            _ => {
                self.error(
                    base.span,
                    format!("`{}` cannot be used as an address", base.name),
                    "not a register or variable",
                    "address a register or a variable: `[%rd1]`, `[name+4]`",
                );
                return None;
            }
        };
        match implied {
            None => Some((addr, space)),
            Some(v) if space == Space::Generic || v == space => Some((addr, v)),
            Some(v) => {
                self.error(
                    base.span,
                    format!(
                        "`{}` is in `{}` but `{}` accesses `{}`",
                        base.name,
                        space_name(v),
                        self.full_name(),
                        space_name(space)
                    ),
                    "state space mismatch",
                    format!(
                        "use `{}` in the instruction, or drop the state space for a generic access",
                        space_name(v)
                    ),
                );
                None
            }
        }
    }
}

pub(crate) fn space_name(s: Space) -> &'static str {
    match s {
        Space::Generic => "generic",
        Space::Global => ".global",
        Space::Shared => ".shared",
        Space::Local => ".local",
        Space::Const => ".const",
        Space::Param => ".param",
    }
}

/// The qualifiers of an `ld`/`ldu`/`st` as its modifiers give them.
#[derive(Clone, Copy)]
struct Access {
    is_st: bool,
    ty: ScalarType,
    space: Space,
    order: MemOrder,
    scope: Option<Scope>,
    cache: Option<CacheOp>,
    vector: u8,
    nc: bool,
}

/// `ld`, `ldu`, `st` (PTX ISA 9.7.9.8-9.7.9.10): the qualifiers, their combinations the
/// instruction admits, then the address and the data operands.
pub(super) fn ld_st(cx: &mut Cx<'_, '_, '_>, opcode: &str) {
    let is_st = opcode == "st";
    let Some(mods) = cx.mods(|n| {
        m_ty(n)
            .or_else(|| m_space(n))
            .or_else(|| m_order(n))
            .or_else(|| m_scope(n))
            .or_else(|| m_cache(n))
            .or_else(|| m_vec(n))
            .or_else(|| m_word(n, &["nc"]))
    }) else {
        return;
    };
    let Some(ty) = cx.ty(&mods) else { return };
    if types::is_unsupported(ty) {
        // Half-precision values (`.f16x2` too) move through memory as bit patterns; b128 not.
        cx.unsupported_type(ty);
        return;
    }
    let space = cx
        .one(&mods, |m| if let M::Space(s) = m { Some(*s) } else { None })
        .unwrap_or(Space::Generic);
    let order = cx
        .one(&mods, |m| if let M::Order(o) = m { Some(*o) } else { None })
        .unwrap_or(MemOrder::Weak);
    let scope = cx.one(&mods, |m| if let M::Scope(s) = m { Some(*s) } else { None });
    let cache = cx.one(&mods, |m| if let M::Cache(c) = m { Some(*c) } else { None });
    let vector = cx
        .one(
            &mods,
            |m| if let M::Vector(n) = m { Some(*n) } else { None },
        )
        .unwrap_or(1);
    let a = Access {
        is_st,
        ty,
        space,
        order,
        scope,
        cache,
        vector,
        nc: mods.has("nc"),
    };
    if !vector_ok(cx, a)
        || !order_ok(cx, opcode, a)
        || !cache_ok(cx, a)
        || !space_ok(cx, opcode, a)
        || !cx.arity(&[2])
    {
        return;
    }
    let ins = cx.ins;
    let (data, addr_op) = if is_st {
        (&ins.operands[1], &ins.operands[0])
    } else {
        (&ins.operands[0], &ins.operands[1])
    };
    let Some((addr, space)) = cx.address(addr_op, space) else {
        return;
    };
    let elems: Vec<Elem<'_>> = if vector == 1 {
        vec![Elem::Op(data)]
    } else {
        match super::moves::vector_elems(cx, data, vector, ty) {
            Some(e) => e,
            None => return,
        }
    };
    let a = Access { space, ..a };
    if is_st {
        emit_st(cx, a, &elems, addr);
    } else {
        emit_ld(cx, a, &elems, addr);
    }
}

/// `.v8` (PTX ISA 9.7.9.8): at most 256 bits, so elements of at most 32 bits.
fn vector_ok(cx: &mut Cx<'_, '_, '_>, a: Access) -> bool {
    if a.vector == 8 && types::size(a.ty) > 4 {
        cx.error(
            cx.ins.span,
            format!(
                "`{full}`: `.v8` takes elements of at most 32 bits",
                full = cx.full_name()
            ),
            "vector too wide",
            "use `.v4` for 64-bit elements (a vector access moves at most 256 bits)",
        );
        return false;
    }
    true
}

/// Orders and scopes each instruction admits (PTX ISA 9.7.9.8, 9.7.9.10).
fn order_ok(cx: &mut Cx<'_, '_, '_>, opcode: &str, a: Access) -> bool {
    let span = cx.ins.span;
    let order_ok = matches!(
        (a.is_st, a.order),
        (_, MemOrder::Weak | MemOrder::Volatile | MemOrder::Relaxed)
            | (false, MemOrder::Acquire)
            | (true, MemOrder::Release)
    );
    if !order_ok {
        cx.error(
            span,
            format!(
                "`{full}` has a memory order `{opcode}` does not take",
                full = cx.full_name()
            ),
            "wrong memory order",
            if a.is_st {
                "`st` takes `.weak .volatile .relaxed .release`"
            } else {
                "`ld` takes `.weak .volatile .relaxed .acquire`"
            },
        );
        return false;
    }
    if a.scope.is_some()
        && !matches!(
            a.order,
            MemOrder::Relaxed | MemOrder::Acquire | MemOrder::Release
        )
    {
        cx.error(
            span,
            format!(
                "`{full}` has a scope but no `.relaxed/.acquire/.release`",
                full = cx.full_name()
            ),
            "scope without a strong order",
            "add `.relaxed` (or `.acquire`/`.release`), or drop the scope",
        );
        return false;
    }
    true
}

/// Cache operators (PTX ISA 9.7.9.1): `ld` and `st` each have their own, on weak accesses only.
fn cache_ok(cx: &mut Cx<'_, '_, '_>, a: Access) -> bool {
    let Some(c) = a.cache else {
        return true;
    };
    let ok = if a.is_st {
        matches!(c, CacheOp::Wb | CacheOp::Cg | CacheOp::Cs | CacheOp::Wt)
    } else {
        matches!(
            c,
            CacheOp::Ca | CacheOp::Cg | CacheOp::Cs | CacheOp::Lu | CacheOp::Cv
        )
    };
    if !ok || a.order != MemOrder::Weak {
        cx.error(
            cx.ins.span,
            format!(
                "`{full}` combines a cache operator with {}",
                if ok {
                    "a memory order"
                } else {
                    "the wrong instruction"
                },
                full = cx.full_name()
            ),
            "cache operator not allowed here",
            if a.is_st {
                "`st` takes `.wb .cg .cs .wt` on weak stores"
            } else {
                "`ld` takes `.ca .cg .cs .lu .cv` on weak loads"
            },
        );
        return false;
    }
    true
}

/// State spaces against `.nc` (weak `ld.global` only), `ldu` (`.global`) and `.volatile`
/// (not `.const`/`.param`).
fn space_ok(cx: &mut Cx<'_, '_, '_>, opcode: &str, a: Access) -> bool {
    let span = cx.ins.span;
    if a.nc && (a.is_st || !matches!(a.space, Space::Global) || a.order != MemOrder::Weak) {
        cx.error(
            span,
            format!(
                "`.nc` is only allowed on weak `ld.global`, not `{full}`",
                full = cx.full_name()
            ),
            "`.nc` not allowed here",
            "drop `.nc`",
        );
        return false;
    }
    if opcode == "ldu" && !matches!(a.space, Space::Global | Space::Generic) {
        cx.error(
            span,
            format!(
                "`ldu` reads `.global` memory only, not `{full}`",
                full = cx.full_name()
            ),
            "wrong space",
            "use `ld` for other state spaces",
        );
        return false;
    }
    // `st.const` loads: ptxas takes it at -O0 and the store faults when it runs ("const address
    // ... is read-only", as the hardware's), so a kernel that never executes it is valid.
    if a.order == MemOrder::Volatile && matches!(a.space, Space::Const | Space::Param) {
        cx.error(
            span,
            format!(
                "`{full}` is not allowed on that state space",
                full = cx.full_name()
            ),
            "wrong space",
            "`.volatile` applies to `.global .shared .local` and generic",
        );
        return false;
    }
    true
}

/// The qualifiers an access carries into its op.
fn qualifiers(a: Access) -> MemQualifiers {
    MemQualifiers {
        order: a.order,
        scope: a.scope,
        cache: a.cache,
        non_coherent: a.nc,
    }
}

/// `st`: each element a source.
fn emit_st(cx: &mut Cx<'_, '_, '_>, a: Access, elems: &[Elem<'_>], addr: Address) {
    let mut src = Vec::with_capacity(elems.len());
    for e in elems {
        src.push(match e {
            Elem::Reg(r) => Src::Reg(*r),
            Elem::Op(op) => match cx.src_with(op, a.ty, true) {
                Some(s) => s,
                None => return,
            },
        });
    }
    let src = src.into_boxed_slice();
    cx.emit(Op::St {
        space: a.space,
        qual: qualifiers(a),
        ty: a.ty,
        vector: a.vector,
        src,
        addr,
    });
}

/// `ld`/`ldu`: each element a destination register (`_` drops a vector element).
fn emit_ld(cx: &mut Cx<'_, '_, '_>, a: Access, elems: &[Elem<'_>], addr: Address) {
    let mut dst: VecDst = [None; 8];
    for (k, e) in elems.iter().enumerate() {
        dst[k] = match e {
            Elem::Reg(r) => Some(*r),
            Elem::Op(op @ Operand::Sink(_)) if a.vector > 1 => {
                let _ = op;
                None
            }
            Elem::Op(op) => match cx.reg_operand(op, Some(a.ty), true, true) {
                Some(r) => Some(r),
                None => return,
            },
        };
    }
    cx.emit(Op::Ld {
        space: a.space,
        qual: qualifiers(a),
        ty: a.ty,
        vector: a.vector,
        dst,
        addr,
    });
}

/// `cvta[.to].space.size d, a` and `isspacep.space p, a` (PTX ISA 9.7.9.19, 9.7.9.18).
pub(super) fn cvta(cx: &mut Cx<'_, '_, '_>, isspacep: bool) {
    let Some(mods) = cx.mods(|n| {
        m_ty(n)
            .or_else(|| m_space(n))
            .or_else(|| m_word(n, &["to"]))
    }) else {
        return;
    };
    let Some(space) = cx.required(
        &mods,
        "a state space",
        "add `.global`, `.shared`, `.local`, `.const` or `.param`",
        |m| if let M::Space(s) = m { Some(*s) } else { None },
    ) else {
        return;
    };
    if !cx.arity(&[2]) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    if isspacep {
        if !mods.types().is_empty() || mods.has("to") {
            cx.error(
                cx.ins.span,
                format!("`{}` takes only a state space", cx.full_name()),
                "extra modifier",
                "write `isspacep.global p, a`",
            );
            return;
        }
        let dst = cx.dst(&ops[0], Some(ScalarType::Pred));
        let a = cx.src(&ops[1], ScalarType::U64);
        if let (Some(dst), Some(a)) = (dst, a) {
            cx.emit(Op::IsSpace { space, dst, a });
        }
        return;
    }
    let Some(ty) = cx.ty(&mods) else { return };
    if !cx.require_ty(
        ty,
        |t| {
            matches!(
                t,
                ScalarType::U32
                    | ScalarType::U64
                    | ScalarType::B32
                    | ScalarType::B64
                    | ScalarType::S64
                    | ScalarType::S32
            )
        },
        "`.u32` or `.u64`",
    ) {
        return;
    }
    let dst = cx.dst(&ops[0], Some(ty));
    let a = cx.src(&ops[1], ty);
    if let (Some(dst), Some(a)) = (dst, a) {
        cx.emit(Op::Cvta {
            to_generic: !mods.has("to"),
            space,
            dst,
            a,
        });
    }
}

/// `atom` and `red` (PTX ISA 9.7.12.3, 9.7.12.4): the operation, the space and order, the type
/// the operation takes, then the operands.
pub(super) fn atom(cx: &mut Cx<'_, '_, '_>, is_red: bool) {
    let ops_words = [
        "add", "inc", "dec", "exch", "cas", "min", "max", "and", "or", "xor",
    ];
    let Some(mods) = cx.mods(|n| {
        m_ty(n)
            .or_else(|| m_space(n))
            .or_else(|| m_order(n))
            .or_else(|| m_scope(n))
            .or_else(|| m_word(n, &ops_words))
            .or(match n {
                "v2" | "v4" => Some(M::Unsupported(Gap::WideVectors)),
                _ => None,
            })
    }) else {
        return;
    };
    let Some(op) = atom_op(cx, &mods) else {
        return;
    };
    let Some(ty) = cx.ty(&mods) else { return };
    let space = cx
        .one(&mods, |m| if let M::Space(s) = m { Some(*s) } else { None })
        .unwrap_or(Space::Generic);
    let order = cx
        .one(&mods, |m| if let M::Order(o) = m { Some(*o) } else { None })
        .unwrap_or(MemOrder::Relaxed);
    let scope = cx.one(&mods, |m| if let M::Scope(s) = m { Some(*s) } else { None });
    if !atom_space_order_ok(cx, is_red, space, order) {
        return;
    }
    let Some(aty) = atom_type(cx, op, ty) else {
        return;
    };
    let qual = MemQualifiers {
        order,
        scope,
        cache: None,
        non_coherent: false,
    };
    atom_operands(cx, is_red, op, (ty, aty), space, qual);
}

/// The operation word of an `atom`/`red` (required).
fn atom_op(cx: &mut Cx<'_, '_, '_>, mods: &super::Mods<'_>) -> Option<AtomOp> {
    cx.required(
        mods,
        "an operation",
        "add one of `.add .inc .dec .exch .cas .min .max .and .or .xor`",
        |m| {
            Some(match m {
                M::Word("add") => AtomOp::Add,
                M::Word("inc") => AtomOp::Inc,
                M::Word("dec") => AtomOp::Dec,
                M::Word("exch") => AtomOp::Exch,
                M::Word("cas") => AtomOp::Cas,
                M::Word("min") => AtomOp::Min,
                M::Word("max") => AtomOp::Max,
                M::Word("and") => AtomOp::And,
                M::Word("or") => AtomOp::Or,
                M::Word("xor") => AtomOp::Xor,
                _ => return None,
            })
        },
    )
}

/// Atomics work on `.global`, `.shared` and generic addresses, with the strong orders (`red`
/// without an acquire).
fn atom_space_order_ok(
    cx: &mut Cx<'_, '_, '_>,
    is_red: bool,
    space: Space,
    order: MemOrder,
) -> bool {
    if !matches!(space, Space::Global | Space::Shared | Space::Generic) {
        cx.error(
            cx.ins.span,
            format!(
                "`{full}`: atomics work on `.global`, `.shared` or generic addresses",
                full = cx.full_name()
            ),
            "wrong state space",
            "use `.global` or `.shared`, or a generic address",
        );
        return false;
    }
    if !matches!(
        order,
        MemOrder::Relaxed | MemOrder::Acquire | MemOrder::Release | MemOrder::AcqRel
    ) || (is_red && matches!(order, MemOrder::Acquire | MemOrder::AcqRel))
    {
        cx.error(
            cx.ins.span,
            format!(
                "`{full}` has a memory order atomics do not take",
                full = cx.full_name()
            ),
            "wrong memory order",
            "atomics take `.relaxed .acquire .release .acq_rel` (`red`: `.relaxed .release`)",
        );
        return false;
    }
    true
}

/// The types each atomic operation takes (PTX ISA 9.7.12.3), as the atomic's type; half
/// precision is outside the subset. `None`: an error was reported.
fn atom_type(cx: &mut Cx<'_, '_, '_>, op: AtomOp, ty: ScalarType) -> Option<AtomType> {
    let type_ok = match op {
        AtomOp::And | AtomOp::Or | AtomOp::Xor => {
            matches!(types::size(ty), 4 | 8) && types::is_int(ty)
        }
        AtomOp::Exch | AtomOp::Cas => {
            matches!(types::size(ty), 4 | 8) && !matches!(ty, ScalarType::Pred)
        }
        AtomOp::Inc | AtomOp::Dec => matches!(ty, ScalarType::U32),
        AtomOp::Add => matches!(
            ty,
            ScalarType::U32
                | ScalarType::S32
                | ScalarType::U64
                | ScalarType::S64
                | ScalarType::F32
                | ScalarType::F64
        ),
        AtomOp::Min | AtomOp::Max => matches!(
            ty,
            ScalarType::U32 | ScalarType::S32 | ScalarType::U64 | ScalarType::S64
        ),
    };
    if types::is_unsupported(ty) || types::is_half(ty) {
        // Half-precision atomics (`atom.add.noftz.f16` ...) are outside the subset.
        cx.unsupported_type(ty);
        return None;
    }
    if !type_ok {
        cx.error(
            cx.ins.span,
            format!(
                "`{full}`: type `{}` is not allowed for this atomic operation",
                ty.directive(),
                full = cx.full_name()
            ),
            "wrong type",
            "see PTX ISA 9.7.12.3 for the types each atomic operation takes",
        );
        return None;
    }
    // Every type some operation takes has its atomic type.
    Some(match ty {
        ScalarType::B32 => AtomType::B32,
        ScalarType::B64 => AtomType::B64,
        ScalarType::U32 => AtomType::U32,
        ScalarType::U64 => AtomType::U64,
        ScalarType::S32 => AtomType::S32,
        ScalarType::S64 => AtomType::S64,
        ScalarType::F32 => AtomType::F32,
        ScalarType::F64 => AtomType::F64,
        _ => {
            cx.unsupported_type(ty);
            return None;
        }
    })
}

/// `atom d, [a], b (, c)` / `red [a], b`: the operands, and the op.
fn atom_operands(
    cx: &mut Cx<'_, '_, '_>,
    is_red: bool,
    op: AtomOp,
    (ty, aty): (ScalarType, AtomType),
    space: Space,
    qual: MemQualifiers,
) {
    let n = if is_red { 2 } else { 3 } + usize::from(op == AtomOp::Cas);
    if !cx.arity(&[n]) {
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    let (dst, rest) = if is_red {
        (None, &ops[..])
    } else {
        match cx.dst(&ops[0], Some(ty)) {
            Some(d) => (Some(d), &ops[1..]),
            None => return,
        }
    };
    let Some((addr, space)) = cx.address(&rest[0], space) else {
        return;
    };
    if !matches!(space, Space::Global | Space::Shared | Space::Generic) {
        cx.error(
            rest[0].span(),
            format!(
                "`{full}`: atomics work on `.global` or `.shared` variables",
                full = cx.full_name()
            ),
            "wrong state space",
            "apply the atomic to a `.global` or `.shared` location",
        );
        return;
    }
    let Some(a) = cx.src(&rest[1], ty) else {
        return;
    };
    let b = match rest.get(2) {
        Some(op) => match cx.src(op, ty) {
            Some(b) => Some(b),
            None => return,
        },
        None => None,
    };
    cx.emit(Op::Atom {
        space,
        op,
        ty: aty,
        qual,
        dst,
        addr,
        a,
        b,
    });
}

/// `membar.level` and `fence.sem.scope` (PTX ISA 9.7.13.4; thesis `membar` with `MemBarLevel`).
pub(super) fn fence(cx: &mut Cx<'_, '_, '_>, is_fence: bool) {
    let Some(mods) = cx.mods(|n| {
        if is_fence {
            m_order(n).or_else(|| m_scope(n)).or(match n {
                "proxy"
                | "proxy::alias"
                | "proxy::async"
                | "proxy::tensormap_generic"
                | "alias"
                | "async" => Some(M::Unsupported(Gap::Modifiers)),
                "mbarrier_init" | "release_sync_restrict" | "acquire_sync_restrict" => {
                    Some(M::Unsupported(Gap::CpAsync))
                }
                _ => None,
            })
        } else {
            m_word(n, &["cta", "gl", "sys"]).or_else(|| {
                if n == "proxy" {
                    Some(M::Unsupported(Gap::Modifiers))
                } else {
                    None
                }
            })
        }
    }) else {
        return;
    };
    if is_fence {
        let order = cx
            .one(&mods, |m| if let M::Order(o) = m { Some(*o) } else { None })
            .unwrap_or(MemOrder::AcqRel);
        let scope = cx.one(&mods, |m| if let M::Scope(s) = m { Some(*s) } else { None });
        if !matches!(order, MemOrder::Sc | MemOrder::AcqRel) {
            cx.error(
                cx.ins.span,
                format!("`{}`: a fence is `.sc` or `.acq_rel`", cx.full_name()),
                "wrong fence order",
                "write `fence.sc.SCOPE` or `fence.acq_rel.SCOPE`",
            );
            return;
        }
        let level = match scope {
            Some(level @ (Scope::Cta | Scope::Gpu | Scope::Sys)) => level,
            Some(Scope::Cluster) | None => {
                cx.error(
                    cx.ins.span,
                    format!("`{}` needs a scope", cx.full_name()),
                    "missing scope",
                    "add `.cta`, `.gpu` or `.sys`",
                );
                return;
            }
        };
        if cx.arity(&[0]) {
            cx.emit(Op::Fence { level, order });
        }
    } else {
        let level = cx.one(&mods, |m| {
            Some(match m {
                M::Word("cta") => Scope::Cta,
                M::Word("gl") => Scope::Gpu,
                M::Word("sys") => Scope::Sys,
                _ => return None,
            })
        });
        let Some(level) = level else {
            cx.error(
                cx.ins.span,
                "`membar` needs a level",
                "missing level",
                "write `membar.cta`, `membar.gl` or `membar.sys`",
            );
            return;
        };
        if cx.arity(&[0]) {
            cx.emit(Op::Fence {
                level,
                order: MemOrder::Sc,
            });
        }
    }
}

/// `prefetch{.space}.level [a]` and `prefetchu.L1 [a]`: performance hints, no semantic effect.
pub(super) fn prefetch(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) = cx.mods(|n| {
        m_space(n).or_else(|| m_word(n, &["L1", "L2"])).or_else(|| {
            if n == "tensormap" {
                Some(M::Unsupported(Gap::CpAsync))
            } else {
                None
            }
        })
    }) else {
        return;
    };
    let space = cx
        .one(&mods, |m| if let M::Space(s) = m { Some(*s) } else { None })
        .unwrap_or(Space::Generic);
    if !cx.arity(&[1]) {
        return;
    }
    let ins = cx.ins;
    if cx.address(&ins.operands[0], space).is_some() {
        cx.emit(Op::Nop);
    }
}
