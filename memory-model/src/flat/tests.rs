//! Tests of the flat memory.

use super::*;
use crate::{from_generic, to_generic};

const W: Who = Who {
    block: 0,
    thread: 0,
};

#[test]
fn buffers_round_trip_and_faults_name_the_buffer() {
    let mut m = Flat::new(1024);
    let a = m.alloc_global("a", &[1, 2, 3, 4, 5, 6, 7, 8]);
    let c = m.alloc_global("c", &[0; 512]);
    assert!(c > a + 8);
    assert_eq!(m.load(W, MemSpace::Global, a, 4).unwrap(), 0x0403_0201);
    m.store(W, MemSpace::Global, c + 508, 4, 0xdead_beef)
        .unwrap();
    assert_eq!(m.read_global(c)[508..], [0xef, 0xbe, 0xad, 0xde]);
    let e = m.load(W, MemSpace::Global, c + 516, 4).unwrap_err();
    assert_eq!(e.kind, MemErrorKind::OutOfBounds);
    assert!(
        e.message
            .contains("4 bytes past the end of buffer `c` (512 bytes at"),
        "{}",
        e.message
    );
    let e = m.load(W, MemSpace::Global, a + 2, 4).unwrap_err();
    assert_eq!(e.kind, MemErrorKind::Misaligned);
}

#[test]
fn warp_wide_accesses_equal_lane_by_lane_ones() {
    // Addresses around page and buffer boundaries, misaligned and out-of-bounds lanes.
    let mk = || {
        let mut m = Flat::new(1024);
        let a = m.alloc_global("a", &[7; 2 * PAGE_SIZE + 64]);
        let b = m.alloc_global("b", &[3; 256]);
        m.create_block(2, 128, 32);
        (m, a, b)
    };
    let (_, a, b) = mk();
    let mut x = 99u64;
    for round in 0..400 {
        let space = if round % 3 == 0 {
            MemSpace::Shared
        } else {
            MemSpace::Global
        };
        let size = [1u32, 2, 4, 8][round % 4];
        let mut addrs = [0u64; 64];
        let mut vals = [0u64; 64];
        for l in 0..32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let base = match space {
                MemSpace::Shared => 0,
                _ if x >> 60 == 0 => b,
                _ => a,
            };
            let spread = if round % 5 == 0 {
                2 * PAGE_SIZE as u64 + 80
            } else {
                40
            };
            let mut addr = base + (PAGE_SIZE as u64 - 32) + (x >> 20) % spread;
            if space == MemSpace::Shared {
                addr = (x >> 20) % 136;
            }
            if x >> 58 != 0 || round % 7 != 0 {
                addr &= !(size as u64 - 1);
            }
            addrs[l] = addr;
            vals[l] = x;
        }
        let exec = if round % 2 == 0 {
            u32::MAX as u64
        } else {
            x >> 32
        };
        let (mut fast, ..) = mk();
        let (mut slow, ..) = mk();
        let r_fast = fast.store_lanes(2, 0, space, size, exec, &addrs, &vals);
        let mut r_slow = Ok(());
        for l in (0..32).filter(|l| exec >> l & 1 == 1) {
            let who = Who {
                block: 2,
                thread: l as u32,
            };
            if let Err(e) = slow.store(who, space, addrs[l], size, vals[l]) {
                r_slow = Err((l, e));
                break;
            }
        }
        assert_eq!(r_fast, r_slow, "round {round}");
        assert_eq!(fast.read_global(a), slow.read_global(a));
        assert_eq!(fast.read_global(b), slow.read_global(b));
        let mut out_fast = [0u64; 64];
        let r_fast = fast.load_lanes(2, 0, space, size, exec, &addrs, &mut out_fast);
        let mut out_slow = [0u64; 64];
        let mut r_slow = Ok(());
        for l in (0..32).filter(|l| exec >> l & 1 == 1) {
            let who = Who {
                block: 2,
                thread: l as u32,
            };
            match slow.load(who, space, addrs[l], size) {
                Ok(v) => out_slow[l] = v,
                Err(e) => {
                    r_slow = Err((l, e));
                    break;
                }
            }
        }
        assert_eq!(r_fast, r_slow, "round {round}");
        assert_eq!(out_fast, out_slow, "round {round}");
        if space == MemSpace::Shared {
            let w = Who {
                block: 2,
                thread: 0,
            };
            for off in (0..128).step_by(8) {
                assert_eq!(fast.load(w, space, off, 8), slow.load(w, space, off, 8));
            }
        }
    }
}

#[test]
fn snapshots_share_pages_until_written() {
    let mut m = Flat::new(1024);
    let a = m.alloc_global("a", &[0; 64]);
    let snap = m.clone();
    m.store(W, MemSpace::Global, a, 8, 7).unwrap();
    let mut s = snap;
    assert_eq!(s.load(W, MemSpace::Global, a, 8).unwrap(), 0);
    assert_eq!(m.load(W, MemSpace::Global, a, 8).unwrap(), 7);
}

#[test]
fn shared_local_and_generic_windows() {
    let mut m = Flat::new(8192);
    m.create_block(3, 64, 2);
    let w = Who {
        block: 3,
        thread: 1,
    };
    m.store(w, MemSpace::Shared, 8, 4, 9).unwrap();
    assert_eq!(
        m.load(
            Who {
                block: 3,
                thread: 0
            },
            MemSpace::Shared,
            8,
            4
        )
        .unwrap(),
        9
    );
    m.store(w, MemSpace::Local, 5000, 8, 11).unwrap();
    assert_eq!(m.load(w, MemSpace::Local, 5000, 8).unwrap(), 11);
    assert_eq!(
        m.load(
            Who {
                block: 3,
                thread: 0
            },
            MemSpace::Local,
            5000,
            8
        )
        .unwrap(),
        0
    );
    assert!(m.load(w, MemSpace::Local, 8192, 4).is_err());
    assert!(m.load(w, MemSpace::Shared, 64, 4).is_err());
    let g = to_generic(MemSpace::Shared, 8);
    assert_eq!(from_generic(g), (MemSpace::Shared, 8));
    assert_eq!(from_generic(0x1234), (MemSpace::Global, 0x1234));
    let (old, new) = m.atomic(w, MemSpace::Shared, 8, 4, |v| v + 1).unwrap();
    assert_eq!((old, new), (9, 10));
}
