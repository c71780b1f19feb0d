//! Shared helpers of the debugger tests: load a thesis listing or corpus kernel with its
//! launch (written out here: the launch-file reader lives in the CLI), start a session, run a
//! script and collect the transcript.
#![allow(dead_code)]

use debugger::{MemoryFiles, Options, Outcome, Session};
use ptx_parser::ScalarType;
use semantics::Program;
use semantics::machine::{ArgValue, BufferSpec, LaunchConfig, MachineConfig, WarpModel};
use std::sync::Arc;

pub fn workspace_file(rel: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Parses and loads PTX; panics with the diagnostics on failure (test input is ours).
pub fn load(src: &str) -> Arc<Program> {
    let parsed = ptx_parser::parse(src);
    assert!(
        !parsed.has_errors(),
        "parse errors: {:#?}",
        parsed.diagnostics
    );
    match semantics::load(&parsed.module, src) {
        Ok((p, _)) => Arc::new(p),
        Err(d) => panic!("load errors: {d:#?}"),
    }
}

pub fn u32_buffer(name: &str, values: &[u32]) -> BufferSpec {
    BufferSpec {
        name: name.into(),
        elem: ScalarType::U32,
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

pub fn launch(kernel: &str, grid: u32, block: u32, buffers: Vec<BufferSpec>) -> LaunchConfig {
    let args = (0..buffers.len()).map(ArgValue::Buffer).collect();
    LaunchConfig {
        kernel: Some(kernel.into()),
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_shared_bytes: 0,
        buffers,
        args,
        globals: vec![],
        extern_values: Vec::new(),
    }
}

pub fn config(model: WarpModel, warp_size: u32) -> MachineConfig {
    let mut c = MachineConfig {
        warp_model: model,
        check_invariants: true,
        ..MachineConfig::default()
    };
    c.device.warp_size = warp_size;
    c
}

/// A session on `ptx` (the text is also the source for instruction texts).
pub fn session(
    ptx: &str,
    launch: LaunchConfig,
    config: MachineConfig,
    options: Options,
) -> Session {
    let program = load(ptx);
    let options = Options {
        source: Some(Arc::from(ptx)),
        ..options
    };
    let mut s = Session::new(program, launch, config, options).expect("the launch fits");
    s.set_host(Box::new(MemoryFiles::default()));
    s
}

/// Listing 5.5 (Figure 5.2): two lanes in one warp of two.
pub fn listing_5_5() -> Session {
    let ptx = workspace_file("tests/thesis/listing_5_5.ptx");
    let l = launch(
        "listing_5_5",
        1,
        2,
        vec![
            u32_buffer("a", &[3, 7]),
            u32_buffer("b", &[3, 2]),
            u32_buffer("d", &[3, 5]),
            u32_buffer("r", &[0, 0]),
            u32_buffer("c", &[0, 0]),
        ],
    );
    session(&ptx, l, config(WarpModel::SimtStack, 2), Options::default())
}

/// Runs a script: each command echoed after `(cudasem) `, then its answer; errors must not
/// end the session.
pub fn transcript(s: &mut Session, script: &str) -> String {
    let mut out = String::new();
    for line in script.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        out.push_str("(cudasem) ");
        out.push_str(line);
        out.push('\n');
        let r = s.handle(line);
        out.push_str(&r.text);
        if r.outcome == Outcome::Quit {
            break;
        }
    }
    out
}
