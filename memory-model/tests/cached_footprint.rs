//! Footprints of memory choices (issue 15 item 4): which choices `independent` lets commute.
//! That independent choices really commute is the property test in `cached_props.rs`.

mod common;

use common::*;
use memory_model::cached::{Cached, MemChoice, MemOrder, Place, SilentActions};
use memory_model::{MemSpace, Who};

const G: MemSpace = MemSpace::Global;

#[test]
fn footprints_separate_sms_lines_and_threads() {
    let (_dram, x) = dram_with(&[0; 64]);
    let a = Who {
        block: 0,
        thread: 0,
    };
    let b = Who {
        block: 1,
        thread: 0,
    };
    let mut c = Cached::new(config(SilentActions::Observable));
    let la = c.issue(ld(a, 0, G, x, None, MemOrder::Weak, 1));
    let lb = c.issue(ld(b, 1, G, x + 64, None, MemOrder::Weak, 1));
    let sa = c.issue(st(a, 0, G, x + 128, 5, MemOrder::Weak));
    let sb = c.issue(st(b, 1, G, x + 128, 6, MemOrder::Weak));
    let step = |op| MemChoice::Step { op };
    // Loads of different lines on different SMs by different threads: independent.
    assert!(c.independent(step(la), step(lb)));
    let f = c.footprint(step(la));
    assert_eq!(f.op, Some(la));
    assert!(
        f.places.contains(&Place::L1Fill { sm: 0, line: x }),
        "{f:?}: reserveL1 allocates the line"
    );
    assert!(f.places.contains(&Place::Thread(a)));
    // The same thread's ops: dependent (program order, O1-O3).
    assert!(!c.independent(step(la), step(sa)));
    // A load of SM 0 and a store of SM 1 to another line: independent.
    assert!(c.independent(step(la), step(sb)));
    // A flush of SM 0 conflicts with SM 0's load, not with SM 1's.
    assert!(!c.independent(MemChoice::Flush { sm: 0 }, step(la)));
    assert!(c.independent(MemChoice::Flush { sm: 0 }, step(lb)));
    // A choice is never independent of itself.
    assert!(!c.independent(step(la), step(la)));
}

/// Allocations at the grain of lines: two loads of one SM reserving different lines in an L1
/// with room for both, and two stores writing different lines into an L2 with room for both,
/// commute; when only one free line is left, each takes the cache's room and they do not
/// (the second would evict). Before, every allocation took the whole cache.
#[test]
fn allocations_are_independent_while_the_cache_has_room_for_both() {
    for (l1_lines, l2_lines, room) in [(4, 8, true), (1, 1, false)] {
        let (mut dram, x) = dram_with(&[0; 64]);
        let a = who(0, 0);
        let b = who(0, 1);
        let mut c = Cached::new(memory_model::cached::CacheConfig {
            l1_lines,
            l2_lines,
            ..config(SilentActions::Observable)
        });
        let step = |op| MemChoice::Step { op };
        let la = c.issue(ld(a, 0, G, x, None, MemOrder::Weak, 1));
        let lb = c.issue(ld(b, 0, G, x + 64, None, MemOrder::Weak, 1));
        let f = c.footprint(step(la));
        assert!(
            f.places.contains(&Place::L1Fill { sm: 0, line: x }),
            "{f:?}"
        );
        assert_eq!(f.places.contains(&Place::L1Room { sm: 0 }), !room, "{f:?}");
        assert!(!f.places.contains(&Place::L1 { sm: 0 }), "{f:?}");
        assert_eq!(
            c.independent(step(la), step(lb)),
            room,
            "L1 {l1_lines} lines"
        );
        // The flush of the SM's L1 conflicts with both whatever the room.
        assert!(!c.independent(MemChoice::Flush { sm: 0 }, step(la)));
        // Each reserves its L1 line (the first step), then its L2 line.
        c.step(step(la), &mut dram).unwrap();
        c.step(step(lb), &mut dram).unwrap();
        let (fa, fb) = (c.footprint(step(la)), c.footprint(step(lb)));
        if room {
            assert!(fa.places.contains(&Place::L2Line { line: x }), "{fa:?}");
            assert!(!fa.places.contains(&Place::L2), "{fa:?}");
            assert!(c.independent(step(la), step(lb)), "{fa:?} {fb:?}");
        }
    }
}

/// The per-SM store stage (deviation D31): a global store's step that stages its bytes (its
/// first) and every later one name the line's L2 place, which the explorer's line sets read as
/// the line (a step on an L1 line no L1 can hold is a no-op there, and staging is not); a
/// release above `.cta` at its first statement reads the whole stage of its SM: its whole L1
/// and the whole L2. Without the stage, a store's first step names its L1 line only.
#[test]
fn staging_steps_name_the_line_and_wide_releases_the_whole_stage() {
    for stage in [false, true] {
        let (_dram, x) = dram_with(&[0; 64]);
        let (a, b) = (who(0, 0), who(0, 1));
        let mut c = Cached::new(config_folded(SilentActions::None));
        c.set_sm_stage(stage);
        let s = c.issue(st(a, 0, G, x, 1, MemOrder::Weak));
        let mut rel = st(b, 0, G, x + 64, 1, MemOrder::Release);
        rel.scope = Some(memory_model::cached::Scope::Gpu);
        let r = c.issue(rel);
        let f = c.footprint(MemChoice::Step { op: s });
        assert_eq!(
            f.places.contains(&Place::L2Line { line: x }),
            stage,
            "{f:?}"
        );
        let f = c.footprint(MemChoice::Step { op: r });
        assert_eq!(f.places.contains(&Place::L2), stage, "{f:?}");
        assert_eq!(f.places.contains(&Place::L1 { sm: 0 }), stage, "{f:?}");
        // The release of thread b waits for thread a's staged store, then goes.
        let mut dram = _dram;
        c.step(MemChoice::Step { op: s }, &mut dram)
            .expect("enabled");
        assert_eq!(c.offers(&MemChoice::Step { op: r }), !stage);
    }
}
