//! Stepping: one step, `step N`, `continue`/`until`, a chosen warp (`warp`, `next`), the
//! choices (`choices`, `choose N`) and going back (`back`), with the text each stop prints.

use super::*;
use crate::DebugError;
use scheduler::{BoundHit, Budget, Ended, Observer, Scheduler};
use semantics::machine::EventDetail;
use std::cell::RefCell;
use std::ops::ControlFlow;

impl Session {
    // ----- stepping -------------------------------------------------------------------------

    /// A function's name as the user wrote it: a C++ kernel's PTX name is mangled (Itanium C++
    /// ABI, `_Z5shiftPii`), shown demangled with its parameter types (`shift(int*, int)`), as
    /// every other cudasem report shows it; a plain name (`extern "C"`, PTX) as it is.
    pub(super) fn readable_name(name: &str) -> String {
        cpp_demangle::Symbol::new(name)
            .ok()
            .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok())
            .unwrap_or_else(|| name.to_string())
    }

    pub(super) fn kernel_name(&self) -> String {
        self.program
            .functions
            .iter()
            .find(|f| {
                f.kind == semantics::program::FunctionKind::Entry
                    && self.launch.launches[0]
                        .kernel
                        .as_deref()
                        .is_none_or(|k| k == f.name)
            })
            .map_or_else(|| "?".to_string(), |f| f.name.clone())
    }

    pub(super) fn warp_size(&self) -> u32 {
        self.config.device.warp_size
    }

    /// Threads in global block `b`: its own grid's block shape (the grids of a program may
    /// have blocks of different sizes); 0 for a block no grid has.
    pub(super) fn threads_in_block(&self, b: u32) -> u32 {
        self.machine.threads_in_block(b)
    }

    /// Warps in global block `b` (its grid's); 0 for a block no grid has.
    pub(super) fn warps_in_block(&self, b: u32) -> u32 {
        self.machine.warps_in_block(b)
    }

    /// Blocks of every grid (blocks are numbered across grids).
    pub(super) fn total_blocks(&self) -> u32 {
        self.launch
            .launches
            .iter()
            .map(|l| l.grid.iter().product::<u32>())
            .sum()
    }

    /// Lanes of warp `w` of block `b` that are threads (the last warp of a block may be
    /// underpopulated).
    pub(super) fn lanes_in_warp(&self, b: u32, w: u32) -> u32 {
        self.lanes_in_warp_in(&self.machine, b, w)
    }

    /// [`Session::lanes_in_warp`] in machine `m` (the one a run is stepping).
    pub(super) fn lanes_in_warp_in(&self, m: &Machine, b: u32, w: u32) -> u32 {
        let ws = self.warp_size();
        m.threads_in_block(b).saturating_sub(w * ws).min(ws)
    }

    /// Takes one choice, recording it (a step the user chose: `warp`, `choose`, `next`'s
    /// first step; runs of steps go through [`Session::run`]).
    pub(super) fn take(&mut self, choice: Choice) -> Result<(), DebugError> {
        let mut events = Vec::new();
        self.machine
            .step_observed(&choice, &mut events)
            .map_err(|e| DebugError::Refused(e.to_string()))?;
        self.history.record(choice, &self.machine);
        self.last_events = events;
        (self.focus, self.resume_from) = self.followed(&self.machine, &choice);
        Ok(())
    }

    /// The focus and the breakpoint to resume from after `choice` was taken in `m`: the focus
    /// follows the warp that stepped (keeping its lane where the warp has it), and a warp that
    /// stopped at a breakpoint has left it once it steps.
    pub(super) fn followed(
        &self,
        m: &Machine,
        choice: &Choice,
    ) -> (Focus, Option<(u32, u32, u32)>) {
        let (mut focus, mut resume_from) = (self.focus, self.resume_from);
        if let Some((b, w)) = view::choice_warp(choice) {
            if focus.block != b || focus.warp != w {
                focus = Focus {
                    block: b,
                    warp: w,
                    lane: focus
                        .lane
                        .min(self.lanes_in_warp_in(m, b, w).saturating_sub(1)),
                };
            }
            if resume_from.is_some_and(|(rb, rw, _)| rb == b && rw == w) {
                resume_from = None;
            }
        }
        (focus, resume_from)
    }

    /// The pc a choice would execute at, if it steps a warp or lanes.
    pub(super) fn choice_pc(&self, c: &Choice) -> Option<(u32, u32, u32, u64)> {
        self.choice_pc_in(&self.machine, c)
    }

    /// [`Session::choice_pc`] in machine `m`.
    pub(super) fn choice_pc_in(&self, m: &Machine, c: &Choice) -> Option<(u32, u32, u32, u64)> {
        let (b, w) = view::choice_warp(c)?;
        let v = m.warp_view(b, w)?;
        match c {
            Choice::Lanes { mask, .. } => {
                let lane = mask.trailing_zeros() as usize;
                Some((b, w, *v.lane_pcs.get(lane)?, *mask))
            }
            _ => Some((b, w, v.pc, v.active)),
        }
    }

    /// The breakpoint `c` would run into in machine `m`, with the lanes that satisfy its
    /// condition.
    pub(super) fn breakpoint_hit(
        &self,
        m: &Machine,
        c: &Choice,
        temp: &[u32],
    ) -> Option<(Option<u32>, u32, u32, u64)> {
        let (b, w, pc, lanes) = self.choice_pc_in(m, c)?;
        if self.resume_from == Some((b, w, pc)) {
            return None;
        }
        if temp.contains(&pc) {
            return Some((None, b, w, lanes));
        }
        for bp in &self.breakpoints {
            if !bp.pcs.contains(&pc) {
                continue;
            }
            match &bp.condition {
                None => return Some((Some(bp.id), b, w, lanes)),
                Some(cond) => {
                    let hits = self.condition_lanes(m, cond, b, w, lanes);
                    if hits != 0 {
                        return Some((Some(bp.id), b, w, hits));
                    }
                }
            }
        }
        None
    }

    /// The lanes of `lanes` in which `cond` holds in machine `m` (a register unknown to a
    /// lane: false there).
    pub(super) fn condition_lanes(
        &self,
        m: &Machine,
        cond: &Condition,
        b: u32,
        w: u32,
        lanes: u64,
    ) -> u64 {
        let mut out = 0;
        for lane in 0..self.lanes_in_warp_in(m, b, w) {
            if lanes >> lane & 1 == 0 {
                continue;
            }
            let a = self.operand_value(m, &cond.lhs, b, w, lane);
            let z = self.operand_value(m, &cond.rhs, b, w, lane);
            if let (Some(a), Some(z)) = (a, z)
                && cond.cmp.holds(a, z)
            {
                out |= 1 << lane;
            }
        }
        out
    }

    /// An operand of a breakpoint's condition in one lane of machine `m`.
    pub(super) fn operand_value(
        &self,
        m: &Machine,
        o: &Operand,
        b: u32,
        w: u32,
        lane: u32,
    ) -> Option<i128> {
        match o {
            Operand::Int(v) => Some(*v),
            Operand::Lane => Some(lane as i128),
            Operand::Tid => Some((w * self.warp_size() + lane) as i128),
            Operand::Reg(name) => {
                let (ty, bits) = self.register_value_in(m, name, b, w, lane).ok()?;
                Some(view::integer_value(ty, bits))
            }
        }
    }

    /// Takes steps on the run loop ([`scheduler::run_resumable`]) until `limit` steps were
    /// taken (the step bound, [`Stop::Bound`]), `pick` has nothing, a breakpoint (or one of
    /// `temp`'s addresses) or watchpoint or the end is reached, or the interrupt flag is set.
    /// With `lines`, one line per step is appended.
    ///
    /// `pick` chooses from the enabled choices of the machine being stepped (an index into
    /// them), as a [`scheduler::Scheduler`] does; the session's own machine is that machine
    /// again when the run is over.
    pub(super) fn run(
        &mut self,
        limit: u64,
        temp: &[u32],
        pick: &mut Pick<'_>,
        lines: Option<&mut String>,
    ) -> (Stop, u64) {
        // Stepped by the loop; the session's machine is a stand-in until it comes back.
        let mut machine = std::mem::replace(&mut self.machine, self.initial.clone());
        // Events only where something reads them on every step: a watchpoint, or the lines
        // of `step N`. The last step's events (for `rule`) are rebuilt after the run.
        let detail = (!self.watchpoints.is_empty() || lines.is_some()).then_some(EventDetail::Full);
        let interrupt = self.interrupt.clone();
        let before = self.history.len();
        let run = RefCell::new(Stepper {
            session: self,
            temp,
            pick,
            lines,
            stop: None,
        });
        let ran = scheduler::run_resumable(
            &mut machine,
            &mut Picks(&run),
            &Budget::steps(limit),
            &interrupt,
            &mut Sees(&run, detail),
        );
        let seen = run.into_inner().stop;
        self.machine = machine;
        let ran = match ran {
            Ok(ran) => ran,
            // A choice of the machine's own enabled set refused: a bug of cudasem.
            Err(refused) => {
                let taken = self.history.len() - before;
                return (
                    Stop::Failed(DebugError::Refused(refused.to_string())),
                    taken,
                );
            }
        };
        if ran.taken > 0 {
            self.last_events = match detail {
                Some(_) => ran.last_events,
                None => self.last_step_events(),
            };
        }
        let stop = match ran.ended {
            Ended::Terminated(_) => Stop::Terminated,
            // The interrupt flag is the run's stop flag (the session reads no clock).
            Ended::Bound(BoundHit::Time(_)) => Stop::Interrupted,
            Ended::Bound(hit) => Stop::Bound(hit),
            Ended::SchedulerStopped | Ended::ObserverStopped => seen.unwrap_or(Stop::Done),
        };
        (stop, ran.taken)
    }

    /// The events of the last step taken, rebuilt from the history (exact: the machine is
    /// deterministic given its choices); none before the first step.
    fn last_step_events(&self) -> Vec<Event> {
        let mut events = Vec::new();
        match self.history.state_at(self.history.len(), Some(&mut events)) {
            Ok(_) => events,
            // The run took this step a moment ago; a replay that fails to is a bug, and `rule`
            // then says no step was taken rather than show a wrong rule.
            Err(_) => Vec::new(),
        }
    }

    /// The policy's next choice among `enabled` (an index into them; never empty).
    pub(super) fn policy_pick(&self, enabled: &[Choice]) -> usize {
        self.options
            .policy
            .pick(enabled, self.history.choices().last(), self.history.len())
    }

    /// What a run ended in, as text.
    pub(super) fn stop_text(&self, stop: &Stop, taken: u64) -> String {
        let mut s = String::new();
        match stop {
            Stop::Done => {}
            Stop::Breakpoint {
                id,
                block,
                warp,
                lanes,
            } => {
                let bp = self.breakpoints.iter().find(|b| b.id == *id);
                let _ = writeln!(
                    s,
                    "{} {id} at {}: {} warp {warp}, after {taken} step{}{}",
                    if bp.is_some_and(|b| b.temporary) {
                        "temporary breakpoint"
                    } else {
                        "breakpoint"
                    },
                    bp.map_or("?", |b| b.name.as_str()),
                    self.block_name(*block),
                    plural(taken),
                    if bp.is_some_and(|b| b.temporary) {
                        " (deleted)"
                    } else {
                        ""
                    }
                );
                s.push_str(&self.warp_summary(*block, *warp, Some(*lanes)));
            }
            Stop::Watchpoint(text) => s.push_str(text),
            Stop::Terminated => {
                let t = self
                    .machine
                    .termination()
                    .cloned()
                    .unwrap_or(Termination::Completed);
                let _ = writeln!(
                    s,
                    "the kernel ended after {} steps: {t}",
                    self.history.len()
                );
            }
            Stop::Interrupted => {
                let _ = writeln!(
                    s,
                    "interrupted after {taken} step{}, at step {}; the session goes on. The last step:",
                    plural(taken),
                    self.history.len()
                );
                s.push_str(&self.step_line());
            }
            Stop::Bound(hit) => {
                let _ = writeln!(
                    s,
                    "stopped at {hit} after {taken} steps (now at step {}): no breakpoint, \
                     watchpoint or end of the kernel came; the kernel may not terminate",
                    self.history.len()
                );
                let _ = writeln!(
                    s,
                    "`continue` runs up to {} more steps (`--max-steps N` sets the bound); `where` \
                     and `warps` show where the warps are",
                    self.options.max_steps
                );
            }
            Stop::Failed(e) => {
                let _ = writeln!(s, "the step failed: {e}");
            }
        }
        s
    }

    pub(super) fn cmd_step(&mut self, n: u64) -> Result<String, DebugError> {
        if n == 0 {
            return Err("`step 0` takes no step".into());
        }
        let verbose = n <= 64;
        let mut lines = String::new();
        let (mut stop, taken) = self.run(
            n,
            &[],
            &mut |s, _, enabled| Some(s.policy_pick(enabled)),
            verbose.then_some(&mut lines),
        );
        // `step N` asked for N steps: taking them all is no bound cutting it.
        if matches!(stop, Stop::Bound(BoundHit::Steps(_))) {
            stop = Stop::Done;
        }
        if !verbose {
            let _ = writeln!(
                lines,
                "took {taken} steps; now at step {}",
                self.history.len()
            );
            lines.push_str(&self.step_line());
        }
        lines.push_str(&self.stop_text(&stop, taken));
        Ok(lines)
    }

    pub(super) fn cmd_continue(&mut self, until: Option<&[u32]>) -> Result<String, DebugError> {
        let (stop, taken) = self.run(
            self.options.max_steps,
            until.unwrap_or_default(),
            &mut |s, _, enabled| Some(s.policy_pick(enabled)),
            None,
        );
        let mut s = self.stop_text(&stop, taken);
        if until.is_some() && matches!(stop, Stop::Done) {
            let _ = writeln!(
                s,
                "reached after {taken} step{}: {} warp {}",
                plural(taken),
                self.block_name(self.focus.block),
                self.focus.warp
            );
            s.push_str(&self.warp_summary(self.focus.block, self.focus.warp, None));
        }
        Ok(s)
    }

    /// The enabled choices of warp `(b, w)` (and of lane `lane`'s group).
    pub(super) fn warp_choices(&self, b: u32, w: u32, lane: Option<u32>) -> Vec<Choice> {
        self.machine
            .enabled()
            .iter()
            .filter(|c| view::choice_warp(c) == Some((b, w)))
            .filter(|c| match (lane, c) {
                (Some(l), Choice::Lanes { mask, .. }) => mask >> l & 1 == 1,
                (Some(_), _) => false,
                _ => true,
            })
            .copied()
            .collect()
    }

    /// The view of warp `w` of block `b`, or [`Session::why_not`] as the error.
    pub(super) fn warp_or_why(
        &self,
        b: u32,
        w: u32,
    ) -> Result<semantics::machine::WarpView, DebugError> {
        self.machine
            .warp_view(b, w)
            .ok_or_else(|| DebugError::from(self.why_not(b, w)))
    }

    /// Why warp `(b, w)` cannot step now.
    pub(super) fn why_not(&self, b: u32, w: u32) -> String {
        self.why_not_in(&self.machine, b, w)
    }

    /// Why warp `(b, w)` cannot step in machine `m`.
    pub(super) fn why_not_in(&self, m: &Machine, b: u32, w: u32) -> String {
        if m.termination().is_some() {
            return "the kernel has ended".to_string();
        }
        let blocks = self.total_blocks();
        // A block past the last is described by the last grid's shape.
        let warps = m.warps_in_block(b.min(blocks.saturating_sub(1)));
        if b >= blocks || w >= warps {
            return format!(
                "there is no warp {w} in block {b} (grid of {blocks} blocks, {warps} warps per block)"
            );
        }
        let block = self.block_name_in(m, b);
        match m.warp_view(b, w) {
            None => format!("{block} is not resident (not issued yet, or completed)"),
            Some(v) if v.completed => format!("warp {w} of {block} has completed"),
            Some(v) if v.waiting != 0 => format!(
                "warp {w} of {block} waits at barrier{} {}",
                if v.waiting.count_ones() == 1 { "" } else { "s" },
                view::bits_text(v.waiting as u64)
            ),
            Some(_) => format!("warp {w} of {block} is not enabled"),
        }
    }

    pub(super) fn cmd_warp(
        &mut self,
        b: u32,
        w: u32,
        lane: Option<u32>,
    ) -> Result<String, DebugError> {
        if lane.is_some() && self.config.warp_model == semantics::machine::WarpModel::SimtStack {
            return Err(format!(
                "under the simt-stack model lanes step together as a warp: write `warp {b} {w}`"
            )
            .into());
        }
        let cs = self.warp_choices(b, w, lane);
        let choice = match cs.as_slice() {
            [] => {
                return Err(match lane {
                    Some(l) if self.machine.warp_view(b, w).is_some() => {
                        format!(
                            "no group of {} holding lane {l} is enabled; {}",
                            self.warp_name(b, w),
                            self.why_not(b, w)
                        )
                    }
                    _ => self.why_not(b, w),
                }
                .into());
            }
            [c] => *c,
            many => {
                let mut s = format!(
                    "{} has {} enabled choices; pick one with `choose N`:\n",
                    self.warp_name(b, w),
                    many.len()
                );
                for (i, c) in self.machine.enabled().iter().enumerate() {
                    if many.contains(c) {
                        let _ = writeln!(s, "  {i}: {}", self.choice_text(c));
                    }
                }
                return Err(s.trim_end().into());
            }
        };
        // Stepping a chosen warp ignores a breakpoint at its own pc (the user asked for it).
        self.resume_from = None;
        self.take(choice)?;
        let mut s = self.step_line();
        s.push_str(&self.after_step_text());
        Ok(s)
    }

    /// Watchpoint hits and the end of the run after a single step.
    pub(super) fn after_step_text(&mut self) -> String {
        let mut s = String::new();
        if let Some(t) = self.watch_hits() {
            s.push_str(&t);
        }
        if self.machine.termination().is_some() {
            s.push_str(&self.stop_text(&Stop::Terminated, 1));
        }
        s
    }

    /// The deepest call depth of the warp's active lanes (0 if none).
    pub(super) fn call_depth(&self, b: u32, w: u32) -> u16 {
        Session::call_depth_in(&self.machine, b, w)
    }

    /// [`Session::call_depth`] in machine `m`.
    pub(super) fn call_depth_in(m: &Machine, b: u32, w: u32) -> u16 {
        m.warp_view(b, w).map_or(0, |v| {
            (0..v.depth.len())
                .filter(|l| v.active >> l & 1 == 1)
                .map(|l| v.depth[l])
                .max()
                .unwrap_or(0)
        })
    }

    pub(super) fn cmd_next(&mut self) -> Result<String, DebugError> {
        let (b, w) = (self.focus.block, self.focus.warp);
        let first = match self.warp_choices(b, w, None).first() {
            Some(c) => *c,
            None => return Err(self.why_not(b, w).into()),
        };
        let depth = self.call_depth(b, w);
        self.resume_from = None;
        self.take(first)?;
        let mut s = self.step_line();
        if self.call_depth(b, w) > depth && self.machine.termination().is_none() {
            // Over the call: until the warp is back at this depth.
            let (stop, taken) = self.run_warp_until(b, w, move |d| d <= depth);
            let _ = writeln!(
                s,
                "stepped over the call ({taken} more step{})",
                plural(taken)
            );
            s.push_str(&self.stop_text(&stop, taken));
            if matches!(stop, Stop::Done) {
                self.focus.block = b;
                self.focus.warp = w;
                s.push_str(&self.warp_summary(b, w, None));
            }
        } else {
            s.push_str(&self.after_step_text());
        }
        Ok(s)
    }

    pub(super) fn cmd_choices(&self) -> String {
        let en = self.machine.enabled();
        if en.is_empty() {
            return "no choice is enabled: the kernel has ended\n".to_string();
        }
        let mut s = format!(
            "{} enabled choice{} at step {}:\n",
            en.len(),
            plural(en.len() as u64),
            self.history.len()
        );
        for (i, c) in en.iter().enumerate() {
            let _ = writeln!(s, "  {i}: {}", self.choice_text(c));
        }
        s
    }

    pub(super) fn cmd_choose(&mut self, i: usize) -> Result<String, DebugError> {
        let en = self.machine.enabled();
        let Some(c) = en.get(i).copied() else {
            return Err(if en.is_empty() {
                "no choice is enabled: the kernel has ended".to_string()
            } else {
                format!(
                    "there are {} choices (0 to {}); `choices` lists them",
                    en.len(),
                    en.len() - 1
                )
            }
            .into());
        };
        self.resume_from = None;
        self.take(c)?;
        let mut s = self.step_line();
        s.push_str(&self.after_step_text());
        Ok(s)
    }

    pub(super) fn back_to(&mut self, step: u64) -> Result<String, DebugError> {
        let mut events = Vec::new();
        let m = self
            .history
            .state_at(step, Some(&mut events))
            .map_err(|e| DebugError::Internal(format!("the replay diverged: {e}")))?;
        self.machine = m;
        self.history.truncate(step);
        self.last_events = events;
        self.resume_from = None;
        self.refresh_watched();
        if let Some((b, w)) = self.history.choices().last().and_then(view::choice_warp) {
            self.focus.block = b;
            self.focus.warp = w;
        }
        let mut s = format!("back at step {step}\n");
        if self.history.is_empty() {
            s.push_str("(the start: no step taken)\n");
        } else {
            s.push_str(&self.step_line());
        }
        Ok(s)
    }
}

/// How a run of steps chooses: an index into the enabled choices of the machine being
/// stepped, or `None` to stop (the run is then [`Stop::Done`]).
pub(super) type Pick<'p> = dyn FnMut(&Session, &Machine, &[Choice]) -> Option<usize> + 'p;

/// One run of the session's steps on the run loop: the scheduler ([`Picks`]) chooses as the
/// command asks and refuses a choice that would run into a breakpoint; the observer ([`Sees`])
/// logs each step, follows the warp that stepped, writes step lines and stops at a watchpoint.
/// Both share this state, which the loop never hands to both at once.
struct Stepper<'s, 'p> {
    session: &'s mut Session,
    temp: &'s [u32],
    pick: &'s mut Pick<'p>,
    lines: Option<&'s mut String>,
    /// Why the scheduler or the observer stopped the run.
    stop: Option<Stop>,
}

/// The scheduler of a [`Stepper`].
struct Picks<'a, 's, 'p>(&'a RefCell<Stepper<'s, 'p>>);

impl Scheduler for Picks<'_, '_, '_> {
    fn pick(&mut self, m: &Machine, enabled: &[Choice]) -> Option<usize> {
        let run = &mut *self.0.borrow_mut();
        let s = &mut *run.session;
        let i = (run.pick)(s, m, enabled)?.min(enabled.len() - 1);
        let choice = &enabled[i];
        let Some((id, b, w, lanes)) = s.breakpoint_hit(m, choice, run.temp) else {
            return Some(i);
        };
        // Stopped before the warp executes the instruction: it resumes from there.
        let pc = s.choice_pc_in(m, choice).map_or(0, |x| x.2);
        s.resume_from = Some((b, w, pc));
        s.focus = Focus {
            block: b,
            warp: w,
            lane: if lanes == 0 {
                0
            } else {
                lanes.trailing_zeros()
            },
        };
        run.stop = Some(match id {
            Some(id) => {
                if let Some(bp) = s.breakpoints.iter_mut().find(|x| x.id == id) {
                    bp.hits += 1;
                }
                Stop::Breakpoint {
                    id,
                    block: b,
                    warp: w,
                    lanes,
                }
            }
            // One of `until`'s addresses: reached.
            None => Stop::Done,
        });
        None
    }
}

/// The observer of a [`Stepper`], reading events in this detail.
struct Sees<'a, 's, 'p>(&'a RefCell<Stepper<'s, 'p>>, Option<EventDetail>);

impl Observer for Sees<'_, '_, '_> {
    fn detail(&self) -> Option<EventDetail> {
        self.1
    }

    fn observe(&mut self, choice: &Choice, events: &[Event], m: &Machine) -> ControlFlow<()> {
        let run = &mut *self.0.borrow_mut();
        let s = &mut *run.session;
        s.history.record(*choice, m);
        (s.focus, s.resume_from) = s.followed(m, choice);
        if let Some(out) = run.lines.as_deref_mut() {
            out.push_str(&s.step_line_of(m, events));
        }
        match s.watch_hits_in(m, events) {
            Some(text) => {
                run.stop = Some(Stop::Watchpoint(text));
                ControlFlow::Break(())
            }
            None => ControlFlow::Continue(()),
        }
    }
}
