//! Decoding of the instructions added to the subset (`lop3 bmsk szext fns mul24 mad24 sad dp4a
//! dp2a cvt.pack`, scalar video, half precision, 8-bit float pairs): the `Op`s they become,
//! the modifiers the PTX ISA forbids, and the gaps that stay "unsupported".

use ptx_parser::ScalarType as T;
use semantics::program::*;

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Registers every snippet kernel declares, in this order: ids are fixed.
const REGS: &str = ".reg .b32 %r<4>;\n.reg .pred %p<4>;\n.reg .f16 %h<4>;\n.reg .f16x2 %x<4>;\n.reg .b16 %s<4>;\n.reg .f32 %f<4>;\n.reg .b64 %rd<4>;\n";

fn r(n: u16) -> Src {
    Src::Reg(RegId(n))
}
fn p(n: u16) -> RegId {
    RegId(4 + n)
}
fn h(n: u16) -> RegId {
    RegId(8 + n)
}
fn x(n: u16) -> RegId {
    RegId(12 + n)
}
fn s(n: u16) -> RegId {
    RegId(16 + n)
}
fn f(n: u16) -> RegId {
    RegId(20 + n)
}

fn load(body: &str) -> Result<Program, Vec<String>> {
    let src = format!("{HEADER}.visible .entry k()\n{{\n{REGS}{body}\n}}\n");
    let parsed = ptx_parser::parse(&src);
    let errors: Vec<String> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.severity == ptx_parser::Severity::Error)
        .map(|d| d.message.clone())
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    match semantics::load(&parsed.module, &src) {
        Ok((prog, _)) => Ok(prog),
        Err(ds) => Err(ds.into_iter().map(|d| d.message).collect()),
    }
}

/// The ops of a one-instruction kernel (without the appended `ret`).
fn decode(ins: &str) -> Vec<Op> {
    match load(ins) {
        Ok(prog) => {
            let n = prog.instructions.len() - 1;
            prog.instructions[..n]
                .iter()
                .map(|i| i.op.clone())
                .collect()
        }
        Err(e) => panic!("`{ins}` does not load: {e:?}"),
    }
}

fn decode_err(ins: &str) -> String {
    match load(ins) {
        Ok(prog) => panic!("`{ins}` loads but should not: {:?}", prog.instructions[0]),
        Err(e) => e.join("; "),
    }
}

fn ternary(op: TernaryOp, ty: T, dst: u16, [a, b, c]: [Src; 3]) -> Op {
    Op::Ternary {
        op,
        ty,
        flags: ArithFlags::default(),
        dst: RegId(dst),
        a,
        b,
        c,
    }
}

#[test]
fn integer_and_bit_extras() {
    let cases: Vec<(&str, Op)> = vec![
        (
            "lop3.b32 %r0, %r1, %r2, %r3, 0x96;",
            ternary(TernaryOp::Lop3 { lut: 0x96 }, T::B32, 0, [r(1), r(2), r(3)]),
        ),
        (
            "fns.b32 %r0, %r1, %r2, -1;",
            ternary(
                TernaryOp::Fns,
                T::B32,
                0,
                [r(1), r(2), Src::Imm(0xFFFF_FFFF)],
            ),
        ),
        (
            "mad24.hi.sat.s32 %r0, %r1, %r2, %r3;",
            Op::Ternary {
                op: TernaryOp::Mad24 { hi: true },
                ty: T::S32,
                flags: ArithFlags {
                    sat: true,
                    ..ArithFlags::default()
                },
                dst: RegId(0),
                a: r(1),
                b: r(2),
                c: r(3),
            },
        ),
        (
            "sad.u32 %r0, %r1, %r2, %r3;",
            ternary(TernaryOp::Sad, T::U32, 0, [r(1), r(2), r(3)]),
        ),
        (
            "dp4a.u32.s32 %r0, %r1, %r2, %r3;",
            ternary(
                TernaryOp::Dp4a {
                    a_signed: false,
                    b_signed: true,
                },
                T::S32,
                0,
                [r(1), r(2), r(3)],
            ),
        ),
        (
            "dp2a.lo.u32.u32 %r0, %r1, %r2, %r3;",
            ternary(
                TernaryOp::Dp2a {
                    hi: false,
                    a_signed: false,
                    b_signed: false,
                },
                T::U32,
                0,
                [r(1), r(2), r(3)],
            ),
        ),
        (
            "cvt.pack.sat.s8.s32.b32 %r0, %r1, %r2, %r3;",
            ternary(
                TernaryOp::CvtPackSat {
                    bits: 8,
                    signed: true,
                },
                T::U32,
                0,
                [r(1), r(2), r(3)],
            ),
        ),
        (
            "cvt.pack.sat.u4.s32.b32 %r0, %r1, %r2, %r3;",
            ternary(
                TernaryOp::CvtPackSat {
                    bits: 4,
                    signed: false,
                },
                T::U32,
                0,
                [r(1), r(2), r(3)],
            ),
        ),
        (
            "cvt.pack.sat.u16.s32 %r0, %r1, %r2;",
            ternary(
                TernaryOp::CvtPackSat {
                    bits: 16,
                    signed: false,
                },
                T::U32,
                0,
                [r(1), r(2), Src::Imm(0)],
            ),
        ),
        (
            "vshr.u32.u32.u32.clamp.add %r0, %r1, %r2, %r3;",
            ternary(
                TernaryOp::Video(Video {
                    op: VideoOp::Shr { clamp: true },
                    d_signed: false,
                    a_signed: false,
                    b_signed: false,
                    sat: false,
                    secondary: Some(VideoSecondary::Add),
                    a_select: None,
                    b_select: None,
                    d_select: None,
                }),
                T::U32,
                0,
                [r(1), r(2), r(3)],
            ),
        ),
        (
            "vabsdiff.s32.s32.s32.sat %r0.h0, %r1.b0, %r2.b2, %r3;",
            ternary(
                TernaryOp::Video(Video {
                    op: VideoOp::AbsDiff,
                    d_signed: true,
                    a_signed: true,
                    b_signed: true,
                    sat: true,
                    secondary: None,
                    a_select: Some(VideoSelect::B0),
                    b_select: Some(VideoSelect::B2),
                    d_select: Some(VideoSelect::H0),
                }),
                T::S32,
                0,
                [r(1), r(2), r(3)],
            ),
        ),
        (
            "vset.s32.u32.ge %r0, %r1, %r2;",
            ternary(
                TernaryOp::Video(Video {
                    op: VideoOp::Set(Compare::Ge),
                    d_signed: false,
                    a_signed: true,
                    b_signed: false,
                    sat: false,
                    secondary: None,
                    a_select: None,
                    b_select: None,
                    d_select: None,
                }),
                T::U32,
                0,
                [r(1), r(2), Src::Imm(0)],
            ),
        ),
    ];
    for (ins, want) in cases {
        assert_eq!(decode(ins), vec![want], "`{ins}`");
    }
    let binary = |ins: &str| match decode(ins).as_slice() {
        [Op::Binary { op, ty, .. }] => (*op, *ty),
        other => panic!("`{ins}`: {other:?}"),
    };
    assert_eq!(
        binary("mul24.lo.u32 %r0, %r1, %r2;"),
        (BinaryOp::Mul24 { hi: false }, T::U32)
    );
    assert_eq!(
        binary("bmsk.wrap.b32 %r0, %r1, 3;"),
        (BinaryOp::Bmsk { clamp: false }, T::B32)
    );
    assert_eq!(
        binary("szext.clamp.s32 %r0, %r1, %r2;"),
        (BinaryOp::Szext { clamp: true }, T::S32)
    );
}

#[test]
fn lop3_predicate_form_adds_a_setp() {
    let ops = decode("lop3.or.b32 %r0|%p1, %r1, %r2, %r3, 0x80, !%p2;");
    assert_eq!(
        ops,
        vec![
            ternary(TernaryOp::Lop3 { lut: 0x80 }, T::B32, 0, [r(1), r(2), r(3)]),
            Op::Setp {
                cmp: Compare::Ne,
                ty: T::B32,
                ftz: false,
                dst: p(1),
                dst_neg: None,
                a: r(0),
                b: Src::Imm(0),
                combine: Some((
                    BoolOp::Or,
                    PredSrc {
                        src: Src::Reg(p(2)),
                        negated: true
                    }
                )),
            },
        ]
    );
    // With `_`, a fresh register carries the value to the setp.
    let ops = decode("lop3.and.b32 _|%p0, %r1, %r2, %r3, 0xF0, %p1;");
    match ops.as_slice() {
        [
            Op::Ternary { dst, .. },
            Op::Setp {
                a: Src::Reg(tested),
                ..
            },
        ] => {
            assert_eq!(dst, tested);
            assert!(
                dst.0 >= 28,
                "a new register, not one of the kernel's: {dst:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn half_precision_forms() {
    let ops = decode("fma.rn.relu.f16 %h0, %h1, %h2, %h3;");
    assert!(
        matches!(ops.as_slice(), [Op::Ternary { op: TernaryOp::Fma, ty: T::F16, flags, .. }] if flags.relu)
    );
    let ops = decode("add.rn.ftz.sat.f16x2 %x0, %x1, %x2;");
    assert!(
        matches!(ops.as_slice(), [Op::Binary { op: BinaryOp::Add, ty: T::F16x2, flags, .. }] if flags.ftz && flags.sat)
    );
    let ops = decode("setp.lt.f16x2 %p0|%p1, %x1, %x2;");
    assert!(
        matches!(ops.as_slice(), [Op::Setp { ty: T::F16x2, dst, dst_neg: Some(q), .. }] if *dst == p(0) && *q == p(1))
    );
    let ops = decode("set.gt.u32.f16x2 %r0, %x1, %x2;");
    assert!(matches!(
        ops.as_slice(),
        [Op::Set {
            dst_ty: T::U32,
            src_ty: T::F16x2,
            ..
        }]
    ));
    let ops = decode("cvt.rn.f16x2.f32 %x0, %f1, %f2;");
    assert!(matches!(
        ops.as_slice(),
        [Op::Binary {
            op: BinaryOp::CvtPair(PackedFloat::F16x2),
            ty: T::F32,
            ..
        }]
    ));
    let ops = decode("cvt.rz.relu.satfinite.bf16x2.f32 %r0, %f1, %f2;");
    assert!(
        matches!(ops.as_slice(), [Op::Binary { op: BinaryOp::CvtPair(PackedFloat::Bf16x2), flags, .. }] if flags.relu && flags.satfinite)
    );
    let ops = decode("cvt.rn.satfinite.e4m3x2.f32 %s0, %f1, %f2;");
    assert!(
        matches!(ops.as_slice(), [Op::Binary { op: BinaryOp::CvtPair(PackedFloat::Fp8x2(Fp8::E4m3)), dst, .. }] if *dst == s(0))
    );
    let ops = decode("cvt.rn.satfinite.relu.e5m2x2.f16x2 %s0, %x1;");
    assert!(matches!(
        ops.as_slice(),
        [Op::Unary {
            op: UnaryOp::CvtF16x2ToFp8x2(Fp8::E5m2),
            ty: T::F16x2,
            ..
        }]
    ));
    let ops = decode("cvt.rn.f16x2.e4m3x2 %x0, %s1;");
    assert!(matches!(
        ops.as_slice(),
        [Op::Unary {
            op: UnaryOp::CvtFp8x2ToF16x2(Fp8::E4m3),
            ty: T::B16,
            ..
        }]
    ));
    let ops = decode("cvt.rn.relu.satfinite.f16.f32 %h0, %f1;");
    assert!(
        matches!(ops.as_slice(), [Op::Cvt { dst_ty: T::F16, src_ty: T::F32, dst, .. }] if *dst == h(0))
    );
    let ops = decode("mov.b32 %x0, {%h1, %h2};");
    assert!(matches!(ops.as_slice(), [Op::Pack { .. }]));
    let ops = decode("mov.f16 %h0, %h1;");
    assert!(matches!(
        ops.as_slice(),
        [Op::Unary {
            op: UnaryOp::Mov,
            ty: T::F16,
            ..
        }]
    ));
    let ops = decode("ld.global.f16x2 %x0, [%rd1];");
    assert!(matches!(ops.as_slice(), [Op::Ld { ty: T::F16x2, .. }]));
    let ops = decode("neg.bf16x2 %r0, %r1;");
    assert!(matches!(
        ops.as_slice(),
        [Op::Unary {
            op: UnaryOp::Neg,
            ty: T::Bf16x2,
            ..
        }]
    ));
    let _ = (f(0), x(0));
}

#[test]
fn what_the_isa_forbids_is_an_error() {
    let cases = [
        ("bmsk.b32 %r0, %r1, %r2;", "needs a mode"),
        ("szext.wrap.b32 %r0, %r1, %r2;", "not allowed"),
        (
            "mad24.lo.sat.s32 %r0, %r1, %r2, %r3;",
            "`.sat` is only defined",
        ),
        ("mul24.hi.u64 %rd0, %rd1, %rd2;", "not allowed"),
        ("lop3.b32 %r0, %r1, %r2, %r3, 256;", "outside 0..=255"),
        ("lop3.b32 %r0, %r1, %r2, %r3, %r0;", "as a constant"),
        ("lop3.and.b32 %r0, %r1, %r2, %r3, 1, %p0;", "writes `d|p`"),
        ("dp4a.u32 %r0, %r1, %r2, %r3;", "two types"),
        ("cvt.pack.u8.s32.b32 %r0, %r1, %r2, %r3;", "needs `.sat`"),
        ("cvt.pack.sat.u8.s32 %r0, %r1, %r2;", "wrong types"),
        ("vshr.u32.u32.s32.clamp %r0, %r1, %r2;", "shift amount"),
        ("vshl.u32.u32.u32 %r0, %r1, %r2;", "needs a mode"),
        (
            "vadd.u32.u32.u32 %r0, %r1, %r2, %r3;",
            "only with `.add .min .max` or `d.dsel`",
        ),
        (
            "vadd.u32.u32.u32.add %r0.b1, %r1, %r2, %r3;",
            "both a secondary operation and a data merge",
        ),
        (
            "vmin.u32.u32.u32 %r0.h1, %r1, %r2;",
            "merges into a third source",
        ),
        ("add.u32 %r0, %r1.b0, %r2;", "belongs to video instructions"),
        ("add.ftz.bf16 %h0, %h1, %h2;", "not defined for `.bf16`"),
        (
            "fma.rn.relu.f32 %f0, %f1, %f2, %f3;",
            "`.relu` is only defined",
        ),
        (
            "fma.rn.relu.sat.f16 %h0, %h1, %h2, %h3;",
            "exclude each other",
        ),
        ("setp.lt.f16x2 %p0, %x1, %x2;", "writes `p|q`"),
        ("setp.lt.ftz.bf16 %p0, %h1, %h2;", "`.ftz` is not defined"),
        ("cvt.rn.e4m3x2.f32 %s0, %f1, %f2;", "needs `.satfinite`"),
        (
            "cvt.rz.satfinite.e4m3x2.f32 %s0, %f1, %f2;",
            "takes the rounding",
        ),
        (
            "cvt.rn.relu.f32.f16 %f0, %h1;",
            "only defined for conversions from `.f32`",
        ),
        ("cvt.rn.f16x2.f32 %x0, %f1;", "takes 3 operands"),
    ];
    for (ins, want) in cases {
        let e = decode_err(ins);
        assert!(e.contains(want), "`{ins}`: expected \"{want}\" in: {e}");
        assert!(
            !e.contains("unsupported"),
            "`{ins}` is an error, not a gap: {e}"
        );
    }
}

#[test]
fn gaps_stay_unsupported() {
    let cases = [
        ("vmad.s32.s32.s32 %r0, %r1, %r2, %r3;", "video"),
        ("vadd2.u32.u32.u32 %r0, %r1, %r2, %r3;", "video"),
        ("ex2.approx.f16 %h0, %h1;", "half-float"),
        ("tanh.approx.f16x2 %x0, %x1;", "half-float"),
        ("mad.rn.f16 %h0, %h1, %h2, %h3;", "half-float"),
        ("atom.global.add.f16x2 %x0, [%rd1], %x1;", "half-float"),
        ("cvt.rna.tf32.f32 %r0, %f1;", "half-float"),
        ("cvt.rs.f16x2.f32 %x0, %f1, %f2, %r0;", "half-float"),
        ("cvt.rn.satfinite.e2m1x2.f32 %s0, %f1, %f2;", "half-float"),
        ("cvt.rn.bf16x2.e4m3x2 %r0, %s1;", "half-float"),
        ("ld.global.b128 %rd0, [%rd1];", "wide-vectors"),
        (
            "cp.async.bulk.shared.global [%rd0], [%rd1], 16;",
            "cp.async",
        ),
        (
            "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r0}, [%rd1];",
            "mma",
        ),
        ("min.NaN.f16 %h0, %h1, %h2;", "modifiers"),
    ];
    for (ins, gap) in cases {
        let e = decode_err(ins);
        assert!(
            e.contains("unsupported instruction") && e.contains(&format!("(gap: `{gap}`)")),
            "`{ins}`: expected gap `{gap}`, got: {e}"
        );
    }
}

#[test]
fn wide_vectors_and_matrix_instructions() {
    // `.v8`: one access of eight elements.
    let ops = decode("ld.global.v8.b32 {%r0, %r1, %r2, %r3, %r3, %r2, %r1, %r0}, [%rd1];");
    match &ops[..] {
        [Op::Ld { vector: 8, dst, .. }] => {
            assert_eq!(dst[4], Some(RegId(3)));
            assert_eq!(dst[7], Some(RegId(0)));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        decode_err("ld.global.v8.b64 {%rd0, %rd1, %rd2, %rd3, %rd0, %rd1, %rd2, %rd3}, [%rd1];")
            .contains("at most 32 bits")
    );
    // mma: the four fragments in order, the whole warp as the mask.
    let ops = decode(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r0, %r1}, {%f3, %f2, %f1, %f0};",
    );
    match &ops[..] {
        [Op::Mma(m)] => {
            assert_eq!(m.shape, MmaShape::M16N8K16);
            assert_eq!(
                (m.a_ty, m.c_ty, m.d_ty),
                (MmaElem::Bf16, MmaElem::F32, MmaElem::F32)
            );
            assert_eq!(m.d[..], [f(0), f(1), f(2), f(3)]);
            assert_eq!(m.c[0], Src::Reg(f(3)));
            assert_eq!(m.mask, Src::Imm(0xffff_ffff));
        }
        other => panic!("{other:?}"),
    }
    assert!(decode_err(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f16 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r0, %r1}, {%r0, %r1};"
    )
    .contains("no such combination"));
    assert!(decode_err(
        "mma.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r0, %r1}, {%f0, %f1, %f2, %f3};"
    )
    .contains("`.row.col`"));
    // ldmatrix: each lane's row by an ordinary `ld.shared.v4.b32` (only lanes below 8·num for
    // .x1/.x2: a fresh predicate), then the rows shuffled into the fragments.
    let ops = decode("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r0, %r1}, [%rd1];");
    match &ops[..] {
        [
            Op::Setp {
                b: Src::Imm(16),
                combine: None,
                ..
            },
            Op::Ld {
                space: Space::Shared,
                vector: 4,
                ..
            },
            Op::LdMatrix {
                num: 2,
                trans: true,
                dst,
                ..
            },
        ] => assert_eq!(dst[..2], [RegId(0), RegId(1)]),
        other => panic!("{other:?}"),
    }
    let prog = load("@%p1 ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r0}, [%rd1];").expect("loads");
    let guards: Vec<_> = prog.instructions[..3].iter().map(|i| i.guard).collect();
    assert_eq!(guards[0], None, "the lane predicate is computed unguarded");
    assert!(matches!(
        &prog.instructions[0].op,
        Op::Setp {
            combine: Some((BoolOp::And, _)),
            ..
        }
    ));
    assert!(guards[1].is_some_and(|g| g.reg != p(1)), "{guards:?}");
    assert_eq!(
        guards[2],
        Some(GuardPred {
            reg: p(1),
            negated: false
        })
    );
    assert!(matches!(
        &decode("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %r1, %r2, %r3}, [%rd1];")[..],
        [Op::Ld { .. }, Op::LdMatrix { num: 4, .. }]
    ));
    // Without `.shared` the row addresses are generic.
    assert!(matches!(
        &decode("ldmatrix.sync.aligned.m8n8.x4.b16 {%r0, %r1, %r2, %r3}, [%rd1];")[..],
        [
            Op::Ld {
                space: Space::Generic,
                ..
            },
            Op::LdMatrix { .. }
        ]
    ));
    assert!(
        decode_err("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %r1}, [%rd1];")
            .contains("needs 4 destination")
    );
}

#[test]
fn cp_async_is_a_load_and_a_store_at_issue() {
    // 12 of 16 bytes copied (three words), the last word zero-filled.
    let ops = decode("cp.async.ca.shared.global [%rd0], [%rd1], 16, 12;");
    let loads = ops.iter().filter(|o| matches!(o, Op::Ld { .. })).count();
    assert_eq!(loads, 3, "{ops:?}");
    match ops.last() {
        Some(Op::St {
            space: Space::Shared,
            src,
            addr,
            ..
        }) => {
            assert_eq!(src[0], Src::Imm(0));
            assert_eq!(addr.offset, 12);
        }
        other => panic!("{other:?}"),
    }
    // A full copy is one vector load and one vector store.
    let ops = decode("cp.async.cg.shared.global.L2::128B [%rd0], [%rd1], 16;");
    assert!(
        matches!(
            &ops[..],
            [
                Op::Ld {
                    vector: 4,
                    space: Space::Global,
                    ..
                },
                Op::St {
                    vector: 4,
                    space: Space::Shared,
                    ..
                }
            ]
        ),
        "{ops:?}"
    );
    assert_eq!(decode("cp.async.commit_group;"), [Op::Nop]);
    assert_eq!(decode("cp.async.wait_group 0;"), [Op::Nop]);
    assert_eq!(decode("cp.async.wait_all;"), [Op::Nop]);
    assert!(decode_err("cp.async.cg.shared.global [%rd0], [%rd1], 8;").contains("not allowed"));
    assert!(
        decode_err("cp.async.ca.global.shared [%rd0], [%rd1], 4;")
            .contains("needs `.shared.global`")
    );
    assert!(
        decode_err("cp.async.ca.shared.global [%rd0], [%rd1], 16, %r0;")
            .contains("(gap: `cp.async`)")
    );
}

#[test]
fn vector_register_parameters_pass_their_components() {
    let src = format!(
        "{HEADER}.func (.reg .u32 r) pack (.reg .v4 .u16 v)\n{{\n cvt.u32.u16 r, v.w;\n ret;\n}}\n\
         .visible .entry k()\n{{\n .reg .v4 .u16 a;\n .reg .u16 %s<4>;\n .reg .u32 %r<2>;\n\
         call (%r0), pack, (a);\n call (%r1), pack, ({{%s0, %s1, %s2, %s3}});\n ret;\n}}\n"
    );
    let parsed = ptx_parser::parse(&src);
    let (prog, _) = semantics::load(&parsed.module, &src).expect("loads");
    let pack = &prog.functions[0];
    assert_eq!(pack.params.len(), 4, "{:?}", pack.params);
    let calls: Vec<_> = prog
        .instructions
        .iter()
        .filter_map(|i| match &i.op {
            Op::Call { args, .. } => Some(args.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|a| a.len() == 4), "{calls:?}");
    // A scalar register for the vector parameter is an error naming both.
    let bad = src.replace("pack, (a)", "pack, (%r0)");
    let parsed = ptx_parser::parse(&bad);
    let e = semantics::load(&parsed.module, &bad).expect_err("an error");
    assert!(
        e.iter().any(|d| d.message.contains("`.v4` vector")),
        "{e:?}"
    );
}
