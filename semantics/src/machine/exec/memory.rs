//! Thread rules of memory (thesis 5.3.2 (ld), (st), (atom), (membar); PTX ISA 9.7.9, 9.7.12-13):
//! lanes access the memory system in ascending lane order (flat memory completes each access in
//! the step; cached memory issues memory programs), and `cvta`/`isspacep` translate addresses.

use super::*;
use crate::program::RegId;
use smallvec::SmallVec;

/// `cvta` and `isspacep` (PTX ISA 9.7.9.17-18; the thesis's address translation of 5.3.2): a
/// lane's address moved into or out of a state space's generic window, or tested against it.
pub(super) fn cvta(
    cx: &mut Ctx,
    w: &mut Warp,
    level: usize,
    exec: u64,
    func: FuncId,
    op: &Op,
) -> Result<(), Fault> {
    // In the kernel, a `.param` address is relative to the reading grid's parameters (as for
    // `ld.param`): its generic address is that of the grid's own parameters in the one
    // parameter segment (0 for a one-kernel launch). PTX ISA "cvta" and "Kernel Function
    // Parameters": a kernel parameter's generic address names that launch's parameter; the
    // thesis (section 5.7) runs several grids of a context at once, each with its own.
    let param_base = if func == cx.info.entry {
        cx.info.param_base
    } else {
        0
    };
    let (_, sp, fb, regs) = frame(cx, &mut w.levels[level]);
    lane_macros!($, regs, sp, fb, exec);
    match op {
        Op::Cvta {
            to_generic: tg,
            space,
            dst,
            a,
        } => {
            let ms = mem_space_of(*space).unwrap_or(MemSpace::Global);
            let window = match ms {
                MemSpace::Param => to_generic(ms, param_base),
                _ => to_generic(ms, 0),
            };
            each!(|l| {
                let v = rd!(a, l);
                // cvta.to.space of an address outside that space's window is undefined (PTX ISA
                // 9.7.9.17); cudasem subtracts the window base anyway.
                let r = if *tg {
                    window.wrapping_add(v)
                } else {
                    v.wrapping_sub(window)
                };
                wr!(dst, l, r)
            });
        }
        Op::IsSpace { space, dst, a } => {
            let ms = mem_space_of(*space).unwrap_or(MemSpace::Global);
            each!(|l| {
                let v = (from_generic(rd!(a, l)).0 == ms) as u64;
                wr!(dst, l, v)
            });
        }
        _ => return Err(misrouted(op)),
    }
    Ok(())
}

/// (ld), thesis 5.3.2: `⟨θ ▷ pc | φ⟩ —ld ss a→Θ ⟨θ ◁ pc+1, r⃗[d ↦ v]⟩`: each executing lane
/// reads `size` bytes at its address (vectors element by element), in ascending lane order;
/// under cached memory the read is a memory program whose value arrives later.
pub(super) fn ld(
    cx: &mut Ctx,
    w: &mut Warp,
    level: usize,
    exec: u64,
    func: FuncId,
    op: &Op,
) -> Result<(), Fault> {
    let in_kernel = cx.kernel_params(func);
    let (ws, sp, fb, regs) = frame(cx, &mut w.levels[level]);
    lane_macros!($, regs, sp, fb, exec);
    match op {
        Op::Ld {
            space,
            ty,
            vector,
            dst,
            addr,
            qual,
        } => {
            let size = type_size(*ty);
            let n = (*vector).max(1) as u32;
            let signed = type_signed(*ty);
            // The destinations' widths, once per instruction (not per lane).
            let mut dst_bits = [64u32; 8];
            for (b, d) in dst_bits.iter_mut().zip(dst.iter()) {
                if let Some(d) = d {
                    *b = reg_bits(cx.program, func, d.0);
                }
            }
            let deriv = cx.mem_derivation(Rule::Ld);
            // Scalar `.global`/`.shared` loads: the whole warp through one call; an observed step
            // passes a trace (on the stack) from which the lanes' events are then recorded.
            // Under cached memory accesses become in-flight programs: the per-lane path, except
            // for a weak `.shared` load that every lane performs at issue (deviation D30, see
            // below), which is the flat load.
            let mut trace_buf = cx.lane_trace();
            let mut trace = trace_buf.as_mut();
            if let (1, Some(ms), Some(Some(d))) = (n, direct_space(*space), dst.first())
                && size <= 8
                && (cx.mem.performs_accesses_at_once()
                    || warp_loads_at_issue(cx, w.tid_base, exec, ms))
                && let Some(res) = crate::machine::fast::load_traced(
                    cx.mem.pages_mut(),
                    (cx.block, w.tid_base),
                    regs,
                    fb,
                    ws,
                    exec,
                    addr,
                    (ms, size, signed),
                    *d,
                    dst_bits[0],
                    trace.as_deref_mut(),
                )
            {
                return cx.warp_access_done(&deriv, trace, (AccessKind::Load, ms, size), res, "ld");
            }
            // A scalar `.param` or `.const` load at an address no lane's register decides (a
            // kernel parameter, a constant): every lane reads the same bytes of memory no thread
            // writes, so memory is asked once (for the lowest lane, which would fault first).
            // The prologue of every kernel loads its parameters so, one lane at a time before.
            if n == 1 && addr.base == AddrBase::Absolute && exec != 0 {
                let first = exec.trailing_zeros() as usize;
                let (ms, a) = lane_address(
                    (regs, fb),
                    (*space, addr, in_kernel),
                    first,
                    (size, n),
                    "ld",
                )?;
                if matches!(ms, MemSpace::Param | MemSpace::Const) && !cx.mem.in_flight_space(ms) {
                    let reader = who(cx, w.tid_base, first);
                    let v = cx
                        .mem
                        .pages_mut()
                        .load(reader, ms, a, size.min(8))
                        .map_err(|e| Fault::mem(first, e, "ld"))?;
                    let v = match dst[0] {
                        Some(d) => {
                            let v = extend(v, size.min(8), signed, dst_bits[0]);
                            match regs.row_mut(d.0 as usize) {
                                Some(row) => lanes(exec).for_each(|l| row[l] = v),
                                // Past the registers: the panic of a single write.
                                None => regs.set(d.0 as usize, first, v),
                            }
                            v
                        }
                        None => v,
                    };
                    for l in lanes(exec) {
                        cx.mem_event(&deriv, l, AccessKind::Load, ms, (a, size), v, false);
                    }
                    return Ok(());
                }
            }
            // The lanes' loaded values, written to their rows after the loop (also when a lane
            // faults: the lanes before it have loaded): a row written lane by lane took two
            // copy-on-write checks per lane (its chunk and the row). Only lane `l` of a
            // register decides lane `l`'s address, so no lane reads a value written later.
            let mut loaded: SmallVec<[(u8, u8, u64); 32]> = SmallVec::new();
            let outcome = (|| -> Result<(), Fault> {
                for l in lanes(exec) {
                    let (ms, a) =
                        lane_address((regs, fb), (*space, addr, in_kernel), l, (size, n), "ld")?;
                    let who = who(cx, w.tid_base, l);
                    for (i, d) in dst.iter().take(n as usize).enumerate() {
                        let ea = a + i as u64 * size as u64;
                        if cx.mem.in_flight_space(ms) {
                            cx.mem
                                .pages_mut()
                                .check_access(who, ms, ea, size.min(8), false)
                                .map_err(|e| Fault::mem(l, e, "ld"))?;
                            let bits = match (d, dst_bits.get(i)) {
                                (_, Some(&b)) => b,
                                (Some(d), None) => reg_bits(cx.program, func, d.0),
                                (None, None) => 64,
                            };
                            let dest = d.map(|d| memory_model::cached::Dest {
                                warp: cx.warp_index,
                                lane: l as u32,
                                reg: d.0 as u32,
                                level: level as u32,
                                signed,
                                bits,
                            });
                            let req = crate::machine::memory_ops::load_request(
                                who,
                                sp.sm,
                                (ms, ea, size.min(8)),
                                qual,
                                dest,
                            );
                            // A weak shared load that nothing can race with runs at issue, below,
                            // as under flat memory (deviation D30).
                            if !(cx.shared_quiet && cx.mem.load_at_issue(&req)) {
                                cx.mem.issue(req);
                                // The access is made now (its value arrives with a later memory
                                // step): the monitors see it here, as under flat memory.
                                cx.mem_event(&deriv, l, AccessKind::Load, ms, (ea, size), 0, false);
                                continue;
                            }
                        }
                        let v = if size > 8 {
                            cx.mem
                                .pages_mut()
                                .load(who, ms, ea, 8)
                                .map_err(|e| Fault::mem(l, e, "ld"))?
                        } else {
                            cx.mem
                                .pages_mut()
                                .load(who, ms, ea, size)
                                .map_err(|e| Fault::mem(l, e, "ld"))?
                        };
                        // A sink destination (`_`, PTX ISA 9.7.9.8 `ld`) still reads memory: the
                        // access is recorded either way, with the loaded bits when nothing keeps them.
                        let v = match d {
                            Some(d) => {
                                let bits = match dst_bits.get(i) {
                                    Some(&b) => b,
                                    None => reg_bits(cx.program, func, d.0),
                                };
                                let v = extend(v, size.min(8), signed, bits);
                                loaded.push((i as u8, l as u8, v));
                                v
                            }
                            None => v,
                        };
                        cx.mem_event(&deriv, l, AccessKind::Load, ms, (ea, size), v, false);
                    }
                }
                Ok(())
            })();
            write_loaded(regs, dst, &loaded);
            outcome?;
        }
        _ => return Err(misrouted(op)),
    }
    Ok(())
}

/// Writes what the lanes of a per-lane `ld` loaded (`(destination, lane, value)` in lane
/// order): each destination's row taken once, the destinations in order (of a vector's
/// destinations naming one register, the last one's value stays, as when each was written in
/// turn).
fn write_loaded(regs: &mut Regs, dst: &[Option<RegId>], loaded: &[(u8, u8, u64)]) {
    for (i, d) in dst.iter().enumerate() {
        let Some(d) = d else { continue };
        let mut of_dst = loaded
            .iter()
            .filter(|&&(j, _, _)| j as usize == i)
            .peekable();
        if of_dst.peek().is_none() {
            continue;
        }
        match regs.row_mut(d.0 as usize) {
            Some(row) => of_dst.for_each(|&(_, l, v)| row[l as usize] = v),
            // Past the registers: the panic of a single write (callers write declared ones).
            None => of_dst.for_each(|&(_, l, v)| regs.set(d.0 as usize, l as usize, v)),
        }
    }
}

/// Whether the `exec` lanes of a weak `.shared` load (`cx.shared_quiet`: nothing of the block
/// can write shared memory before the lanes' threads next wait for their ops) all perform it at
/// issue under cached memory ([`Cached::load_at_issue`]): the memory lets the block's shared
/// loads run at issue and no lane's thread has an op in flight, so none waits for one. The
/// per-lane path would then make each lane's load at issue, in lane order, as the warp-wide
/// flat load does, without a request per lane (issue 15).
///
/// [`Cached::load_at_issue`]: memory_model::cached::Cached::load_at_issue
fn warp_loads_at_issue(cx: &Ctx, tid_base: u32, exec: u64, space: MemSpace) -> bool {
    let cache = &*cx.mem;
    cx.shared_quiet
        && space == MemSpace::Shared
        && cache.shared_loads_at_issue(cx.block)
        && !cache.any_thread_busy(cx.block, tid_base, exec)
}

/// (st), thesis 5.3.2: `⟨θ ▷ pc | φ⟩ —st ss a v→Θ ⟨θ ◁ pc+1⟩`: each executing lane writes its
/// value at its address, in ascending lane order (two lanes storing to one address: the higher
/// lane's value stays).
pub(super) fn st(
    cx: &mut Ctx,
    w: &mut Warp,
    level: usize,
    exec: u64,
    func: FuncId,
    op: &Op,
) -> Result<(), Fault> {
    let in_kernel = cx.kernel_params(func);
    let (ws, sp, fb, regs) = frame(cx, &mut w.levels[level]);
    lane_macros!($, regs, sp, fb, exec);
    match op {
        Op::St {
            space,
            ty,
            vector,
            src,
            addr,
            qual,
        } => {
            let size = type_size(*ty).min(8);
            let n = (*vector).max(1) as u32;
            let deriv = cx.mem_derivation(Rule::St);
            // Scalar `.global`/`.shared` stores: the whole warp through one call, traced when
            // observed (as for `ld`); never under cached memory.
            let mut trace_buf = cx.lane_trace();
            let mut trace = trace_buf.as_mut();
            if let (1, Some(ms), Some(s0)) = (n, direct_space(*space), src.first())
                && cx.mem.performs_accesses_at_once()
                && let Some(res) = crate::machine::fast::store_traced(
                    cx.mem.pages_mut(),
                    (cx.block, w.tid_base),
                    regs,
                    fb,
                    &sp,
                    ws,
                    exec,
                    addr,
                    (ms, size),
                    s0,
                    trace.as_deref_mut(),
                )
            {
                return cx.warp_access_done(
                    &deriv,
                    trace,
                    (AccessKind::Store, ms, size),
                    res,
                    "st",
                );
            }
            for l in lanes(exec) {
                let (ms, a) =
                    lane_address((regs, fb), (*space, addr, in_kernel), l, (size, n), "st")?;
                let who = who(cx, w.tid_base, l);
                let mask = if size >= 8 {
                    u64::MAX
                } else {
                    (1u64 << (size * 8)) - 1
                };
                for (i, s) in src.iter().take(n as usize).enumerate() {
                    let ea = a + i as u64 * size as u64;
                    let v = read_src(regs, s, l, &sp, fb);
                    let unchanged;
                    if cx.mem.in_flight_space(ms) {
                        cx.mem
                            .pages_mut()
                            .check_access(who, ms, ea, size, true)
                            .map_err(|e| Fault::mem(l, e, "st"))?;
                        cx.mem.issue(crate::machine::memory_ops::store_request(
                            who,
                            sp.sm,
                            (ms, ea, size),
                            qual,
                            v,
                        ));
                        unchanged = false;
                    } else {
                        // Observed: whether the store rewrites the bytes already there.
                        unchanged = cx.observing()
                            && cx
                                .mem
                                .pages_mut()
                                .load(who, ms, ea, size)
                                .is_ok_and(|old| old == v & mask);
                        cx.mem
                            .pages_mut()
                            .store(who, ms, ea, size, v)
                            .map_err(|e| Fault::mem(l, e, "st"))?;
                    }
                    if cx.observing() {
                        let value = v & mask;
                        cx.mem_event(
                            &deriv,
                            l,
                            AccessKind::Store,
                            ms,
                            (ea, size),
                            value,
                            unchanged,
                        );
                    }
                }
            }
        }
        _ => return Err(misrouted(op)),
    }
    Ok(())
}

/// (atom), thesis 5.3.2: `⟨θ ▷ pc | φ⟩ —atom ss a op v→Θ ⟨θ ◁ pc+1, r⃗[d ↦ old]⟩`: a
/// read-modify-write per executing lane, in ascending lane order; `red` discards the old value.
pub(super) fn atom(
    cx: &mut Ctx,
    w: &mut Warp,
    level: usize,
    exec: u64,
    func: FuncId,
    op: &Op,
) -> Result<(), Fault> {
    let in_kernel = cx.kernel_params(func);
    let (_, sp, fb, regs) = frame(cx, &mut w.levels[level]);
    lane_macros!($, regs, sp, fb, exec);
    match op {
        Op::Atom {
            space,
            op,
            ty,
            dst,
            addr,
            a,
            b,
            qual,
        } => {
            let size = ty.size();
            let deriv = cx.mem_derivation(Rule::Atom);
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let ad = address(regs, addr, l, fb);
                let (ms, ad) = resolve(*space, addr.base, ad, in_kernel);
                let av = read_src(regs, a, l, &sp, fb);
                let bv = b
                    .as_ref()
                    .map(|b| read_src(regs, b, l, &sp, fb))
                    .unwrap_or(0);
                let who = who(cx, w.tid_base, l);
                if cx.mem.in_flight_space(ms) {
                    cx.mem
                        .pages_mut()
                        .check_access(who, ms, ad, size, true)
                        .map_err(|e| Fault::mem(l, e, "atom"))?;
                    let dest = dst.map(|d| memory_model::cached::Dest {
                        warp: cx.warp_index,
                        lane: l as u32,
                        reg: d.0 as u32,
                        level: level as u32,
                        signed: false,
                        bits: 64,
                    });
                    let rmw = memory_model::cached::Rmw {
                        op: *op,
                        ty: *ty,
                        a: av,
                        b: bv,
                    };
                    cx.mem.issue(crate::machine::memory_ops::atomic_request(
                        who,
                        sp.sm,
                        (ms, ad, size),
                        qual,
                        rmw,
                        dest,
                    ));
                    // Issued now, as for `ld`: the event carries no values (they are not known).
                    cx.mem_event(
                        &deriv,
                        l,
                        AccessKind::Atomic { new: 0 },
                        ms,
                        (ad, size),
                        0,
                        false,
                    );
                    continue;
                }
                let (op, ty) = (*op, *ty);
                let (old, new) = cx
                    .mem
                    .pages_mut()
                    .atomic(who, ms, ad, size, |old| {
                        alu::atom_new_value(op, ty, old, av, bv)
                    })
                    .map_err(|e| Fault::mem(l, e, "atom"))?;
                if let Some(d) = dst {
                    regs.set(d.0 as usize, l, old);
                }
                cx.mem_event(
                    &deriv,
                    l,
                    AccessKind::Atomic { new },
                    ms,
                    (ad, size),
                    old,
                    false,
                );
            }
        }
        _ => return Err(misrouted(op)),
    }
    Ok(())
}

/// (membar), thesis 5.3.2 and 4.6: `membar lvl` (and `fence`): each lane issues a fence (flat
/// memory performs it at once: every access is already performed; cached memory runs a fence
/// program).
pub(super) fn membar(cx: &mut Ctx, w: &mut Warp, exec: u64, op: &Op) -> Result<(), Fault> {
    let sp = cx.special;
    // Only `each!` is used: the register macros name locals that are not there.
    lane_macros!($, regs, sp, fb, exec);
    match op {
        Op::Fence { .. } => {
            if let Op::Fence { level, order } = op {
                let tid_base = w.tid_base;
                let block = cx.block;
                each!(|l| cx.mem.issue(crate::machine::memory_ops::fence_request(
                    Who {
                        block,
                        thread: tid_base + l as u32,
                    },
                    sp.sm,
                    *level,
                    *order,
                )));
            }
        }
        _ => return Err(misrouted(op)),
    }
    Ok(())
}
