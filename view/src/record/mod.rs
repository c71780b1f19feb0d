//! Recording a run for the page: replay the choices on a fresh machine, fast up to the
//! window, then observed, one [`Step`] per choice with what it changed.
//!
//! Only the machine's public, read-only views are used (`warp_view`, `barrier_views`,
//! `register`, `cache`), so the page shows what the debugger shows, never an inner detail.

mod caches;
mod grids;
mod recorder;
mod registers;
mod summary;
mod words;

use crate::model::*;
use crate::{Sources, ViewError, ViewOptions};
use caches::*;
use grids::*;
use memory_model::cached::{LineView, OpView, RequestKind};
use recorder::*;
use registers::*;
use semantics::machine::render::{disable_string, mask_string};
use semantics::machine::{Machine, WarpModel, WarpView};
use semantics::program::RegId;
use std::collections::{BTreeMap, BTreeSet};
use summary::*;
use traces::{Choice, Event, MemChoice, Token, TokenKind};
use words::*;

/// At most this many offered choices are listed per step (the count is always given).
pub(super) const OFFERED_SHOWN: usize = 12;
/// At most this many lines per cache and in-flight ops are drawn per step.
pub(super) const CACHE_SHOWN: usize = 64;
/// The overview of the whole run has at most this many buckets.
pub(super) const OVERVIEW_BUCKETS: u64 = 1000;

/// Replays `choices` on `machine` (a program of one launch or several: each grid's shape is
/// read from the machine) and records the window the options ask for.
pub fn record(
    mut machine: Machine,
    choices: &[Choice],
    sources: &Sources,
    options: &ViewOptions,
) -> Result<crate::model::PageData, ViewError> {
    let ws = machine.config().device.warp_size;
    let model = machine.config().warp_model;
    let grids = Grids::of(&machine);
    let blocks = grids.total_blocks();
    let total = choices.len() as u64;
    let from = options.from.min(total);
    let to = from.saturating_add(options.window).min(total);

    let mut rec = Recorder {
        ws,
        grids,
        model,
        index: BTreeMap::new(),
        warps: Vec::new(),
        resident: BTreeSet::new(),
        last_warp: BTreeMap::new(),
        last_bars: BTreeMap::new(),
        last_cache: None,
        last_grids: None,
    };
    // Warp indices in (block, warp) order over the whole run, so the overview can name them.
    let stepping: BTreeSet<(u32, u32)> = choices.iter().filter_map(Choice::warp).collect();
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
        let rec = &window.rec;
        let mut l = lasso_of(
            choices,
            cs,
            &window.enabled_log,
            &rec.index,
            from,
            &rec.grids,
        );
        if let Some(fairness) = &options.fairness {
            l.why.insert(0, fairness.clone());
        }
        if to == total {
            l.why
                .extend(starved_lanes(&machine, &window.cycle_lanes, &rec.grids, ws));
            // A grid whose blocks never become resident in the cycle, and why (thesis 5.7).
            l.why.extend(
                machine
                    .grids_not_resident()
                    .iter()
                    .filter(|_| rec.grids.several())
                    .map(|w| format!("In the cycle, {w}.")),
            );
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
        grids: window.rec.grids.infos(),
        warps: window.rec.warps,
        start,
        steps,
        overview,
        lasso,
    })
}

/// How the run ended, when the window reaches its end.
pub(super) fn termination(machine: &Machine) -> Option<String> {
    machine.termination().map(ToString::to_string).or_else(|| {
        machine
            .enabled()
            .is_empty()
            .then(|| "completed".to_string())
    })
}

/// The page's notes: the window shown, when it is not the whole run, and the display limits.
pub(super) fn notes(from: u64, to: u64, total: u64, window: u64, bucket: u64) -> Vec<String> {
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
pub(super) struct Window<'p> {
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
pub(super) struct StepBefore {
    i: u64,
    stack_before: usize,
    stale: Option<String>,
}

impl Window<'_> {
    /// Takes choice `i`, `c`, and records what it offered, did and changed.
    pub(super) fn step(
        &mut self,
        machine: &mut Machine,
        i: u64,
        c: &Choice,
    ) -> Result<Step, ViewError> {
        let ws = self.rec.ws;
        let in_cycle = self.cycle.is_some_and(|cs| i as usize >= cs);
        let enabled = machine.enabled();
        if in_cycle {
            self.enabled_log.push(enabled.to_vec());
        }
        let offered: Vec<String> = enabled
            .iter()
            .take(OFFERED_SHOWN)
            .map(|c| self.rec.grids.choice(c))
            .collect();
        let offered_n = enabled.len();
        let watched = watched_registers(machine, c, ws, &self.rec.grids);
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
            stack_before: c
                .warp()
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
            c: self.rec.grids.choice(c),
            u: c.warp().map(|(b, w)| self.rec.warp_index(b, w)),
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
    pub(super) fn event_view(
        &mut self,
        e: &Event,
        at: &StepBefore,
        div: &mut bool,
        touched: &mut BTreeSet<u32>,
    ) -> EventView {
        let ws = self.rec.ws;
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
                let n = lanes_of(self.rec.grids.threads(*block), ws, *warp);
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
            } => Some(format!("{} {address:#x}", memory_model::space_name(*space))),
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
            text: event_text(e, ws, &self.rec.grids, self.cached, &line),
            rules: rule_names,
            x,
            wa,
            warn,
        }
    }

    /// The qualified names of the rules `e`'s derivation applied, each described once in the
    /// page's rule table.
    pub(super) fn rule_names(&mut self, e: &Event) -> Vec<String> {
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

#[cfg(test)]
mod tests;
