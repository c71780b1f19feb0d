//! The JSON form of a check's report: one object with the findings, each access or site with
//! its instruction and source line.

use super::render::{Render, Report, where_text};
use scheduler::BoundHit;
use semantics::machine::Termination;
use semantics::monitors::{
    Access, BarrierSite, Divergence, Findings, MemoryErrorKind, MemoryFinding, Race,
    UnspecifiedResult,
};
use serde::Serialize;

impl Report<'_> {
    pub(super) fn json(&self, r: &Render) -> String {
        let f = &self.result.findings;
        let races = races_json(f, r);
        let divs = divergences_json(f, r);
        let errors = errors_json(f, &self.result.termination, self.result.bound_hit, r);
        let unspecified = unspecified_json(f, r);
        let clean = f.is_clean() && self.result.termination == Termination::Completed;
        let j = J {
            kernel: self.kernel,
            status: if clean { "clean" } else { "failed" },
            race_model: self.race_model.name(),
            races,
            barrier_divergence: divs,
            errors,
            complete: self.complete,
            coverage: &self.coverage,
            schedules: self.schedules,
            steps: self.result.steps,
            seed: self.seed,
            replay: &self.replay,
            dropped: f.dropped,
            unspecified,
            benign_left_out: self.benign_left_out,
            bound_hit: self.result.bound_hit,
            search_bound_hit: self.search_bound_hit,
        };
        serde_json::to_string(&j).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

/// The report as JSON.
#[derive(Serialize)]
struct J<'a> {
    kernel: &'a str,
    status: &'a str,
    race_model: &'a str,
    races: Vec<JRace<'a>>,
    barrier_divergence: Vec<JDiv<'a>>,
    errors: Vec<JErr<'a>>,
    unspecified: Vec<JUnspec<'a>>,
    complete: bool,
    coverage: &'a str,
    schedules: u64,
    steps: u64,
    seed: Option<u64>,
    replay: &'a [String],
    dropped: u64,
    benign_left_out: usize,
    /// Which bound cut the schedule (`{"bound": "steps", "limit": 100}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    bound_hit: Option<BoundHit>,
    /// Which bound cut `--explore`'s search of schedules (`{"bound": "schedules", "limit":
    /// 10000}`); absent when none did.
    #[serde(skip_serializing_if = "Option::is_none")]
    search_bound_hit: Option<BoundHit>,
}
#[derive(Serialize)]
struct JUnspec<'a> {
    #[serde(flatten)]
    finding: &'a UnspecifiedResult,
    message: &'static str,
    instruction: String,
    source: Option<String>,
}
#[derive(Serialize)]
struct JAccess<'a> {
    #[serde(flatten)]
    access: &'a Access,
    /// The grid's kernel, beside `grid` (programs of several launches only).
    #[serde(skip_serializing_if = "Option::is_none")]
    kernel: Option<&'a str>,
    instruction: String,
    source: Option<String>,
}
#[derive(Serialize)]
struct JRace<'a> {
    #[serde(flatten)]
    race: &'a Race,
    accesses: [JAccess<'a>; 2],
}
#[derive(Serialize)]
struct JSite<'a> {
    #[serde(flatten)]
    site: &'a BarrierSite,
    instruction: String,
    source: Option<String>,
}
#[derive(Serialize)]
struct JDiv<'a> {
    #[serde(flatten)]
    div: &'a Divergence,
    sites: [JSite<'a>; 2],
}
#[derive(Serialize)]
struct JErr<'a> {
    kind: &'a str,
    message: String,
    access: Option<JAccess<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finding: Option<&'a MemoryFinding>,
}

/// An access with its instruction, source line and (in a program of several launches) kernel.
fn access_json<'a>(a: &'a Access, r: &'a Render) -> JAccess<'a> {
    JAccess {
        access: a,
        kernel: r.grid_kernel(a.grid),
        instruction: r.instruction(a.pc),
        source: r.source(a.source_line),
    }
}

/// A barrier site with its instruction and source line.
fn site_json<'a>(s: &'a BarrierSite, r: &Render) -> JSite<'a> {
    JSite {
        site: s,
        instruction: r.instruction(s.pc),
        source: r.source(s.source_line),
    }
}

/// Each data race with its two accesses.
fn races_json<'a>(f: &'a Findings, r: &'a Render) -> Vec<JRace<'a>> {
    f.races
        .iter()
        .map(|x| JRace {
            race: x,
            accesses: [access_json(&x.first, r), access_json(&x.second, r)],
        })
        .collect()
}

/// Each barrier divergence with its two sites.
fn divergences_json<'a>(f: &'a Findings, r: &Render) -> Vec<JDiv<'a>> {
    f.divergences
        .iter()
        .map(|d| JDiv {
            div: d,
            sites: [site_json(&d.first, r), site_json(&d.second, r)],
        })
        .collect()
}

/// The memory errors, then what ended the schedule when it did not complete.
fn errors_json<'a>(
    f: &'a Findings,
    termination: &Termination,
    bound_hit: Option<BoundHit>,
    r: &'a Render,
) -> Vec<JErr<'a>> {
    let mut errors: Vec<JErr> = f
        .memory
        .iter()
        .map(|m| JErr {
            kind: match m.kind {
                MemoryErrorKind::OutOfBounds => "out_of_bounds",
                MemoryErrorKind::Uninitialised => "uninitialised",
            },
            message: where_text(&m.access),
            access: Some(access_json(&m.access, r)),
            finding: Some(m),
        })
        .collect();
    match termination {
        Termination::Error(e) => errors.push(JErr {
            kind: "machine_error",
            message: e.to_string(),
            access: None,
            finding: None,
        }),
        Termination::Deadlock(_) => errors.push(JErr {
            kind: "deadlock",
            message: termination.to_string(),
            access: None,
            finding: None,
        }),
        Termination::StepLimit => errors.push(JErr {
            kind: "step_limit",
            message: match bound_hit {
                Some(hit) => format!("{hit} was reached"),
                // A replayed schedule whose trace ended before the run did.
                None => "the step bound was reached".to_string(),
            },
            access: None,
            finding: None,
        }),
        Termination::TimeLimit => errors.push(JErr {
            // `time_limit`, or `memory_limit` where the memory watchdog stopped the run.
            kind: crate::output::status_word(&Termination::TimeLimit),
            message: format!("stopped: {}", crate::timeout::cause_text(None)),
            access: None,
            finding: None,
        }),
        Termination::Completed => {}
    }
    errors
}

/// Each result the PTX ISA leaves unspecified, with its instruction and source line.
fn unspecified_json<'a>(f: &'a Findings, r: &Render) -> Vec<JUnspec<'a>> {
    f.unspecified
        .iter()
        .map(|u| JUnspec {
            finding: u,
            message: u.kind.describe(),
            instruction: r.instruction(u.pc),
            source: r.source(u.source_line),
        })
        .collect()
}
