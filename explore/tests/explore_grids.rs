//! Exploration of programs of several launches (thesis 5.7, grids of one context): which grid's
//! block takes a free SM first is a choice of the search when the grids compete for room, so a
//! program whose termination depends on it is explored both ways, with and without the fold of
//! invisible steps; unit names say which grid a block belongs to.

use explore::progress::{ProgressModel, Verdict};
use explore::{Exploration, Folding, Level, Limits, explore};
use ptx_parser::ScalarType;
use scheduler::outcome::{Observe, Outcome, Status};
use scheduler::replay::{CycleCheck, replay};
use semantics::machine::{ArgValue, BufferSpec, GridLaunch, Machine, MachineConfig, ProgramLaunch};
use std::path::PathBuf;
use std::sync::Arc;
use traces::Choice;

fn zeros(name: &str, words: usize) -> BufferSpec {
    BufferSpec {
        name: name.into(),
        elem: ScalarType::S32,
        bytes: vec![0; 4 * words],
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

/// The corpus's producer/consumer pair (`tests/kernels/programs/producer_consumer.cu`): the
/// consumer spins on a flag the producer sets. `producer_first` launches the producer before
/// the consumer (in another stream either way); 2 SMs of one block each.
fn producer_consumer(consumer_blocks: u32, producer_first: bool) -> Machine {
    producer_consumer_of(consumer_blocks, producer_first, 32)
}

/// [`producer_consumer`] with blocks of `threads` threads.
fn producer_consumer_of(consumer_blocks: u32, producer_first: bool, threads: u32) -> Machine {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/kernels/programs/producer_consumer.ptx");
    let text = std::fs::read_to_string(path).unwrap();
    let parsed = ptx_parser::parse(&text);
    let program = Arc::new(semantics::load(&parsed.module, &text).unwrap().0);
    let consumer = grid(
        "consumer",
        consumer_blocks,
        threads,
        vec![ArgValue::Buffer(0), ArgValue::Buffer(1)],
        1,
    );
    let producer = grid("producer", 1, threads, vec![ArgValue::Buffer(0)], 0);
    let launches = if producer_first {
        vec![producer, consumer]
    } else {
        vec![consumer, producer]
    };
    let launch = ProgramLaunch {
        buffers: vec![zeros("flag", 1), zeros("out", 2)],
        globals: vec![],
        extern_values: vec![],
        launches,
    };
    let mut config = MachineConfig::default();
    config.device.num_sms = 2;
    config.device.max_blocks_per_sm = 1;
    Machine::from_program(program, &launch, &config).unwrap()
}

fn observe() -> Observe {
    Observe {
        buffers: vec![1],
        variables: vec![],
        registers: Vec::new(),
    }
}

fn explored(m: &Machine, level: Level, folding: Folding) -> Exploration {
    let limits = Limits {
        folding,
        ..Limits::default()
    };
    let x = explore(m, level, &observe(), limits).unwrap();
    assert_eq!(x.bound_hit, None);
    x
}

const FAIR: &str = "fair";

/// The producer launched first, the consumer's 2 blocks after it: if the consumer's blocks
/// take both SMs before the producer's is issued, the producer is never resident and the
/// consumers spin forever. Before the issue order was a choice, the search issued the earlier
/// launch's block first and found that the program always terminates.
#[test]
fn the_later_launch_may_take_every_sm_first() {
    let fair: ProgressModel = FAIR.parse().unwrap();
    let m = producer_consumer(2, true);
    for level in [Level::Blocks, Level::Grids] {
        let folded = explored(&m, level, Folding::Invisible);
        let unreduced = explored(&m, level, Folding::None);
        assert_eq!(folded.verdict(fair), Some(Verdict::Fail), "{level}");
        assert_eq!(unreduced.verdict(fair), Some(Verdict::Fail), "{level}");
        // The same lasso with and without the fold: the consumer's blocks (grid 1) take
        // both SMs and the producer's (grid 0) is never issued; the consumers' blocks step on
        // the cycle, the producer is the fair unit never enabled. The choices between the
        // issues differ (the fold takes a warp's invisible steps together), and each replays.
        for lasso in [folded.lasso(fair), unreduced.lasso(fair)] {
            let lasso = lasso.expect("a lasso");
            let issued: Vec<(u32, u32)> = lasso
                .stem
                .iter()
                .chain(&lasso.cycle)
                .filter_map(|c| match *c {
                    Choice::Issue { grid, sm, .. } => Some((grid, sm)),
                    _ => None,
                })
                .collect();
            assert_eq!(issued, vec![(1, 0), (1, 1)], "{level}");
            let stepping = if level == Level::Grids {
                "{grid 1}"
            } else {
                "{grid 1 block 0, grid 1 block 1}"
            };
            assert_eq!(folded.units.names(lasso.stepping), stepping, "{level}");
            let all: Vec<Choice> = lasso.stem.iter().chain(&lasso.cycle).copied().collect();
            let r = replay(&mut m.clone(), &all, None, Some(lasso.stem.len()), false);
            assert_eq!(r.divergence, None, "{level}");
            assert!(
                matches!(r.cycle, Some(CycleCheck::Closed { .. })),
                "{level}"
            );
        }
        assert_eq!(
            folded.lasso(fair).map(|l| l.reason),
            unreduced.lasso(fair).map(|l| l.reason),
            "{level}"
        );
        // Every run that lets the producer in terminates with both consumers reading its flag.
        let outcomes: Vec<&Outcome> = folded.outcomes.keys().collect();
        let out: Vec<u8> = [42i32, 42].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            outcomes,
            vec![&Outcome {
                status: Status::Completed,
                data: vec![out]
            }],
            "{level}"
        );
    }
}

/// With room for every block (a consumer of one block) the issue order changes nothing: the
/// issues are folded as before and the program terminates; the same when the consumer is
/// launched first (the corpus's order, whose lasso the search found before).
#[test]
fn issues_that_cannot_crowd_out_another_grid_are_folded() {
    let fair: ProgressModel = FAIR.parse().unwrap();
    for producer_first in [false, true] {
        let m = producer_consumer(1, producer_first);
        let x = explored(&m, Level::Blocks, Folding::Invisible);
        assert_eq!(x.verdict(fair), Some(Verdict::Pass));
        // Both grids' blocks are issued in the initial settle: no state branches on an issue.
        let mut init = m.clone();
        let mut taken = Vec::new();
        explore::settle(&mut init, &mut taken).unwrap();
        assert_eq!(
            taken
                .iter()
                .filter(|c| matches!(c, Choice::Issue { .. }))
                .count(),
            2,
            "{taken:?}"
        );
        assert!(
            explore::branches(&init)
                .iter()
                .all(|c| !matches!(c, Choice::Issue { .. }))
        );
    }
    let m = producer_consumer(2, false);
    let x = explored(&m, Level::Blocks, Folding::Invisible);
    assert_eq!(x.verdict(fair), Some(Verdict::Fail));
}

/// Competing issues: the search branches over grids (each grid's next block on its
/// lowest-numbered SM with room), not over SMs.
#[test]
fn competing_grids_branch_once_per_grid() {
    let m = producer_consumer(2, true);
    let mut init = m.clone();
    let mut taken = Vec::new();
    explore::settle(&mut init, &mut taken).unwrap();
    assert!(taken.is_empty(), "{taken:?}");
    assert_eq!(
        explore::branches(&init),
        vec![
            Choice::Issue {
                grid: 0,
                block: 0,
                sm: 0
            },
            Choice::Issue {
                grid: 1,
                block: 1,
                sm: 0
            },
        ]
    );
}

/// Unit names with several grids say the grid and the block's number in it; one grid's are
/// as before.
#[test]
fn unit_names_name_the_grid() {
    let m = producer_consumer(2, true);
    let blocks = explore::Units::new(&m, Level::Blocks).unwrap();
    assert_eq!(blocks.name(0), "grid 0 block 0");
    assert_eq!(blocks.name(2), "grid 1 block 1");
    let warps = explore::Units::new(&m, Level::Warps).unwrap();
    assert_eq!(warps.name(1), "grid 1 warp 0.0");
    let narrow = producer_consumer_of(2, true, 8);
    let lanes = explore::Units::new(&narrow, Level::Lanes).unwrap();
    assert_eq!(lanes.name(8 + 5), "grid 1 lane 0.0.5");
    let one = producer_consumer_single();
    let u = explore::Units::new(&one, Level::Warps).unwrap();
    assert_eq!(u.name(1), "warp 1.0");
    assert_eq!(
        explore::Units::new(&one, Level::Blocks).unwrap().name(1),
        "block 1"
    );
}

/// The consumer alone (a one-kernel launch of 2 blocks).
fn producer_consumer_single() -> Machine {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/kernels/programs/producer_consumer.ptx");
    let text = std::fs::read_to_string(path).unwrap();
    let parsed = ptx_parser::parse(&text);
    let program = Arc::new(semantics::load(&parsed.module, &text).unwrap().0);
    let launch = ProgramLaunch {
        buffers: vec![zeros("flag", 1), zeros("out", 2)],
        globals: vec![],
        extern_values: vec![],
        launches: vec![grid(
            "consumer",
            2,
            32,
            vec![ArgValue::Buffer(0), ArgValue::Buffer(1)],
            0,
        )],
    };
    Machine::from_program(program, &launch, &MachineConfig::default()).unwrap()
}

/// `fill(buf, 7)` and `fill(buf, 9)` in two streams on one SM that holds one block: the grids
/// run one after the other in either order, so the final buffer is all 7s or all 9s, whichever
/// grid took the SM second. Every search finds both outcomes (before, only the order of launch).
#[test]
fn the_grid_that_takes_the_sm_second_decides_the_outcome() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/programs/stream_race.ptx");
    let text = std::fs::read_to_string(path).unwrap();
    let parsed = ptx_parser::parse(&text);
    let program = Arc::new(semantics::load(&parsed.module, &text).unwrap().0);
    let fill = |value: i64, stream| {
        let bits = value as u64;
        grid(
            "fill",
            1,
            4,
            vec![
                ArgValue::Buffer(0),
                ArgValue::Scalar {
                    ty: ScalarType::S32,
                    bits,
                },
            ],
            stream,
        )
    };
    let launch = ProgramLaunch {
        buffers: vec![zeros("buf", 4)],
        globals: vec![],
        extern_values: vec![],
        launches: vec![fill(7, 0), fill(9, 1)],
    };
    let mut config = MachineConfig::default();
    config.device.num_sms = 1;
    config.device.max_blocks_per_sm = 1;
    let m = Machine::from_program(program, &launch, &config).unwrap();
    let observe = Observe {
        buffers: vec![0],
        variables: vec![],
        registers: Vec::new(),
    };
    let all = |v: i32| Outcome {
        status: Status::Completed,
        data: vec![[v; 4].iter().flat_map(|x| x.to_le_bytes()).collect()],
    };
    let want = vec![all(7), all(9)];
    for folding in [Folding::Invisible, Folding::None] {
        let limits = Limits {
            folding,
            ..Limits::default()
        };
        let x = explore(&m, Level::Blocks, &observe, limits).unwrap();
        let found: Vec<Outcome> = x.outcomes.keys().cloned().collect();
        assert_eq!(found, want, "{folding}");
        for info in x.outcomes.values() {
            let r = replay(&mut m.clone(), &info.witness, None, None, false);
            assert_eq!(r.divergence, None, "{folding}");
        }
        let config = explore::dfs::DfsConfig {
            reduction: explore::dfs::Reduction::SleepSets,
            memo: explore::dfs::Memo::States,
            max_transitions: 1_000_000,
            folding,
        };
        let report = explore::dfs::outcomes(&m, &observe, config);
        assert_eq!(report.bound_hit, None);
        let found: Vec<Outcome> = report.outcomes.keys().cloned().collect();
        assert_eq!(found, want, "{folding} (depth-first, sleep sets)");
    }
}
