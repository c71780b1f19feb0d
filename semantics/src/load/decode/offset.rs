//! `reg + c` as a value operand outside brackets (`st.u64 [a], %rd1 + 8;`, `add.u64 %rd2, %rd1 +
//! 4, 1;`), which ptxas accepts as it accepts `[%rd1+8]` as an address: lowered to an `add` of the
//! operand's type into a fresh register that the instruction reads in its place.

use super::{Cx, Named};
use crate::load::scope::Local;
use crate::load::types;
use crate::program::{ArithFlags, BinaryOp, Op, Src};
use ptx_parser::{BinaryOp as CBinaryOp, ConstExpr, Ident, Operand, ScalarType};

impl Cx<'_, '_, '_> {
    /// `reg + c`, `c + reg` or `reg - c` written as a value operand outside brackets
    /// (`st.u64 [a], %rd1 + 8;`, which ptxas accepts as it accepts `[%rd1+8]` as an address): the
    /// register's name, the constant part and whether it is subtracted. `None` when the expression
    /// has no register in it (a constant or a variable's address, folded by [`Cx::imm`]).
    pub(super) fn register_offset<'x>(
        &mut self,
        e: &'x ConstExpr,
    ) -> Option<(&'x Ident, &'x ConstExpr, bool)> {
        let ConstExpr::Binary { op, lhs, rhs, .. } = e else {
            return None;
        };
        let is_reg = |cx: &mut Self, x: &ConstExpr| match x {
            ConstExpr::Symbol(id) => {
                matches!(cx.resolve(id, None), Named::Local(Local::Reg { .. }))
            }
            _ => false,
        };
        match (op, &**lhs, &**rhs) {
            (CBinaryOp::Add | CBinaryOp::Sub, ConstExpr::Symbol(r), c) if is_reg(self, lhs) => {
                Some((r, c, *op == CBinaryOp::Sub))
            }
            (CBinaryOp::Add, c, ConstExpr::Symbol(r)) if is_reg(self, rhs) => Some((r, c, false)),
            _ => None,
        }
    }

    /// Lowers `reg ± c` to an `add`/`sub` of the operand's type into a fresh register read in its
    /// place. Only integer operands: ptxas takes the form as an address computation.
    pub(super) fn register_plus_offset(
        &mut self,
        (reg, c, sub): (&Ident, &ConstExpr, bool),
        e: &ConstExpr,
        ty: ScalarType,
    ) -> Option<Src> {
        if !matches!(
            types::kind(ty),
            types::Kind::Signed | types::Kind::Unsigned | types::Kind::Bits
        ) || ty == ScalarType::B128
        {
            self.error(
                e.span(),
                format!(
                    "`{} + constant` needs an integer operand, found `{}`",
                    reg.name,
                    ty.directive()
                ),
                "register plus constant",
                "compute the sum with `add` into a register first",
            );
            return None;
        }
        let a = self.src(
            &Operand::Symbol {
                name: reg.clone(),
                component: None,
                span: reg.span,
            },
            ty,
        )?;
        let b = self.imm(c, ty)?;
        let t = match self.f.env.new_register("%offset.tmp", ty, 1, self.ins.span) {
            Ok(t) => t,
            Err(d) => {
                self.push_diag(d);
                return None;
            }
        };
        self.emit(Op::Binary {
            op: if sub { BinaryOp::Sub } else { BinaryOp::Add },
            ty,
            flags: ArithFlags::default(),
            dst: t,
            a,
            b: Src::Imm(b),
        });
        Some(Src::Reg(t))
    }
}
