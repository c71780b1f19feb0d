//! Mutation fuzzing of every parser a user's input reaches (proptest-based, run by
//! `cargo test -p cli fuzz_inputs`): the PTX parser and loader, launch files (parsed and resolved
//! against a program), herd litmus files, AXB progress tests, replay traces (RON, JSON Lines,
//! compact strings) and the debugger's command parser.
//!
//! Each case takes a seed from the committed corpus (`cli/fuzz-corpus/<target>/`), applies a
//! few random byte-level mutations (replace, insert, delete, duplicate a slice, splice in a
//! token the parsers care about) and feeds the result to the parser: it must return `Ok` or
//! `Err`, never panic. The default number of cases per target is CI-sized (proptest's 256);
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

proptest! {
    #[test]
    fn ptx_parse_and_load_never_panic(text in input("ptx")) {
        let parsed = ptx_parser::parse(&text);
        if !parsed.has_errors() {
            let _ = semantics::load(&parsed.module, &text);
        }
    }

    #[test]
    fn launch_files_never_panic(text in input("launch")) {
        thread_local!(static PROGRAM: semantics::Program = vecadd());
        if let Ok(launch) = crate::launch::Launch::from_ron(&text, "fuzz.ron", Path::new(".")) {
            PROGRAM.with(|p| {
                // A mutated length must not make the test allocate gigabytes: a small budget.
                let _ = launch.resolve_within(p, 64 << 20);
            });
        }
    }

    #[test]
    fn litmus_files_never_panic(text in input("litmus")) {
        let _ = scheduler::litmus::parse::parse(&text);
    }

    #[test]
    fn axb_tests_never_panic(text in input("axb")) {
        if let Ok(test) = scheduler::progress::axb::parse("fuzz.txt", &text) {
            let _ = test.oracle();
        }
    }

    #[test]
    fn traces_never_panic(text in input("trace")) {
        use traces::format;
        use crate::commands::replay::CliTrace;
        let _: Result<CliTrace, _> = format::from_json_lines(&text);
        let _: Result<CliTrace, _> = format::from_ron(&text);
        for line in text.lines() {
            let _ = format::parse_compact(line);
        }
    }

    #[test]
    fn debugger_commands_never_panic(text in input("debug")) {
        for line in text.lines() {
            let _ = scheduler::debugger::command::parse(line);
        }
    }
}
