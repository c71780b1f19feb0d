//! Instruction execution over a warp's lanes (thesis 5.3.2 thread rules, 5.4.2 votes; PTX ISA 9.7).
//!
//! Data instructions run in one tight loop over the executing lanes (active, guard true) on the
//! structure-of-arrays registers of one call level; arithmetic is `crate::alu`'s. Memory accesses
//! go to the [`MemorySystem`] lane by lane in ascending lane order: under flat memory the lanes of
//! one warp instruction are serialised in that order (digest §16 item 22: n operations, a fixed
//! order; two lanes storing to one address: the highest lane's value stays).
//! Control flow, barriers and calls are the warp models' business (`warp::*`, `block`).

use super::thread::{SpecialCtx, reg_bits, type_signed, type_size};
use super::warp::{Warp, lanes};
use super::{ErrorKind, LaunchInfo};
use crate::alu;
use crate::program::{
    AddrBase, Address, BinaryOp, FuncId, Op, Pc, PredSrc, Program, ShflMode, Space, Src, VoteMode,
};
use memory_model::{
    Flat, MemError, MemErrorKind, MemSpace, MemorySystem, Who, from_generic, to_generic,
};
use traces::{AccessKind, Derivation, Event, Rule};

/// A fault of one lane, located by the caller (block, thread, pc).
#[derive(Debug, Clone)]
pub(crate) struct Fault {
    pub kind: ErrorKind,
    pub lane: Option<usize>,
    pub message: String,
}

impl Fault {
    pub fn new(kind: ErrorKind, lane: Option<usize>, message: impl Into<String>) -> Fault {
        Fault {
            kind,
            lane,
            message: message.into(),
        }
    }
    fn mem(lane: usize, e: MemError, what: &str) -> Fault {
        let kind = match e.kind {
            MemErrorKind::OutOfBounds | MemErrorKind::ReadOnly => ErrorKind::OutOfBounds,
            MemErrorKind::Misaligned => ErrorKind::Misaligned,
        };
        Fault {
            kind,
            lane: Some(lane),
            message: format!("{what}: {}", e.message),
        }
    }
}

/// Everything a warp step may touch besides the warp and its block.
pub(crate) struct Ctx<'a> {
    pub program: &'a Program,
    pub info: &'a LaunchInfo,
    pub mem: &'a mut Flat,
    /// Cached memory: `.global`/`.shared` accesses and fences become in-flight memory programs.
    pub cache: Option<&'a mut memory_model::cached::Cached>,
    pub block: u32,
    pub special: SpecialCtx,
    /// Recording events (observed steps only).
    pub events: Option<&'a mut Vec<Event>>,
    /// `EventDetail::Full`: every `Executed` event carries the SIMT stack (else barriers' only).
    pub full_detail: bool,
    pub warp_index: u32,
    /// The derivation so far (device and context rules), for events.
    pub prefix: &'a [Rule],
    /// Observing: the lanes of the current instruction whose result PTX leaves unspecified (see
    /// [`unspecified_lanes`]), taken by its `Executed` event.
    pub unspecified: u64,
}

impl Ctx<'_> {
    #[inline]
    pub fn observing(&self) -> bool {
        self.events.is_some()
    }

    /// The derivation of an event: `prefix` then `rules`; empty under `EventDetail::Monitors`
    /// (the monitors never read one, and building them is a measurable part of a monitored run).
    pub fn derivation(&self, rules: &[Rule]) -> Derivation {
        if self.full_detail {
            Derivation::with_prefix(self.prefix, rules)
        } else {
            Derivation::default()
        }
    }

    /// The derivation of the memory events of a warp instruction applying `rule`: built once
    /// per instruction (not per lane) and cloned into each lane's event. `None` when not
    /// observing.
    fn mem_derivation(&self, rule: Rule) -> Option<Derivation> {
        self.observing()
            .then(|| self.derivation(&[Rule::WarpMem, rule]))
    }

    /// Records one lane's access, if observing (`derivation` from [`Ctx::mem_derivation`]).
    #[allow(clippy::too_many_arguments)]
    fn mem_event(
        &mut self,
        derivation: &Option<Derivation>,
        lane: usize,
        kind: AccessKind,
        space: MemSpace,
        (address, size): (u64, u32),
        value: u64,
        unchanged: bool,
    ) {
        let (block, warp) = (self.block, self.warp_index);
        if let (Some(ev), Some(derivation)) = (self.events.as_deref_mut(), derivation) {
            ev.push(Event::Memory {
                block,
                warp,
                lane: lane as u32,
                kind,
                space,
                address,
                size,
                value,
                derivation: derivation.clone(),
                unchanged,
            });
        }
    }

    /// Records the accesses of a warp-wide fast-path `ld`/`st` in ascending lane order, as the
    /// per-lane path records them one by one.
    fn trace_events(
        &mut self,
        derivation: &Option<Derivation>,
        trace: &mut super::fast::LaneTrace,
        (kind, space, size): (AccessKind, MemSpace, u32),
    ) {
        if !self.full_detail {
            // Only the monitors read these events: one for the whole warp.
            let (block, warp) = (self.block, self.warp_index);
            if let (Some(ev), Some(derivation)) = (self.events.as_deref_mut(), derivation) {
                ev.push(Event::WarpMemory {
                    block,
                    warp,
                    lanes: trace.done,
                    kind,
                    space,
                    size,
                    addresses: std::mem::take(&mut trace.addrs).into_boxed_slice(),
                    derivation: derivation.clone(),
                    unchanged: trace.unchanged & trace.done,
                });
            }
            return;
        }
        // Full detail: the trace was asked for values (`LaneTrace::new(cx.full_detail)`).
        for (i, l) in lanes(trace.done).enumerate() {
            let (address, value) = (trace.addrs[i], trace.vals[i]);
            let unchanged = trace.unchanged >> l & 1 == 1;
            self.mem_event(
                derivation,
                l,
                kind,
                space,
                (address, size),
                value,
                unchanged,
            );
        }
    }
}

/// Reads a source operand for one lane.
#[inline(always)]
pub(crate) fn read_src(
    regs: &[u64],
    ws: usize,
    s: &Src,
    lane: usize,
    sp: &SpecialCtx,
    fb: &[u32],
) -> u64 {
    match *s {
        Src::Reg(r) => regs[r.0 as usize * ws + lane],
        Src::Imm(v) => v,
        Src::Special(x) => sp.read(x, lane as u32),
        Src::FrameAddr(o) => fb[lane] as u64 + o as u64,
    }
}

#[inline(always)]
pub(crate) fn read_pred(
    regs: &[u64],
    ws: usize,
    p: &PredSrc,
    lane: usize,
    sp: &SpecialCtx,
    fb: &[u32],
) -> bool {
    (read_src(regs, ws, &p.src, lane, sp, fb) != 0) != p.negated
}

/// The thread's linear id in its block.
#[inline]
fn who(cx: &Ctx, w: &Warp, lane: usize) -> Who {
    Who {
        block: cx.block,
        thread: w.tid_base + lane as u32,
    }
}

/// The state space and in-space address an access of `space` at `addr` denotes for one lane.
/// `.param` accesses in a kernel read the kernel parameter buffer; in a `.func`, and whenever
/// the address is frame-relative, they are the frame's `.param` variables in `.local` memory
/// (thesis 5.1.3 step 3).
#[inline]
pub(crate) fn resolve(space: Space, base: AddrBase, addr: u64, in_kernel: bool) -> (MemSpace, u64) {
    match space {
        Space::Generic => from_generic(addr),
        Space::Global => (MemSpace::Global, addr),
        Space::Shared => (MemSpace::Shared, addr),
        Space::Local => (MemSpace::Local, addr),
        Space::Const => (MemSpace::Const, addr),
        Space::Param => {
            if base == AddrBase::Frame || !in_kernel {
                (MemSpace::Local, addr)
            } else {
                (MemSpace::Param, addr)
            }
        }
    }
}

#[inline(always)]
/// The space and in-space address that lane `l` of an `ld`/`st` of `n` elements of `size` bytes
/// accesses; a vector access (`.v2`, `.v4`) must be aligned to its whole size (PTX ISA 9.7.9.8).
fn lane_address(
    (regs, ws, fb): (&[u64], usize, &[u32]),
    (space, addr, in_kernel): (Space, &Address, bool),
    l: usize,
    (size, n): (u32, u32),
    what: &str,
) -> Result<(MemSpace, u64), Fault> {
    let a = address(regs, ws, addr, l, fb);
    let (ms, a) = resolve(space, addr.base, a, in_kernel);
    if n > 1 && a % (size as u64 * n as u64) != 0 {
        return Err(Fault::new(
            ErrorKind::Misaligned,
            Some(l),
            format!(
                "{what}.v{n}: {} address {a:#x} is not aligned to the vector size ({} bytes)",
                memory_model::space_name(ms),
                size * n
            ),
        ));
    }
    Ok((ms, a))
}

fn address(regs: &[u64], ws: usize, a: &Address, lane: usize, fb: &[u32]) -> u64 {
    let base = match a.base {
        AddrBase::Reg(r) => regs[r.0 as usize * ws + lane],
        AddrBase::Absolute => 0,
        AddrBase::Frame => fb[lane] as u64,
    };
    base.wrapping_add(a.offset as u64)
}

/// The memory space of an explicit `.global`/`.shared` access (no generic or frame resolution).
#[inline]
fn direct_space(space: Space) -> Option<MemSpace> {
    match space {
        Space::Global => Some(MemSpace::Global),
        Space::Shared => Some(MemSpace::Shared),
        _ => None,
    }
}

pub(super) fn mem_space_of(space: Space) -> Option<MemSpace> {
    match space {
        Space::Generic => None,
        Space::Global => Some(MemSpace::Global),
        Space::Shared => Some(MemSpace::Shared),
        Space::Local => Some(MemSpace::Local),
        Space::Const => Some(MemSpace::Const),
        Space::Param => Some(MemSpace::Param),
    }
}

/// Sign- or zero-extends a loaded value to the destination register's width.
#[inline]
pub(super) fn extend(v: u64, size: u32, signed: bool, dst_bits: u32) -> u64 {
    let v = if signed && size < 8 {
        let sh = 64 - size * 8;
        (((v << sh) as i64) >> sh) as u64
    } else {
        v
    };
    if dst_bits >= 64 {
        v
    } else {
        v & ((1u64 << dst_bits) - 1)
    }
}

/// Executes a data, memory or warp-collective instruction for the lanes in `exec` at call level
/// `level`; `group` are the lanes executing the warp instruction (α under the SIMT stack, the
/// converged group under ITS) for `activemask`.
#[allow(clippy::too_many_arguments)]
/// The lanes of `exec` for which `op` computes a value PTX leaves unspecified: an integer
/// `div`/`rem` whose divisor is zero (PTX ISA 9.7.1.8 `div`, 9.7.1.9 `rem`: "the result is
/// unspecified"). Read before the instruction runs, since it may overwrite its divisor.
fn unspecified_lanes(
    regs: &[u64],
    ws: usize,
    sp: &SpecialCtx,
    fb: &[u32],
    exec: u64,
    op: &Op,
) -> u64 {
    let Op::Binary {
        op: BinaryOp::Div | BinaryOp::Rem,
        ty,
        b,
        ..
    } = op
    else {
        return 0;
    };
    // Integer types only: a float division by zero is defined (IEEE 754 infinities and NaNs).
    if alu::float_fmt(*ty).is_some() {
        return 0;
    }
    let m = alu::mask(*ty);
    let mut zero = 0;
    let mut rest = exec;
    while rest != 0 {
        let l = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        if read_src(regs, ws, b, l, sp, fb) & m == 0 {
            zero |= 1 << l;
        }
    }
    zero
}

pub(crate) fn exec_data(
    cx: &mut Ctx,
    w: &mut Warp,
    level: usize,
    exec: u64,
    group: u64,
    pc: Pc,
    func: FuncId,
    op: &Op,
) -> Result<(), Fault> {
    let ws = cx.info.warp_size as usize;
    let sp = cx.special;
    let in_kernel = func == cx.info.entry;
    let lvl = &mut w.levels[level];
    let fb = &lvl.frame_base;
    let regs = &mut lvl.regs;
    if cx.events.is_some() {
        cx.unspecified = unspecified_lanes(regs, ws, &sp, fb, exec, op);
    }
    if super::fast::try_exec(regs, fb, ws, &sp, exec, op) {
        return Ok(());
    }
    macro_rules! each {
        (|$l:ident| $body:expr) => {{
            let mut m = exec;
            while m != 0 {
                let $l = m.trailing_zeros() as usize;
                m &= m - 1;
                $body;
            }
        }};
    }
    macro_rules! rd {
        ($s:expr, $l:expr) => {
            read_src(regs, ws, $s, $l, &sp, fb)
        };
    }
    macro_rules! wr {
        ($r:expr, $l:expr, $v:expr) => {
            regs[$r.0 as usize * ws + $l] = $v
        };
    }
    match op {
        Op::Unary {
            op,
            ty,
            flags,
            dst,
            a,
        } => {
            let (op, ty, flags) = (*op, *ty, *flags);
            if op == crate::program::UnaryOp::Mov {
                each!(|l| {
                    let v = rd!(a, l);
                    wr!(dst, l, v)
                });
            } else {
                each!(|l| {
                    let v = alu::unary(op, ty, flags, rd!(a, l));
                    wr!(dst, l, v)
                });
            }
        }
        Op::Binary {
            op,
            ty,
            flags,
            dst,
            a,
            b,
        } => {
            let (op, ty, flags) = (*op, *ty, *flags);
            let mut carry = w.carry;
            each!(|l| {
                let mut c = carry >> l & 1 == 1;
                let v = alu::binary(op, ty, flags, rd!(a, l), rd!(b, l), &mut c);
                carry = (carry & !(1 << l)) | ((c as u64) << l);
                wr!(dst, l, v)
            });
            w.carry = carry;
        }
        Op::Ternary {
            op,
            ty,
            flags,
            dst,
            a,
            b,
            c,
        } => {
            let (op, ty, flags) = (*op, *ty, *flags);
            let mut carry = w.carry;
            each!(|l| {
                let mut cf = carry >> l & 1 == 1;
                let v = alu::ternary(op, ty, flags, rd!(a, l), rd!(b, l), rd!(c, l), &mut cf);
                carry = (carry & !(1 << l)) | ((cf as u64) << l);
                wr!(dst, l, v)
            });
            w.carry = carry;
        }
        Op::Bfi {
            ty,
            dst,
            a,
            b,
            pos,
            len,
        } => each!(|l| {
            let v = alu::bfi(*ty, rd!(a, l), rd!(b, l), rd!(pos, l), rd!(len, l));
            wr!(dst, l, v)
        }),
        Op::Prmt { mode, dst, a, b, c } => each!(|l| {
            let v = alu::prmt(*mode, rd!(a, l), rd!(b, l), rd!(c, l));
            wr!(dst, l, v)
        }),
        Op::Pack {
            part_ty,
            dst,
            parts,
        } => {
            let bits = type_size(*part_ty) * 8;
            let mask = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            each!(|l| {
                let mut v = 0u64;
                for (i, p) in parts.iter().enumerate() {
                    let sh = i as u32 * bits;
                    if sh < 64 {
                        v |= (rd!(p, l) & mask) << sh;
                    }
                }
                wr!(dst, l, v)
            });
        }
        Op::Unpack { part_ty, dsts, src } => {
            let bits = type_size(*part_ty) * 8;
            let mask = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            each!(|l| {
                let v = rd!(src, l);
                for (i, d) in dsts.iter().enumerate() {
                    let sh = i as u32 * bits;
                    if let Some(d) = d
                        && sh < 64
                    {
                        wr!(d, l, (v >> sh) & mask);
                    }
                }
            });
        }
        Op::Cvt {
            dst_ty,
            src_ty,
            flags,
            dst,
            a,
        } => {
            // A destination register wider than the result type receives the value sign- or
            // zero-extended, as for `ld` (PTX ISA 6.4.2, "Operand Size Exceeding Instruction-Type
            // Size"): `cvt.s16.s8` into a `.b32` register writes 0xFFFFFFC2, not 0xFFC2.
            let (size, signed) = (type_size(*dst_ty), type_signed(*dst_ty));
            let bits = reg_bits(cx.program, func, dst.0);
            each!(|l| {
                let v = alu::cvt(*dst_ty, *src_ty, *flags, rd!(a, l));
                wr!(dst, l, extend(v, size, signed, bits))
            })
        }
        Op::Cvta {
            to_generic: tg,
            space,
            dst,
            a,
        } => {
            let ms = mem_space_of(*space).unwrap_or(MemSpace::Global);
            each!(|l| {
                let v = rd!(a, l);
                // cvta.to.space of an address outside that space's window is undefined (PTX ISA
                // 9.7.9.17); cudasem subtracts the window base anyway.
                let r = if *tg {
                    to_generic(ms, v)
                } else {
                    v.wrapping_sub(to_generic(ms, 0))
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
        Op::Setp {
            cmp,
            ty,
            ftz,
            dst,
            dst_neg,
            a,
            b,
            combine,
        } => each!(|l| {
            // `(t, !t)`, or the low and high halves' results of a packed half type.
            let (p, q) = alu::setp_pair(*cmp, *ty, *ftz, rd!(a, l), rd!(b, l));
            let (p, q) = match combine {
                None => (p, q),
                Some((bop, c)) => {
                    let c = read_pred(regs, ws, c, l, &sp, fb);
                    (combine_bool(*bop, p, c), combine_bool(*bop, q, c))
                }
            };
            wr!(dst, l, p as u64);
            if let Some(q_reg) = dst_neg {
                wr!(q_reg, l, q as u64);
            }
        }),
        Op::Set {
            cmp,
            dst_ty,
            src_ty,
            ftz,
            dst,
            a,
            b,
            combine,
        } => each!(|l| {
            let c = combine.map(|(bop, c)| (bop, read_pred(regs, ws, &c, l, &sp, fb)));
            let v = alu::set_result(*cmp, *dst_ty, *src_ty, *ftz, rd!(a, l), rd!(b, l), c);
            wr!(dst, l, v)
        }),
        Op::Slct {
            c_ty,
            ftz,
            dst,
            a,
            b,
            c,
            ..
        } => each!(|l| {
            let v = alu::slct(*c_ty, *ftz, rd!(a, l), rd!(b, l), rd!(c, l));
            wr!(dst, l, v)
        }),
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
            // Under cached memory accesses become in-flight programs: the per-lane path only.
            let mut trace_buf;
            let mut trace = if cx.observing() {
                trace_buf = super::fast::LaneTrace::new(cx.full_detail);
                Some(&mut trace_buf)
            } else {
                None
            };
            if let (1, Some(ms), Some(Some(d))) = (n, direct_space(*space), dst.first())
                && size <= 8
                && cx.cache.is_none()
                && let Some(res) = super::fast::load_traced(
                    cx.mem,
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
                if let Some(t) = trace {
                    cx.trace_events(&deriv, t, (AccessKind::Load, ms, size));
                }
                return res.map_err(|(l, e)| Fault::mem(l, e, "ld"));
            }
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let (ms, a) = lane_address(
                    (regs, ws, fb),
                    (*space, addr, in_kernel),
                    l,
                    (size, n),
                    "ld",
                )?;
                let who = Who {
                    block: cx.block,
                    thread: w.tid_base + l as u32,
                };
                for (i, d) in dst.iter().take(n as usize).enumerate() {
                    let ea = a + i as u64 * size as u64;
                    if let Some(cache) = cx.cache.as_deref_mut()
                        && super::memory_ops::cached_space(ms)
                    {
                        cx.mem
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
                        cache.issue(super::memory_ops::load_request(
                            who,
                            sp.sm,
                            (ms, ea, size.min(8)),
                            qual,
                            dest,
                        ));
                        // The access is made now (its value arrives with a later memory step):
                        // the monitors see it here, as under flat memory.
                        cx.mem_event(&deriv, l, AccessKind::Load, ms, (ea, size), 0, false);
                        continue;
                    }
                    let v = if size > 8 {
                        cx.mem
                            .load(who, ms, ea, 8)
                            .map_err(|e| Fault::mem(l, e, "ld"))?
                    } else {
                        cx.mem
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
                            regs[d.0 as usize * ws + l] = v;
                            v
                        }
                        None => v,
                    };
                    cx.mem_event(&deriv, l, AccessKind::Load, ms, (ea, size), v, false);
                }
            }
        }
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
            let mut trace_buf;
            let mut trace = if cx.observing() {
                trace_buf = super::fast::LaneTrace::new(cx.full_detail);
                Some(&mut trace_buf)
            } else {
                None
            };
            if let (1, Some(ms), Some(s0)) = (n, direct_space(*space), src.first())
                && cx.cache.is_none()
                && let Some(res) = super::fast::store_traced(
                    cx.mem,
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
                if let Some(t) = trace {
                    cx.trace_events(&deriv, t, (AccessKind::Store, ms, size));
                }
                return res.map_err(|(l, e)| Fault::mem(l, e, "st"));
            }
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let (ms, a) = lane_address(
                    (regs, ws, fb),
                    (*space, addr, in_kernel),
                    l,
                    (size, n),
                    "st",
                )?;
                let who = Who {
                    block: cx.block,
                    thread: w.tid_base + l as u32,
                };
                let mask = if size >= 8 {
                    u64::MAX
                } else {
                    (1u64 << (size * 8)) - 1
                };
                for (i, s) in src.iter().take(n as usize).enumerate() {
                    let ea = a + i as u64 * size as u64;
                    let v = read_src(regs, ws, s, l, &sp, fb);
                    let unchanged;
                    if let Some(cache) = cx.cache.as_deref_mut()
                        && super::memory_ops::cached_space(ms)
                    {
                        cx.mem
                            .check_access(who, ms, ea, size, true)
                            .map_err(|e| Fault::mem(l, e, "st"))?;
                        cache.issue(super::memory_ops::store_request(
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
                                .load(who, ms, ea, size)
                                .is_ok_and(|old| old == v & mask);
                        cx.mem
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
            let size = type_size(*ty).min(8);
            let deriv = cx.mem_derivation(Rule::Atom);
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let ad = address(regs, ws, addr, l, fb);
                let (ms, ad) = resolve(*space, addr.base, ad, in_kernel);
                let av = read_src(regs, ws, a, l, &sp, fb);
                let bv = b
                    .as_ref()
                    .map(|b| read_src(regs, ws, b, l, &sp, fb))
                    .unwrap_or(0);
                let who = Who {
                    block: cx.block,
                    thread: w.tid_base + l as u32,
                };
                if let Some(cache) = cx.cache.as_deref_mut()
                    && super::memory_ops::cached_space(ms)
                {
                    cx.mem
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
                        code: pc,
                        a: av,
                        b: bv,
                    };
                    cache.issue(super::memory_ops::atomic_request(
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
                    .atomic(who, ms, ad, size, |old| {
                        alu::atom_new_value(op, ty, old, av, bv)
                    })
                    .map_err(|e| Fault::mem(l, e, "atom"))?;
                if let Some(d) = dst {
                    regs[d.0 as usize * ws + l] = old;
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
        Op::Vote {
            mode,
            dst,
            pred,
            mask,
        } => {
            let member = mask
                .as_ref()
                .map(|m| rd!(m, exec.trailing_zeros() as usize))
                .unwrap_or(u64::MAX);
            let part = exec & member;
            let mut ballot = 0u64;
            each!(|l| {
                if part >> l & 1 == 1 && read_pred(regs, ws, pred, l, &sp, fb) {
                    ballot |= 1 << l;
                }
            });
            // thesis 5.4.2 `vote`: inactive lanes vote false for .ballot.
            let v = match mode {
                VoteMode::All => (ballot == part) as u64,
                VoteMode::Any => (ballot != 0) as u64,
                VoteMode::Uni => (ballot == 0 || ballot == part) as u64,
                VoteMode::Ballot => ballot,
            };
            each!(|l| wr!(dst, l, v));
        }
        Op::ActiveMask { dst } => each!(|l| wr!(dst, l, group)),
        Op::Shfl {
            mode,
            dst,
            dst_pred,
            a,
            b,
            c,
            ..
        } => {
            let mut vals = [0u64; 64];
            let mut preds = [false; 64];
            each!(|l| {
                // Only `b[4:0]`, `c[4:0]` and `c[12:8]` matter (PTX ISA 9.7.9.6): a delta of 33
                // shuffles by 1, as on hardware.
                let bval = (rd!(b, l) & 0x1f) as i64;
                let c_raw = rd!(c, l) as i64;
                let cval = c_raw & 0x1f;
                let lane = l as i64;
                let segmask = (c_raw >> 8) & 0x1f;
                let max_lane = (lane & segmask) | (cval & !segmask);
                let min_lane = lane & segmask;
                // PTX ISA 9.7.9.6 (shfl.sync) pseudocode.
                let (j, pval) = match mode {
                    ShflMode::Up => (lane - bval, lane - bval >= max_lane),
                    ShflMode::Down => (lane + bval, lane + bval <= max_lane),
                    ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
                    ShflMode::Idx => {
                        let j = min_lane | (bval & !segmask);
                        (j, j <= max_lane)
                    }
                };
                let j = if pval && (0..ws as i64).contains(&j) {
                    j as usize
                } else {
                    l
                };
                // A source lane outside the executing lanes is undefined in PTX: cudasem reads its
                // register anyway (deterministic).
                vals[l] = rd!(a, j);
                preds[l] = pval;
            });
            each!(|l| {
                wr!(dst, l, vals[l]);
                if let Some(p) = dst_pred {
                    wr!(p, l, preds[l] as u64);
                }
            });
        }
        Op::Match {
            all,
            dst,
            dst_pred,
            a,
            mask,
            ..
        } => {
            let member = rd!(mask, exec.trailing_zeros() as usize);
            let part = exec & member;
            let mut vals = [0u64; 64];
            each!(|l| vals[l] = rd!(a, l));
            let first = vals[part.trailing_zeros().min(63) as usize];
            let all_eq = lanes(part).all(|l| vals[l] == first);
            each!(|l| {
                let v = if *all {
                    if all_eq { part } else { 0 }
                } else {
                    lanes(part)
                        .filter(|&k| vals[k] == vals[l])
                        .fold(0u64, |m, k| m | 1 << k)
                };
                wr!(dst, l, v);
                if let Some(p) = dst_pred {
                    wr!(p, l, all_eq as u64);
                }
            });
        }
        Op::Redux {
            op,
            ty,
            dst,
            a,
            mask,
        } => {
            let member = rd!(mask, exec.trailing_zeros() as usize);
            let part = exec & member;
            let mut vals = [0u64; 64];
            let mut n = 0;
            for l in lanes(part) {
                vals[n] = rd!(a, l);
                n += 1;
            }
            let r = alu::redux(*op, *ty, &vals[..n]);
            each!(|l| wr!(dst, l, r));
        }
        Op::Fence { .. } | Op::Nop | Op::WarpSync { .. } => {
            if let (Op::Fence { level, order }, Some(cache)) = (op, cx.cache.as_deref_mut()) {
                let tid_base = w.tid_base;
                each!(|l| cache.issue(super::memory_ops::fence_request(
                    Who {
                        block: cx.block,
                        thread: tid_base + l as u32,
                    },
                    sp.sm,
                    *level,
                    *order,
                )));
            } else if let Op::Fence { level, .. } = op {
                let scope = match level {
                    crate::program::FenceLevel::Cta => memory_model::FenceScope::Cta,
                    crate::program::FenceLevel::Gpu => memory_model::FenceScope::Gpu,
                    crate::program::FenceLevel::Sys => memory_model::FenceScope::Sys,
                };
                each!(|l| cx.mem.fence(who(cx, w, l), scope));
            }
        }
        Op::Trap => {
            if exec != 0 {
                return Err(Fault::new(
                    ErrorKind::Trap,
                    Some(exec.trailing_zeros() as usize),
                    "trap executed",
                ));
            }
        }
        // Control flow and barriers are handled by the warp models.
        Op::Bra { .. }
        | Op::BraIndirect { .. }
        | Op::Call { .. }
        | Op::Ret
        | Op::Exit
        | Op::Barrier { .. }
        | Op::Ssy { .. }
        | Op::Sync
        | Op::Brk
        | Op::PreBrk { .. }
        | Op::PreRet { .. } => {
            return Err(Fault::new(
                ErrorKind::Stuck,
                None,
                format!("internal: {op:?} reached exec_data"),
            ));
        }
    }
    let _ = pc;
    Ok(())
}

#[inline]
fn combine_bool(op: crate::program::BoolOp, a: bool, b: bool) -> bool {
    match op {
        crate::program::BoolOp::And => a && b,
        crate::program::BoolOp::Or => a || b,
        crate::program::BoolOp::Xor => a ^ b,
    }
}

/// The rule name of a data instruction (thread rules, thesis 5.3.2).
pub(crate) fn data_rule(op: &Op) -> (Rule, Rule) {
    match op {
        Op::Unary {
            op: crate::program::UnaryOp::Mov,
            ..
        }
        | Op::Pack { .. }
        | Op::Unpack { .. } => (Rule::WarpMem, Rule::Mov),
        Op::Setp { .. } | Op::Set { .. } => (Rule::WarpMem, Rule::Setp),
        Op::Ld { .. } => (Rule::WarpMem, Rule::Ld),
        Op::St { .. } => (Rule::WarpMem, Rule::St),
        Op::Atom { .. } => (Rule::WarpMem, Rule::Atom),
        Op::Vote { .. } => (Rule::WarpComm, Rule::Vote),
        Op::Shfl { .. } => (Rule::WarpComm, Rule::Shfl),
        Op::Match { .. } => (Rule::WarpComm, Rule::Match),
        Op::Redux { .. } => (Rule::WarpComm, Rule::Redux),
        Op::ActiveMask { .. } => (Rule::WarpComm, Rule::ActiveMask),
        Op::Fence { .. } => (Rule::WarpBra, Rule::Membar),
        Op::WarpSync { .. } => (Rule::WarpComm, Rule::WarpSync),
        Op::Trap => (Rule::WarpBra, Rule::Trap),
        Op::Nop => (Rule::WarpBra, Rule::Nop),
        Op::Cvta { .. } | Op::IsSpace { .. } => (Rule::WarpMem, Rule::Cvta),
        _ => (Rule::WarpMem, Rule::Dop),
    }
}

/// True for the warp-synchronous instructions whose mask operand names lanes that must meet
/// (ITS/threads rendezvous): `vote.sync`, `shfl.sync`, `match.sync`, `redux.sync`, `bar.warp.sync`.
pub(crate) fn sync_mask(op: &Op) -> Option<&Src> {
    match op {
        Op::Vote { mask: Some(m), .. } | Op::Shfl { mask: Some(m), .. } => Some(m),
        Op::Match { mask, .. } | Op::Redux { mask, .. } | Op::WarpSync { mask } => Some(mask),
        _ => None,
    }
}
