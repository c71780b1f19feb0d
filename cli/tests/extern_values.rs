//! A call of a function without a body whose result the launch file gives as a set of values
//! (`extern_calls: { "nondet": Values([-3, 2]) }`, as GPUVerify treats such a call: an arbitrary
//! value): each thread's pick is a scheduler choice, so `explore` reaches every combination,
//! `fuzz` samples several, and every witness replays to its outcome.

mod common;
use common::{cudasem_in, workspace};
use std::collections::BTreeSet;

const PTX: &str = "tests/kernels/extern_call.ptx";
const LAUNCH: &str = "examples/extern_values.ron";

fn cudasem(args: &[&str]) -> (i32, String, String) {
    cudasem_in(&workspace(), args)
}

/// out[i] = v_i * i + 1 for each thread's pick v_i of {-3, 2}.
fn every_outcome() -> BTreeSet<Vec<i64>> {
    let mut all = BTreeSet::new();
    for bits in 0..16u32 {
        let out: Vec<i64> = (0..4)
            .map(|i| {
                let v = if bits >> i & 1 == 1 { 2 } else { -3 };
                v * i as i64 + 1
            })
            .collect();
        all.insert(out);
    }
    all
}

#[test]
fn explore_reaches_every_combination_of_picks_and_each_witness_replays() {
    let (code, out, err) = cudasem(&["explore", PTX, "--launch", LAUNCH, "--format", "json"]);
    assert_eq!(code, 0, "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let outcomes = json["outcomes"].as_array().expect("outcomes");
    let found: BTreeSet<Vec<i64>> = outcomes
        .iter()
        .map(|o| {
            o["data"][0][1]
                .as_array()
                .expect("out's values")
                .iter()
                .map(|v| v.as_i64().expect("a number"))
                .collect()
        })
        .collect();
    assert_eq!(found, every_outcome());
    // Each outcome's witness replays to that outcome.
    for o in outcomes.iter().take(3) {
        let replay = o["replay"].as_str().expect("a replay command");
        let args: Vec<&str> = replay.split_whitespace().skip(1).collect();
        let (code, text, err) = cudasem(&args);
        assert_eq!(code, 0, "{replay}: {text}{err}");
        let want: Vec<String> = o["data"][0][1]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect();
        let shown = text
            .lines()
            .find(|l| l.trim_start().starts_with("[0]"))
            .unwrap_or_else(|| panic!("no values in {text}"));
        let got: Vec<&str> = shown
            .split(']')
            .nth(1)
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(got, want, "{replay}");
    }
}

#[test]
fn fuzz_samples_several_picks() {
    let (code, out, err) = cudasem(&["fuzz", PTX, "--launch", LAUNCH, "--runs", "40"]);
    assert_eq!(code, 0, "{out}{err}");
    let distinct = out.lines().filter(|l| l.contains("out=")).count();
    assert!(distinct > 1, "one outcome in 40 runs:\n{out}");
}

#[test]
fn an_empty_set_of_values_is_refused_with_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("cudasem-extern-values-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("empty.ron");
    let text = std::fs::read_to_string(workspace().join(LAUNCH))
        .unwrap()
        .replace("Values([-3, 2])", "Values([])");
    std::fs::write(&bad, text).unwrap();
    let (code, out, err) = cudasem(&["run", PTX, "--launch", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("empty.ron") && err.contains("nondet"), "{err}");
}
