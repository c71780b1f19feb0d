//! Programs of several launches (thesis 5.7, `schedule_Grids`): stream order, concurrent grids,
//! each grid's parameters and shape, and occupancy across grids.

mod machine_common;

use machine_common::*;
use semantics::machine::{
    ArgValue, BufferSpec, GridLaunch, GridPhase, Machine, MachineConfig, MemoryKind, ProgramLaunch,
    Termination, WarpModel,
};
use traces::Choice;

fn program(buffers: Vec<BufferSpec>, launches: Vec<GridLaunch>) -> ProgramLaunch {
    ProgramLaunch {
        buffers,
        globals: vec![],
        extern_values: vec![],
        launches,
    }
}

fn cfg() -> MachineConfig {
    config(WarpModel::SimtStack, 32)
}

/// `fill(buf, value)` in stream `a` then `add_one(buf)` in stream `b`, 2 blocks of 32 each.
fn stream_race(a: u32, b: u32) -> Machine {
    let p = load_file("stream_race.ptx");
    let launch = program(
        vec![zeros("buf", 64)],
        vec![
            grid("fill", 2, 32, vec![ArgValue::Buffer(0), s32(7)], a),
            grid("add_one", 2, 32, vec![ArgValue::Buffer(0)], b),
        ],
    );
    Machine::from_program(p, &launch, &cfg()).expect("launch")
}

/// Runs to the end, checking at every step that no `Issue` of a grid whose stream predecessor
/// has not completed is enabled.
fn run_checking_stream_order(m: &mut Machine, sched: &mut dyn scheduler::Scheduler) -> Termination {
    for _ in 0..1_000_000 {
        if let Some(t) = m.termination() {
            return t.clone();
        }
        let grids = m.grids();
        for c in m.enabled() {
            if let Choice::Issue { grid, .. } = *c {
                let g = &grids[grid as usize];
                assert_eq!(
                    g.phase,
                    GridPhase::Active,
                    "{c} enabled for a grid not started"
                );
                for p in &grids[..grid as usize] {
                    if p.stream == g.stream {
                        assert_eq!(p.phase, GridPhase::Completed, "{c} before its predecessor");
                    }
                }
            }
        }
        let en = m.enabled();
        let c = en[sched
            .pick(m, en)
            .expect("the test schedulers always choose")];
        m.step(&c).expect("enabled choice refused");
    }
    panic!("no termination within the bound");
}

/// The corpus's two-pass reduction: `pass1` sums 256 inputs into 4 partials (4 blocks of 64
/// threads, 256 bytes of dynamic shared memory), then `pass2` sums the partials, both in stream 0.
fn two_pass_reduction() -> ProgramLaunch {
    let input: Vec<u32> = (0..256).collect();
    program(
        vec![
            u32_buffer("in", &input),
            zeros("partial", 4),
            zeros("out", 1),
        ],
        vec![
            GridLaunch {
                dynamic_shared_bytes: 256,
                ..grid(
                    "pass1",
                    4,
                    64,
                    vec![ArgValue::Buffer(0), ArgValue::Buffer(1)],
                    0,
                )
            },
            grid(
                "pass2",
                1,
                32,
                vec![ArgValue::Buffer(1), ArgValue::Buffer(2), s32(4)],
                0,
            ),
        ],
    )
}

#[test]
fn two_pass_reduction_in_one_stream_sums_every_element() {
    let p = load_file("two_pass_reduce.ptx");
    for seed in 0..6u64 {
        let launch = two_pass_reduction();
        let mut m = Machine::from_program(p.clone(), &launch, &cfg()).expect("launch");
        assert_eq!(m.total_blocks(), 5);
        let t = if seed == 0 {
            run(&mut m, &mut scheduler::RoundRobin::new(), 1_000_000)
        } else {
            run_checking_stream_order(&mut m, &mut scheduler::Random::new(seed))
        };
        assert_eq!(t, Termination::Completed, "seed {seed}");
        assert_eq!(words(&m.buffer(1)), vec![2016, 6112, 10208, 14304]);
        assert_eq!(words(&m.buffer(2)), vec![32640], "seed {seed}");
        assert!(m.grids().iter().all(|g| g.completed == g.shape.blocks));
    }
}

#[test]
fn each_grid_reads_its_own_parameters() {
    // The same kernel twice in one stream with different scalars: the second's value stays.
    let p = load_file("stream_race.ptx");
    for (first, second) in [(7, 9), (9, 7)] {
        let launch = program(
            vec![zeros("buf", 64)],
            vec![
                grid("fill", 2, 32, vec![ArgValue::Buffer(0), s32(first)], 0),
                grid("fill", 2, 32, vec![ArgValue::Buffer(0), s32(second)], 0),
            ],
        );
        let mut m = Machine::from_program(p.clone(), &launch, &cfg()).expect("launch");
        let t = run(&mut m, &mut scheduler::Random::new(3), 1_000_000);
        assert_eq!(t, Termination::Completed);
        assert_eq!(words(&m.buffer(0)), vec![second as u32; 64]);
    }
}

#[test]
fn kernels_in_two_streams_interleave() {
    let mut m = stream_race(0, 1);
    // Both grids start at once: the second grid's first block can be issued first.
    let issue1 = *m
        .enabled()
        .iter()
        .find(|c| matches!(c, Choice::Issue { grid: 1, .. }))
        .expect("grid 1 can be issued while grid 0 has not completed");
    assert_eq!(
        issue1,
        Choice::Issue {
            grid: 1,
            block: 2,
            sm: 0
        }
    );
    // Run add_one entirely before fill: every element ends as fill's 7 (in stream order it is 8).
    let mut steps = 0;
    while m.termination().is_none() {
        let en = m.enabled();
        let c = *en
            .iter()
            .find(|c| match c {
                Choice::Issue { grid, .. } => *grid == 1,
                Choice::Warp { block, .. } => *block >= 2,
                _ => false,
            })
            .unwrap_or(&en[0]);
        m.step(&c).expect("enabled");
        steps += 1;
        assert!(steps < 100_000);
    }
    assert_eq!(m.termination(), Some(&Termination::Completed));
    assert_eq!(words(&m.buffer(0)), vec![7; 64]);
}

#[test]
fn kernels_in_one_stream_run_one_after_the_other() {
    let m = stream_race(0, 0);
    let waits = m.grids_not_resident();
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert_eq!(
        waits[0].to_string(),
        "grid 1 (`add_one`): 2 blocks not resident: the grid waits for grid 0, launched before it in its stream, to complete (thesis section 5.7)"
    );
    assert!(stream_race(0, 1).grids_not_resident().is_empty());
    assert!(
        m.enabled()
            .iter()
            .all(|c| !matches!(c, Choice::Issue { grid: 1, .. })),
        "grid 1 waits for grid 0"
    );
    for seed in 0..8u64 {
        let mut m = stream_race(0, 0);
        let t = run_checking_stream_order(&mut m, &mut scheduler::Random::new(seed));
        assert_eq!(t, Termination::Completed);
        assert_eq!(words(&m.buffer(0)), vec![8; 64], "seed {seed}");
    }
}

/// `consumer(flag, out)` with `consumer_blocks` blocks in stream 1, then `producer(flag)` in
/// stream 0, on 2 SMs of one block each.
fn producer_consumer(consumer_blocks: u32) -> Machine {
    let p = load_file("producer_consumer.ptx");
    let launch = program(
        vec![zeros("flag", 1), zeros("out", 2)],
        vec![
            grid(
                "consumer",
                consumer_blocks,
                32,
                vec![ArgValue::Buffer(0), ArgValue::Buffer(1)],
                1,
            ),
            grid("producer", 1, 32, vec![ArgValue::Buffer(0)], 0),
        ],
    );
    let mut c = cfg();
    c.device.num_sms = 2;
    c.device.max_blocks_per_sm = 1;
    Machine::from_program(p, &launch, &c).expect("launch")
}

#[test]
fn consumer_blocks_filling_every_sm_leave_the_producer_no_room() {
    let mut m = producer_consumer(2);
    m.step(&Choice::Issue {
        grid: 0,
        block: 0,
        sm: 0,
    })
    .unwrap();
    m.step(&Choice::Issue {
        grid: 0,
        block: 1,
        sm: 1,
    })
    .unwrap();
    // Both SMs hold a consumer block: no block of the producer can be issued, and the
    // consumers spin (their warps stay enabled, so this is not a deadlock).
    for _ in 0..200 {
        assert!(
            m.enabled()
                .iter()
                .all(|c| !matches!(c, Choice::Issue { .. })),
            "{:?}",
            m.enabled()
        );
        assert!(m.termination().is_none());
        let c = m.enabled()[0];
        m.step(&c).unwrap();
    }
    assert_eq!(m.grids()[1].issued, 0);
    assert_eq!(m.grids()[1].phase, GridPhase::Active);
    let waits = m.grids_not_resident();
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert_eq!(
        waits[0].to_string(),
        "grid 1 (`producer`): 1 block not resident: no SM has room for one of its blocks (SM 0: 1 block of grid 0, 1 of 1 blocks; SM 1: 1 block of grid 0, 1 of 1 blocks; thesis section 5.7.1, issueBlocks)"
    );
    let err = m
        .step(&Choice::Issue {
            grid: 1,
            block: 2,
            sm: 0,
        })
        .unwrap_err();
    assert!(err.message.contains("grid 1"), "{err}");
}

#[test]
fn producer_resident_beside_the_consumer_lets_it_finish() {
    for blocks in [1, 2] {
        let mut m = producer_consumer(blocks);
        // The producer's block first, then round robin.
        m.step(&Choice::Issue {
            grid: 1,
            block: blocks,
            sm: 1,
        })
        .unwrap();
        let t = run(&mut m, &mut scheduler::RoundRobin::new(), 1_000_000);
        assert_eq!(t, Termination::Completed, "{blocks} consumer blocks");
        let mut want = vec![42, 0];
        if blocks == 2 {
            want[1] = 42;
        }
        assert_eq!(words(&m.buffer(1)), want);
    }
}

#[test]
fn a_launch_error_names_its_launch() {
    let p = load_file("stream_race.ptx");
    let launch = program(
        vec![zeros("buf", 64)],
        vec![
            grid("fill", 2, 32, vec![ArgValue::Buffer(0), s32(7)], 0),
            grid("nope", 2, 32, vec![ArgValue::Buffer(0)], 0),
        ],
    );
    let e = Machine::from_program(p.clone(), &launch, &cfg()).unwrap_err();
    assert!(
        e.message
            .starts_with("launch 2 of 2: kernel `nope` not found"),
        "{e}"
    );
    let launch = program(
        vec![zeros("buf", 64)],
        vec![
            grid("add_one", 2, 32, vec![ArgValue::Buffer(0)], 0),
            grid("fill", 2, 32, vec![ArgValue::Buffer(0)], 1),
        ],
    );
    let e = Machine::from_program(p, &launch, &cfg()).unwrap_err();
    assert!(
        e.message
            .starts_with("launch 2 of 2: kernel `fill` takes 2"),
        "{e}"
    );
}

#[test]
fn at_most_sixteen_grids_run_at_once() {
    let p = load_file("stream_race.ptx");
    let launches = (0..18)
        .map(|s| grid("fill", 1, 32, vec![ArgValue::Buffer(0), s32(s as i32)], s))
        .collect();
    let launch = program(vec![zeros("buf", 32)], launches);
    let mut m = Machine::from_program(p, &launch, &cfg()).expect("launch");
    let active = |m: &Machine| {
        m.grids()
            .iter()
            .filter(|g| g.phase == GridPhase::Active)
            .count()
    };
    assert_eq!(active(&m), 16);
    assert_eq!(m.grids()[16].phase, GridPhase::Waiting);
    let waits = m.grids_not_resident();
    assert_eq!(waits.len(), 2);
    assert_eq!(waits[0].grid, 16);
    assert_eq!(waits[0].why, semantics::machine::NotResident::ActiveLimit);
    let t = run(&mut m, &mut scheduler::RoundRobin::new(), 1_000_000);
    assert_eq!(t, Termination::Completed);
    assert!(m.grids().iter().all(|g| g.phase == GridPhase::Completed));
}

#[test]
fn one_launch_program_is_the_launch() {
    let p = load_file("stream_race.ptx");
    let l = launch(
        "fill",
        2,
        32,
        vec![zeros("buf", 64)],
        vec![ArgValue::Buffer(0), s32(5)],
    );
    let a = Machine::new(p.clone(), &l, &cfg()).unwrap();
    let b = Machine::from_program(p, &ProgramLaunch::single(&l), &cfg()).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.state_fingerprint(), b.state_fingerprint());
    assert_eq!(a.grids().len(), 1);
}

#[test]
fn a_deadlock_names_the_grid_of_each_waiting_warp() {
    // A block of 64 threads whose second warp exits before the barrier its first warp waits at
    // (the thesis counts no exited warp as arrived), as grid 1 after a grid 0 that completes.
    let src = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry ok() { ret; }
.visible .entry stuck()
{
    .reg .b32 %r<2>;
    .reg .pred %p<2>;
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 32;
    @%p1 bra DONE;
    bar.sync 0;
DONE:
    ret;
}
"#;
    let p = load(src);
    let launch = program(
        vec![],
        vec![
            grid("ok", 1, 32, vec![], 0),
            grid("stuck", 1, 64, vec![], 0),
        ],
    );
    let mut m = Machine::from_program(p, &launch, &cfg()).expect("launch");
    let t = run(&mut m, &mut scheduler::RoundRobin::new(), 10_000);
    let Termination::Deadlock(w) = &t else {
        panic!("{t:?}");
    };
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].grid, Some(1));
    assert!(
        t.to_string().contains("\n  grid 1 block (0, 0, 0) warp 0"),
        "{t}"
    );
}

#[test]
fn two_pass_reduction_under_its_and_cached_memory() {
    let p = load_file("two_pass_reduce.ptx");
    let launch = two_pass_reduction();
    for (model, memory) in [
        (WarpModel::Its, MemoryKind::Flat),
        (WarpModel::SimtStack, MemoryKind::Cached),
    ] {
        let mut c = config(model, 32);
        c.memory = memory;
        let mut m = Machine::from_program(p.clone(), &launch, &c).expect("launch");
        let t = run_checking_stream_order(&mut m, &mut scheduler::Random::new(11));
        assert_eq!(t, Termination::Completed, "{model:?} {memory:?}");
        assert_eq!(words(&m.buffer(2)), vec![32640], "{model:?} {memory:?}");
    }
}

#[test]
fn a_schedule_of_several_grids_replays_from_its_compact_trace() {
    let mut m = stream_race(0, 1);
    let mut rng = scheduler::Random::new(5);
    let mut choices = Vec::new();
    while m.termination().is_none() {
        let en = m.enabled();
        let c = en[scheduler::Scheduler::pick(&mut rng, &m, en).expect("random always chooses")];
        m.step(&c).expect("enabled");
        choices.push(c);
    }
    assert!(
        choices
            .iter()
            .any(|c| matches!(c, Choice::Issue { grid: 1, .. }))
    );
    let text = traces::format::CompactTrace {
        program_hash: 1,
        cycle_start: None,
        choices: choices.clone(),
    }
    .encode();
    let back = traces::format::CompactTrace::parse(&text).expect("parse");
    assert_eq!(back.choices, choices);
    let mut r = stream_race(0, 1);
    for c in &back.choices {
        r.step(c).expect("replayed choice enabled");
    }
    assert_eq!(r.state_fingerprint(), m.state_fingerprint());
    assert_eq!(r.buffer(0), m.buffer(0));
}

/// `fill` reading its value through the generic address of its parameter (`cvta.param`, as
/// clang emits for a parameter whose address is taken).
const FILL_GENERIC: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry fill_generic(
	.param .u64 fill_generic_param_0,
	.param .u32 fill_generic_param_1
)
{
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<7>;

	ld.param.u64 	%rd1, [fill_generic_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u64 	%rd3, fill_generic_param_1;
	cvta.param.u64 	%rd4, %rd3;
	ld.u32 	%r1, [%rd4];
	mov.u32 	%r2, %tid.x;
	mul.wide.u32 	%rd5, %r2, 4;
	add.s64 	%rd6, %rd2, %rd5;
	st.global.u32 	[%rd6], %r1;
	ret;
}
"#;

#[test]
fn a_generic_address_of_a_parameter_is_the_grids_own() {
    // Before, `cvta.param` gave every grid the first grid's parameter window: the second
    // launch stored the first one's value.
    let p = load(FILL_GENERIC);
    for (first, second) in [(7, 9), (9, 7)] {
        let launch = program(
            vec![zeros("buf", 32)],
            vec![
                grid(
                    "fill_generic",
                    1,
                    32,
                    vec![ArgValue::Buffer(0), s32(first)],
                    0,
                ),
                grid(
                    "fill_generic",
                    1,
                    32,
                    vec![ArgValue::Buffer(0), s32(second)],
                    0,
                ),
            ],
        );
        let mut m = Machine::from_program(p.clone(), &launch, &cfg()).expect("launch");
        let t = run(&mut m, &mut scheduler::Random::new(3), 1_000_000);
        assert_eq!(t, Termination::Completed);
        assert_eq!(words(&m.buffer(0)), vec![second as u32; 32]);
    }
}

#[test]
fn each_block_has_its_own_grids_shape() {
    // fill: 4 blocks of 16 threads (one partial warp each); add_one: 1 block of 64 (two warps).
    let p = load_file("stream_race.ptx");
    let launch = program(
        vec![zeros("buf", 64)],
        vec![
            grid("fill", 4, 16, vec![ArgValue::Buffer(0), s32(7)], 0),
            grid("add_one", 1, 64, vec![ArgValue::Buffer(0)], 0),
        ],
    );
    let mut m = Machine::from_program(p, &launch, &cfg()).expect("launch");
    for b in 0..4 {
        assert_eq!(
            (m.warps_in_block(b), m.threads_in_block(b)),
            (1, 16),
            "block {b}"
        );
    }
    assert_eq!((m.warps_in_block(4), m.threads_in_block(4)), (2, 64));
    assert_eq!((m.warps_in_block(5), m.threads_in_block(5)), (0, 0));
    // The old accessors give the largest grid's.
    assert_eq!((m.warps_per_block(), m.threads_per_block()), (2, 64));
    // Walking each block's own warps finds every warp of the program completed at the end.
    let t = run(&mut m, &mut scheduler::RoundRobin::new(), 100_000);
    assert_eq!(t, Termination::Completed);
    let warps: u32 = (0..m.total_blocks()).map(|b| m.warps_in_block(b)).sum();
    assert_eq!(warps, 6);
    for b in 0..m.total_blocks() {
        for w in 0..m.warps_in_block(b) {
            assert!(m.warp_completed(b, w), "block {b} warp {w}");
        }
    }
    assert_eq!(words(&m.buffer(0)), vec![8; 64]);
}
