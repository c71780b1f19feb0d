//! The spelling of the AST's closed keyword sets (state spaces, types, linkage, components), in
//! both directions: the parser reads them, the printer writes them, the loader may reuse them.

use crate::ast::{Component, Linkage, ScalarType, StateSpace};

impl StateSpace {
    /// `.global` -> `Global`. Takes the word with its dot.
    pub fn from_directive(word: &str) -> Option<StateSpace> {
        Some(match word {
            ".reg" => StateSpace::Reg,
            ".sreg" => StateSpace::Sreg,
            ".const" => StateSpace::Const,
            ".global" => StateSpace::Global,
            ".local" => StateSpace::Local,
            ".param" => StateSpace::Param,
            ".shared" => StateSpace::Shared,
            ".shared::cta" => StateSpace::SharedCta,
            ".shared::cluster" => StateSpace::SharedCluster,
            ".tex" => StateSpace::Tex,
            _ => return None,
        })
    }

    /// The directive with its dot, e.g. `.shared::cta`.
    pub fn directive(self) -> &'static str {
        match self {
            StateSpace::Reg => ".reg",
            StateSpace::Sreg => ".sreg",
            StateSpace::Const => ".const",
            StateSpace::Global => ".global",
            StateSpace::Local => ".local",
            StateSpace::Param => ".param",
            StateSpace::Shared => ".shared",
            StateSpace::SharedCta => ".shared::cta",
            StateSpace::SharedCluster => ".shared::cluster",
            StateSpace::Tex => ".tex",
        }
    }
}

impl ScalarType {
    /// `.u32` -> `U32`. Takes the word with its dot.
    pub fn from_directive(word: &str) -> Option<ScalarType> {
        use ScalarType::*;
        Some(match word {
            ".s8" => S8,
            ".s16" => S16,
            ".s32" => S32,
            ".s64" => S64,
            ".u8" => U8,
            ".u16" => U16,
            ".u32" => U32,
            ".u64" => U64,
            ".f16" => F16,
            ".f16x2" => F16x2,
            ".bf16" => Bf16,
            ".bf16x2" => Bf16x2,
            ".tf32" => Tf32,
            ".f32" => F32,
            ".f64" => F64,
            ".b8" => B8,
            ".b16" => B16,
            ".b32" => B32,
            ".b64" => B64,
            ".b128" => B128,
            ".pred" => Pred,
            ".texref" => TexRef,
            ".samplerref" => SamplerRef,
            ".surfref" => SurfRef,
            _ => return None,
        })
    }

    /// The type with its dot, e.g. `.f16x2`.
    pub fn directive(self) -> &'static str {
        use ScalarType::*;
        match self {
            S8 => ".s8",
            S16 => ".s16",
            S32 => ".s32",
            S64 => ".s64",
            U8 => ".u8",
            U16 => ".u16",
            U32 => ".u32",
            U64 => ".u64",
            F16 => ".f16",
            F16x2 => ".f16x2",
            Bf16 => ".bf16",
            Bf16x2 => ".bf16x2",
            Tf32 => ".tf32",
            F32 => ".f32",
            F64 => ".f64",
            B8 => ".b8",
            B16 => ".b16",
            B32 => ".b32",
            B64 => ".b64",
            B128 => ".b128",
            Pred => ".pred",
            TexRef => ".texref",
            SamplerRef => ".samplerref",
            SurfRef => ".surfref",
        }
    }
}

impl Linkage {
    pub fn from_directive(word: &str) -> Option<Linkage> {
        Some(match word {
            ".visible" => Linkage::Visible,
            ".extern" => Linkage::Extern,
            ".weak" => Linkage::Weak,
            ".common" => Linkage::Common,
            _ => return None,
        })
    }

    pub fn directive(self) -> &'static str {
        match self {
            Linkage::Visible => ".visible",
            Linkage::Extern => ".extern",
            Linkage::Weak => ".weak",
            Linkage::Common => ".common",
        }
    }
}

impl Component {
    /// `.x`/`.r` -> `X`, ..., `.w`/`.a` -> `W` (PTX ISA 5.4.3: both spellings name the same
    /// element); `.b0`-`.b3`, `.h0`, `.h1` are the video operand selectors.
    pub fn from_directive(word: &str) -> Option<Component> {
        Some(match word {
            ".x" | ".r" => Component::X,
            ".y" | ".g" => Component::Y,
            ".z" | ".b" => Component::Z,
            ".w" | ".a" => Component::W,
            ".b0" => Component::B0,
            ".b1" => Component::B1,
            ".b2" => Component::B2,
            ".b3" => Component::B3,
            ".h0" => Component::H0,
            ".h1" => Component::H1,
            _ => return None,
        })
    }

    pub fn directive(self) -> &'static str {
        match self {
            Component::X => ".x",
            Component::Y => ".y",
            Component::Z => ".z",
            Component::W => ".w",
            Component::B0 => ".b0",
            Component::B1 => ".b1",
            Component::B2 => ".b2",
            Component::B3 => ".b3",
            Component::H0 => ".h0",
            Component::H1 => ".h1",
        }
    }
}
