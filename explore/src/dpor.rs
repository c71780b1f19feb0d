//! Source-set dynamic partial-order reduction (source-DPOR) for the outcomes search
//! ([`super::dfs`], [`super::dfs::Reduction::SourceDpor`]; Abdulla, Aronis, Jonsson and
//! Sagonas, "Optimal Dynamic Partial Order Reduction", POPL 2014, and "Source Sets: A
//! Foundation for Optimal Dynamic Partial Order Reduction", JACM 64(4) 2017, Algorithm 1).
//!
//! The search keeps the current execution as a sequence of *events*, one per transaction
//! ([`super::fold`]: one enabled choice with the folded invisible steps of its warp and the
//! system choices settled after it). Each event has a *process* ([`Proc`]: the warp whose
//! choice it is; a memory-environment or system choice is its own process) and a footprint
//! ([`super::fold::TransactionFootprint`], or none: dependent with everything). Two events are
//! *dependent* when their footprints are not independent; *happens-before* is the transitive
//! closure of program order (same process) and dependence, in the order of the execution.
//!
//! When the search adds event `p` to the execution `E`, every earlier event `e` that *races*
//! with it (dependent, of another process, and happening before `p` directly, not through a
//! third event) is reversed: at the state `E'` before `e`, with `v` the events of `E` after
//! `e` that do not happen after `e`, followed by `p`, some *initial* of `v` (a process whose
//! first event in `v` has no happens-before predecessor in `v`) must be explored. If none is
//! in `E'`'s backtrack set, one is added ([`Trace::push`]). Sleep sets ([`super::dfs`]) prune
//! the rest: source-DPOR is source sets plus sleep sets.
//!
//! Where the model is richer than the paper's, the search is conservative:
//! * a warp may offer several choices at once (lane groups, indirect-branch targets, extern
//!   results): the warp is the process, and scheduling it at a state explores every awake
//!   choice it offers there (intra-process nondeterminism, as a branch of the process);
//! * a transaction that faulted, that took a system choice (a block issued on the SM an exit
//!   freed, a barrier released), or whose footprint is unknown (memory micro steps of
//!   `--memory cached`, system choices) is dependent with every event, so what it enables or
//!   disables is ordered by happens-before;
//! * under flat memory a fence changes no state: it is judged a step of its own warp
//!   ([`outcome_footprint`]);
//! * when no initial of `v` is enabled at `E'` (an enabling the footprints do not show), every
//!   enabled choice at `E'` is added, the classical fallback (Flanagan and Godefroid, POPL
//!   2005).
//!
//! Stateless only: state caching is unsound with DPOR in general (a cached state's subtree may
//! hold races whose backtrack points the cut would never add), so the search runs it with
//! [`super::dfs::Memo::Stateless`] and its depth bound (litmus tests are acyclic). Asked for a
//! state cache, the search runs DPOR first and lets the sleep-set search with the state cache
//! answer when a schedule reaches the depth bound (a spin loop) or the budget is spent.

use super::fold::TransactionFootprint;
use semantics::machine::{Footprint, FootprintKind};
use traces::Choice;

/// The footprint DPOR judges an event by: the transaction's, except that under flat memory
/// a fence ([`FootprintKind::Memory`] with no span and `fence`) is a step of its own warp
/// only. Flat memory performs every access at once (thesis 5.3.2, rule membar), so a fence
/// changes no state and commutes with every step of every other warp. This holds for the
/// final states and outcomes, which is what the outcomes search computes; a property that
/// orders fences (the race monitors' happens-before) needs the footprint's own ordering, so
/// [`super::coverage`] keeps sleep sets.
pub fn outcome_footprint(fp: TransactionFootprint, flat: bool) -> TransactionFootprint {
    if flat && super::fold::invisible_fence(&fp.last) {
        TransactionFootprint {
            last: Footprint {
                warp: fp.last.warp,
                kind: FootprintKind::Local,
            },
            ..fp
        }
    } else {
        fp
    }
}

/// The process of an event: whose program order it continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proc {
    /// A warp's step (whole warp, lane group, branch target or extern pick).
    Warp(u32, u32),
    /// A system or memory-environment choice: its own process.
    Other(Choice),
}

impl Proc {
    pub fn of(c: &Choice) -> Proc {
        match c.warp() {
            Some((b, w)) => Proc::Warp(b, w),
            None => Proc::Other(*c),
        }
    }
}

/// One executed transaction.
#[derive(Debug, Clone)]
struct Event {
    proc: Proc,
    /// `None`: dependent with every event.
    footprint: Option<TransactionFootprint>,
    /// Bit `j`: event `j` happens before this one (transitively).
    before: Vec<u64>,
}

fn has(bits: &[u64], j: usize) -> bool {
    bits.get(j / 64).is_some_and(|w| w >> (j % 64) & 1 == 1)
}

fn set(bits: &mut Vec<u64>, j: usize) {
    if bits.len() <= j / 64 {
        bits.resize(j / 64 + 1, 0);
    }
    bits[j / 64] |= 1 << (j % 64);
}

fn union(into: &mut Vec<u64>, from: &[u64]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a |= b;
    }
}

fn meets(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).any(|(x, y)| x & y != 0)
}

fn dependent(a: &Option<TransactionFootprint>, b: &Option<TransactionFootprint>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => !a.independent(b),
        _ => true,
    }
}

/// A reversible race found by [`Trace::push`]: at the state before event `at`, one of the
/// processes `initials` (in execution order) must be explored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Race {
    pub at: usize,
    pub initials: Vec<Proc>,
}

/// The current execution with its happens-before relation.
#[derive(Debug, Default)]
pub struct Trace {
    events: Vec<Event>,
}

impl Trace {
    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Back to the first `n` events (the search backtracked to depth `n`).
    pub fn truncate(&mut self, n: usize) {
        self.events.truncate(n);
    }

    /// Appends the event of process `proc` with `footprint` (`None`: dependent with every
    /// event) and returns the races it completes, each with the initials of its reversal
    /// (module header).
    pub fn push(&mut self, proc: Proc, footprint: Option<TransactionFootprint>) -> Vec<Race> {
        let n = self.events.len();
        // Direct predecessors: same process, or dependent.
        let direct: Vec<usize> = (0..n)
            .filter(|&j| {
                let e = &self.events[j];
                e.proc == proc || dependent(&e.footprint, &footprint)
            })
            .collect();
        let mut before = Vec::new();
        // What happens before a direct predecessor happens before `p` through it.
        let mut through = Vec::new();
        for &j in &direct {
            set(&mut before, j);
            union(&mut before, &self.events[j].before);
            union(&mut through, &self.events[j].before);
        }
        let mut races = Vec::new();
        for &e in &direct {
            if self.events[e].proc == proc || has(&through, e) {
                continue;
            }
            // v = notdep(e, E).p: the events after e that do not happen after it, then p.
            let v: Vec<usize> = (e + 1..n)
                .filter(|&j| !has(&self.events[j].before, e))
                .collect();
            let mut in_v = Vec::new();
            for &u in &v {
                set(&mut in_v, u);
            }
            // An event of v happens after another one of v only if it comes later.
            let first = |before: &[u64]| !meets(before, &in_v);
            let mut initials: Vec<Proc> = Vec::new();
            for &u in &v {
                let p = self.events[u].proc;
                if first(&self.events[u].before) && !initials.contains(&p) {
                    initials.push(p);
                }
            }
            if first(&before) && !initials.contains(&proc) {
                initials.push(proc);
            }
            races.push(Race { at: e, initials });
        }
        self.events.push(Event {
            proc,
            footprint,
            before,
        });
        races
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(warp: u32, addr: u64, write: bool) -> Option<TransactionFootprint> {
        let span = Some((addr, addr + 4));
        Some(TransactionFootprint {
            last: Footprint {
                warp: Some((warp, 0)),
                kind: FootprintKind::Memory {
                    global_reads: if write { None } else { span },
                    global_writes: if write { span } else { None },
                    shared_reads: None,
                    shared_writes: None,
                    fence: false,
                },
            },
            invisible_before: false,
        })
    }

    fn p(w: u32) -> Proc {
        Proc::Warp(w, 0)
    }

    /// SB: w0 writes x, reads y; w1 writes y, reads x. In the order w0 w0 w1 w1 the races are
    /// (read y, write y) and (write x, read x); the first is reversed by running w1 before
    /// w0's read of y, the second by running w1 first.
    #[test]
    fn store_buffering_races() {
        let mut t = Trace::default();
        assert!(t.push(p(0), access(0, 0, true)).is_empty());
        assert!(t.push(p(0), access(0, 8, false)).is_empty());
        let r = t.push(p(1), access(1, 8, true));
        assert_eq!(
            r,
            vec![Race {
                at: 1,
                initials: vec![p(1)]
            }]
        );
        // w1 reads x: the write of x happens before it through w0's read of y and w1's
        // write of y, so no race.
        let r = t.push(p(1), access(1, 0, false));
        assert!(r.is_empty(), "{r:?}");
    }

    /// Independent events never race; an event dependent with everything races with the last
    /// event of every other process.
    #[test]
    fn independent_events_do_not_race() {
        let mut t = Trace::default();
        t.push(p(0), access(0, 0, true));
        t.push(p(1), access(1, 8, true));
        assert!(t.push(p(2), access(2, 16, false)).is_empty());
        let r = t.push(p(3), None);
        assert_eq!(r.iter().map(|r| r.at).collect::<Vec<_>>(), vec![0, 1, 2]);
        // The reversal of (event 0, p3): v = [w1, w2, p3]; p3 happens after w1 and w2, so
        // the initials are w1 and w2.
        assert_eq!(r[0].initials, vec![p(1), p(2)]);
        // The reversal of (event 2, p3): v = [p3].
        assert_eq!(r[2].initials, vec![p(3)]);
    }

    /// A race through a third process is not a direct race: w0 writes x, w1 reads x and writes
    /// y, w2 reads y and x.
    #[test]
    fn races_are_direct_only() {
        let mut t = Trace::default();
        t.push(p(0), access(0, 0, true));
        assert_eq!(t.push(p(1), access(1, 0, false)).len(), 1);
        t.push(p(1), access(1, 8, true));
        assert_eq!(t.push(p(2), access(2, 8, false)).len(), 1);
        // w2's read of x happens after w0's write through w1: no race.
        assert!(t.push(p(2), access(2, 0, false)).is_empty());
    }
}
