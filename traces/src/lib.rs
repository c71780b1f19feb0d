//! `traces`: the vocabulary every cudasem crate speaks.
//!
//! * [`Choice`]: one nondeterministic decision, taken from a machine's enabled set (ARCHITECTURE.md
//!   section 3; seed 003 digest section 11 lists the thesis's choice points).
//! * [`Event`]: what one step did, each with its [`Derivation`]: the rule names applied from the
//!   device down to the thread (the thesis's names where the thesis has the rule).
//! * [`Token`], [`TokenKind`], [`Disable`]: the SIMT stack vocabulary of thesis 5.4.1, as events
//!   and renderers show it.
//! * [`Trace`]: the replayable record `{version, program_hash, launch, config, seed, choices}`,
//!   optionally with the policy, the PTX path, a lasso's cycle start and the events.
//! * [`format`](mod@format): a trace as RON, as JSON Lines, and as the compact string printed on failures.
//!
//! Ids are plain integers: a block is its linear index in the grid (`x + y*gx + z*gx*gy`), a warp
//! its index in the block, a lane its index in the warp, a mask has bit `i` for lane `i`.
//! Nothing here reads files, prints or looks at a clock.

pub mod format;

use serde::{Deserialize, Serialize};
use std::fmt;

/// A linear block index within its grid.
pub type BlockId = u32;
/// A warp's index within its block.
pub type WarpId = u32;
/// A lane mask: bit `i` is lane `i` (warps have at most 64 lanes).
pub type LaneMask = u64;

/// One nondeterministic decision (ARCHITECTURE.md section 2 table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Choice {
    /// Context `issueBlocks` (thesis 5.7.1): make block `block` of grid `grid` resident on SM `sm`.
    Issue { grid: u32, block: BlockId, sm: u32 },
    /// Context `schedule_Warps` (thesis 5.7.1): warp `warp` of block `block` executes its next
    /// instruction (SIMT stack model).
    Warp { block: BlockId, warp: WarpId },
    /// Warp `bra_target` / `call_target` (thesis 5.4.1): the warp sits on an indirect branch or
    /// call whose active lanes name several targets; run target group `k` (groups ordered by
    /// ascending target address) first.
    Target {
        block: BlockId,
        warp: WarpId,
        k: u32,
    },
    /// Independent thread scheduling / threads model (beyond the thesis): the converged group
    /// `mask` of the warp steps.
    Lanes {
        block: BlockId,
        warp: WarpId,
        mask: LaneMask,
    },
    /// Block `endBar` (thesis 5.5.1): barrier `barrier` of block `block` has all its arrivals and
    /// completes now.
    EndBarrier { block: BlockId, barrier: u32 },
    /// Cached memory (thesis 4.6): a step of the memory environment: a micro step of an in-flight
    /// memory program or a silent cache action.
    Mem(MemChoice),
    /// A call to a function without a body whose launch gives a set of results (`extern_calls:
    /// { "f": Values([..]) }`): lane `lane` of warp `warp` takes value `k` of the set (in the
    /// launch's order) as its call's result. A thread's decision, so one per lane, the lanes of
    /// a warp instruction in ascending order, each before the instruction executes: a warp of
    /// `n` lanes offers `|values|` choices at a time, `n` times, never `|values|^n` at once.
    /// Last in the enum so that the derived order of every other kind is unchanged.
    Pick {
        block: BlockId,
        warp: WarpId,
        lane: u32,
        k: u32,
    },
}

impl Choice {
    /// The warp `(block, warp)` this choice steps: a whole warp, one of its lane groups or
    /// branch targets, or one lane's pick; `None` for the system's choices (block issue,
    /// barrier release, memory micro steps).
    pub fn warp(&self) -> Option<(BlockId, u32)> {
        match *self {
            Choice::Warp { block, warp }
            | Choice::Target { block, warp, .. }
            | Choice::Lanes { block, warp, .. }
            | Choice::Pick { block, warp, .. } => Some((block, warp)),
            Choice::Issue { .. } | Choice::EndBarrier { .. } | Choice::Mem(_) => None,
        }
    }
}

/// A memory-environment decision of the cached model (thesis 4.6 `->M`); the flat memory never
/// offers one. `line` is a line's base address (global memory), `sm` an SM index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MemChoice {
    /// Rule (step)/(end): in-flight memory op `op` runs its next micro step.
    Step { op: u32 },
    /// Silent rule (evict_L1): a clean, unpinned line leaves SM `sm`'s L1.
    EvictL1 { sm: u32, line: u64 },
    /// Silent rule (evict_L2).
    EvictL2 { line: u64 },
    /// Silent rule (wb_L1): a dirty L1 line is written back to L2.
    WriteBackL1 { sm: u32, line: u64 },
    /// Silent rule (wb_L2): a dirty L2 line is written back to DRAM.
    WriteBackL2 { line: u64 },
    /// Silent rule (flush): every global line of SM `sm`'s L1 is invalidated.
    Flush { sm: u32 },
}

impl fmt::Display for MemChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MemChoice::Step { op } => write!(f, "memory op {op}"),
            MemChoice::EvictL1 { sm, line } => write!(f, "evict L1 line {line:#x} on sm {sm}"),
            MemChoice::EvictL2 { line } => write!(f, "evict L2 line {line:#x}"),
            MemChoice::WriteBackL1 { sm, line } => {
                write!(f, "write back L1 line {line:#x} on sm {sm}")
            }
            MemChoice::WriteBackL2 { line } => write!(f, "write back L2 line {line:#x}"),
            MemChoice::Flush { sm } => write!(f, "flush L1 of sm {sm}"),
        }
    }
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Choice::Issue { grid, block, sm } => {
                write!(f, "issue grid {grid} block {block} on sm {sm}")
            }
            Choice::Warp { block, warp } => write!(f, "warp {block}.{warp}"),
            Choice::Target { block, warp, k } => write!(f, "warp {block}.{warp} target {k}"),
            Choice::Lanes { block, warp, mask } => write!(f, "warp {block}.{warp} lanes {mask:#x}"),
            Choice::EndBarrier { block, barrier } => {
                write!(f, "end barrier {barrier} of block {block}")
            }
            Choice::Mem(m) => m.fmt(f),
            Choice::Pick {
                block,
                warp,
                lane,
                k,
            } => write!(f, "warp {block}.{warp} lane {lane} picks value {k}"),
        }
    }
}

/// Token types of the SIMT stack (thesis 5.4.1 `TokenType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TokenKind {
    Sync,
    Diverge,
    Call,
    Break,
}

impl TokenKind {
    pub fn name(self) -> &'static str {
        match self {
            TokenKind::Sync => "sync",
            TokenKind::Diverge => "diverge",
            TokenKind::Call => "call",
            TokenKind::Break => "break",
        }
    }
}

/// An execution token `(type, mask, pc)` (thesis 5.4.1 `ExecToken`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Token {
    pub kind: TokenKind,
    pub mask: LaneMask,
    pub pc: u32,
}

/// A lane's disable state (thesis 5.4.1 `DisableState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Disable {
    Enabled,
    Break,
    Return,
    Exit,
}

/// The mask of lanes `0..n` of a warp (bit i = lane i; every lane for `n >= 64`): the lanes a
/// warp of `n` real threads has, in every mask a `Choice`, an `Event` or a token carries.
#[inline]
pub fn lane_mask(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// The disable mask δ as three lane masks (a lane in none of them is enabled).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct DisableMask {
    pub brk: LaneMask,
    pub ret: LaneMask,
    pub exit: LaneMask,
}

impl DisableMask {
    pub fn of(&self, lane: u32) -> Disable {
        let bit = 1u64 << lane;
        if self.exit & bit != 0 {
            Disable::Exit
        } else if self.ret & bit != 0 {
            Disable::Return
        } else if self.brk & bit != 0 {
            Disable::Break
        } else {
            Disable::Enabled
        }
    }
    /// Lanes that are not enabled.
    pub fn any(&self) -> LaneMask {
        self.brk | self.ret | self.exit
    }
}

/// A rule of the semantics. Names are the thesis's (chapter 5) where it has the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Rule {
    // device / context / grid / block (thesis 5.5-5.8)
    /// Device (exec), thesis 5.8.3.
    Exec,
    /// Context `issueBlocks`, thesis 5.7.1.
    IssueBlocks,
    /// Context `schedule_Warps`, thesis 5.7.1.
    ScheduleWarps,
    /// Block (endBar), thesis 5.5.2.
    EndBar,
    /// Block (compl), thesis 5.5.2.
    BlockCompl,
    /// Grid (compl), thesis 5.6.
    GridCompl,
    // warp rules (thesis 5.4.3)
    /// Warp (bra): flow actions through CRS.
    WarpBra,
    /// Warp (comm): votes and barriers.
    WarpComm,
    /// Warp (mem): memory actions.
    WarpMem,
    // CRS rules (thesis 5.4.1)
    Ssy,
    PreBrk,
    PreRet,
    Sync,
    /// cudasem: the implicit `sync` at a reconvergence point (immediate post-dominator) of ordinary PTX.
    SyncImplicit,
    BrkUni,
    BrkDiv,
    RetUni,
    RetDiv,
    ExitUni,
    ExitDiv,
    BraUni,
    BraGuard,
    BraTarget,
    CallUni,
    CallGuard,
    CallTarget,
    Next,
    /// `unwind` popped tokens (thesis 5.4.1).
    Unwind,
    // independent thread scheduling (beyond the thesis)
    ItsStep,
    /// A warp-synchronous instruction's lanes met (`*.sync` masks).
    Rendezvous,
    // thread rules (thesis 5.3.2), and PTX beyond the thesis
    Dop,
    Mov,
    Setp,
    Ld,
    St,
    Atom,
    Bra,
    Call,
    Ret,
    ExitThread,
    Break,
    Vote,
    Shfl,
    Match,
    Redux,
    ActiveMask,
    Membar,
    // memory environment rules (thesis 4.6)
    /// (step)/(end): one micro step of an in-flight memory program.
    MemStep,
    /// Silent (evict_L1).
    EvictL1,
    /// Silent (evict_L2).
    EvictL2,
    /// Silent (wb_L1).
    WbL1,
    /// Silent (wb_L2).
    WbL2,
    /// Silent (flush).
    Flush,
    BarSync,
    BarArrive,
    BarRed,
    WarpSync,
    Trap,
    Nop,
    Cvta,
}

impl Rule {
    pub fn name(self) -> &'static str {
        use Rule::*;
        match self {
            Exec => "exec",
            IssueBlocks => "issueBlocks",
            ScheduleWarps => "schedule_Warps",
            EndBar => "endBar",
            BlockCompl => "compl",
            GridCompl => "grid_compl",
            WarpBra => "bra",
            WarpComm => "comm",
            WarpMem => "mem",
            Ssy => "ssy",
            PreBrk => "preBrk",
            PreRet => "preRet",
            Sync => "sync",
            SyncImplicit => "sync_ipdom",
            BrkUni => "brk_uni",
            BrkDiv => "brk_div",
            RetUni => "ret_uni",
            RetDiv => "ret_div",
            ExitUni => "exit_uni",
            ExitDiv => "exit_div",
            BraUni => "bra_uni",
            BraGuard => "bra_guard",
            BraTarget => "bra_target",
            CallUni => "call_uni",
            CallGuard => "call_guard",
            CallTarget => "call_target",
            Next => "next",
            Unwind => "unwind",
            ItsStep => "its_step",
            Rendezvous => "rendezvous",
            Dop => "dop",
            Mov => "mov",
            Setp => "setp",
            Ld => "ld",
            St => "st",
            Atom => "atom",
            Bra => "bra",
            Call => "call",
            Ret => "return",
            ExitThread => "exit",
            Break => "break",
            Vote => "vote",
            Shfl => "shfl",
            Match => "match",
            Redux => "redux",
            ActiveMask => "activemask",
            Membar => "membar",
            MemStep => "mem_step",
            EvictL1 => "evict_L1",
            EvictL2 => "evict_L2",
            WbL1 => "wb_L1",
            WbL2 => "wb_L2",
            Flush => "flush",
            BarSync => "bar_sync",
            BarArrive => "bar_arrive",
            BarRed => "bar_red",
            WarpSync => "bar_warp_sync",
            Trap => "trap",
            Nop => "nop",
            Cvta => "cvta",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The rules applied, from the device down to the thread. Inline up to 8 rules (derivations are
/// 3 to 6 long), so recording events allocates nothing for them.
#[derive(Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Derivation(pub smallvec::SmallVec<[Rule; 8]>);

impl Clone for Derivation {
    /// A copy of the rules in one block: `SmallVec`'s own `clone` collects element by element,
    /// and observed steps clone a warp instruction's derivation into every lane's memory event.
    fn clone(&self) -> Self {
        Derivation(smallvec::SmallVec::from_slice(&self.0))
    }
}

impl Derivation {
    /// The derivation made of these rules.
    pub fn of(rules: &[Rule]) -> Self {
        Derivation(smallvec::SmallVec::from_slice(rules))
    }
    /// `prefix` (the outer layers' rules) followed by `rules`.
    pub fn with_prefix(prefix: &[Rule], rules: &[Rule]) -> Self {
        let mut v = smallvec::SmallVec::with_capacity(prefix.len() + rules.len());
        v.extend_from_slice(prefix);
        v.extend_from_slice(rules);
        Derivation(v)
    }
}

impl fmt::Display for Derivation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ▸ ")?;
            }
            f.write_str(r.name())?;
        }
        Ok(())
    }
}

/// A state space as events name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MemSpace {
    Global,
    Shared,
    Local,
    Const,
    Param,
}

/// The kind of a memory access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AccessKind {
    Load,
    Store,
    /// Read-modify-write: `value` is the old value, `new` the written one.
    Atomic {
        new: u64,
    },
}

fn is_zero(m: &LaneMask) -> bool {
    *m == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What one step did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// A block was made resident on an SM.
    BlockIssued {
        grid: u32,
        block: BlockId,
        sm: u32,
        derivation: Derivation,
    },
    /// A warp (or a group of its lanes) executed the instruction at `pc`. `lanes` are the lanes
    /// that executed it (active and guard true); `active`, `disabled` and `stack` are the warp's
    /// state AFTER the step (SIMT stack model; under ITS/threads `active` is the group, the
    /// stack empty), `next_pc` the warp pc after it.
    Executed {
        block: BlockId,
        warp: WarpId,
        pc: u32,
        lanes: LaneMask,
        active: LaneMask,
        disabled: DisableMask,
        stack: Vec<Token>,
        next_pc: u32,
        derivation: Derivation,
        /// The lanes of `lanes` whose result PTX leaves unspecified: an integer `div` or `rem`
        /// by zero (PTX ISA 9.7.1.8-9). The monitors report them as they report reads of
        /// uninitialised memory. Left out of traces when empty.
        #[serde(default, skip_serializing_if = "is_zero")]
        unspecified: LaneMask,
    },
    /// A memory access by one lane.
    Memory {
        block: BlockId,
        warp: WarpId,
        lane: u32,
        kind: AccessKind,
        space: MemSpace,
        address: u64,
        size: u32,
        value: u64,
        derivation: Derivation,
        /// A store that left memory as it was (it wrote the bytes already there; flat memory
        /// only): a race it takes part in is benign. Left out of traces when false.
        #[serde(default, skip_serializing_if = "is_false")]
        unchanged: bool,
    },
    /// The accesses of one warp instruction, one per lane of `lanes` in ascending lane order
    /// (`addresses[i]` is the `i`-th lane's): what a run of [`Event::Memory`] events says, less
    /// the values. Recorded only where nothing but the race and memory monitors reads the events
    /// (`EventDetail::Monitors` in `semantics`), for scalar `ld`/`st` of whole warps: one event
    /// instead of 32 is much of what makes monitored runs cheap. Renderers never see it.
    WarpMemory {
        block: BlockId,
        warp: WarpId,
        lanes: LaneMask,
        kind: AccessKind,
        space: MemSpace,
        size: u32,
        addresses: Box<[u64]>,
        derivation: Derivation,
        /// The lanes whose store left memory as it was (see [`Event::Memory`]'s `unchanged`).
        #[serde(default, skip_serializing_if = "is_zero")]
        unchanged: LaneMask,
    },
    /// A warp arrived at a barrier (whole-warp counting, thesis 5.5.1 `updArrCnt`).
    BarrierArrived {
        block: BlockId,
        warp: WarpId,
        barrier: u32,
        arrived: u32,
        expected: u32,
        derivation: Derivation,
    },
    /// A barrier completed (thesis `endBar`).
    BarrierCompleted {
        block: BlockId,
        barrier: u32,
        derivation: Derivation,
    },
    /// Every lane of the warp has exited.
    WarpCompleted {
        block: BlockId,
        warp: WarpId,
        derivation: Derivation,
    },
    /// Every warp of the block has completed (block (compl)).
    BlockCompleted {
        block: BlockId,
        derivation: Derivation,
    },
    /// Cached memory: a memory choice ran (a micro step of an in-flight memory program, or a
    /// silent cache action). `operations` are the thesis's operations it executed
    /// (`"readL2; atomOp; writeL2"`); `delivered` is `(block, warp, lane, value)` when it wrote a
    /// loaded value (an atomic's old value) to a register. Under cached memory, `Memory` events
    /// are emitted when an access is issued, with value 0 for loads and atomics: the value
    /// arrives later, here.
    MemoryStep {
        choice: MemChoice,
        operations: String,
        delivered: Option<(BlockId, WarpId, u32, u64)>,
        derivation: Derivation,
    },
}

impl Event {
    pub fn derivation(&self) -> &Derivation {
        match self {
            Event::BlockIssued { derivation, .. }
            | Event::Executed { derivation, .. }
            | Event::Memory { derivation, .. }
            | Event::WarpMemory { derivation, .. }
            | Event::BarrierArrived { derivation, .. }
            | Event::BarrierCompleted { derivation, .. }
            | Event::WarpCompleted { derivation, .. }
            | Event::BlockCompleted { derivation, .. }
            | Event::MemoryStep { derivation, .. } => derivation,
        }
    }
}

/// The current trace format version.
pub const TRACE_VERSION: u32 = 1;

/// A replayable run: the choices made, with what identifies the run. `L` and `C` are the launch
/// and machine configuration types of the crate that records the trace (traces knows neither).
/// The optional fields are left out of the serialized form when empty, and default when absent,
/// so traces written before they existed still read. Formats: [`format`](mod@format) (RON, JSON Lines, and
/// the compact string of [`format::CompactTrace`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace<L, C> {
    pub version: u32,
    pub program_hash: u64,
    pub launch: L,
    pub config: C,
    /// The scheduler's seed, if it had one.
    pub seed: Option<u64>,
    #[serde(default)]
    pub choices: Vec<Choice>,
    /// The policy that made the choices (`random:7`, `pct:3:2`, `explore`), for the reader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// The PTX file the trace was recorded from, as it was named (replay may be given another).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_path: Option<String>,
    /// A lasso: `choices[cycle_start..]` is a cycle that returns to the state reached after
    /// `choices[..cycle_start]` (replay checks that the state fingerprints agree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle_start: Option<usize>,
    /// The events of each choice (`events[i]` were caused by `choices[i]`), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<Vec<Event>>>,
}

impl<L, C> Trace<L, C> {
    pub fn new(program_hash: u64, launch: L, config: C, seed: Option<u64>) -> Self {
        Trace {
            version: TRACE_VERSION,
            program_hash,
            launch,
            config,
            seed,
            choices: Vec::new(),
            policy: None,
            program_path: None,
            cycle_start: None,
            events: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivation_displays_with_separators() {
        let d = Derivation::of(&[
            Rule::Exec,
            Rule::ScheduleWarps,
            Rule::WarpBra,
            Rule::BraGuard,
            Rule::Bra,
        ]);
        assert_eq!(
            d.to_string(),
            "exec ▸ schedule_Warps ▸ bra ▸ bra_guard ▸ bra"
        );
    }

    #[test]
    fn choices_round_trip_through_json() {
        let c = vec![
            Choice::Warp { block: 1, warp: 2 },
            Choice::Target {
                block: 0,
                warp: 0,
                k: 1,
            },
        ];
        let c = [
            c,
            vec![Choice::Pick {
                block: 3,
                warp: 1,
                lane: 31,
                k: 2,
            }],
        ]
        .concat();
        let s = serde_json::to_string(&c).unwrap();
        assert!(
            s.contains(r#"{"Pick":{"block":3,"warp":1,"lane":31,"k":2}}"#),
            "{s}"
        );
        let back: Vec<Choice> = serde_json::from_str(&s).unwrap();
        assert_eq!(c, back);
    }
}
