//! Warp layer (thesis 5.4): lanes, their execution state under the configured warp model.
//!
//! * [`simt_stack`]: the thesis's branching algorithm (5.4.1): pc, active mask α, disable mask δ,
//!   token stack; with reconvergence at immediate post-dominators for ordinary PTX.
//! * [`its`]: independent thread scheduling and the threads model: per-lane pcs, converged groups.

pub(crate) mod calls;
pub(crate) mod its;
pub(crate) mod simt_stack;

use super::thread::Level;
use crate::program::{FuncId, Pc};
use smallvec::{SmallVec, smallvec};
use std::sync::Arc;
use traces::{DisableMask, Token, TokenKind};

/// A token of the SIMT stack (thesis `ExecToken`) with cudasem's bookkeeping for ordinary PTX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct SimtToken {
    pub kind: TokenKind,
    pub mask: u64,
    pub pc: Pc,
    /// Ordinary PTX (no `ssy`/`sync`): the reconvergence point where the warp performs an
    /// implicit `sync` while this token is on top. `None` for thesis-dialect tokens.
    pub reconv: Option<Pc>,
    /// A diverge token of `bra_target`/`call_target` (its pc is the branch itself: the remaining
    /// lanes re-execute it). Popping it tells an ordinary-PTX `call` not to push a second call token.
    pub retry: bool,
}

impl SimtToken {
    pub fn public(&self) -> Token {
        Token {
            kind: self.kind,
            mask: self.mask,
            pc: self.pc,
        }
    }
}

/// A warp: its lanes' state under every model (only the configured model's fields move).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Warp {
    /// Index in the block (`%warpid`).
    pub index: u32,
    /// Linear thread index of lane 0.
    pub tid_base: u32,
    /// Lanes that are real threads (the others are dummy lanes, thesis 5.4: α inactive, δ exit).
    pub real: u64,
    /// Every lane has exited (thesis `WarpState = completed`).
    pub completed: bool,

    // --- SIMT stack model (thesis 5.4.1) ---
    pub pc: Pc,
    /// α
    pub active: u64,
    /// δ
    pub dis: DisableMask,
    /// Head = last element. Inline up to two tokens (a warp clone per successor state copies
    /// them instead of allocating).
    pub stack: SmallVec<[SimtToken; 2]>,
    /// The last pop was a `retry` diverge token (see [`SimtToken::retry`]).
    pub retry: bool,
    /// Barriers this warp waits for (thesis `BarrierIdx*`), bit per index.
    pub waiting: u16,
    /// Number of target groups of the indirect branch/call at `pc` when > 1 (then the warp's
    /// choices are `Target{k}`), else 0.
    pub targets: u32,

    // --- per lane, every model ---
    // The per-lane arrays that most steps leave alone are shared copy-on-write (`Arc<[T]>`,
    // written through `Arc::make_mut`): explorers clone a warp for every successor state, and
    // a SIMT-stack step changes none of them (ITS changes `lane_pc`), so the clone copies
    // pointers instead of allocating each array.
    /// Call depth (index into `levels`).
    pub depth: Arc<[u16]>,
    /// Lanes that executed `exit` (or are dummies).
    pub exited: u64,
    /// Carry flags (bit per lane, PTX ISA 9.7.2).
    pub carry: u64,
    /// One level per call depth in use; inline for kernels that make no calls.
    pub levels: SmallVec<[Level; 1]>,

    // --- ITS / threads ---
    /// Per-lane pc.
    pub lane_pc: Arc<[Pc]>,
    /// Per-lane barriers waited for.
    pub lane_wait: Arc<[u16]>,
    /// Per-lane break targets of the thesis dialect's `preBrk` (ITS: `brk` jumps to the last).
    pub lane_breaks: Arc<[Vec<Pc>]>,

    // --- calls to functions without a body (deviation D28) ---
    /// Lanes that have taken their `Pick` at the [`crate::program::Op::Extern`] they are about
    /// to execute (cleared when they execute it).
    pub picked: u64,
    /// The value each lane of `picked` took; allocated at the warp's first pick.
    pub picks: Option<Arc<[u64]>>,

    // --- safety monitor (thesis 6.4, digest §13) ---
    /// Shadow per-lane pcs (`Thread_pc`), `None` after exit; empty when not checking.
    pub shadow: Vec<Option<Pc>>,
}

impl Warp {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        index: u32,
        tid_base: u32,
        lanes: u32,
        warp_size: u32,
        entry: FuncId,
        start: Pc,
        nregs: usize,
        checking: bool,
    ) -> Warp {
        let ws = warp_size as usize;
        let all = lane_mask(warp_size);
        let real = lane_mask(lanes);
        Warp {
            index,
            tid_base,
            real,
            completed: false,
            pc: start,
            active: real,
            dis: DisableMask {
                brk: 0,
                ret: 0,
                exit: all & !real,
            },
            stack: SmallVec::new(),
            retry: false,
            waiting: 0,
            targets: 0,
            depth: vec![0; ws].into(),
            exited: all & !real,
            carry: 0,
            levels: smallvec![Level::new(ws, nregs, entry)],
            lane_pc: vec![start; ws].into(),
            lane_wait: vec![0; ws].into(),
            lane_breaks: vec![Vec::new(); ws].into(),
            picked: 0,
            picks: None,
            shadow: if checking {
                (0..ws)
                    .map(|l| (real >> l & 1 == 1).then_some(start))
                    .collect()
            } else {
                Vec::new()
            },
        }
    }

    /// The call depth of the active lanes (they share it under the SIMT stack).
    #[inline]
    pub fn active_level(&self) -> usize {
        if self.active == 0 {
            0
        } else {
            self.depth[self.active.trailing_zeros() as usize] as usize
        }
    }

    /// Stack for events.
    pub fn public_stack(&self) -> Vec<Token> {
        self.stack.iter().rev().map(SimtToken::public).collect()
    }
}

/// Mask of the low `n` lanes.
#[inline]
pub(crate) fn lane_mask(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// Iterates the set bits of a mask (lane numbers, ascending).
#[inline]
pub(crate) fn lanes(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros();
            m &= m - 1;
            Some(l as usize)
        }
    })
}
