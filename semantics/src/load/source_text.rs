//! What the loader needs from the raw source text: the program hash that traces record
//! ([`fnv1a`]) and the line of every byte offset ([`LineIndex`]), both found in one pass
//! ([`hash_and_index_lines`]).
//!
//! FNV-1a is a chain of dependent multiplies, one per byte, so the hash runs at the multiplier's
//! latency and leaves most of the core idle: finding the newlines in the same loop costs almost
//! nothing on top, where a second pass over a large file would cost as much again.

/// FNV-1a's 64-bit offset basis and prime.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a, 64-bit: a stable hash of the source text (the same on every run and machine, unlike
/// `DefaultHasher`); traces record it to check they replay the same program.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |h, &b| fnv1a_step(h, b))
}

#[inline(always)]
fn fnv1a_step(h: u64, b: u8) -> u64 {
    (h ^ b as u64).wrapping_mul(FNV_PRIME)
}

/// `fnv1a(source)` and `LineIndex::new(source)`, in one pass over the text.
pub(crate) fn hash_and_index_lines(source: &str) -> (u64, LineIndex) {
    let bytes = source.as_bytes();
    // About one line per 25 bytes of PTX.
    let mut starts = Vec::with_capacity(bytes.len() / 24 + 1);
    starts.push(0u32);
    let mut hash = FNV_OFFSET;
    let mut chunks = bytes.chunks_exact(8);
    let mut base = 0u32;
    for chunk in &mut chunks {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        let word = u64::from_le_bytes(bytes);
        for k in 0..8 {
            hash = fnv1a_step(hash, (word >> (8 * k)) as u8);
        }
        let mut newlines = newline_bits(word);
        while newlines != 0 {
            starts.push(base + newlines.trailing_zeros() / 8 + 1);
            newlines &= newlines - 1;
        }
        base += 8;
    }
    for (i, &b) in chunks.remainder().iter().enumerate() {
        hash = fnv1a_step(hash, b);
        if b == b'\n' {
            starts.push(base + i as u32 + 1);
        }
    }
    (hash, LineIndex { starts })
}

/// The high bit of byte `k` of the result is set exactly when byte `k` of `word` is `\n`: a word
/// of eight non-newlines (most words) costs a few arithmetic instructions instead of eight
/// compares and branches.
#[inline(always)]
fn newline_bits(word: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let v = word ^ 0x0a0a_0a0a_0a0a_0a0a;
    // A byte of `v` is 0 exactly where `word` has `\n`; no borrow crosses bytes (unlike the
    // `v - 0x01..` formulation), so every newline is found, not only the first.
    !(((v & LOW7) + LOW7) | v | LOW7)
}

/// Byte offset to 1-based line number.
pub struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(source: &str) -> Self {
        hash_and_index_lines(source).1
    }

    /// The 1-based line holding byte `offset`.
    pub fn line(&self, offset: u32) -> u32 {
        self.starts.partition_point(|&s| s <= offset) as u32
    }

    /// [`LineIndex::line`] for offsets that mostly increase, as instructions do in source order:
    /// `cursor` keeps the 0-based line last found, and an offset a few lines further on is found
    /// by stepping from it instead of a binary search over every line of the file.
    pub fn line_near(&self, offset: u32, cursor: &mut usize) -> u32 {
        let starts = &self.starts;
        let mut i = *cursor;
        if starts.get(i).is_some_and(|&s| s <= offset) {
            for _ in 0..16 {
                match starts.get(i + 1) {
                    Some(&next) if next <= offset => i += 1,
                    _ => {
                        *cursor = i;
                        return i as u32 + 1;
                    }
                }
            }
        }
        let line = self.line(offset);
        *cursor = (line as usize).saturating_sub(1);
        line
    }
}

#[cfg(test)]
mod tests {
    use super::{LineIndex, fnv1a, hash_and_index_lines};
    use proptest::prelude::*;

    #[test]
    fn fnv1a_is_the_published_function() {
        // Test vectors of the FNV reference implementation.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    proptest! {
        /// The word-at-a-time newline scan finds exactly the newlines a byte loop finds, and
        /// the hash of the one-pass scan is `fnv1a`.
        #[test]
        fn line_index_matches_a_byte_scan(text in "[a\\n\\x0b\\x8a\\x7f\\n ]{0,80}") {
            let (hash, index) = hash_and_index_lines(&text);
            prop_assert_eq!(hash, fnv1a(text.as_bytes()));
            let mut line = 1;
            for (offset, b) in text.bytes().enumerate() {
                prop_assert_eq!(index.line(offset as u32), line);
                if b == b'\n' {
                    line += 1;
                }
            }
            prop_assert_eq!(index.line(text.len() as u32), line);
        }

        /// Stepping from a cursor finds the line the binary search finds, for any order of
        /// offsets (increasing, far jumps, going back).
        #[test]
        fn line_near_matches_line(
            text in "[a\\n]{0,200}",
            offsets in proptest::collection::vec(0u32..220, 0..40),
        ) {
            let index = LineIndex::new(&text);
            let mut cursor = 0;
            for offset in offsets {
                prop_assert_eq!(index.line_near(offset, &mut cursor), index.line(offset));
            }
        }
    }
}
