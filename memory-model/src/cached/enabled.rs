//! Which memory choices are enabled (thesis 4.4.4 (step), 4.6 silent rules): the `Step` of
//! every op whose dependencies ended and whose next micro step changes the state (a pure retry
//! of a deferred operation is not offered, so explorers see no self-loops), then the silent
//! rules the configuration allows. The answers are memoized (see `Cached::mutated` and
//! [`BlockedKey`]); the unmemoized computation stays for the debug checks.

use super::engine::{Geometry, Op, is_global};
use super::line::Key;
use super::program::{OpName, ProgramId, Stm};
use super::{Cached, MemChoice, OpId, SilentActions};

impl Cached {
    /// The enabled choices computed without the memo of [`Cached::blocked`] answers: what the
    /// memoized list must equal (debug builds check it).
    #[cfg(debug_assertions)]
    pub(super) fn enabled_choices<F: FnMut(MemChoice)>(&self, out: &mut F) {
        if self.ops.len() <= 64 {
            let mut incremental = Vec::new();
            self.enabled_steps(&mut |c| incremental.push(c));
            let mut scratch = Vec::new();
            self.steps_from_scratch(&mut |c| scratch.push(c));
            debug_assert_eq!(incremental, scratch, "the incremental enabled ops drifted");
        }
        self.enabled_steps(out);
        self.enabled_silent(out);
    }

    /// The `Step` choices: only ops whose dependencies ended can step (the index keeps them,
    /// by id).
    #[cfg(debug_assertions)]
    fn enabled_steps<F: FnMut(MemChoice)>(&self, out: &mut F) {
        // Parked ops are blocked (see `index`): only the active ones need a look.
        for i in self.index.active.iter() {
            if let Some(o) = self.ops.get(i as usize).and_then(Option::as_ref)
                && !self.blocked(i, o)
            {
                out(MemChoice::Step { op: i });
            }
        }
    }

    /// [`Cached::enabled_steps`], with each op's [`Cached::blocked`] answer memoized under the
    /// versions of what it depends on: after a micro step only the ops whose caches or locks
    /// changed are tested again (the test is most of a step's cost when thousands of ops are
    /// in flight).
    pub(super) fn enabled_steps_memoized(&mut self, out: &mut Vec<MemChoice>) {
        let BlockedMemo(mut memo) = std::mem::take(&mut self.blocked_memo);
        if memo.len() < self.ops.len() {
            memo.resize(self.ops.len(), None);
        }
        for i in self.index.active.iter() {
            // The memo is read without touching the op (ops are large; thousands are in
            // flight): a step of the op clears its entry.
            let blocked = match memo[i as usize] {
                Some((k, b)) if self.versions_of(k.reads) == k => b,
                _ => {
                    let Some(o) = self.ops.get(i as usize).and_then(Option::as_ref) else {
                        continue;
                    };
                    let key = self.versions_of(Self::reads_of(o));
                    let b = self.blocked(i, o);
                    memo[i as usize] = Some((key, b));
                    b
                }
            };
            if !blocked {
                out.push(MemChoice::Step { op: i });
            }
        }
        self.blocked_memo = BlockedMemo(memo);
    }

    /// What [`Cached::blocked`] reads for the op's next statement besides the op itself.
    fn reads_of(op: &Op) -> Reads {
        let name = op
            .prog
            .and_then(|p| p.program().stms.get(op.pc as usize).copied());
        let sm = op.req.sm;
        match name {
            Some(Stm::Op(OpName::Lock)) => Reads::Locks,
            // Room in L1 may depend on L2 taking a dirty victim (`l1_dirty_ok`).
            Some(Stm::Op(OpName::ReserveL1 | OpName::WriteL1)) => Reads::L1AndL2(sm),
            Some(Stm::Op(OpName::ReadL1 | OpName::EvictL1 | OpName::DiscardL1)) => Reads::L1(sm),
            Some(Stm::Op(OpName::ReserveL2 | OpName::WriteL2 | OpName::ReadL2)) => Reads::L2,
            _ => Reads::Nothing,
        }
    }

    /// The current versions of what `reads` names: equal keys, equal [`Cached::blocked`]
    /// answers (for an unchanged op).
    fn versions_of(&self, reads: Reads) -> BlockedKey {
        let (a, b) = match reads {
            Reads::Nothing => (0, 0),
            Reads::Locks => (self.locks_version, 0),
            Reads::L1(sm) => (self.l1.version(sm), 0),
            Reads::L1AndL2(sm) => (self.l1.version(sm), self.l2.version()),
            Reads::L2 => (self.l2.version(), 0),
        };
        BlockedKey { reads, a, b }
    }

    /// Forgets op `id`'s memoized [`Cached::blocked`] answer (it stepped or was issued).
    pub(super) fn forget_blocked(&mut self, id: OpId) {
        if let Some(m) = self.blocked_memo.0.get_mut(id as usize) {
            *m = None;
        }
    }

    /// [`Cached::enabled_steps`] computed from the op list alone (what the index must give).
    pub(super) fn steps_from_scratch(&self, out: &mut dyn FnMut(MemChoice)) {
        for (i, o) in self.ops.iter().enumerate() {
            if let Some(o) = o
                && o.deps.is_empty()
                && !self.blocked(i as OpId, o)
            {
                out(MemChoice::Step { op: i as OpId });
            }
        }
    }

    /// The silent rules allowed by the configuration, per SM then L2 (see [`Cached::enabled`]).
    pub(super) fn enabled_silent<F: FnMut(MemChoice)>(&self, out: &mut F) {
        if self.config.silent == SilentActions::None {
            return;
        }
        let all = self.config.silent == SilentActions::All;
        for (sm, l1) in self.l1.in_use() {
            // A flush left only doomed lines: nothing to evict or flush.
            if l1.live.is_empty() {
                continue;
            }
            if all {
                for (k, l) in l1.live.lines().iter() {
                    if l.valid != 0 && l.evictable() {
                        out(MemChoice::EvictL1 { sm, line: *k });
                    }
                    if !is_global(*k) && l.dirty != 0 && self.wb_l1_possible(*k) {
                        out(MemChoice::WriteBackL1 { sm, line: *k });
                    }
                }
            } else {
                // Global lines only: evicting a clean local line changes no value a thread
                // reads (its data is in L2 or DRAM by then). The clean unpinned lines are
                // indexed: a full L1 of pinned or local lines costs nothing here. Global keys
                // sort before local ones.
                for k in l1.live.evictable_keys().take_while(|k| is_global(*k)) {
                    if l1.live.get(k).is_some_and(|l| l.valid != 0) {
                        out(MemChoice::EvictL1 { sm, line: k });
                    }
                }
            }
            // Global keys sort before local ones: the lowest key says whether any is global.
            if l1.live.lines().keys().next().is_some_and(|k| is_global(*k)) {
                out(MemChoice::Flush { sm });
            }
        }
        if all {
            for (k, l) in self.l2.lines().iter() {
                if l.valid != 0 && l.evictable() {
                    out(MemChoice::EvictL2 { line: *k });
                }
                if l.dirty != 0 {
                    out(MemChoice::WriteBackL2 { line: *k });
                }
            }
        }
    }

    /// Whether the silent rule `choice` is among [`Cached::enabled_choices`]: the same tests,
    /// for one choice.
    pub(super) fn silent_enabled(&self, choice: MemChoice) -> bool {
        let silent = self.config.silent;
        let all = silent == SilentActions::All;
        if silent == SilentActions::None {
            return false;
        }
        let l1_line = |sm: u32, line: Key| self.l1.get(sm).and_then(|c| c.live.get(line));
        match choice {
            MemChoice::Step { .. } => false,
            MemChoice::EvictL1 { sm, line } => l1_line(sm, line)
                .is_some_and(|l| (is_global(line) || all) && l.valid != 0 && l.evictable()),
            MemChoice::WriteBackL1 { sm, line } => {
                all && !is_global(line)
                    && l1_line(sm, line).is_some_and(|l| l.dirty != 0)
                    && self.wb_l1_possible(line)
            }
            MemChoice::Flush { sm } => self
                .l1
                .get(sm)
                .is_some_and(|c| c.live.lines().keys().next().is_some_and(|k| is_global(*k))),
            MemChoice::EvictL2 { line } => {
                all && self
                    .l2
                    .get(line)
                    .is_some_and(|l| l.valid != 0 && l.evictable())
            }
            MemChoice::WriteBackL2 { line } => {
                all && self.l2.get(line).is_some_and(|l| l.dirty != 0)
            }
        }
    }

    /// Whether the op's next micro step would be a pure retry: its first statement is an
    /// operation that defers without changing anything (such a step is not offered, so an
    /// explorer sees no self-loops). Errors count as progress (the step reports them).
    pub(super) fn blocked(&self, id: OpId, op: &Op) -> bool {
        let Some(prog) = op.prog else { return false };
        let Some(Stm::Op(name)) = prog.program().stms.get(op.pc as usize).copied() else {
            return false;
        };
        match name {
            OpName::Lock => {
                return self
                    .banks(&op.req)
                    .iter()
                    .any(|b| self.locks.contains_key(&(op.req.who.block, *b)));
            }
            OpName::ReserveL1
            | OpName::WriteL1
            | OpName::ReserveL2
            | OpName::WriteL2
            | OpName::ReadL1
            | OpName::ReadL2
            | OpName::EvictL1
            | OpName::DiscardL1 => {}
            // Every other operation always makes progress: no need to locate the access (the
            // enabled set asks this of every op after every step).
            _ => return false,
        }
        // Shared and fence programs defer only at `lock`; a malformed access errors (progress).
        let Ok(g) = self.geometry(id, &op.req) else {
            return false;
        };
        let l1 = self.l1.get(op.req.sm);
        let l2_mask = self.l2_mask(op, g);
        match name {
            OpName::ReserveL1 | OpName::WriteL1 => l1.is_some_and(|c| {
                c.live
                    .would_defer_alloc_with(g.key, self.l1_capacity(), || self.l1_dirty_ok(c))
            }),
            OpName::ReserveL2 | OpName::WriteL2 => {
                self.l2.would_defer_alloc(g.key, self.l2_capacity(), true)
            }
            OpName::ReadL1 => l1.is_some_and(|c| {
                c.find(g.key, id)
                    .and_then(|s| c.get(g.key, s))
                    .is_some_and(|l| l.valid & g.mask != g.mask && l.pins.contains(&id))
            }),
            OpName::ReadL2 => self
                .l2
                .get(g.key)
                .is_some_and(|l| l.valid & l2_mask != l2_mask && l.pins.contains(&id)),
            OpName::EvictL1 => {
                l1.is_some_and(|c| c.live.get(g.key).is_some_and(|l| !l.evictable()))
            }
            OpName::DiscardL1 => l1.is_some_and(|c| c.live.get(g.key).is_some_and(|l| l.pinned())),
            _ => false,
        }
    }

    /// The bytes an op's L2 accesses need: the whole line when it fills an L1 line (L1 lines
    /// are filled all at once), else its own bytes.
    pub(super) fn l2_mask(&self, op: &Op, g: Geometry) -> u64 {
        if op.prog.is_some_and(ProgramId::fills_l1) {
            self.full_mask()
        } else {
            g.mask
        }
    }
}

/// Per op slot, the last [`Cached::blocked`] answer and the versions it was computed under.
/// A cache of answers, not state: a clone starts empty (explorers clone the memory state for
/// every successor, and a litmus-size state recomputes its few answers for less than a copy
/// costs).
#[derive(Debug, Default)]
pub(super) struct BlockedMemo(pub(super) Vec<Option<(BlockedKey, bool)>>);

impl Clone for BlockedMemo {
    fn clone(&self) -> Self {
        BlockedMemo::default()
    }
}

/// What a [`Cached::blocked`] answer depends on besides the op: nothing, the block's bank
/// locks, an SM's L1, L2, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reads {
    Nothing,
    Locks,
    L1(u32),
    L1AndL2(u32),
    L2,
}

/// The versions of what a [`Cached::blocked`] answer read (see [`Cached::versions_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BlockedKey {
    reads: Reads,
    a: u64,
    b: u64,
}
