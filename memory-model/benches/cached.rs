//! Cached memory engine throughput (issue 15 item 3): the cost of one memory micro step as the
//! number of in-flight ops grows. Each thread of `blocks` blocks of 256 threads (one SM per
//! block, 16 SMs, the default cache sizes) has a global load of its own word and a store to
//! it in flight; the op steps are taken round-robin from the engine's enabled list (read in
//! place, as the machine does) until every op has ended. Divan's item throughput is micro
//! steps per second; with the enabled set kept incrementally it should not fall as `blocks`
//! grows. Earlier measurements on the shared 2-core machine (1 / 4 / 16 blocks): 7.3k / 1.8k
//! / (not finished) steps/s with scans of every op, 190k / 50k / 11.5k with the indexes and
//! the list recomputed per step. `waiting_on_shared_lines` is the tiled matmul's pattern:
//! many loads waiting for the fill of one line, and flushes that doom pinned lines. The
//! machine-level comparison is `alu` against `alu_cached` in `semantics/benches/machine.rs`
//! and `bench/cached_vs_flat.sh`.

use memory_model::cached::{CacheConfig, Cached, Dest, MemChoice, MemOrder, Request, RequestKind};
use memory_model::{Flat, MemSpace, Who};

fn main() {
    divan::main();
}

const THREADS_PER_BLOCK: u32 = 256;

fn setup(blocks: u32) -> (Cached, Flat) {
    let threads = blocks * THREADS_PER_BLOCK;
    let mut dram = Flat::new(1024);
    let base = dram.alloc_global("g", &vec![0u8; threads as usize * 4]);
    let mut c = Cached::new(CacheConfig::default());
    for t in 0..threads {
        let block = t / THREADS_PER_BLOCK;
        let thread = t % THREADS_PER_BLOCK;
        let who = Who { block, thread };
        let sm = block % 16;
        let addr = base + t as u64 * 4;
        let dest = Dest {
            warp: thread / 32,
            lane: thread % 32,
            reg: 1,
            level: 0,
            signed: false,
            bits: 32,
        };
        let access = |kind| Request {
            who,
            sm,
            kind,
            space: MemSpace::Global,
            addr,
            size: 4,
            order: MemOrder::Weak,
            scope: None,
        };
        c.issue(access(RequestKind::Load {
            cop: None,
            dest: Some(dest),
        }));
        c.issue(access(RequestKind::Store {
            cop: None,
            value: t as u64,
        }));
    }
    (c, dram)
}

/// Steps round-robin through the enabled set until no op is in flight; returns the steps.
fn drain(c: &mut Cached, dram: &mut Flat) -> u64 {
    let mut steps = 0u64;
    let mut next = 0usize;
    while !c.idle() {
        // Round-robin over the op steps in the engine's list (as the machine sees it): silent
        // choices never end an op, and L1 evictions are offered forever.
        let en = c.enabled_unordered();
        let Some(k) = (0..en.len())
            .map(|d| (next + d) % en.len())
            .find(|&i| matches!(en[i], MemChoice::Step { .. }))
        else {
            break;
        };
        let choice = en[k];
        next = k + 1;
        c.step(choice, dram).expect("an enabled choice steps");
        steps += 1;
    }
    steps
}

/// Like [`setup`], but every thread loads one of only 64 words (8 lines), so each line of an
/// SM's L1 has 32 loads of a block waiting for its fill, as the tiles of a matmul do.
fn setup_shared_lines(blocks: u32) -> (Cached, Flat) {
    let threads = blocks * THREADS_PER_BLOCK;
    let mut dram = Flat::new(1024);
    let base = dram.alloc_global("g", &[0u8; 256]);
    let mut c = Cached::new(CacheConfig::default());
    for t in 0..threads {
        let block = t / THREADS_PER_BLOCK;
        let thread = t % THREADS_PER_BLOCK;
        let dest = Dest {
            warp: thread / 32,
            lane: thread % 32,
            reg: 1,
            level: 0,
            signed: false,
            bits: 32,
        };
        c.issue(Request {
            who: Who { block, thread },
            sm: block % 16,
            kind: RequestKind::Load {
                cop: None,
                dest: Some(dest),
            },
            space: MemSpace::Global,
            addr: base + (t % 64) as u64 * 4,
            size: 4,
            order: MemOrder::Weak,
            scope: None,
        });
    }
    (c, dram)
}

/// [`drain`], flushing every SM's L1 every `every` steps (as other blocks' barriers do), so
/// that lines pinned by waiting loads become doomed.
fn drain_flushing(c: &mut Cached, dram: &mut Flat, every: u64) -> u64 {
    let mut steps = 0u64;
    let mut next = 0usize;
    while !c.idle() {
        let en = c.enabled_unordered();
        let Some(k) = (0..en.len())
            .map(|d| (next + d) % en.len())
            .find(|&i| matches!(en[i], MemChoice::Step { .. }))
        else {
            break;
        };
        let choice = en[k];
        next = k + 1;
        c.step(choice, dram).expect("an enabled choice steps");
        steps += 1;
        if steps.is_multiple_of(every) {
            for sm in 0..16 {
                c.flush_l1(sm);
            }
        }
    }
    steps
}

/// Loads waiting on shared lines (issue 15: the tiled matmul's cost per step): the steps of
/// `blocks` blocks of 256 loads of 8 lines, with every L1 flushed every 64 steps. With the
/// waiting reads re-tested on every step of their line and doomed lines found by a pass, a
/// step's cost grew with the waiters.
#[divan::bench(args = [1, 4, 16], sample_count = 5, sample_size = 1)]
fn waiting_on_shared_lines(bencher: divan::Bencher, blocks: u32) {
    let (c, dram) = setup_shared_lines(blocks);
    let steps = {
        let (mut c, mut dram) = (c.clone(), dram.clone());
        drain_flushing(&mut c, &mut dram, 64)
    };
    bencher
        .counter(divan::counter::ItemsCount::new(steps))
        .with_inputs(|| (c.clone(), dram.clone()))
        .bench_local_values(|(mut c, mut dram)| drain_flushing(&mut c, &mut dram, 64));
}

#[divan::bench(args = [1, 4, 16], sample_count = 5, sample_size = 1)]
fn micro_steps(bencher: divan::Bencher, blocks: u32) {
    let (c, dram) = setup(blocks);
    let steps = {
        let (mut c, mut dram) = (c.clone(), dram.clone());
        drain(&mut c, &mut dram)
    };
    bencher
        .counter(divan::counter::ItemsCount::new(steps))
        .with_inputs(|| (c.clone(), dram.clone()))
        .bench_local_values(|(mut c, mut dram)| drain(&mut c, &mut dram));
}

/// The ops of a tiled matmul's tile stores (issue 15, third pass): each thread of `blocks`
/// blocks issues a `st.shared` of its word and the engine steps it at once (one micro step:
/// `writeMem; releaseRegs; end`), block by block. Such an op touches no cache, so what this
/// measures is the engine's own cost per op: the op's slot and indexes at issue, the micro
/// step, its end, and the enabled list kept on both sides. Items are ops.
#[divan::bench(args = [1, 16], sample_count = 5, sample_size = 1)]
fn shared_stores(bencher: divan::Bencher, blocks: u32) {
    let mut dram = Flat::new(1024);
    for b in 0..blocks {
        dram.create_block(b, THREADS_PER_BLOCK as u64 * 4, THREADS_PER_BLOCK);
    }
    let c = Cached::new(CacheConfig::default());
    bencher
        .counter(divan::counter::ItemsCount::new(blocks * THREADS_PER_BLOCK))
        .with_inputs(|| (c.clone(), dram.clone()))
        .bench_local_values(|(mut c, mut dram)| {
            for t in 0..blocks * THREADS_PER_BLOCK {
                let (block, thread) = (t / THREADS_PER_BLOCK, t % THREADS_PER_BLOCK);
                let op = c.issue(Request {
                    who: Who { block, thread },
                    sm: block % 16,
                    kind: RequestKind::Store {
                        cop: None,
                        value: t as u64,
                    },
                    space: MemSpace::Shared,
                    addr: thread as u64 * 4,
                    size: 4,
                    order: MemOrder::Weak,
                    scope: None,
                });
                c.step(MemChoice::Step { op }, &mut dram)
                    .expect("a shared store steps at once");
            }
            c.idle()
        });
}
