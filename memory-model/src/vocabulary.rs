//! The memory vocabulary shared by the program (`semantics::program` re-exports it under the same
//! names) and the memory environments: the memory-model order of an access, its scope and its
//! cache operator, and an atomic's operation and type. One definition each, so that the machine hands a decoded instruction's
//! qualifiers to the memory as they are, with no mapping between two copies.
//!
//! State spaces are [`crate::MemSpace`] (defined by the `traces` crate, which events name them
//! with); the program's own `Space` adds `Generic`, which no access reaches memory with (generic
//! addresses are resolved to a space first, PTX ISA 5.1.6).

use serde::Serialize;

/// Memory-model strength and order of `ld`/`st`/`atom`/`red`/`fence` (PTX ISA 8.4 "Operation
/// types": `.weak`, `.volatile`, `.relaxed`, `.acquire`, `.release`, `.acq_rel`, `.sc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum MemOrder {
    /// No qualifier, or `.weak`.
    Weak,
    /// `.volatile` (= `.relaxed.sys` since PTX ISA 6.0).
    Volatile,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    Sc,
}

/// The scope of a strong access or a fence (PTX ISA 8.5 "Scope": `.cta`, `.cluster`, `.gpu`,
/// `.sys`), and the level of a `membar` (thesis `MemBarLevel`: `membar.cta`, `.gl` = `.gpu`,
/// `.sys`).
///
/// `Cluster` is the union's extra variant: the program must keep what the PTX text says (the race
/// monitors read `.cluster` as `.cta`, the conservative reading for clusters of one block), while
/// the cached memory has no cluster-wide cache and treats `.cluster` as `.gpu` (it distinguishes
/// only `.cta` from the wider scopes). The loader never gives a fence or `membar` `Cluster`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Scope {
    Cta,
    Cluster,
    Gpu,
    Sys,
}

/// Cache operators of `ld`/`st` (PTX ISA 9.7.9.1, "Cache Operators"; thesis `CacheOp`). Flat
/// memory ignores them; the cached memory picks a memory program by them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum CacheOp {
    Ca,
    Cg,
    Cs,
    Lu,
    Cv,
    Wb,
    Wt,
}

/// The operation of an `atom`/`red` (PTX ISA 9.7.12.3 "atom", 9.7.12.4 "red"; thesis `atom`
/// with its `AtomOp`). The new value it writes is [`crate::atomic::apply`]'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum AtomOp {
    Add,
    Inc,
    Dec,
    Exch,
    Cas,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// The operand type of an `atom`/`red`: the types PTX ISA 9.7.12.3 allows for some atomic
/// operation, less half precision (outside cudasem's subset). The loader checks which type each
/// operation takes; [`crate::atomic::apply`] is total over every pair all the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum AtomType {
    B32,
    B64,
    U32,
    U64,
    S32,
    S64,
    F32,
    F64,
}

impl AtomType {
    /// Every atomic type, in declaration order.
    pub const ALL: [AtomType; 8] = [
        AtomType::B32,
        AtomType::B64,
        AtomType::U32,
        AtomType::U64,
        AtomType::S32,
        AtomType::S64,
        AtomType::F32,
        AtomType::F64,
    ];

    /// Width in bytes (the size of the access).
    pub fn size(self) -> u32 {
        match self {
            AtomType::B32 | AtomType::U32 | AtomType::S32 | AtomType::F32 => 4,
            AtomType::B64 | AtomType::U64 | AtomType::S64 | AtomType::F64 => 8,
        }
    }

    /// Width in bits.
    pub fn bits(self) -> u32 {
        self.size() * 8
    }
}

impl AtomOp {
    /// Every atomic operation, in declaration order.
    pub const ALL: [AtomOp; 10] = [
        AtomOp::Add,
        AtomOp::Inc,
        AtomOp::Dec,
        AtomOp::Exch,
        AtomOp::Cas,
        AtomOp::Min,
        AtomOp::Max,
        AtomOp::And,
        AtomOp::Or,
        AtomOp::Xor,
    ];
}
