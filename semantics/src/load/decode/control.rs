//! Control flow (PTX ISA 9.7.14; thesis 5.1.1): `bra`, `call` (direct, and indirect through a
//! register with a `.callprototype`), `ret`, `exit`, `trap`, the no-ops `nanosleep`/`pmevent`, and
//! the thesis dialect `ssy L`, `sync`, `brk`/`break`, `preBrk L`, `preRet L`.
//!
//! Branch and token targets are decoded as label indices of the function; `load` rewrites them
//! to program addresses once every instruction has one (a label names the next instruction,
//! thesis 5.1.3 `load` step 3).

use super::{Cx, Named, m_ty, m_word};
use crate::load::scope::Local;
use crate::load::types;
use crate::load::unsupported::Gap;
use crate::program::{CallTarget, Op, ParamLoc, RegId};
use ptx_parser::{Operand, Param, ScalarType};

impl Cx<'_, '_, '_> {
    /// A label operand: its index in the function (inner labels hide outer ones).
    fn label_operand(&mut self, op: &Operand) -> Option<u32> {
        let Operand::Symbol {
            name,
            component: None,
            span,
        } = op
        else {
            self.error(
                op.span(),
                format!(
                    "`{}` needs a label, found {}",
                    self.full_name(),
                    super::operand_kind(op)
                ),
                "not a label",
                "write the name of a label of this function",
            );
            return None;
        };
        if let Some(l) = self.f.env.label(self.scope, &name.name) {
            return Some(l);
        }
        match self.resolve(name, None) {
            Named::Local(Local::Reg { .. }) => {
                let d = crate::load::unsupported::diag(
                    *span,
                    &format!("{} {}", self.full_name(), name.name),
                    Gap::BranchTables,
                );
                self.push_diag(d);
            }
            Named::Func(_) | Named::Bodiless => {
                self.error(
                    *span,
                    format!("`{}` is a function, not a label", name.name),
                    "function",
                    format!("use `call {}` to call a function", name.name),
                );
            }
            _ => {
                if let Some(owner) = self.f.m.label_owner(&name.name) {
                    self.error(*span, format!("branch into another function: label `{}` belongs to `{owner}`", name.name), "label of another function", "branch only to labels of the same function; use `call` to enter another function");
                } else {
                    self.error(*span, format!("undefined label `{}`", name.name), "no such label in scope", format!("define `{}:` in this function (labels in inner `{{ }}` blocks are not visible outside them)", name.name));
                }
            }
        }
        None
    }
}

/// `bra{.uni} L`.
pub(super) fn bra(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) = cx.mods(|n| m_word(n, &["uni"])) else {
        return;
    };
    if !cx.arity(&[1]) {
        return;
    }
    let ins = cx.ins;
    if let Some(target) = cx.label_operand(&ins.operands[0]) {
        cx.emit(Op::Bra {
            target,
            uni: mods.has("uni"),
        });
    }
}

/// `brx.idx{.uni} index, TABLE` with `TABLE: .branchtargets L0, L1, ...;` (PTX ISA 9.7.14.2):
/// the thesis's indirect `bra r` (rule bra_target).
pub(super) fn brx(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) = cx.mods(|n| m_word(n, &["idx", "uni"])) else {
        return;
    };
    if !mods.has("idx") {
        cx.error(
            cx.ins.span,
            format!("`{}` needs `.idx`", cx.full_name()),
            "missing `.idx`",
            "write `brx.idx index, TABLE;`",
        );
        return;
    }
    if !cx.arity(&[2]) {
        return;
    }
    let ins = cx.ins;
    let index = cx.src(&ins.operands[0], ScalarType::U32);
    let Operand::Symbol {
        name,
        component: None,
        span,
    } = &ins.operands[1]
    else {
        cx.error(
            ins.operands[1].span(),
            "`brx.idx` needs the label of a `.branchtargets` list",
            "not a label",
            "declare `TABLE: .branchtargets L0, L1;` and name `TABLE`",
        );
        return;
    };
    let Some((list, false)) = cx.f.env.target_list(cx.scope, &name.name) else {
        cx.error(
            *span,
            format!("`{}` is not a `.branchtargets` list", name.name),
            "no `.branchtargets` of that name",
            format!(
                "declare `{}: .branchtargets L0, L1, ...;` in this function",
                name.name
            ),
        );
        return;
    };
    let mut targets = Vec::with_capacity(list.targets.len());
    for t in &list.targets {
        match cx.f.env.label(cx.scope, &t.name) {
            Some(l) => targets.push(l),
            None => {
                cx.error(
                    t.span,
                    format!("undefined label `{}` in `.branchtargets`", t.name),
                    "no such label in scope",
                    "list labels of this function",
                );
                return;
            }
        }
    }
    if let Some(index) = index {
        cx.emit(Op::BraIndirect {
            index,
            targets: targets.into(),
            uni: mods.has("uni"),
        });
    }
}

/// `ssy L`, `preBrk L`, `preRet L` (thesis dialect; labels only, 5.1.1).
pub(super) fn push_token(cx: &mut Cx<'_, '_, '_>, opcode: &str) {
    if cx.mods(|_| None).is_none() || !cx.arity(&[1]) {
        return;
    }
    let ins = cx.ins;
    if let Some(target) = cx.label_operand(&ins.operands[0]) {
        cx.emit(match opcode {
            "ssy" => Op::Ssy { target },
            "preBrk" => Op::PreBrk { target },
            _ => Op::PreRet { target },
        });
    }
}

/// `ret exit trap nanosleep pmevent sync brk break`.
pub(super) fn simple(cx: &mut Cx<'_, '_, '_>, opcode: &str) {
    let Some(mods) = cx.mods(|n| match opcode {
        "ret" => m_word(n, &["uni"]),
        "nanosleep" => m_ty(n),
        "pmevent" => m_word(n, &["mask"]),
        _ => None,
    }) else {
        return;
    };
    let _ = mods;
    let (n, op) = match opcode {
        // Thesis 5.1.3 step 5: a kernel's `ret` is `exit`.
        "ret" => (0, if cx.f.is_entry { Op::Exit } else { Op::Ret }),
        "exit" => (0, Op::Exit),
        "trap" => (0, Op::Trap),
        "sync" => (0, Op::Sync),
        "brk" | "break" => (0, Op::Brk),
        _ => (1, Op::Nop),
    };
    if !cx.arity(&[n]) {
        return;
    }
    if n == 1 {
        let ins = cx.ins;
        if cx.src(&ins.operands[0], ScalarType::U32).is_none() {
            return;
        }
    }
    cx.emit(op);
}

/// The callee of a `call` as resolved: where control goes, the parameters it declares, and
/// how diagnostics name it.
struct Callee<'a> {
    target: CallTarget,
    ret_params: &'a [Param],
    params: &'a [Param],
    name: String,
}

/// `call (rets), f, (args);` and `call (rets), %rd, (args), proto;` (PTX ISA 9.7.13.4): the
/// operands, the callee, the arity against its declaration, then each argument's and return
/// value's locations.
pub(super) fn call(cx: &mut Cx<'_, '_, '_>) {
    let Some(mods) = cx.mods(|n| m_word(n, &["uni"])) else {
        return;
    };
    let ins = cx.ins;
    let ops = &ins.operands;
    let mut i = 0;
    let rets: &[Operand] = match ops.first() {
        Some(Operand::List(items, _)) => {
            i = 1;
            items
        }
        _ => &[],
    };
    let Some(callee) = ops.get(i) else {
        cx.error(
            ins.span,
            "`call` needs a function",
            "missing callee",
            "write `call f, (args);`",
        );
        return;
    };
    i += 1;
    let args: &[Operand] = match ops.get(i) {
        Some(Operand::List(items, _)) => {
            i += 1;
            items
        }
        _ => &[],
    };
    let proto_op = ops.get(i);
    if ops.len() > i + 1 {
        cx.error(
            ops[i + 1].span(),
            "too many operands for `call`",
            "unexpected operand",
            "write `call (rets), f, (args);` or `call (rets), %rd, (args), prototype;`",
        );
        return;
    }
    let Some(c) = callee_of(cx, callee, proto_op, rets) else {
        return;
    };
    if !call_arity_ok(cx, &c, args, rets) {
        return;
    }
    let mut out_args = Vec::with_capacity(args.len());
    for (a, p) in args.iter().zip(c.params) {
        if !param_locs(cx, a, p, false, &mut out_args) {
            return;
        }
    }
    let mut out_rets = Vec::with_capacity(rets.len());
    for (r, p) in rets.iter().zip(c.ret_params) {
        if !param_locs(cx, r, p, true, &mut out_rets) {
            return;
        }
    }
    cx.emit(Op::Call {
        target: c.target,
        args: out_args.into(),
        rets: out_rets.into(),
        uni: mods.has("uni"),
    });
}

/// The callee operand resolved: a function with a body, a register holding a function's
/// address (with its prototype or `.calltargets`), or a body-less function (whose call is
/// emitted here: `None` then, as after a diagnostic).
fn callee_of<'a>(
    cx: &mut Cx<'a, '_, '_>,
    callee: &'a Operand,
    proto_op: Option<&'a Operand>,
    rets: &'a [Operand],
) -> Option<Callee<'a>> {
    let Operand::Symbol {
        name,
        component: None,
        span,
    } = callee
    else {
        cx.error(
            callee.span(),
            format!(
                "`call` needs a function name or register, found {}",
                super::operand_kind(callee)
            ),
            "not a function",
            "write the name of a `.func`, or a register holding its address",
        );
        return None;
    };
    match cx.resolve(name, None) {
        Named::Func(id) => direct_callee(cx, id, name, *span, proto_op),
        Named::Bodiless => {
            extern_call(cx, &name.name, *span, rets);
            None
        }
        Named::Local(Local::Reg { id, ty, vector: 1 })
            if types::is_int(ty) && matches!(types::size(ty), 4 | 8) =>
        {
            indirect_callee(cx, id, proto_op)
        }
        Named::Undefined => {
            cx.error(
                *span,
                format!("undefined function `{}`", name.name),
                "no such function",
                format!(
                    "declare `.func {}` in this module (or fix the name)",
                    name.name
                ),
            );
            None
        }
        _ => {
            cx.error(
                *span,
                format!("`{}` is not a function", name.name),
                "not a function",
                "call a `.func` or a register holding a function address",
            );
            None
        }
    }
}

/// A direct call of function `id`: no prototype, and not a kernel.
fn direct_callee<'a>(
    cx: &mut Cx<'a, '_, '_>,
    id: crate::program::FuncId,
    name: &'a ptx_parser::Ident,
    span: ptx_parser::Span,
    proto_op: Option<&'a Operand>,
) -> Option<Callee<'a>> {
    if proto_op.is_some() {
        cx.error(
            cx.ins.span,
            "a direct call takes no prototype",
            "unexpected prototype",
            "drop the prototype operand",
        );
        return None;
    }
    let sig = cx.f.m.signatures.get(&*name.name).copied()?;
    if sig.kind == ptx_parser::FunctionKind::Entry {
        cx.error(
            span,
            format!("`{}` is a kernel and cannot be called", name.name),
            "`.entry`",
            "call a `.func`; kernels are launched from the host (thesis 5.1.3 step 3)",
        );
        return None;
    }
    Some(Callee {
        target: CallTarget::Direct(id),
        ret_params: &sig.return_params[..],
        params: &sig.params[..],
        name: name.name.as_str().to_owned(),
    })
}

/// An indirect call through register `reg`: its last operand names a `.callprototype` (the
/// candidates are filled in once every function's address-taking is known) or a
/// `.calltargets` list (the listed functions, sharing the first one's signature).
fn indirect_callee<'a>(
    cx: &mut Cx<'a, '_, '_>,
    reg: RegId,
    proto_op: Option<&'a Operand>,
) -> Option<Callee<'a>> {
    let Some(Operand::Symbol { name: pname, .. }) = proto_op else {
        cx.error(cx.ins.span, "an indirect call needs a `.callprototype` label as its last operand", "missing prototype", "declare `proto: .callprototype (...) _ (...);` and write `call (rets), %rd, (args), proto;`");
        return None;
    };
    if let Some(proto) = cx.f.env.prototype(cx.scope, &pname.name) {
        return Some(Callee {
            target: CallTarget::Indirect {
                reg,
                candidates: Box::new([]),
            },
            ret_params: &proto.return_params[..],
            params: &proto.params[..],
            name: format!("prototype `{}`", pname.name),
        });
    }
    let Some((list, true)) = cx.f.env.target_list(cx.scope, &pname.name) else {
        cx.error(
            pname.span,
            format!("undefined call prototype `{}`", pname.name),
            "no `.callprototype` of that name",
            format!(
                "declare `{}: .callprototype (...) _ (...);` in this function",
                pname.name
            ),
        );
        return None;
    };
    let mut cands = Vec::new();
    for t in &list.targets {
        match cx.f.m.functions.get(&*t.name) {
            Some(&f) => cands.push(f),
            None => {
                cx.error(
                    t.span,
                    format!("undefined function `{}` in `.calltargets`", t.name),
                    "no such function",
                    "list `.func`s with bodies in this module",
                );
                return None;
            }
        }
    }
    let Some(sig) = list
        .targets
        .first()
        .and_then(|t| cx.f.m.signatures.get(&*t.name).copied())
    else {
        cx.error(
            list.span,
            "empty `.calltargets` list",
            "no targets",
            "list at least one function",
        );
        return None;
    };
    Some(Callee {
        target: CallTarget::Indirect {
            reg,
            candidates: cands.into(),
        },
        ret_params: &sig.return_params[..],
        params: &sig.params[..],
        name: format!("call targets `{}`", pname.name),
    })
}

/// As many arguments and return values as the callee declares, except in the thesis's lowered
/// form (Listings 5.2, 5.3 after step 3): `call f;` to a function whose parameters are
/// `.local` frame slots the caller filled through `%stackBase`.
fn call_arity_ok(
    cx: &mut Cx<'_, '_, '_>,
    c: &Callee<'_>,
    args: &[Operand],
    rets: &[Operand],
) -> bool {
    let (params, ret_params) = (c.params, c.ret_params);
    let lowered = args.is_empty()
        && rets.is_empty()
        && params
            .iter()
            .chain(ret_params)
            .all(|p| p.space == ptx_parser::StateSpace::Local);
    if !lowered && (rets.len() != ret_params.len() || args.len() != params.len()) {
        cx.error(
            cx.ins.span,
            format!(
                "call arity mismatch: {} takes {} argument(s) and returns {} value(s), but the call passes {} and receives {}",
                c.name,
                params.len(),
                ret_params.len(),
                args.len(),
                rets.len()
            ),
            "wrong number of arguments",
            format!("pass {} argument(s) and receive {} return value(s), as the declaration says", params.len(), ret_params.len()),
        );
        return false;
    }
    true
}

/// A call to a function declared without a body (`.extern .func` or a prototype only): PTX
/// cannot say what it does, so the launch says what it returns (`extern_calls` in the launch
/// file; without it the launch is refused, naming the function). The call is an
/// [`Op::Extern`] on the function's result slot, a `.const` variable the launch initialises: the
/// fixed value, or, when the launch gives a set of values, each lane's own pick of the set (a
/// scheduler choice). The arguments are not evaluated (they have no effects) and memory is not
/// written.
fn extern_call(cx: &mut Cx<'_, '_, '_>, name: &str, span: ptx_parser::Span, rets: &[Operand]) {
    let Some((k, slot)) =
        cx.f.m
            .extern_slots
            .iter()
            .enumerate()
            .find(|(_, s)| s.name == name)
    else {
        cx.unsupported(Gap::ExternCalls);
        return;
    };
    let (address, ty) = (slot.address, slot.ty);
    let Some(sig) = cx.f.m.signatures.get(name).copied() else {
        cx.unsupported(Gap::ExternCalls);
        return;
    };
    let ret_params = &sig.return_params;
    if ret_params.len() > 1
        || ret_params
            .first()
            .is_some_and(|p| p.ty.vector > 1 || !p.array.is_empty() || types::size(p.ty.scalar) > 8)
    {
        cx.error(
            span,
            format!("`{name}` has no body and returns more than one scalar"),
            "body-less function with a wide result",
            "cudasem gives a body-less function one scalar result (launch file `extern_calls`); give the function a body",
        );
        return;
    }
    if rets.len() != ret_params.len() {
        cx.error(
            span,
            format!(
                "call arity mismatch: `{name}` returns {} value(s), the call receives {}",
                ret_params.len(),
                rets.len()
            ),
            "wrong number of results",
            "receive as many values as the declaration returns",
        );
        return;
    }
    cx.f.extern_called.insert(k);
    let (Some(r), Some(p)) = (rets.first(), ret_params.first()) else {
        // Nothing returned: the call has no effect (the launch still states the policy).
        cx.emit(Op::Nop);
        return;
    };
    let load = |dst| Op::Extern {
        dst,
        ty,
        slot: address,
    };
    match param_loc(cx, r, p, true) {
        Some(ParamLoc::Reg(dst)) => cx.emit(load(dst)),
        Some(ParamLoc::Frame { offset, .. }) => {
            let t = match cx.f.env.new_register("%extern.result", ty, 1, span) {
                Ok(t) => t,
                Err(d) => {
                    cx.push_diag(d);
                    return;
                }
            };
            cx.emit(load(t));
            let qual = crate::program::MemQualifiers {
                order: crate::program::MemOrder::Weak,
                scope: None,
                cache: None,
                non_coherent: false,
            };
            let src = Box::new([crate::program::Src::Reg(t)]);
            cx.emit(Op::St {
                space: crate::program::Space::Param,
                qual,
                ty,
                vector: 1,
                src,
                addr: crate::program::Address {
                    base: crate::program::AddrBase::Frame,
                    offset: offset as i64,
                },
            });
        }
        Some(ParamLoc::Imm(_)) | None => {}
    }
}

/// Where a call's argument or return operand lives in the caller, appended to `out`: one
/// location, or for a `.reg .vN` parameter its N components (from a `.vN` register or a
/// `{a, b, ...}` list; PTX ISA 9.7.14.3 `call`). False after reporting an error.
fn param_locs(
    cx: &mut Cx<'_, '_, '_>,
    op: &Operand,
    p: &Param,
    is_ret: bool,
    out: &mut Vec<ParamLoc>,
) -> bool {
    let n = p.ty.vector;
    if p.space != ptx_parser::StateSpace::Reg || n <= 1 {
        return match param_loc(cx, op, p, is_ret) {
            Some(l) => {
                out.push(l);
                true
            }
            None => false,
        };
    }
    let ty = p.ty.scalar;
    match op {
        Operand::Vector(items, span) => {
            if items.len() != n as usize {
                cx.error(
                    *span,
                    format!(
                        "the parameter `{}` is a `.v{n}` vector, but {} element(s) are passed",
                        p.name.name,
                        items.len()
                    ),
                    "wrong vector length",
                    format!("pass {n} registers in braces, or a `.v{n}` register"),
                );
                return false;
            }
            for item in items {
                let loc = match item {
                    Operand::Immediate(e) if !is_ret => cx.imm(e, ty).map(ParamLoc::Imm),
                    _ => cx
                        .reg_operand(item, Some(ty), is_ret, true)
                        .map(ParamLoc::Reg),
                };
                match loc {
                    Some(l) => out.push(l),
                    None => return false,
                }
            }
            true
        }
        Operand::Symbol {
            name,
            component: None,
            span,
        } => match cx.resolve(name, None) {
            Named::Local(Local::Reg {
                id,
                ty: rty,
                vector,
            }) if vector == n => {
                cx.check_ty(rty, ty, *span, &name.name, true);
                out.extend((0..n as u16).map(|k| ParamLoc::Reg(RegId(id.0 + k))));
                true
            }
            _ => {
                cx.error(
                    *span,
                    format!(
                        "the parameter `{}` is a `.v{n}` vector; `{}` is not a `.v{n}` register",
                        p.name.name, name.name
                    ),
                    "not a matching vector",
                    format!("pass a `.v{n}` register or {n} registers in braces"),
                );
                false
            }
        },
        other => {
            cx.error(
                other.span(),
                format!(
                    "the parameter `{}` is a `.v{n}` vector; pass a `.v{n}` register or braces",
                    p.name.name
                ),
                "not a vector",
                format!("pass a `.v{n}` register or {n} registers in braces"),
            );
            false
        }
    }
}

/// Where a call's scalar argument or return operand lives in the caller.
fn param_loc(cx: &mut Cx<'_, '_, '_>, op: &Operand, p: &Param, is_ret: bool) -> Option<ParamLoc> {
    match op {
        Operand::Symbol {
            name,
            component,
            span,
        } => match cx.resolve(name, *component) {
            Named::Local(Local::Frame { offset, size, .. }) => {
                Some(ParamLoc::Frame { offset, size })
            }
            Named::Local(Local::Reg { vector, .. }) if vector > 1 && component.is_none() => {
                cx.error(
                    *span,
                    format!(
                        "the `.v{vector}` register `{}` is passed to the scalar parameter `{}`",
                        name.name, p.name.name
                    ),
                    "vector for a scalar",
                    format!("pass one component (e.g. `{}.x`), or declare the parameter `.reg .v{vector}`", name.name),
                );
                None
            }
            Named::Local(Local::Reg { .. }) if p.ty.vector > 1 => {
                cx.error(
                    *span,
                    format!(
                        "the `.param` vector parameter `{}` needs a `.param` variable, not the register `{}`",
                        p.name.name, name.name
                    ),
                    "register for a vector parameter",
                    "declare `.param .vN .TYPE arg;`, store the components with `st.param.vN`, and pass `arg`",
                );
                None
            }
            Named::Local(Local::Reg { .. }) => {
                let ty = p.ty.scalar;
                cx.reg_operand(op, Some(ty), is_ret, true)
                    .map(ParamLoc::Reg)
            }
            Named::Undefined => {
                cx.error(
                    *span,
                    format!("undefined name `{}`", name.name),
                    "not declared in this scope",
                    format!(
                        "declare `.param .b32 {};` (or a register) before the call",
                        name.name
                    ),
                );
                None
            }
            _ => {
                cx.error(
                    *span,
                    format!("`{}` cannot be passed to a call", name.name),
                    "not a parameter or register",
                    "pass a `.param` variable declared in this function, or a register",
                );
                None
            }
        },
        Operand::Immediate(e) if !is_ret => cx.imm(e, p.ty.scalar).map(ParamLoc::Imm),
        other => {
            cx.error(
                other.span(),
                format!(
                    "{} cannot be a call {}",
                    super::operand_kind(other),
                    if is_ret { "result" } else { "argument" }
                ),
                "wrong kind of operand",
                "pass a `.param` variable or a register",
            );
            None
        }
    }
}
