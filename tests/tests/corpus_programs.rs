//! The programs of several launches (`tests/kernels/programs/`): every launch file resolves
//! against its module with the launches and streams it states, and the programs whose launches
//! are all in one stream give the right result when their launches run one after the other, each
//! on the memory the previous one left (the order one stream guarantees: a launch starts when the
//! previous one has completed). The machine runs one grid, so concurrent streams are not run here.

use corpus::launch::{DeviceFile, ResolvedLaunch};
use corpus::*;
use semantics::machine::{MachineConfig, Termination};
use std::path::PathBuf;
use std::sync::Arc;

const MAX_STEPS: u64 = 1_000_000;

fn programs_dir() -> PathBuf {
    kernels_dir().join("programs")
}

/// The module and resolved launches of `programs/<ron>.ron` with `programs/<ptx>.ptx`.
fn resolve_program(ptx: &str, ron: &str) -> (Arc<semantics::Program>, Vec<ResolvedLaunch>) {
    let program =
        load_file(&programs_dir().join(format!("{ptx}.ptx"))).unwrap_or_else(|e| panic!("{e}"));
    let launch =
        read_launch(&programs_dir().join(format!("{ron}.ron"))).unwrap_or_else(|e| panic!("{e}"));
    let launches = launch
        .resolve_program(&program, u64::MAX)
        .unwrap_or_else(|e| panic!("{ron}: {e}"));
    (Arc::new(program), launches)
}

/// (kernel, stream, blocks) of each launch.
fn shape(launches: &[ResolvedLaunch]) -> Vec<(String, u32, u32)> {
    launches
        .iter()
        .map(|l| {
            (
                l.resolved.kernel.clone(),
                l.stream,
                l.resolved.config.grid.iter().product(),
            )
        })
        .collect()
}

#[test]
fn every_program_resolves_with_its_streams() {
    let s = |k: &str, stream, blocks| (k.to_string(), stream, blocks);
    for (ptx, ron, want) in [
        (
            "two_pass_reduce",
            "two_pass_reduce",
            vec![s("pass1", 0, 4), s("pass2", 0, 1)],
        ),
        (
            "producer_consumer",
            "producer_consumer_1",
            vec![s("consumer", 1, 1), s("producer", 0, 1)],
        ),
        (
            "producer_consumer",
            "producer_consumer_2",
            vec![s("consumer", 1, 2), s("producer", 0, 1)],
        ),
        (
            "stream_race",
            "stream_race_concurrent",
            vec![s("fill", 0, 2), s("add_one", 1, 2)],
        ),
        (
            "stream_race",
            "stream_race_ordered",
            vec![s("fill", 0, 2), s("add_one", 0, 2)],
        ),
        (
            "stream_handoff",
            "stream_handoff_acquired",
            vec![
                s("write_and_signal", 1, 1),
                s("wait_flag", 0, 1),
                s("read_data", 0, 1),
            ],
        ),
        (
            "stream_handoff",
            "stream_handoff_released",
            vec![
                s("write_data", 0, 1),
                s("signal", 0, 1),
                s("wait_then_read", 1, 1),
            ],
        ),
    ] {
        let (_, launches) = resolve_program(ptx, ron);
        assert_eq!(shape(&launches), want, "{ron}");
    }
    let mut device = MachineConfig::default().device;
    DeviceFile::read(&programs_dir().join("two_sms.ron"))
        .unwrap_or_else(|e| panic!("{e}"))
        .apply(&mut device);
    assert_eq!((device.num_sms, device.max_blocks_per_sm), (2, 1));
}

/// Runs the launches of a one-stream program one after the other under every warp model and a
/// few schedules; each launch starts from the buffers the previous one left. Returns the final
/// buffers of each run.
fn run_in_order(ptx: &str, ron: &str) -> Vec<Vec<Vec<u8>>> {
    let (program, launches) = resolve_program(ptx, ron);
    assert!(
        launches.iter().all(|l| l.stream == launches[0].stream),
        "{ron}: not a one-stream program"
    );
    let mut finals = Vec::new();
    for model in WARP_MODELS {
        for schedule in Schedule::round_robin_and_random(3) {
            let config = config_with(model);
            let mut buffers: Option<Vec<Vec<u8>>> = None;
            for (k, l) in launches.iter().enumerate() {
                let mut launch = l.resolved.config.clone();
                if let Some(previous) = &buffers {
                    for (b, bytes) in launch.buffers.iter_mut().zip(previous) {
                        b.bytes = bytes.clone();
                    }
                }
                let run = run_launch(&program, &launch, &config, schedule, MAX_STEPS)
                    .unwrap_or_else(|e| panic!("{ron} launch {}: {e}", k + 1));
                assert_eq!(
                    run.termination,
                    Termination::Completed,
                    "{ron} launch {} ({model:?}, {})",
                    k + 1,
                    schedule.flag()
                );
                buffers = Some((0..launch.buffers.len()).map(|i| run.buffer(i)).collect());
            }
            finals.push(buffers.expect("at least one launch"));
        }
    }
    finals
}

#[test]
fn two_pass_reduction_sums_in_two_launches() {
    let (_, launches) = resolve_program("two_pass_reduce", "two_pass_reduce");
    let input = as_i32(&launches[0].resolved.config.buffers[0].bytes);
    let blocks = launches[0].resolved.config.grid[0] as usize;
    let per_block = input.len() / blocks;
    let partial: Vec<i32> = input.chunks(per_block).map(|c| c.iter().sum()).collect();
    let total: i32 = partial.iter().sum();
    assert_eq!(total, 32640, "the launch file's stated result");
    for buffers in run_in_order("two_pass_reduce", "two_pass_reduce") {
        assert_eq!(as_i32(&buffers[1]), partial);
        assert_eq!(as_i32(&buffers[2]), [total]);
    }
}

#[test]
fn kernels_in_one_stream_see_each_others_writes() {
    for buffers in run_in_order("stream_race", "stream_race_ordered") {
        assert_eq!(as_i32(&buffers[0]), vec![8; 64]);
    }
}

/// `two_contexts.ron` holds `stream_race_ordered` and `stream_race_concurrent` as two contexts
/// (thesis 5.8): each context resolves to exactly the program its one-context file gives.
#[test]
fn each_context_resolves_as_its_program_alone() {
    let program =
        load_file(&programs_dir().join("stream_race.ptx")).unwrap_or_else(|e| panic!("{e}"));
    let launch =
        read_launch(&programs_dir().join("two_contexts.ron")).unwrap_or_else(|e| panic!("{e}"));
    let contexts = launch
        .resolve_contexts(&program, u64::MAX)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(contexts.len(), 2);
    for (context, alone) in contexts
        .iter()
        .zip(["stream_race_ordered", "stream_race_concurrent"])
    {
        let (_, launches) = resolve_program("stream_race", alone);
        assert_eq!(context, &launches, "{alone}");
    }
}
