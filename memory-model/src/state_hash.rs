//! Canonical hashing of a memory's contents, for explorers that recognise a state seen before
//! (`semantics::machine::Machine::hash_state`, ARCHITECTURE.md section 5).
//!
//! What is hashed is what a future access can observe: the bytes of every mutable segment
//! (module `.global` variables, launch buffers, each resident block's `.shared` memory and its
//! threads' `.local` memories). Left out: `.const` and `.param` (read-only, fixed by the launch),
//! the local-memory bound (configuration) and the last-hit segment index (a lookup cache).
//! A page that was never written reads as zero and hashes like a page of zeros, so whether a
//! page was materialised does not split otherwise equal states.
//!
//! Every struct is destructured without `..`: a field added later fails to compile here until
//! someone decides whether it belongs to the state.
//!
//! [`StateHasher`] is the fingerprint hasher of the whole machine (`semantics` re-exports it);
//! it lives here so that parts of the memory can memoize their own fingerprints.

use crate::flat::{BlockMem, Flat, LocalMem, PAGE_SIZE, Page, Segment};
use std::hash::Hasher;

/// A deterministic 128-bit hasher for state fingerprints (multiply-fold mixing, fixed keys).
#[derive(Debug, Clone, Copy)]
pub struct StateHasher {
    a: u64,
    b: u64,
    /// Words written, folded in at the end (so a trailing zero word still counts).
    n: u64,
}

const K1: u64 = 0xa076_1d64_78bd_642f;
const K2: u64 = 0xe703_7ed1_a0b4_28db;
const K3: u64 = 0x8ebc_6af0_9c88_c6e3;
const K4: u64 = 0x5899_65cc_7537_4cc3;

#[inline(always)]
fn fold_mul(x: u64, k: u64) -> u64 {
    let p = (x as u128).wrapping_mul(k as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

impl Default for StateHasher {
    fn default() -> Self {
        StateHasher::new()
    }
}

impl StateHasher {
    pub const fn new() -> Self {
        StateHasher { a: K3, b: K4, n: 0 }
    }

    /// The 128-bit fingerprint.
    pub fn finish128(&self) -> u128 {
        let a = fold_mul(self.a ^ self.n, K1 ^ K4);
        let b = fold_mul(self.b ^ self.n.rotate_left(17), K2 ^ K3);
        let a = fold_mul(a ^ (b >> 29), K1);
        let b = fold_mul(b ^ (a >> 31), K2);
        ((a as u128) << 64) | b as u128
    }
}

impl Hasher for StateHasher {
    #[inline(always)]
    fn write_u64(&mut self, x: u64) {
        self.a = fold_mul(self.a ^ x, K1);
        self.b = fold_mul(self.b ^ x.rotate_left(32) ^ K3, K2);
        self.n = self.n.wrapping_add(1);
    }

    #[inline(always)]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }

    #[inline(always)]
    fn write_u16(&mut self, x: u16) {
        self.write_u64(x as u64);
    }

    #[inline(always)]
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }

    #[inline(always)]
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    fn write(&mut self, bytes: &[u8]) {
        self.write_u64(bytes.len() as u64);
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    fn finish(&self) -> u64 {
        let f = self.finish128();
        (f as u64) ^ ((f >> 64) as u64)
    }
}

/// Hashes `len` bytes of `pages` (absent pages as zeros) as 8-byte little-endian words.
fn hash_pages<H: Hasher>(pages: &[Option<Page>], len: u64, h: &mut H) {
    h.write_u64(len);
    let mut left = len as usize;
    for p in pages {
        let n = left.min(PAGE_SIZE);
        if n == 0 {
            break;
        }
        match p {
            Some(p) => hash_bytes(&p[..n], h),
            None => {
                // Zero words, exactly as a materialised page of zeros hashes.
                for _ in 0..n.div_ceil(8) {
                    h.write_u64(0);
                }
            }
        }
        left -= n;
    }
}

/// Bytes as little-endian words, the last one zero-padded (so equal contents hash equal
/// whatever the page boundaries).
fn hash_bytes<H: Hasher>(bytes: &[u8], h: &mut H) {
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h.write_u64(u64::from_le_bytes(w));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h.write_u64(u64::from_le_bytes(w));
    }
}

fn hash_segment<H: Hasher>(s: &Segment, h: &mut H) {
    let Segment {
        name: _,
        base,
        len,
        read_only: _,
        pages,
    } = s;
    h.write_u64(*base);
    hash_pages(pages, *len, h);
}

impl Flat {
    /// Feeds the observable contents of the memory into `h` (see the module documentation).
    pub fn hash_state<H: Hasher>(&self, h: &mut H) {
        self.hash_global_state(h);
        // Memoized as a whole (most kernels an explorer meets use no shared or local memory)
        // and per block (a successor state shares every block but one with its parent).
        let blocks = self.blocks.fingerprint(|table| {
            let mut h = StateHasher::new();
            h.write_usize(table.len());
            for (id, _, fingerprint) in table.fingerprints(block_fingerprint) {
                h.write_u32(id);
                h.write_u64(fingerprint as u64);
                h.write_u64((fingerprint >> 64) as u64);
            }
            h.finish128()
        });
        h.write_u64(blocks as u64);
        h.write_u64((blocks >> 64) as u64);
    }

    /// Feeds the observable contents of global memory into `h`: [`Flat::hash_state`] less the
    /// blocks' shared and local memory, which [`Flat::block_fingerprints`] gives per block
    /// (for a fingerprint that does not depend on the blocks' numbering).
    pub fn hash_global_state<H: Hasher>(&self, h: &mut H) {
        let Flat {
            global,
            constant: _,
            param: _,
            blocks: _, // per block: `block_fingerprints`
            local_limit: _,
            last_global: _,
        } = self;
        // Memoized: most steps store nothing.
        let global = global.fingerprint(|segments| {
            let mut h = StateHasher::new();
            h.write_usize(segments.len());
            for s in segments {
                hash_segment(s, &mut h);
            }
            h.finish128()
        });
        h.write_u64(global as u64);
        h.write_u64((global >> 64) as u64);
    }

    /// Each block's shared and local memory, fingerprinted (memoized until the block's memory
    /// changes), by block number.
    pub fn block_fingerprints(&self) -> impl Iterator<Item = (u32, u128)> + '_ {
        self.blocks
            .fingerprints(block_fingerprint)
            .map(|(id, _, fingerprint)| (id, fingerprint))
    }
}

/// The fingerprint of one block's shared and local memory.
fn block_fingerprint(b: &BlockMem) -> u128 {
    let mut h = StateHasher::new();
    let BlockMem { shared, local } = b;
    hash_segment(shared, &mut h);
    h.write_usize(local.len());
    for l in local {
        let LocalMem { pages } = l;
        // Local pages are grown on demand: hash the materialised prefix, trailing absent
        // pages read as zero and are left out.
        let used = pages.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
        hash_pages(&pages[..used], (used * PAGE_SIZE) as u64, &mut h);
    }
    h.finish128()
}
