//! The memory seam (`MemoryEnv`): flat memory performs a request at once and offers no memory
//! choice; cached memory keeps it in flight over its own DRAM until its micro steps ran; the
//! `Memory` the machine holds answers as the environment it holds.

mod common;

use common::*;
use memory_model::cached::{MemOrder, SilentActions};
use memory_model::{CachedMemory, Issued, MemSpace, Memory, MemoryEnv};

const G: MemSpace = MemSpace::Global;

#[test]
fn flat_memory_performs_a_request_at_once() {
    let (dram, base) = dram_with(&[5, 0]);
    let mut m = Memory::Flat(dram);
    let w = who(0, 0);
    assert!(m.performs_accesses_at_once());
    assert!(!m.in_flight_space(G));
    assert_eq!(
        m.issue(st(w, 0, G, base + 4, 9, MemOrder::Weak)),
        Issued::Performed(Ok(None))
    );
    assert_eq!(
        m.issue(ld(w, 0, G, base + 4, None, MemOrder::Weak, 1)),
        Issued::Performed(Ok(Some(9)))
    );
    // The atomic's old value comes back and its new one (5 + 3) is stored.
    assert_eq!(
        m.issue(atom(w, 0, G, base, 3, 2)),
        Issued::Performed(Ok(Some(5)))
    );
    assert_eq!(m.pages().read_global(base)[..4], 8u32.to_le_bytes());
    assert!(m.idle() && m.enabled_unordered().is_empty() && m.generation() == 0);
    let out_of_bounds = m.issue(ld(w, 0, G, base + 4096, None, MemOrder::Weak, 1));
    assert!(matches!(out_of_bounds, Issued::Performed(Err(_))));
}

#[test]
fn flat_memory_refuses_a_memory_choice() {
    let (dram, _) = dram_with(&[0]);
    let mut m = Memory::Flat(dram);
    let choice = memory_model::cached::MemChoice::Step { op: 0 };
    assert!(!m.offers(&choice));
    assert!(m.step(choice).is_err());
}

#[test]
fn cached_memory_keeps_a_request_in_flight_until_its_steps_ran() {
    let (dram, base) = dram_with(&[0, 0]);
    let mut m = Memory::Cached(Box::new(CachedMemory::new(
        dram,
        config_folded(SilentActions::None),
    )));
    let w = who(0, 0);
    assert!(!m.performs_accesses_at_once() && m.reads_depend_on_sm());
    assert!(m.in_flight_space(G) && !m.in_flight_space(MemSpace::Local));
    let Issued::InFlight(op) = m.issue(st(w, 0, G, base, 7, MemOrder::Weak)) else {
        panic!("a cached store is not performed at once");
    };
    assert_eq!(m.op_request(op).map(|r| r.who), Some(w));
    assert!(!m.idle() && m.any_thread_busy(0, 0, 1));
    // DRAM still holds the old bytes; the store reaches what a thread reads only by its steps.
    let mut steps = 0;
    while !m.idle() {
        let choice = m.enabled_unordered()[0];
        m.step(choice).expect("a store's micro step");
        steps += 1;
        assert!(steps < 100, "the store never ended");
    }
    let mut seen = m.pages().read_global(base);
    m.observe_global(base, &mut seen);
    assert_eq!(seen[..4], 7u32.to_le_bytes());
    assert!(m.cached().is_some());
}

#[test]
fn a_load_delivers_its_value_in_a_later_step() {
    let (dram, base) = dram_with(&[42]);
    let mut m = Memory::Cached(Box::new(CachedMemory::new(
        dram,
        config_folded(SilentActions::None),
    )));
    let w = who(0, 0);
    assert!(matches!(
        m.issue(ld(w, 0, G, base, None, MemOrder::Weak, 3)),
        Issued::InFlight(_)
    ));
    assert_eq!(m.pending_registers(0, 0), &[(3, 1)]);
    let mut delivered = None;
    while !m.idle() {
        let choice = m.enabled_unordered()[0];
        let report = m.step(choice).expect("a load's micro step");
        delivered = delivered.or(report.delivered.map(|d| d.value));
    }
    assert_eq!(delivered, Some(42));
    assert!(m.pending_registers(0, 0).is_empty());
}
