//! The thread rules (call) and (return) of thesis 5.3.2 for one lane, shared by every warp
//! model: entering a callee pushes its frame and copies the arguments into its formal parameters
//! (PTX ISA 9.7.14.3 `call`); leaving pops it and copies the return values back.

use super::super::ErrorKind;
use super::super::exec::{Ctx, Fault};
use super::super::thread::{Level, frame_span};
use super::Warp;
use crate::program::{FuncId, Op, ParamLoc, Pc, Program};
use memory_model::{MemSpace, MemoryEnv, MemorySystem, Who};
use std::sync::Arc;

/// Reads a call argument / return value location of one lane.
#[allow(clippy::too_many_arguments)]
fn read_loc(
    cx: &mut Ctx,
    lvl: &Level,
    tid: u32,
    loc: &ParamLoc,
    lane: usize,
    size: u32,
    buf: &mut [u8],
) -> Result<(), Fault> {
    match *loc {
        ParamLoc::Reg(r) => {
            let v = lvl.regs.get(r.0 as usize, lane).unwrap_or(0).to_le_bytes();
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
                    .pages_mut()
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
            if let Some(slot) = lvl.regs.slot(r.0 as usize, lane) {
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
                    .pages_mut()
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
    let ws = cx.info.shape.warp_size as usize;
    let d = w.depth[lane] as usize;
    let program = cx.program;
    let caller = w.levels[d].func[lane];
    let cf = program.function(callee);
    let base = w.levels[d].frame_base[lane] as u64
        + frame_span(program.function(caller).frame_size) as u64;
    if base + cf.frame_size as u64 > cx.mem.pages().local_limit() {
        return Err(Fault::new(
            ErrorKind::Resource,
            Some(lane),
            format!(
                "call stack overflow: calling `{}` needs local memory up to {:#x}, the limit is {:#x} bytes per thread",
                cf.name,
                base + cf.frame_size as u64,
                cx.mem.pages().local_limit()
            ),
        ));
    }
    if w.levels.len() <= d + 1 {
        w.levels.push(Level::new(ws, cf.registers.len(), callee));
    }
    let (lo, hi) = w.levels.split_at_mut(d + 1);
    let (from, to) = (&mut lo[d], &mut hi[0]);
    to.ensure_regs(cf.registers.len());
    copy_module_registers(program, from, to, lane);
    Arc::make_mut(&mut to.frame_base)[lane] = base as u32;
    Arc::make_mut(&mut to.func)[lane] = callee;
    Arc::make_mut(&mut to.call_pc)[lane] = call_pc;
    let tid = w.tid_base + lane as u32;
    let mut buf = [0u8; 256];
    for (arg, p) in args.iter().zip(cf.params.iter()) {
        let size = loc_size(&p.loc, p.size).min(256);
        buf[..size as usize].fill(0);
        read_loc(cx, from, tid, arg, lane, size, &mut buf)?;
        write_loc(cx, to, tid, &p.loc, lane, size, &buf)?;
    }
    Arc::make_mut(&mut w.depth)[lane] = (d + 1) as u16;
    Ok(())
}

/// Module-scope `.reg` variables (ids `0..n` in every function) are one per thread: the lane's
/// values follow it into a callee and back (the thesis's `%stackBase`, Listing 5.3 after the
/// stack transformation).
fn copy_module_registers(program: &Program, from: &Level, to: &mut Level, lane: usize) {
    for r in 0..program.global_registers.len() {
        if let (Some(v), Some(slot)) = (from.regs.get(r, lane), to.regs.slot(r, lane)) {
            *slot = v;
        }
    }
}

/// Leaves the current function for one lane (thesis (return): pop κ), copying the return values
/// into the caller's locations named by its `call`.
pub(crate) fn leave(cx: &mut Ctx, w: &mut Warp, lane: usize) -> Result<Pc, Fault> {
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
    copy_module_registers(program, from, to, lane);
    let mut buf = [0u8; 256];
    for (ret, p) in rets
        .iter()
        .zip(program.function(callee).return_params.iter())
    {
        let size = loc_size(&p.loc, p.size).min(256);
        buf[..size as usize].fill(0);
        read_loc(cx, from, tid, &p.loc, lane, size, &mut buf)?;
        write_loc(cx, to, tid, ret, lane, size, &buf)?;
    }
    Arc::make_mut(&mut w.depth)[lane] = (d - 1) as u16;
    Ok(call_pc + 1)
}
