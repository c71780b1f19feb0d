//! Scale: multi-megabyte inputs, valid and pathological, parse in linear time. The limits are
//! generous (a loaded CI machine, unoptimised test builds); a quadratic path would take minutes.

use std::time::{Duration, Instant};

use ptx_parser::parse;

const LIMIT: Duration = Duration::from_secs(20);

fn timed(what: &str, src: &str) -> ptx_parser::Parsed {
    let start = Instant::now();
    let parsed = parse(src);
    let elapsed = start.elapsed();
    eprintln!("{what}: {} bytes in {elapsed:?}, {} diagnostics", src.len(), parsed.diagnostics.len());
    assert!(elapsed < LIMIT, "{what}: {} bytes took {elapsed:?}", src.len());
    parsed
}

/// A valid nvcc-style module of at least `min` bytes.
fn valid_module(min: usize) -> String {
    let mut s = String::from(".version 7.0\n.target sm_70\n.address_size 64\n");
    let mut k = 0;
    while s.len() < min {
        s.push_str(&format!(
            ".visible .entry k{k}(.param .u64 p)\n{{\n\t.reg .b32 %r<8>;\n\t.reg .pred %p<2>;\n\t.reg .b64 %rd<4>;\n"
        ));
        for i in 0..40 {
            s.push_str(&format!(
                "$L__BB{k}_{i}:\n\t.loc 1 {i} 5\n\tld.param.u64 %rd1, [p];\n\tld.global.u32 %r1, [%rd1+{i}];\n\
                 \tadd.s32 %r2, %r1, {i};\n\tsetp.lt.s32 %p1, %r2, 100;\n\t@%p1 bra $L__BB{k}_{i};\n"
            ));
        }
        s.push_str("\tret;\n}\n");
        k += 1;
    }
    s
}

#[test]
fn five_megabyte_module_parses_cleanly() {
    let src = valid_module(5 << 20);
    let parsed = timed("valid module", &src);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics.first());
    assert!(parsed.module.items.len() > 500);
}

#[test]
fn pathological_megabyte_inputs_stay_linear() {
    let mb = 1 << 20;
    let cases: Vec<(&str, String)> = vec![
        ("open braces", "{".repeat(5 * mb)),
        ("open braces in a body", format!(".entry k() {}", "{".repeat(5 * mb))),
        ("open parens in an operand", format!(".entry k() {{ add.u32 a, {}", "(".repeat(5 * mb))),
        ("unary minus chain", format!(".global .u32 x = {}1;", "-".repeat(5 * mb))),
        ("unknown characters", "#".repeat(5 * mb)),
        ("stray semicolons at module level", ";".repeat(5 * mb)),
        ("instructions at module level", "add.u32 a, b, c;\n".repeat(mb / 4)),
        (".loc on one line", ".loc 1 2 3, a b ".repeat(mb / 4)),
        (".loc in a body on one line", format!(".entry k() {{ {} }}", ".loc 1 2 3, a ".repeat(mb / 4))),
        ("missing semicolons", format!(".entry k() {{ {} }}", "add.u32 a, b, c\n".repeat(mb / 4))),
        ("unclosed section", format!(".section .debug_info {{ {}", ".b8 1, 2, 3\n".repeat(mb / 4))),
        ("unterminated strings", "\"abc\n".repeat(mb)),
        ("long expression", format!(".global .u32 x = 1{};", " + 1".repeat(mb))),
        ("long vector", format!(".entry k() {{ mov.b32 {{{}a}}, b; }}", "a, ".repeat(mb))),
    ];
    for (what, src) in &cases {
        let parsed = timed(what, src);
        assert!(parsed.diagnostics.len() <= src.len() + 1, "{what}");
    }
}
