//! The whole-trace formats: RON (readable) and JSON Lines (a header line, then one line per
//! choice).

use super::{FormatError, check_version};
use crate::{Choice, Event, Trace};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub fn to_ron<L: Serialize, C: Serialize>(trace: &Trace<L, C>) -> Result<String, FormatError> {
    let pretty = ron::ser::PrettyConfig::new()
        .depth_limit(3)
        .separate_tuple_members(false);
    ron::ser::to_string_pretty(trace, pretty).map_err(|e| FormatError::Ron(e.to_string()))
}

/// Reads a RON trace.
pub fn from_ron<L: DeserializeOwned, C: DeserializeOwned>(
    text: &str,
) -> Result<Trace<L, C>, FormatError> {
    let t: Trace<L, C> = ron::from_str(text).map_err(|e| FormatError::Ron(e.to_string()))?;
    check_version(t.version)?;
    Ok(t)
}

/// One JSON Lines step line.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
pub(super) enum StepLine {
    Full { choice: Choice, events: Vec<Event> },
    Bare(Choice),
}

/// The trace as JSON Lines (see the module documentation).
pub fn to_json_lines<L: Serialize, C: Serialize>(
    trace: &Trace<L, C>,
) -> Result<String, FormatError> {
    let err = |e: serde_json::Error| FormatError::Json {
        line: 0,
        message: e.to_string(),
    };
    let mut header = serde_json::to_value(trace).map_err(err)?;
    if let Some(obj) = header.as_object_mut() {
        obj.insert("choices".to_string(), serde_json::Value::Array(Vec::new()));
        obj.remove("events");
    }
    let mut out = serde_json::to_string(&header).map_err(err)?;
    out.push('\n');
    for (i, c) in trace.choices.iter().enumerate() {
        let line = match trace.events.as_ref().and_then(|e| e.get(i)) {
            Some(events) => serde_json::to_string(&StepLine::Full {
                choice: *c,
                events: events.clone(),
            }),
            None => serde_json::to_string(c),
        }
        .map_err(err)?;
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

/// Reads JSON Lines. Unknown header keys are ignored (`cudasem run --trace` adds `schedule` and
/// `max_steps`); events are kept when every step line has them.
pub fn from_json_lines<L: DeserializeOwned, C: DeserializeOwned>(
    text: &str,
) -> Result<Trace<L, C>, FormatError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (i, first) = lines.next().ok_or(FormatError::Empty)?;
    let mut trace: Trace<L, C> = serde_json::from_str(first).map_err(|e| FormatError::Json {
        line: i + 1,
        message: format!("bad trace header: {e}"),
    })?;
    check_version(trace.version)?;
    let mut events = Vec::new();
    let mut all_events = true;
    for (i, line) in lines {
        let step: StepLine = serde_json::from_str(line).map_err(|e| FormatError::Json {
            line: i + 1,
            message: format!("not a choice: {e}"),
        })?;
        match step {
            StepLine::Full { choice, events: ev } => {
                trace.choices.push(choice);
                events.push(ev);
            }
            StepLine::Bare(choice) => {
                trace.choices.push(choice);
                all_events = false;
            }
        }
    }
    if all_events && !events.is_empty() {
        trace.events = Some(events);
    }
    Ok(trace)
}
