//! The instructions added to the subset, run by the machine over a full warp (the fast paths'
//! shape) and a partial one, under `simt-stack` and `its`: each lane's results against
//! references written here from the PTX ISA pseudo-code (independent of `semantics::alu`).
//! In particular `setp.f16x2 p|q` must give the high halves' comparison in `q`, not `!p`.
mod machine_common;
use half::f16;
use machine_common::*;
use semantics::machine::{ArgValue, Machine, Termination, WarpModel};

const KERNEL: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pout)
{
    .reg .pred %p<4>;
    .reg .b32 %r<24>;
    .reg .b16 %s<4>;
    .reg .f32 %f<4>;
    .reg .f16x2 %x<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [pout];
    mov.u32 %r1, %tid.x;
    mul.lo.u32 %r2, %r1, -1640531527;
    shr.u32 %r3, %r2, 7;
    xor.b32 %r3, %r3, %r2;
    not.b32 %r4, %r2;
    // lop3 majority, lop3.or with a sink destination
    lop3.b32 %r10, %r2, %r3, %r4, 0xE8;
    lop3.or.b32 _|%p1, %r2, %r3, %r1, 0x80, %p0;
    selp.u32 %r11, 1, 0, %p1;
    dp4a.s32.u32 %r12, %r2, %r3, %r1;
    vshr.s32.s32.u32.wrap.max %r13, %r2, %r1, %r3;
    mul24.hi.s32 %r14, %r2, %r3;
    vadd.s32.s32.s32.sat %r14.h1, %r2.b3, %r3.h0, %r14;
    // halves: (t, -t/2) packed, then fma and a packed comparison
    cvt.rn.f32.u32 %f1, %r1;
    mul.f32 %f2, %f1, 0fBF000000;
    cvt.rn.f16x2.f32 %x1, %f1, %f2;
    mov.b32 %x2, 0x3C00C000;
    fma.rn.f16x2 %x3, %x1, %x2, %x2;
    setp.gt.f16x2 %p2|%p3, %x3, %x2;
    selp.u32 %r15, 1, 0, %p2;
    selp.u32 %r16, 2, 0, %p3;
    or.b32 %r15, %r15, %r16;
    cvt.rn.satfinite.e4m3x2.f16x2 %s1, %x3;
    cvt.u32.u16 %r17, %s1;
    mov.b32 %r18, %x3;
    cvt.u64.u32 %rd2, %r1;
    shl.b64 %rd2, %rd2, 5;
    add.s64 %rd2, %rd1, %rd2;
    st.global.v4.u32 [%rd2], {%r10, %r11, %r12, %r13};
    st.global.v4.u32 [%rd2+16], {%r14, %r15, %r17, %r18};
    ret;
}
"#;

fn sx(v: u32, bits: u32) -> i64 {
    let v = (v as u64) & ((1u64 << bits) - 1);
    if v >> (bits - 1) == 1 {
        v as i64 - (1i64 << bits)
    } else {
        v as i64
    }
}

/// The eight result words of lane `t`, from the ISA definitions.
fn reference(t: u32) -> [u32; 8] {
    let a = t.wrapping_mul(0x9E37_79B9);
    let b = (a >> 7) ^ a;
    let c = !a;
    let majority = (a & b) | (a & c) | (b & c);
    // p0 is never written: registers start at 0 (false).
    let and3 = a & b & t;
    let p1 = and3 != 0;
    let dot: i64 = (0..4)
        .map(|i| sx(a >> (8 * i), 8) * ((b >> (8 * i)) & 0xFF) as i64)
        .sum();
    let dp4a = (t as i64 + dot) as u32;
    let shifted = sx(a, 32) >> (t & 31);
    let vshr = shifted.max(sx(b, 32)) as u32;
    let mul24 = ((sx(a, 24) * sx(b, 24)) >> 16) as u32;
    // vadd ... %r14.h1, a.b3, b.h0, %r14: the .s16-saturated sum into the high half.
    let sum = (sx(a >> 24, 8) + sx(b, 16)).clamp(-32768, 32767) as u32 & 0xFFFF;
    let merged = (sum << 16) | (mul24 & 0xFFFF);
    // (t, -t/2) * (1.0, -2.0) + (1.0, -2.0), each half rounded once (exact here: small values).
    let hi = f16::from_f64(t as f64 * 1.0 + 1.0);
    let lo = f16::from_f64((-(t as f64) / 2.0) * -2.0 - 2.0);
    let packed = ((hi.to_bits() as u32) << 16) | lo.to_bits() as u32;
    let gt = (lo.to_f64() > -2.0) as u32 | (((hi.to_f64() > 1.0) as u32) << 1);
    let e4m3 = |x: f64| -> u32 {
        // Normal values only here (magnitudes 1 to 33): 3 fraction bits, nearest, ties to even.
        let sign = if x < 0.0 { 0x80 } else { 0 };
        let x = x.abs();
        if x == 0.0 {
            return sign;
        }
        let mut e = x.log2().floor() as i32;
        let scaled = (x / 2f64.powi(e) - 1.0) * 8.0;
        let (q, rem) = (scaled.floor(), scaled - scaled.floor());
        let mut frac = if rem > 0.5 || (rem == 0.5 && q % 2.0 == 1.0) {
            q as u32 + 1
        } else {
            q as u32
        };
        if frac == 8 {
            frac = 0;
            e += 1;
        }
        sign | (((e + 7) as u32) << 3) | frac
    };
    let fp8 = (e4m3(hi.to_f64()) << 8) | e4m3(lo.to_f64());
    [majority, p1 as u32, dp4a, vshr, merged, gt, fp8, packed]
}

fn run_kernel(model: WarpModel, block: u32) -> Vec<u32> {
    let prog = load(KERNEL);
    let l = launch(
        "k",
        1,
        block,
        vec![zeros("out", 8 * block as usize)],
        vec![ArgValue::Buffer(0)],
    );
    let mut m = Machine::new(prog, &l, &config(model, 32)).expect("launch");
    let t = run(&mut m, &mut scheduler::RoundRobin::new(), 100_000);
    assert_eq!(t, Termination::Completed, "{model:?}, {block} threads");
    words(&m.buffer(0))
}

#[test]
fn extended_ops_per_lane() {
    for model in [WarpModel::SimtStack, WarpModel::Its] {
        for block in [32, 13] {
            let out = run_kernel(model, block);
            for t in 0..block {
                let got = &out[8 * t as usize..8 * t as usize + 8];
                assert_eq!(got, reference(t), "{model:?}, {block} threads, lane {t}");
            }
        }
    }
}
