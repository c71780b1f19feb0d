//! The canonical state hash of the cached memory (docs/internals/exploration.md, "State hash"):
//! what [`Cached::hash_state`] feeds into the machine's fingerprint.
//!
//! Hashed: every cache line that exists (L1s by SM, live lines by key then doomed lines in
//! doom order; the L2 by key) with its valid bytes, masks, pins, class and fill flag; every
//! in-flight op by id with its request, program position, dependencies, σ values and the valid
//! bytes of its line buffer; the bank locks. Left out: the configuration (fixed for a launch),
//! bytes that are not valid (a line's invalid bytes are always 0; a buffer's are leftovers).
//!
//! The L1s, the L2 and each op are hashed once per change ([`Fingerprinted`]) and enter the
//! state's hash as their 128-bit fingerprints.
//!
//! The encoding is injective by construction: each variable-length part is preceded by its
//! length or by the mask that says which words follow, and small fields are packed into words
//! without overlapping. Every struct is destructured without `..`: a field added later fails to
//! compile here until someone decides whether it belongs to the state.

use super::engine::Op;
use super::line::{Cache, EvClass, Key, L1, Line};
use super::{Cached, Dest, Request, RequestKind, Rmw};
#[cfg(doc)]
use crate::Fingerprinted;
use crate::{CacheOp, MemOrder, MemSpace, Scope, StateHasher, Who};
use std::hash::Hasher;

/// Byte `i` of the result is 0xff when bit `i` of the index is set: a byte mask made a word
/// mask, so the valid bytes of a word are selected with one `and`.
const BYTE_MASKS: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut b = 0;
        while b < 8 {
            if i >> b & 1 != 0 {
                t[i] |= 0xff << (8 * b);
            }
            b += 1;
        }
        i += 1;
    }
    t
};

/// The bytes of `data` whose bit is set in `mask`: the mask, then each word holding a selected
/// byte (selected bytes only). Which words follow is a function of the mask, so the encoding
/// is prefix-free.
fn hash_masked_bytes<H: Hasher>(data: &[u8; 64], mask: u64, h: &mut H) {
    h.write_u64(mask);
    for (w, chunk) in data.chunks_exact(8).enumerate() {
        let byte_mask = (mask >> (8 * w)) & 0xff;
        if byte_mask != 0 {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            h.write_u64(word & BYTE_MASKS[byte_mask as usize]);
        }
    }
}

fn hash_line<H: Hasher>(key: Key, l: &Line, h: &mut H) {
    let Line {
        data,
        valid,
        dirty,
        pins,
        class,
        fill_pending,
    } = l;
    h.write_u64(key);
    // Invalid bytes are always 0 (`Line::data`): the valid ones say everything.
    hash_masked_bytes(data, *valid, h);
    h.write_u64(*dirty);
    let class = match class {
        EvClass::First => 0u64,
        EvClass::Normal => 1,
    };
    h.write_u64(pins.len() as u64 | class << 32 | (*fill_pending as u64) << 40);
    for p in pins {
        h.write_u32(*p);
    }
}

fn space_code(s: MemSpace) -> u64 {
    match s {
        MemSpace::Global => 0,
        MemSpace::Shared => 1,
        MemSpace::Local => 2,
        MemSpace::Const => 3,
        MemSpace::Param => 4,
    }
}

fn order_code(o: MemOrder) -> u64 {
    match o {
        MemOrder::Weak => 0,
        MemOrder::Volatile => 1,
        MemOrder::Relaxed => 2,
        MemOrder::Acquire => 3,
        MemOrder::Release => 4,
        MemOrder::AcqRel => 5,
        MemOrder::Sc => 6,
    }
}

/// `.cluster` hashes as `.gpu`: the engine does the same for both (see [`Request::scope`]), so
/// the two states are one.
fn scope_code(s: Option<Scope>) -> u64 {
    match s {
        None => 0,
        Some(Scope::Cta) => 1,
        Some(Scope::Cluster | Scope::Gpu) => 2,
        Some(Scope::Sys) => 3,
    }
}

fn cache_operator_code(c: Option<CacheOp>) -> u64 {
    match c {
        None => 0,
        Some(CacheOp::Ca) => 1,
        Some(CacheOp::Cg) => 2,
        Some(CacheOp::Cs) => 3,
        Some(CacheOp::Lu) => 4,
        Some(CacheOp::Cv) => 5,
        Some(CacheOp::Wb) => 6,
        Some(CacheOp::Wt) => 7,
    }
}

/// A destination register: presence, then its fields.
fn hash_dest<H: Hasher>(dest: &Option<Dest>, h: &mut H) {
    let Some(Dest {
        warp,
        lane,
        reg,
        level,
        signed,
        bits,
    }) = dest
    else {
        h.write_u64(0);
        return;
    };
    h.write_u64(1 | (*signed as u64) << 1 | (*bits as u64) << 32);
    h.write_u64((*warp as u64) << 32 | *lane as u64);
    h.write_u64((*reg as u64) << 32 | *level as u64);
}

fn hash_request<H: Hasher>(req: &Request, h: &mut H) {
    let Request {
        who: Who { block, thread },
        sm,
        kind,
        space,
        addr,
        size,
        order,
        scope,
    } = req;
    h.write_u64((*block as u64) << 32 | *thread as u64);
    h.write_u64((*sm as u64) << 32 | *size as u64);
    h.write_u64(*addr);
    let (kind_code, cop) = match kind {
        RequestKind::Load { cop, .. } => (0, cache_operator_code(*cop)),
        RequestKind::Store { cop, .. } => (1, cache_operator_code(*cop)),
        RequestKind::Atomic { .. } => (2, 0),
        RequestKind::Fence => (3, 0),
    };
    h.write_u64(
        kind_code
            | cop << 8
            | space_code(*space) << 16
            | order_code(*order) << 24
            | scope_code(*scope) << 32,
    );
    match kind {
        RequestKind::Load { cop: _, dest } => hash_dest(dest, h),
        RequestKind::Store { cop: _, value } => h.write_u64(*value),
        RequestKind::Atomic {
            rmw: Rmw { op, ty, a, b },
            dest,
        } => {
            h.write_u32(*op as u32 | (*ty as u32) << 8);
            h.write_u64(*a);
            h.write_u64(*b);
            hash_dest(dest, h);
        }
        RequestKind::Fence => {}
    }
}

fn op_fingerprint(o: &Op) -> u128 {
    let mut h = StateHasher::new();
    hash_op(o, &mut h);
    h.finish128()
}

fn hash_op<H: Hasher>(o: &Op, h: &mut H) {
    let Op {
        req,
        prog,
        pc,
        deps,
        value,
        new,
        buf,
        buf_mask,
        doomed_hint: _,
    } = o;
    hash_request(req, h);
    // `prog` is a function of the request; hashed anyway (it is cheap) in case that changes.
    let prog = prog.map_or(0, |p| p as u64 + 1);
    h.write_u64(prog | (*pc as u64) << 8 | (deps.len() as u64) << 16);
    for d in deps {
        h.write_u32(*d);
    }
    h.write_u64(*value);
    h.write_u64(*new);
    // The valid bytes only: the rest are leftovers of earlier fills.
    hash_masked_bytes(buf, *buf_mask, h);
}

fn l1_fingerprint(c: &L1) -> u128 {
    let (live, doomed) = (&c.live, c.doomed());
    let mut h = StateHasher::new();
    h.write_usize(live.len());
    for (k, l) in live.lines().iter() {
        hash_line(*k, l, &mut h);
    }
    h.write_usize(c.doomed_len());
    for (k, l) in doomed {
        hash_line(*k, l, &mut h);
    }
    h.finish128()
}

fn l2_fingerprint(c: &Cache) -> u128 {
    let mut h = StateHasher::new();
    h.write_usize(c.len());
    for (k, l) in c.lines().iter() {
        hash_line(*k, l, &mut h);
    }
    h.finish128()
}

fn write_fingerprint<H: Hasher>(f: u128, h: &mut H) {
    h.write_u64(f as u64);
    h.write_u64((f >> 64) as u64);
}

impl Cached {
    /// Caches and ops enter with their memoized fingerprints (see [`Fingerprinted`]): a step
    /// changes one op and the caches on its path, so the rest is not hashed again.
    pub(super) fn hash_into<H: Hasher>(&self, h: &mut H) {
        let Cached {
            config: _,
            line_bytes: _,
            l1,
            l2,
            ops,
            locks,
            index: _,
            enabled: _,
            log: _,
            recheck: _,
            touched_keys: _,
            filled_keys: _,
            silent_scratch: _,
            stepping: _,
            deferred_hints: _,
            generation: _,
            // Fixed for a run, like the configuration.
            sm_stage: _,
            // Derived from the op list.
            stage: _,
        } = self;
        // Most SMs run no block in a litmus-size launch: only the L1s holding a line are
        // hashed, each with its SM index.
        h.write_usize(l1.in_use().count());
        for (sm, c) in l1.in_use() {
            h.write_u32(sm);
            write_fingerprint(c.fingerprint(l1_fingerprint), h);
        }
        write_fingerprint(l2.fingerprint(l2_fingerprint), h);
        h.write_usize(ops.len());
        for (i, o) in ops.iter().enumerate() {
            if let Some(o) = o {
                h.write_usize(i);
                write_fingerprint(o.fingerprint(op_fingerprint), h);
            }
        }
        h.write_usize(locks.len());
        // Usually none: skip building the map's iterator.
        if !locks.is_empty() {
            for ((block, bank), holder) in locks.iter() {
                h.write_u64((*block as u64) << 32 | *bank as u64);
                h.write_u32(*holder);
            }
        }
    }
}
