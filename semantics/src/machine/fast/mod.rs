//! Fast paths of [`super::exec::exec_data`] for the common data instructions (ARCHITECTURE.md
//! section 8): a performance layer only, with exactly the semantics of the generic per-lane path.
//!
//! The generic path matches on every operand's kind and on the op inside the lane loop. Here the
//! operands are gathered once per warp instruction into lane columns (a register's column is a
//! copy of its structure-of-arrays row; an immediate is broadcast; special registers and frame
//! addresses are read per lane, as the generic path does), then:
//! * the integer ops of the hot loops (`add sub mul mul.hi mul.wide min max and or xor shl shr`,
//!   `mad.lo mad.wide mad.hi selp`, integer `setp` without a predicate combination) on 32- and
//!   64-bit types run as one closed loop per (op, width, signedness) over ALL lanes of the warp, which
//!   the compiler unrolls and vectorises; the results are then written back to the executing lanes
//!   only. Computing the inactive lanes is harmless: these are pure, total functions of register
//!   bits, and their results are dropped;
//! * the other ops without a carry (`cvt`, float arithmetic, ...) call `crate::alu` per executing
//!   lane on the gathered columns;
//! * everything else (carry ops, predicate combinations, memory, warp-collective ops) returns
//!   `false` and takes the generic path.
//!
//! Scalar `.global`/`.shared` loads and stores of a warp go through [`load_traced`] and
//! [`store_traced`] (`memory.rs`) (one segment and page resolution per run of lanes on a page). An observed
//! step passes a [`LaneTrace`]: the lanes that accessed memory, with their addresses and values,
//! from which the caller records the per-lane memory events in lane order, as the generic path
//! does.
//!
//! Lanes write only their own column and read their own lane of each operand, so gathering all
//! operands before writing any result is the same as the generic read-then-write per lane, even
//! when the destination is also a source. Unit tests compare every fast kernel with `crate::alu`.

mod memory;

use super::thread::SpecialCtx;
use super::warp::{lane_mask, lanes};
use crate::alu;
use crate::machine::regs::Regs;
use crate::program::{ArithFlags, BinaryOp, Compare, Op, RegId, Src, TernaryOp, UnaryOp};
pub(crate) use memory::{LaneTrace, load_traced, store_traced};
use ptx_parser::ScalarType;

/// Executes `op` for the `exec` lanes if a fast path covers it; `false` leaves the registers
/// untouched (the caller then runs the generic path).
#[inline]
pub(crate) fn try_exec(
    regs: &mut Regs,
    fb: &[u32],
    ws: usize,
    sp: &SpecialCtx,
    exec: u64,
    op: &Op,
) -> bool {
    if ws == 32 {
        exec_n::<32>(regs, fb, 32, sp, exec, op)
    } else if ws <= 64 {
        exec_n::<64>(regs, fb, ws, sp, exec, op)
    } else {
        false
    }
}

/// Integer type classes with fast kernels.
#[derive(Clone, Copy, PartialEq, Eq)]
enum IntTy {
    S32,
    U32,
    S64,
    U64,
}

fn int_ty(ty: ScalarType) -> Option<IntTy> {
    match ty {
        ScalarType::S32 => Some(IntTy::S32),
        ScalarType::U32 | ScalarType::B32 => Some(IntTy::U32),
        ScalarType::S64 => Some(IntTy::S64),
        ScalarType::U64 | ScalarType::B64 => Some(IntTy::U64),
        _ => None,
    }
}

#[inline(always)]
fn gather<const N: usize>(
    regs: &Regs,
    ws: usize,
    s: &Src,
    sp: &SpecialCtx,
    fb: &[u32],
    out: &mut [u64; N],
) -> bool {
    let out = &mut out[..ws];
    match *s {
        Src::Reg(r) => match regs.row(r.0 as usize).and_then(|col| col.get(..ws)) {
            Some(col) => out.copy_from_slice(col),
            None => return false,
        },
        Src::Imm(v) => out.fill(v),
        Src::Special(x) => {
            for (l, o) in out.iter_mut().enumerate() {
                *o = sp.read(x, l as u32);
            }
        }
        Src::FrameAddr(off) => {
            let Some(fb) = fb.get(..ws) else {
                return false;
            };
            for (o, &b) in out.iter_mut().zip(fb) {
                *o = b as u64 + off as u64;
            }
        }
    }
    true
}

/// The destination column, if in range.
#[inline(always)]
fn column(regs: &mut Regs, ws: usize, dst: RegId) -> Option<&mut [u64]> {
    regs.row_mut(dst.0 as usize)?.get_mut(..ws)
}

/// Writes the `exec` lanes of `vals` to the column.
#[inline(always)]
fn write_lanes(col: &mut [u64], exec: u64, full: bool, vals: &[u64]) {
    if full {
        col.copy_from_slice(&vals[..col.len()]);
    } else {
        for l in lanes(exec) {
            col[l] = vals[l];
        }
    }
}

#[inline(always)]
fn map1(out: &mut [u64], a: &[u64], f: impl Fn(u64) -> u64) {
    for (o, &x) in out.iter_mut().zip(a) {
        *o = f(x);
    }
}

#[inline(always)]
fn map2(out: &mut [u64], a: &[u64], b: &[u64], f: impl Fn(u64, u64) -> u64) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

#[inline(always)]
fn map3(out: &mut [u64], a: &[u64], b: &[u64], c: &[u64], f: impl Fn(u64, u64, u64) -> u64) {
    for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c) {
        *o = f(x, y, z);
    }
}

/// Runs `f` on the executing lanes only (ops without a vectorised kernel).
#[inline(always)]
fn each(exec: u64, out: &mut [u64], mut f: impl FnMut(usize) -> u64) {
    for l in lanes(exec) {
        out[l] = f(l);
    }
}

/// `d = op(a, b)` over all lanes for the integer ops with a closed kernel; `false` if none.
#[inline(always)]
fn binary_kernel(op: BinaryOp, t: IntTy, sat: bool, a: &[u64], b: &[u64], o: &mut [u64]) -> bool {
    use BinaryOp as B;
    use IntTy::*;
    let m32 = |v: u64| v & 0xFFFF_FFFF;
    match (op, t) {
        (B::Add, S32 | U32) if !sat => map2(o, a, b, |x, y| m32(x.wrapping_add(y))),
        (B::Add, S64 | U64) if !sat => map2(o, a, b, |x, y| x.wrapping_add(y)),
        (B::Sub, S32 | U32) if !sat => map2(o, a, b, |x, y| m32(x.wrapping_sub(y))),
        (B::Sub, S64 | U64) if !sat => map2(o, a, b, |x, y| x.wrapping_sub(y)),
        (B::Mul, S32 | U32) => map2(o, a, b, |x, y| m32(x.wrapping_mul(y))),
        (B::Mul, S64 | U64) => map2(o, a, b, |x, y| x.wrapping_mul(y)),
        (B::MulHi, S32) => map2(o, a, b, |x, y| {
            m32(((x as i32 as i64 * y as i32 as i64) >> 32) as u64)
        }),
        (B::MulHi, U32) => map2(o, a, b, |x, y| (m32(x) * m32(y)) >> 32),
        (B::MulHi, S64) => map2(o, a, b, |x, y| {
            ((x as i64 as i128 * y as i64 as i128) >> 64) as u64
        }),
        (B::MulHi, U64) => map2(o, a, b, |x, y| ((x as u128 * y as u128) >> 64) as u64),
        (B::MulWide, S32) => map2(o, a, b, |x, y| (x as i32 as i64 * y as i32 as i64) as u64),
        (B::MulWide, U32) => map2(o, a, b, |x, y| m32(x) * m32(y)),
        (B::MulWide, S64 | U64) => map2(o, a, b, |x, y| x.wrapping_mul(y)),
        (B::Min, S32) => map2(o, a, b, |x, y| {
            m32(if x as i32 <= y as i32 { x } else { y })
        }),
        (B::Min, U32) => map2(o, a, b, |x, y| m32(x).min(m32(y))),
        (B::Min, S64) => map2(o, a, b, |x, y| (x as i64).min(y as i64) as u64),
        (B::Min, U64) => map2(o, a, b, |x, y| x.min(y)),
        (B::Max, S32) => map2(o, a, b, |x, y| {
            m32(if x as i32 >= y as i32 { x } else { y })
        }),
        (B::Max, U32) => map2(o, a, b, |x, y| m32(x).max(m32(y))),
        (B::Max, S64) => map2(o, a, b, |x, y| (x as i64).max(y as i64) as u64),
        (B::Max, U64) => map2(o, a, b, |x, y| x.max(y)),
        (B::And, S32 | U32) => map2(o, a, b, |x, y| m32(x & y)),
        (B::And, S64 | U64) => map2(o, a, b, |x, y| x & y),
        (B::Or, S32 | U32) => map2(o, a, b, |x, y| m32(x | y)),
        (B::Or, S64 | U64) => map2(o, a, b, |x, y| x | y),
        (B::Xor, S32 | U32) => map2(o, a, b, |x, y| m32(x ^ y)),
        (B::Xor, S64 | U64) => map2(o, a, b, |x, y| x ^ y),
        // Amounts are unsigned 32-bit; >= the width gives 0 or the sign fill.
        (B::Shl, S32 | U32) => map2(o, a, b, |x, y| {
            let n = m32(y);
            if n >= 32 { 0 } else { m32(x << n) }
        }),
        (B::Shl, S64 | U64) => map2(o, a, b, |x, y| {
            let n = m32(y);
            if n >= 64 { 0 } else { x << n }
        }),
        (B::Shr, S32) => map2(o, a, b, |x, y| m32(((x as i32) >> m32(y).min(31)) as u64)),
        (B::Shr, U32) => map2(o, a, b, |x, y| {
            let n = m32(y);
            if n >= 32 { 0 } else { m32(x) >> n }
        }),
        (B::Shr, S64) => map2(o, a, b, |x, y| ((x as i64) >> m32(y).min(63)) as u64),
        (B::Shr, U64) => map2(o, a, b, |x, y| {
            let n = m32(y);
            if n >= 64 { 0 } else { x >> n }
        }),
        _ => return false,
    }
    true
}

/// `d = op(a, b, c)` over all lanes for the ternary ops with a closed kernel; `false` if none.
#[inline(always)]
fn ternary_kernel(
    op: TernaryOp,
    t: IntTy,
    sat: bool,
    a: &[u64],
    b: &[u64],
    c: &[u64],
    o: &mut [u64],
) -> bool {
    use IntTy::*;
    use TernaryOp as T;
    let m32 = |v: u64| v & 0xFFFF_FFFF;
    match (op, t) {
        (T::Mad | T::Fma, S32 | U32) => {
            map3(o, a, b, c, |x, y, z| m32(x.wrapping_mul(y).wrapping_add(z)))
        }
        (T::Mad | T::Fma, S64 | U64) => {
            map3(o, a, b, c, |x, y, z| x.wrapping_mul(y).wrapping_add(z))
        }
        (T::MadWide, S32) => map3(o, a, b, c, |x, y, z| {
            ((x as i32 as i64 * y as i32 as i64) as u64).wrapping_add(z)
        }),
        (T::MadWide, U32) => map3(o, a, b, c, |x, y, z| (m32(x) * m32(y)).wrapping_add(z)),
        (T::MadWide, S64 | U64) => map3(o, a, b, c, |x, y, z| x.wrapping_mul(y).wrapping_add(z)),
        (T::MadHi, S32) if !sat => map3(o, a, b, c, |x, y, z| {
            m32(((x as i32 as i64 * y as i32 as i64) >> 32) as u64).wrapping_add(z) & 0xFFFF_FFFF
        }),
        (T::MadHi, U32) if !sat => map3(o, a, b, c, |x, y, z| {
            m32(((m32(x) * m32(y)) >> 32).wrapping_add(z))
        }),
        (T::MadHi, S64) if !sat => map3(o, a, b, c, |x, y, z| {
            (((x as i64 as i128 * y as i64 as i128) >> 64) as u64).wrapping_add(z)
        }),
        (T::MadHi, U64) if !sat => map3(o, a, b, c, |x, y, z| {
            (((x as u128 * y as u128) >> 64) as u64).wrapping_add(z)
        }),
        (T::Selp, S32 | U32) => map3(o, a, b, c, |x, y, z| m32(if z & 1 != 0 { x } else { y })),
        (T::Selp, S64 | U64) => map3(o, a, b, c, |x, y, z| if z & 1 != 0 { x } else { y }),
        _ => return false,
    }
    true
}

/// The comparison of an integer `setp` as a total order on keys: signed values sign-extended,
/// unsigned ones with the sign bit flipped (so that `i64` order is unsigned order).
#[inline(always)]
fn setp_kernel(cmp: Compare, ty: ScalarType, a: &[u64], b: &[u64], o: &mut [u64]) {
    let w = alu::width(ty);
    let signed = alu::is_signed(ty);
    let m = alu::mask_bits(w);
    // Shifts that sign-extend from bit `w - 1` (signed) or clear the bits above `w` and flip
    // bit 63 (unsigned); `w` is 1..=64.
    let up = 64 - w;
    macro_rules! cmp {
        ($f:expr) => {
            if signed {
                map2(o, a, b, |x, y| {
                    $f(((x << up) as i64) >> up, ((y << up) as i64) >> up) as u64
                })
            } else {
                map2(o, a, b, |x, y| {
                    $f(((x & m) ^ (1 << 63)) as i64, ((y & m) ^ (1 << 63)) as i64) as u64
                })
            }
        };
    }
    // Integers are always ordered: the `u` forms are the plain ones, `num` true, `nan` false.
    match cmp {
        Compare::Eq | Compare::Equ => cmp!(|x: i64, y: i64| x == y),
        Compare::Ne | Compare::Neu => cmp!(|x: i64, y: i64| x != y),
        Compare::Lt | Compare::Ltu => cmp!(|x: i64, y: i64| x < y),
        Compare::Le | Compare::Leu => cmp!(|x: i64, y: i64| x <= y),
        Compare::Gt | Compare::Gtu => cmp!(|x: i64, y: i64| x > y),
        Compare::Ge | Compare::Geu => cmp!(|x: i64, y: i64| x >= y),
        Compare::Num => o.fill(1),
        Compare::Nan => o.fill(0),
    }
}

/// The registers and lanes of one warp instruction on the fast path: the level's register
/// file, the frame bases, the warp size, the special registers and the executing lanes.
struct Lanes<'a> {
    regs: &'a mut Regs,
    fb: &'a [u32],
    ws: usize,
    sp: &'a SpecialCtx,
    exec: u64,
    /// Every lane of the warp executes.
    full: bool,
}

/// Operand `$s`'s column: a register's is its row of `regs` (borrowed, not copied), the others
/// are built in `$buf`; `return false` (the generic path) when it cannot be read here.
macro_rules! get {
    ($l:expr, $buf:ident, $s:expr) => {
        match *$s {
            Src::Reg(r) => match $l.regs.row(r.0 as usize).and_then(|col| col.get(..$l.ws)) {
                Some(col) => col,
                None => return false,
            },
            Src::Imm(v) => {
                $buf = [v; N];
                &$buf[..$l.ws]
            }
            _ => {
                let mut buf = [0u64; N];
                if !gather::<N>($l.regs, $l.ws, $s, $l.sp, $l.fb, &mut buf) {
                    return false;
                }
                $buf = buf;
                &$buf[..$l.ws]
            }
        }
    };
}

/// Writes `$vals` to the executing lanes of register `$dst`; `return false` when it is out of
/// range.
macro_rules! put {
    ($l:expr, $dst:expr, $vals:expr) => {{
        let Some(col) = column($l.regs, $l.ws, *$dst) else {
            return false;
        };
        write_lanes(col, $l.exec, $l.full, $vals);
    }};
}

#[inline(always)]
fn exec_n<const N: usize>(
    regs: &mut Regs,
    fb: &[u32],
    ws: usize,
    sp: &SpecialCtx,
    exec: u64,
    op: &Op,
) -> bool {
    let l = Lanes {
        regs,
        fb,
        ws,
        sp,
        exec,
        full: exec == lane_mask(ws as u32),
    };
    match op {
        Op::Unary {
            op: UnaryOp::Mov,
            dst,
            a,
            ..
        } => mov_n::<N>(l, dst, a),
        Op::Unary {
            op,
            ty,
            flags,
            dst,
            a,
        } => map_n::<N>(l, dst, a, |v| alu::unary(*op, *ty, *flags, v)),
        Op::Binary {
            op,
            ty,
            flags,
            dst,
            a,
            b,
        } => binary_n::<N>(l, (*op, *ty, *flags), dst, [a, b]),
        Op::Ternary {
            op,
            ty,
            flags,
            dst,
            a,
            b,
            c,
        } => ternary_n::<N>(l, (*op, *ty, *flags), dst, [a, b, c]),
        Op::Setp {
            cmp,
            ty,
            ftz,
            dst,
            dst_neg,
            a,
            b,
            combine: None,
        } => setp_n::<N>(l, (*cmp, *ty, *ftz), (dst, dst_neg.as_ref()), [a, b]),
        Op::Cvt {
            dst_ty,
            src_ty,
            flags,
            dst,
            a,
        } if !matches!(dst_ty, ScalarType::S8 | ScalarType::S16 | ScalarType::S32) => {
            // Narrow signed results are sign-extended to the register's width, which only the
            // generic path knows (it has the program); unsigned results are already zero-extended.
            map_n::<N>(l, dst, a, |v| alu::cvt(*dst_ty, *src_ty, *flags, v))
        }
        _ => false,
    }
}

/// `mov`: the source column copied.
#[inline(always)]
fn mov_n<const N: usize>(l: Lanes<'_>, dst: &RegId, sa: &Src) -> bool {
    let abuf: [u64; N];
    let mut out = [0u64; N];
    let a = get!(l, abuf, sa);
    out[..l.ws].copy_from_slice(a);
    put!(l, dst, &out);
    true
}

/// Unary operations and `cvt` to a type the register holds as it is: `f` of the source, per
/// executing lane (through `crate::alu`).
#[inline(always)]
fn map_n<const N: usize>(l: Lanes<'_>, dst: &RegId, sa: &Src, f: impl Fn(u64) -> u64) -> bool {
    let abuf: [u64; N];
    let mut out = [0u64; N];
    let a = get!(l, abuf, sa);
    each(l.exec, &mut out, |k| f(a[k]));
    put!(l, dst, &out);
    true
}

/// Binary operations without a carry: a closed integer kernel over all lanes when there is
/// one, else `crate::alu` per executing lane.
#[inline(always)]
fn binary_n<const N: usize>(
    l: Lanes<'_>,
    (op, ty, flags): (BinaryOp, ScalarType, ArithFlags),
    dst: &RegId,
    [sa, sb]: [&Src; 2],
) -> bool {
    use BinaryOp as B;
    if matches!(
        op,
        B::AddCc | B::AddC | B::AddCCc | B::SubCc | B::SubC | B::SubCCc
    ) {
        return false;
    }
    let (abuf, bbuf): ([u64; N], [u64; N]);
    let mut out = [0u64; N];
    let a = get!(l, abuf, sa);
    let b = get!(l, bbuf, sb);
    let done = match int_ty(ty) {
        Some(t) => binary_kernel(op, t, flags.sat, a, b, &mut out[..l.ws]),
        None => false,
    };
    if !done {
        each(l.exec, &mut out, |k| {
            let mut carry = false;
            alu::binary(op, ty, flags, a[k], b[k], &mut carry)
        });
    }
    put!(l, dst, &out);
    true
}

/// Ternary operations without a carry, as [`binary_n`].
#[inline(always)]
fn ternary_n<const N: usize>(
    l: Lanes<'_>,
    (op, ty, flags): (TernaryOp, ScalarType, ArithFlags),
    dst: &RegId,
    [sa, sb, sc]: [&Src; 3],
) -> bool {
    if matches!(op, TernaryOp::MadCc | TernaryOp::MadC) {
        return false;
    }
    let (abuf, bbuf, cbuf): ([u64; N], [u64; N], [u64; N]);
    let mut out = [0u64; N];
    let a = get!(l, abuf, sa);
    let b = get!(l, bbuf, sb);
    let c = get!(l, cbuf, sc);
    let done = match int_ty(ty) {
        Some(t) => ternary_kernel(op, t, flags.sat, a, b, c, &mut out[..l.ws]),
        None => false,
    };
    if !done {
        each(l.exec, &mut out, |k| {
            let mut carry = false;
            alu::ternary(op, ty, flags, a[k], b[k], c[k], &mut carry)
        });
    }
    put!(l, dst, &out);
    true
}

/// `setp` without a predicate combination: the integer kernel or `crate::alu::compare`; `|q`
/// gets the negation.
#[inline(always)]
fn setp_n<const N: usize>(
    l: Lanes<'_>,
    (cmp, ty, ftz): (Compare, ScalarType, bool),
    (dst, dst_neg): (&RegId, Option<&RegId>),
    [sa, sb]: [&Src; 2],
) -> bool {
    if alu::packed_lanes(ty).is_some() {
        // `.f16x2`/`.bf16x2`: `q` is the high half's result, not `!p`.
        return false;
    }
    let (abuf, bbuf): ([u64; N], [u64; N]);
    let mut out = [0u64; N];
    let a = get!(l, abuf, sa);
    let b = get!(l, bbuf, sb);
    if alu::float_fmt(ty).is_none() {
        setp_kernel(cmp, ty, a, b, &mut out[..l.ws]);
    } else {
        each(l.exec, &mut out, |k| {
            alu::compare(cmp, ty, ftz, a[k], b[k]) as u64
        });
    }
    if let Some(q) = dst_neg {
        // Check both destinations before writing either.
        if l.regs.row(q.0 as usize).is_none() {
            return false;
        }
        put!(l, dst, &out);
        let mut neg = [0u64; N];
        map1(&mut neg[..l.ws], &out[..l.ws], |p| p ^ 1);
        put!(l, q, &neg);
    } else {
        put!(l, dst, &out);
    }
    true
}

#[cfg(test)]
mod tests;
