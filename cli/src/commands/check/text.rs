//! The text form of a check's report: each finding with its accesses or sites, then the status
//! line, the coverage and the replay command.

use super::render::{
    Render, Report, benign_text, divergence_word, index3, race_kind_word, race_scope_word,
    where_text,
};
use crate::output::{grid_prefix, lanes_text, status_word};
use semantics::machine::Termination;
use semantics::monitors::MemoryErrorKind;
use std::fmt::Write as _;

impl Report<'_> {
    pub(super) fn text(&self, r: &Render) -> String {
        let mut out = String::new();
        self.races_text(&mut out, r);
        self.divergences_text(&mut out, r);
        self.memory_text(&mut out, r);
        for u in &self.result.findings.unspecified {
            self.unspecified_lines(&mut out, u, r);
        }
        self.termination_text(&mut out, r);
        self.summary_text(&mut out);
        out
    }

    /// Each data race with its two accesses.
    fn races_text(&self, out: &mut String, r: &Render) {
        let f = &self.result.findings;
        for race in &f.races {
            let _ = writeln!(
                out,
                "data race ({}, {}) on {}",
                race_kind_word(race.kind),
                race_scope_word(race.scope),
                where_text(&race.second)
            );
            self.access_lines(out, "first: ", &race.first, r);
            self.access_lines(out, "second:", &race.second, r);
            if race.first.address != race.second.address || race.first.size != race.second.size {
                let _ = writeln!(out, "  first access: {}", where_text(&race.first));
            }
            if let Some(n) = &race.note {
                let _ = writeln!(out, "  note: {n}");
            }
            if race.benign {
                let _ = writeln!(out, "  {}", benign_text(race.kind));
            }
            if race.occurrences > 1 {
                let _ = writeln!(out, "  ({} times in this run)", race.occurrences);
            }
            out.push('\n');
        }
    }

    /// Each barrier divergence with its two sites.
    fn divergences_text(&self, out: &mut String, r: &Render) {
        let f = &self.result.findings;
        for d in &f.divergences {
            let _ = writeln!(
                out,
                "barrier divergence in {}block {}, barrier {}: {}",
                grid_prefix(d.grid, &r.grids),
                index3(d.block_idx),
                d.barrier,
                divergence_word(d.kind)
            );
            self.site_lines(out, "first: ", &d.first, r);
            self.site_lines(out, "second:", &d.second, r);
            out.push('\n');
        }
    }

    /// Each memory error (out of bounds, uninitialised) with its access.
    fn memory_text(&self, out: &mut String, r: &Render) {
        let f = &self.result.findings;
        for m in &f.memory {
            let what = match m.kind {
                MemoryErrorKind::OutOfBounds => "out-of-bounds access",
                MemoryErrorKind::Uninitialised => "read of uninitialised memory",
            };
            let _ = writeln!(out, "{what}: {}", where_text(&m.access));
            self.access_lines(out, "by:", &m.access, r);
            if m.occurrences > 1 {
                let _ = writeln!(out, "  ({} times in this run)", m.occurrences);
            }
            out.push('\n');
        }
    }

    /// A machine error or a deadlock that ended the schedule.
    fn termination_text(&self, out: &mut String, r: &Render) {
        if let Termination::Error(e) = &self.result.termination {
            let _ = writeln!(
                out,
                "error: {} ({}block {}, thread {}, at {})",
                e.message,
                grid_prefix(e.grid, &r.grids),
                index3(e.block),
                index3(e.thread),
                r.position(e.ptx_line, e.source_line)
            );
            r.pc_line(out, e.pc);
            out.push('\n');
        }
        if let Termination::Deadlock(w) = &self.result.termination {
            let _ = writeln!(out, "deadlock:");
            for i in w {
                let _ = writeln!(
                    out,
                    "  {}block {} warp {} lanes {} at {}: {}",
                    grid_prefix(i.grid, &r.grids),
                    index3(i.block),
                    i.warp,
                    lanes_text(i.lanes),
                    r.position(i.ptx_line, i.source_line),
                    i.waiting_for
                );
            }
            out.push('\n');
        }
    }

    /// What was left out, the status line, the coverage and the replay commands.
    fn summary_text(&self, out: &mut String) {
        let f = &self.result.findings;
        if f.dropped > 0 {
            let _ = writeln!(out, "({} more findings not shown)\n", f.dropped);
        }
        if self.benign_left_out > 0 {
            let _ = writeln!(
                out,
                "({} benign race(s) left out: --benign ignore)\n",
                self.benign_left_out
            );
        }
        let n = f.races.len() + f.divergences.len() + f.memory.len() + f.unspecified.len();
        let status = if n == 0 && self.result.termination == Termination::Completed {
            "clean".to_string()
        } else {
            let mut parts = Vec::new();
            if !f.races.is_empty() {
                parts.push(format!("{} data race(s)", f.races.len()));
            }
            if !f.divergences.is_empty() {
                parts.push(format!("{} barrier divergence(s)", f.divergences.len()));
            }
            if !f.memory.is_empty() {
                parts.push(format!("{} memory error(s)", f.memory.len()));
            }
            if !f.unspecified.is_empty() {
                parts.push(format!("{} unspecified result(s)", f.unspecified.len()));
            }
            match &self.result.termination {
                Termination::Completed => {}
                // Which bound: the time, Ctrl-C or the memory budget.
                Termination::TimeLimit => {
                    parts.push(format!("stopped, {}", crate::timeout::cause_text(None)))
                }
                // The step bound, named as every command names a bound.
                // (A replayed schedule that ran out is no bound: `step limit` alone.)
                Termination::StepLimit => parts.push(match self.result.bound_hit {
                    Some(hit) => format!("step limit: {hit} was reached"),
                    None => "step limit".to_string(),
                }),
                other => parts.push(status_word(other).replace('_', " ")),
            }
            parts.join(", ")
        };
        let _ = writeln!(
            out,
            "{}: {status} ({} steps, race model {}, {} schedule(s) checked)",
            cuda_front::demangle(self.kernel),
            self.result.steps,
            self.race_model.name(),
            self.schedules
        );
        let _ = writeln!(
            out,
            "coverage: {}{}",
            if self.complete {
                "complete, "
            } else {
                "partial, "
            },
            self.coverage
        );
        if n > 0 || self.result.termination != Termination::Completed {
            for c in &self.replay {
                let _ = writeln!(out, "reproduce: {c}");
            }
        }
    }
}
