//! Instruction execution over a warp's lanes (thesis 5.3.2 thread rules, 5.4.2 votes; PTX ISA 9.7).
//!
//! Data instructions run in one tight loop over the executing lanes (active, guard true) on the
//! structure-of-arrays registers of one call level; arithmetic is `crate::alu`'s. Memory accesses
//! go to the [`MemorySystem`] lane by lane in ascending lane order: under flat memory the lanes of
//! one warp instruction are serialised in that order (digest §16 item 22: n operations, a fixed
//! order; two lanes storing to one address: the highest lane's value stays).
//! Control flow, barriers and calls are the warp models' business (`warp::*`, `block`).

use super::thread::{Level, SpecialCtx, reg_bits, type_signed, type_size};
use super::warp::{Warp, lanes};
use super::{ErrorKind, LaunchInfo};
use crate::alu;
use crate::machine::regs::Regs;
use crate::program::{
    AddrBase, Address, BinaryOp, FuncId, Op, PredSrc, Program, ShflMode, Space, Src, VoteMode,
};
use memory_model::{
    MemError, MemErrorKind, MemSpace, MemoryEnv, MemorySystem, Who, from_generic, to_generic,
};
use traces::{AccessKind, Derivation, Event, Rule};

/// `each!(|l| ..)` over the executing lanes, `rd!(src, l)` and `wr!(reg, l, v)` on one call
/// level's registers: the thread rules' vocabulary, defined in each rule function over its
/// locals (`$` is passed in so that the generated macros can have their own parameters).
#[rustfmt::skip] // rustfmt re-indents the inner macros on every run (the `$d` tokens)
macro_rules! lane_macros {
    ($d:tt, $regs:ident, $sp:ident, $fb:ident, $exec:ident) => {
        #[allow(unused_macros)]
        macro_rules! each {
            (|$d l:ident| $d body:expr) => {{
                let mut m = $exec;
                while m != 0 {
                    let $d l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    $d body;
                }
            }};
        }
        #[allow(unused_macros)]
        macro_rules! rd {
            ($d s:expr, $d l:expr) => {
                read_src($regs, $d s, $d l, &$sp, $fb)
            };
        }
        #[allow(unused_macros)]
        macro_rules! wr {
            ($d r:expr, $d l:expr, $d v:expr) => {
                $regs.set($d r.0 as usize, $d l, $d v)
            };
        }
    };
}

mod arith;
mod collective;
mod memory;

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
    /// The memory environment: the spaces it performs at once are read and written on its
    /// pages ([`MemoryEnv::pages_mut`]); the others' accesses and fences are issued
    /// ([`MemoryEnv::issue`]) and stay in flight.
    ///
    /// [`MemoryEnv::pages_mut`]: memory_model::MemoryEnv::pages_mut
    /// [`MemoryEnv::issue`]: memory_model::MemoryEnv::issue
    pub mem: &'a mut memory_model::Memory,
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
    /// No thread of the block can write shared memory before the executing threads next
    /// arrive at a barrier (deviation D30): set for a weak `ld.shared` under cached memory
    /// when [`super::memory_ops::block_cannot_write_shared`] holds, so that its lanes' loads
    /// may be performed at issue ([`memory_model::cached::Cached::load_at_issue`]).
    pub shared_quiet: bool,
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
    /// A trace of a warp-wide memory access's lanes, when observing (see
    /// [`super::fast::LaneTrace`]).
    fn lane_trace(&self) -> Option<super::fast::LaneTrace> {
        self.observing()
            .then(|| super::fast::LaneTrace::new(self.full_detail))
    }

    /// Records that warp `warp` arrived at barrier `barrier`, which has `arrived` of `expected`
    /// arrivals now (`warp_rule`: the warp model's rule that made the arrival).
    pub(crate) fn barrier_arrived(
        &mut self,
        warp_rule: Rule,
        warp: u32,
        barrier: u32,
        (arrived, expected): (u32, u32),
    ) {
        if let Some(ev) = self.events.as_deref_mut() {
            ev.push(Event::BarrierArrived {
                block: self.block,
                warp,
                barrier,
                arrived,
                expected,
                derivation: Derivation::with_prefix(self.prefix, &[warp_rule, Rule::BarSync]),
            });
        }
    }

    /// The end of a warp-wide access a fast path made: the lanes' events from its trace (when
    /// observing), the faulting lane's error located.
    fn warp_access_done(
        &mut self,
        derivation: &Option<Derivation>,
        trace: Option<&mut super::fast::LaneTrace>,
        access: (AccessKind, MemSpace, u32),
        res: Result<(), (usize, memory_model::MemError)>,
        what: &str,
    ) -> Result<(), Fault> {
        if let Some(t) = trace {
            self.trace_events(derivation, t, access);
        }
        res.map_err(|(l, e)| Fault::mem(l, e, what))
    }

    /// The base of the kernel parameters a `.param` access of `func` reads: the grid's own in
    /// the kernel, `None` in a `.func` (whose `.param` variables are its frame's).
    fn kernel_params(&self, func: FuncId) -> Option<u64> {
        (func == self.info.entry).then_some(self.info.param_base)
    }

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
pub(crate) fn read_src(regs: &Regs, s: &Src, lane: usize, sp: &SpecialCtx, fb: &[u32]) -> u64 {
    match *s {
        Src::Reg(r) => regs.at(r.0 as usize, lane),
        Src::Imm(v) => v,
        Src::Special(x) => sp.read(x, lane as u32),
        Src::FrameAddr(o) => fb[lane] as u64 + o as u64,
    }
}

#[inline(always)]
pub(crate) fn read_pred(
    regs: &Regs,
    p: &PredSrc,
    lane: usize,
    sp: &SpecialCtx,
    fb: &[u32],
) -> bool {
    (read_src(regs, &p.src, lane, sp, fb) != 0) != p.negated
}

/// One call level's registers as the thread rules read and write them (what `lane_macros!`
/// names): the warp size, the special registers, the lanes' frame bases, the registers.
#[inline(always)]
fn frame<'a>(cx: &Ctx, lvl: &'a mut Level) -> (usize, SpecialCtx, &'a [u32], &'a mut Regs) {
    let Level {
        regs, frame_base, ..
    } = lvl;
    (
        cx.info.shape.warp_size as usize,
        cx.special,
        frame_base,
        regs,
    )
}

/// The thread's linear id in its block.
#[inline]
fn who(cx: &Ctx, tid_base: u32, lane: usize) -> Who {
    Who {
        block: cx.block,
        thread: tid_base + lane as u32,
    }
}

/// The state space and in-space address an access of `space` at `addr` denotes for one lane.
/// `.param` accesses in a kernel read the kernel parameter buffer (`kernel_params`: the base of
/// the reading thread's grid's parameters in it; `None` outside the kernel function); in a
/// `.func`, and whenever the address is frame-relative, they are the frame's `.param` variables
/// in `.local` memory (thesis 5.1.3 step 3).
#[inline]
pub(crate) fn resolve(
    space: Space,
    base: AddrBase,
    addr: u64,
    kernel_params: Option<u64>,
) -> (MemSpace, u64) {
    match space {
        Space::Generic => from_generic(addr),
        Space::Global => (MemSpace::Global, addr),
        Space::Shared => (MemSpace::Shared, addr),
        Space::Local => (MemSpace::Local, addr),
        Space::Const => (MemSpace::Const, addr),
        Space::Param => match kernel_params {
            Some(params) if base != AddrBase::Frame => (MemSpace::Param, params.wrapping_add(addr)),
            _ => (MemSpace::Local, addr),
        },
    }
}

#[inline(always)]
/// The space and in-space address that lane `l` of an `ld`/`st` of `n` elements of `size` bytes
/// accesses; a vector access (`.v2`, `.v4`) must be aligned to its whole size (PTX ISA 9.7.9.8).
fn lane_address(
    (regs, fb): (&Regs, &[u32]),
    (space, addr, in_kernel): (Space, &Address, Option<u64>),
    l: usize,
    (size, n): (u32, u32),
    what: &str,
) -> Result<(MemSpace, u64), Fault> {
    let a = address(regs, addr, l, fb);
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

fn address(regs: &Regs, a: &Address, lane: usize, fb: &[u32]) -> u64 {
    let base = match a.base {
        AddrBase::Reg(r) => regs.at(r.0 as usize, lane),
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

/// The lanes of `exec` for which `op` computes a value PTX leaves unspecified: an integer
/// `div`/`rem` whose divisor is zero (PTX ISA 9.7.1.8 `div`, 9.7.1.9 `rem`: "the result is
/// unspecified"). Read before the instruction runs, since it may overwrite its divisor.
fn unspecified_lanes(regs: &Regs, sp: &SpecialCtx, fb: &[u32], exec: u64, op: &Op) -> u64 {
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
        if read_src(regs, b, l, sp, fb) & m == 0 {
            zero |= 1 << l;
        }
    }
    zero
}

/// Executes a data, memory or warp-collective instruction for the lanes in `exec` at call level
/// `level`; `group` are the lanes executing the warp instruction (α under the SIMT stack, the
/// converged group under ITS) for `activemask`. The thread rules (thesis 5.3.2, 5.4.2): the
/// warp-wide fast paths first, else the rule's function:
/// `arith::{dop, mov, setp}`, `memory::{cvta, ld, st, atom, membar}`, `collective::comm`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn exec_data(
    cx: &mut Ctx,
    w: &mut Warp,
    level: usize,
    exec: u64,
    group: u64,
    func: FuncId,
    op: &Op,
) -> Result<(), Fault> {
    let (ws, sp, fb, regs) = frame(cx, &mut w.levels[level]);
    if cx.events.is_some() {
        cx.unspecified = unspecified_lanes(regs, &sp, fb, exec, op);
    }
    if super::fast::try_exec(regs, fb, ws, &sp, exec, op) {
        return Ok(());
    }
    match op {
        Op::Unary { .. }
        | Op::Binary { .. }
        | Op::Ternary { .. }
        | Op::Bfi { .. }
        | Op::Prmt { .. } => arith::dop(cx, w, level, exec, op),
        Op::Pack { .. } | Op::Unpack { .. } | Op::Cvt { .. } => {
            arith::mov(cx, w, level, exec, func, op)
        }
        Op::Setp { .. } | Op::Set { .. } | Op::Slct { .. } => arith::setp(cx, w, level, exec, op),
        Op::Cvta { .. } | Op::IsSpace { .. } => memory::cvta(cx, w, level, exec, func, op),
        Op::Ld { .. } => memory::ld(cx, w, level, exec, func, op),
        Op::St { .. } => memory::st(cx, w, level, exec, func, op),
        Op::Atom { .. } => memory::atom(cx, w, level, exec, func, op),
        Op::Fence { .. } => memory::membar(cx, w, exec, op),
        Op::Vote { .. }
        | Op::ActiveMask { .. }
        | Op::Shfl { .. }
        | Op::Match { .. }
        | Op::Redux { .. }
        | Op::Mma(_)
        | Op::LdMatrix { .. } => collective::comm(cx, w, level, exec, group, op),
        Op::Extern { dst, ty, slot } => {
            extern_result(cx, w, level, exec, func, (*dst, *ty, *slot));
            Ok(())
        }
        // `bar.warp.sync` orders (the race monitor reads it); nothing to compute.
        Op::Nop | Op::WarpSync { .. } => Ok(()),
        Op::Trap => {
            if exec != 0 {
                return Err(Fault::new(
                    ErrorKind::Trap,
                    Some(exec.trailing_zeros() as usize),
                    "trap executed",
                ));
            }
            Ok(())
        }
        // Control flow and barriers are handled by the warp models.
        _ => Err(misrouted(op)),
    }
}

/// A call to a function without a body (deviation D28; see `machine::pick`): each executing
/// lane's result is the value it picked, or, when the launch gives one fixed value, the
/// function's result slot in `.const` memory, where the launch wrote it.
fn extern_result(
    cx: &mut Ctx,
    w: &mut Warp,
    level: usize,
    exec: u64,
    func: FuncId,
    (dst, ty, slot): (crate::program::RegId, ptx_parser::ScalarType, u64),
) {
    let size = type_size(ty).min(8);
    // The launch always writes the slot (a set's first value when it gives a set).
    let slot_reader = who(cx, w.tid_base, 0);
    let fixed = cx
        .mem
        .pages_mut()
        .load(slot_reader, MemSpace::Const, slot, size)
        .unwrap_or(0);
    let picked = w.picked & exec;
    w.picked &= !exec;
    let (signed, bits) = (type_signed(ty), reg_bits(cx.program, func, dst.0));
    let regs = &mut w.levels[level].regs;
    for l in lanes(exec) {
        let v = match &w.picks {
            Some(p) if picked >> l & 1 == 1 => p[l],
            _ => fixed,
        };
        regs.set(dst.0 as usize, l, extend(v, size, signed, bits));
    }
}

/// An instruction that reached a thread rule that does not execute it (a bug in cudasem).
#[cold]
fn misrouted(op: &Op) -> Fault {
    Fault::new(
        ErrorKind::Stuck,
        None,
        format!("internal: {op:?} reached the wrong thread rule"),
    )
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
        // The rule vocabulary (the `traces` crate) has no names of their own for the matrix
        // instructions: `mma` is a warp communication computing data, `ldmatrix` a load
        // (`ld`) followed by a shuffle of the rows among the lanes.
        Op::Mma(_) => (Rule::WarpComm, Rule::Dop),
        Op::LdMatrix { .. } => (Rule::WarpComm, Rule::Shfl),
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
        Op::Mma(m) => Some(&m.mask),
        Op::LdMatrix { mask, .. } => Some(mask),
        _ => None,
    }
}
