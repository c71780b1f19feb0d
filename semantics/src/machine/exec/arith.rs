//! Thread rules of arithmetic, logic, moves, conversions and comparisons (thesis 5.3.2 (dop),
//! (mov), (setp); PTX ISA 9.7.1-9.7.8): each executing lane computes from its registers with
//! `crate::alu` and writes its destination. Only what the warp-wide fast paths did not take
//! arrives here.

use super::*;

/// (dop), thesis 5.3.2: `⟨θ ▷ pc, r⃗ | φ⟩ —ε→Θ ⟨θ ◁ pc+1, r⃗[d ↦ op(r⃗(a⃗))]⟩` for every
/// executing lane; the extended-precision instructions (`add.cc`, `subc`, `mad.cc`, ...) read and
/// write their lane's carry flag.
pub(super) fn dop(
    cx: &mut Ctx,
    w: &mut Warp,
    level: usize,
    exec: u64,
    op: &Op,
) -> Result<(), Fault> {
    let (_, sp, fb, regs) = frame(cx, &mut w.levels[level]);
    lane_macros!($, regs, sp, fb, exec);
    match op {
        Op::Unary {
            op,
            ty,
            flags,
            dst,
            a,
        } => {
            let (op, ty, flags) = (*op, *ty, *flags);
            if op == crate::program::UnaryOp::Mov {
                each!(|l| {
                    let v = rd!(a, l);
                    wr!(dst, l, v)
                });
            } else {
                each!(|l| {
                    let v = alu::unary(op, ty, flags, rd!(a, l));
                    wr!(dst, l, v)
                });
            }
        }
        Op::Binary {
            op,
            ty,
            flags,
            dst,
            a,
            b,
        } => {
            let (op, ty, flags) = (*op, *ty, *flags);
            let mut carry = w.carry;
            each!(|l| {
                let mut c = carry >> l & 1 == 1;
                let v = alu::binary(op, ty, flags, rd!(a, l), rd!(b, l), &mut c);
                carry = (carry & !(1 << l)) | ((c as u64) << l);
                wr!(dst, l, v)
            });
            w.carry = carry;
        }
        Op::Ternary {
            op,
            ty,
            flags,
            dst,
            a,
            b,
            c,
        } => {
            let (op, ty, flags) = (*op, *ty, *flags);
            let mut carry = w.carry;
            each!(|l| {
                let mut cf = carry >> l & 1 == 1;
                let v = alu::ternary(op, ty, flags, rd!(a, l), rd!(b, l), rd!(c, l), &mut cf);
                carry = (carry & !(1 << l)) | ((cf as u64) << l);
                wr!(dst, l, v)
            });
            w.carry = carry;
        }
        Op::Bfi {
            ty,
            dst,
            a,
            b,
            pos,
            len,
        } => each!(|l| {
            let v = alu::bfi(*ty, rd!(a, l), rd!(b, l), rd!(pos, l), rd!(len, l));
            wr!(dst, l, v)
        }),
        Op::Prmt { mode, dst, a, b, c } => each!(|l| {
            let v = alu::prmt(*mode, rd!(a, l), rd!(b, l), rd!(c, l));
            wr!(dst, l, v)
        }),
        _ => return Err(misrouted(op)),
    }
    Ok(())
}

/// (mov), thesis 5.3.2: `⟨θ ▷ pc, r⃗⟩ —ε→Θ ⟨θ ◁ pc+1, r⃗[d ↦ r⃗(a)]⟩`, with the packing and
/// unpacking forms of `mov` and the conversions of `cvt` (PTX ISA 9.7.9.21): a destination wider
/// than the result receives it sign- or zero-extended.
pub(super) fn mov(
    cx: &mut Ctx,
    w: &mut Warp,
    level: usize,
    exec: u64,
    func: FuncId,
    op: &Op,
) -> Result<(), Fault> {
    let (_, sp, fb, regs) = frame(cx, &mut w.levels[level]);
    lane_macros!($, regs, sp, fb, exec);
    match op {
        Op::Pack {
            part_ty,
            dst,
            parts,
        } => {
            let bits = type_size(*part_ty) * 8;
            let mask = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            each!(|l| {
                let mut v = 0u64;
                for (i, p) in parts.iter().enumerate() {
                    let sh = i as u32 * bits;
                    if sh < 64 {
                        v |= (rd!(p, l) & mask) << sh;
                    }
                }
                wr!(dst, l, v)
            });
        }
        Op::Unpack { part_ty, dsts, src } => {
            let bits = type_size(*part_ty) * 8;
            let mask = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            each!(|l| {
                let v = rd!(src, l);
                for (i, d) in dsts.iter().enumerate() {
                    let sh = i as u32 * bits;
                    if let Some(d) = d
                        && sh < 64
                    {
                        wr!(d, l, (v >> sh) & mask);
                    }
                }
            });
        }
        Op::Cvt {
            dst_ty,
            src_ty,
            flags,
            dst,
            a,
        } => {
            // A destination register wider than the result type receives the value sign- or
            // zero-extended, as for `ld` (PTX ISA 6.4.2, "Operand Size Exceeding Instruction-Type
            // Size"): `cvt.s16.s8` into a `.b32` register writes 0xFFFFFFC2, not 0xFFC2.
            let (size, signed) = (type_size(*dst_ty), type_signed(*dst_ty));
            let bits = reg_bits(cx.program, func, dst.0);
            each!(|l| {
                let v = alu::cvt(*dst_ty, *src_ty, *flags, rd!(a, l));
                wr!(dst, l, extend(v, size, signed, bits))
            })
        }
        _ => return Err(misrouted(op)),
    }
    Ok(())
}

/// (setp), thesis 5.3.2: `⟨θ ▷ pc, r⃗⟩ —ε→Θ ⟨θ ◁ pc+1, r⃗[p ↦ cmp(r⃗(a), r⃗(b)) ∘ r⃗(c)]⟩`,
/// with `set` and `slct` (PTX ISA 9.7.6-9.7.7).
pub(super) fn setp(
    cx: &mut Ctx,
    w: &mut Warp,
    level: usize,
    exec: u64,
    op: &Op,
) -> Result<(), Fault> {
    let (_, sp, fb, regs) = frame(cx, &mut w.levels[level]);
    lane_macros!($, regs, sp, fb, exec);
    match op {
        Op::Setp {
            cmp,
            ty,
            ftz,
            dst,
            dst_neg,
            a,
            b,
            combine,
        } => each!(|l| {
            // `(t, !t)`, or the low and high halves' results of a packed half type.
            let (p, q) = alu::setp_pair(*cmp, *ty, *ftz, rd!(a, l), rd!(b, l));
            let (p, q) = match combine {
                None => (p, q),
                Some((bop, c)) => {
                    let c = read_pred(regs, c, l, &sp, fb);
                    (combine_bool(*bop, p, c), combine_bool(*bop, q, c))
                }
            };
            wr!(dst, l, p as u64);
            if let Some(q_reg) = dst_neg {
                wr!(q_reg, l, q as u64);
            }
        }),
        Op::Set {
            cmp,
            dst_ty,
            src_ty,
            ftz,
            dst,
            a,
            b,
            combine,
        } => each!(|l| {
            let c = combine.map(|(bop, c)| (bop, read_pred(regs, &c, l, &sp, fb)));
            let v = alu::set_result(*cmp, *dst_ty, *src_ty, *ftz, rd!(a, l), rd!(b, l), c);
            wr!(dst, l, v)
        }),
        Op::Slct {
            c_ty,
            ftz,
            dst,
            a,
            b,
            c,
            ..
        } => each!(|l| {
            let v = alu::slct(*c_ty, *ftz, rd!(a, l), rd!(b, l), rd!(c, l));
            wr!(dst, l, v)
        }),
        _ => return Err(misrouted(op)),
    }
    Ok(())
}
