//! `cudasem debug` breakpoints on source lines, end to end in scripted mode: `break FILE:LINE`,
//! `break LINE`, `until FILE:LINE` and `info breakpoints` on kernels whose PTX keeps `.loc`
//! lines: `tests/kernels/debug/source_lines` (clang `-gline-tables-only`, the `.loc` lines point
//! at the real `.cu` beside it) and the corpus's nvcc-style `vecadd_nvcc`. Lines of the `.cu`
//! are found by their `// @name` markers, so editing the kernel does not silently retarget a
//! test. Snapshots hold the transcripts; the asserts check what must hold whatever the text.

use std::io::Write;
use std::process::{Command, Stdio};

mod common;
use common::workspace;

/// Exit code and stdout (stderr appended) of `cudasem debug PTX --launch RON` with `script`
/// on standard input.
fn debug(ptx: &str, launch: &str, script: &str) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        .args(["debug", ptx, "--launch", launch])
        .current_dir(workspace())
        .env("NO_COLOR", "1")
        .env_remove("CUDASEM_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the cudasem binary runs");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(script.as_bytes()).expect("write stdin");
    }
    let out = child.wait_with_output().expect("cudasem ends");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

const KERNEL: &str = "tests/kernels/debug/source_lines";

/// The 1-based line of `source_lines.cu` that carries the marker `// @name`.
fn marked(name: &str) -> u32 {
    let path = workspace().join(format!("{KERNEL}.cu"));
    let text = std::fs::read_to_string(&path).expect("source_lines.cu is readable");
    let marker = format!("// @{name}");
    let found: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_end().ends_with(&marker))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(found.len(), 1, "one line marked {marker}: {found:?}");
    found[0] as u32
}

/// The transcript of one command: the text after its echo up to the next prompt.
fn answer<'a>(out: &'a str, command: &str) -> &'a str {
    let echo = format!("(cudasem) {command}\n");
    let start = out
        .find(&echo)
        .unwrap_or_else(|| panic!("`{command}` was not run:\n{out}"))
        + echo.len();
    let rest = &out[start..];
    &rest[..rest.find("(cudasem) ").unwrap_or(rest.len())]
}

/// The source lines that `source FILE:LINE:COL` lines of `text` name.
fn source_lines(text: &str) -> Vec<u32> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("source "))
        .filter_map(|s| s.split(':').nth(1)?.parse().ok())
        .collect()
}

#[test]
fn break_on_source_lines_of_a_clang_kernel() {
    let (body, lp, store) = (marked("body"), marked("loop"), marked("store"));
    let script = format!(
        "break source_lines.cu:{body}\nbreak {lp}\ninfo breakpoints\ncontinue\nwhere\ncontinue\ncontinue\ndelete 1\ncontinue\nprint %r2\nbreak {store}\ninfo breakpoints\n"
    );
    let (code, out) = debug(&format!("{KERNEL}.ptx"), &format!("{KERNEL}.ron"), &script);
    assert_eq!(
        code, 1,
        "the failed `break {store}` makes the script fail\n{out}"
    );
    // The loop's line is entered in two places (the first test before the loop, the update and
    // test at its end): one breakpoint, two locations.
    assert!(
        answer(&out, &format!("break {lp}")).contains("2 locations"),
        "{out}"
    );
    // Every stop is on the line of the breakpoint that stopped it.
    let first = answer(&out, "continue");
    assert!(
        first.starts_with("breakpoint 2 at source_lines.cu:"),
        "{first}"
    );
    assert_eq!(source_lines(first), vec![lp]);
    assert_eq!(source_lines(answer(&out, "where")), vec![lp]);
    let stops: Vec<u32> = out
        .split("(cudasem) continue\n")
        .skip(1)
        .map(|t| source_lines(&t[..t.find("(cudasem) ").unwrap_or(t.len())]))
        .map(|ls| ls.first().copied().unwrap_or(0))
        .collect();
    assert_eq!(stops, vec![lp, body, lp, lp], "{out}");
    // No code comes from the store line (clang turned the if/else into a select): the answer
    // names the nearest lines that have some, and the session goes on.
    let err = answer(&out, &format!("break {store}"));
    assert!(
        err.starts_with("error: no instruction comes from source_lines.cu:"),
        "{err}"
    );
    assert!(
        err.contains("the nearest lines that have some are"),
        "{err}"
    );
    assert!(answer(&out, "info breakpoints").contains("breakpoint"));
    insta::assert_snapshot!(out);
}

#[test]
fn until_a_source_line_and_line_errors() {
    let (even, index, body) = (marked("even"), marked("index"), marked("body"));
    let script = format!(
        "until source_lines.cu:{body}\nwhere\nuntil {even}\nuntil nowhere.cu:3\nuntil source_lines.cu:9999\nbreak ptx:1\nuntil {index}\nstatus\n"
    );
    let (code, out) = debug(&format!("{KERNEL}.ptx"), &format!("{KERNEL}.ron"), &script);
    assert_eq!(code, 1, "{out}");
    let reached = answer(&out, &format!("until source_lines.cu:{body}"));
    assert!(reached.contains("reached after"), "{reached}");
    assert_eq!(source_lines(reached), vec![body]);
    assert!(
        answer(&out, "until nowhere.cu:3")
            .starts_with("error: no source file `nowhere.cu` in the program's line table; its files: source_lines.cu"),
        "{out}"
    );
    assert!(
        answer(&out, "until source_lines.cu:9999").contains("the nearest line that has some is"),
        "{out}"
    );
    // `ptx:N` is always a PTX line, even where bare numbers are source lines.
    assert!(
        answer(&out, "break ptx:1").starts_with("breakpoint 1 at PTX line "),
        "{out}"
    );
    // The index line comes before the loop: no warp enters it again, so `until` runs to the
    // end; the answer says so and `status` agrees.
    assert!(
        answer(&out, &format!("until {index}")).contains("the kernel ended"),
        "{out}"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn break_on_a_line_of_an_nvcc_kernel_in_every_warp() {
    // vecadd_nvcc's `.file` is an absolute path (/home/cudasem/vecadd.cu): `vecadd.cu` finds it.
    // Line 6 is the guarded store (`c[i] = a[i] + b[i]`); line 3 has no code.
    let (code, out) = debug(
        "tests/kernels/nvcc/vecadd_nvcc.ptx",
        "tests/kernels/nvcc/vecadd_nvcc.ron",
        "break vecadd.cu:3\nbreak vecadd.cu:6 if tid >= 64\ncontinue\ncontinue\ninfo breakpoints\n",
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        answer(&out, "break vecadd.cu:3")
            .contains("no instruction comes from /home/cudasem/vecadd.cu:3")
            && answer(&out, "break vecadd.cu:3").contains("are 2 and 4"),
        "{out}"
    );
    let stops: Vec<&str> = out.split("(cudasem) continue\n").skip(1).collect();
    assert_eq!(stops.len(), 2);
    for s in &stops {
        assert!(
            s.starts_with("breakpoint 1 at /home/cudasem/vecadd.cu:6"),
            "{s}"
        );
        assert_eq!(source_lines(s).first(), Some(&6), "{s}");
    }
    insta::assert_snapshot!(out);
}

/// `list` shows the `.cu` the PTX's `.file` names (found beside the kernel when the path the
/// compiler wrote does not resolve), `list ptx` the PTX; `x` reads a buffer by name, the
/// kernel's parameters and a thread's local memory.
#[test]
fn list_cuda_lines_and_examine_spaces() {
    let body = marked("body");
    let script = format!(
        "break source_lines.cu:{body}\ncontinue\nlist\nlist ptx\nx/4wu in\nx/2gx .param 0\nx/1wu .local 0 lane 3\n"
    );
    let (code, out) = debug(&format!("{KERNEL}.ptx"), &format!("{KERNEL}.ron"), &script);
    assert_eq!(code, 0, "{out}");
    let cu = std::fs::read_to_string(workspace().join(format!("{KERNEL}.cu"))).unwrap();
    let listed = answer(&out, "list");
    let body_text = cu.lines().nth(body as usize - 1).unwrap();
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("=>") && l.ends_with(body_text)),
        "{listed}"
    );
    insta::assert_snapshot!(out);
}
