//! Out-of-bounds and uninitialised accesses (issue: "reads of memory never written").
//!
//! * **Regions.** Every launch buffer and module variable is a region with an element size, so
//!   that any finding names `buffer[index]`. The flat memory already faults on global accesses
//!   outside every allocation (with guard gaps between buffers); inside one block's shared
//!   memory it cannot tell variables apart, so this monitor reports shared accesses that land in
//!   no `.shared` variable (padding, past the dynamic area).
//! * **Initialisation.** One bit per byte: shared memory starts undefined in every block (PTX
//!   forbids initialisers there), `.local` memory in every thread, launch buffers only when the
//!   launch marks them so ([`super::Monitors::mark_buffer_uninitialised`]; by default a launch
//!   buffer holds its `init`, zeros if none). Module `.global`/`.const` variables are initialised
//!   (PTX ISA 5.4.4: zero unless given). A read (or atomic) of a byte nothing wrote is reported
//!   once per pc. `ld.param`/`st.param` are skipped: `call` copies arguments into frames without
//!   events.

use super::{
    AccessOp, Location, MemoryErrorKind, MemoryFinding, Monitors, RawAccess, Shape, elem_size,
};
use crate::machine::{LaunchConfig, Machine};
use crate::program::{Program, Space};
use std::collections::{BTreeMap, HashMap};
use traces::MemSpace;

/// A named range of one state space.
#[derive(Debug, Clone)]
struct Region {
    name: String,
    space: MemSpace,
    base: u64,
    size: u64,
    elem: u64,
    /// Launch buffer index, if it is one.
    buffer: Option<usize>,
}

const LOCAL_PAGE: u64 = 4096;

pub(crate) struct MemState {
    /// Sorted by `(space, base)`.
    regions: Vec<Region>,
    /// Uninitialised launch buffers: `(region index, init bits)`.
    global_init: Vec<(usize, Vec<u64>)>,
    /// Per grid (in launch order), one bit per byte of a block's shared memory: inside some
    /// `.shared` variable (the out-of-bounds test). Grids differ in their dynamic shared memory.
    shared_covered: Vec<Vec<u64>>,
    shared_init: Vec<Option<Vec<u64>>>,
    /// `(global thread, page) -> bits`.
    local_init: HashMap<(u32, u64), Box<[u64; (LOCAL_PAGE / 64) as usize]>>,
    /// Reported `(pc, kind)` -> index in `findings.memory`.
    seen: BTreeMap<(u32, u8), usize>,
    /// Faults of the warp access being checked: `(kind, lane, address)` (reused).
    faults: Vec<(MemoryErrorKind, u32, u64)>,
}

impl MemState {
    /// The regions of `launch`'s buffers and `program`'s variables; `shapes` are the grids',
    /// each with its shared memory size.
    pub fn new(
        machine: &Machine,
        launch: &LaunchConfig,
        program: &Program,
        shapes: &[Shape],
    ) -> MemState {
        let mut regions = Vec::new();
        for (i, b) in launch.buffers.iter().enumerate() {
            if let Some(base) = machine.buffer_address(i) {
                regions.push(Region {
                    name: b.name.clone(),
                    space: MemSpace::Global,
                    base,
                    size: b.bytes.len() as u64,
                    elem: elem_size(b.elem),
                    buffer: Some(i),
                });
            }
        }
        // The dynamic shared variable is named up to the end of the largest grid's shared
        // memory; whether an access is inside it is each grid's own (`shared_covered`).
        let largest = shapes.iter().map(|s| s.shared_bytes).max().unwrap_or(0);
        for v in &program.variables {
            let space = match v.space {
                Space::Global => MemSpace::Global,
                Space::Shared => MemSpace::Shared,
                Space::Const => MemSpace::Const,
                _ => continue,
            };
            let size = if v.dynamic {
                largest.saturating_sub(program.shared_size)
            } else {
                v.size
            };
            regions.push(Region {
                name: v.name.clone(),
                space,
                base: v.address,
                size,
                elem: elem_size(v.ty),
                buffer: None,
            });
        }
        regions.sort_by_key(|r| (r.space as u8, r.base));
        let shared_covered = shapes
            .iter()
            .map(|shape| {
                let shared_bytes = shape.shared_bytes;
                let mut covered = vec![0u64; shared_bytes.div_ceil(64) as usize];
                for r in regions.iter().filter(|r| r.space == MemSpace::Shared) {
                    let hi = (r.base + r.size).min(shared_bytes);
                    if r.base < hi {
                        bits(&mut covered, r.base, hi, true);
                    }
                }
                covered
            })
            .collect();
        MemState {
            shared_covered,
            regions,
            global_init: Vec::new(),
            shared_init: Vec::new(),
            local_init: HashMap::new(),
            seen: BTreeMap::new(),
            faults: Vec::new(),
        }
    }

    pub fn mark_uninitialised(&mut self, buffer: usize) {
        if let Some(i) = self.regions.iter().position(|r| r.buffer == Some(buffer))
            && !self.global_init.iter().any(|(r, _)| *r == i)
        {
            let words = self.regions[i].size.div_ceil(64) as usize;
            self.global_init.push((i, vec![0; words]));
        }
    }

    /// Block `block` of the grid of `shape` became resident: its shared memory (its grid's
    /// size) starts undefined.
    pub fn issue(&mut self, block: u32, shape: &Shape) {
        let i = block as usize;
        if self.shared_init.len() <= i {
            self.shared_init.resize_with(i + 1, || None);
        }
        self.shared_init[i] = Some(vec![0; shape.shared_bytes.div_ceil(64) as usize]);
    }

    pub fn retire(&mut self, block: u32) {
        if let Some(s) = self.shared_init.get_mut(block as usize) {
            *s = None;
        }
    }

    fn region(&self, space: MemSpace, addr: u64) -> Option<usize> {
        let key = (space as u8, addr);
        let i = self
            .regions
            .partition_point(|r| (r.space as u8, r.base) <= key);
        let r = self.regions.get(i.checked_sub(1)?)?;
        (r.space == space && addr < r.base + r.size.max(1)).then_some(i - 1)
    }

    /// `buffer[index]` for an address accessed with `size` bytes. Byte-typed variables (clang
    /// declares every array `.b8`) are indexed by the access size.
    pub fn locate(&self, space: MemSpace, addr: u64, size: u32) -> Option<Location> {
        let r = &self.regions[self.region(space, addr)?];
        let off = addr - r.base;
        let elem = if r.elem == 1 && r.buffer.is_none() {
            (size as u64).max(1)
        } else {
            r.elem
        };
        Some(Location {
            name: r.name.clone(),
            index: off / elem,
            byte: off % elem,
        })
    }
}

/// Tests bits `[lo, hi)` of `bits`; sets them when `set`. Returns whether all were set before.
#[inline(always)]
fn bits(bits: &mut [u64], lo: u64, hi: u64, set: bool) -> bool {
    // Fast path: the range lies in one 64-bit word (every naturally aligned access of <= 8 bytes).
    if hi > lo && lo / 64 == (hi - 1) / 64 {
        let n = hi - lo;
        let m = if n >= 64 {
            u64::MAX
        } else {
            ((1u64 << n) - 1) << (lo % 64)
        };
        if let Some(word) = bits.get_mut((lo / 64) as usize) {
            let all = *word & m == m;
            if set {
                *word |= m;
            }
            return all;
        }
        return true;
    }
    let mut all = true;
    for b in lo..hi {
        let (w, m) = ((b / 64) as usize, 1u64 << (b % 64));
        if let Some(word) = bits.get_mut(w) {
            all &= *word & m != 0;
            if set {
                *word |= m;
            }
        }
    }
    all
}

impl Monitors {
    /// The memory checks of a whole-warp access (`Event::WarpMemory`: `a` made by each of
    /// `lanes` at its address): shared accesses, the common case, in one tight pass.
    pub(crate) fn memory_warp(&mut self, a: RawAccess, lanes: impl Iterator<Item = (u32, u64)>) {
        if a.space != MemSpace::Shared {
            for (lane, address) in lanes {
                self.memory_access(&RawAccess { lane, address, ..a });
            }
            return;
        }
        let size = a.size.max(1) as u64;
        let reads = a.op != AccessOp::Write;
        let writes = a.op != AccessOp::Read;
        // Lanes found at fault, reported after the pass (rare: the vector is empty).
        let mut faults = std::mem::take(&mut self.mem.faults);
        let grid = self.shape(a.block).index;
        {
            let MemState {
                shared_covered,
                shared_init,
                ..
            } = &mut self.mem;
            let mut init = shared_init
                .get_mut(a.block as usize)
                .and_then(Option::as_mut);
            let shared_covered = &mut shared_covered[grid];
            for (lane, address) in lanes {
                if !bits(shared_covered, address, address + size, false) {
                    faults.push((MemoryErrorKind::OutOfBounds, lane, address));
                }
                if let Some(init) = init.as_deref_mut() {
                    let ok = bits(init, address, address + size, writes);
                    if reads && !ok {
                        faults.push((MemoryErrorKind::Uninitialised, lane, address));
                    }
                }
            }
        }
        for &(kind, lane, address) in &faults {
            self.memory_finding(kind, &RawAccess { lane, address, ..a });
        }
        faults.clear();
        self.mem.faults = faults;
    }

    pub(crate) fn memory_access(&mut self, a: &RawAccess) {
        let reads = a.op != AccessOp::Write;
        let writes = a.op != AccessOp::Read;
        let size = a.size.max(1) as u64;
        let mut uninit = false;
        let mut oob = false;
        match a.space {
            MemSpace::Shared => {
                let grid = self.shape(a.block).index;
                oob = !bits(
                    &mut self.mem.shared_covered[grid],
                    a.address,
                    a.address + size,
                    false,
                );
                if let Some(Some(init)) = self.mem.shared_init.get_mut(a.block as usize) {
                    let ok = bits(init, a.address, a.address + size, writes);
                    uninit = reads && !ok;
                }
            }
            MemSpace::Local if !a.class.param => {
                let g = self.shape(a.block).global_thread(a.block, a.warp, a.lane);
                let page = a.address / LOCAL_PAGE;
                let off = a.address % LOCAL_PAGE;
                let init = self
                    .mem
                    .local_init
                    .entry((g, page))
                    .or_insert_with(|| Box::new([0; (LOCAL_PAGE / 64) as usize]));
                let ok = bits(&mut init[..], off, (off + size).min(LOCAL_PAGE), writes);
                uninit = reads && !ok;
            }
            MemSpace::Global if !self.mem.global_init.is_empty() => {
                if let Some(r) = self.mem.region(MemSpace::Global, a.address) {
                    let base = self.mem.regions[r].base;
                    if let Some((_, init)) = self.mem.global_init.iter_mut().find(|(i, _)| *i == r)
                    {
                        let lo = a.address - base;
                        let ok = bits(init, lo, lo + size, writes);
                        uninit = reads && !ok;
                    }
                }
            }
            _ => {}
        }
        if oob {
            self.memory_finding(MemoryErrorKind::OutOfBounds, a);
        }
        if uninit {
            self.memory_finding(MemoryErrorKind::Uninitialised, a);
        }
    }

    fn memory_finding(&mut self, kind: MemoryErrorKind, a: &RawAccess) {
        let key = (a.pc, kind as u8);
        if let Some(&i) = self.mem.seen.get(&key) {
            if let Some(f) = self.findings.memory.get_mut(i) {
                f.occurrences += 1;
            }
            return;
        }
        if self.full() {
            return;
        }
        let g = self.shape(a.block).global_thread(a.block, a.warp, a.lane);
        let access = self.access_info(
            g,
            a.pc,
            a.op,
            a.class.strong.then_some(a.class.scope),
            a.space,
            a.address,
            a.size,
            a.block,
        );
        self.mem.seen.insert(key, self.findings.memory.len());
        self.findings.memory.push(MemoryFinding {
            kind,
            access,
            step: self.step,
            occurrences: 1,
        });
    }
}
