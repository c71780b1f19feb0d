//! Monitor findings that PTX's definitions call for beyond races, barriers and memory bounds:
//! results PTX leaves unspecified (integer division by zero), and benign races (two writes of
//! the same value), on hand-written PTX, under both event details and every warp model.

use semantics::machine::{
    ArgValue, BufferSpec, EventDetail, LaunchConfig, Machine, MachineConfig, WarpModel,
};
use semantics::monitors::{Findings, MonitorConfig, Monitors, UnspecifiedKind};
use std::sync::Arc;
use traces::Event;

/// A kernel of `threads` threads: `%rd1` is `out` (global, 64 words), `%r1` `%tid.x`, `%rd2` the
/// address of `out[tid]`, then `body`.
fn kernel(body: &str) -> String {
    format!(
        r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 out)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd2, %rd1, %rd2;
{body}
    ret;
}}
"#
    )
}

/// Runs round-robin with every monitor; returns the findings and the output words.
fn check(body: &str, threads: u32, model: WarpModel, detail: EventDetail) -> (Findings, Vec<u32>) {
    let text = kernel(body);
    let parsed = ptx_parser::parse(&text);
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    let (program, _) = semantics::load(&parsed.module, &text).expect("loads");
    let launch = LaunchConfig {
        kernel: None,
        grid: [1, 1, 1],
        block: [threads, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![BufferSpec {
            name: "out".to_string(),
            elem: ptx_parser::ScalarType::U32,
            bytes: vec![0; 256],
        }],
        args: vec![ArgValue::Buffer(0)],
        globals: vec![],
        extern_values: Vec::new(),
    };
    let config = MachineConfig {
        warp_model: model,
        ..MachineConfig::default()
    };
    let mut m = Machine::new(Arc::new(program), &launch, &config).expect("fits");
    let mut mon = Monitors::new(&m, &launch, MonitorConfig::default());
    let mut events: Vec<Event> = Vec::new();
    for rr in 0..100_000usize {
        let enabled = m.enabled();
        if enabled.is_empty() {
            break;
        }
        let c = enabled[rr % enabled.len()];
        events.clear();
        m.step_observed_with(&c, &mut events, detail)
            .expect("enabled choice");
        mon.observe(&events);
    }
    let out = m
        .buffer(0)
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (mon.finish(), out)
}

const MODELS: [WarpModel; 3] = [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads];
const DETAILS: [EventDetail; 2] = [EventDetail::Full, EventDetail::Monitors];

#[test]
fn integer_division_by_zero_is_reported_once_per_instruction() {
    // Lanes 0 and 2 divide by zero (`%r2 = tid & 1`); the `rem` overwrites its own divisor,
    // which must be read before it runs.
    let body = r#"
    and.b32 %r2, %r1, 1;
    div.u32 %r3, 100, %r2;
    rem.s32 %r2, %r1, %r2;
    st.global.u32 [%rd2], %r3;"#;
    for model in MODELS {
        for detail in DETAILS {
            let (f, _) = check(body, 4, model, detail);
            let u = &f.unspecified;
            assert_eq!(u.len(), 2, "{model:?} {detail:?}: {u:#?}");
            assert_eq!(u[0].kind, UnspecifiedKind::DivisionByZero);
            assert_eq!(u[1].kind, UnspecifiedKind::RemainderByZero);
            assert!(
                u[0].thread == 0 || u[0].thread == 2,
                "{model:?}: {:?}",
                u[0]
            );
            assert_eq!(
                u[1].lanes.count_ones(),
                1 + (model != WarpModel::Threads) as u32
            );
            assert_eq!(u[0].ptx_line, 18);
            let per_warp = if model == WarpModel::Threads { 2 } else { 1 };
            assert_eq!(u[0].occurrences, per_warp, "{model:?}");
            if model != WarpModel::Threads {
                assert_eq!(u[0].lanes, 0b0101);
            }
            assert!(!f.is_clean());
        }
    }
}

#[test]
fn defined_divisions_are_not_reported() {
    // A non-zero divisor, a zero dividend, a float division by zero (IEEE: infinity), and a
    // division by zero in a branch no lane takes.
    let body = r#"
    add.u32 %r2, %r1, 1;
    div.u32 %r3, %r1, %r2;
    div.s32 %r4, 0, %r2;
    mov.f32 %f1, 0f00000000;
    div.rn.f32 %f2, 0f3F800000, %f1;
    setp.gt.u32 %p1, %r1, 100;
    mov.u32 %r5, 0;
@%p1 div.u32 %r3, %r3, %r5;
    st.global.u32 [%rd2], %r3;"#;
    for model in MODELS {
        for detail in DETAILS {
            let (f, _) = check(body, 4, model, detail);
            assert!(f.unspecified.is_empty(), "{model:?} {detail:?}: {f:#?}");
            assert!(f.is_clean());
        }
    }
}

#[test]
fn writes_of_one_value_race_benignly() {
    // Every thread stores 7 to out[0]: write-write races inside a warp and between warps, all
    // benign.
    let body = r#"
    mov.u32 %r2, 7;
    st.global.u32 [%rd1], %r2;"#;
    for model in MODELS {
        for detail in DETAILS {
            let (f, out) = check(body, 64, model, detail);
            assert_eq!(out[0], 7);
            assert!(!f.races.is_empty(), "{model:?} {detail:?}: a race still");
            assert!(
                f.races.iter().all(|r| r.benign),
                "{model:?} {detail:?}: {:#?}",
                f.races
            );
        }
    }
}

#[test]
fn writes_of_different_values_race_harmfully() {
    // Each thread stores its id to out[0]; and one where only the last store differs: a race
    // is benign only if every occurrence of it is.
    for body in [
        "    st.global.u32 [%rd1], %r1;",
        "    setp.eq.u32 %p1, %r1, 63;\n    selp.u32 %r2, 9, 7, %p1;\n    st.global.u32 [%rd1], %r2;",
    ] {
        for model in MODELS {
            for detail in DETAILS {
                let (f, _) = check(body, 64, model, detail);
                assert!(!f.races.is_empty());
                assert!(
                    f.races.iter().any(|r| !r.benign),
                    "{model:?} {detail:?} {body}: {:#?}",
                    f.races
                );
            }
        }
    }
}

#[test]
fn a_write_that_does_not_change_memory_races_benignly_with_a_read() {
    // Thread 0 stores 0 over out[1]'s 0 while the other threads read it; thread 1 then stores
    // 5 over out[2] while the others read it: only the second race is harmful.
    let body = r#"
    setp.eq.u32 %p1, %r1, 0;
    setp.eq.u32 %p2, %r1, 1;
    mov.u32 %r2, 0;
@%p1 st.global.u32 [%rd1+4], %r2;
    ld.global.u32 %r3, [%rd1+4];
    mov.u32 %r4, 5;
@%p2 st.global.u32 [%rd1+8], %r4;
    ld.global.u32 %r5, [%rd1+8];
    add.u32 %r3, %r3, %r5;
    st.global.u32 [%rd2+16], %r3;"#;
    for model in MODELS {
        for detail in DETAILS {
            let (f, _) = check(body, 64, model, detail);
            let at = |w: u64| {
                f.races
                    .iter()
                    .filter(|r| r.first.location.as_ref().is_some_and(|l| l.index == w))
                    .collect::<Vec<_>>()
            };
            let (one, two) = (at(1), at(2));
            assert!(
                !one.is_empty() && !two.is_empty(),
                "{model:?} {detail:?}: {:#?}",
                f.races
            );
            assert!(
                one.iter().all(|r| r.benign),
                "{model:?} {detail:?}: {one:#?}"
            );
            assert!(
                two.iter().all(|r| !r.benign),
                "{model:?} {detail:?}: {two:#?}"
            );
        }
    }
}
