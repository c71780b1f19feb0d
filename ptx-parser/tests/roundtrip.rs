//! Corpus round trips: every `.ptx` file of the ZLUDA conformance set and of the workspace's
//! `tests/kernels` and `tests/thesis` folders parses without errors, and
//! `parse -> print -> parse` gives the same AST ignoring spans.

use std::path::{Path, PathBuf};

use ptx_parser::{parse, strip_spans};

/// The workspace root (this crate's parent).
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            ptx_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "ptx") {
            out.push(path);
        }
    }
}

/// Checks one file; returns a description of the failure, if any.
fn check(path: &Path) -> Option<String> {
    let source = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) => return Some(format!("{}: unreadable: {e}", path.display())),
    };
    let first = parse(&source);
    if first.has_errors() {
        return Some(format!("{}: diagnostics {:#?}", path.display(), first.diagnostics));
    }
    let printed = first.module.to_string();
    let second = parse(&printed);
    if second.has_errors() {
        return Some(format!(
            "{}: printed text does not parse: {:#?}\n--- printed ---\n{printed}",
            path.display(),
            second.diagnostics
        ));
    }
    if strip_spans(&first.module) != strip_spans(&second.module) {
        return Some(format!("{}: round trip changed the AST\n--- printed ---\n{printed}", path.display()));
    }
    None
}

fn check_all(files: &[PathBuf]) {
    let failures: Vec<String> = files.iter().filter_map(|f| check(f)).collect();
    assert!(failures.is_empty(), "{} of {} files failed:\n{}", failures.len(), files.len(), failures.join("\n\n"));
}

#[test]
fn zluda_corpus_round_trips() {
    let dir = match std::env::var_os("CUDASEM_CONFORMANCE") {
        Some(root) => PathBuf::from(root).join("zluda/ptx"),
        None => workspace().join("../shared/conformance/zluda/ptx"),
    };
    let mut files = Vec::new();
    ptx_files(&dir, &mut files);
    if files.is_empty() {
        eprintln!(
            "ZLUDA conformance data absent at {}: skipping; set CUDASEM_CONFORMANCE to the \
             directory holding `zluda/ptx` to run this test",
            dir.display()
        );
        return;
    }
    files.sort();
    check_all(&files);
    eprintln!("{} ZLUDA files round-trip", files.len());
}

#[test]
fn workspace_corpus_round_trips() {
    let mut files = Vec::new();
    ptx_files(&workspace().join("tests/kernels"), &mut files);
    ptx_files(&workspace().join("tests/thesis"), &mut files);
    files.sort();
    check_all(&files);
    eprintln!("{} workspace corpus files round-trip", files.len());
}
