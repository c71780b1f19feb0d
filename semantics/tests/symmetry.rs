//! Block symmetry ([`Machine::blocks_interchangeable`], [`Machine::symmetric_fingerprint`],
//! [`Machine::canonical_block_order`]): states that differ by a permutation of identical blocks
//! (their execution state with their shared memory) share a symmetric fingerprint, and only a
//! program that never tells its blocks apart has them.

mod machine_common;

use machine_common::*;
use semantics::machine::{ArgValue, Machine, WarpModel};
use traces::Choice;

/// Each block's thread writes its shared word, then bumps a global counter.
const BUMP: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 buf)
{
    .shared .align 4 .b32 s;
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [buf];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, 7;
    st.shared.u32 [s], %r1;
    atom.global.add.u32 %r2, [%rd2], 1;
    ret;
}
"#;

/// A machine of `blocks` one-thread blocks of `src` with every block issued.
fn issued(src: &str, blocks: u32) -> Machine {
    let l = launch(
        "k",
        blocks,
        1,
        vec![zeros("buf", blocks as usize)],
        vec![ArgValue::Buffer(0)],
    );
    let mut m = Machine::new(load(src), &l, &config(WarpModel::SimtStack, 4)).expect("launch");
    while let Some(c) = m
        .enabled()
        .iter()
        .copied()
        .find(|c| matches!(c, Choice::Issue { .. }))
    {
        m.step(&c).expect("issue");
    }
    m
}

/// Steps warp 0 of `block` `n` times.
fn step(m: &mut Machine, block: u32, n: usize) {
    for _ in 0..n {
        m.step(&Choice::Warp { block, warp: 0 }).expect("enabled");
    }
}

#[test]
fn states_that_differ_by_a_permutation_of_blocks_share_the_symmetric_fingerprint() {
    let m = issued(BUMP, 3);
    assert!(m.blocks_interchangeable());
    // Every prefix of block 0's run against the same prefix of block 2's: through the shared
    // store (the blocks' shared memory goes with them) and the atomic.
    for n in 1..=5 {
        let (mut a, mut b) = (m.clone(), m.clone());
        step(&mut a, 0, n);
        step(&mut b, 2, n);
        assert_ne!(a.state_fingerprint(), b.state_fingerprint(), "{n} steps");
        assert_eq!(
            a.symmetric_fingerprint(),
            b.symmetric_fingerprint(),
            "{n} steps"
        );
        // The stepped block is the odd one out in both orders.
        let (oa, ob) = (a.canonical_block_order(), b.canonical_block_order());
        let odd = |o: &[u32], stepped: u32| o.iter().position(|&x| x == stepped);
        assert_eq!(odd(&oa, 0), odd(&ob, 2), "{n} steps: {oa:?} {ob:?}");
    }
    // Block 0 ahead of block 1 against block 1 ahead of block 0: the same up to a swap.
    let (mut a, mut b) = (m.clone(), m.clone());
    step(&mut a, 0, 4);
    step(&mut a, 1, 2);
    step(&mut b, 1, 4);
    step(&mut b, 0, 2);
    assert_ne!(a.state_fingerprint(), b.state_fingerprint());
    assert_eq!(a.symmetric_fingerprint(), b.symmetric_fingerprint());
    // A different multiset of block states: different.
    let mut c = m.clone();
    step(&mut c, 0, 4);
    step(&mut c, 1, 3);
    assert_ne!(a.symmetric_fingerprint(), c.symmetric_fingerprint());
}

#[test]
fn a_program_that_reads_its_block_index_has_no_interchangeable_blocks() {
    let by_ctaid = BUMP.replace("mov.u32 %r1, 7;", "mov.u32 %r1, %ctaid.x;");
    assert!(!issued(&by_ctaid, 2).blocks_interchangeable());
    let by_sm = BUMP.replace("mov.u32 %r1, 7;", "mov.u32 %r1, %smid;");
    assert!(!issued(&by_sm, 2).blocks_interchangeable());
    // `%nctaid` is the same in every block.
    let by_nctaid = BUMP.replace("mov.u32 %r1, 7;", "mov.u32 %r1, %nctaid.x;");
    assert!(issued(&by_nctaid, 2).blocks_interchangeable());
}

#[test]
fn the_symmetric_fingerprint_tells_apart_what_the_state_fingerprint_does_for_one_block() {
    // With one block there is nothing to permute: two states are one symmetric state exactly
    // when they are one state.
    let m = issued(BUMP, 1);
    let mut states = vec![m.clone()];
    let mut cur = m;
    for _ in 0..5 {
        step(&mut cur, 0, 1);
        states.push(cur.clone());
    }
    for a in &states {
        for b in &states {
            assert_eq!(
                a.state_fingerprint() == b.state_fingerprint(),
                a.symmetric_fingerprint() == b.symmetric_fingerprint()
            );
        }
    }
}
