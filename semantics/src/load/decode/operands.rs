//! Operand resolution: names (registers, special registers, variables, functions, labels) and
//! immediates to what an op holds, with the diagnostics for operands of the wrong kind or type;
//! the special registers PTX defines (PTX ISA 10).

use super::super::consts::{self, Value};
use super::super::layout::{self};
use super::super::scope::Local;
use super::super::types;
use super::super::unsupported::Gap;
use super::{Cx, Named, WARP_SZ};
use crate::program::{Dim, PredSrc, Program, RegId, Space, SpecialReg, Src};
use ptx_parser::{Component, ConstExpr, Diagnostic, Ident, Operand, ScalarType, Span};

impl<'a, 'e, 'f> Cx<'a, 'e, 'f> {
    pub fn resolve(&mut self, name: &Ident, component: Option<Component>) -> Named {
        // Borrowed once: each deref of the inline-or-heap name string costs a branch.
        let name: &str = name.name.as_str();
        if name.starts_with('%')
            && let Some(s) = special(name, component)
        {
            return Named::Special(s);
        }
        if let Some(l) = self.f.env.lookup(self.scope, name, self.pos) {
            return Named::Local(l);
        }
        if let Some(&i) = self.f.m.layout.names.get(name) {
            return Named::Var(i);
        }
        if let Some(&id) = self.f.m.functions.get(name) {
            return Named::Func(id);
        }
        if self.f.m.signatures.contains_key(name) {
            return Named::Bodiless;
        }
        if let Some(l) = self.f.env.label(self.scope, name) {
            return Named::Label(l);
        }
        Named::Undefined
    }

    #[cold]
    #[inline(never)]
    pub(super) fn undefined(&mut self, name: &Ident) {
        let n = &name.name;
        if n.starts_with('%') && is_known_special(n) {
            let gap = if n.starts_with("%cluster") || n.starts_with("%is_explicit_cluster") {
                Gap::Clusters
            } else {
                Gap::Other
            };
            let d = Diagnostic::error(
                name.span,
                format!("unsupported special register `{n}` (gap: `{}`)", gap.key()),
            )
            .with_label("special register outside the subset")
            .with_help("docs/ptx-subset.md lists the special registers cudasem provides");
            self.push_diag(d);
        } else if n.starts_with("%")
            && !n.starts_with("%r")
            && !n.starts_with("%f")
            && !n.starts_with("%p")
            && special_prefix(n)
        {
            self.error(
                name.span,
                format!("unknown special register `{n}`"),
                "unknown special register",
                "see docs/ptx-subset.md for the special registers (e.g. `%tid.x`, `%laneid`)",
            );
        } else {
            self.error(
                name.span,
                format!("undefined name `{n}`"),
                "not declared in this scope",
                format!("declare `{n}` (e.g. `.reg .b32 {n};`) or fix the spelling"),
            );
        }
    }

    /// A destination register (scalar). `ty`: the size it must be compatible with.
    pub fn dst(&mut self, op: &Operand, ty: Option<ScalarType>) -> Option<RegId> {
        self.reg_operand(op, ty, true, false)
    }

    /// A destination that may be a `_` sink (`None` inside `Some`).
    pub fn dst_or_sink(&mut self, op: &Operand, ty: Option<ScalarType>) -> Option<Option<RegId>> {
        if let Operand::Sink(_) = op {
            return Some(None);
        }
        self.dst(op, ty).map(Some)
    }

    /// A register operand; `mem` relaxes the size rule as loads and stores do.
    pub fn reg_operand(
        &mut self,
        op: &Operand,
        ty: Option<ScalarType>,
        is_dst: bool,
        mem: bool,
    ) -> Option<RegId> {
        match op {
            Operand::Symbol {
                name,
                component,
                span,
            } => {
                let named = self.resolve(name, *component);
                self.reg_named(named, name, *component, *span, ty, is_dst, mem)
            }
            other => {
                let what = operand_kind(other);
                let msg = if is_dst {
                    format!("{what} cannot be a destination")
                } else {
                    format!("expected a register, found {what}")
                };
                self.error(
                    other.span(),
                    msg,
                    "expected a register",
                    "use a register declared with `.reg`",
                );
                None
            }
        }
    }

    /// [`Cx::reg_operand`] for a symbol already resolved to `named` (sources resolve once and
    /// come here when the name is a register, instead of resolving it a second time).
    #[allow(clippy::too_many_arguments)]
    fn reg_named(
        &mut self,
        named: Named,
        name: &Ident,
        component: Option<Component>,
        span: Span,
        ty: Option<ScalarType>,
        is_dst: bool,
        mem: bool,
    ) -> Option<RegId> {
        let span = &span;
        let component = &component;
        match named {
            Named::Local(Local::Reg {
                id,
                ty: rty,
                vector,
            }) => {
                let id = match (vector, component) {
                    (1, None) => id,
                    (_, Some(c)) if component_index(*c).is_none() => {
                        self.error(
                            *span,
                            format!(
                                "the selector `{}` of `{}` belongs to video instructions",
                                c.directive(),
                                name.name
                            ),
                            "operand selector",
                            "byte and half-word selectors (`.b0`-`.b3`, `.h0`, `.h1`) select parts of video instruction operands; extract the part with `bfe` or `prmt` elsewhere",
                        );
                        return None;
                    }
                    (1, Some(_)) => {
                        self.error(
                            *span,
                            format!("`{}` is not a vector register", name.name),
                            "component of a scalar",
                            "remove the `.x`/`.y`/`.z`/`.w` component",
                        );
                        return None;
                    }
                    (_, Some(c)) => {
                        let k = component_index(*c).unwrap_or(0);
                        if k >= vector as u16 {
                            self.error(
                                *span,
                                format!("`{}` has only {vector} components", name.name),
                                "component out of range",
                                "use a component the vector has",
                            );
                            return None;
                        }
                        RegId(id.0 + k)
                    }
                    (_, None) => {
                        self.error(
                            *span,
                            format!("vector register `{}` where a scalar is required", name.name),
                            "vector register",
                            format!("name one component, e.g. `{}.x`", name.name),
                        );
                        return None;
                    }
                };
                if let Some(t) = ty {
                    self.check_ty(rty, t, *span, &name.name, mem);
                }
                Some(id)
            }
            Named::Special(_) if is_dst => {
                self.error(
                    *span,
                    format!("special register `{}` cannot be written", name.name),
                    "read-only",
                    "write to an ordinary register",
                );
                None
            }
            Named::Undefined => {
                self.undefined(name);
                None
            }
            _ => {
                self.error(
                    *span,
                    format!("`{}` is not a register", name.name),
                    "expected a register",
                    "use a register declared with `.reg`",
                );
                None
            }
        }
    }

    pub fn check_ty(
        &mut self,
        reg: ScalarType,
        inst: ScalarType,
        span: Span,
        name: &str,
        mem: bool,
    ) {
        let ok = if mem {
            types::compatible_mem(reg, inst)
        } else {
            types::compatible(reg, inst)
        };
        if !ok {
            let full = self.full_name();
            self.error(
                span,
                format!("register `{name}` is `{}` but `{full}` needs a `{}` operand here", reg.directive(), inst.directive()),
                "type mismatch",
                format!("use a register declared `{}` (or a bit type of the same size), or convert with `cvt`", inst.directive()),
            );
        }
    }

    /// A source operand of type `ty`: register, special register, immediate, or the address of a
    /// variable or function.
    pub fn src(&mut self, op: &Operand, ty: ScalarType) -> Option<Src> {
        self.src_with(op, ty, false)
    }

    /// [`Cx::src`] with the size rule of loads, stores and conversions (`mem`: wider registers).
    pub fn src_with(&mut self, op: &Operand, ty: ScalarType, mem: bool) -> Option<Src> {
        match op {
            Operand::Symbol {
                name,
                component,
                span,
            } => match self.resolve(name, *component) {
                named @ Named::Local(Local::Reg { .. }) => self
                    .reg_named(named, name, *component, *span, Some(ty), false, mem)
                    .map(Src::Reg),
                Named::Special(s) => {
                    *self.f.reads_block_identity |= s.tells_blocks_apart();
                    Some(Src::Special(s))
                }
                Named::Local(Local::Frame { offset, .. }) => Some(Src::FrameAddr(offset)),
                Named::Local(Local::KernelParam { offset, .. }) => Some(Src::Imm(offset as u64)),
                Named::Local(Local::Static(i)) | Named::Var(i) => {
                    Some(Src::Imm(self.var_address(i)))
                }
                Named::Func(id) => {
                    self.f.address_taken.insert(id);
                    Some(Src::Imm(Program::function_address(id)))
                }
                Named::Bodiless => {
                    self.unsupported(Gap::ExternCalls);
                    None
                }
                Named::Label(_) => {
                    self.error(*span, format!("label `{}` cannot be used as a value", name.name), "label", "PTX takes labels only as branch targets; use a function address or `brx.idx`");
                    None
                }
                Named::Undefined if &*name.name == WARP_SZ && component.is_none() => {
                    Some(Src::Special(SpecialReg::WarpSz))
                }
                Named::Undefined => {
                    self.undefined(name);
                    None
                }
            },
            Operand::Immediate(e) => match self.register_offset(e) {
                Some(found) => self.register_plus_offset(found, e, ty),
                None => self.imm(e, ty).map(Src::Imm),
            },
            // The thesis's lowered form (Listings 5.2, 5.3): `[v]` as a value is `V[[v]]`, the frame
            // offset of a `.local`/`.param` frame variable or a variable's address.
            Operand::Address(a)
                if a.base.as_ref().is_some_and(|b| {
                    !matches!(
                        self.resolve(b, None),
                        Named::Local(Local::Reg { .. }) | Named::Undefined
                    )
                }) =>
            {
                let (addr, _) = self.address(op, Space::Generic)?;
                Some(Src::Imm(addr.offset as u64))
            }
            other => {
                let what = operand_kind(other);
                self.error(
                    other.span(),
                    format!("expected a register or constant, found {what}"),
                    "wrong kind of operand",
                    "use a register, a constant or a variable name here",
                );
                None
            }
        }
    }

    /// A predicate source `p` or `!p`.
    pub fn pred(&mut self, op: &Operand) -> Option<PredSrc> {
        match op {
            Operand::Not(inner, _) => self.pred(inner).map(|p| PredSrc {
                negated: !p.negated,
                ..p
            }),
            other => self.src(other, ScalarType::Pred).map(|src| PredSrc {
                src,
                negated: false,
            }),
        }
    }

    pub fn var_address(&self, i: usize) -> u64 {
        self.f
            .m
            .layout
            .variables
            .get(i)
            .map(|v| v.address)
            .unwrap_or(0)
    }

    /// Folds an immediate and converts it to `ty`'s bit pattern (PTX ISA 4.5: float literals
    /// round to `.f32` for single-precision operations; negative integers are sign-extended and
    /// truncated).
    pub fn imm(&mut self, e: &ConstExpr, ty: ScalarType) -> Option<u64> {
        let layout = self.f.m.layout;
        let functions = self.f.m.functions;
        let mut symbols = |id: &Ident, _generic: bool| -> Result<u64, Diagnostic> {
            if let Some(&i) = layout.names.get(&*id.name) {
                return Ok(layout.variables.get(i).map(|v| v.address).unwrap_or(0));
            }
            if let Some(&f) = functions.get(&*id.name) {
                return Ok(Program::function_address(f));
            }
            consts::no_symbols(id, false)
        };
        let value = match consts::fold(e, &mut symbols) {
            Ok(v) => v,
            Err(d) => {
                self.push_diag(d);
                return None;
            }
        };
        match immediate_bits(value, ty) {
            Ok(bits) => Some(bits),
            Err(err) => {
                self.error(
                    e.span(),
                    err.to_string(),
                    "wrong kind of constant",
                    if types::is_float(ty) {
                        "write a floating-point constant such as `1.0` or `0f3F800000`"
                    } else {
                        "write an integer constant"
                    },
                );
                None
            }
        }
    }
}

/// Why a folded constant cannot be an operand of type `ty` (PTX ISA 5.2.2 constants: integer
/// and floating-point constants are not interchangeable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ImmediateError {
    #[error("integer constant used where `{}` needs a floating-point constant", .0.directive())]
    IntegerForFloat(ScalarType),
    #[error("a floating-point constant cannot be a `{}` operand (two packed halves)", .0.directive())]
    FloatForPackedHalves(ScalarType),
    #[error("floating-point constant used where `{}` needs an integer", .0.directive())]
    FloatForInteger(ScalarType),
}

/// Converts a folded constant to the bits of an operation of type `ty`.
pub(crate) fn immediate_bits(value: Value, ty: ScalarType) -> Result<u64, ImmediateError> {
    match value {
        Value::Int { .. } if types::is_float(ty) => Err(ImmediateError::IntegerForFloat(ty)),
        Value::Int { bits, .. } => Ok(layout::truncate(bits, ty)),
        Value::Float { .. } if types::is_packed_half(ty) => {
            Err(ImmediateError::FloatForPackedHalves(ty))
        }
        Value::Float { value, .. } if types::is_float(ty) => Ok(layout::float_bits(value, ty)),
        Value::Float { value, f32_literal } if types::kind(ty) == types::Kind::Bits => {
            Ok(if f32_literal || types::size(ty) == 4 {
                (value as f32).to_bits() as u64
            } else {
                value.to_bits()
            } & layout::mask(ty))
        }
        Value::Float { .. } => Err(ImmediateError::FloatForInteger(ty)),
    }
}

/// The element a vector component names; `None` for the video selectors `.b0`-`.h1`.
fn component_index(c: Component) -> Option<u16> {
    Some(match c {
        Component::X => 0,
        Component::Y => 1,
        Component::Z => 2,
        Component::W => 3,
        Component::B0
        | Component::B1
        | Component::B2
        | Component::B3
        | Component::H0
        | Component::H1 => return None,
    })
}

pub(crate) fn operand_kind(op: &Operand) -> &'static str {
    match op {
        Operand::Symbol { .. } => "a name",
        Operand::Not(..) => "a negated predicate",
        Operand::Immediate(_) => "an immediate",
        Operand::Address(_) => "an address `[...]`",
        Operand::Vector(..) => "a vector `{...}`",
        Operand::List(..) => "a parenthesised list",
        Operand::Bracketed(..) => "a texture or surface operand `[name, {...}]`",
        Operand::Pair(..) => "a predicate pair `p|q`",
        Operand::Sink(_) => "`_`",
    }
}

/// The special register `name` (PTX ISA 10); a 3-D one without a component means `.x`.
pub(crate) fn special(name: &str, component: Option<Component>) -> Option<SpecialReg> {
    let dim = || match component {
        None | Some(Component::X) => Some(Dim::X),
        Some(Component::Y) => Some(Dim::Y),
        Some(Component::Z) => Some(Dim::Z),
        Some(_) => None,
    };
    let scalar = |s: SpecialReg| if component.is_none() { Some(s) } else { None };
    match name {
        "%tid" => dim().map(SpecialReg::Tid),
        "%ntid" => dim().map(SpecialReg::Ntid),
        "%ctaid" => dim().map(SpecialReg::Ctaid),
        "%nctaid" => dim().map(SpecialReg::Nctaid),
        "%laneid" => scalar(SpecialReg::LaneId),
        "%warpid" => scalar(SpecialReg::WarpId),
        "%nwarpid" => scalar(SpecialReg::NWarpId),
        "%smid" => scalar(SpecialReg::SmId),
        "%nsmid" => scalar(SpecialReg::NSmId),
        "%gridid" => scalar(SpecialReg::GridId),
        "%lanemask_eq" => scalar(SpecialReg::LanemaskEq),
        "%lanemask_le" => scalar(SpecialReg::LanemaskLe),
        "%lanemask_lt" => scalar(SpecialReg::LanemaskLt),
        "%lanemask_ge" => scalar(SpecialReg::LanemaskGe),
        "%lanemask_gt" => scalar(SpecialReg::LanemaskGt),
        "%clock" => scalar(SpecialReg::Clock),
        "%clock64" => scalar(SpecialReg::Clock64),
        "%globaltimer" => scalar(SpecialReg::GlobalTimer),
        "%dynamic_smem_size" => scalar(SpecialReg::DynamicSmemSize),
        "%total_smem_size" => scalar(SpecialReg::TotalSmemSize),
        _ => None,
    }
}

/// Special registers PTX defines that cudasem does not provide.
fn is_known_special(name: &str) -> bool {
    name.starts_with("%cluster")
        || name.starts_with("%nclusterid")
        || name.starts_with("%is_explicit_cluster")
        || name.starts_with("%pm")
        || name.starts_with("%envreg")
        || name.starts_with("%reserved_smem")
        || matches!(
            name,
            "%clock_hi"
                | "%globaltimer_lo"
                | "%globaltimer_hi"
                | "%aggr_smem_size"
                | "%current_graph_exec"
        )
}

/// Names that look like a special register (`%` followed by letters only, no digits).
fn special_prefix(name: &str) -> bool {
    name.len() > 1
        && name[1..]
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_')
}
