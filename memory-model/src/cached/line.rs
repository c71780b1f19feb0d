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
use imbl::OrdMap;
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

/// The L2, or an L1's live lines, with its capacity in lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Cache {
    pub lines: OrdMap<Key, Line>,
}

impl Cache {
    pub fn new() -> Cache {
        Cache {
            lines: OrdMap::new(),
        }
    }

    /// The deterministic victim of a reserve on a full cache (digest §3.14 item 4 made a fixed
    /// rule): the lowest-keyed clean unpinned line of class `First`, else of any class. Every
    /// other eviction stays a choice (the silent rules).
    fn victim(&self) -> Option<Key> {
        let mut any = None;
        for (k, l) in self.lines.iter() {
            if l.evictable() {
                if l.class == EvClass::First {
                    return Some(*k);
                }
                any.get_or_insert(*k);
            }
        }
        any
    }

    /// Room for a new line: an unused one exists, or the victim is evicted. `false`: defer.
    fn make_room(&mut self, capacity: usize) -> bool {
        if self.lines.len() < capacity {
            return true;
        }
        match self.victim() {
            Some(k) => {
                self.lines.remove(&k);
                true
            }
            None => false,
        }
    }

    /// Whether a reserve or an allocating write of `key` would defer (no line, no room).
    pub fn would_defer_alloc(&self, key: Key, capacity: usize) -> bool {
        !self.lines.contains_key(&key) && self.lines.len() >= capacity && self.victim().is_none()
    }

    /// Thesis `reserve(cl̄, pAddr, mid)`, pinning with `op`. A11 repair: on a line that exists
    /// (a retried reserve after another op reserved the address, or a line whose requested bytes
    /// are not valid), the op joins it (pins it and marks the fill pending) instead of ⊥; the
    /// duplicate fetch that follows is harmless because `update` never overwrites valid bytes.
    pub fn reserve(&mut self, key: Key, op: OpId, capacity: usize) -> Flow {
        if let Some(l) = self.lines.get_mut(&key) {
            l.pin(op);
            l.fill_pending = true;
            return Flow::Continue;
        }
        if !self.make_room(capacity) {
            return Flow::Defer;
        }
        self.lines.insert(key, Line::reserved(Some(op)));
        Flow::Continue
    }

    /// The cache-level `write` (program writes; no pin): into the existing line, or into a
    /// freshly allocated one (write-allocate without fetch: only the written bytes are valid).
    pub fn write(&mut self, key: Key, bytes: &[u8; 64], mask: u64, capacity: usize) -> Flow {
        if !self.lines.contains_key(&key) {
            if !self.make_room(capacity) {
                return Flow::Defer;
            }
            let mut l = Line::reserved(None);
            l.fill_pending = false;
            self.lines.insert(key, l);
        }
        if let Some(l) = self.lines.get_mut(&key) {
            l.write(bytes, mask);
        }
        Flow::Continue
    }

    /// Thesis `evict` (explicit; ignores classes): absent is success, a dirty or pinned line
    /// defers.
    pub fn evict(&mut self, key: Key) -> Flow {
        match self.lines.get(&key) {
            None => Flow::Continue,
            Some(l) if l.evictable() => {
                self.lines.remove(&key);
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
                self.lines.remove(&key);
                Flow::Continue
            }
            Some(_) => Flow::Defer,
        }
    }
}

/// One SM's L1: its live lines and the doomed ones (A10 repair).
#[derive(Debug, Clone, PartialEq)]
pub struct L1 {
    pub live: Cache,
    /// Lines a flush invalidated while pinned: visible only to the ops that pin them (they may
    /// still fill and read them), dropped when the last pin goes. New lookups never see them.
    /// Several doomed lines may share a key (flush, refetch, flush again). Not counted against
    /// the capacity (they are on their way out).
    pub doomed: Vec<(Key, Line)>,
}

/// Where the line an op sees for a key lives.
#[derive(Debug, Clone, Copy)]
pub enum Slot {
    Live,
    Doomed(usize),
}

impl L1 {
    pub fn new() -> L1 {
        L1 {
            live: Cache::new(),
            doomed: Vec::new(),
        }
    }

    /// The line `op` sees at `key`: a doomed line it pins, else the live line.
    pub fn find(&self, key: Key, op: OpId) -> Option<Slot> {
        if let Some(i) = self
            .doomed
            .iter()
            .position(|(k, l)| *k == key && l.pins.contains(&op))
        {
            return Some(Slot::Doomed(i));
        }
        self.live.lines.contains_key(&key).then_some(Slot::Live)
    }

    pub fn get(&self, key: Key, slot: Slot) -> Option<&Line> {
        match slot {
            Slot::Live => self.live.lines.get(&key),
            Slot::Doomed(i) => self.doomed.get(i).map(|(_, l)| l),
        }
    }

    pub fn get_mut(&mut self, key: Key, slot: Slot) -> Option<&mut Line> {
        match slot {
            Slot::Live => self.live.lines.get_mut(&key),
            Slot::Doomed(i) => self.doomed.get_mut(i).map(|(_, l)| l),
        }
    }

    /// `flush`: every global line leaves the live cache (A9: local lines stay where they are);
    /// pinned ones become doomed (A10 repair: the thesis's flush would wipe a line an in-flight
    /// `.ca` read reserved and leave that read stuck at `updateL1`).
    pub fn flush(&mut self, is_global: impl Fn(Key) -> bool) {
        // The kept (local) lines go into a fresh map instead of removing the others one by
        // one: every removal from a persistent map copies its path.
        let mut kept = OrdMap::new();
        for (k, l) in self.live.lines.iter() {
            if !is_global(*k) {
                kept.insert(*k, l.clone());
            } else if l.pinned() {
                self.doomed.push((*k, l.clone()));
            }
        }
        self.live.lines = kept;
    }

    /// Drops the live line at `key`, if any; a pinned one becomes doomed (like [`L1::flush`] for
    /// one line).
    pub fn invalidate(&mut self, key: Key) {
        // A persistent map copies its path even to remove nothing.
        if !self.live.lines.contains_key(&key) {
            return;
        }
        if let Some(l) = self.live.lines.remove(&key)
            && l.pinned()
        {
            self.doomed.push((key, l));
        }
    }

    /// Thesis `read` as seen by `op`: a hit returns the line (after unpinning; a doomed line
    /// whose last pin goes is dropped); a line whose bytes are not valid yet is pinned (defer);
    /// no line is ⊥.
    pub fn read(&mut self, key: Key, mask: u64, op: OpId) -> Result<Option<Line>, Stuck> {
        let Some(slot) = self.find(key, op) else {
            return Err(stuck(
                Some(op),
                format!("readL1: line {key:#x} is not cached"),
            ));
        };
        let hit = match self.get_mut(key, slot) {
            Some(l) if l.valid & mask == mask => {
                l.unpin(op);
                Some(l.clone())
            }
            Some(l) => {
                l.pin(op);
                None
            }
            None => None,
        };
        if let (Some(l), Slot::Doomed(i)) = (&hit, slot)
            && !l.pinned()
        {
            self.doomed.remove(i);
        }
        Ok(hit)
    }
}

/// Thesis `read` on the L2 (no doomed lines there).
pub fn read_l2(cache: &mut Cache, key: Key, mask: u64, op: OpId) -> Result<Option<Line>, Stuck> {
    match cache.lines.get_mut(&key) {
        None => Err(stuck(
            Some(op),
            format!("readL2: line {key:#x} is not cached"),
        )),
        Some(l) if l.valid & mask == mask => {
            l.unpin(op);
            Ok(Some(l.clone()))
        }
        Some(l) => {
            l.pin(op);
            Ok(None)
        }
    }
}
