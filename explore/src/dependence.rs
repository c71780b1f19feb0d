//! Which steps commute under cached memory (thesis chapter 4), where memory micro steps
//! (`Choice::Mem`) are steps of their own: the places a step may touch, the steps that touch
//! only places of one thread block, and the persistent sets of the stateful search built from
//! them ([`block_persistent_sets`]; issue 15, item 4). docs/exploration.md, "Persistent sets
//! under cached memory", has the argument at length; here is what the code relies on.
//!
//! **Places.** The memory's footprint of a memory choice ([`memory_model::cached::Footprint`])
//! names what its micro step may read or change: the issuing thread's in-flight ops (their
//! dependencies, its busy state and registers), lines of an SM's L1, lines of the L2, DRAM
//! lines, words of a block's shared memory and its bank locks. A warp step under cached memory
//! changes its own warp, its block's barrier and shared-memory state, and issues requests for
//! its threads (which touches those threads' op lists only: `Cached::issue` computes the new
//! op's dependencies from its thread's in-flight ops, O1-O3, and reads no cache); `.local`
//! memory is the thread's, `.const` and `.param` are read-only.
//!
//! **Block-private steps.** A step is *private to block `b`* when everything it may touch
//! belongs to `b`: its warps, its threads' ops ([`Place::Thread`] of a thread of `b`), its
//! shared memory and locks, and the L1 of the SM `b`'s ops run on. With at most one resident
//! block per SM and every block issued (no block arrives later on that SM), nothing of another
//! block touches these: another block's warp steps change that block's state; its ops' micro
//! steps touch its own thread, its own SM's L1 (an acquire's flush included), the L2 and
//! DRAM; silent rules touch the L1 they name or the L2; a barrier's completion flushes its own
//! block's SM's L1.
//!
//! **The set of a block** (`G_b`): every enabled choice of `b` (its warps' choices, the steps of
//! its threads' ops, the silent L1 rules of the SM of its in-flight ops). It is persistent
//! (Godefroid, "Partial-Order Methods for the Verification of Concurrent Systems", def. 4.1)
//! when
//! 1. every choice of `G_b` is private to `b`, its transaction neither faults nor settles a
//!    system choice after it, and a warp step's footprint is known (not `trap`);
//! 2. every in-flight op of `b` has its step enabled or waits for an earlier op of its own
//!    thread (which is in `G_b`'s future only): an op stalled on anything else (room in the L2,
//!    a line another op holds) could be enabled by another block's step and then touch `b`'s
//!    L1;
//! 3. no `Issue` or `EndBarrier` is enabled, every block of every grid is issued, and at most
//!    one block is resident per SM.
//!
//! Then take any run from `s` made of choices outside `G_b`. Each step belongs to another block
//! or to no block (an L2 silent rule), so it touches no place of `b` (above); `b`'s steps read
//! only `b`'s places, so each choice of `G_b` stays enabled, its step unchanged, and commutes
//! with each step of the run; and no new choice of `b` appears (its warps are enabled by its
//! own ops and barriers, its ops by its own steps, condition 2, and new silent rules on its
//! SM's L1 only by steps that fill that L1, which are `b`'s). That is definition 4.1; theorem
//! 4.3 (every terminal state is kept, by induction on the distance to it, which a choice of the
//! set shortens; no cycle proviso is needed for terminal states) gives the same completed
//! final states and outcomes.
//!
//! **The set of a warp** (`G_w`, for the warps of one CTA, which share an SM and its L1):
//! every enabled choice of warp `w` and of its threads' ops. Only the warp's own places are
//! private to it: its state, and its threads' ops ([`Place::Thread`]). It is persistent when
//! every op step of `G_w` touches only those (an op's end that writes a register, an
//! acquire-free fence's end) and is not a `.shared` op's (its end lets the other warps' weak
//! shared loads be read at issue, D30), every warp step of it is local or issues `.global` requests or
//! fences (`Cached::issue` reads only the thread's own ops; a `.shared` access is left out, as
//! a weak shared load is read at issue depending on the other warps' shared stores in flight,
//! D30), condition 2 holds for `w`'s threads, and condition 3. Another warp's steps, its ops'
//! micro steps and the silent rules touch no thread of `w`, and `w`'s warp is enabled or
//! disabled by its own scoreboard only, so the argument above carries over. Barriers: an
//! arrival is not one of `w`'s set's steps (it touches the block's barrier state), and a warp
//! arrives only when its threads have no op in flight, so while `w` waits at a barrier its set
//! is empty; a barrier the other warps complete without `w` (`bar` with a thread count)
//! flushes the L1 and releases those warps, none of which is `w`'s. The one exception is a
//! barrier that counts one thread (deviation D24: it orders no memory, so its thread arrives
//! with ops in flight): it is complete at the arrival, so its release is enabled whenever `w`
//! waits at it, and condition 3 takes no set then (or the search's settling takes the release
//! with the arrival).
//!
//! "Commutes" holds up to the names of ops: `Cached::issue` gives a new op the lowest free id,
//! so an op of `b` that ends and frees an id, and another block's warp step that issues, give
//! the new op different ids in the two orders. The engine treats ids as names (they order
//! nothing but listings), so the two states behave alike under the renaming, and a completed
//! final state has no op in flight: outcomes and their counts of distinct final states are
//! exactly the unreduced search's. Deadlocked states may hold ops, so their *number* may
//! differ by renamed copies; whether a deadlock is reachable does not.
//!
//! **Sets at the grain of cache lines** (`crate::line_sets`): within one CTA the L1 is shared,
//! so the sets above stall on the lines the warps' ops share; the closure of a warp over the
//! lines its steps touch (other warps' futures and ops on those lines) separates warps that
//! touch different lines. Its argument is in that module; the fairness argument below holds
//! for its sets as for these.
//!
//! **Fairness: the progress search** (`explore::explore_with`, [`crate::Por::Persistent`]) uses
//! these sets too, for the verdicts and lassos of the models [`crate::Por::preserves`]: the
//! unfair model and weak fairness towards every live unit. Under cached memory neither has
//! F = ∅: every in-flight operation is a unit owed a step under every model while it is live
//! and enabled, and silent actions belong to the memory system, owed nothing and making no unit
//! "have stepped" (docs/exploration.md, "Fairness for memory"). The argument of
//! [`crate::ample`] ("The fairness argument carries over to sets") builds, from a weakly fair
//! infinite run ρ of the full graph from `s`, a weakly fair infinite path of the reduced one;
//! here is what changes when the set `G` holds memory choices. Take ρ.
//! * **ρ takes a choice of `G`.** Its first one, `t`, is one of `G`'s (no step outside `G`
//!   enables a new choice of `G`'s block or warp, above) and moves to the front over steps it
//!   commutes with: every unit is enabled at the same points, each unit's own steps keep their
//!   order, and the memory system's steps still make no unit have stepped. The one change is
//!   the names of ops (above): an op issued after `t` in one order may take another slot in the
//!   other, so the moved run is a run of the full graph up to a renaming of the op units. Both
//!   models treat op units alike (each is owed a step while live and enabled, none counts for
//!   "has stepped"), so the renamed run is weakly fair exactly when ρ is.
//! * **ρ takes no choice of `G`.** Every choice of `G` then stays enabled for ever. An op's
//!   micro step in `G` (an op in a slot of its own, [`crate::units::MAX_OP_SLOTS`]) is a unit
//!   owed a step that is enabled for ever and never steps: ρ is not weakly fair, so this case
//!   cannot arise. A warp step in `G` belongs to a unit that ρ need not step (under the unfair
//!   model; under `fair` at a level coarser than warps, a block or grid that steps through its
//!   other warps): the path puts a choice of `G` in front of ρ. Under flat memory any choice
//!   does, but here a warp step that issues a memory request creates an operation, a new unit
//!   owed a step that ρ never gives it (its micro steps are the warp's block's or warp's, which
//!   ρ never takes): the path would be unfair and could hide ρ's lasso. So the choice put in
//!   front must issue nothing: a silent action (the memory system's, owed nothing, making no
//!   unit have stepped, and touching only `G`'s L1 lines, which ρ never reads), or a warp step
//!   whose visible step is no memory access (local, a barrier arrival, an exit). The path then
//!   has ρ's units enabled at the same points and stepping as often, and it is weakly fair.
//!
//! Hence [`fair_to_operations`]: the progress search takes a set only when it holds the micro
//! step of an op with a slot of its own, or a choice that issues nothing. A set of silent
//! actions alone passes (the second bullet's silent action), and loses nothing: the cycle
//! proviso (every choice of the set leads to a state not known before) keeps it from being
//! taken round a cycle, so the path reaches a fully expanded state, where ρ's next step is
//! taken, after finitely many such prefixes, as under flat memory.

use super::ample::Judged;
use crate::units::Units;
use memory_model::MemSpace;
use memory_model::cached::{Cached, MemChoice, Place};
use semantics::machine::{FootprintKind, Machine};
use traces::Choice;

/// Whose choices a set holds: a block's, or one warp's (its threads' ops included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    Block(u32),
    Warp(u32, u32),
}

/// Whether every place in `places` belongs to `group`: a block, whose ops run on SM `sm`
/// (`None`: it has no op in flight, so no L1 place is its own), or a warp of `warp_size`
/// threads, which owns only its threads' ops.
fn private_places<'a>(
    mut places: impl Iterator<Item = &'a Place>,
    group: Group,
    sm: Option<u32>,
    warp_size: u32,
) -> bool {
    places.all(|p| match (*p, group) {
        (Place::Thread(who), Group::Block(b)) => who.block == b,
        (Place::Thread(who), Group::Warp(b, w)) => {
            who.block == b && who.thread / warp_size.max(1) == w
        }
        (
            Place::L1Line { sm: s, .. }
            | Place::L1Fill { sm: s, .. }
            | Place::L1Room { sm: s }
            | Place::L1 { sm: s },
            Group::Block(_),
        ) => sm == Some(s),
        (Place::Shared { block: x, .. } | Place::Locks { block: x }, Group::Block(b)) => x == b,
        _ => false,
    })
}

/// The block a memory choice belongs to, given the SM each block's ops run on: a step, its
/// op's thread's block; an L1 silent rule, the block whose ops run on that SM; an L2 silent
/// rule, none.
fn block_of_mem(cache: &Cached, choice: MemChoice, sms: &[(u32, u32)]) -> Option<u32> {
    match choice {
        MemChoice::Step { op } => cache.op_request(op).map(|r| r.who.block),
        MemChoice::EvictL1 { sm, .. }
        | MemChoice::WriteBackL1 { sm, .. }
        | MemChoice::Flush { sm } => sms.iter().find(|(_, s)| *s == sm).map(|(b, _)| *b),
        MemChoice::EvictL2 { .. } | MemChoice::WriteBackL2 { .. } => None,
    }
}

/// Whether [`block_persistent_sets`] may find a set in state `m` with `enabled` choices: cached
/// memory, one block per SM, every block issued, and no block issue or barrier completion
/// enabled. A search asks this before it computes the footprints the sets need.
pub fn may_have_block_sets(m: &Machine, enabled: &[Choice]) -> bool {
    m.cache().is_some()
        && m.config().device.max_blocks_per_sm == 1
        && m.every_block_issued()
        && !enabled
            .iter()
            .any(|c| matches!(c, Choice::Issue { .. } | Choice::EndBarrier { .. }))
}

/// The persistent sets of state `m` under cached memory (module header): for each block, and
/// each warp, with an enabled choice whose set is persistent and leaves some choice out, and
/// the closures of each warp at the grain of cache lines (`line_sets`, which separate the
/// warps of one CTA), the indices into `enabled` of the set; distinct, smallest first, ties by
/// their first index.
/// `judged` holds every enabled choice's transaction. Empty under flat memory (the warps'
/// future footprints give sets there: [`super::ample::persistent_sets`]), when a block issue
/// or a barrier completion is enabled, a block is still to be issued, or an SM may hold
/// several blocks.
pub fn block_persistent_sets(
    m: &Machine,
    enabled: &[Choice],
    judged: &[Judged],
) -> Vec<Vec<usize>> {
    block_persistent_sets_sharing(m, enabled, judged, &std::cell::OnceCell::new())
}

/// [`block_persistent_sets`] with the launch's future footprints held in `futures`, computed
/// there when a closure at the grain of lines first needs them: a search of one launch passes
/// the same cell for every state (the futures are the launch's, asked per state from the warps'
/// pcs: [`semantics::machine::Futures`]), so that they are computed once.
pub fn block_persistent_sets_sharing(
    m: &Machine,
    enabled: &[Choice],
    judged: &[Judged],
    futures: &std::cell::OnceCell<semantics::machine::Futures>,
) -> Vec<Vec<usize>> {
    let Some(cache) = m.cache() else {
        return Vec::new();
    };
    if !may_have_block_sets(m, enabled) || judged.len() != enabled.len() {
        return Vec::new();
    }
    let warp_size = m.config().device.warp_size.max(1);
    // The SM of each block's in-flight ops (one block per SM: its own), and the warps with an
    // op that is neither enabled nor waiting for its own thread (condition 2).
    let mut sms: Vec<(u32, u32)> = Vec::new();
    let mut stalled: Vec<(u32, u32)> = Vec::new();
    for (id, req, waits) in cache.in_flight() {
        let block = req.who.block;
        if !sms.iter().any(|(b, _)| *b == block) {
            sms.push((block, req.sm));
        }
        let warp = (block, req.who.thread / warp_size);
        if !waits && !cache.offers(&MemChoice::Step { op: id }) && !stalled.contains(&warp) {
            stalled.push(warp);
        }
    }
    let warp_of = |c: &Choice| -> Option<(u32, u32)> {
        match c {
            Choice::Mem(MemChoice::Step { op }) => cache
                .op_request(*op)
                .map(|r| (r.who.block, r.who.thread / warp_size)),
            Choice::Mem(_) => None,
            _ => c.warp(),
        }
    };
    let block_of = |c: &Choice| -> Option<u32> {
        match c {
            Choice::Mem(mc) => block_of_mem(cache, *mc, &sms),
            _ => c.warp().map(|(b, _)| b),
        }
    };
    let mut groups: Vec<Group> = Vec::new();
    for c in enabled {
        if let Some(b) = block_of(c) {
            groups.push(Group::Block(b));
        }
        if let Some((b, w)) = warp_of(c) {
            groups.push(Group::Warp(b, w));
        }
    }
    groups.sort_unstable_by_key(|g| match *g {
        Group::Block(b) => (b, u32::MAX),
        Group::Warp(b, w) => (b, w),
    });
    groups.dedup();
    let mut sets: Vec<Vec<usize>> = Vec::new();
    for &g in &groups {
        // A stalled op (condition 2) rules out its block's and its warp's sets.
        let (stalled_group, sm) = match g {
            Group::Block(b) => (
                stalled.iter().any(|(x, _)| *x == b),
                sms.iter().find(|(x, _)| *x == b).map(|(_, s)| *s),
            ),
            Group::Warp(b, w) => (stalled.contains(&(b, w)), None),
        };
        if stalled_group {
            continue;
        }
        let member = |c: &Choice| match g {
            Group::Block(b) => block_of(c) == Some(b),
            Group::Warp(b, w) => warp_of(c) == Some((b, w)),
        };
        let set: Vec<usize> = (0..enabled.len())
            .filter(|&i| member(&enabled[i]))
            .collect();
        let private = set.iter().all(|&i| {
            let j = &judged[i];
            j.clean
                && match (enabled[i], g) {
                    // A warp's: not a `.shared` op's step, whose end lets the other warps'
                    // weak shared loads be read at issue (D30).
                    (Choice::Mem(MemChoice::Step { op }), Group::Warp(..))
                        if cache
                            .op_request(op)
                            .is_some_and(|r| r.space == MemSpace::Shared) =>
                    {
                        false
                    }
                    (Choice::Mem(mc), _) => {
                        private_places(cache.footprint(mc).places.iter(), g, sm, warp_size)
                    }
                    // A block's warp step touches its block's state (module header).
                    (_, Group::Block(_)) => j
                        .footprint
                        .is_some_and(|f| f.kind != FootprintKind::Anything),
                    // A warp's: its own state, and requests issued for its threads; not a
                    // `.shared` access (a weak shared load is read at issue when no op of
                    // another warp of the block writes shared memory, deviation D30).
                    (_, Group::Warp(..)) => j.footprint.is_some_and(|f| match f.kind {
                        FootprintKind::Local => true,
                        FootprintKind::Memory {
                            shared_reads,
                            shared_writes,
                            ..
                        } => shared_reads.is_none() && shared_writes.is_none(),
                        _ => false,
                    }),
                }
        });
        if private && !set.is_empty() && set.len() < enabled.len() && !sets.contains(&set) {
            sets.push(set);
        }
    }
    // The sets at the grain of cache lines, which separate the warps of one CTA.
    for set in super::line_sets::line_persistent_sets(
        m, cache, enabled, judged, &stalled, &warp_of, futures,
    ) {
        if !sets.contains(&set) {
            sets.push(set);
        }
    }
    sets.sort_by_key(|s| (s.len(), s.first().copied()));
    sets
}

/// Whether the persistent set `set` (indices into `enabled`, whose transactions are `judged`)
/// may stand for its state in the progress search under cached memory (module header,
/// "Fairness"): it holds the micro step of an operation that is a unit of its own (owed a step
/// under every model, so no weakly fair run avoids the set for ever), or a choice that issues
/// no memory request (a silent action, or a warp step whose visible step is not a memory
/// access), which may be put in front of a run that avoids the set without creating an
/// operation that run starves.
pub fn fair_to_operations(
    m: &Machine,
    units: &Units,
    enabled: &[Choice],
    judged: &[Judged],
    set: &[usize],
) -> bool {
    let op_units = units.op_units();
    set.iter().any(|&i| match (enabled.get(i), judged.get(i)) {
        (Some(c @ Choice::Mem(MemChoice::Step { .. })), _) => {
            let u = units.of(m, c);
            !u.is_empty() && u.difference(op_units).is_empty()
        }
        (Some(Choice::Mem(_)), _) => true,
        (Some(_), Some(j)) => j.footprint.is_some_and(|f| {
            !matches!(
                f.kind,
                FootprintKind::Memory { .. } | FootprintKind::Anything
            )
        }),
        _ => false,
    })
}
