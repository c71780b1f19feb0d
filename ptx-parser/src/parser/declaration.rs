//! Declarations (PTX ISA 5.4, 11.3): formal parameters (`.param .u64 .ptr .global .align 8 p`)
//! and variables (`.reg .b32 %r<5>;`, `.shared .align 4 .b8 s[64];`, `.global .u32 a[3] =
//! {1, 2, 3};`). A comma list declares one [`VariableDecl`] per name, each with its own name
//! span and the span of the whole statement.

use super::{PResult, Parser, Reported};
use crate::ast::{Initializer, Linkage, Param, PtrAttributes, ScalarType, Span, StateSpace, VarType, VariableDecl};
use crate::diagnostic::Diagnostic;
use crate::lexer::Tok;
use smallvec::SmallVec;

/// The attributes between the state space and the name.
#[derive(Default)]
struct Attributes {
    align: Option<u32>,
    vector: Option<u8>,
    scalar: Option<ScalarType>,
    ptr: Option<PtrAttributes>,
}

impl Parser<'_> {
    /// Reads `.align N`, `.vN`, a type and (for parameters) `.ptr .space .align N`, in any
    /// order, until a non-dotted token.
    fn attributes(&mut self, allow_ptr: bool) -> PResult<Attributes> {
        let mut a = Attributes::default();
        while self.at(Tok::Dotted) {
            let t = self.peek();
            let word = self.text(t);
            if word == ".align" {
                self.bump();
                let at = self.peek().span();
                let n = self.expect_u32("an alignment in bytes")?;
                if !n.is_power_of_two() {
                    // Reported but not fatal: the rest of the declaration still parses.
                    self.push(
                        Diagnostic::error(at, format!("alignment {n} is not a power of two"))
                            .with_label("not a power of two")
                            .with_help("`.align` takes a power of two, e.g. `.align 4`, `.align 8` or `.align 16` (PTX ISA 5.4.5, \"Variables: Alignment\")"),
                    );
                }
                match a.ptr.as_mut() {
                    Some(ptr) => ptr.align = Some(n),
                    None => a.align = Some(n),
                }
            } else if let Some(ty) = ScalarType::from_directive(word) {
                self.bump();
                a.scalar = Some(ty);
            } else if let Some(n) = vector_width(word) {
                self.bump();
                a.vector = Some(n);
            } else if allow_ptr && word == ".ptr" {
                self.bump();
                a.ptr = Some(PtrAttributes { space: None, align: None });
            } else if let (Some(ptr), Some(space)) = (a.ptr.as_mut(), StateSpace::from_directive(word)) {
                self.bump();
                ptr.space = Some(space);
            } else {
                let found = self.describe(t);
                self.push(
                    Diagnostic::error(t.span(), format!("unexpected {found} in a declaration"))
                        .with_label("not a type or attribute")
                        .with_help("a declaration is `.space [.align N] [.vN] .type name`"),
                );
                return Err(Reported);
            }
        }
        Ok(a)
    }

    fn var_type(&mut self, a: &Attributes) -> PResult<VarType> {
        match a.scalar {
            Some(scalar) => Ok(VarType { vector: a.vector.unwrap_or(1), scalar }),
            None => self.expected(
                "a type such as `.u32` before the name",
                Some("every declaration needs a type, e.g. `.reg .b32 r;`"),
            ),
        }
    }

    /// The head every declaration shares: a state space, its attributes and the type. `what`
    /// names what was expected where no state space stands; `allow_ptr` for parameters.
    fn space_and_type(&mut self, what: &str, allow_ptr: bool) -> PResult<(StateSpace, Attributes, VarType)> {
        let t = self.peek();
        let space = match (t.kind, StateSpace::from_directive(self.text(t))) {
            (Tok::Dotted, Some(space)) => space,
            _ => return self.expected(what, None),
        };
        self.bump();
        let a = self.attributes(allow_ptr)?;
        let ty = self.var_type(&a)?;
        Ok((space, a, ty))
    }

    /// One formal parameter: `.param .u64 name`, `.param .align 8 .b8 name[16]`,
    /// `.param .u64 .ptr .global .align 8 name`, `.reg .b32 name`, or `_` in call prototypes.
    pub(crate) fn param(&mut self) -> PResult<Param> {
        let t = self.peek();
        let (space, a, ty) = self.space_and_type("a parameter such as `.param .u64 name`", true)?;
        let name = match self.kind() {
            Tok::Ident | Tok::Underscore => self.bump(),
            _ => return self.expected("a parameter name", None),
        };
        let array = self.array_dims()?;
        Ok(Param {
            space,
            ptr: a.ptr,
            align: a.align,
            ty,
            name: self.ident(name),
            array,
            span: Span::new(t.start as usize, self.prev_end() as usize),
        })
    }

    /// At a state space (linkage already consumed from `start`): the whole statement up to
    /// and including `;`, one declaration per name (nearly always one, kept inline).
    pub(crate) fn variable_decls(&mut self, linkage: Vec<Linkage>, start: u32) -> PResult<SmallVec<[VariableDecl; 1]>> {
        let (space, a, ty) = self.space_and_type("a state space such as `.reg` or `.global`", false)?;
        let mut decls: SmallVec<[VariableDecl; 1]> = SmallVec::new();
        loop {
            let name = self.expect(Tok::Ident, "a variable name", None)?;
            let range = if self.eat(Tok::Lt).is_some() {
                let n = self.expect_u32("the number of registers in `name<N>`")?;
                self.expect(Tok::Gt, "`>` closing `name<N>`", None)?;
                Some(n)
            } else {
                None
            };
            let array = self.array_dims()?;
            let init = if self.eat(Tok::Assign).is_some() { Some(self.initializer()?) } else { None };
            decls.push(VariableDecl {
                linkage: linkage.clone(),
                space,
                align: a.align,
                ty,
                name: self.ident(name),
                range,
                array,
                init,
                span: Span::default(),
            });
            match self.kind() {
                Tok::Comma => {
                    self.bump();
                }
                Tok::Semi => {
                    let end = self.bump();
                    let span = Span::new(start as usize, end.end as usize);
                    for d in &mut decls {
                        d.span = span;
                    }
                    return Ok(decls);
                }
                _ => {
                    return self.expected("`,` or `;` after the declared name", Some("declarations must end with `;`"));
                }
            }
        }
    }

    /// `[16][4]` or `[]`: `None` for an unsized dimension.
    fn array_dims(&mut self) -> PResult<Vec<Option<u64>>> {
        let mut dims = Vec::new();
        while self.eat(Tok::LBracket).is_some() {
            if self.eat(Tok::RBracket).is_some() {
                dims.push(None);
                continue;
            }
            let n = self.expect_u64("an array size")?;
            self.expect(Tok::RBracket, "`]` closing the array size", None)?;
            dims.push(Some(n));
        }
        Ok(dims)
    }

    /// `= 5`, `= {1, 2, {3, 4}}`, `= generic(x)`, `= { filter_mode = linear }` (the named
    /// fields of texture and sampler initializers).
    fn initializer(&mut self) -> PResult<Initializer> {
        let Some(open) = self.eat(Tok::LBrace) else {
            return self.expr().map(Initializer::Expr);
        };
        self.enter(open.span())?;
        let result = (|| {
            let mut items = Vec::new();
            if let Some(close) = self.eat(Tok::RBrace) {
                return Ok(Initializer::List(items, open.span().to(close.span())));
            }
            loop {
                if self.at(Tok::Ident) && self.peek_at(1).kind == Tok::Assign {
                    let t = self.bump();
                    let name = self.ident(t);
                    self.bump();
                    let value = self.initializer()?;
                    let span = t.span().to(init_span(&value));
                    items.push(Initializer::Field { name, value: Box::new(value), span });
                } else {
                    items.push(self.initializer()?);
                }
                if self.eat(Tok::Comma).is_some() {
                    continue;
                }
                let close = self.expect(Tok::RBrace, "`,` or `}` in the initializer list", None)?;
                return Ok(Initializer::List(items, open.span().to(close.span())));
            }
        })();
        self.leave();
        result
    }
}

fn init_span(init: &Initializer) -> crate::ast::Span {
    match init {
        Initializer::Expr(e) => e.span(),
        Initializer::List(_, span) | Initializer::Field { span, .. } => *span,
    }
}

/// `.v2` -> 2, `.v4` -> 4, `.v8` -> 8.
fn vector_width(word: &str) -> Option<u8> {
    match word {
        ".v2" => Some(2),
        ".v4" => Some(4),
        ".v8" => Some(8),
        _ => None,
    }
}
