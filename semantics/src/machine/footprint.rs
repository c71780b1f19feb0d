//! Footprints of enabled choices, for partial-order reduction (ARCHITECTURE.md section 5:
//! stateless search with sleep sets). The footprint of a choice is what its next step may
//! touch besides its own warp: memory ranges read and written (global, and the block's shared
//! memory), the block's barrier state, the SMs (an exit may complete a block, and the next
//! block then lands on the SM it frees), or "anything" when cudasem cannot tell.
//!
//! Two choices are *independent* ([`Footprint::independent`]) when they belong to different
//! warps and their footprints do not conflict; then, from the state they were computed in,
//! taking them in either order reaches the same state, and neither disables the other. The
//! computation over-approximates: every lane of the step's group counts (guards are not
//! evaluated), and per region the lanes' accesses are merged into one byte span. A warp step
//! at a reconvergence point is the implicit `sync` (deviation D2), which touches only the
//! warp's own SIMT stack. Over-approximating only adds dependences, so the reduction stays sound.
//!
//! What is *not* covered here, and why that is still sound:
//! * a step that faults ends the run, so it commutes with nothing: searches must not put a
//!   choice whose step faulted to sleep (whether an access faults depends only on the
//!   warp's own registers and the static layout, both untouched by independent steps);
//! * reads of `%clock`/`%clock64`/`%globaltimer` (the step count, D14) are treated as
//!   unobservable, as the canonical state hash does (docs/internals/exploration.md).

use super::Machine;
use super::exec::resolve;
use super::warp::ModelState;
use crate::program::{AddrBase, Address, Op, Space};
use memory_model::MemSpace;
use memory_model::MemoryEnv;
use traces::Choice;

/// A byte span `[lo, hi)` of one region.
type Span = Option<(u64, u64)>;

/// How an instruction touches the bytes it addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// `ld`.
    Read,
    /// `st`.
    Write,
    /// `atom`/`red`: reads and writes the same bytes.
    Update,
}

/// What one enabled choice's next step may touch beyond its own warp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// The stepping warp (`None` for system choices).
    pub warp: Option<(u32, u32)>,
    pub kind: FootprintKind,
}

/// The closed set of footprint shapes, from the most to the least independent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FootprintKind {
    /// Registers, control state, `.local`/`.param`/`.const` memory and warp-collective
    /// operations of its own warp only.
    Local,
    /// Memory accesses: spans of global addresses and of the block's shared memory read and
    /// written (an atomic both reads and writes); `fence`: a memory fence, ordered with every
    /// other memory access and fence.
    Memory {
        global_reads: Span,
        global_writes: Span,
        shared_reads: Span,
        shared_writes: Span,
        fence: bool,
    },
    /// Barrier operations: the block's barriers, and through their completion every warp of
    /// the block.
    Block,
    /// An exit (or a kernel-level `ret`): the block's barrier counts (deviation D11, default
    /// thread counts under ITS), the block's completion, and the SM it frees.
    /// `commutes_with_exits`: every block of every grid has been issued and memory is flat.
    /// Then two exits of different blocks commute: each touches only its own block's barrier
    /// counts and, completing the block, counters of its SM and grid that no step reads
    /// before a block issue (none is left, and issue is never undone) and that both orders
    /// leave the same; no memory operation is in flight past an exit. Otherwise the order of
    /// exits decides which SM frees first for the next block (or what cached memory does
    /// meanwhile), and two exits are dependent.
    Exit { commutes_with_exits: bool },
    /// Unknown or global effect (system choices, `trap`): dependent with every choice.
    Anything,
}

fn overlaps(a: Span, b: Span) -> bool {
    match (a, b) {
        (Some((alo, ahi)), Some((blo, bhi))) => alo < bhi && blo < ahi,
        _ => false,
    }
}

fn widen(span: &mut Span, lo: u64, len: u64) {
    let hi = lo.saturating_add(len.max(1));
    *span = Some(match *span {
        Some((l, h)) => (l.min(lo), h.max(hi)),
        None => (lo, hi),
    });
}

impl Footprint {
    /// Whether the two steps commute from the state both footprints were computed in.
    pub fn independent(&self, other: &Footprint) -> bool {
        use FootprintKind::*;
        let (Some(a), Some(b)) = (self.warp, other.warp) else {
            return false;
        };
        if a == b {
            return false;
        }
        let same_block = a.0 == b.0;
        match (self.kind, other.kind) {
            (Anything, _) | (_, Anything) => false,
            (Block, _) | (_, Block) => !same_block,
            (
                Exit {
                    commutes_with_exits: true,
                },
                Exit {
                    commutes_with_exits: true,
                },
            ) => !same_block,
            (Exit { .. }, Exit { .. }) => false,
            (Exit { .. }, _) | (_, Exit { .. }) => !same_block,
            (Local, _) | (_, Local) => true,
            (
                Memory {
                    global_reads: gr1,
                    global_writes: gw1,
                    shared_reads: sr1,
                    shared_writes: sw1,
                    fence: f1,
                },
                Memory {
                    global_reads: gr2,
                    global_writes: gw2,
                    shared_reads: sr2,
                    shared_writes: sw2,
                    fence: f2,
                },
            ) => {
                if f1 || f2 {
                    return false;
                }
                let global = overlaps(gw1, gr2) || overlaps(gw1, gw2) || overlaps(gr1, gw2);
                // Shared memory is per block: other blocks' spans name other bytes.
                let shared =
                    same_block && (overlaps(sw1, sr2) || overlaps(sw1, sw2) || overlaps(sr1, sw2));
                !(global || shared)
            }
        }
    }
}

/// Accumulates the spans of one memory instruction.
#[derive(Default)]
struct Spans {
    global_reads: Span,
    global_writes: Span,
    shared_reads: Span,
    shared_writes: Span,
}

impl Machine {
    /// The footprint of an exit in the current state ([`FootprintKind::Exit`]).
    fn exit_footprint(&self) -> FootprintKind {
        FootprintKind::Exit {
            commutes_with_exits: self.mem.performs_accesses_at_once()
                && self
                    .grids
                    .iter()
                    .all(|g| g.next_block >= g.info.shape.blocks),
        }
    }

    /// The footprint of `choice`'s next step in the current state (see the module header).
    pub fn footprint(&self, choice: &Choice) -> Footprint {
        let anything = Footprint {
            warp: None,
            kind: FootprintKind::Anything,
        };
        let (block, warp, lanes) = match *choice {
            Choice::Warp { block, warp } => (block, warp, None),
            // An indirect branch or call's target group: control flow and frames only. A lane's
            // pick of a body-less call's result: its pending result only.
            Choice::Target { block, warp, .. } | Choice::Pick { block, warp, .. } => {
                return Footprint {
                    warp: Some((block, warp)),
                    kind: FootprintKind::Local,
                };
            }
            Choice::Lanes { block, warp, mask } => (block, warp, Some(mask)),
            Choice::Issue { .. } | Choice::EndBarrier { .. } | Choice::Mem(_) => return anything,
        };
        let Some(w) = self.resident_warp(block, warp) else {
            return anything;
        };
        // A `Warp` step (SIMT stack) at a reconvergence point is the implicit `sync` (D2, rule
        // sync_ipdom): it unwinds the warp's own stack and executes no instruction.
        if lanes.is_none()
            && let ModelState::Simt(s) = &w.model
            && s.stack.last().is_some_and(|t| t.reconv == Some(s.pc))
        {
            return Footprint {
                warp: Some((block, warp)),
                kind: FootprintKind::Local,
            };
        }
        let (mask, pc) = match (lanes, &w.model) {
            (None, ModelState::Simt(s)) => (s.active, s.pc),
            (Some(m), ModelState::Its(s)) if m != 0 => (m, s.lane_pc[m.trailing_zeros() as usize]),
            _ => return anything,
        };
        let Some(instr) = self.program.instructions.get(pc as usize) else {
            return anything;
        };
        let kind = match &instr.op {
            op @ (Op::Ld { .. } | Op::St { .. } | Op::Atom { .. }) => match access_of(op) {
                Some((space, addr, bytes)) => {
                    let access = match op {
                        Op::Ld { .. } => Access::Read,
                        Op::St { .. } => Access::Write,
                        _ => Access::Update,
                    };
                    self.spans(w, mask, space, addr, bytes, access)
                }
                None => FootprintKind::Anything,
            },
            Op::Fence { .. } => FootprintKind::Memory {
                global_reads: None,
                global_writes: None,
                shared_reads: None,
                shared_writes: None,
                fence: true,
            },
            Op::Barrier { .. } => FootprintKind::Block,
            Op::Exit => self.exit_footprint(),
            // `ret` at call depth 0 is `exit` (D6).
            Op::Ret => {
                if super::warp::lanes(mask).any(|l| w.depth[l] == 0) {
                    self.exit_footprint()
                } else {
                    FootprintKind::Local
                }
            }
            Op::Trap => FootprintKind::Anything,
            _ => FootprintKind::Local,
        };
        Footprint {
            warp: Some((block, warp)),
            kind,
        }
    }

    /// The spans that lanes `mask` of `w` access with an `ld`, `st` or `atom` (`access`) of
    /// `size` bytes at `addr`.
    #[allow(clippy::too_many_arguments)]
    fn spans(
        &self,
        w: &super::warp::Warp,
        mask: u64,
        space: Space,
        addr: &Address,
        size: u32,
        access: Access,
    ) -> FootprintKind {
        // Frame-relative addresses name the thread's own frame (`.local`/`.param`).
        if addr.base == AddrBase::Frame && matches!(space, Space::Local | Space::Param) {
            return FootprintKind::Local;
        }
        let mut s = Spans::default();
        for l in super::warp::lanes(mask) {
            let depth = w.depth[l] as usize;
            let Some(level) = w.levels.get(depth) else {
                return FootprintKind::Anything;
            };
            let base = match addr.base {
                AddrBase::Reg(r) => match level.regs.get(r.0 as usize, l) {
                    Some(v) => v,
                    None => return FootprintKind::Anything,
                },
                AddrBase::Absolute => 0,
                AddrBase::Frame => return FootprintKind::Anything,
            };
            let a = base.wrapping_add(addr.offset as u64);
            // `.param` is read-only: which grid's parameters it reads does not matter here.
            let (ms, a) = resolve(space, addr.base, a, (depth == 0).then_some(0));
            let (reads, writes) = match ms {
                MemSpace::Global => (&mut s.global_reads, &mut s.global_writes),
                MemSpace::Shared => (&mut s.shared_reads, &mut s.shared_writes),
                // Thread-private or read-only spaces.
                _ => continue,
            };
            if access != Access::Write {
                widen(reads, a, size as u64);
            }
            if access != Access::Read {
                widen(writes, a, size as u64);
            }
        }
        FootprintKind::Memory {
            global_reads: s.global_reads,
            global_writes: s.global_writes,
            shared_reads: s.shared_reads,
            shared_writes: s.shared_writes,
            fence: false,
        }
    }
}

/// The memory an `ld`, `st` or `atom` accesses: its state space, its address and the bytes
/// each lane touches (an element times the vector length; an atomic, its type).
pub(super) fn access_of(op: &Op) -> Option<(Space, &Address, u32)> {
    match op {
        Op::Ld {
            space,
            ty,
            vector,
            addr,
            ..
        }
        | Op::St {
            space,
            ty,
            vector,
            addr,
            ..
        } => Some((
            *space,
            addr,
            super::type_size(*ty) * (*vector).max(1) as u32,
        )),
        Op::Atom {
            space, ty, addr, ..
        } => Some((*space, addr, ty.size())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(gr: Span, gw: Span, sr: Span, sw: Span) -> FootprintKind {
        FootprintKind::Memory {
            global_reads: gr,
            global_writes: gw,
            shared_reads: sr,
            shared_writes: sw,
            fence: false,
        }
    }

    fn fp(block: u32, warp: u32, kind: FootprintKind) -> Footprint {
        Footprint {
            warp: Some((block, warp)),
            kind,
        }
    }

    #[test]
    fn conflicts_follow_the_footprints() {
        let w = |lo, hi| mem(None, Some((lo, hi)), None, None);
        let r = |lo, hi| mem(Some((lo, hi)), None, None, None);
        // Disjoint writes, reads of the same bytes: independent.
        assert!(fp(0, 0, w(0, 4)).independent(&fp(1, 0, w(4, 8))));
        assert!(fp(0, 0, r(0, 4)).independent(&fp(1, 0, r(0, 4))));
        // A write and a read or write of the same byte: dependent.
        assert!(!fp(0, 0, w(0, 4)).independent(&fp(1, 0, r(3, 8))));
        assert!(!fp(0, 0, w(0, 4)).independent(&fp(0, 1, w(0, 1))));
        // Shared memory: only within a block.
        let sw = mem(None, None, None, Some((0, 4)));
        assert!(fp(0, 0, sw).independent(&fp(1, 0, sw)));
        assert!(!fp(0, 0, sw).independent(&fp(0, 1, sw)));
        // The same warp, barriers, exits, unknowns.
        let local = FootprintKind::Local;
        assert!(!fp(0, 0, local).independent(&fp(0, 0, local)));
        assert!(fp(0, 0, local).independent(&fp(0, 1, local)));
        assert!(!fp(0, 0, FootprintKind::Block).independent(&fp(0, 1, local)));
        assert!(fp(0, 0, FootprintKind::Block).independent(&fp(1, 0, local)));
        let exit = |commutes_with_exits| FootprintKind::Exit {
            commutes_with_exits,
        };
        assert!(!fp(0, 0, exit(false)).independent(&fp(1, 0, exit(false))));
        assert!(!fp(0, 0, exit(true)).independent(&fp(1, 0, exit(false))));
        assert!(fp(0, 0, exit(true)).independent(&fp(1, 0, exit(true))));
        assert!(!fp(0, 0, exit(true)).independent(&fp(0, 1, exit(true))));
        assert!(fp(0, 0, exit(false)).independent(&fp(1, 0, w(0, 4))));
        assert!(!fp(0, 0, FootprintKind::Anything).independent(&fp(1, 0, local)));
        let fence = FootprintKind::Memory {
            global_reads: None,
            global_writes: None,
            shared_reads: None,
            shared_writes: None,
            fence: true,
        };
        assert!(!fp(0, 0, fence).independent(&fp(1, 0, r(0, 4))));
        assert!(fp(0, 0, fence).independent(&fp(1, 0, local)));
    }
}
