//! Test helpers for the cached memory engine: request builders and a tiny exhaustive explorer
//! over `Cached::enabled`/`Cached::step` with a `Flat` as DRAM.
//!
//! A test thread is a list of [`Instr`]: requests are issued as soon as the thread reaches them
//! (as the machine does when no register blocks it), `WaitSelf` waits until the thread has no op
//! in flight (a register dependency or `bar`), `Join(t)` until thread `t` finished everything.
//! The only choices are the memory choices, so the explorer enumerates the memory system's
//! freedom and nothing else.

#![allow(dead_code)]

use memory_model::cached::{
    AtomOp, AtomType, CacheConfig, CacheOp, Cached, Dest, MemChoice, MemOrder, MicroSteps, Request,
    RequestKind, Rmw, SilentActions, StepReport,
};
use memory_model::{Flat, MemSpace, MemorySystem, Who};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

/// The scenarios' caches, with the thesis's micro steps (every `yield` of the listings ends a
/// step, so the scenarios can stop an op between any two of them).
pub fn config(silent: SilentActions) -> CacheConfig {
    CacheConfig {
        line_bytes: 32,
        l1_lines: 4,
        l2_lines: 8,
        num_sms: 2,
        shared_banks: 32,
        silent,
        micro_steps: MicroSteps::Thesis,
    }
}

/// [`config`] with the folded micro steps (the default of `--memory cached`).
pub fn config_folded(silent: SilentActions) -> CacheConfig {
    CacheConfig {
        micro_steps: MicroSteps::Folded,
        ..config(silent)
    }
}

pub fn who(block: u32, thread: u32) -> Who {
    Who { block, thread }
}

fn dest(reg: u32) -> Dest {
    Dest {
        warp: 0,
        lane: 0,
        reg,
        level: 0,
        signed: false,
        bits: 64,
    }
}

pub fn ld(
    w: Who,
    sm: u32,
    space: MemSpace,
    addr: u64,
    cop: Option<CacheOp>,
    order: MemOrder,
    reg: u32,
) -> Request {
    Request {
        who: w,
        sm,
        kind: RequestKind::Load {
            cop,
            dest: Some(dest(reg)),
        },
        space,
        addr,
        size: 4,
        order,
        scope: None,
    }
}

pub fn st(w: Who, sm: u32, space: MemSpace, addr: u64, value: u64, order: MemOrder) -> Request {
    Request {
        who: w,
        sm,
        kind: RequestKind::Store { cop: None, value },
        space,
        addr,
        size: 4,
        order,
        scope: None,
    }
}

pub fn atom(w: Who, sm: u32, space: MemSpace, addr: u64, add: u64, reg: u32) -> Request {
    Request {
        who: w,
        sm,
        kind: RequestKind::Atomic {
            rmw: Rmw {
                op: AtomOp::Add,
                ty: AtomType::U32,
                a: add,
                b: 0,
            },
            dest: Some(dest(reg)),
        },
        space,
        addr,
        size: 4,
        order: MemOrder::Relaxed,
        scope: None,
    }
}

pub fn fence(w: Who, sm: u32) -> Request {
    Request {
        who: w,
        sm,
        kind: RequestKind::Fence,
        space: MemSpace::Global,
        addr: 0,
        size: 4,
        order: MemOrder::AcqRel,
        scope: None,
    }
}

#[derive(Debug, Clone)]
pub enum Instr {
    Issue(Request),
    WaitSelf,
    Join(usize),
    /// Waits until global memory seen through L2 holds `value` (4 bytes) at the address.
    AwaitL2(u64, u64),
}

#[derive(Debug, Clone)]
pub struct Thread {
    pub who: Who,
    pub instrs: Vec<Instr>,
}

/// One explored state.
#[derive(Debug, Clone)]
pub struct Sys {
    pub cached: Cached,
    pub dram: Flat,
    pub threads: Vec<Thread>,
    pub pc: Vec<usize>,
    /// (block, thread, reg) -> delivered value.
    pub regs: BTreeMap<(u32, u32, u32), u64>,
    /// Weak shared loads are performed at issue when [`Cached::load_at_issue`] allows it and
    /// no thread of the block has a shared store or atomic left to issue (the machine's half
    /// of the condition, for these barrier-less threads): deviation D30.
    pub loads_at_issue: bool,
}

impl Sys {
    pub fn new(cached: Cached, dram: Flat, threads: Vec<Thread>) -> Sys {
        let n = threads.len();
        let mut s = Sys {
            cached,
            dram,
            threads,
            pc: vec![0; n],
            regs: BTreeMap::new(),
            loads_at_issue: false,
        };
        s.advance();
        s
    }

    /// [`Sys::new`] performing weak shared loads at issue where allowed (see
    /// [`Sys::loads_at_issue`]).
    pub fn with_loads_at_issue(cached: Cached, dram: Flat, threads: Vec<Thread>) -> Sys {
        let n = threads.len();
        let mut s = Sys {
            cached,
            dram,
            threads,
            pc: vec![0; n],
            regs: BTreeMap::new(),
            loads_at_issue: true,
        };
        s.advance();
        s
    }

    /// Whether a thread of block `block` has a shared store or atomic left to issue.
    fn shared_write_ahead(&self, block: u32) -> bool {
        self.threads.iter().zip(&self.pc).any(|(t, &pc)| {
            t.who.block == block
                && t.instrs[pc..].iter().any(|i| {
                    matches!(i, Instr::Issue(r) if r.space == MemSpace::Shared
                        && !matches!(r.kind, RequestKind::Load { .. } | RequestKind::Fence))
                })
        })
    }

    /// Issues `r`, or performs it at once (see [`Sys::loads_at_issue`]).
    fn issue(&mut self, r: Request) {
        if self.loads_at_issue
            && self.cached.load_at_issue(&r)
            && !self.shared_write_ahead(r.who.block)
        {
            let v = self
                .dram
                .load(r.who, MemSpace::Shared, r.addr, r.size)
                .expect("a shared load in bounds");
            if let RequestKind::Load { dest: Some(d), .. } = r.kind {
                self.regs.insert((r.who.block, r.who.thread, d.reg), v);
            }
        } else {
            self.cached.issue(r);
        }
    }

    fn done(&self, t: usize) -> bool {
        self.pc[t] == self.threads[t].instrs.len() && !self.cached.thread_busy(self.threads[t].who)
    }

    /// Runs every thread as far as it goes without a memory choice.
    pub fn advance(&mut self) {
        loop {
            let mut moved = false;
            for t in 0..self.threads.len() {
                let Some(i) = self.threads[t].instrs.get(self.pc[t]).cloned() else {
                    continue;
                };
                let go = match i {
                    Instr::Issue(r) => {
                        self.issue(r);
                        true
                    }
                    Instr::WaitSelf => !self.cached.thread_busy(self.threads[t].who),
                    Instr::Join(u) => self.done(u),
                    Instr::AwaitL2(addr, value) => {
                        let mut bytes = self.dram.read_global(addr);
                        bytes.truncate(4);
                        bytes.resize(4, 0);
                        self.cached.overlay_global(addr, &mut bytes);
                        u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as u64 == value
                    }
                };
                if go {
                    self.pc[t] += 1;
                    moved = true;
                }
            }
            if !moved {
                return;
            }
        }
    }

    pub fn finished(&self) -> bool {
        (0..self.threads.len()).all(|t| self.done(t))
    }

    pub fn choices(&self) -> Vec<MemChoice> {
        let mut v = Vec::new();
        self.cached.enabled(&mut v);
        v
    }

    pub fn take(&mut self, c: MemChoice) -> StepReport {
        let r = self
            .cached
            .step(c, &mut self.dram)
            .unwrap_or_else(|e| panic!("{c}: stuck: {e:?}"));
        if let Some(d) = r.delivered {
            self.regs
                .insert((d.who.block, d.who.thread, d.dest.reg), d.value);
        }
        self.advance();
        r
    }

    pub fn key(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.cached.hash_state(&mut h);
        self.dram.hash_state(&mut h);
        self.pc.hash(&mut h);
        self.regs.hash(&mut h);
        h.finish()
    }

    /// A global word as the threads see it through L2.
    pub fn global(&self, addr: u64) -> u64 {
        let mut b = [0u8; 4];
        self.dram.read_global_line(addr, &mut b);
        self.cached.overlay_global(addr, &mut b);
        u32::from_le_bytes(b) as u64
    }

    /// The value delivered to `reg` of thread `w` (u64::MAX: none).
    pub fn reg(&self, w: Who, reg: u32) -> u64 {
        self.regs
            .get(&(w.block, w.thread, reg))
            .copied()
            .unwrap_or(u64::MAX)
    }
}

/// What an exploration found.
#[derive(Debug)]
pub struct Explored<O> {
    pub outcomes: BTreeSet<O>,
    /// States with no choice left where some thread was not finished.
    pub deadlocks: usize,
    pub states: usize,
}

/// Every outcome `observe` sees in a finished state reachable from `start`.
pub fn explore<O: Ord>(start: Sys, observe: impl Fn(&Sys) -> O) -> Explored<O> {
    explore_bounded(start, observe, 2_000_000).expect("state space too large")
}

/// [`explore`], or `None` once more than `max` states were seen.
pub fn explore_bounded<O: Ord>(
    start: Sys,
    observe: impl Fn(&Sys) -> O,
    max: usize,
) -> Option<Explored<O>> {
    let mut seen = HashSet::new();
    let mut stack = vec![start];
    let mut out = Explored {
        outcomes: BTreeSet::new(),
        deadlocks: 0,
        states: 0,
    };
    while let Some(s) = stack.pop() {
        if !seen.insert(s.key()) {
            continue;
        }
        out.states += 1;
        if out.states > max {
            return None;
        }
        if s.finished() {
            // Silent rules after the end change no value a thread can see.
            out.outcomes.insert(observe(&s));
            continue;
        }
        let cs = s.choices();
        if cs.is_empty() {
            out.deadlocks += 1;
            continue;
        }
        for c in cs {
            let mut n = s.clone();
            n.take(c);
            stack.push(n);
        }
    }
    Some(out)
}

/// [`explore`] of `threads` over `dram` with both micro-step structures ([`config`] and
/// [`config_folded`]): asserts that folding the invisible yields changes neither the outcomes
/// nor the deadlocks, and that it never adds states; returns the folded exploration.
pub fn explore_both<O: Ord + std::fmt::Debug>(
    silent: SilentActions,
    dram: Flat,
    threads: Vec<Thread>,
    observe: impl Fn(&Sys) -> O,
) -> Explored<O> {
    let thesis = explore(
        Sys::new(Cached::new(config(silent)), dram.clone(), threads.clone()),
        &observe,
    );
    let folded = explore(
        Sys::new(Cached::new(config_folded(silent)), dram, threads),
        &observe,
    );
    assert_eq!(
        thesis.outcomes, folded.outcomes,
        "folded micro steps change the outcomes"
    );
    assert_eq!(
        thesis.deadlocks > 0,
        folded.deadlocks > 0,
        "deadlocks differ"
    );
    assert!(
        folded.states <= thesis.states,
        "folding added states: {} > {}",
        folded.states,
        thesis.states
    );
    folded
}

/// A DRAM with one global buffer of `words` 4-byte words (initial values) at the returned base.
pub fn dram_with(words: &[u32]) -> (Flat, u64) {
    let mut f = Flat::new(1024);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let base = f.alloc_global("g", &bytes);
    (f, base)
}

pub fn issue(r: Request) -> Instr {
    Instr::Issue(r)
}
