//! Control-flow graphs and reconvergence points (thesis 5.4.1: for ordinary PTX the warp
//! reconverges at the immediate post-dominator of a divergent branch; ARCHITECTURE.md section 2).
//!
//! Per function: basic blocks over the body's addresses (leaders are the entry, branch and token
//! targets, labels, and the instruction after a terminator), successors taken-first, and the
//! immediate post-dominator of every conditional branch, multi-target indirect branch and
//! indirect call: Cooper-Harvey-Kennedy dominators ([`post_dominators`]) on the reversed graph
//! rooted at a virtual exit node. A branch whose paths only meet at the exit, or that cannot reach
//! the exit at all (an endless loop), gets `None`.
//!
//! The dominator pass works on flat arrays (edges in compressed rows, reverse-postorder numbers)
//! rather than a general graph library: loading runs it once per function, and for the many
//! small functions of a large module the graph building and hashing cost more than the
//! algorithm. It is linear in the blocks and edges per pass; reducible CFGs (everything a
//! compiler emits) settle in two passes.
//!
//! `brk` (thesis dialect) jumps to the innermost pending `preBrk` target, which is dynamic; the
//! CFG approximates it by edges to every `preBrk` target of the function. Functions in the
//! dialect reconverge through their explicit tokens, so this only affects `cudasem cfg`.

use crate::program::{BasicBlock, CallTarget, Cfg, Instr, Op, Pc};
use smallvec::SmallVec;

/// Successors of the instruction at `pc` inside `start..end`, taken first; and whether it ends the
/// function (ret/exit/trap, or a guarded terminator falling off the end).
pub(super) fn successors(
    instr: &Instr,
    pc: Pc,
    end: Pc,
    brk_targets: &[Pc],
) -> (SmallVec<[Pc; 2]>, bool) {
    let guarded = instr.guard.is_some();
    let next = pc + 1;
    let mut succ: SmallVec<[Pc; 2]> = SmallVec::new();
    let exits = match &instr.op {
        Op::Bra { target, .. } => {
            succ.push(*target);
            false
        }
        Op::BraIndirect { targets, .. } => {
            succ.extend(targets.iter().copied());
            false
        }
        Op::Ret | Op::Exit | Op::Trap => true,
        Op::Brk => {
            succ.extend(brk_targets.iter().copied());
            false
        }
        _ => {
            if next < end {
                succ.push(next);
            }
            return (succ, next >= end);
        }
    };
    if guarded {
        succ.push(next);
    }
    let mut out: SmallVec<[Pc; 2]> = SmallVec::new();
    for p in succ {
        if p < end && !out.contains(&p) {
            out.push(p);
        }
    }
    (out, exits || (guarded && next >= end))
}

/// Whether `op` ends a basic block: a branch, or an instruction that leaves the function.
fn is_terminator(op: &Op) -> bool {
    matches!(
        op,
        Op::Bra { .. } | Op::BraIndirect { .. } | Op::Ret | Op::Exit | Op::Trap | Op::Brk
    )
}

/// The immediate post-dominator of every block (an index into `blocks`), or `None` when it is
/// the virtual exit (paths meet only on leaving the function) or the block cannot reach the exit.
///
/// Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm": dominators of the reversed
/// CFG from a virtual exit node `n` (= `blocks.len()`) whose reversed edges lead to every exiting
/// block. Post-order numbers come from an iterative depth-first search, so deep CFGs cannot
/// overflow the stack.
#[cfg(test)]
pub(crate) fn post_dominators(blocks: &[BasicBlock]) -> Vec<Option<usize>> {
    let mut ipdom = Vec::new();
    post_dominators_into(blocks, &mut DomScratch::default(), &mut ipdom);
    ipdom
}

/// The arrays of [`post_dominators_into`], kept from one function to the next.
#[derive(Default)]
struct DomScratch {
    row: Vec<u32>,
    fill: Vec<u32>,
    edges: Vec<u32>,
    post: Vec<u32>,
    order: Vec<u32>,
    seen: Vec<bool>,
    stack: Vec<(u32, u32)>,
    idom: Vec<u32>,
}

/// [`post_dominators`] written into `ipdom`, with its working arrays in `scratch`.
fn post_dominators_into(
    blocks: &[BasicBlock],
    scratch: &mut DomScratch,
    ipdom: &mut Vec<Option<usize>>,
) {
    const NONE: u32 = u32::MAX;
    let n = blocks.len();
    let exit = n;
    let DomScratch {
        row,
        fill,
        edges,
        post,
        order,
        seen,
        stack,
        idom,
    } = scratch;
    // Reversed edges out of each node, in compressed rows: the CFG predecessors of a block, and
    // the exiting blocks for the virtual exit.
    reset(row, n + 2, 0);
    for block in blocks {
        for &s in &block.successors {
            row[s + 1] += 1;
        }
        if block.exits {
            row[exit + 1] += 1;
        }
    }
    for i in 1..row.len() {
        row[i] += row[i - 1];
    }
    fill.clone_from(row);
    reset(edges, row[n + 1] as usize, 0);
    for (b, block) in blocks.iter().enumerate() {
        for &s in &block.successors {
            edges[fill[s] as usize] = b as u32;
            fill[s] += 1;
        }
        if block.exits {
            edges[fill[exit] as usize] = b as u32;
            fill[exit] += 1;
        }
    }
    let (row, edges) = (&*row, &*edges);
    let out = |x: usize| &edges[row[x] as usize..row[x + 1] as usize];

    // Post-order of the reversed graph from the exit; unreachable blocks keep `NONE`.
    reset(post, n + 1, NONE);
    order.clear();
    reset(seen, n + 1, false);
    stack.clear();
    stack.push((exit as u32, 0));
    seen[exit] = true;
    while let Some(top) = stack.last_mut() {
        let (x, next) = *top;
        if let Some(&y) = out(x as usize).get(next as usize) {
            top.1 += 1;
            if !seen[y as usize] {
                seen[y as usize] = true;
                stack.push((y, 0));
            }
        } else {
            post[x as usize] = order.len() as u32;
            order.push(x);
            stack.pop();
        }
    }

    let post = &*post;
    reset(idom, n + 1, NONE);
    idom[exit] = exit as u32;
    let intersect = |idom: &[u32], mut a: u32, mut b: u32| {
        while a != b {
            while post[a as usize] < post[b as usize] {
                a = idom[a as usize];
            }
            while post[b as usize] < post[a as usize] {
                b = idom[b as usize];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        // Reverse post-order, skipping the root (last in post-order).
        for &x in order.iter().rev().skip(1) {
            let block = &blocks[x as usize];
            // Predecessors in the reversed graph: the block's CFG successors, and the exit.
            let preds = block
                .successors
                .iter()
                .map(|&s| s as u32)
                .chain(block.exits.then_some(exit as u32));
            let mut new = NONE;
            for p in preds {
                if idom[p as usize] == NONE {
                    continue;
                }
                new = if new == NONE {
                    p
                } else {
                    intersect(idom, p, new)
                };
            }
            if new != idom[x as usize] {
                idom[x as usize] = new;
                changed = true;
            }
        }
    }
    ipdom.clear();
    ipdom.extend(
        idom[..n]
            .iter()
            .map(|&d| (d != NONE && d as usize != exit).then_some(d as usize)),
    );
}

/// Makes `v` `len` copies of `value`, reusing its allocation.
fn reset<T: Copy>(v: &mut Vec<T>, len: usize, value: T) {
    v.clear();
    v.resize(len, value);
}

/// Buffers [`build`] reuses from one function to the next: a large module has thousands of
/// small functions, and allocating a dozen short-lived vectors for each costs more than the
/// analysis itself.
#[derive(Default)]
pub(crate) struct Scratch {
    brk_targets: Vec<Pc>,
    leader: Vec<bool>,
    block_of: Vec<usize>,
    starts: Vec<Pc>,
    ipdom: Vec<Option<usize>>,
    dom: DomScratch,
}

/// Builds the CFG of the body `start..end` of `instrs` (whole-program addresses) and writes the
/// reconvergence point of every divergent branch into `reconvergence`.
pub(crate) fn build(
    instrs: &[Instr],
    start: Pc,
    end: Pc,
    labels: &[Pc],
    reconvergence: &mut [Option<Pc>],
    scratch: &mut Scratch,
) -> Cfg {
    if start >= end || end as usize > instrs.len() {
        return Cfg::default();
    }
    let body = &instrs[start as usize..end as usize];
    let Scratch {
        brk_targets,
        leader,
        block_of,
        starts,
        ipdom,
        dom,
    } = scratch;
    brk_targets.clear();
    brk_targets.extend(body.iter().filter_map(|i| {
        if let Op::PreBrk { target } = i.op {
            Some(target)
        } else {
            None
        }
    }));
    let brk_targets = &*brk_targets;
    let n = (end - start) as usize;
    reset(leader, n, false);
    leader[0] = true;
    let mark = |p: Pc, leader: &mut Vec<bool>| {
        if p >= start && p < end {
            leader[(p - start) as usize] = true;
        }
    };
    for &l in labels {
        mark(l, leader);
    }
    for (k, ins) in body.iter().enumerate() {
        let pc = start + k as Pc;
        if is_terminator(&ins.op) {
            let (succ, _) = successors(ins, pc, end, brk_targets);
            mark(pc + 1, leader);
            for s in succ {
                mark(s, leader);
            }
        }
        if let Op::Ssy { target } | Op::PreBrk { target } | Op::PreRet { target } = ins.op {
            mark(target, leader);
        }
    }
    // Block of each address.
    reset(block_of, n, 0);
    starts.clear();
    for (k, &is_leader) in leader.iter().enumerate() {
        if is_leader {
            starts.push(start + k as Pc);
        }
        block_of[k] = starts.len() - 1;
    }
    let mut blocks = Vec::with_capacity(starts.len());
    for (b, &s) in starts.iter().enumerate() {
        let e = starts.get(b + 1).copied().unwrap_or(end);
        let last = e - 1;
        let (succ, exits) = successors(&instrs[last as usize], last, end, brk_targets);
        let mut successors: Vec<usize> = Vec::with_capacity(succ.len());
        for p in succ {
            let t = block_of[(p - start) as usize];
            if !successors.contains(&t) {
                successors.push(t);
            }
        }
        blocks.push(BasicBlock {
            start: s,
            end: e,
            successors,
            exits,
        });
    }
    // Post-dominators only when some branch can diverge (straight-line helpers need none).
    let mut have_ipdom = false;
    for (b, block) in blocks.iter().enumerate() {
        let last = block.end - 1;
        let ins = &instrs[last as usize];
        let divergent = match &ins.op {
            Op::Bra { .. } => ins.guard.is_some(),
            Op::BraIndirect { targets, .. } => targets.len() > 1 || ins.guard.is_some(),
            _ => false,
        };
        if divergent && let Some(slot) = reconvergence.get_mut(last as usize) {
            if !have_ipdom {
                post_dominators_into(&blocks, dom, ipdom);
                have_ipdom = true;
            }
            *slot = ipdom
                .get(b)
                .copied()
                .flatten()
                .and_then(|d| blocks.get(d))
                .map(|d| d.start);
        }
    }
    // An indirect call with several candidates reconverges when the call returns.
    for (k, ins) in body.iter().enumerate() {
        if let Op::Call {
            target: CallTarget::Indirect { candidates, .. },
            ..
        } = &ins.op
            && candidates.len() > 1
            && let Some(slot) = reconvergence.get_mut(start as usize + k)
        {
            *slot = Some(start + k as Pc + 1);
        }
    }
    Cfg { blocks }
}

#[cfg(test)]
mod tests {
    use super::*;
    use petgraph::algo::dominators::simple_fast;
    use petgraph::graph::{DiGraph, NodeIndex};
    use proptest::prelude::*;

    /// The reference: petgraph's dominators of the reversed graph from a virtual exit node.
    fn reference(blocks: &[BasicBlock]) -> Vec<Option<usize>> {
        let mut g: DiGraph<(), ()> = DiGraph::new();
        let nodes: Vec<NodeIndex> = (0..=blocks.len()).map(|_| g.add_node(())).collect();
        let exit = nodes[blocks.len()];
        for (b, block) in blocks.iter().enumerate() {
            for &s in &block.successors {
                g.add_edge(nodes[s], nodes[b], ());
            }
            if block.exits {
                g.add_edge(exit, nodes[b], ());
            }
        }
        let doms = simple_fast(&g, exit);
        (0..blocks.len())
            .map(|b| {
                doms.immediate_dominator(nodes[b])
                    .filter(|&d| d != exit)
                    .map(|d| d.index())
            })
            .collect()
    }

    fn cfg_strategy() -> impl Strategy<Value = Vec<BasicBlock>> {
        (1usize..24).prop_flat_map(|n| {
            proptest::collection::vec((proptest::collection::vec(0..n, 0..3), any::<bool>()), n)
                .prop_map(|bs| {
                    bs.into_iter()
                        .enumerate()
                        .map(|(i, (mut successors, exits))| {
                            successors.dedup();
                            BasicBlock {
                                start: i as Pc,
                                end: i as Pc + 1,
                                successors,
                                exits,
                            }
                        })
                        .collect()
                })
        })
    }

    proptest! {
        /// Immediate post-dominators are unique, so the flat implementation must agree with
        /// petgraph's on every graph, including irreducible ones and endless loops.
        #[test]
        fn post_dominators_match_petgraph(blocks in cfg_strategy()) {
            prop_assert_eq!(post_dominators(&blocks), reference(&blocks));
        }
    }

    #[test]
    fn diamond_and_endless_loop() {
        let bb = |successors: Vec<usize>, exits: bool| BasicBlock {
            start: 0,
            end: 1,
            successors,
            exits,
        };
        // 0 -> {1, 2} -> 3 -> exit; 4 loops forever.
        let blocks = vec![
            bb(vec![1, 2], false),
            bb(vec![3], false),
            bb(vec![3], false),
            bb(vec![], true),
            bb(vec![4], false),
        ];
        assert_eq!(
            post_dominators(&blocks),
            vec![Some(3), Some(3), Some(3), None, None]
        );
    }
}
