//! Programs of several launches (`launches:` in the launch file: thesis 5.7, grids of one
//! context in streams) through the commands: `run` gives the two-pass reduction's result,
//! `explore` proves the producer/consumer pair terminates with a consumer of one block and
//! prints the lasso in which the producer is never resident with two (2 SMs of one block each),
//! kernels in two streams interleave and in one stream do not, `check` reports the race between
//! kernels of two streams (and none between launches of one stream) naming each access's grid,
//! outputs name a block by its grid, and the commands that record one launch refuse a program
//! plainly.

mod common;
use common::{Scratch, cudasem_in, workspace};

const DIR: &str = "tests/kernels/programs";

fn cudasem(args: &[&str]) -> (i32, String, String) {
    cudasem_in(&workspace(), args)
}

fn file(name: &str) -> String {
    format!("{DIR}/{name}")
}

#[test]
fn run_gives_the_two_pass_reduction() {
    let (code, out, err) = cudasem(&[
        "run",
        &file("two_pass_reduce.ptx"),
        "--launch",
        &file("two_pass_reduce.ron"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2016  6112 10208 14304"), "{out}");
    assert!(out.contains("[0] 32640"), "{out}");
}

fn explore_producer_consumer(consumer_blocks: u32) -> (i32, String) {
    explore_producer_consumer_at(consumer_blocks, "blocks")
}

fn explore_producer_consumer_at(consumer_blocks: u32, level: &str) -> (i32, String) {
    let launch = file(&format!("producer_consumer_{consumer_blocks}.ron"));
    let (code, out, err) = cudasem(&[
        "explore",
        &file("producer_consumer.ptx"),
        "--launch",
        &launch,
        "--device",
        &file("two_sms.ron"),
        "--progress",
        "fair",
        "--level",
        level,
    ]);
    (code, format!("{out}{err}"))
}

#[test]
fn a_consumer_of_one_block_lets_the_producer_in() {
    let (code, out) = explore_producer_consumer(1);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("verdict: terminates under fair"), "{out}");
    assert!(out.contains("out=[42, 0]"), "{out}");
}

#[test]
fn a_consumer_of_two_blocks_keeps_the_producer_out_forever() {
    let (code, out) = explore_producer_consumer(2);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("verdict: may not terminate under fair"),
        "{out}"
    );
    assert!(
        out.contains(
            "never resident on the cycle: grid 1 (`producer`): 1 block not resident: no SM has room"
        ),
        "{out}"
    );
    // The printed replay closes the cycle.
    let replay = out
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cudasem replay "))
        .unwrap_or_else(|| panic!("no replay command:\n{out}"));
    let args: Vec<&str> = replay.split_whitespace().skip(1).collect();
    let (_, text, err) = cudasem(&args);
    assert!(text.contains("the cycle closes"), "{text}{err}");
}

#[test]
fn progress_at_the_level_of_grids() {
    // The grids are the fairness units: the consumer grid (unit 0) spins on every SM, the
    // producer grid (unit 1) is never enabled, so weak fairness owes it nothing: a fair lasso.
    let (code, out) = explore_producer_consumer_at(2, "grids");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("verdict: may not terminate under fair"),
        "{out}"
    );
    assert!(out.contains("grid 0"), "{out}");
    assert!(
        out.contains("never resident on the cycle: grid 1 (`producer`)"),
        "{out}"
    );
    let (code, out) = explore_producer_consumer_at(1, "grids");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("verdict: terminates under fair"), "{out}");
    // `check --explore` on a program: every schedule of the stream-ordered kernels is clean.
    let (code, out, err) = cudasem(&[
        "check",
        &file("stream_race.ptx"),
        "--launch",
        &file("stream_race_ordered.ron"),
        "--explore",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("fill, add_one: clean"), "{out}");
}

#[test]
fn kernels_in_two_streams_interleave_and_in_one_stream_do_not() {
    let outcomes = |launch: &str| {
        let (code, out, err) = cudasem(&[
            "explore",
            &file("stream_race.ptx"),
            "--launch",
            &file(launch),
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{out}{err}");
        let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        json["outcomes"].as_array().expect("outcomes").len()
    };
    assert_eq!(outcomes("stream_race_ordered.ron"), 1);
    assert!(outcomes("stream_race_concurrent.ron") > 1);
}

#[test]
fn check_reports_the_race_of_kernels_in_two_streams_naming_each_grid() {
    let ptx = file("stream_race.ptx");
    let ron = file("stream_race_concurrent.ron");
    let (code, out, err) = cudasem(&["check", &ptx, "--launch", &ron]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("inter-grid"), "{out}");
    assert!(out.contains("different streams"), "{out}");
    // Each access is named by its grid and kernel, its block in that grid, its thread and line.
    assert!(
        out.contains("grid 0 (`fill`) block (0, 0, 0) thread (0, 0, 0) [warp 0 lane 0]: write at tests/kernels/programs/stream_race.ptx:28"),
        "{out}"
    );
    assert!(
        out.contains("grid 1 (`add_one`) block (0, 0, 0) thread (0, 0, 0) [warp 0 lane 0]: read at tests/kernels/programs/stream_race.ptx:48"),
        "{out}"
    );
    assert!(out.contains("fill, add_one: 2 data race(s)"), "{out}");
    // The printed replay reproduces the findings.
    let replay = out
        .lines()
        .find_map(|l| l.strip_prefix("reproduce: cudasem "))
        .expect("a reproduce line");
    let args: Vec<&str> = replay.split(' ').collect();
    let (code, again, err) = cudasem(&args);
    assert_eq!(code, 1, "{again}{err}");
    assert!(
        again.contains("2 data race(s)") && again.contains("inter-grid"),
        "{again}"
    );

    let (code, out, err) = cudasem(&["check", &ptx, "--launch", &ron, "--format", "json"]);
    assert_eq!(code, 1, "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let races = json["races"].as_array().expect("races");
    assert_eq!(races.len(), 2);
    for race in races {
        assert_eq!(race["scope"], "InterGrid");
        let mut grids = vec![];
        for a in race["accesses"].as_array().unwrap() {
            // `block` is the block's index in its own grid (2 blocks each).
            assert!(a["block"].as_u64().unwrap() < 2, "{a}");
            let kernel = if a["grid"] == 0 { "fill" } else { "add_one" };
            assert_eq!(a["kernel"], kernel, "{a}");
            grids.push(a["grid"].as_u64().unwrap());
        }
        grids.sort();
        assert_eq!(grids, [0, 1]);
    }
}

#[test]
fn check_finds_no_race_between_launches_of_one_stream() {
    let (code, out, err) = cudasem(&[
        "check",
        &file("stream_race.ptx"),
        "--launch",
        &file("stream_race_ordered.ron"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("fill, add_one: clean"), "{out}");
    // pass2 reads the partial sums pass1 wrote: ordered by the stream, no race.
    let (code, out, err) = cudasem(&[
        "check",
        &file("two_pass_reduce.ptx"),
        "--launch",
        &file("two_pass_reduce.ron"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("pass1, pass2: clean"), "{out}");
}

#[test]
fn check_of_the_producer_consumer_pair() {
    // The flag is volatile on both sides (strong, system scope): no race between the grids.
    // Every consumer thread stores the flag to out[blockIdx.x]: 32 lanes of one instruction
    // write one address, a benign race (all store 42) inside the consumer grid.
    let ptx = file("producer_consumer.ptx");
    let ron = file("producer_consumer_1.ron");
    let device = file("two_sms.ron");
    let (code, out, err) = cudasem(&["check", &ptx, "--launch", &ron, "--device", &device]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("write-write, intra-warp"), "{out}");
    assert!(out.contains("grid 0 (`consumer`) block (0, 0, 0)"), "{out}");
    assert!(!out.contains("inter-grid"), "{out}");
    let (code, out, err) = cudasem(&[
        "check", &ptx, "--launch", &ron, "--device", &device, "--benign", "ignore",
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_fault_is_named_by_its_grid_in_text_and_json() {
    // add_one (grid 1) has 2 blocks of 32 on a buffer of 32 elements: its block 1 faults.
    let dir = Scratch::new("programs", "fault");
    let ron = dir.join("fault.ron");
    std::fs::write(
        &ron,
        r#"(
    buffers: { "buf": (type: "s32", len: 32) },
    launches: [
        (kernel: "fill", grid: 1, block: 32, args: [Buffer("buf"), Scalar(type: "s32", value: 7)]),
        (kernel: "add_one", grid: 2, block: 32, args: [Buffer("buf")]),
    ],
    print: ["buf"],
)"#,
    )
    .unwrap();
    let ron = ron.display().to_string();
    let ptx = file("stream_race.ptx");
    let (code, out, err) = cudasem(&["run", &ptx, "--launch", &ron]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("at grid 1 (`add_one`) block (1,0,0) thread (0,0,0) at pc"),
        "{out}"
    );
    let (code, out, err) = cudasem(&["run", &ptx, "--launch", &ron, "--format", "json"]);
    assert_eq!(code, 1, "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(json["error"]["grid"], 1, "{out}");
    assert_eq!(json["error"]["kernel"], "add_one", "{out}");
    assert_eq!(
        json["error"]["block"],
        serde_json::json!([1, 0, 0]),
        "{out}"
    );
    let (code, out, err) = cudasem(&["check", &ptx, "--launch", &ron]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("grid 1 (`add_one`) block (1, 0, 0)"), "{out}");
}

#[test]
fn traces_of_programs_record_every_launch_and_replay() {
    let dir = Scratch::new("programs", "traces");
    let ptx = file("stream_race.ptx");
    let ron = file("stream_race_concurrent.ron");
    let trace = dir.join("t.jsonl").display().to_string();
    // `run --trace`: the trace names both launches; its replay checks every step's events and
    // gives the run's buffers; with --check, the race between the streams.
    let (code, run_out, err) = cudasem(&[
        "run",
        &ptx,
        "--launch",
        &ron,
        "--schedule",
        "random:3",
        "--trace",
        &trace,
    ]);
    assert_eq!(code, 0, "{run_out}{err}");
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(
        text.contains("\"launches\"") && text.contains("add_one"),
        "{text:.400}"
    );
    let (code, out, err) = cudasem(&["replay", &trace]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("every choice was enabled"), "{out}");
    let buf = |s: &str| {
        s.lines()
            .skip_while(|l| !l.starts_with("buf"))
            .take(9)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(buf(&out), buf(&run_out), "{out}");
    let (code, out, err) = cudasem(&["replay", &trace, "--check"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("inter-grid"), "{out}");

    // `explore --save`: the lasso of the producer/consumer pair replays and closes its cycle.
    let lasso = dir.join("lasso.jsonl").display().to_string();
    let (code, out, err) = cudasem(&[
        "explore",
        &file("producer_consumer.ptx"),
        "--launch",
        &file("producer_consumer_2.ron"),
        "--device",
        &file("two_sms.ron"),
        "--progress",
        "fair",
        "--level",
        "blocks",
        "--save",
        &lasso,
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let (_, out, err) = cudasem(&["replay", &lasso]);
    assert!(out.contains("the cycle closes"), "{out}{err}");

    // `fuzz --save-failures`: a schedule in which the consumer fills both SMs first runs into
    // the step limit; its saved trace replays on the program's device and launches.
    let failures = dir.join("failures").display().to_string();
    let (code, out, err) = cudasem(&[
        "fuzz",
        &file("producer_consumer.ptx"),
        "--launch",
        &file("producer_consumer_2.ron"),
        "--device",
        &file("two_sms.ron"),
        "--runs",
        "3",
        "--max-steps",
        "300",
        "--save-failures",
        &failures,
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let saved: Vec<_> = std::fs::read_dir(&failures)
        .expect("failures saved")
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let (_, out, err) = cudasem(&["replay", &saved[0]]);
    assert!(out.contains("every choice was enabled"), "{out}{err}");
    assert!(
        out.contains("has not ended after the trace's 300 choices"),
        "{out}{err}"
    );
}

#[test]
fn commands_that_draw_or_debug_one_launch_refuse_a_program() {
    let (ptx, ron) = (file("stream_race.ptx"), file("stream_race_concurrent.ron"));
    for args in [
        vec!["run", &ptx, "--launch", &ron, "--html", "t.html"],
        vec!["check", &ptx, "--launch", &ron, "--html", "t.html"],
        vec!["debug", &ptx, "--launch", &ron],
    ] {
        let (code, out, err) = cudasem(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains("launches"), "{args:?}: {err}");
    }
}
