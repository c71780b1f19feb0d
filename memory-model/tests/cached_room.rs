//! Making room (issue 15, "false deadlock"): a cache full of dirty lines writes its victim back
//! to the next level when a reserve or an allocating write needs the room, whatever the
//! configured silent actions are. Before, with `--silent observable` (no `wb_L2` choices), a
//! one-line L2 holding a dirty line left the next store waiting forever with nothing enabled.

mod common;

use common::*;
use memory_model::cached::{CacheConfig, Cached, MemChoice, MemOrder, MicroSteps, SilentActions};
use memory_model::{Flat, MemSpace, Who};

const A: Who = Who {
    block: 0,
    thread: 0,
};

fn tiny(silent: SilentActions) -> CacheConfig {
    CacheConfig {
        line_bytes: 32,
        l1_lines: 1,
        l2_lines: 1,
        num_sms: 1,
        shared_banks: 32,
        silent,
        micro_steps: MicroSteps::default(),
    }
}

/// Steps the op to its end, offering only its own steps; fails if it is ever not enabled.
/// Returns the value it delivered, if any.
fn finish(c: &mut Cached, dram: &mut Flat, op: u32) -> Option<u64> {
    for _ in 0..20 {
        let mut en = Vec::new();
        c.enabled(&mut en);
        assert!(
            en.contains(&MemChoice::Step { op }),
            "op {op} waits with {en:?} enabled: {:?}",
            c.ops()
        );
        let r = c.step(MemChoice::Step { op }, dram).unwrap();
        if r.ended.is_some() {
            return r.delivered.map(|d| d.value);
        }
    }
    panic!("runaway program");
}

fn word(dram: &Flat, addr: u64) -> u64 {
    let mut b = [0u8; 4];
    dram.read_global_line(addr, &mut b);
    u32::from_le_bytes(b) as u64
}

#[test]
fn a_full_l2_of_dirty_lines_is_written_back_to_make_room() {
    for silent in [
        SilentActions::None,
        SilentActions::Observable,
        SilentActions::All,
    ] {
        let (mut dram, x) = dram_with(&[0; 32]);
        let mut c = Cached::new(tiny(silent));
        let first = c.issue(st(A, 0, MemSpace::Global, x, 7, MemOrder::Weak));
        finish(&mut c, &mut dram, first);
        assert_eq!(word(&dram, x), 0, "the store sits dirty in L2");
        // Another line: the only L2 line is dirty, so the write makes room by writing it back.
        let second = c.issue(st(A, 0, MemSpace::Global, x + 32, 9, MemOrder::Weak));
        finish(&mut c, &mut dram, second);
        assert_eq!(word(&dram, x), 7, "{silent:?}: the victim went to DRAM");
        assert_eq!(
            word(&dram, x + 32),
            0,
            "{silent:?}: the new line is dirty in L2"
        );
        // A load of the first line reads it back from DRAM (L2 room made again).
        let load = c.issue(ld(A, 0, MemSpace::Global, x, None, MemOrder::Weak, 1));
        assert_eq!(finish(&mut c, &mut dram, load), Some(7), "{silent:?}");
        assert!(c.indexes_consistent());
    }
}

#[test]
fn a_full_l1_of_dirty_local_lines_is_written_back_to_l2() {
    let (mut dram, _) = dram_with(&[0; 32]);
    dram.create_block(0, 64, 1);
    let mut c = Cached::new(CacheConfig {
        l2_lines: 2,
        ..tiny(SilentActions::Observable)
    });
    // Two local lines through a one-line L1: the first becomes dirty in L1 (write-back L1, no
    // `wb_L1` choice under `observable`) and must go to L2 when the second needs the room.
    let a = c.issue(st(A, 0, MemSpace::Local, 0, 5, MemOrder::Weak));
    finish(&mut c, &mut dram, a);
    let b = c.issue(st(A, 0, MemSpace::Local, 64, 6, MemOrder::Weak));
    finish(&mut c, &mut dram, b);
    let load = c.issue(ld(A, 0, MemSpace::Local, 0, None, MemOrder::Weak, 2));
    assert_eq!(finish(&mut c, &mut dram, load), Some(5));
    assert!(c.idle());
    assert!(c.indexes_consistent());
}
