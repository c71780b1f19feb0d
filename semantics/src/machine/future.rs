//! Future footprints: everything a warp may still touch from its current state on, for
//! persistent sets over several warps (Godefroid, "Partial-Order Methods for the Verification
//! of Concurrent Systems", ch. 4, conflict-based persistent sets; used by `explore::ample`).
//!
//! A warp's *future* is the set of steps it can still take, in any run, from the pcs it resumes
//! at (the SIMT stack's pc and every token's; under independent thread scheduling and the threads
//! model, every live lane's pc). Each step is given the footprint ([`Footprint`]) it may have, and
//! the future is the union: a step of another warp that is independent of every one of them
//! ([`Machine::future_independent`]) commutes with everything the warp will ever do.
//!
//! **How it is computed** ([`Machine::future_footprints`], once per launch, then per query):
//! 1. Per kernel (entry function): which basic blocks each block can reach through the
//!    control-flow graph ([`crate::program::Cfg`]); an instruction's future is the rest of its
//!    block and every instruction of the blocks its block's successors reach.
//! 2. Per instruction, its class: an `ld`, `st` or `atom` on a state space another warp can
//!    reach (global, shared, generic), a barrier, an exit (`exit`, and `ret` in a kernel:
//!    deviation D6), something with an unknown effect (`call`, `trap`: every device function is
//!    left unanalysed), or nothing another warp sees (everything [`Machine::footprint`] calls
//!    local). A fence is nothing under flat memory (thesis 5.3.2: every access is performed in
//!    its step, so a fence changes no state) and unknown under cached memory.
//! 3. Per access, per warp of the launch: the byte spans its lanes touch, from the address's
//!    affine form in `%tid`/`%ctaid` under the launch ([`crate::load::address_forms`]), evaluated
//!    for every real lane of the warp; an address without a form (loop-variant, loaded) may be
//!    any byte of its state space (global, or the block's shared memory, or both for a generic
//!    address). A shared access at an absolute address is that address.
//! 4. A kernel in the thesis dialect (`ssy sync brk ...`), or with more than
//!    [`MAX_BLOCKS`] basic blocks, or a launch with more than [`MAX_PAIRS`] (access, thread)
//!    pairs: every warp's future is unknown (dependent with everything).
//!
//! **Soundness.** The forms are exact for every thread that reaches the access (their module
//! documentation); an access without one is widened to its whole space; every path of the
//! control-flow graph is followed (an over-approximation of the paths a run takes); a lane
//! inside a call (a frame below the top) or at a pc outside every kernel has an unknown future.
//! Warps not issued yet are not covered: a caller must check that every block of every grid is
//! issued ([`Machine::every_block_issued`]).

use super::Machine;
use super::exec::resolve;
use super::footprint::{Footprint, FootprintKind};
use super::grid::GridPhase;
use super::warp::{ModelState, Warp, lanes};
use crate::load::address_forms::Affine;
use crate::program::{AddrBase, FunctionKind, Op, Pc, Space};
use memory_model::MemSpace;
use std::collections::HashMap;

/// At most this many basic blocks per kernel (the reachability is quadratic in them).
pub const MAX_BLOCKS: usize = 4096;

/// At most this many (access, thread) pairs are evaluated for a launch.
pub const MAX_PAIRS: usize = 1 << 21;

/// What an instruction may do that another warp can see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Nothing another warp sees.
    Invisible,
    /// Access number `i` of its kernel ([`Kernel::accesses`]).
    Access(u32),
    /// A barrier of its block.
    Barrier,
    /// An exit.
    Exit,
    /// Unknown effects.
    Unknown,
}

/// The union of the classes of a set of instructions.
#[derive(Debug, Clone, Default)]
struct Summary {
    /// Access numbers, sorted, distinct.
    accesses: Vec<u32>,
    barrier: bool,
    exit: bool,
    unknown: bool,
}

impl Summary {
    fn add(&mut self, class: Class) {
        match class {
            Class::Invisible => {}
            Class::Access(i) => self.accesses.push(i),
            Class::Barrier => self.barrier = true,
            Class::Exit => self.exit = true,
            Class::Unknown => self.unknown = true,
        }
    }
}

/// How an access touches its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
    Update,
}

/// One kernel's control flow, classes and accesses.
#[derive(Debug)]
struct Kernel {
    start: Pc,
    end: Pc,
    /// Per pc of `start..end`: its class and its basic block.
    class: Vec<Class>,
    block_of: Vec<u32>,
    /// Per basic block: its end, and the summary of every block its successors reach.
    block_end: Vec<Pc>,
    after: Vec<Summary>,
    /// The accesses' pcs.
    accesses: Vec<Pc>,
    /// Every future is unknown (module documentation, 4).
    unknown: bool,
}

/// The launch's future footprints (module documentation). Computed by
/// [`Machine::future_footprints`] for one launch; asking it about another is a logic error
/// (answers would be wrong, never a panic).
#[derive(Debug, Default)]
pub struct Futures {
    kernels: Vec<Kernel>,
    /// Per (global block, warp): the footprint of each access of its grid's kernel.
    warps: HashMap<(u32, u32), Vec<FootprintKind>>,
    /// Every future is unknown (too large).
    unknown: bool,
}

/// A byte span `[lo, hi)` of one region, or none.
type Span = Option<(u64, u64)>;

/// A span `[lo, hi)` widened to hold `[a, a + len)`.
fn widen(span: &mut Span, a: u64, len: u64) {
    let hi = a.saturating_add(len.max(1));
    *span = Some(match *span {
        Some((l, h)) => (l.min(a), h.max(hi)),
        None => (a, hi),
    });
}

/// Every byte.
const ALL: Span = Some((0, u64::MAX));

/// The class of `op` under flat memory or not.
fn class_of(op: &Op, flat: bool, access: &mut Vec<Pc>, pc: Pc) -> Class {
    match op {
        Op::Ld { .. } | Op::St { .. } | Op::Atom { .. } => match super::footprint::access_of(op) {
            // Thread-private or read-only spaces (as [`Machine::footprint`] has them).
            Some((Space::Local | Space::Param | Space::Const, _, _)) => Class::Invisible,
            Some(_) => {
                access.push(pc);
                Class::Access(access.len() as u32 - 1)
            }
            None => Class::Unknown,
        },
        Op::Fence { .. } => {
            if flat {
                Class::Invisible
            } else {
                Class::Unknown
            }
        }
        Op::Barrier { .. } => Class::Barrier,
        Op::Exit | Op::Ret => Class::Exit,
        Op::Call { .. } | Op::Trap => Class::Unknown,
        _ => Class::Invisible,
    }
}

impl Kernel {
    fn of(machine: &Machine, f: &crate::program::Function) -> Kernel {
        let flat = machine.performs_accesses_at_once();
        let program = &machine.program;
        let n = (f.end - f.start) as usize;
        let mut accesses = Vec::new();
        let mut class = Vec::with_capacity(n);
        for pc in f.start..f.end {
            let op = &program.instructions[pc as usize].op;
            class.push(class_of(op, flat, &mut accesses, pc));
        }
        let blocks = &f.cfg.blocks;
        let unknown = f.explicit_reconvergence || blocks.len() > MAX_BLOCKS || blocks.is_empty();
        let mut block_of = vec![u32::MAX; n];
        let mut block_end = Vec::with_capacity(blocks.len());
        for (i, b) in blocks.iter().enumerate() {
            for pc in b.start..b.end {
                if let Some(slot) = block_of.get_mut((pc - f.start) as usize) {
                    *slot = i as u32;
                }
            }
            block_end.push(b.end);
        }
        let mut after = Vec::with_capacity(blocks.len());
        if !unknown {
            // Per block, the blocks its successors reach (a search from each).
            let mut seen = vec![usize::MAX; blocks.len()];
            let mut stack = Vec::new();
            for (i, b) in blocks.iter().enumerate() {
                let mut summary = Summary::default();
                stack.extend(b.successors.iter().copied());
                while let Some(s) = stack.pop() {
                    if seen.get(s) == Some(&i) || s >= blocks.len() {
                        continue;
                    }
                    seen[s] = i;
                    let sb = &blocks[s];
                    for pc in sb.start..sb.end {
                        summary.add(class[(pc - f.start) as usize]);
                    }
                    stack.extend(sb.successors.iter().copied());
                }
                summary.accesses.sort_unstable();
                summary.accesses.dedup();
                after.push(summary);
            }
        }
        Kernel {
            start: f.start,
            end: f.end,
            class,
            block_of,
            block_end,
            after,
            accesses,
            unknown,
        }
    }

    /// The future of a thread at `pc` (before executing it), `None` when unknown.
    fn future(&self, pc: Pc) -> Option<(std::ops::Range<Pc>, &Summary)> {
        if self.unknown || pc < self.start || pc >= self.end {
            return None;
        }
        let b = *self.block_of.get((pc - self.start) as usize)? as usize;
        Some((pc..*self.block_end.get(b)?, self.after.get(b)?))
    }
}

impl Machine {
    /// Whether every block of every grid has been issued: no warp can appear later.
    pub fn every_block_issued(&self) -> bool {
        self.grids
            .iter()
            .all(|g| g.phase != GridPhase::Waiting && g.next_block >= g.info.shape.blocks)
    }

    /// The resident warps that have not completed, `(block, warp)` in order.
    pub fn live_warps(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for (id, b) in self.blocks.iter() {
            for (k, w) in b.warps.iter().enumerate() {
                if !w.completed {
                    out.push((id, k as u32));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// The future footprints of this launch (module documentation).
    pub fn future_footprints(&self) -> Futures {
        let program = &self.program;
        let mut kernels: Vec<Kernel> = program
            .functions
            .iter()
            .filter(|f| f.kind == FunctionKind::Entry)
            .map(|f| Kernel::of(self, f))
            .collect();
        kernels.sort_by_key(|k| k.start);
        let mut futures = Futures {
            kernels,
            warps: HashMap::new(),
            unknown: false,
        };
        let mut pairs = 0usize;
        for grid in self.grids.iter() {
            let info = &grid.info;
            let shape = &info.shape;
            let Some(f) = program.functions.get(info.entry.0 as usize) else {
                futures.unknown = true;
                return futures;
            };
            let Some(kernel) = futures.kernels.iter().find(|k| k.start == f.start) else {
                futures.unknown = true;
                return futures;
            };
            let forms: HashMap<Pc, Affine> = self
                .grid_access_forms(info)
                .into_iter()
                .filter_map(|a| Some((a.pc, a.address?)))
                .collect();
            let threads = shape.blocks as usize * shape.threads_per_block as usize;
            pairs = pairs.saturating_add(kernel.accesses.len().saturating_mul(threads));
            if pairs > MAX_PAIRS {
                futures.unknown = true;
                return futures;
            }
            let ws = shape.warp_size.max(1);
            let warps = shape.threads_per_block.div_ceil(ws);
            for b in 0..shape.blocks {
                let ctaid = shape.ctaid(b);
                for w in 0..warps {
                    let threads = (w * ws)..((w + 1) * ws).min(shape.threads_per_block);
                    let kinds = kernel
                        .accesses
                        .iter()
                        .map(|&pc| {
                            access_footprint(
                                &program.instructions[pc as usize].op,
                                forms.get(&pc),
                                threads.clone().map(|t| shape.tid(t)),
                                ctaid,
                                info.param_base,
                            )
                        })
                        .collect();
                    futures.warps.insert((grid.base + b, w), kinds);
                }
            }
        }
        futures
    }

    /// Whether `step`, a step of another warp in the current state, is independent of every
    /// step warp `(block, warp)` may take from the current state on (module documentation).
    /// A warp that has completed or is not resident has no future: yes.
    pub fn future_independent(
        &self,
        futures: &Futures,
        warp: (u32, u32),
        step: &Footprint,
    ) -> bool {
        let Some(w) = self.resident_warp(warp.0, warp.1) else {
            return true;
        };
        if w.completed {
            return true;
        }
        if futures.unknown {
            return false;
        }
        let Some(kinds) = futures.warps.get(&warp) else {
            return false;
        };
        let exit = FootprintKind::Exit {
            commutes_with_exits: self.performs_accesses_at_once() && self.every_block_issued(),
        };
        let independent = |kind: FootprintKind| {
            step.independent(&Footprint {
                warp: Some(warp),
                kind,
            })
        };
        let check = |pc: Pc| -> bool {
            let Some(kernel) = futures.kernels.iter().find(|k| k.start <= pc && pc < k.end) else {
                return false;
            };
            let Some((rest, after)) = kernel.future(pc) else {
                return false;
            };
            let class_ok = |c: Class| match c {
                Class::Invisible => true,
                Class::Access(i) => kinds.get(i as usize).is_some_and(|&kind| independent(kind)),
                Class::Barrier => independent(FootprintKind::Block),
                Class::Exit => independent(exit),
                Class::Unknown => false,
            };
            rest.into_iter()
                .all(|p| class_ok(kernel.class[(p - kernel.start) as usize]))
                && !after.unknown
                && (!after.barrier || independent(FootprintKind::Block))
                && (!after.exit || independent(exit))
                && after
                    .accesses
                    .iter()
                    .all(|&i| kinds.get(i as usize).is_some_and(|&k| independent(k)))
        };
        resume_pcs(w).is_some_and(|pcs| pcs.into_iter().all(check))
    }
}

/// The pcs warp `w`'s live lanes resume at, `None` when a lane is inside a call.
fn resume_pcs(w: &Warp) -> Option<Vec<Pc>> {
    let live = w.real & !w.exited;
    if lanes(live).any(|l| w.depth.get(l).is_none_or(|&d| d != 0)) {
        return None;
    }
    let mut pcs = match &w.model {
        ModelState::Simt(s) => std::iter::once(s.pc)
            .chain(s.stack.iter().map(|t| t.pc))
            .collect::<Vec<_>>(),
        ModelState::Its(s) => lanes(live)
            .filter_map(|l| s.lane_pc.get(l).copied())
            .collect(),
    };
    pcs.sort_unstable();
    pcs.dedup();
    Some(pcs)
}

/// The footprint of access `op` (an `ld`, `st` or `atom`) for the threads `tids` of block
/// `ctaid`, with address form `form` if it has one (module documentation, 3).
fn access_footprint(
    op: &Op,
    form: Option<&Affine>,
    tids: impl Iterator<Item = [u32; 3]>,
    ctaid: [u32; 3],
    param_base: u64,
) -> FootprintKind {
    let Some((space, addr, size)) = super::footprint::access_of(op) else {
        return FootprintKind::Anything;
    };
    let access = match op {
        Op::Ld { .. } => Access::Read,
        Op::St { .. } => Access::Write,
        _ => Access::Update,
    };
    let (mut global, mut shared): (Span, Span) = (None, None);
    match (form, space, addr.base) {
        (Some(form), _, _) => {
            for tid in tids {
                let a = form.eval(tid, ctaid) as u64;
                match resolve(space, addr.base, a, Some(param_base)) {
                    (MemSpace::Global, a) => widen(&mut global, a, size as u64),
                    (MemSpace::Shared, a) => widen(&mut shared, a, size as u64),
                    _ => {}
                }
            }
        }
        (None, Space::Shared, AddrBase::Absolute) => {
            widen(&mut shared, addr.offset as u64, size as u64);
        }
        (None, Space::Shared, _) => shared = ALL,
        (None, Space::Global, _) => global = ALL,
        (None, _, _) => {
            global = ALL;
            shared = ALL;
        }
    }
    let reads = |s: Span| if access == Access::Write { None } else { s };
    let writes = |s: Span| if access == Access::Read { None } else { s };
    FootprintKind::Memory {
        global_reads: reads(global),
        global_writes: writes(global),
        shared_reads: reads(shared),
        shared_writes: writes(shared),
        fence: false,
    }
}
