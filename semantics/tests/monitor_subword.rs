//! Byte precision of the race monitor (`semantics::monitors`, shadow cells per byte for words
//! that sub-word accesses touch), under `--race-model interleaving`, on hand-written PTX: lanes
//! of one warp are unordered there, so each kernel is one warp of a few threads whose accesses
//! land in the first word of `out`.
//!
//! * different bytes of one word, written or read by different threads: no race;
//! * the same byte: a race (write-write, write-read, read-write);
//! * an older access to one byte is still checked after another thread touched another byte of
//!   the word (a single cell per word keeps only the newest writer and would miss it);
//! * a barrier still orders a byte's accesses when the same thread touched another byte of the
//!   word after it (a cell per word would merge the two writes into the newer one: a false race).

use semantics::machine::{ArgValue, BufferSpec, LaunchConfig, Machine, MachineConfig};
use semantics::monitors::{Findings, MonitorConfig, Monitors, RaceKind, RaceModel};
use std::sync::Arc;
use traces::Event;

/// A kernel of `threads` threads: `%rd1` is `out` (global), `%r1` `%tid.x`, `%rd2` its 64-bit
/// copy, then `body`.
fn kernel(body: &str) -> String {
    format!(
        r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 out)
{{
    .reg .pred %p<4>;
    .reg .b16 %rs<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    cvt.u64.u32 %rd2, %r1;
{body}
    ret;
}}
"#
    )
}

/// Runs round-robin with every monitor under `interleaving`.
fn check(body: &str, threads: u32) -> Findings {
    let text = kernel(body);
    let parsed = ptx_parser::parse(&text);
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    let (program, _) = semantics::load(&parsed.module, &text).expect("loads");
    let launch = LaunchConfig {
        kernel: None,
        grid: [1, 1, 1],
        block: [threads, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![BufferSpec {
            name: "out".to_string(),
            elem: ptx_parser::ScalarType::U8,
            bytes: vec![0; 16],
        }],
        args: vec![ArgValue::Buffer(0)],
        globals: vec![],
        extern_values: Vec::new(),
    };
    let mut m = Machine::new(Arc::new(program), &launch, &MachineConfig::default()).expect("fits");
    let mut mon = Monitors::new(
        &m,
        &launch,
        MonitorConfig {
            race_model: RaceModel::Interleaving,
            ..MonitorConfig::default()
        },
    );
    let mut events: Vec<Event> = Vec::new();
    for rr in 0..10_000usize {
        let enabled = m.enabled();
        if enabled.is_empty() {
            break;
        }
        let c = enabled[rr % enabled.len()];
        events.clear();
        m.step_observed(&c, &mut events).expect("enabled choice");
        mon.observe(&events);
    }
    assert!(m.termination().is_some(), "the kernel ran to its end");
    mon.finish()
}

/// The races as `(kind, first thread, first byte, second thread, second byte)`.
fn races(f: &Findings) -> Vec<(RaceKind, u32, u64, u32, u64)> {
    assert!(f.divergences.is_empty() && f.memory.is_empty(), "{f:?}");
    f.races
        .iter()
        .map(|r| {
            let byte =
                |a: &semantics::monitors::Access| a.location.as_ref().map_or(99, |l| l.index);
            (
                r.kind,
                r.first.thread,
                byte(&r.first),
                r.second.thread,
                byte(&r.second),
            )
        })
        .collect()
}

#[test]
fn writes_to_different_bytes_of_a_word_do_not_race() {
    // Thread t writes byte t.
    let f = check(
        "    add.u64 %rd3, %rd1, %rd2;\n    st.global.u8 [%rd3], %r1;",
        4,
    );
    assert_eq!(races(&f), vec![]);
}

#[test]
fn writes_to_one_byte_race() {
    // Threads 2t and 2t+1 write byte t.
    let f = check(
        "    shr.u64 %rd4, %rd2, 1;\n    add.u64 %rd3, %rd1, %rd4;\n    st.global.u8 [%rd3], %r1;",
        4,
    );
    assert_eq!(
        races(&f),
        vec![(RaceKind::WriteWrite, 0, 0, 1, 0)],
        "one report for the pair of pcs: {f:?}"
    );
    assert_eq!(f.races[0].occurrences, 2, "threads 0/1 and 2/3");
}

#[test]
fn halfword_writes_to_the_two_halves_of_a_word_do_not_race() {
    // Thread t writes halfword t (bytes 2t, 2t+1).
    let f = check(
        "    shl.b64 %rd4, %rd2, 1;\n    add.u64 %rd3, %rd1, %rd4;\n    cvt.u16.u32 %rs1, %r1;\n    st.global.u16 [%rd3], %rs1;",
        2,
    );
    assert_eq!(races(&f), vec![]);
}

/// Thread 0 writes byte 0; thread 1 reads byte `byte` (the write first: lane order).
fn write_then_read(byte: u32) -> Findings {
    check(
        &format!(
            "    setp.eq.u32 %p1, %r1, 0;
    @%p1 st.global.u8 [%rd1], %r1;
    setp.eq.u32 %p2, %r1, 1;
    @%p2 ld.global.u8 %r2, [%rd1+{byte}];"
        ),
        2,
    )
}

#[test]
fn a_read_of_another_byte_than_a_write_does_not_race() {
    assert_eq!(races(&write_then_read(1)), vec![]);
    assert_eq!(races(&write_then_read(3)), vec![]);
}

#[test]
fn a_read_of_the_written_byte_races() {
    assert_eq!(
        races(&write_then_read(0)),
        vec![(RaceKind::WriteRead, 0, 0, 1, 0)]
    );
}

#[test]
fn a_write_of_the_read_byte_races_and_of_another_does_not() {
    // Thread 0 reads byte 2, then thread 1 writes byte `b`.
    let run = |b: u32| {
        check(
            &format!(
                "    setp.eq.u32 %p1, %r1, 0;
    @%p1 ld.global.u8 %r2, [%rd1+2];
    setp.eq.u32 %p2, %r1, 1;
    @%p2 st.global.u8 [%rd1+{b}], %r1;"
            ),
            2,
        )
    };
    assert_eq!(races(&run(2)), vec![(RaceKind::ReadWrite, 0, 2, 1, 2)]);
    assert_eq!(races(&run(1)), vec![]);
}

#[test]
fn an_older_write_to_a_byte_is_not_forgotten() {
    // Threads 0 and 1 write bytes 0 and 1 in one instruction (thread 1's write is the newest
    // of the word); then thread 2 reads byte 0 and thread 3 writes byte 3, which nothing else
    // touches. Only thread 2's read races, with thread 0's write.
    let f = check(
        "    setp.lt.u32 %p1, %r1, 2;
    add.u64 %rd3, %rd1, %rd2;
    @%p1 st.global.u8 [%rd3], %r1;
    setp.eq.u32 %p2, %r1, 2;
    @%p2 ld.global.u8 %r2, [%rd1];
    setp.eq.u32 %p3, %r1, 3;
    @%p3 st.global.u8 [%rd1+3], %r1;",
        4,
    );
    assert_eq!(races(&f), vec![(RaceKind::WriteRead, 0, 0, 2, 0)]);
}

#[test]
fn a_barrier_still_orders_a_byte_after_its_writer_touched_another() {
    // Thread 0 writes byte 0, all meet at a barrier, thread 0 writes byte 1, thread 1 reads
    // byte 0: ordered by the barrier, and byte 1 is not read.
    let f = check(
        "    setp.eq.u32 %p1, %r1, 0;
    @%p1 st.global.u8 [%rd1], %r1;
    bar.sync 0;
    @%p1 st.global.u8 [%rd1+1], %r1;
    setp.eq.u32 %p2, %r1, 1;
    @%p2 ld.global.u8 %r2, [%rd1];",
        2,
    );
    assert_eq!(races(&f), vec![]);
}

#[test]
fn a_word_access_races_with_each_byte_writer_and_merges_the_word_back() {
    // Threads 1 and 2 write bytes 2 and 3 (no race between them); thread 3 reads the whole word:
    // it races with both writes (two reports: two pairs of pcs). Then, after a barrier, thread 0
    // writes the whole word (merging the bytes back) and thread 1 reads byte 1: a race again.
    let f = check(
        "    setp.eq.u32 %p1, %r1, 1;
    @%p1 st.global.u8 [%rd1+2], %r1;
    setp.eq.u32 %p2, %r1, 2;
    @%p2 st.global.u8 [%rd1+3], %r1;
    setp.eq.u32 %p3, %r1, 3;
    @%p3 ld.global.u32 %r2, [%rd1];
    bar.sync 0;
    setp.eq.u32 %p3, %r1, 0;
    @%p3 st.global.u32 [%rd1], %r1;
    @%p1 ld.global.u8 %r3, [%rd1+1];",
        4,
    );
    let r = races(&f);
    assert_eq!(r.len(), 3, "{r:?}");
    assert_eq!(r[0], (RaceKind::WriteRead, 1, 2, 3, 0));
    assert_eq!(r[1], (RaceKind::WriteRead, 2, 3, 3, 0));
    assert_eq!(r[2], (RaceKind::WriteRead, 0, 0, 1, 1));
}
