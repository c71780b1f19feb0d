//! The machine's side of the memory seam ([`MemoryEnv`]; thesis 5.8.1 `memOp` and the device
//! rule that runs the memory environment beside the context): building [`Request`]s from PTX
//! qualifiers, the register scoreboard that keeps a warp from issuing while an operand is
//! pending, and the `Choice::Mem` transition that runs one memory step and writes delivered
//! values to registers.
//!
//! Which accesses become ops in flight is the memory's to say ([`MemoryEnv::in_flight_space`]):
//! under cached memory `.global` and `.shared` accesses and fences are memory programs, and
//! `.local`, `.const` and `.param` stay direct accesses (private or read-only: their caching
//! cannot change a value a thread reads, docs/deviations.md, D16). Flat memory performs every
//! access at once: no op is ever in flight, the scoreboard never waits, there is no memory
//! choice.

use super::exec::extend;
use super::warp::{ModelState, Warp, lanes};
use super::{ErrorKind, Machine, MachineError, Termination};
use crate::program::{MemOrder, MemQualifiers, Op, Pc, Program, Scope, Space};
use memory_model::cached::{Dest, EnabledEdit, MemChoice, Request, RequestKind, Rmw, StepReport};
use memory_model::{MemSpace, MemoryEnv, Who};
use smallvec::SmallVec;
use std::sync::Arc;
use traces::{Choice, Derivation, Event, Rule};

/// Whether the instruction is a weak `ld` that may read shared memory (`.shared`, or a generic
/// address): the loads [`Cached::load_at_issue`] may perform at issue.
///
/// [`Cached::load_at_issue`]: memory_model::cached::Cached::load_at_issue
pub(super) fn weak_shared_load(op: &Op) -> bool {
    matches!(op, Op::Ld { space: Space::Shared | Space::Generic, qual, .. } if qual.order == MemOrder::Weak)
}

/// The program's half of [`Cached::load_at_issue`] (deviation D30): no live thread of the block
/// of `warps` can write shared memory before every thread of the block has arrived at a full
/// barrier. Each live thread is held at a full barrier ([`SharedWrites::held`]), or every place
/// it may run next (under the SIMT stack the warp's pc and every token's: lanes the stack keeps
/// for later resume there) reaches a full barrier or the end of the kernel before a shared
/// write ([`SharedWrites::may_write`]). A full barrier completes only once the loading thread
/// arrives, and it arrives only with no op in flight (D24): so nothing writes the block's
/// shared memory between a load's issue and the latest moment its op could have run.
///
/// [`Cached::load_at_issue`]: memory_model::cached::Cached::load_at_issue
/// [`SharedWrites::held`]: crate::program::SharedWrites::held
/// [`SharedWrites::may_write`]: crate::program::SharedWrites::may_write
pub(super) fn block_cannot_write_shared(program: &Program, warps: &[Arc<Warp>]) -> bool {
    let sw = &program.shared_writes;
    let quiet = |pc: Pc| !sw.may_write(pc);
    warps
        .iter()
        .filter(|w| !w.completed)
        .all(|w| match &w.model {
            ModelState::Simt(s) => {
                sw.held(s.waiting) || (quiet(s.pc) && s.stack.iter().all(|t| quiet(t.pc)))
            }
            ModelState::Its(s) => {
                lanes(w.real & !w.exited).all(|l| sw.held(s.lane_wait[l]) || quiet(s.lane_pc[l]))
            }
        })
}

pub(super) fn load_request(
    who: Who,
    sm: u32,
    (space, addr, size): (MemSpace, u64, u32),
    q: &MemQualifiers,
    dest: Option<Dest>,
) -> Request {
    Request {
        who,
        sm,
        kind: RequestKind::Load { cop: q.cache, dest },
        space,
        addr,
        size,
        order: q.order,
        scope: q.scope,
    }
}

pub(super) fn store_request(
    who: Who,
    sm: u32,
    (space, addr, size): (MemSpace, u64, u32),
    q: &MemQualifiers,
    value: u64,
) -> Request {
    let mask = if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (size * 8)) - 1
    };
    Request {
        who,
        sm,
        kind: RequestKind::Store {
            cop: q.cache,
            value: value & mask,
        },
        space,
        addr,
        size,
        order: q.order,
        scope: q.scope,
    }
}

pub(super) fn atomic_request(
    who: Who,
    sm: u32,
    (space, addr, size): (MemSpace, u64, u32),
    q: &MemQualifiers,
    rmw: Rmw,
    dest: Option<Dest>,
) -> Request {
    Request {
        who,
        sm,
        kind: RequestKind::Atomic { rmw, dest },
        space,
        addr,
        size,
        order: q.order,
        scope: q.scope,
    }
}

pub(super) fn fence_request(who: Who, sm: u32, level: Scope, order: MemOrder) -> Request {
    Request {
        who,
        sm,
        kind: RequestKind::Fence,
        space: MemSpace::Global,
        addr: 0,
        size: 1,
        order,
        scope: Some(level),
    }
}

/// The rule a memory choice applies (thesis 4.6).
fn rule_of(m: &MemChoice) -> Rule {
    match m {
        MemChoice::Step { .. } => Rule::MemStep,
        MemChoice::EvictL1 { .. } => Rule::EvictL1,
        MemChoice::EvictL2 { .. } => Rule::EvictL2,
        MemChoice::WriteBackL1 { .. } => Rule::WbL1,
        MemChoice::WriteBackL2 { .. } => Rule::WbL2,
        MemChoice::Flush { .. } => Rule::Flush,
    }
}

impl Machine {
    /// Whether the memory keeps the instruction at `pc` from issuing for `lanes` of the
    /// warp: it reads or writes a register a pending load or atomic will write (thesis 5.8.1,
    /// blocked registers), or it must wait for the lanes' memory operations to end
    /// ([`Op::drains_memory`]). Never under a memory that performs accesses at once.
    pub(crate) fn mem_blocked(&self, block: u32, warp: u32, pc: u32, lanes: u64) -> bool {
        let cache = &self.mem;
        if cache.performs_accesses_at_once() {
            return false;
        }
        let Some(instr) = self.program.instructions.get(pc as usize) else {
            return false;
        };
        let tid_base = warp * self.info.shape.warp_size;
        let pending = cache.pending_registers(block, warp);
        waits_for_memory(
            instr,
            lanes,
            |busy_lanes| cache.any_thread_busy(block, tid_base, busy_lanes),
            |reg| pending_lanes(pending, reg),
        )
    }

    /// Whether the cached memory keeps a warp's next SIMT-stack step from issuing (see
    /// [`Machine::mem_blocked`]); false under flat memory.
    pub(crate) fn simt_mem_blocked(&self, block: u32, warp: u32) -> bool {
        !self.mem.performs_accesses_at_once()
            && self
                .resident_warp(block, warp)
                .is_some_and(|w| match &w.model {
                    ModelState::Simt(s) => self.mem_blocked(block, warp, s.pc, w.real & !w.exited),
                    ModelState::Its(_) => false,
                })
    }

    /// How many memory choices lead the enabled set (see [`Machine::refresh_mem`]); 0 when
    /// unknown (then a pass over the whole set is still right: it keeps memory choices).
    fn mem_run(&self) -> usize {
        self.mem
            .enabled_edits(self.mem_generation)
            .map_or(0, |(run, _)| run)
    }

    /// `enabled.retain(keep)` for a `keep` that holds for every memory choice: the memory
    /// run is skipped, so a warp's refresh costs the other choices, not the thousands of
    /// memory choices a full-size kernel has (issue 15).
    pub(crate) fn retain_enabled(&mut self, mut keep: impl FnMut(&Choice) -> bool) {
        let start = self.mem_run().min(self.enabled.len());
        let list = &mut self.enabled;
        let mut w = start;
        for r in start..list.len() {
            if keep(&list[r]) {
                list[w] = list[r];
                w += 1;
            }
        }
        list.truncate(w);
    }

    /// Brings the memory choices in the enabled set up to date with the memory environment
    /// (nothing to do under flat memory, whose generation never changes).
    /// They are the set's first `cache.enabled_count()` entries, in the memory's own order
    /// ([`Cached::enabled_unordered`]): the other refreshes only remove choices (keeping the
    /// order) and append, so the run stays a prefix, and this replays the memory's edits on
    /// it in O(1) each ([`Cached::enabled_edits`]) instead of copying thousands of choices per
    /// micro step (issue 15). An edit moves at most one other choice (to the end, or into the
    /// run's freed last slot): the order stays a deterministic function of the history.
    ///
    /// [`Cached::enabled_unordered`]: memory_model::cached::Cached::enabled_unordered
    /// [`Cached::enabled_edits`]: memory_model::cached::Cached::enabled_edits
    pub(crate) fn refresh_mem(&mut self) {
        let Machine {
            mem: cache,
            enabled,
            mem_generation,
            ..
        } = self;
        if cache.generation() == *mem_generation {
            return;
        }
        let is_mem = |c: &Choice| matches!(c, Choice::Mem(_));
        match cache.enabled_edits(*mem_generation) {
            Some((mut run, edits)) => {
                for &e in edits {
                    match e {
                        EnabledEdit::Push(m) => {
                            if run == enabled.len() {
                                enabled.push(Choice::Mem(m));
                            } else {
                                let moved = std::mem::replace(&mut enabled[run], Choice::Mem(m));
                                enabled.push(moved);
                            }
                            run += 1;
                        }
                        EnabledEdit::SwapRemove(k) => {
                            let last = run - 1;
                            enabled[k as usize] = enabled[last];
                            enabled.swap_remove(last);
                            run -= 1;
                        }
                    }
                }
            }
            None => {
                // No edits that start where this set is (a fresh or copied memory): the run
                // is rebuilt.
                enabled.retain(|c| !is_mem(c));
                let memory = cache.enabled_unordered();
                enabled.insert_many(0, memory.iter().map(|&m| Choice::Mem(m)));
            }
        }
        *mem_generation = cache.generation();
        cache.clear_enabled_edits();
        debug_assert!(
            enabled.len() > 64
                || enabled
                    .iter()
                    .filter_map(|c| match c {
                        Choice::Mem(m) => Some(*m),
                        _ => None,
                    })
                    .eq(cache.enabled_unordered().iter().copied()),
            "the machine's memory choices drifted from the memory's"
        );
    }

    /// `Choice::Mem`: one micro step of an in-flight memory program, or a silent cache action.
    /// A delivered value goes to its register (sign- or zero-extended as `ld` does); when the
    /// program ends, its thread's warp may issue again.
    pub(crate) fn mem_step(&mut self, m: MemChoice, events: Option<&mut Vec<Event>>) {
        // A memory step can only unblock a warp (a pending register or a busy thread goes):
        // under the SIMT stack, the stepping op's warp needs a refresh (a pass over the
        // enabled set) only when its scoreboard answer changes. Only the step that ends the op
        // changes it (registers are released and the thread stops waiting at `end`), and then
        // the answer before follows from the answer after and the op's request
        // ([`Machine::unblocked_by_op`]): the scoreboard is asked once per op, not once per
        // micro step (issue 15).
        let stepping = match m {
            MemChoice::Step { op } if !self.fixed.config.warp_model.per_thread() => {
                self.mem.op_request(op).map(|req| {
                    let dest = match req.kind {
                        RequestKind::Load { dest, .. } | RequestKind::Atomic { dest, .. } => dest,
                        _ => None,
                    };
                    (req.who, dest)
                })
            }
            _ => None,
        };
        let report = match self.mem.step(m) {
            Ok(r) => r,
            Err(stuck) => {
                self.termination = Some(Box::new(Termination::Error(MachineError {
                    kind: ErrorKind::Stuck,
                    grid: None,
                    block: [0; 3],
                    thread: [0; 3],
                    pc: 0,
                    ptx_line: 0,
                    source_line: None,
                    message: format!(
                        "the cached memory model is stuck (thesis ⊥) at `{m}`: {}",
                        stuck.message
                    ),
                })));
                self.enabled.clear();
                return;
            }
        };
        let StepReport {
            operations,
            delivered,
            ended,
        } = report;
        // At most the delivering warp and the warp whose op ended.
        let mut touched: SmallVec<[(u32, u32); 2]> = SmallVec::new();
        if let Some(d) = delivered {
            let block = d.who.block;
            if let Some(b) = self.blocks.get_mut(block)
                && let Some(w) = b.warps.get_mut(d.dest.warp as usize)
            {
                let w = Arc::make_mut(w);
                let v = extend(d.value, d.size, d.dest.signed, d.dest.bits);
                if let Some(r) = w
                    .levels
                    .get_mut(d.dest.level as usize)
                    .and_then(|lvl| lvl.regs.slot(d.dest.reg as usize, d.dest.lane as usize))
                {
                    *r = v;
                }
                touched.push((block, d.dest.warp));
            }
        }
        if let Some((_, who)) = ended {
            touched.push((who.block, who.thread / self.info.shape.warp_size));
        }
        if let Some(ev) = events {
            let derivation = Derivation::of(&[Rule::Exec, rule_of(&m)]);
            ev.push(Event::MemoryStep {
                choice: m,
                operations: operations.join("; "),
                delivered: delivered.map(|d| (d.who.block, d.dest.warp, d.dest.lane, d.value)),
                derivation,
            });
        }
        touched.sort_unstable();
        touched.dedup();
        let stepping_ended = ended.is_some();
        for (block, warp) in touched {
            match stepping {
                Some((who, dest))
                    if (who.block, who.thread / self.info.shape.warp_size) == (block, warp) =>
                {
                    if !stepping_ended || !self.unblocked_by_op(block, warp, who, dest) {
                        continue;
                    }
                    // The op kept the warp from issuing and no longer does. A warp the
                    // scoreboard keeps waiting has no choices in the enabled set (they go when
                    // it starts to wait, and `warp_choices` offers none while it waits), so its
                    // new choices are appended without a pass over the set to remove old ones
                    // (`refresh_warp`): the same set in the same order (issue 15).
                    self.append_warp_choices(block, warp);
                }
                _ => self.refresh_warp(block, warp),
            }
        }
    }

    /// Appends the choices of warp `warp` of block `block`, which has none in the enabled set
    /// (see [`Machine::refresh_warp`], which removes them first).
    fn append_warp_choices(&mut self, block: u32, warp: u32) {
        debug_assert!(
            self.enabled.len() > 256
                || !self.enabled.iter().any(|c| c.warp() == Some((block, warp))),
            "a warp that waited for memory still had choices"
        );
        let mut out = std::mem::take(&mut self.enabled);
        self.warp_choices(block, warp, &mut out);
        self.enabled = out;
    }

    /// Whether the op of thread `who` that writes `dest` (if any), which just ended, kept warp
    /// `warp` of block `block` from issuing under the SIMT stack and nothing keeps it now: the
    /// scoreboard's answer changed with the op's end (see [`Machine::mem_blocked`]). Monotone (a
    /// memory step only unblocks), so the answer before is the answer after or the op's own:
    /// its instruction drains the memory operations of the op's lane, or touches the op's
    /// destination register in one of the warp's lanes. The op's own answer is asked first
    /// (no lookup in the memory), and the warp is looked up once for both.
    fn unblocked_by_op(&self, block: u32, warp: u32, who: Who, dest: Option<Dest>) -> bool {
        let cache = &self.mem;
        let Some(w) = self.resident_warp(block, warp) else {
            return false;
        };
        let ModelState::Simt(s) = &w.model else {
            return false;
        };
        let Some(instr) = self.program.instructions.get(s.pc as usize) else {
            return false;
        };
        let lanes = w.real & !w.exited;
        let tid_base = warp * self.info.shape.warp_size;
        let lane = who.thread - tid_base;
        let dest = dest.filter(|d| d.warp == warp);
        let before = waits_for_memory(
            instr,
            lanes,
            |busy_lanes| busy_lanes & (1u64 << lane) != 0,
            |reg| match dest {
                Some(d) if d.reg == reg => 1u64 << d.lane,
                _ => 0,
            },
        );
        before && {
            let pending = cache.pending_registers(block, warp);
            !waits_for_memory(
                instr,
                lanes,
                |busy_lanes| cache.any_thread_busy(block, tid_base, busy_lanes),
                |reg| pending_lanes(pending, reg),
            )
        }
    }
}

/// The scoreboard's rule (thesis 5.8.1, blocked registers): an instruction on `lanes` waits for memory when it
/// drains the memory operations of its lanes and one of them is `busy` (asked once, of all the
/// lanes: one lookup for the warp instead of one per lane), or when it names a
/// register that is `pending` (the lanes whose load or atomic will still write it) in one of
/// `lanes`. One rule for the scoreboard's answer ([`Machine::mem_blocked`]) and for the answer
/// one op gave ([`Machine::unblocked_by_op`]).
fn waits_for_memory(
    instr: &crate::program::Instr,
    lanes: u64,
    busy: impl FnOnce(u64) -> bool,
    pending: impl Fn(u32) -> u64,
) -> bool {
    if instr.op.drains_memory() && busy(lanes) {
        return true;
    }
    let mut hit = false;
    instr.for_each_register(&mut |r| hit |= !hit && pending(r.0 as u32) & lanes != 0);
    hit
}

/// The lanes for which register `reg` is pending in a warp's pending registers
/// ([`Cached::pending_registers`]).
///
/// [`Cached::pending_registers`]: memory_model::cached::Cached::pending_registers
fn pending_lanes(pending: &[(u32, u64)], reg: u32) -> u64 {
    pending
        .iter()
        .filter(|&&(r, _)| r == reg)
        .fold(0, |m, &(_, lanes)| m | lanes)
}
