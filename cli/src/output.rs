//! Printing a run's result: the buffers (text rows or JSON arrays), the final status with who
//! waits where or what faulted, the step count, and the command that reproduces a failing run.
//!
//! Floats print so they read back to the same bits: the shortest decimal that round-trips
//! (`0.1`, `1.0`, `1e30`), `nan`, `inf` and `-inf` (in JSON these three are strings).
//! Nothing here runs anything: it formats a [`RunReport`].

use crate::launch::{Elem, ElemKind};
use scheduler::BoundHit;
use semantics::machine::{ErrorKind, MachineError, Termination, WaitInfo};
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One buffer to print.
pub struct PrintedBuffer<'a> {
    pub name: &'a str,
    pub elem: Elem,
    pub bytes: &'a [u8],
}

/// Everything a run's output says.
pub struct RunReport<'a> {
    pub kernel: &'a str,
    /// The PTX file's name as given, for `file:line` locations.
    pub ptx_path: &'a str,
    /// The program's `.file` table (index -> path), for `.loc` source lines.
    pub files: &'a BTreeMap<u32, String>,
    pub buffers: Vec<PrintedBuffer<'a>>,
    pub termination: &'a Termination,
    pub steps: u64,
    pub max_steps: u64,
    /// The time bound (`--timeout`) in milliseconds, when one was given.
    pub time_ms: Option<u64>,
    /// `simt-stack, flat memory, round-robin`: how the run was configured, for the status line.
    pub setup: String,
    /// The command line that reproduces the run (printed when it failed).
    pub replay: String,
    /// The launch's expectations with their violations (`None`: it holds), checked when the
    /// run completed.
    pub expectations: Vec<(String, Option<crate::launch::expect::Violation>)>,
    /// The kernel of each grid of a program of several launches ([`grid_kernels`]); empty for
    /// one kernel launch, whose blocks are named without a grid.
    pub grids: Vec<String>,
}

/// The kernel of each grid, in launch order, for naming blocks by grid (`grid 1 (`add_one`)
/// block (0,0,0)`); empty for one kernel launch, whose reports name no grid.
pub fn grid_kernels(machine: &semantics::machine::Machine) -> Vec<String> {
    let grids = machine.grids();
    if grids.len() < 2 {
        return Vec::new();
    }
    grids
        .iter()
        .map(|g| cuda_front::demangle::short_name(&g.kernel))
        .collect()
}

/// `grid 1 (`add_one`) `: what precedes a block in a program of several launches; nothing for
/// one kernel launch (`grid` is `None`), so that its output is unchanged.
pub fn grid_prefix(grid: Option<u32>, kernels: &[String]) -> String {
    match (grid, grid.and_then(|g| kernels.get(g as usize))) {
        (None, _) => String::new(),
        (Some(g), Some(k)) => format!("grid {g} (`{k}`) "),
        (Some(g), None) => format!("grid {g} "),
    }
}

/// One element, decoded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    U(u64),
    S(i64),
    F32(f32),
    F64(f64),
}

/// Decodes `bytes` as little-endian elements of `elem` (a trailing partial element is dropped).
pub fn decode(elem: Elem, bytes: &[u8]) -> Vec<Value> {
    let size = elem.size();
    bytes
        .chunks_exact(size)
        .map(|chunk| {
            let mut raw = [0u8; 8];
            raw[..size].copy_from_slice(chunk);
            let bits = u64::from_le_bytes(raw);
            match (elem.kind(), elem) {
                (ElemKind::Float, Elem::F16) => {
                    Value::F32(half::f16::from_bits(bits as u16).to_f32())
                }
                (ElemKind::Float, Elem::F32) => Value::F32(f32::from_bits(bits as u32)),
                (ElemKind::Float, _) => Value::F64(f64::from_bits(bits)),
                (ElemKind::Signed, _) => {
                    let shift = 64 - 8 * size as u32;
                    Value::S(((bits << shift) as i64) >> shift)
                }
                (ElemKind::Unsigned, _) => Value::U(bits),
            }
        })
        .collect()
}

impl Value {
    /// The text form (round-trips for floats).
    pub fn text(self) -> String {
        match self {
            Value::U(v) => v.to_string(),
            Value::S(v) => v.to_string(),
            Value::F32(v) => float_text(v.is_nan(), v.is_infinite(), v.is_sign_negative(), || {
                format!("{v:?}")
            }),
            Value::F64(v) => float_text(v.is_nan(), v.is_infinite(), v.is_sign_negative(), || {
                format!("{v:?}")
            }),
        }
    }
}

fn float_text(nan: bool, inf: bool, negative: bool, finite: impl Fn() -> String) -> String {
    if nan {
        "nan".to_string()
    } else if inf {
        if negative {
            "-inf".to_string()
        } else {
            "inf".to_string()
        }
    } else {
        // Debug is the shortest representation that reads back to the same bits, and keeps a
        // `.0` or an exponent so floats look like floats.
        finite()
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Value::U(v) => s.serialize_u64(v),
            Value::S(v) => s.serialize_i64(v),
            Value::F32(v) if v.is_finite() => s.serialize_f32(v),
            Value::F64(v) if v.is_finite() => s.serialize_f64(v),
            other => s.serialize_str(&other.text()),
        }
    }
}

/// A buffer's elements as a JSON array.
struct Elements<'a>(&'a PrintedBuffer<'a>);

impl Serialize for Elements<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let values = decode(self.0.elem, self.0.bytes);
        let mut seq = s.serialize_seq(Some(values.len()))?;
        for v in values {
            seq.serialize_element(&v)?;
        }
        seq.end()
    }
}

/// The buffers in print order (a JSON object keeps them in that order).
struct Buffers<'a>(&'a [PrintedBuffer<'a>]);

impl Serialize for Buffers<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for b in self.0 {
            map.serialize_entry(b.name, &Elements(b))?;
        }
        map.end()
    }
}

/// The status word of `--format json`. A run the stop flag cut is `memory_limit` where the
/// memory watchdog (`--max-memory`) set the flag, else `time_limit` (the clock or Ctrl-C).
pub fn status_word(t: &Termination) -> &'static str {
    match t {
        Termination::Completed => "completed",
        Termination::Deadlock(_) => "deadlock",
        Termination::StepLimit => "step_limit",
        Termination::TimeLimit if crate::timeout::over_budget() => "memory_limit",
        Termination::TimeLimit => "time_limit",
        Termination::Error(_) => "error",
    }
}

pub fn error_kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::OutOfBounds => "out-of-bounds access",
        ErrorKind::Misaligned => "misaligned access",
        ErrorKind::Trap => "trap",
        ErrorKind::Stuck => "stuck",
        ErrorKind::Barrier => "barrier misuse",
        ErrorKind::Resource => "out of resources",
    }
}

fn error_kind_word(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::OutOfBounds => "out_of_bounds",
        ErrorKind::Misaligned => "misaligned",
        ErrorKind::Trap => "trap",
        ErrorKind::Stuck => "stuck",
        ErrorKind::Barrier => "barrier",
        ErrorKind::Resource => "resource",
    }
}

/// `0-31`, `0-3,8,10-11`: a lane mask as ranges.
pub fn lanes_text(mask: u64) -> String {
    let mut parts = Vec::new();
    let mut lane = 0u32;
    while lane < 64 {
        if mask >> lane & 1 == 1 {
            let start = lane;
            while lane + 1 < 64 && mask >> (lane + 1) & 1 == 1 {
                lane += 1;
            }
            parts.push(if start == lane {
                start.to_string()
            } else {
                format!("{start}-{lane}")
            });
        }
        lane += 1;
    }
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(",")
    }
}

/// `count` per second of `seconds` (0 when no time was measured).
pub fn per_second(count: f64, seconds: f64) -> f64 {
    if seconds > 0.0 { count / seconds } else { 0.0 }
}

fn dim_text(d: [u32; 3]) -> String {
    format!("({},{},{})", d[0], d[1], d[2])
}

impl RunReport<'_> {
    fn source_text(&self, source: Option<(u32, u32)>) -> Option<String> {
        let (file, line) = source?;
        let name = self
            .files
            .get(&file)
            .map_or_else(|| format!("file {file}"), Clone::clone);
        Some(format!("{name}:{line}"))
    }

    /// The kernel of grid `grid` (JSON's `kernel` beside `grid`).
    fn grid_kernel(&self, grid: Option<u32>) -> Option<&str> {
        grid.and_then(|g| self.grids.get(g as usize))
            .map(String::as_str)
    }

    fn wait_text(&self, w: &WaitInfo) -> String {
        let mut s = format!(
            "{}block {} warp {} lanes {} at pc {} ({}:{}",
            grid_prefix(w.grid, &self.grids),
            dim_text(w.block),
            w.warp,
            lanes_text(w.lanes),
            w.pc,
            self.ptx_path,
            w.ptx_line
        );
        if let Some(src) = self.source_text(w.source_line) {
            let _ = write!(s, ", source {src}");
        }
        let _ = write!(s, "): waiting for {}", w.waiting_for);
        s
    }

    fn error_location_text(&self, e: &MachineError) -> String {
        let mut s = format!(
            "{}block {} thread {} at pc {} ({}:{}",
            grid_prefix(e.grid, &self.grids),
            dim_text(e.block),
            dim_text(e.thread),
            e.pc,
            self.ptx_path,
            e.ptx_line
        );
        if let Some(src) = self.source_text(e.source_line) {
            let _ = write!(s, ", source {src}");
        }
        s.push(')');
        s
    }

    /// The one-paragraph status: what happened, after how many steps, and for failures who/where.
    pub fn status_text(&self) -> String {
        let mut s = String::new();
        match self.termination {
            Termination::Completed => {
                let _ = writeln!(s, "completed after {} steps ({})", self.steps, self.setup);
            }
            Termination::StepLimit => {
                let _ = writeln!(
                    s,
                    "stopped after {} steps ({}); the kernel may not terminate under this schedule ({})",
                    self.steps,
                    BoundHit::Steps(self.max_steps).setting(),
                    self.setup
                );
            }
            Termination::TimeLimit => {
                let _ = writeln!(
                    s,
                    "stopped after {} steps ({}); the run had not ended ({})",
                    self.steps,
                    crate::timeout::cause_text(None),
                    self.setup
                );
            }
            Termination::Deadlock(waits) => {
                let _ = writeln!(
                    s,
                    "deadlock after {} steps ({}): no thread can make progress; {} group{} of lanes wait{}:",
                    self.steps,
                    self.setup,
                    waits.len(),
                    if waits.len() == 1 { "" } else { "s" },
                    if waits.len() == 1 { "s" } else { "" },
                );
                for w in waits {
                    let _ = writeln!(s, "  {}", self.wait_text(w));
                }
            }
            Termination::Error(e) => {
                let _ = writeln!(
                    s,
                    "error after {} steps ({}): {}: {}",
                    self.steps,
                    self.setup,
                    error_kind_name(e.kind),
                    e.message
                );
                let _ = writeln!(s, "  at {}", self.error_location_text(e));
            }
        }
        for (text, violation) in &self.expectations {
            match violation {
                None => {
                    let _ = writeln!(s, "expectation holds: `{text}`");
                }
                Some(v) => {
                    let _ = writeln!(s, "EXPECTATION VIOLATED: {v}");
                }
            }
        }
        // A replay's report has no command of its own to print.
        let is_replay = self.replay.is_empty();
        if !matches!(self.termination, Termination::Completed) || (self.failed() && !is_replay) {
            let _ = writeln!(s, "to reproduce: {}", self.replay);
        }
        s
    }

    /// The run misbehaved or violated an expectation.
    pub fn failed(&self) -> bool {
        !matches!(self.termination, Termination::Completed)
            || self.expectations.iter().any(|(_, v)| v.is_some())
    }

    /// Text output: each buffer as rows of 8 elements with the first element's index, then the
    /// status.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for b in &self.buffers {
            let values: Vec<String> = decode(b.elem, b.bytes)
                .into_iter()
                .map(Value::text)
                .collect();
            let _ = writeln!(s, "{}: {}[{}]", b.name, b.elem.name(), values.len());
            let width = values.iter().map(String::len).max().unwrap_or(1);
            let index_width = values.len().saturating_sub(1).to_string().len();
            for (row, chunk) in values.chunks(8).enumerate() {
                let _ = write!(s, "  [{:>index_width$}]", row * 8);
                for v in chunk {
                    let _ = write!(s, " {v:>width$}");
                }
                s.push('\n');
            }
        }
        s.push_str(&self.status_text());
        s
    }

    /// `--format json`: one object.
    pub fn json(&self) -> String {
        #[derive(Serialize)]
        struct Wait<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            grid: Option<u32>,
            #[serde(skip_serializing_if = "Option::is_none")]
            kernel: Option<&'a str>,
            block: [u32; 3],
            warp: u32,
            lanes: String,
            lane_mask: u64,
            pc: u32,
            ptx_line: u32,
            source: Option<String>,
            waiting_for: &'a str,
        }
        #[derive(Serialize)]
        struct Error<'a> {
            kind: &'static str,
            message: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            grid: Option<u32>,
            #[serde(skip_serializing_if = "Option::is_none")]
            kernel: Option<&'a str>,
            block: [u32; 3],
            thread: [u32; 3],
            pc: u32,
            ptx_line: u32,
            source: Option<String>,
        }
        #[derive(Serialize)]
        struct Out<'a> {
            kernel: &'a str,
            status: &'static str,
            steps: u64,
            max_steps: u64,
            setup: &'a str,
            buffers: Buffers<'a>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<Error<'a>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            deadlock: Option<Vec<Wait<'a>>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            replay: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            note: Option<String>,
            /// Which bound cut the run (`{"bound": "steps", "limit": 100}`).
            #[serde(skip_serializing_if = "Option::is_none")]
            bound_hit: Option<BoundHit>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            expectations: Vec<Expectation<'a>>,
        }
        #[derive(Serialize)]
        struct Expectation<'a> {
            expect: &'a str,
            holds: bool,
            violation: Option<String>,
        }
        let error = match self.termination {
            Termination::Error(e) => Some(Error {
                kind: error_kind_word(e.kind),
                message: &e.message,
                grid: e.grid,
                kernel: self.grid_kernel(e.grid),
                block: e.block,
                thread: e.thread,
                pc: e.pc,
                ptx_line: e.ptx_line,
                source: self.source_text(e.source_line),
            }),
            _ => None,
        };
        let deadlock = match self.termination {
            Termination::Deadlock(waits) => Some(
                waits
                    .iter()
                    .map(|w| Wait {
                        grid: w.grid,
                        kernel: self.grid_kernel(w.grid),
                        block: w.block,
                        warp: w.warp,
                        lanes: lanes_text(w.lanes),
                        lane_mask: w.lanes,
                        pc: w.pc,
                        ptx_line: w.ptx_line,
                        source: self.source_text(w.source_line),
                        waiting_for: &w.waiting_for,
                    })
                    .collect(),
            ),
            _ => None,
        };
        let failed = self.failed();
        let out = Out {
            kernel: self.kernel,
            status: status_word(self.termination),
            steps: self.steps,
            max_steps: self.max_steps,
            setup: &self.setup,
            buffers: Buffers(&self.buffers),
            error,
            deadlock,
            replay: failed.then_some(self.replay.as_str()),
            note: match self.termination {
                Termination::StepLimit => Some(format!(
                    "stopped after {} steps ({}); the kernel may not terminate under this schedule",
                    self.steps,
                    BoundHit::Steps(self.max_steps).setting()
                )),
                Termination::TimeLimit => Some(format!(
                    "stopped after {} steps ({}); the run had not ended",
                    self.steps,
                    crate::timeout::cause_text(None)
                )),
                _ => None,
            },
            bound_hit: crate::bounds::of_run(self.termination, self.max_steps, self.time_ms),
            expectations: self
                .expectations
                .iter()
                .map(|(text, v)| Expectation {
                    expect: text,
                    holds: v.is_none(),
                    violation: v.as_ref().map(ToString::to_string),
                })
                .collect(),
        };
        // Serializing plain data to a string cannot fail.
        serde_json::to_string(&out)
            .unwrap_or_else(|e| format!("{{\"status\":\"error\",\"error\":\"{e}\"}}"))
    }
}

/// A command line, each argument quoted for a POSIX shell when it needs it.
pub fn shell_command(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,@+%".contains(&b));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report<'a>(
        t: &'a Termination,
        buffers: Vec<PrintedBuffer<'a>>,
        files: &'a BTreeMap<u32, String>,
    ) -> RunReport<'a> {
        RunReport {
            kernel: "k",
            ptx_path: "k.ptx",
            files,
            buffers,
            termination: t,
            steps: 42,
            max_steps: 100,
            time_ms: None,
            setup: "simt-stack, flat memory, round-robin".into(),
            replay: "cudasem run k.ptx --launch k.ron".into(),
            expectations: Vec::new(),
            grids: Vec::new(),
        }
    }

    #[test]
    fn decodes_every_kind() {
        assert_eq!(
            decode(Elem::S8, &[0xFF, 1]),
            vec![Value::S(-1), Value::S(1)]
        );
        assert_eq!(decode(Elem::U16, &[0xFF, 0xFF]), vec![Value::U(65535)]);
        assert_eq!(
            decode(Elem::S32, &(-5i32).to_le_bytes()),
            vec![Value::S(-5)]
        );
        assert_eq!(
            decode(Elem::F32, &0.1f32.to_le_bytes()),
            vec![Value::F32(0.1)]
        );
        assert_eq!(decode(Elem::F16, &[0x00, 0x3C]), vec![Value::F32(1.0)]);
        assert_eq!(
            decode(Elem::F64, &2.5f64.to_le_bytes()),
            vec![Value::F64(2.5)]
        );
    }

    #[test]
    fn floats_round_trip_in_text_and_json() {
        for v in [0.1f32, 1.0, 1e30, -3.5e-20, f32::MIN_POSITIVE / 4.0] {
            let t = Value::F32(v).text();
            assert_eq!(t.parse::<f32>().unwrap().to_bits(), v.to_bits(), "{t}");
            let j = serde_json::to_string(&Value::F32(v)).unwrap();
            assert_eq!(j.parse::<f32>().unwrap().to_bits(), v.to_bits(), "{j}");
        }
        assert_eq!(Value::F32(f32::NAN).text(), "nan");
        assert_eq!(
            serde_json::to_string(&Value::F64(f64::NEG_INFINITY)).unwrap(),
            "\"-inf\""
        );
        assert_eq!(serde_json::to_string(&Value::F32(1.0)).unwrap(), "1.0");
    }

    #[test]
    fn lanes_print_as_ranges() {
        assert_eq!(lanes_text(0xFFFF_FFFF), "0-31");
        assert_eq!(lanes_text(0b1011_0001), "0,4-5,7");
        assert_eq!(lanes_text(0), "none");
        assert_eq!(lanes_text(1 << 63), "63");
    }

    #[test]
    fn text_rows_and_status() {
        let files = BTreeMap::new();
        let bytes: Vec<u8> = (0..10i32)
            .flat_map(|i| (i * 100 - 300).to_le_bytes())
            .collect();
        let t = Termination::Completed;
        let r = report(
            &t,
            vec![PrintedBuffer {
                name: "c",
                elem: Elem::S32,
                bytes: &bytes,
            }],
            &files,
        );
        assert_eq!(
            r.text(),
            "c: s32[10]\n  [0] -300 -200 -100    0  100  200  300  400\n  [8]  500  600\ncompleted after 42 steps (simt-stack, flat memory, round-robin)\n"
        );
        assert_eq!(
            r.json(),
            r#"{"kernel":"k","status":"completed","steps":42,"max_steps":100,"setup":"simt-stack, flat memory, round-robin","buffers":{"c":[-300,-200,-100,0,100,200,300,400,500,600]}}"#
        );
    }

    #[test]
    fn failures_say_who_waits_where_and_how_to_reproduce() {
        let mut files = BTreeMap::new();
        files.insert(1, "k.cu".to_string());
        let t = Termination::Deadlock(vec![WaitInfo {
            grid: None,
            block: [1, 0, 0],
            warp: 1,
            lanes: 0xFFFF_FFFF,
            pc: 17,
            ptx_line: 40,
            source_line: Some((1, 12)),
            waiting_for: "barrier 0 (32 of 64 threads arrived)".into(),
        }]);
        let r = report(&t, vec![], &files);
        assert_eq!(
            r.status_text(),
            "deadlock after 42 steps (simt-stack, flat memory, round-robin): no thread can make progress; 1 group of lanes waits:\n  block (1,0,0) warp 1 lanes 0-31 at pc 17 (k.ptx:40, source k.cu:12): waiting for barrier 0 (32 of 64 threads arrived)\nto reproduce: cudasem run k.ptx --launch k.ron\n"
        );
        let json: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
        assert_eq!(json["status"], "deadlock");
        assert_eq!(json["deadlock"][0]["lanes"], "0-31");
        assert_eq!(json["deadlock"][0]["source"], "k.cu:12");
        assert_eq!(json["replay"], "cudasem run k.ptx --launch k.ron");
        let t = Termination::StepLimit;
        let r = report(&t, vec![], &files);
        assert!(
            r.status_text().starts_with(
                "stopped after 42 steps (--max-steps 100); the kernel may not terminate"
            )
        );
        let json: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
        assert_eq!(
            json["bound_hit"],
            serde_json::json!({"bound": "steps", "limit": 100})
        );
        let t = Termination::Error(MachineError {
            kind: ErrorKind::OutOfBounds,
            grid: None,
            block: [0, 0, 0],
            thread: [3, 0, 0],
            pc: 5,
            ptx_line: 20,
            source_line: None,
            message: "st.global.u32 [0x1000] misses buffer `c`".into(),
        });
        let r = report(&t, vec![], &files);
        assert_eq!(
            r.status_text(),
            "error after 42 steps (simt-stack, flat memory, round-robin): out-of-bounds access: st.global.u32 [0x1000] misses buffer `c`\n  at block (0,0,0) thread (3,0,0) at pc 5 (k.ptx:20)\nto reproduce: cudasem run k.ptx --launch k.ron\n"
        );
        let json: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
        assert_eq!(json["error"]["kind"], "out_of_bounds");
    }

    #[test]
    fn shell_quoting() {
        let args = ["cudasem", "run", "a b.ptx", "--arg", "s32:1", "it's"].map(String::from);
        assert_eq!(
            shell_command(&args),
            "cudasem run 'a b.ptx' --arg s32:1 'it'\\''s'"
        );
    }
}
