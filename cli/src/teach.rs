//! Teaching renderers of `cudasem run`: `--show stack` (the thesis-style table per warp: the
//! PTX line executed, then α, δ and the token stack after it; Figure 5.2 is the model) and
//! `--trace-format perfetto` (Chrome trace JSON that the Perfetto UI and chrome://tracing
//! open: a process per block, a track per warp, a slice per executed instruction one step
//! long, and a counter of each warp's active lanes, so divergence shows as the counter
//! dropping and slices naming their lanes).

use scheduler::Observer;
use semantics::Program;
use semantics::machine::render::{mask_string, stack_rows, stack_table};
use semantics::machine::{EventDetail, Machine};
use serde_json::json;
use std::collections::BTreeSet;
use std::ops::ControlFlow;
use traces::{Choice, Event};

/// One executed instruction and the step it was executed at (steps count from 1).
pub struct ExecutedStep {
    pub step: u64,
    pub event: Event,
}

/// The observer of the teaching views: keeps every step's `Executed` events (in full detail,
/// with the step they were executed at).
#[derive(Default)]
pub struct ExecutedSteps {
    pub rows: Vec<ExecutedStep>,
}

impl Observer for ExecutedSteps {
    fn detail(&self) -> Option<EventDetail> {
        Some(EventDetail::Full)
    }

    fn observe(&mut self, _: &Choice, events: &[Event], machine: &Machine) -> ControlFlow<()> {
        let step = machine.steps();
        self.rows.extend(
            events
                .iter()
                .filter(|e| matches!(e, Event::Executed { .. }))
                .map(|event| ExecutedStep {
                    step,
                    event: event.clone(),
                }),
        );
        ControlFlow::Continue(())
    }
}

/// How a block is named: `block 3`, or `grid 1 block 0` in a program of several launches
/// (the block's index in its grid, thesis 5.7).
pub fn block_name(machine: &Machine, block: u32) -> String {
    if machine.grids().len() > 1 {
        let (g, b) = machine.grid_of_block(block);
        format!("grid {g} block {b}")
    } else {
        format!("block {block}")
    }
}

/// The warps that executed something, in order.
fn warps(rows: &[ExecutedStep]) -> BTreeSet<(u32, u32)> {
    rows.iter()
        .filter_map(|r| match r.event {
            Event::Executed { block, warp, .. } => Some((block, warp)),
            _ => None,
        })
        .collect()
}

/// `--show stack`: one table per warp, pcs and token pcs named by their PTX line.
pub fn stack_tables(machine: &Machine, rows: &[ExecutedStep], warp_size: u32) -> String {
    let program = machine.program();
    let events: Vec<Event> = rows.iter().map(|r| r.event.clone()).collect();
    let label = |pc: u32| {
        Some(
            program
                .source
                .get(pc as usize)
                .map_or_else(|| format!("pc{pc}"), |s| s.ptx_line.to_string()),
        )
    };
    let mut s = String::new();
    for (b, w) in warps(rows) {
        s.push_str(&format!(
            "{} warp {w}: PTX line executed, then α, δ and τ after the step\n",
            block_name(machine, b)
        ));
        s.push_str(&stack_table(
            &stack_rows(&events, b, w),
            warp_size,
            true,
            &label,
        ));
        s.push('\n');
    }
    s
}

/// The instruction text at `pc`, on one line.
fn instruction(program: &Program, text: &str, pc: u32) -> String {
    program
        .source
        .get(pc as usize)
        .and_then(|s| text.get(s.span.start as usize..s.span.end as usize))
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .map(|t| t.trim_end_matches(';').to_string())
        .unwrap_or_else(|| format!("pc {pc}"))
}

/// `--trace-format perfetto`: Chrome trace JSON. One step is one microsecond.
pub fn perfetto(machine: &Machine, text: &str, rows: &[ExecutedStep], warp_size: u32) -> String {
    let program = machine.program();
    let mut trace = Vec::new();
    let blocks: BTreeSet<u32> = warps(rows).iter().map(|(b, _)| *b).collect();
    for b in &blocks {
        trace.push(
            json!({"name": "process_name", "ph": "M", "pid": b, "tid": 0,
            "args": {"name": block_name(machine, *b)}}),
        );
    }
    for (b, w) in warps(rows) {
        trace.push(json!({"name": "thread_name", "ph": "M", "pid": b, "tid": w,
            "args": {"name": format!("warp {w}")}}));
    }
    for r in rows {
        let Event::Executed {
            block,
            warp,
            pc,
            lanes,
            active,
            stack,
            next_pc,
            derivation,
            ..
        } = &r.event
        else {
            continue;
        };
        let name = instruction(program, text, *pc);
        let line = program.source.get(*pc as usize).map_or(0, |s| s.ptx_line);
        trace.push(json!({
            "name": name,
            "cat": "instruction",
            "ph": "X",
            "ts": r.step - 1,
            "dur": 1,
            "pid": block,
            "tid": warp,
            "args": {
                "pc": pc,
                "ptx_line": line,
                "lanes": mask_string(*lanes, warp_size),
                "active_after": mask_string(*active, warp_size),
                "stack_depth": stack.len(),
                "next_pc": next_pc,
                "derivation": derivation.to_string(),
            }
        }));
        trace.push(json!({
            "name": format!("warp {warp} active lanes"),
            "ph": "C",
            "ts": r.step - 1,
            "pid": block,
            "args": {"lanes": lanes.count_ones()}
        }));
    }
    let doc = json!({"traceEvents": trace, "displayTimeUnit": "ms",
        "otherData": {"producer": "cudasem", "time_unit": "one step = 1 µs"}});
    // Serializing a JSON value to a string cannot fail.
    serde_json::to_string(&doc).unwrap_or_default()
}
