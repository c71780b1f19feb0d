//! `cudasem litmus`: text and JSON output on self-contained tests (written to a temporary
//! folder, so the check needs no conformance files), a witness that `cudasem replay` accepts,
//! a malformed file (exit 2, `file:line:col`), an unsupported test (exit 0, status
//! "unsupported") and `--memory cached` (the store-buffering outcome flat memory cannot reach).

mod common;

use common::Scratch;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SB: &str = "PTX SB\n\"store buffering\"\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.relaxed.gpu x, 1 | st.relaxed.gpu y, 1 ;\n ld.relaxed.gpu r0, y | ld.relaxed.gpu r1, x ;\nexists (P0:r0 == 1 /\\ P1:r1 == 1)\n";

const SB_FORALL: &str = "PTX SB-forall\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak x, 1 | st.weak y, 1 ;\n fence.sc.cta | fence.sc.cta ;\n ld.weak r0, y | ld.weak r1, x ;\nforall (P0:r0 == 1 /\\ P1:r1 == 1)\n";

/// A scratch folder, removed when the test ends.
fn dir(name: &str) -> Scratch {
    Scratch::new("litmus", name)
}

fn write(d: &Path, file: &str, text: &str) -> PathBuf {
    let p = d.join(file);
    std::fs::write(&p, text).expect("write test");
    p
}

fn cudasem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run cudasem")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[test]
fn text_output_lists_outcomes_and_the_verdict() {
    let d = dir("text");
    let f = write(&d, "sb.litmus", SB);
    let o = cudasem(&["litmus", f.to_str().expect("utf-8")]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let s = stdout(&o);
    assert!(
        s.contains("Condition: exists (0:r0 == 1 /\\ 1:r1 == 1)"),
        "{s}"
    );
    // Sequentially consistent store buffering: 0/1, 1/0, 1/1 but never 0/0.
    for outcome in ["0:r0=0; 1:r1=1;", "0:r0=1; 1:r1=0;", "0:r0=1; 1:r1=1;"] {
        assert!(s.contains(outcome), "{outcome} missing:\n{s}");
    }
    assert!(!s.contains("0:r0=0; 1:r1=0;"), "{s}");
    assert!(
        s.contains("Verdict: the condition holds (holds: true)"),
        "{s}"
    );
    assert!(s.contains("Witness: 0:r0=1; 1:r1=1;"), "{s}");
}

#[test]
fn json_output_and_a_replayable_witness() {
    let d = dir("json");
    let f = write(&d, "sbf.litmus", SB_FORALL);
    let ptx_dir = d.join("ptx");
    let o = cudasem(&[
        "litmus",
        "--format",
        "json",
        "--emit-ptx",
        ptx_dir.to_str().expect("utf-8"),
        f.to_str().expect("utf-8"),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON object");
    assert_eq!(v["status"], "ok");
    // forall (both read 1) fails: some interleaving reads 0 in one thread.
    assert_eq!(v["holds"], false);
    assert_eq!(v["outcomes"].as_array().map(Vec::len), Some(3));
    let replay = v["witness"]["replay"]
        .as_str()
        .expect("witness replay command");
    let argv: Vec<&str> = replay.split_whitespace().skip(1).collect();
    let o = cudasem(&argv);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{replay}\n{}{}",
        stdout(&o),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout(&o).contains("every choice was enabled"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn malformed_file_is_bad_input_with_a_location() {
    let d = dir("bad");
    let f = write(
        &d,
        "bad.litmus",
        &SB.replace("ld.relaxed.gpu r1, x", "ld.relaxed.gpu r1 x"),
    );
    let o = cudasem(&["litmus", f.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("bad.litmus:6:"), "{e}");
    assert!(e.contains("expected `,` between operands"), "{e}");
}

#[test]
fn proxies_are_unsupported_not_wrong() {
    let d = dir("proxy");
    let text = "PTX alias\n{ x=0; y @ generic aliases x; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n fence.proxy.alias ;\n ld.weak r0, y ;\nforall (P0:r0 == 1)\n";
    let f = write(&d, "alias.litmus", text);
    let o = cudasem(&["litmus", "--format", "json", f.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("JSON");
    assert_eq!(v["status"], "unsupported");
    assert_eq!(v["holds"], serde_json::Value::Null);
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("proxies")),
        "{v}"
    );
}

#[test]
fn cached_memory_reaches_the_store_buffering_outcome_flat_memory_cannot() {
    // SB with relaxed accesses: both loads reading 0 is allowed by the PTX model. Flat memory is
    // sequentially consistent and never shows it; under cached memory a thread's store and its
    // later load to another address are in flight together and may complete out of order.
    let d = dir("cached");
    let sb00 = SB.replace("P0:r0 == 1 /\\ P1:r1 == 1", "P0:r0 == 0 /\\ P1:r1 == 0");
    let f = write(&d, "sb00.litmus", &sb00);
    let run = |memory: &str| {
        let o = cudasem(&[
            "litmus",
            "--memory",
            memory,
            "--format",
            "json",
            f.to_str().expect("utf-8"),
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("JSON");
        assert_eq!(v["status"], "ok", "{v}");
        v
    };
    let cached = run("cached");
    assert_eq!(cached["holds"], true, "{cached}");
    assert!(cached["witness"].is_object(), "{cached}");
    let flat = run("flat");
    assert_eq!(flat["holds"], false, "{flat}");
}

/// herd7's summary beside cudasem's verdict: `Observation NAME Always|Sometimes|Never P N`, P and
/// N the final states that satisfy the proposition and those that do not.
#[test]
fn herd_summary_line_counts_positive_and_negative_final_states() {
    let d = dir("herd");
    // Flat memory: SB's (1, 1) is one of three outcomes, each one final state.
    let sb = write(&d, "sb.litmus", SB);
    let o = cudasem(&["litmus", sb.to_str().unwrap()]);
    let text = stdout(&o);
    assert!(
        text.contains("herd: Ok Witnesses Positive: 1 Negative: 2 Observation SB Sometimes 1 2"),
        "{text}"
    );
    // `forall` false of some outcomes: the condition does not hold, Sometimes.
    let all = write(&d, "forall.litmus", SB_FORALL);
    let text = stdout(&cudasem(&["litmus", all.to_str().unwrap()]));
    assert!(
        text.contains(
            "herd: No Witnesses Positive: 1 Negative: 2 Observation SB-forall Sometimes 1 2"
        ),
        "{text}"
    );
    // `forall` true of the one outcome: Always, nothing negative.
    let barrier = common::workspace().join("examples/litmus/barrier-inscope.litmus");
    let text = stdout(&cudasem(&["litmus", barrier.to_str().unwrap()]));
    assert!(
        text.contains(
            "herd: Ok Witnesses Positive: 1 Negative: 0 Observation barrier-inscope Always 1 0"
        ),
        "{text}"
    );
}
