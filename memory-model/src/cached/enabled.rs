//! Which memory choices are enabled (thesis 4.4.4 (step), 4.6 silent rules): the `Step` of
//! every op whose dependencies ended and whose next micro step changes the state (a pure retry
//! of a deferred operation is not offered, so explorers see no self-loops), then the silent
//! rules the configuration allows.
//!
//! The set is kept incrementally ([`EnabledList`]): after a mutation only the choices that can
//! have changed are tested again ([`Cached::after_mutation`]): the ops the mutation stepped,
//! issued or made ready, the ops watching a line the mutation changed (the caches journal
//! the keys of the lines they change) or room in a cache whose room may have changed, and the
//! silent rules of the changed lines. So a step costs what it changes, not the number of ops
//! in flight or lines cached (issue 15). The from-scratch computation stays for the debug
//! checks and the tests.

use super::engine::{Geometry, Op, is_global, next_op};
use super::index::FastMap;
use super::index::Watch;
use super::line::Key;
use super::program::{OpName, ProgramId};
use super::{Cached, MemChoice, OpId, SilentActions};

/// One change of the enabled list, in the order the list saw them (so that a mirror of the
/// list, such as the machine's enabled set, follows it in O(1) per change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnabledEdit {
    /// The choice was appended.
    Push(MemChoice),
    /// The choice at this position left; the last choice took its place (`Vec::swap_remove`).
    SwapRemove(u32),
}

/// The enabled choices as a list in the order they became enabled (a deterministic function
/// of the history of mutations), with each choice's position: membership, insertion and
/// removal in O(1).
#[derive(Debug, Clone, Default)]
pub(super) struct EnabledList {
    list: Vec<MemChoice>,
    /// Position of `Step { op }` by op id (`u32::MAX`: absent).
    step_pos: Vec<u32>,
    /// Position of each silent choice.
    silent_pos: FastMap<MemChoice, u32>,
}

const ABSENT: u32 = u32::MAX;

impl EnabledList {
    pub(super) fn as_slice(&self) -> &[MemChoice] {
        &self.list
    }

    fn pos(&self, c: &MemChoice) -> Option<usize> {
        match *c {
            MemChoice::Step { op } => self
                .step_pos
                .get(op as usize)
                .filter(|p| **p != ABSENT)
                .map(|p| *p as usize),
            _ => self.silent_pos.get(c).map(|p| *p as usize),
        }
    }

    fn set_pos(&mut self, c: MemChoice, p: u32) {
        match c {
            MemChoice::Step { op } => {
                let i = op as usize;
                if self.step_pos.len() <= i {
                    self.step_pos.resize(i + 1, ABSENT);
                }
                self.step_pos[i] = p;
            }
            _ => {
                if p == ABSENT {
                    self.silent_pos.remove(&c);
                } else {
                    self.silent_pos.insert(c, p);
                }
            }
        }
    }

    pub(super) fn contains(&self, c: &MemChoice) -> bool {
        self.pos(c).is_some()
    }

    /// Whether `Step { op }` is enabled: [`EnabledList::pos`] for a step, without matching on
    /// the choice (every op a mutation tests again asks this).
    #[inline]
    fn step_listed(&self, op: OpId) -> bool {
        self.step_pos.get(op as usize).is_some_and(|p| *p != ABSENT)
    }

    /// Makes `Step { op }` enabled (`on`) or not, which it is not yet (resp. is): `set` for a
    /// step, its position found by the op's id; logs the change.
    fn set_step(&mut self, op: OpId, on: bool, log: &mut EditLog) {
        let i = op as usize;
        let c = MemChoice::Step { op };
        if on {
            if self.step_pos.len() <= i {
                self.step_pos.resize(i + 1, ABSENT);
            }
            self.step_pos[i] = self.list.len() as u32;
            self.list.push(c);
            log.push(EnabledEdit::Push(c));
        } else {
            let p = std::mem::replace(&mut self.step_pos[i], ABSENT) as usize;
            self.list.swap_remove(p);
            if let Some(&moved) = self.list.get(p) {
                self.set_pos(moved, p as u32);
            }
            log.push(EnabledEdit::SwapRemove(p as u32));
        }
    }

    /// Makes `c` enabled (`on`) or not, `pos` being its position now ([`EnabledList::pos`]);
    /// logs the change.
    fn set(&mut self, c: MemChoice, pos: Option<usize>, on: bool, log: &mut EditLog) {
        match (pos, on) {
            (None, true) => {
                self.set_pos(c, self.list.len() as u32);
                self.list.push(c);
                log.push(EnabledEdit::Push(c));
            }
            (Some(p), false) => {
                self.list.swap_remove(p);
                self.set_pos(c, ABSENT);
                if let Some(&moved) = self.list.get(p) {
                    self.set_pos(moved, p as u32);
                }
                log.push(EnabledEdit::SwapRemove(p as u32));
            }
            _ => {}
        }
    }
}

/// The edits of the enabled list since generation `base_gen`, when the list had `base_len`
/// choices (derived; a reader that mirrors the list replays them and then clears the log).
#[derive(Debug, Clone, Default)]
pub(super) struct EditLog {
    pub(super) base_gen: u64,
    pub(super) base_len: usize,
    pub(super) edits: Vec<EnabledEdit>,
}

/// A log nobody reads (tests and benchmarks of this crate) stops growing here: a reader then
/// finds the log does not cover its generation and copies the whole list.
const LOG_LIMIT: usize = 4096;

/// `base_gen` of a log that covers no generation.
const BROKEN: u64 = u64::MAX;

impl EditLog {
    fn push(&mut self, e: EnabledEdit) {
        if self.base_gen == BROKEN {
            return;
        }
        if self.edits.len() >= LOG_LIMIT {
            self.base_gen = BROKEN;
            self.edits.clear();
            return;
        }
        self.edits.push(e);
    }
}

/// Which caches' room a mutation may change, and whether it was tight before (see
/// [`Cached::room_tight`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct RoomBefore {
    sm: Option<u32>,
    l1: bool,
    l2: bool,
}

/// The canonical order of [`Cached::enabled`]: `Step` by op id, then per SM its L1 lines by
/// key (`EvictL1`, then `WriteBackL1`) and its `Flush`, then the L2 lines by key (`EvictL2`,
/// then `WriteBackL2`).
pub(super) fn canonical_key(c: &MemChoice) -> (u8, u32, u64, u8) {
    match *c {
        MemChoice::Step { op } => (0, op, 0, 0),
        MemChoice::EvictL1 { sm, line } => (1, sm, line, 0),
        MemChoice::WriteBackL1 { sm, line } => (1, sm, line, 1),
        MemChoice::Flush { sm } => (1, sm, u64::MAX, 2),
        MemChoice::EvictL2 { line } => (2, 0, line, 0),
        MemChoice::WriteBackL2 { line } => (2, 0, line, 1),
    }
}

impl Cached {
    /// The enabled choices computed from scratch (a scan of every op and every line): what
    /// the incremental list must hold (debug builds compare them).
    #[cfg(debug_assertions)]
    pub(super) fn enabled_choices<F: FnMut(MemChoice)>(&self, out: &mut F) {
        self.steps_from_scratch(out);
        self.enabled_silent(out);
    }

    /// Whether room in the L2 (and, with `sm`, in that SM's L1) is *tight*: the cache is full
    /// and has no victim an allocation could take. An allocation defers only in a tight cache
    /// (see [`Cached::blocked`]), so when a cache is not tight before and after a mutation, no
    /// op waiting for room in it changed its answer.
    pub(super) fn room_tight(&self, sm: Option<u32>) -> RoomBefore {
        let l2 = self.l2.len() >= self.l2_capacity() && !self.l2.has_unpinned();
        let l1 = sm.and_then(|sm| self.l1.get(sm)).is_some_and(|c| {
            c.live.len() >= self.l1_capacity()
                && if self.l1_dirty_ok(c) {
                    !c.live.has_unpinned()
                } else {
                    !c.live.has_clean_victim()
                }
        });
        RoomBefore { sm, l1, l2 }
    }

    /// The SM whose L1 `choice` may change (besides the L2).
    pub(super) fn sm_of(&self, choice: &MemChoice) -> Option<u32> {
        match *choice {
            MemChoice::Step { op } => self
                .ops
                .get(op as usize)
                .and_then(Option::as_ref)
                .map(|o| o.req.sm),
            MemChoice::EvictL1 { sm, .. }
            | MemChoice::WriteBackL1 { sm, .. }
            | MemChoice::Flush { sm } => Some(sm),
            MemChoice::EvictL2 { .. } | MemChoice::WriteBackL2 { .. } => None,
        }
    }

    /// After a mutation: tests again the choices it may have changed (see the module
    /// documentation): the ops in `self.recheck` (stepped, issued, made ready), the ops
    /// watching a changed line or the room of a cache that was or is tight (`before`), and the
    /// silent rules of the changed lines. Then a new generation.
    ///
    /// `before: None`: the mutation changed no cache line ([`Cached::changes_no_line`]), so
    /// no room changed either and nobody waiting for room is tested again (room is a function
    /// of the lines; the answers of the ops waiting for it stand).
    pub(super) fn after_mutation(&mut self, before: Option<RoomBefore>) {
        debug_assert!(
            before.is_some() || (!self.l2.was_touched() && self.l1.touched_none()),
            "a mutation said to change no cache line changed one"
        );
        let mut ops = std::mem::take(&mut self.recheck);
        let mut silent = std::mem::take(&mut self.silent_scratch);
        silent.clear();
        let mut keys = std::mem::take(&mut self.touched_keys);
        let mut filled = std::mem::take(&mut self.filled_keys);
        keys.clear();
        filled.clear();
        let all = self.config.silent == SilentActions::All;
        // The L2's changed lines: reads waiting for the lines whose valid bytes changed.
        if self.l2.was_touched() {
            self.l2.drain_touched(&mut keys, &mut filled);
            filled.sort_unstable();
            filled.dedup();
            for &k in &filled {
                self.index.watchers_of(Watch::L2Fill(k), &mut ops);
            }
            keys.sort_unstable();
            keys.dedup();
            for &k in &keys {
                if all {
                    silent.push(MemChoice::EvictL2 { line: k });
                    silent.push(MemChoice::WriteBackL2 { line: k });
                }
            }
        }
        // The changed lines of each L1 written.
        for sm in self.l1.take_touched() {
            keys.clear();
            filled.clear();
            if let Some(c) = self.l1.get(sm)
                && c.live.was_touched()
                && let Some(c) = self.l1.get_mut(sm)
            {
                c.live.drain_touched(&mut keys, &mut filled);
            }
            // `get_mut` above journals the SM again: nothing is left to journal.
            self.l1.take_touched();
            // Whether `Flush` is enabled depends on which lines the L1 holds (its lowest key),
            // and a line that comes or goes is journaled among the filled keys: without one,
            // the flush's answer stands.
            let lines_changed = !filled.is_empty();
            filled.sort_unstable();
            filled.dedup();
            for &k in &filled {
                self.index.watchers_of(Watch::L1Fill(sm, k), &mut ops);
            }
            keys.sort_unstable();
            keys.dedup();
            // The releases waiting for the SM's stage wait for their L1 line too.
            if !keys.is_empty() && self.stage_on() {
                self.index.watchers_of(Watch::Stage(sm), &mut ops);
            }
            for &k in &keys {
                self.index.watchers_of(Watch::L1Line(sm, k), &mut ops);
                silent.push(MemChoice::EvictL1 { sm, line: k });
                if all && !is_global(k) {
                    silent.push(MemChoice::WriteBackL1 { sm, line: k });
                }
            }
            if lines_changed {
                silent.push(MemChoice::Flush { sm });
            }
        }
        // Room.
        if let Some(before) = before {
            self.room_changes(before, &mut ops, &mut silent);
        }
        ops.sort_unstable();
        ops.dedup();
        for &id in &ops {
            self.recheck_op(id);
        }
        ops.clear();
        self.recheck = ops;
        keys.clear();
        filled.clear();
        self.touched_keys = keys;
        self.filled_keys = filled;
        for &c in &silent {
            let on = self.silent_enabled(c);
            self.set_enabled(c, on);
        }
        silent.clear();
        self.silent_scratch = silent;
        self.generation = self.generation.wrapping_add(1);
        self.check_index();
        #[cfg(debug_assertions)]
        if self.ops.len() <= 64 {
            let mut fresh = Vec::new();
            self.enabled_choices(&mut |c| fresh.push(c));
            let mut incremental = self.enabled.as_slice().to_vec();
            incremental.sort_by_key(canonical_key);
            debug_assert_eq!(incremental, fresh, "the incremental enabled set drifted");
        }
    }

    /// The ops waiting for room in a cache that was (`before`) or is tight, and with
    /// [`SilentActions::All`] the L1 write-backs that depend on room in the L2.
    fn room_changes(&self, before: RoomBefore, ops: &mut Vec<OpId>, silent: &mut Vec<MemChoice>) {
        let after = self.room_tight(before.sm);
        if before.l2 || after.l2 {
            self.index.watchers_of(Watch::L2Room, ops);
            // Whether an L1 may write a dirty victim back depends on the L2.
            self.index.l1_room_watchers(ops);
            if self.config.silent == SilentActions::All {
                self.all_l1_write_backs(silent);
            }
        }
        if let Some(sm) = before.sm
            && (before.l1 || after.l1)
        {
            self.index.watchers_of(Watch::L1Room(sm), ops);
        }
    }

    /// Whether taking `choice` changes no cache line: a micro step of a shared-memory op
    /// (its program touches shared memory and bank locks only) whose end flushes no L1.
    /// Issuing changes none either. Such a mutation skips the room tests (`after_mutation`).
    pub(super) fn changes_no_line(&self, choice: &MemChoice) -> bool {
        match *choice {
            MemChoice::Step { op } => self
                .ops
                .get(op as usize)
                .and_then(Option::as_ref)
                .is_some_and(|o| {
                    o.req.space == crate::MemSpace::Shared
                        && !matches!(o.req.kind, super::RequestKind::Fence)
                        && !super::engine::flushes_l1_at_end(&o.req)
                }),
            _ => false,
        }
    }

    /// Every L1's dirty local lines (the candidates of `WriteBackL1`, which depend on room in
    /// the L2).
    fn all_l1_write_backs(&self, out: &mut Vec<MemChoice>) {
        for (sm, l1) in self.l1.in_use() {
            for (k, l) in l1.live.lines().iter() {
                if !is_global(*k) && l.dirty != 0 {
                    out.push(MemChoice::WriteBackL1 { sm, line: *k });
                }
            }
        }
    }

    fn set_enabled(&mut self, c: MemChoice, on: bool) {
        // Most tests confirm what the list says: no copy of a list shared with a clone (and
        // no atomic operation on its count) for them.
        let pos = self.enabled.pos(&c);
        if pos.is_some() == on {
            return;
        }
        let list = std::sync::Arc::make_mut(&mut self.enabled);
        list.set(c, pos, on, &mut self.log);
    }

    /// Tests op `id` again: its `Step` is enabled when it is in flight, its dependencies
    /// ended and its next micro step is no pure retry; a ready op is registered under what
    /// that answer depends on.
    pub(super) fn recheck_op(&mut self, id: OpId) {
        let (on, watch) = match self.ops.get(id as usize).and_then(Option::as_ref) {
            Some(o) if self.index.ready.contains(id) => {
                // Only an op whose next statement can defer is watched, and only such an op
                // can be blocked.
                let (watch, blocked) = self.watch_and_blocked(id, o);
                (watch.is_none() || !blocked, watch)
            }
            _ => (false, None),
        };
        self.index.watch(id, watch);
        // Most tests confirm what the list says (as in `set_enabled`), found by the op's id.
        if self.enabled.step_listed(id) != on {
            std::sync::Arc::make_mut(&mut self.enabled).set_step(id, on, &mut self.log);
        }
    }

    /// The `Step` choices computed from the op list alone (what the incremental list must hold).
    pub(super) fn steps_from_scratch<F: FnMut(MemChoice)>(&self, out: &mut F) {
        for (i, o) in self.ops.iter().enumerate() {
            if let Some(o) = o
                && o.deps.is_empty()
                && !self.blocked(i as OpId, o)
            {
                out(MemChoice::Step { op: i as OpId });
            }
        }
    }

    /// The silent rules allowed by the configuration, per SM then L2 (see [`Cached::enabled`]),
    /// computed from the lines.
    #[cfg(debug_assertions)]
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
            if l1.live.min_key().is_some_and(is_global) {
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
                .is_some_and(|c| c.live.min_key().is_some_and(is_global)),
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
        if self.stage_blocks(id, op) {
            return true;
        }
        let Some(name) = next_op(op) else {
            return false;
        };
        if name == OpName::Lock {
            return self.lock_blocked(op);
        }
        // Every other operation always makes progress: no need to locate the access (the
        // enabled set asks this of every op it tests).
        if !name.can_defer() {
            return false;
        }
        // Shared and fence programs defer only at `lock`; a malformed access errors (progress).
        let Ok(g) = self.geometry(id, &op.req) else {
            return false;
        };
        self.blocked_at(id, op, name, g)
    }

    /// Whether an atomic at `lock` would find one of its banks held.
    pub(super) fn lock_blocked(&self, op: &Op) -> bool {
        self.banks(&op.req)
            .iter()
            .any(|b| self.locks.contains_key(&(op.req.who.block, *b)))
    }

    /// [`Cached::blocked`] for an op whose next operation `name` can defer
    /// ([`OpName::can_defer`], not `lock`) and whose access lands at `g`.
    pub(super) fn blocked_at(&self, id: OpId, op: &Op, name: OpName, g: Geometry) -> bool {
        let l1 = self.l1.get(op.req.sm);
        match name {
            OpName::ReserveL1 | OpName::WriteL1 => l1.is_some_and(|c| {
                c.live
                    .would_defer_alloc_with(g.key, self.l1_capacity(), || self.l1_dirty_ok(c))
            }),
            OpName::ReserveL2 | OpName::WriteL2 => {
                self.l2.would_defer_alloc(g.key, self.l2_capacity(), true)
            }
            OpName::ReadL1 => l1.is_some_and(|c| {
                c.seen_by(g.key, id, op.doomed_hint)
                    .is_some_and(|l| l.valid & g.mask != g.mask && l.pins.contains(&id))
            }),
            OpName::ReadL2 => {
                let l2_mask = self.l2_mask(op, g);
                self.l2
                    .get(g.key)
                    .is_some_and(|l| l.valid & l2_mask != l2_mask && l.pins.contains(&id))
            }
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
