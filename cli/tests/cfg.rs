//! `cudasem cfg` snapshots (text and `--dot`) for the thesis listings and clang's divergent
//! if/else kernel; the divergent branch reconverges at the instruction after the join.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .to_path_buf()
}

/// Runs `cudasem cfg` on a corpus file (path relative to the workspace, so snapshots are stable).
fn cfg(file: &str, dot: bool) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cudasem"));
    // Replay traces the binary writes go to the test target's scratch folder, not the system's.
    cmd.env("TMPDIR", env!("CARGO_TARGET_TMPDIR"));
    cmd.arg("cfg")
        .arg(file)
        .current_dir(root())
        .env("NO_COLOR", "1");
    if dot {
        cmd.arg("--dot");
    }
    let out = cmd.output().expect("run cudasem");
    format!(
        "exit {}\n{}{}",
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    )
}

fn snapshot(file: &str) {
    let name = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let text = cfg(file, false);
    assert!(text.starts_with("exit 0"), "{file}:\n{text}");
    insta::assert_snapshot!(format!("{name}_text"), text);
    let dot = cfg(file, true);
    assert!(dot.starts_with("exit 0"), "{file}:\n{dot}");
    insta::assert_snapshot!(format!("{name}_dot"), dot);
}

#[test]
fn thesis_listings() {
    for f in [
        "listing_5_4",
        "listing_5_5",
        "listing_5_6",
        "listing_5_7",
        "listing_6_1",
        "listing_6_2",
    ] {
        let path = format!("tests/thesis/{f}.ptx");
        if root().join(&path).exists() {
            snapshot(&path);
        }
    }
}

/// The corpus's divergent if/else kernel (clang output).
fn if_else_kernel() -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("tests/kernels"))
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| {
            n.ends_with(".ptx")
                && (n.contains("diverg") || n.contains("ifelse") || n.contains("if_else"))
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .find(|n| n.contains("if_else") || n.contains("ifelse"))
        .map(|n| format!("tests/kernels/{n}"))
}

#[test]
fn divergent_if_else_reconverges_after_the_join() {
    let Some(file) = if_else_kernel() else {
        panic!("no divergent if/else kernel in tests/kernels");
    };
    snapshot(&file);
    // The if/else branch is the last conditional `bra` before the join label; its reconvergence
    // point is the join: the first instruction after the label the `bra.uni` of the then-path
    // jumps to.
    let source = std::fs::read_to_string(root().join(&file)).expect("read");
    let lines: Vec<&str> = source.lines().collect();
    let uni = lines
        .iter()
        .position(|l| l.trim_start().starts_with("bra.uni"))
        .expect("a bra.uni to the join");
    let join = lines[uni]
        .split_whitespace()
        .last()
        .expect("label")
        .trim_end_matches(';');
    let label_line = lines
        .iter()
        .position(|l| l.trim() == format!("{join}:"))
        .expect("join label")
        + 1;
    let after = label_line + 1;
    let text = cfg(&file, false);
    assert!(
        text.contains(&format!("({join}), line {after}")),
        "reconvergence at {join} (line {after}) expected:\n{text}"
    );
}

/// A module of several functions is one graph: a cluster per function, each block's
/// instructions in its node, and the kernel's calls as edges to the callee's cluster.
#[test]
fn several_functions_are_one_graph_with_a_cluster_each() {
    let file = "tests/kernels/noinline_func.ptx";
    let dot = cfg(file, true);
    assert!(dot.starts_with("exit 0"), "{dot}");
    insta::assert_snapshot!("noinline_func_dot", dot);
    assert_eq!(dot.matches("digraph ").count(), 1, "{dot}");
    assert!(dot.contains("subgraph cluster_mix {"), "{dot}");
    assert!(dot.contains("subgraph cluster_noinline_func {"), "{dot}");
    // Instructions in the nodes, with their PTX lines.
    let source = std::fs::read_to_string(root().join(file)).expect("read");
    let (n, mad) = source
        .lines()
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with("mad.lo.s32"))
        .expect("a mad in the kernel");
    let mad = mad.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(dot.contains(&format!("{}: {mad}\\l", n + 1)), "{dot}");
    // Two calls of `mix`, each an edge into its cluster.
    assert_eq!(dot.matches("-> mix_B0 [style=dotted").count(), 2, "{dot}");
    // --kernel keeps one cluster.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cudasem"));
    let out = cmd
        .args(["cfg", file, "--dot", "--kernel", "mix"])
        .current_dir(root())
        .output()
        .expect("run");
    let one = String::from_utf8_lossy(&out.stdout);
    assert_eq!(one.matches("subgraph cluster_").count(), 1, "{one}");
}
