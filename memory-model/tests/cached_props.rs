//! Property test: random requests and random choice sequences on small caches (many deferrals
//! and evictions); the invariants of digest §4 (I1-I9, in their per-byte form) hold after every
//! step, every offered step changes the state, and no well-formed request gets stuck.

mod common;

use common::*;
use memory_model::cached::{
    CacheConfig, CacheOp, Cached, MemChoice, MemOrder, MicroSteps, Request, RequestKind, Scope,
    SilentActions,
};
use memory_model::{MemSpace, MemorySystem, Who};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hasher};

fn hash(c: &Cached) -> u64 {
    let mut h = DefaultHasher::new();
    c.hash_state(&mut h);
    h.finish()
}

fn request(kind: u8, who: Who, sm: u32, base: u64, slot: u8, v: u64) -> Request {
    let addr = base + (slot as u64 % 6) * 12 / 4 * 4;
    let order = [
        MemOrder::Weak,
        MemOrder::Relaxed,
        MemOrder::Acquire,
        MemOrder::Release,
    ][v as usize % 4];
    match kind % 11 {
        0 => ld(
            who,
            sm,
            MemSpace::Global,
            addr,
            None,
            MemOrder::Weak,
            slot as u32,
        ),
        1 => ld(who, sm, MemSpace::Global, addr, Some(CacheOp::Cs), order, 1),
        2 => ld(who, sm, MemSpace::Global, addr, Some(CacheOp::Cg), order, 2),
        3 => st(who, sm, MemSpace::Global, addr, v, order),
        4 => atom(who, sm, MemSpace::Global, addr, v, 3),
        5 => fence(who, sm),
        6 => atom(who, sm, MemSpace::Shared, (slot as u64 % 4) * 4, 1, 4),
        7 => st(
            who,
            sm,
            MemSpace::Shared,
            (slot as u64 % 4) * 4,
            v,
            MemOrder::Weak,
        ),
        8 => st(
            who,
            sm,
            MemSpace::Local,
            (slot as u64 % 6) * 8,
            v,
            MemOrder::Weak,
        ),
        10 => ld(
            who,
            sm,
            MemSpace::Shared,
            (slot as u64 % 4) * 4,
            None,
            MemOrder::Weak,
            6,
        ),
        _ => ld(
            who,
            sm,
            MemSpace::Local,
            (slot as u64 % 6) * 8,
            None,
            MemOrder::Weak,
            5,
        ),
    }
}

fn check_invariants(c: &Cached, cfg: &CacheConfig) {
    let ops: BTreeSet<u32> = c.ops().iter().map(|o| o.id).collect();
    let (l1_len, l2_len) = c.line_count();
    // I2: capacities (unused lines are implicit).
    assert!(
        l1_len.iter().all(|n| *n <= cfg.l1_lines as usize),
        "{l1_len:?}"
    );
    assert!(l2_len <= cfg.l2_lines as usize);
    let mut lines: Vec<_> = c.l2_lines();
    for sm in 0..cfg.num_sms {
        let l1 = c.l1_lines(sm);
        // I1: at most one live line per key.
        let live: Vec<_> = l1.iter().filter(|l| !l.doomed).map(|l| l.key).collect();
        let uniq: BTreeSet<_> = live.iter().collect();
        assert_eq!(live.len(), uniq.len());
        for l in &l1 {
            // I6: global L1 lines are never dirty.
            assert!(l.space != MemSpace::Global || l.dirty == 0, "{l:?}");
            // A10 repair: doomed lines are pinned.
            assert!(!l.doomed || !l.pins.is_empty(), "{l:?}");
        }
        lines.extend(l1);
    }
    for l in &lines {
        // I4: dirty ⊆ valid.
        assert_eq!(l.dirty & !l.valid, 0, "{l:?}");
        // I7: a line waiting for data is pinned.
        assert!(
            !(l.fill_pending || l.valid == 0) || !l.pins.is_empty(),
            "{l:?}"
        );
        // Pins are duplicate-free; I9: they name in-flight ops.
        let p: BTreeSet<_> = l.pins.iter().collect();
        assert_eq!(p.len(), l.pins.len());
        assert!(l.pins.iter().all(|p| ops.contains(p)), "{l:?} {ops:?}");
    }
    for o in c.ops() {
        assert!(o.deps.iter().all(|d| ops.contains(d) && *d != o.id));
    }
    for k in c.locks() {
        assert!(ops.contains(&k.holder));
    }
}

/// The memory of the random runs: 64 global bytes at `base` and the shared memory of blocks 0
/// and 1; three threads, two in block 0 (SM 0) and one in block 1 (SM 1).
fn three_threads_memory() -> (memory_model::Flat, u64, [(Who, u32); 3]) {
    let (mut dram, base) = dram_with(&[0; 64]);
    dram.create_block(0, 64, 3);
    dram.create_block(1, 64, 3);
    (dram, base, [(who(0, 0), 0), (who(0, 1), 0), (who(1, 0), 1)])
}

/// The three threads of [`three_threads_memory`], each issuing its requests of `reqs`
/// (`(kind, thread, slot, value)`, see [`request`]) in order.
fn three_threads(cfg: CacheConfig, reqs: &[(u8, u8, u8, u64)], loads_at_issue: bool) -> Sys {
    let (dram, base, whos) = three_threads_memory();
    let mut threads: Vec<Thread> = whos
        .iter()
        .map(|(w, _)| Thread {
            who: *w,
            instrs: Vec::new(),
        })
        .collect();
    for (i, &(kind, t, slot, v)) in reqs.iter().enumerate() {
        let (w, sm) = whos[t as usize];
        let mut r = request(kind, w, sm, base, slot, v);
        // A register of its own for each shared load: the machine's scoreboard never lets two
        // loads of a thread write one register at once.
        if let (MemSpace::Shared, RequestKind::Load { dest: Some(d), .. }) = (r.space, &mut r.kind)
        {
            d.reg = 100 + i as u32;
        }
        threads[t as usize].instrs.push(Instr::Issue(r));
    }
    let start = if loads_at_issue {
        Sys::with_loads_at_issue
    } else {
        Sys::new
    };
    start(Cached::new(cfg), dram, threads)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_on_random_runs(
        reqs in proptest::collection::vec((0u8..10, 0u8..3, 0u8..12, 1u64..1000), 1..9),
        picks in proptest::collection::vec(any::<u16>(), 0..200),
        line in prop_oneof![Just(8u32), Just(16), Just(64)],
        small in any::<bool>(),
        thesis in any::<bool>(),
    ) {
        let cfg = CacheConfig {
            line_bytes: line,
            l1_lines: if small { 1 } else { 3 },
            l2_lines: if small { 2 } else { 4 },
            num_sms: 2,
            shared_banks: 4,
            silent: SilentActions::All,
            micro_steps: if thesis { MicroSteps::Thesis } else { MicroSteps::Folded },
        };
        let mut s = three_threads(cfg, &reqs, false);
        check_invariants(&s.cached, &cfg);
        for p in picks {
            let cs = s.choices();
            if cs.is_empty() {
                break;
            }
            let c = cs[p as usize % cs.len()];
            let before = hash(&s.cached);
            let rep = s.take(c);
            prop_assert_ne!(before, hash(&s.cached), "{} changed nothing", c);
            if let Some((id, _)) = rep.ended {
                // I8: an ended op holds no pin and no lock.
                let on_line = |l: &memory_model::cached::LineView| l.pins.contains(&id);
                prop_assert!(!s.cached.l2_lines().iter().any(on_line));
                prop_assert!(!(0..2).any(|sm| s.cached.l1_lines(sm).iter().any(on_line)));
                prop_assert!(!s.cached.locks().iter().any(|k| k.holder == id));
            }
            check_invariants(&s.cached, &cfg);
            check_indexes(&s.cached);
        }
    }

    /// Making room is no silent action (issue 15, "false deadlock"): whatever `--silent`
    /// allows, caches of one or two lines full of dirty or pinned lines never leave an op in
    /// flight with nothing enabled; every run ends with every request done.
    #[test]
    fn small_caches_never_deadlock(
        reqs in proptest::collection::vec((0u8..10, 0u8..3, 0u8..12, 1u64..1000), 1..9),
        picks in proptest::collection::vec(any::<u16>(), 400),
        line in prop_oneof![Just(8u32), Just(16), Just(64)],
        silent in prop_oneof![
            Just(SilentActions::None),
            Just(SilentActions::Observable),
            Just(SilentActions::All)
        ],
        thesis in any::<bool>(),
    ) {
        let cfg = CacheConfig {
            line_bytes: line,
            l1_lines: 1,
            l2_lines: 1,
            num_sms: 2,
            shared_banks: 4,
            silent,
            micro_steps: if thesis { MicroSteps::Thesis } else { MicroSteps::Folded },
        };
        let mut s = three_threads(cfg, &reqs, false);
        // Ops first (a silent rule may be offered forever), so the run ends.
        for p in picks {
            let cs = s.choices();
            let steps: Vec<_> = cs
                .iter()
                .filter(|c| matches!(c, memory_model::cached::MemChoice::Step { .. }))
                .copied()
                .collect();
            if steps.is_empty() {
                prop_assert!(s.cached.idle(), "ops in flight, none enabled: {:?}", s.cached.ops());
                break;
            }
            s.take(if p % 4 == 0 { cs[p as usize % cs.len()] } else { steps[p as usize % steps.len()] });
            check_indexes(&s.cached);
        }
        prop_assert!(s.cached.idle(), "still in flight after 400 steps");
    }
}

/// The incremental indexes equal their from-scratch computation, and so do the enabled steps.
fn check_indexes(c: &Cached) {
    assert!(c.indexes_consistent(), "indexes drifted");
    let mut all = Vec::new();
    c.enabled(&mut all);
    let steps: Vec<_> = all
        .into_iter()
        .filter(|m| matches!(m, memory_model::cached::MemChoice::Step { .. }))
        .collect();
    let mut scratch = Vec::new();
    c.enabled_steps_from_scratch(&mut scratch);
    assert_eq!(
        steps, scratch,
        "incremental enabled steps differ from the scan"
    );
}

/// Hash of the memory state: caches, ops, locks and DRAM (shared and local bytes included).
fn full_hash(c: &Cached, dram: &memory_model::Flat) -> u64 {
    let mut h = DefaultHasher::new();
    c.hash_state(&mut h);
    dram.hash_state(&mut h);
    h.finish()
}

/// Takes `a` then `b`; `None` if `b` is not enabled after `a`. Returns the state hash and the
/// values delivered, by op.
fn both(
    c: &Cached,
    dram: &memory_model::Flat,
    a: memory_model::cached::MemChoice,
    b: memory_model::cached::MemChoice,
) -> Option<(u64, Vec<(u32, u64)>)> {
    let (mut c, mut dram) = (c.clone(), dram.clone());
    let mut delivered = Vec::new();
    for (i, x) in [a, b].into_iter().enumerate() {
        let mut en = Vec::new();
        c.enabled(&mut en);
        if i == 1 && !en.contains(&x) {
            return None;
        }
        let r = c.step(x, &mut dram).expect("enabled choices step");
        if let (Some(d), memory_model::cached::MemChoice::Step { op }) = (r.delivered, x) {
            delivered.push((op, d.value));
        }
    }
    delivered.sort();
    Some((full_hash(&c, &dram), delivered))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    /// Footprints (issue 15 item 4): two memory choices that `independent` calls commuting do
    /// commute: after either one the other is still enabled, and both orders reach the same
    /// state (by state hash, DRAM included) with the same values delivered.
    #[test]
    fn independent_choices_commute(
        reqs in proptest::collection::vec((0u8..10, 0u8..3, 0u8..12, 1u64..1000), 1..9),
        picks in proptest::collection::vec(any::<u16>(), 0..60),
        line in prop_oneof![Just(8u32), Just(16), Just(64)],
        small in any::<bool>(),
        thesis in any::<bool>(),
        stage in any::<bool>(),
    ) {
        let cfg = CacheConfig {
            line_bytes: line,
            l1_lines: if small { 1 } else { 3 },
            l2_lines: if small { 2 } else { 4 },
            num_sms: 2,
            shared_banks: 4,
            silent: SilentActions::All,
            micro_steps: if thesis { MicroSteps::Thesis } else { MicroSteps::Folded },
        };
        let (mut dram, base, whos) = three_threads_memory();
        let mut c = Cached::new(cfg);
        // The per-SM store stage (deviation D31), with `.cta`, `.gpu` and unscoped requests
        // (fences included), so that `.cta` releases skip staged stores and wider releases
        // wait for the stage.
        c.set_sm_stage(stage);
        for &(kind, t, slot, v) in &reqs {
            let (w, sm) = whos[t as usize];
            let mut r = request(kind, w, sm, base, slot, v);
            if stage {
                r.scope = [None, Some(Scope::Cta), Some(Scope::Gpu)][(v as usize / 4) % 3];
            }
            c.issue(r);
        }
        let mut independent_pairs = 0usize;
        for p in picks {
            let mut en = Vec::new();
            c.enabled(&mut en);
            if en.is_empty() {
                break;
            }
            for (i, &a) in en.iter().enumerate() {
                for &b in &en[i + 1..] {
                    if !c.independent(a, b) {
                        continue;
                    }
                    prop_assert!(c.independent(b, a), "independence is symmetric");
                    independent_pairs += 1;
                    let ab = both(&c, &dram, a, b);
                    let ba = both(&c, &dram, b, a);
                    prop_assert!(ab.is_some(), "{a} disables {b}");
                    prop_assert!(ba.is_some(), "{b} disables {a}");
                    prop_assert_eq!(ab, ba, "{} and {} do not commute", a, b);
                }
            }
            let x = en[p as usize % en.len()];
            c.step(x, &mut dram).expect("enabled choices step");
        }
        let _ = independent_pairs;
    }
}

/// Brings `mirror`, a copy of `c`'s enabled list as of generation `*seen`, up to date by
/// replaying the list's edits (as the machine does), or copying the list when the edits do not
/// start at `*seen`.
fn follow(c: &mut Cached, mirror: &mut Vec<MemChoice>, seen: &mut u64) {
    use memory_model::cached::EnabledEdit;
    match c.enabled_edits(*seen) {
        Some((len, edits)) => {
            assert_eq!(mirror.len(), len, "the edits start where the mirror is");
            for &e in edits {
                match e {
                    EnabledEdit::Push(m) => mirror.push(m),
                    EnabledEdit::SwapRemove(k) => {
                        mirror.swap_remove(k as usize);
                    }
                }
            }
        }
        None => *mirror = c.enabled_unordered().to_vec(),
    }
    *seen = c.generation();
    c.clear_enabled_edits();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The enabled list's edit log (issue 15: the machine mirrors the list through it): a
    /// mirror that replays the edits after every issue and step equals the list, the list is
    /// the set [`Cached::enabled`] gives (no choice twice), and membership (`offers`) agrees.
    #[test]
    fn edits_mirror_the_enabled_list(
        reqs in proptest::collection::vec((0u8..10, 0u8..3, 0u8..12, 1u64..1000), 1..12),
        picks in proptest::collection::vec(any::<u16>(), 0..80),
        line in prop_oneof![Just(8u32), Just(16), Just(64)],
        small in any::<bool>(),
        silent in prop_oneof![
            Just(SilentActions::None),
            Just(SilentActions::Observable),
            Just(SilentActions::All)
        ],
        thesis in any::<bool>(),
    ) {
        let cfg = CacheConfig {
            line_bytes: line,
            l1_lines: if small { 1 } else { 3 },
            l2_lines: if small { 2 } else { 4 },
            num_sms: 2,
            shared_banks: 4,
            silent,
            micro_steps: if thesis { MicroSteps::Thesis } else { MicroSteps::Folded },
        };
        let (mut dram, base, whos) = three_threads_memory();
        let mut c = Cached::new(cfg);
        let (mut mirror, mut seen) = (Vec::new(), c.generation());
        let mut pending = reqs.iter();
        for p in picks {
            // Issues interleaved with steps: every third pick issues the next request.
            if p % 3 == 0 && let Some(&(kind, t, slot, v)) = pending.next() {
                let (w, sm) = whos[t as usize];
                c.issue(request(kind, w, sm, base, slot, v));
            } else {
                let en = c.enabled_unordered();
                if en.is_empty() {
                    continue;
                }
                let x = en[p as usize % en.len()];
                c.step(x, &mut dram).expect("enabled choices step");
            }
            follow(&mut c, &mut mirror, &mut seen);
            prop_assert_eq!(&mirror[..], c.enabled_unordered());
            let mut sorted = mirror.clone();
            sorted.sort();
            let mut canonical = Vec::new();
            c.enabled(&mut canonical);
            canonical.sort();
            prop_assert_eq!(&sorted, &canonical);
            sorted.dedup();
            prop_assert_eq!(sorted.len(), mirror.len(), "a choice listed twice");
            prop_assert!(mirror.iter().all(|m| c.offers(m)));
        }
    }
}

/// A value delivered: (block, thread, register) and the value.
type Delivered = ((u32, u32, u32), u64);

/// What a finished random run shows: the values delivered, global memory through L2, and the
/// shared memory of both blocks.
fn observe_all(s: &Sys) -> (Vec<Delivered>, Vec<u64>) {
    let regs = s.regs.iter().map(|(k, v)| (*k, *v)).collect();
    let (_, base, whos) = three_threads_memory();
    let mut mem: Vec<u64> = (0..16).map(|i| s.global(base + 4 * i)).collect();
    let mut dram = s.dram.clone();
    for (w, _) in [whos[0], whos[2]] {
        for a in 0..4 {
            mem.push(dram.load(w, MemSpace::Shared, a * 4, 4).unwrap_or(u64::MAX));
        }
    }
    (regs, mem)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    /// Folded micro steps (issue 15) keep the behaviours: on random programs of three threads
    /// (global, shared and local loads, stores, atomics, fences; small caches that defer and
    /// evict), the exhaustive explorations with the thesis's micro steps and with the folded
    /// ones reach the same outcomes (values delivered, final global and shared memory) and
    /// agree on deadlocks, and the folded one never has more states. So do the folded steps
    /// with weak shared loads performed at issue where allowed (deviation D30), with at most
    /// the folded steps' states.
    #[test]
    fn folding_keeps_the_outcomes(
        reqs in proptest::collection::vec((0u8..11, 0u8..3, 0u8..12, 1u64..1000), 1..7),
        line in prop_oneof![Just(8u32), Just(64)],
        small in any::<bool>(),
        silent in prop_oneof![Just(SilentActions::None), Just(SilentActions::Observable)],
    ) {
        let explore_with = |micro_steps, at_issue| {
            let cfg = CacheConfig {
                line_bytes: line,
                l1_lines: if small { 1 } else { 3 },
                l2_lines: if small { 2 } else { 4 },
                num_sms: 2,
                shared_banks: 4,
                silent,
                micro_steps,
            };
            explore_bounded(three_threads(cfg, &reqs, at_issue), observe_all, 300_000)
        };
        let Some(thesis) = explore_with(MicroSteps::Thesis, false) else {
            return Ok(());
        };
        let folded = explore_with(MicroSteps::Folded, false).expect("folded has at most the states");
        prop_assert_eq!(&thesis.outcomes, &folded.outcomes);
        prop_assert_eq!(thesis.deadlocks > 0, folded.deadlocks > 0);
        prop_assert!(folded.states <= thesis.states, "{} > {}", folded.states, thesis.states);
        let at_issue = explore_with(MicroSteps::Folded, true).expect("at most the folded states");
        prop_assert_eq!(&thesis.outcomes, &at_issue.outcomes);
        prop_assert_eq!(thesis.deadlocks > 0, at_issue.deadlocks > 0);
        prop_assert!(at_issue.states <= folded.states, "{} > {}", at_issue.states, folded.states);
    }
}
