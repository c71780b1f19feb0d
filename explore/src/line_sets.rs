//! Persistent sets at the grain of cache lines under cached memory (issue 15, Build 4): sets
//! that separate the warps of one CTA (one SM, one shared L1) whose memory steps touch
//! different lines. [`crate::dependence`] builds the sets of a block and of a warp from places
//! that belong to the block or warp; here a set is the closure of one warp under dependence on
//! the lines its steps touch (Godefroid, "Partial-Order Methods for the Verification of
//! Concurrent Systems", ch. 4, conflict-based persistent sets; Valmari's stubborn sets).
//!
//! **The closure.** Seeded by a warp `p`, a set `W` of warps and a set `T` of enabled choices
//! grow together: a warp in `W` puts every enabled choice of its own (its warp step, its
//! threads' ops' micro steps) into `T`; every line a choice of `T` touches (the memory's
//! footprint, [`memory_model::cached::Footprint`]: a line of an L1, of the L2, of DRAM) pulls
//! in
//! 1. every other enabled memory choice whose footprint names that line (an op's step: its
//!    warp joins `W`; a silent rule of the L2 on it joins `T`);
//! 2. the warp of every in-flight op on that line (all of its remaining micro steps may touch
//!    it);
//! 3. every live warp whose *future* (the accesses it may still issue from its pcs,
//!    [`semantics::machine::Futures`], an unknown address being everything) may touch a byte
//!    of that line.
//!
//! A candidate is dropped when a warp that must join has no enabled choice (it waits at a
//! barrier: its later steps would be outside the set) or an op that is neither enabled nor
//! waiting for an earlier op of its own thread (stalled: a step outside the set could enable
//! it), or when a choice of `T` faults or settles a system choice, accesses shared memory (a
//! weak shared load is read at issue depending on the other warps' shared stores in flight,
//! D30), is a barrier arrival or an exit (the block's barrier state), or touches its SM's L1
//! other than *quietly* (below) when the flush cannot be taken in ("Taking the flush in").
//!
//! **Room.** Allocations are at the grain of lines only while a cache has room for one more
//! line after them (`memory_model::cached::footprint`, "Allocations at the grain of lines").
//! A choice of `T` waits while others run, so the cache must not fill meanwhile: sets are built
//! only when the launch's global segments span at most `capacity - 2` lines of every L1 and of
//! the L2 (an access outside every segment faults before it is issued, and only global and
//! shared accesses go through the caches, so no cache ever holds more lines than that).
//! Then no allocation ever evicts, no footprint ever takes a room place or a whole cache for
//! room, and a step's places are its line's.
//!
//! **The L1 and its flush.** The silent `Flush` of an SM, the flush at the end of an acquire
//! above `.cta` scope, of a fence, and of a barrier's completion invalidate the whole L1 of
//! their SM, and any op of the SM may fill a line into it (which enables the silent flush).
//! A choice of `T` that names an L1 line the L1 does not hold and fills none (a store's
//! `discardL1`, the `invalidateL1` of a store or a strong load, the `isCachedL1` test that
//! fails) changes no L1 and reads only that the line is absent. No step outside the set puts
//! that line into the L1 (a fill of it names the line, and the closure took every warp that
//! may touch the line), a flush or an eviction of other lines leaves it absent, so such a
//! choice commutes with every flush and every step on other lines of the L1: *quiet*.
//!
//! **Taking the flush in.** A choice of `T` that reads or changes a line its L1 holds, fills
//! one, or flushes the whole L1 (the silent `Flush`, an op's end that flushes) depends on
//! every flush of that SM and on every such step of it. It takes the line (as above) and the
//! L1 of its SM `s` into the closure, which pulls in
//! 4. every enabled choice that touches `s`'s L1 other than quietly (a flush, a fill, its room,
//!    a line it holds: `EvictL1` of that line, a weak load that hits): its warp, or the silent
//!    rule itself;
//! 5. the warp of every in-flight op on `s` that may still fill a line (its line may be in an
//!    L1, below), fence, or acquire above `.cta` scope;
//! 6. every live warp (of any SM: more than needed) whose future may access a line an L1 may
//!    hold, or fence (a fence's future is unknown under cached memory, so it is dependent with
//!    everything), or, when the program has an `ld` or `atom` that acquires above `.cta`, may
//!    access global memory at all; and, when the program has barriers, every live warp of a
//!    block with no warp in `W`.
//!
//! A barrier completes in the step of the last of its block's threads to arrive. Barriers
//! that wait for every thread of the block (`bar.sync`, `bar.red` without a thread count) do
//! not complete in a run outside `T` in a block with a warp in `W`: that warp has an enabled
//! choice, so it has not arrived (a warp waiting at a barrier has none, and a barrier arrival
//! of `T` drops the candidate), and its arrival is a step of `T`. A program with `bar.arrive`
//! or a barrier with a thread count does not take the flush in (the step drops the candidate,
//! as before). So a run outside `T` neither flushes `s`'s L1 (no silent flush: one enabled
//! now is in `T` by 4, and one enabled later needs a fill first; no op's end: its op is in
//! flight, 5, or issued later by a warp of 6; no barrier completion) nor fills it nor touches
//! a line it holds (4, 5, 6), and every choice of `T` on that L1 commutes with it.

//! **Lines no L1 can hold.** Only a weak global load fills a line into an L1 (`ld.ca` and its
//! kin, thesis listing 4.2; a strong load reads L2, a store and an atomic discard or invalidate
//! the L1 line). A line no weak load of the program may address (each weak load's address is
//! an absolute `.global` one, `[x+4]`; one through a register or a generic address may be any
//! line) is in no L1 in any run, so every L1 step on it (`discardL1`, `invalidateL1`, the
//! failing `isCachedL1`) is a no-op that commutes with everything: its L1 place pulls nothing
//! into the set, and an outside step that names it only there does not conflict.
//!
//! **Why it is persistent** (Godefroid, def. 4.1). Take a run from the state made of choices
//! outside `T`. Its warps are outside `W` (a warp of `W` gets no new enabled choice from
//! outside: its warp step waits on its own threads' ops and on barriers it is not at, its ops
//! on their own thread; condition checked above), and its silent rules and op steps name no
//! line of `T` (an op that will touch such a line belongs to a warp of `W` by 2 and 3, a silent
//! rule on it that is enabled now is in `T` by 1, and one enabled later would need a step of
//! the run on that line first), and, when the set took an L1 in, touch that L1 only quietly
//! (4 to 6, above). A warp step of the run touches its own warp and issues requests
//! for its own threads (which reads only their ops, O1-O3). So every step of the run is
//! independent of every choice of `T`: the choice stays enabled, its footprint unchanged (no
//! room can run out), and the two commute, up to the names of ops as in [`crate::dependence`].
//! Theorem 4.3 then keeps every terminal state, and the fairness argument of
//! [`crate::dependence`] ("Fairness") carries over unchanged: a run that never takes a choice
//! of `T` touches none of `T`'s lines, so a silent rule of `T` put in front of it changes nothing
//! it reads, and [`crate::dependence::fair_to_operations`] is asked of these sets as of the
//! others.

use super::ample::Judged;
use memory_model::MemSpace;
use memory_model::cached::{Cached, Footprint as MemFootprint, MemChoice, Place, RequestKind};
use semantics::machine::{Footprint, FootprintKind, Futures, Machine};
use semantics::program::{AddrBase, BarrierKind, MemOrder, Op, Scope, Space};
use std::cell::OnceCell;
use traces::Choice;

/// Why a candidate is dropped (no set for it).
struct Dropped;

/// Whether no cache can fill up in any run from `m` (module header, "Room").
fn caches_never_fill(m: &Machine, cache: &Cached) -> bool {
    let config = cache.config();
    let lines = m.memory().global_lines(config.line_bytes as u64);
    lines.saturating_add(2) <= config.l1_lines.min(config.l2_lines) as u64
}

/// The lines an L1 may ever hold (module header, "Lines no L1 can hold").
enum Fillable {
    /// Any line.
    All,
    /// The global lines of the weak loads' absolute addresses, sorted.
    Lines(Vec<u64>),
}

impl Fillable {
    fn of(m: &Machine, line_bytes: u64) -> Fillable {
        let line = line_bytes.max(1);
        let mut lines = Vec::new();
        for instr in &m.program().instructions {
            let Op::Ld {
                space,
                qual,
                vector,
                addr,
                ..
            } = &instr.op
            else {
                continue;
            };
            if qual.order != MemOrder::Weak || !matches!(space, Space::Global | Space::Generic) {
                continue;
            }
            if *space != Space::Global || addr.base != AddrBase::Absolute || addr.offset < 0 {
                return Fillable::All;
            }
            let first = addr.offset as u64;
            // At most 16 bytes an element (`.b128`): more lines than it touches is safe.
            let bytes = 16 * (*vector as u64).max(1);
            let last = first.saturating_add(bytes - 1);
            lines.extend((first / line..=last / line).map(|l| l * line));
        }
        lines.sort_unstable();
        lines.dedup();
        Fillable::Lines(lines)
    }

    fn may_hold(&self, line: u64) -> bool {
        match self {
            Fillable::All => true,
            Fillable::Lines(lines) => lines.binary_search(&line).is_ok(),
        }
    }
}

/// Whether an order acquires, so that an access with it above `.cta` scope flushes its SM's
/// L1 at its end (PTX ISA 8.6, "Memory Consistency Model"; the cached memory's
/// `flushes_l1_at_end`). A scope not written is `.gpu` (`.sys` for `.volatile`).
fn acquires_above_cta(order: MemOrder, scope: Option<Scope>) -> bool {
    matches!(order, MemOrder::Acquire | MemOrder::AcqRel | MemOrder::Sc)
        && scope != Some(Scope::Cta)
}

/// What, besides a fill and a step on a line the L1 holds, may touch a whole L1 in some run
/// (module header, "Taking the flush in"); `None` from [`Flushers::of`]: a barrier that may
/// complete without every warp of its block arriving, so the flush is not taken in.
struct Flushers {
    /// Some `ld` or `atom` acquires above `.cta` scope (its end flushes).
    acquires: bool,
    /// Some barrier (each waits for every thread of its block).
    barriers: bool,
}

impl Flushers {
    fn of(m: &Machine) -> Option<Flushers> {
        let mut flushers = Flushers {
            acquires: false,
            barriers: false,
        };
        for instr in &m.program().instructions {
            match &instr.op {
                Op::Ld { qual, .. } | Op::Atom { qual, .. } => {
                    flushers.acquires |= acquires_above_cta(qual.order, qual.scope);
                }
                Op::Barrier {
                    kind: BarrierKind::Sync | BarrierKind::Red { .. },
                    count: None,
                    ..
                } => flushers.barriers = true,
                // `bar.arrive`, or a barrier of fewer threads than the block.
                Op::Barrier { .. } => return None,
                _ => {}
            }
        }
        Some(flushers)
    }
}

/// What one place of a choice of the set asks of the closure.
enum Named {
    /// The issuing thread's ops.
    Thread(memory_model::Who),
    /// A line and everything that may touch it.
    Line(u64),
    /// A line an L1 holds or fills: the line, and the L1's flush.
    LineAndFlush { sm: u32, line: u64 },
    /// A whole L1 (a flush).
    Flush(u32),
    /// Nothing: an L1 line no L1 can hold.
    Nothing,
    /// A place that ends the candidate.
    Drop,
}

fn named(cache: &Cached, fillable: &Fillable, flush_taken: bool, place: &Place) -> Named {
    match *place {
        Place::Thread(who) => Named::Thread(who),
        Place::L1Line { line, .. } if !fillable.may_hold(line) => Named::Nothing,
        Place::L1Line { sm, line } if !cache.l1_holds(sm, line) => Named::Line(line),
        Place::L1Line { sm, line } | Place::L1Fill { sm, line } if flush_taken => {
            Named::LineAndFlush { sm, line }
        }
        Place::L1 { sm } if flush_taken => Named::Flush(sm),
        Place::L2Line { line } | Place::DramLine { line } => Named::Line(line),
        _ => Named::Drop,
    }
}

/// Whether a footprint touches the whole L1 of SM `sm` other than quietly: a flush, a fill,
/// its room, or a line it holds (module header, "Taking the flush in").
fn touches_l1(cache: &Cached, places: &[Place], sm: u32) -> bool {
    places.iter().any(|p| match *p {
        Place::L1 { sm: s } | Place::L1Fill { sm: s, .. } | Place::L1Room { sm: s } => s == sm,
        Place::L1Line { sm: s, line } => s == sm && cache.l1_holds(sm, line),
        _ => false,
    })
}

/// Whether a footprint names line `line` anywhere (an L1 that may hold it, the L2, DRAM), or
/// a whole L2 or DRAM.
fn names_line(places: &[Place], line: u64, fillable: &Fillable) -> bool {
    places.iter().any(|p| match *p {
        Place::L1Line { line: l, .. } | Place::L1Fill { line: l, .. } => {
            l == line && fillable.may_hold(line)
        }
        Place::L2Line { line: l } | Place::DramLine { line: l } => l == line,
        Place::L2 | Place::Dram => true,
        _ => false,
    })
}

/// The closure of one seed warp (module header).
struct Closure<'a> {
    m: &'a Machine,
    cache: &'a Cached,
    enabled: &'a [Choice],
    judged: &'a [Judged],
    /// The memory's footprint of each enabled memory choice (`None` for a warp's), computed
    /// once per state for every seed's closure.
    places: &'a [Option<MemFootprint>],
    warp_size: u32,
    stalled: &'a [(u32, u32)],
    warp_of: &'a dyn Fn(&Choice) -> Option<(u32, u32)>,
    futures: &'a OnceCell<Futures>,
    fillable: &'a Fillable,
    flushers: Option<&'a Flushers>,
    /// Lines whose step 3 is still to do.
    future_lines: Vec<u64>,
    /// SMs whose flush is taken in, and those whose futures are still to ask.
    flushes: Vec<u32>,
    future_flushes: Vec<u32>,
    warps: Vec<(u32, u32)>,
    set: Vec<usize>,
    lines: Vec<u64>,
}

impl Closure<'_> {
    fn add_warp(&mut self, w: (u32, u32), todo: &mut Vec<usize>) -> Result<(), Dropped> {
        if self.warps.contains(&w) {
            return Ok(());
        }
        if self.stalled.contains(&w) {
            return Err(Dropped);
        }
        self.warps.push(w);
        let before = todo.len();
        for (i, c) in self.enabled.iter().enumerate() {
            if (self.warp_of)(c) == Some(w) && !self.set.contains(&i) {
                self.set.push(i);
                todo.push(i);
            }
        }
        if todo.len() == before {
            // No enabled choice: it waits at a barrier (or every op of it waits on another).
            return Err(Dropped);
        }
        if self.set.len() == self.enabled.len() {
            // Every choice: no set worth building.
            return Err(Dropped);
        }
        Ok(())
    }

    /// Takes every enabled memory choice whose footprint `touches` says yes to, in the
    /// enabled set's order: an op's step by its warp, a silent rule by itself.
    fn take_memory_choices(
        &mut self,
        todo: &mut Vec<usize>,
        touches: impl Fn(&Cached, &[Place]) -> bool,
    ) -> Result<(), Dropped> {
        let taken: Vec<(usize, Option<(u32, u32)>)> = self
            .enabled
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let f = self.places[i].as_ref()?;
                (!self.set.contains(&i) && touches(self.cache, &f.places))
                    .then(|| (i, (self.warp_of)(c)))
            })
            .collect();
        for (i, warp) in taken {
            match warp {
                // A warp already taken (by an earlier choice of this list) returns at once.
                Some(w) => self.add_warp(w, todo)?,
                None if !self.set.contains(&i) => {
                    self.set.push(i);
                    todo.push(i);
                }
                None => {}
            }
        }
        Ok(())
    }

    fn add_line(&mut self, line: u64, todo: &mut Vec<usize>) -> Result<(), Dropped> {
        if self.lines.contains(&line) {
            return Ok(());
        }
        self.lines.push(line);
        // 1. Enabled memory choices on the line.
        let fillable = self.fillable;
        self.take_memory_choices(todo, |_, places| names_line(places, line, fillable))?;
        // 2. In-flight ops on the line.
        let ws = self.warp_size;
        let on_line: Vec<(u32, u32)> = self
            .cache
            .in_flight()
            .filter(|(id, _, _)| self.cache.op_line(*id) == Some(line))
            .map(|(_, r, _)| (r.who.block, r.who.thread / ws))
            .collect();
        for w in on_line {
            self.add_warp(w, todo)?;
        }
        // 3. Warps whose future may touch the line: asked once nothing cheaper is left
        // (`future_touches`), since computing the futures costs more than the rest.
        self.future_lines.push(line);
        Ok(())
    }

    /// Step 3 of the closure for a line already taken (module header).
    fn future_touches(&mut self, line: u64, todo: &mut Vec<usize>) -> Result<(), Dropped> {
        let ws = self.warp_size;
        match self.cache.line_bytes_of(line) {
            Ok(span) => {
                let step = Footprint {
                    // No warp of the launch: independent of barriers and exits of every block.
                    warp: Some((u32::MAX, u32::MAX)),
                    kind: FootprintKind::Memory {
                        global_reads: None,
                        global_writes: Some(span),
                        shared_reads: None,
                        shared_writes: None,
                        fence: false,
                    },
                };
                for q in self.m.live_warps() {
                    if self.warps.contains(&q) {
                        continue;
                    }
                    let futures = self.futures.get_or_init(|| self.m.future_footprints());
                    if !self.m.future_independent(futures, q, &step) {
                        self.add_warp(q, todo)?;
                    }
                }
            }
            Err(owner) => self.add_warp((owner.block, owner.thread / ws), todo)?,
        }
        Ok(())
    }

    /// Takes the flush of SM `sm`'s L1 into the set (module header, "Taking the flush in"):
    /// every enabled choice that touches that L1 other than quietly, and the warp of every
    /// in-flight op that may still fill a line, acquire or fence; the futures later.
    fn add_flush(&mut self, sm: u32, todo: &mut Vec<usize>) -> Result<(), Dropped> {
        if self.flushes.contains(&sm) {
            return Ok(());
        }
        self.flushes.push(sm);
        self.take_memory_choices(todo, |cache, places| touches_l1(cache, places, sm))?;
        let ws = self.warp_size;
        let may_flush: Vec<(u32, u32)> = self
            .cache
            .in_flight()
            .filter(|(id, r, _)| {
                r.sm == sm
                    && (self
                        .cache
                        .op_line(*id)
                        .is_none_or(|line| self.fillable.may_hold(line))
                        || matches!(r.kind, RequestKind::Fence)
                        || acquires_above_cta(r.order, r.scope))
            })
            .map(|(_, r, _)| (r.who.block, r.who.thread / ws))
            .collect();
        for w in may_flush {
            self.add_warp(w, todo)?;
        }
        self.future_flushes.push(sm);
        Ok(())
    }

    /// The futures' part of taking a flush in (module header, "Taking the flush in"): every
    /// live warp that may access a line an L1 may hold, fence (a fence's future is unknown
    /// under cached memory), acquire above `.cta` (when the program does), or complete a
    /// barrier of a block with no warp in the set. Warps of every SM: more than needed.
    fn future_flush(&mut self, flushers: &Flushers, todo: &mut Vec<usize>) -> Result<(), Dropped> {
        let memory = |global_writes| Footprint {
            warp: Some((u32::MAX, u32::MAX)),
            kind: FootprintKind::Memory {
                global_reads: None,
                global_writes,
                shared_reads: None,
                shared_writes: None,
                fence: false,
            },
        };
        let every_byte = Some((0, u64::MAX));
        let fillable_span = match self.fillable {
            Fillable::All => every_byte,
            Fillable::Lines(lines) => match (lines.first(), lines.last()) {
                (Some(&first), Some(&last)) => Some((
                    first,
                    last.saturating_add(self.cache.config().line_bytes as u64),
                )),
                _ => None,
            },
        };
        let (fill, any) = (memory(fillable_span), memory(every_byte));
        for q in self.m.live_warps() {
            if self.warps.contains(&q) {
                continue;
            }
            let futures = self.futures.get_or_init(|| self.m.future_footprints());
            let joins = !self.m.future_independent(futures, q, &fill)
                || (flushers.acquires && !self.m.future_independent(futures, q, &any))
                || (flushers.barriers && !self.warps.iter().any(|w| w.0 == q.0));
            if joins {
                self.add_warp(q, todo)?;
            }
        }
        Ok(())
    }

    /// Closes the set over choice `i` of it.
    fn close_over(&mut self, i: usize, todo: &mut Vec<usize>) -> Result<(), Dropped> {
        let (c, j) = (self.enabled[i], self.judged[i]);
        if !j.clean {
            return Err(Dropped);
        }
        match c {
            Choice::Mem(mc) => {
                if let MemChoice::Step { op } = mc
                    && self
                        .cache
                        .op_request(op)
                        .is_none_or(|r| r.space == MemSpace::Shared)
                {
                    return Err(Dropped);
                }
                let flush_taken = self.flushers.is_some();
                let places = self.places[i].as_ref().map_or(&[][..], |f| &f.places[..]);
                for p in places {
                    match named(self.cache, self.fillable, flush_taken, p) {
                        Named::Thread(who) => {
                            self.add_warp((who.block, who.thread / self.warp_size), todo)?
                        }
                        Named::Line(line) => self.add_line(line, todo)?,
                        Named::LineAndFlush { sm, line } => {
                            self.add_line(line, todo)?;
                            self.add_flush(sm, todo)?;
                        }
                        Named::Flush(sm) => self.add_flush(sm, todo)?,
                        Named::Nothing => {}
                        Named::Drop => return Err(Dropped),
                    }
                }
                Ok(())
            }
            // A warp step: its own state, and requests for its threads; not a shared access,
            // a barrier or an exit (module header).
            _ => match j.footprint.map(|f| f.kind) {
                Some(FootprintKind::Local) => Ok(()),
                Some(FootprintKind::Memory {
                    shared_reads: None,
                    shared_writes: None,
                    ..
                }) => Ok(()),
                _ => Err(Dropped),
            },
        }
    }
}

/// The persistent sets at the grain of lines of state `m` (module header): for each warp with
/// an enabled choice whose closure is not dropped and leaves some choice out, the indices into
/// `enabled` of the closure's choices, sorted. `stalled` lists the warps with an op that is
/// neither enabled nor waiting for its own thread; `warp_of` gives a choice's warp (an op's
/// step: its thread's); `futures` holds the launch's future footprints once computed (they
/// are computed when first needed). The caller has checked
/// [`crate::dependence::may_have_block_sets`].
pub(crate) fn line_persistent_sets<'a>(
    m: &'a Machine,
    cache: &'a Cached,
    enabled: &'a [Choice],
    judged: &'a [Judged],
    stalled: &'a [(u32, u32)],
    warp_of: &'a dyn Fn(&Choice) -> Option<(u32, u32)>,
    futures: &'a OnceCell<Futures>,
) -> Vec<Vec<usize>> {
    if judged.len() != enabled.len() || !caches_never_fill(m, cache) {
        return Vec::new();
    }
    let warp_size = m.config().device.warp_size.max(1);
    let fillable = Fillable::of(m, cache.config().line_bytes as u64);
    let flushers = Flushers::of(m);
    let places: Vec<Option<MemFootprint>> = enabled
        .iter()
        .map(|c| match c {
            Choice::Mem(mc) => Some(cache.footprint(*mc)),
            _ => None,
        })
        .collect();
    let mut seeds: Vec<(u32, u32)> = enabled.iter().filter_map(warp_of).collect();
    seeds.sort_unstable();
    seeds.dedup();
    let mut sets = Vec::new();
    for p in seeds {
        let mut closure = Closure {
            m,
            cache,
            enabled,
            judged,
            places: &places,
            warp_size,
            stalled,
            warp_of,
            futures,
            fillable: &fillable,
            flushers: flushers.as_ref(),
            future_lines: Vec::new(),
            flushes: Vec::new(),
            future_flushes: Vec::new(),
            warps: Vec::new(),
            set: Vec::new(),
            lines: Vec::new(),
        };
        let mut todo = Vec::new();
        let mut closed = closure.add_warp(p, &mut todo);
        while closed.is_ok() {
            if let Some(i) = todo.pop() {
                closed = closure.close_over(i, &mut todo);
            } else if let Some(line) = closure.future_lines.pop() {
                closed = closure.future_touches(line, &mut todo);
            } else if let (Some(_), Some(flushers)) =
                (closure.future_flushes.pop(), closure.flushers)
            {
                // One pass covers every SM (it takes warps of all of them).
                closure.future_flushes.clear();
                closed = closure.future_flush(flushers, &mut todo);
            } else {
                break;
            }
        }
        if closed.is_err() {
            continue;
        }
        let mut set = closure.set;
        set.sort_unstable();
        if set.len() < enabled.len() && !sets.contains(&set) {
            sets.push(set);
        }
    }
    sets
}
