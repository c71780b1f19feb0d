//! Mutation fuzzing of every parser a user's input reaches (proptest-based, run by
//! `cargo test -p cli fuzz_inputs`): the PTX parser and loader, launch files (parsed and resolved
//! against a program), herd litmus files, AXB progress tests, replay traces (RON, JSON Lines,
//! compact strings) and the debugger's command parser.
//!
//! Each case takes a seed from the committed corpus (`cli/fuzz-corpus/<target>/`), applies a
//! few random byte-level mutations (replace, insert, delete, duplicate a slice, splice in a
//! token the parsers care about) and feeds the result to the parser: it must return `Ok` or
//! `Err`, never panic, and answer within [`HANG_SECONDS`] (a case that does not is reported as a
//! hang with its input). The default number of cases per target is CI-sized (proptest's 256);
//! a long campaign sets `PROPTEST_CASES` (docs/reliability.md has the figures of one).

use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// The seed files of one target, in name order (deterministic).
fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz-corpus")
        .join(target);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the seed corpus {} is missing: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    let seeds: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| std::fs::read(p).expect("read seed"))
        .collect();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    seeds
}

/// Tokens spliced in by [`Mutation::Token`]: the delimiters and keywords the parsers branch on.
const TOKENS: [&str; 16] = [
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    ";",
    "\"",
    ".reg",
    "%r1",
    "0x7fffffff",
    "-1",
    "99999999999999999999",
    "\n",
];

#[derive(Debug, Clone)]
enum Mutation {
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Token(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Replace(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), 1usize..16).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(i, t)| Mutation::Token(i, t)),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let at = |i: usize, len: usize| if len == 0 { 0 } else { i % (len + 1) };
        match *m {
            Mutation::Replace(i, b) if !bytes.is_empty() => {
                let i = i % bytes.len();
                bytes[i] = b;
            }
            Mutation::Replace(..) => {}
            Mutation::Insert(i, b) => {
                let i = at(i, bytes.len());
                bytes.insert(i, b);
            }
            Mutation::Delete(i, n) => {
                let i = at(i, bytes.len());
                let end = (i + n).min(bytes.len());
                bytes.drain(i..end);
            }
            Mutation::Duplicate(i, n) => {
                let i = at(i, bytes.len());
                let end = (i + n).min(bytes.len());
                let slice = bytes[i..end].to_vec();
                bytes.splice(i..i, slice);
            }
            Mutation::Token(i, t) => {
                let i = at(i, bytes.len());
                bytes.splice(i..i, TOKENS[t].bytes());
            }
        }
    }
    bytes
}

/// A case that has not answered after this long is a hang (no parser needs more than
/// milliseconds on a corpus-sized input; the bound is generous so a loaded machine never trips it).
const HANG_SECONDS: u64 = 60;

/// Runs `check` on `text` in a thread of its own, failing the case (with the input) if it does
/// not answer within [`HANG_SECONDS`]; a panic inside fails the case as well.
fn answers(text: String, check: fn(&str)) -> Result<(), TestCaseError> {
    answers_within(text, check, std::time::Duration::from_secs(HANG_SECONDS))
}

fn answers_within(
    text: String,
    check: fn(&str),
    limit: std::time::Duration,
) -> Result<(), TestCaseError> {
    let (done, answered) = std::sync::mpsc::channel();
    let input = text.clone();
    std::thread::spawn(move || {
        let outcome = std::panic::catch_unwind(|| check(&input));
        let _ = done.send(outcome.is_ok());
    });
    match answered.recv_timeout(limit) {
        Ok(true) => Ok(()),
        Ok(false) => Err(TestCaseError::fail(format!("panicked on {text:?}"))),
        Err(_) => Err(TestCaseError::fail(format!(
            "hang: no answer within {} s on {text:?}",
            limit.as_secs_f64()
        ))),
    }
}

/// A mutated seed of `target`, as the text a parser reads.
fn input(target: &'static str) -> impl Strategy<Value = String> {
    let seeds = corpus(target);
    (0..seeds.len(), proptest::collection::vec(mutation(), 0..8)).prop_map(move |(s, ms)| {
        String::from_utf8_lossy(&apply(seeds[s].clone(), &ms)).into_owned()
    })
}

/// The program launch files are resolved against (the corpus's vector addition).
fn vecadd() -> semantics::Program {
    let text = String::from_utf8(
        corpus("ptx")
            .into_iter()
            .find(|s| String::from_utf8_lossy(s).contains(".entry vecadd"))
            .expect("vecadd.ptx in the PTX corpus"),
    )
    .expect("UTF-8");
    let parsed = ptx_parser::parse(&text);
    semantics::load(&parsed.module, &text)
        .expect("vecadd loads")
        .0
}

fn ptx_parse_and_load(text: &str) {
    let parsed = ptx_parser::parse(text);
    if !parsed.has_errors() {
        let _ = semantics::load(&parsed.module, text);
    }
}

fn launch_file(text: &str) {
    thread_local!(static PROGRAM: semantics::Program = vecadd());
    if let Ok(launch) = crate::launch::Launch::from_ron(text, "fuzz.ron", Path::new(".")) {
        PROGRAM.with(|p| {
            // A mutated length must not make the test allocate gigabytes: a small budget.
            let _ = launch.resolve_within(p, 64 << 20);
        });
    }
}

fn litmus_file(text: &str) {
    let _ = litmus::parse::parse(text);
}

fn axb_test(text: &str) {
    if let Ok(test) = explore::progress::axb::parse("fuzz.txt", text) {
        let _ = test.oracle();
    }
}

fn trace(text: &str) {
    use crate::commands::replay::CliTrace;
    use traces::format;
    let _: Result<CliTrace, _> = format::from_json_lines(text);
    let _: Result<CliTrace, _> = format::from_ron(text);
    for line in text.lines() {
        let _ = format::parse_compact(line);
    }
}

fn debugger_commands(text: &str) {
    for line in text.lines() {
        let _ = debugger::command::parse(line);
    }
}

proptest! {
    #[test]
    fn ptx_parse_and_load_never_panic(text in input("ptx")) {
        answers(text, ptx_parse_and_load)?;
    }

    #[test]
    fn launch_files_never_panic(text in input("launch")) {
        answers(text, launch_file)?;
    }

    #[test]
    fn litmus_files_never_panic(text in input("litmus")) {
        answers(text, litmus_file)?;
    }

    #[test]
    fn axb_tests_never_panic(text in input("axb")) {
        answers(text, axb_test)?;
    }

    #[test]
    fn traces_never_panic(text in input("trace")) {
        answers(text, trace)?;
    }

    #[test]
    fn debugger_commands_never_panic(text in input("debug")) {
        answers(text, debugger_commands)?;
    }
}

#[test]
fn a_case_that_never_answers_is_a_hang_and_a_panic_is_a_failure() {
    fn sleeps(_: &str) {
        std::thread::sleep(std::time::Duration::from_secs(5));
    }
    fn panics(_: &str) {
        panic!("boom");
    }
    fn answers_at_once(_: &str) {}
    let short = std::time::Duration::from_millis(50);
    let err = answers_within("x".into(), sleeps, short).expect_err("a hang fails the case");
    assert!(
        err.to_string()
            .contains("hang: no answer within 0.05 s on \"x\""),
        "{err}"
    );
    let err = answers("y".into(), panics).expect_err("a panic fails the case");
    assert!(err.to_string().contains("panicked on \"y\""), "{err}");
    assert!(answers("z".into(), answers_at_once).is_ok());
}
