//! The machine's side of the cached memory model (thesis 5.8.1 `memOp` and the device rule that
//! runs the memory environment beside the context): building [`Request`]s from PTX qualifiers,
//! the register scoreboard that keeps a warp from issuing while an operand is pending, and the
//! `Choice::Mem` transition that runs one micro step and writes delivered values to registers.
//!
//! `.global` and `.shared` accesses and fences are memory programs; `.local`, `.const` and
//! `.param` stay direct accesses (private or read-only: their caching cannot change a value a
//! thread reads, docs/deviations.md, D16).

use super::exec::extend;
use super::{ErrorKind, Machine, MachineError, Termination};
use crate::program::{CacheOp, FenceLevel, MemOrder, MemQualifiers, Op, Scope};
use memory_model::cached::{
    CacheOperator, Dest, MemChoice, Order, Request, RequestKind, Rmw, StepReport,
};
use memory_model::{FenceScope, MemSpace, Who};
use smallvec::SmallVec;
use std::sync::Arc;
use traces::{Choice, Derivation, Event, Rule};

/// Whether accesses to `space` go through the cached memory's programs.
#[inline]
pub(super) fn cached_space(space: MemSpace) -> bool {
    matches!(space, MemSpace::Global | MemSpace::Shared)
}

fn order(o: MemOrder) -> Order {
    match o {
        MemOrder::Weak => Order::Weak,
        MemOrder::Volatile => Order::Volatile,
        MemOrder::Relaxed => Order::Relaxed,
        MemOrder::Acquire => Order::Acquire,
        MemOrder::Release => Order::Release,
        MemOrder::AcqRel => Order::AcqRel,
        MemOrder::Sc => Order::Sc,
    }
}

fn scope(s: Option<Scope>) -> Option<FenceScope> {
    s.map(|s| match s {
        Scope::Cta => FenceScope::Cta,
        // A cluster is a set of CTAs on one GPU: `.gpu` is the nearest scope the model has.
        Scope::Cluster | Scope::Gpu => FenceScope::Gpu,
        Scope::Sys => FenceScope::Sys,
    })
}

fn cache_operator(c: Option<CacheOp>) -> Option<CacheOperator> {
    c.map(|c| match c {
        CacheOp::Ca => CacheOperator::Ca,
        CacheOp::Cg => CacheOperator::Cg,
        CacheOp::Cs => CacheOperator::Cs,
        CacheOp::Lu => CacheOperator::Lu,
        CacheOp::Cv => CacheOperator::Cv,
        CacheOp::Wb => CacheOperator::Wb,
        CacheOp::Wt => CacheOperator::Wt,
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
        kind: RequestKind::Load {
            cop: cache_operator(q.cache),
            dest,
        },
        space,
        addr,
        size,
        order: order(q.order),
        scope: scope(q.scope),
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
            cop: cache_operator(q.cache),
            value: value & mask,
        },
        space,
        addr,
        size,
        order: order(q.order),
        scope: scope(q.scope),
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
        order: order(q.order),
        scope: scope(q.scope),
    }
}

pub(super) fn fence_request(who: Who, sm: u32, level: FenceLevel, o: MemOrder) -> Request {
    let scope = match level {
        FenceLevel::Cta => FenceScope::Cta,
        FenceLevel::Gpu => FenceScope::Gpu,
        FenceLevel::Sys => FenceScope::Sys,
    };
    Request {
        who,
        sm,
        kind: RequestKind::Fence,
        space: MemSpace::Global,
        addr: 0,
        size: 1,
        order: order(o),
        scope: Some(scope),
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
    /// Whether the cached memory keeps the instruction at `pc` from issuing for `lanes` of the
    /// warp: it reads or writes a register a pending load or atomic will write (thesis 5.8.1,
    /// blocked registers), or it must wait for the lanes' memory operations to end
    /// ([`Op::drains_memory`]).
    pub(crate) fn mem_blocked(&self, block: u32, warp: u32, pc: u32, lanes: u64) -> bool {
        let Some(cache) = &self.cached else {
            return false;
        };
        let Some(instr) = self.program.instructions.get(pc as usize) else {
            return false;
        };
        let tid_base = warp * self.info.warp_size;
        if instr.op.drains_memory() {
            let mut m = lanes;
            while m != 0 {
                let l = m.trailing_zeros();
                m &= m - 1;
                if cache.thread_busy(Who {
                    block,
                    thread: tid_base + l,
                }) {
                    return true;
                }
            }
        }
        // Inline: a warp rarely has more than a few loads in flight (checked on every refresh).
        let mut pending: SmallVec<[(u32, u32, u32); 8]> = SmallVec::new();
        cache.pending_dests(block, warp, &mut pending);
        if pending.is_empty() {
            return false;
        }
        let mut hit = false;
        instr.for_each_register(&mut |r| {
            hit |= pending
                .iter()
                .any(|&(lane, _, reg)| reg == r.0 as u32 && lanes >> lane & 1 == 1);
        });
        hit
    }

    /// Replaces the memory choices in the enabled set by the memory environment's current ones.
    pub(crate) fn refresh_mem(&mut self) {
        let Machine {
            cached: Some(cache),
            enabled,
            mem_generation,
            ..
        } = self
        else {
            return;
        };
        let is_mem = |c: &Choice| matches!(c, Choice::Mem(_));
        // Unchanged memory choices (most machine steps are no memory step) that are still the
        // last run: nothing to do. The run is contiguous, so a memory choice in the last slot
        // means it is last.
        let unchanged = cache.generation() == *mem_generation;
        if unchanged && (cache.enabled_count() == 0 || enabled.last().is_some_and(is_mem)) {
            return;
        }
        *mem_generation = cache.generation();
        if unchanged && let Some(start) = enabled.iter().position(is_mem) {
            // Only moved: the choices appended since go in front of the run (see below).
            enabled[start..].rotate_left(cache.enabled_count());
            return;
        }
        // The result is what `retain(not Mem)` then appending the memory's choices gives, in
        // O(memory choices) moves instead of a pass over every choice: the memory choices are
        // one run (this function leaves them last, and the other refreshes only remove
        // choices and append after them), so the choices appended since move in front of the
        // run, and the run is overwritten in place where it changed (a micro step changes a
        // few of them; writing every slot costs more than comparing).
        let mut at = enabled.len();
        if let Some(start) = enabled.iter().position(is_mem) {
            let run = enabled[start..]
                .iter()
                .position(|c| !is_mem(c))
                .unwrap_or(enabled.len() - start);
            debug_assert!(
                !enabled[start + run..].iter().any(is_mem),
                "the memory choices are one run"
            );
            enabled[start..].rotate_left(run);
            at -= run;
        }
        let memory = cache.enabled_choices_memo();
        let overlap = memory.len().min(enabled.len() - at);
        for (slot, &m) in enabled[at..at + overlap].iter_mut().zip(memory) {
            if *slot != Choice::Mem(m) {
                *slot = Choice::Mem(m);
            }
        }
        enabled.truncate(at + overlap);
        enabled.extend(memory[overlap..].iter().map(|&m| Choice::Mem(m)));
    }

    /// `Choice::Mem`: one micro step of an in-flight memory program, or a silent cache action.
    /// A delivered value goes to its register (sign- or zero-extended as `ld` does); when the
    /// program ends, its thread's warp may issue again.
    pub(crate) fn mem_step(&mut self, m: MemChoice, events: Option<&mut Vec<Event>>) {
        // Borrowed field by field (no reference count traffic on the program per micro step).
        let Machine {
            program,
            cached,
            mem,
            ..
        } = self;
        let apply =
            |rmw: Rmw, old: u64, _size: u32| match program.instructions.get(rmw.code as usize) {
                Some(crate::program::Instr {
                    op: Op::Atom { op, ty, .. },
                    ..
                }) => crate::alu::atom_new_value(*op, *ty, old, rmw.a, rmw.b),
                _ => old,
            };
        let Some(cache) = cached.as_mut() else {
            return;
        };
        let report = match cache.step(m, mem, &apply) {
            Ok(r) => r,
            Err(stuck) => {
                self.termination = Some(Termination::Error(MachineError {
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
                }));
                self.enabled.clear();
                return;
            }
        };
        let StepReport {
            operations,
            delivered,
            ended,
        } = report;
        let ws = self.info.warp_size as usize;
        // At most the delivering warp and the warp whose op ended.
        let mut touched: SmallVec<[(u32, u32); 2]> = SmallVec::new();
        if let Some(d) = delivered {
            let block = d.who.block;
            if let Some(b) = self.blocks.get_mut(block)
                && let Some(w) = b.warps.get_mut(d.dest.warp as usize)
            {
                let w = Arc::make_mut(w);
                let v = extend(d.value, d.size, d.dest.signed, d.dest.bits);
                if let Some(r) = w.levels.get_mut(d.dest.level as usize).and_then(|lvl| {
                    lvl.regs
                        .get_mut(d.dest.reg as usize * ws + d.dest.lane as usize)
                }) {
                    *r = v;
                }
                touched.push((block, d.dest.warp));
            }
        }
        if let Some((_, who)) = ended {
            touched.push((who.block, who.thread / self.info.warp_size));
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
        for (block, warp) in touched {
            self.refresh_warp(block, warp);
        }
    }
}
