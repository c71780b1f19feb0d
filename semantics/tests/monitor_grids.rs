//! The monitors on programs of several launches: a shape per grid, and the happens-before edge
//! from a grid's completion to the start of the next launch of its stream (thesis 5.7).
//! Kernels of different streams may run concurrently and race; launches of one stream never do.

mod machine_common;

use machine_common::*;
use semantics::machine::{
    ArgValue, BufferSpec, ErrorKind, GridLaunch, LaunchConfig, Machine, MemoryKind, ProgramLaunch,
    Termination, WarpModel,
};
use semantics::monitors::{Findings, MonitorConfig, Monitors, RaceKind, RaceScope};
use std::sync::Arc;

/// Runs `launches` on `buffers` under the monitors, picking among enabled choices with a
/// seeded rotation; returns the termination, the findings and the final buffer 0.
fn check(
    program: &Arc<semantics::Program>,
    buffers: Vec<BufferSpec>,
    launches: Vec<GridLaunch>,
    seed: usize,
) -> (Termination, Findings, Vec<u32>) {
    let launch = ProgramLaunch {
        buffers: buffers.clone(),
        globals: vec![],
        extern_values: vec![],
        launches,
    };
    let config = config(WarpModel::SimtStack, 32);
    let mut m = Machine::from_program(program.clone(), &launch, &config).expect("launch");
    // The monitors take the program's buffers from its first launch.
    let first = &launch.launches[0];
    let first = LaunchConfig {
        kernel: first.kernel.clone(),
        grid: first.grid,
        block: first.block,
        dynamic_shared_bytes: first.dynamic_shared_bytes,
        buffers,
        args: first.args.clone(),
        globals: vec![],
        extern_values: vec![],
    };
    let mut mon = Monitors::new(&m, &first, MonitorConfig::default());
    let mut events = Vec::new();
    let mut r = seed;
    for _ in 0..1_000_000 {
        if m.termination().is_some() {
            break;
        }
        let enabled = m.enabled();
        r = r
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let c = enabled[(r >> 33) % enabled.len()];
        events.clear();
        m.step_observed(&c, &mut events).expect("enabled choice");
        mon.observe(&events);
    }
    let t = m.termination().cloned().expect("ran to its end");
    let buf = words(&m.buffer(0));
    (t, mon.finish(), buf)
}

/// `fill(buf, 7)` in stream `a`, then `add_one(buf)` in stream `b`: `fill` with `fill_blocks`
/// blocks of `64 / fill_blocks` threads, `add_one` with 1 block of 64 (different block shapes,
/// so that thread numbering across grids of different shapes is exercised).
fn stream_race(a: u32, b: u32, fill_blocks: u32, seed: usize) -> (Termination, Findings, Vec<u32>) {
    let p = load_file("stream_race.ptx");
    check(
        &p,
        vec![zeros("buf", 64)],
        vec![
            grid(
                "fill",
                fill_blocks,
                64 / fill_blocks,
                vec![ArgValue::Buffer(0), s32(7)],
                a,
            ),
            grid("add_one", 1, 64, vec![ArgValue::Buffer(0)], b),
        ],
        seed,
    )
}

#[test]
fn kernels_in_two_streams_race_on_the_buffer() {
    for fill_blocks in [1, 2, 4] {
        for seed in 0..6 {
            let (t, f, _) = stream_race(0, 1, fill_blocks, seed);
            assert_eq!(t, Termination::Completed);
            assert!(!f.races.is_empty(), "no race with seed {seed}: {f:?}");
            for r in &f.races {
                assert_eq!(r.scope, RaceScope::InterGrid, "{r:?}");
                assert!(r.note.as_deref().unwrap().contains("different streams"));
                let grids = [r.first.grid, r.second.grid];
                assert!(
                    grids == [Some(0), Some(1)] || grids == [Some(1), Some(0)],
                    "{r:?}"
                );
                // Each side names its block in its own grid and its thread in its own block:
                // both touch the element their own numbering computes.
                for a in [&r.first, &r.second] {
                    let tpb = if a.grid == Some(0) {
                        64 / fill_blocks
                    } else {
                        64
                    };
                    let blocks = if a.grid == Some(0) { fill_blocks } else { 1 };
                    assert!(a.block < blocks && a.thread < tpb, "{a:?}");
                    let element = a.location.as_ref().expect("in buf").index;
                    assert_eq!(element, (a.block * tpb + a.thread) as u64, "{a:?}");
                    assert_eq!(a.block_idx, [a.block, 0, 0]);
                    assert_eq!(a.warp, a.thread / 32);
                }
                assert_eq!(r.first.location, r.second.location);
                // fill writes; add_one reads then writes.
                assert!(
                    matches!(
                        r.kind,
                        RaceKind::WriteRead | RaceKind::ReadWrite | RaceKind::WriteWrite
                    ),
                    "{r:?}"
                );
            }
        }
    }
}

#[test]
fn kernels_in_one_stream_do_not_race() {
    for fill_blocks in [1, 2, 4] {
        for seed in 0..6 {
            let (t, f, buf) = stream_race(0, 0, fill_blocks, seed);
            assert_eq!(t, Termination::Completed);
            assert!(f.is_clean(), "seed {seed}: {f:?}");
            assert_eq!(buf, vec![8; 64]);
        }
    }
}

#[test]
fn only_the_stream_predecessor_is_ordered() {
    // fill (stream 0), fill (stream 1), add_one (stream 0): add_one is ordered after the first
    // fill but not after the second, which may run concurrently with both.
    let p = load_file("stream_race.ptx");
    for seed in 0..6 {
        let (t, f, _) = check(
            &p,
            vec![zeros("buf", 64)],
            vec![
                grid("fill", 2, 32, vec![ArgValue::Buffer(0), s32(7)], 0),
                grid("fill", 2, 32, vec![ArgValue::Buffer(0), s32(9)], 1),
                grid("add_one", 2, 32, vec![ArgValue::Buffer(0)], 0),
            ],
            seed,
        );
        assert_eq!(t, Termination::Completed);
        assert!(!f.races.is_empty());
        for r in &f.races {
            let mut grids = [r.first.grid.unwrap(), r.second.grid.unwrap()];
            grids.sort();
            assert!(grids == [0, 1] || grids == [1, 2], "{r:?}");
        }
    }
}

#[test]
fn two_pass_reduction_is_clean() {
    let p = load_file("two_pass_reduce.ptx");
    let input: Vec<u32> = (0..256).collect();
    for seed in 0..4 {
        let mut pass1 = grid(
            "pass1",
            4,
            64,
            vec![ArgValue::Buffer(0), ArgValue::Buffer(1)],
            0,
        );
        pass1.dynamic_shared_bytes = 256;
        let (t, f, _) = check(
            &p,
            vec![
                u32_buffer("in", &input),
                zeros("partial", 4),
                zeros("out", 1),
            ],
            vec![
                pass1,
                grid(
                    "pass2",
                    1,
                    32,
                    vec![ArgValue::Buffer(1), ArgValue::Buffer(2), s32(4)],
                    0,
                ),
            ],
            seed,
        );
        assert_eq!(t, Termination::Completed);
        assert!(f.is_clean(), "seed {seed}: {f:?}");
    }
}

/// The stream_handoff program with `launches` (kernel, stream, args) on buffers data, flag, out
/// (one block of 32 threads each), over several schedules: the races found.
fn handoff(launches: &[(&str, u32, &[u32])]) -> Vec<Findings> {
    let p = load_file("stream_handoff.ptx");
    (0..6)
        .map(|seed| {
            let grids = launches
                .iter()
                .map(|&(kernel, stream, args)| {
                    let args = args.iter().map(|&b| ArgValue::Buffer(b as usize)).collect();
                    grid(kernel, 1, 32, args, stream)
                })
                .collect();
            let (t, f, _) = check(
                &p,
                vec![zeros("data", 32), zeros("flag", 1), zeros("out", 32)],
                grids,
                seed,
            );
            assert_eq!(t, Termination::Completed, "seed {seed}");
            f
        })
        .collect()
}

#[test]
fn what_a_grid_acquired_from_another_stream_passes_to_its_stream_successor() {
    // write_and_signal (stream 1) -> release/acquire -> wait_flag (stream 0) -> stream order ->
    // read_data (stream 0): the reads of data happen after the writes.
    for f in handoff(&[
        ("write_and_signal", 1, &[0, 1]),
        ("wait_flag", 0, &[1]),
        ("read_data", 0, &[0, 2]),
    ]) {
        assert!(f.is_clean(), "{f:?}");
    }
}

#[test]
fn a_release_publishes_what_its_stream_predecessors_did() {
    // write_data -> stream order -> signal (stream 0) -> release/acquire -> wait_then_read
    // (stream 1): the reads of data happen after the writes.
    for f in handoff(&[
        ("write_data", 0, &[0]),
        ("signal", 0, &[1]),
        ("wait_then_read", 1, &[1, 0, 2]),
    ]) {
        assert!(f.is_clean(), "{f:?}");
    }
}

#[test]
fn without_the_flag_the_handoff_races() {
    // The same grids without the acquire in between: write_data (stream 1) and read_data
    // (stream 0) are concurrent.
    for f in handoff(&[("write_data", 1, &[0]), ("read_data", 0, &[0, 2])]) {
        assert!(!f.races.is_empty());
        for r in &f.races {
            assert_eq!(r.scope, RaceScope::InterGrid, "{r:?}");
        }
    }
}

/// `touch(off)`: every thread writes `dyn[off / 4 + tid]` of the dynamic shared memory, then
/// reads it back; with `off` past its own grid's dynamic area the write is out of bounds.
const TOUCH: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.extern .shared .align 4 .b8 dyn[];
.visible .entry touch(.param .u32 off)
{
    .reg .b32 %r<5>;
    .reg .b64 %rd<3>;
    ld.param.u32 %r1, [off];
    mov.u32 %r2, %tid.x;
    shl.b32 %r2, %r2, 2;
    add.s32 %r1, %r1, %r2;
    mov.u64 %rd1, dyn;
    cvt.u64.u32 %rd2, %r1;
    add.s64 %rd1, %rd1, %rd2;
    st.shared.u32 [%rd1], %r2;
    ld.shared.u32 %r3, [%rd1];
    ret;
}
"#;

/// Two grids of `touch` in two streams: grid 0 with 256 bytes of dynamic shared memory and 64
/// threads, grid 1 with `small` bytes and 32 threads touching bytes `[128, 256)` of theirs.
fn two_dynamic_areas(memory: MemoryKind, small: u32) -> (Termination, Findings) {
    let program = load(TOUCH);
    let mut big = grid("touch", 1, 64, vec![s32(0)], 0);
    big.dynamic_shared_bytes = 256;
    let mut little = grid("touch", 1, 32, vec![s32(128)], 1);
    little.dynamic_shared_bytes = small;
    let launch = ProgramLaunch {
        buffers: vec![],
        globals: vec![],
        extern_values: vec![],
        launches: vec![big, little],
    };
    let mut config = config(WarpModel::SimtStack, 32);
    config.memory = memory;
    let mut m = Machine::from_program(program.clone(), &launch, &config).expect("launch");
    let first = LaunchConfig {
        kernel: Some("touch".into()),
        grid: [1, 1, 1],
        block: [64, 1, 1],
        dynamic_shared_bytes: 256,
        buffers: vec![],
        args: vec![s32(0)],
        globals: vec![],
        extern_values: vec![],
    };
    let mut mon = Monitors::new(&m, &first, MonitorConfig::default());
    let mut events = Vec::new();
    for _ in 0..1_000_000 {
        if m.termination().is_some() {
            break;
        }
        let c = m.enabled()[0];
        events.clear();
        m.step_observed(&c, &mut events).expect("enabled choice");
        mon.observe(&events);
    }
    (m.termination().cloned().expect("ran"), mon.finish())
}

#[test]
fn each_grid_has_its_own_dynamic_shared_memory() {
    for memory in [MemoryKind::Flat, MemoryKind::Cached] {
        // Grid 1 with 256 bytes of its own: every access inside, every read after a write.
        let (t, f) = two_dynamic_areas(memory, 256);
        assert_eq!(t, Termination::Completed, "{memory:?}");
        assert!(f.is_clean(), "{memory:?}: {f:?}");
        // Grid 1 with 64 bytes: bytes 128.. are past its shared memory (inside grid 0's): the
        // machine bounds-checks each block against its own grid's size (the monitors' shadow of
        // the block is that size too, so they never see an access there).
        let (t, f) = two_dynamic_areas(memory, 64);
        match &t {
            Termination::Error(e) => {
                assert_eq!(e.kind, ErrorKind::OutOfBounds, "{memory:?}: {e:?}");
                assert_eq!(e.grid, Some(1), "{memory:?}: {e:?}");
            }
            other => panic!("{memory:?}: {other:?}, {f:?}"),
        }
    }
}
