use super::*;
use crate::{Choice, MemChoice, Trace};

#[test]
fn compact_round_trips_with_runs_and_large_indices() {
    let indices: Vec<u32> = [0, 0, 0, 0, 0, 0, 1, 61, 62, 3843, 300_000, 7, 7, 7, 2]
        .into_iter()
        .chain(std::iter::repeat_n(5, 1000))
        .collect();
    let t = CompactV1 {
        program_hash: 0xdead_beef_0123_4567,
        checksum: 0x1234_abcd,
        cycle_start: Some(3),
        indices,
    };
    let s = t.encode();
    assert_eq!(
        s,
        "cudasem1:deadbeef01234567:1234abcd:3:0-5-1Z_010_0ZZ.001g2I77725-g7-"
    );
    assert!(
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
    );
    assert_eq!(CompactV1::parse(&s), Ok(t));
    assert_eq!(detect(&s), Format::Compact);
}

#[test]
fn compact_repeats_and_numbers_are_bounded_before_allocation() {
    // Found by the CLI's fuzz harness: a long repeat count overflowed, and a short one
    // near 2^32 asked for 16 GiB of indices.
    let long = "cudasem1:a80691b78f85c997:ad1f0ba4:-:0-fa348d1a5ccd339d:f37c76e4:-:0";
    assert!(
        CompactV1::parse(long)
            .unwrap_err()
            .to_string()
            .contains("too large")
    );
    let huge = "cudasem1:a80691b78f85c997:ad1f0ba4:-:0-4GfFC3-";
    assert!(
        CompactV1::parse(huge)
            .unwrap_err()
            .to_string()
            .contains("at most")
    );
}

#[test]
fn compact_errors_say_what() {
    let e = |s: &str| CompactV1::parse(s).unwrap_err().to_string();
    assert_eq!(e("x"), "compact trace: does not start with `cudasem1:`");
    assert_eq!(
        e("cudasem1:zz:0:-:0"),
        "compact trace: `zz` is not a program hash (16 hex digits)"
    );
    assert_eq!(
        e("cudasem1:1:0:-:0-3"),
        "compact trace: unclosed repeat at character 1"
    );
    assert_eq!(
        e("cudasem1:1:0:-:_0"),
        "compact trace: truncated index at character 0"
    );
}

fn sample() -> Vec<Choice> {
    let mut v = vec![
        Choice::Issue {
            grid: 0,
            block: 0,
            sm: 0,
        },
        Choice::Issue {
            grid: 0,
            block: 1,
            sm: 1,
        },
    ];
    v.extend(std::iter::repeat_n(Choice::Warp { block: 0, warp: 0 }, 100));
    v.push(Choice::Warp { block: 1, warp: 70 });
    v.push(Choice::Lanes {
        block: 1,
        warp: 0,
        mask: u64::MAX,
    });
    v.push(Choice::EndBarrier {
        block: 0,
        barrier: 15,
    });
    v.push(Choice::Mem(MemChoice::EvictL1 {
        sm: 3,
        line: 0x1000,
    }));
    v.push(Choice::Warp { block: 0, warp: 0 });
    v
}

#[test]
fn compact_v2_names_choices_by_identity() {
    let t = CompactTrace {
        program_hash: 0xdead_beef_0123_4567,
        cycle_start: Some(4),
        choices: sample(),
    };
    let s = t.encode();
    assert_eq!(
        s,
        "cudasem2:deadbeef01234567:107:4:W0_0I0_0I1_1W1_1yR1_0_0_1sB0_fE3_35s:120-1B-34560"
    );
    assert!(
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
    );
    assert_eq!(detect(&s), Format::Compact);
    assert_eq!(CompactTrace::parse(&s), Ok(t.clone()));
    assert_eq!(parse_compact(&s), Ok(Compact::V2(t)));
}

#[test]
fn compact_v2_errors_say_what() {
    let e = |s: &str| parse_compact(s).unwrap_err().to_string();
    // Cut short when copied: the count says so.
    assert!(
        e("cudasem2:00000000000000aa:5:-:W0_0:0-2-").contains("3 choices where the string says 5"),
    );
    assert!(e("cudasem2:00000000000000aa:1:-:W0_0:1").contains("names table entry 1"));
    assert!(e("cudasem2:00000000000000aa:1:-:Z0_0:0").contains("not a choice kind"));
    assert!(e("cudasem2:00000000000000aa:1:-:w0_0:0").contains("does not start with a kind"));
    assert!(e("cudasem2:00000000000000aa:1:-:W0:0").contains("1 fields, `W` has 2"));
    assert!(e("cudasem2:00000000000000aa:1:-:W0__1:0").contains("an empty field"));
    assert!(e("cudasem2:00000000000000aa:1:-:W0_.:0").contains("bad digit `.`"));
    assert!(e("cudasem2:00000000000000aa:1:-:Wzzzzzzz_0:0").contains("too large"));
    assert!(e("cudasem2:00000000000000aa:1:-:Wzzzzzzzzzzzzzzzzz_0:0").contains("too large"));
    assert!(e("cudasem2:00000000000000aa:1:9:W0_0:0").contains("cycle start 9"));
    assert!(e("cudasem2:00000000000000aa:1:-:R0_0_1s_2:0").contains("not lanes of a warp"));
    assert!(e("cudasem2:00000000000000aa:1:-:R0_0_0_0:0").contains("not lanes of a warp"));
    let v9 = e("cudasem9:00000000000000aa:1:-:W0_0:0");
    assert!(v9.contains("version 9 string") && v9.contains("reads versions 1 and 2"));
    assert_eq!(detect("cudasem9:x"), Format::Compact);
    assert_eq!(compact_version("cudasemx:1"), None);
}

proptest::proptest! {
    #[test]
    fn compact_v2_round_trips(
        raw in proptest::collection::vec((0u8..13, 0u32..200, 0u32..100, proptest::num::u64::ANY), 0..300),
        cycle in proptest::option::of(0usize..300),
        hash in proptest::num::u64::ANY,
    ) {
        let choices: Vec<Choice> = raw
            .iter()
            .map(|&(kind, a, b, x)| match kind {
                0 => Choice::Issue { grid: a % 2, block: a, sm: b },
                1 => Choice::Warp { block: a, warp: b },
                2 => Choice::Target { block: a, warp: b, k: (x % 5) as u32 },
                3 => Choice::Lanes { block: a, warp: b, mask: x },
                // A contiguous group: `first` and `count` within 64 lanes.
                11 => {
                    let first = x % 64;
                    let count = 1 + (x >> 6) % (64 - first);
                    let ones = if count == 64 { u64::MAX } else { (1u64 << count) - 1 };
                    Choice::Lanes { block: a, warp: b, mask: ones << first }
                }
                4 => Choice::EndBarrier { block: a, barrier: b % 16 },
                5 => Choice::Mem(MemChoice::Step { op: a.wrapping_mul(100_000) }),
                6 => Choice::Mem(MemChoice::EvictL1 { sm: b, line: x }),
                7 => Choice::Mem(MemChoice::EvictL2 { line: x }),
                8 => Choice::Mem(MemChoice::WriteBackL1 { sm: b, line: x }),
                9 => Choice::Mem(MemChoice::WriteBackL2 { line: x }),
                12 => Choice::Pick { block: a, warp: b, lane: (x % 64) as u32, k: (x >> 6) as u32 },
                _ => Choice::Mem(MemChoice::Flush { sm: b }),
            })
            .collect();
        let cycle_start = cycle.filter(|&c| c <= choices.len());
        let t = CompactTrace { program_hash: hash, cycle_start, choices };
        let s = t.encode();
        proptest::prop_assert!(s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b)));
        proptest::prop_assert_eq!(parse_compact(&s), Ok(Compact::V2(t)));
    }

    #[test]
    fn compact_parsing_never_panics(s in "cudasem[12]:[0-9a-f]{0,16}:[0-9]{0,3}:[-0-9]{0,2}:[IJWTLBMEFKQXPa-z0-9_.]{0,30}:[a-zA-Z0-9_.-]{0,30}") {
        let _ = parse_compact(&s);
    }
}

#[test]
fn json_lines_and_ron_round_trip() {
    let mut t: Trace<String, u32> = Trace::new(7, "launch".to_string(), 3, Some(9));
    t.choices = vec![
        Choice::Issue {
            grid: 0,
            block: 0,
            sm: 1,
        },
        Choice::Warp { block: 0, warp: 0 },
    ];
    t.policy = Some("random:9".to_string());
    t.cycle_start = Some(1);
    let j = to_json_lines(&t).unwrap();
    assert_eq!(j.lines().count(), 3);
    assert_eq!(detect(&j), Format::JsonLines);
    assert_eq!(from_json_lines::<String, u32>(&j), Ok(t.clone()));
    let r = to_ron(&t).unwrap();
    assert_eq!(detect(&r), Format::Ron);
    assert_eq!(from_ron::<String, u32>(&r), Ok(t.clone()));
    t.events = Some(vec![Vec::new(), Vec::new()]);
    let j = to_json_lines(&t).unwrap();
    assert_eq!(from_json_lines::<String, u32>(&j), Ok(t));
}

#[test]
fn newer_versions_are_refused() {
    let mut t: Trace<u8, u8> = Trace::new(1, 0, 0, None);
    t.version = TRACE_VERSION + 1;
    let j = to_json_lines(&t).unwrap();
    assert_eq!(
        from_json_lines::<u8, u8>(&j),
        Err(FormatError::Version {
            found: TRACE_VERSION + 1
        })
    );
}
