//! Parse + load throughput on a generated nvcc-style module of more than 5 MB with many
//! functions (`cargo bench -p semantics --bench load`; divan reports bytes per second).

use divan::counter::BytesCount;
use std::sync::LazyLock;

use ptx_parser::synthetic::nvcc_style_module;

fn main() {
    divan::main();
}

static SOURCE: LazyLock<String> = LazyLock::new(|| nvcc_style_module(5 << 20));

#[divan::bench(sample_count = 10)]
fn parse_and_load(bencher: divan::Bencher) {
    let source: &str = &SOURCE;
    bencher.counter(BytesCount::new(source.len())).bench(|| {
        let parsed = ptx_parser::parse(divan::black_box(source));
        assert!(!parsed.has_errors(), "the generated module parses");
        let loaded = semantics::load(&parsed.module, source);
        assert!(
            loaded.is_ok(),
            "the generated module loads: {:?}",
            loaded.err().map(|d| d[0].message.clone())
        );
        loaded
    });
}

#[divan::bench(sample_count = 10)]
fn load_only(bencher: divan::Bencher) {
    let source: &str = &SOURCE;
    let parsed = ptx_parser::parse(source);
    bencher
        .counter(BytesCount::new(source.len()))
        .bench(|| semantics::load(divan::black_box(&parsed.module), source));
}

#[divan::bench(sample_count = 10)]
fn parse_only(bencher: divan::Bencher) {
    let source: &str = &SOURCE;
    bencher
        .counter(BytesCount::new(source.len()))
        .bench(|| ptx_parser::parse(divan::black_box(source)));
}
