//! The `{ init }` section and the thread table's placement header (`P0@cta 0,gpu 0`).

use super::ast::{Init, InitValue, Proxy, Thread};
use super::cursor::{Cursor, Sub, Tok};
use super::error::{ParseError, Pos};

/// `P3` or `3` as a thread number.
pub(super) fn thread_number(w: &str) -> Option<usize> {
    w.strip_prefix('P').unwrap_or(w).parse().ok()
}

pub(super) fn parse_init(cur: &Cursor, start: usize, end: usize) -> Result<Vec<Init>, ParseError> {
    let mut items = Vec::new();
    let mut s = start;
    let src = cur.src;
    let mut boundaries: Vec<usize> = src[start..end]
        .char_indices()
        .filter(|&(_, c)| c == ';')
        .map(|(i, _)| start + i)
        .collect();
    boundaries.push(end);
    for e in boundaries {
        let sub = Sub::new(cur, s, e);
        s = e + 1;
        if sub.is_blank() {
            continue;
        }
        let toks = sub.tokens()?;
        let pos = sub.start_pos();
        let bad = |what: &str| ParseError {
            pos,
            message: format!("malformed initial value `{}`: {what}", sub.text().trim()),
        };
        let value_of = |ts: &[(Tok, Pos)]| -> Result<InitValue, ParseError> {
            match ts {
                [(Tok::Int(v), _)] => Ok(InitValue::Int(*v)),
                [(Tok::Punct("&"), _), (Tok::Word(w), _)] | [(Tok::Word(w), _)] => {
                    Ok(InitValue::Address(w.clone()))
                }
                _ => Err(bad("expected an integer or `&location`")),
            }
        };
        match toks.as_slice() {
            // P0:r1 = v   /  0:r1 = v
            [
                (first, _),
                (Tok::Punct(":"), _),
                (Tok::Word(reg), _),
                (Tok::Punct("="), _),
                rest @ ..,
            ] => {
                let thread = match first {
                    Tok::Word(w) => thread_number(w),
                    Tok::Int(v) => usize::try_from(*v).ok(),
                    Tok::Punct(_) => None,
                }
                .ok_or_else(|| bad("expected `P<n>:register`"))?;
                items.push(Init::Register {
                    thread,
                    reg: reg.clone(),
                    value: value_of(rest)?,
                    pos,
                });
            }
            [
                (Tok::Word(name), _),
                (Tok::Punct("@"), _),
                (Tok::Word(proxy), _),
                (Tok::Word(al), _),
                (Tok::Word(target), _),
            ] if al == "aliases" => {
                let proxy = match proxy.as_str() {
                    "generic" => Proxy::Generic,
                    "texture" => Proxy::Texture,
                    "surface" => Proxy::Surface,
                    "constant" => Proxy::Constant,
                    _ => return Err(bad("unknown proxy")),
                };
                items.push(Init::Alias {
                    name: name.clone(),
                    proxy,
                    target: target.clone(),
                    pos,
                });
            }
            // Optionally typed: `int x = 0`.
            [.., (Tok::Word(name), _), (Tok::Punct("="), _), v] => {
                items.push(Init::Location {
                    name: name.clone(),
                    value: value_of(std::slice::from_ref(v))?,
                    pos,
                });
            }
            [.., (Tok::Word(name), _), (Tok::Punct("="), _), amp, w] => {
                items.push(Init::Location {
                    name: name.clone(),
                    value: value_of(&[amp.clone(), w.clone()])?,
                    pos,
                });
            }
            _ => return Err(bad("expected `x = v`, `P0:r = v` or `y @ proxy aliases x`")),
        }
    }
    Ok(items)
}

pub(super) fn parse_header(
    cur: &Cursor,
    s: usize,
    e: usize,
    k: usize,
) -> Result<Thread, ParseError> {
    let sub = Sub::new(cur, s, e);
    let pos = sub.start_pos();
    let toks = sub.tokens()?;
    let bad = || ParseError {
        pos,
        message: format!(
            "malformed thread header `{}`: expected `P{k}@cta N,gpu M`",
            sub.text().trim()
        ),
    };
    let (id, cta, gpu) = match toks.as_slice() {
        [
            (Tok::Word(p), _),
            (Tok::Punct("@"), _),
            (Tok::Word(c), _),
            (Tok::Int(cta), _),
            (Tok::Punct(","), _),
            (Tok::Word(g), _),
            (Tok::Int(gpu), _),
        ] if c == "cta" && g == "gpu" => (thread_number(p).ok_or_else(bad)?, *cta, *gpu),
        // Plain `P0` (no placement): one CTA, one GPU.
        [(Tok::Word(p), _)] => (thread_number(p).ok_or_else(bad)?, 0, 0),
        _ => return Err(bad()),
    };
    if id != k {
        return Err(ParseError {
            pos,
            message: format!(
                "thread column {k} is named P{id}: columns must be P0, P1, ... in order"
            ),
        });
    }
    let to_u32 = |v: i64| u32::try_from(v).map_err(|_| bad());
    Ok(Thread {
        id,
        cta: to_u32(cta)?,
        gpu: to_u32(gpu)?,
        pos,
        instrs: Vec::new(),
    })
}
