//! Control-flow graphs and reconvergence points (thesis 5.4.1: for ordinary PTX the warp
//! reconverges at the immediate post-dominator of a divergent branch; ARCHITECTURE.md 3).
//!
//! Per function: basic blocks over the body's addresses (leaders are the entry, branch and token
//! targets, labels, and the instruction after a terminator), successors taken-first, and the
//! immediate post-dominator of every conditional branch, multi-target indirect branch and
//! indirect call, computed with `petgraph`'s Cooper-Harvey-Kennedy dominators on the reversed
//! graph rooted at a virtual exit node. A branch whose paths only meet at the exit, or that
//! cannot reach the exit at all (an endless loop), gets `None`.
//!
//! `brk` (thesis dialect) jumps to the innermost pending `preBrk` target, which is dynamic; the
//! CFG approximates it by edges to every `preBrk` target of the function. Functions in the
//! dialect reconverge through their explicit tokens, so this only affects `cudasem cfg`.

use crate::program::{BasicBlock, CallTarget, Cfg, Instr, Op, Pc};
use petgraph::algo::dominators::simple_fast;
use petgraph::graph::{DiGraph, NodeIndex};
use smallvec::SmallVec;

/// Successors of the instruction at `pc` inside `start..end`, taken first; and whether it ends the
/// function (ret/exit/trap) or ends its block.
fn successors(
    instr: &Instr,
    pc: Pc,
    end: Pc,
    brk_targets: &[Pc],
) -> (SmallVec<[Pc; 2]>, bool, bool) {
    let guarded = instr.guard.is_some();
    let next = pc + 1;
    let mut succ: SmallVec<[Pc; 2]> = SmallVec::new();
    let (exits, term) = match &instr.op {
        Op::Bra { target, .. } => {
            succ.push(*target);
            (false, true)
        }
        Op::BraIndirect { targets, .. } => {
            succ.extend(targets.iter().copied());
            (false, true)
        }
        Op::Ret | Op::Exit | Op::Trap => (true, true),
        Op::Brk => {
            succ.extend(brk_targets.iter().copied());
            (false, true)
        }
        _ => {
            succ.push(next);
            return (
                succ.into_iter().filter(|&p| p < end).collect(),
                next >= end,
                false,
            );
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
    (out, exits || (guarded && next >= end), term)
}

/// Builds the CFG of the body `start..end` of `instrs` (whole-program addresses) and writes the
/// reconvergence point of every divergent branch into `reconvergence`.
pub(crate) fn build(
    instrs: &[Instr],
    start: Pc,
    end: Pc,
    labels: &[Pc],
    reconvergence: &mut [Option<Pc>],
) -> Cfg {
    if start >= end || end as usize > instrs.len() {
        return Cfg::default();
    }
    let body = &instrs[start as usize..end as usize];
    let brk_targets: Vec<Pc> = body
        .iter()
        .filter_map(|i| {
            if let Op::PreBrk { target } = i.op {
                Some(target)
            } else {
                None
            }
        })
        .collect();
    let n = (end - start) as usize;
    let mut leader = vec![false; n];
    leader[0] = true;
    let mark = |p: Pc, leader: &mut Vec<bool>| {
        if p >= start && p < end {
            leader[(p - start) as usize] = true;
        }
    };
    for &l in labels {
        mark(l, &mut leader);
    }
    for (k, ins) in body.iter().enumerate() {
        let pc = start + k as Pc;
        let (succ, _, term) = successors(ins, pc, end, &brk_targets);
        if term {
            mark(pc + 1, &mut leader);
            for s in succ {
                mark(s, &mut leader);
            }
        }
        if let Op::Ssy { target } | Op::PreBrk { target } | Op::PreRet { target } = ins.op {
            mark(target, &mut leader);
        }
    }
    // Block of each address.
    let mut block_of = vec![0usize; n];
    let mut starts = Vec::new();
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
        let (succ, exits, _) = successors(&instrs[last as usize], last, end, &brk_targets);
        let mut successors: Vec<usize> = Vec::new();
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
    // Post-dominators: dominators of the reversed graph from a virtual exit.
    let mut g: DiGraph<(), ()> = DiGraph::with_capacity(blocks.len() + 1, blocks.len() * 2);
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
    for (b, block) in blocks.iter().enumerate() {
        let last = block.end - 1;
        let ins = &instrs[last as usize];
        let divergent = match &ins.op {
            Op::Bra { .. } => ins.guard.is_some(),
            Op::BraIndirect { targets, .. } => targets.len() > 1 || ins.guard.is_some(),
            _ => false,
        };
        if divergent {
            let ipdom = doms
                .immediate_dominator(nodes[b])
                .filter(|&d| d != exit)
                .map(|d| blocks[d.index()].start);
            if let Some(slot) = reconvergence.get_mut(last as usize) {
                *slot = ipdom;
            }
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
