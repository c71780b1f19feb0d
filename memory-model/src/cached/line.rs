//! Cache lines and the cache operations of thesis 4.2.2 (reserve, read, write, update, evict,
//! discard, classify), refined to aligned lines with per-byte masks (digest §7 option (b), A8).
//!
//! A line is keyed by its base address ([`Key`]): global lines by their global address, local
//! lines by an encoding of (thread, local address) in the local generic window, so one key space
//! holds both and the thesis's "DRAM spaces are disjoint" (4.3) holds by construction.
//!
//! A cache is an ordered map from key to line with a capacity in lines: unused lines are implicit
//! (`len < capacity` means an unused line exists). All unused lines are `init`, so which one a
//! reserve takes is no choice (A9, A22). The L1 additionally holds *doomed* lines: lines a flush
//! invalidated while in-flight ops pinned them (A10 repair, see [`L1::flush`]).
//!
//! Outcomes follow the thesis: `Ok(Flow::Continue)` (done), `Ok(Flow::Defer)` (the program
//! yields and retries the same operation: ε), `Err(Stuck)` (⊥).

use super::{OpId, Stuck};
use imbl::{OrdMap, OrdSet};
use serde::Serialize;
use smallvec::SmallVec;

/// A line's key: its base address in the line key space (see the module documentation).
pub type Key = u64;

/// Eviction class (thesis `EvClass`; the patent's `last` is omitted as in the thesis).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum EvClass {
    /// Evicted before `Normal` lines (by the deterministic victim choice of `reserve`).
    First,
    Normal,
}

/// One cache line (thesis `CacheLine` with per-byte `valid`/`dirty`, digest §7 (b)).
#[derive(Debug, PartialEq, Eq)]
pub struct Line {
    /// The bytes; only the first `line_bytes` are used. Invalid bytes are always 0 (a line starts
    /// zeroed and a byte only ever becomes valid), so equal states hash equal.
    pub data: [u8; 64],
    /// Bit i: byte i holds data (thesis `valid`, per byte).
    pub valid: u64,
    /// Bit i: byte i is newer than the next level (thesis `dirty`, per byte). `dirty ⊆ valid`.
    pub dirty: u64,
    /// Ops waiting on or holding the line (thesis `mid̄`), duplicate-free.
    pub pins: SmallVec<[OpId; 2]>,
    pub class: EvClass,
    /// A reserving op will fill the line (thesis "reserved, data in flight"): `isCached` holds
    /// and readers wait for the fill instead of fetching again.
    pub fill_pending: bool,
}

/// Copies the pins as a slice of `Copy` ids (`SmallVec`'s own `clone` goes element by
/// element; a persistent map copies the lines of a node on every change).
impl Clone for Line {
    fn clone(&self) -> Line {
        let Line {
            data,
            valid,
            dirty,
            pins,
            class,
            fill_pending,
        } = self;
        Line {
            data: *data,
            valid: *valid,
            dirty: *dirty,
            pins: SmallVec::from_slice(pins),
            class: *class,
            fill_pending: *fill_pending,
        }
    }
}

impl Line {
    fn reserved(op: Option<OpId>) -> Line {
        Line {
            data: [0; 64],
            valid: 0,
            dirty: 0,
            pins: op.into_iter().collect(),
            class: EvClass::Normal,
            fill_pending: op.is_some(),
        }
    }

    /// Thesis `pin` (`mid ⊙ mid̄`).
    /// Thesis `read` on one line: when the bytes of `mask` are valid, `op` no longer waits for
    /// the line and gets a copy; otherwise `op` pins it until the fill it waits for.
    fn read(&mut self, mask: u64, op: OpId) -> Option<Hit> {
        if self.valid & mask == mask {
            self.unpin(op);
            Some(Hit {
                data: self.data,
                valid: self.valid,
            })
        } else {
            self.pin(op);
            None
        }
    }

    pub fn pin(&mut self, op: OpId) {
        if !self.pins.contains(&op) {
            self.pins.push(op);
        }
    }

    /// Thesis `unpin` (`mid̄ \ mid`).
    pub fn unpin(&mut self, op: OpId) {
        self.pins.retain(|p| *p != op);
    }

    pub fn pinned(&self) -> bool {
        !self.pins.is_empty()
    }

    /// `canEvict` minus the class preference: clean and unpinned (A6 reading of the axiom).
    pub fn evictable(&self) -> bool {
        self.dirty == 0 && self.pins.is_empty()
    }

    /// Thesis `isCached` for the bytes in `mask`: the bytes are there, or a fill is on its way.
    pub fn holds(&self, mask: u64) -> bool {
        self.valid & mask == mask || self.fill_pending
    }

    /// The line-level `write`, byte by byte: a byte whose value changes (or that was invalid)
    /// becomes valid and dirty; writing the value a valid byte already holds leaves it and its
    /// dirty bit alone (digest §6 item 5).
    pub fn write(&mut self, bytes: &[u8; 64], mask: u64) {
        for (i, (d, b)) in self.data.iter_mut().zip(bytes).enumerate() {
            let bit = 1u64 << i;
            if mask & bit != 0 && (self.valid & bit == 0 || *d != *b) {
                *d = *b;
                self.valid |= bit;
                self.dirty |= bit;
            }
        }
    }

    /// Thesis `update` per byte: fills only bytes that are not valid yet, so a value written
    /// while the fill was in flight is never overwritten by the older fetched one (digest §6
    /// item 4, test T8). The fill has arrived: `fill_pending` is cleared. Pins stay.
    pub fn update(&mut self, bytes: &[u8; 64], mask: u64) {
        let fill = mask & !self.valid;
        for (i, (d, b)) in self.data.iter_mut().zip(bytes).enumerate() {
            if fill >> i & 1 != 0 {
                *d = *b;
            }
        }
        self.valid |= fill;
        self.fill_pending = false;
    }
}

/// What a read that hits gets of the line: its bytes and which are valid.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    pub data: [u8; 64],
    pub valid: u64,
}

/// Result of an operation that did not get stuck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// ε: not now; the program yields and retries this operation next micro step.
    Defer,
}

fn stuck(op: Option<OpId>, message: String) -> Stuck {
    Stuck { op, message }
}

/// The L2, or an L1's live lines. The capacity in lines is passed to the operations that
/// allocate.
///
/// Besides the lines, the cache indexes the victim candidates (`evictable`, `first`,
/// `unpinned`), so that the deterministic victim and "is there room" are found in O(log n)
/// instead of a scan of every line (a full L2 is the common case on real kernels). The indexes
/// are functions of the lines: equality and the state hash look at the lines only. Every change
/// of a line goes through [`Cache::with_line`] or the operations below, which keep them.
#[derive(Debug, Clone)]
pub struct Cache {
    lines: OrdMap<Key, Line>,
    /// Keys of the clean unpinned lines ([`Line::evictable`]).
    evictable: OrdSet<Key>,
    /// Keys of the evictable lines of class `First`.
    first: OrdSet<Key>,
    /// Keys of the unpinned lines, clean or dirty (a dirty one is written back to make room).
    unpinned: OrdSet<Key>,
    /// The keys of the lines changed since the owner last drained them (a journal, not state:
    /// the engine re-evaluates only the choices that depend on these lines).
    touched: Vec<Key>,
    /// The keys, among those, of the lines that came, left or changed which bytes are valid
    /// (a journal, not state): the only changes a read waiting for a fill can see (the
    /// engine re-tests such reads only then, not on every pin of their line).
    filled: Vec<Key>,
}

/// The caches are equal when their lines are (the indexes follow from the lines).
impl PartialEq for Cache {
    fn eq(&self, other: &Self) -> bool {
        self.lines == other.lines
    }
}

/// A line that left a cache to make room while dirty: its dirty bytes must go to the next
/// level (the caller writes them; see [`Cache::make_room`]).
#[derive(Debug)]
pub struct WrittenBack {
    pub key: Key,
    pub line: Line,
}

impl Cache {
    pub fn new() -> Cache {
        Cache {
            lines: OrdMap::new(),
            evictable: OrdSet::new(),
            first: OrdSet::new(),
            unpinned: OrdSet::new(),
            touched: Vec::new(),
            filled: Vec::new(),
        }
    }

    /// Moves the keys of the lines changed since the last call into `touched` and those of
    /// the lines that came, left or changed their valid bytes into `filled` (in change order,
    /// possibly repeated).
    pub fn drain_touched(&mut self, touched: &mut Vec<Key>, filled: &mut Vec<Key>) {
        touched.append(&mut self.touched);
        filled.append(&mut self.filled);
    }

    /// Whether a line changed since the last [`Cache::drain_touched`].
    pub fn was_touched(&self) -> bool {
        !self.touched.is_empty() || !self.filled.is_empty()
    }

    /// Journals that the valid bytes of a line at `key` outside this cache's lines changed
    /// (a doomed L1 line).
    fn note_filled(&mut self, key: Key) {
        self.filled.push(key);
    }

    /// Whether some line is unpinned (a victim exists when dirty victims may be taken).
    pub fn has_unpinned(&self) -> bool {
        !self.unpinned.is_empty()
    }

    /// The lines by key.
    pub fn lines(&self) -> &OrdMap<Key, Line> {
        &self.lines
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// The lowest key (an iterator over a persistent map allocates its path; this does not).
    pub fn min_key(&self) -> Option<Key> {
        self.lines.get_min().map(|(k, _)| *k)
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    pub fn get(&self, key: Key) -> Option<&Line> {
        self.lines.get(&key)
    }

    pub fn contains(&self, key: Key) -> bool {
        self.lines.contains_key(&key)
    }

    /// Which index sets a line belongs to: (evictable, first, unpinned).
    fn status(l: &Line) -> (bool, bool, bool) {
        let ev = l.evictable();
        (ev, ev && l.class == EvClass::First, l.pins.is_empty())
    }

    fn index(&mut self, key: Key, old: (bool, bool, bool), new: (bool, bool, bool)) {
        fn set(s: &mut OrdSet<Key>, key: Key, was: bool, is: bool) {
            match (was, is) {
                (false, true) => {
                    s.insert(key);
                }
                (true, false) => {
                    s.remove(&key);
                }
                _ => {}
            }
        }
        set(&mut self.evictable, key, old.0, new.0);
        set(&mut self.first, key, old.1, new.1);
        set(&mut self.unpinned, key, old.2, new.2);
    }

    /// Changes the line at `key` (if any) with `f`, keeping the indexes.
    pub fn with_line<R>(&mut self, key: Key, f: impl FnOnce(&mut Line) -> R) -> Option<R> {
        let l = self.lines.get_mut(&key)?;
        self.touched.push(key);
        let old = Self::status(l);
        let valid = l.valid;
        let r = f(l);
        let new = Self::status(l);
        if l.valid != valid {
            self.filled.push(key);
        }
        if old != new {
            self.index(key, old, new);
        }
        Some(r)
    }

    pub fn insert(&mut self, key: Key, line: Line) {
        self.touched.push(key);
        self.filled.push(key);
        let new = Self::status(&line);
        let old = self
            .lines
            .insert(key, line)
            .map_or((false, false, false), |l| Self::status(&l));
        self.index(key, old, new);
    }

    pub fn remove(&mut self, key: Key) -> Option<Line> {
        let l = self.lines.remove(&key)?;
        self.touched.push(key);
        self.filled.push(key);
        self.index(key, Self::status(&l), (false, false, false));
        Some(l)
    }

    /// Keeps the lines for which `keep` holds (one pass that builds a fresh map: every removal
    /// from a persistent map copies its path); returns the others in key order.
    pub fn split_off_where(&mut self, keep: impl Fn(Key) -> bool) -> Vec<(Key, Line)> {
        let mut kept = Cache::new();
        let mut gone = Vec::new();
        for (k, l) in self.lines.iter() {
            if keep(*k) {
                kept.insert(*k, l.clone());
            } else {
                gone.push((*k, l.clone()));
            }
        }
        kept.touched = std::mem::take(&mut self.touched);
        kept.touched.extend(gone.iter().map(|(k, _)| *k));
        kept.filled = std::mem::take(&mut self.filled);
        kept.filled.extend(gone.iter().map(|(k, _)| *k));
        *self = kept;
        gone
    }

    /// The clean unpinned lines, by key (the candidates of the silent evictions).
    #[cfg(debug_assertions)]
    pub fn evictable_keys(&self) -> impl Iterator<Item = Key> + '_ {
        self.evictable.iter().copied()
    }

    /// The deterministic victim of a reserve on a full cache (digest §3.14 item 4 made a fixed
    /// rule): the lowest-keyed clean unpinned line of class `First`, else of any class, else
    /// the lowest-keyed unpinned dirty line (which is written back on its way out: making room
    /// is no silent action, so a cache full of dirty lines never blocks a reserve, whatever
    /// `--silent` allows). Every other eviction stays a choice (the silent rules).
    pub fn victim(&self) -> Option<Key> {
        self.first
            .get_min()
            .or_else(|| self.evictable.get_min())
            .or_else(|| self.unpinned.get_min())
            .copied()
    }

    /// Whether the victim (if any) is clean: evicting it writes nothing back.
    pub fn has_clean_victim(&self) -> bool {
        !self.evictable.is_empty()
    }

    /// Room for a new line: an unused one exists, or the victim leaves (`Ok(None)`, or
    /// `Ok(Some(line))` when it was dirty and its dirty bytes must go to the next level).
    /// `Err(())`: every line is pinned: defer. `dirty_ok`: whether a dirty victim may be taken
    /// (the caller can write it back now).
    pub fn make_room(
        &mut self,
        capacity: usize,
        dirty_ok: bool,
    ) -> Result<Option<WrittenBack>, ()> {
        if self.lines.len() < capacity {
            return Ok(None);
        }
        let victim = if dirty_ok {
            self.victim()
        } else {
            self.first
                .get_min()
                .or_else(|| self.evictable.get_min())
                .copied()
        };
        let Some(key) = victim else { return Err(()) };
        let line = self.remove(key).expect("an indexed victim is a line");
        Ok((line.dirty != 0).then_some(WrittenBack { key, line }))
    }

    /// Whether a reserve or an allocating write of `key` would defer: no line, no unused line,
    /// and no victim (with `dirty_ok`: every line pinned; else: no clean unpinned line).
    pub fn would_defer_alloc(&self, key: Key, capacity: usize, dirty_ok: bool) -> bool {
        self.would_defer_alloc_with(key, capacity, || dirty_ok)
    }

    /// [`Cache::would_defer_alloc`] with `dirty_ok` computed only when it matters (it asks L2
    /// whether an L1 may write a dirty victim back).
    pub fn would_defer_alloc_with(
        &self,
        key: Key,
        capacity: usize,
        dirty_ok: impl FnOnce() -> bool,
    ) -> bool {
        // Cheapest test first: the enabled set asks this of every waiting op after every step,
        // and a cache with room (the usual case) needs no lookup.
        self.lines.len() >= capacity
            && if dirty_ok() {
                self.unpinned.is_empty()
            } else {
                self.evictable.is_empty()
            }
            && !self.lines.contains_key(&key)
    }

    /// Thesis `reserve(cl̄, pAddr, mid)`, pinning with `op`. A11 repair: on a line that exists
    /// (a retried reserve after another op reserved the address, or a line whose requested bytes
    /// are not valid), the op joins it (pins it and marks the fill pending) instead of ⊥; the
    /// duplicate fetch that follows is harmless because `update` never overwrites valid bytes.
    /// A dirty victim is returned for write-back.
    pub fn reserve(
        &mut self,
        key: Key,
        op: OpId,
        capacity: usize,
        dirty_ok: bool,
    ) -> (Flow, Option<WrittenBack>) {
        if self
            .with_line(key, |l| {
                l.pin(op);
                l.fill_pending = true;
            })
            .is_some()
        {
            return (Flow::Continue, None);
        }
        match self.make_room(capacity, dirty_ok) {
            Err(()) => (Flow::Defer, None),
            Ok(wb) => {
                self.insert(key, Line::reserved(Some(op)));
                (Flow::Continue, wb)
            }
        }
    }

    /// The cache-level `write` (program writes; no pin): into the existing line, or into a
    /// freshly allocated one (write-allocate without fetch: only the written bytes are valid).
    /// A dirty victim is returned for write-back.
    pub fn write(
        &mut self,
        key: Key,
        bytes: &[u8; 64],
        mask: u64,
        capacity: usize,
        dirty_ok: bool,
    ) -> (Flow, Option<WrittenBack>) {
        let mut wb = None;
        if !self.lines.contains_key(&key) {
            match self.make_room(capacity, dirty_ok) {
                Err(()) => return (Flow::Defer, None),
                Ok(w) => wb = w,
            }
            let mut l = Line::reserved(None);
            l.fill_pending = false;
            self.insert(key, l);
        }
        self.with_line(key, |l| l.write(bytes, mask));
        (Flow::Continue, wb)
    }

    /// Thesis `evict` (explicit; ignores classes): absent is success, a dirty or pinned line
    /// defers.
    pub fn evict(&mut self, key: Key) -> Flow {
        match self.lines.get(&key) {
            None => Flow::Continue,
            Some(l) if l.evictable() => {
                self.remove(key);
                Flow::Continue
            }
            Some(_) => Flow::Defer,
        }
    }

    /// Thesis `discard`: drops the line even if dirty (intended data loss); pinned defers.
    pub fn discard(&mut self, key: Key) -> Flow {
        match self.lines.get(&key) {
            None => Flow::Continue,
            Some(l) if !l.pinned() => {
                self.remove(key);
                Flow::Continue
            }
            Some(_) => Flow::Defer,
        }
    }

    /// Checks the indexes against the lines (tests and debug assertions).
    pub fn indexes_consistent(&self) -> bool {
        let mut c = Cache::new();
        for (k, l) in self.lines.iter() {
            c.insert(*k, l.clone());
        }
        c.evictable == self.evictable && c.first == self.first && c.unpinned == self.unpinned
    }
}

/// One SM's L1: its live lines and the doomed ones (A10 repair).
#[derive(Debug, Clone)]
pub struct L1 {
    pub live: Cache,
    /// Lines a flush invalidated while pinned: visible only to the ops that pin them (they may
    /// still fill and read them), dropped when the last pin goes. New lookups never see them.
    /// Several doomed lines may share a key (flush, refetch, flush again). Not counted against
    /// the capacity (they are on their way out). Changed only here (pushed by a flush or an
    /// invalidation, unpinned and dropped by a read), so the indexes below follow it.
    ///
    /// In the order they were doomed; a dropped line leaves a hole (`None`), and the holes
    /// go once they are half of the list: a full-size kernel keeps a hundred doomed lines per
    /// SM, and closing the gap of each line that left moved the lines after it (issue 15).
    doomed: Vec<Option<(Key, Line)>>,
    /// How many entries of `doomed` are holes.
    holes: usize,
    /// A number per entry of `doomed`, in its order and ascending (derived bookkeeping, not
    /// state: each line doomed gets the next one), so a line is found again by binary search
    /// however many lines before it left.
    doomed_seq: Vec<u64>,
    /// The number the next doomed line gets. Each pinner of a doomed line records its number
    /// (`Op::doomed_hint`, set by the engine when a flush or an invalidation dooms the line),
    /// so a lookup goes straight to its line and a lookup by an op that pins none looks at
    /// nothing: a full-size kernel keeps a hundred doomed lines per SM while the barriers of
    /// other blocks flush it, and every waiting load looked through them after every step of
    /// its line (issue 15).
    next_seq: u64,
}

/// Equal L1s have equal lines, live and doomed in the order they were doomed (the holes and
/// the numbers are derived).
impl PartialEq for L1 {
    fn eq(&self, other: &Self) -> bool {
        self.live == other.live
            && self.doomed_len() == other.doomed_len()
            && self.doomed().eq(other.doomed())
    }
}

/// Which doomed line of an L1 an op pins (`Op::doomed_hint`): its number, and where it was
/// in the list when the op was told (a guess: the holes go now and then, and a guess that
/// misses is followed by a binary search on the number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoomedHint {
    pub seq: u64,
    pub pos: u32,
}

/// Where the line an op sees for a key lives.
#[derive(Debug, Clone, Copy)]
pub enum Slot {
    Live,
    /// The doomed line at this position.
    Doomed(usize),
}

impl L1 {
    pub fn new() -> L1 {
        L1 {
            live: Cache::new(),
            doomed: Vec::new(),
            holes: 0,
            doomed_seq: Vec::new(),
            next_seq: 0,
        }
    }

    /// The doomed lines, oldest first.
    pub fn doomed(&self) -> impl Iterator<Item = &(Key, Line)> + '_ {
        self.doomed.iter().flatten()
    }

    /// How many lines are doomed.
    pub fn doomed_len(&self) -> usize {
        self.doomed.len() - self.holes
    }

    /// Whether some line is doomed.
    pub fn has_doomed(&self) -> bool {
        self.doomed_len() != 0
    }

    /// The number the next doomed line gets: [`L1::doomed_from`] with it lists the lines
    /// doomed after this call.
    pub fn doomed_mark(&self) -> u64 {
        self.next_seq
    }

    /// Whether the numbers of the doomed lines are in order, the holes counted, each pinner's
    /// hint (`hint_of`) names its line, and no op pins two doomed lines (tests).
    pub fn doomed_consistent(&self, hint_of: impl Fn(OpId) -> Option<u64>) -> bool {
        let mut pinners = Vec::new();
        for (line, seq) in self.doomed.iter().zip(&self.doomed_seq) {
            let Some((_, l)) = line else { continue };
            for &p in &l.pins {
                pinners.push(p);
                if hint_of(p) != Some(*seq) {
                    return false;
                }
            }
        }
        let n = pinners.len();
        pinners.sort_unstable();
        pinners.dedup();
        // An op pins at most the one line of its access (see `doomed_slot`).
        pinners.len() == n
            && self.doomed_seq.len() == self.doomed.len()
            && self.doomed.iter().filter(|l| l.is_none()).count() == self.holes
            && self.doomed_seq.windows(2).all(|w| w[0] < w[1])
    }

    /// A pinned line becomes doomed.
    fn doom(&mut self, key: Key, l: Line) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.doomed_seq.push(seq);
        self.doomed.push(Some((key, l)));
    }

    /// Drops the doomed line at position `i`: it becomes a hole; trailing holes go, and all
    /// holes once they are half of the list (amortized O(1) per line).
    fn drop_doomed(&mut self, i: usize) {
        if self.doomed.get_mut(i).and_then(Option::take).is_none() {
            return;
        }
        self.holes += 1;
        while matches!(self.doomed.last(), Some(None)) {
            self.doomed.pop();
            self.doomed_seq.pop();
            self.holes -= 1;
        }
        if self.holes * 2 > self.doomed.len() {
            let mut seqs = self.doomed_seq.iter();
            let mut kept = Vec::with_capacity(self.doomed.len() - self.holes);
            self.doomed.retain(|l| {
                let seq = *seqs.next().expect("a number per doomed entry");
                if l.is_some() {
                    kept.push(seq);
                }
                l.is_some()
            });
            self.doomed_seq = kept;
            self.holes = 0;
        }
    }

    /// The doomed lines numbered `from` (a [`L1::doomed_mark`]) or later, with the hints
    /// that find them.
    pub fn doomed_from(&self, from: u64) -> impl Iterator<Item = (DoomedHint, &Line)> {
        let at = self.doomed_seq.partition_point(|s| *s < from);
        let seqs = self.doomed_seq.get(at..).unwrap_or(&[]);
        let lines = self.doomed.get(at..).unwrap_or(&[]);
        seqs.iter()
            .zip(lines)
            .enumerate()
            .filter_map(move |(i, (s, l))| {
                let hint = DoomedHint {
                    seq: *s,
                    pos: (at + i) as u32,
                };
                l.as_ref().map(|(_, l)| (hint, l))
            })
    }

    /// The position of the doomed line at `key` that `op` pins, if any. `hint`: the number of
    /// the doomed line the op was told it pins (`Op::doomed_hint`; stale once its read
    /// unpinned it, hence checked). Every pinner of a doomed line holds that line's number,
    /// and an op pins at most the one L1 line of its access, so this is the line a pass over
    /// the doomed lines would find (`doomed_consistent` checks both).
    fn doomed_slot(&self, key: Key, op: OpId, hint: Option<DoomedHint>) -> Option<usize> {
        let h = hint?;
        let i = match self.doomed_seq.get(h.pos as usize) {
            Some(s) if *s == h.seq => h.pos as usize,
            _ => self.doomed_seq.binary_search(&h.seq).ok()?,
        };
        let (k, l) = self.doomed[i].as_ref()?;
        (*k == key && l.pins.contains(&op)).then_some(i)
    }

    /// The line `op` sees at `key`: a doomed line it pins, else the live line (`hint`: see
    /// `doomed_slot`).
    pub fn find(&self, key: Key, op: OpId, hint: Option<DoomedHint>) -> Option<Slot> {
        if let Some(i) = self.doomed_slot(key, op, hint) {
            return Some(Slot::Doomed(i));
        }
        self.live.contains(key).then_some(Slot::Live)
    }

    /// The line `op` sees at `key` ([`L1::find`] and the line in one lookup).
    pub fn seen_by(&self, key: Key, op: OpId, hint: Option<DoomedHint>) -> Option<&Line> {
        match self.doomed_slot(key, op, hint) {
            Some(i) => self.doomed[i].as_ref().map(|(_, l)| l),
            None => self.live.get(key),
        }
    }

    /// Changes the line in `slot` with `f` (the live cache keeps its indexes).
    pub fn with_line<R>(
        &mut self,
        key: Key,
        slot: Slot,
        f: impl FnOnce(&mut Line) -> R,
    ) -> Option<R> {
        match slot {
            Slot::Live => self.live.with_line(key, f),
            Slot::Doomed(i) => {
                // Only a pinner sees a doomed line, and its steps pin nobody else.
                let (_, l) = self.doomed.get_mut(i)?.as_mut()?;
                let valid = l.valid;
                let r = f(l);
                if l.valid != valid {
                    self.live.note_filled(key);
                }
                Some(r)
            }
        }
    }

    /// `flush`: every global line leaves the live cache (A9: local lines stay where they are);
    /// pinned ones become doomed (A10 repair: the thesis's flush would wipe a pinned line an
    /// in-flight `.ca` read reserved and leave that read stuck at `updateL1`).
    pub fn flush(&mut self, is_global: impl Fn(Key) -> bool) {
        for (k, l) in self.live.split_off_where(|k| !is_global(k)) {
            if l.pinned() {
                self.doom(k, l);
            }
        }
    }

    /// Drops the live line at `key`, if any; a pinned one becomes doomed (like [`L1::flush`] for
    /// one line).
    pub fn invalidate(&mut self, key: Key) {
        // A persistent map copies its path even to remove nothing.
        if !self.live.contains(key) {
            return;
        }
        if let Some(l) = self.live.remove(key)
            && l.pinned()
        {
            self.doom(key, l);
        }
    }

    /// Thesis `read` as seen by `op`: a hit returns the line (after unpinning; a doomed line
    /// whose last pin goes is dropped); a line whose bytes are not valid yet is pinned (defer);
    /// no line is ⊥.
    pub fn read(
        &mut self,
        key: Key,
        mask: u64,
        op: OpId,
        hint: Option<DoomedHint>,
    ) -> Result<Option<Hit>, Stuck> {
        if let Some(i) = self.doomed_slot(key, op, hint) {
            let hit = self
                .with_line(key, Slot::Doomed(i), |l| l.read(mask, op))
                .flatten();
            if hit.is_some() && self.doomed[i].as_ref().is_some_and(|(_, l)| !l.pinned()) {
                self.drop_doomed(i);
            }
            return Ok(hit);
        }
        // One lookup of the live line.
        self.live
            .with_line(key, |l| l.read(mask, op))
            .ok_or_else(|| stuck(Some(op), format!("readL1: line {key:#x} is not cached")))
    }
}

/// Thesis `read` on the L2 (no doomed lines there).
pub fn read_l2(cache: &mut Cache, key: Key, mask: u64, op: OpId) -> Result<Option<Hit>, Stuck> {
    match cache.with_line(key, |l| l.read(mask, op)) {
        None => Err(stuck(
            Some(op),
            format!("readL2: line {key:#x} is not cached"),
        )),
        Some(hit) => Ok(hit),
    }
}

#[cfg(test)]
mod tests {
    use super::{DoomedHint, L1, Line, Slot};

    /// An L1 whose lines at keys 0, 32, 64, ... are each pinned by the op of their index
    /// (`ops`), flushed: every line doomed, in key order.
    fn doomed_l1(ops: &[u32]) -> L1 {
        let mut c = L1::new();
        for &op in ops {
            c.live.insert(op as u64 * 32, Line::reserved(Some(op)));
        }
        c.flush(|_| true);
        c
    }

    /// Op `op`'s fill of its doomed line arrives and its read hits: the line goes.
    fn fill_and_read(c: &mut L1, op: u32, hint: DoomedHint) {
        let key = op as u64 * 32;
        let Some(Slot::Doomed(i)) = c.find(key, op, Some(hint)) else {
            panic!("op {op} finds its doomed line");
        };
        c.with_line(key, Slot::Doomed(i), |l| l.update(&[7; 64], 0xff));
        let hit = c.read(key, 0xf, op, Some(hint)).expect("the line is there");
        assert!(hit.is_some(), "op {op} reads its filled line");
    }

    #[test]
    fn dropped_doomed_lines_leave_holes_and_the_rest_stays_in_order() {
        let mut c = doomed_l1(&[0, 1, 2, 3, 4]);
        let hints: Vec<DoomedHint> = c.doomed_from(0).map(|(h, _)| h).collect();
        assert_eq!(hints.len(), 5);
        // Two holes in five entries: kept.
        fill_and_read(&mut c, 1, hints[1]);
        fill_and_read(&mut c, 0, hints[0]);
        assert_eq!(c.doomed_len(), 3);
        assert!(c.doomed_consistent(|p| Some(hints[p as usize].seq)));
        // A third: the holes are over half the list and go, so the positions op 2 and op 4
        // were told are stale; the numbers still find their lines.
        fill_and_read(&mut c, 3, hints[3]);
        assert_eq!(c.doomed_len(), 2);
        for op in [2, 4] {
            let l = c.seen_by(op as u64 * 32, op, Some(hints[op as usize]));
            assert!(
                l.is_some_and(|l| l.pins.contains(&op)),
                "op {op} still sees its line"
            );
        }
        let keys: Vec<u64> = c.doomed().map(|(k, _)| *k).collect();
        assert_eq!(keys, [64, 128], "the doomed lines left keep their order");
        // Equal to an L1 that doomed only those two lines (holes and numbers are derived).
        assert_eq!(c, doomed_l1(&[2, 4]));
        assert!(c.doomed_consistent(|p| Some(hints[p as usize].seq)));
        // The last hole at the end goes at once.
        fill_and_read(&mut c, 4, hints[4]);
        assert_eq!(c, doomed_l1(&[2]));
        fill_and_read(&mut c, 2, hints[2]);
        assert!(!c.has_doomed());
        assert_eq!(c, L1::new());
    }
}
