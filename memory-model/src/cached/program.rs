//! Memory programs (thesis 4.1, 4.5; digest §3.11, §3.15) as statement lists, and the table that
//! maps a request to its program.
//!
//! A program is a flat list of statements run by the micro-step interpreter in `engine`:
//! `Op(name)` (one operation of 𝔒⟦−⟧, keeping the thesis's names), `Yield`, `End` and
//! `IfNot(cond, skip)`, which is the thesis's `if (!cond) { … }` flattened: when `cond` is false
//! the statements after it run, when it is true execution continues at `skip`. Every `if` of the
//! thesis's listings has this shape (no `else`), and a flat list makes an op's position a single
//! statement index (for state hashing and the debugger's listing).
//!
//! cudasem coarsening: `writeToRegs; yield; releaseRegs; end` of the thesis is one micro step
//! `writeToRegs; releaseRegs; end` here. Both operations touch only the issuing thread's
//! registers, and the thread cannot read the destination before `releaseRegs`, so the split
//! only adds interleavings nobody can observe.
//!
//! Folded yields ([`Stm::Fold`], issue 15): a `yield` of the thesis's listings that separates a
//! step from statements nobody else can observe in between is kept in the listing but, under
//! [`MicroSteps::Folded`] (the default), does not end the micro step. This is the classical
//! reduction of invisible transitions (Lipton, "Reduction: a method of proving properties of
//! parallel programs", CACM 1975): a *left mover* (a stretch that commutes to the left of every
//! step of everyone else: it changes only the op's own state σ and its thread's destination
//! register, or releases something, so whatever others did just before it they could do just
//! after) may join the step before it, and a *right mover* (commutes to the right of every
//! step of everyone else) may join the step after it. Each fold says which of the two it is
//! and why ([`Fold`]); `docs/internals/cached-memory.md` ("Folded micro steps") gives the
//! argument in full. Reachable outcomes, deadlocks and termination are unchanged; only the
//! intermediate states (and the interleavings through them) disappear.

use super::{Request, RequestKind};
use crate::MemSpace;
use crate::{CacheOp, MemOrder, Scope};
use serde::Serialize;

/// The operations of 𝔒⟦−⟧ (digest §3.9), plus the fence's `flushL1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum OpName {
    ReadMem,
    WriteMem,
    AtomOp,
    WriteToRegs,
    ReleaseRegs,
    Lock,
    Unlock,
    ReadL1,
    ReadL2,
    WriteL1,
    WriteL2,
    ReserveL1,
    ReserveL2,
    UpdateL1,
    UpdateL2,
    EvictL1,
    DiscardL1,
    ClassifyFirstL1,
    ClassifyFirstL2,
    ClassifyNormalL1,
    ClassifyNormalL2,
    /// The fence's invalidation of the issuing SM's L1 (cudasem; the thesis leaves membar to
    /// `updMemBar` in chapter 5).
    FlushL1,
    /// cudasem: the last step of a global store or atomic drops the issuing SM's L1 line of the
    /// address (a pinned one becomes doomed). Without it a line refilled with the old value
    /// between `discardL1`/`evictL1` and `writeL2` (T3) would serve the writing thread's own
    /// later load: a coherence violation (PTX ISA 8, "Coherence"). Other threads of the SM can
    /// still read that stale line until this step, so T3 stays reachable.
    InvalidateL1,
}

impl OpName {
    /// Whether the operation can defer (thesis ε: the program yields and retries it), so that
    /// its enabledness depends on more than the op: a bank lock, a reserve or allocating
    /// write (room), a read of a line being filled, an eviction or discard of a pinned line.
    /// Every other operation always makes progress.
    pub fn can_defer(self) -> bool {
        matches!(
            self,
            OpName::Lock
                | OpName::ReserveL1
                | OpName::WriteL1
                | OpName::ReserveL2
                | OpName::WriteL2
                | OpName::ReadL1
                | OpName::ReadL2
                | OpName::EvictL1
                | OpName::DiscardL1
        )
    }

    /// The thesis's name of the operation.
    pub fn name(self) -> &'static str {
        match self {
            OpName::ReadMem => "readMem",
            OpName::WriteMem => "writeMem",
            OpName::AtomOp => "atomOp",
            OpName::WriteToRegs => "writeToRegs",
            OpName::ReleaseRegs => "releaseRegs",
            OpName::Lock => "lock",
            OpName::Unlock => "unlock",
            OpName::ReadL1 => "readL1",
            OpName::ReadL2 => "readL2",
            OpName::WriteL1 => "writeL1",
            OpName::WriteL2 => "writeL2",
            OpName::ReserveL1 => "reserveL1",
            OpName::ReserveL2 => "reserveL2",
            OpName::UpdateL1 => "updateL1",
            OpName::UpdateL2 => "updateL2",
            OpName::EvictL1 => "evictL1",
            OpName::DiscardL1 => "discardL1",
            OpName::ClassifyFirstL1 => "classifyFirstL1",
            OpName::ClassifyFirstL2 => "classifyFirstL2",
            OpName::ClassifyNormalL1 => "classifyNormalL1",
            OpName::ClassifyNormalL2 => "classifyNormalL2",
            OpName::FlushL1 => "flushL1",
            OpName::InvalidateL1 => "invalidateL1",
        }
    }
}

/// The boolean expressions of 4.4.2 that the listings use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Cond {
    IsCachedL1,
    IsCachedL2,
}

impl Cond {
    pub fn name(self) -> &'static str {
        match self {
            Cond::IsCachedL1 => "isCachedL1",
            Cond::IsCachedL2 => "isCachedL2",
        }
    }
}

/// How many micro steps an op takes: the thesis's yields all end a step, or the folded ones
/// ([`Stm::Fold`]) do not (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize, Default)]
pub enum MicroSteps {
    /// Every `yield` of the listings ends a micro step (thesis 4.4.4), as in the thesis's
    /// scenarios; for tests that compare the two.
    Thesis,
    /// Folded yields do not end the micro step: fewer steps and states, the same outcomes.
    #[default]
    Folded,
}

impl MicroSteps {
    /// The thesis's steps (a serde default: see [`super::CacheConfig::micro_steps`]).
    pub fn thesis() -> MicroSteps {
        MicroSteps::Thesis
    }

    pub fn is_thesis(&self) -> bool {
        *self == MicroSteps::Thesis
    }
}

/// Why a thesis `yield` may be folded away (see the module documentation): which side of it
/// moves, so that no other step can observe the state between the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Fold {
    /// The statements after it (up to the next `yield` or `end`) are a left mover: they change
    /// only σ (`atomOp`), deliver to the thread's own destination register (`writeToRegs`),
    /// release bank locks (`unlock`), or end the op (`releaseRegs; end`: its thread's later
    /// ops, barrier and registers stop waiting). None of them can defer, none disables a step
    /// of anyone else, and no other step reads what they write before they run (the
    /// destination register is on the scoreboard; locks and dependencies only make others
    /// wait). Not folded when the op's end flushes its SM's L1 (an acquiring load or atomic
    /// above `.cta` scope): other ops of the SM can observe a flush, so it must keep its own
    /// place in the interleaving.
    LeftMover,
    /// The statement before it is a `readMem` of a cache line from DRAM into σ's buffer, the
    /// line pinned in L2 by the op's `reserveL2`: a right mover. It changes only σ; the only
    /// step of anyone else that can change the line's DRAM bytes while it is pinned is a
    /// write-back of its dirty bytes (`wb_L2`; a pinned line is never a victim), and dirty bytes
    /// are valid, which `updateL2` never overwrites, so the bytes that differ never leave σ's
    /// buffer (the `readL2` after `updateL2` replaces it). Hence `readMem` then any step equals
    /// that step then `readMem` in every value anyone can read.
    RightMover,
}

/// A program statement (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Stm {
    Op(OpName),
    Yield,
    /// A `yield` of the thesis's listing that [`MicroSteps::Folded`] does not stop at.
    Fold(Fold),
    End,
    /// `if (!cond) { stms[here+1 .. skip] }`, then continue at `skip`.
    IfNot(Cond, u8),
}

/// Names the programs (an op stores this, not the statements).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum ProgramId {
    /// Listing 4.2: `ld.{global,local}.ca` (and `.nc`, `.wb`, `.wt` loads).
    LoadCa,
    /// Listing 4.2 with `classifyFirst` after each reserve: `.cs`, `.lu` loads (digest §3.15).
    LoadCs,
    /// L2 only (digest §3.15 `ld.global.cg`): `.cg` and `.cv` weak global loads.
    LoadL2,
    /// L2 only, and the step that reads L2 drops the issuing SM's L1 line of the address
    /// (cudasem, see [`OpName::InvalidateL1`]): every strong global load (`.volatile`,
    /// `.relaxed`, `.acquire`, `.sc`, any scope). The value it observed may be a write of
    /// another SM; once it has been read, no thread of this SM may read an older value of the
    /// address from its L1, so a `.cta` acquire of this SM needs no flush (docs/internals/
    /// cached-memory.md, "Scopes").
    LoadStrong,
    /// Listing 4.1: global stores `.wb`, `.cg`, `.wt` (global stores never touch L1 anyway).
    StoreGlobal,
    /// Listing 4.1 with `classifyFirstL2`: `st.global.cs`.
    StoreGlobalCs,
    /// Listing 4.3: `st.local.cs` and `st.local.cg` (A14: the listing's caption says `.cg`, its
    /// body is `.cs`; both map here).
    StoreLocalFirst,
    /// `st.local.wb`/`.wt` (digest §3.15).
    StoreLocal,
    /// Listing 4.4 read per A12 (the atomic acts like a `.cg` access).
    AtomicGlobal,
    /// Listing 4.5 (bank locks).
    AtomicShared,
    LoadShared,
    StoreShared,
    /// `membar`/`fence` of scope `.gpu`/`.sys`: one micro step (`flushL1`) once every earlier
    /// op of the thread ended.
    Fence,
    /// `membar.cta`/`fence.*.cta`: the same ordering, no flush (threads of one CTA share the
    /// SM's L1; see [`ProgramId::LoadStrong`]); also the release half of every `.acq_rel`
    /// fence (the flush is the acquire half's).
    FenceCta,
}

/// A memory program: its name and statements.
#[derive(Debug)]
pub struct Program {
    pub name: &'static str,
    pub stms: &'static [Stm],
}

use OpName::*;
use Stm::{End, IfNot, Op, Yield};

/// The folds of the listings (see [`Fold`]).
const LEFT: Stm = Stm::Fold(Fold::LeftMover);
const RIGHT: Stm = Stm::Fold(Fold::RightMover);

const LOAD_CA: &[Stm] = &[
    IfNot(Cond::IsCachedL1, 12),
    Op(ReserveL1),
    Yield,
    IfNot(Cond::IsCachedL2, 9),
    Op(ReserveL2),
    Yield,
    Op(ReadMem),
    RIGHT,
    Op(UpdateL2),
    Op(ReadL2),
    Yield,
    Op(UpdateL1),
    Op(ReadL1),
    LEFT,
    Op(WriteToRegs),
    Op(ReleaseRegs),
    End,
];

const LOAD_CS: &[Stm] = &[
    IfNot(Cond::IsCachedL1, 14),
    Op(ReserveL1),
    Op(ClassifyFirstL1),
    Yield,
    IfNot(Cond::IsCachedL2, 11),
    Op(ReserveL2),
    Op(ClassifyFirstL2),
    Yield,
    Op(ReadMem),
    RIGHT,
    Op(UpdateL2),
    Op(ReadL2),
    Yield,
    Op(UpdateL1),
    Op(ReadL1),
    LEFT,
    Op(WriteToRegs),
    Op(ReleaseRegs),
    End,
];

const LOAD_L2: &[Stm] = &[
    IfNot(Cond::IsCachedL2, 6),
    Op(ReserveL2),
    Yield,
    Op(ReadMem),
    RIGHT,
    Op(UpdateL2),
    Op(ReadL2),
    LEFT,
    Op(WriteToRegs),
    Op(ReleaseRegs),
    End,
];

const LOAD_STRONG: &[Stm] = &[
    IfNot(Cond::IsCachedL2, 6),
    Op(ReserveL2),
    Yield,
    Op(ReadMem),
    RIGHT,
    Op(UpdateL2),
    Op(ReadL2),
    Op(InvalidateL1),
    LEFT,
    Op(WriteToRegs),
    Op(ReleaseRegs),
    End,
];

const STORE_GLOBAL: &[Stm] = &[
    Op(DiscardL1),
    Yield,
    Op(WriteL2),
    Op(ClassifyNormalL2),
    Yield,
    Op(InvalidateL1),
    Op(ReleaseRegs),
    End,
];

const STORE_GLOBAL_CS: &[Stm] = &[
    Op(DiscardL1),
    Yield,
    Op(WriteL2),
    Op(ClassifyFirstL2),
    Yield,
    Op(InvalidateL1),
    Op(ReleaseRegs),
    End,
];

const STORE_LOCAL_FIRST: &[Stm] = &[Op(WriteL1), Op(ClassifyFirstL1), LEFT, Op(ReleaseRegs), End];

const STORE_LOCAL: &[Stm] = &[
    Op(WriteL1),
    Op(ClassifyNormalL1),
    LEFT,
    Op(ReleaseRegs),
    End,
];

const ATOMIC_GLOBAL: &[Stm] = &[
    Op(EvictL1),
    Yield,
    IfNot(Cond::IsCachedL2, 10),
    Op(ReserveL2),
    Op(ClassifyNormalL2),
    Yield,
    Op(ReadMem),
    RIGHT,
    Op(UpdateL2),
    Yield,
    Op(ReadL2),
    Op(AtomOp),
    Op(WriteL2),
    Yield,
    Op(InvalidateL1),
    Op(WriteToRegs),
    Op(ReleaseRegs),
    End,
];

const ATOMIC_SHARED: &[Stm] = &[
    Op(Lock),
    Op(ReadMem),
    LEFT,
    Op(AtomOp),
    Yield,
    Op(WriteMem),
    LEFT,
    Op(Unlock),
    LEFT,
    Op(WriteToRegs),
    Op(ReleaseRegs),
    End,
];

const LOAD_SHARED: &[Stm] = &[Op(ReadMem), LEFT, Op(WriteToRegs), Op(ReleaseRegs), End];

const STORE_SHARED: &[Stm] = &[Op(WriteMem), Op(ReleaseRegs), End];

const FENCE: &[Stm] = &[Op(FlushL1), End];

const FENCE_CTA: &[Stm] = &[End];

/// Whether the stretch after statement `at` (up to the next `yield`, fold or `end`) reaches the
/// op's `end`.
pub(super) fn stretch_ends(stms: &[Stm], at: usize) -> bool {
    stms.iter()
        .skip(at + 1)
        .find(|s| matches!(s, Stm::Yield | Stm::Fold(_) | Stm::End))
        == Some(&Stm::End)
}

/// Every program, for listings and static checks.
pub const ALL: [ProgramId; 14] = [
    ProgramId::LoadCa,
    ProgramId::LoadCs,
    ProgramId::LoadL2,
    ProgramId::LoadStrong,
    ProgramId::StoreGlobal,
    ProgramId::StoreGlobalCs,
    ProgramId::StoreLocalFirst,
    ProgramId::StoreLocal,
    ProgramId::AtomicGlobal,
    ProgramId::AtomicShared,
    ProgramId::LoadShared,
    ProgramId::StoreShared,
    ProgramId::Fence,
    ProgramId::FenceCta,
];

impl ProgramId {
    pub fn program(self) -> Program {
        let (name, stms) = match self {
            ProgramId::LoadCa => ("ld.ca (Listing 4.2)", LOAD_CA),
            ProgramId::LoadCs => ("ld.cs/.lu (Listing 4.2 + classifyFirst)", LOAD_CS),
            ProgramId::LoadL2 => ("ld L2 only (.cg/.cv)", LOAD_L2),
            ProgramId::LoadStrong => ("ld strong (L2 only, invalidates L1)", LOAD_STRONG),
            ProgramId::StoreGlobal => ("st.global (Listing 4.1)", STORE_GLOBAL),
            ProgramId::StoreGlobalCs => (
                "st.global.cs (Listing 4.1 + classifyFirstL2)",
                STORE_GLOBAL_CS,
            ),
            ProgramId::StoreLocalFirst => ("st.local.cs/.cg (Listing 4.3)", STORE_LOCAL_FIRST),
            ProgramId::StoreLocal => ("st.local.wb", STORE_LOCAL),
            ProgramId::AtomicGlobal => ("atom.global (Listing 4.4, A12)", ATOMIC_GLOBAL),
            ProgramId::AtomicShared => ("atom.shared (Listing 4.5)", ATOMIC_SHARED),
            ProgramId::LoadShared => ("ld.shared", LOAD_SHARED),
            ProgramId::StoreShared => ("st.shared", STORE_SHARED),
            ProgramId::Fence => ("fence", FENCE),
            ProgramId::FenceCta => ("fence.cta / release half", FENCE_CTA),
        };
        Program { name, stms }
    }

    /// Whether the program fills an L1 line from L2 (so its L2 accesses need the whole line
    /// valid: an L1 line is filled all at once, never partially).
    pub fn fills_l1(self) -> bool {
        matches!(self, ProgramId::LoadCa | ProgramId::LoadCs)
    }
}

/// Whether a load of this order must be coherent (PTX strong loads): `.volatile` is
/// `.relaxed.sys` since PTX ISA 6.0.
fn strong(order: MemOrder) -> bool {
    !matches!(order, MemOrder::Weak | MemOrder::Release)
}

/// Whether a strong access or fence is scoped to the issuing thread's CTA (`.cta`). No scope
/// reads as `.sys` (PTX ISA 8: a strong operation without a scope qualifier is `.sys`).
pub(super) fn cta_scoped(req: &Request) -> bool {
    req.scope == Some(Scope::Cta)
}

/// The request -> program table (ARCHITECTURE.md lists it). `None`: no program (an atomic on a
/// space other than `.global`/`.shared`, any access to `.const`/`.param`); the op is stuck at
/// its first step.
pub fn program_for(req: &Request) -> Option<ProgramId> {
    use CacheOp as C;
    Some(match (req.kind, req.space) {
        // The release half of an acq_rel fence only orders (ordering rule O4): no flush.
        (RequestKind::Fence, _) if cta_scoped(req) || req.order == MemOrder::Release => {
            ProgramId::FenceCta
        }
        (RequestKind::Fence, _) => ProgramId::Fence,
        (RequestKind::Load { .. }, MemSpace::Shared) => ProgramId::LoadShared,
        (RequestKind::Store { .. }, MemSpace::Shared) => ProgramId::StoreShared,
        (RequestKind::Atomic { .. }, MemSpace::Shared) => ProgramId::AtomicShared,
        (RequestKind::Atomic { .. }, MemSpace::Global) => ProgramId::AtomicGlobal,
        // Global loads: strong ones and `.cg`/`.cv` are served by L2, the coherence point.
        (RequestKind::Load { cop, .. }, MemSpace::Global) => match cop {
            _ if strong(req.order) => ProgramId::LoadStrong,
            Some(C::Cg | C::Cv) => ProgramId::LoadL2,
            Some(C::Cs | C::Lu) => ProgramId::LoadCs,
            _ => ProgramId::LoadCa,
        },
        // Local loads always go through L1: a local store's data may sit dirty there (write-back
        // L1), and the thread is the only one that can see it, so L1 is coherent for it.
        (RequestKind::Load { cop, .. }, MemSpace::Local) => match cop {
            Some(C::Cs | C::Lu) => ProgramId::LoadCs,
            _ => ProgramId::LoadCa,
        },
        (RequestKind::Store { cop, .. }, MemSpace::Global) => match cop {
            Some(C::Cs) => ProgramId::StoreGlobalCs,
            _ => ProgramId::StoreGlobal,
        },
        (RequestKind::Store { cop, .. }, MemSpace::Local) => match cop {
            Some(C::Cs | C::Cg) => ProgramId::StoreLocalFirst,
            _ => ProgramId::StoreLocal,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Digest §6 item 15: every path ends with `end;`, every `if` skips forward inside the
    /// program, and no statement follows an unconditional `end`.
    #[test]
    fn every_program_is_well_formed() {
        for id in ALL {
            let p = id.program();
            let n = p.stms.len();
            assert_eq!(p.stms.last(), Some(&Stm::End), "{}", p.name);
            for (i, s) in p.stms.iter().enumerate() {
                if let Stm::IfNot(_, skip) = s {
                    assert!(
                        (*skip as usize) > i + 1 && (*skip as usize) < n,
                        "{}",
                        p.name
                    );
                }
                if *s == Stm::End {
                    assert_eq!(i, n - 1, "{}: end before the last statement", p.name);
                }
            }
        }
    }
}
