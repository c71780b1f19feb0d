//! Allocations as pages: a [`Segment`] (a buffer, a module variable, a block's shared memory) is
//! pages of [`PAGE_SIZE`] bytes behind `Arc`s, copied on write; never-written pages are absent
//! and read as zero; a segment's last page is only as long as the segment needs.

use smallvec::SmallVec;
use std::sync::Arc;

/// Bytes per page.
pub const PAGE_SIZE: usize = 4096;
pub(crate) const PAGE_SHIFT: u32 = 12;

/// A page's bytes: `PAGE_SIZE` of them, fewer for a segment's last page.
pub(crate) type Page = Arc<[u8]>;

/// A segment's page table: most segments (a module variable, a litmus buffer) fit one page.
type Pages = SmallVec<[Option<Page>; 1]>;

static ZEROS: [u8; PAGE_SIZE] = [0; PAGE_SIZE];

/// A fresh page of `len` zero bytes (`len <= PAGE_SIZE`).
pub(crate) fn zero_page(len: usize) -> Page {
    Arc::from(&ZEROS[..len.min(PAGE_SIZE)])
}

/// A contiguous allocation: a buffer, a module variable, a block's shared memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Shared: a snapshot copies a pointer, not the text.
    pub name: Arc<str>,
    pub base: u64,
    pub len: u64,
    pub read_only: bool,
    pub(crate) pages: Pages,
}

impl Segment {
    pub fn new(name: impl Into<Arc<str>>, base: u64, len: u64, read_only: bool) -> Segment {
        let npages = len.div_ceil(PAGE_SIZE as u64) as usize;
        Segment {
            name: name.into(),
            base,
            len,
            read_only,
            pages: SmallVec::from_elem(None, npages),
        }
    }

    /// Bytes of page `page`: `PAGE_SIZE`, or what is left of the segment for its last page
    /// (every in-bounds access lands inside it).
    pub(crate) fn page_len(&self, page: usize) -> usize {
        let start = (page as u64) << PAGE_SHIFT;
        self.len.saturating_sub(start).min(PAGE_SIZE as u64) as usize
    }

    #[inline]
    pub(crate) fn contains(&self, addr: u64, size: u32) -> bool {
        let off = addr.wrapping_sub(self.base);
        off < self.len && self.len - off >= size as u64
    }

    #[inline]
    pub(crate) fn read(&self, off: u64, size: u32) -> u64 {
        let page = (off >> PAGE_SHIFT) as usize;
        let at = (off as usize) & (PAGE_SIZE - 1);
        match &self.pages[page] {
            None => 0,
            Some(p) => read_le(&p[..], at, size),
        }
    }

    #[inline]
    pub(crate) fn write(&mut self, off: u64, size: u32, value: u64) {
        let page = (off >> PAGE_SHIFT) as usize;
        let at = (off as usize) & (PAGE_SIZE - 1);
        let len = self.page_len(page);
        let p = self.pages[page].get_or_insert_with(|| zero_page(len));
        write_le(Arc::make_mut(p), at, size, value);
    }

    /// All bytes.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.len as usize];
        for (i, p) in self.pages.iter().enumerate() {
            if let Some(p) = p {
                let start = i * PAGE_SIZE;
                let end = (start + PAGE_SIZE).min(out.len());
                out[start..end].copy_from_slice(&p[..end - start]);
            }
        }
        out
    }

    /// Writes `bytes` at offset `off` (host-side initialisation; ignores `read_only`).
    pub fn write_bytes(&mut self, off: u64, bytes: &[u8]) {
        for (i, b) in bytes.iter().enumerate() {
            let o = off + i as u64;
            if o < self.len && (*b != 0 || self.pages[(o >> PAGE_SHIFT) as usize].is_some()) {
                self.write(o, 1, *b as u64);
            }
        }
    }

    /// Reads `len` bytes at offset `off` (host side), zero beyond the end.
    pub fn read_bytes(&self, off: u64, len: usize) -> Vec<u8> {
        (0..len as u64)
            .map(|i| {
                if off + i < self.len {
                    self.read(off + i, 1) as u8
                } else {
                    0
                }
            })
            .collect()
    }
}

#[inline(always)]
pub(crate) fn read_le(p: &[u8], at: usize, size: u32) -> u64 {
    // One bounds check and one load per access.
    match size {
        1 => p[at] as u64,
        2 => u16::from_le_bytes(p[at..at + 2].try_into().unwrap()) as u64,
        4 => u32::from_le_bytes(p[at..at + 4].try_into().unwrap()) as u64,
        _ => u64::from_le_bytes(p[at..at + 8].try_into().unwrap()),
    }
}

#[inline(always)]
pub(crate) fn write_le(p: &mut [u8], at: usize, size: u32, value: u64) {
    // One bounds check and one store per access (no `memcpy` of a variable length).
    match size {
        1 => p[at] = value as u8,
        2 => p[at..at + 2].copy_from_slice(&(value as u16).to_le_bytes()),
        4 => p[at..at + 4].copy_from_slice(&(value as u32).to_le_bytes()),
        8 => p[at..at + 8].copy_from_slice(&value.to_le_bytes()),
        _ => {
            let b = value.to_le_bytes();
            p[at..at + size as usize].copy_from_slice(&b[..size as usize]);
        }
    }
}
