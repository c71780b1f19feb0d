//! Table-driven decoding tests: PTX snippets to the `Op`s the loader must produce, plus the
//! transformations of thesis 5.1.3 (folding, scoping, frame layout, initializers, immediates,
//! implicit `ret`, reconvergence).

use ptx_parser::ScalarType as T;
use semantics::program::*;

const HEADER: &str = ".version 7.8\n.target sm_80\n.address_size 64\n";

/// Registers every snippet kernel declares, in this order: ids are fixed.
const REGS: &str = ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<4>;\n.reg .pred %p<4>;\n.reg .f64 %fd<4>;\n.reg .b16 %h<4>;\n.shared .align 4 .b8 sh[64];\n";

fn r(n: u16) -> RegId {
    RegId(n)
}
fn rd(n: u16) -> RegId {
    RegId(4 + n)
}
fn f(n: u16) -> RegId {
    RegId(8 + n)
}
fn p(n: u16) -> RegId {
    RegId(12 + n)
}
fn fd(n: u16) -> RegId {
    RegId(16 + n)
}
fn h(n: u16) -> RegId {
    RegId(20 + n)
}
fn sr(x: RegId) -> Src {
    Src::Reg(x)
}

fn load(src: &str) -> Result<Program, Vec<String>> {
    let parsed = ptx_parser::parse(src);
    let errors: Vec<String> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.severity == ptx_parser::Severity::Error)
        .map(|d| d.message.clone())
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    match semantics::load(&parsed.module, src) {
        Ok((p, _)) => Ok(p),
        Err(ds) => Err(ds.into_iter().map(|d| d.message).collect()),
    }
}

fn kernel(body: &str) -> String {
    format!(
        "{HEADER}.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)\n{{\n{REGS}{body}\n}}\n"
    )
}

/// The op of the first instruction of a one-instruction kernel.
fn decode(ins: &str) -> Op {
    let src = kernel(ins);
    match load(&src) {
        Ok(p) => p.instructions[0].op.clone(),
        Err(e) => panic!("`{ins}` does not load: {e:?}"),
    }
}

fn decode_err(ins: &str) -> String {
    match load(&kernel(ins)) {
        Ok(p) => panic!("`{ins}` loads but should not: {:?}", p.instructions[0]),
        Err(e) => e.join("; "),
    }
}

const NOFLAGS: ArithFlags = ArithFlags {
    rounding: None,
    ftz: false,
    sat: false,
    approx: false,
    relu: false,
    satfinite: false,
};

#[test]
fn arithmetic_family() {
    let rn = ArithFlags {
        rounding: Some(Rounding::Rn),
        ..NOFLAGS
    };
    let cases: Vec<(&str, Op)> = vec![
        (
            "add.s32 %r1, %r2, %r3;",
            Op::Binary {
                op: BinaryOp::Add,
                ty: T::S32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
            },
        ),
        (
            "add.s32 %r1, %r2, -1;",
            Op::Binary {
                op: BinaryOp::Add,
                ty: T::S32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: Src::Imm(0xFFFF_FFFF),
            },
        ),
        (
            "add.rn.f32 %f1, %f2, 0f3F800000;",
            Op::Binary {
                op: BinaryOp::Add,
                ty: T::F32,
                flags: rn,
                dst: f(1),
                a: sr(f(2)),
                b: Src::Imm(0x3F80_0000),
            },
        ),
        (
            "sub.f64 %fd1, %fd2, 1.5;",
            Op::Binary {
                op: BinaryOp::Sub,
                ty: T::F64,
                flags: NOFLAGS,
                dst: fd(1),
                a: sr(fd(2)),
                b: Src::Imm(1.5f64.to_bits()),
            },
        ),
        (
            "mul.f32 %f1, %f2, 0.5;",
            Op::Binary {
                op: BinaryOp::Mul,
                ty: T::F32,
                flags: NOFLAGS,
                dst: f(1),
                a: sr(f(2)),
                b: Src::Imm(0.5f32.to_bits() as u64),
            },
        ),
        (
            "mul.wide.s32 %rd1, %r2, 4;",
            Op::Binary {
                op: BinaryOp::MulWide,
                ty: T::S32,
                flags: NOFLAGS,
                dst: rd(1),
                a: sr(r(2)),
                b: Src::Imm(4),
            },
        ),
        (
            "mul.hi.u32 %r1, %r2, %r3;",
            Op::Binary {
                op: BinaryOp::MulHi,
                ty: T::U32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
            },
        ),
        (
            "mad.lo.s32 %r1, %r2, %r3, %r0;",
            Op::Ternary {
                op: TernaryOp::Mad,
                ty: T::S32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
                c: sr(r(0)),
            },
        ),
        (
            "mad.wide.u32 %rd1, %r2, %r3, %rd0;",
            Op::Ternary {
                op: TernaryOp::MadWide,
                ty: T::U32,
                flags: NOFLAGS,
                dst: rd(1),
                a: sr(r(2)),
                b: sr(r(3)),
                c: sr(rd(0)),
            },
        ),
        (
            "fma.rn.f32 %f1, %f2, %f3, %f0;",
            Op::Ternary {
                op: TernaryOp::Fma,
                ty: T::F32,
                flags: rn,
                dst: f(1),
                a: sr(f(2)),
                b: sr(f(3)),
                c: sr(f(0)),
            },
        ),
        (
            "add.cc.u32 %r1, %r2, %r3;",
            Op::Binary {
                op: BinaryOp::AddCc,
                ty: T::U32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
            },
        ),
        (
            "addc.cc.u32 %r1, %r2, %r3;",
            Op::Binary {
                op: BinaryOp::AddCCc,
                ty: T::U32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
            },
        ),
        (
            "subc.u32 %r1, %r2, %r3;",
            Op::Binary {
                op: BinaryOp::SubC,
                ty: T::U32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
            },
        ),
        (
            "mad.lo.cc.u32 %r1, %r2, %r3, %r0;",
            Op::Ternary {
                op: TernaryOp::MadCc,
                ty: T::U32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
                c: sr(r(0)),
            },
        ),
        (
            "madc.lo.u32 %r1, %r2, %r3, %r0;",
            Op::Ternary {
                op: TernaryOp::MadC,
                ty: T::U32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
                c: sr(r(0)),
            },
        ),
        (
            "div.approx.ftz.f32 %f1, %f2, %f3;",
            Op::Binary {
                op: BinaryOp::Div,
                ty: T::F32,
                flags: ArithFlags {
                    ftz: true,
                    approx: true,
                    ..NOFLAGS
                },
                dst: f(1),
                a: sr(f(2)),
                b: sr(f(3)),
            },
        ),
        (
            "rem.u32 %r1, %r2, 7;",
            Op::Binary {
                op: BinaryOp::Rem,
                ty: T::U32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: Src::Imm(7),
            },
        ),
        (
            "min.s32 %r1, %r2, %r3;",
            Op::Binary {
                op: BinaryOp::Min,
                ty: T::S32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
            },
        ),
        (
            "max.ftz.f32 %f1, %f2, %f3;",
            Op::Binary {
                op: BinaryOp::Max,
                ty: T::F32,
                flags: ArithFlags {
                    ftz: true,
                    ..NOFLAGS
                },
                dst: f(1),
                a: sr(f(2)),
                b: sr(f(3)),
            },
        ),
        (
            "abs.s32 %r1, %r2;",
            Op::Unary {
                op: UnaryOp::Abs,
                ty: T::S32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
            },
        ),
        (
            "neg.f32 %f1, %f2;",
            Op::Unary {
                op: UnaryOp::Neg,
                ty: T::F32,
                flags: NOFLAGS,
                dst: f(1),
                a: sr(f(2)),
            },
        ),
        (
            "copysign.f32 %f1, %f2, %f3;",
            Op::Binary {
                op: BinaryOp::Copysign,
                ty: T::F32,
                flags: NOFLAGS,
                dst: f(1),
                a: sr(f(2)),
                b: sr(f(3)),
            },
        ),
        (
            "sqrt.rn.f32 %f1, %f2;",
            Op::Unary {
                op: UnaryOp::Sqrt,
                ty: T::F32,
                flags: rn,
                dst: f(1),
                a: sr(f(2)),
            },
        ),
        (
            "rcp.approx.f64 %fd1, %fd2;",
            Op::Unary {
                op: UnaryOp::Rcp,
                ty: T::F64,
                flags: ArithFlags {
                    approx: true,
                    ..NOFLAGS
                },
                dst: fd(1),
                a: sr(fd(2)),
            },
        ),
        (
            "ex2.approx.ftz.f32 %f1, %f2;",
            Op::Unary {
                op: UnaryOp::Ex2,
                ty: T::F32,
                flags: ArithFlags {
                    approx: true,
                    ftz: true,
                    ..NOFLAGS
                },
                dst: f(1),
                a: sr(f(2)),
            },
        ),
        (
            "tanh.approx.f32 %f1, %f2;",
            Op::Unary {
                op: UnaryOp::Tanh,
                ty: T::F32,
                flags: ArithFlags {
                    approx: true,
                    ..NOFLAGS
                },
                dst: f(1),
                a: sr(f(2)),
            },
        ),
    ];
    for (ins, want) in cases {
        assert_eq!(decode(ins), want, "{ins}");
    }
}

#[test]
fn logic_and_bits_family() {
    let cases: Vec<(&str, Op)> = vec![
        (
            "and.b32 %r1, %r2, 255;",
            Op::Binary {
                op: BinaryOp::And,
                ty: T::B32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: Src::Imm(255),
            },
        ),
        (
            "or.pred %p1, %p2, %p3;",
            Op::Binary {
                op: BinaryOp::Or,
                ty: T::Pred,
                flags: NOFLAGS,
                dst: p(1),
                a: sr(p(2)),
                b: sr(p(3)),
            },
        ),
        (
            "xor.b64 %rd1, %rd2, %rd3;",
            Op::Binary {
                op: BinaryOp::Xor,
                ty: T::B64,
                flags: NOFLAGS,
                dst: rd(1),
                a: sr(rd(2)),
                b: sr(rd(3)),
            },
        ),
        (
            "not.b32 %r1, %r2;",
            Op::Unary {
                op: UnaryOp::Not,
                ty: T::B32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
            },
        ),
        (
            "cnot.b32 %r1, %r2;",
            Op::Unary {
                op: UnaryOp::Cnot,
                ty: T::B32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
            },
        ),
        (
            "shl.b64 %rd1, %rd2, 2;",
            Op::Binary {
                op: BinaryOp::Shl,
                ty: T::B64,
                flags: NOFLAGS,
                dst: rd(1),
                a: sr(rd(2)),
                b: Src::Imm(2),
            },
        ),
        (
            "shr.s32 %r1, %r2, %r3;",
            Op::Binary {
                op: BinaryOp::Shr,
                ty: T::S32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
            },
        ),
        (
            "shf.l.wrap.b32 %r1, %r2, %r3, %r0;",
            Op::Ternary {
                op: TernaryOp::ShfLWrap,
                ty: T::B32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
                c: sr(r(0)),
            },
        ),
        (
            "bfe.u32 %r1, %r2, 8, 4;",
            Op::Ternary {
                op: TernaryOp::Bfe,
                ty: T::U32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: Src::Imm(8),
                c: Src::Imm(4),
            },
        ),
        (
            "bfi.b32 %r1, %r2, %r3, 8, 4;",
            Op::Bfi {
                ty: T::B32,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
                pos: Src::Imm(8),
                len: Src::Imm(4),
            },
        ),
        (
            "brev.b32 %r1, %r2;",
            Op::Unary {
                op: UnaryOp::Brev,
                ty: T::B32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
            },
        ),
        (
            "clz.b64 %r1, %rd2;",
            Op::Unary {
                op: UnaryOp::Clz,
                ty: T::B64,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(rd(2)),
            },
        ),
        (
            "popc.b32 %r1, %r2;",
            Op::Unary {
                op: UnaryOp::Popc,
                ty: T::B32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
            },
        ),
        (
            "bfind.shiftamt.u32 %r1, %r2;",
            Op::Unary {
                op: UnaryOp::BfindShiftAmt,
                ty: T::U32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
            },
        ),
        (
            "prmt.b32 %r1, %r2, %r3, 0x3210;",
            Op::Ternary {
                op: TernaryOp::Prmt,
                ty: T::B32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
                c: Src::Imm(0x3210),
            },
        ),
        (
            "prmt.b32.f4e %r1, %r2, %r3, %r0;",
            Op::Prmt {
                mode: PrmtMode::F4e,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
                c: sr(r(0)),
            },
        ),
    ];
    for (ins, want) in cases {
        assert_eq!(decode(ins), want, "{ins}");
    }
}

#[test]
fn comparison_family() {
    let cases: Vec<(&str, Op)> = vec![
        (
            "setp.lt.s32 %p1, %r1, %r2;",
            Op::Setp {
                cmp: Compare::Lt,
                ty: T::S32,
                ftz: false,
                dst: p(1),
                dst_neg: None,
                a: sr(r(1)),
                b: sr(r(2)),
                combine: None,
            },
        ),
        (
            "setp.hs.u32 %p1, %r1, 10;",
            Op::Setp {
                cmp: Compare::Ge,
                ty: T::U32,
                ftz: false,
                dst: p(1),
                dst_neg: None,
                a: sr(r(1)),
                b: Src::Imm(10),
                combine: None,
            },
        ),
        (
            "setp.gtu.ftz.f32 %p1|%p2, %f1, %f2;",
            Op::Setp {
                cmp: Compare::Gtu,
                ty: T::F32,
                ftz: true,
                dst: p(1),
                dst_neg: Some(p(2)),
                a: sr(f(1)),
                b: sr(f(2)),
                combine: None,
            },
        ),
        (
            "setp.nan.f32 %p1, %f1, %f2;",
            Op::Setp {
                cmp: Compare::Nan,
                ty: T::F32,
                ftz: false,
                dst: p(1),
                dst_neg: None,
                a: sr(f(1)),
                b: sr(f(2)),
                combine: None,
            },
        ),
        (
            "setp.lt.and.u32 %p1, %r1, %r2, !%p3;",
            Op::Setp {
                cmp: Compare::Lt,
                ty: T::U32,
                ftz: false,
                dst: p(1),
                dst_neg: None,
                a: sr(r(1)),
                b: sr(r(2)),
                combine: Some((
                    BoolOp::And,
                    PredSrc {
                        src: sr(p(3)),
                        negated: true,
                    },
                )),
            },
        ),
        (
            "set.eq.u32.f32 %r1, %f1, %f2;",
            Op::Set {
                cmp: Compare::Eq,
                dst_ty: T::U32,
                src_ty: T::F32,
                ftz: false,
                dst: r(1),
                a: sr(f(1)),
                b: sr(f(2)),
                combine: None,
            },
        ),
        (
            "selp.b32 %r1, %r2, 7, %p1;",
            Op::Ternary {
                op: TernaryOp::Selp,
                ty: T::B32,
                flags: NOFLAGS,
                dst: r(1),
                a: sr(r(2)),
                b: Src::Imm(7),
                c: sr(p(1)),
            },
        ),
        (
            "slct.u32.s32 %r1, %r2, %r3, %r0;",
            Op::Slct {
                ty: T::U32,
                c_ty: T::S32,
                ftz: false,
                dst: r(1),
                a: sr(r(2)),
                b: sr(r(3)),
                c: sr(r(0)),
            },
        ),
    ];
    for (ins, want) in cases {
        assert_eq!(decode(ins), want, "{ins}");
    }
    // Modifiers in any order decode the same.
    assert_eq!(
        decode("setp.u32.lt %p1, %r1, %r2;"),
        decode("setp.lt.u32 %p1, %r1, %r2;")
    );
    assert_eq!(
        decode("ld.u32.global.v2 {%r1, %r2}, [%rd1];"),
        decode("ld.global.v2.u32 {%r1, %r2}, [%rd1];")
    );
}

#[test]
fn movement_family() {
    let mov = |ty, dst, a| Op::Unary {
        op: UnaryOp::Mov,
        ty,
        flags: NOFLAGS,
        dst,
        a,
    };
    let cases: Vec<(&str, Op)> = vec![
        (
            "mov.u32 %r1, %tid.x;",
            mov(T::U32, r(1), Src::Special(SpecialReg::Tid(Dim::X))),
        ),
        (
            "mov.u32 %r1, %tid;",
            mov(T::U32, r(1), Src::Special(SpecialReg::Tid(Dim::X))),
        ),
        (
            "mov.u32 %r1, %nctaid.z;",
            mov(T::U32, r(1), Src::Special(SpecialReg::Nctaid(Dim::Z))),
        ),
        (
            "mov.u32 %r1, %laneid;",
            mov(T::U32, r(1), Src::Special(SpecialReg::LaneId)),
        ),
        (
            "mov.u32 %r1, %lanemask_lt;",
            mov(T::U32, r(1), Src::Special(SpecialReg::LanemaskLt)),
        ),
        (
            "mov.u64 %rd1, %clock64;",
            mov(T::U64, rd(1), Src::Special(SpecialReg::Clock64)),
        ),
        (
            "mov.u32 %r1, %dynamic_smem_size;",
            mov(T::U32, r(1), Src::Special(SpecialReg::DynamicSmemSize)),
        ),
        (
            "mov.f32 %f1, 0f3F800000;",
            mov(T::F32, f(1), Src::Imm(0x3F80_0000)),
        ),
        ("mov.pred %p1, 0;", mov(T::Pred, p(1), Src::Imm(0))),
        ("mov.b16 %h1, -1;", mov(T::B16, h(1), Src::Imm(0xFFFF))),
        ("mov.u64 %rd1, sh;", mov(T::U64, rd(1), Src::Imm(0))),
        (
            "mov.b64 %rd1, {%r1, %r2};",
            Op::Pack {
                part_ty: T::B32,
                dst: rd(1),
                parts: vec![sr(r(1)), sr(r(2))].into(),
            },
        ),
        (
            "mov.b64 {%r1, _}, %rd1;",
            Op::Unpack {
                part_ty: T::B32,
                dsts: vec![Some(r(1)), None].into(),
                src: sr(rd(1)),
            },
        ),
        (
            "cvt.rn.f32.s32 %f1, %r1;",
            Op::Cvt {
                dst_ty: T::F32,
                src_ty: T::S32,
                flags: ArithFlags {
                    rounding: Some(Rounding::Rn),
                    ..NOFLAGS
                },
                dst: f(1),
                a: sr(r(1)),
            },
        ),
        (
            "cvt.rzi.sat.s32.f64 %r1, %fd1;",
            Op::Cvt {
                dst_ty: T::S32,
                src_ty: T::F64,
                flags: ArithFlags {
                    rounding: Some(Rounding::Rzi),
                    sat: true,
                    ..NOFLAGS
                },
                dst: r(1),
                a: sr(fd(1)),
            },
        ),
        (
            "cvt.u64.u32 %rd1, %r1;",
            Op::Cvt {
                dst_ty: T::U64,
                src_ty: T::U32,
                flags: NOFLAGS,
                dst: rd(1),
                a: sr(r(1)),
            },
        ),
        (
            "cvta.to.global.u64 %rd1, %rd2;",
            Op::Cvta {
                to_generic: false,
                space: Space::Global,
                dst: rd(1),
                a: sr(rd(2)),
            },
        ),
        (
            "cvta.shared.u64 %rd1, sh;",
            Op::Cvta {
                to_generic: true,
                space: Space::Shared,
                dst: rd(1),
                a: Src::Imm(0),
            },
        ),
        (
            "isspacep.global %p1, %rd1;",
            Op::IsSpace {
                space: Space::Global,
                dst: p(1),
                a: sr(rd(1)),
            },
        ),
    ];
    for (ins, want) in cases {
        assert_eq!(decode(ins), want, "{ins}");
    }
    // A `.v4` move is a parallel copy through temporaries.
    let p = load(&kernel("mov.v2.b32 {%r1, %r2}, {%r2, %r1};")).expect("loads");
    assert_eq!(p.instructions.len(), 5, "2 copies in, 2 copies out, exit");
}

#[test]
fn memory_family() {
    let weak = MemQualifiers {
        order: MemOrder::Weak,
        scope: None,
        cache: None,
        non_coherent: false,
    };
    let at = |base, offset| Address { base, offset };
    let cases: Vec<(&str, Op)> = vec![
        (
            "ld.param.u64 %rd1, [k_param_0];",
            Op::Ld {
                space: Space::Param,
                qual: weak,
                ty: T::U64,
                vector: 1,
                dst: [Some(rd(1)), None, None, None, None, None, None, None],
                addr: at(AddrBase::Absolute, 0),
            },
        ),
        (
            "ld.param.u32 %r1, [k_param_1];",
            Op::Ld {
                space: Space::Param,
                qual: weak,
                ty: T::U32,
                vector: 1,
                dst: [Some(r(1)), None, None, None, None, None, None, None],
                addr: at(AddrBase::Absolute, 8),
            },
        ),
        (
            "ld.global.nc.f32 %f1, [%rd1+8];",
            Op::Ld {
                space: Space::Global,
                qual: MemQualifiers {
                    non_coherent: true,
                    ..weak
                },
                ty: T::F32,
                vector: 1,
                dst: [Some(f(1)), None, None, None, None, None, None, None],
                addr: at(AddrBase::Reg(rd(1)), 8),
            },
        ),
        (
            "ld.global.L2::64B.u32 %r1, [%rd1];",
            Op::Ld {
                space: Space::Global,
                qual: weak,
                ty: T::U32,
                vector: 1,
                dst: [Some(r(1)), None, None, None, None, None, None, None],
                addr: at(AddrBase::Reg(rd(1)), 0),
            },
        ),
        (
            "ld.volatile.shared.u32 %r1, [sh+4];",
            Op::Ld {
                space: Space::Shared,
                qual: MemQualifiers {
                    order: MemOrder::Volatile,
                    ..weak
                },
                ty: T::U32,
                vector: 1,
                dst: [Some(r(1)), None, None, None, None, None, None, None],
                addr: at(AddrBase::Absolute, 4),
            },
        ),
        (
            "ld.u32 %r1, [sh];",
            Op::Ld {
                space: Space::Shared,
                qual: weak,
                ty: T::U32,
                vector: 1,
                dst: [Some(r(1)), None, None, None, None, None, None, None],
                addr: at(AddrBase::Absolute, 0),
            },
        ),
        (
            "ld.acquire.gpu.global.u32 %r1, [%rd1];",
            Op::Ld {
                space: Space::Global,
                qual: MemQualifiers {
                    order: MemOrder::Acquire,
                    scope: Some(Scope::Gpu),
                    ..weak
                },
                ty: T::U32,
                vector: 1,
                dst: [Some(r(1)), None, None, None, None, None, None, None],
                addr: at(AddrBase::Reg(rd(1)), 0),
            },
        ),
        (
            "ld.global.cg.v4.f32 {%f0, %f1, _, %f3}, [%rd1];",
            Op::Ld {
                space: Space::Global,
                qual: MemQualifiers {
                    cache: Some(CacheOp::Cg),
                    ..weak
                },
                ty: T::F32,
                vector: 4,
                dst: [
                    Some(f(0)),
                    Some(f(1)),
                    None,
                    Some(f(3)),
                    None,
                    None,
                    None,
                    None,
                ],
                addr: at(AddrBase::Reg(rd(1)), 0),
            },
        ),
        (
            "st.global.wt.u32 [%rd1+-4], 9;",
            Op::St {
                space: Space::Global,
                qual: MemQualifiers {
                    cache: Some(CacheOp::Wt),
                    ..weak
                },
                ty: T::U32,
                vector: 1,
                src: Box::new([Src::Imm(9)]),
                addr: at(AddrBase::Reg(rd(1)), -4),
            },
        ),
        (
            "st.release.sys.global.v2.u32 [%rd1], {%r1, %r2};",
            Op::St {
                space: Space::Global,
                qual: MemQualifiers {
                    order: MemOrder::Release,
                    scope: Some(Scope::Sys),
                    ..weak
                },
                ty: T::U32,
                vector: 2,
                src: Box::new([sr(r(1)), sr(r(2))]),
                addr: at(AddrBase::Reg(rd(1)), 0),
            },
        ),
        (
            "st.u8 [%rd1], %h1;",
            Op::St {
                space: Space::Generic,
                qual: weak,
                ty: T::U8,
                vector: 1,
                src: Box::new([sr(h(1))]),
                addr: at(AddrBase::Reg(rd(1)), 0),
            },
        ),
        (
            "atom.global.add.u32 %r1, [%rd1], 1;",
            Op::Atom {
                space: Space::Global,
                op: AtomOp::Add,
                ty: AtomType::U32,
                qual: MemQualifiers {
                    order: MemOrder::Relaxed,
                    ..weak
                },
                dst: Some(r(1)),
                addr: at(AddrBase::Reg(rd(1)), 0),
                a: Src::Imm(1),
                b: None,
            },
        ),
        (
            "atom.acq_rel.gpu.shared.cas.b32 %r1, [sh], %r2, %r3;",
            Op::Atom {
                space: Space::Shared,
                op: AtomOp::Cas,
                ty: AtomType::B32,
                qual: MemQualifiers {
                    order: MemOrder::AcqRel,
                    scope: Some(Scope::Gpu),
                    ..weak
                },
                dst: Some(r(1)),
                addr: at(AddrBase::Absolute, 0),
                a: sr(r(2)),
                b: Some(sr(r(3))),
            },
        ),
        (
            "red.global.add.f32 [%rd1], %f1;",
            Op::Atom {
                space: Space::Global,
                op: AtomOp::Add,
                ty: AtomType::F32,
                qual: MemQualifiers {
                    order: MemOrder::Relaxed,
                    ..weak
                },
                dst: None,
                addr: at(AddrBase::Reg(rd(1)), 0),
                a: sr(f(1)),
                b: None,
            },
        ),
        (
            "atom.inc.u32 %r1, [%rd1], 16;",
            Op::Atom {
                space: Space::Generic,
                op: AtomOp::Inc,
                ty: AtomType::U32,
                qual: MemQualifiers {
                    order: MemOrder::Relaxed,
                    ..weak
                },
                dst: Some(r(1)),
                addr: at(AddrBase::Reg(rd(1)), 0),
                a: Src::Imm(16),
                b: None,
            },
        ),
        (
            "membar.gl;",
            Op::Fence {
                level: Scope::Gpu,
                order: MemOrder::Sc,
            },
        ),
        (
            "fence.acq_rel.cta;",
            Op::Fence {
                level: Scope::Cta,
                order: MemOrder::AcqRel,
            },
        ),
        (
            "fence.sc.sys;",
            Op::Fence {
                level: Scope::Sys,
                order: MemOrder::Sc,
            },
        ),
        ("prefetch.global.L2 [%rd1];", Op::Nop),
    ];
    for (ins, want) in cases {
        assert_eq!(decode(ins), want, "{ins}");
    }
}

#[test]
fn warp_and_barrier_family() {
    let pr = |x| PredSrc {
        src: sr(x),
        negated: false,
    };
    let cases: Vec<(&str, Op)> = vec![
        (
            "bar.sync 0;",
            Op::Barrier {
                kind: BarrierKind::Sync,
                id: Src::Imm(0),
                count: None,
                aligned: true,
            },
        ),
        (
            "barrier.sync 1, 64;",
            Op::Barrier {
                kind: BarrierKind::Sync,
                id: Src::Imm(1),
                count: Some(Src::Imm(64)),
                aligned: false,
            },
        ),
        (
            "barrier.sync.aligned 0;",
            Op::Barrier {
                kind: BarrierKind::Sync,
                id: Src::Imm(0),
                count: None,
                aligned: true,
            },
        ),
        (
            "bar.cta.arrive 1, 32;",
            Op::Barrier {
                kind: BarrierKind::Arrive,
                id: Src::Imm(1),
                count: Some(Src::Imm(32)),
                aligned: true,
            },
        ),
        (
            "bar.red.popc.u32 %r1, 0, %p1;",
            Op::Barrier {
                kind: BarrierKind::Red {
                    op: BarRed::Popc,
                    dst: r(1),
                    pred: pr(p(1)),
                },
                id: Src::Imm(0),
                count: None,
                aligned: true,
            },
        ),
        (
            "bar.red.and.pred %p2, 0, !%p1;",
            Op::Barrier {
                kind: BarrierKind::Red {
                    op: BarRed::And,
                    dst: p(2),
                    pred: PredSrc {
                        src: sr(p(1)),
                        negated: true,
                    },
                },
                id: Src::Imm(0),
                count: None,
                aligned: true,
            },
        ),
        (
            "bar.warp.sync -1;",
            Op::WarpSync {
                mask: Src::Imm(0xFFFF_FFFF),
            },
        ),
        (
            "vote.all.pred %p1, %p2;",
            Op::Vote {
                mode: VoteMode::All,
                dst: p(1),
                pred: pr(p(2)),
                mask: None,
            },
        ),
        (
            "vote.sync.ballot.b32 %r1, %p2, -1;",
            Op::Vote {
                mode: VoteMode::Ballot,
                dst: r(1),
                pred: pr(p(2)),
                mask: Some(Src::Imm(0xFFFF_FFFF)),
            },
        ),
        (
            "shfl.sync.down.b32 %r1|%p1, %r2, 16, 31, -1;",
            Op::Shfl {
                mode: ShflMode::Down,
                dst: r(1),
                dst_pred: Some(p(1)),
                a: sr(r(2)),
                b: Src::Imm(16),
                c: Src::Imm(31),
                mask: Some(Src::Imm(0xFFFF_FFFF)),
            },
        ),
        (
            "shfl.idx.b32 %r1, %r2, %r3, 31;",
            Op::Shfl {
                mode: ShflMode::Idx,
                dst: r(1),
                dst_pred: None,
                a: sr(r(2)),
                b: sr(r(3)),
                c: Src::Imm(31),
                mask: None,
            },
        ),
        (
            "match.any.sync.b32 %r1, %r2, -1;",
            Op::Match {
                all: false,
                ty: T::B32,
                dst: r(1),
                dst_pred: None,
                a: sr(r(2)),
                mask: Src::Imm(0xFFFF_FFFF),
            },
        ),
        (
            "match.all.sync.b64 %r1|%p1, %rd2, %r3;",
            Op::Match {
                all: true,
                ty: T::B64,
                dst: r(1),
                dst_pred: Some(p(1)),
                a: sr(rd(2)),
                mask: sr(r(3)),
            },
        ),
        (
            "redux.sync.min.s32 %r1, %r2, -1;",
            Op::Redux {
                op: ReduxOp::Min,
                ty: T::S32,
                dst: r(1),
                a: sr(r(2)),
                mask: Src::Imm(0xFFFF_FFFF),
            },
        ),
        ("activemask.b32 %r1;", Op::ActiveMask { dst: r(1) }),
        ("nanosleep.u32 100;", Op::Nop),
        ("pmevent 1;", Op::Nop),
        ("trap;", Op::Trap),
        ("ret;", Op::Exit),
        ("exit;", Op::Exit),
    ];
    for (ins, want) in cases {
        assert_eq!(decode(ins), want, "{ins}");
    }
}

#[test]
fn control_family() {
    let src = format!(
        "{HEADER}.func (.param .b32 out) f(.param .b32 a, .reg .b32 b)\n{{\n ld.param.b32 b, [a];\n st.param.b32 [out], b;\n ret;\n}}\n\
         .visible .entry k()\n{{\n .reg .b32 %r<3>;\n .reg .b64 %rd<2>;\n .reg .pred %p<2>;\n .param .b32 arg0;\n .param .b32 ret0;\n\
         proto: .callprototype (.param .b32 _) _ (.param .b32 _, .reg .b32 _);\n\
         TABLE: .branchtargets L1, L2;\n\
         @%p1 bra.uni L1;\n call.uni (ret0), f, (arg0, %r1);\n mov.u64 %rd1, f;\n call (ret0), %rd1, (arg0, 5), proto;\n\
         brx.idx %r1, TABLE;\nL1:\n ssy L2;\n sync;\n preBrk L2;\n brk;\n break;\n preRet L2;\nL2:\n}}\n"
    );
    let p = load(&src).expect("loads");
    let k = &p.functions[1];
    let ops: Vec<&Op> = p.instructions[k.start as usize..k.end as usize]
        .iter()
        .map(|i| &i.op)
        .collect();
    let l1 = k
        .labels
        .iter()
        .find(|(n, _)| n == "L1")
        .map(|l| l.1)
        .expect("L1");
    let l2 = k
        .labels
        .iter()
        .find(|(n, _)| n == "L2")
        .map(|l| l.1)
        .expect("L2");
    assert_eq!(
        ops[0],
        &Op::Bra {
            target: l1,
            uni: true
        }
    );
    assert_eq!(
        p.instructions[k.start as usize].guard,
        Some(GuardPred {
            reg: RegId(6),
            negated: false
        })
    );
    // `.param` variables of the caller's frame: arg0 at 0, ret0 at 4.
    assert_eq!(
        ops[1],
        &Op::Call {
            target: CallTarget::Direct(FuncId(0)),
            args: vec![
                ParamLoc::Frame { offset: 0, size: 4 },
                ParamLoc::Reg(RegId(1))
            ]
            .into(),
            rets: vec![ParamLoc::Frame { offset: 4, size: 4 }].into(),
            uni: true
        }
    );
    assert_eq!(
        ops[2],
        &Op::Unary {
            op: UnaryOp::Mov,
            ty: T::U64,
            flags: NOFLAGS,
            dst: RegId(4),
            a: Src::Imm(Program::function_address(FuncId(0)))
        }
    );
    assert_eq!(
        ops[3],
        &Op::Call {
            target: CallTarget::Indirect {
                reg: RegId(4),
                candidates: vec![FuncId(0)].into()
            },
            args: vec![ParamLoc::Frame { offset: 0, size: 4 }, ParamLoc::Imm(5)].into(),
            rets: vec![ParamLoc::Frame { offset: 4, size: 4 }].into(),
            uni: false
        }
    );
    assert_eq!(
        ops[4],
        &Op::BraIndirect {
            index: Src::Reg(RegId(1)),
            targets: vec![l1, l2].into(),
            uni: false
        }
    );
    assert_eq!(
        &ops[5..11],
        &[
            &Op::Ssy { target: l2 },
            &Op::Sync,
            &Op::PreBrk { target: l2 },
            &Op::Brk,
            &Op::Brk,
            &Op::PreRet { target: l2 }
        ]
    );
    // The trailing label names the implicit `exit` appended at the closing brace (step 5).
    assert_eq!(ops[11], &Op::Exit);
    assert_eq!(l2, k.start + 11);
    assert!(k.explicit_reconvergence);
    // The callee: formal `.param`s in its frame (return first), `.reg` params as registers.
    let f = &p.functions[0];
    assert_eq!(
        f.return_params[0].loc,
        ParamLoc::Frame { offset: 0, size: 4 }
    );
    assert_eq!(f.params[0].loc, ParamLoc::Frame { offset: 4, size: 4 });
    assert_eq!(f.params[1].loc, ParamLoc::Reg(RegId(0)));
    assert_eq!(f.frame_size, 8);
}

#[test]
fn listing_5_1_folds_constants_and_appends_ret() {
    let src = format!(
        "{HEADER}.global .u32 var = 10 / 2 + 3;\n.func function(.param .f64 p)\n{{\n .reg .f64 a;\n ld.param.f64 a, [p];\n}}\n\
         .entry transformationKernel()\n{{\n .reg .f64 var;\n .reg .pred p;\n @p call function, (var);\n}}\n"
    );
    let p = load(&src).expect("Listing 5.1 loads");
    assert_eq!(p.variables[0].init, 8u32.to_le_bytes().to_vec());
    // Step 5: the function gets an implicit `ret`, the kernel an `exit`.
    let f = &p.functions[0];
    assert_eq!(p.instructions[f.end as usize - 1].op, Op::Ret);
    let k = &p.functions[1];
    assert_eq!(p.instructions[k.end as usize - 1].op, Op::Exit);
    // The register `var` shadows the module variable `var` inside the kernel.
    assert!(
        matches!(&p.instructions[k.start as usize].op, Op::Call { args, .. } if args[..] == [ParamLoc::Reg(RegId(0))])
    );
}

#[test]
fn listing_5_4_scoping() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/thesis/listing_5_4.ptx");
    let src = std::fs::read_to_string(path).expect("listing_5_4.ptx");
    let p = load(&src).expect("loads");
    let k = &p.functions[0];
    let outer = k
        .registers
        .iter()
        .position(|r| r.name == "r")
        .expect("outer r") as u16;
    let inner = k
        .registers
        .iter()
        .position(|r| r.name == "r#1")
        .expect("inner r shown as r#1") as u16;
    let at_line = |line: u32| {
        (k.start..k.end)
            .find(|&pc| p.source[pc as usize].ptx_line == line)
            .expect("instruction on line")
    };
    // Listing line 9 uses the outer r, line 15 the inner one.
    assert!(
        matches!(p.instructions[at_line(41) as usize].op, Op::Binary { dst, .. } if dst.0 == outer)
    );
    assert!(
        matches!(p.instructions[at_line(47) as usize].op, Op::Binary { dst, ty: T::U64, .. } if dst.0 == inner)
    );
    // Listing line 16 `@!p bra BLOCK` goes to the inner BLOCK (the end of the block), not the outer.
    let outer_block = k
        .labels
        .iter()
        .find(|(n, _)| n == "BLOCK")
        .map(|l| l.1)
        .expect("outer BLOCK");
    let Op::Bra { target, .. } = p.instructions[at_line(48) as usize].op else {
        panic!("bra")
    };
    assert_ne!(target, outer_block);
    assert_eq!(target, at_line(57));
}

#[test]
fn frame_and_parameter_layout() {
    let src = format!(
        "{HEADER}.func (.param .b64 r) g(.param .b8 a, .param .align 8 .b8 s[12], .param .b32 c)\n{{\n .local .align 4 .b8 buf[6];\n .local .b64 x;\n .param .b16 q;\n ret;\n}}\n\
         .entry k(.param .u8 k0, .param .u64 k1, .param .align 16 .b8 k2[20], .param .u32 k3)\n{{\n ret;\n}}\n"
    );
    let p = load(&src).expect("loads");
    let g = &p.functions[0];
    let offsets: Vec<(&str, u32, u32)> = g
        .frame
        .iter()
        .map(|v| (v.name.as_str(), v.offset, v.size))
        .collect();
    assert_eq!(
        offsets,
        vec![
            ("r", 0, 8),
            ("a", 8, 1),
            ("s", 16, 12),
            ("c", 28, 4),
            ("buf", 32, 6),
            ("x", 40, 8),
            ("q", 48, 2)
        ]
    );
    assert_eq!(g.frame_size, 56);
    let k = &p.functions[1];
    let params: Vec<ParamLoc> = k.params.iter().map(|q| q.loc).collect();
    assert_eq!(
        params,
        vec![
            ParamLoc::Frame { offset: 0, size: 1 },
            ParamLoc::Frame { offset: 8, size: 8 },
            ParamLoc::Frame {
                offset: 16,
                size: 20
            },
            ParamLoc::Frame {
                offset: 36,
                size: 4
            }
        ]
    );
    assert_eq!(k.param_size, 40);
}

#[test]
fn initializer_bytes_and_layout() {
    let src = format!(
        "{HEADER}.global .align 4 .s16 a[3] = {{-1, 2}};\n.global .f32 b[2] = {{0f3F800000, 2.5}};\n.const .align 8 .u32 c[2][2] = {{{{1, 2}}, {{3, 4}}}};\n\
         .global .u8 d[] = {{1, 2, 3}};\n.global .u64 e = (1 << 40) | 7;\n.global .u64 ptrs[2] = {{d, generic(a)}};\n\
         .shared .align 16 .b8 s1[10];\n.extern .shared .align 16 .b8 dyn[];\n.func f() {{ .shared .b32 s2; ret; }}\n.entry k() {{ ret; }}\n"
    );
    let p = load(&src).expect("loads");
    let v = |n: &str| p.variables.iter().find(|v| v.name == n).expect(n);
    assert_eq!(v("a").init, vec![0xFF, 0xFF, 2, 0, 0, 0]);
    assert_eq!(
        v("b").init,
        [1.0f32.to_le_bytes(), 2.5f32.to_le_bytes()].concat()
    );
    assert_eq!(
        v("c").init,
        [1u32, 2, 3, 4]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<_>>()
    );
    assert_eq!((v("d").size, v("d").init.clone()), (3, vec![1, 2, 3]));
    assert_eq!(v("e").init, ((1u64 << 40) | 7).to_le_bytes().to_vec());
    let d_addr = v("d").address;
    assert_eq!(v("ptrs").init[..8], d_addr.to_le_bytes());
    assert_eq!(v("ptrs").generic_relocations, vec![(8, Space::Global)]);
    // Addresses: aligned, in declaration order, per space; `.global` above the null page.
    let base = semantics::program::GLOBAL_VARIABLES_BASE;
    assert_eq!(v("a").address, base);
    assert_eq!(v("b").address, base + 8);
    assert_eq!(v("c").address, 0);
    // Static shared: module s1, then the function's s2; dynamic shared after them.
    assert_eq!(v("s1").address, 0);
    assert_eq!(v("s2").address, 12);
    assert_eq!(p.shared_size, 16);
    assert!(v("dyn").dynamic);
    assert_eq!(v("dyn").address, 16);
}

#[test]
fn immediates_and_type_errors() {
    assert!(
        decode_err("add.f32 %f1, %f2, 1;")
            .contains("integer constant used where `.f32` needs a floating-point constant")
    );
    assert!(decode_err("add.s32 %r1, %r2, 1.5;").contains("floating-point constant"));
    assert!(decode_err("add.s32 %rd1, %r2, %r3;").contains("register `%rd1` is `.b64`"));
    assert!(decode_err("add.u32 %r1, %r2, 10 / 0;").contains("division by zero"));
    assert!(decode_err("add.s32 5, %r2, %r3;").contains("an immediate cannot be a destination"));
    assert!(decode_err("add.s32 %r1, %r2;").contains("takes 3 operands, found 2"));
    assert!(
        decode_err("setp.lt.gt.s32 %p1, %r1, %r2;")
            .contains("contradictory modifiers `.lt` and `.gt`")
    );
    assert!(decode_err("add.bogus.s32 %r1, %r2, %r3;").contains("unknown modifier `.bogus`"));
    assert!(decode_err("mov.u32 %r1, %nosuch;").contains("unknown special register `%nosuch`"));
    assert!(decode_err("mov.u32 %r1, %r9;").contains("undefined name `%r9`"));
    assert!(decode_err("bra NOWHERE;").contains("undefined label `NOWHERE`"));
    assert!(
        decode_err("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0}, {%r0}, {%r1}, {%f1};")
            .contains("needs 4 registers for D, found 1")
    );
    assert!(
        decode_err(
            "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%f0}, {%r0}, {%r1}, {%f1};"
        )
        .contains("(gap: `mma`)")
    );
    assert!(decode_err("ld.global.v2.u32 %r1, [%rd1];").contains("needs a `.v2` vector"));
    assert!(decode_err("ld.global.u32 %r1, [sh];").contains("`sh` is in `.shared`"));
    assert!(
        decode_err("@%r1 bra $L;\n$L: ret;").contains("guard `%r1` is not a predicate register")
    );
}

#[test]
fn reconvergence_of_an_if_else() {
    let body = "setp.lt.s32 %p1, %r1, 0;\n@%p1 bra ELSE;\nadd.s32 %r2, %r2, 1;\nbra.uni JOIN;\nELSE:\nadd.s32 %r2, %r2, 2;\nJOIN:\nst.global.u32 [%rd1], %r2;\n@%p2 bra END;\nst.global.u32 [%rd1], %r2;\nEND:\nret;";
    let p = load(&kernel(body)).expect("loads");
    let join = p.functions[0]
        .labels
        .iter()
        .find(|(n, _)| n == "JOIN")
        .map(|l| l.1)
        .expect("JOIN");
    assert_eq!(p.reconvergence[1], Some(join));
    // The second branch's paths meet at END (the `ret`, now `exit`): still a block, not the exit.
    let end = p.functions[0]
        .labels
        .iter()
        .find(|(n, _)| n == "END")
        .map(|l| l.1)
        .expect("END");
    assert_eq!(p.reconvergence[6], Some(end));
    // A divergent exit: the paths only meet at the function exit.
    let p = load(&kernel(
        "@%p1 bra L;\nexit;\nL:\nst.global.u32 [%rd1], %r2;",
    ))
    .expect("loads");
    assert_eq!(p.reconvergence[0], None);
    assert_eq!(
        p.hash,
        semantics::load::fnv1a(
            kernel("@%p1 bra L;\nexit;\nL:\nst.global.u32 [%rd1], %r2;").as_bytes()
        )
    );
}

#[test]
fn a_missing_required_modifier_is_named_with_what_to_add() {
    let src = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n .reg .b32 %r<3>;\n .reg .b64 %rd;\n .reg .pred %p;\n vote.sync.pred %p, %p, 0xffffffff;\n shfl.sync.b32 %r1, %r2, 1, 31, 0xffffffff;\n atom.global.u32 %r1, [%rd], 1;\n cvta.u64 %rd, %rd;\n ret;\n}\n";
    let parsed = ptx_parser::parse(src);
    assert!(!parsed.has_errors());
    let diags = semantics::load(&parsed.module, src).expect_err("four errors");
    let said: Vec<(String, String, String)> = diags
        .iter()
        .map(|d| {
            (
                d.message.clone(),
                d.label.clone(),
                d.help.clone().unwrap_or_default(),
            )
        })
        .collect();
    for (message, label, help) in [
        ("`vote.sync.pred` needs a mode", "missing mode", ".ballot"),
        ("`shfl.sync.b32` needs a mode", "missing mode", ".bfly"),
        (
            "`atom.global.u32` needs an operation",
            "missing operation",
            ".cas",
        ),
        (
            "`cvta.u64` needs a state space",
            "missing state space",
            ".shared",
        ),
    ] {
        assert!(
            said.iter()
                .any(|(m, l, h)| m == message && l == label && h.contains(help)),
            "{message}: {said:?}"
        );
    }
}
