//! Module-level grammar: `.version`, `.target`, `.address_size`, `.file`, `.section`,
//! `.pragma`, and dispatch of linkage-prefixed functions and variables (PTX ISA 11).
//! Also `.loc`, which appears in bodies but shares the raw-text handling with `.file`.

use super::{PResult, Parser};
use crate::ast::{FileDirective, Item, Linkage, Loc, Module, Pragma, RawSection, Span, StateSpace};
use crate::diagnostic::Diagnostic;
use crate::lexer::Tok;

pub(super) fn module(p: &mut Parser) -> Module {
    let mut m = Module { span: Span::new(0, p.source().len()), ..Module::default() };
    loop {
        let t = p.peek();
        let result = match t.kind {
            Tok::Eof => break,
            Tok::Semi => {
                // An empty declaration, as in a body: nothing to keep.
                p.bump();
                Ok(())
            }
            Tok::Dotted => directive(p, &mut m),
            Tok::Ident | Tok::At => {
                p.push(
                    Diagnostic::error(t.span(), format!("found {} outside a function body", p.describe(t)))
                        .with_label("instructions and labels belong in a body")
                        .with_help("put instructions inside the `{ ... }` of an `.entry` or `.func`"),
                );
                Err(super::Reported)
            }
            _ => p.expected("a directive such as `.version`, `.entry` or `.global`", None),
        };
        if result.is_err() {
            p.recover_module_item();
        }
    }
    m
}

fn directive(p: &mut Parser, m: &mut Module) -> PResult<()> {
    let t = p.peek();
    match p.text(t) {
        ".version" => {
            p.bump();
            m.version = Some(version(p)?);
        }
        ".target" => {
            p.bump();
            m.target.clear();
            loop {
                let word = p.expect(Tok::Ident, "a target such as `sm_70`", None)?;
                m.target.push(p.ident(word));
                if p.eat(Tok::Comma).is_none() {
                    break;
                }
            }
        }
        ".address_size" => {
            p.bump();
            m.address_size = Some(p.expect_u32("an address size (32 or 64)")?);
        }
        ".file" => m.items.push(Item::File(file(p)?)),
        ".section" => m.items.push(Item::Section(section(p)?)),
        ".pragma" => m.items.push(Item::Pragma(pragma(p)?)),
        _ => return linked_item(p, m),
    }
    Ok(())
}

/// `7.0` lexes as one float token; read major and minor from its text.
fn version(p: &mut Parser) -> PResult<(u32, u32)> {
    let t = p.peek();
    if !matches!(t.kind, Tok::DecFloat | Tok::DecInt) {
        return p.expected("a version such as `7.0`", None);
    }
    p.bump();
    let text = p.text(t);
    let (major, minor) = text.split_once('.').unwrap_or((text, "0"));
    match (major.parse::<u32>(), minor.parse::<u32>()) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        _ => {
            p.push(
                Diagnostic::error(t.span(), format!("invalid PTX version `{text}`"))
                    .with_label("expected MAJOR.MINOR")
                    .with_help("write the version as e.g. `.version 7.0`"),
            );
            Err(super::Reported)
        }
    }
}

/// Linkage words then a function or variable declaration.
fn linked_item(p: &mut Parser, m: &mut Module) -> PResult<()> {
    let start = p.peek().start;
    let mut linkage = Vec::new();
    while p.at(Tok::Dotted) {
        match Linkage::from_directive(p.text(p.peek())) {
            Some(l) => {
                linkage.push(l);
                p.bump();
            }
            None => break,
        }
    }
    let t = p.peek();
    let word = p.text(t);
    if t.kind == Tok::Dotted && (word == ".entry" || word == ".func") {
        let f = p.function(linkage, start)?;
        m.items.push(Item::Function(f));
        Ok(())
    } else if t.kind == Tok::Dotted && StateSpace::from_directive(word).is_some() {
        let decls = p.variable_decls(linkage, start)?;
        m.items.extend(decls.into_iter().map(Item::Variable));
        Ok(())
    } else if t.kind == Tok::Dotted && word == ".loc" {
        p.push(
            Diagnostic::error(t.span(), "`.loc` outside a function body")
                .with_label("not allowed at module level")
                .with_help("`.loc` annotates the instructions of a body"),
        );
        Err(super::Reported)
    } else if t.kind == Tok::Dotted && linkage.is_empty() {
        p.push(
            Diagnostic::error(t.span(), format!("unknown module-level directive {}", p.describe(t)))
                .with_label("not a module-level directive")
                .with_help(
                    "expected `.version`, `.target`, `.address_size`, `.entry`, `.func`, a state \
                     space such as `.global`, `.file`, `.section` or `.pragma`",
                ),
        );
        Err(super::Reported)
    } else {
        p.expected("`.entry`, `.func` or a state space after the linkage directive", None)
    }
}

/// `.file 1 "k.cu"` with optional `, timestamp, size`.
fn file(p: &mut Parser) -> PResult<FileDirective> {
    let start = p.bump();
    let index = p.expect_u32("a file index")?;
    let path = p.expect(Tok::Str, "a quoted file path", None)?;
    let path = string_contents(p.text(path));
    let mut extra = Vec::new();
    while p.eat(Tok::Comma).is_some() {
        extra.push(p.expect_u64("a number (timestamp or file size)")?);
    }
    Ok(FileDirective { index, path: path.into(), extra, span: Span::new(start.start as usize, p.prev_end() as usize) })
}

/// `.section .debug_info { ... }`: the body is kept verbatim, with balanced braces.
fn section(p: &mut Parser) -> PResult<RawSection> {
    let start = p.bump();
    let name = p.expect(Tok::Dotted, "a section name such as `.debug_info`", None)?;
    let open = p.expect(Tok::LBrace, "`{` opening the section body", None)?;
    let mut depth: u64 = 1;
    loop {
        let t = p.bump();
        match t.kind {
            Tok::LBrace => depth += 1,
            Tok::RBrace => {
                depth -= 1;
                if depth == 0 {
                    let body = p.src_slice(open.end, t.start);
                    return Ok(RawSection {
                        name: p.text(name).into(),
                        body: body.into(),
                        span: start.span().to(t.span()),
                    });
                }
            }
            Tok::Eof => {
                p.push(
                    Diagnostic::error(open.span(), "unclosed `{` of `.section`")
                        .with_label("this brace is never closed")
                        .with_help("close the section body with `}`"),
                );
                return Err(super::Reported);
            }
            _ => {}
        }
    }
}

/// `.pragma "nounroll";`
pub(super) fn pragma(p: &mut Parser) -> PResult<Pragma> {
    let start = p.bump();
    let s = p.expect(Tok::Str, "a quoted pragma such as `\"nounroll\"`", None)?;
    let end =
        p.expect(Tok::Semi, "`;` after the pragma", Some("directives of the form `.pragma \"...\"` end with `;`"))?;
    Ok(Pragma { text: string_contents(p.text(s)).into(), span: start.span().to(end.span()) })
}

/// `.loc 1 12 5` and `.loc 1 12 5, function_name $L__info_string0, inlined_at 1 30 3`.
/// `.loc` has no terminator: it ends at the end of its line, so the raw rest is everything
/// from a `,` right after the column to the last token on that line. Only the gaps between
/// tokens are searched for the newline, so a file of `.loc`s on one line stays linear.
pub(super) fn loc(p: &mut Parser) -> PResult<Loc> {
    let start = p.bump();
    let file = p.expect_u32("a file index")?;
    let line = p.expect_u32("a line number")?;
    let column = p.expect_u32("a column number")?;
    let same_line = |p: &Parser, from: u32| !p.src_slice(from, p.peek().start).contains('\n');
    let mut rest = None;
    if p.at(Tok::Comma) && same_line(p, p.prev_end()) {
        let first = p.bump();
        let mut last = first.end;
        while !p.at(Tok::Eof) && same_line(p, last) {
            last = p.bump().end;
        }
        rest = Some(p.src_slice(first.start, last).into());
    }
    Ok(Loc { file, line, column, rest, span: Span::new(start.start as usize, p.prev_end() as usize) })
}

/// The text between the quotes of a string token, escapes kept as written.
fn string_contents(text: &str) -> &str {
    text.get(1..text.len().saturating_sub(1)).unwrap_or("")
}
