//! The `cvt` forms that pack or unpack two narrow floats (PTX ISA 9.7.9.21 `cvt`):
//!
//! * `cvt.frnd2{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b` (`.frnd2` = `.rn .rz`);
//! * `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b`;
//! * `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a`;
//! * `cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a`.
//!
//! The stochastic-rounding form `.rs` (a fourth operand of random bits), the four-element fp8
//! packs and the fp6/fp4/`.ue8m0` formats stay gap `half-float`.

use super::{Cx, M, m_round, m_ty, m_word};
use crate::load::unsupported::Gap;
use crate::program::{BinaryOp, Fp8, Op, PackedFloat, Rounding, UnaryOp};
use ptx_parser::ScalarType;

/// A type of a packing `cvt`: an ordinary type or an 8-bit float pair.
#[derive(Clone, Copy, PartialEq)]
enum Format {
    Ty(ScalarType),
    Fp8x2(Fp8),
}

pub(super) fn cvt_packed(cx: &mut Cx<'_, '_, '_>) {
    let fp8 = |n: &str| -> Option<M> {
        match n {
            "e4m3x2" => Some(M::Word("e4m3x2")),
            "e5m2x2" => Some(M::Word("e5m2x2")),
            _ => None,
        }
    };
    let Some(mods) = cx.mods(|n| {
        m_ty(n)
            .or_else(|| m_round(n))
            .or_else(|| m_word(n, &["relu", "satfinite", "ftz", "sat"]))
            .or_else(|| fp8(n))
    }) else {
        return;
    };
    let formats: Vec<Format> = mods
        .list
        .iter()
        .filter_map(|(m, _)| match m {
            M::Ty(t) => Some(Format::Ty(*t)),
            M::Word("e4m3x2") => Some(Format::Fp8x2(Fp8::E4m3)),
            M::Word("e5m2x2") => Some(Format::Fp8x2(Fp8::E5m2)),
            _ => None,
        })
        .collect();
    let flags = super::alu::flags(cx, &mods);
    let full = cx.full_name();
    if flags.ftz || flags.sat {
        cx.error(
            cx.ins.span,
            format!("`{full}`: `.ftz` and `.sat` are not defined for packing conversions"),
            "modifier not allowed",
            "use `.satfinite` or `.relu` (PTX ISA 9.7.9.21)",
        );
        return;
    }
    use Format::*;
    use ScalarType::{F16x2, F32};
    let to_fp8 = matches!(formats.first(), Some(Fp8x2(_)));
    let rounding = flags.rounding;
    let rounding_ok = match formats.as_slice() {
        [Ty(F16x2 | ScalarType::Bf16x2), Ty(F32)] => {
            matches!(rounding, None | Some(Rounding::Rn | Rounding::Rz))
        }
        _ => matches!(rounding, None | Some(Rounding::Rn)),
    };
    if !rounding_ok {
        cx.error(
            cx.ins.span,
            format!(
                "`{full}` takes the rounding `.rn`{}",
                if to_fp8 { "" } else { " or `.rz`" }
            ),
            "rounding not allowed",
            "write `.rn`",
        );
        return;
    }
    if to_fp8 && !flags.satfinite {
        cx.error(
            cx.ins.span,
            format!("`{full}` needs `.satfinite`"),
            "missing `.satfinite`",
            "conversions to 8-bit floats are written `cvt.rn.satfinite...`",
        );
        return;
    }
    let ins = cx.ins;
    let ops = &ins.operands;
    match formats.as_slice() {
        [Ty(F16x2 | ScalarType::Bf16x2), Ty(F32)] | [Fp8x2(_), Ty(F32)] => {
            let (packed, dst_ty) = match formats[0] {
                Ty(F16x2) => (PackedFloat::F16x2, ScalarType::B32),
                Ty(_) => (PackedFloat::Bf16x2, ScalarType::B32),
                Fp8x2(f) => (PackedFloat::Fp8x2(f), ScalarType::B16),
            };
            if !cx.arity(&[3]) {
                return;
            }
            let dst = cx.dst(&ops[0], Some(dst_ty));
            let a = cx.src(&ops[1], F32);
            let b = cx.src(&ops[2], F32);
            if let (Some(dst), Some(a), Some(b)) = (dst, a, b) {
                cx.emit(Op::Binary {
                    op: BinaryOp::CvtPair(packed),
                    ty: F32,
                    flags,
                    dst,
                    a,
                    b,
                });
            }
        }
        [Fp8x2(f), Ty(F16x2)] | [Ty(F16x2), Fp8x2(f)] => {
            let widening = formats[0] == Ty(F16x2);
            if widening && flags.satfinite {
                cx.error(
                    cx.ins.span,
                    format!("`{full}`: `.satfinite` is not defined when widening to `.f16x2`"),
                    "modifier not allowed",
                    "drop `.satfinite`",
                );
                return;
            }
            let (op, src_ty, dst_ty) = if widening {
                (
                    UnaryOp::CvtFp8x2ToF16x2(*f),
                    ScalarType::B16,
                    ScalarType::B32,
                )
            } else {
                (UnaryOp::CvtF16x2ToFp8x2(*f), F16x2, ScalarType::B16)
            };
            if !cx.arity(&[2]) {
                return;
            }
            let dst = cx.dst(&ops[0], Some(dst_ty));
            let a = cx.src(&ops[1], src_ty);
            if let (Some(dst), Some(a)) = (dst, a) {
                cx.emit(Op::Unary {
                    op,
                    ty: src_ty,
                    flags,
                    dst,
                    a,
                });
            }
        }
        // Other pairings of packed types (`cvt.f32.f16x2`, `.bf16x2` from 8-bit floats ...).
        _ => cx.unsupported(Gap::HalfFloat),
    }
}
