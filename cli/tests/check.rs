//! `cudasem check` end to end: no false positives on the race-free corpus (`tests/kernels/*.ptx`
//! and `nvcc/`, under `--race-model interleaving`, SIMT stack and ITS, random schedules), the JSON
//! keys tools rely on, uninitialised reads of `--uninit` buffers and of shared memory, bad input,
//! and snapshots of rendered reports (a race and a barrier divergence).

use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::{cudasem_in as cudasem, workspace};

fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Smaller launches for the 65,536-thread benchmarks (same code, fewer blocks).
fn shrink(name: &str) -> &'static [&'static str] {
    match name {
        "bench_alu" | "bench_reduce" => &["--grid", "4"],
        "bench_matmul" => &["--grid", "2,2"],
        _ => &[],
    }
}

#[test]
fn race_free_corpus_is_clean() {
    let root = workspace();
    let kernels = root.join("tests").join("kernels");
    let mut files = ptx_files(&kernels);
    files.extend(ptx_files(&kernels.join("nvcc")));
    assert!(files.len() >= 30, "the corpus is there");
    let mut dirty = Vec::new();
    for ptx in &files {
        let name = ptx.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let ron = ptx.with_extension("ron");
        for model in ["simt-stack", "its"] {
            let (p, r) = (ptx.display().to_string(), ron.display().to_string());
            let mut args = vec![
                "check",
                &p,
                "--launch",
                &r,
                "--race-model",
                "interleaving",
                "--warp-model",
                model,
                "--schedules",
                "2",
                "--format",
                "json",
            ];
            args.extend_from_slice(shrink(name));
            let (code, out, err) = cudasem(&root, &args);
            let j: Value = serde_json::from_str(out.trim()).unwrap_or(Value::Null);
            let clean = code == 0
                && j["races"].as_array().is_some_and(|a| a.is_empty())
                && j["barrier_divergence"]
                    .as_array()
                    .is_some_and(|a| a.is_empty())
                && j["errors"].as_array().is_some_and(|a| a.is_empty());
            if !clean {
                dirty.push(format!("{name} ({model}): exit {code}\n{out}\n{err}"));
            }
        }
    }
    assert!(dirty.is_empty(), "false positives:\n{}", dirty.join("\n"));
}

#[test]
fn json_has_the_documented_keys() {
    let root = workspace();
    let (code, out, _) = cudasem(
        &root,
        &[
            "check",
            "tests/kernels/reduce_tree.ptx",
            "--launch",
            "tests/kernels/reduce_tree.ron",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0);
    let j: Value = serde_json::from_str(out.trim()).expect("JSON");
    for key in [
        "races",
        "barrier_divergence",
        "errors",
        "complete",
        "coverage",
        "schedules",
        "race_model",
        "status",
        "replay",
    ] {
        assert!(j.get(key).is_some(), "missing key `{key}` in {j}");
    }
    assert_eq!(j["complete"], true);
    assert_eq!(j["status"], "clean");
}

#[test]
fn uninitialised_reads_are_reported() {
    let race = workspace().join("tests").join("kernels").join("race");
    // A launch buffer declared undefined and read before any write.
    let (code, out, _) = cudasem(
        &race,
        &[
            "check",
            "scan_ok.ptx",
            "--launch",
            "scan_ok.ron",
            "--uninit",
            "sum",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1);
    let j: Value = serde_json::from_str(out.trim()).expect("JSON");
    let e = &j["errors"][0];
    assert_eq!(e["kind"], "uninitialised");
    assert_eq!(e["access"]["location"]["name"], "sum");
    // Not a buffer of the launch: bad input.
    let (code, _, err) = cudasem(
        &race,
        &[
            "check",
            "scan_ok.ptx",
            "--launch",
            "scan_ok.ron",
            "--uninit",
            "nope",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("no buffer `nope`"), "{err}");
}

#[test]
fn race_report_text() {
    let race = workspace().join("tests").join("kernels").join("race");
    let (code, out, _) = cudasem(
        &race,
        &["check", "scope_atomic.ptx", "--launch", "scope_atomic.ron"],
    );
    assert_eq!(code, 1);
    insta::assert_snapshot!("check_scope_atomic", out);
    let (code, out, _) = cudasem(
        &race,
        &[
            "check",
            "warp_add.ptx",
            "--launch",
            "warp_add.ron",
            "--block",
            "64",
            "--race-model",
            "warp-sync",
        ],
    );
    assert_eq!(code, 1);
    insta::assert_snapshot!("check_warp_add_warp_sync", out);
}

#[test]
fn divergence_report_text() {
    let race = workspace().join("tests").join("kernels").join("race");
    let (code, out, _) = cudasem(
        &race,
        &[
            "check",
            "warp_uniform_barriers.ptx",
            "--launch",
            "warp_uniform_barriers.ron",
        ],
    );
    assert_eq!(code, 1);
    insta::assert_snapshot!("check_warp_uniform_barriers", out);
}

/// A schedule found by `--schedules` is reproduced by the printed `cudasem replay ... --check`
/// command: the same races, found again along the recorded schedule.
#[test]
fn printed_command_reproduces() {
    let race = workspace().join("tests").join("kernels").join("race");
    let (code, out, _) = cudasem(
        &race,
        &[
            "check",
            "histo_plain.ptx",
            "--launch",
            "histo_plain.ron",
            "--schedules",
            "5",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1);
    let j: Value = serde_json::from_str(out.trim()).expect("JSON");
    let replay = j["replay"][0]
        .as_str()
        .expect("a replay command")
        .to_string();
    assert!(
        replay.starts_with("cudasem replay cudasem2:") && replay.ends_with(" --check"),
        "{replay}"
    );
    let mut args: Vec<&str> = replay.split(' ').skip(1).collect();
    args.extend(["--format", "json"]);
    let (code, again, err) = cudasem(&race, &args);
    assert_eq!(code, 1, "{err}");
    let k: Value = serde_json::from_str(again.trim()).expect("JSON");
    assert_eq!(k["races"], j["races"], "the replay finds the same races");
    assert_eq!(k["steps"], j["steps"]);
    // Without `--check` the same string replays the run and checks every choice.
    let plain: Vec<&str> = args.iter().copied().filter(|a| *a != "--check").collect();
    let (code, _, err) = cudasem(&race, &plain);
    assert_eq!(code, 0, "{err}");
}

/// A trace that does not fit the launch is a divergence: exit 2, the step named.
#[test]
fn replay_check_reports_divergence() {
    let race = workspace().join("tests").join("kernels").join("race");
    let (_, out, _) = cudasem(
        &race,
        &[
            "check",
            "histo_plain.ptx",
            "--launch",
            "histo_plain.ron",
            "--format",
            "json",
        ],
    );
    let j: Value = serde_json::from_str(out.trim()).expect("JSON");
    let replay = j["replay"][0].as_str().expect("a replay command");
    let mut args: Vec<&str> = replay.split(' ').skip(1).collect();
    // Another block shape: the recorded choices name warps that do not exist.
    args.extend(["--block", "16"]);
    let (code, _, err) = cudasem(&race, &args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("replay diverged"), "{err}");
}

/// Writes `kernel.ptx` (entry `k(out)`, `block` threads, `out`: 4 `u32`) and its launch file
/// into a fresh directory.
fn scratch_kernel(body: &str, block: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary directory");
    let ptx = format!(
        ".version 7.0\n.target sm_70\n.address_size 64\n\n.visible .entry k(.param .u64 out)\n{{\n    .reg .u64 %o;\n    .reg .u32 %t;\n    .reg .u32 %r;\n    ld.param.u64 %o, [out];\n    mov.u32 %t, %tid.x;\n{body}    ret;\n}}\n"
    );
    let ron = format!(
        "(\n    kernel: \"k\",\n    grid: (1, 1, 1),\n    block: ({block}, 1, 1),\n    buffers: {{\n        \"out\": (type: \"u32\", len: 4),\n    }},\n    args: [Buffer(\"out\")],\n)\n"
    );
    std::fs::write(dir.path().join("kernel.ptx"), ptx).expect("write ptx");
    std::fs::write(dir.path().join("kernel.ron"), ron).expect("write launch");
    dir
}

/// Every thread stores 7 to `out[0]`: a write-write race whose racing writes store the value
/// memory already holds (benign). Reported and marked by default; `--benign ignore` leaves it
/// out and says so.
#[test]
fn benign_races_are_marked_or_left_out() {
    let dir = scratch_kernel("    mov.u32 %r, 7;\n    st.global.u32 [%o], %r;\n", 4);
    let base = ["check", "kernel.ptx", "--launch", "kernel.ron"];
    let (code, out, _) = cudasem(dir.path(), &base);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("data race (write-write"), "{out}");
    assert!(
        out.contains("  benign: both writes store the same value"),
        "{out}"
    );
    let (code, out, _) = cudasem(dir.path(), &[&base[..], &["--format", "json"]].concat());
    assert_eq!(code, 1, "{out}");
    let j: Value = serde_json::from_str(out.trim()).expect("JSON");
    assert_eq!(j["races"][0]["benign"], true, "{j}");
    assert_eq!(j["benign_left_out"], 0, "{j}");

    let ignore = [&base[..], &["--benign", "ignore"]].concat();
    let (code, out, _) = cudasem(dir.path(), &ignore);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("benign race(s) left out: --benign ignore"),
        "{out}"
    );
    assert!(out.contains("k: clean"), "{out}");
    let (code, out, _) = cudasem(dir.path(), &[&ignore[..], &["--format", "json"]].concat());
    assert_eq!(code, 0, "{out}");
    let j: Value = serde_json::from_str(out.trim()).expect("JSON");
    assert_eq!(j["races"].as_array().map(Vec::len), Some(0), "{j}");
    assert!(j["benign_left_out"].as_u64().unwrap_or(0) >= 1, "{j}");

    // A race that changes memory is not benign: `ignore` keeps it.
    let dir = scratch_kernel("    st.global.u32 [%o], %t;\n", 4);
    let (code, out, _) = cudasem(dir.path(), &ignore);
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("benign"), "{out}");
}

/// `--benign ignore` also holds while `check` searches: a schedule whose only finding is a
/// benign race does not stop `--schedules N` or `--explore` (the atomic makes the kernel
/// schedule-dependent, so only the search decides it).
#[test]
fn benign_races_do_not_stop_the_search_under_ignore() {
    let dir = scratch_kernel(
        "    mov.u32 %r, 7;\n    st.global.u32 [%o], %r;\n    atom.global.add.u32 %r, [%o+4], 1;\n",
        4,
    );
    let base = [
        "check",
        "kernel.ptx",
        "--launch",
        "kernel.ron",
        "--benign",
        "ignore",
    ];
    let (code, out, err) = cudasem(dir.path(), &[&base[..], &["--explore"]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("--explore exhausted the schedules"), "{out}");
    assert!(out.contains("benign race(s) left out"), "{out}");
    let (code, out, err) = cudasem(dir.path(), &[&base[..], &["--schedules", "3"]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("only the 3 schedule(s) run"), "{out}");
    // Reported, a benign race is a finding: the first schedule ends the search.
    let (code, out, _) = cudasem(
        dir.path(),
        &["check", "kernel.ptx", "--launch", "kernel.ron", "--explore"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("benign: both writes store the same value"),
        "{out}"
    );
}

/// An integer division by zero is a finding: counted in the summary line and rendered in text
/// and JSON.
#[test]
fn unspecified_results_are_counted_and_rendered() {
    let dir = scratch_kernel(
        "    mov.u32 %r, 10;\n    div.u32 %r, %r, %t;\n    st.global.u32 [%o], %r;\n",
        1,
    );
    let base = ["check", "kernel.ptx", "--launch", "kernel.ron"];
    let (code, out, _) = cudasem(dir.path(), &base);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("integer division by zero"), "{out}");
    assert!(out.contains("k: 1 unspecified result(s)"), "{out}");
    assert!(out.contains("div.u32"), "{out}");
    let (code, out, _) = cudasem(dir.path(), &[&base[..], &["--format", "json"]].concat());
    assert_eq!(code, 1, "{out}");
    let j: Value = serde_json::from_str(out.trim()).expect("JSON");
    let u = &j["unspecified"][0];
    assert_eq!(u["kind"], "DivisionByZero", "{j}");
    assert_eq!(u["thread"], 0, "{j}");
    assert!(
        u["instruction"].as_str().unwrap_or("").contains("div.u32"),
        "{j}"
    );
    assert_eq!(j["status"], "failed", "{j}");
}

/// `check --explore` names the bound that cut its search, in text and JSON, with the flag
/// that sets it: the schedule budget (`--max-schedules`), the depth of one schedule
/// (`--max-steps`); an exhausted search names none.
#[test]
fn the_bound_that_cut_the_explore_search_is_named() {
    // Five one-thread blocks bump one counter: 5! orders of dependent atomics, more than one
    // schedule's worth of transitions.
    let dir = scratch_kernel("    atom.global.add.u32 %r, [%o], 1;\n", 1);
    let base = [
        "check",
        "kernel.ptx",
        "--launch",
        "kernel.ron",
        "--grid",
        "5",
        "--explore",
    ];
    let (code, out, err) = cudasem(dir.path(), &[&base[..], &["--max-schedules", "1"]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("(the schedule bound (--max-schedules 1) cut the search)"),
        "{out}"
    );
    let (_, out, _) = cudasem(
        dir.path(),
        &[&base[..], &["--max-schedules", "1", "--format", "json"]].concat(),
    );
    let j: Value = serde_json::from_str(out.trim()).expect("JSON");
    assert_eq!(j["search_bound_hit"]["bound"], "schedules", "{j}");
    assert_eq!(j["search_bound_hit"]["limit"], 1, "{j}");
    assert_eq!(j["complete"], false, "{j}");

    // Exhausted: no bound.
    let (_, out, _) = cudasem(dir.path(), &[&base[..], &["--format", "json"]].concat());
    let j: Value = serde_json::from_str(out.trim()).expect("JSON");
    assert!(j.get("search_bound_hit").is_none(), "{j}");
    assert_eq!(j["complete"], true, "{j}");
}
