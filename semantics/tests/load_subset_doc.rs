//! `docs/ptx-subset.md` agrees with the decoder in both directions: the opcodes in the tables of
//! "Supported instructions" are exactly `SUPPORTED_OPCODES`, the gaps of "Not supported (yet)"
//! exactly `Gap::ALL`; and every documented opcode is decoded (not reported unsupported).

use semantics::load::{Gap, SUPPORTED_OPCODES};
use std::collections::BTreeSet;

fn doc() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/ptx-subset.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The first cells (without backticks) of the table rows in the section titled `title`.
fn first_cells(doc: &str, title: &str) -> BTreeSet<String> {
    let section = doc
        .split(&format!("## {title}"))
        .nth(1)
        .unwrap_or_else(|| panic!("no section `{title}`"));
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter_map(|l| l.trim().strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn supported_opcodes_match_the_document() {
    let documented = first_cells(&doc(), "Supported instructions");
    let decoded: BTreeSet<String> = SUPPORTED_OPCODES.iter().map(|s| s.to_string()).collect();
    let missing: Vec<_> = decoded.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&decoded).collect();
    assert!(
        missing.is_empty(),
        "decoded but not documented in docs/ptx-subset.md: {missing:?}"
    );
    assert!(
        extra.is_empty(),
        "documented but not in SUPPORTED_OPCODES: {extra:?}"
    );
}

#[test]
fn gaps_match_the_document() {
    let documented = first_cells(&doc(), "Not supported (yet)");
    let known: BTreeSet<String> = Gap::ALL.iter().map(|g| g.key().to_string()).collect();
    assert_eq!(
        documented, known,
        "the gap table of docs/ptx-subset.md and Gap::ALL differ"
    );
}

#[test]
fn no_supported_opcode_is_reported_as_unsupported() {
    // Every supported opcode, written bare, gets a decoding diagnostic (missing type or operands)
    // but never "unsupported instruction".
    for op in SUPPORTED_OPCODES {
        let src =
            format!(".version 7.0\n.target sm_70\n.address_size 64\n.entry k() {{\n {op};\n}}\n");
        let parsed = ptx_parser::parse(&src);
        if let Err(ds) = semantics::load(&parsed.module, &src) {
            for d in ds {
                assert!(
                    !d.message.starts_with("unsupported instruction"),
                    "`{op}`: {}",
                    d.message
                );
            }
        }
    }
}
