//! The operations of a memory program, thesis 4.4.3 ("Operational expressions", 𝔒⟦−⟧): one
//! function per operation, with the thesis's name. An operation continues the micro step
//! (`Flow::Continue`), defers it (`Flow::Defer`: the step retries from the same statement), or
//! gets stuck (thesis ⊥: `Err(Stuck)`); it never ends the program (`end` is a statement).
//!
//! `σ` of the thesis is the op ([`Op`]: `value`, `new`, `buf`); `η` is the cache state, DRAM and
//! the shared memories. Operations on a line need the op's [`Geometry`] (the thesis's `σ_d` with
//! a cache operator); shared programs and fences have none, and a line operation in them is ⊥.

use super::engine::{Geometry, Op, decode_key, l1_mut, size_mask, stuck, write_back_to_dram};
use super::line::{self, Flow, Slot};
use super::program::OpName;
use super::{Cached, Delivery, OpId, Request, RequestKind, StepReport, Stuck};
use crate::{Flat, MemSpace, MemorySystem};

/// What every operation of one micro step knows: the op's id, its request, and its line (none
/// for shared programs and fences).
#[derive(Debug, Clone, Copy)]
pub(super) struct OpCx {
    pub id: OpId,
    pub req: Request,
    pub line: Option<Geometry>,
    pub name: OpName,
    /// The op's `doomed_hint`.
    pub hint: Option<line::DoomedHint>,
}

impl OpCx {
    /// The op's line; ⊥ for an op that has none (the thesis's "if σ_d.cop_ε ≠ ε").
    fn line(&self) -> Result<Geometry, Stuck> {
        self.line.ok_or_else(|| {
            stuck(
                Some(self.id),
                format!("{} needs a cached access", self.name.name()),
            )
        })
    }

    fn shared(&self) -> bool {
        self.req.space == MemSpace::Shared
    }

    /// ⊥ naming the operation and the line it needed.
    fn not_cached(&self, g: Geometry) -> Stuck {
        stuck(
            Some(self.id),
            format!("{}: line {:#x} is not cached", self.name.name(), g.key),
        )
    }
}

impl Geometry {
    /// The bytes the op writes (a store's value or an atomic's new value) placed in a line
    /// buffer.
    fn write_bytes(self, op: &Op) -> [u8; 64] {
        let v = match op.req.kind {
            RequestKind::Store { value, .. } => value,
            _ => op.new,
        };
        let size = op.req.size as usize;
        let mut b = [0u8; 64];
        b[self.off..self.off + size].copy_from_slice(&v.to_le_bytes()[..size]);
        b
    }

    /// The `size` bytes of the access in a line's data.
    fn extract(self, data: &[u8; 64], size: u32) -> u64 {
        let mut b = [0u8; 8];
        b[..size as usize].copy_from_slice(&data[self.off..self.off + size as usize]);
        u64::from_le_bytes(b)
    }
}

impl Cached {
    /// One operation of 𝔒⟦−⟧ (thesis 4.4.3), by name.
    /// `cx` names the operation and carries the op's line (the micro step locates it once).
    pub(super) fn exec(
        &mut self,
        cx: &OpCx,
        op: &mut Op,
        dram: &mut Flat,
        report: &mut StepReport,
    ) -> Result<Flow, Stuck> {
        let req = cx.req;
        match cx.name {
            OpName::ReadMem => self.read_mem(cx, op, dram),
            OpName::WriteMem => Self::write_mem(cx, op, dram),
            OpName::AtomOp => Self::atom_op(cx, op),
            OpName::WriteToRegs => Ok(Self::write_to_regs(cx, op, report)),
            // Registers are released when the op ends (`ended` in the report).
            OpName::ReleaseRegs => Ok(Flow::Continue),
            OpName::Lock => Ok(self.lock(cx)),
            OpName::Unlock => Ok(self.unlock(cx)),
            OpName::ReadL1 => self.read_l1(cx, op),
            OpName::ReadL2 => self.read_l2(cx, op),
            OpName::WriteL1 => self.write_l1(cx, op, dram),
            OpName::WriteL2 => self.write_l2(cx, op, dram),
            OpName::ReserveL1 => self.reserve_l1(cx, dram),
            OpName::ReserveL2 => self.reserve_l2(cx, dram),
            OpName::UpdateL1 => self.update_l1(cx, op),
            OpName::UpdateL2 => self.update_l2(cx, op),
            OpName::EvictL1 => self.evict_l1(cx),
            OpName::DiscardL1 => self.discard_l1(cx),
            OpName::ClassifyFirstL1 => self.classify_l1(cx, line::EvClass::First),
            OpName::ClassifyNormalL1 => self.classify_l1(cx, line::EvClass::Normal),
            OpName::ClassifyFirstL2 => self.classify_l2(cx, line::EvClass::First),
            OpName::ClassifyNormalL2 => self.classify_l2(cx, line::EvClass::Normal),
            OpName::FlushL1 => {
                self.flush(req.sm);
                Ok(Flow::Continue)
            }
            OpName::InvalidateL1 => self.invalidate_l1(cx),
        }
    }

    /// 𝔒⟦readMem⟧: copies memory into σ, η unchanged. Shared memory: the accessed word; global
    /// and local memory: the whole line from DRAM (the thesis's `read_device` of a cache word),
    /// bypassing the caches.
    fn read_mem(&self, cx: &OpCx, op: &mut Op, dram: &mut Flat) -> Result<Flow, Stuck> {
        let req = cx.req;
        if cx.shared() {
            op.value = dram
                .load(req.who, MemSpace::Shared, req.addr, req.size)
                .map_err(|e| stuck(Some(cx.id), e.message))?;
        } else {
            let g = cx.line()?;
            let lb = self.line_bytes as usize;
            match decode_key(g.key) {
                (MemSpace::Local, Some(who), addr) => {
                    dram.read_local_line(who, addr, &mut op.buf[..lb])
                }
                (_, _, addr) => dram.read_global_line(addr, &mut op.buf[..lb]),
            }
            op.buf_mask = self.full_mask();
        }
        Ok(Flow::Continue)
    }

    /// 𝔒⟦writeMem⟧: writes σ's value (a store's, or an atomic's new one) to shared memory; σ
    /// unchanged. Global writes go through the caches (`writeL1`/`writeL2`), so a `writeMem`
    /// outside shared memory is ⊥.
    fn write_mem(cx: &OpCx, op: &Op, dram: &mut Flat) -> Result<Flow, Stuck> {
        let req = cx.req;
        let v = match req.kind {
            RequestKind::Store { value, .. } => value,
            _ => op.new,
        };
        if !cx.shared() {
            return Err(stuck(Some(cx.id), "writeMem outside shared memory"));
        }
        dram.store(req.who, MemSpace::Shared, req.addr, req.size, v)
            .map_err(|e| stuck(Some(cx.id), e.message))?;
        Ok(Flow::Continue)
    }

    /// 𝔒⟦atomOp⟧: σ's new value from its old one and the request's operation, type and
    /// operands, with [`crate::atomic::apply`] (the function the machine's flat path uses).
    fn atom_op(cx: &OpCx, op: &mut Op) -> Result<Flow, Stuck> {
        let RequestKind::Atomic { rmw, .. } = cx.req.kind else {
            return Err(stuck(Some(cx.id), "atomOp on a request that is no atomic"));
        };
        if rmw.ty.size() != cx.req.size {
            return Err(stuck(
                Some(cx.id),
                format!(
                    "atomOp: an atomic of type {:?} accesses {} bytes, not {}",
                    rmw.ty,
                    cx.req.size,
                    rmw.ty.size()
                ),
            ));
        }
        op.new =
            crate::atomic::apply(rmw.op, rmw.ty, op.value, rmw.a, rmw.b) & size_mask(cx.req.size);
        Ok(Flow::Continue)
    }

    /// 𝔒⟦writeToRegs⟧: delivers σ's value to the destination register (the machine writes it).
    fn write_to_regs(cx: &OpCx, op: &Op, report: &mut StepReport) -> Flow {
        let req = cx.req;
        let dest = match req.kind {
            RequestKind::Load { dest, .. } | RequestKind::Atomic { dest, .. } => dest,
            _ => None,
        };
        if let Some(dest) = dest {
            report.delivered = Some(Delivery {
                who: req.who,
                dest,
                value: op.value & size_mask(req.size),
                size: req.size,
            });
        }
        Flow::Continue
    }

    /// 𝔒⟦lock⟧: takes the banks of the access in the block's shared memory, all or nothing
    /// (T14: no deadlock from partial locking); defers while any is held.
    fn lock(&mut self, cx: &OpCx) -> Flow {
        let block = cx.req.who.block;
        let banks = self.banks(&cx.req);
        if banks.iter().any(|b| self.locks.contains_key(&(block, *b))) {
            return Flow::Defer;
        }
        for b in banks {
            self.locks.insert((block, b), cx.id);
        }
        Flow::Continue
    }

    /// 𝔒⟦unlock⟧: releases the banks this op holds.
    fn unlock(&mut self, cx: &OpCx) -> Flow {
        let block = cx.req.who.block;
        for b in self.banks(&cx.req) {
            if self.locks.get(&(block, b)) == Some(&cx.id) {
                self.locks.remove(&(block, b));
            }
        }
        Flow::Continue
    }

    /// 𝔒⟦readL1⟧: σ's value from the SM's L1 line; defers while the line's bytes are not valid
    /// (the line stays pinned by the op that reserved it).
    fn read_l1(&mut self, cx: &OpCx, op: &mut Op) -> Result<Flow, Stuck> {
        let g = cx.line()?;
        let staged = self.load_sees_stage(cx);
        Ok(
            match l1_mut(&mut self.l1, cx.id, cx.req.sm)?.read(g.key, g.mask, cx.id, cx.hint)? {
                Some(l) => {
                    op.value = if staged {
                        // The SM's staged stores over the line (deviation D31).
                        let mut data = l.data;
                        self.stage.overlay(cx.req.sm, g.key, &mut data);
                        g.extract(&data, cx.req.size)
                    } else {
                        g.extract(&l.data, cx.req.size)
                    };
                    Flow::Continue
                }
                None => Flow::Defer,
            },
        )
    }

    /// Whether the op is a load that reads its SM's staged stores over the caches (deviation
    /// D31; module `stage`): the stage on, and an entry on its line.
    fn load_sees_stage(&self, cx: &OpCx) -> bool {
        matches!(cx.req.kind, RequestKind::Load { .. })
            && self.stage_on()
            && cx
                .line
                .is_some_and(|g| !self.stage.on_line(cx.req.sm, g.key).is_empty())
    }

    /// 𝔒⟦readL2⟧: σ's value, and the line for a later `updateL1`, from L2; defers while the
    /// needed bytes are not valid.
    fn read_l2(&mut self, cx: &OpCx, op: &mut Op) -> Result<Flow, Stuck> {
        let g = cx.line()?;
        let mask = self.l2_mask(op, g);
        let staged = self.load_sees_stage(cx);
        Ok(match line::read_l2(&mut self.l2, g.key, mask, cx.id)? {
            Some(l) => {
                op.buf = l.data;
                op.buf_mask = l.valid;
                if staged {
                    // The SM's staged stores over the line, in the value and in the line it
                    // fills into the SM's L1 (deviation D31).
                    self.stage.overlay(cx.req.sm, g.key, &mut op.buf);
                }
                op.value = g.extract(&op.buf, cx.req.size);
                Flow::Continue
            }
            None => Flow::Defer,
        })
    }

    /// 𝔒⟦writeL1⟧: writes σ's bytes into the SM's L1 (allocating a line; a dirty victim goes
    /// to L2); defers while there is no room.
    fn write_l1(&mut self, cx: &OpCx, op: &Op, dram: &mut Flat) -> Result<Flow, Stuck> {
        let g = cx.line()?;
        let bytes = g.write_bytes(op);
        let dirty_ok = self.l1_dirty_ok(self.l1_of(cx.id, cx.req.sm)?);
        let cap = self.l1_capacity();
        let (flow, wb) = l1_mut(&mut self.l1, cx.id, cx.req.sm)?
            .live
            .write(g.key, &bytes, g.mask, cap, dirty_ok);
        self.write_back_to_l2(wb, dram);
        Ok(flow)
    }

    /// 𝔒⟦writeL2⟧: writes σ's bytes into L2 (a dirty victim goes to DRAM); defers while there
    /// is no room.
    fn write_l2(&mut self, cx: &OpCx, op: &Op, dram: &mut Flat) -> Result<Flow, Stuck> {
        let g = cx.line()?;
        let bytes = g.write_bytes(op);
        let cap = self.l2_capacity();
        let (flow, wb) = self.l2.write(g.key, &bytes, g.mask, cap, true);
        if let Some(wb) = wb {
            write_back_to_dram(dram, wb);
        }
        Ok(flow)
    }

    /// 𝔒⟦reserveL1⟧: an L1 line for the access, pinned by the op until its `readL1`; defers
    /// while there is no room.
    fn reserve_l1(&mut self, cx: &OpCx, dram: &mut Flat) -> Result<Flow, Stuck> {
        let g = cx.line()?;
        let dirty_ok = self.l1_dirty_ok(self.l1_of(cx.id, cx.req.sm)?);
        let cap = self.l1_capacity();
        let (flow, wb) = l1_mut(&mut self.l1, cx.id, cx.req.sm)?
            .live
            .reserve(g.key, cx.id, cap, dirty_ok);
        self.write_back_to_l2(wb, dram);
        Ok(flow)
    }

    /// 𝔒⟦reserveL2⟧: an L2 line for the access, pinned by the op; defers while there is no
    /// room.
    fn reserve_l2(&mut self, cx: &OpCx, dram: &mut Flat) -> Result<Flow, Stuck> {
        let cap = self.l2_capacity();
        let (flow, wb) = self.l2.reserve(cx.line()?.key, cx.id, cap, true);
        if let Some(wb) = wb {
            write_back_to_dram(dram, wb);
        }
        Ok(flow)
    }

    /// 𝔒⟦updateL1⟧: fills the op's reserved L1 line from σ's buffer (bytes already valid are
    /// kept); ⊥ if the line is gone.
    fn update_l1(&mut self, cx: &OpCx, op: &Op) -> Result<Flow, Stuck> {
        let g = cx.line()?;
        let l1 = l1_mut(&mut self.l1, cx.id, cx.req.sm)?;
        let done = l1
            .find(g.key, cx.id, cx.hint)
            .and_then(|s| l1.with_line(g.key, s, |l| l.update(&op.buf, op.buf_mask)));
        match done {
            Some(()) => Ok(Flow::Continue),
            None => Err(cx.not_cached(g)),
        }
    }

    /// 𝔒⟦updateL2⟧: fills the op's reserved L2 line from σ's buffer; ⊥ if the line is gone.
    fn update_l2(&mut self, cx: &OpCx, op: &Op) -> Result<Flow, Stuck> {
        let g = cx.line()?;
        match self.l2.with_line(g.key, |l| l.update(&op.buf, op.buf_mask)) {
            Some(()) => Ok(Flow::Continue),
            None => Err(cx.not_cached(g)),
        }
    }

    /// 𝔒⟦evictL1⟧: the SM's L1 line of the access goes (written back if dirty); defers while
    /// it is pinned.
    fn evict_l1(&mut self, cx: &OpCx) -> Result<Flow, Stuck> {
        let g = cx.line()?;
        Ok(l1_mut(&mut self.l1, cx.id, cx.req.sm)?.live.evict(g.key))
    }

    /// 𝔒⟦discardL1⟧: the SM's L1 line of the access goes without write-back; defers while it
    /// is pinned.
    fn discard_l1(&mut self, cx: &OpCx) -> Result<Flow, Stuck> {
        let g = cx.line()?;
        Ok(l1_mut(&mut self.l1, cx.id, cx.req.sm)?.live.discard(g.key))
    }

    /// 𝔒⟦classifyFirstL1⟧ / 𝔒⟦classifyNormalL1⟧: the eviction class of the op's L1 line (A21:
    /// classifying an uncached line is ⊥; the listings never do).
    fn classify_l1(&mut self, cx: &OpCx, class: line::EvClass) -> Result<Flow, Stuck> {
        let g = cx.line()?;
        let l1 = l1_mut(&mut self.l1, cx.id, cx.req.sm)?;
        let slot = l1.find(g.key, cx.id, cx.hint).unwrap_or(Slot::Live);
        match l1.with_line(g.key, slot, |l| l.class = class) {
            Some(()) => Ok(Flow::Continue),
            None => Err(cx.not_cached(g)),
        }
    }

    /// 𝔒⟦classifyFirstL2⟧ / 𝔒⟦classifyNormalL2⟧: the eviction class of the op's L2 line.
    fn classify_l2(&mut self, cx: &OpCx, class: line::EvClass) -> Result<Flow, Stuck> {
        let g = cx.line()?;
        match self.l2.with_line(g.key, |l| l.class = class) {
            Some(()) => Ok(Flow::Continue),
            None => Err(cx.not_cached(g)),
        }
    }

    /// cudasem's `invalidateL1` (see [`OpName::InvalidateL1`]): the writing SM's L1 line of
    /// the address goes (a pinned one becomes doomed). A strong load (see
    /// `ProgramId::LoadStrong`) drops only the bytes it read when the line is not pinned: its
    /// other bytes are no older than before, so a line shared by a flag and a datum keeps the
    /// datum (a stale datum is what a `.cta` acquire between CTAs may read). A pinned line has
    /// a fill on its way that would bring old bytes back: it goes whole.
    fn invalidate_l1(&mut self, cx: &OpCx) -> Result<Flow, Stuck> {
        let g = cx.line()?;
        // Only an L1 that holds the line changes (the L1s are shared copy-on-write).
        let Some(line) = self.l1_of(cx.id, cx.req.sm)?.live.get(g.key) else {
            return Ok(Flow::Continue);
        };
        let rest = line.valid & !g.mask;
        let partial =
            matches!(cx.req.kind, RequestKind::Load { .. }) && !line.pinned() && rest != 0;
        let l1 = l1_mut(&mut self.l1, cx.id, cx.req.sm)?;
        if partial {
            l1.live.with_line(g.key, |l| {
                l.valid = rest;
                l.dirty &= rest;
            });
        } else {
            let from = l1.doomed_mark();
            l1.invalidate(g.key);
            self.hint_doomed(cx.req.sm, from);
        }
        Ok(Flow::Continue)
    }
}
