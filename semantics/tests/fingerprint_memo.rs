//! The memoised state fingerprint ([`Machine::state_fingerprint`]: each block's and each
//! register row's fingerprint is memoised with it and rehashed only after a change) is exactly
//! the fingerprint computed from scratch ([`Machine::state_fingerprint_from_scratch`]) after
//! every step of random schedules of every corpus kernel and thesis listing, under every warp
//! model and both memories, with and without final registers observed; and stepping a clone
//! never changes the fingerprint of the machine it was cloned from (the memos are shared by
//! clones until written). A write path that forgot to drop a memo would fail here.

use corpus::{kernels_dir, load_file, ptx_files, read_launch, resolve, workspace_root};
use semantics::machine::{Machine, MachineConfig, MemoryKind, WarpModel};
use semantics::program::FinalRegisters;
use std::path::PathBuf;
use std::sync::Arc;

/// Steps per run: enough to pass the prologue, barriers, calls and loops of the corpus.
const STEPS: usize = 400;
/// Random schedules per kernel, model and memory.
const SEEDS: u64 = 2;

/// The corpus kernels with launch files (not the 64K-thread benchmarks) and the thesis
/// listings with launch files.
fn programs() -> Vec<PathBuf> {
    let mut files = ptx_files(&kernels_dir());
    files.extend(ptx_files(&workspace_root().join("tests/thesis")));
    files.retain(|p| {
        p.with_extension("ron").is_file()
            && !p
                .file_stem()
                .is_some_and(|s| s.to_string_lossy().starts_with("bench_"))
    });
    files
}

/// Calls `f` with a label and a fresh machine for every program of [`programs`] that loads
/// and resolves, under each of `models` and `memories`.
fn for_each_machine(
    models: &[WarpModel],
    memories: &[MemoryKind],
    mut f: impl FnMut(&str, Machine),
) {
    for ptx in programs() {
        let name = ptx.file_stem().unwrap().to_string_lossy().into_owned();
        let Ok(program) = load_file(&ptx) else {
            continue;
        };
        let launch = read_launch(&ptx.with_extension("ron")).unwrap_or_else(|e| panic!("{e}"));
        let Ok(resolved) = resolve(&launch, &program) else {
            continue;
        };
        let program = Arc::new(program);
        for &warp_model in models {
            for &memory in memories {
                let config = MachineConfig {
                    warp_model,
                    memory,
                    ..MachineConfig::default()
                };
                if let Ok(m) = Machine::new(Arc::clone(&program), &resolved.config, &config) {
                    f(&format!("{name} {warp_model:?} {memory:?}"), m);
                }
            }
        }
    }
}

/// A small deterministic generator (xorshift64*): which enabled choice a step takes.
fn next(x: &mut u64) -> u64 {
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    x.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// Runs one random schedule, checking the memoised fingerprint against the one from scratch
/// after every step, and the parent's fingerprint after its clone stepped. Returns the steps
/// taken.
fn check_run(what: &str, mut m: Machine, seed: u64) -> usize {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut taken = 0;
    assert_eq!(
        m.state_fingerprint(),
        m.state_fingerprint_from_scratch(),
        "{what}: initial state"
    );
    for step in 0..STEPS {
        let enabled = m.enabled();
        if enabled.is_empty() {
            break;
        }
        let choice = enabled[(next(&mut x) % enabled.len() as u64) as usize];
        // The parent's memos are filled, then shared with the clone that steps.
        let parent = m.clone();
        let before = parent.state_fingerprint();
        if m.step(&choice).is_err() {
            break;
        }
        taken += 1;
        assert_eq!(
            m.state_fingerprint(),
            m.state_fingerprint_from_scratch(),
            "{what}: step {step} ({choice:?})"
        );
        assert_eq!(
            parent.state_fingerprint(),
            before,
            "{what}: step {step} ({choice:?}) changed its parent's fingerprint"
        );
    }
    taken
}

#[test]
fn memoised_fingerprints_equal_the_ones_from_scratch_after_every_step() {
    let mut runs = 0;
    let mut steps = 0;
    let models = [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads];
    let memories = [MemoryKind::Flat, MemoryKind::Cached];
    for_each_machine(&models, &memories, |label, m| {
        for seed in 1..=SEEDS {
            let mut m = m.clone();
            // Every other run observes final registers (litmus's setting), which keeps
            // completed warps' registers in the state.
            if seed % 2 == 0 {
                m.set_final_registers(FinalRegisters::Observed);
            }
            steps += check_run(&format!("{label} seed {seed}"), m, seed);
            runs += 1;
        }
    });
    println!("{runs} runs, {steps} steps checked");
    assert!(runs >= 400, "only {runs} runs");
    assert!(steps >= 100_000, "only {steps} steps");
}

/// A machine nobody cloned keeps its registers dense (one vector per warp and call depth, as a
/// plain run does); a clone that writes a warp gets that warp's registers as shared rows (the
/// form every explorer's states have). Along a random schedule stepped in place, a clone taken
/// every few steps has the machine's fingerprint, and after both take the same step they still
/// agree, memoised and from scratch: the two storages are one state.
#[test]
fn a_dense_machine_and_its_stepped_clone_are_the_same_state() {
    let mut runs = 0;
    let mut compared = 0;
    let memories = [MemoryKind::Flat, MemoryKind::Cached];
    for_each_machine(&[WarpModel::SimtStack], &memories, |label, mut m| {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for step in 0..STEPS {
            let enabled = m.enabled();
            if enabled.is_empty() {
                break;
            }
            let choice = enabled[(next(&mut x) % enabled.len() as u64) as usize];
            let what = format!("{label} step {step} ({choice:?})");
            if step % 8 == 0 {
                let mut c = m.clone();
                assert_eq!(c.state_fingerprint(), m.state_fingerprint(), "{what}");
                let stepped = c.step(&choice).is_ok();
                assert_eq!(m.step(&choice).is_ok(), stepped, "{what}");
                if !stepped {
                    break;
                }
                assert_eq!(c.state_fingerprint(), m.state_fingerprint(), "{what}");
                assert_eq!(
                    m.state_fingerprint_from_scratch(),
                    m.state_fingerprint(),
                    "{what}"
                );
                compared += 1;
            } else if m.step(&choice).is_err() {
                break;
            }
        }
        runs += 1;
    });
    println!("{runs} runs, {compared} clones compared");
    assert!(runs >= 50, "only {runs} runs");
    assert!(compared >= 2_000, "only {compared} clones compared");
}
