//! Every entry of the rule catalogue (`semantics::rules`, what `cudasem rules` prints) names the
//! function that implements it; this reads the crate's sources and checks that the function is
//! there, in the module the path names.

use std::path::{Path, PathBuf};

/// The source file of module `path` (`machine::warp::simt_stack`) of this crate.
fn module_file(src: &Path, path: &[&str]) -> Option<PathBuf> {
    let dir: PathBuf = path.iter().collect();
    [
        src.join(&dir).with_extension("rs"),
        src.join(&dir).join("mod.rs"),
    ]
    .into_iter()
    .find(|f| f.is_file())
}

/// Whether `text` defines a function (free or method) named `name`.
fn defines(text: &str, name: &str) -> bool {
    [format!("fn {name}("), format!("fn {name}<")]
        .iter()
        .any(|d| text.contains(d.as_str()))
}

#[test]
fn every_rule_names_an_existing_function() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    for doc in semantics::rules::all() {
        let parts: Vec<&str> = doc.implemented_by.split("::").collect();
        let (name, module) = parts.split_last().expect("a path");
        let found = module_file(&src, module)
            .and_then(|f| std::fs::read_to_string(f).ok())
            .is_some_and(|text| defines(&text, name));
        if !found {
            missing.push(format!(
                "{} -> {}",
                doc.qualified_name(),
                doc.implemented_by
            ));
        }
    }
    assert!(missing.is_empty(), "rules naming no function: {missing:#?}");
}

#[test]
fn the_check_finds_a_missing_function() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let simt = module_file(&src, &["machine", "warp", "simt_stack"]).expect("simt_stack.rs");
    let text = std::fs::read_to_string(simt).expect("readable");
    assert!(defines(&text, "bra_guard"));
    assert!(!defines(&text, "bra_guardian"));
    assert!(module_file(&src, &["machine", "nowhere"]).is_none());
}
