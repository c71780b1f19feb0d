//! The teaching page of a program of several launches (thesis 5.7): grids named in every text,
//! each grid's kernel, stream and phase, launches waiting for their stream predecessor, blocks
//! of each grid's own shape; a one-kernel launch's page data is as before. The machine is built
//! directly (the CLI reads the launch file).

use ptx_parser::ScalarType;
use semantics::machine::{
    ArgValue, BufferSpec, GridLaunch, LaunchConfig, Machine, MachineConfig, ProgramLaunch,
    WarpModel,
};
use std::sync::Arc;
use traces::Choice;
use view::model::PageData;
use view::{Sources, ViewOptions};

fn load(name: &str) -> Arc<semantics::Program> {
    let path = format!(
        "{}/../tests/kernels/programs/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let src = std::fs::read_to_string(&path).expect("corpus PTX");
    let parsed = ptx_parser::parse(&src);
    assert!(!parsed.has_errors(), "{:#?}", parsed.diagnostics);
    Arc::new(semantics::load(&parsed.module, &src).expect("loads").0)
}

fn zeros(name: &str, n: usize) -> BufferSpec {
    BufferSpec {
        name: name.into(),
        elem: ScalarType::U32,
        bytes: vec![0; 4 * n],
    }
}

fn s32(v: i32) -> ArgValue {
    ArgValue::Scalar {
        ty: ScalarType::S32,
        bits: v as u32 as u64,
    }
}

fn grid(kernel: &str, blocks: u32, threads: u32, args: Vec<ArgValue>, stream: u32) -> GridLaunch {
    GridLaunch {
        kernel: Some(kernel.into()),
        grid: [blocks, 1, 1],
        block: [threads, 1, 1],
        dynamic_shared_bytes: 0,
        args,
        stream,
    }
}

fn config() -> MachineConfig {
    let mut c = MachineConfig {
        warp_model: WarpModel::SimtStack,
        ..MachineConfig::default()
    };
    c.device.warp_size = 32;
    c
}

/// `fill(buf, 7)` (`fill_blocks` blocks of `fill_threads`) in stream `a`, then `add_one(buf)`
/// (2 blocks of 32) in stream `b`.
fn stream_race(a: u32, b: u32, fill_blocks: u32, fill_threads: u32) -> Machine {
    let launch = ProgramLaunch {
        buffers: vec![zeros("buf", 64)],
        globals: vec![],
        extern_values: vec![],
        launches: vec![
            grid(
                "fill",
                fill_blocks,
                fill_threads,
                vec![ArgValue::Buffer(0), s32(7)],
                a,
            ),
            grid("add_one", 2, 32, vec![ArgValue::Buffer(0)], b),
        ],
    };
    Machine::from_program(load("stream_race.ptx"), &launch, &config()).expect("launch")
}

/// The choices of a run that takes the `k`-th enabled choice at step `k` (modulo their
/// number): every grid gets steps, concurrent ones interleaved.
fn rotating_run(m: &Machine, max: usize) -> Vec<Choice> {
    let mut m = m.clone();
    let mut out = Vec::new();
    while m.termination().is_none() && out.len() < max {
        let en = m.enabled();
        if en.is_empty() {
            break;
        }
        let c = en[out.len() % en.len()];
        m.step(&c).expect("an enabled choice steps");
        out.push(c);
    }
    out
}

fn record(m: Machine, choices: &[Choice], options: &ViewOptions) -> PageData {
    let sources = Sources {
        kernel: "fill, add_one".into(),
        ..Sources::default()
    };
    view::record::record(m, choices, &sources, options).expect("the run replays")
}

fn texts(d: &PageData) -> Vec<String> {
    d.steps
        .iter()
        .flat_map(|s| s.e.iter().map(|e| e.text.clone()))
        .collect()
}

#[test]
fn the_page_names_each_grid_its_kernel_and_stream() {
    let m = stream_race(0, 1, 2, 32);
    let choices = rotating_run(&m, 10_000);
    let d = record(m, &choices, &ViewOptions::default());
    assert_eq!(d.meta.termination.as_deref(), Some("completed"));
    let g: Vec<(String, u32, u32, u32)> = d
        .grids
        .iter()
        .map(|g| (g.kernel.clone(), g.stream, g.base, g.blocks))
        .collect();
    assert_eq!(
        g,
        [("fill".into(), 0, 0, 2), ("add_one".into(), 1, 2, 2)],
        "grids in launch order, blocks numbered across them"
    );
    let t = texts(&d);
    // Blocks are named local to their grid: global block 3 is grid 1's block 1.
    for want in [
        "grid 1 block 1 issued on SM",
        "grid 1 block 1 warp 0 executed line",
        "grid 0 block 0 warp 0 executed line",
        "grid 1 block 1 completed",
    ] {
        assert!(
            t.iter().any(|x| x.starts_with(want)),
            "no `{want}` in {t:#?}"
        );
    }
    assert!(
        !t.iter()
            .any(|x| x.starts_with("warp ") || x.contains("block 3")),
        "a global block number leaked: {t:#?}"
    );
    // Choices taken and offered name grids too.
    let issue = d
        .steps
        .iter()
        .find(|s| s.k == "issue" && s.c.contains("grid 1"))
        .expect("an issue of grid 1");
    assert!(issue.c.starts_with("issue grid 1 block "), "{}", issue.c);
    assert!(d.steps.iter().any(|s| s.c == "grid 1 block 0 warp 0"));
    assert!(
        d.steps
            .iter()
            .flat_map(|s| &s.o)
            .all(|o| !o.starts_with("warp ")),
        "offered choices name grids"
    );
    // Every warp is one of the 4 blocks' single warp.
    let mut warps = d.warps.clone();
    warps.sort_unstable();
    assert_eq!(warps, [[0, 0], [1, 0], [2, 0], [3, 0]]);
}

#[test]
fn a_launch_waits_for_its_stream_predecessor_and_the_page_says_so() {
    let m = stream_race(0, 0, 2, 32);
    let choices = rotating_run(&m, 10_000);
    let d = record(m, &choices, &ViewOptions::default());
    let start = d
        .start
        .g
        .as_ref()
        .expect("the start state holds every grid's");
    assert_eq!(start[0].phase, "active");
    assert_eq!(start[1].phase, "waiting");
    let why = start[1].why.as_deref().expect("why grid 1 is not resident");
    assert!(
        why.contains("waits for grid 0, launched before it in its stream"),
        "{why}"
    );
    // The step that completes grid 0's last block starts grid 1; grid 1 is issued only then.
    let started = d
        .steps
        .iter()
        .position(|s| s.s.g.as_ref().is_some_and(|g| g[1].phase == "active"))
        .expect("grid 1 starts");
    let completed = &d.steps[started].s.g.as_ref().expect("grid states")[0];
    assert_eq!(
        (
            completed.phase,
            completed.completed,
            completed.why.as_deref()
        ),
        ("completed", 2, None)
    );
    assert!(
        d.steps[started]
            .e
            .iter()
            .any(|e| e.text == "grid 0 block 1 completed" || e.text == "grid 0 block 0 completed")
    );
    assert!(
        !d.steps[..started]
            .iter()
            .any(|s| s.k == "issue" && s.c.contains("grid 1")),
        "grid 1 issued before grid 0 completed"
    );
    // Grid states are recorded as changes: only in steps that changed one.
    let changes = d.steps.iter().filter(|s| s.s.g.is_some()).count();
    assert!(changes > 0 && changes < d.steps.len() / 2, "{changes}");
}

#[test]
fn each_grid_keeps_its_own_block_shape() {
    // `fill`: 1 block of 64 threads (2 warps); `add_one`: 2 blocks of 32 (1 warp each).
    let m = stream_race(0, 1, 1, 64);
    let choices = rotating_run(&m, 10_000);
    let d = record(m, &choices, &ViewOptions::default());
    let mut warps = d.warps.clone();
    warps.sort_unstable();
    assert_eq!(warps, [[0, 0], [0, 1], [1, 0], [2, 0]]);
    assert!(
        texts(&d)
            .iter()
            .any(|t| t.starts_with("grid 0 block 0 warp 1 executed"))
    );
}

#[test]
fn a_lasso_says_which_grid_never_becomes_resident() {
    // A consumer grid of 2 blocks spinning on a flag that the producer, launched after it in
    // another stream, sets: on 2 SMs of one block each the producer never becomes resident.
    let launch = ProgramLaunch {
        buffers: vec![zeros("flag", 1), zeros("out", 2)],
        globals: vec![],
        extern_values: vec![],
        launches: vec![
            grid(
                "consumer",
                2,
                32,
                vec![ArgValue::Buffer(0), ArgValue::Buffer(1)],
                1,
            ),
            grid("producer", 1, 32, vec![ArgValue::Buffer(0)], 0),
        ],
    };
    let mut c = config();
    c.device.num_sms = 2;
    c.device.max_blocks_per_sm = 1;
    let m = Machine::from_program(load("producer_consumer.ptx"), &launch, &c).expect("launch");
    let choices = rotating_run(&m, 400);
    assert_eq!(choices.len(), 400, "the consumers spin");
    let options = ViewOptions {
        cycle_start: Some(200),
        ..ViewOptions::default()
    };
    let d = record(m, &choices, &options);
    let why = d.lasso.expect("a lasso").why.join("\n");
    assert!(
        why.contains(
            "In the cycle, grid 1 (`producer`): 1 block not resident: no SM has room for one of its blocks (SM 0: 1 block of grid 0, 1 of 1 blocks"
        ),
        "{why}"
    );
    assert!(why.contains("grid 0 block 1 warp 0"), "{why}");
}

#[test]
fn a_one_kernel_page_names_no_grid() {
    let launch = LaunchConfig {
        kernel: Some("add_one".into()),
        grid: [2, 1, 1],
        block: [32, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![zeros("buf", 64)],
        args: vec![ArgValue::Buffer(0)],
        globals: vec![],
        extern_values: vec![],
    };
    let m = Machine::new(load("stream_race.ptx"), &launch, &config()).expect("launch");
    let choices = rotating_run(&m, 10_000);
    let d = record(m, &choices, &ViewOptions::default());
    assert!(d.grids.is_empty());
    assert!(d.start.g.is_none() && d.steps.iter().all(|s| s.s.g.is_none()));
    let t = texts(&d);
    assert!(t.iter().any(|x| x.starts_with("warp 1.0 executed line")));
    assert!(t.iter().any(|x| x.starts_with("block 1 issued on SM")));
    assert!(!t.iter().any(|x| x.contains("grid")), "{t:#?}");
    // The page's data has no field a one-kernel page did not have.
    let json = serde_json::to_value(&d).expect("serializes");
    assert!(json.get("grids").is_none());
    assert!(json["start"].get("g").is_none());
    assert!(json["steps"][0]["s"].get("g").is_none());
}
