//! Warp layer (thesis 5.4): lanes, their execution state under the configured warp model.
//!
//! A [`Warp`] holds what every model keeps (its lanes, exited lanes, call levels, registers,
//! picked results) and a [`ModelState`], one variant per model with only that model's fields:
//! * [`simt_stack`]: the thesis's branching algorithm (5.4.1), [`SimtState`]: pc, active mask
//!   α, disable mask δ, token stack; with reconvergence at immediate post-dominators for
//!   ordinary PTX.
//! * [`its`]: independent thread scheduling and the threads model, [`ItsState`]: per-lane pcs,
//!   barrier waits and break targets; converged groups.
//!
//! The device layer asks the warp, not the configuration, what its model needs: [`step`], the
//! lane's pc ([`Warp::pc_of`]), its barrier waits and release, its weight at a barrier when it
//! exits, where it waits in a deadlock ([`Warp::waits`]).

pub(crate) mod calls;
pub(crate) mod its;
pub(crate) mod simt_stack;

use super::WarpModel;
use super::block::BlockShared;
use super::exec::{Ctx, Fault};
use super::thread::Level;
use crate::program::{FuncId, Pc, Program};
use simt_stack::Outcome;
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

/// A warp: what every warp model keeps (identity, exited lanes, call levels, registers) and the
/// execution state of its model ([`ModelState`]).
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

    /// How the lanes execute: the SIMT stack's masks and tokens, or ITS's per-lane pcs.
    pub model: ModelState,

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

    // --- calls to functions without a body (deviation D28) ---
    /// Lanes that have taken their `Pick` at the [`crate::program::Op::Extern`] they are about
    /// to execute (cleared when they execute it).
    pub picked: u64,
    /// The value each lane of `picked` took; allocated at the warp's first pick.
    pub picks: Option<Arc<[u64]>>,

    // --- safety monitor (thesis 6.4, digest §13) ---
    /// Shadow per-lane pcs (`Thread_pc`), `None` after exit; empty when not checking (and
    /// under ITS and the threads model, whose steps the monitor does not check).
    pub shadow: Vec<Option<Pc>>,
}

/// The execution state of a warp under its warp model (`--warp-model`), one variant per model.
///
/// An enum rather than a `WarpModel` trait with an associated state type: the model is chosen
/// at run time (a launch option), so a trait would need `dyn` dispatch or a machine generic
/// over the model in every crate above; the enum keeps one `Machine` type and costs one
/// predictable branch where a rule asks which model it is in. Each variant holds only its
/// model's fields, so a state hashes, compares and clones exactly what its model moves.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ModelState {
    /// The thesis's branching algorithm (5.4.1).
    Simt(SimtState),
    /// Independent thread scheduling, and the threads model (every lane its own group).
    Its(ItsState),
}

/// The SIMT stack's execution state ς of thesis 5.4.1: pc, α, δ, the token stack, plus what
/// cudasem's choices need (barrier waits, target groups).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SimtState {
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
}

/// The state of a warp under ITS and the threads model: every lane its own pc, barrier waits
/// and break targets (shared copy-on-write, see [`Warp`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ItsState {
    /// Per-lane pc.
    pub lane_pc: Arc<[Pc]>,
    /// Per-lane barriers waited for.
    pub lane_wait: Arc<[u16]>,
    /// Per-lane break targets of the thesis dialect's `preBrk` (ITS: `brk` jumps to the last).
    pub lane_breaks: Arc<[Vec<Pc>]>,
    /// The threads model: every lane is a group of its own except at warp-synchronous
    /// instructions (see [`its::groups`]).
    pub threads: bool,
}

impl ItsState {
    /// Lane `l` moves to `pc`.
    #[inline]
    pub fn set_pc(&mut self, l: usize, pc: Pc) {
        Arc::make_mut(&mut self.lane_pc)[l] = pc;
    }
}

/// Where a group of a warp's lanes waits, for deadlock reports.
pub(crate) struct Wait {
    pub lanes: u64,
    /// The instruction they wait at (a barrier they have moved past is reported itself).
    pub pc: Pc,
    /// The barriers they wait for (bit per index); 0 when they wait for no barrier.
    pub barriers: u16,
    /// What they wait for when it is no barrier.
    pub otherwise: &'static str,
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
        model: WarpModel,
        checking: bool,
    ) -> Warp {
        let ws = warp_size as usize;
        let all = lane_mask(warp_size);
        let real = lane_mask(lanes);
        let simt = !model.per_thread();
        let model = if simt {
            ModelState::Simt(SimtState {
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
            })
        } else {
            ModelState::Its(ItsState {
                lane_pc: vec![start; ws].into(),
                lane_wait: vec![0; ws].into(),
                lane_breaks: vec![Vec::new(); ws].into(),
                threads: model == WarpModel::Threads,
            })
        };
        Warp {
            index,
            tid_base,
            real,
            completed: false,
            model,
            depth: vec![0; ws].into(),
            exited: all & !real,
            carry: 0,
            levels: smallvec![Level::new(ws, nregs, entry)],
            picked: 0,
            picks: None,
            shadow: if checking && simt {
                (0..ws)
                    .map(|l| (real >> l & 1 == 1).then_some(start))
                    .collect()
            } else {
                Vec::new()
            },
        }
    }

    /// The SIMT-stack state of a warp of that model (the SIMT rules only ever see such warps:
    /// a machine's warps all follow its configured model).
    #[inline]
    pub fn simt(&self) -> &SimtState {
        match &self.model {
            ModelState::Simt(s) => s,
            ModelState::Its(_) => unreachable!("a SIMT-stack rule on an ITS warp"),
        }
    }

    /// See [`Warp::simt`].
    #[inline]
    pub fn simt_mut(&mut self) -> &mut SimtState {
        match &mut self.model {
            ModelState::Simt(s) => s,
            ModelState::Its(_) => unreachable!("a SIMT-stack rule on an ITS warp"),
        }
    }

    /// The ITS state of a warp of that model (see [`Warp::simt`]).
    #[inline]
    pub fn its(&self) -> &ItsState {
        match &self.model {
            ModelState::Its(s) => s,
            ModelState::Simt(_) => unreachable!("an ITS rule on a SIMT-stack warp"),
        }
    }

    /// See [`Warp::its`].
    #[inline]
    pub fn its_mut(&mut self) -> &mut ItsState {
        match &mut self.model {
            ModelState::Its(s) => s,
            ModelState::Simt(_) => unreachable!("an ITS rule on a SIMT-stack warp"),
        }
    }

    /// The call depth of the active lanes (they share it under the SIMT stack).
    #[inline]
    pub fn active_level(&self) -> usize {
        let active = self.simt().active;
        if active == 0 {
            0
        } else {
            self.depth[active.trailing_zeros() as usize] as usize
        }
    }

    /// The pc lane `lane` executes next: the warp's pc under the SIMT stack (whose lanes all
    /// wait at it or at a token), the lane's own under ITS; `None` for a lane the warp has not.
    #[inline]
    pub fn pc_of(&self, lane: usize) -> Option<Pc> {
        match &self.model {
            ModelState::Simt(s) => Some(s.pc),
            ModelState::Its(s) => s.lane_pc.get(lane).copied(),
        }
    }

    /// The barriers the warp (SIMT stack) or some lane of it (ITS) waits for, bit per index.
    pub fn waiting(&self) -> u16 {
        match &self.model {
            ModelState::Simt(s) => s.waiting,
            ModelState::Its(s) => s.lane_wait.iter().fold(0, |m, w| m | w),
        }
    }

    /// The target groups of the SIMT stack's pending indirect branch or call (0 when its
    /// choice is an ordinary `Warp` step, and always under ITS, whose lanes branch on their own).
    #[inline]
    pub fn targets(&self) -> u32 {
        match &self.model {
            ModelState::Simt(s) => s.targets,
            ModelState::Its(_) => 0,
        }
    }

    /// `endBar` for this warp: its waits for barrier `bit` end. Returns whether it waited.
    pub fn release(&mut self, bit: u16) -> bool {
        let waited = self.waits_for(bit);
        if waited {
            match &mut self.model {
                ModelState::Simt(s) => s.waiting &= !bit,
                ModelState::Its(s) => Arc::make_mut(&mut s.lane_wait)
                    .iter_mut()
                    .for_each(|m| *m &= !bit),
            }
        }
        waited
    }

    /// Whether [`Warp::release`] would release the warp from barrier `bit`.
    pub fn waits_for(&self, bit: u16) -> bool {
        self.waiting() & bit != 0
    }

    /// The warp's weight at a barrier when it exits under the exited-warps option: the whole
    /// warp under the SIMT stack (which counts warps, thesis 5.5.1), its real lanes under ITS
    /// (which counts threads).
    pub fn exit_weight(&self, warp_size: u32) -> u32 {
        match &self.model {
            ModelState::Simt(_) => warp_size,
            ModelState::Its(_) => self.real.count_ones(),
        }
    }

    /// Whether a step of this warp can leave its choices as they were. Under the SIMT stack a
    /// warp's single `Warp` choice stays while the warp neither waits, completes nor changes
    /// its target count (the caller checks those); under ITS every step moves some lanes' pcs
    /// and so regroups the lanes.
    #[inline]
    pub fn choices_may_stay(&self) -> bool {
        matches!(self.model, ModelState::Simt(_))
    }

    /// Where the warp's live lanes wait, group by group (a deadlock report): the SIMT stack's
    /// active lanes at the warp pc; under ITS each set of lanes at one pc waiting for the same
    /// barriers. A barrier the lanes wait for is reported at the barrier itself (they have
    /// moved past it, thesis (comm): pc+1).
    pub fn waits(&self) -> Vec<Wait> {
        let at = |pc: Pc, barriers: u16| {
            if barriers != 0 {
                pc.saturating_sub(1)
            } else {
                pc
            }
        };
        match &self.model {
            ModelState::Simt(s) => vec![Wait {
                lanes: s.active,
                pc: at(s.pc, s.waiting),
                barriers: s.waiting,
                otherwise: "nothing enabled",
            }],
            ModelState::Its(s) => {
                let live = self.real & !self.exited;
                let mut seen = 0u64;
                let mut out = Vec::new();
                for l in lanes(live) {
                    if seen >> l & 1 == 1 {
                        continue;
                    }
                    let g = lanes(live)
                        .filter(|&k| {
                            s.lane_pc[k] == s.lane_pc[l] && s.lane_wait[k] == s.lane_wait[l]
                        })
                        .fold(0u64, |m, k| m | 1 << k);
                    seen |= g;
                    out.push(Wait {
                        lanes: g,
                        pc: at(s.lane_pc[l], s.lane_wait[l]),
                        barriers: s.lane_wait[l],
                        otherwise: "a warp-synchronous instruction whose other lanes never arrive",
                    });
                }
                out
            }
        }
    }

    /// Stack for events (empty under ITS, which has none).
    pub fn public_stack(&self) -> Vec<Token> {
        match &self.model {
            ModelState::Simt(s) => s.stack.iter().rev().map(SimtToken::public).collect(),
            ModelState::Its(_) => Vec::new(),
        }
    }
}

/// One warp step under the warp's model: the SIMT stack's (`k`: the group a `Target` choice
/// picked) or ITS's for the converged group `group` (a `Lanes` choice).
pub(crate) fn step(
    cx: &mut Ctx,
    bk: &mut BlockShared,
    w: &mut Warp,
    k: Option<u32>,
    group: u64,
    exited_warps_arrive: bool,
) -> Result<Outcome, Fault> {
    match w.model {
        ModelState::Simt(_) => simt_stack::step(cx, bk, w, k, exited_warps_arrive),
        ModelState::Its(_) => its::step(cx, bk, w, group),
    }
}

/// Recomputes the SIMT stack's target count after the warp's state changed (nothing under
/// ITS). Returns whether it changed.
pub(crate) fn refresh_targets(program: &Program, w: &mut Warp) -> bool {
    let ModelState::Simt(s) = &w.model else {
        return false;
    };
    let t = simt_stack::pending_targets(program, w);
    let changed = t != s.targets;
    if changed {
        w.simt_mut().targets = t;
    }
    changed
}

/// Whether a scheduler choice of this kind steps warps of `model`: `Warp`/`Target` the SIMT
/// stack's, `Lanes` ITS's and the threads model's.
pub(crate) fn choice_fits(model: WarpModel, choice: &traces::Choice) -> bool {
    use traces::Choice;
    match choice {
        Choice::Warp { .. } | Choice::Target { .. } => !model.per_thread(),
        Choice::Lanes { .. } => model.per_thread(),
        _ => true,
    }
}

pub(crate) use traces::lane_mask;

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
