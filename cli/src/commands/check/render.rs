//! What a check's report shows of its findings: the context that names positions and
//! instructions ([`Render`]), the report ([`Report`]) and the words both formats share.

use super::schedules::Checked;
use crate::Exit;
use crate::flags::OutputFormat;
use crate::output::{grid_prefix, lanes_text};
use semantics::Program;
use semantics::machine::Termination;
use semantics::monitors::{
    Access, AccessOp, BarrierSite, DivergenceKind, RaceKind, RaceModel, RaceScope, ScopeName,
    UnspecifiedResult,
};
use std::fmt::Write as _;

pub(super) struct Render<'a> {
    pub(super) ptx_path: &'a str,
    pub(super) text: &'a str,
    pub(super) program: &'a Program,
    /// The kernel of each grid of a program of several launches (empty for one launch).
    pub(super) grids: Vec<String>,
}

impl Render<'_> {
    /// The context of the launch `base` loaded.
    pub(super) fn of(base: &crate::options::Setup) -> Render<'_> {
        Render {
            ptx_path: &base.ptx_name,
            text: &base.text,
            program: &base.program,
            grids: crate::output::grid_kernels(&base.machine),
        }
    }

    /// The kernel of grid `grid` (JSON's `kernel` beside `grid`).
    pub(super) fn grid_kernel(&self, grid: Option<u32>) -> Option<&str> {
        grid.and_then(|g| self.grids.get(g as usize))
            .map(String::as_str)
    }
    /// The instruction's text at a pc (from its span).
    pub(super) fn instruction(&self, pc: u32) -> String {
        self.program
            .source
            .get(pc as usize)
            .and_then(|s| self.text.get(s.span.start as usize..s.span.end as usize))
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    }
    /// A thread named with its block (and grid, in a program of several launches):
    /// `block (0,0,0) thread (3,0,0) [warp 0 lane 3]`.
    pub(super) fn thread(
        &self,
        grid: Option<u32>,
        block: [u32; 3],
        thread: [u32; 3],
        warp: u32,
        lane: u32,
    ) -> String {
        format!(
            "{}block {} {}",
            grid_prefix(grid, &self.grids),
            index3(block),
            thread_text(thread, warp, lane)
        )
    }

    /// The indented line under a finding's site: `pc 7: ld.global.u32 %r1, [%rd2];`.
    pub(super) fn pc_line(&self, out: &mut String, pc: u32) {
        let _ = writeln!(out, "          pc {pc}: {}", self.instruction(pc));
    }
    pub(super) fn source(&self, loc: Option<(u32, u32)>) -> Option<String> {
        let (file, line) = loc?;
        let name = self
            .program
            .files
            .get(&file)
            .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
            .unwrap_or_else(|| format!("file {file}"));
        Some(format!("{name}:{line}"))
    }
    pub(super) fn position(&self, ptx_line: u32, loc: Option<(u32, u32)>) -> String {
        match self.source(loc) {
            Some(s) => format!("{}:{ptx_line} ({s})", self.ptx_path),
            None => format!("{}:{ptx_line}", self.ptx_path),
        }
    }
}

pub(super) struct Report<'a> {
    pub(super) kernel: &'a str,
    pub(super) race_model: RaceModel,
    pub(super) result: &'a Checked,
    pub(super) complete: bool,
    pub(super) coverage: String,
    pub(super) schedules: u64,
    pub(super) seed: Option<u64>,
    pub(super) replay: Vec<String>,
    /// Benign races `--benign ignore` left out of `result`.
    pub(super) benign_left_out: usize,
    /// The bound that cut `--explore`'s search of schedules, if one did.
    pub(super) search_bound_hit: Option<scheduler::BoundHit>,
}

/// Why a benign race is benign, by its kind.
pub(super) fn benign_text(k: RaceKind) -> &'static str {
    match k {
        RaceKind::WriteWrite => "benign: both writes store the same value",
        RaceKind::ReadWrite | RaceKind::WriteRead => {
            "benign: the write stores the value memory already held"
        }
    }
}

pub(super) fn op_word(op: AccessOp, strong: Option<ScopeName>) -> String {
    let base = match op {
        AccessOp::Read => "read",
        AccessOp::Write => "write",
        AccessOp::Atomic => "atomic",
    };
    match (op, strong) {
        (AccessOp::Atomic, Some(ScopeName::Cta)) => "atomic (.cta)".to_string(),
        (AccessOp::Atomic, _) | (_, None) => base.to_string(),
        (_, Some(s)) => format!("strong {base} ({})", scope_word(s)),
    }
}

pub(super) fn scope_word(s: ScopeName) -> &'static str {
    match s {
        ScopeName::Cta => ".cta",
        ScopeName::Gpu => ".gpu",
        ScopeName::Sys => ".sys",
    }
}

pub(super) fn race_kind_word(k: RaceKind) -> &'static str {
    match k {
        RaceKind::ReadWrite => "read-write",
        RaceKind::WriteRead => "write-read",
        RaceKind::WriteWrite => "write-write",
    }
}

pub(super) fn race_scope_word(s: RaceScope) -> &'static str {
    match s {
        RaceScope::IntraWarp => "intra-warp",
        RaceScope::InterWarp => "inter-warp",
        RaceScope::InterBlock => "inter-block",
        RaceScope::InterGrid => "inter-grid",
    }
}

pub(super) fn divergence_word(k: DivergenceKind) -> &'static str {
    match k {
        DivergenceKind::DifferentBarriers => "threads reach different barriers",
        DivergenceKind::LoopIterations => "threads reach the barrier in different loop iterations",
        DivergenceKind::DivergentWarp => "a warp reaches the barrier with diverged lanes",
        DivergenceKind::ExitedBeforeBarrier => {
            "a thread exits while its block waits at the barrier"
        }
    }
}

pub(super) fn where_text(a: &Access) -> String {
    let loc = match &a.location {
        Some(l) if l.byte == 0 => format!("`{}[{}]`", l.name, l.index),
        Some(l) => format!("`{}[{}]` byte {}", l.name, l.index, l.byte),
        None => "no buffer".to_string(),
    };
    format!(
        "{} {loc} (address {:#x}, {} bytes)",
        memory_model::space_name(a.space),
        a.address,
        a.size
    )
}

impl Report<'_> {
    /// Writes the report to stdout; the exit outcome: clean only when nothing was found and
    /// the kernel completed.
    pub(super) fn print(&self, ctx: &Render, format: OutputFormat) -> Exit {
        let out = match format {
            OutputFormat::Text => self.text(ctx),
            OutputFormat::Json => self.json(ctx) + "\n",
        };
        let outcome = if self.result.findings.is_clean()
            && self.result.termination == Termination::Completed
        {
            Exit::Clean
        } else {
            Exit::Misbehaved
        };
        crate::emit::report(&out, outcome)
    }

    pub(super) fn access_lines(&self, out: &mut String, label: &str, a: &Access, r: &Render) {
        let _ = writeln!(
            out,
            "  {label} {}: {} at {}",
            r.thread(a.grid, a.block_idx, a.thread_idx, a.warp, a.lane),
            op_word(a.op, a.strong),
            r.position(a.ptx_line, a.source_line),
        );
        r.pc_line(out, a.pc);
    }

    pub(super) fn site_lines(&self, out: &mut String, label: &str, s: &BarrierSite, r: &Render) {
        let counters = if s.loop_counters.is_empty() {
            String::new()
        } else {
            format!(", loop iterations {:?} (outermost first)", s.loop_counters)
        };
        let _ = writeln!(
            out,
            "  {label} {}: {} at {}{counters}",
            thread_text(s.thread_idx, s.warp, s.lane),
            s.what,
            r.position(s.ptx_line, s.source_line),
        );
        r.pc_line(out, s.pc);
    }

    pub(super) fn unspecified_lines(&self, out: &mut String, u: &UnspecifiedResult, r: &Render) {
        let _ = writeln!(out, "{}", u.kind.describe());
        let _ = writeln!(
            out,
            "  by:    {} at {}",
            r.thread(u.grid, u.block_idx, u.thread_idx, u.warp, u.lane),
            r.position(u.ptx_line, u.source_line),
        );
        r.pc_line(out, u.pc);
        let _ = writeln!(out, "  lanes {}", lanes_text(u.lanes));
        if u.occurrences > 1 {
            let _ = writeln!(out, "  ({} times in this run)", u.occurrences);
        }
        out.push('\n');
    }
}

/// `(x, y, z)`: a block's or a thread's index.
pub(super) fn index3(i: [u32; 3]) -> String {
    format!("({}, {}, {})", i[0], i[1], i[2])
}

/// `thread (x, y, z) [warp W lane L]`.
fn thread_text(thread: [u32; 3], warp: u32, lane: u32) -> String {
    format!("thread {} [warp {warp} lane {lane}]", index3(thread))
}
