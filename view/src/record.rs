//! Recording a run for the page: replay the choices on a fresh machine, fast up to the
//! window, then observed, one [`Step`] per choice with what it changed.
//!
//! Only the machine's public, read-only views are used (`warp_view`, `barrier_views`,
//! `register`, `cache`), so the page shows what the debugger shows, never an inner detail.

use crate::model::*;
use crate::{Sources, ViewError, ViewOptions};
use memory_model::cached::{LineView, OpView, RequestKind};
use semantics::machine::render::{disable_string, mask_string};
use semantics::machine::{LaunchConfig, Machine, WarpModel, WarpView};
use semantics::program::RegId;
use std::collections::{BTreeMap, BTreeSet};
use traces::{Choice, Event, MemChoice, Token, TokenKind};

/// At most this many offered choices are listed per step (the count is always given).
const OFFERED_SHOWN: usize = 12;
/// At most this many lines per cache and in-flight ops are drawn per step.
const CACHE_SHOWN: usize = 64;
/// The overview of the whole run has at most this many buckets.
const OVERVIEW_BUCKETS: u64 = 1000;

/// The warp a choice steps.
fn warp_of(c: &Choice) -> Option<(u32, u32)> {
    match *c {
        Choice::Warp { block, warp }
        | Choice::Target { block, warp, .. }
        | Choice::Lanes { block, warp, .. }
        | Choice::Pick { block, warp, .. } => Some((block, warp)),
        _ => None,
    }
}

/// The block a choice steps.
fn block_of(c: &Choice) -> Option<u32> {
    match *c {
        Choice::Warp { block, .. }
        | Choice::Target { block, .. }
        | Choice::Lanes { block, .. }
        | Choice::Pick { block, .. }
        | Choice::EndBarrier { block, .. }
        | Choice::Issue { block, .. } => Some(block),
        Choice::Mem(_) => None,
    }
}

fn kind_of(c: &Choice) -> &'static str {
    match c {
        Choice::Issue { .. } => "issue",
        Choice::Warp { .. }
        | Choice::Target { .. }
        | Choice::Lanes { .. }
        | Choice::Pick { .. } => "warp",
        Choice::EndBarrier { .. } => "barrier",
        Choice::Mem(_) => "memory",
    }
}

/// The lanes warp `warp` of a block of `threads` threads has: masks are drawn this wide (a block
/// of 2 threads is one warp of 2 lanes, as in the thesis's figures, whatever the warp size).
fn lanes_of(threads: u32, ws: u32, warp: u32) -> u32 {
    threads
        .saturating_sub(warp.saturating_mul(ws))
        .clamp(1, ws.max(1))
}

fn tokens(stack: &[Token], ws: u32) -> Vec<(&'static str, String, u32)> {
    stack
        .iter()
        .map(|t| (t.kind.name(), mask_string(t.mask, ws), t.pc))
        .collect()
}

fn warp_state(v: &WarpView, ws: u32, model: WarpModel) -> WarpState {
    let mut groups: BTreeMap<u32, u64> = BTreeMap::new();
    if model != WarpModel::SimtStack {
        for (lane, pc) in v.lane_pcs.iter().enumerate() {
            if v.exited >> lane & 1 == 0 && (lane as u32) < ws {
                *groups.entry(*pc).or_default() |= 1 << lane;
            }
        }
    }
    WarpState {
        pc: v.pc,
        a: mask_string(v.active, ws),
        d: disable_string(&v.disabled, ws),
        t: tokens(&v.stack, ws),
        g: groups
            .into_iter()
            .map(|(pc, m)| (pc, mask_string(m, ws)))
            .collect(),
        done: v.completed,
        wait: v.waiting != 0,
    }
}

fn hex_bytes(bytes: &[u8], valid: u64) -> String {
    bytes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if valid >> i & 1 == 1 {
                format!("{b:02x}")
            } else {
                "..".to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn bits(mask: u64, n: usize) -> String {
    (0..n)
        .map(|i| if mask >> i & 1 == 1 { '1' } else { '0' })
        .collect()
}

fn space_word(s: traces::MemSpace) -> &'static str {
    match s {
        traces::MemSpace::Global => "global",
        traces::MemSpace::Shared => "shared",
        traces::MemSpace::Local => "local",
        traces::MemSpace::Const => "const",
        traces::MemSpace::Param => "param",
    }
}

/// The caches as the page draws them; an L1 line is stale when one of its valid, clean bytes
/// differs from the byte a load would find below it (the L2's valid byte, else DRAM's).
/// The byte a load that misses L1 finds at global `addr`: the L2's valid byte, else DRAM's.
fn below_byte(m: &Machine, l2: &[LineView], addr: u64) -> u8 {
    if let Some(l) = l2.iter().find(|l| {
        l.space == traces::MemSpace::Global
            && l.addr <= addr
            && addr < l.addr + l.bytes.len() as u64
    }) {
        let j = (addr - l.addr) as usize;
        if l.valid >> j & 1 == 1
            && let Some(b) = l.bytes.get(j)
        {
            return *b;
        }
    }
    let mut b = [0u8; 1];
    m.memory().read_global_line(addr, &mut b);
    b[0]
}

/// Before memory op `op` steps: if it is a global load whose bytes its SM's L1 holds, valid
/// and clean, but different from what L2 (else DRAM) holds, what a `readL1` of it will return
/// and what it misses.
fn stale_read(m: &Machine, op: u32) -> Option<String> {
    let c = m.cache()?;
    let o = c.ops().into_iter().find(|o| o.id == op)?;
    let r = o.request;
    if !matches!(r.kind, RequestKind::Load { .. }) || r.space != traces::MemSpace::Global {
        return None;
    }
    let l2 = c.l2_lines();
    let size = r.size as u64;
    for l in c.l1_lines(r.sm) {
        if l.space != traces::MemSpace::Global
            || r.addr < l.addr
            || r.addr + size > l.addr + l.bytes.len() as u64
        {
            continue;
        }
        let off = (r.addr - l.addr) as usize;
        let range = off..off + size as usize;
        if range
            .clone()
            .any(|i| l.valid >> i & 1 == 0 || l.dirty >> i & 1 == 1)
        {
            continue;
        }
        let held: Vec<u8> = l.bytes[range].to_vec();
        let newer: Vec<u8> = (0..size).map(|i| below_byte(m, &l2, r.addr + i)).collect();
        if held != newer {
            let value = |b: &[u8]| b.iter().rev().fold(0u64, |v, x| v << 8 | *x as u64);
            return Some(format!(
                "STALE read: the L1 of SM {} holds {:#x} at {:#x}, but L2 holds {:#x}; \
                 the load returns the old value",
                r.sm,
                value(&held),
                r.addr,
                value(&newer)
            ));
        }
    }
    None
}

fn cache_state(m: &Machine) -> Option<CacheState> {
    let c = m.cache()?;
    let l2 = c.l2_lines();
    let below = |line: &LineView, i: usize| -> Option<u8> {
        (line.space == traces::MemSpace::Global).then(|| below_byte(m, &l2, line.addr + i as u64))
    };
    let line_state = |l: &LineView, check: bool| LineState {
        at: format!("{} {:#x}", space_word(l.space), l.addr),
        bytes: hex_bytes(&l.bytes, l.valid),
        valid: bits(l.valid, l.bytes.len()),
        dirty: bits(l.dirty, l.bytes.len()),
        stale: check
            && (0..l.bytes.len()).any(|i| {
                l.valid >> i & 1 == 1
                    && l.dirty >> i & 1 == 0
                    && below(l, i).is_some_and(|b| b != l.bytes[i])
            }),
        pinned: !l.pins.is_empty(),
        doomed: l.doomed,
    };
    let sms = m.config().device.num_sms;
    let l1 = (0..sms)
        .filter_map(|sm| {
            let lines = c.l1_lines(sm);
            (!lines.is_empty()).then(|| {
                (
                    sm,
                    lines
                        .iter()
                        .take(CACHE_SHOWN)
                        .map(|l| line_state(l, true))
                        .collect(),
                )
            })
        })
        .collect();
    Some(CacheState {
        l1,
        l2: l2
            .iter()
            .take(CACHE_SHOWN)
            .map(|l| line_state(l, false))
            .collect(),
        ops: c.ops().iter().take(CACHE_SHOWN).map(op_state).collect(),
    })
}

fn op_state(o: &OpView) -> OpState {
    let r = &o.request;
    let verb = match r.kind {
        RequestKind::Load { .. } => "ld",
        RequestKind::Store { .. } => "st",
        RequestKind::Atomic { .. } => "atom",
        RequestKind::Fence => "fence",
    };
    let what = if matches!(r.kind, RequestKind::Fence) {
        format!("block {} thread {} fence", r.who.block, r.who.thread)
    } else {
        format!(
            "block {} thread {} {verb} {} {:#x} ({} bytes)",
            r.who.block,
            r.who.thread,
            space_word(r.space),
            r.addr,
            r.size
        )
    };
    OpState {
        id: o.id,
        what,
        program: o.program.unwrap_or("-").to_string(),
        listing: o.listing.clone(),
        pc: o.pc,
        deps: o.deps.clone(),
    }
}

/// The `(warp, lane, register)`s a choice may write, read before it is taken.
fn watched_registers(
    m: &Machine,
    c: &Choice,
    ws: u32,
    threads: u32,
) -> Vec<(u32, u32, u32, RegId)> {
    let mut out = Vec::new();
    let program = m.program();
    if let Some((block, warp)) = warp_of(c)
        && let Some(v) = m.warp_view(block, warp)
    {
        let pc = match *c {
            Choice::Lanes { mask, .. } if mask != 0 => {
                let lane = mask.trailing_zeros() as usize;
                v.lane_pcs.get(lane).copied().unwrap_or(v.pc)
            }
            _ => v.pc,
        };
        let mut regs = BTreeSet::new();
        if let Some(i) = program.instructions.get(pc as usize) {
            i.for_each_register(&mut |r| {
                regs.insert(r.0);
            });
        }
        for lane in 0..lanes_of(threads, ws, warp) {
            for r in &regs {
                out.push((block, warp, lane, RegId(*r)));
            }
        }
    }
    if let Choice::Mem(MemChoice::Step { op }) = *c
        && let Some(cache) = m.cache()
        && let Some(o) = cache.ops().into_iter().find(|o| o.id == op)
    {
        let dest = match o.request.kind {
            RequestKind::Load { dest, .. } | RequestKind::Atomic { dest, .. } => dest,
            _ => None,
        };
        if let Some(d) = dest {
            out.push((
                o.request.who.block,
                o.request.who.thread / ws,
                o.request.who.thread % ws,
                RegId(d.reg as u16),
            ));
        }
    }
    out
}

fn register_name(m: &Machine, block: u32, warp: u32, reg: RegId) -> String {
    let p = m.program();
    m.warp_view(block, warp)
        .and_then(|v| p.function_of(v.pc))
        .and_then(|f| p.functions.get(f.0 as usize))
        .and_then(|f| f.registers.get(reg.0 as usize))
        .map_or_else(|| format!("r{}", reg.0), |r| r.name.to_string())
}

/// The recorder's running knowledge: warp indices, resident blocks and last recorded states.
struct Recorder {
    ws: u32,
    threads: u32,
    warps_per_block: u32,
    model: WarpModel,
    index: BTreeMap<(u32, u32), usize>,
    warps: Vec<[u32; 2]>,
    resident: BTreeSet<u32>,
    last_warp: BTreeMap<usize, WarpState>,
    last_bars: BTreeMap<u32, Vec<Barrier>>,
    last_cache: Option<CacheState>,
}

impl Recorder {
    fn warp_index(&mut self, block: u32, warp: u32) -> usize {
        let next = self.warps.len();
        *self.index.entry((block, warp)).or_insert_with(|| {
            self.warps.push([block, warp]);
            next
        })
    }

    /// The changed states of `blocks` (and of the caches) since the last call.
    fn changes(&mut self, m: &Machine, blocks: &BTreeSet<u32>) -> Snapshot {
        let mut s = Snapshot::default();
        for &b in blocks {
            for w in 0..self.warps_per_block {
                let i = self.warp_index(b, w);
                let state = match m.warp_view(b, w) {
                    Some(v) => warp_state(&v, lanes_of(self.threads, self.ws, w), self.model),
                    // The block completed and left its SM: the warp's last state, completed.
                    None => match self.last_warp.get(&i) {
                        Some(last) if !last.done => WarpState {
                            done: true,
                            wait: false,
                            ..last.clone()
                        },
                        _ => continue,
                    },
                };
                if self.last_warp.get(&i) != Some(&state) {
                    self.last_warp.insert(i, state.clone());
                    s.w.push((i, state));
                }
            }
            let bars: Vec<Barrier> = m
                .barrier_views(b)
                .unwrap_or_default()
                .into_iter()
                .map(|v| Barrier {
                    id: v.index,
                    ac: v.arrived,
                    tc: v.expected,
                })
                .collect();
            if self.last_bars.get(&b) != Some(&bars) {
                self.last_bars.insert(b, bars.clone());
                s.b.push((b, bars));
            }
        }
        let cache = cache_state(m);
        if cache != self.last_cache {
            self.last_cache.clone_from(&cache);
            s.c = cache;
        }
        s
    }
}

/// An event in words. Under cached memory a load's or atomic's value is not known when the warp
/// issues it (the event records 0, docs/deviations.md, D25): it is left out, and the memory
/// program's step that delivers it says it.
fn event_text(e: &Event, ws: u32, threads: u32, cached: bool, line: &dyn Fn(u32) -> u32) -> String {
    match e {
        Event::BlockIssued { block, sm, .. } => format!("block {block} issued on SM {sm}"),
        Event::Executed {
            block,
            warp,
            pc,
            lanes,
            next_pc,
            ..
        } => format!(
            "warp {block}.{warp} executed line {} with lanes {}; next line {}",
            line(*pc),
            mask_string(*lanes, lanes_of(threads, ws, *warp)),
            line(*next_pc)
        ),
        Event::Memory {
            block,
            warp,
            lane,
            kind,
            space,
            address,
            size,
            value,
            ..
        } => {
            let verb = match kind {
                traces::AccessKind::Load => "load".to_string(),
                traces::AccessKind::Store => "store".to_string(),
                traces::AccessKind::Atomic { new } => format!("atomic (new {new:#x})"),
            };
            let global_or_shared =
                matches!(space, traces::MemSpace::Global | traces::MemSpace::Shared);
            let value = if cached && global_or_shared && !matches!(kind, traces::AccessKind::Store)
            {
                "issued (its memory program delivers the value)".to_string()
            } else {
                format!("value {value:#x}")
            };
            format!(
                "warp {block}.{warp} lane {lane}: {verb} {} {address:#x} ({size} bytes) {value}",
                space_word(*space)
            )
        }
        Event::WarpMemory {
            block, warp, kind, ..
        } => format!("warp {block}.{warp}: memory accesses ({kind:?})"),
        Event::BarrierArrived {
            block,
            warp,
            barrier,
            arrived,
            expected,
            ..
        } => format!(
            "warp {block}.{warp} arrived at barrier {barrier} ({arrived} of {expected} threads)"
        ),
        Event::BarrierCompleted { block, barrier, .. } => {
            format!("barrier {barrier} of block {block} completed")
        }
        Event::WarpCompleted { block, warp, .. } => format!("warp {block}.{warp} completed"),
        Event::BlockCompleted { block, .. } => format!("block {block} completed"),
        Event::MemoryStep {
            choice,
            operations,
            delivered,
            ..
        } => {
            let mut s = format!("{choice}: {operations}");
            if let Some((b, w, l, v)) = delivered {
                s.push_str(&format!("; delivers {v:#x} to warp {b}.{w} lane {l}"));
            }
            s
        }
    }
}

fn diverge_count(stack: &[Token]) -> usize {
    stack
        .iter()
        .filter(|t| t.kind == TokenKind::Diverge)
        .count()
}

/// Replays `choices` on `machine` and records the window the options ask for.
pub fn record(
    mut machine: Machine,
    launch: &LaunchConfig,
    choices: &[Choice],
    sources: &Sources,
    options: &ViewOptions,
) -> Result<crate::model::PageData, ViewError> {
    let ws = machine.config().device.warp_size;
    let model = machine.config().warp_model;
    let threads = launch.block.iter().product::<u32>();
    let blocks = launch.grid.iter().product::<u32>();
    let total = choices.len() as u64;
    let from = options.from.min(total);
    let to = from.saturating_add(options.window).min(total);

    let mut rec = Recorder {
        ws,
        threads,
        warps_per_block: threads.div_ceil(ws.max(1)),
        model,
        index: BTreeMap::new(),
        warps: Vec::new(),
        resident: BTreeSet::new(),
        last_warp: BTreeMap::new(),
        last_bars: BTreeMap::new(),
        last_cache: None,
    };
    // Warp indices in (block, warp) order over the whole run, so the overview can name them.
    let stepping: BTreeSet<(u32, u32)> = choices.iter().filter_map(warp_of).collect();
    for (b, w) in stepping {
        rec.warp_index(b, w);
    }
    let overview = overview(choices, &rec.index);

    // Fast up to the window.
    for (i, c) in choices[..from as usize].iter().enumerate() {
        machine.step(c).map_err(|e| ViewError::Diverged {
            step: i as u64 + 1,
            message: e.to_string(),
        })?;
    }
    for b in 0..blocks {
        if machine.warp_view(b, 0).is_some() {
            rec.resident.insert(b);
        }
    }
    let resident = rec.resident.clone();
    let start = rec.changes(&machine, &resident);

    let program = machine.program().clone();
    let mut window = Window {
        rec,
        rules: BTreeMap::new(),
        cycle: options.cycle_start.filter(|&c| (c as u64) < total),
        enabled_log: Vec::new(),
        cycle_lanes: BTreeMap::new(),
        cached: machine.cache().is_some(),
        program: &program,
        events: Vec::new(),
    };
    let mut steps = Vec::with_capacity((to - from) as usize);
    for i in from..to {
        steps.push(window.step(&mut machine, i, &choices[i as usize])?);
    }

    let notes = notes(from, to, total, options.window, overview.size);
    let lasso = window.cycle.map(|cs| {
        let mut l = lasso_of(choices, cs, &window.enabled_log, &window.rec.index, from);
        if let Some(fairness) = &options.fairness {
            l.why.insert(0, fairness.clone());
        }
        if to == total {
            l.why
                .extend(starved_lanes(&machine, &window.cycle_lanes, threads, ws));
        }
        l
    });
    let source = source_of(&program, sources);
    Ok(PageData {
        meta: Meta {
            kernel: sources.kernel.clone(),
            ptx_path: sources.ptx_path.clone(),
            setup: sources.setup.clone(),
            warp_size: ws,
            cached: machine.cache().is_some(),
            its: model != WarpModel::SimtStack,
            policy: options.policy.clone(),
            total_steps: total,
            from,
            termination: (to == total).then(|| termination(&machine)).flatten(),
            notes,
        },
        source,
        rules: window.rules,
        warps: window.rec.warps,
        start,
        steps,
        overview,
        lasso,
    })
}

/// How the run ended, when the window reaches its end.
fn termination(machine: &Machine) -> Option<String> {
    machine.termination().map(ToString::to_string).or_else(|| {
        machine
            .enabled()
            .is_empty()
            .then(|| "completed".to_string())
    })
}

/// The page's notes: the window shown, when it is not the whole run, and the display limits.
fn notes(from: u64, to: u64, total: u64, window: u64, bucket: u64) -> Vec<String> {
    let mut notes = Vec::new();
    if from > 0 || to < total {
        notes.push(format!(
            "This page shows steps {} to {} of the run's {total} (a window of at most {}; \
             `cudasem view --from N --window M` shows others). The timeline's overview covers \
             the whole run, sampled in buckets of {} steps.",
            from + 1,
            to,
            window,
            bucket
        ));
    }
    notes.push(format!(
        "Offered choices: at most {OFFERED_SHOWN} are listed per step; caches: at most \
         {CACHE_SHOWN} lines each."
    ));
    notes
}

/// What recording the window's steps accumulates: the recorder, the rules the steps named, and
/// what the lasso's explanation needs (the enabled sets and the lanes that execute in the cycle).
struct Window<'p> {
    rec: Recorder,
    rules: BTreeMap<String, RuleInfo>,
    cycle: Option<usize>,
    enabled_log: Vec<Vec<Choice>>,
    /// Lanes that execute in the cycle, per warp.
    cycle_lanes: BTreeMap<(u32, u32), u64>,
    cached: bool,
    program: &'p semantics::Program,
    /// The last step's events (a buffer kept across steps).
    events: Vec<Event>,
}

/// What a step's events are read against: the choice's index, the warp's divergence depth
/// before it, and the warning a stale L1 read gives.
struct StepBefore {
    i: u64,
    stack_before: usize,
    stale: Option<String>,
}

impl Window<'_> {
    /// Takes choice `i`, `c`, and records what it offered, did and changed.
    fn step(&mut self, machine: &mut Machine, i: u64, c: &Choice) -> Result<Step, ViewError> {
        let (ws, threads) = (self.rec.ws, self.rec.threads);
        let in_cycle = self.cycle.is_some_and(|cs| i as usize >= cs);
        let enabled = machine.enabled();
        if in_cycle {
            self.enabled_log.push(enabled.to_vec());
        }
        let offered: Vec<String> = enabled
            .iter()
            .take(OFFERED_SHOWN)
            .map(ToString::to_string)
            .collect();
        let offered_n = enabled.len();
        let watched = watched_registers(machine, c, ws, threads);
        let before: Vec<Option<u64>> = watched
            .iter()
            .map(|&(b, w, l, r)| machine.register(b, w, l, r))
            .collect();
        let at = StepBefore {
            i,
            stale: match c {
                Choice::Mem(MemChoice::Step { op }) => stale_read(machine, *op),
                _ => None,
            },
            stack_before: warp_of(c)
                .and_then(|(b, w)| machine.warp_view(b, w))
                .map_or(0, |v| diverge_count(&v.stack)),
        };
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        machine
            .step_observed(c, &mut events)
            .map_err(|e| ViewError::Diverged {
                step: i + 1,
                message: e.to_string(),
            })?;
        let mut touched: BTreeSet<u32> = block_of(c).into_iter().collect();
        let mut div = false;
        let views = events
            .iter()
            .map(|e| self.event_view(e, &at, &mut div, &mut touched))
            .collect();
        self.events = events;
        let mut regs = Vec::new();
        for (&(b, w, l, r), old) in watched.iter().zip(&before) {
            let new = machine.register(b, w, l, r);
            if new != *old
                && let Some(new) = new
            {
                let wi = self.rec.warp_index(b, w);
                regs.push((
                    wi,
                    l,
                    register_name(machine, b, w, r),
                    old.map_or_else(|| "-".to_string(), |v| format!("{v:#x}")),
                    format!("{new:#x}"),
                ));
            }
        }
        let s = self.rec.changes(machine, &touched);
        Ok(Step {
            c: c.to_string(),
            u: warp_of(c).map(|(b, w)| self.rec.warp_index(b, w)),
            k: kind_of(c),
            o: offered,
            on: offered_n,
            e: views,
            s,
            r: regs,
            div,
        })
    }

    /// One event of the step: its text, the rules it names, the warp's state after an
    /// executed instruction, the address a write touched and a stale read's warning. Blocks
    /// issued and completed update the resident set; `div` is set when the warp diverged.
    fn event_view(
        &mut self,
        e: &Event,
        at: &StepBefore,
        div: &mut bool,
        touched: &mut BTreeSet<u32>,
    ) -> EventView {
        let (ws, threads) = (self.rec.ws, self.rec.threads);
        match e {
            Event::BlockIssued { block, .. } => {
                self.rec.resident.insert(*block);
            }
            Event::BlockCompleted { block, .. } => {
                self.rec.resident.remove(block);
            }
            Event::MemoryStep {
                delivered: Some((b, _, _, _)),
                ..
            } => {
                touched.insert(*b);
            }
            _ => {}
        }
        let rule_names = self.rule_names(e);
        let x = match e {
            Event::Executed {
                block,
                warp,
                pc,
                lanes,
                active,
                disabled,
                stack,
                ..
            } => {
                if diverge_count(stack) > at.stack_before {
                    *div = true;
                }
                if self.cycle.is_some_and(|cs| at.i as usize >= cs) {
                    *self.cycle_lanes.entry((*block, *warp)).or_default() |= *lanes;
                }
                let n = lanes_of(threads, ws, *warp);
                Some(Executed {
                    w: self.rec.warp_index(*block, *warp),
                    pc: *pc,
                    lanes: mask_string(*lanes, n),
                    a: mask_string(*active, n),
                    d: disable_string(disabled, n),
                    t: tokens(stack, n),
                })
            }
            _ => None,
        };
        let wa = match e {
            Event::Memory {
                kind: traces::AccessKind::Store | traces::AccessKind::Atomic { .. },
                space,
                address,
                ..
            } => Some(format!("{} {address:#x}", space_word(*space))),
            _ => None,
        };
        let warn = match e {
            Event::MemoryStep { operations, .. } if operations.contains("readL1") => {
                at.stale.clone()
            }
            _ => None,
        };
        let program = self.program;
        let line = |pc: u32| program.source.get(pc as usize).map_or(0, |s| s.ptx_line);
        EventView {
            text: event_text(e, ws, threads, self.cached, &line),
            rules: rule_names,
            x,
            wa,
            warn,
        }
    }

    /// The qualified names of the rules `e`'s derivation applied, each described once in the
    /// page's rule table.
    fn rule_names(&mut self, e: &Event) -> Vec<String> {
        let mut names = Vec::with_capacity(e.derivation().0.len());
        for r in &e.derivation().0 {
            let d = semantics::rules::doc(*r);
            let key = d.qualified_name();
            names.push(key.clone());
            self.rules.entry(key).or_insert_with(|| RuleInfo {
                layer: d.layer.name(),
                source: d.section.map_or_else(
                    || "beyond the thesis".to_string(),
                    |s| format!("thesis section {s}"),
                ),
                text: d.text,
                deviation: d.deviation,
            });
        }
        names
    }
}

fn overview(choices: &[Choice], index: &BTreeMap<(u32, u32), usize>) -> Overview {
    let n = index.len();
    let total = choices.len() as u64;
    let size = total.div_ceil(OVERVIEW_BUCKETS).max(1);
    let mut buckets: Vec<BTreeMap<usize, u32>> =
        vec![BTreeMap::new(); total.div_ceil(size) as usize];
    for (i, c) in choices.iter().enumerate() {
        let unit = match warp_of(c) {
            Some(w) => index.get(&w).copied().unwrap_or(n),
            None => match c {
                Choice::Issue { .. } => n,
                Choice::EndBarrier { .. } => n + 1,
                _ => n + 2,
            },
        };
        *buckets[i / size as usize].entry(unit).or_default() += 1;
    }
    Overview {
        size,
        buckets: buckets
            .into_iter()
            .map(|b| b.into_iter().collect())
            .collect(),
    }
}

/// The lasso's cycle and the facts that make it fair or not: which warps step in it, which are
/// enabled in every state of it (weak fairness: each of these must step), which in some state
/// (strong fairness: each of these must step).
fn lasso_of(
    choices: &[Choice],
    cycle_start: usize,
    enabled_log: &[Vec<Choice>],
    index: &BTreeMap<(u32, u32), usize>,
    from: u64,
) -> Lasso {
    let cycle = &choices[cycle_start..];
    let stepping: BTreeSet<usize> = cycle
        .iter()
        .filter_map(warp_of)
        .filter_map(|w| index.get(&w).copied())
        .collect();
    let enabled_sets: Vec<BTreeSet<usize>> = enabled_log
        .iter()
        .map(|e| {
            e.iter()
                .filter_map(warp_of)
                .filter_map(|w| index.get(&w).copied())
                .collect()
        })
        .collect();
    let always: BTreeSet<usize> = enabled_sets.iter().skip(1).fold(
        enabled_sets.first().cloned().unwrap_or_default(),
        |acc, s| acc.intersection(s).copied().collect(),
    );
    let sometimes: BTreeSet<usize> = enabled_sets.iter().flatten().copied().collect();
    let name = |i: &usize| {
        index
            .iter()
            .find(|(_, v)| *v == i)
            .map_or_else(String::new, |((b, w), _)| format!("{b}.{w}"))
    };
    let list = |s: &BTreeSet<usize>| {
        if s.is_empty() {
            "none".to_string()
        } else {
            s.iter().map(name).collect::<Vec<_>>().join(", ")
        }
    };
    let mut why = Vec::new();
    let complete = (cycle_start as u64) >= from;
    if !complete {
        why.push(
            "The window starts inside the cycle: the enabled sets below cover only its shown part."
                .to_string(),
        );
    }
    why.push(format!(
        "The cycle is {} choices long and repeats forever; warps stepping in it: {}.",
        cycle.len(),
        list(&stepping)
    ));
    let weak_starved: BTreeSet<usize> = always.difference(&stepping).copied().collect();
    let strong_starved: BTreeSet<usize> = sometimes.difference(&stepping).copied().collect();
    why.push(format!(
        "Warps enabled in every state of the cycle: {}. {}",
        list(&always),
        if weak_starved.is_empty() {
            "Each of them steps in the cycle, so repeating it is weakly fair: \
             no warp that stays enabled is ignored forever."
                .to_string()
        } else {
            format!(
                "Of these, {} never step: repeating the cycle is not weakly fair.",
                list(&weak_starved)
            )
        }
    ));
    why.push(format!(
        "Warps enabled in some state of the cycle: {}. {}",
        list(&sometimes),
        if strong_starved.is_empty() {
            "Each of them steps in it, so the cycle is strongly fair too.".to_string()
        } else {
            format!(
                "{} never step: the cycle is not strongly fair to them.",
                list(&strong_starved)
            )
        }
    ));
    Lasso {
        cycle_start: cycle_start as u64,
        stepping: stepping.into_iter().collect(),
        always_enabled: always.into_iter().collect(),
        sometimes_enabled: sometimes.into_iter().collect(),
        why,
    }
}

/// For each warp that steps in the cycle: its live lanes that never execute in it, and the
/// SIMT stack tokens that hold them (the end of the trace is the state the cycle starts from).
fn starved_lanes(
    m: &Machine,
    cycle_lanes: &BTreeMap<(u32, u32), u64>,
    threads: u32,
    ws: u32,
) -> Vec<String> {
    let mut out = Vec::new();
    for (&(b, w), &ran) in cycle_lanes {
        let Some(v) = m.warp_view(b, w) else { continue };
        let n = lanes_of(threads, ws, w);
        let all = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        let starved = all & !v.exited & !ran;
        if starved == 0 {
            continue;
        }
        let holding: Vec<String> = v
            .stack
            .iter()
            .filter(|t| t.mask & starved != 0)
            .map(|t| {
                format!("({}, {}, L{})", t.kind.name(), mask_string(t.mask, n), {
                    m.program()
                        .source
                        .get(t.pc as usize)
                        .map_or(0, |s| s.ptx_line)
                })
            })
            .collect();
        let model = m.config().warp_model;
        out.push(format!(
            "Warp {b}.{w}: lanes {} never execute in the cycle although they have not exited{}. {}",
            mask_string(starved, n),
            if holding.is_empty() {
                String::new()
            } else {
                format!("; they wait in the SIMT stack's {}", holding.join(" and "))
            },
            if model == WarpModel::SimtStack {
                "Under the SIMT stack (thesis 5.4.1) the warp, not the lane, is what the scheduler \
                 picks: the token is popped only when the running lanes reach its reconvergence \
                 point, which they never do, so a schedule fair to warps still starves these lanes \
                 (thesis chapter 6 discusses this starvation with a spin lock)."
            } else {
                "They are enabled lane groups that the cycle never picks."
            }
        ));
    }
    out
}

/// The PTX listing with per-pc lines, `.cu` lines from the line tables, and listing-line
/// annotations (`// listing line N` at the end of an instruction's line: a transcribed
/// textbook listing names its rows so; in such a file, an instruction without one that a label
/// names is named by the label).
fn source_of(program: &semantics::Program, sources: &Sources) -> Source {
    let ptx: Vec<String> = sources.ptx.lines().map(str::to_string).collect();
    let pc_line: Vec<u32> = program.source.iter().map(|s| s.ptx_line).collect();
    let pc_listing = pc_line
        .iter()
        .map(|&l| {
            let text = ptx.get((l as usize).checked_sub(1)?)?;
            let i = text.find("// listing line ")?;
            let rest = &text[i + "// listing line ".len()..];
            let label = rest.split(':').next()?.trim();
            (!label.is_empty()).then(|| label.to_string())
        })
        .collect::<Vec<_>>();
    // In a transcribed listing, an instruction outside it that a label of the listing names
    // (the caller's `X:` of Listing 5.7) is named by that label.
    let pc_listing = if pc_listing.iter().any(Option::is_some) {
        let mut named = pc_listing;
        for f in &program.functions {
            for (name, pc) in &f.labels {
                if let Some(slot @ None) = named.get_mut(*pc as usize) {
                    *slot = Some(name.to_string());
                }
            }
        }
        named
    } else {
        pc_listing
    };
    let mut file_index: BTreeMap<u32, u32> = BTreeMap::new();
    let mut cu = Vec::new();
    let pc_cu = program
        .source
        .iter()
        .map(|s| {
            let (file, line, _) = s.loc?;
            let path = program.files.get(&file)?;
            let lines = sources.cu.get(path)?;
            let i = *file_index.entry(file).or_insert_with(|| {
                cu.push(CuFile {
                    path: path.clone(),
                    lines: lines.lines().map(str::to_string).collect(),
                });
                cu.len() as u32 - 1
            });
            Some([i, line])
        })
        .collect();
    Source {
        ptx,
        pc_line,
        pc_cu,
        pc_listing,
        cu,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_are_as_wide_as_the_warps_lanes() {
        // A block of 2 threads is one warp of 2 lanes, whatever the warp size (Figure 5.2).
        assert_eq!(lanes_of(2, 32, 0), 2);
        // 40 threads: a full warp, then 8 lanes.
        assert_eq!(lanes_of(40, 32, 0), 32);
        assert_eq!(lanes_of(40, 32, 1), 8);
        assert_eq!(lanes_of(64, 32, 1), 32);
    }

    #[test]
    fn the_overview_counts_every_choice_once() {
        let choices = [
            Choice::Issue {
                grid: 0,
                block: 0,
                sm: 0,
            },
            Choice::Warp { block: 0, warp: 0 },
            Choice::Warp { block: 0, warp: 1 },
            Choice::EndBarrier {
                block: 0,
                barrier: 0,
            },
            Choice::Mem(MemChoice::Flush { sm: 0 }),
        ];
        let index: BTreeMap<(u32, u32), usize> = [((0, 0), 0), ((0, 1), 1)].into();
        let o = overview(&choices, &index);
        assert_eq!(o.size, 1);
        let units: Vec<usize> = o.buckets.iter().map(|b| b[0].0).collect();
        // Warps by index, then issue, barrier, memory.
        assert_eq!(units, [2, 0, 1, 3, 4]);
    }
}
