//! The documented gaps of the supported PTX subset (`docs/ptx-subset.md`, "Not supported (yet)").
//!
//! Anything outside the subset is a load error naming the instruction, its line and the gap, never
//! a silent approximation (ARCHITECTURE.md section 2, "Program environments"). Each [`Gap`] has a short
//! key that the document lists; `semantics/tests/load_subset_doc.rs` checks the two agree.

use ptx_parser::{Diagnostic, Span};

/// A family of PTX the loader knowingly rejects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Gap {
    /// Tensor-core instructions beyond `mma.sync` (the shapes of docs/ptx-subset.md) and
    /// `ldmatrix.m8n8.b16`: `wmma`, `stmatrix`, `wgmma`, other shapes and types.
    Mma,
    /// Asynchronous copies beyond `cp.async` and its groups: `cp.async.bulk*`, `mbarrier`,
    /// `cp.reduce.async`.
    CpAsync,
    /// The narrow floating-point operations outside the subset: `.tf32`, fp6/fp4 and `.ue8m0`
    /// conversions, four-element fp8 packs, `.rs`/`.rna` rounding, half-precision atomics and the
    /// approximate functions (`ex2 tanh`) on 16-bit floats.
    HalfFloat,
    /// Texture and surface instructions and references: `tex tld4 txq suld sust sured suq
    /// istypep`, `.texref .samplerref .surfref`, `.tex` variables.
    Texture,
    /// Video instructions outside the scalar subset: `vmad` and the SIMD forms (`vadd2 vadd4
    /// vsub2 vavrg2 vabsdiff4 vmin2 vmax4 vset2` ...).
    Video,
    /// 128-bit types (`.b128`) and vector atomics.
    WideVectors,
    /// `brx.idx` with `.branchtargets`, and `.calltargets` lists.
    BranchTables,
    /// Module-scope `.local` variables.
    ModuleLocal,
    /// Dynamic stack allocation: `alloca`, `stacksave`, `stackrestore`.
    Alloca,
    /// Clusters and grid dependency control: `barrier.cluster`, `mapa`, `getctarank`,
    /// `griddepcontrol`, `elect`, `setmaxnreg`, `%cluster*` registers.
    Clusters,
    /// Functions declared without a body used beyond a plain call (their address, several
    /// results); a plain call returns the launch's value (`extern_calls`).
    ExternCalls,
    /// Modifiers that are valid PTX but have no decoded meaning in cudasem (e.g. `.NaN`,
    /// `.xorsign`, `.abs` on `max`, cache-eviction policies with an operand, `.L2::cache_hint`).
    Modifiers,
    /// Any other instruction not listed in the subset's tables.
    Other,
}

impl Gap {
    pub const ALL: &'static [Gap] = &[
        Gap::Mma,
        Gap::CpAsync,
        Gap::HalfFloat,
        Gap::Texture,
        Gap::Video,
        Gap::WideVectors,
        Gap::BranchTables,
        Gap::ModuleLocal,
        Gap::Alloca,
        Gap::Clusters,
        Gap::ExternCalls,
        Gap::Modifiers,
        Gap::Other,
    ];

    /// The key `docs/ptx-subset.md` lists the gap under.
    pub fn key(self) -> &'static str {
        match self {
            Gap::Mma => "mma",
            Gap::CpAsync => "cp.async",
            Gap::HalfFloat => "half-float",
            Gap::Texture => "texture",
            Gap::Video => "video",
            Gap::WideVectors => "wide-vectors",
            Gap::BranchTables => "branch-tables",
            Gap::ModuleLocal => "module-local",
            Gap::Alloca => "alloca",
            Gap::Clusters => "clusters",
            Gap::ExternCalls => "extern-calls",
            Gap::Modifiers => "modifiers",
            Gap::Other => "other",
        }
    }

    /// The gap an unknown opcode belongs to.
    pub fn of_opcode(opcode: &str) -> Gap {
        match opcode {
            "mma" | "wmma" | "ldmatrix" | "stmatrix" | "wgmma" | "movmatrix" => Gap::Mma,
            "cp" | "mbarrier" | "cp.async" | "tensormap" => Gap::CpAsync,
            "tex" | "tld4" | "txq" | "suld" | "sust" | "sured" | "suq" | "istypep" => Gap::Texture,
            "vmad" | "vadd2" | "vsub2" | "vavrg2" | "vabsdiff2" | "vmin2" | "vmax2" | "vset2"
            | "vadd4" | "vsub4" | "vavrg4" | "vabsdiff4" | "vmin4" | "vmax4" | "vset4" => {
                Gap::Video
            }
            "alloca" | "stacksave" | "stackrestore" => Gap::Alloca,
            "mapa" | "getctarank" | "griddepcontrol" | "elect" | "setmaxnreg" | "multimem" => {
                Gap::Clusters
            }
            _ => Gap::Other,
        }
    }
}

/// "unsupported instruction `what` (gap: `key`)", pointing at `span`, with help naming the document.
pub(crate) fn diag(span: Span, what: &str, gap: Gap) -> Diagnostic {
    Diagnostic::error(span, format!("unsupported instruction `{what}` (gap: `{}`)", gap.key()))
        .with_label("outside the supported PTX subset")
        .with_help(format!(
            "cudasem executes the PTX subset listed in docs/ptx-subset.md; `{}` is under \"Not supported (yet)\": rewrite the code without it",
            gap.key()
        ))
}

/// An unsupported modifier of an otherwise supported instruction.
pub(crate) fn modifier(span: Span, full: &str, modifier: &str, gap: Gap) -> Diagnostic {
    Diagnostic::error(span, format!("unsupported instruction `{full}`: modifier `.{modifier}` (gap: `{}`)", gap.key()))
        .with_label("modifier outside the supported subset")
        .with_help(format!(
            "see docs/ptx-subset.md for the modifiers cudasem decodes (gap `{}` under \"Not supported (yet)\"); remove or replace `.{modifier}`",
            gap.key()
        ))
}
