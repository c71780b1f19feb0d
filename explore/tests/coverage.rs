//! `check`'s coverage as a library: the verdict from what the runs did and what makes the launch
//! depend on the schedule, its text, and the search that checks every execution.

use explore::Folding;
use explore::coverage::{
    CheckError, Coverage, Dependence, Judged, Runs, Sampling, cached_memory_caveat, check_bound,
    check_config, check_every_execution,
};
use explore::dfs::DfsBound;
use scheduler::outcome::Observe;
use scheduler::{BoundHit, Stop};
use semantics::machine::{ArgValue, BufferSpec, LaunchConfig, Machine, MachineConfig, MemoryKind};
use semantics::monitors::ScheduleDependence;
use std::sync::Arc;
use traces::Choice;

/// Two blocks of one thread each add 1 to `out[0]` with a plain load and store (a lost update:
/// `out[0]` ends 1 or 2); with `atomic`, `atom.global.add` instead (always 2).
fn increments(atomic: bool) -> Machine {
    let body = if atomic {
        "    atom.global.add.u32 %v, [%o], 1;\n"
    } else {
        "    ld.global.u32 %v, [%o];\n    add.u32 %v, %v, 1;\n    st.global.u32 [%o], %v;\n"
    };
    let text = format!(
        ".version 7.0\n.target sm_70\n.address_size 64\n\
         .visible .entry k(.param .u64 out)\n{{\n    .reg .u64 %o;\n    .reg .u32 %v;\n\
         \x20   ld.param.u64 %o, [out];\n    cvta.to.global.u64 %o, %o;\n{body}    ret;\n}}\n"
    );
    let parsed = ptx_parser::parse(&text);
    let program = Arc::new(semantics::load(&parsed.module, &text).unwrap().0);
    let launch = LaunchConfig {
        kernel: Some("k".into()),
        grid: [2, 1, 1],
        block: [1, 1, 1],
        dynamic_shared_bytes: 0,
        buffers: vec![BufferSpec {
            name: "out".into(),
            elem: ptx_parser::ScalarType::U32,
            bytes: vec![0; 4],
        }],
        args: vec![ArgValue::Buffer(0)],
        globals: vec![],
        extern_values: vec![],
    };
    Machine::new(program, &launch, &MachineConfig::default()).unwrap()
}

fn observe() -> Observe {
    Observe {
        buffers: vec![0],
        variables: vec![],
        registers: Vec::new(),
    }
}

/// `out[0]` after replaying `path` on a fresh copy of `m` to the end.
fn out_after(m: &Machine, path: &[Choice]) -> Option<u32> {
    let mut m = m.clone();
    for c in path {
        if !m.enabled().contains(c) {
            return None;
        }
        m.step(c).unwrap();
    }
    m.termination()?;
    Some(u32::from_le_bytes(m.buffer(0)[..4].try_into().unwrap()))
}

fn config() -> explore::dfs::DfsConfig {
    check_config(10_000, 1_000, 20, Folding::Invisible)
}

#[test]
fn a_clean_search_exhausts_the_schedules() {
    let m = increments(true);
    let mut seen = Vec::new();
    let x = check_every_execution(&m, &observe(), config(), &Stop::never(), 0, &mut |path| {
        let out = out_after(&m, path).ok_or("does not replay")?;
        seen.push(out);
        Ok::<_, &str>(Judged::Clean(out))
    })
    .unwrap();
    assert!(x.exhausted);
    assert_eq!(x.result, 2);
    assert_eq!(x.checked, seen.len() as u64);
    assert!(seen.iter().all(|&o| o == 2), "{seen:?}");
}

#[test]
fn the_first_failing_execution_ends_the_search() {
    let m = increments(false);
    let mut runs = 0;
    let x = check_every_execution(&m, &observe(), config(), &Stop::never(), 0, &mut |path| {
        runs += 1;
        let out = out_after(&m, path).ok_or("does not replay")?;
        Ok::<_, &str>(if out == 1 {
            Judged::Failing(out)
        } else {
            Judged::Clean(out)
        })
    })
    .unwrap();
    // The lost update is one of the executions: found, and nothing checked after it.
    assert_eq!(x.result, 1);
    assert!(!x.exhausted);
    assert_eq!(x.checked, runs);
}

#[test]
fn a_search_cut_by_its_budget_is_not_exhausted() {
    let m = increments(false);
    let tiny = check_config(10_000, 1, 1, Folding::None);
    let x = check_every_execution(&m, &observe(), tiny, &Stop::never(), 7, &mut |path| {
        Ok::<_, ()>(Judged::Clean(out_after(&m, path).unwrap()))
    })
    .unwrap();
    assert!(!x.exhausted);
    // Nothing checked: the first run's result stands, counted as the one schedule.
    assert_eq!((x.result, x.checked), (7, 1));
}

#[test]
fn errors_of_the_check_and_lost_executions_are_reported() {
    let m = increments(false);
    let e = check_every_execution(&m, &observe(), config(), &Stop::never(), 0, &mut |_| {
        Err::<Judged<u32>, _>("monitor failed")
    })
    .unwrap_err();
    assert_eq!(e, CheckError::Check("monitor failed"));
    let e = check_every_execution(&m, &observe(), config(), &Stop::never(), 0, &mut |_| {
        Ok::<Judged<u32>, ()>(Judged::Lost)
    })
    .unwrap_err();
    let CheckError::Lost { path } = e else {
        panic!("{e:?}")
    };
    // The lost execution's choices come back, to reproduce it: a whole run.
    assert!(out_after(&m, &path).is_some(), "{path:?}");
}

fn runs(schedules: u64, sampling: Sampling) -> Runs {
    Runs {
        schedules,
        timed_out: false,
        all_completed: true,
        exhausted: false,
        sampling,
    }
}

#[test]
fn the_verdict_follows_the_runs_and_the_dependence() {
    let atomics = Some(Dependence::Atomics { ptx_line: 9 });
    let policy = runs(1, Sampling::Policy);
    let explore = runs(
        12,
        Sampling::Explore {
            cut: Some(BoundHit::Schedules(1000)),
        },
    );
    // A time-out or a run that did not complete decides, whatever else holds.
    let stopped = Coverage::of(
        &Runs {
            timed_out: true,
            all_completed: false,
            ..explore
        },
        None,
    );
    assert_eq!(stopped, Coverage::Stopped { during: 12 });
    assert_eq!(
        stopped.text("--timeout 2s"),
        "stopped during schedule 12 (--timeout 2s): other schedules were not covered"
    );
    let not_completed = Coverage::of(
        &Runs {
            all_completed: false,
            ..policy
        },
        None,
    );
    assert_eq!(not_completed, Coverage::NotCompleted);
    assert!(!not_completed.complete());
    // No dependence: one schedule decides.
    let independent = Coverage::of(&policy, None);
    assert_eq!(independent, Coverage::ScheduleIndependent);
    assert!(independent.complete());
    assert!(
        independent
            .text("")
            .starts_with("all schedules: no atomics")
    );
    // An exhausted exploration covers every schedule.
    let exhausted = Coverage::of(
        &Runs {
            exhausted: true,
            ..explore
        },
        atomics,
    );
    assert_eq!(exhausted, Coverage::Exhausted { executions: 12 });
    assert!(exhausted.complete());
    assert_eq!(
        exhausted.text(""),
        "all schedules: --explore exhausted the schedules (sleep sets: one per order of dependent steps) and checked every one of the 12 executions it made"
    );
    // Otherwise only the schedules run, and why.
    let partial = Coverage::of(&explore, atomics);
    assert!(!partial.complete());
    assert_eq!(
        partial.text(""),
        "only the 12 schedule(s) checked (the schedule bound (--max-schedules 1000) cut the search): the kernel has atomics or strong accesses (first at PTX line 9)"
    );
    // A finding stopped it: no bound is named.
    let found = Coverage::of(
        &Runs {
            sampling: Sampling::Explore { cut: None },
            ..explore
        },
        atomics,
    );
    assert_eq!(
        found.text(""),
        "only the 12 schedule(s) checked (a finding stopped the search): the kernel has atomics or strong accesses (first at PTX line 9)"
    );
    // The search's bounds by the flags that set them.
    assert_eq!(
        check_bound(Some(DfsBound::Transitions(5_000)), 300, 10, Some(2_000)),
        Some(BoundHit::Schedules(10))
    );
    assert_eq!(
        check_bound(Some(DfsBound::Depth(300)), 300, 10, None),
        Some(BoundHit::Steps(300))
    );
    assert_eq!(
        check_bound(Some(DfsBound::Time), 300, 10, Some(2_000)),
        Some(BoundHit::Time(Some(2_000)))
    );
    assert_eq!(check_bound(Some(DfsBound::Halted), 300, 10, None), None);
    assert_eq!(check_bound(None, 300, 10, None), None);
    assert_eq!(
        Coverage::of(&policy, Some(Dependence::WarpLevel { ptx_line: 4 })).text(""),
        "only the 1 schedule(s) run: the kernel has warp-level communication (first at PTX line 4); try --schedules N or --explore"
    );
}

#[test]
fn the_dependence_is_the_first_of_its_kinds() {
    let m = increments(true);
    let d = ScheduleDependence::of(m.program());
    // `atom.global.add` is on PTX line 10 of the text above.
    assert_eq!(
        Dependence::of(&d, m.program()),
        Some(Dependence::Atomics { ptx_line: 10 })
    );
    let plain = increments(false);
    assert_eq!(
        Dependence::of(&ScheduleDependence::of(plain.program()), plain.program()),
        None
    );
    assert!(cached_memory_caveat(MemoryKind::Cached, &d).is_some());
    assert!(cached_memory_caveat(MemoryKind::Flat, &d).is_none());
}
