//! The registers an instruction reads or writes, for the cached memory model's scoreboard
//! (thesis 5.8.1: a warp whose next instruction uses a register blocked by a pending memory
//! operation cannot be scheduled), and the registers an operation may write, for the
//! load-time analyses (address forms).

use super::RegId;
use super::instr::{AddrBase, Address, BarrierKind, CallTarget, Instr, Op, ParamLoc, PredSrc, Src};

impl Instr {
    /// Calls `f` with every register the instruction (guard included) reads or writes; a
    /// register may be reported more than once.
    pub fn for_each_register(&self, f: &mut impl FnMut(RegId)) {
        if let Some(g) = &self.guard {
            f(g.reg);
        }
        self.op.for_each_register(f);
    }
}

fn src(s: &Src, f: &mut impl FnMut(RegId)) {
    if let Src::Reg(r) = s {
        f(*r);
    }
}

fn pred(p: &PredSrc, f: &mut impl FnMut(RegId)) {
    src(&p.src, f);
}

fn addr(a: &Address, f: &mut impl FnMut(RegId)) {
    if let AddrBase::Reg(r) = a.base {
        f(r);
    }
}

fn param(p: &ParamLoc, f: &mut impl FnMut(RegId)) {
    if let ParamLoc::Reg(r) = p {
        f(*r);
    }
}

impl Op {
    /// Calls `f` with every register the operation reads or writes.
    pub fn for_each_register(&self, f: &mut impl FnMut(RegId)) {
        match self {
            Op::Unary { .. }
            | Op::Cvt { .. }
            | Op::Cvta { .. }
            | Op::IsSpace { .. }
            | Op::Binary { .. }
            | Op::Ternary { .. }
            | Op::Prmt { .. }
            | Op::Slct { .. }
            | Op::Bfi { .. }
            | Op::Pack { .. }
            | Op::Unpack { .. }
            | Op::Setp { .. }
            | Op::Set { .. } => self.arith_registers(f),
            Op::Ld { .. } | Op::St { .. } | Op::Atom { .. } => self.memory_registers(f),
            Op::Barrier { .. }
            | Op::WarpSync { .. }
            | Op::Vote { .. }
            | Op::Shfl { .. }
            | Op::Match { .. }
            | Op::Redux { .. }
            | Op::ActiveMask { .. }
            | Op::Extern { .. }
            | Op::Mma(_)
            | Op::LdMatrix { .. } => self.warp_registers(f),
            Op::BraIndirect { .. }
            | Op::Call { .. }
            | Op::Fence { .. }
            | Op::Bra { .. }
            | Op::Ret
            | Op::Exit
            | Op::Trap
            | Op::Nop
            | Op::Ssy { .. }
            | Op::Sync
            | Op::Brk
            | Op::PreBrk { .. }
            | Op::PreRet { .. } => self.control_registers(f),
        }
    }

    /// [`Op::for_each_register`] of the arithmetic, comparison and conversion operations.
    fn arith_registers(&self, f: &mut impl FnMut(RegId)) {
        match self {
            Op::Unary { dst, a, .. } | Op::Cvt { dst, a, .. } | Op::Cvta { dst, a, .. } => {
                f(*dst);
                src(a, f);
            }
            Op::IsSpace { dst, a, .. } => {
                f(*dst);
                src(a, f);
            }
            Op::Binary { dst, a, b, .. } => {
                f(*dst);
                src(a, f);
                src(b, f);
            }
            Op::Ternary { dst, a, b, c, .. }
            | Op::Prmt { dst, a, b, c, .. }
            | Op::Slct { dst, a, b, c, .. } => {
                f(*dst);
                for s in [a, b, c] {
                    src(s, f);
                }
            }
            Op::Bfi {
                dst,
                a,
                b,
                pos,
                len,
                ..
            } => {
                f(*dst);
                for s in [a, b, pos, len] {
                    src(s, f);
                }
            }
            Op::Pack { dst, parts, .. } => {
                f(*dst);
                parts.iter().for_each(|s| src(s, f));
            }
            Op::Unpack { dsts, src: s, .. } => {
                dsts.iter().flatten().for_each(|d| f(*d));
                src(s, f);
            }
            Op::Setp {
                dst,
                dst_neg,
                a,
                b,
                combine,
                ..
            } => {
                f(*dst);
                if let Some(d) = dst_neg {
                    f(*d);
                }
                src(a, f);
                src(b, f);
                if let Some((_, p)) = combine {
                    pred(p, f);
                }
            }
            Op::Set {
                dst, a, b, combine, ..
            } => {
                f(*dst);
                src(a, f);
                src(b, f);
                if let Some((_, p)) = combine {
                    pred(p, f);
                }
            }
            _ => {}
        }
    }

    /// [`Op::for_each_register`] of the memory operations (`ld`, `st`, `atom`).
    fn memory_registers(&self, f: &mut impl FnMut(RegId)) {
        match self {
            Op::Ld { dst, addr: a, .. } => {
                dst.iter().flatten().for_each(|d| f(*d));
                addr(a, f);
            }
            Op::St {
                src: s, addr: a, ..
            } => {
                s.iter().for_each(|s| src(s, f));
                addr(a, f);
            }
            Op::Atom {
                dst,
                addr: ad,
                a,
                b,
                ..
            } => {
                if let Some(d) = dst {
                    f(*d);
                }
                addr(ad, f);
                src(a, f);
                if let Some(b) = b {
                    src(b, f);
                }
            }
            _ => {}
        }
    }

    /// [`Op::for_each_register`] of the barriers and warp-collective operations.
    fn warp_registers(&self, f: &mut impl FnMut(RegId)) {
        match self {
            Op::Barrier {
                kind, id, count, ..
            } => {
                src(id, f);
                if let Some(c) = count {
                    src(c, f);
                }
                if let BarrierKind::Red { dst, pred: p, .. } = kind {
                    f(*dst);
                    pred(p, f);
                }
            }
            Op::WarpSync { mask } => src(mask, f),
            Op::Vote {
                dst, pred: p, mask, ..
            } => {
                f(*dst);
                pred(p, f);
                if let Some(m) = mask {
                    src(m, f);
                }
            }
            Op::Shfl {
                dst,
                dst_pred,
                a,
                b,
                c,
                mask,
                ..
            } => {
                f(*dst);
                if let Some(d) = dst_pred {
                    f(*d);
                }
                for s in [a, b, c] {
                    src(s, f);
                }
                if let Some(m) = mask {
                    src(m, f);
                }
            }
            Op::Match {
                dst,
                dst_pred,
                a,
                mask,
                ..
            } => {
                f(*dst);
                if let Some(d) = dst_pred {
                    f(*d);
                }
                src(a, f);
                src(mask, f);
            }
            Op::Redux { dst, a, mask, .. } => {
                f(*dst);
                src(a, f);
                src(mask, f);
            }
            Op::ActiveMask { dst } | Op::Extern { dst, .. } => f(*dst),
            Op::Mma(m) => {
                m.d.iter().for_each(|r| f(*r));
                m.a.iter()
                    .chain(&m.b[..])
                    .chain(&m.c[..])
                    .for_each(|s| src(s, f));
            }
            Op::LdMatrix { num, dst, rows, .. } => {
                dst.iter().take(*num as usize).for_each(|r| f(*r));
                rows.iter().for_each(|r| f(*r));
            }
            _ => {}
        }
    }

    /// [`Op::for_each_register`] of the control transfers and fences (registers only in an indirect branch or call).
    fn control_registers(&self, f: &mut impl FnMut(RegId)) {
        match self {
            Op::BraIndirect { index, .. } => src(index, f),
            Op::Call {
                target, args, rets, ..
            } => {
                if let CallTarget::Indirect { reg, .. } = target {
                    f(*reg);
                }
                args.iter().chain(rets.iter()).for_each(|p| param(p, f));
            }
            _ => {}
        }
    }

    /// Whether the issuing threads must have no memory operation in flight first (cached
    /// memory, deviation D24): calls, returns and exits change the register file that pending
    /// loads would write; a barrier orders memory among its participants (PTX ISA 9.7.13.1,
    /// `bar`: "when the barrier completes, prior memory accesses requested by this thread are
    /// performed relative to all threads participating in the barrier"), so a thread arrives
    /// with its accesses performed, unless the barrier counts one thread
    /// ([`Op::barrier_counts_one_thread`]): its instance's only participant is the arriving
    /// thread, and it orders nothing for any other.
    pub fn drains_memory(&self) -> bool {
        match self {
            Op::Barrier { .. } => !self.barrier_counts_one_thread(),
            Op::Call { .. } | Op::Ret | Op::Exit | Op::Trap | Op::Brk => true,
            _ => false,
        }
    }

    /// Whether this is a barrier whose thread count is the immediate 1 (`bar.sync b, 1`: a
    /// warp size of 1, as litmus tests run; a count must be a multiple of the warp size, so
    /// a larger warp faults at the arrival). Such an instance completes with one thread: the
    /// count is fixed, and an arrival that finds the barrier already complete but not yet
    /// ended (thesis 5.5.2 makes `endBar` a step of its own) is, on the hardware, the only
    /// participant of the next instance. A count in a register, or the default count (every
    /// live thread of the block), is not looked at: such a barrier drains, as before.
    pub fn barrier_counts_one_thread(&self) -> bool {
        matches!(
            self,
            Op::Barrier {
                count: Some(Src::Imm(1)),
                ..
            }
        )
    }
}

impl Op {
    /// Calls `f` with every register the operation may write (exhaustive: a new operation
    /// must say what it writes). A guarded instruction may leave them unwritten in a lane.
    pub fn for_each_written(&self, f: &mut impl FnMut(RegId)) {
        match self {
            Op::Unary { dst, .. }
            | Op::Binary { dst, .. }
            | Op::Ternary { dst, .. }
            | Op::Bfi { dst, .. }
            | Op::Prmt { dst, .. }
            | Op::Pack { dst, .. }
            | Op::Cvt { dst, .. }
            | Op::Cvta { dst, .. }
            | Op::IsSpace { dst, .. }
            | Op::Set { dst, .. }
            | Op::Slct { dst, .. }
            | Op::Vote { dst, .. }
            | Op::Redux { dst, .. }
            | Op::ActiveMask { dst }
            | Op::Extern { dst, .. } => f(*dst),
            Op::Unpack { dsts, .. } => dsts.iter().flatten().for_each(|d| f(*d)),
            Op::Setp { dst, dst_neg, .. } => {
                f(*dst);
                dst_neg.iter().for_each(|q| f(*q));
            }
            Op::Ld { dst, .. } => dst.iter().flatten().for_each(|d| f(*d)),
            Op::Atom { dst, .. } => dst.iter().for_each(|d| f(*d)),
            Op::Shfl { dst, dst_pred, .. } | Op::Match { dst, dst_pred, .. } => {
                f(*dst);
                dst_pred.iter().for_each(|p| f(*p));
            }
            Op::Barrier { kind, .. } => {
                if let BarrierKind::Red { dst, .. } = kind {
                    f(*dst);
                }
            }
            Op::Mma(m) => m.d.iter().for_each(|d| f(*d)),
            Op::LdMatrix { dst, rows, .. } => dst.iter().chain(rows.iter()).for_each(|r| f(*r)),
            Op::Call { rets, .. } => rets.iter().for_each(|r| {
                if let ParamLoc::Reg(r) = r {
                    f(*r);
                }
            }),
            Op::St { .. }
            | Op::WarpSync { .. }
            | Op::Fence { .. }
            | Op::Bra { .. }
            | Op::BraIndirect { .. }
            | Op::Ret
            | Op::Exit
            | Op::Trap
            | Op::Nop
            | Op::Ssy { .. }
            | Op::Sync
            | Op::Brk
            | Op::PreBrk { .. }
            | Op::PreRet { .. } => {}
        }
    }
}
