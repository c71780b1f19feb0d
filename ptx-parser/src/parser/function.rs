//! Functions (PTX ISA 11.3): `.entry`/`.func` headers with return and formal parameters,
//! performance directives, and bodies: `{ ... }` blocks of statements, nested blocks (thesis
//! Listing 5.4), labels and call prototypes.

use super::{PResult, Parser, Reported, directives};
use crate::ast::{
    Block, CallPrototype, Function, FunctionKind, Linkage, Param, PerfDirective, Span, StateSpace, Statement,
    TargetList,
};
use crate::diagnostic::Diagnostic;
use crate::lexer::Tok;

impl Parser<'_> {
    /// At `.entry` or `.func`; `start` is where the linkage words began.
    pub(crate) fn function(&mut self, linkage: Vec<Linkage>, start: u32) -> PResult<Function> {
        let kw = self.bump();
        let kind = if self.text(kw) == ".entry" { FunctionKind::Entry } else { FunctionKind::Func };
        let return_params = if self.at(Tok::LParen) { self.param_list()? } else { Vec::new() };
        let name = self.expect(Tok::Ident, "a function name", None)?;
        let name = self.ident(name);
        let params = if self.at(Tok::LParen) { self.param_list()? } else { Vec::new() };
        let performance = self.perf_directives()?;
        let t = self.peek();
        let body = match t.kind {
            Tok::LBrace => Some(self.block()),
            Tok::Semi => {
                self.bump();
                None
            }
            _ => {
                return self.expected(
                    "`{` starting the body or `;` ending the declaration",
                    Some("a function is `.func name(params) { ... }` or a declaration ending with `;`"),
                );
            }
        };
        let span = Span::new(start as usize, self.prev_end() as usize);
        Ok(Function { linkage, kind, name, return_params, params, performance, body, span })
    }

    /// `( param, param, ... )`, recovering at `,` and `)`.
    pub(crate) fn param_list(&mut self) -> PResult<Vec<Param>> {
        let open = self.expect(Tok::LParen, "`(`", None)?;
        let mut params = Vec::new();
        if self.eat(Tok::RParen).is_some() {
            return Ok(params);
        }
        loop {
            match self.param() {
                Ok(p) => params.push(p),
                Err(Reported) => {
                    // Skip the rest of this parameter, but never past what ends the header.
                    while !matches!(
                        self.kind(),
                        Tok::Comma | Tok::RParen | Tok::LBrace | Tok::RBrace | Tok::Semi | Tok::Eof
                    ) {
                        self.bump();
                    }
                }
            }
            match self.kind() {
                Tok::Comma => {
                    self.bump();
                }
                Tok::RParen => {
                    self.bump();
                    return Ok(params);
                }
                _ => {
                    let found = self.peek();
                    let found_text = self.describe(found);
                    self.push(
                        Diagnostic::error(
                            found.span(),
                            format!("expected `,` or `)` in parameter list, found {found_text}"),
                        )
                        .with_label("expected `,` or `)`")
                        .with_secondary(open.span(), "parameter list opened here"),
                    );
                    return Err(Reported);
                }
            }
        }
    }

    /// `.maxntid 256, 1, 1` and friends between a function header and its body.
    fn perf_directives(&mut self) -> PResult<Vec<PerfDirective>> {
        let mut out = Vec::new();
        while self.at(Tok::Dotted) {
            let t = self.peek();
            let d = match self.text(t) {
                ".maxntid" => {
                    self.bump();
                    PerfDirective::MaxNtid(self.u32_list()?, self.span_from(t.start))
                }
                ".reqntid" => {
                    self.bump();
                    PerfDirective::ReqNtid(self.u32_list()?, self.span_from(t.start))
                }
                ".minnctapersm" => {
                    self.bump();
                    PerfDirective::MinNctaPerSm(self.expect_u32("a number of CTAs")?, self.span_from(t.start))
                }
                ".maxnctapersm" => {
                    self.bump();
                    PerfDirective::MaxNctaPerSm(self.expect_u32("a number of CTAs")?, self.span_from(t.start))
                }
                ".maxnreg" => {
                    self.bump();
                    PerfDirective::MaxNreg(self.expect_u32("a number of registers")?, self.span_from(t.start))
                }
                ".noreturn" => {
                    self.bump();
                    PerfDirective::NoReturn(t.span())
                }
                ".pragma" => PerfDirective::Pragma(directives::pragma(self)?),
                _ => {
                    let found = self.describe(t);
                    self.push(
                        Diagnostic::error(t.span(), format!("unsupported function directive {found}"))
                            .with_label("not a known performance directive")
                            .with_help(
                                "between a function header and its body cudasem accepts `.maxntid`, \
                                 `.reqntid`, `.minnctapersm`, `.maxnctapersm`, `.maxnreg`, \
                                 `.noreturn` and `.pragma`",
                            ),
                    );
                    return Err(Reported);
                }
            };
            out.push(d);
        }
        Ok(out)
    }

    fn span_from(&self, start: u32) -> Span {
        Span::new(start as usize, self.prev_end() as usize)
    }

    /// `256, 1, 1`: one to three dimensions.
    fn u32_list(&mut self) -> PResult<Vec<u32>> {
        let mut v = vec![self.expect_u32("a thread count")?];
        while self.eat(Tok::Comma).is_some() {
            v.push(self.expect_u32("a thread count")?);
        }
        Ok(v)
    }

    /// A `{ ... }` block at the current `{`. Never fails: errors inside are reported and
    /// recovered; an unclosed block ends at end of file.
    pub(crate) fn block(&mut self) -> Block {
        let open = self.peek();
        if self.enter(open.span()).is_err() {
            // Too deep: skip the whole block rather than recurse. If it runs to the end of the
            // file, the nesting error already explains why; the enclosing blocks stay quiet.
            self.skip_balanced_braces();
            self.eof_reported |= self.at(Tok::Eof);
            return Block { statements: Vec::new(), span: Span::new(open.start as usize, self.prev_end() as usize) };
        }
        self.bump();
        // Statements go straight into the block's own vector (an instruction is a few hundred
        // bytes, and a body is most of a module's memory: it is written once, not collected
        // elsewhere and copied). A function body reserves what the largest body so far needed;
        // the vector is trimmed at the `}`, which shrinks it in place.
        let outermost = self.depth == 1;
        let mut statements = Vec::with_capacity(if outermost { self.body_reserve } else { 0 });
        loop {
            let t = self.peek();
            match t.kind {
                Tok::RBrace => {
                    self.bump();
                    break;
                }
                Tok::Eof if self.eof_reported => break,
                Tok::Eof => {
                    self.eof_reported = true;
                    self.push(
                        Diagnostic::error(t.span(), "unexpected end of file inside a block")
                            .with_label("expected `}`")
                            .with_secondary(open.span(), "this `{` is never closed")
                            .with_help("add the missing `}`"),
                    );
                    break;
                }
                _ => {
                    let before = self.pos;
                    if self.statement(&mut statements).is_err() {
                        self.recover_statement();
                    }
                    if self.pos == before && !matches!(self.kind(), Tok::RBrace | Tok::Eof) {
                        // Safety net: every iteration consumes something.
                        self.bump();
                    }
                }
            }
        }
        self.leave();
        if outermost {
            self.body_reserve = self.body_reserve.max(statements.len()).min(super::MAX_BODY_RESERVE);
        }
        statements.shrink_to_fit();
        Block { statements, span: Span::new(open.start as usize, self.prev_end() as usize) }
    }

    /// One statement of a body, pushed on `statements` (a declaration list may push several).
    fn statement(&mut self, statements: &mut Vec<Statement>) -> PResult<()> {
        let t = self.peek();
        let statement = match t.kind {
            Tok::LBrace => Statement::Block(self.block()),
            Tok::Semi => {
                // An empty statement: harmless, nothing to keep.
                self.bump();
                return Ok(());
            }
            Tok::At => return self.instruction(statements),
            Tok::Ident if self.peek_at(1).kind == Tok::Colon => {
                let after = self.peek_at(2);
                match if after.kind == Tok::Dotted { self.text(after) } else { "" } {
                    ".callprototype" => Statement::CallPrototype(self.call_prototype()?),
                    ".branchtargets" => Statement::BranchTargets(self.target_list()?),
                    ".calltargets" => Statement::CallTargets(self.target_list()?),
                    _ => {
                        self.bump();
                        self.bump();
                        Statement::Label(self.ident(t))
                    }
                }
            }
            Tok::Ident => return self.instruction(statements),
            Tok::Dotted => {
                let word = self.text(t);
                match word {
                    ".loc" => Statement::Loc(directives::loc(self)?),
                    ".pragma" => Statement::Pragma(directives::pragma(self)?),
                    _ if StateSpace::from_directive(word).is_some() || Linkage::from_directive(word).is_some() => {
                        let mut linkage = Vec::new();
                        while let Some(l) = Linkage::from_directive(self.text(self.peek())) {
                            linkage.push(l);
                            self.bump();
                        }
                        let decls = self.variable_decls(linkage, t.start)?;
                        statements.extend(decls.into_iter().map(Statement::Variable));
                        return Ok(());
                    }
                    _ => {
                        let found = self.describe(t);
                        self.push(
                            Diagnostic::error(t.span(), format!("unknown directive {found} in a function body"))
                                .with_label("not a statement")
                                .with_help(
                                    "a body holds instructions, labels, `{ }` blocks, declarations \
                                     (`.reg`, `.local`, `.shared`, `.param`, ...), `.loc` and `.pragma`",
                                ),
                        );
                        return Err(Reported);
                    }
                }
            }
            _ => return self.expected("an instruction, label, declaration or `}`", None),
        };
        statements.push(statement);
        Ok(())
    }

    /// `TARGETS: .branchtargets L1, L2;` or `.calltargets f, g;`
    fn target_list(&mut self) -> PResult<TargetList> {
        let label = self.bump();
        self.bump(); // `:`
        self.bump(); // `.branchtargets` or `.calltargets`
        let mut targets = Vec::new();
        loop {
            let t = self.expect(Tok::Ident, "a label or function name in the target list", None)?;
            targets.push(self.ident(t));
            if self.eat(Tok::Comma).is_none() {
                break;
            }
        }
        let end = self.expect(Tok::Semi, "`,` or `;` in the target list", Some("a target list ends with `;`"))?;
        Ok(TargetList { label: self.ident(label), targets, span: label.span().to(end.span()) })
    }

    /// `prototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _);`
    fn call_prototype(&mut self) -> PResult<CallPrototype> {
        let label = self.bump();
        self.bump(); // `:`
        self.bump(); // `.callprototype`
        let return_params = if self.at(Tok::LParen) { self.param_list()? } else { Vec::new() };
        if self.eat(Tok::Underscore).is_none() {
            return self.expected("`_` standing for the function name in a `.callprototype`", None);
        }
        let params = if self.at(Tok::LParen) { self.param_list()? } else { Vec::new() };
        let end = self.expect(Tok::Semi, "`;` after the call prototype", None)?;
        Ok(CallPrototype { label: self.ident(label), return_params, params, span: label.span().to(end.span()) })
    }
}
