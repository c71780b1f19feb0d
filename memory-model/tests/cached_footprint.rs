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
        f.places.contains(&Place::L1 { sm: 0 }),
        "{f:?}: reserveL1 allocates"
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
