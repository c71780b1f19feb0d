//! The commands the documentation shows run as written: every `cudasem ...` line of a `sh` code
//! block in README.md and docs/*.md whose input files exist in the repository (lines with
//! placeholders such as `KERNEL.ptx` are skipped) is run in a scratch folder, in the order of its
//! block, with the repository's paths made absolute and outputs written to the scratch folder.
//! Each must end as a user reading the page expects: exit 0, or 1 where a run finds what the page
//! is about (a lasso, a race, a forbidden outcome), never bad input (2) or an internal error (3).

mod common;
use std::path::{Path, PathBuf};

/// `cudasem` commands of the `sh` blocks of one Markdown file, continuation lines joined and
/// comments dropped, grouped by block.
fn blocks(markdown: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut current: Option<Vec<String>> = None;
    let mut pending = String::new();
    for line in markdown.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            match current.take() {
                Some(block) => out.push(block),
                None if t == "```sh" || t == "```bash" => current = Some(Vec::new()),
                None => {}
            }
            continue;
        }
        let Some(block) = current.as_mut() else {
            continue;
        };
        let code = t.split(" #").next().unwrap_or(t).trim_end();
        if code.starts_with('#') {
            continue;
        }
        if let Some(head) = code.strip_suffix('\\') {
            pending.push_str(head.trim_end());
            pending.push(' ');
            continue;
        }
        pending.push_str(code);
        let command = std::mem::take(&mut pending);
        let command = command.trim();
        // The README's quick start runs the binary through cargo.
        let command = match command.split_once(" -- ") {
            Some((cargo, rest)) if cargo.starts_with("cargo run") && cargo.contains("-p cli") => {
                format!("cudasem {rest}")
            }
            _ => command.to_string(),
        };
        if command.starts_with("cudasem ") {
            block.push(command);
        }
    }
    out
}

/// The words of `command` after `cudasem`, repository paths made absolute; `None` when it names
/// a file that is neither in the repository nor written earlier in its block (a placeholder).
fn words(command: &str, root: &Path, written: &[String]) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for w in command.split_whitespace().skip(1) {
        let looks_like_file = w.contains('.') && !w.starts_with('-') && !w.contains(':');
        if looks_like_file && root.join(w).exists() {
            out.push(root.join(w).display().to_string());
        } else if looks_like_file
            && w.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && !written.iter().any(|f| f == w)
        {
            return None;
        } else {
            out.push(w.to_string());
        }
    }
    Some(out)
}

/// Files a command writes (`--trace F`, `--save F`, `-o F`, `--html F`, `--report F`).
fn outputs(args: &[String]) -> Vec<String> {
    args.windows(2)
        .filter(|p| {
            matches!(
                p[0].as_str(),
                "--trace" | "--save" | "-o" | "--html" | "--report"
            )
        })
        .map(|p| p[1].clone())
        .collect()
}

#[test]
fn every_documented_command_runs_as_written() {
    let root = common::workspace();
    let mut pages: Vec<PathBuf> = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let mut ran = 0;
    let clang_available = common::clang_available();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("read the page");
        let name = page.file_stem().unwrap().to_string_lossy().to_string();
        for (i, block) in blocks(&text).into_iter().enumerate() {
            let dir = common::Scratch::new("docs", &format!("{name}-{i}"));
            let mut written: Vec<String> = Vec::new();
            for command in block {
                let Some(args) = words(&command, &root, &written) else {
                    continue;
                };
                if args.iter().any(|a| a.ends_with(".cu")) && !clang_available {
                    eprintln!(
                        "SKIPPED `{command}`: clang is not installed; .cu files need it (apt-get install -y clang)"
                    );
                    continue;
                }
                written.extend(outputs(&args));
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                let (code, out, err) = common::cudasem_in(&dir, &refs);
                assert!(
                    code == 0 || code == 1,
                    "{}: `{command}` exited {code}\n{out}{err}",
                    page.display()
                );
                assert!(
                    !err.contains("panicked") && !err.contains("this is a bug"),
                    "{}: `{command}`\n{err}",
                    page.display()
                );
                ran += 1;
            }
        }
    }
    eprintln!("{ran} documented commands ran");
    assert!(
        ran >= 10,
        "only {ran} documented commands found: did the pages change shape?"
    );
}

#[test]
fn commands_are_read_from_sh_blocks_joined_and_placeholders_skipped() {
    let md = "text\n```sh\n# a comment\ncudasem run a.ptx \\\n  --launch b.ron   # why\necho no\ncargo run --release -p cli -- parse c.ptx\n```\n```ron\ncudasem not this\n```\n";
    assert_eq!(
        blocks(md),
        vec![vec![
            "cudasem run a.ptx --launch b.ron".to_string(),
            "cudasem parse c.ptx".to_string()
        ]]
    );
    let root = common::workspace();
    assert_eq!(
        words("cudasem run KERNEL.ptx --launch L.ron", &root, &[]),
        None
    );
    let w = words(
        "cudasem view t.jsonl -o run.html",
        &root,
        &["t.jsonl".into()],
    )
    .unwrap();
    assert_eq!(w, ["view", "t.jsonl", "-o", "run.html"]);
    let w = words("cudasem run tests/kernels/vecadd.ptx", &root, &[]).unwrap();
    assert!(w[1].ends_with("tests/kernels/vecadd.ptx") && Path::new(&w[1]).is_absolute());
}

/// The output blocks of a page: plain ``` blocks whose first line is `$ cudasem ...`, as the
/// command and the lines it shows.
fn output_blocks(markdown: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```" {
            continue;
        }
        let body: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        if let Some(command) = body.first().and_then(|l| l.strip_prefix("$ "))
            && command.starts_with("cudasem ")
        {
            out.push((
                command.to_string(),
                body[1..].iter().map(|l| l.to_string()).collect(),
            ));
        }
    }
    out
}

/// Whether `shown` (a line of a page, where `...` stands for an elided middle) is a line of
/// `actual`.
fn shown_in(shown: &str, actual: &str) -> bool {
    match shown.split_once("...") {
        Some((head, tail)) => actual.lines().any(|l| {
            l.starts_with(head) && l.ends_with(tail) && l.len() >= head.len() + tail.len()
        }),
        None => actual.lines().any(|l| l == shown),
    }
}

#[test]
fn documented_outputs_are_what_the_commands_print() {
    let root = common::workspace();
    let clang_available = common::clang_available();
    let mut pages: Vec<PathBuf> = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("read the page");
        for (command, shown) in output_blocks(&text) {
            // Run from the repository root with the paths as written: outputs name files as the
            // page's command does.
            let args: Vec<String> = command
                .split_whitespace()
                .skip(1)
                .map(str::to_string)
                .collect();
            if args.iter().any(|a| a.ends_with(".cu")) && !clang_available {
                eprintln!("SKIPPED `{command}`: clang is not installed (apt-get install -y clang)");
                continue;
            }
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, out, err) = common::cudasem_in(&root, &refs);
            assert!(
                code == 0 || code == 1,
                "{}: `{command}` exited {code}\n{err}",
                page.display()
            );
            for line in shown.iter().filter(|l| l.trim() != "...") {
                assert!(
                    shown_in(line, &out),
                    "{}: `{command}` no longer prints\n  {line}\nit prints:\n{out}",
                    page.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 2, "only {checked} output blocks found");
}

#[test]
fn shown_lines_may_elide_their_middle() {
    assert!(shown_in("a: 1", "x\na: 1\n"));
    assert!(!shown_in("a: 1", "a: 12\n"));
    assert!(shown_in(
        "to reproduce: cudasem replay ... k.ptx",
        "to reproduce: cudasem replay cudasem2:ab k.ptx\n"
    ));
    assert!(!shown_in(
        "to reproduce: cudasem replay ... k.ptx",
        "to reproduce: cudasem run k.ptx --x\n"
    ));
}
