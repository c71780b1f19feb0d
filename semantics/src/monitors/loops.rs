//! Natural loops of every function's CFG, for the barrier variables of seed 001 (digest
//! `seeds_gpuverify.md` §1.1.4): each thread keeps one counter per loop `L`, incremented each time
//! it reduces `L`'s header and restarted when it enters `L` from outside. Two threads meeting at a
//! barrier with the same pc but different counters of an enclosing loop are barrier-divergent
//! (condition B2; digest §3.4 test D1), which comparing pcs alone would miss.
//!
//! Loops are found the textbook way: dominators by iterative data flow, back edges `u -> h` where
//! `h` dominates `u`, the body of `h` the blocks that reach a latch without passing `h` (loops that
//! share a header are one loop). Irreducible cycles have no back edge and so no counter: their
//! barriers are compared by pc alone (digest §7 item 4, "fall back to PC-only barrier checks").

use crate::program::{Pc, Program};

/// The loop structure of a whole program, indexed by pc.
#[derive(Debug, Clone, Default)]
pub struct Loops {
    /// `header[pc]` is `1 + loop id` when `pc` is the first instruction of a loop header block.
    header: Vec<u32>,
    /// The loops enclosing each pc, outermost first.
    enclosing: Vec<Box<[u32]>>,
    /// Number of loops in the program.
    count: u32,
}

impl Loops {
    pub fn of(program: &Program) -> Loops {
        let n = program.instructions.len();
        let mut header = vec![0u32; n];
        let mut enclosing: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut count = 0u32;
        for f in &program.functions {
            let blocks = &f.cfg.blocks;
            let nb = blocks.len();
            if nb == 0 {
                continue;
            }
            let mut preds = vec![Vec::new(); nb];
            for (i, b) in blocks.iter().enumerate() {
                for &s in &b.successors {
                    if s < nb {
                        preds[s].push(i);
                    }
                }
            }
            let dom = dominators(nb, &preds);
            // Back edges grouped by header (ascending header index: deterministic loop ids).
            let mut loops: Vec<(usize, Vec<bool>)> = Vec::new();
            for h in 0..nb {
                let latches: Vec<usize> = preds[h].iter().copied().filter(|&u| dom[u][h]).collect();
                if latches.is_empty() {
                    continue;
                }
                let mut body = vec![false; nb];
                body[h] = true;
                let mut work = latches;
                while let Some(u) = work.pop() {
                    if !body[u] {
                        body[u] = true;
                        work.extend(preds[u].iter().copied());
                    }
                }
                loops.push((h, body));
            }
            // Outermost first: larger bodies enclose smaller ones.
            loops.sort_by_key(|(h, body)| {
                (std::cmp::Reverse(body.iter().filter(|b| **b).count()), *h)
            });
            for (h, body) in &loops {
                let id = count;
                count += 1;
                let hb = &blocks[*h];
                if let Some(slot) = header.get_mut(hb.start as usize) {
                    *slot = id + 1;
                }
                for (i, inside) in body.iter().enumerate() {
                    if *inside {
                        let b = &blocks[i];
                        for pc in b.start..b.end {
                            if let Some(e) = enclosing.get_mut(pc as usize) {
                                e.push(id);
                            }
                        }
                    }
                }
            }
        }
        Loops {
            header,
            enclosing: enclosing.into_iter().map(Vec::into_boxed_slice).collect(),
            count,
        }
    }

    /// The loop whose header starts at `pc`, if any.
    #[inline]
    pub fn header_at(&self, pc: Pc) -> Option<u32> {
        match self.header.get(pc as usize) {
            Some(&h) if h != 0 => Some(h - 1),
            _ => None,
        }
    }

    /// The loops enclosing `pc`, outermost first.
    #[inline]
    pub fn enclosing(&self, pc: Pc) -> &[u32] {
        self.enclosing.get(pc as usize).map_or(&[], |e| e)
    }

    /// True when `pc` lies in loop `id`.
    #[inline]
    pub fn contains(&self, id: u32, pc: Pc) -> bool {
        self.enclosing(pc).contains(&id)
    }

    pub fn count(&self) -> u32 {
        self.count
    }
}

/// `dom[b][d]`: block `d` dominates block `b` (block 0 is the entry).
fn dominators(nb: usize, preds: &[Vec<usize>]) -> Vec<Vec<bool>> {
    let mut dom = vec![vec![true; nb]; nb];
    dom[0] = vec![false; nb];
    dom[0][0] = true;
    let mut changed = true;
    while changed {
        changed = false;
        for b in 1..nb {
            let mut new = vec![true; nb];
            let mut any = false;
            for &p in &preds[b] {
                any = true;
                for (n, d) in new.iter_mut().zip(&dom[p]) {
                    *n &= *d;
                }
            }
            if !any {
                // Unreachable block: dominated by nothing but itself.
                new = vec![false; nb];
            }
            new[b] = true;
            if new != dom[b] {
                dom[b] = new;
                changed = true;
            }
        }
    }
    dom
}
