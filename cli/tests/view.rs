//! `cudasem view`: the teaching page (issue 19). Two kinds of checks:
//!
//! * the page as a file: self-contained (nothing it could fetch), bounded, its embedded data
//!   giving the thesis's Figure 5.2 rows; bad input is a clear error with exit code 2;
//! * the page in a real browser (headless Chromium, `chromium --headless --dump-dom`): what a
//!   person sees at a given step, after pressing keys (the page's `#keys=` presses them once it
//!   is drawn), for the three guided examples of docs/teaching.md. Without a Chromium on PATH
//!   these tests say so on stderr and pass as skipped (CI installs it: `apt-get install
//!   chromium`).

mod common;
use common::{cudasem_here, workspace};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh directory under the system's temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("cudasem-view-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
    fn path(&self, file: &str) -> String {
        self.0.join(file).display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = cudasem_here(args);
    assert!(code <= 1, "cudasem {args:?} failed ({code}): {out}{err}");
    out
}

/// The page of Listing 5.5 run with warp size 2 (Figure 5.2).
fn figure_5_2_page(dir: &TempDir) -> String {
    let trace = dir.path("f52.jsonl");
    let html = dir.path("f52.html");
    ok(&[
        "run",
        "tests/thesis/listing_5_5.ptx",
        "--launch",
        "tests/thesis/listing_5_5.ron",
        "--warp-size",
        "2",
        "--trace",
        &trace,
    ]);
    let out = ok(&["view", &trace, "tests/thesis/listing_5_5.ptx", "-o", &html]);
    assert!(out.contains("steps 1 to 28 of 28"), "{out}");
    html
}

/// The spin-lock lasso of Listing 6.1 found by `explore` (one warp of two lanes).
fn lasso_page(dir: &TempDir) -> String {
    let trace = dir.path("lasso.jsonl");
    let html = dir.path("lasso.html");
    let (code, out, err) = cudasem_here(&[
        "explore",
        "tests/thesis/listing_6_1.ptx",
        "--launch",
        "tests/thesis/listing_6_1.ron",
        "--save",
        &trace,
    ]);
    assert_eq!(code, 1, "the spin lock does not terminate: {out}{err}");
    ok(&["view", &trace, "-o", &html]);
    html
}

/// docs/teaching.md's stale L1 read: `random:96` is a schedule that reaches it.
fn stale_page(dir: &TempDir) -> String {
    let trace = dir.path("stale.jsonl");
    let html = dir.path("stale.html");
    let out = ok(&[
        "run",
        "docs/teaching/stale_l1.ptx",
        "--launch",
        "docs/teaching/stale_l1.ron",
        "--memory",
        "cached",
        "--max-blocks-per-sm",
        "1",
        "--silent",
        "none",
        "--schedule",
        "random:96",
        "--trace",
        &trace,
    ]);
    assert!(
        out.contains("[0] 1 0"),
        "the flag seen, the data not: {out}"
    );
    ok(&["view", &trace, "docs/teaching/stale_l1.ptx", "-o", &html]);
    html
}

fn data_of(html: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(html).expect("the page");
    let start = text
        .find(r#"<script type="application/json" id="data">"#)
        .expect("the data blob")
        + r#"<script type="application/json" id="data">"#.len();
    let end = start + text[start..].find("</script>").expect("its end");
    serde_json::from_str(&text[start..end]).expect("the data is JSON")
}

/// Nothing the browser could fetch: no URL, no external resource, and a policy that forbids any
/// request even if one slipped in; only the two script elements end with `</script>` (the data
/// cannot close one early).
fn assert_self_contained(text: &str) {
    for needle in [
        "http:", "https:", " src=", " href=", "url(", "@import", "//cdn",
    ] {
        assert!(!text.contains(needle), "the page contains `{needle}`");
    }
    assert!(text.contains("default-src 'none'"));
    assert_eq!(text.matches("</script>").count(), 2);
}

#[test]
fn the_page_is_one_self_contained_bounded_file() {
    let dir = TempDir::new("self");
    let html = figure_5_2_page(&dir);
    let text = std::fs::read_to_string(&html).expect("page");
    assert_self_contained(&text);
    assert!(text.len() < 200 * 1024, "{} bytes", text.len());
    // The same trace gives the same page, byte for byte.
    let again = dir.path("again.html");
    ok(&[
        "view",
        &dir.path("f52.jsonl"),
        "tests/thesis/listing_5_5.ptx",
        "-o",
        &again,
    ]);
    assert!(std::fs::read(&again).expect("page") == text.as_bytes());
}

/// `run --html`: the page of the run just made, the same steps as `view` draws from the run's
/// `--trace`; the line saying what was written goes to stderr (stdout stays the report).
#[test]
fn run_html_writes_the_page_of_the_run() {
    let dir = TempDir::new("run-html");
    let html = dir.path("run.html");
    let trace = dir.path("run.jsonl");
    let (code, out, err) = cudasem_here(&[
        "run",
        "tests/thesis/listing_5_5.ptx",
        "--launch",
        "tests/thesis/listing_5_5.ron",
        "--warp-size",
        "2",
        "--schedule",
        "random:3",
        "--trace",
        &trace,
        "--html",
        &html,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    serde_json::from_str::<serde_json::Value>(&out).expect("stdout is still the JSON report");
    assert!(err.contains("steps 1 to 28 of 28"), "{err}");
    assert_self_contained(&std::fs::read_to_string(&html).expect("the page"));
    let data = data_of(&html);
    assert_eq!(data["meta"]["policy"], "random:3");
    let viewed = dir.path("viewed.html");
    ok(&["view", &trace, "-o", &viewed]);
    let steps = data["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 28);
    assert_eq!(data["steps"], data_of(&viewed)["steps"]);
    // A run that fails writes its page too: that is when it is wanted.
    let dead = dir.path("dead.html");
    let (code, _, err) = cudasem_here(&[
        "run",
        "tests/thesis/listing_6_1.ptx",
        "--launch",
        "tests/thesis/listing_6_1.ron",
        "--max-steps",
        "50",
        "--html",
        &dead,
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(data_of(&dead)["steps"].as_array().expect("steps").len(), 50);
}

/// `explore --html`: the lasso's page, the same stem, cycle and steps as `view` draws from
/// `explore --save`.
#[test]
fn explore_html_writes_the_page_of_the_lasso() {
    let dir = TempDir::new("explore-html");
    let html = dir.path("lasso.html");
    let trace = dir.path("lasso.jsonl");
    let (code, out, err) = cudasem_here(&[
        "explore",
        "tests/thesis/listing_6_1.ptx",
        "--launch",
        "tests/thesis/listing_6_1.ron",
        "--save",
        &trace,
        "--html",
        &html,
    ]);
    assert_eq!(code, 1, "the spin lock does not terminate: {out}{err}");
    assert_self_contained(&std::fs::read_to_string(&html).expect("the page"));
    let data = data_of(&html);
    assert!(!data["lasso"].is_null(), "the page holds the lasso");
    // The explorer's own account of why the cycle is fair under the model it used comes first.
    let why = data["lasso"]["why"]
        .as_array()
        .expect("the lasso's explanation");
    let first = why[0].as_str().expect("text");
    let reason = first
        .strip_prefix("Why the cycle is fair under fair (weak) at level lanes: ")
        .and_then(|r| r.strip_suffix('.'))
        .unwrap_or_else(|| panic!("the model, the level and the reason: {first}"));
    assert!(reason.starts_with("F = "), "{reason}");
    assert!(out.contains(reason), "the reason explore prints: {out}");
    let viewed = dir.path("viewed.html");
    ok(&["view", &trace, "-o", &viewed]);
    let theirs = data_of(&viewed);
    assert!(!data["steps"].as_array().expect("steps").is_empty());
    assert_eq!(data["steps"], theirs["steps"]);
    // A saved trace carries no model: `view` explains the cycle by warps alone.
    assert_eq!(
        data["lasso"]["why"].as_array().map(|w| &w[1..]),
        theirs["lasso"]["why"].as_array().map(|w| &w[..])
    );
}

/// `check --html`: the page of the schedule with the race, as `view` draws it from the replay
/// command `check` prints.
#[test]
fn check_html_writes_the_page_of_the_failing_schedule() {
    let dir = TempDir::new("check-html");
    let html = dir.path("race.html");
    let (code, out, err) = cudasem_here(&[
        "check",
        "tests/kernels/race/add_neighbour.ptx",
        "--launch",
        "tests/kernels/race/add_neighbour.ron",
        "--schedule",
        "random:2",
        "--html",
        &html,
    ]);
    assert_eq!(code, 1, "the race is found: {out}{err}");
    assert_self_contained(&std::fs::read_to_string(&html).expect("the page"));
    let data = data_of(&html);
    assert_eq!(data["meta"]["policy"], "random:2");
    let ran = dir.path("run.html");
    let (code, out, err) = cudasem_here(&[
        "run",
        "tests/kernels/race/add_neighbour.ptx",
        "--launch",
        "tests/kernels/race/add_neighbour.ron",
        "--schedule",
        "random:2",
        "--html",
        &ran,
    ]);
    assert!(code <= 1, "{out}{err}");
    assert!(!data["steps"].as_array().expect("steps").is_empty());
    assert_eq!(data["steps"], data_of(&ran)["steps"]);
}

/// `fuzz --html`: the page of the earliest failure's (minimised) run, the schedule and the
/// number of steps the report gives.
#[test]
fn fuzz_html_writes_the_page_of_the_first_failure() {
    let dir = TempDir::new("fuzz-html");
    let html = dir.path("fail.html");
    let (code, out, err) = cudasem_here(&[
        "fuzz",
        "tests/thesis/listing_6_1.ptx",
        "--launch",
        "tests/thesis/listing_6_1.ron",
        "--runs",
        "4",
        "--max-steps",
        "40",
        "--format",
        "json",
        "--html",
        &html,
    ]);
    assert_eq!(code, 1, "the spin lock hits the step bound: {out}{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("the JSON report");
    let first = &report["failures"][0];
    assert_self_contained(&std::fs::read_to_string(&html).expect("the page"));
    let data = data_of(&html);
    assert_eq!(data["meta"]["policy"], first["schedule"]);
    let steps = data["steps"].as_array().expect("steps");
    assert!(!steps.is_empty());
    assert_eq!(steps.len() as u64, first["steps"].as_u64().expect("steps"));
}

#[test]
fn litmus_html_writes_the_page_of_the_witness() {
    let dir = TempDir::new("litmus-html");
    // The message arrives: reachable, so `exists` has a witness.
    let test = dir.path("mp-arrives.litmus");
    std::fs::write(
        &test,
        "PTX MP-arrives\n{\nx=0; y=0;\nP1:r0=0; P1:r1=0;\n}\n \
         P0@cta 0,gpu 0       | P1@cta 1,gpu 0        ;\n \
         st.weak x, 1         | ld.acquire.gpu r0, y  ;\n \
         st.release.gpu y, 1  | ld.weak r1, x         ;\n\n\
         exists\n(P1:r0 == 1 /\\ P1:r1 == 1)\n",
    )
    .expect("write the test");
    let html = dir.path("witness.html");
    let (code, out, err) = cudasem_here(&["litmus", &test, "--format", "json", "--html", &html]);
    assert_eq!(code, 0, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("the JSON report");
    let choices = report["witness"]["choices"].as_array().expect("a witness");
    assert_self_contained(&std::fs::read_to_string(&html).expect("the page"));
    let data = data_of(&html);
    assert_eq!(data["meta"]["policy"], "the litmus witness");
    let steps = data["steps"].as_array().expect("steps");
    assert_eq!(
        steps.len(),
        choices.len(),
        "one step of the page per witness choice"
    );
    // A test whose condition no execution satisfies has no witness, and so no page.
    let none = dir.path("none.html");
    let (code, _, err) = cudasem_here(&[
        "litmus",
        "tests/litmus/families/MP-2.litmus",
        "--html",
        &none,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!Path::new(&none).exists());
}

/// The figure rows of warp 0.0 in the page's data: rows and token pcs named by the listing's
/// lines, rows outside the listing left out, as the thesis draws them (and as
/// semantics/tests/machine_thesis.rs checks them).
fn figure_rows(listing: &str, warp_size: &str, delta: bool) -> Vec<String> {
    let dir = TempDir::new(listing);
    let trace = dir.path("t.jsonl");
    let html = dir.path("t.html");
    let ptx = format!("tests/thesis/{listing}.ptx");
    ok(&[
        "run",
        &ptx,
        "--launch",
        &format!("tests/thesis/{listing}.ron"),
        "--warp-size",
        warp_size,
        "--trace",
        &trace,
    ]);
    ok(&["view", &trace, &ptx, "-o", &html]);
    let data = data_of(&html);
    let names = data["source"]["pc_listing"].as_array().expect("labels");
    let label = |pc: &serde_json::Value| names[pc.as_u64().unwrap() as usize].as_str();
    let mut rows = Vec::new();
    for step in data["steps"].as_array().expect("steps") {
        for e in step["e"].as_array().expect("events") {
            let x = &e["x"];
            if x.is_null() {
                continue;
            }
            let Some(l) = label(&x["pc"]) else { continue };
            let tau: Vec<String> = x["t"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    format!(
                        "({}, {}, {})",
                        t[0].as_str().unwrap(),
                        t[1].as_str().unwrap(),
                        label(&t[2]).unwrap_or("?")
                    )
                })
                .collect();
            let tau = if tau.is_empty() {
                "ε".to_string()
            } else {
                tau.join(" :: ")
            };
            let alpha = x["a"].as_str().unwrap();
            rows.push(if delta {
                format!("{l} {alpha} {} {tau}", x["d"].as_str().unwrap())
            } else {
                format!("{l} {alpha} {tau}")
            });
        }
    }
    rows
}

#[test]
fn the_data_gives_figures_5_2_to_5_4() {
    assert_eq!(
        figure_rows("listing_5_5", "2", false),
        [
            "1 11 ε",
            "2 11 (sync, 11, 10)",
            "3 10 (diverge, 01, 4) :: (sync, 11, 10)",
            "7 10 (diverge, 01, 4) :: (sync, 11, 10)",
            "9 01 (sync, 11, 10)",
            "4 01 (sync, 11, 10)",
            "5 01 (sync, 11, 10)",
            "9 11 ε",
            "10 11 ε",
        ]
    );
    // Round-robin takes target group 1 at both indirect branches: the order Figure 5.3 draws.
    assert_eq!(
        figure_rows("listing_5_6", "4", false),
        [
            "1 1111 (sync, 1111, 13)",
            "2 0101 (diverge, 1010, 2) :: (sync, 1111, 13)",
            "7 0101 (diverge, 1010, 2) :: (sync, 1111, 13)",
            "8 0101 (diverge, 1010, 2) :: (sync, 1111, 13)",
            "12 1010 (sync, 1111, 13)",
            "2 1000 (diverge, 0010, 2) :: (sync, 1111, 13)",
            "10 1000 (diverge, 0010, 2) :: (sync, 1111, 13)",
            "12 0010 (sync, 1111, 13)",
            "2 0010 (sync, 1111, 13)",
            "4 0010 (sync, 1111, 13)",
            "5 0010 (sync, 1111, 13)",
            "12 1111 ε",
            "13 1111 ε",
        ]
    );
    // Figure 5.4; the caller's label X names the return point.
    assert_eq!(
        figure_rows("listing_5_7", "3", true),
        [
            "1 111 000 (call, 111, X)",
            "2 111 000 (sync, 111, 10) :: (call, 111, X)",
            "3 011 000 (diverge, 100, 4) :: (sync, 111, 10) :: (call, 111, X)",
            "7 001 0r0 (diverge, 100, 4) :: (sync, 111, 10) :: (call, 111, X)",
            "9 100 0r0 (sync, 111, 10) :: (call, 111, X)",
            "4 100 0r0 (sync, 111, 10) :: (call, 111, X)",
            "5 100 0r0 (sync, 111, 10) :: (call, 111, X)",
            "9 101 0r0 (call, 111, X)",
            "10 101 0r0 (call, 111, X)",
            "11 111 000 ε",
            "X 111 000 ε",
        ]
    );
}

#[test]
fn a_long_run_is_windowed_and_says_so() {
    let dir = TempDir::new("window");
    let trace = dir.path("t.jsonl");
    let html = dir.path("t.html");
    ok(&[
        "run",
        "tests/thesis/listing_5_5.ptx",
        "--launch",
        "tests/thesis/listing_5_5.ron",
        "--trace",
        &trace,
    ]);
    let out = ok(&[
        "view",
        &trace,
        "tests/thesis/listing_5_5.ptx",
        "--from",
        "11",
        "--window",
        "10",
        "-o",
        &html,
    ]);
    assert!(out.contains("steps 11 to 20 of 28 (windowed"), "{out}");
    let data = data_of(&html);
    assert_eq!(data["steps"].as_array().unwrap().len(), 10);
    assert_eq!(data["meta"]["from"], 10);
    let notes = data["meta"]["notes"].to_string();
    assert!(notes.contains("steps 11 to 20 of the run's 28"), "{notes}");
    // The overview covers the whole run.
    let sampled: u64 = data["overview"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b.as_array().unwrap().iter().map(|p| p[1].as_u64().unwrap()))
        .sum();
    assert_eq!(sampled, 28);
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = TempDir::new("bad");
    let (code, _, err) = cudasem_here(&[
        "view",
        &dir.path("missing.jsonl"),
        "-o",
        &dir.path("x.html"),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read trace"), "{err}");
    // A trace of another program.
    let trace = dir.path("t.jsonl");
    ok(&[
        "run",
        "tests/thesis/listing_5_5.ptx",
        "--launch",
        "tests/thesis/listing_5_5.ron",
        "--trace",
        &trace,
    ]);
    let (code, _, err) = cudasem_here(&["view", &trace, "tests/thesis/listing_5_6.ptx"]);
    assert_eq!(code, 2);
    assert!(err.contains("program hash"), "{err}");
    // A trace whose choices do not replay: the step is named.
    let text = std::fs::read_to_string(&trace).expect("trace");
    let mut lines: Vec<&str> = text.lines().collect();
    lines[3] = r#"{"Warp":{"block":5,"warp":0}}"#;
    let bad = dir.path("bad.jsonl");
    std::fs::write(&bad, lines.join("\n") + "\n").expect("write");
    let (code, _, err) = cudasem_here(&[
        "view",
        &bad,
        "tests/thesis/listing_5_5.ptx",
        "-o",
        &dir.path("b.html"),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("the trace does not replay: choice 3 cannot be taken"),
        "{err}"
    );
    // An output that cannot be written.
    let (code, _, err) = cudasem_here(&[
        "view",
        &trace,
        "tests/thesis/listing_5_5.ptx",
        "-o",
        &dir.path("no/such/dir/x.html"),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot write"), "{err}");
    let (code, _, err) = cudasem_here(&[
        "view",
        &trace,
        "tests/thesis/listing_5_5.ptx",
        "--window",
        "0",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--window"), "{err}");
}

// ---- in a browser ----

/// A Chromium (or Chrome) on PATH, or `None` with a plain message.
fn browser() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome", "chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    eprintln!(
        "SKIPPED: no chromium on PATH, the page was not checked in a browser \
         (install it: apt-get install chromium)"
    );
    None
}

/// The DOM as the browser has drawn it at `#fragment`.
fn dom(browser: &Path, html: &str, fragment: &str) -> String {
    let url = format!("file://{}#{fragment}", Path::new(html).display());
    let profile = TempDir::new(&format!("profile-{}", fragment.len()));
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-dev-shm-usage",
            &format!("--user-data-dir={}", profile.0.display()),
            "--dump-dom",
            &url,
        ])
        .current_dir(workspace())
        .output()
        .expect("chromium runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("id=\"warpsbody\""),
        "the page did not draw: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The text of the element with `id` (tags removed, entities of the page's escaping undone).
fn text_of(dom: &str, id: &str) -> String {
    let start = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let open = start + dom[start..].find('>').unwrap() + 1;
    // Up to the closing tag at the element's own nesting depth (the page writes no unclosed
    // element but `<br>`).
    let mut depth = 0usize;
    let mut i = open;
    let bytes = dom.as_bytes();
    while i < bytes.len() {
        if bytes[i..].starts_with(b"</") {
            if depth == 0 {
                break;
            }
            depth -= 1;
        } else if bytes[i] == b'<' && !bytes[i..].starts_with(b"<br") {
            depth += 1;
        }
        i += 1;
    }
    let mut out = String::new();
    let mut in_tag = false;
    for c in dom[open..i].chars() {
        match c {
            '<' => {
                in_tag = true;
                out.push(' ');
            }
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn in_a_browser_divergence_and_reconvergence_step_back_and_forth() {
    let Some(b) = browser() else { return };
    let dir = TempDir::new("b52");
    let html = figure_5_2_page(&dir);
    // Step 20: warp 0.0 ran the taken path (listing line 7, α = 10) with the diverge token on
    // top of the sync token.
    let d = dom(&b, &html, "step=20&warp=0.0");
    assert!(
        text_of(&d, "pos").contains("step 20 of 28"),
        "{}",
        text_of(&d, "pos")
    );
    let warps = text_of(&d, "warpsbody");
    assert!(
        warps.contains(
            "pc α δ τ (top first) L64 (listing 9) 10 00 (diverge, 01, L59) (sync, 11, L66)"
        ),
        "{warps}"
    );
    let step = text_of(&d, "stepbody");
    assert!(step.contains("choice : warp 0.0"), "{step}");
    // The derivation's rules, each with its thesis text on hover.
    assert!(step.contains("exec ▸ schedule_Warps"), "{step}");
    assert!(
        d.contains(r#"data-rule="context/schedule_Warps" title="context/schedule_Warps (thesis section 5.7"#),
        "the rule's hover text"
    );
    assert!(text_of(&d, "regsbody").contains("0.0 0 %c 0x0 0x9"));
    // The figure table marks the current row.
    assert!(d.contains(r#"<tr data-step="20" class="cur"><td>7</td><td>10</td>"#));
    // Keys: two steps forward, one back: step 21, the first sync popped the diverge token.
    let d = dom(
        &b,
        &html,
        "step=20&warp=0.0&keys=ArrowRight,ArrowRight,ArrowLeft",
    );
    assert!(text_of(&d, "pos").contains("step 21 of 28"));
    let warps = text_of(&d, "warpsbody");
    assert!(
        warps.contains("L59 (listing 4) 01 00 (sync, 11, L66)"),
        "{warps}"
    );
    // `d` from the start jumps to the divergent branch (listing line 3, step 19); `End` to the
    // end, where the warp has reconverged and completed.
    let d = dom(&b, &html, "step=0&keys=d");
    assert!(
        text_of(&d, "pos").contains("step 19 of 28"),
        "{}",
        text_of(&d, "pos")
    );
    let d = dom(&b, &html, "step=0&keys=End");
    assert!(text_of(&d, "warpsbody").contains("completed"));
}

#[test]
fn in_a_browser_the_lasso_shows_stem_cycle_and_starved_lanes() {
    let Some(b) = browser() else { return };
    let dir = TempDir::new("blasso");
    let html = lasso_page(&dir);
    let d = dom(&b, &html, "keys=End");
    assert!(text_of(&d, "pos").contains("(cycle)"));
    let lasso = text_of(&d, "lassobody");
    assert!(
        lasso.contains("Stem: steps 1 to 5; cycle: steps 6 to 8"),
        "{lasso}"
    );
    assert!(
        lasso.contains("Warp 0.0: lanes 10 never execute in the cycle"),
        "{lasso}"
    );
    assert!(lasso.contains("(diverge, 10, L23)"), "{lasso}");
    let d = dom(&b, &html, "keys=Home,ArrowRight");
    assert!(text_of(&d, "pos").contains("(stem)"));
}

#[test]
fn in_a_browser_the_stale_l1_line_is_marked() {
    let Some(b) = browser() else { return };
    let dir = TempDir::new("bstale");
    let html = stale_page(&dir);
    // Step 34: the consumer's second load of `data` reads its SM's L1 line, filled before the
    // producer's store reached L2.
    let d = dom(&b, &html, "step=34&warp=1.0");
    let step = text_of(&d, "stepbody");
    assert!(step.contains("memory op 2: readL1"), "{step}");
    assert!(
        step.contains("STALE read: the L1 of SM 4 holds 0x0 at 0x100000100, but L2 holds 0x1"),
        "{step}"
    );
    let mem = text_of(&d, "membody");
    assert!(mem.contains("L1 of SM 4"), "{mem}");
    assert!(mem.contains("global 0x100000100 00 00 00 00"), "{mem}");
    assert!(d.contains(r#"<tr class="stale"><td>global 0x100000100</td>"#));
    assert!(mem.contains("STALE"), "{mem}");
    // One step back the load has not run yet: the line is stale, but no read is reported.
    let d = dom(&b, &html, "step=38&keys=ArrowLeft");
    assert!(!text_of(&d, "stepbody").contains("STALE read"));
}

#[test]
fn in_a_browser_cuda_lines_are_marked_where_line_tables_exist() {
    let Some(b) = browser() else { return };
    let dir = TempDir::new("bcu");
    let trace = dir.path("t.jsonl");
    let html = dir.path("t.html");
    let ptx = "tests/kernels/debug/source_lines.ptx";
    ok(&[
        "run",
        ptx,
        "--launch",
        "tests/kernels/debug/source_lines.ron",
        "--trace",
        &trace,
    ]);
    ok(&["view", &trace, ptx, "-o", &html]);
    // The second divergence: lane 1 leaves the loop, the others loop on; the warp's next
    // instruction is the `if (v % 2 == 0)` after the loop, marked in the CUDA source.
    let d = dom(&b, &html, "keys=d,d");
    assert!(text_of(&d, "cusec").contains("source_lines.cu"));
    let line = d
        .lines()
        .flat_map(|l| l.split("<div id=\"cu0_"))
        .find(|l| l.contains("if (v % 2 == 0)"))
        .expect("the line after the loop");
    assert!(line.contains(r#"class="at""#), "{line}");
    assert!(
        line.contains(r#"<span class="badge sel">0.0</span>"#),
        "{line}"
    );
    let warps = text_of(&d, "warpsbody");
    assert!(
        warps.contains("01000000 00000000 (diverge, 00111111"),
        "{warps}"
    );
}
