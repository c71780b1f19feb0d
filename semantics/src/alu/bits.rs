//! Bit-manipulation instructions (PTX ISA 9.7.1 "Integer Arithmetic Instructions": `popc clz
//! bfind brev bfe bfi fns bmsk szext`; 9.7.8 "Logic and Shift Instructions": `shf lop3`; 9.7.9.x
//! `prmt`).
//! Each function follows the pseudo-code of its PTX ISA section literally, including the
//! corner cases (zero lengths, positions beyond the msb).

use super::{is_signed, mask, width};
use crate::program::PrmtMode;
use ptx_parser::ScalarType;

/// `clz.b32/.b64` (9.7.1.15): leading zeros of the type's width (32 for zero).
pub(super) fn clz(ty: ScalarType, a: u64) -> u64 {
    let w = width(ty);
    let a = a & mask(ty);
    (a.leading_zeros() - (64 - w)) as u64
}

/// `brev.b32/.b64` (9.7.1.17): bit reversal within the type's width.
pub(super) fn brev(ty: ScalarType, a: u64) -> u64 {
    let w = width(ty);
    (a & mask(ty)).reverse_bits() >> (64 - w)
}

/// `bfind[.shiftamt]` (9.7.1.16): position of the most significant non-sign bit, 0xFFFFFFFF
/// when there is none; `.shiftamt` gives `msb - pos`, the left shift that moves it to the msb.
pub(super) fn bfind(ty: ScalarType, a: u64, shiftamt: bool) -> u64 {
    let w = width(ty);
    let msb = w - 1;
    let mut a = a & mask(ty);
    if is_signed(ty) && (a >> msb) & 1 == 1 {
        a = !a & mask(ty);
    }
    if a == 0 {
        return 0xFFFF_FFFF;
    }
    let pos = 63 - a.leading_zeros();
    (if shiftamt { msb - pos } else { pos }) as u64
}

/// `bfe` (9.7.1.18), literally:
/// ```text
/// pos = b & 0xff; len = c & 0xff;
/// sbit = (unsigned || len == 0) ? 0 : a[min(pos+len-1, msb)];
/// d[i] = (i < len && pos+i <= msb) ? a[pos+i] : sbit;
/// ```
pub(super) fn bfe(ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    let w = width(ty) as u64;
    let msb = w - 1;
    let a = a & mask(ty);
    let pos = b & 0xFF;
    let len = c & 0xFF;
    let sbit = if !is_signed(ty) || len == 0 {
        0
    } else {
        (a >> (pos + len - 1).min(msb)) & 1
    };
    // Bits taken from `a`: i < len and pos + i <= msb.
    let taken = if pos > msb { 0 } else { len.min(w - pos) };
    let field = if taken == 0 {
        0
    } else {
        (a >> pos) & low_mask(taken)
    };
    let fill = if sbit == 1 {
        !low_mask(taken) & mask(ty)
    } else {
        0
    };
    field | fill
}

fn low_mask(n: u64) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// `bfi` (9.7.1.19), literally:
/// ```text
/// pos = c & 0xff; len = d & 0xff; f = b;
/// for (i = 0; i < len && pos+i <= msb; i++) f[pos+i] = a[i];
/// ```
pub(super) fn bfi(ty: ScalarType, a: u64, b: u64, pos: u64, len: u64) -> u64 {
    let w = width(ty) as u64;
    let b = b & mask(ty);
    let pos = pos & 0xFF;
    let len = len & 0xFF;
    if pos >= w || len == 0 {
        return b;
    }
    let n = len.min(w - pos);
    let field = low_mask(n) << pos;
    ((b & !field) | ((a << pos) & field)) & mask(ty)
}

/// `prmt.b32{.mode}` (PTX ISA 9.7.9.x "prmt"): picks bytes of the 8-byte value `{b, a}`.
/// The default mode uses four 4-bit selectors from `c` (bit 3 of a selector replicates the
/// chosen byte's sign bit); the other modes use `c[1:0]` and fixed byte tables.
pub(super) fn prmt(mode: PrmtMode, a: u64, b: u64, c: u64) -> u64 {
    let src = ((b & 0xFFFF_FFFF) << 32) | (a & 0xFFFF_FFFF);
    let byte = |i: u64| (src >> (8 * (i & 7))) & 0xFF;
    let sel = (c & 3) as usize;
    // Source byte for d.b0, d.b1, d.b2, d.b3 (PTX ISA prmt mode table, listed there b3..b0).
    let table: [u64; 4] = match mode {
        PrmtMode::Default => {
            let mut d = 0;
            for k in 0..4 {
                let s = (c >> (4 * k)) & 0xF;
                let v = byte(s & 7);
                let v = if s & 8 != 0 {
                    if v & 0x80 != 0 { 0xFF } else { 0 }
                } else {
                    v
                };
                d |= v << (8 * k);
            }
            return d;
        }
        PrmtMode::F4e => [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]][sel],
        PrmtMode::B4e => [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]][sel],
        PrmtMode::Rc8 => [[0; 4], [1; 4], [2; 4], [3; 4]][sel],
        PrmtMode::Ecl => [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]][sel],
        PrmtMode::Ecr => [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]][sel],
        PrmtMode::Rc16 => [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]][sel],
    };
    table
        .iter()
        .enumerate()
        .fold(0, |d, (k, &i)| d | (byte(i) << (8 * k)))
}

/// `shf.{l,r}.{wrap,clamp}.b32` (9.7.8.9): funnel shift of `{b, a}` (b high).
/// `n = clamp ? min(c, 32) : c & 0x1f`; `shf.l` returns the high 32 bits of `{b,a} << n`,
/// `shf.r` the low 32 bits of `{b,a} >> n`.
pub(super) fn shf(left: bool, clamp: bool, a: u64, b: u64, c: u64) -> u64 {
    let c = c & 0xFFFF_FFFF;
    let n = if clamp { c.min(32) } else { c & 0x1F };
    let wide = ((b & 0xFFFF_FFFF) << 32) | (a & 0xFFFF_FFFF);
    if left {
        // n <= 32: (wide << n) >> 32 in 128 bits.
        ((((wide as u128) << n) >> 32) as u64) & 0xFFFF_FFFF
    } else {
        (wide >> n) & 0xFFFF_FFFF
    }
}

/// `lop3.b32 d, a, b, c, immLut` (PTX ISA 9.7.8 "Logic and Shift Instructions: lop3"): each bit
/// of `d` is the bit of `lut` indexed by the bits of `a`, `b`, `c` at that position
/// (`a` most significant). The ISA defines `immLut` as `F(0xF0, 0xCC, 0xAA)`: the index of
/// bit `k` of those constants is exactly `k`, so `F` applied bitwise to any `a, b, c` is this.
pub(super) fn lop3(lut: u8, a: u64, b: u64, c: u64) -> u64 {
    let m32 = 0xFFFF_FFFFu64;
    let (a, b, c) = (a & m32, b & m32, c & m32);
    // The OR of the minterms whose table bit is set.
    (0..8u32)
        .filter(|k| (lut >> k) & 1 == 1)
        .map(|k| {
            let pick = |bit: u32, x: u64| if (k >> bit) & 1 == 1 { x } else { !x & m32 };
            pick(2, a) & pick(1, b) & pick(0, c)
        })
        .fold(0, |d, term| d | term)
}

/// `bmsk.mode.b32 d, a, b` (PTX ISA 9.7.1 `bmsk`), literally:
/// ```text
/// a1 = a & 0x1f; mask0 = (~0) << a1; b1 = b & 0x1f; sum = a1 + b1; mask1 = (~0) << sum;
/// .clamp: a >= 32 -> mask0 = 0 (position overflow); b >= 32 -> width overflow
/// if (sum >= 32 || position overflow || width overflow) mask1 = 0; else if (b1 == 0) mask1 = ~0;
/// d = mask0 & ~mask1;
/// ```
pub(super) fn bmsk(clamp: bool, a: u64, b: u64) -> u64 {
    let (a, b) = (a & 0xFFFF_FFFF, b & 0xFFFF_FFFF);
    let shl = |n: u64| {
        if n >= 32 {
            0
        } else {
            0xFFFF_FFFFu64 << n & 0xFFFF_FFFF
        }
    };
    let (a1, b1) = (a & 0x1F, b & 0x1F);
    let mut mask0 = shl(a1);
    let sum = a1 + b1;
    let mut mask1 = shl(sum);
    let position_overflow = clamp && a >= 32;
    let width_overflow = clamp && b >= 32;
    if position_overflow {
        mask0 = 0;
    }
    if sum >= 32 || position_overflow || width_overflow {
        mask1 = 0;
    } else if b1 == 0 {
        mask1 = 0xFFFF_FFFF;
    }
    mask0 & !mask1 & 0xFFFF_FFFF
}

/// `szext.mode.{s32,u32} d, a, b` (PTX ISA 9.7.1 `szext`), literally:
/// ```text
/// b1 = b & 0x1f; too_large = (b >= 32 && .clamp); mask = too_large ? 0 : (~0) << b1;
/// sign_pos = (b1 - 1) & 0x1f;
/// sign_bit = (b1 == 0 || too_large || !.s32) ? 0 : (a >> sign_pos) & 1;
/// d = (a & ~mask) | (sign_bit ? mask : 0);
/// ```
pub(super) fn szext(clamp: bool, ty: ScalarType, a: u64, b: u64) -> u64 {
    let (a, b) = (a & 0xFFFF_FFFF, b & 0xFFFF_FFFF);
    let b1 = b & 0x1F;
    let too_large = b >= 32 && clamp;
    let mask = if too_large {
        0
    } else {
        (0xFFFF_FFFFu64 << b1) & 0xFFFF_FFFF
    };
    let sign_pos = b1.wrapping_sub(1) & 0x1F;
    let sign_bit = if b1 == 0 || too_large || !is_signed(ty) {
        0
    } else {
        (a >> sign_pos) & 1
    };
    (a & !mask & 0xFFFF_FFFF) | if sign_bit == 1 { mask } else { 0 }
}

/// `fns.b32 d, mask, base, offset` (PTX ISA 9.7.1 `fns`), literally: with `offset == 0`, `base`
/// itself if `mask[base]` is set; otherwise walk from `base` up (`offset > 0`) or down, and stop
/// at the `|offset|`-th set bit. Not found: `0xFFFFFFFF`. `offset` is `.s32`; a `base` above 31
/// (undefined in PTX) finds nothing.
pub(super) fn fns(mask: u64, base: u64, offset: u64) -> u64 {
    const NOT_FOUND: u64 = 0xFFFF_FFFF;
    let mask = mask & 0xFFFF_FFFF;
    let base = base & 0xFFFF_FFFF;
    let offset = offset as u32 as i32;
    if base > 31 {
        return NOT_FOUND;
    }
    let set = |pos: i64| (mask >> pos) & 1 == 1;
    if offset == 0 {
        return if set(base as i64) { base } else { NOT_FOUND };
    }
    let step: i64 = if offset > 0 { 1 } else { -1 };
    let mut count = offset.unsigned_abs() - 1;
    let mut pos = base as i64;
    while (0..32).contains(&pos) {
        if set(pos) {
            if count == 0 {
                return pos as u64;
            }
            count -= 1;
        }
        pos += step;
    }
    NOT_FOUND
}
