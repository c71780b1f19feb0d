//! End-to-end `cudasem replay`: traces written by `cudasem run --trace` and by
//! `cudasem explore --save` replay; a trace altered at one step is rejected at exactly that
//! step; a trace of another program is refused by its hash.

mod common;
use common::cudasem_here as cudasem;

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new("replay", name)
}

#[test]
fn a_run_trace_replays_and_an_altered_one_is_rejected_at_its_step() {
    let dir = scratch("run");
    let trace = dir.join("t.jsonl");
    let trace_s = trace.to_str().unwrap();
    let (code, out, err) = cudasem(&[
        "run",
        "tests/kernels/spinlock.ptx",
        "--launch",
        "tests/kernels/spinlock.ron",
        "--schedule",
        "random:4",
        "--trace",
        trace_s,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = cudasem(&["replay", trace_s, "tests/kernels/spinlock.ptx"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("every choice was enabled"), "{out}");
    assert!(out.contains("counter: s32[1]"), "{out}");

    // Replace the 21st choice (step 20) by a warp that does not exist.
    let text = std::fs::read_to_string(&trace).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[21] = r#"{"Warp":{"block":77,"warp":0}}"#.to_string();
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let (code, out, err) = cudasem(&[
        "replay",
        bad.to_str().unwrap(),
        "tests/kernels/spinlock.ptx",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("replay diverged after 20 of")
            && err.contains("step 20: `warp 77.0` is not enabled"),
        "{err}"
    );

    // Another program: refused by the hash.
    let (code, _, err) = cudasem(&["replay", trace_s, "tests/kernels/vecadd.ptx"]);
    assert_eq!(code, 2);
    assert!(err.contains("replay refused"), "{err}");
}

#[test]
fn an_explored_lasso_saved_with_events_replays_and_checks_them() {
    let dir = scratch("lasso");
    for ext in ["ron", "jsonl"] {
        let path = dir.join(format!("lasso.{ext}"));
        let p = path.to_str().unwrap();
        let (code, out, err) = cudasem(&[
            "explore",
            "tests/thesis/listing_6_2.ptx",
            "--launch",
            "tests/thesis/listing_6_2.ron",
            "--save",
            p,
        ]);
        assert_eq!(code, 1, "{out}{err}");
        let (code, out, err) = cudasem(&["replay", p, "--events"]);
        assert_eq!(code, 1, "{out}{err}");
        assert!(out.contains("events match the recorded ones"), "{out}");
        assert!(out.contains("-- cycle (repeats forever) --"), "{out}");
        assert!(out.contains("the cycle closes"), "{out}");
    }
}

/// Compact strings are versioned: version 2 (printed) names choices by identity and a choice
/// that is not enabled stops the replay at its step; version 1 (enabled-set positions, printed
/// by earlier cudasem) still replays; an unknown version is refused by name.
#[test]
fn compact_strings_of_each_version() {
    let dir = "tests/kernels/race";
    let ptx = format!("{dir}/warp_uniform_barriers.ptx");
    let ron = format!("{dir}/warp_uniform_barriers.ron");
    let (code, out, err) = cudasem(&["check", &ptx, "--launch", &ron, "--format", "json"]);
    assert_eq!(code, 1, "{out}{err}");
    let j: serde_json::Value = serde_json::from_str(out.trim()).expect("JSON");
    let replay = j["replay"][0].as_str().expect("a replay command");
    let v2 = replay
        .split(' ')
        .find(|w| w.starts_with("cudasem2:"))
        .expect("a version 2 string");
    let (code, out, err) = cudasem(&["replay", v2, &ptx, "--launch", &ron]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("every choice was enabled"), "{out}");

    // The same schedule as printed by version 1 (the enabled-set positions).
    let v1 = "cudasem1:a27f26c09317ebb6:bd9fdf61:-:010101010101010101010010101010100";
    let (code, out, err) = cudasem(&["replay", v1, &ptx, "--launch", &ron]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("replayed 33 choices"), "{out}");

    // A table entry naming a warp that does not exist: the replay stops at its first use.
    let fields: Vec<&str> = v2.split(':').collect();
    let at = fields[4].find("W0_1").expect("warp 1 is in the table");
    // Its table position: the entries (each starts with an upper-case letter) before it.
    let position = fields[4][..at]
        .bytes()
        .filter(u8::is_ascii_uppercase)
        .count();
    assert!(position < 10, "a one-digit position");
    let digit = char::from(b'0' + position as u8);
    let table = fields[4].replacen("W0_1", "W0_9", 1);
    let altered = [
        fields[0], fields[1], fields[2], fields[3], &table, fields[5],
    ]
    .join(":");
    let first_use = fields[5].find(digit).expect("warp 1 is used");
    let (code, _, err) = cudasem(&["replay", &altered, &ptx, "--launch", &ron]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("step {first_use}: `")) && err.contains("is not enabled; enabled: ["),
        "{err}"
    );

    let v9 = v2.replacen("cudasem2:", "cudasem9:", 1);
    let (code, _, err) = cudasem(&["replay", &v9, &ptx, "--launch", &ron]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("version 9 string"), "{err}");
}

/// A trace names its launch file instead of copying the buffers (issue: "no buffer dumps in
/// traces unless asked"): replay reads them from the file again, and refuses, naming the
/// buffer, once the file's initial contents changed.
#[test]
fn a_trace_names_its_launch_file_instead_of_dumping_buffers() {
    let dir = scratch("launch_ref");
    let ws = common::workspace();
    let launch = dir.join("saxpy.ron");
    let original = std::fs::read_to_string(ws.join("tests/kernels/saxpy.ron")).unwrap();
    std::fs::write(&launch, &original).unwrap();
    let trace = dir.join("t.jsonl");
    let (code, out, err) = cudasem(&[
        "run",
        "tests/kernels/saxpy.ptx",
        "--launch",
        launch.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let header = std::fs::read_to_string(&trace).unwrap();
    let header = header.lines().next().unwrap();
    assert!(
        !header.contains("\"bytes\""),
        "buffers copied into the trace: {header}"
    );
    assert!(
        header.contains("\"launch_file\"") && header.contains("saxpy.ron"),
        "{header}"
    );

    let (code, out, err) = cudasem(&["replay", trace.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("every choice was enabled"), "{out}");

    let changed = original.replacen("Range(start: 0.0", "Range(start: 1.0", 1);
    assert_ne!(changed, original, "the launch file's x initialiser moved");
    std::fs::write(&launch, changed).unwrap();
    let (code, out, err) = cudasem(&["replay", trace.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("buffer `x` of the launch file")
            && err.contains("changed since the trace was written"),
        "{err}"
    );
}

/// Traces written before the trace's launch and configuration were the semantics' own types
/// (cli/tests/fixtures/old_traces/README.md) still replay, every choice enabled, to the
/// buffers they recorded.
#[test]
fn traces_written_before_still_replay() {
    let (code, out, err) = cudasem(&["replay", "cli/tests/fixtures/old_traces/program_cached.ron"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("every choice was enabled"), "{out}");
    assert!(
        out.contains("completed after 49 steps (simt-stack, cached memory"),
        "{out}"
    );
    assert!(out.contains("buf: s32[2]\n  [0] 1 1"), "{out}");

    let (code, out, err) = cudasem(&["replay", "cli/tests/fixtures/old_traces/flags_its.jsonl"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("every choice was enabled"), "{out}");
    assert!(
        out.contains("completed after 23 steps (its, flat memory"),
        "{out}"
    );
    assert!(out.contains("b: f32[2]\n  [0] 5.0 6.0"), "{out}");
}
