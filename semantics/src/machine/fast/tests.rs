//! The fast kernels against `crate::alu`, lane by lane.

use super::*;
use crate::machine::GridShape;
use crate::program::ArithFlags;

fn sp() -> SpecialCtx {
    SpecialCtx {
        shape: GridShape::new([1, 1, 1], [64, 1, 1], 32),
        ctaid: [0, 0, 0],
        warp_index: 1,
        tid_base: 32,
        sm: 0,
        num_sms: 1,
        max_warps_per_sm: 64,
        steps: 7,
        dynamic_smem: 0,
        total_smem: 0,
    }
}

/// Operand values: edge cases and pseudo-random bits.
fn values(n: usize, seed: u64) -> Vec<u64> {
    let edges = [
        0u64,
        1,
        2,
        31,
        32,
        33,
        63,
        64,
        65,
        0x7FFF_FFFF,
        0x8000_0000,
        0xFFFF_FFFF,
        0x1_0000_0000,
        0x7FFF_FFFF_FFFF_FFFF,
        0x8000_0000_0000_0000,
        u64::MAX,
        0xFFFF_FFFF_8000_0000,
        0xDEAD_BEEF_0000_0003,
    ];
    let mut x = seed;
    (0..n)
        .map(|i| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match i % 3 {
                0 => edges[(x >> 40) as usize % edges.len()],
                1 => x >> (x & 63),
                _ => x,
            }
        })
        .collect()
}

const TYPES: [ScalarType; 8] = [
    ScalarType::S32,
    ScalarType::U32,
    ScalarType::B32,
    ScalarType::S64,
    ScalarType::U64,
    ScalarType::B64,
    ScalarType::S16,
    ScalarType::F32,
];

/// Runs `op` through the fast path on registers 0..4 (columns of 32 lanes) and checks every
/// lane of the destination against `expect`, for full and partial `exec` masks.
fn check(op: &Op, dst: usize, expect: impl Fn(&[u64], usize) -> Option<u64>) {
    let ws = 32;
    for seed in 0..40u64 {
        let init = values(6 * ws, seed * 7919 + 1);
        for exec in [u64::from(u32::MAX), 0x8000_0001, 0x0F0F_0F0F & (seed | 1)] {
            let mut regs = Regs::from_flat(ws, &init);
            assert!(try_exec(&mut regs, &[0; 32], ws, &sp(), exec, op), "{op:?}");
            for l in 0..ws {
                let want = if exec >> l & 1 == 1 {
                    match expect(&init, l) {
                        Some(v) => v,
                        None => return,
                    }
                } else {
                    init[dst * ws + l]
                };
                assert_eq!(
                    regs.at(dst, l),
                    want,
                    "{op:?} lane {l} a={:#x} b={:#x} c={:#x}",
                    init[ws + l],
                    init[2 * ws + l],
                    init[3 * ws + l]
                );
            }
        }
    }
}

fn r(i: u16) -> Src {
    Src::Reg(RegId(i))
}

#[test]
fn binary_kernels_agree_with_the_alu() {
    use BinaryOp::*;
    for op in [
        Add, Sub, Mul, MulHi, MulWide, Div, Rem, Min, Max, And, Or, Xor, Shl, Shr, Copysign,
    ] {
        for ty in TYPES {
            for sat in [false, true] {
                let flags = ArithFlags {
                    sat,
                    ..Default::default()
                };
                for (a, b) in [(r(1), r(2)), (r(1), Src::Imm(3)), (Src::Imm(40), r(2))] {
                    let o = Op::Binary {
                        op,
                        ty,
                        flags,
                        dst: RegId(0),
                        a,
                        b,
                    };
                    check(&o, 0, |init, l| {
                        let rd = |s: Src| match s {
                            Src::Reg(x) => init[x.0 as usize * 32 + l],
                            Src::Imm(v) => v,
                            _ => unreachable!(),
                        };
                        Some(alu::binary(op, ty, flags, rd(a), rd(b), &mut false))
                    });
                }
            }
        }
    }
}

#[test]
fn ternary_kernels_agree_with_the_alu() {
    use TernaryOp::*;
    for op in [Mad, MadHi, MadWide, Fma, Selp, Bfe, ShfLWrap, ShfRClamp] {
        for ty in TYPES {
            for sat in [false, true] {
                let flags = ArithFlags {
                    sat,
                    ..Default::default()
                };
                let o = Op::Ternary {
                    op,
                    ty,
                    flags,
                    dst: RegId(3),
                    a: r(1),
                    b: Src::Imm(1664525),
                    c: r(3),
                };
                check(&o, 3, |init, l| {
                    Some(alu::ternary(
                        op,
                        ty,
                        flags,
                        init[32 + l],
                        1664525,
                        init[96 + l],
                        &mut false,
                    ))
                });
            }
        }
    }
}

#[test]
fn setp_kernels_agree_with_the_alu() {
    use Compare::*;
    for cmp in [
        Eq, Ne, Lt, Le, Gt, Ge, Equ, Neu, Ltu, Leu, Gtu, Geu, Num, Nan,
    ] {
        for ty in TYPES.into_iter().chain([ScalarType::Pred, ScalarType::U8]) {
            let o = Op::Setp {
                cmp,
                ty,
                ftz: false,
                dst: RegId(0),
                dst_neg: Some(RegId(4)),
                a: r(1),
                b: r(2),
                combine: None,
            };
            check(&o, 0, |init, l| {
                Some(alu::compare(cmp, ty, false, init[32 + l], init[64 + l]) as u64)
            });
            check(&o, 4, |init, l| {
                Some(!alu::compare(cmp, ty, false, init[32 + l], init[64 + l]) as u64)
            });
        }
    }
}

#[test]
fn mov_cvt_and_special_operands() {
    let o = Op::Unary {
        op: UnaryOp::Mov,
        ty: ScalarType::U32,
        flags: ArithFlags::default(),
        dst: RegId(2),
        a: Src::Special(crate::program::SpecialReg::Tid(crate::program::Dim::X)),
    };
    check(&o, 2, |_, l| Some(32 + l as u64));
    let o = Op::Cvt {
        dst_ty: ScalarType::S64,
        src_ty: ScalarType::S32,
        flags: ArithFlags::default(),
        dst: RegId(2),
        a: r(1),
    };
    check(&o, 2, |init, l| {
        Some(alu::cvt(
            ScalarType::S64,
            ScalarType::S32,
            ArithFlags::default(),
            init[32 + l],
        ))
    });
}
