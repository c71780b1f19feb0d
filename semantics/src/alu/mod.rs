//! Bit-exact instruction arithmetic: pure functions on 64-bit register words (PTX ISA chapter 9).
//!
//! The machine reads operands, calls these, and writes the result; nothing here knows about lanes,
//! warps or memory. Values are carried in the low bits of a `u64` as the instruction's type says
//! (`.f32` in the low 32 bits as IEEE bits, `.s16` in the low 16 bits, `.pred` as 0 or 1); results
//! are returned the same way with the unused high bits zero (a `.s16` result of -1 is `0xFFFF`).
//! Operand bits above the type's width are ignored.
//!
//! Every function is total: any op/type/flag combination and any operand bits give a defined
//! result without panicking. Combinations the PTX grammar forbids (the loader rejects them) get a
//! documented, deterministic result: integer-only ops on float types work on the raw bits as an
//! unsigned integer of the type's width; float-only unary ops (`sqrt`, `sin`, ...) on integer types
//! return the operand unchanged; float-only binary ops fall back to the integer op of the same
//! name (`rem.f32` has no float meaning and is computed on the bits).
//!
//! Submodules: `softfloat` (exact IEEE arithmetic in all rounding modes), `int` (integer and
//! carry arithmetic, `mul24 mad24 sad cvt.pack`), `float` (PTX float semantics: ftz, sat, relu,
//! NaN, min/max, approximate functions), `bits` (popc, clz, brev, bfind, bfe, bfi, prmt, shf,
//! lop3, bmsk, szext, fns), `cvt`, `narrow` (packing conversions to and from `.f16x2 .bf16x2
//! .e4m3x2 .e5m2x2`), `video` (`dp4a dp2a` and the scalar video instructions), `compare` (setp,
//! set, slct) and `atom` (atomics, redux).
//!
//! # Documented deviations from NVIDIA hardware
//!
//! * **Approximate functions** (`rcp.approx`, `sqrt.approx`, `rsqrt.approx`, `ex2.approx`,
//!   `lg2.approx`, `sin.approx`, `cos.approx`, `tanh.approx`, `div.approx`, `div.full`): hardware
//!   uses table-driven approximations with a few ulps of error (PTX ISA gives only error bounds).
//!   cudasem computes `rcp`/`sqrt`/`div` correctly rounded to nearest, and `ex2 lg2 sin cos tanh
//!   rsqrt` in `f64` with Rust's `std` functions, rounded once to the destination format (so
//!   within about one ulp of the true value). Results may differ from a GPU in the last ulps.
//! * **`.f16`/`.bf16` arithmetic** is implemented exactly (IEEE, all rounding modes, via the same
//!   soft-float core as `.f32`/`.f64`) and `.f16x2`/`.bf16x2` lane-wise for `add sub mul fma mad
//!   min max neg abs`; `.ftz` flushes `.f32` and `.f16` (as PTX specifies; `.bf16` and `.f64`
//!   arithmetic has no `.ftz`, and `cvt.ftz` flushes only `.f32` operands). NaN results are the
//!   canonical NaN of the format (`0x7FFF` for both 16-bit formats); hardware NaN
//!   payloads beyond that (e.g. of `.f16x2` min/max) are not modelled. `.tf32` is treated as
//!   `.f32` (the loader does not admit it); `.b128` as a 64-bit bit string.
//! * **`.relu`** turns `-0.0` into `+0.0` as it does every negative value (the ISA says "clamps
//!   the result to 0 if negative"; not verified on hardware).
//! * **8-bit floats**: conversions to `.e4m3x2`/`.e5m2x2` round to nearest even and saturate
//!   (`.satfinite`); an 8-bit NaN converted to `.f16` gives the canonical `.f16` NaN.
//! * **Scalar video shifts** (`vshl`, `vshr`): the ISA calls the intermediate result `.s34`;
//!   cudasem keeps the exact shifted value before `.sat` and the secondary `.min`/`.max`, which
//!   differs from a 34-bit truncation only for left shifts of large values by large amounts.
//! * **`fns` with `base > 31`** (undefined in PTX) gives `0xFFFFFFFF` (nothing found).
//! * **NaN results** of arithmetic are NVIDIA's canonical NaN (`0x7FFFFFFF`, `0x7FFFFFFFFFFFFFFF`,
//!   `0x7FFF`); `mov`, `abs`, `neg`, `copysign`, `selp`, `slct` move bits and keep payloads.
//!   Float-to-float `cvt` of a NaN also gives the canonical NaN.
//! * **`.ftz` on results** flushes values that are subnormal *after* rounding.
//! * **`.sat` on floats** clamps to `[+0.0, 1.0]`; NaN and `-0.0` give `+0.0`.
//! * **Integer division by zero** (undefined in PTX): `div.u` gives all ones, `rem` gives the
//!   dividend (observed on NVIDIA GPUs); `div.s` gives -1 for a non-negative dividend and 1 for a
//!   negative one (the sign fix-up of the unsigned quotient in ptxas' expansion; not verified on
//!   hardware). `div.s` of MIN by -1 wraps to MIN, `rem.s` gives 0.
//! * **`mul.wide`/`mad.wide` on 64-bit types** (not in PTX) return the low 64 bits.
//! * **Carry forms**: `TernaryOp::MadCc` is `mad.lo.cc` (writes CC.CF) and `TernaryOp::MadC` is
//!   `madc.lo` (reads CC.CF, leaves it unchanged), as the loader decodes them; the `.hi` and
//!   `madc.cc` forms, which the enum cannot express, are available through [`mad_carry`].
//! * **`atom.add.f32`** rounds to nearest and keeps subnormals (the shared-memory behaviour);
//!   hardware global-memory `atom.add.f32` flushes subnormal inputs and results to zero.
//! * **Float `min`/`max`** order `-0.0` below `+0.0` (so `min(-0.0, +0.0)` is `-0.0`).

mod bits;
mod compare;
mod cvt;
mod float;
mod int;
pub mod mma;
mod narrow;
mod redux;
mod softfloat;
mod video;

use crate::program::{
    ArithFlags, BinaryOp, Compare, PrmtMode, ReduxOp, Rounding, TernaryOp, UnaryOp,
};
use ptx_parser::ScalarType;
use softfloat::{Fmt, Mode};

/// Per-thread carry flag of extended-precision arithmetic (`add.cc`, `addc`; PTX ISA 9.7.2).
pub type Carry = bool;

/// `op.ty d, a`.
#[inline]
pub fn unary(op: UnaryOp, ty: ScalarType, flags: ArithFlags, a: u64) -> u64 {
    match op {
        UnaryOp::CvtF16x2ToFp8x2(f) => return narrow::f16x2_to_fp8x2(f, flags, a),
        UnaryOp::CvtFp8x2ToF16x2(f) => return narrow::fp8x2_to_f16x2(f, flags, a),
        _ => {}
    }
    let float = match (float_fmt(ty), packed_lanes(ty)) {
        (Some(fmt), _) => float::unary(op, fmt, flags, a),
        (None, Some(lane)) => lanes2(lane, |x, _, _| float::unary(op, lane, flags, x), a, 0, 0),
        (None, None) => None,
    };
    float.unwrap_or_else(|| int::unary(op, ty, a))
}

/// `op.ty d, a, b`; `carry` is read and written by the carry forms only.
#[inline]
pub fn binary(
    op: BinaryOp,
    ty: ScalarType,
    flags: ArithFlags,
    a: u64,
    b: u64,
    carry: &mut Carry,
) -> u64 {
    if let BinaryOp::CvtPair(to) = op {
        return narrow::cvt_pair(to, flags, a, b);
    }
    let float = match (float_fmt(ty), packed_lanes(ty)) {
        (Some(fmt), _) => float::binary(op, fmt, flags, a, b),
        (None, Some(lane)) => lanes2(
            lane,
            |x, y, _| float::binary(op, lane, flags, x, y),
            a,
            b,
            0,
        ),
        (None, None) => None,
    };
    float.unwrap_or_else(|| int::binary(op, ty, flags, a, b, carry))
}

/// `op.ty d, a, b, c` (`selp`: `c` is the predicate, 0 or 1).
#[inline]
pub fn ternary(
    op: TernaryOp,
    ty: ScalarType,
    flags: ArithFlags,
    a: u64,
    b: u64,
    c: u64,
    carry: &mut Carry,
) -> u64 {
    match op {
        TernaryOp::Selp => {
            // PTX ISA 9.7.8.x `selp`: a pure bit move.
            let m = mask(ty);
            if c & 1 != 0 { a & m } else { b & m }
        }
        TernaryOp::Bfe => bits::bfe(ty, a, b, c),
        TernaryOp::Prmt => bits::prmt(PrmtMode::Default, a, b, c),
        TernaryOp::ShfLWrap => bits::shf(true, false, a, b, c),
        TernaryOp::ShfLClamp => bits::shf(true, true, a, b, c),
        TernaryOp::ShfRWrap => bits::shf(false, false, a, b, c),
        TernaryOp::ShfRClamp => bits::shf(false, true, a, b, c),
        TernaryOp::MadCc => mad_carry(false, false, true, ty, a, b, c, carry),
        TernaryOp::MadC => mad_carry(false, true, false, ty, a, b, c, carry),
        TernaryOp::Lop3 { lut } => bits::lop3(lut, a, b, c),
        TernaryOp::Fns => bits::fns(a, b, c),
        TernaryOp::Mad24 { hi } => int::mad24(hi, ty, flags.sat, a, b, c),
        TernaryOp::Sad => int::sad(ty, a, b, c),
        TernaryOp::Dp4a { a_signed, b_signed } => video::dp4a(a_signed, b_signed, a, b, c),
        TernaryOp::Dp2a {
            hi,
            a_signed,
            b_signed,
        } => video::dp2a(hi, a_signed, b_signed, a, b, c),
        TernaryOp::CvtPackSat { bits, signed } => int::cvt_pack_sat(bits, signed, a, b, c),
        TernaryOp::Video(v) => video::scalar(v, a, b, c),
        TernaryOp::Mad | TernaryOp::Fma | TernaryOp::MadHi | TernaryOp::MadWide => {
            if matches!(op, TernaryOp::Mad | TernaryOp::Fma) {
                if let Some(fmt) = float_fmt(ty) {
                    return float::fma(fmt, flags, a, b, c);
                }
                if let Some(lane) = packed_lanes(ty) {
                    return lanes2(
                        lane,
                        |x, y, z| Some(float::fma(lane, flags, x, y, z)),
                        a,
                        b,
                        c,
                    )
                    .unwrap_or(0);
                }
            }
            int::mad(op, ty, flags, a, b, c)
        }
    }
}

pub use int::mad_carry;

/// `bfi.ty d, a, b, pos, len`.
#[inline]
pub fn bfi(ty: ScalarType, a: u64, b: u64, pos: u64, len: u64) -> u64 {
    bits::bfi(ty, a, b, pos, len)
}

/// `prmt.b32.mode d, a, b, c`.
#[inline]
pub fn prmt(mode: PrmtMode, a: u64, b: u64, c: u64) -> u64 {
    bits::prmt(mode, a, b, c)
}

/// `cvt.dst_ty.src_ty d, a` with rounding, `.sat`, `.ftz`.
#[inline]
pub fn cvt(dst_ty: ScalarType, src_ty: ScalarType, flags: ArithFlags, a: u64) -> u64 {
    cvt::cvt(dst_ty, src_ty, flags, a)
}

/// The comparison of `setp`/`set`.
#[inline]
pub fn compare(cmp: Compare, ty: ScalarType, ftz: bool, a: u64, b: u64) -> bool {
    compare::compare(cmp, ty, ftz, a, b)
}

/// `set`'s destination value for a boolean: all ones for integer types, 1.0 for `.f32`.
#[inline]
pub fn set_value(dst_ty: ScalarType, value: bool) -> u64 {
    compare::set_value(dst_ty, value)
}

/// The two results `setp` writes to `p` and `q` before combining with `c`: `(t, !t)` for a
/// scalar type, the low and the high half's comparison for `.f16x2`/`.bf16x2`.
#[inline]
pub fn setp_pair(cmp: Compare, ty: ScalarType, ftz: bool, a: u64, b: u64) -> (bool, bool) {
    compare::setp_pair(cmp, ty, ftz, a, b)
}

pub use compare::set_result;

/// `slct.ty.c_ty d, a, b, c`: `c >= 0 ? a : b` (`-0.0` counts as >= 0; NaN selects `b`).
#[inline]
pub fn slct(c_ty: ScalarType, ftz: bool, a: u64, b: u64, c: u64) -> u64 {
    compare::slct(c_ty, ftz, a, b, c)
}

/// The value an atomic writes back, given the old memory value (`cas`: `a` is the compare value,
/// `b` the new one). The old value is what the destination register receives. Memory's function
/// (`memory_model::atomic::apply`): flat memory gets it as the update of its read-modify-write,
/// and the cached memory's `atomOp` calls it itself.
pub use memory_model::atomic::apply as atom_new_value;

/// `redux.sync.op.ty` over the participating lanes' values.
pub fn redux(op: ReduxOp, ty: ScalarType, values: &[u64]) -> u64 {
    redux::redux(op, ty, values)
}

// ---------------------------------------------------------------------------------------------
// Type helpers shared by the submodules (PTX ISA 5.2.1, "Fundamental Types").

/// Bits a register value of `ty` occupies. `.b128` is treated as 64 bits (a register word);
/// opaque reference types as 64-bit handles.
#[inline]
pub(crate) fn width(ty: ScalarType) -> u32 {
    use ScalarType::*;
    match ty {
        Pred => 1,
        S8 | U8 | B8 => 8,
        S16 | U16 | B16 | F16 | Bf16 => 16,
        S32 | U32 | B32 | F32 | F16x2 | Bf16x2 | Tf32 => 32,
        S64 | U64 | B64 | F64 | B128 | TexRef | SamplerRef | SurfRef => 64,
    }
}

#[inline]
pub(crate) fn mask_bits(w: u32) -> u64 {
    if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }
}

#[inline]
pub(crate) fn mask(ty: ScalarType) -> u64 {
    mask_bits(width(ty))
}

#[inline]
pub(crate) fn is_signed(ty: ScalarType) -> bool {
    matches!(
        ty,
        ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64
    )
}

/// Sign-extends the low `w` bits of `v`.
#[inline]
pub(crate) fn sext(v: u64, w: u32) -> i64 {
    if w == 0 || w >= 64 {
        v as i64
    } else {
        let s = 64 - w;
        ((v << s) as i64) >> s
    }
}

/// The integer value of a register word of `ty` (signed types sign-extended).
#[inline]
pub(crate) fn int_val(ty: ScalarType, v: u64) -> i128 {
    if is_signed(ty) {
        sext(v, width(ty)) as i128
    } else {
        (v & mask(ty)) as i128
    }
}

/// The IEEE format of a scalar float type.
#[inline]
pub(crate) fn float_fmt(ty: ScalarType) -> Option<Fmt> {
    match ty {
        ScalarType::F16 => Some(softfloat::F16),
        ScalarType::Bf16 => Some(softfloat::BF16),
        ScalarType::F32 | ScalarType::Tf32 => Some(softfloat::F32),
        ScalarType::F64 => Some(softfloat::F64),
        _ => None,
    }
}

/// The lane format of the packed types `.f16x2` / `.bf16x2`.
#[inline]
pub(crate) fn packed_lanes(ty: ScalarType) -> Option<Fmt> {
    match ty {
        ScalarType::F16x2 => Some(softfloat::F16),
        ScalarType::Bf16x2 => Some(softfloat::BF16),
        _ => None,
    }
}

/// Applies a 16-bit lane operation to both halves of packed operands.
fn lanes2(
    lane: Fmt,
    f: impl Fn(u64, u64, u64) -> Option<u64>,
    a: u64,
    b: u64,
    c: u64,
) -> Option<u64> {
    let lo = f(a & 0xFFFF, b & 0xFFFF, c & 0xFFFF)?;
    let hi = f((a >> 16) & 0xFFFF, (b >> 16) & 0xFFFF, (c >> 16) & 0xFFFF)?;
    Some(((hi & lane.mask()) << 16) | (lo & lane.mask()))
}

/// The float rounding direction of a modifier; `None` is the PTX default `.rn`. Integer
/// rounding modifiers on float arithmetic (not in PTX) map to the same direction.
pub(crate) fn float_mode(r: Option<Rounding>) -> Mode {
    match r {
        None | Some(Rounding::Rn) | Some(Rounding::Rni) => Mode::Rn,
        Some(Rounding::Rz) | Some(Rounding::Rzi) => Mode::Rz,
        Some(Rounding::Rm) | Some(Rounding::Rmi) => Mode::Rm,
        Some(Rounding::Rp) | Some(Rounding::Rpi) => Mode::Rp,
    }
}
