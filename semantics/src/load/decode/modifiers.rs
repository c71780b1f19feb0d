//! Modifier classification: each modifier word of an instruction to an [`M`] (a type, a state
//! space, an order, a scope, a rounding, a fixed word of the family), and the checks every
//! family shares (exactly one of a kind, a required one, the operation's type, the operand count).

use super::super::types;
use super::super::unsupported::{self, Gap};
use super::Cx;
use crate::program::Space;
use ptx_parser::{Diagnostic, Modifier, ScalarType, Span};
use smallvec::SmallVec;

/// One classified modifier.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum M {
    Ty(ScalarType),
    Space(Space),
    Order(crate::program::MemOrder),
    Scope(crate::program::Scope),
    Cache(crate::program::CacheOp),
    Vector(u8),
    Round(crate::program::Rounding),
    /// A word whose meaning the family knows (`lo`, `wide`, `sync`, `uni`, `ftz`, ...).
    Word(&'static str),
    /// A performance hint with no semantic effect (`.L2::64B`, `.L1::evict_last`).
    Hint,
    /// Valid PTX that cudasem does not decode.
    Unsupported(Gap),
}

/// Classified modifiers of an instruction.
pub(crate) struct Mods<'a> {
    pub list: SmallVec<[(M, &'a Modifier); 6]>,
}

impl Mods<'_> {
    /// The types, in source order.
    pub fn types(&self) -> SmallVec<[(ScalarType, Span); 2]> {
        self.list
            .iter()
            .filter_map(|(m, md)| {
                if let M::Ty(t) = m {
                    Some((*t, md.span))
                } else {
                    None
                }
            })
            .collect()
    }
    pub fn has(&self, word: &str) -> bool {
        self.list
            .iter()
            .any(|(m, _)| matches!(m, M::Word(w) if crate::load::short_eq(w, word)))
    }
}

impl<'a, 'e, 'f> Cx<'a, 'e, 'f> {
    /// Classifies every modifier with `classify`; unknown ones are reported.
    pub fn mods(&mut self, classify: impl Fn(&str) -> Option<M>) -> Option<Mods<'a>> {
        let ins = self.ins;
        let mut list = SmallVec::new();
        let mut ok = true;
        for md in &ins.modifiers {
            match classify(&md.name).or_else(|| known_unsupported(&md.name)) {
                Some(M::Unsupported(gap)) => {
                    let d = unsupported::modifier(md.span, &self.full_name(), &md.name, gap);
                    self.push_diag(d);
                    ok = false;
                }
                Some(M::Hint) => {}
                Some(m) => list.push((m, md)),
                None => {
                    let full = self.full_name();
                    self.error(
                        md.span,
                        format!("unknown modifier `.{}` in `{full}`", md.name),
                        "unknown modifier",
                        format!(
                            "remove `.{}`; docs/ptx-subset.md lists the modifiers of `{}`",
                            md.name, ins.opcode.name
                        ),
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(Mods { list })
    }

    /// The one value `pick` finds among the modifiers, reporting contradictory ones.
    /// [`Cx::one`] for a modifier the instruction cannot do without: when none is given, reports
    /// "`full` needs WHAT" (WHAT with its article, e.g. "a mode") with `help`, and gives `None`.
    pub fn required<T: PartialEq + Copy>(
        &mut self,
        mods: &Mods<'_>,
        what: &str,
        help: &str,
        pick: impl Fn(&M) -> Option<T>,
    ) -> Option<T> {
        let found = self.one(mods, pick);
        if found.is_none() {
            let noun = what
                .strip_prefix("an ")
                .or_else(|| what.strip_prefix("a "))
                .unwrap_or(what);
            let message = format!("`{}` needs {what}", self.full_name());
            self.error(self.ins.span, message, &format!("missing {noun}"), help);
        }
        found
    }

    pub fn one<T: PartialEq + Copy>(
        &mut self,
        mods: &Mods<'_>,
        pick: impl Fn(&M) -> Option<T>,
    ) -> Option<T> {
        let mut found: Option<(T, &Modifier)> = None;
        for (m, md) in &mods.list {
            if let Some(v) = pick(m) {
                match found {
                    Some((prev, pmd)) if prev != v => {
                        let full = self.full_name();
                        let d = Diagnostic::error(
                            md.span,
                            format!(
                                "contradictory modifiers `.{}` and `.{}` in `{full}`",
                                pmd.name, md.name
                            ),
                        )
                        .with_label("contradicts the earlier modifier")
                        .with_secondary(pmd.span, "earlier modifier")
                        .with_help("keep only one of them");
                        self.push_diag(d);
                    }
                    Some(_) => {}
                    None => found = Some((v, md)),
                }
            }
        }
        found.map(|(v, _)| v)
    }

    /// The instruction's single type, required.
    pub fn ty(&mut self, mods: &Mods<'_>) -> Option<ScalarType> {
        let tys = mods.types();
        match tys.as_slice() {
            [(t, _)] => Some(*t),
            [] => {
                let full = self.full_name();
                self.error(
                    self.ins.span,
                    format!("`{full}` needs a type"),
                    "missing type",
                    format!("add a type such as `.u32` or `.f32` to `{full}`"),
                );
                None
            }
            [_, (_, s), ..] => {
                let full = self.full_name();
                self.error(
                    *s,
                    format!("`{full}` has more than one type"),
                    "extra type",
                    "keep only one type modifier",
                );
                None
            }
        }
    }

    /// Reports a type outside `allowed`.
    pub fn require_ty(
        &mut self,
        ty: ScalarType,
        allowed: impl Fn(ScalarType) -> bool,
        what: &str,
    ) -> bool {
        if types::is_unsupported(ty) {
            self.unsupported_type(ty);
            return false;
        }
        if !allowed(ty) {
            let full = self.full_name();
            self.error(
                self.ins.span,
                format!("type `{}` is not allowed in `{full}`", ty.directive()),
                "wrong type",
                format!("`{}` takes {what}", self.ins.opcode.name),
            );
            return false;
        }
        true
    }

    /// Checks the operand count.
    pub fn arity(&mut self, counts: &[usize]) -> bool {
        let n = self.ins.operands.len();
        if counts.contains(&n) {
            return true;
        }
        let want = counts
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(" or ");
        let full = self.full_name();
        self.error(
            self.ins.span,
            format!("`{full}` takes {want} operands, found {n}"),
            "wrong number of operands",
            format!("write `{full}` with {want} operands (PTX ISA chapter 9)"),
        );
        false
    }

    // ---- names ----
}

/// Modifiers that are PTX but outside the subset, whatever the opcode.
fn known_unsupported(name: &str) -> Option<M> {
    Some(match name {
        "NaN" | "xorsign" | "abs" | "oob" | "mmio" | "unified" | "noftz" | "L2::cache_hint" => {
            M::Unsupported(Gap::Modifiers)
        }
        "relu" | "satfinite" | "f16" | "f16x2" | "bf16" | "bf16x2" | "tf32" | "e4m3x2"
        | "e5m2x2" | "e4m3" | "e5m2" | "e2m1x2" | "e3m2x2" | "e2m3x2" | "ue8m0x2" | "e2m1x4"
        | "e4m3x4" | "e5m2x4" | "e2m3x4" | "e3m2x4" | "rna" | "rs" => {
            M::Unsupported(Gap::HalfFloat)
        }
        "b128" => M::Unsupported(Gap::WideVectors),
        "cluster" | "shared::cluster" => M::Unsupported(Gap::Clusters),
        _ => {
            // Cache-eviction and prefetch-size hints: performance only (docs/ptx-subset.md).
            if name.starts_with("L1::") || name.starts_with("L2::") {
                M::Hint
            } else {
                return None;
            }
        }
    })
}

// ---- modifier vocabularies shared by the families ----

pub(crate) fn m_ty(name: &str) -> Option<M> {
    types::parse(name).map(M::Ty)
}

pub(crate) fn m_space(name: &str) -> Option<M> {
    Some(M::Space(match name {
        "global" => Space::Global,
        "shared" | "shared::cta" => Space::Shared,
        "local" => Space::Local,
        "const" => Space::Const,
        "param" | "param::entry" | "param::func" => Space::Param,
        _ => return None,
    }))
}

pub(crate) fn m_order(name: &str) -> Option<M> {
    use crate::program::MemOrder as O;
    Some(M::Order(match name {
        "weak" => O::Weak,
        "volatile" => O::Volatile,
        "relaxed" => O::Relaxed,
        "acquire" => O::Acquire,
        "release" => O::Release,
        "acq_rel" => O::AcqRel,
        "sc" => O::Sc,
        _ => return None,
    }))
}

pub(crate) fn m_scope(name: &str) -> Option<M> {
    use crate::program::Scope as S;
    Some(M::Scope(match name {
        "cta" => S::Cta,
        "gpu" => S::Gpu,
        "sys" => S::Sys,
        _ => return None,
    }))
}

pub(crate) fn m_round(name: &str) -> Option<M> {
    use crate::program::Rounding as R;
    Some(M::Round(match name {
        "rn" => R::Rn,
        "rz" => R::Rz,
        "rm" => R::Rm,
        "rp" => R::Rp,
        "rni" => R::Rni,
        "rzi" => R::Rzi,
        "rmi" => R::Rmi,
        "rpi" => R::Rpi,
        _ => return None,
    }))
}

/// A fixed word of a family.
pub(crate) fn m_word(name: &str, words: &[&'static str]) -> Option<M> {
    words
        .iter()
        .find(|w| crate::load::short_eq(w, name))
        .map(|w| M::Word(w))
}
