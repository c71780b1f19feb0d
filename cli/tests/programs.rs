//! Programs of several launches (`launches:` in the launch file: thesis 5.7, grids of one
//! context in streams) through the commands: `run` gives the two-pass reduction's result,
//! `explore` proves the producer/consumer pair terminates with a consumer of one block and
//! prints the lasso in which the producer is never resident with two (2 SMs of one block each),
//! kernels in two streams interleave and in one stream do not, `check` reports the race between
//! kernels of two streams (and none between launches of one stream) naming each access's grid,
//! outputs name a block by its grid, the teaching page draws a program's grids, and a launch
//! file of several contexts (thesis 5.8) runs each context in turn.

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
    // The lasso's steps name each warp's grid and its block in that grid: the consumer's
    // second block is global block 1, block 1 of grid 0.
    let cycle = out.split("cycle:").nth(1).expect("a cycle");
    assert!(cycle.contains("(grid 0 block "), "{out}");
    assert!(!cycle.contains("(grid 1 "), "{out}");
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
fn check_names_the_cu_lines_of_a_race_between_kernels() {
    if !common::clang_available() {
        eprintln!("skipped: no clang");
        return;
    }
    let dir = Scratch::new("programs", "cu");
    let cu = dir.join("two_streams.cu");
    std::fs::write(
        &cu,
        r#"#include "cudasem_cuda.h"

extern "C" __global__ void fill(int *buf, int value) {
    buf[blockIdx.x * blockDim.x + threadIdx.x] = value;
}

extern "C" __global__ void add_one(int *buf) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[i] = buf[i] + 1;
}
"#,
    )
    .unwrap();
    let (code, out, err) = cudasem(&[
        "check",
        &cu.display().to_string(),
        "--launch",
        &file("stream_race_concurrent.ron"),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(
            "grid 1 (`add_one`) block (0, 0, 0) thread (0, 0, 0) [warp 0 lane 0]: read at "
        ),
        "{out}"
    );
    assert!(out.contains("(two_streams.cu:9)"), "{out}");
    assert!(out.contains("(two_streams.cu:4)"), "{out}");
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

/// The page's data blob.
fn page_data(html: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(html).expect("the page");
    let open = r#"<script type="application/json" id="data">"#;
    let start = text.find(open).expect("the data blob") + open.len();
    let end = start + text[start..].find("</script>").expect("its end");
    serde_json::from_str(&text[start..end]).expect("the data is JSON")
}

/// Every event text of the page's steps.
fn event_texts(data: &serde_json::Value) -> Vec<String> {
    data["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .flat_map(|s| s["e"].as_array().expect("events").iter())
        .map(|e| e["text"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn the_teaching_page_of_a_program_names_grids() {
    let dir = Scratch::new("programs", "html");
    let (ptx, ron) = (file("stream_race.ptx"), file("stream_race_ordered.ron"));
    let html = dir.join("run.html").display().to_string();
    let trace = dir.join("t.jsonl").display().to_string();
    let (code, out, err) = cudasem(&[
        "run", &ptx, "--launch", &ron, "--html", &html, "--trace", &trace,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let data = page_data(&html);
    assert_eq!(data["meta"]["kernel"], "fill, add_one");
    let grids: Vec<(String, u64)> = data["grids"]
        .as_array()
        .expect("the program's grids")
        .iter()
        .map(|g| {
            (
                g["kernel"].as_str().unwrap().to_string(),
                g["stream"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(grids, [("fill".to_string(), 0), ("add_one".to_string(), 0)]);
    let texts = event_texts(&data);
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("grid 1 block 1 warp 0 executed line")),
        "{texts:?}"
    );
    // The second launch waits for the first, and the page says why.
    let start = &data["start"]["g"][1];
    assert_eq!(start["phase"], "waiting");
    assert!(
        start["why"].as_str().unwrap().contains("waits for grid 0"),
        "{start}"
    );
    // `view` of the run's trace draws the same steps.
    let viewed = dir.join("view.html").display().to_string();
    let (code, out, err) = cudasem(&["view", &trace, &ptx, "-o", &viewed]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(page_data(&viewed)["steps"], data["steps"]);
    // `explore --html` of the producer/consumer lasso: the producer is never resident.
    let lasso = dir.join("lasso.html").display().to_string();
    let (code, out, err) = cudasem(&[
        "explore",
        &file("producer_consumer.ptx"),
        "--launch",
        &file("producer_consumer_2.ron"),
        "--device",
        &file("two_sms.ron"),
        "--progress",
        "fair",
        "--html",
        &lasso,
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let why = page_data(&lasso)["lasso"]["why"].to_string();
    assert!(
        why.contains("In the cycle, grid 1 (`producer`): 1 block not resident"),
        "{why}"
    );
}

/// `two_contexts.ron`: `stream_race` in one stream (context 0) and in two (context 1).
fn contexts(command: &[&str]) -> (i32, String, String) {
    let (ptx, ron) = (file("stream_race.ptx"), file("two_contexts.ron"));
    let mut args = vec![command[0], &ptx, "--launch", &ron];
    args.extend(&command[1..]);
    cudasem(&args)
}

/// The text of each context's report (`context N:` heads it).
fn per_context(out: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for line in out.lines() {
        if line.starts_with("context ") && line.ends_with(':') {
            assert_eq!(line, format!("context {}:", parts.len()), "{out}");
            parts.push(String::new());
        } else if let Some(p) = parts.last_mut() {
            p.push_str(line);
            p.push('\n');
        }
    }
    parts
}

#[test]
fn run_reports_each_context() {
    let (code, out, err) = contexts(&["run"]);
    assert_eq!(code, 0, "{out}{err}");
    let parts = per_context(&out);
    assert_eq!(parts.len(), 2, "{out}");
    // Context 0 runs its launches in one stream: every element is 8.
    let values: Vec<&str> = parts[0]
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix('['))
        .flat_map(|l| l.split(']').nth(1).unwrap_or("").split_whitespace())
        .collect();
    assert_eq!(values, vec!["8"; 64], "{}", parts[0]);
    let (code, out, err) = contexts(&["run", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let reports: serde_json::Value = serde_json::from_str(&out).expect("one JSON array");
    assert_eq!(reports.as_array().map(Vec::len), Some(2), "{out}");
    // One context alone.
    let (code, alone, err) = contexts(&["run", "--context", "0"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(alone, parts[0]);
    let (code, _, err) = contexts(&["run", "--context", "2"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--context 2: the launch file holds 2 contexts, 0 to 1"),
        "{err}"
    );
}

#[test]
fn check_reports_each_context_and_exits_with_the_worst() {
    let (code, out, err) = contexts(&["check"]);
    assert_eq!(code, 1, "context 1 races: {out}{err}");
    let parts = per_context(&out);
    assert_eq!(parts.len(), 2, "{out}");
    assert!(parts[0].contains("fill, add_one: clean"), "{}", parts[0]);
    assert!(parts[1].contains("2 data race(s)"), "{}", parts[1]);
    // The reproduce line names the context, and replays.
    let line = parts[1]
        .lines()
        .find_map(|l| l.strip_prefix("reproduce: cudasem "))
        .expect("a reproduce line");
    assert!(line.contains("--context 1"), "{line}");
    let words: Vec<&str> = line.split_whitespace().collect();
    let (code, out, err) = cudasem(&words);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("2 data race(s)"), "{out}");
    let (code, out, _) = contexts(&["check", "--format", "json"]);
    assert_eq!(code, 1);
    let reports: serde_json::Value = serde_json::from_str(&out).expect("one JSON array");
    assert_eq!(reports.as_array().map(Vec::len), Some(2), "{out}");
}

#[test]
fn fuzz_and_explore_report_each_context() {
    let (code, out, err) = contexts(&["fuzz", "--runs", "4"]);
    assert_eq!(code, 0, "{out}{err}");
    let parts = per_context(&out);
    assert_eq!(parts.len(), 2, "{out}");
    assert!(parts[0].contains("outcomes (1 distinct)"), "{}", parts[0]);
    let (code, out, err) = contexts(&["explore"]);
    assert_eq!(code, 0, "{out}{err}");
    let parts = per_context(&out);
    assert_eq!(parts.len(), 2, "{out}");
    // Alone, context 0 has one outcome; context 1's streams race: more than one.
    assert!(parts[0].contains("outcomes (1):"), "{}", parts[0]);
    assert!(!parts[1].contains("outcomes (1):"), "{}", parts[1]);
    assert!(
        parts[0].contains("--context 0"),
        "its witness names it: {}",
        parts[0]
    );
    let (code, out, _) = contexts(&["explore", "--format", "json"]);
    assert_eq!(code, 0);
    let reports: serde_json::Value = serde_json::from_str(&out).expect("one JSON array");
    assert_eq!(reports.as_array().map(Vec::len), Some(2), "{out}");
}

#[test]
fn commands_of_one_context_refuse_several() {
    let (code, out, err) = contexts(&["debug"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("the launch file holds 2 contexts"), "{err}");
    assert!(err.contains("two_contexts.ron:6:5"), "{err}");
}

#[test]
fn one_output_file_for_several_contexts_is_refused() {
    let dir = Scratch::new("programs", "context-files");
    let html = dir.join("p.html").display().to_string();
    for args in [
        vec!["run", "--html", &html],
        vec!["check", "--html", &html],
        vec!["explore", "--html", &html],
        vec!["fuzz", "--html", &html],
    ] {
        let (code, out, err) = contexts(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.contains("--html names one output, and the launch file holds 2 contexts"),
            "{err}"
        );
        assert!(out.is_empty(), "{out}");
    }
    assert!(!std::path::Path::new(&html).exists());
    // One context's page.
    let (code, out, err) = contexts(&["check", "--context", "1", "--html", &html]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        page_data(&html)["grids"]
            .as_array()
            .is_some_and(|g| g.len() == 2)
    );
}

#[test]
fn the_debugger_shows_the_grids_of_a_program_and_saves_their_trace() {
    let dir = Scratch::new("programs", "debug");
    let trace = dir.join("d.jsonl").display().to_string();
    let script = dir.join("s.gdb");
    std::fs::write(
        &script,
        format!("info grids\ncontinue\ninfo grids\ntrace save {trace}\nquit\n"),
    )
    .unwrap();
    let (code, out, err) = cudasem(&[
        "debug",
        &file("producer_consumer.ptx"),
        "--launch",
        &file("producer_consumer_2.ron"),
        "--device",
        &file("two_sms.ron"),
        "--max-steps",
        "20000",
        "--script",
        &script.display().to_string(),
    ]);
    assert!(code == 0 || code == 1, "{out}{err}");
    // Both grids are listed, each with its kernel, stream and phase.
    assert!(out.contains("a program of 2 launches"), "{out}");
    assert!(out.contains("0     consumer  1       active"), "{out}");
    assert!(out.contains("1     producer  0       active"), "{out}");
    // The saved trace records every launch of the program.
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.contains("\"launches\""), "{text}");
    assert!(text.contains("producer"), "{text}");
}

#[test]
fn a_bad_context_is_null_in_json_and_exits_2() {
    let dir = Scratch::new("programs", "bad-context");
    let text = std::fs::read_to_string(workspace().join(file("two_contexts.ron")))
        .expect("the corpus file");
    // The second context launches a kernel the module lacks.
    let at = text
        .rfind("(kernel: \"add_one\"")
        .expect("context 1's add_one");
    let bad = format!(
        "{}(kernel: \"zz\"{}",
        &text[..at],
        &text[at + "(kernel: \"add_one\"".len()..]
    );
    let ron = dir.join("bad.ron").display().to_string();
    std::fs::write(&ron, bad).expect("written");
    let ptx = file("stream_race.ptx");
    let (code, out, err) = cudasem(&["run", &ptx, "--launch", &ron, "--format", "json"]);
    assert_eq!(code, 2, "{out}{err}");
    let reports: serde_json::Value = serde_json::from_str(&out).expect("one JSON array");
    assert!(reports[0].is_object() && reports[1].is_null(), "{out}");
    assert!(
        err.contains("context 2 of 2: launch 2 of 2: the module has no kernel (.entry) named `zz`"),
        "{err}"
    );
}
