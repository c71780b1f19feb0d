//! Accesses of words private to their warp (`Machine::accesses_only_private_words`), folded as
//! invisible steps by the stateful search under persistent sets: they must reduce states where
//! every word a warp touches is its own, keep every interleaving where two blocks touch one
//! word, and give up (search again without the rule) when an access whose address the analysis
//! could not compute lands on another warp's word. Each is compared with the full search.

use explore::{Exploration, Level, Limits, Por, SettledLoads, explore_with};
use scheduler::Stop;
use scheduler::outcome::Observe;
use semantics::machine::{
    ArgValue, BufferSpec, FootprintKind, LaunchConfig, Machine, MachineConfig,
};
use std::sync::Arc;

/// Each block writes `out[ctaid * stride]` (its own word when `stride` is 1, one word for all
/// when it is 0), takes a ticket from `count`, and writes the ticket over it. `DEAD` is a block
/// of code no thread reaches (`never` is 0); `TAIL` runs last.
const KERNEL: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 count, .param .u64 stride, .param .u64 never,
                  .param .u64 seen)
{
    .reg .pred %p<3>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<14>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [count];
    ld.param.u64 %rd3, [stride];
    ld.param.u64 %rd8, [never];
    ld.param.u64 %rd12, [seen];
    mov.u32 %r1, %ctaid.x;
    cvt.u64.u32 %rd4, %r1;
    mul.lo.s64 %rd5, %rd4, %rd3;
    shl.b64 %rd6, %rd5, 2;
    add.s64 %rd7, %rd1, %rd6;
    add.u32 %r2, %r1, 1;
    st.global.u32 [%rd7], %r2;
    atom.global.add.u32 %r3, [%rd2], 1;
    st.global.u32 [%rd7], %r3;
    TAIL
    setp.eq.u64 %p1, %rd8, 0;
    @%p1 bra DONE;
    DEAD
DONE:
    ret;
}
"#;

/// Never reached: an access through the kernel's own pointer.
const DEAD_KNOWN: &str = "ld.global.u32 %r4, [%rd2];";
/// Never reached: an access through a pointer loaded from memory (its address and its
/// provenance unknown), which makes every word of the launch not private.
const DEAD_UNKNOWN: &str = "ld.global.u64 %rd9, [%rd2];\n    ld.global.u32 %r4, [%rd9];";
/// Block 0 reads `count`, the others `count + never`... through a `selp` (address unknown,
/// provenance `count` and `never`), and each block records what it read in `seen[ctaid]`.
const TAIL_SELP: &str = "setp.eq.u32 %p2, %r1, 0;
    add.s64 %rd10, %rd2, %rd8;
    selp.b64 %rd11, %rd2, %rd10, %p2;
    ld.global.u32 %r5, [%rd11];
    mul.wide.u32 %rd13, %r1, 4;
    add.s64 %rd13, %rd12, %rd13;
    st.global.u32 [%rd13], %r5;";

fn machine(dead: &str, tail: &str, blocks: u32, stride: u64, never: Option<u64>) -> Machine {
    let text = KERNEL.replace("DEAD", dead).replace("TAIL", tail);
    let parsed = ptx_parser::parse(&text);
    let program = Arc::new(semantics::load(&parsed.module, &text).unwrap().0);
    let buffer = |name: &str, words: usize| BufferSpec {
        name: name.into(),
        elem: ptx_parser::ScalarType::U32,
        bytes: vec![0; 4 * words],
    };
    let launch = |never: u64| LaunchConfig {
        args: vec![
            ArgValue::Buffer(0),
            ArgValue::Buffer(1),
            ArgValue::Scalar {
                ty: ptx_parser::ScalarType::U64,
                bits: stride,
            },
            ArgValue::Scalar {
                ty: ptx_parser::ScalarType::U64,
                bits: never,
            },
            ArgValue::Buffer(2),
        ],
        buffers: vec![
            buffer("out", blocks as usize),
            buffer("count", 1),
            buffer("seen", blocks as usize),
        ],
        ..LaunchConfig::kernel_1d("k", blocks, 1)
    };
    let config = MachineConfig::default();
    let m = Machine::new(program.clone(), &launch(0), &config).unwrap();
    // The layout does not depend on the arguments: `count + (out - count)` is `out[0]`.
    let never = never.unwrap_or_else(|| {
        m.buffer_address(0)
            .unwrap()
            .wrapping_sub(m.buffer_address(1).unwrap())
    });
    Machine::new(program, &launch(never), &config).unwrap()
}

fn observe() -> Observe {
    Observe {
        buffers: vec![0, 1, 2],
        variables: Vec::new(),
        registers: Vec::new(),
    }
}

fn search(m: &Machine, por: Por) -> Exploration {
    let x = explore_with(
        m,
        Level::Blocks,
        &observe(),
        Limits::default(),
        por,
        &Stop::never(),
    )
    .unwrap();
    assert_eq!(x.bound_hit, None);
    x
}

fn outcomes(x: &Exploration) -> Vec<String> {
    x.outcomes.keys().map(|o| format!("{o:?}")).collect()
}

/// The reduced search of `m` against the full one: the same outcomes, verdicts and lassos.
fn reduced_equals_full(what: &str, m: &Machine) -> Exploration {
    let full = search(m, Por::None);
    let reduced = search(m, Por::Persistent);
    assert_eq!(outcomes(&reduced), outcomes(&full), "{what}: outcomes");
    for model in explore::progress::ProgressModel::ALL {
        if Por::Persistent.preserves(model) {
            assert_eq!(
                reduced.verdict(model),
                full.verdict(model),
                "{what} {model}"
            );
            assert_eq!(
                reduced.lasso(model).is_some(),
                full.lasso(model).is_some(),
                "{what} {model}"
            );
        }
    }
    reduced
}

#[test]
fn stores_to_a_warps_own_words_are_invisible() {
    for blocks in [2, 3] {
        let private = machine(DEAD_KNOWN, "", blocks, 1, Some(0));
        let unknown = machine(DEAD_UNKNOWN, "", blocks, 1, Some(0));
        let reduced = reduced_equals_full("private", &private);
        let baseline = reduced_equals_full("unknown", &unknown);
        // The two programs run the same steps (the dead code is never reached); only the
        // unknown address in the second keeps its stores visible.
        assert_eq!(outcomes(&reduced), outcomes(&baseline));
        assert!(
            reduced.states() < baseline.states(),
            "{blocks} blocks: {} states with private words, {} without",
            reduced.states(),
            baseline.states()
        );
        assert_eq!(reduced.settled_loads, SettledLoads::Applied);
    }
}

#[test]
fn stores_of_several_blocks_to_one_word_stay_visible() {
    let m = machine(DEAD_KNOWN, "", 2, 0, Some(0));
    let x = reduced_equals_full("one word", &m);
    // Both orders of the last two stores: `out[0]` ends as either block's ticket, 0 or 1. A fold
    // that took the stores as invisible would keep only the order of the tickets (1).
    assert!(x.outcomes.len() >= 2, "{:?}", outcomes(&x));
}

#[test]
fn an_unknown_address_that_lands_on_another_warps_word_makes_the_search_run_again() {
    // `never` = 0: block 1 reads `count`, which the analysis assumed of its provenance.
    let stays = machine("", TAIL_SELP, 2, 1, Some(0));
    assert_eq!(
        reduced_equals_full("stays", &stays).settled_loads,
        SettledLoads::Applied
    );
    // `never` = out - count: block 1 reads `out[0]`, block 0's private word.
    let escapes = machine("", TAIL_SELP, 2, 1, None);
    let x = reduced_equals_full("escapes", &escapes);
    assert_eq!(x.settled_loads, SettledLoads::FellBack);
    // It reads block 0's word before its first store, between its stores, or after them.
    let full = search(&escapes, Por::None);
    assert!(full.outcomes.len() >= 3, "{:?}", outcomes(&full));
}

/// Runs every corpus kernel (both warp models) under a few pseudo-random schedules and checks
/// every step against the launch's private words: no access touches a byte the analysis gave to
/// another warp. An address form that differs from the address a lane computes would show here
/// as an access to another warp's word (or, where the form named nobody's word, as an access no
/// other warp's enumeration claims, which the search's check catches the same way). At least
/// some steps of the corpus must access only private words, or the check tests nothing.
#[test]
fn corpus_runs_keep_off_other_warps_private_words() {
    let mut private_steps = 0usize;
    let mut kernels_with_private = std::collections::BTreeSet::new();
    for (name, m, _) in corpus::corpus_machines() {
        for seed in 0..3u64 {
            let mut m = m.clone();
            let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            for _ in 0..20_000 {
                if m.termination().is_some() {
                    break;
                }
                let enabled = m.enabled().to_vec();
                if enabled.is_empty() {
                    break;
                }
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let c = enabled[(state % enabled.len() as u64) as usize];
                assert!(
                    m.respects_private_words(&c),
                    "{name} seed {seed}: {c:?} touches another warp's private word"
                );
                let global = matches!(
                    m.footprint(&c).kind,
                    FootprintKind::Memory { global_reads, global_writes, .. }
                        if global_reads.is_some() || global_writes.is_some()
                );
                if global && m.accesses_only_private_words(&c) {
                    private_steps += 1;
                    kernels_with_private.insert(name.clone());
                }
                if m.step(&c).is_err() {
                    break;
                }
            }
        }
    }
    println!("private steps {private_steps} in {kernels_with_private:?}");
    assert!(kernels_with_private.len() >= 3, "{kernels_with_private:?}");
}
