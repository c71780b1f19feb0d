//! The recorder's running knowledge: the grids, warp indices, resident blocks and the last
//! recorded states (of warps, barriers, caches and grids), from which each step's changes are computed.

use super::*;

/// The recorder's running knowledge: warp indices, resident blocks and last recorded states.
pub(super) struct Recorder {
    pub(super) ws: u32,
    pub(super) grids: Grids,
    pub(super) model: WarpModel,
    pub(super) index: BTreeMap<(u32, u32), usize>,
    pub(super) warps: Vec<[u32; 2]>,
    pub(super) resident: BTreeSet<u32>,
    pub(super) last_warp: BTreeMap<usize, WarpState>,
    pub(super) last_bars: BTreeMap<u32, Vec<Barrier>>,
    pub(super) last_cache: Option<CacheState>,
    pub(super) last_grids: Option<Vec<GridState>>,
}

impl Recorder {
    pub(super) fn warp_index(&mut self, block: u32, warp: u32) -> usize {
        let next = self.warps.len();
        *self.index.entry((block, warp)).or_insert_with(|| {
            self.warps.push([block, warp]);
            next
        })
    }

    /// The changed states of `blocks` (and of the caches) since the last call.
    pub(super) fn changes(&mut self, m: &Machine, blocks: &BTreeSet<u32>) -> Snapshot {
        let mut s = Snapshot::default();
        for &b in blocks {
            let threads = self.grids.threads(b);
            for w in 0..self.grids.warps(b) {
                let i = self.warp_index(b, w);
                let state = match m.warp_view(b, w) {
                    Some(v) => warp_state(&v, lanes_of(threads, self.ws, w), self.model),
                    // The block completed and left its SM: the warp's last state, completed.
                    None => match self.last_warp.get(&i) {
                        Some(last) if !last.done => WarpState {
                            done: true,
                            wait: false,
                            ..last.clone()
                        },
                        _ => continue,
                    },
                };
                if self.last_warp.get(&i) != Some(&state) {
                    self.last_warp.insert(i, state.clone());
                    s.w.push((i, state));
                }
            }
            let bars: Vec<Barrier> = m
                .barrier_views(b)
                .unwrap_or_default()
                .into_iter()
                .map(|v| Barrier {
                    id: v.index,
                    ac: v.arrived,
                    tc: v.expected,
                })
                .collect();
            if self.last_bars.get(&b) != Some(&bars) {
                self.last_bars.insert(b, bars.clone());
                s.b.push((b, bars));
            }
        }
        let grids = grid_states(m, &self.grids);
        if grids != self.last_grids {
            self.last_grids.clone_from(&grids);
            s.g = grids;
        }
        let cache = cache_state(m, &self.grids);
        if cache != self.last_cache {
            self.last_cache.clone_from(&cache);
            s.c = cache;
        }
        s
    }
}
