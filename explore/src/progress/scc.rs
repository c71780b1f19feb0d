//! Strongly connected components without recursion.
//!
//! `petgraph::algo::tarjan_scc` recurses once per node of a depth-first path, so a long chain of
//! states (a spin loop unrolled by a counter, a corpus kernel's few hundred thousand nodes)
//! overflows a 2 MB test-thread stack. This is the same algorithm (Pierce's space-efficient
//! Tarjan, petgraph 0.8's `TarjanScc`) with the recursion turned into an explicit stack of
//! frames. It visits nodes and neighbours in the same order and so returns the same components
//! in the same order (reverse topological) with the same node order inside each: the oracle's
//! choices among equals (nearest node, first node) do not change.
//!
//! The components come back in one list ([`Components`]) rather than one `Vec` each: an
//! explored state graph is mostly singleton components, one allocation per node otherwise.

use petgraph::visit::{IntoNeighbors, IntoNodeIdentifiers, NodeIndexable};
use std::num::NonZeroUsize;
use std::ops::Index;

/// Strongly connected components, in the order found, each a slice of its nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Components<N> {
    /// The nodes of every component, component after component.
    nodes: Vec<N>,
    /// Where each component ends in `nodes`.
    ends: Vec<usize>,
}

impl<N> Components<N> {
    /// The number of components.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The components in order.
    pub fn iter(&self) -> impl Iterator<Item = &[N]> {
        (0..self.len()).map(move |c| &self[c])
    }
}

impl<N> Index<usize> for Components<N> {
    type Output = [N];

    fn index(&self, c: usize) -> &[N] {
        let start = if c == 0 { 0 } else { self.ends[c - 1] };
        &self.nodes[start..self.ends[c]]
    }
}

/// One node being visited: what the recursive version keeps in its stack frame.
struct Frame<N, I> {
    v: N,
    neighbors: I,
    /// The neighbour whose visit this frame waits for; its root index is folded in on return.
    child: Option<N>,
    local_root: bool,
}

/// The strongly connected components of `g`, in postorder (reverse topological order), as
/// `petgraph::algo::tarjan_scc` returns them, using heap memory only.
pub fn tarjan_scc<G>(g: G) -> Components<G::NodeId>
where
    G: IntoNodeIdentifiers + IntoNeighbors + NodeIndexable,
{
    let mut root: Vec<Option<NonZeroUsize>> = vec![None; g.node_bound()];
    // `index` counts up from 1 for visited nodes, `component` down from usize::MAX for finished
    // components; a node's root index is compared across both ranges as in Pierce's paper.
    let mut index: usize = 1;
    let mut component: usize = usize::MAX;
    let mut stack: Vec<G::NodeId> = Vec::new();
    let mut frames: Vec<Frame<G::NodeId, G::Neighbors>> = Vec::new();
    let mut out = Components {
        nodes: Vec::new(),
        ends: Vec::new(),
    };

    for start in g.node_identifiers() {
        if root[g.to_index(start)].is_some() {
            continue;
        }
        root[g.to_index(start)] = NonZeroUsize::new(index);
        index += 1;
        frames.push(Frame {
            v: start,
            neighbors: g.neighbors(start),
            child: None,
            local_root: true,
        });
        while let Some(f) = frames.last_mut() {
            let vi = g.to_index(f.v);
            if let Some(w) = f.child.take()
                && root[g.to_index(w)] < root[vi]
            {
                root[vi] = root[g.to_index(w)];
                f.local_root = false;
            }
            if let Some(w) = f.neighbors.next() {
                let wi = g.to_index(w);
                if root[wi].is_none() {
                    f.child = Some(w);
                    root[wi] = NonZeroUsize::new(index);
                    index += 1;
                    frames.push(Frame {
                        v: w,
                        neighbors: g.neighbors(w),
                        child: None,
                        local_root: true,
                    });
                } else if root[wi] < root[vi] {
                    root[vi] = root[wi];
                    f.local_root = false;
                }
                continue;
            }
            // Every neighbour seen: `v` closes a component or waits on the stack for its root.
            let (v, local_root) = (f.v, f.local_root);
            frames.pop();
            if !local_root {
                stack.push(v);
                continue;
            }
            let mut adjustment = 1;
            let c = NonZeroUsize::new(component);
            let start_at = stack
                .iter()
                .rposition(|&w| {
                    if root[vi] > root[g.to_index(w)] {
                        true
                    } else {
                        root[g.to_index(w)] = c;
                        adjustment += 1;
                        false
                    }
                })
                .map_or(0, |x| x + 1);
            root[vi] = c;
            stack.push(v);
            out.nodes.extend_from_slice(&stack[start_at..]);
            out.ends.push(out.nodes.len());
            stack.truncate(start_at);
            index -= adjustment;
            component -= 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::tarjan_scc;
    use petgraph::graph::{DiGraph, NodeIndex};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Same components, same order, same node order as petgraph's recursive version.
    #[test]
    fn agrees_with_petgraph_on_random_graphs() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..300 {
            let n = rng.random_range(1..40usize);
            let m = rng.random_range(0..3 * n);
            let mut g: DiGraph<(), (), u32> = DiGraph::default();
            for _ in 0..n {
                g.add_node(());
            }
            for _ in 0..m {
                let a = rng.random_range(0..n);
                let b = rng.random_range(0..n);
                g.add_edge(NodeIndex::new(a), NodeIndex::new(b), ());
            }
            let ours: Vec<Vec<_>> = tarjan_scc(&g).iter().map(<[_]>::to_vec).collect();
            assert_eq!(ours, petgraph::algo::tarjan_scc(&g));
        }
    }

    /// A chain far deeper than any thread stack allows recursion for, closed into one cycle
    /// and left open: one component of every node, then one component per node.
    #[test]
    fn long_chain_does_not_overflow_the_stack() {
        let n = 1_000_000;
        let run = move || {
            let mut g: DiGraph<(), (), u32> = DiGraph::default();
            for _ in 0..n {
                g.add_node(());
            }
            for i in 1..n {
                g.add_edge(NodeIndex::new(i - 1), NodeIndex::new(i), ());
            }
            let open = tarjan_scc(&g);
            assert_eq!(open.len(), n);
            // Postorder: the chain's end is finished first.
            assert_eq!(open[0], [NodeIndex::new(n - 1)]);
            g.add_edge(NodeIndex::new(n - 1), NodeIndex::new(0), ());
            let closed = tarjan_scc(&g);
            assert_eq!(closed.len(), 1);
            assert_eq!(closed[0].len(), n);
        };
        // A small stack on purpose: the recursive version needs about 100 bytes per node.
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(run)
            .expect("spawns")
            .join()
            .expect("no overflow");
    }
}
