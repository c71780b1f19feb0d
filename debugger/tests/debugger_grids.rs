//! The debugger on a program of several launches (thesis 5.7): `info grids`, and the grid a
//! block belongs to in `info warps` and focus lines. The machine is built directly (the CLI
//! reads the launch file).

mod debugger_common;

use debugger::{MemoryFiles, Options, Outcome, Session};
use debugger_common::*;
use semantics::machine::{ArgValue, GridLaunch, ProgramLaunch, WarpModel};
use std::sync::Arc;

fn grid(kernel: &str, blocks: u32, args: Vec<ArgValue>, stream: u32) -> GridLaunch {
    GridLaunch {
        kernel: Some(kernel.into()),
        grid: [blocks, 1, 1],
        block: [32, 1, 1],
        dynamic_shared_bytes: 0,
        args,
        stream,
    }
}

/// `consumer(flag, out)` with `consumer_blocks` blocks in stream 1, then `producer(flag)` in
/// stream 0, on 2 SMs of one block each.
fn producer_consumer(consumer_blocks: u32) -> Session {
    let ptx = workspace_file("tests/kernels/programs/producer_consumer.ptx");
    let launch = ProgramLaunch {
        buffers: vec![u32_buffer("flag", &[0]), u32_buffer("out", &[0, 0])],
        globals: vec![],
        extern_values: vec![],
        launches: vec![
            grid(
                "consumer",
                consumer_blocks,
                vec![ArgValue::Buffer(0), ArgValue::Buffer(1)],
                1,
            ),
            grid("producer", 1, vec![ArgValue::Buffer(0)], 0),
        ],
    };
    let mut c = config(WarpModel::SimtStack, 32);
    c.device.num_sms = 2;
    c.device.max_blocks_per_sm = 1;
    let options = Options {
        source: Some(Arc::from(ptx.as_str())),
        ..Options::default()
    };
    let mut s = Session::from_program(load(&ptx), launch, c, options).expect("the launch fits");
    s.set_host(Box::new(MemoryFiles::default()));
    s
}

fn ok(s: &mut Session, command: &str) -> String {
    let r = s.handle(command);
    assert_eq!(r.outcome, Outcome::Ok, "`{command}`: {}", r.text);
    r.text
}

/// Issues blocks, lowest global number first, while any can be issued.
fn issue_all(s: &mut Session) {
    loop {
        let issue = s
            .machine()
            .enabled()
            .iter()
            .enumerate()
            .filter_map(|(i, c)| match c {
                traces::Choice::Issue { block, .. } => Some((*block, i)),
                _ => None,
            })
            .min();
        let Some((_, i)) = issue else { return };
        ok(s, &format!("choose {i}"));
    }
}

#[test]
fn info_grids_lists_each_grid_and_why_the_producer_is_not_resident() {
    let mut s = producer_consumer(2);
    let banner = s.banner();
    assert!(banner.contains("a program of 2 launches"), "{banner}");
    assert!(
        banner.contains(
            "grid 1: kernel producer, grid (1,1,1), block (32,1,1), stream 0, blocks 2..3"
        ),
        "{banner}"
    );
    issue_all(&mut s);
    let info = ok(&mut s, "info grids");
    let rows: Vec<Vec<&str>> = info
        .lines()
        .take(3)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        vec![
            vec![
                "grid",
                "kernel",
                "stream",
                "phase",
                "blocks",
                "resident",
                "completed"
            ],
            vec!["0", "consumer", "1", "active", "0..2", "2", "0", "of", "2"],
            vec!["1", "producer", "0", "active", "2..3", "0", "0", "of", "1"],
        ],
        "{info}"
    );
    assert!(
        info.contains(
            "grid 1 (`producer`): 1 block not resident: no SM has room for one of its blocks (SM 0: 1 block of grid 0, 1 of 1 blocks; SM 1: 1 block of grid 0, 1 of 1 blocks"
        ),
        "{info}"
    );
}

#[test]
fn a_consumer_of_one_block_leaves_the_producer_room() {
    let mut s = producer_consumer(1);
    issue_all(&mut s);
    let info = ok(&mut s, "info grids");
    assert!(
        info.lines()
            .nth(2)
            .is_some_and(|l| l.split_whitespace().nth(5) == Some("1")),
        "{info}"
    );
    assert!(!info.contains("not resident"), "{info}");
}

#[test]
fn warps_and_focus_name_the_grid_of_a_block() {
    let mut s = producer_consumer(1);
    issue_all(&mut s);
    let warps = ok(&mut s, "info warps");
    assert!(warps.contains("0.0 (grid 0 block 0)"), "{warps}");
    assert!(warps.contains("1.0 (grid 1 block 0)"), "{warps}");
    let focus = ok(&mut s, "focus 1 0");
    assert!(
        focus.starts_with("focus: block 1 (grid 1 block 0) warp 0 lane 0\n"),
        "{focus}"
    );
    // The producer's block has one warp: warp 1 of it does not exist.
    let r = s.handle("focus 1 1");
    assert_eq!(r.text, "error: there is no warp 1 (blocks have 1)\n");
}

/// A one-kernel launch prints no grid anywhere.
#[test]
fn one_grid_prints_as_before() {
    let mut s = listing_5_5();
    let focus = ok(&mut s, "focus 0 0 1");
    assert_eq!(focus.lines().next(), Some("focus: block 0 warp 0 lane 1"));
    let info = ok(&mut s, "info grids");
    assert_eq!(info.lines().count(), 2, "{info}");
    assert!(!ok(&mut s, "info warps").contains("grid"));
}

/// Issues the lowest-numbered block that can be issued, by `choices`' index.
fn issue_one(s: &mut Session) -> String {
    let i = s
        .machine()
        .enabled()
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match c {
            traces::Choice::Issue { block, .. } => Some((*block, i)),
            _ => None,
        })
        .min()
        .expect("a block to issue")
        .1;
    ok(s, &format!("choose {i}"))
}

#[test]
fn step_lines_and_choices_name_the_grid_of_a_block() {
    let mut s = producer_consumer(1);
    let choices = ok(&mut s, "choices");
    assert!(
        choices.contains("issue block 1 (grid 1 block 0) on SM "),
        "{choices}"
    );
    assert!(
        issue_one(&mut s).starts_with("[1] block 0 (grid 0 block 0) issued on SM "),
        "the consumer's block"
    );
    let line = issue_one(&mut s);
    assert!(
        line.starts_with("[2] block 1 (grid 1 block 0) issued on SM "),
        "{line}"
    );
    let choices = ok(&mut s, "choices");
    assert!(
        choices.contains("warp 1.0 (grid 1 block 0): pc "),
        "{choices}"
    );
    // Stepping the producer's warp: the step line names its grid.
    let step = ok(&mut s, "warp 1 0");
    assert!(
        step.starts_with("[3] warp 1.0 (grid 1 block 0) pc "),
        "{step}"
    );
    let regs = ok(&mut s, "regs");
    assert!(
        regs.starts_with("registers of block 1 (grid 1 block 0) warp 0 in `producer`"),
        "{regs}"
    );
    // `continue` to the end: every block completes, each named by its grid.
    let end = ok(&mut s, "continue");
    assert!(end.contains("the kernel ended"), "{end}");
    assert!(end.contains("the kernel ended"), "{end}");
}

/// `fill(buf, 7)` with one block of 64 threads, then `add_one(buf)` with 2 blocks of 16 in
/// another stream: blocks of different shapes.
fn two_shapes() -> Session {
    let ptx = workspace_file("tests/kernels/programs/stream_race.ptx");
    let mut add_one = grid("add_one", 2, vec![ArgValue::Buffer(0)], 1);
    add_one.block = [16, 1, 1];
    let mut fill = grid(
        "fill",
        1,
        vec![
            ArgValue::Buffer(0),
            ArgValue::Scalar {
                ty: ptx_parser::ScalarType::S32,
                bits: 7,
            },
        ],
        0,
    );
    fill.block = [64, 1, 1];
    let launch = ProgramLaunch {
        buffers: vec![u32_buffer("buf", &[0; 64])],
        globals: vec![],
        extern_values: vec![],
        launches: vec![fill, add_one],
    };
    let options = Options {
        source: Some(Arc::from(ptx.as_str())),
        ..Options::default()
    };
    let mut s = Session::from_program(
        load(&ptx),
        launch,
        config(WarpModel::SimtStack, 32),
        options,
    )
    .expect("the launch fits");
    s.set_host(Box::new(MemoryFiles::default()));
    s
}

#[test]
fn each_block_has_its_own_grids_shape() {
    let mut s = two_shapes();
    issue_all(&mut s);
    // Block 0 (64 threads) has warps 0 and 1; block 1 (16 threads) only warp 0, of 16 lanes.
    let warps = ok(&mut s, "info warps");
    assert!(warps.contains("0.1 (grid 0 block 0)"), "{warps}");
    assert!(!warps.contains("1.1 "), "{warps}");
    ok(&mut s, "focus 1 0 0");
    let regs = ok(&mut s, "regs");
    let lanes: Vec<&str> = regs
        .lines()
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| {
            w.trim_end_matches(['*', 'x', 'b', 'r'])
                .parse::<u32>()
                .is_ok()
        })
        .collect();
    assert_eq!(
        lanes.len(),
        16,
        "a lane row per thread of the block: {regs}"
    );
    ok(&mut s, "focus 0 1 0");
    let regs = ok(&mut s, "regs");
    assert!(
        regs.contains("\n31"),
        "block 0's warp 1 has 32 lanes: {regs}"
    );
    let r = s.handle("warp 1 1");
    assert_eq!(
        r.text,
        "error: there is no warp 1 in block 1 (grid of 3 blocks, 1 warps per block)\n"
    );
}
