//! Exhaustive exploration on corpus programs: the thesis's spin lock (Listing 6.2) and the
//! grid-wide barrier, under the warp models, levels and progress models the issue names.
//! Every lasso is replayed on a fresh machine and must close (same state fingerprint).

use explore::progress::{ProgressModel, Reason, Verdict};
use explore::{Level, Limits, explore};
use scheduler::outcome::Observe;
use scheduler::replay::{CycleCheck, replay};
use semantics::machine::{
    ArgValue, BufferSpec, DeviceConfig, LaunchConfig, Machine, MachineConfig, WarpModel,
};
use std::path::PathBuf;
use std::sync::Arc;
use traces::Event;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn load(rel: &str) -> Arc<semantics::Program> {
    let text = std::fs::read_to_string(root().join(rel)).unwrap();
    let parsed = ptx_parser::parse(&text);
    assert!(!parsed.has_errors(), "{rel}: {:?}", parsed.diagnostics);
    Arc::new(semantics::load(&parsed.module, &text).unwrap().0)
}

fn launch(kernel: &str, grid: u32, block: u32) -> LaunchConfig {
    LaunchConfig::kernel_1d(kernel, grid, block)
}

fn config(model: WarpModel) -> MachineConfig {
    MachineConfig {
        warp_model: model,
        ..MachineConfig::default()
    }
}

fn model(name: &str) -> ProgressModel {
    name.parse().unwrap()
}

/// Replays a lasso and checks that the cycle closes.
fn check_lasso_replays(m: &Machine, stem: &[traces::Choice], cycle: &[traces::Choice]) {
    let mut all = stem.to_vec();
    all.extend_from_slice(cycle);
    let mut fresh = m.clone();
    let r = replay(&mut fresh, &all, None, Some(stem.len()), false);
    assert_eq!(r.divergence, None);
    assert!(
        matches!(r.cycle, Some(CycleCheck::Closed { .. })),
        "{:?}",
        r.cycle
    );
}

fn observe_lock() -> Observe {
    Observe {
        buffers: Vec::new(),
        variables: vec!["lock".to_string()],
        registers: Vec::new(),
    }
}

/// Listing 6.2, one block of two threads (one warp), SIMT stack: a lasso whose cycle keeps a
/// break token on the stack; at every level and under every model.
#[test]
fn listing_6_2_one_warp_simt_stack_livelocks() {
    let p = load("tests/thesis/listing_6_2.ptx");
    let m = Machine::new(p, &launch("kernel", 1, 2), &config(WarpModel::SimtStack)).unwrap();
    for level in [Level::Blocks, Level::Warps, Level::Lanes] {
        let x = explore(&m, level, &observe_lock(), Limits::default()).unwrap();
        assert_eq!(x.bound_hit, None);
        for name in ["unfair", "fair", "fair_strong", "obe", "hsa", "lobe"] {
            assert_eq!(
                x.verdict(model(name)),
                Some(Verdict::Fail),
                "{level} {name}"
            );
        }
        let lasso = x.lasso(model("fair")).unwrap();
        assert!(!lasso.cycle.is_empty());
        check_lasso_replays(&m, &lasso.stem, &lasso.cycle);
        // The cycle shows the break token that is never popped.
        let mut fresh = m.clone();
        for c in &lasso.stem {
            fresh.step(c).unwrap();
        }
        for c in &lasso.cycle {
            let mut ev = Vec::new();
            fresh.step_observed(c, &mut ev).unwrap();
            let stack = ev.iter().find_map(|e| match e {
                Event::Executed { stack, .. } => Some(stack.clone()),
                _ => None,
            });
            let stack = stack.unwrap();
            assert!(
                stack.iter().any(|t| t.kind == traces::TokenKind::Break),
                "{stack:?}"
            );
        }
        if level == Level::Lanes {
            // Lane 0 holds the lock and is parked; only lane 1 steps, lane 0 is disabled.
            match lasso.reason {
                Reason::WeakCycle { disabled, .. } => assert!(!disabled.is_empty()),
                other => panic!("{other:?}"),
            }
        }
    }
}

/// Listing 6.2 under ITS with a fair lane policy terminates (lock = 1); unfair does not.
#[test]
fn listing_6_2_one_warp_its_terminates_under_fair_lanes() {
    let p = load("tests/thesis/listing_6_2.ptx");
    let m = Machine::new(p, &launch("kernel", 1, 2), &config(WarpModel::Its)).unwrap();
    let x = explore(&m, Level::Lanes, &observe_lock(), Limits::default()).unwrap();
    assert_eq!(x.verdict(model("fair")), Some(Verdict::Pass));
    assert_eq!(x.verdict(model("unfair")), Some(Verdict::Fail));
    let outcomes: Vec<_> = x.outcomes.keys().collect();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(outcomes[0].data, vec![1u32.to_le_bytes().to_vec()]);
    let lasso = x.lasso(model("unfair")).unwrap();
    check_lasso_replays(&m, &lasso.stem, &lasso.cycle);
}

/// Two blocks of one thread: fair at block level terminates, unfair has a lasso.
#[test]
fn listing_6_2_two_blocks() {
    let p = load("tests/thesis/listing_6_2.ptx");
    let m = Machine::new(p, &launch("kernel", 2, 1), &config(WarpModel::SimtStack)).unwrap();
    let x = explore(&m, Level::Blocks, &observe_lock(), Limits::default()).unwrap();
    assert_eq!(x.verdict(model("fair")), Some(Verdict::Pass));
    assert_eq!(x.verdict(model("obe")), Some(Verdict::Pass));
    assert_eq!(x.verdict(model("unfair")), Some(Verdict::Fail));
    let lasso = x.lasso(model("unfair")).unwrap();
    check_lasso_replays(&m, &lasso.stem, &lasso.cycle);
}

/// The corpus's grid barrier (`tests/kernels/grid_barrier.ptx`) with `blocks` blocks of
/// `threads` threads, n = blocks * threads inputs 1, 2, ....
fn grid_barrier(blocks: u32, threads: u32, device: DeviceConfig) -> Machine {
    let p = load("tests/kernels/grid_barrier.ptx");
    let n = blocks * threads;
    let s32 = ptx_parser::ScalarType::S32;
    let buf = |name: &str, values: Vec<i32>| BufferSpec {
        name: name.to_string(),
        elem: s32,
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    };
    let mut l = launch("grid_barrier", blocks, threads);
    l.buffers = vec![
        buf("in", (1..=n as i32).collect()),
        buf("partial", vec![0; blocks as usize]),
        buf("count", vec![0]),
        buf("out", vec![0; blocks as usize]),
    ];
    l.args = vec![
        ArgValue::Buffer(0),
        ArgValue::Buffer(1),
        ArgValue::Buffer(2),
        ArgValue::Buffer(3),
        ArgValue::Scalar {
            ty: s32,
            bits: n as u64,
        },
    ];
    let cfg = MachineConfig {
        device,
        ..config(WarpModel::SimtStack)
    };
    Machine::new(p, &l, &cfg).unwrap()
}

fn observe_out() -> Observe {
    Observe {
        buffers: vec![3],
        variables: Vec::new(),
        registers: Vec::new(),
    }
}

/// All blocks resident: terminates under fair at block level, with every block's total;
/// under OBE, HSA and LOBE a block may spin while another never starts (a lasso).
#[test]
fn grid_barrier_fits_the_device() {
    let m = grid_barrier(2, 1, DeviceConfig::default());
    let x = explore(&m, Level::Blocks, &observe_out(), Limits::default()).unwrap();
    assert_eq!(x.verdict(model("fair")), Some(Verdict::Pass));
    assert_eq!(x.verdict(model("fair_strong")), Some(Verdict::Pass));
    let outs: Vec<_> = x.outcomes.keys().collect();
    assert_eq!(outs.len(), 1);
    assert_eq!(
        outs[0].data,
        vec![
            [3i32, 3]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>()
        ]
    );
    for name in ["obe", "hsa", "lobe", "unfair"] {
        assert_eq!(x.verdict(model(name)), Some(Verdict::Fail), "{name}");
        let lasso = x.lasso(model(name)).unwrap();
        check_lasso_replays(&m, &lasso.stem, &lasso.cycle);
    }
}

/// One SM that holds one block: block 1 can never be issued, so it is never enabled and fair
/// scheduling does not owe it a step: block 0 spins forever (a lasso).
#[test]
fn grid_barrier_does_not_fit_the_device() {
    let device = DeviceConfig {
        num_sms: 1,
        max_blocks_per_sm: 1,
        ..DeviceConfig::default()
    };
    let m = grid_barrier(2, 1, device);
    let x = explore(&m, Level::Blocks, &observe_out(), Limits::default()).unwrap();
    for name in ["fair", "fair_strong", "obe", "hsa", "lobe"] {
        assert_eq!(x.verdict(model(name)), Some(Verdict::Fail), "{name}");
    }
    let lasso = x.lasso(model("fair")).unwrap();
    match lasso.reason {
        Reason::WeakCycle { disabled, .. } => assert!(disabled.contains(1)),
        other => panic!("{other:?}"),
    }
    check_lasso_replays(&m, &lasso.stem, &lasso.cycle);
}
