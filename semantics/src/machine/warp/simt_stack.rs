//! The thesis's branching algorithm (seed 003, 5.4.1; digest §5): one warp step under the SIMT
//! stack model, with the CRS rules (`ssy preBrk preRet sync brk_* ret_* exit_* bra_* call_*
//! next`) and `unwind`/`enable`/`α \ δ`.
//!
//! Thesis-dialect functions (`Function::explicit_reconvergence`) follow their `ssy sync brk preBrk
//! preRet` exactly. Ordinary PTX gets the same stack discipline from the program's reconvergence
//! points (deviations from the thesis, documented in the report and ARCHITECTURE.md):
//! * D1 at a divergent conditional or indirect branch at `pc` with reconvergence point `r =
//!   Program::reconvergence[pc]`, a sync token `(sync, α, r)` is pushed unless the top token is
//!   already that point's sync token, then the diverge token (the thesis's `ssy` + bra_guard in one
//!   step: two pushes in one step, digest §13 item 9 is relaxed for ordinary PTX);
//! * D2 while the top token's reconvergence point is the warp's pc, the warp's next step is an
//!   implicit `sync` (rule `sync_ipdom`) instead of the instruction; for a diverge token the point
//!   is the one of the branch that pushed it; `None` = the paths meet at return/exit only;
//! * D3 a `call` in ordinary PTX pushes `(call, α, pc+1)` first (the implicit `preRet`), except
//!   when re-executed after a `call_target` diverge token ("retry");
//! * D4 `call_target` (indirect call, several targets) pushes the callee frame for the chosen
//!   group only, at the warp step (digest §16 item 6, fix (a)): no double frame push;
//! * D5 target groups are ordered by ascending target address; `Target{k}` picks group k;
//! * D6 `ret` at call depth 0 (a kernel's `ret`) is `exit` (thesis 5.1.3 step 5);
//! * D7 flat memory: register writes complete in the step (no blocked registers, thesis 4.x RegReq);
//!   `membar`/`bar.sync` membar levels complete at once (`updMemBar` is immediate).

use super::super::ErrorKind;
use super::super::block::{BlockShared, arrive, barrier};
use super::super::exec::{Ctx, Fault, data_rule, exec_data, read_src};
use super::calls::{enter, leave};
use super::{SimtState, SimtToken, Warp, lanes};
use crate::program::{BarrierKind, CallTarget, Op, ParamLoc, Pc, Program};
use std::sync::Arc;
use traces::{Event, Rule, TokenKind};

/// How the lanes' own pcs move in a step (the →Θpc rules of thesis 6.3.1, for the monitor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Every active lane to pc+1 (data, comm, ssy/preBrk/preRet, explicit sync, next).
    Seq,
    /// The implicit sync of ordinary PTX: no lane moves.
    VirtualSync,
    /// bra/call: executing lanes in `taken` go to `target`; with `split` (target peeling) the
    /// other active lanes are reset to the branch (thesis `reset`), else to pc+1.
    Jump { target: Pc, taken: u64, split: bool },
    /// brk: executing lanes go to the topmost break token's pc.
    Brk,
    /// ret: executing lanes go to the topmost call token's pc.
    Ret,
    /// exit (or a kernel's ret): executing lanes end.
    Exit,
}

/// What the machine needs to know after a warp step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outcome {
    pub pc: Pc,
    pub exec: u64,
    pub flow: Flow,
    /// Barriers arrived at (bit per index).
    pub arrived: u16,
    /// Lanes that exited in this step.
    pub exited: u64,
}

/// The SIMT stack ran out of tokens while lanes still wait for a break or return target: the
/// branching algorithm's invariant inv1 (thesis 6.4) does not hold, a bug in cudasem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("stack underflow: lanes {lanes:#x} wait for break/return with an empty token stack")]
pub(crate) struct StackUnderflow {
    pub lanes: u64,
}

/// `enable(α, δ, s)` then `α \ δ` (thesis 5.4.1 `updExecState`): pops tokens until one activates
/// a lane (`unwind`). Returns whether the warp completed.
pub(crate) fn unwind(w: &mut Warp) -> Result<bool, StackUnderflow> {
    let real = w.real;
    let s = w.simt_mut();
    loop {
        let Some(tok) = s.stack.pop() else {
            let all = real | s.dis.exit;
            return if s.dis.exit == all && s.dis.brk == 0 && s.dis.ret == 0 {
                s.active = 0;
                w.completed = true;
                Ok(true)
            } else {
                Err(StackUnderflow {
                    lanes: (s.dis.brk | s.dis.ret) & !s.dis.exit,
                })
            };
        };
        let mut dis = s.dis;
        match tok.kind {
            TokenKind::Call => dis.ret &= !tok.mask,
            TokenKind::Break => dis.brk &= !tok.mask,
            TokenKind::Sync | TokenKind::Diverge => {}
        }
        let alpha = tok.mask & !dis.any();
        if alpha != 0 {
            s.pc = tok.pc;
            s.active = alpha;
            s.dis = dis;
            s.retry = tok.retry;
            return Ok(false);
        }
    }
}

/// Evaluates the guard of the instruction at the warp pc for the active lanes (→Θe).
#[inline]
pub(crate) fn guard_mask(program: &Program, w: &Warp, mask: u64, level: usize, pc: Pc) -> u64 {
    let Some(instr) = program.instructions.get(pc as usize) else {
        return 0;
    };
    match instr.guard {
        None => mask,
        Some(g) => {
            let regs = &w.levels[level].regs;
            match regs.row(g.reg.0 as usize) {
                // The whole column at once (branch-free, vectorisable), then the lanes of `mask`.
                Some(col) => {
                    let mut set = 0u64;
                    for (l, &v) in col.iter().enumerate() {
                        set |= ((v != 0) as u64) << l;
                    }
                    (if g.negated { !set } else { set }) & mask
                }
                None => {
                    let mut out = 0;
                    for l in lanes(mask) {
                        if (regs.get(g.reg.0 as usize, l).unwrap_or(0) != 0) != g.negated {
                            out |= 1 << l;
                        }
                    }
                    out
                }
            }
        }
    }
}

/// Per-lane targets of the branch/call at `pc` for the `exec` lanes, as distinct sorted groups
/// `(target pc, lanes)`; `Err` names a lane with an invalid target.
pub(crate) fn target_groups(
    cx_program: &Program,
    w: &Warp,
    level: usize,
    exec: u64,
    op: &Op,
    out: &mut smallvec::SmallVec<[(Pc, u64); 4]>,
) -> Result<(), (usize, String)> {
    out.clear();
    // A direct target: one group (the common case, without the per-lane search).
    let direct = match op {
        Op::Bra { target, .. } => Some(*target),
        Op::Call {
            target: CallTarget::Direct(f),
            ..
        } => Some(cx_program.function(*f).start),
        _ => None,
    };
    if let Some(t) = direct {
        if exec != 0 {
            out.push((t, exec));
        }
        return Ok(());
    }
    let regs = &w.levels[level].regs;
    for l in lanes(exec) {
        let t = match op {
            Op::Bra { target, .. } => *target,
            Op::BraIndirect { index, targets, .. } => {
                let i = match index {
                    crate::program::Src::Reg(r) => regs.at(r.0 as usize, l),
                    crate::program::Src::Imm(v) => *v,
                    _ => 0,
                };
                match targets.get(i as usize) {
                    Some(t) => *t,
                    None => {
                        return Err((
                            l,
                            format!("brx.idx index {i} is outside its {} targets", targets.len()),
                        ));
                    }
                }
            }
            Op::Call {
                target: CallTarget::Direct(f),
                ..
            } => cx_program.function(*f).start,
            Op::Call {
                target: CallTarget::Indirect { reg, .. },
                ..
            } => {
                let v = regs.at(reg.0 as usize, l);
                match cx_program.function_at(v) {
                    Some(f) => cx_program.function(f).start,
                    None => {
                        return Err((
                            l,
                            format!(
                                "indirect call through {v:#x}, which is not a function address"
                            ),
                        ));
                    }
                }
            }
            _ => return Ok(()),
        };
        match out.iter_mut().find(|(p, _)| *p == t) {
            Some((_, m)) => *m |= 1 << l,
            None => out.push((t, 1 << l)),
        }
    }
    out.sort_unstable_by_key(|(p, _)| *p);
    Ok(())
}

/// Number of `Target` choices of the warp's next step (0 when it is an ordinary `Warp` step).
pub(crate) fn pending_targets(program: &Program, w: &Warp) -> u32 {
    let s = w.simt();
    if w.completed || s.active == 0 {
        return 0;
    }
    if s.stack.last().is_some_and(|t| t.reconv == Some(s.pc)) {
        return 0;
    }
    let Some(instr) = program.instructions.get(s.pc as usize) else {
        return 0;
    };
    match &instr.op {
        Op::BraIndirect { .. }
        | Op::Call {
            target: CallTarget::Indirect { .. },
            ..
        } => {
            let level = w.active_level();
            let exec = guard_mask(program, w, s.active, level, s.pc);
            let mut groups = smallvec::SmallVec::new();
            match target_groups(program, w, level, exec, &instr.op, &mut groups) {
                Ok(()) if groups.len() > 1 => groups.len() as u32,
                _ => 0,
            }
        }
        _ => 0,
    }
}

fn stuck(lane: Option<usize>, msg: impl Into<String>) -> Fault {
    Fault::new(ErrorKind::Stuck, lane, msg)
}

/// Pushes the sync token of ordinary PTX for a divergence at `pc` (D1).
fn push_implicit_sync(program: &Program, s: &mut SimtState, pc: Pc) -> Option<Pc> {
    let r = program.reconvergence.get(pc as usize).copied().flatten();
    if let Some(r) = r {
        let top_is_r = s
            .stack
            .last()
            .is_some_and(|t| t.kind == TokenKind::Sync && t.pc == r && t.reconv == Some(r));
        if !top_is_r {
            s.stack.push(SimtToken {
                kind: TokenKind::Sync,
                mask: s.active,
                pc: r,
                reconv: Some(r),
                retry: false,
            });
        }
    }
    r
}

/// What the CRS rules of one warp step read: the warp before the step and the instruction's
/// lanes.
struct Here {
    /// The warp's pc and active mask α before the step.
    pc: Pc,
    alpha: u64,
    /// The active lanes whose guard holds (the thread rules' `wl⃗`).
    exec: u64,
    /// `uni(α, wl⃗)`: every active lane executes.
    uni: bool,
    /// The call depth of the active lanes.
    level: usize,
    /// The function follows the thesis's dialect (explicit `ssy sync brk preBrk preRet`).
    explicit: bool,
    /// The step re-executes a `call` after a `call_target` diverge token (D3).
    retry: bool,
    /// The target group a `Target` choice picked.
    k: Option<u32>,
}

/// The rules a step applied, warp rule first (the derivation below the warp layer).
type Rules = [Rule; 3];

/// One warp step under the SIMT stack (warp rules (bra)/(comm)/(mem), thesis 5.4.3): the implicit
/// sync of a reconvergence point, else the instruction's CRS rule (or thread rule for data,
/// memory and communication instructions). `k`: the target group chosen by a `Target` choice.
pub(crate) fn step(
    cx: &mut Ctx,
    bk: &mut BlockShared,
    w: &mut Warp,
    k: Option<u32>,
    exited_warps_arrive: bool,
) -> Result<Outcome, Fault> {
    let _ = exited_warps_arrive;
    let s = w.simt_mut();
    let retry = std::mem::take(&mut s.retry);
    let (pc, alpha) = (s.pc, s.active);
    let mut out = Outcome {
        pc,
        exec: 0,
        flow: Flow::Seq,
        arrived: 0,
        exited: 0,
    };
    if s.stack.last().is_some_and(|t| t.reconv == Some(pc)) {
        sync_ipdom(w, &mut out)?;
        record(cx, w, &out, &[Rule::WarpBra, Rule::SyncImplicit]);
        return Ok(out);
    }
    let program = cx.program;
    let op = &locate(program, w)?.op;
    let level = w.active_level();
    let func = w.levels[level].func[alpha.trailing_zeros() as usize];
    let exec = guard_mask(program, w, alpha, level, pc);
    out.exec = exec;
    let h = Here {
        pc,
        alpha,
        exec,
        uni: exec == alpha,
        level,
        explicit: program.function(func).explicit_reconvergence,
        retry,
        k,
    };
    let rules = match op {
        Op::Bra { .. } | Op::BraIndirect { .. } | Op::Call { .. } if exec == 0 => {
            next(w.simt_mut(), &h, Rule::Bra)
        }
        Op::Bra { .. } | Op::BraIndirect { .. } => bra(cx, w, &h, op, &mut out)?,
        Op::Call { args, .. } => call(cx, w, &h, op, args, &mut out)?,
        Op::Ret | Op::Exit | Op::Brk if exec == 0 => next(w.simt_mut(), &h, Rule::Nop),
        Op::Brk => brk(w, &h, &mut out)?,
        Op::Ret if level > 0 => ret(cx, w, &h, &mut out)?,
        Op::Ret | Op::Exit => exit(w, &h, &mut out)?,
        _ if exec == 0 => next(w.simt_mut(), &h, Rule::Nop),
        Op::Ssy { target } => push_token(w.simt_mut(), &h, TokenKind::Sync, *target, Rule::Ssy),
        Op::PreBrk { target } => {
            push_token(w.simt_mut(), &h, TokenKind::Break, *target, Rule::PreBrk)
        }
        Op::PreRet { target } => {
            push_token(w.simt_mut(), &h, TokenKind::Call, *target, Rule::PreRet)
        }
        Op::Sync => sync(w, &h)?,
        Op::Barrier {
            kind, id, count, ..
        } => bar(cx, bk, w, &h, (kind, id, count.as_ref()), &mut out)?,
        op => {
            exec_data(cx, w, level, exec, alpha, func, op)?;
            w.simt_mut().pc = pc + 1;
            let (a, b) = data_rule(op);
            [a, b, b]
        }
    };
    if cx.observing() {
        let r: &[Rule] = if rules[1] == rules[2] {
            &rules[..2]
        } else {
            &rules
        };
        record(cx, w, &out, r);
    }
    Ok(out)
}

/// The instruction at the warp's pc, which must lie in the body of its lanes' function.
fn locate<'p>(program: &'p Program, w: &Warp) -> Result<&'p crate::program::Instr, Fault> {
    let s = w.simt();
    let pc = s.pc;
    let Some(instr) = program.instructions.get(pc as usize) else {
        return Err(stuck(
            None,
            format!(
                "pc {pc} is outside the program ({} instructions)",
                program.instructions.len()
            ),
        ));
    };
    let level = w.active_level();
    let func = w.levels[level].func[s.active.trailing_zeros() as usize];
    let f = program.function(func);
    if !(f.start <= pc && pc < f.end) {
        return Err(stuck(
            None,
            format!(
                "pc {pc} is outside the body of `{}` (a branch left its function)",
                f.name
            ),
        ));
    }
    Ok(instr)
}

/// (next), thesis 5.4.1: `ς —ε→CRS ⟨active, ς ◁ pc+1⟩`: no lane executes the instruction (its
/// guard is false in every active lane), the warp moves on. `thread`: the thread rule named in
/// the derivation.
fn next(s: &mut SimtState, h: &Here, thread: Rule) -> Rules {
    s.pc = h.pc + 1;
    [Rule::WarpBra, Rule::Next, thread]
}

/// (sync_ipdom), cudasem's D2: when the top token's pc is the warp's pc (a reconvergence point,
/// the immediate post-dominator of a divergent branch of ordinary PTX), the step is (sync)
/// instead of the instruction: `ς —sync→CRS unwind(ς)`. It replaces the explicit `sync` the
/// thesis's compiler would inject.
fn sync_ipdom(w: &mut Warp, out: &mut Outcome) -> Result<(), Fault> {
    let alpha = w.simt().active;
    unwind(w).map_err(|e| stuck(None, e.to_string()))?;
    out.flow = Flow::VirtualSync;
    out.exec = alpha;
    Ok(())
}

/// `bra` with some lanes executing: (bra_target) when they go to several targets, else
/// (bra_uni) or (bra_guard) (thesis 5.4.1).
fn bra(cx: &mut Ctx, w: &mut Warp, h: &Here, op: &Op, out: &mut Outcome) -> Result<Rules, Fault> {
    let mut groups = smallvec::SmallVec::<[(Pc, u64); 4]>::new();
    target_groups(cx.program, w, h.level, h.exec, op, &mut groups)
        .map_err(|(l, m)| stuck(Some(l), m))?;
    let rule = if groups.len() > 1 {
        let (t, taken) = bra_target(cx.program, w.simt_mut(), h, &groups)?;
        out.flow = Flow::Jump {
            target: t,
            taken,
            split: true,
        };
        Rule::BraTarget
    } else {
        let t = groups[0].0;
        out.flow = Flow::Jump {
            target: t,
            taken: h.exec,
            split: false,
        };
        if h.uni {
            bra_uni(w.simt_mut(), t);
            Rule::BraUni
        } else {
            bra_guard(cx.program, w.simt_mut(), h, t);
            Rule::BraGuard
        }
    };
    Ok([Rule::WarpBra, rule, Rule::Bra])
}

/// (bra_uni), thesis 5.4.1: `⟨ς ▷ pc, α⟩ —bra wl1 pc1 … bra wln pcn→ ⟨active, ς ◁ pc1⟩` if
/// `uni(α, wl⃗, pc⃗)`: every active lane branches to one target.
fn bra_uni(s: &mut SimtState, target: Pc) {
    s.pc = target;
}

/// (bra_guard), thesis 5.4.1 (reconstructed: the thesis gives it in prose; the taken path runs
/// first): `⟨ς ▷ pc, α, τ⃗⟩ —bra wl⃗ pc⃗→ ⟨active, ς ◁ pc1, taken(wp⃗, pc1), (diverge,
/// notTaken(α, wp⃗, pc1), pc+1) :: τ⃗⟩` if `¬uni(α, wl⃗) ∧ ∀i,j. pc_i = pc_j`. For ordinary PTX
/// the sync token of the branch's reconvergence point is pushed first (D1).
fn bra_guard(program: &Program, s: &mut SimtState, h: &Here, target: Pc) {
    diverge(program, s, h, (target, h.exec), (h.pc + 1, false));
}

/// The divergence of (bra_guard) and (bra_target): the `taken` lanes go on at `target`, the
/// other active lanes wait on a diverge token that resumes them at `resume` (`retry`: the
/// branch itself, re-executed); for ordinary PTX the branch's reconvergence point's sync token
/// goes below it (D1).
fn diverge(
    program: &Program,
    s: &mut SimtState,
    h: &Here,
    (target, taken): (Pc, u64),
    (resume, retry): (Pc, bool),
) {
    let r = if h.explicit {
        None
    } else {
        push_implicit_sync(program, s, h.pc)
    };
    s.stack.push(SimtToken {
        kind: TokenKind::Diverge,
        mask: h.alpha & !taken,
        pc: resume,
        reconv: r,
        retry,
    });
    s.active = taken;
    s.pc = target;
}

/// The target group `k` of `groups` (a `Target` choice picks it; 0 without one).
fn chosen_group(h: &Here, groups: &[(Pc, u64)]) -> Result<(Pc, u64), Fault> {
    let kk = h.k.unwrap_or(0) as usize;
    groups.get(kk).copied().ok_or_else(|| {
        stuck(
            None,
            format!("target group {kk} of {} requested", groups.len()),
        )
    })
}

/// (bra_target), thesis 5.4.1 (reconstructed): `⟨ς ▷ pc, α, τ⃗⟩ —bra wl⃗ pc⃗→ ⟨active, ς ◁
/// pc_k, taken(wp⃗, pc_k), (diverge, notTaken(α, wp⃗, pc_k), pc) :: τ⃗⟩` if `∃i,j. pc_i ≠ pc_j ∧
/// k ∈ {1..n}` (k: a nondeterministic choice, the `Target` choice; groups in ascending address
/// order, D5). The diverge token re-executes the branch for the other lanes. D1 as for
/// (bra_guard). Returns the chosen group's target and lanes.
fn bra_target(
    program: &Program,
    s: &mut SimtState,
    h: &Here,
    groups: &[(Pc, u64)],
) -> Result<(Pc, u64), Fault> {
    let (t, taken) = chosen_group(h, groups)?;
    diverge(program, s, h, (t, taken), (h.pc, true));
    Ok((t, taken))
}

/// `call` with some lanes executing (thesis 5.4.1): (call_target) when they call several
/// functions, else (call_uni) `⟨ς ▷ pc, α⟩ —call wl1 pc1 … call wln pcn→ ⟨active, ς ◁ pc1⟩` if
/// `uni(α, wl⃗, pc⃗)`, or (call_guard) `⟨ς ▷ pc, α⟩ —call wl⃗ pc⃗→ ⟨active, ς ◁ pc1, taken(wp⃗,
/// pc1)⟩` if `¬uni(α, wl⃗) ∧ ∀i,j. pc_i = pc_j` (no token: the call token resumes the others).
/// Ordinary PTX has no `preRet`: the call pushes `(call, α, pc+1)` itself (D3), except when a
/// `call_target` diverge token re-executes it. The callee's frame is pushed for the calling
/// lanes (the thread rule (call)).
fn call(
    cx: &mut Ctx,
    w: &mut Warp,
    h: &Here,
    op: &Op,
    args: &[ParamLoc],
    out: &mut Outcome,
) -> Result<Rules, Fault> {
    let program = cx.program;
    let mut groups = smallvec::SmallVec::<[(Pc, u64); 4]>::new();
    target_groups(program, w, h.level, h.exec, op, &mut groups)
        .map_err(|(l, m)| stuck(Some(l), m))?;
    if h.explicit {
        // stack-cons₆: a call token returning to pc+1 (from preRet) must be on the stack.
        if !w
            .simt()
            .stack
            .iter()
            .any(|t| t.kind == TokenKind::Call && t.pc == h.pc + 1)
        {
            return Err(stuck(
                None,
                "call without a preceding preRet to the next instruction (stack consistency 6)",
            ));
        }
    } else if !h.retry {
        // D3: the implicit preRet.
        w.simt_mut().stack.push(SimtToken {
            kind: TokenKind::Call,
            mask: h.alpha,
            pc: h.pc + 1,
            reconv: None,
            retry: false,
        });
    }
    let (t, taken, rule) = if groups.len() > 1 {
        let (t, taken) = call_target(w.simt_mut(), h, &groups)?;
        (t, taken, Rule::CallTarget)
    } else if h.uni {
        (groups[0].0, h.exec, Rule::CallUni)
    } else {
        (groups[0].0, h.exec, Rule::CallGuard)
    };
    let callee = program
        .function_of(t)
        .ok_or_else(|| stuck(None, format!("call target {t} is not a function")))?;
    for l in lanes(taken) {
        enter(cx, w, l, callee, h.pc, args)?;
    }
    w.simt_mut().active = taken;
    w.simt_mut().pc = t;
    out.flow = Flow::Jump {
        target: t,
        taken,
        split: groups.len() > 1,
    };
    Ok([Rule::WarpBra, rule, Rule::Call])
}

/// (call_target), thesis 5.4.1: `⟨ς ▷ pc, α, τ⃗⟩ —call wl⃗ pc⃗→ ⟨active, ς ◁ pc_k, taken(wp⃗,
/// pc_k), (diverge, notTaken(α, wp⃗, pc_k), pc) :: τ⃗⟩` if `∃i,j. pc_i ≠ pc_j ∧ k ∈ {1..n}`.
/// Only the chosen group enters its callee in this step (D4: the thesis's double frame push
/// fixed); the diverge token re-executes the call for the others (D3, D5).
fn call_target(s: &mut SimtState, h: &Here, groups: &[(Pc, u64)]) -> Result<(Pc, u64), Fault> {
    let (t, taken) = chosen_group(h, groups)?;
    s.stack.push(SimtToken {
        kind: TokenKind::Diverge,
        mask: h.alpha & !taken,
        pc: h.pc,
        reconv: None,
        retry: true,
    });
    Ok((t, taken))
}

/// The executing lanes leave α (`α[wl⃗ ↦ inactive]`); then (x_uni) `unwind(ς)` if `uni(α, wl⃗)`,
/// else (x_div) `⟨active, ς ◁ pc+1⟩`: the rest of the warp goes on.
fn uni_or_div(w: &mut Warp, h: &Here, [uni, div, thread]: Rules) -> Result<Rules, Fault> {
    w.simt_mut().active &= !h.exec;
    if h.uni {
        unwind(w).map_err(|e| stuck(None, e.to_string()))?;
        Ok([Rule::WarpBra, uni, thread])
    } else {
        w.simt_mut().pc = h.pc + 1;
        Ok([Rule::WarpBra, div, thread])
    }
}

/// (brk_uni) `⟨ς ▷ α, δ⟩ —break wl⃗→ unwind(ς ◁ α[wl⃗ ↦ inactive], δ[wl⃗ ↦ break])` if
/// `uni(α, wl⃗)`; (brk_div) `⟨ς ▷ pc, α, δ⟩ —break wl1..wln→ ⟨active, ς ◁ pc+1, α[wl⃗ ↦
/// inactive], δ[wl⃗ ↦ break]⟩` if `¬uni(α, wl⃗)` (thesis 5.4.1). A break token must be on the
/// stack (stack consistency 1).
fn brk(w: &mut Warp, h: &Here, out: &mut Outcome) -> Result<Rules, Fault> {
    if !w.simt().stack.iter().any(|t| t.kind == TokenKind::Break) {
        return Err(stuck(
            Some(h.exec.trailing_zeros() as usize),
            "brk without a break token on the stack (stack consistency 1)",
        ));
    }
    w.simt_mut().dis.brk |= h.exec;
    out.flow = Flow::Brk;
    uni_or_div(w, h, [Rule::BrkUni, Rule::BrkDiv, Rule::Break])
}

/// (ret_uni) `⟨ς ▷ α, δ⟩ —return wl⃗→ unwind(ς ◁ α[wl⃗ ↦ inactive], δ[wl⃗ ↦ return])` if
/// `uni(α, wl⃗)`, where `updExecState(ς ▷ δ, (call, α, pc) :: τ⃗) = ς ◁ pc, α\δ', δ', τ⃗` with
/// `δ' = enable(α, δ, return)`; (ret_div) `⟨ς ▷ pc, α, δ⟩ —return wl⃗→ ⟨active, ς ◁ pc+1,
/// α[wl⃗ ↦ inactive], δ[wl⃗ ↦ return]⟩` if `¬uni(α, wl⃗)` (thesis 5.4.1). The returning lanes pop
/// their frames (the thread rule (ret)); a call token must be on the stack (stack consistency
/// 2). A kernel's `ret` (call depth 0) is `exit` (D6).
fn ret(cx: &mut Ctx, w: &mut Warp, h: &Here, out: &mut Outcome) -> Result<Rules, Fault> {
    if !w.simt().stack.iter().any(|t| t.kind == TokenKind::Call) {
        return Err(stuck(
            Some(h.exec.trailing_zeros() as usize),
            "ret without a call token on the stack (stack consistency 2)",
        ));
    }
    for l in lanes(h.exec) {
        leave(cx, w, l)?;
    }
    w.simt_mut().dis.ret |= h.exec;
    out.flow = Flow::Ret;
    uni_or_div(w, h, [Rule::RetUni, Rule::RetDiv, Rule::Ret])
}

/// (exit_uni) `⟨ς ▷ α, δ⟩ —exit wl⃗→ unwind(ς ◁ α[wl⃗ ↦ inactive], δ[wl⃗ ↦ exit])` if
/// `uni(α, wl⃗)`, with `unwind(ς ▷ pc, α, δ, ε) = (completed, ς)` if `∀wl. δ(wl) = exit`;
/// (exit_div) `⟨ς ▷ pc, α, δ⟩ —exit wl⃗→ ⟨active, ς ◁ pc+1, α[wl⃗ ↦ inactive], δ[wl⃗ ↦ exit]⟩`
/// if `¬uni(α, wl⃗)` (thesis 5.4.1). An exited lane is no longer waiting for a break or return.
fn exit(w: &mut Warp, h: &Here, out: &mut Outcome) -> Result<Rules, Fault> {
    let dis = &mut w.simt_mut().dis;
    dis.exit |= h.exec;
    dis.brk &= !h.exec;
    dis.ret &= !h.exec;
    w.exited |= h.exec;
    out.exited = h.exec;
    out.flow = Flow::Exit;
    uni_or_div(w, h, [Rule::ExitUni, Rule::ExitDiv, Rule::ExitThread])
}

/// (ssy) `⟨ς ▷ pc, α, τ⃗⟩ —ssy pc1 … ssy pcn→ ⟨active, ς ◁ pc+1, (sync, α, pc1) :: τ⃗⟩`, and
/// likewise (preBrk) with a break token and (preRet) with a call token, if `∀i,j. pc_i = pc_j`
/// (thesis 5.4.1). The token carries the full α (A26).
fn push_token(s: &mut SimtState, h: &Here, kind: TokenKind, target: Pc, rule: Rule) -> Rules {
    s.stack.push(SimtToken {
        kind,
        mask: h.alpha,
        pc: target,
        reconv: None,
        retry: false,
    });
    s.pc = h.pc + 1;
    [Rule::WarpBra, rule, rule]
}

/// (sync) `ς —sync … sync→CRS unwind(ς)` with `unwind(ς ▷ τ :: τ⃗) = (active, ς')` if `ς' ▷ α' =
/// updExecState(ς) ∧ ∃wl. α'(wl) = active` and `updExecState(ς ▷ δ, (sync|diverge, α, pc) ::
/// τ⃗) = ς ◁ pc, α\δ, τ⃗` (thesis 5.4.1). A sync or diverge token must be on top (stack
/// consistency 3).
fn sync(w: &mut Warp, h: &Here) -> Result<Rules, Fault> {
    match w.simt().stack.last() {
        Some(t) if matches!(t.kind, TokenKind::Sync | TokenKind::Diverge) => {}
        _ => {
            return Err(stuck(
                None,
                "sync without a sync or diverge token on top of the stack (stack consistency 3)",
            ));
        }
    }
    w.simt_mut().pc = h.pc + 1;
    unwind(w).map_err(|e| stuck(None, e.to_string()))?;
    Ok([Rule::WarpBra, Rule::Sync, Rule::Sync])
}

/// The warp rule (comm) for `bar.sync`/`bar.arrive`/`bar.red` (thesis 5.4.3): `comm(bar.sync _,
/// t⃗) = (⋃ t_barid, bar .sync ε t⃗)`, `comm(bar.red br _, t⃗) = (⋃ t_barid, bar .red br t⃗)`,
/// `comm(bar.arrive _, t⃗) = (ε, bar .arrive ε t⃗)`: the warp arrives at every barrier its lanes
/// name (the block's counting, `updArrCnt` of thesis 5.5.1, is `block::barrier::arrive`) and, except for
/// `bar.arrive`, waits for them.
fn bar(
    cx: &mut Ctx,
    bk: &mut BlockShared,
    w: &mut Warp,
    h: &Here,
    (kind, id, count): (
        &BarrierKind,
        &crate::program::Src,
        Option<&crate::program::Src>,
    ),
    out: &mut Outcome,
) -> Result<Rules, Fault> {
    let (level, exec) = (h.level, h.exec);
    let regs = &w.levels[level].regs;
    let fb = &w.levels[level].frame_base;
    let sp = cx.special;
    let mut ids = 0u16;
    let mut counts = [None::<u32>; 16];
    for l in lanes(exec) {
        let b = barrier::index(read_src(regs, id, l, &sp, fb), l)?;
        ids |= 1 << b;
        if let Some(c) = count {
            counts[b as usize] = Some(read_src(regs, c, l, &sp, fb) as u32);
        }
    }
    let red = kind.reduction();
    let default_tc = bk.live_warps * cx.info.shape.warp_size;
    for b in 0..16u32 {
        if ids >> b & 1 == 0 {
            continue;
        }
        let bar = &mut Arc::make_mut(&mut bk.bars)[b as usize];
        arrive(
            bar,
            b,
            w.index,
            counts[b as usize],
            default_tc,
            cx.info.shape.warp_size,
            red,
            cx.info.shape.warp_size,
        )
        .map_err(|mut f| {
            f.lane = Some(exec.trailing_zeros() as usize);
            f
        })?;
        if let BarrierKind::Red { dst, pred, .. } = kind {
            let mut lanes_b = 0u64;
            for l in lanes(exec) {
                if read_src(regs, id, l, &sp, fb) == b as u64 {
                    lanes_b |= 1 << l;
                    let p = super::super::exec::read_pred(regs, pred, l, &sp, fb);
                    barrier::vote(bar, p);
                }
            }
            bar.participants
                .push((w.index, lanes_b, *dst, level as u16));
        }
        cx.barrier_arrived(Rule::WarpComm, w.index, b, (bar.ac, bar.tc));
    }
    out.arrived = ids;
    if !matches!(kind, BarrierKind::Arrive) {
        w.simt_mut().waiting |= ids;
    }
    w.simt_mut().pc = h.pc + 1;
    let r = match kind {
        BarrierKind::Sync => Rule::BarSync,
        BarrierKind::Arrive => Rule::BarArrive,
        BarrierKind::Red { .. } => Rule::BarRed,
    };
    Ok([Rule::WarpComm, r, r])
}

fn record(cx: &mut Ctx, w: &Warp, out: &Outcome, rules: &[Rule]) {
    if cx.events.is_none() {
        return;
    }
    let derivation = cx.derivation(rules);
    // `EventDetail::Monitors`: the stack only where the barrier monitor reads it.
    let stack = if cx.full_detail
        || matches!(
            cx.program.instructions.get(out.pc as usize).map(|i| &i.op),
            Some(Op::Barrier { .. })
        ) {
        w.public_stack()
    } else {
        Vec::new()
    };
    let s = w.simt();
    let ev = Event::Executed {
        block: cx.block,
        warp: w.index,
        pc: out.pc,
        lanes: out.exec,
        active: s.active,
        disabled: s.dis,
        stack,
        next_pc: s.pc,
        derivation,
        unspecified: std::mem::take(&mut cx.unspecified),
    };
    if let Some(v) = cx.events.as_deref_mut() {
        v.push(ev);
    }
}
