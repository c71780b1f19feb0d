//! Compact strings of version 1 (read only): choices as indices into the enabled sets, with a
//! checksum of the choices they stood for.

use super::numbers::{decode_numbers, encode_numbers};
use super::{COMPACT_V1_PREFIX, Fields, FormatError};
use crate::{Choice, MemChoice};

/// documentation). Read, no longer printed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompactV1 {
    pub program_hash: u64,
    /// [`CompactV1::checksum_of`] the choices the indices stand for.
    pub checksum: u32,
    /// A lasso's cycle start (an index into `indices`).
    pub cycle_start: Option<usize>,
    pub indices: Vec<u32>,
}

impl CompactV1 {
    /// A stable 32-bit checksum of a choice sequence (FNV-1a over a fixed encoding of each
    /// choice's kind and fields).
    pub fn checksum_of(choices: &[Choice]) -> u32 {
        let mut h: u32 = 0x811c_9dc5;
        let mut eat = |x: u64| {
            for b in x.to_le_bytes() {
                h ^= b as u32;
                h = h.wrapping_mul(0x0100_0193);
            }
        };
        for c in choices {
            match *c {
                Choice::Issue { grid, block, sm } => {
                    eat(0);
                    eat(grid as u64);
                    eat(block as u64);
                    eat(sm as u64);
                }
                Choice::Warp { block, warp } => {
                    eat(1);
                    eat(block as u64);
                    eat(warp as u64);
                }
                Choice::Target { block, warp, k } => {
                    eat(2);
                    eat(block as u64);
                    eat(warp as u64);
                    eat(k as u64);
                }
                Choice::Lanes { block, warp, mask } => {
                    eat(3);
                    eat(block as u64);
                    eat(warp as u64);
                    eat(mask);
                }
                Choice::EndBarrier { block, barrier } => {
                    eat(4);
                    eat(block as u64);
                    eat(barrier as u64);
                }
                Choice::Mem(m) => match m {
                    MemChoice::Step { op } => {
                        eat(5);
                        eat(op as u64);
                    }
                    MemChoice::EvictL1 { sm, line } => {
                        eat(6);
                        eat(sm as u64);
                        eat(line);
                    }
                    MemChoice::EvictL2 { line } => {
                        eat(7);
                        eat(line);
                    }
                    MemChoice::WriteBackL1 { sm, line } => {
                        eat(8);
                        eat(sm as u64);
                        eat(line);
                    }
                    MemChoice::WriteBackL2 { line } => {
                        eat(9);
                        eat(line);
                    }
                    MemChoice::Flush { sm } => {
                        eat(10);
                        eat(sm as u64);
                    }
                },
                Choice::Pick {
                    block,
                    warp,
                    lane,
                    k,
                } => {
                    eat(11);
                    eat(block as u64);
                    eat(warp as u64);
                    eat(lane as u64);
                    eat(k as u64);
                }
            }
        }
        h
    }

    /// The compact string.
    pub fn encode(&self) -> String {
        let mut out = format!(
            "{COMPACT_V1_PREFIX}{:016x}:{:08x}:{}:",
            self.program_hash,
            self.checksum,
            self.cycle_start
                .map_or_else(|| "-".to_string(), |c| c.to_string())
        );
        encode_numbers(&mut out, &self.indices);
        out
    }

    /// Parses a compact string (surrounding whitespace allowed).
    pub fn parse(text: &str) -> Result<CompactV1, FormatError> {
        let err = |m: String| FormatError::Compact(m);
        let mut fields = Fields::of(text, COMPACT_V1_PREFIX, 4)?;
        let program_hash = fields.program_hash()?;
        let check = fields.next("checksum")?;
        let checksum = u32::from_str_radix(check, 16)
            .map_err(|_| err(format!("`{check}` is not a checksum (8 hex digits)")))?;
        let cycle_start = fields.cycle_start()?;
        let indices = decode_numbers(fields.next("choices")?)?;
        if cycle_start.is_some_and(|c| c > indices.len()) {
            return Err(err(format!(
                "cycle start {} is beyond the {} choices",
                cycle_start.unwrap_or(0),
                indices.len()
            )));
        }
        Ok(CompactV1 {
            program_hash,
            checksum,
            cycle_start,
            indices,
        })
    }
}
