use super::*;

#[test]
fn masks_are_as_wide_as_the_warps_lanes() {
    // A block of 2 threads is one warp of 2 lanes, whatever the warp size (Figure 5.2).
    assert_eq!(lanes_of(2, 32, 0), 2);
    // 40 threads: a full warp, then 8 lanes.
    assert_eq!(lanes_of(40, 32, 0), 32);
    assert_eq!(lanes_of(40, 32, 1), 8);
    assert_eq!(lanes_of(64, 32, 1), 32);
}

#[test]
fn the_overview_counts_every_choice_once() {
    let choices = [
        Choice::Issue {
            grid: 0,
            block: 0,
            sm: 0,
        },
        Choice::Warp { block: 0, warp: 0 },
        Choice::Warp { block: 0, warp: 1 },
        Choice::EndBarrier {
            block: 0,
            barrier: 0,
        },
        Choice::Mem(MemChoice::Flush { sm: 0 }),
    ];
    let index: BTreeMap<(u32, u32), usize> = [((0, 0), 0), ((0, 1), 1)].into();
    let o = overview(&choices, &index);
    assert_eq!(o.size, 1);
    let units: Vec<usize> = o.buckets.iter().map(|b| b[0].0).collect();
    // Warps by index, then issue, barrier, memory.
    assert_eq!(units, [2, 0, 1, 3, 4]);
}
