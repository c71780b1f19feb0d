//! gdb's `x` on every state space and `list` on the `.cu` source: what a cuda-gdb user expects
//! to inspect in a stopped kernel (a thread's `.local` memory by address, `.const` data, the kernel's
//! parameters, a `__shared__` array by its source name), and source lines instead of PTX when
//! the program has line tables and the session has the file's text.

mod debugger_common;
use debugger::{MemoryFiles, Options, Outcome, Session};
use debugger_common::*;
use semantics::machine::WarpModel;

/// Four threads: each writes `100 * tid` to its own `.local` word 1 and to `.shared tile[tid]`,
/// then stops at `DONE` (every write done).
const KERNEL: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.const .align 4 .u32 table[4] = {11, 22, 33, 44};

.visible .entry spaces(
    .param .u64 out,
    .param .u32 n
)
{
    .local .align 4 .u32 scratch[4];
    .shared .align 4 .u32 tile[4];
    .reg .b32 %r<6>;
    .reg .b64 %rd<3>;
    mov.u32 %r1, %tid.x;
    mul.lo.u32 %r2, %r1, 100;
    st.local.u32 [scratch+4], %r2;
    shl.b32 %r3, %r1, 2;
    mov.u32 %r4, tile;
    add.u32 %r4, %r4, %r3;
    st.shared.u32 [%r4], %r2;
    bar.sync 0;
DONE:
    ld.param.u64 %rd1, [out];
    exit;
}
"#;

fn stopped() -> Session {
    let mut l = launch("spaces", 1, 4, vec![u32_buffer("out", &[0; 4])]);
    l.args.push(semantics::machine::ArgValue::Scalar {
        ty: ptx_parser::ScalarType::U32,
        bits: 7,
    });
    let mut s = session(
        KERNEL,
        l,
        config(WarpModel::SimtStack, 32),
        Options::default(),
    );
    for c in ["break DONE", "continue"] {
        let r = s.handle(c);
        assert_eq!(r.outcome, Outcome::Ok, "{c}: {}", r.text);
    }
    s
}

/// The values of an `x` answer: every word after a `[i]` row label.
fn values(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .flat_map(|l| l.split(']').nth(1).unwrap_or("").split_whitespace())
        .map(str::to_string)
        .collect()
}

fn ok(s: &mut Session, command: &str) -> String {
    let r = s.handle(command);
    assert_eq!(r.outcome, Outcome::Ok, "{command}: {}", r.text);
    assert!(!r.text.starts_with("error"), "{command}: {}", r.text);
    r.text
}

#[test]
fn examine_reads_every_state_space() {
    let mut s = stopped();
    // A thread's local memory (the kernel's frame starts at 0 here), for a named or the focused
    // lane.
    assert_eq!(
        values(&ok(&mut s, "x/4wu .local 0 lane 2")),
        ["0", "200", "0", "0"]
    );
    assert_eq!(values(&ok(&mut s, "x/2wu .local 4 lane 3")), ["300", "0"]);
    assert_eq!(values(&ok(&mut s, "x/2wu .local 0")), ["0", "0"]);
    ok(&mut s, "focus 0 0 1");
    assert_eq!(values(&ok(&mut s, "x/2wu .local 0")), ["0", "100"]);
    // Constant data, shared memory by name, and the kernel's parameter buffer.
    assert_eq!(values(&ok(&mut s, "x/4wu table")), ["11", "22", "33", "44"]);
    assert_eq!(
        values(&ok(&mut s, "x/4wd tile")),
        ["0", "100", "200", "300"]
    );
    let out = s.machine().buffer_address(0).expect("the buffer is placed");
    assert_eq!(values(&ok(&mut s, "x/1gx .param 0")), [format!("{out:#x}")]);
    assert_eq!(values(&ok(&mut s, "x/1wu .param 8")), ["7"]);
    // Addresses and threads that do not exist are refused with the reason.
    for (command, why) in [
        ("x/1wu .local 0 lane 9", "block 0 has 4 threads"),
        ("x/1wu nothing", "no buffer or variable `nothing`"),
        ("x/1wu .shared 0x100000", "not mapped"),
    ] {
        let r = s.handle(command);
        assert!(r.text.contains(why), "{command}: {}", r.text);
    }
}

/// `list` shows the `.cu` line of the focused instruction when the session has the file's
/// text (the host reads it), and the PTX otherwise or when asked (`list ptx`).
#[test]
fn list_shows_cuda_source_lines() {
    let ptx = workspace_file("tests/kernels/debug/source_lines.ptx");
    let cu = workspace_file("tests/kernels/debug/source_lines.cu");
    let body = cu
        .lines()
        .position(|l| l.trim_end().ends_with("// @body"))
        .expect("a line marked @body") as u32
        + 1;
    let start = |with_source: bool| {
        let mut l = launch(
            "source_lines",
            1,
            8,
            vec![u32_buffer("out", &[0; 8]), u32_buffer("in", &[1; 8])],
        );
        l.args.push(semantics::machine::ArgValue::Scalar {
            ty: ptx_parser::ScalarType::S32,
            bits: 8,
        });
        let mut s = session(
            &ptx,
            l,
            config(WarpModel::SimtStack, 32),
            Options::default(),
        );
        if with_source {
            s.set_host(Box::new(MemoryFiles {
                sources: [("./source_lines.cu".to_string(), cu.clone())].into(),
                ..Default::default()
            }));
        }
        ok(&mut s, &format!("break source_lines.cu:{body}"));
        ok(&mut s, "continue");
        s
    };
    let mut s = start(true);
    let listing = ok(&mut s, "list");
    let marked: Vec<&str> = listing.lines().filter(|l| l.starts_with("=>")).collect();
    let body_text = cu.lines().nth(body as usize - 1).unwrap();
    assert_eq!(marked.len(), 1, "{listing}");
    assert!(
        marked[0].contains(&format!("{body:>5}")) && marked[0].ends_with(body_text),
        "{listing}"
    );
    // `list N` stays in the .cu; `list ptx` shows the PTX with the instruction marked.
    let first = ok(&mut s, "list 1");
    assert!(first.contains(cu.lines().next().unwrap()), "{first}");
    let ptx_listing = ok(&mut s, "list ptx");
    assert!(
        ptx_listing
            .lines()
            .filter(|l| l.starts_with("=>"))
            .all(|l| ptx.lines().any(|p| l.ends_with(p))),
        "{ptx_listing}"
    );
    // Without the text, `list` falls back to the PTX, and `list FILE:LINE` says why it cannot.
    let mut bare = start(false);
    assert_eq!(ok(&mut bare, "list"), ptx_listing);
    let r = bare.handle("list source_lines.cu:1");
    assert!(r.text.contains("its text is not at hand"), "{}", r.text);
}

/// Under cached memory a completed store may sit in a dirty L2 line that has not been written
/// back (the write-back is a silent action, thesis chapter 4): `x` shows what a thread would
/// read, L2's bytes over DRAM's, as `run` prints the buffer, not DRAM's stale zero.
#[test]
fn examine_under_cached_memory_reads_through_l2() {
    const STORE: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry store(.param .u64 out)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, 42;
    st.global.u32 [%rd2], %r1;
    exit;
}
"#;
    let mut c = config(WarpModel::SimtStack, 32);
    c.memory = semantics::machine::MemoryKind::Cached;
    let mut s = session(
        STORE,
        launch("store", 1, 1, vec![u32_buffer("out", &[0])]),
        c,
        Options::default(),
    );
    let r = s.handle("continue");
    assert_eq!(r.outcome, Outcome::Ok, "{}", r.text);
    let m = s.machine();
    let dram = m.memory().read_global(m.buffer_address(0).expect("out"));
    assert_eq!(
        dram[..4],
        [0, 0, 0, 0],
        "the store was written back: the test needs a dirty L2 line"
    );
    assert_eq!(values(&ok(&mut s, "x/1wu out")), ["42"]);
}
