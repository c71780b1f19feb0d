//! The page's data: what the inline script renders, serialized as one JSON blob.
//!
//! Field names are short because a long window repeats them thousands of times; each one is
//! documented here, and the script (`page.js`) reads nothing else. States are recorded as
//! changes: a warp's state, a block's barriers and the caches appear in a step only when that
//! step changed them, and the script finds the state at step `p` as the last change at or
//! before `p` (the window's start state is complete, in [`PageData::start`]).

use serde::Serialize;
use std::collections::BTreeMap;

/// Everything the page shows.
#[derive(Debug, Clone, Serialize)]
pub struct PageData {
    pub meta: Meta,
    pub source: Source,
    /// The rules the window's derivations name, by `layer/name`: their thesis section and text.
    pub rules: BTreeMap<String, RuleInfo>,
    /// The warps, `[block, warp]`; warp states and steps refer to warps by index here.
    pub warps: Vec<[u32; 2]>,
    /// The state before the window's first step.
    pub start: Snapshot,
    /// The window's steps, in order.
    pub steps: Vec<Step>,
    /// The whole run, sampled: which units stepped in each bucket of steps.
    pub overview: Overview,
    /// For a lasso: stem and cycle, and the fairness of the cycle.
    pub lasso: Option<Lasso>,
    /// A program of several launches: its grids in launch order (thesis 5.7); absent for one
    /// launch. `warps` holds global block numbers, grid `g`'s being `base..base + blocks`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub grids: Vec<GridInfo>,
}

/// One grid of a program of several launches: its launch.
#[derive(Debug, Clone, Serialize)]
pub struct GridInfo {
    pub kernel: String,
    pub stream: u32,
    /// The global block number of its block 0.
    pub base: u32,
    pub blocks: u32,
    /// Grid and block dimensions.
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

/// A grid's phase and progress (thesis 5.7): `waiting` (for its stream predecessor, or for one
/// of the 16 grids a context runs at once), `active`, `completed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GridState {
    pub phase: &'static str,
    /// Blocks issued so far (resident or completed), and completed.
    pub issued: u32,
    pub completed: u32,
    /// Why its next block cannot become resident now, when it cannot.
    pub why: Option<String>,
}

/// What the run was and what the page holds of it.
#[derive(Debug, Clone, Serialize)]
pub struct Meta {
    pub kernel: String,
    pub ptx_path: String,
    /// `simt-stack, flat memory`.
    pub setup: String,
    pub warp_size: u32,
    pub cached: bool,
    pub its: bool,
    /// How the run was scheduled (`random:7`, `explore fair`), when the trace says.
    pub policy: Option<String>,
    /// Choices in the trace.
    pub total_steps: u64,
    /// Absolute index of the window's first step (0: the run's first choice).
    pub from: u64,
    /// `Completed`, `deadlock ...`, or `None` when the trace ends before the run does.
    pub termination: Option<String>,
    /// The page says plainly what it leaves out (window, capped lists).
    pub notes: Vec<String>,
}

/// The kernel's source: PTX lines, and CUDA lines where line tables map instructions.
#[derive(Debug, Clone, Serialize)]
pub struct Source {
    pub ptx: Vec<String>,
    /// Per pc: its 1-based PTX line.
    pub pc_line: Vec<u32>,
    /// Per pc: `[file index in cu, line]` from the `.loc` in force, if any.
    pub pc_cu: Vec<Option<[u32; 2]>>,
    /// Per pc: the listing line the instruction carries (`// listing line N`), if any.
    pub pc_listing: Vec<Option<String>>,
    /// The CUDA sources the line tables name: path and lines (empty when not readable).
    pub cu: Vec<CuFile>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CuFile {
    pub path: String,
    pub lines: Vec<String>,
}

/// A rule of the catalogue, as the page shows it on hover.
#[derive(Debug, Clone, Serialize)]
pub struct RuleInfo {
    /// `warp`, `thread`, ... (the layer of the semantics).
    pub layer: &'static str,
    /// `thesis 5.4.1`, or `beyond the thesis`.
    pub source: String,
    pub text: &'static str,
    pub deviation: Option<&'static str>,
}

/// One warp's SIMT state (thesis 5.4.1: pc, active mask α, disable mask δ, token stack τ).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WarpState {
    pub pc: u32,
    /// α, lane 0 first.
    pub a: String,
    /// δ: `0` enabled, `b` break, `r` return, `x` exit; lane 0 first.
    pub d: String,
    /// τ, top first: `[kind, mask, pc]`.
    pub t: Vec<(&'static str, String, u32)>,
    /// Under `its`/`threads`: the lane groups, `[pc, mask]` by pc.
    pub g: Vec<(u32, String)>,
    /// Every lane has exited.
    pub done: bool,
    /// Waiting at a barrier.
    pub wait: bool,
}

/// A barrier in use (thesis 5.5.1: arrival count ac, thread count tc).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Barrier {
    pub id: u32,
    pub ac: u32,
    pub tc: u32,
}

/// The caches under `--memory cached` (thesis 4.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheState {
    /// Per SM in use: `[sm, lines]`.
    pub l1: Vec<(u32, Vec<LineState>)>,
    pub l2: Vec<LineState>,
    pub ops: Vec<OpState>,
}

/// One cache line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineState {
    /// Space and base address: `global 0x1000`.
    pub at: String,
    /// Bytes as hex, `..` where invalid.
    pub bytes: String,
    pub valid: String,
    pub dirty: String,
    /// Some valid, clean byte differs from the level below (L2, else DRAM): a load served by
    /// this line reads an old value.
    pub stale: bool,
    pub pinned: bool,
    pub doomed: bool,
}

/// An in-flight memory program (thesis 4.6) and its next micro step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpState {
    pub id: u32,
    /// `block 1 thread 0 ld global 0x1000 (4 bytes)`.
    pub what: String,
    pub program: String,
    pub listing: Vec<String>,
    /// Index of the next statement in `listing`.
    pub pc: usize,
    pub deps: Vec<u32>,
}

/// The state of everything the page draws.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Snapshot {
    /// `[warp index, state]`, for warps resident then.
    pub w: Vec<(usize, WarpState)>,
    /// `[block, barriers in use]` for resident blocks.
    pub b: Vec<(u32, Vec<Barrier>)>,
    pub c: Option<CacheState>,
    /// A program of several grids: every grid's state, by grid, when any changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub g: Option<Vec<GridState>>,
}

/// One transition of the window.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The choice taken.
    pub c: String,
    /// The warp it stepped (index into `warps`), if it stepped one.
    pub u: Option<usize>,
    /// `issue`, `warp`, `barrier` or `memory`: the kind of unit that stepped.
    pub k: &'static str,
    /// The choices offered (the first few) and how many there were.
    pub o: Vec<String>,
    pub on: usize,
    /// What the step did.
    pub e: Vec<EventView>,
    /// States this step changed.
    pub s: Snapshot,
    /// Registers it changed: `[warp index, lane, register, old, new]` (hex).
    pub r: Vec<(usize, u32, String, String, String)>,
    /// The step made a warp diverge (a diverge token was pushed).
    pub div: bool,
}

/// One event, with its derivation.
#[derive(Debug, Clone, Serialize)]
pub struct EventView {
    pub text: String,
    /// The rules applied, device down to thread, as `layer/name` keys of [`PageData::rules`].
    pub rules: Vec<String>,
    /// For an executed instruction: the figure row (pc executed, α, δ, τ after the step).
    pub x: Option<Executed>,
    /// For a store or atomic: the address written, `global 0x1000` (the page's "watch").
    pub wa: Option<String>,
    /// Something a reader must not miss (a load served a stale L1 line).
    pub warn: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Executed {
    pub w: usize,
    pub pc: u32,
    pub lanes: String,
    pub a: String,
    pub d: String,
    pub t: Vec<(&'static str, String, u32)>,
}

/// The whole run in buckets of `size` steps: per bucket, steps of each warp (by index) and of
/// the other kinds.
#[derive(Debug, Clone, Serialize)]
pub struct Overview {
    pub size: u64,
    /// Per bucket: `[warp steps by warp index..., issue, barrier, memory]` as sparse pairs.
    pub buckets: Vec<Vec<(usize, u32)>>,
}

/// A lasso: the choices from `cycle_start` on repeat forever.
#[derive(Debug, Clone, Serialize)]
pub struct Lasso {
    pub cycle_start: u64,
    /// Warps that step in the cycle.
    pub stepping: Vec<usize>,
    /// Warps enabled in every state of the cycle.
    pub always_enabled: Vec<usize>,
    /// Warps enabled in some state of the cycle.
    pub sometimes_enabled: Vec<usize>,
    /// The fairness argument, in words.
    pub why: Vec<String>,
}
