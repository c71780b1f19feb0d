//! Programs of several launches (`launches:` in the launch file: thesis 5.7, grids of one
//! context in streams) through the commands: `run` gives the two-pass reduction's result,
//! `explore` proves the producer/consumer pair terminates with a consumer of one block and
//! prints the lasso in which the producer is never resident with two (2 SMs of one block each),
//! kernels in two streams interleave and in one stream do not, and the commands that record or
//! monitor one launch refuse a program plainly.

mod common;
use common::{cudasem_in, workspace};

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
        "blocks",
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
fn commands_that_record_or_monitor_one_launch_refuse_a_program() {
    let (ptx, ron) = (file("stream_race.ptx"), file("stream_race_concurrent.ron"));
    for args in [
        vec!["check", &ptx, "--launch", &ron],
        vec!["run", &ptx, "--launch", &ron, "--trace", "t.jsonl"],
        vec!["debug", &ptx, "--launch", &ron],
    ] {
        let (code, out, err) = cudasem(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains("launches"), "{args:?}: {err}");
    }
}
