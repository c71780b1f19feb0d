//! Rendered diagnostics of malformed inputs (syntax and load errors), as snapshots of the
//! `cudasem parse` stderr and exit code. Every message must say what to do (a `help:` line).

use std::path::PathBuf;
use std::process::Command;

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// Runs `cudasem parse case.ptx` on `source` (written to a scratch folder, run from there so the
/// path in the output is stable) and returns "exit N" plus stderr.
fn parse_output(name: &str, source: &str) -> String {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("cudasem-diagnostics-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    std::fs::write(dir.join("case.ptx"), source).expect("write case");
    let out = Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        .args(["parse", "case.ptx"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run cudasem");
    let _ = std::fs::remove_dir_all(&dir);
    format!(
        "exit {}\n{}",
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn check(name: &str, body: &str) {
    let out = parse_output(name, &format!("{HEADER}{body}"));
    assert!(
        out.starts_with("exit 2"),
        "{name}: expected exit 2, got:\n{out}"
    );
    assert!(
        out.contains("help:"),
        "{name}: the diagnostic must say what to do:\n{out}"
    );
    insta::assert_snapshot!(name, out);
}

/// Syntax errors come from the parser, whose messages do not all carry a help line yet; they
/// must still point at `case.ptx:LINE:COL`.
fn check_syntax(name: &str, body: &str) {
    let out = parse_output(name, &format!("{HEADER}{body}"));
    assert!(
        out.starts_with("exit 2"),
        "{name}: expected exit 2, got:\n{out}"
    );
    assert!(
        out.contains("case.ptx:"),
        "{name}: the diagnostic must name the place:\n{out}"
    );
    insta::assert_snapshot!(name, out);
}

#[test]
fn missing_semicolon() {
    check_syntax(
        "missing_semicolon",
        ".entry k()\n{\n\t.reg .b32 %r<3>;\n\tadd.s32 %r1, %r2, 1\n\tret;\n}\n",
    );
}

#[test]
fn unbalanced_brace() {
    check_syntax(
        "unbalanced_brace",
        ".entry k()\n{\n\t.reg .b32 %r<3>;\n\t{\n\tret;\n}\n",
    );
}

#[test]
fn bad_operand() {
    check_syntax(
        "bad_operand",
        ".entry k()\n{\n\t.reg .b32 %r<3>;\n\tadd.s32 %r1, %r2, ];\n\tret;\n}\n",
    );
}

#[test]
fn bad_directive() {
    check_syntax("bad_directive", ".entyr k()\n{\n\tret;\n}\n");
}

#[test]
fn undefined_label() {
    check(
        "undefined_label",
        ".entry k()\n{\n\t.reg .pred %p1;\n\t@%p1 bra DONE;\n\tret;\n}\n",
    );
}

#[test]
fn undefined_register() {
    check(
        "undefined_register",
        ".entry k()\n{\n\t.reg .b32 %r<3>;\n\tadd.s32 %r1, %r2, %r7;\n\tret;\n}\n",
    );
}

#[test]
fn unsupported_instruction() {
    check(
        "unsupported_instruction",
        ".entry k()\n{\n\t.reg .b32 %r<8>;\n\t.reg .f32 %f<8>;\n\tmma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1}, {%r2}, {%f4, %f5, %f6, %f7};\n\tret;\n}\n",
    );
}

#[test]
fn immediate_as_destination() {
    check(
        "immediate_as_destination",
        ".entry k()\n{\n\t.reg .b32 %r<3>;\n\tmov.u32 5, %r1;\n\tret;\n}\n",
    );
}

#[test]
fn vector_where_scalar_required() {
    check(
        "vector_where_scalar_required",
        ".entry k()\n{\n\t.reg .v2 .b32 v;\n\t.reg .b32 %r1;\n\tadd.s32 %r1, v, 1;\n\tret;\n}\n",
    );
}

#[test]
fn duplicate_label() {
    check(
        "duplicate_label",
        ".entry k()\n{\nL:\n\tbra L;\nL:\n\tret;\n}\n",
    );
}

#[test]
fn branch_into_another_function() {
    check(
        "branch_into_another_function",
        ".func f()\n{\nINSIDE_F:\n\tret;\n}\n.entry k()\n{\n\tbra INSIDE_F;\n}\n",
    );
}

#[test]
fn bad_initializer() {
    check(
        "bad_initializer",
        ".global .u32 table[2] = {1, 2, 3};\n.global .u32 x = 1.5;\n.entry k()\n{\n\tret;\n}\n",
    );
}

#[test]
fn division_by_zero_in_initializer() {
    check(
        "division_by_zero",
        ".global .u32 x = 10 / (2 - 2);\n.entry k()\n{\n\tret;\n}\n",
    );
}

#[test]
fn call_arity() {
    check(
        "call_arity",
        ".func (.param .b32 r) f(.param .b32 a, .param .b32 b)\n{\n\tret;\n}\n.entry k()\n{\n\t.param .b32 x;\n\t.param .b32 y;\n\tcall (y), f, (x);\n\tret;\n}\n",
    );
}

#[test]
fn type_mismatch() {
    check(
        "type_mismatch",
        ".entry k()\n{\n\t.reg .b64 %rd1;\n\t.reg .b32 %r<3>;\n\tadd.s32 %rd1, %r1, %r2;\n\tret;\n}\n",
    );
}

#[test]
fn unknown_and_contradictory_modifiers() {
    check(
        "modifiers",
        ".entry k()\n{\n\t.reg .b32 %r<3>;\n\t.reg .pred %p1;\n\tadd.wrapped.s32 %r1, %r1, %r2;\n\tsetp.lt.gt.s32 %p1, %r1, %r2;\n\tret;\n}\n",
    );
}

#[test]
fn unreadable_file() {
    let out = Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        .args(["parse", "/nonexistent/k.ptx"])
        .env("NO_COLOR", "1")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/k.ptx"));
}

#[test]
fn a_valid_file_exits_zero_with_a_summary() {
    let out = parse_output(
        "valid",
        &format!("{HEADER}.global .u32 g;\n.entry k(.param .u64 p)\n{{\n\tret;\n}}\n"),
    );
    assert!(out.starts_with("exit 0"), "{out}");
}
