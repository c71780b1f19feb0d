//! Monitors over the event stream (ARCHITECTURE.md section 5): data races, barrier divergence,
//! out-of-bounds and uninitialised accesses, checked on the execution the machine takes.
//!
//! A [`Monitors`] is fed the events of every step (`Machine::step_observed`, or
//! `step_observed_with(.., EventDetail::Monitors)`, which leaves out the SIMT stacks and
//! derivations they do not read and records a whole-warp `ld`/`st` as one `Event::WarpMemory`;
//! both give the same findings) and keeps shadow state; [`Monitors::finish`] turns what it found
//! into [`Findings`] whose every entry names the threads, pcs, PTX and source lines, addresses
//! and buffer elements involved.
//!
//! * [`race`]: GPUVerify's data race (digest `seeds_gpuverify.md` §1.1.5 Def 3.1, §1.2.1 Def 2.2,
//!   §2.3): two accesses by different threads, at least one a write, not both atomic, not ordered
//!   by a barrier both passed; across blocks only the PTX memory model's release/acquire patterns
//!   at `.gpu` scope order anything. Shadow memory per 4-byte word with the last writer and two
//!   readers, per byte for words that sub-word accesses touch ([`shadow`]), barrier-interval
//!   clocks per warp, no pairwise comparison of accesses.
//! * [`barrier`]: barrier divergence as seed 001 defines it (§1.1.4): the barrier variables
//!   `β = (barrier pc, loop counters)` of all threads meeting at a barrier must agree; a warp
//!   reaching `bar.sync` with some live lanes elsewhere is divergent (the lock-step barrier
//!   assertion of §1.1.8 at warp granularity); a thread that exits while its block waits at a
//!   barrier met the END barrier (§1.1.3 consequences).
//! * [`memcheck`]: accesses that fall outside every variable and buffer, and reads of bytes that
//!   nothing wrote (shared and local memory always start undefined; launch buffers when the
//!   launch says so).
//!
//! Nothing here allocates per access on the common path: shadow pages are allocated once per
//! page, reports only when a defect is new (deduplicated by the pair of pcs).

mod barrier;
mod loops;
mod memcheck;
mod race;
mod shadow;
mod unspecified;

pub use loops::Loops;
pub use unspecified::{UnspecifiedKind, UnspecifiedResult};

use crate::machine::{GridShape, LaunchConfig, Machine, WarpModel, type_size};
use crate::program::{MemOrder, Op, Pc, Program, Scope, Space};
use serde::Serialize;
use std::sync::Arc;
use traces::{AccessKind, Event, MemSpace};

/// Which threads a warp instruction orders (`--race-model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
pub enum RaceModel {
    /// Every thread separately (seed 001 Def 3.1, seed 002 Def 2.1): lanes of one warp are
    /// ordered only by barriers and `bar.warp.sync`. The portable model (Volta+ independent
    /// thread scheduling gives no more).
    #[default]
    Interleaving,
    /// Seed 002 Def 2.2: "if two threads are in the same warp then a warp synchronization occurs
    /// between the threads on execution of every instruction", predicated by both lanes executing
    /// it (the re-sync rule `ps ∧ pt` of §1.2.3); two lanes of one instruction writing one
    /// address still race (the two-pass intra-warp check).
    WarpSync,
}

impl RaceModel {
    pub fn name(self) -> &'static str {
        match self {
            RaceModel::Interleaving => "interleaving",
            RaceModel::WarpSync => "warp-sync",
        }
    }
}

/// What the monitors check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MonitorConfig {
    pub race_model: RaceModel,
    /// Check data races.
    pub races: bool,
    /// Check barrier divergence.
    pub barriers: bool,
    /// Check out-of-bounds and uninitialised accesses, and results PTX leaves unspecified
    /// (integer division by zero: like a read of uninitialised memory, a value no GPU promises).
    pub memory: bool,
    /// At most this many distinct findings of each class are kept (the rest are counted).
    pub max_reports: usize,
}

impl Default for MonitorConfig {
    fn default() -> Self {
        MonitorConfig {
            race_model: RaceModel::Interleaving,
            races: true,
            barriers: true,
            memory: true,
            max_reports: 100,
        }
    }
}

/// What an access did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum AccessOp {
    Read,
    Write,
    /// An `atom`/`red` read-modify-write.
    Atomic,
}

/// A buffer or variable element an address falls in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The launch buffer's or module variable's name.
    pub name: String,
    /// Element index (`(address - base) / element size`).
    pub index: u64,
    /// Byte offset inside the element (0 for aligned accesses).
    pub byte: u64,
}

/// One side of a finding: who accessed what, where in the program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Access {
    /// The grid (launch) of a program of several launches, in launch order; `None` for a
    /// one-kernel launch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grid: Option<u32>,
    /// Linear block index in its grid and its `%ctaid`.
    pub block: u32,
    pub block_idx: [u32; 3],
    /// Linear thread index in the block and its `%tid`.
    pub thread: u32,
    pub thread_idx: [u32; 3],
    pub warp: u32,
    pub lane: u32,
    pub pc: Pc,
    pub ptx_line: u32,
    /// `(file index, line)` of the `.loc` in force, if the PTX has line info.
    pub source_line: Option<(u32, u32)>,
    pub op: AccessOp,
    /// The access is morally strong (atomic, `.relaxed/.acquire/.release`, `.volatile`), at this
    /// scope.
    pub strong: Option<ScopeName>,
    pub space: MemSpace,
    /// In-space address and size in bytes.
    pub address: u64,
    pub size: u32,
    pub location: Option<Location>,
}

/// Scopes as findings name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ScopeName {
    Cta,
    Gpu,
    Sys,
}

/// Where a race's two threads are relative to each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum RaceScope {
    /// Two lanes of one warp.
    IntraWarp,
    /// Two warps of one block.
    InterWarp,
    /// Two blocks of one grid (global memory only).
    InterBlock,
    /// Two grids of a program: kernels of launches in different streams, which may run
    /// concurrently (thesis 5.7); launches of one stream are ordered and never race.
    InterGrid,
}

/// The conflict (first access, second access).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum RaceKind {
    ReadWrite,
    WriteRead,
    WriteWrite,
}

/// A data race: two accesses, in the order the schedule made them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Race {
    pub kind: RaceKind,
    pub scope: RaceScope,
    pub first: Access,
    pub second: Access,
    /// The step (1-based transition count) of the second access.
    pub step: u64,
    /// Why the pair is not excused, when that is not obvious (e.g. "both atomic, but the first is
    /// `.cta`-scoped and the threads are in different blocks").
    pub note: Option<String>,
    /// How many times this pair of instructions raced in the run.
    pub occurrences: u64,
    /// Benign: the write stored the value memory already held (both writes of a write-write race
    /// store the same value), in every occurrence, so no order changes what memory holds or
    /// what the read sees. Still a race under the PTX memory model; GPUVerify tolerates it.
    pub benign: bool,
}

/// Which of seed 001's barrier conditions failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum DivergenceKind {
    /// Threads of a block met at different barriers (B1; `v_barrier` differs).
    DifferentBarriers,
    /// Same barrier, different iteration counts of an enclosing loop (B2; a loop counter differs).
    LoopIterations,
    /// A warp executed the barrier with some of its live lanes elsewhere (the lock-step barrier
    /// assertion `(⋁ active) ⇒ (⋀ active)` of seed 001 §4.2, per warp).
    DivergentWarp,
    /// A thread exited while others of its block wait at a barrier for all threads (seed 001's
    /// END barrier).
    ExitedBeforeBarrier,
}

/// A thread's position at a barrier (or where it was instead).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BarrierSite {
    pub thread: u32,
    pub thread_idx: [u32; 3],
    pub warp: u32,
    pub lane: u32,
    pub pc: Pc,
    pub ptx_line: u32,
    pub source_line: Option<(u32, u32)>,
    /// What the thread is doing there: "barrier 0", "exited", "inactive (diverged)".
    pub what: String,
    /// Iteration counts of the loops enclosing `pc`, outermost first (seed 001's `v_L`).
    pub loop_counters: Vec<u32>,
}

/// Barrier divergence in one block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Divergence {
    pub kind: DivergenceKind,
    /// The grid of a program of several launches (`None` for one kernel launch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grid: Option<u32>,
    /// Linear block index in its grid.
    pub block: u32,
    pub block_idx: [u32; 3],
    pub barrier: u32,
    pub first: BarrierSite,
    pub second: BarrierSite,
    pub step: u64,
}

/// Memory-safety findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum MemoryErrorKind {
    /// The address lies in no variable or buffer of its space.
    OutOfBounds,
    /// A read of bytes never written (and not initialised by the launch).
    Uninitialised,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryFinding {
    pub kind: MemoryErrorKind,
    pub access: Access,
    pub step: u64,
    pub occurrences: u64,
}

/// Everything the monitors found in one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Findings {
    pub races: Vec<Race>,
    pub divergences: Vec<Divergence>,
    pub memory: Vec<MemoryFinding>,
    /// Results PTX leaves unspecified (integer division by zero), checked with `memory`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unspecified: Vec<UnspecifiedResult>,
    /// Findings beyond `max_reports` (counted, not kept).
    pub dropped: u64,
}

impl Findings {
    pub fn is_clean(&self) -> bool {
        self.races.is_empty()
            && self.divergences.is_empty()
            && self.memory.is_empty()
            && self.unspecified.is_empty()
    }
}

/// What makes a kernel's behaviour depend on the schedule beyond the barrier-interval argument
/// (seed 004 §3.2, digest R3/R5/R6): atomics and other strong accesses (their order changes
/// values), and warp-level communication (votes, shuffles, `activemask`: the lanes' grouping is
/// a schedule choice under `its`/`threads`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ScheduleDependence {
    /// pcs of `atom`/`red` and strong (`.relaxed/.acquire/.release/.volatile`) loads and stores.
    pub atomics: Vec<Pc>,
    /// pcs of `vote`, `shfl`, `match`, `redux`, `activemask`.
    pub warp_level: Vec<Pc>,
    /// pcs of calls to body-less functions whose launch gives a set of results: each thread's
    /// result is a scheduler choice (`Choice::Pick`, deviation D28), so one schedule is one
    /// combination of results. Filled by [`ScheduleDependence::of_launch`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub picks: Vec<Pc>,
}

impl ScheduleDependence {
    pub fn of(program: &Program) -> ScheduleDependence {
        let mut d = ScheduleDependence::default();
        for (pc, ins) in program.instructions.iter().enumerate() {
            let pc = pc as Pc;
            match &ins.op {
                Op::Atom { .. } => d.atomics.push(pc),
                Op::Ld { qual, .. } | Op::St { qual, .. } if qual.order != MemOrder::Weak => {
                    d.atomics.push(pc)
                }
                Op::Vote { .. }
                | Op::Shfl { .. }
                | Op::Match { .. }
                | Op::Redux { .. }
                | Op::ActiveMask { .. }
                | Op::Mma(_)
                | Op::LdMatrix { .. } => d.warp_level.push(pc),
                _ => {}
            }
        }
        d
    }
    /// [`ScheduleDependence::of`], and the calls of `program` whose results `launch` makes a
    /// choice ([`crate::machine::LaunchConfig::extern_values`]).
    pub fn of_launch(
        program: &Program,
        launch: &crate::machine::LaunchConfig,
    ) -> ScheduleDependence {
        let mut d = ScheduleDependence::of(program);
        let slots: Vec<u64> = launch
            .extern_values
            .iter()
            .filter(|(_, values)| values.len() > 1)
            .filter_map(|(name, _)| program.variables.iter().find(|v| &v.name == name))
            .map(|v| v.address)
            .collect();
        for (pc, ins) in program.instructions.iter().enumerate() {
            if let Op::Extern { slot, .. } = &ins.op
                && slots.contains(slot)
            {
                d.picks.push(pc as Pc);
            }
        }
        d
    }

    /// One schedule decides race freedom and divergence for this input (seed 004 §3.2): no
    /// atomics, no warp-level communication, no call whose result is a choice.
    pub fn schedule_independent(&self) -> bool {
        self.atomics.is_empty() && self.warp_level.is_empty() && self.picks.is_empty()
    }
}

// ---------------------------------------------------------------------------------------------
// Per-pc classification, computed once.
// ---------------------------------------------------------------------------------------------

/// Scope ranks: a `.cta` operation orders only threads of one block (PTX ISA 8.x "scope"),
/// `.cluster` is treated as `.cta` (clusters of one block: the conservative reading).
pub(crate) const SCOPE_CTA: u8 = 0;
pub(crate) const SCOPE_GPU: u8 = 1;
pub(crate) const SCOPE_SYS: u8 = 2;

fn scope_rank(s: Option<Scope>, default: u8) -> u8 {
    match s {
        None => default,
        Some(Scope::Cta | Scope::Cluster) => SCOPE_CTA,
        Some(Scope::Gpu) => SCOPE_GPU,
        Some(Scope::Sys) => SCOPE_SYS,
    }
}

pub(crate) fn scope_name(rank: u8) -> ScopeName {
    match rank {
        SCOPE_CTA => ScopeName::Cta,
        SCOPE_GPU => ScopeName::Gpu,
        _ => ScopeName::Sys,
    }
}

/// How the monitors see the instruction at a pc.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PcClass {
    /// Morally strong access (digest §7 item 2, decided in the module doc of `race`).
    pub strong: bool,
    pub scope: u8,
    /// `.acquire`/`.acq_rel`/`.sc` (or an atomic with them): acquires on its own.
    pub acquire: bool,
    /// `.release`/`.acq_rel`/`.sc`: releases on its own.
    pub release: bool,
    /// `ld/st.param` (frames of `.func`s are written by `call`, not by events): no init check.
    pub param: bool,
    /// A fence (`membar`/`fence`) at `scope`.
    pub fence: bool,
    /// `bar.warp.sync`.
    pub warp_sync: bool,
    /// `bar.sync/red` (waits) vs `bar.arrive`; `full`: no thread count (all threads of the block).
    pub barrier_waits: bool,
    pub barrier_full: bool,
    /// `exit`/`ret`.
    pub exits: bool,
}

fn classify(op: &Op) -> PcClass {
    let mut c = PcClass::default();
    let order = |c: &mut PcClass, order: MemOrder, scope: Option<Scope>, atomic: bool| {
        // PTX ISA 8.x: `.volatile` is `.relaxed.sys` for the memory model; strong operations
        // without a scope are `.gpu`... except volatile, which is system scope.
        match order {
            MemOrder::Weak => {
                c.strong = atomic;
                c.scope = scope_rank(scope, SCOPE_GPU);
            }
            MemOrder::Volatile => {
                c.strong = true;
                c.scope = SCOPE_SYS;
            }
            MemOrder::Relaxed => {
                c.strong = true;
                c.scope = scope_rank(scope, SCOPE_GPU);
            }
            MemOrder::Acquire => {
                c.strong = true;
                c.acquire = true;
                c.scope = scope_rank(scope, SCOPE_GPU);
            }
            MemOrder::Release => {
                c.strong = true;
                c.release = true;
                c.scope = scope_rank(scope, SCOPE_GPU);
            }
            MemOrder::AcqRel | MemOrder::Sc => {
                c.strong = true;
                c.acquire = true;
                c.release = true;
                c.scope = scope_rank(scope, SCOPE_GPU);
            }
        }
    };
    match op {
        Op::Ld { qual, space, .. } => {
            order(&mut c, qual.order, qual.scope, false);
            c.param = *space == Space::Param;
        }
        Op::St { qual, space, .. } => {
            order(&mut c, qual.order, qual.scope, false);
            c.param = *space == Space::Param;
        }
        Op::Atom { qual, .. } => order(&mut c, qual.order, qual.scope, true),
        Op::Fence { level, .. } => {
            c.fence = true;
            c.scope = scope_rank(Some(*level), SCOPE_SYS);
        }
        Op::WarpSync { .. } => c.warp_sync = true,
        Op::Barrier { kind, count, .. } => {
            c.barrier_waits = !matches!(kind, crate::program::BarrierKind::Arrive);
            c.barrier_full = count.is_none();
        }
        Op::Exit | Op::Ret => c.exits = true,
        _ => {}
    }
    c
}

// ---------------------------------------------------------------------------------------------
// The monitor set
// ---------------------------------------------------------------------------------------------

/// A grid's shape as the monitors need it (one per grid of a program of several launches).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    pub grid: GridShape,
    pub model: WarpModel,
    /// `log2(ws)` when the warp size is a power of two (always, on real devices): thread to
    /// warp and lane without a division on the race monitor's hot path.
    pub ws_shift: Option<u32>,
    /// Global thread numbers are `block * stride + thread in block`, `block` the global block
    /// number: the largest block of any grid, so that one numbering covers every grid (the
    /// block's `tpb` for a one-kernel launch).
    pub stride: u32,
    /// The global block number of the grid's block 0.
    pub first_block: u32,
    /// The grid's index in the program, `None` for a one-kernel launch (reports then name no
    /// grid).
    pub grid_index: Option<u32>,
    /// The grid's position in [`Monitors::shapes`] (0 for a one-kernel launch).
    pub index: usize,
    /// Bytes of shared memory of each of the grid's blocks: the module's static `.shared`
    /// variables and the grid's own dynamic shared memory.
    pub shared_bytes: u64,
}

impl Shape {
    /// The warp and lane of thread `tid` of a block.
    #[inline]
    pub fn warp_lane(&self, tid: u32) -> (u32, u32) {
        match self.ws_shift {
            Some(s) => (tid >> s, tid & (self.grid.warp_size - 1)),
            None => (tid / self.grid.warp_size, tid % self.grid.warp_size),
        }
    }
    #[inline]
    pub fn global_thread(&self, block: u32, warp: u32, lane: u32) -> u32 {
        block * self.stride + warp * self.grid.warp_size + lane
    }
    /// The linear index in its grid of global block `block`.
    pub fn local_block(&self, block: u32) -> u32 {
        block - self.first_block
    }
    /// The `%ctaid` of global block `block`.
    pub fn block_idx(&self, block: u32) -> [u32; 3] {
        self.grid.ctaid(self.local_block(block))
    }
    /// Lanes that exist in warp `warp` (the last warp of a block may be partial).
    pub fn warp_mask(&self, warp: u32) -> u64 {
        let n = self.grid.lanes_of_warp(warp);
        if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
    }
}

/// The context of the warp instruction a step executed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Instr {
    pub block: u32,
    pub warp: u32,
    pub pc: Pc,
    pub lanes: u64,
    pub exited: u64,
    pub class: PcClass,
}

/// The data race, barrier divergence and memory monitors of one run.
pub struct Monitors {
    config: MonitorConfig,
    program: Arc<Program>,
    /// One shape per grid, in launch order.
    shapes: Vec<Shape>,
    /// Per grid, the global thread ranges `[lo, hi)` of the grids that happen before it: the
    /// earlier launches of its stream (each starts when the previous one has completed, thesis
    /// 5.7), so everything their threads did is ordered before its threads' accesses.
    preds: Vec<Box<[(u32, u32)]>>,
    classes: Vec<PcClass>,
    loops: Loops,
    race: race::RaceState,
    barrier: barrier::BarrierState,
    mem: memcheck::MemState,
    /// Steps observed so far.
    step: u64,
    findings: Findings,
    /// The race-relevant accesses of the step being observed (reused: no allocation per step).
    batch: Vec<RawAccess>,
}

impl Monitors {
    /// Monitors for a machine just created from `launch` (before its first step). For a program
    /// of several launches, `launch` is its first (its buffers are the program's); each grid's
    /// shape comes from the machine.
    pub fn new(machine: &Machine, launch: &LaunchConfig, config: MonitorConfig) -> Monitors {
        let program = Arc::new(machine.program().clone());
        let mc = machine.config();
        let grids = machine.grids();
        let several = grids.len() > 1;
        let stride = grids
            .iter()
            .map(|g| g.shape.threads_per_block)
            .max()
            .unwrap_or(1);
        // Each grid has its own dynamic shared memory; a one-kernel launch's is the launch's.
        let dynamic_shared = machine.dynamic_shared_bytes_per_grid();
        let shapes: Vec<Shape> = grids
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let ws = g.shape.warp_size;
                let dynamic = if several {
                    dynamic_shared[i]
                } else {
                    dynamic_shared[i].max(launch.dynamic_shared_bytes)
                };
                Shape {
                    grid: g.shape,
                    model: mc.warp_model,
                    ws_shift: ws.is_power_of_two().then(|| ws.trailing_zeros()),
                    stride,
                    first_block: g.base,
                    grid_index: several.then_some(i as u32),
                    index: i,
                    shared_bytes: program.shared_size + dynamic as u64,
                }
            })
            .collect();
        let preds = grids
            .iter()
            .enumerate()
            .map(|(i, g)| {
                grids[..i]
                    .iter()
                    .filter(|p| p.stream == g.stream)
                    .map(|p| (p.base * stride, (p.base + p.shape.blocks) * stride))
                    .collect()
            })
            .collect();
        let classes = program
            .instructions
            .iter()
            .map(|i| classify(&i.op))
            .collect();
        let loops = Loops::of(&program);
        let mem = memcheck::MemState::new(machine, launch, &program, &shapes);
        Monitors {
            config,
            shapes,
            preds,
            classes,
            race: race::RaceState::new(config.race_model),
            barrier: barrier::BarrierState::new(),
            mem,
            loops,
            program,
            step: 0,
            findings: Findings::default(),
            batch: Vec::new(),
        }
    }

    /// The shape of the grid global block `block` belongs to.
    #[inline]
    pub(crate) fn shape(&self, block: u32) -> Shape {
        if self.shapes.len() == 1 {
            return self.shapes[0];
        }
        let i = self
            .shapes
            .partition_point(|s| s.first_block <= block)
            .saturating_sub(1);
        self.shapes[i]
    }

    /// Launch buffer `index` starts undefined: reads before writes are reported.
    pub fn mark_buffer_uninitialised(&mut self, index: usize) {
        self.mem.mark_uninitialised(index);
    }

    pub fn config(&self) -> &MonitorConfig {
        &self.config
    }

    /// Feeds the events of one step (in the order the machine recorded them).
    pub fn observe(&mut self, events: &[Event]) {
        self.step += 1;
        // A warp step records its memory accesses and barrier arrivals first and `Executed`
        // last: find the instruction first, the accesses need its pc.
        let instr = events.iter().rev().find_map(|e| match e {
            Event::Executed {
                block,
                warp,
                pc,
                lanes,
                disabled,
                ..
            } => Some(Instr {
                block: *block,
                warp: *warp,
                pc: *pc,
                lanes: *lanes,
                exited: disabled.exit,
                class: self.classes.get(*pc as usize).copied().unwrap_or_default(),
            }),
            _ => None,
        });
        let mut arrival = 0u32;
        let mut batch = std::mem::take(&mut self.batch);
        batch.clear();
        for e in events {
            // The race monitor takes a step's accesses together; anything else that happens in
            // the step comes after them.
            if !batch.is_empty() && !matches!(e, Event::Memory { .. }) {
                self.race_accesses(&batch);
                batch.clear();
            }
            match e {
                Event::BlockIssued { block, .. } => {
                    let shape = self.shape(*block);
                    let preds = race::stream_preds(&self.shapes, &self.preds, *block);
                    self.race.issue(*block, &shape, preds);
                    self.barrier.issue(*block, &shape, self.loops.count());
                    self.mem.issue(*block, &shape);
                }
                Event::Memory {
                    block,
                    warp,
                    lane,
                    kind,
                    space,
                    address,
                    size,
                    unchanged,
                    ..
                } => {
                    let Some(ins) = instr else { continue };
                    let a = RawAccess {
                        lane: *lane,
                        address: *address,
                        unchanged: (*unchanged as u64) << lane,
                        ..ins.access(*block, *warp, kind, *space, *size)
                    };
                    self.lane_access(a, &mut batch);
                }
                Event::WarpMemory {
                    block,
                    warp,
                    lanes,
                    kind,
                    space,
                    size,
                    addresses,
                    unchanged,
                    ..
                } => {
                    let Some(ins) = instr else { continue };
                    let a = RawAccess {
                        unchanged: *unchanged,
                        ..ins.access(*block, *warp, kind, *space, *size)
                    };
                    if self.config.memory {
                        self.memory_warp(a, warp_lanes(*lanes, addresses));
                    }
                    if self.config.races && matches!(space, MemSpace::Global | MemSpace::Shared) {
                        self.warp_accesses(&a, warp_lanes(*lanes, addresses));
                        self.report_pending_races();
                    }
                }
                Event::BarrierArrived {
                    block,
                    warp,
                    barrier,
                    ..
                } => {
                    let Some(ins) = instr else { continue };
                    // Under `its`/`threads` one event per arriving lane, in ascending lane order.
                    let shape = self.shape(*block);
                    let lanes = if !shape.model.per_thread() {
                        ins.lanes
                    } else {
                        let mut m = ins.lanes;
                        for _ in 0..arrival {
                            m &= m.wrapping_sub(1);
                        }
                        arrival += 1;
                        if m == 0 {
                            0
                        } else {
                            1u64 << m.trailing_zeros()
                        }
                    };
                    if self.config.races {
                        self.race
                            .arrive(*block, *warp, *barrier, lanes, &ins, &shape);
                    }
                    if self.config.barriers {
                        self.barrier_arrive(*block, *warp, *barrier, lanes, &ins, events);
                    }
                }
                Event::Executed {
                    block,
                    warp,
                    pc,
                    unspecified,
                    ..
                } => {
                    let Some(ins) = instr else { continue };
                    self.executed(&ins);
                    self.unspecified(*block, *warp, *pc, *unspecified);
                }
                Event::BarrierCompleted { block, barrier, .. } => {
                    if self.config.races {
                        let shape = self.shape(*block);
                        self.race.complete(*block, *barrier, &shape);
                    }
                    self.barrier.complete(*block, *barrier);
                }
                Event::WarpCompleted { .. } | Event::MemoryStep { .. } => {}
                Event::BlockCompleted { block, .. } => {
                    self.race.retire(*block, &self.shape(*block));
                    self.barrier.retire(*block);
                    self.mem.retire(*block);
                }
            }
        }
        if !batch.is_empty() {
            self.race_accesses(&batch);
        }
        self.batch = batch;
    }

    /// One lane's access: the memory checks now, the race check with the step's other accesses.
    #[inline]
    fn lane_access(&mut self, a: RawAccess, batch: &mut Vec<RawAccess>) {
        if self.config.memory {
            self.memory_access(&a);
        }
        if self.config.races && matches!(a.space, MemSpace::Global | MemSpace::Shared) {
            batch.push(a);
        }
    }

    fn executed(&mut self, ins: &Instr) {
        if self.config.races {
            let shape = self.shape(ins.block);
            self.race.executed(ins, &shape);
        }
        if self.config.barriers {
            self.barrier_executed(ins);
        }
    }

    /// Steps observed so far.
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// What was found so far.
    pub fn findings(&self) -> &Findings {
        &self.findings
    }

    /// Ends the run: what was found.
    pub fn finish(self) -> Findings {
        self.findings
    }

    // --- shared helpers for the submodules ----------------------------------------------------

    /// The source position of a pc.
    pub(crate) fn lines(&self, pc: Pc) -> (u32, Option<(u32, u32)>) {
        match self.program.source.get(pc as usize) {
            Some(s) => (s.ptx_line, s.loc.map(|(f, l, _)| (f, l))),
            None => (0, None),
        }
    }

    /// A finding's access, from a global thread id and what it did.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn access_info(
        &self,
        g: u32,
        pc: Pc,
        op: AccessOp,
        strong: Option<u8>,
        space: MemSpace,
        address: u64,
        size: u32,
        shared_block: u32,
    ) -> Access {
        let shape = self.shape(g / self.shapes[0].stride);
        let block = g / shape.stride;
        let tid = g % shape.stride;
        let (ptx_line, source_line) = self.lines(pc);
        let _ = shared_block;
        Access {
            grid: shape.grid_index,
            block: shape.local_block(block),
            block_idx: shape.block_idx(block),
            thread: tid,
            thread_idx: shape.grid.tid(tid),
            warp: tid / shape.grid.warp_size,
            lane: tid % shape.grid.warp_size,
            pc,
            ptx_line,
            source_line,
            op,
            strong: strong.map(scope_name),
            space,
            address,
            size,
            location: self.mem.locate(space, address, size),
        }
    }

    fn full(&mut self) -> bool {
        let n = self.findings.races.len()
            + self.findings.divergences.len()
            + self.findings.memory.len()
            + self.findings.unspecified.len();
        if n >= self.config.max_reports {
            self.findings.dropped += 1;
            true
        } else {
            false
        }
    }
}

impl RawAccess {
    /// Made by the same instruction of the same warp as `other`, in the same way (differing at
    /// most in lane and address).
    pub fn same_instruction(&self, other: &RawAccess) -> bool {
        (
            self.block, self.warp, self.op, self.space, self.size, self.pc,
        ) == (
            other.block,
            other.warp,
            other.op,
            other.space,
            other.size,
            other.pc,
        )
    }
}

/// One lane's access, before classification.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawAccess {
    pub block: u32,
    pub warp: u32,
    pub lane: u32,
    pub op: AccessOp,
    pub space: MemSpace,
    pub address: u64,
    pub size: u32,
    pub pc: Pc,
    pub class: PcClass,
    /// Lanes whose store wrote the bytes already there (bit `lane`).
    pub unchanged: u64,
}

impl Instr {
    /// An access this instruction made, lane 0 at address 0 (the caller sets both).
    fn access(
        &self,
        block: u32,
        warp: u32,
        kind: &AccessKind,
        space: MemSpace,
        size: u32,
    ) -> RawAccess {
        RawAccess {
            block,
            warp,
            lane: 0,
            op: match kind {
                AccessKind::Load => AccessOp::Read,
                AccessKind::Store => AccessOp::Write,
                AccessKind::Atomic { .. } => AccessOp::Atomic,
            },
            space,
            address: 0,
            size,
            pc: self.pc,
            class: self.class,
            unchanged: 0,
        }
    }
}

/// The lanes of an `Event::WarpMemory` with their addresses, in ascending lane order. Driven by
/// the address slice (its length is known) rather than `machine::warp::lanes(..).zip(..)`,
/// which costs 2% more instructions on a monitored run.
fn warp_lanes(lanes: u64, addresses: &[u64]) -> impl Iterator<Item = (u32, u64)> + '_ {
    let mut m = lanes;
    addresses.iter().map(move |&address| {
        let lane = m.trailing_zeros();
        m &= m.wrapping_sub(1);
        (lane, address)
    })
}

/// Element size of a scalar type in bytes (for element indices).
pub(crate) fn elem_size(ty: ptx_parser::ScalarType) -> u64 {
    (type_size(ty) as u64).max(1)
}
