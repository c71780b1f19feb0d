//! Parser for herd-style PTX litmus tests (`conformance/ptx-litmus/README.md`, the grammar of
//! Dat3M's `LitmusPTX.g4`): name line, quoted comments, the `{ init }` section, the thread table
//! (placement header `P0@cta 0,gpu 0`, one row per `;`, cells separated by `|`) and the final
//! condition (`exists`, `~exists`, `forall` over `/\`, `\/`, `~`, `==`/`=`, `!=`).
//!
//! Everything the format can say is parsed into the AST, proxies and multi-GPU placements
//! included: deciding what cudasem can execute is the translator's job
//! ([`super::translate`]), which answers "unsupported" with a reason. Malformed input is a
//! [`ParseError`] with a 1-based line and column; the parser never panics.
//!
//! One module per job: [`error`] (positions and errors), [`ast`] (the syntax tree), `cursor`
//! (walking the text), `init` (the init section and thread headers), `instr` (instruction
//! cells), `condition` (the final condition) and `check` (cross-checks between sections).

pub mod ast;
mod check;
mod condition;
mod cursor;
pub mod error;
mod init;
mod instr;

pub use ast::*;
pub use error::{ParseError, Pos};

use check::check;
use condition::parse_condition;
use cursor::{Cursor, Sub};
use init::{parse_header, parse_init};
use instr::parse_instr;

/// Parses a litmus test.
pub fn parse(text: &str) -> Result<LitmusTest, ParseError> {
    let mut p = Cursor::new(text);
    p.skip_ws();
    let lang = p.word();
    if !lang.eq_ignore_ascii_case("PTX") {
        return Err(p.err_here(format!(
            "expected `PTX` at the start of a PTX litmus test, found `{lang}`"
        )));
    }
    // The name: the rest of the first line.
    let name = p.rest_of_line().trim().to_string();
    // Like Dat3M's grammar, everything up to the first `{` is the header: quoted comments,
    // which may themselves contain quotes (Manual/MICRO24-Fig4b-correct.litmus).
    let header_start = p.i;
    while p.peek().is_some_and(|c| c != '{') {
        p.bump();
    }
    if p.peek().is_none() {
        return Err(p.err_here("unexpected end of file: no initial state `{ ... }`".into()));
    }
    let header = p.src[header_start..p.i].trim();
    let comments: Vec<String> = if header.is_empty() {
        Vec::new()
    } else if header.matches('"').count().is_multiple_of(2) {
        header
            .split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    } else {
        vec![header.trim_matches('"').to_string()]
    };
    p.bump(); // `{`
    let init_start = p.i;
    while p.peek().is_some_and(|c| c != '}') {
        p.bump();
    }
    if p.peek().is_none() {
        return Err(p.err_here("unterminated initial state: missing `}`".into()));
    }
    let init = parse_init(&p, init_start, p.i)?;
    p.bump(); // `}`
    p.skip_ws();
    if p.peek() == Some(';') {
        p.bump();
    }

    // The thread table: rows up to the condition keyword.
    let mut rows: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut row_pos = Vec::new();
    loop {
        p.skip_ws();
        if p.peek().is_none() || p.at_condition() {
            break;
        }
        row_pos.push(p.pos());
        let mut cells = Vec::new();
        let mut cell_start = p.i;
        loop {
            match p.peek() {
                Some('|') => {
                    cells.push((cell_start, p.i));
                    p.bump();
                    cell_start = p.i;
                }
                Some(';') => {
                    cells.push((cell_start, p.i));
                    p.bump();
                    break;
                }
                Some(_) => p.bump(),
                None => return Err(p.err_here("unterminated row: missing `;`".into())),
            }
        }
        rows.push(cells);
    }
    if rows.is_empty() {
        return Err(p.err_here("expected the thread table (`P0@cta 0,gpu 0 | ... ;`)".into()));
    }
    let mut threads = Vec::new();
    for (k, &(s, e)) in rows[0].iter().enumerate() {
        threads.push(parse_header(&p, s, e, k)?);
    }
    for (r, row) in rows.iter().enumerate().skip(1) {
        if row.len() > threads.len() {
            return Err(ParseError {
                pos: row_pos[r],
                message: format!(
                    "row has {} cells but the table has {} threads",
                    row.len(),
                    threads.len()
                ),
            });
        }
        for (k, &(s, e)) in row.iter().enumerate() {
            let cell = Sub::new(&p, s, e);
            if cell.is_blank() {
                continue;
            }
            let instr = parse_instr(&cell)?;
            threads[k].instrs.push(Located {
                instr,
                pos: cell.start_pos(),
            });
        }
    }

    p.skip_ws();
    if p.peek().is_none() {
        return Err(
            p.err_here("expected the final condition (`exists`, `~exists` or `forall`)".into())
        );
    }
    let cond_pos = p.pos();
    let cond = Sub::new(&p, p.i, p.src.len());
    let condition = parse_condition(&cond, cond_pos)?;
    let test = LitmusTest {
        name,
        comments,
        init,
        threads,
        condition,
    };
    check(&test)?;
    Ok(test)
}

#[cfg(test)]
mod tests;
