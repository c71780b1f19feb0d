//! Shadow memory of the race monitor ([`super::race`]): per 4-byte word the last write and two
//! reads, byte-precise where it matters.
//!
//! A word's [`Cell`] records whole-word accesses (the common case: 32- and 64-bit loads and
//! stores touch every byte of their words). The first access that touches only some bytes of a
//! word *splits* it: the cell's accesses are copied into four byte cells (a whole-word access
//! touched each byte), kept in a side table ([`Bytes`]), and from then on every access of the
//! word is checked and recorded per byte it touches. So two threads writing different bytes of
//! one word never conflict, and an older access to one byte is not forgotten when another thread
//! touches a different byte (what a single cell per word with byte masks would lose). A whole-word
//! write to a split word leaves the same last write and no reads in all four byte cells: the word
//! is merged back and its byte cells reused.
//!
//! Cost on the common path: one comparison (is the word split?) per word accessed.

/// One access as the shadow keeps it (the race monitor fills and interprets the fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Acc {
    /// Global thread id + 1; 0 = no access; [`SPLIT`] in a split word's cell.
    pub thread: u32,
    /// The warp's barrier clock at the access.
    pub clock: u32,
    /// The warp's instruction index at the access.
    pub wi: u32,
    /// The pc; in a split word's cell, the index of its byte cells in [`Bytes`].
    pub pc: u32,
    /// `STRONG | RMW | scope << 2` (see `race`).
    pub flags: u8,
    pub size: u8,
    /// Access address minus word address (negative for the second word of an 8-byte access).
    pub off: i8,
}
// A cell is three of these; shadow memory of every resident block's shared memory is what the
// monitor's time goes to (cache misses), so keep it small.
const _: () = assert!(std::mem::size_of::<Acc>() == 20);

/// The `thread` of a split word's cell (no global thread id reaches it: ids are `u32`s of
/// `grid * block` threads, and `thread` is one more than the id).
pub(crate) const SPLIT: u32 = u32::MAX;

impl Acc {
    #[inline]
    pub fn present(&self) -> bool {
        self.thread != 0
    }
}

/// The accesses of one word (or, in [`Bytes`], of one byte).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Cell {
    pub w: Acc,
    pub r0: Acc,
    pub r1: Acc,
}

impl Cell {
    /// The byte cells' index if the word is split.
    #[inline]
    pub fn split_index(&self) -> Option<usize> {
        (self.w.thread == SPLIT).then_some(self.w.pc as usize)
    }
}

/// The byte cells of split words, with a free list (indices are stored in the word's cell).
#[derive(Debug, Default)]
pub(crate) struct Bytes {
    cells: Vec<[Cell; 4]>,
    free: Vec<u32>,
}

impl Bytes {
    /// Splits `word` (not split yet): its accesses, whole-word ones, go to each byte.
    pub fn split(&mut self, word: &mut Cell) -> usize {
        let bytes = [*word; 4];
        let i = match self.free.pop() {
            Some(i) => {
                self.cells[i as usize] = bytes;
                i as usize
            }
            None => {
                self.cells.push(bytes);
                self.cells.len() - 1
            }
        };
        *word = Cell {
            w: Acc {
                thread: SPLIT,
                pc: i as u32,
                ..Acc::default()
            },
            ..Cell::default()
        };
        i
    }

    #[inline]
    pub fn get(&mut self, i: usize) -> &mut [Cell; 4] {
        &mut self.cells[i]
    }

    /// After a whole-word write: the four byte cells agree, so the word needs only one cell.
    pub fn merge(&mut self, word: &mut Cell) {
        let Some(i) = word.split_index() else {
            return;
        };
        let b = self.cells[i];
        if b.iter().all(|c| *c == b[0]) {
            *word = b[0];
            self.free.push(i as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(thread: u32) -> Acc {
        Acc {
            thread,
            size: 4,
            ..Acc::default()
        }
    }

    #[test]
    fn split_copies_the_word_into_each_byte_and_merge_undoes_it() {
        let mut bytes = Bytes::default();
        let orig = Cell {
            w: acc(3),
            r0: acc(5),
            ..Cell::default()
        };
        let mut word = orig;
        let i = bytes.split(&mut word);
        assert_eq!(word.split_index(), Some(i));
        assert!(bytes.get(i).iter().all(|c| *c == orig));
        bytes.merge(&mut word);
        assert_eq!(word, orig);
        // The byte cells are reused by the next split.
        let mut other = Cell::default();
        assert_eq!(bytes.split(&mut other), i);
    }

    #[test]
    fn merge_keeps_a_word_whose_bytes_differ() {
        let mut bytes = Bytes::default();
        let mut word = Cell::default();
        let i = bytes.split(&mut word);
        bytes.get(i)[2].w = acc(9);
        bytes.merge(&mut word);
        assert_eq!(word.split_index(), Some(i));
    }
}
