//! The warp-wide fast paths (`machine::fast`: operand columns, closed integer kernels,
//! `.global`/`.shared` loads and stores through `Flat::load_lanes`/`store_lanes`) give exactly
//! what the generic lane-by-lane path gives. Unobserved and observed steps both take them, so the
//! same schedule run both ways must end the same (memory, counts, termination, faults included,
//! with the lanes before the faulting one done); and the memory events an observed step records
//! from the fast path's trace must be those of the generic path, which a generic-address variant
//! of each kernel takes (`ld`/`st` without a state space go lane by lane).
mod machine_common;
use machine_common::*;
use semantics::machine::{ArgValue, Machine, Termination, WarpModel};
use traces::Event;

const HEAD: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

/// Narrow signed/unsigned loads and stores, shared memory, a partial warp, guarded (partial)
/// stores, several lanes storing to one address, and integer arithmetic on the results.
const NARROW: &str = r#"
.visible .entry narrow(.param .u64 pin, .param .u64 pout)
{
    .reg .pred %p<3>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<12>;
    .shared .align 8 .b8 sm[512];
    ld.param.u64 %rd1, [pin];
    ld.param.u64 %rd2, [pout];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    cvt.u64.u32 %rd3, %r1;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.s8 %r2, [%rd4];
    ld.global.u8 %r3, [%rd4+1];
    shl.b64 %rd5, %rd3, 1;
    add.s64 %rd5, %rd1, %rd5;
    ld.global.s16 %r4, [%rd5];
    ld.global.u16 %r5, [%rd5+2];
    mov.u64 %rd6, sm;
    add.s64 %rd7, %rd6, %rd5;
    sub.s64 %rd7, %rd7, %rd1;
    st.shared.u16 [%rd7], %r2;
    ld.shared.s16 %r6, [%rd7];
    ld.shared.u8 %r7, [%rd7+1];
    and.b32 %r8, %r1, 1;
    setp.eq.u32 %p1, %r8, 0;
    shl.b64 %rd8, %rd3, 4;
    add.s64 %rd8, %rd2, %rd8;
    st.global.u32 [%rd8], %r2;
    st.global.u32 [%rd8+4], %r3;
    @%p1 st.global.u16 [%rd8+8], %r4;
    @!%p1 st.global.u8 [%rd8+9], %r5;
    mul.lo.s32 %r9, %r6, -7;
    xor.b32 %r9, %r9, %r7;
    shr.s32 %r10, %r9, 3;
    max.s32 %r10, %r10, %r2;
    setp.lt.s32 %p2, %r10, %r6;
    selp.b32 %r11, %r10, %r9, %p2;
    st.global.u32 [%rd8+12], %r11;
    st.global.u32 [%rd2+4096], %r1;
    ret;
}
"#;

/// Lanes 16 and above store out of bounds: the machine faults at lane 16.
const FAULT: &str = r#"
.visible .entry fault(.param .u64 pin)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [pin];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 64;
    add.s64 %rd3, %rd1, %rd2;
    add.u32 %r2, %r1, 100;
    st.global.u32 [%rd3], %r2;
    ret;
}
"#;

fn input() -> Vec<u8> {
    (0..512u32)
        .map(|i| (i.wrapping_mul(37) ^ 0x5A) as u8)
        .collect()
}

/// The kernel with generic addresses in place of `.global`/`.shared` ones, instruction for
/// instruction (same pcs): the converted buffer pointers stay generic (`mov` for
/// `cvta.to.global`), the shared array's address is made generic (`cvta.shared` for `mov`), and
/// the accesses lose their state space, so they take the generic per-lane memory path.
fn generic_variant(ptx: &str) -> String {
    ptx.lines()
        .map(|line| {
            let t = line.trim_start();
            if let Some(rest) = t.strip_prefix("cvta.to.global.u64") {
                format!("    mov.u64{rest}")
            } else if let Some(rest) = t.strip_prefix("mov.u64 %rd6, sm;") {
                format!("    cvta.shared.u64 %rd6, sm;{rest}")
            } else {
                line.replace(".global.", ".").replace(".shared.", ".")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The memory events of an observed round-robin run, and how it ended.
fn memory_events(m: &Machine) -> (Termination, Vec<Event>) {
    let mut m = m.clone();
    let mut next = 0usize;
    let (t, events) = run_observed(&mut m, 100_000, |en| {
        let i = next % en.len();
        next = i + 1;
        en[i]
    });
    let mem = events
        .into_iter()
        .filter(|e| matches!(e, Event::Memory { .. }))
        .collect();
    (t, mem)
}

/// The observed fast path's memory events equal the generic path's (the generic variant's), and
/// there are some.
fn assert_same_memory_events(fast: &Machine, generic: &Machine) {
    let (tf, ef) = memory_events(fast);
    let (tg, eg) = memory_events(generic);
    assert!(!ef.is_empty());
    assert_eq!(ef, eg);
    match (&tf, &tg) {
        (Termination::Error(a), Termination::Error(b)) => {
            assert_eq!((a.thread, a.pc), (b.thread, b.pc))
        }
        _ => assert_eq!(tf, tg),
    }
}

/// Runs to the end round-robin, unobserved and observed.
fn both_ways(m: &Machine) -> [(Termination, Vec<u8>, u64, u64); 2] {
    let mut fast = m.clone();
    let t_fast = run(&mut fast, &mut scheduler::RoundRobin::new(), 100_000);
    let mut slow = m.clone();
    let mut next = 0usize;
    let (t_slow, _) = run_observed(&mut slow, 100_000, |en| {
        let i = next % en.len();
        next = i + 1;
        en[i]
    });
    let dump = |m: &Machine| [m.buffer(0), m.buffer(1)].concat();
    [
        (
            t_fast,
            dump(&fast),
            fast.steps(),
            fast.thread_instructions(),
        ),
        (
            t_slow,
            dump(&slow),
            slow.steps(),
            slow.thread_instructions(),
        ),
    ]
}

#[test]
fn narrow_and_shared_accesses_match_the_generic_path() {
    for ws in [32, 4] {
        let p = load(&format!("{HEAD}{NARROW}"));
        let mut input_buf = u32_buffer("in", &[]);
        input_buf.bytes = input();
        let l = launch(
            "narrow",
            2,
            48,
            vec![input_buf, zeros("out", 1100)],
            vec![ArgValue::Buffer(0), ArgValue::Buffer(1)],
        );
        let m = Machine::new(p, &l, &config(WarpModel::SimtStack, ws)).expect("launch");
        let generic = load(&format!("{HEAD}{}", generic_variant(NARROW)));
        let g = Machine::new(generic, &l, &config(WarpModel::SimtStack, ws)).expect("launch");
        assert_same_memory_events(&m, &g);
        let [fast, slow] = both_ways(&m);
        assert_eq!(fast.0, Termination::Completed);
        assert_eq!(fast, slow, "warp size {ws}");
        // Spot checks against the PTX meaning: sign-extended byte, zero-extended byte.
        let out = words(&fast.1[512..]);
        let b = input();
        assert_eq!(out[0], b[0] as i8 as i32 as u32);
        assert_eq!(out[1], b[1] as u32);
        assert_eq!(out[4], b[1] as i8 as i32 as u32);
    }
}

#[test]
fn a_fault_mid_warp_leaves_the_lanes_before_it_done() {
    let p = load(&format!("{HEAD}{FAULT}"));
    let l = launch(
        "fault",
        1,
        32,
        vec![zeros("a", 256)],
        vec![ArgValue::Buffer(0)],
    );
    let m = Machine::new(p, &l, &config(WarpModel::SimtStack, 32)).expect("launch");
    let generic = load(&format!("{HEAD}{}", generic_variant(FAULT)));
    let g = Machine::new(generic, &l, &config(WarpModel::SimtStack, 32)).expect("launch");
    assert_same_memory_events(&m, &g);
    let [fast, slow] = both_ways(&m);
    assert_eq!(fast, slow);
    let Termination::Error(e) = &fast.0 else {
        panic!("expected a fault, got {:?}", fast.0);
    };
    assert_eq!(e.thread, [16, 0, 0], "{e}");
    let a = words(&fast.1);
    for t in 0..16 {
        assert_eq!(a[t * 16], t as u32 + 100);
    }
}
