//! Decoding of the warp-level matrix instructions and the asynchronous copies: `mma.sync`
//! (PTX ISA 9.7.14.5.14), `ldmatrix` (9.7.14.5.15) and `cp.async` with its group instructions
//! (9.7.9.25 "Data Movement and Conversion Instructions: cp.async").
//!
//! `cp.async` is lowered at load time to ordinary loads and stores through fresh registers: the
//! copy is made when the instruction issues (one of the executions the ISA allows, since nothing
//! may read the destination before `cp.async.wait_group`/`wait_all`), and the group instructions
//! are no-ops. docs/deviations.md says so.

use super::{Cx, M, m_word};
use crate::alu::mma::regs;
use crate::load::unsupported::Gap;
use crate::program::{
    Address, BoolOp, CacheOp, Compare, GuardPred, MemOrder, MemQualifiers, Mma, MmaElem, MmaShape,
    Op, PredSrc, RegId, Space, SpecialReg, Src,
};
use ptx_parser::{Operand, ScalarType};

fn mma_elem(name: &str) -> Option<MmaElem> {
    Some(match name {
        "f16" => MmaElem::F16,
        "bf16" => MmaElem::Bf16,
        "f32" => MmaElem::F32,
        "f64" => MmaElem::F64,
        "s8" => MmaElem::S8,
        "u8" => MmaElem::U8,
        "s32" => MmaElem::S32,
        _ => return None,
    })
}

/// The register type of a fragment register of `e`.
fn frag_ty(e: MmaElem) -> ScalarType {
    if e == MmaElem::F64 {
        ScalarType::B64
    } else {
        ScalarType::B32
    }
}

/// The modifier words `mma` takes.
const MMA_WORDS: &[&str] = &[
    "sync",
    "aligned",
    "row",
    "col",
    "satfinite",
    "m16n8k8",
    "m16n8k16",
    "m16n8k32",
    "m8n8k4",
    "f16",
    "bf16",
    "f32",
    "f64",
    "s8",
    "u8",
    "s32",
];

/// `mma` forms outside the subset: one diagnostic for the instruction when it names one (not
/// one per modifier).
const MMA_OUTSIDE: &[&str] = &[
    "m16n8k4",
    "m8n8k16",
    "m8n8k32",
    "m16n8k64",
    "m16n8k128",
    "m16n8k256",
    "m8n8k128",
    "tf32",
    "e4m3",
    "e5m2",
    "e2m1",
    "e3m2",
    "e2m3",
    "s4",
    "u4",
    "b1",
    "and",
    "popc",
    "xor",
    "sp",
    "kind::f8f6f4",
    "block_scale",
];

/// The shape and types of an `mma`: `[d, a, b, c]`.
#[derive(Clone, Copy)]
struct MmaForm {
    shape: MmaShape,
    types: [MmaElem; 4],
    satfinite: bool,
}

/// `mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype d, a, b, c` (PTX ISA 9.7.14.5.14):
/// the form, the combination of shape and types the ISA defines, then the fragments.
pub(super) fn mma(cx: &mut Cx<'_, '_, '_>) {
    if cx
        .ins
        .modifiers
        .iter()
        .any(|m| MMA_OUTSIDE.contains(&&*m.name))
    {
        cx.unsupported(Gap::Mma);
        return;
    }
    let Some(mods) = cx.mods(|n| m_word(n, MMA_WORDS)) else {
        return;
    };
    let full = cx.full_name();
    let Some(form) = mma_form(cx, &mods, &full) else {
        return;
    };
    if !mma_types_ok(cx, form, &full) || !cx.arity(&[4]) {
        return;
    }
    mma_operands(cx, form);
}

/// `.sync.aligned`, the shape, the layouts `.row.col` and the four types.
fn mma_form(cx: &mut Cx<'_, '_, '_>, mods: &super::Mods<'_>, full: &str) -> Option<MmaForm> {
    let span = cx.ins.span;
    if !mods.has("sync") || !mods.has("aligned") {
        cx.error(
            span,
            format!("`{full}` needs `.sync.aligned`"),
            "missing `.sync.aligned`",
            "write `mma.sync.aligned.m16n8k16.row.col...` (PTX ISA 9.7.14.5.14)",
        );
        return None;
    }
    let shape = cx.required(
        mods,
        "a shape",
        "add `.m16n8k16`, `.m16n8k8`, `.m16n8k32` or `.m8n8k4`",
        |m| match m {
            M::Word("m16n8k8") => Some(MmaShape::M16N8K8),
            M::Word("m16n8k16") => Some(MmaShape::M16N8K16),
            M::Word("m16n8k32") => Some(MmaShape::M16N8K32),
            M::Word("m8n8k4") => Some(MmaShape::M8N8K4),
            _ => None,
        },
    )?;
    // `.alayout.blayout`: these shapes admit only `.row.col`.
    let layouts: Vec<&str> = mods
        .list
        .iter()
        .filter_map(|(m, _)| match m {
            M::Word(w @ ("row" | "col")) => Some(*w),
            _ => None,
        })
        .collect();
    if layouts != ["row", "col"] {
        cx.error(
            span,
            format!("`{full}` needs the layouts `.row.col`"),
            "wrong layouts",
            "the shapes m16n8k8, m16n8k16, m16n8k32 and m8n8k4 (.f64) take `.row.col` (PTX ISA 9.7.14.5.14)",
        );
        return None;
    }
    let types: Vec<MmaElem> = mods
        .list
        .iter()
        .filter_map(|(m, _)| match m {
            M::Word(w) => mma_elem(w),
            _ => None,
        })
        .collect();
    let [d_ty, a_ty, b_ty, c_ty] = types[..] else {
        cx.error(
            span,
            format!("`{full}` needs four types `.dtype.atype.btype.ctype`"),
            "wrong number of types",
            "e.g. `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`",
        );
        return None;
    };
    Some(MmaForm {
        shape,
        types: [d_ty, a_ty, b_ty, c_ty],
        satfinite: mods.has("satfinite"),
    })
}

/// The combinations of shape and types the ISA defines (PTX ISA 9.7.14.5.14).
fn mma_types_ok(cx: &mut Cx<'_, '_, '_>, form: MmaForm, full: &str) -> bool {
    use MmaElem as E;
    use MmaShape as S;
    let MmaForm {
        shape,
        types: [d_ty, a_ty, b_ty, c_ty],
        satfinite,
    } = form;
    let ok = match shape {
        S::M16N8K8 | S::M16N8K16
            if a_ty == b_ty && matches!(a_ty, E::F16 | E::Bf16) && !satfinite =>
        {
            if a_ty == E::F16 {
                matches!(c_ty, E::F16 | E::F32) && matches!(d_ty, E::F16 | E::F32)
            } else {
                c_ty == E::F32 && d_ty == E::F32
            }
        }
        S::M16N8K16 | S::M16N8K32 => {
            matches!(a_ty, E::S8 | E::U8)
                && matches!(b_ty, E::S8 | E::U8)
                && c_ty == E::S32
                && d_ty == E::S32
        }
        S::M8N8K4 => [a_ty, b_ty, c_ty, d_ty] == [E::F64; 4] && !satfinite,
        _ => false,
    };
    if !ok {
        if shape == S::M8N8K4 && a_ty == E::F16 {
            cx.unsupported(Gap::Mma);
            return false;
        }
        cx.error(
            cx.ins.span,
            format!("`{full}`: the ISA has no such combination of shape and types"),
            "invalid type combination",
            "m16n8k8/m16n8k16 take .f16 or .bf16 inputs (.f32 or, for .f16, .f16 accumulators), m16n8k16/m16n8k32 .s8/.u8 with .s32, m8n8k4 .f64 (PTX ISA 9.7.14.5.14)",
        );
        return false;
    }
    true
}

/// The fragments `{d..}, {a..}, {b..}, {c..}`, each as many registers as its shape and type
/// give a thread.
fn mma_operands(cx: &mut Cx<'_, '_, '_>, form: MmaForm) {
    let MmaForm {
        shape,
        types: [d_ty, a_ty, b_ty, c_ty],
        satfinite,
    } = form;
    let (m, n, k) = shape.dims();
    let ops = &cx.ins.operands;
    let counts = [
        (regs(d_ty, m, n), d_ty, "D"),
        (regs(a_ty, m, k), a_ty, "A"),
        (regs(b_ty, k, n), b_ty, "B"),
        (regs(c_ty, m, n), c_ty, "C"),
    ];
    let mut lists: Vec<Vec<Src>> = Vec::with_capacity(4);
    let mut d = Vec::new();
    for (idx, (op, (count, e, what))) in ops.iter().zip(counts).enumerate() {
        let Some(items) = vector_items(cx, op, count, what) else {
            return;
        };
        let ty = frag_ty(e);
        let mut list = Vec::with_capacity(count);
        for item in items {
            if idx == 0 {
                match cx.dst(item, Some(ty)) {
                    Some(r) => d.push(r),
                    None => return,
                }
            } else {
                match cx.src(item, ty) {
                    Some(s) => list.push(s),
                    None => return,
                }
            }
        }
        lists.push(list);
    }
    let c = lists.pop().unwrap_or_default();
    let b = lists.pop().unwrap_or_default();
    let a = lists.pop().unwrap_or_default();
    cx.emit(Op::Mma(Box::new(Mma {
        shape,
        a_ty,
        b_ty,
        c_ty,
        d_ty,
        satfinite,
        d: d.into(),
        a: a.into(),
        b: b.into(),
        c: c.into(),
        mask: Src::Imm(0xffff_ffff),
    })));
}

/// The `count` elements of a `{...}` operand naming the fragment `what`.
fn vector_items<'a>(
    cx: &mut Cx<'a, '_, '_>,
    op: &'a Operand,
    count: usize,
    what: &str,
) -> Option<&'a [Operand]> {
    match op {
        Operand::Vector(items, _) if items.len() == count => Some(items),
        Operand::Vector(items, span) => {
            cx.error(
                *span,
                format!(
                    "`{}` needs {count} registers for {what}, found {}",
                    cx.full_name(),
                    items.len()
                ),
                "wrong number of registers",
                format!("write the {what} fragment as {count} registers in braces (PTX ISA 9.7.14.5 \"Matrix fragments\")"),
            );
            None
        }
        other => {
            cx.error(
                other.span(),
                format!(
                    "`{}` needs a vector `{{...}}` of {count} registers for {what}",
                    cx.full_name()
                ),
                "not a vector",
                format!("write {count} registers in braces"),
            );
            None
        }
    }
}

/// `ldmatrix.sync.aligned.m8n8.num{.trans}.shared.b16 d, [a]` (PTX ISA 9.7.14.5.15): the form,
/// the destinations and the shared address, then each lane's row load and the row shuffle.
pub(super) fn ldmatrix(cx: &mut Cx<'_, '_, '_>) {
    const WORDS: &[&str] = &[
        "sync",
        "aligned",
        "m8n8",
        "x1",
        "x2",
        "x4",
        "trans",
        "shared",
        "shared::cta",
        "b16",
    ];
    // One diagnostic for the instruction when it names a form outside the subset (not one per
    // modifier).
    const OUTSIDE: &[&str] = &["m16n16", "m8n16", "b8", "b8x16", "b6x16_p32", "b4x16_p64"];
    if cx.ins.modifiers.iter().any(|m| OUTSIDE.contains(&&*m.name)) {
        cx.unsupported(Gap::Mma);
        return;
    }
    let Some(mods) = cx.mods(|n| m_word(n, WORDS)) else {
        return;
    };
    let full = cx.full_name();
    if !(mods.has("sync") && mods.has("aligned") && mods.has("m8n8") && mods.has("b16")) {
        cx.error(
            cx.ins.span,
            format!("`{full}` needs `.sync.aligned.m8n8` and `.b16`"),
            "missing modifiers",
            "write `ldmatrix.sync.aligned.m8n8.x4.shared.b16 {d0, d1, d2, d3}, [addr]` (PTX ISA 9.7.14.5.15)",
        );
        return;
    }
    let Some(num) = cx.required(&mods, "a count", "add `.x1`, `.x2` or `.x4`", |m| match m {
        M::Word("x1") => Some(1u8),
        M::Word("x2") => Some(2),
        M::Word("x4") => Some(4),
        _ => None,
    }) else {
        return;
    };
    if !cx.arity(&[2]) {
        return;
    }
    let Some(dst) = ldmatrix_destinations(cx, num, &full) else {
        return;
    };
    // Without `.shared` the address is generic (and must point into shared memory).
    let space = if mods.has("shared") || mods.has("shared::cta") {
        Space::Shared
    } else {
        Space::Generic
    };
    let ins = cx.ins;
    let Some((addr, space)) = cx.address(&ins.operands[1], space) else {
        return;
    };
    if !matches!(space, Space::Shared | Space::Generic) {
        cx.error(
            ins.operands[1].span(),
            format!("`{full}` reads shared memory only"),
            "not a shared address",
            "give the address of a `.shared` variable or a shared-window address",
        );
        return;
    }
    let Some(rows) = ldmatrix_rows(cx, num, space, addr) else {
        return;
    };
    cx.emit(Op::LdMatrix {
        num,
        trans: mods.has("trans"),
        dst,
        rows,
        mask: Src::Imm(0xffff_ffff),
    });
}

/// The `num` destination registers `{d0, ..}` (a single register for `.x1`).
fn ldmatrix_destinations(cx: &mut Cx<'_, '_, '_>, num: u8, full: &str) -> Option<[RegId; 4]> {
    let ins = cx.ins;
    let ops = &ins.operands;
    let items: &[Operand] = match &ops[0] {
        Operand::Vector(items, _) => items,
        single @ Operand::Symbol { .. } if num == 1 => std::slice::from_ref(single),
        _ => &[],
    };
    if items.len() != num as usize {
        cx.error(
            ops[0].span(),
            format!("`{full}` needs {num} destination register(s)"),
            "wrong number of destinations",
            format!("write {num} `.b32` registers in braces"),
        );
        return None;
    }
    let mut dst = [RegId(0); 4];
    for (slot, item) in dst.iter_mut().zip(items) {
        *slot = cx.dst(item, Some(ScalarType::B32))?;
    }
    Some(dst)
}

/// Each lane loads its row into four fresh registers with an ordinary vector load (so that
/// every memory system, monitor and footprint sees a plain `ld.shared.v4.b32`); with `.x1` and
/// `.x2` only lanes 0-7 / 0-15 load (the other lanes' addresses are unused: PTX ISA
/// 9.7.14.5.15), under a fresh predicate `laneid < 8·num` (and the instruction's guard).
fn ldmatrix_rows(
    cx: &mut Cx<'_, '_, '_>,
    num: u8,
    space: Space,
    addr: Address,
) -> Option<[RegId; 4]> {
    let span = cx.ins.span;
    let mut rows = [RegId(0); 4];
    for (k, r) in rows.iter_mut().enumerate() {
        *r = match cx
            .f
            .env
            .new_register(&format!("%ldmatrix.row{k}"), ScalarType::B32, 1, span)
        {
            Ok(r) => r,
            Err(d) => {
                cx.push_diag(d);
                return None;
            }
        };
    }
    let qual = MemQualifiers {
        order: MemOrder::Weak,
        scope: None,
        cache: None,
        non_coherent: false,
    };
    let load = Op::Ld {
        space,
        qual,
        ty: ScalarType::B32,
        vector: 4,
        dst: [
            Some(rows[0]),
            Some(rows[1]),
            Some(rows[2]),
            Some(rows[3]),
            None,
            None,
            None,
            None,
        ],
        addr,
    };
    if num == 4 {
        cx.emit(load);
        return Some(rows);
    }
    let p = match cx
        .f
        .env
        .new_register("%ldmatrix.lanes", ScalarType::Pred, 1, span)
    {
        Ok(p) => p,
        Err(d) => {
            cx.push_diag(d);
            return None;
        }
    };
    // Unguarded: the predicate combines the guard itself, so it is never stale.
    let guard = cx.guard;
    cx.emit_guarded(
        Op::Setp {
            cmp: Compare::Lt,
            ty: ScalarType::U32,
            ftz: false,
            dst: p,
            dst_neg: None,
            a: Src::Special(SpecialReg::LaneId),
            b: Src::Imm(8 * num as u64),
            combine: guard.map(|g| {
                (
                    BoolOp::And,
                    PredSrc {
                        src: Src::Reg(g.reg),
                        negated: g.negated,
                    },
                )
            }),
        },
        None,
    );
    cx.emit_guarded(
        load,
        Some(GuardPred {
            reg: p,
            negated: false,
        }),
    );
    Some(rows)
}

/// `cp.async` (PTX ISA 9.7.9.25): the group operations are no-ops (the copies are made at
/// issue); a copy checks its cache operator, state spaces and sizes, then becomes loads and
/// stores through temporary registers.
pub(super) fn cp(cx: &mut Cx<'_, '_, '_>) {
    const WORDS: &[&str] = &[
        "async",
        "ca",
        "cg",
        "shared",
        "shared::cta",
        "global",
        "commit_group",
        "wait_group",
        "wait_all",
    ];
    // One diagnostic for the instruction when it names a form outside the subset (not one per
    // modifier).
    const OUTSIDE: &[&str] = &[
        "bulk",
        "mbarrier",
        "arrive",
        "noinc",
        "reduce",
        "tensor",
        "shared::cluster",
    ];
    if cx.ins.modifiers.iter().any(|m| OUTSIDE.contains(&&*m.name)) {
        cx.unsupported(Gap::CpAsync);
        return;
    }
    let Some(mods) = cx.mods(|n| m_word(n, WORDS)) else {
        return;
    };
    let full = cx.full_name();
    if !mods.has("async") {
        cx.error(
            cx.ins.span,
            format!("`{full}` needs `.async`"),
            "missing `.async`",
            "cudasem decodes `cp.async` (PTX ISA 9.7.9.25)",
        );
        return;
    }
    if mods.has("commit_group") || mods.has("wait_group") || mods.has("wait_all") {
        cp_async_group(cx, &mods, &full);
        return;
    }
    let Some(cache) = cp_async_form(cx, &mods, &full) else {
        return;
    };
    if !cx.arity(&[3, 4]) {
        return;
    }
    let Some((cp_size, src_size)) = cp_async_sizes(cx, cache, &full) else {
        return;
    };
    let ins = cx.ins;
    let ops = &ins.operands;
    let Some((dst, _)) = cx.address(&ops[0], Space::Shared) else {
        return;
    };
    let Some((src, _)) = cx.address(&ops[1], Space::Global) else {
        return;
    };
    cp_async_copy(cx, cache, (dst, src), (cp_size, src_size));
}

/// `cp.async.commit_group`, `.wait_group N`, `.wait_all`: the copies are made at issue, so
/// every group is complete when committed.
fn cp_async_group(cx: &mut Cx<'_, '_, '_>, mods: &super::Mods<'_>, full: &str) {
    let n = if mods.has("wait_group") { 1 } else { 0 };
    if !cx.arity(&[n]) {
        return;
    }
    if n == 1 {
        let ins = cx.ins;
        if let Operand::Immediate(e) = &ins.operands[0] {
            let _ = cx.imm(e, ScalarType::U32);
        } else {
            cx.error(
                ins.operands[0].span(),
                format!("`{full}` takes an integer constant"),
                "not a constant",
                "write `cp.async.wait_group 0;`",
            );
            return;
        }
    }
    cx.emit(Op::Nop);
}

/// A copy's cache operator (`.ca` or `.cg`) and its state spaces `.shared{::cta}.global` (the
/// destination's, then the source's).
fn cp_async_form(cx: &mut Cx<'_, '_, '_>, mods: &super::Mods<'_>, full: &str) -> Option<CacheOp> {
    let span = cx.ins.span;
    let cache = if mods.has("cg") {
        CacheOp::Cg
    } else if mods.has("ca") {
        CacheOp::Ca
    } else {
        cx.error(
            span,
            format!("`{full}` needs `.ca` or `.cg`"),
            "missing cache operator",
            "write `cp.async.ca.shared.global` (4, 8 or 16 bytes) or `cp.async.cg.shared.global` (16 bytes)",
        );
        return None;
    };
    let at = |w: &str| {
        mods.list
            .iter()
            .position(|(m, _)| matches!(m, M::Word(x) if *x == w))
    };
    let shared_at = at("shared").or(at("shared::cta"));
    if !matches!((shared_at, at("global")), (Some(s), Some(g)) if s < g) {
        cx.error(
            span,
            format!("`{full}` needs `.shared.global`"),
            "missing state spaces",
            "cp.async copies from `.global` to `.shared` (PTX ISA 9.7.9.25)",
        );
        return None;
    }
    Some(cache)
}

/// The copy size and the source size (constants): `.ca` copies 4, 8 or 16 bytes, `.cg` 16; the
/// source size is at most the copy size.
fn cp_async_sizes(cx: &mut Cx<'_, '_, '_>, cache: CacheOp, full: &str) -> Option<(u64, u64)> {
    let ins = cx.ins;
    let ops = &ins.operands;
    let constant = |cx: &mut Cx<'_, '_, '_>, op: &Operand| -> Option<u64> {
        match op {
            Operand::Immediate(e) => cx.imm(e, ScalarType::U32),
            other => {
                cx.push_diag(crate::load::unsupported::diag(
                    other.span(),
                    &format!("{full} with a register size"),
                    Gap::CpAsync,
                ));
                None
            }
        }
    };
    let cp_size = constant(cx, &ops[2])?;
    let src_size = match ops.get(3) {
        Some(op) => constant(cx, op)?,
        None => cp_size,
    };
    let sizes_ok = if cache == CacheOp::Cg {
        cp_size == 16
    } else {
        matches!(cp_size, 4 | 8 | 16)
    };
    if !sizes_ok || src_size > cp_size {
        cx.error(
            ops[2].span(),
            format!("`{full}`: copy size {cp_size} with source size {src_size} is not allowed"),
            "wrong size",
            "`.ca` copies 4, 8 or 16 bytes, `.cg` 16; the source size is at most the copy size",
        );
        return None;
    }
    Some((cp_size, src_size))
}

/// The copy as loads into temporary registers and stores from them, whole words when the
/// source size allows (bytes otherwise), then a zero fill of the bytes past the source size.
fn cp_async_copy(
    cx: &mut Cx<'_, '_, '_>,
    cache: CacheOp,
    (dst, src): (Address, Address),
    (cp_size, src_size): (u64, u64),
) {
    let span = cx.ins.span;
    let qual = |cache| MemQualifiers {
        order: MemOrder::Weak,
        scope: None,
        cache,
        non_coherent: false,
    };
    let at = |a: Address, off: u64| Address {
        offset: a.offset + off as i64,
        ..a
    };
    let word = if src_size.is_multiple_of(4) { 4 } else { 1 };
    let (ty, count) = if src_size == cp_size {
        (ScalarType::B32, (cp_size / 4) as u8)
    } else if word == 4 {
        (ScalarType::B32, 1)
    } else {
        (ScalarType::B8, 1)
    };
    let step = (crate::load::types::size(ty) as u64) * count as u64;
    let mut temps = [RegId(0); 4];
    for (k, t) in temps.iter_mut().enumerate().take(count as usize) {
        *t = match cx
            .f
            .env
            .new_register(&format!("%cp.async.tmp{k}"), ScalarType::B32, 1, span)
        {
            Ok(r) => r,
            Err(d) => {
                cx.push_diag(d);
                return;
            }
        };
    }
    let mut off = 0;
    while off < src_size {
        let mut dsts = [None; 8];
        for (d, t) in dsts.iter_mut().zip(&temps[..count as usize]) {
            *d = Some(*t);
        }
        let srcs: Box<[Src]> = temps[..count as usize]
            .iter()
            .map(|t| Src::Reg(*t))
            .collect();
        cx.emit(Op::Ld {
            space: Space::Global,
            qual: qual(Some(cache)),
            ty,
            vector: count,
            dst: dsts,
            addr: at(src, off),
        });
        cx.emit(Op::St {
            space: Space::Shared,
            qual: qual(None),
            ty,
            vector: count,
            src: srcs,
            addr: at(dst, off),
        });
        off += step;
    }
    // Zero fill of the bytes past the source size.
    while off < cp_size {
        let ty = if off.is_multiple_of(4) && cp_size - off >= 4 {
            ScalarType::B32
        } else {
            ScalarType::B8
        };
        let srcs = Box::new([Src::Imm(0)]);
        cx.emit(Op::St {
            space: Space::Shared,
            qual: qual(None),
            ty,
            vector: 1,
            src: srcs,
            addr: at(dst, off),
        });
        off += crate::load::types::size(ty) as u64;
    }
}
