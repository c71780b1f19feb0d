//! An atomic carries its operation, type and operands to memory, and both memory environments
//! compute its new value with the one function `memory_model::atomic::apply`: every operation on
//! every type, in `.global` and `.shared`, delivers the same old value and leaves the same new
//! value through the cached engine's atomic program as through flat memory's one-step
//! read-modify-write.

mod common;

use common::*;
use memory_model::atomic::apply;
use memory_model::cached::{
    AtomOp, AtomType, Cached, Dest, MemChoice, MemOrder, Request, RequestKind, Rmw, SilentActions,
};
use memory_model::{Flat, MemSpace, MemorySystem, Who};

const W: Who = Who {
    block: 0,
    thread: 0,
};

/// Old values and operands: zero, one, small, the sign bit of either width, all ones, and
/// float values (1.5, -0.0, a subnormal, infinity, a NaN) of either width.
const VALUES: [u64; 13] = [
    0,
    1,
    5,
    0x8000_0000,
    0xFFFF_FFFF,
    0x8000_0000_0000_0000,
    u64::MAX,
    0x3FC0_0000,           // 1.5f32
    0x8000_0000_0000_0000, // -0.0f64
    0x0000_0001,           // the least f32 subnormal
    0x7F80_0000,           // +inf f32
    0x7FF8_0000_0000_0000, // f64 NaN
    0x3FF8_0000_0000_0000, // 1.5f64
];

/// Memory with `old` at the test word of `space`, and that word's address.
fn memory(space: MemSpace, size: u32, old: u64) -> (Flat, u64) {
    let (mut m, base) = dram_with(&[0; 16]);
    m.create_block(0, 64, 1);
    let addr = if space == MemSpace::Global {
        base + 8
    } else {
        8
    };
    m.store(W, space, addr, size, old).expect("in bounds");
    (m, addr)
}

/// The value at `addr` as the threads see it: DRAM (or shared memory) under the cached L2.
fn visible(c: &Cached, m: &mut Flat, space: MemSpace, addr: u64, size: u32) -> u64 {
    let v = m.load(W, space, addr, size).expect("in bounds");
    if space != MemSpace::Global {
        return v;
    }
    let mut bytes = v.to_le_bytes();
    c.overlay_global(addr, &mut bytes[..size as usize]);
    u64::from_le_bytes(bytes)
}

/// Runs `atom.op.ty` through the cached engine: the old value delivered and the new value left.
fn cached_atomic(space: MemSpace, rmw: Rmw, old: u64) -> (u64, u64) {
    let size = rmw.ty.size();
    let (mut m, addr) = memory(space, size, old);
    let mut c = Cached::new(config(SilentActions::None));
    c.issue(Request {
        who: W,
        sm: 0,
        kind: RequestKind::Atomic {
            rmw,
            dest: Some(Dest {
                warp: 0,
                lane: 0,
                reg: 1,
                level: 0,
                signed: false,
                bits: 64,
            }),
        },
        space,
        addr,
        size,
        order: MemOrder::Relaxed,
        scope: None,
    });
    let mut delivered = None;
    let mut steps = 0;
    while !c.idle() {
        let mut choices = Vec::new();
        c.enabled(&mut choices);
        let step = choices
            .into_iter()
            .find(|m| matches!(m, MemChoice::Step { .. }))
            .expect("an in-flight atomic has a step");
        let report = c.step(step, &mut m).unwrap_or_else(|e| panic!("{e:?}"));
        delivered = delivered.or(report.delivered.map(|d| d.value));
        steps += 1;
        assert!(steps < 20, "runaway atomic program");
    }
    let new = visible(&c, &mut m, space, addr, size);
    (delivered.expect("an atom delivers its old value"), new)
}

/// Flat memory's atomic with the machine's update: old and new value.
fn flat_atomic(space: MemSpace, rmw: Rmw, old: u64) -> (u64, u64) {
    let size = rmw.ty.size();
    let (mut m, addr) = memory(space, size, old);
    m.atomic(W, space, addr, size, |old| {
        apply(rmw.op, rmw.ty, old, rmw.a, rmw.b)
    })
    .expect("in bounds")
}

#[test]
fn every_atomic_op_and_type_gives_the_flat_value_through_the_cached_engine() {
    let mut checked = 0;
    for space in [MemSpace::Global, MemSpace::Shared] {
        for op in AtomOp::ALL {
            for ty in AtomType::ALL {
                for (i, &old) in VALUES.iter().enumerate() {
                    // Operands paired with the old value at a few offsets: every value meets
                    // several others, and `cas` meets its own compare value.
                    for d in [0, 1, 4] {
                        let a = VALUES[(i + d) % VALUES.len()];
                        let b = VALUES[(i + d + 2) % VALUES.len()];
                        let rmw = Rmw { op, ty, a, b };
                        let flat = flat_atomic(space, rmw, old);
                        assert_eq!(
                            cached_atomic(space, rmw, old),
                            flat,
                            "atom.{space:?}.{op:?}.{ty:?} old {old:#x} a {a:#x} b {b:#x}"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, 2 * 10 * 8 * VALUES.len() * 3);
}

#[test]
fn the_new_value_is_the_operation_of_the_request() {
    // Not the old value back (what an operation nobody computes would give): each operation
    // of a request changes memory its own way.
    let cases = [
        (AtomOp::Add, AtomType::U32, 5, 3, 0, 8),
        (AtomOp::Inc, AtomType::U32, 5, 9, 0, 6),
        (AtomOp::Dec, AtomType::U32, 5, 9, 0, 4),
        (AtomOp::Exch, AtomType::B64, 5, 7, 0, 7),
        (AtomOp::Cas, AtomType::B32, 5, 5, 11, 11),
        (AtomOp::Min, AtomType::S32, 5, 0xFFFF_FFFF, 0, 0xFFFF_FFFF),
        (AtomOp::Max, AtomType::U64, 5, 6, 0, 6),
        (AtomOp::And, AtomType::B32, 5, 4, 0, 4),
        (AtomOp::Or, AtomType::B32, 5, 2, 0, 7),
        (AtomOp::Xor, AtomType::B32, 5, 1, 0, 4),
        (
            AtomOp::Add,
            AtomType::F32,
            0x3FC0_0000,
            0x3FC0_0000,
            0,
            0x4040_0000,
        ),
    ];
    for (op, ty, old, a, b, new) in cases {
        for space in [MemSpace::Global, MemSpace::Shared] {
            let rmw = Rmw { op, ty, a, b };
            assert_eq!(cached_atomic(space, rmw, old), (old, new), "{op:?}.{ty:?}");
        }
    }
}

#[test]
fn an_atomic_whose_type_and_access_size_differ_gets_stuck() {
    // The machine issues `size = ty.size()`; a request that breaks that is refused with an
    // error at `atomOp`, never answered with some value.
    let (mut m, addr) = memory(MemSpace::Shared, 4, 7);
    let mut c = Cached::new(config(SilentActions::None));
    c.issue(Request {
        who: W,
        sm: 0,
        kind: RequestKind::Atomic {
            rmw: Rmw {
                op: AtomOp::Add,
                ty: AtomType::U64,
                a: 1,
                b: 0,
            },
            dest: None,
        },
        space: MemSpace::Shared,
        addr,
        size: 4,
        order: MemOrder::Relaxed,
        scope: None,
    });
    let mut error = None;
    for _ in 0..20 {
        let mut choices = Vec::new();
        c.enabled(&mut choices);
        let Some(step) = choices
            .into_iter()
            .find(|m| matches!(m, MemChoice::Step { .. }))
        else {
            break;
        };
        if let Err(e) = c.step(step, &mut m) {
            error = Some(e);
            break;
        }
    }
    let error = error.expect("the mismatched atomic gets stuck");
    assert!(error.message.contains("atomOp"), "{}", error.message);
    assert_eq!(m.load(W, MemSpace::Shared, addr, 4).unwrap(), 7);
}
