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

/// The page docs/rules.md: every rule `cudasem rules` lists, its thesis section and the one
/// function (and file) that implements it. Generated from the catalogue, so it cannot drift:
/// after a change, `CUDASEM_BLESS=1 cargo test -p semantics --test rules_implemented` rewrites it.
fn rules_page(src: &Path) -> String {
    let mut page = String::from(
        "# Where each rule is implemented\n\n\
         Every rule `cudasem rules` lists (Habermaier, *The Model of Computation of CUDA and its \
         Formal Semantics*, chapters 4 and 5, and the rules cudasem adds), with the function that \
         implements it. `cudasem rules NAME` prints the rule's text and cudasem's deviations \
         ([deviations.md](deviations.md)). Generated from the rules catalogue by \
         `CUDASEM_BLESS=1 cargo test -p semantics --test rules_implemented`; a test checks that it \
         is current.\n\n\
         | rule | source | implemented by | file |\n|---|---|---|---|\n",
    );
    for doc in semantics::rules::all() {
        let parts: Vec<&str> = doc.implemented_by.split("::").collect();
        let (_, module) = parts.split_last().expect("a path");
        let file = module_file(src, module)
            .and_then(|f| {
                f.strip_prefix(src.parent()?.parent()?)
                    .ok()
                    .map(|p| p.display().to_string())
            })
            .unwrap_or_default();
        page.push_str(&format!(
            "| `{}`{} | {} | `semantics::{}` | `{}` |\n",
            doc.qualified_name(),
            if doc.deviation.is_some() { " *" } else { "" },
            doc.source(),
            doc.implemented_by,
            file
        ));
    }
    page.push_str("\n`*`: cudasem departs from the thesis here (`cudasem rules NAME` says how).\n");
    page
}

#[test]
fn the_rules_page_is_current() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let page_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rules.md");
    let want = rules_page(&src);
    if std::env::var_os("CUDASEM_BLESS").is_some() {
        std::fs::write(&page_path, &want).expect("docs/rules.md written");
    }
    let have = std::fs::read_to_string(&page_path).unwrap_or_default();
    assert!(
        have == want,
        "docs/rules.md is not the rules catalogue's page: run \
         `CUDASEM_BLESS=1 cargo test -p semantics --test rules_implemented` and commit it"
    );
}
