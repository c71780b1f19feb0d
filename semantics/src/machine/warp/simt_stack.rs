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
use super::super::block::{BlockShared, arrive};
use super::super::exec::{Ctx, Fault, data_rule, exec_data, read_src};
use super::super::thread::{Level, frame_span};
use super::{SimtToken, Warp, lanes};
use crate::program::{BarrierKind, CallTarget, FuncId, Op, ParamLoc, Pc, Program};
use memory_model::{MemSpace, MemorySystem, Who};
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

/// `enable(α, δ, s)` then `α \ δ` (thesis 5.4.1 `updExecState`): pops tokens until one activates
/// a lane (`unwind`). Returns whether the warp completed.
pub(crate) fn unwind(w: &mut Warp) -> Result<bool, String> {
    loop {
        let Some(tok) = w.stack.pop() else {
            let all = w.real | w.dis.exit;
            return if w.dis.exit == all && w.dis.brk == 0 && w.dis.ret == 0 {
                w.active = 0;
                w.completed = true;
                Ok(true)
            } else {
                Err(format!(
                    "stack underflow: lanes {:#x} wait for break/return with an empty token stack",
                    (w.dis.brk | w.dis.ret) & !w.dis.exit
                ))
            };
        };
        let mut dis = w.dis;
        match tok.kind {
            TokenKind::Call => dis.ret &= !tok.mask,
            TokenKind::Break => dis.brk &= !tok.mask,
            TokenKind::Sync | TokenKind::Diverge => {}
        }
        let alpha = tok.mask & !dis.any();
        if alpha != 0 {
            w.pc = tok.pc;
            w.active = alpha;
            w.dis = dis;
            w.retry = tok.retry;
            return Ok(false);
        }
    }
}

/// Evaluates the guard of the instruction at the warp pc for the active lanes (→Θe).
#[inline]
pub(crate) fn guard_mask(
    program: &Program,
    w: &Warp,
    mask: u64,
    level: usize,
    pc: Pc,
    ws: usize,
) -> u64 {
    let Some(instr) = program.instructions.get(pc as usize) else {
        return 0;
    };
    match instr.guard {
        None => mask,
        Some(g) => {
            let regs = &w.levels[level].regs;
            let base = g.reg.0 as usize * ws;
            match regs.get(base..base + ws) {
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
                        if (regs.get(base + l).copied().unwrap_or(0) != 0) != g.negated {
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
    ws: usize,
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
                    crate::program::Src::Reg(r) => regs[r.0 as usize * ws + l],
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
                let v = regs[reg.0 as usize * ws + l];
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
pub(crate) fn pending_targets(program: &Program, w: &Warp, ws: usize) -> u32 {
    if w.completed || w.active == 0 {
        return 0;
    }
    if w.stack.last().is_some_and(|t| t.reconv == Some(w.pc)) {
        return 0;
    }
    let Some(instr) = program.instructions.get(w.pc as usize) else {
        return 0;
    };
    match &instr.op {
        Op::BraIndirect { .. }
        | Op::Call {
            target: CallTarget::Indirect { .. },
            ..
        } => {
            let level = w.active_level();
            let exec = guard_mask(program, w, w.active, level, w.pc, ws);
            let mut groups = smallvec::SmallVec::new();
            match target_groups(program, w, level, exec, &instr.op, ws, &mut groups) {
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

/// Reads a call argument / return value location of one lane.
#[allow(clippy::too_many_arguments)]
fn read_loc(
    cx: &mut Ctx,
    lvl: &Level,
    tid: u32,
    ws: usize,
    loc: &ParamLoc,
    lane: usize,
    size: u32,
    buf: &mut [u8],
) -> Result<(), Fault> {
    match *loc {
        ParamLoc::Reg(r) => {
            let v = lvl
                .regs
                .get(r.0 as usize * ws + lane)
                .copied()
                .unwrap_or(0)
                .to_le_bytes();
            let n = (size as usize).min(8);
            buf[..n].copy_from_slice(&v[..n]);
        }
        ParamLoc::Imm(v) => {
            let n = (size as usize).min(8);
            buf[..n].copy_from_slice(&v.to_le_bytes()[..n]);
        }
        ParamLoc::Frame { offset, .. } => {
            let who = Who {
                block: cx.block,
                thread: tid,
            };
            let base = lvl.frame_base[lane] as u64 + offset as u64;
            for (i, b) in buf.iter_mut().take(size as usize).enumerate() {
                *b = cx
                    .mem
                    .load(who, MemSpace::Local, base + i as u64, 1)
                    .map_err(|e| Fault::new(ErrorKind::Resource, Some(lane), e.message))?
                    as u8;
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn write_loc(
    cx: &mut Ctx,
    lvl: &mut Level,
    tid: u32,
    ws: usize,
    loc: &ParamLoc,
    lane: usize,
    size: u32,
    buf: &[u8],
) -> Result<(), Fault> {
    match *loc {
        ParamLoc::Reg(r) => {
            let mut v = [0u8; 8];
            let n = (size as usize).min(8);
            v[..n].copy_from_slice(&buf[..n]);
            if let Some(slot) = lvl.regs.get_mut(r.0 as usize * ws + lane) {
                *slot = u64::from_le_bytes(v);
            }
        }
        ParamLoc::Imm(_) => {}
        ParamLoc::Frame { offset, .. } => {
            let who = Who {
                block: cx.block,
                thread: tid,
            };
            let base = lvl.frame_base[lane] as u64 + offset as u64;
            for (i, b) in buf.iter().take(size as usize).enumerate() {
                cx.mem
                    .store(who, MemSpace::Local, base + i as u64, 1, *b as u64)
                    .map_err(|e| {
                        Fault::new(
                            ErrorKind::Resource,
                            Some(lane),
                            format!("call stack overflow: {}", e.message),
                        )
                    })?;
            }
        }
    }
    Ok(())
}

fn loc_size(loc: &ParamLoc, declared: u32) -> u32 {
    match loc {
        ParamLoc::Frame { size, .. } => (*size).max(declared),
        _ => declared.max(1),
    }
}

/// Enters `callee` for one lane (thesis (call) thread rule: push the callee's frame; PTX ISA
/// 9.7.14.3: copy the arguments into its formal parameters). Shared by all warp models.
pub(crate) fn enter(
    cx: &mut Ctx,
    w: &mut Warp,
    lane: usize,
    callee: FuncId,
    call_pc: Pc,
    args: &[ParamLoc],
) -> Result<(), Fault> {
    let ws = cx.info.warp_size as usize;
    let d = w.depth[lane] as usize;
    let program = cx.program;
    let caller = w.levels[d].func[lane];
    let cf = program.function(callee);
    let base = w.levels[d].frame_base[lane] as u64
        + frame_span(program.function(caller).frame_size) as u64;
    if base + cf.frame_size as u64 > cx.mem.local_limit() {
        return Err(Fault::new(
            ErrorKind::Resource,
            Some(lane),
            format!(
                "call stack overflow: calling `{}` needs local memory up to {:#x}, the limit is {:#x} bytes per thread",
                cf.name,
                base + cf.frame_size as u64,
                cx.mem.local_limit()
            ),
        ));
    }
    if w.levels.len() <= d + 1 {
        w.levels.push(Level::new(ws, cf.registers.len(), callee));
    }
    let (lo, hi) = w.levels.split_at_mut(d + 1);
    let (from, to) = (&mut lo[d], &mut hi[0]);
    to.ensure_regs(ws, cf.registers.len());
    copy_module_registers(program, from, to, ws, lane);
    Arc::make_mut(&mut to.frame_base)[lane] = base as u32;
    Arc::make_mut(&mut to.func)[lane] = callee;
    Arc::make_mut(&mut to.call_pc)[lane] = call_pc;
    let tid = w.tid_base + lane as u32;
    let mut buf = [0u8; 256];
    for (arg, p) in args.iter().zip(cf.params.iter()) {
        let size = loc_size(&p.loc, p.size).min(256);
        buf[..size as usize].fill(0);
        read_loc(cx, from, tid, ws, arg, lane, size, &mut buf)?;
        write_loc(cx, to, tid, ws, &p.loc, lane, size, &buf)?;
    }
    Arc::make_mut(&mut w.depth)[lane] = (d + 1) as u16;
    Ok(())
}

/// Module-scope `.reg` variables (ids `0..n` in every function) are one per thread: the lane's
/// values follow it into a callee and back (the thesis's `%stackBase`, Listing 5.3 after the
/// stack transformation).
fn copy_module_registers(program: &Program, from: &Level, to: &mut Level, ws: usize, lane: usize) {
    for r in 0..program.global_registers.len() {
        let i = r * ws + lane;
        if let (Some(&v), Some(slot)) = (from.regs.get(i), to.regs.get_mut(i)) {
            *slot = v;
        }
    }
}

/// Leaves the current function for one lane (thesis (return): pop κ), copying the return values
/// into the caller's locations named by its `call`.
pub(crate) fn leave(cx: &mut Ctx, w: &mut Warp, lane: usize) -> Result<Pc, Fault> {
    let ws = cx.info.warp_size as usize;
    let d = w.depth[lane] as usize;
    let program = cx.program;
    let callee = w.levels[d].func[lane];
    let call_pc = w.levels[d].call_pc[lane];
    let rets: &[ParamLoc] = match program.instructions.get(call_pc as usize).map(|i| &i.op) {
        Some(Op::Call { rets, .. }) => rets,
        _ => &[],
    };
    let tid = w.tid_base + lane as u32;
    let (lo, hi) = w.levels.split_at_mut(d);
    let (to, from) = (&mut lo[d - 1], &mut hi[0]);
    copy_module_registers(program, from, to, ws, lane);
    let mut buf = [0u8; 256];
    for (ret, p) in rets
        .iter()
        .zip(program.function(callee).return_params.iter())
    {
        let size = loc_size(&p.loc, p.size).min(256);
        buf[..size as usize].fill(0);
        read_loc(cx, from, tid, ws, &p.loc, lane, size, &mut buf)?;
        write_loc(cx, to, tid, ws, ret, lane, size, &buf)?;
    }
    Arc::make_mut(&mut w.depth)[lane] = (d - 1) as u16;
    Ok(call_pc + 1)
}

/// Pushes the sync token of ordinary PTX for a divergence at `pc` (D1).
fn push_implicit_sync(program: &Program, w: &mut Warp, pc: Pc) -> Option<Pc> {
    let r = program.reconvergence.get(pc as usize).copied().flatten();
    if let Some(r) = r {
        let top_is_r = w
            .stack
            .last()
            .is_some_and(|t| t.kind == TokenKind::Sync && t.pc == r && t.reconv == Some(r));
        if !top_is_r {
            w.stack.push(SimtToken {
                kind: TokenKind::Sync,
                mask: w.active,
                pc: r,
                reconv: Some(r),
                retry: false,
            });
        }
    }
    r
}

/// One warp step under the SIMT stack (warp rules (bra)/(comm)/(mem), thesis 5.4.3). `k`: the
/// target group chosen by a `Target` choice.
pub(crate) fn step(
    cx: &mut Ctx,
    bk: &mut BlockShared,
    w: &mut Warp,
    k: Option<u32>,
    exited_warps_arrive: bool,
) -> Result<Outcome, Fault> {
    let _ = exited_warps_arrive;
    let ws = cx.info.warp_size as usize;
    let retry = std::mem::take(&mut w.retry);
    let pc = w.pc;
    let alpha = w.active;
    let mut out = Outcome {
        pc,
        exec: 0,
        flow: Flow::Seq,
        arrived: 0,
        exited: 0,
    };

    // D2: the implicit sync of ordinary PTX at a reconvergence point.
    if w.stack.last().is_some_and(|t| t.reconv == Some(pc)) {
        unwind(w).map_err(|m| stuck(None, m))?;
        out.flow = Flow::VirtualSync;
        out.exec = alpha;
        record(cx, w, &out, &[Rule::WarpBra, Rule::SyncImplicit]);
        return Ok(out);
    }

    let program = cx.program;
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
    let lane0 = alpha.trailing_zeros() as usize;
    let func = w.levels[level].func[lane0];
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
    let explicit = f.explicit_reconvergence;
    let exec = guard_mask(program, w, alpha, level, pc, ws);
    out.exec = exec;
    let uni = exec == alpha;

    let rules: [Rule; 3];
    match &instr.op {
        Op::Bra { .. } | Op::BraIndirect { .. } | Op::Call { .. } if exec == 0 => {
            w.pc = pc + 1;
            rules = [Rule::WarpBra, Rule::Next, Rule::Bra];
        }
        op @ (Op::Bra { .. } | Op::BraIndirect { .. }) => {
            let mut groups = smallvec::SmallVec::<[(Pc, u64); 4]>::new();
            target_groups(program, w, level, exec, op, ws, &mut groups)
                .map_err(|(l, m)| stuck(Some(l), m))?;
            if groups.len() > 1 {
                // bra_target (thesis 5.4.1, reconstructed): push (diverge, notTaken, pc).
                let kk = k.unwrap_or(0) as usize;
                let Some(&(t, taken)) = groups.get(kk) else {
                    return Err(stuck(
                        None,
                        format!("target group {kk} of {} requested", groups.len()),
                    ));
                };
                let r = if explicit {
                    None
                } else {
                    push_implicit_sync(program, w, pc)
                };
                w.stack.push(SimtToken {
                    kind: TokenKind::Diverge,
                    mask: alpha & !taken,
                    pc,
                    reconv: r,
                    retry: true,
                });
                w.active = taken;
                w.pc = t;
                out.flow = Flow::Jump {
                    target: t,
                    taken,
                    split: true,
                };
                rules = [Rule::WarpBra, Rule::BraTarget, Rule::Bra];
            } else {
                let t = groups[0].0;
                out.flow = Flow::Jump {
                    target: t,
                    taken: exec,
                    split: false,
                };
                if uni {
                    w.pc = t;
                    rules = [Rule::WarpBra, Rule::BraUni, Rule::Bra];
                } else {
                    // bra_guard: taken path first; (diverge, notTaken, pc+1).
                    let r = if explicit {
                        None
                    } else {
                        push_implicit_sync(program, w, pc)
                    };
                    w.stack.push(SimtToken {
                        kind: TokenKind::Diverge,
                        mask: alpha & !exec,
                        pc: pc + 1,
                        reconv: r,
                        retry: false,
                    });
                    w.active = exec;
                    w.pc = t;
                    rules = [Rule::WarpBra, Rule::BraGuard, Rule::Bra];
                }
            }
        }
        op @ Op::Call { args, .. } => {
            let mut groups = smallvec::SmallVec::<[(Pc, u64); 4]>::new();
            target_groups(program, w, level, exec, op, ws, &mut groups)
                .map_err(|(l, m)| stuck(Some(l), m))?;
            if explicit {
                // stack-cons₆: a call token returning to pc+1 (from preRet) must be on the stack.
                if !w
                    .stack
                    .iter()
                    .any(|t| t.kind == TokenKind::Call && t.pc == pc + 1)
                {
                    return Err(stuck(
                        None,
                        "call without a preceding preRet to the next instruction (stack consistency 6)",
                    ));
                }
            } else if !retry {
                // D3: the implicit preRet.
                w.stack.push(SimtToken {
                    kind: TokenKind::Call,
                    mask: alpha,
                    pc: pc + 1,
                    reconv: None,
                    retry: false,
                });
            }
            let (t, taken, rule) = if groups.len() > 1 {
                let kk = k.unwrap_or(0) as usize;
                let Some(&(t, taken)) = groups.get(kk) else {
                    return Err(stuck(
                        None,
                        format!("target group {kk} of {} requested", groups.len()),
                    ));
                };
                w.stack.push(SimtToken {
                    kind: TokenKind::Diverge,
                    mask: alpha & !taken,
                    pc,
                    reconv: None,
                    retry: true,
                });
                (t, taken, Rule::CallTarget)
            } else if uni {
                (groups[0].0, exec, Rule::CallUni)
            } else {
                (groups[0].0, exec, Rule::CallGuard)
            };
            let callee = program
                .function_of(t)
                .ok_or_else(|| stuck(None, format!("call target {t} is not a function")))?;
            for l in lanes(taken) {
                enter(cx, w, l, callee, pc, args)?;
            }
            w.active = taken;
            w.pc = t;
            out.flow = Flow::Jump {
                target: t,
                taken,
                split: groups.len() > 1,
            };
            rules = [Rule::WarpBra, rule, Rule::Call];
        }
        Op::Ret | Op::Exit | Op::Brk if exec == 0 => {
            w.pc = pc + 1;
            rules = [Rule::WarpBra, Rule::Next, Rule::Nop];
        }
        Op::Ret | Op::Exit | Op::Brk => {
            let kernel_ret = matches!(instr.op, Op::Ret) && level == 0;
            let (kind, r_uni, r_div, r_thread) = match instr.op {
                Op::Brk => {
                    // stack-cons₁.
                    if !w.stack.iter().any(|t| t.kind == TokenKind::Break) {
                        return Err(stuck(
                            Some(exec.trailing_zeros() as usize),
                            "brk without a break token on the stack (stack consistency 1)",
                        ));
                    }
                    (TokenKind::Break, Rule::BrkUni, Rule::BrkDiv, Rule::Break)
                }
                Op::Ret if !kernel_ret => {
                    if !w.stack.iter().any(|t| t.kind == TokenKind::Call) {
                        return Err(stuck(
                            Some(exec.trailing_zeros() as usize),
                            "ret without a call token on the stack (stack consistency 2)",
                        ));
                    }
                    (TokenKind::Call, Rule::RetUni, Rule::RetDiv, Rule::Ret)
                }
                _ => (
                    TokenKind::Sync,
                    Rule::ExitUni,
                    Rule::ExitDiv,
                    Rule::ExitThread,
                ),
            };
            match kind {
                TokenKind::Break => {
                    w.dis.brk |= exec;
                    out.flow = Flow::Brk;
                }
                TokenKind::Call => {
                    for l in lanes(exec) {
                        leave(cx, w, l)?;
                    }
                    w.dis.ret |= exec;
                    out.flow = Flow::Ret;
                }
                _ => {
                    w.dis.exit |= exec;
                    w.dis.brk &= !exec;
                    w.dis.ret &= !exec;
                    w.exited |= exec;
                    out.exited = exec;
                    out.flow = Flow::Exit;
                }
            }
            w.active &= !exec;
            if uni {
                unwind(w).map_err(|m| stuck(None, m))?;
                rules = [Rule::WarpBra, r_uni, r_thread];
            } else {
                w.pc = pc + 1;
                rules = [Rule::WarpBra, r_div, r_thread];
            }
        }
        Op::Ssy { target } | Op::PreBrk { target } | Op::PreRet { target } => {
            if exec != 0 {
                let (kind, rule) = match instr.op {
                    Op::Ssy { .. } => (TokenKind::Sync, Rule::Ssy),
                    Op::PreBrk { .. } => (TokenKind::Break, Rule::PreBrk),
                    _ => (TokenKind::Call, Rule::PreRet),
                };
                // A26: the token carries the full α.
                w.stack.push(SimtToken {
                    kind,
                    mask: alpha,
                    pc: *target,
                    reconv: None,
                    retry: false,
                });
                rules = [Rule::WarpBra, rule, rule];
            } else {
                rules = [Rule::WarpBra, Rule::Next, Rule::Nop];
            }
            w.pc = pc + 1;
        }
        Op::Sync => {
            if exec != 0 {
                // stack-cons₃.
                match w.stack.last() {
                    Some(t) if matches!(t.kind, TokenKind::Sync | TokenKind::Diverge) => {}
                    _ => {
                        return Err(stuck(
                            None,
                            "sync without a sync or diverge token on top of the stack (stack consistency 3)",
                        ));
                    }
                }
                w.pc = pc + 1;
                unwind(w).map_err(|m| stuck(None, m))?;
                rules = [Rule::WarpBra, Rule::Sync, Rule::Sync];
            } else {
                w.pc = pc + 1;
                rules = [Rule::WarpBra, Rule::Next, Rule::Nop];
            }
        }
        Op::Barrier {
            kind, id, count, ..
        } => {
            if exec != 0 {
                let regs = &w.levels[level].regs;
                let fb = &w.levels[level].frame_base;
                let sp = cx.special;
                let mut ids = 0u16;
                let mut counts = [None::<u32>; 16];
                for l in lanes(exec) {
                    let b = read_src(regs, ws, id, l, &sp, fb);
                    if b >= 16 {
                        return Err(Fault::new(
                            ErrorKind::Barrier,
                            Some(l),
                            format!("barrier index {b} is not in 0..16"),
                        ));
                    }
                    ids |= 1 << b;
                    if let Some(c) = count {
                        counts[b as usize] = Some(read_src(regs, ws, c, l, &sp, fb) as u32);
                    }
                }
                let red = match kind {
                    BarrierKind::Red { op, .. } => Some(*op),
                    _ => None,
                };
                let default_tc = bk.live_warps * cx.info.warp_size;
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
                        cx.info.warp_size,
                        red,
                        cx.info.warp_size,
                    )
                    .map_err(|mut f| {
                        f.lane = Some(exec.trailing_zeros() as usize);
                        f
                    })?;
                    if let BarrierKind::Red { dst, pred, .. } = kind {
                        let mut lanes_b = 0u64;
                        for l in lanes(exec) {
                            if read_src(regs, ws, id, l, &sp, fb) == b as u64 {
                                lanes_b |= 1 << l;
                                let p = super::super::exec::read_pred(regs, ws, pred, l, &sp, fb);
                                bar.popc += p as u32;
                                bar.and &= p;
                                bar.or |= p;
                            }
                        }
                        bar.participants
                            .push((w.index, lanes_b, *dst, level as u16));
                    }
                    if let Some(ev) = cx.events.as_deref_mut() {
                        let d = traces::Derivation::with_prefix(
                            cx.prefix,
                            &[Rule::WarpComm, Rule::BarSync],
                        );
                        ev.push(Event::BarrierArrived {
                            block: cx.block,
                            warp: w.index,
                            barrier: b,
                            arrived: bar.ac,
                            expected: bar.tc,
                            derivation: d,
                        });
                    }
                }
                out.arrived = ids;
                if !matches!(kind, BarrierKind::Arrive) {
                    w.waiting |= ids;
                }
                let r = match kind {
                    BarrierKind::Sync => Rule::BarSync,
                    BarrierKind::Arrive => Rule::BarArrive,
                    BarrierKind::Red { .. } => Rule::BarRed,
                };
                rules = [Rule::WarpComm, r, r];
            } else {
                rules = [Rule::WarpBra, Rule::Next, Rule::Nop];
            }
            w.pc = pc + 1;
        }
        op => {
            if exec != 0 {
                exec_data(cx, w, level, exec, alpha, pc, func, op)?;
                let (a, b) = data_rule(op);
                rules = [a, b, b];
            } else {
                rules = [Rule::WarpBra, Rule::Next, Rule::Nop];
            }
            w.pc = pc + 1;
        }
    }
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
    let ev = Event::Executed {
        block: cx.block,
        warp: w.index,
        pc: out.pc,
        lanes: out.exec,
        active: w.active,
        disabled: w.dis,
        stack,
        next_pc: w.pc,
        derivation,
        unspecified: std::mem::take(&mut cx.unspecified),
    };
    if let Some(v) = cx.events.as_deref_mut() {
        v.push(ev);
    }
}
