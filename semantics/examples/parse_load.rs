//! Parses and loads the `load` benchmark's generated 5 MB module once (or a file given as the
//! argument). Wall-clock benchmarks are noisy on shared machines, so front-end changes are
//! compared by instruction counts: `valgrind --tool=callgrind target/release/examples/parse_load`.
//! `parse_load parse` stops after parsing, to count the parser alone; `parse_load time` repeats
//! parse, load and parse+load and prints the best throughput of each (the minimum is the least
//! disturbed by other work on the machine).

use ptx_parser::synthetic::nvcc_style_module;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let source = match args.next() {
        Some(path) => std::fs::read_to_string(path).expect("readable PTX file"),
        None => nvcc_style_module(5 << 20),
    };
    if mode == "gen" {
        return;
    }
    if mode == "time" {
        time(&source);
        return;
    }
    let parsed = ptx_parser::parse(&source);
    assert!(!parsed.has_errors(), "the module parses");
    if mode == "parse" {
        println!("{} bytes parsed", source.len());
        return;
    }
    let (program, _) = semantics::load(&parsed.module, &source).expect("the module loads");
    println!(
        "{} bytes, {} instructions",
        source.len(),
        program.instructions.len()
    );
}

/// Best-of-N throughput of parsing, loading, and both (the AST dropped inside the timing for
/// parse+load, as in the `load` benchmark).
fn time(source: &str) {
    use std::time::{Duration, Instant};
    let mb = source.len() as f64 / 1e6;
    let best = |f: &mut dyn FnMut()| {
        (0..15)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .min()
            .unwrap_or(Duration::MAX)
    };
    let parse = best(&mut || drop(std::hint::black_box(ptx_parser::parse(source))));
    let parsed = ptx_parser::parse(source);
    let mut programs = Vec::new();
    let load = best(&mut || programs.push(semantics::load(&parsed.module, source)));
    programs.clear();
    let both = best(&mut || {
        let parsed = ptx_parser::parse(source);
        programs.push(semantics::load(&parsed.module, source));
    });
    for (what, d) in [("parse", parse), ("load", load), ("parse+load", both)] {
        println!(
            "{what:>10}: {:6.1} MB/s ({:.1} ms)",
            mb / d.as_secs_f64(),
            d.as_secs_f64() * 1e3
        );
    }
}
