//! Property tests: generated PTX-like modules (valid fragments composed at random) parse
//! without errors and round-trip through the printer; mutations of them (byte and token
//! deletions, duplications, swaps, truncation, stray punctuation, very deep nesting) never make
//! `parse` panic or hang, and yield at most one diagnostic per input byte (plus one).
//!
//! Whenever a (possibly mutated) input parses without errors, printing and re-parsing it must
//! give the same AST: that checks the printer against inputs nobody thought to write by hand.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::Config;
use ptx_parser::{parse, strip_spans};

const TYPES: &[&str] = &[".u32", ".s32", ".b32", ".u64", ".b64", ".f32", ".f64", ".pred", ".b8", ".u16", ".f16x2"];
const OPCODES: &[&str] = &[
    "add", "mov", "ld", "st", "setp", "bra", "mul", "mad", "cvt", "selp", "atom", "bar", "shfl", "mma", "tex", "ssy",
    "preBrk",
];
const MODIFIERS: &[&str] = &[
    ".global",
    ".shared",
    ".param",
    ".u32",
    ".s64",
    ".f32",
    ".lo",
    ".wide",
    ".eq",
    ".sync",
    ".aligned",
    ".v4",
    ".shared::cta",
    ".L2::128B",
    ".uni",
    ".rn",
    ".ftz",
];
const REGS: &[&str] = &["%r1", "%r2", "%rd1", "%f3", "%p1", "a", "b_2", "$x", "__depot"];

fn pick(list: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    prop::sample::select(list)
}

fn reg() -> impl Strategy<Value = String> {
    pick(REGS).prop_map(str::to_string)
}

fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (0u64..1000).prop_map(|v| v.to_string()),
        any::<u32>().prop_map(|v| format!("0x{v:X}U")),
        any::<u32>().prop_map(|b| format!("0f{b:08X}")),
        (1u32..1000, 0u32..100).prop_map(|(a, b)| format!("{a}.{b}")),
    ];
    leaf.prop_recursive(4, 16, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                pick(&["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "==", "<", "&&"]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            inner.clone().prop_map(|a| format!("({a})")),
            inner.clone().prop_map(|a| format!("-{a}")),
            inner.clone().prop_map(|a| format!("~{a}")),
            (inner.clone(), inner.clone(), inner).prop_map(|(a, b, c)| format!("{a} ? {b} : {c}")),
        ]
    })
}

fn operand() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => reg(),
        1 => (reg(), pick(&[".x", ".y", ".z", ".w"])).prop_map(|(r, c)| format!("{r}{c}")),
        1 => reg().prop_map(|r| format!("!{r}")),
        2 => expr().prop_map(|e| format!("({e})")),
        1 => (-100i64..100).prop_map(|v| v.to_string()),
        2 => (reg(), prop::option::of(-64i64..64)).prop_map(|(r, o)| match o {
            Some(o) if o < 0 => format!("[{r}{o}]"),
            Some(o) => format!("[{r}+{o}]"),
            None => format!("[{r}]"),
        }),
        1 => prop::collection::vec(prop_oneof![reg(), Just("_".to_string())], 1..5)
            .prop_map(|v| format!("{{{}}}", v.join(", "))),
        1 => prop::collection::vec(reg(), 0..3).prop_map(|v| format!("({})", v.join(", "))),
        1 => (reg(), reg()).prop_map(|(a, b)| format!("{a}|{b}")),
        1 => Just("_".to_string()),
    ]
}

fn instruction() -> impl Strategy<Value = String> {
    (
        prop::option::of((any::<bool>(), reg())),
        pick(OPCODES),
        prop::collection::vec((pick(MODIFIERS), any::<bool>()), 0..4),
        prop::collection::vec(operand(), 0..4),
    )
        .prop_map(|(guard, op, mods, ops)| {
            let mut s = String::new();
            if let Some((neg, p)) = guard {
                s.push('@');
                if neg {
                    s.push('!');
                }
                s.push_str(&p);
                s.push(' ');
            }
            s.push_str(op);
            for (m, spaced) in mods {
                // The thesis dialect separates modifiers with spaces.
                if spaced {
                    s.push(' ');
                }
                s.push_str(m);
            }
            if !ops.is_empty() {
                s.push(' ');
                s.push_str(&ops.join(", "));
            }
            s.push(';');
            s
        })
}

fn declaration() -> impl Strategy<Value = String> {
    (
        pick(&[".reg", ".local", ".shared", ".param"]),
        prop::option::of(pick(&["1", "4", "16"])),
        pick(&["", ".v2 ", ".v4 "]),
        pick(TYPES),
        prop::collection::vec((reg(), prop::option::of(1u32..100), prop::option::of(1u64..64)), 1..4),
    )
        .prop_map(|(space, align, vec, ty, names)| {
            let names: Vec<String> = names
                .into_iter()
                .map(|(n, range, dim)| match (range, dim) {
                    (Some(r), _) => format!("{n}<{r}>"),
                    (None, Some(d)) => format!("{n}[{d}]"),
                    (None, None) => n,
                })
                .collect();
            let align = align.map(|a| format!(".align {a} ")).unwrap_or_default();
            format!("{space} {align}{vec}{ty} {};", names.join(", "))
        })
}

fn statement() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        6 => instruction(),
        2 => declaration(),
        1 => reg().prop_map(|r| format!("L{}:", r.trim_start_matches(['%', '$', '_']))),
        1 => (1u32..4, 1u32..500, 0u32..80).prop_map(|(f, l, c)| format!(".loc {f} {l} {c}")),
        1 => Just(".loc 1 2 3, function_name $L__info_string0, inlined_at 1 30 3".to_string()),
        1 => Just(".pragma \"nounroll\";".to_string()),
        1 => Just("prototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _);".to_string()),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop::collection::vec(inner, 0..6).prop_map(|v| format!("{{\n{}\n}}", v.join("\n")))
    })
}

fn global() -> impl Strategy<Value = String> {
    (
        pick(&["", ".visible ", ".extern ", ".weak "]),
        pick(&[".global", ".const", ".shared"]),
        pick(TYPES),
        prop::option::of(prop_oneof![
            expr().prop_map(|e| format!(" = {e}")),
            prop::collection::vec(expr(), 1..4).prop_map(|v| format!("[{}] = {{{}}}", v.len(), v.join(", "))),
        ]),
    )
        .prop_map(|(link, space, ty, init)| format!("{link}{space} {ty} g{}", init.unwrap_or_default() + ";"))
}

fn function() -> impl Strategy<Value = String> {
    (
        pick(&["", ".visible ", ".weak "]),
        any::<bool>(),
        prop::collection::vec((pick(TYPES), reg()), 0..3),
        prop::option::of(pick(&[".maxntid 256, 1, 1", ".reqntid 32", ".maxnreg 16", ".noreturn"])),
        prop::collection::vec(statement(), 0..8),
    )
        .prop_map(|(link, entry, params, perf, body)| {
            let params: Vec<String> =
                params.into_iter().enumerate().map(|(i, (ty, _))| format!(".param {ty} p{i}")).collect();
            let kind = if entry { ".entry" } else { ".func (.param .b32 r)" };
            format!("{link}{kind} f({})\n{}\n{{\n{}\n}}", params.join(", "), perf.unwrap_or_default(), body.join("\n"))
        })
}

fn module() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            3 => function(),
            2 => global(),
            1 => Just(".file 1 \"/tmp/k.cu\", 1234, 567".to_string()),
            1 => Just(".section .debug_str { $L__info_string0:\n.b8 95 0 \"}\" }".to_string()),
        ],
        0..5,
    )
    .prop_map(|items| format!(".version 7.8\n.target sm_80\n.address_size 64\n\n{}\n", items.join("\n")))
}

/// One edit of the text.
#[derive(Debug, Clone)]
enum Mutation {
    Delete { at: usize, len: usize },
    Duplicate { at: usize, len: usize },
    Swap { a: usize, b: usize, len: usize },
    Truncate { at: usize },
    Insert { at: usize, text: &'static str },
    Nest { at: usize, open: char, count: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let punct = pick(&[
        ";", ",", ":", "{", "}", "[", "]", "(", ")", "<", ">", "@", "!", "+", "-", "|", "?", "=", "_", ".", "%", "\"",
        "/*", "//", "#", "é", "\n", "0f", "0x", ".loc", ".reg",
    ]);
    prop_oneof![
        (any::<usize>(), 1usize..20).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 1usize..40).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (any::<usize>(), any::<usize>(), 1usize..10).prop_map(|(a, b, len)| Mutation::Swap { a, b, len }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), punct).prop_map(|(at, text)| Mutation::Insert { at, text }),
        (any::<usize>(), prop::sample::select(vec!['{', '(', '[', '-', '!']), 1usize..10_000)
            .prop_map(|(at, open, count)| Mutation::Nest { at, open, count }),
    ]
}

/// Applies `m` at positions reduced modulo the length; works on chars so the text stays UTF-8.
fn apply(text: &str, m: &Mutation) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let n = chars.len().max(1);
    match *m {
        Mutation::Delete { at, len } => {
            let at = at % n;
            let end = (at + len).min(chars.len());
            if at < end {
                chars.drain(at..end);
            }
        }
        Mutation::Duplicate { at, len } => {
            let at = at % n;
            let end = (at + len).min(chars.len());
            let copy: Vec<char> = chars.get(at..end).unwrap_or(&[]).to_vec();
            chars.splice(at..at, copy);
        }
        Mutation::Swap { a, b, len } => {
            if chars.len() > len {
                let a = a % (chars.len() - len);
                let b = b % (chars.len() - len);
                for i in 0..len {
                    chars.swap(a + i, b + i);
                }
            }
        }
        Mutation::Truncate { at } => chars.truncate(at % n),
        Mutation::Insert { at, text } => {
            let at = (at % n).min(chars.len());
            chars.splice(at..at, text.chars());
        }
        Mutation::Nest { at, open, count } => {
            let at = (at % n).min(chars.len());
            chars.splice(at..at, std::iter::repeat_n(open, count));
        }
    }
    chars.into_iter().collect()
}

/// The properties every input must satisfy.
fn check(src: &str) -> Result<(), TestCaseError> {
    let start = Instant::now();
    let parsed = parse(src);
    // Linear time: even 10 KB of pathological text takes far less than this on any machine.
    prop_assert!(start.elapsed() < Duration::from_secs(5), "parse took {:?}", start.elapsed());
    prop_assert!(
        parsed.diagnostics.len() <= src.len() + 1,
        "{} diagnostics for {} bytes",
        parsed.diagnostics.len(),
        src.len()
    );
    for d in &parsed.diagnostics {
        prop_assert!(d.span.start <= d.span.end && d.span.end as usize <= src.len(), "bad span {:?}", d.span);
    }
    if !parsed.has_errors() {
        let printed = parsed.module.to_string();
        let again = parse(&printed);
        prop_assert!(!again.has_errors(), "printed text has errors: {:#?}\n{printed}", again.diagnostics);
        prop_assert_eq!(strip_spans(&parsed.module), strip_spans(&again.module), "printed:\n{}", printed);
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config { cases: 256, ..Config::default() })]

    #[test]
    fn generated_modules_parse_cleanly_and_round_trip(src in module()) {
        if std::env::var_os("SHOWGEN").is_some() { eprintln!("=====\n{src}"); }
        let parsed = parse(&src);
        prop_assert!(parsed.diagnostics.is_empty(), "{:#?}\n{src}", parsed.diagnostics);
        check(&src)?;
    }

    #[test]
    fn mutated_modules_never_panic(src in module(), muts in prop::collection::vec(mutation(), 1..6)) {
        let mut text = src;
        for m in &muts {
            text = apply(&text, m);
        }
        if std::env::var_os("SHOWGEN").is_some() { let p = parse(&text); eprintln!("MUT {} errs {}", text.len(), p.diagnostics.len()); }
        check(&text)?;
    }

    #[test]
    fn arbitrary_text_never_panics(src in "[ -~\n\t]{0,2000}") {
        check(&src)?;
    }

    #[test]
    fn token_soup_never_panics(toks in prop::collection::vec(prop_oneof![
        pick(MODIFIERS), pick(OPCODES), pick(REGS), pick(TYPES),
        pick(&[".entry", ".func", ".visible", ".global", ".reg", ".loc", ".file", ".section", ".pragma", ".callprototype",
               "{", "}", "(", ")", "[", "]", ";", ",", ":", "@", "!", "|", "_", "=", "<", ">", "+", "-", "?",
               "1", "0x10", "0f3F800000", "1.5", "\"s\"", "generic", "\n"]),
    ], 0..400)) {
        check(&toks.join(" "))?;
    }
}

#[test]
fn huge_nesting_everywhere() {
    for open in ["{", "(", "[", "-", "!", "~", "{{}", "({", "@"] {
        let deep = open.repeat(20_000);
        for template in [
            "{deep}",
            ".entry k() {deep}",
            ".entry k() {{ {deep} }}",
            ".entry k() {{ add.u32 a, {deep}1; }}",
            ".global .u32 x[1] = {deep}1;",
            ".entry k() {{ ld.u32 a, [b+{deep}1]; }}",
        ] {
            let src = template.replace("{deep}", &deep);
            let parsed = parse(&src);
            assert!(parsed.diagnostics.len() <= src.len() + 1);
        }
    }
}
