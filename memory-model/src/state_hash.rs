//! Canonical hashing of a memory's contents, for explorers that recognise a state seen before
//! (`semantics::machine::Machine::hash_state`, ARCHITECTURE.md section 4).
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

use super::{BlockMem, Flat, LocalMem, PAGE_SIZE, Page, Segment};
use std::hash::Hasher;

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
        let Flat {
            global,
            constant: _,
            param: _,
            blocks,
            local_limit: _,
            last_global: _,
        } = self;
        h.write_usize(global.len());
        for s in global {
            hash_segment(s, h);
        }
        h.write_usize(blocks.len());
        for (id, b) in blocks.iter() {
            let BlockMem { shared, local } = b;
            h.write_u32(id);
            hash_segment(shared, h);
            h.write_usize(local.len());
            for l in local {
                let LocalMem { pages } = l;
                // Local pages are grown on demand: hash the materialised prefix, trailing
                // absent pages read as zero and are left out.
                let used = pages.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
                hash_pages(&pages[..used], (used * PAGE_SIZE) as u64, h);
            }
        }
    }
}
