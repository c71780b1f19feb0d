//! One vocabulary of bounds, end to end: `run`, `check`, `fuzz` (each run's step bound), both
//! searches of `explore` (the memory bound too), `litmus`, `progress` and `debug` name the
//! bound that cut them with the same words in their text and the same JSON object
//! (`"bound_hit": {"bound": ..., "limit": ...}`), and a run or search that no bound cut names
//! none.

mod common;
use common::cudasem_here as cudasem;
use serde_json::{Value, json};

/// The spin lock of the corpus with the lock taken: every block spins until a bound.
const SPIN: &[&str] = &[
    "tests/kernels/spinlock.ptx",
    "--launch",
    "tests/kernels/spinlock.ron",
    "--buffer",
    "lock:s32:1:values:1",
];

fn with<'a>(command: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![command];
    args.extend_from_slice(SPIN);
    args.extend_from_slice(rest);
    args
}

fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn run_names_the_step_and_the_time_bound() {
    let (code, out, err) = cudasem(&with("run", &["--max-steps", "5000"]));
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("(--max-steps 5000)"), "{out}");
    let (code, out, err) = cudasem(&with("run", &["--max-steps", "5000", "--format", "json"]));
    assert_eq!(code, 1, "{err}");
    let j = json_of(&out);
    assert_eq!(
        j["bound_hit"],
        json!({"bound": "steps", "limit": 5000}),
        "{out}"
    );
    assert_eq!(j["status"], "step_limit");

    let (code, out, err) = cudasem(&with(
        "run",
        &[
            "--max-steps",
            "100000000000",
            "--timeout",
            "0.25",
            "--format",
            "json",
        ],
    ));
    assert_eq!(code, 1, "{err}");
    let j = json_of(&out);
    assert_eq!(
        j["bound_hit"],
        json!({"bound": "time", "limit": 250}),
        "{out}"
    );
    assert_eq!(j["status"], "time_limit");

    // A run that ends names no bound.
    let (code, out, err) = cudasem(&[
        "run",
        "tests/kernels/reduce_tree.ptx",
        "--launch",
        "tests/kernels/reduce_tree.ron",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(json_of(&out).get("bound_hit").is_none(), "{out}");
}

#[test]
fn check_names_the_step_bound_of_its_schedule() {
    let (code, out, err) = cudasem(&with("check", &["--max-steps", "4000"]));
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("step limit: the step bound (--max-steps 4000) was reached"),
        "{out}"
    );
    let (code, out, err) = cudasem(&with("check", &["--max-steps", "4000", "--format", "json"]));
    assert_eq!(code, 1, "{err}");
    let j = json_of(&out);
    assert_eq!(
        j["bound_hit"],
        json!({"bound": "steps", "limit": 4000}),
        "{out}"
    );
    let errors = j["errors"].as_array().expect("errors");
    assert!(
        errors.iter().any(|e| e["kind"] == "step_limit"
            && e["message"] == "the step bound (--max-steps 4000) was reached"),
        "{out}"
    );
}

#[test]
fn both_searches_of_explore_name_their_bound() {
    let listing = [
        "tests/thesis/listing_6_2.ptx",
        "--launch",
        "tests/thesis/listing_6_2.two_blocks.ron",
    ];
    let explore = |rest: &[&str]| {
        let mut args = vec!["explore"];
        args.extend_from_slice(&listing);
        args.extend_from_slice(rest);
        cudasem(&args)
    };
    let (code, out, err) = explore(&["--search", "outcomes", "--max-transitions", "3"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("bound: --max-transitions 3 REACHED"), "{out}");
    let (_, out, _) = explore(&[
        "--search",
        "outcomes",
        "--max-transitions",
        "3",
        "--format",
        "json",
    ]);
    let j = json_of(&out);
    assert_eq!(
        j["bound_hit"],
        json!({"bound": "transitions", "limit": 3}),
        "{out}"
    );

    let (code, out, err) = explore(&["--max-states", "2"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("bound: --max-states 2 REACHED"), "{out}");
    let (_, out, _) = explore(&["--max-states", "2", "--format", "json"]);
    let j = json_of(&out);
    assert_eq!(
        j["bound_hit"],
        json!({"bound": "states", "limit": 2}),
        "{out}"
    );

    // A complete search names no bound.
    let (_, out, err) = explore(&["--format", "json"]);
    let j = json_of(&out);
    assert_eq!(j["bound_hit"], Value::Null, "{out}{err}");
    assert_eq!(j["bound"]["hit"], false, "{out}");
}

#[test]
fn litmus_names_the_state_bound() {
    let test = "tests/litmus/families/MP-3.litmus";
    let (_, out, err) = cudasem(&["litmus", test, "--max-states", "3"]);
    assert!(
        out.contains("Status: bounded: the state bound (--max-states 3) cut the search"),
        "{out}{err}"
    );
    let (_, out, _) = cudasem(&["litmus", test, "--max-states", "3", "--format", "json"]);
    let j = json_of(&out);
    assert_eq!(
        j["bound_hit"],
        json!({"bound": "states", "limit": 3}),
        "{out}"
    );
    let (code, out, err) = cudasem(&["litmus", test, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json_of(&out)["bound_hit"], Value::Null, "{out}");
}

#[test]
fn fuzz_names_the_step_bound_of_each_run_it_cut() {
    let (code, out, err) = cudasem(&with("fuzz", &["--max-steps", "2000", "--runs", "3"]));
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("step-limit: 3 runs cut by the step bound (--max-steps 2000), first run 0"),
        "{out}"
    );
    let (_, out, _) = cudasem(&with(
        "fuzz",
        &["--max-steps", "2000", "--runs", "3", "--format", "json"],
    ));
    let j = json_of(&out);
    let steps = json!({"bound": "steps", "limit": 2000});
    assert_eq!(j["outcomes"][0]["status"], "step-limit", "{out}");
    assert_eq!(j["outcomes"][0]["bound_hit"], steps, "{out}");
    assert_eq!(j["failures"][0]["bound_hit"], steps, "{out}");
    // The campaign made every run: no bound cut it.
    assert_eq!(j["bound_hit"], Value::Null, "{out}");

    // A run that ends names no bound.
    let (code, out, err) = cudasem(&[
        "fuzz",
        "tests/kernels/spinlock.ptx",
        "--launch",
        "tests/kernels/spinlock.ron",
        "--runs",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let j = json_of(&out);
    assert_eq!(j["outcomes"][0]["status"], "completed", "{out}");
    assert_eq!(j["outcomes"][0]["bound_hit"], Value::Null, "{out}");
}

/// The memory budget stops a search through the same flag as the clock; it is named as the
/// memory bound, not as a time bound. A budget of 1 MiB is below any process's memory, so the
/// watchdog's first look stops the search.
#[test]
fn explore_names_the_memory_bound() {
    let args = [
        "explore",
        "tests/kernels/spinlock.ptx",
        "--launch",
        "tests/kernels/spinlock.ron",
        "--grid",
        "7",
        // Without the symmetry reduction: with it the search ends before the watchdog looks.
        "--symmetry",
        "none",
        "--max-states",
        "100000000",
        "--max-memory",
        "1M",
    ];
    let (code, out, err) = cudasem(&args);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("memory budget reached: --max-memory"), "{out}");
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let (_, out, _) = cudasem(&json_args);
    assert_eq!(
        json_of(&out)["bound_hit"],
        json!({"bound": "memory", "limit": 1048576}),
        "{out}"
    );
}

/// `progress`: a test whose states pass `--max-states` gets no verdicts; its JSON line says
/// which bound cut it, as every command's JSON does, and a decided test names none.
#[test]
fn progress_names_the_state_bound_of_a_test_it_cut() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bounds_progress");
    std::fs::create_dir_all(&dir).unwrap();
    let test = dir.join("3t.txt");
    std::fs::write(
        &test,
        "THREAD0\natomic_store(0,1)\n\nTHREAD1\natomic_exch_branch(0,1,1,0)\n\nTHREAD2\natomic_exch_branch(0,0,0,0)\n",
    )
    .unwrap();
    let path = test.to_str().unwrap();
    let (code, out, err) = cudasem(&["progress", path, "--max-states", "3", "--format", "json"]);
    assert_eq!(code, 1, "{err}");
    let j = json_of(&out);
    assert_eq!(j["verdicts"], Value::Null, "{out}");
    assert_eq!(
        j["bound_hit"],
        json!({"bound": "states", "limit": 3}),
        "{out}"
    );
    assert!(
        err.contains("stopped by the state bound (--max-states 3)"),
        "{err}"
    );
    let (code, out, err) = cudasem(&["progress", path, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let j = json_of(&out);
    assert_eq!(j["bound_hit"], Value::Null, "{out}");
    assert_eq!(j["verdicts"]["fair"], "P", "{out}");
}

/// `debug`: a `continue` cut by `--max-steps` names the step bound as `run` does, in a
/// scripted session, and the session goes on.
#[test]
fn debug_names_the_step_bound_of_a_continue() {
    let script = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bounds_debug.txt");
    std::fs::write(&script, "continue\nstatus\n").unwrap();
    let (code, out, err) = cudasem(&with(
        "debug",
        &["--max-steps", "500", "--script", script.to_str().unwrap()],
    ));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("stopped at the step bound (--max-steps 500) after 500 steps"),
        "{out}"
    );
    assert!(out.contains("step 500; running"), "{out}");
}

/// A shard of `explore --search outcomes` cut by a bound says which in its one line, and the
/// merged report names it as the unsharded search does.
#[test]
fn an_explore_shard_names_the_bound_that_cut_it() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bounds_shards");
    std::fs::create_dir_all(&dir).unwrap();
    let mut reports = Vec::new();
    for i in 0..2 {
        let report = dir.join(format!("shard{i}.json"));
        let shard = format!("{i}/2");
        let (_, out, err) = cudasem(&[
            "explore",
            "tests/thesis/listing_6_2.ptx",
            "--launch",
            "tests/thesis/listing_6_2.two_blocks.ron",
            "--search",
            "outcomes",
            "--max-transitions",
            "3",
            "--split-depth",
            "1",
            "--shard",
            &shard,
            "--report",
            report.to_str().unwrap(),
        ]);
        assert!(
            out.contains(
                "(cut by the transition bound (--max-transitions 3): see the merged report)"
            ),
            "{out}{err}"
        );
        reports.push(report.to_str().unwrap().to_string());
    }
    let mut args = vec!["merge"];
    args.extend(reports.iter().map(String::as_str));
    args.extend(["--format", "json"]);
    let (_, out, err) = cudasem(&args);
    assert_eq!(
        json_of(&out)["bound_hit"],
        json!({"bound": "transitions", "limit": 3}),
        "{out}{err}"
    );
}
