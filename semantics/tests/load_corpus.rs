//! The corpus loads: every `.ptx` under `tests/kernels` (recursively) and `tests/thesis` loads
//! without errors; every ZLUDA conformance file either loads or fails only with "unsupported"
//! diagnostics naming a gap that `docs/ptx-subset.md` documents.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "ptx") {
            out.push(p);
        }
    }
}

/// Parses and loads; `Err` holds the rendered error messages.
fn load_file(path: &Path) -> Result<semantics::Program, Vec<String>> {
    let source = std::fs::read_to_string(path).map_err(|e| vec![format!("cannot read: {e}")])?;
    let parsed = ptx_parser::parse(&source);
    let mut errors: Vec<String> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.severity == ptx_parser::Severity::Error)
        .map(|d| format!("parse: {} (byte {})", d.message, d.span.start))
        .collect();
    match semantics::load(&parsed.module, &source) {
        Ok((p, _)) if errors.is_empty() => Ok(p),
        Ok(_) => Err(errors),
        Err(ds) => {
            errors.extend(
                ds.iter()
                    .filter(|d| d.severity == ptx_parser::Severity::Error)
                    .map(|d| {
                        let line = source[..d.span.start as usize].matches('\n').count() + 1;
                        format!("line {line}: {}", d.message)
                    }),
            );
            Err(errors)
        }
    }
}

#[test]
fn corpus_loads_without_errors() {
    let root = workspace();
    let mut files = Vec::new();
    ptx_files(&root.join("tests/kernels"), &mut files);
    ptx_files(&root.join("tests/thesis"), &mut files);
    assert!(
        !files.is_empty(),
        "no corpus files under tests/kernels or tests/thesis"
    );
    let mut failures = Vec::new();
    for f in &files {
        if let Err(errors) = load_file(f) {
            failures.push(format!("{}:\n  {}", f.display(), errors.join("\n  ")));
        }
    }
    println!(
        "corpus: {} of {} files load",
        files.len() - failures.len(),
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} corpus files fail to load:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The gap keys listed under "Not supported (yet)" in docs/ptx-subset.md.
fn documented_gaps() -> Vec<String> {
    let doc = std::fs::read_to_string(workspace().join("docs/ptx-subset.md"))
        .expect("docs/ptx-subset.md");
    let section = doc
        .split("## Not supported (yet)")
        .nth(1)
        .expect("a \"Not supported (yet)\" section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn zluda_files_load_or_name_a_documented_gap() {
    let dir = match std::env::var_os("CUDASEM_CONFORMANCE") {
        Some(d) => PathBuf::from(d).join("zluda/ptx"),
        None => workspace().join("../shared/conformance/zluda/ptx"),
    };
    if !dir.is_dir() {
        println!(
            "ZLUDA conformance files not found at {}; set CUDASEM_CONFORMANCE to the conformance folder to run this check",
            dir.display()
        );
        return;
    }
    let gaps = documented_gaps();
    let mut files = Vec::new();
    ptx_files(&dir, &mut files);
    let mut loaded = 0;
    let mut by_gap: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut bad = Vec::new();
    for f in &files {
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        match load_file(f) {
            Ok(_) => loaded += 1,
            Err(errors) => {
                for e in &errors {
                    let gap = e.split("(gap: `").nth(1).and_then(|r| r.split('`').next());
                    match gap {
                        Some(g) if e.contains("unsupported") && gaps.iter().any(|d| d == g) => {
                            let list = by_gap.entry(g.to_string()).or_default();
                            if !list.contains(&name) {
                                list.push(name.clone());
                            }
                        }
                        _ => bad.push(format!("{name}: {e}")),
                    }
                }
            }
        }
    }
    println!("ZLUDA: {loaded} of {} files load", files.len());
    for (gap, names) in &by_gap {
        println!(
            "  gap `{gap}`: {} file(s): {}",
            names.len(),
            names.join(", ")
        );
    }
    assert!(
        bad.is_empty(),
        "ZLUDA files failing for reasons other than a documented gap:\n{}",
        bad.join("\n")
    );
}
