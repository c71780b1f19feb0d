//! The monitors through the library API, on hand-written PTX where clang's output would not show
//! the point: digest D1 (seed 001's loop counters catch a B2 violation with identical pcs, which
//! clang's unrolling of the corpus version hides), T-S1-4 (the natural loop of the Fig. 1a scan),
//! T-S2-5 under both race models, and the schedule-dependence facts behind `complete`.

use semantics::machine::{
    ArgValue, BufferSpec, DeviceConfig, EventDetail, LaunchConfig, Machine, MachineConfig,
    WarpModel,
};
use semantics::monitors::{
    DivergenceKind, Findings, Loops, MonitorConfig, Monitors, RaceModel, RaceScope,
    ScheduleDependence,
};
use std::sync::Arc;
use traces::Event;

fn load(text: &str) -> semantics::Program {
    let parsed = ptx_parser::parse(text);
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    match semantics::load(&parsed.module, text) {
        Ok((p, _)) => p,
        Err(d) => panic!("load: {d:?}"),
    }
}

fn launch(threads: u32, buffer_bytes: usize) -> LaunchConfig {
    LaunchConfig {
        kernel: None,
        grid: [1, 1, 1],
        block: [threads, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![BufferSpec {
            name: "out".to_string(),
            elem: ptx_parser::ScalarType::S32,
            bytes: vec![0; buffer_bytes],
        }],
        args: vec![ArgValue::Buffer(0)],
        globals: vec![],
        extern_values: Vec::new(),
    }
}

/// Runs round-robin with the monitors on events in `EventDetail::Monitors`; returns what they
/// found.
fn check(text: &str, l: &LaunchConfig, config: MachineConfig, model: RaceModel) -> Findings {
    check_with(text, l, config, model, EventDetail::Monitors)
}

fn check_with(
    text: &str,
    l: &LaunchConfig,
    config: MachineConfig,
    model: RaceModel,
    detail: EventDetail,
) -> Findings {
    let program = Arc::new(load(text));
    let mut m = Machine::new(program, l, &config).expect("launch fits");
    let mut mon = Monitors::new(
        &m,
        l,
        MonitorConfig {
            race_model: model,
            ..MonitorConfig::default()
        },
    );
    let mut events: Vec<Event> = Vec::new();
    for rr in 0..100_000usize {
        let enabled = m.enabled();
        if enabled.is_empty() {
            break;
        }
        let c = enabled[rr % enabled.len()];
        events.clear();
        m.step_observed_with(&c, &mut events, detail)
            .expect("enabled choice");
        mon.observe(&events);
    }
    mon.finish()
}

const D1: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry nested(.param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
OUTER:
    setp.ge.s32 %p1, %r2, 2;
    @%p1 bra DONE;
    setp.eq.s32 %p2, %r2, 0;
    selp.b32 %r3, 2, 0, %p2;
    setp.eq.s32 %p3, %r1, 0;
    selp.b32 %r4, %r3, 1, %p3;
    mov.u32 %r5, 0;
INNER:
    setp.ge.s32 %p1, %r5, %r4;
    @%p1 bra NEXT;
    bar.sync 0;
    add.s32 %r5, %r5, 1;
    bra.uni INNER;
NEXT:
    add.s32 %r2, %r2, 1;
    bra.uni OUTER;
DONE:
    ret;
}
"#;

/// D1: the second synchronisation pairs thread 0 at (outer 1, inner 2) with thread 1 at (outer 2,
/// inner 1): one barrier pc, different β.
#[test]
fn d1_loop_counters_differ_at_one_barrier() {
    for config in [
        MachineConfig {
            warp_model: WarpModel::Threads,
            ..MachineConfig::default()
        },
        MachineConfig {
            device: DeviceConfig {
                warp_size: 1,
                ..DeviceConfig::default()
            },
            ..MachineConfig::default()
        },
    ] {
        let f = check(D1, &launch(2, 8), config, RaceModel::Interleaving);
        let d = f
            .divergences
            .iter()
            .find(|d| d.kind == DivergenceKind::LoopIterations)
            .unwrap_or_else(|| panic!("{:?}: {:?}", config.warp_model, f.divergences));
        assert_eq!(d.first.pc, d.second.pc, "a pc-only check would miss it");
        assert_ne!(d.first.loop_counters, d.second.loop_counters);
        let mut counters = [
            d.first.loop_counters.clone(),
            d.second.loop_counters.clone(),
        ];
        counters.sort();
        assert_eq!(counters, [vec![1, 2], vec![2, 1]]);
    }
}

/// D1 under the SIMT stack: lanes 0 and 1 of one warp diverge around `bar.sync`, and the report
/// names the pc where the missing lane resumes, read from the SIMT stack of the barrier's
/// `Executed` event, which `EventDetail::Monitors` keeps: the findings are those of full events.
#[test]
fn lean_events_keep_the_stack_the_divergence_report_reads() {
    let run = |detail| {
        check_with(
            D1,
            &launch(2, 8),
            MachineConfig::default(),
            RaceModel::Interleaving,
            detail,
        )
    };
    let lean = run(EventDetail::Monitors);
    assert_eq!(lean, run(EventDetail::Full));
    let d = lean
        .divergences
        .iter()
        .find(|d| d.kind == DivergenceKind::DivergentWarp)
        .unwrap_or_else(|| panic!("{:?}", lean.divergences));
    assert_eq!(d.second.what, "inactive (diverged): resumes here");
    assert_ne!(d.first.pc, d.second.pc);
}

/// T-S1-4: Fig. 1a's CFG has exactly one natural loop, enclosing both barriers.
#[test]
fn scan_has_one_natural_loop_around_both_barriers() {
    let program = load(include_str!("../../tests/kernels/race/scan_ok.ptx"));
    let loops = Loops::of(&program);
    assert_eq!(loops.count(), 1);
    let bars: Vec<u32> = program
        .instructions
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i.op, semantics::program::Op::Barrier { .. }))
        .map(|(pc, _)| pc as u32)
        .collect();
    assert_eq!(bars.len(), 2);
    for pc in bars {
        assert_eq!(loops.enclosing(pc), &[0]);
    }
    let f = check(
        include_str!("../../tests/kernels/race/scan_ok.ptx"),
        &LaunchConfig {
            buffers: vec![BufferSpec {
                name: "sum".to_string(),
                elem: ptx_parser::ScalarType::S32,
                bytes: (1..=64u32).flat_map(|v| v.to_le_bytes()).collect(),
            }],
            ..launch(64, 0)
        },
        MachineConfig::default(),
        RaceModel::Interleaving,
    );
    assert!(f.is_clean(), "{f:?}");
}

const SAME_ADDRESS: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry same(.param .u64 out)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    st.global.u32 [%rd1], %r1;
    ret;
}
"#;

/// T-S2-5: `A[0] = tid` is a write-write race between two lanes of one instruction under both
/// race models.
#[test]
fn same_instruction_same_address_races_in_both_models() {
    for model in [RaceModel::Interleaving, RaceModel::WarpSync] {
        let f = check(
            SAME_ADDRESS,
            &launch(32, 4),
            MachineConfig::default(),
            model,
        );
        assert_eq!(f.races.len(), 1, "{model:?}");
        let r = &f.races[0];
        assert_eq!(r.scope, RaceScope::IntraWarp);
        assert_eq!(r.first.pc, r.second.pc);
        assert_eq!(
            r.first.location.as_ref().map(|l| l.name.as_str()),
            Some("out")
        );
    }
}

#[test]
fn schedule_dependence_of_corpus_kernels() {
    let scan = load(include_str!("../../tests/kernels/race/scan_ok.ptx"));
    assert!(ScheduleDependence::of(&scan).schedule_independent());
    let histo = load(include_str!("../../tests/kernels/race/histo_atomic.ptx"));
    let d = ScheduleDependence::of(&histo);
    assert!(!d.schedule_independent());
    assert_eq!(d.atomics.len(), 1);
}

/// Whole-warp accesses reach the monitors as one `Event::WarpMemory` under
/// `EventDetail::Monitors` and as one `Memory` event per lane under `Full`: the findings (races
/// with their witnesses, steps and occurrence counts, memory errors, divergences) must be the
/// same, for racy and clean corpus kernels, under both race models and warp models.
#[test]
fn warp_memory_events_find_what_lane_events_find() {
    let words = |n: usize, f: &dyn Fn(usize) -> i32| -> Vec<u8> {
        (0..n).flat_map(|i| f(i).to_le_bytes()).collect()
    };
    let buffer = |name: &str, bytes: Vec<u8>| BufferSpec {
        name: name.to_string(),
        elem: ptx_parser::ScalarType::S32,
        bytes,
    };
    let launch = |grid: u32, buffers: Vec<BufferSpec>| LaunchConfig {
        kernel: None,
        grid: [grid, 1, 1],
        block: [64, 1, 1],
        dynamic_shared_bytes: 0,
        args: (0..buffers.len()).map(ArgValue::Buffer).collect(),
        buffers,
        globals: vec![],
        extern_values: Vec::new(),
    };
    let cases: Vec<(&str, &str, LaunchConfig)> = vec![
        (
            "scan_no_first_barrier",
            include_str!("../../tests/kernels/race/scan_no_first_barrier.ptx"),
            launch(1, vec![buffer("sum", words(64, &|i| i as i32 + 1))]),
        ),
        (
            "scan_ok",
            include_str!("../../tests/kernels/race/scan_ok.ptx"),
            launch(1, vec![buffer("sum", words(64, &|i| i as i32 + 1))]),
        ),
        (
            "histo_plain",
            include_str!("../../tests/kernels/race/histo_plain.ptx"),
            launch(
                1,
                vec![
                    buffer("A", words(64, &|i| (i * 7 % 16) as i32)),
                    buffer("out", vec![0; 64]),
                ],
            ),
        ),
        (
            "warp_reduce",
            include_str!("../../tests/kernels/race/warp_reduce.ptx"),
            launch(
                2,
                vec![
                    buffer("in", words(128, &|i| i as i32 + 1)),
                    buffer("out", vec![0; 8]),
                ],
            ),
        ),
        (
            "gen_hists",
            include_str!("../../tests/kernels/race/gen_hists.ptx"),
            launch(
                1,
                vec![
                    buffer("data", words(64, &|i| (i * 37 % 1000) as i32)),
                    buffer("out", vec![0; 256]),
                ],
            ),
        ),
        (
            "fence_reduce",
            include_str!("../../tests/kernels/race/fence_reduce.ptx"),
            launch(
                4,
                vec![
                    buffer("in", words(256, &|i| i as i32 + 1)),
                    buffer("partial", vec![0; 16]),
                    buffer("count", vec![0; 4]),
                    buffer("out", vec![0; 4]),
                ],
            ),
        ),
    ];
    let mut racy = 0;
    for (name, text, l) in &cases {
        for model in [RaceModel::Interleaving, RaceModel::WarpSync] {
            for warp_model in [WarpModel::SimtStack, WarpModel::Its] {
                let config = MachineConfig {
                    warp_model,
                    ..MachineConfig::default()
                };
                let run = |detail| check_with(text, l, config, model, detail);
                let lean = run(EventDetail::Monitors);
                assert_eq!(
                    lean,
                    run(EventDetail::Full),
                    "{name} {model:?} {warp_model:?}"
                );
                racy += usize::from(!lean.races.is_empty());
            }
        }
    }
    // The comparison means something only if races were found.
    assert!(racy >= 8, "{racy} racy runs");
}

/// A vector load's sink element (`{%r2, _}`) still reads memory (PTX ISA 9.7.9.8): thread 32's
/// load of `s[1]` races with thread 0's store there, though nothing keeps the loaded value.
#[test]
fn a_sink_element_of_a_vector_load_is_an_access() {
    const SINK: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry sink(.param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .shared .align 8 .b32 s[2];
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 st.shared.v2.u32 [s], {%r1, %r1};
    setp.eq.u32 %p1, %r1, 32;
    @%p1 ld.shared.v2.u32 {%r2, _}, [s];
    ret;
}
"#;
    let f = check(
        SINK,
        &launch(64, 4),
        MachineConfig::default(),
        RaceModel::Interleaving,
    );
    // One report per pair of instructions: the two elements are its two occurrences.
    assert_eq!(f.races.len(), 1, "{:?}", f.races);
    let r = &f.races[0];
    assert_eq!((r.first.thread, r.second.thread), (0, 32));
    assert_eq!(r.scope, RaceScope::InterWarp);
    assert_eq!(r.occurrences, 2, "s[0] and the sink element's s[1]: {r:?}");
}
