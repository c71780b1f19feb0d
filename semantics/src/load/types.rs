//! Facts about PTX types the loader needs (PTX ISA 5.2): sizes, kinds, the spelling of type
//! modifiers, and the operand-type compatibility rule of PTX ISA 6.4.2 ("Operand Type
//! Information"), applied as leniently as ptxas: bit-size types go with any type of their size,
//! signed and unsigned integers of one size go together.

use ptx_parser::ScalarType;

/// What a type is for compatibility purposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Signed,
    Unsigned,
    Float,
    Bits,
    Pred,
    Opaque,
}

pub(crate) fn kind(ty: ScalarType) -> Kind {
    use ScalarType::*;
    match ty {
        S8 | S16 | S32 | S64 => Kind::Signed,
        U8 | U16 | U32 | U64 => Kind::Unsigned,
        F16 | F16x2 | Bf16 | Bf16x2 | Tf32 | F32 | F64 => Kind::Float,
        B8 | B16 | B32 | B64 | B128 => Kind::Bits,
        Pred => Kind::Pred,
        TexRef | SamplerRef | SurfRef => Kind::Opaque,
    }
}

/// Size in bytes (PTX ISA 5.2; `.pred` counts as one byte when stored; opaque handles are 8).
#[inline]
pub(crate) fn size(ty: ScalarType) -> u32 {
    use ScalarType::*;
    match ty {
        S8 | U8 | B8 | Pred => 1,
        S16 | U16 | B16 | F16 | Bf16 => 2,
        S32 | U32 | B32 | F32 | F16x2 | Bf16x2 | Tf32 => 4,
        S64 | U64 | B64 | F64 | TexRef | SamplerRef | SurfRef => 8,
        B128 => 16,
    }
}

pub(crate) fn is_float(ty: ScalarType) -> bool {
    kind(ty) == Kind::Float
}

pub(crate) fn is_int(ty: ScalarType) -> bool {
    matches!(kind(ty), Kind::Signed | Kind::Unsigned | Kind::Bits)
}

/// tf32, 128-bit and opaque types: parsed but outside the executed subset.
pub(crate) fn is_unsupported(ty: ScalarType) -> bool {
    use ScalarType::*;
    matches!(ty, Tf32 | B128 | TexRef | SamplerRef | SurfRef)
}

/// The 16-bit float types and their packed pairs (PTX ISA 5.2.1, 9.7.4): executed by the
/// instructions `docs/ptx-subset.md` lists for them, gap `half-float` elsewhere.
pub(crate) fn is_half(ty: ScalarType) -> bool {
    use ScalarType::*;
    matches!(ty, F16 | F16x2 | Bf16 | Bf16x2)
}

/// `.f16x2` and `.bf16x2`.
pub(crate) fn is_packed_half(ty: ScalarType) -> bool {
    matches!(ty, ScalarType::F16x2 | ScalarType::Bf16x2)
}

/// The type modifier spelled `name` (without its dot).
pub(crate) fn parse(name: &str) -> Option<ScalarType> {
    use ScalarType::*;
    Some(match name {
        "s8" => S8,
        "s16" => S16,
        "s32" => S32,
        "s64" => S64,
        "u8" => U8,
        "u16" => U16,
        "u32" => U32,
        "u64" => U64,
        "f16" => F16,
        "f16x2" => F16x2,
        "bf16" => Bf16,
        "bf16x2" => Bf16x2,
        "tf32" => Tf32,
        "f32" => F32,
        "f64" => F64,
        "b8" => B8,
        "b16" => B16,
        "b32" => B32,
        "b64" => B64,
        "b128" => B128,
        "pred" => Pred,
        _ => return None,
    })
}

/// The integer type of twice the width (`mul.wide`, `mad.wide`); `None` for 64-bit types.
pub(crate) fn wide(ty: ScalarType) -> Option<ScalarType> {
    use ScalarType::*;
    Some(match ty {
        S16 => S32,
        S32 => S64,
        U16 => U32,
        U32 => U64,
        B16 => B32,
        B32 => B64,
        _ => return None,
    })
}

/// The bit type of `bytes` bytes (`mov.b64 {a, b}` parts).
pub(crate) fn bits_of_size(bytes: u32) -> Option<ScalarType> {
    Some(match bytes {
        1 => ScalarType::B8,
        2 => ScalarType::B16,
        4 => ScalarType::B32,
        8 => ScalarType::B64,
        _ => return None,
    })
}

/// Whether a register declared `reg` may be an operand of an instruction of type `inst` whose
/// operand must be exactly that size (PTX ISA 6.4.2, relaxed like ptxas).
pub(crate) fn compatible(reg: ScalarType, inst: ScalarType) -> bool {
    if reg == inst {
        return true;
    }
    let (rk, ik) = (kind(reg), kind(inst));
    if rk == Kind::Pred || ik == Kind::Pred {
        return false;
    }
    size(reg) == size(inst)
}

/// Whether a register declared `reg` may be the destination of a load / source of a store of
/// type `inst` (PTX ISA 9.7.9.8: the register may be wider than an integer access).
pub(crate) fn compatible_mem(reg: ScalarType, inst: ScalarType) -> bool {
    if compatible(reg, inst) {
        return true;
    }
    let (rk, ik) = (kind(reg), kind(inst));
    // PTX ISA 6.4.2.1 ("Operand Size Exceeding Instruction-Type Size"): bit-size registers take any
    // narrower type; integer registers take narrower integer types.
    rk != Kind::Pred
        && ik != Kind::Pred
        && rk != Kind::Float
        && (ik != Kind::Float || rk == Kind::Bits)
        && size(reg) >= size(inst)
}
