//! Bit-exact instruction arithmetic: pure functions on 64-bit register words (PTX ISA chapter 9).
//!
//! The machine reads operands, calls these, and writes the result; nothing here knows about lanes,
//! warps or memory. Values are carried in the low bits of a `u64` as the instruction's type says
//! (`.f32` in the low 32 bits as IEEE bits, `.s16` in the low 16 bits, `.pred` as 0 or 1); results
//! are returned the same way with the unused high bits zero.

use crate::program::{
    ArithFlags, AtomOp, BinaryOp, Compare, PrmtMode, ReduxOp, TernaryOp, UnaryOp,
};
use ptx_parser::ScalarType;

/// Per-thread carry flag of extended-precision arithmetic (`add.cc`, `addc`; PTX ISA 9.7.2).
pub type Carry = bool;

/// `op.ty d, a`.
pub fn unary(op: UnaryOp, ty: ScalarType, flags: ArithFlags, a: u64) -> u64 {
    let _ = (op, ty, flags, a);
    todo!()
}

/// `op.ty d, a, b`; `carry` is read and written by the carry forms only.
pub fn binary(op: BinaryOp, ty: ScalarType, flags: ArithFlags, a: u64, b: u64, carry: &mut Carry) -> u64 {
    let _ = (op, ty, flags, a, b, carry);
    todo!()
}

/// `op.ty d, a, b, c` (`selp`: `c` is the predicate, 0 or 1).
pub fn ternary(op: TernaryOp, ty: ScalarType, flags: ArithFlags, a: u64, b: u64, c: u64, carry: &mut Carry) -> u64 {
    let _ = (op, ty, flags, a, b, c, carry);
    todo!()
}

/// `bfi.ty d, a, b, pos, len`.
pub fn bfi(ty: ScalarType, a: u64, b: u64, pos: u64, len: u64) -> u64 {
    let _ = (ty, a, b, pos, len);
    todo!()
}

/// `prmt.b32.mode d, a, b, c`.
pub fn prmt(mode: PrmtMode, a: u64, b: u64, c: u64) -> u64 {
    let _ = (mode, a, b, c);
    todo!()
}

/// `cvt.dst_ty.src_ty d, a` with rounding, `.sat`, `.ftz`.
pub fn cvt(dst_ty: ScalarType, src_ty: ScalarType, flags: ArithFlags, a: u64) -> u64 {
    let _ = (dst_ty, src_ty, flags, a);
    todo!()
}

/// The comparison of `setp`/`set`.
pub fn compare(cmp: Compare, ty: ScalarType, ftz: bool, a: u64, b: u64) -> bool {
    let _ = (cmp, ty, ftz, a, b);
    todo!()
}

/// `set`'s destination value for a boolean: all ones for integer types, 1.0 for `.f32`.
pub fn set_value(dst_ty: ScalarType, value: bool) -> u64 {
    let _ = (dst_ty, value);
    todo!()
}

/// `slct.ty.c_ty d, a, b, c`: `c >= 0 ? a : b` (`-0.0` counts as >= 0; NaN selects `b`).
pub fn slct(c_ty: ScalarType, ftz: bool, a: u64, b: u64, c: u64) -> u64 {
    let _ = (c_ty, ftz, a, b, c);
    todo!()
}

/// The value an atomic writes back, given the old memory value (`cas`: `a` is the compare value,
/// `b` the new one). The old value is what the destination register receives.
pub fn atom_new_value(op: AtomOp, ty: ScalarType, old: u64, a: u64, b: u64) -> u64 {
    let _ = (op, ty, old, a, b);
    todo!()
}

/// `redux.sync.op.ty` over the participating lanes' values.
pub fn redux(op: ReduxOp, ty: ScalarType, values: &[u64]) -> u64 {
    let _ = (op, ty, values);
    todo!()
}
