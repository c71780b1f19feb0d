//! Every corpus kernel (`tests/kernels/*.ptx` and `tests/kernels/nvcc/*.ptx`, each with its
//! `.ron` launch) runs to the result a plain Rust reference computes here, from the same input
//! buffers, under the warp models simt-stack, its and threads, with round-robin and 20 random
//! schedules each. No stored dumps: each kernel has one small reference function.
//!
//! Floats are compared bit for bit: every float kernel's arithmetic has one order (no float
//! reductions across threads), and the references use the same operations (`mul_add` where the
//! PTX has `fma.rn`). Kernels whose outcome depends on the schedule (atomics) are checked on what
//! does not: counts and totals.
//!
//! The three bench kernels (65,536 threads each) run a smaller launch here (`adjust`).

use corpus::launch::{Launch, LaunchFlags, Resolved};
use corpus::*;
use semantics::machine::{ArgValue, MachineConfig, MemoryKind, Termination, WarpModel};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Random schedules per warp model (plus round-robin).
const SEEDS: u64 = 20;
const CACHED_SEEDS: u64 = 2;
/// Far above what any case needs (the largest takes about 10^5 steps under `threads`).
const MAX_STEPS: u64 = 20_000_000;

/// What a reference check sees: the resolved launch (inputs) and the finished run (outputs).
struct Ctx<'a> {
    resolved: &'a Resolved,
    run: &'a Run,
}

impl Ctx<'_> {
    fn index(&self, name: &str) -> usize {
        self.resolved
            .config
            .buffers
            .iter()
            .position(|b| b.name == name)
            .unwrap_or_else(|| panic!("the launch has no buffer `{name}`"))
    }
    fn input(&self, name: &str) -> &[u8] {
        &self.resolved.config.buffers[self.index(name)].bytes
    }
    fn output(&self, name: &str) -> Vec<u8> {
        self.run.buffer(self.index(name))
    }
    fn scalar(&self, arg: usize) -> u64 {
        match &self.resolved.config.args[arg] {
            ArgValue::Scalar { bits, .. } => *bits,
            other => panic!("argument {arg} is {other:?}, not a scalar"),
        }
    }
    fn scalar_i32(&self, arg: usize) -> i32 {
        self.scalar(arg) as u32 as i32
    }
    /// Threads in the launch.
    fn threads(&self) -> usize {
        let c = &self.resolved.config;
        (c.grid.iter().product::<u32>() * c.block.iter().product::<u32>()) as usize
    }
    fn grid(&self) -> [u32; 3] {
        self.resolved.config.grid
    }
    fn block(&self) -> [u32; 3] {
        self.resolved.config.block
    }
    /// A module variable's bytes after the run.
    fn variable(&self, name: &str) -> Vec<u8> {
        self.run
            .machine
            .variable(name)
            .unwrap_or_else(|| panic!("no module variable `{name}`"))
    }
    /// A module variable's initial value: the launch's `globals` override, else its initializer.
    fn initial_i32s(&self, name: &str) -> Vec<i32> {
        if let Some((_, bits)) = self.resolved.config.globals.iter().find(|(n, _)| n == name) {
            return vec![*bits as u32 as i32];
        }
        let v = self
            .run
            .machine
            .program()
            .variables
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("no module variable `{name}`"));
        as_i32(&v.init)
    }

    fn in_i32(&self, name: &str) -> Vec<i32> {
        as_i32(self.input(name))
    }
    fn in_u32(&self, name: &str) -> Vec<u32> {
        as_u32(self.input(name))
    }
    fn in_f32(&self, name: &str) -> Vec<f32> {
        as_f32(self.input(name))
    }
    fn in_i64(&self, name: &str) -> Vec<i64> {
        as_i64(self.input(name))
    }
    fn out_i32(&self, name: &str) -> Vec<i32> {
        as_i32(&self.output(name))
    }
    fn out_u32(&self, name: &str) -> Vec<u32> {
        as_u32(&self.output(name))
    }
    fn out_f32(&self, name: &str) -> Vec<f32> {
        as_f32(&self.output(name))
    }
    fn out_f64(&self, name: &str) -> Vec<f64> {
        as_f64(&self.output(name))
    }
    fn out_u64(&self, name: &str) -> Vec<u64> {
        as_u64(&self.output(name))
    }
    fn out_i64(&self, name: &str) -> Vec<i64> {
        as_i64(&self.output(name))
    }
}

/// One corpus kernel: its path under `tests/kernels` (no extension), launch changes, and check.
struct Case {
    path: &'static str,
    adjust: fn() -> LaunchFlags,
    check: fn(&Ctx) -> Result<(), HarnessError>,
}

fn as_is() -> LaunchFlags {
    LaunchFlags::default()
}

fn flags(grid: &str, block: &str, buffers: &[&str], args: &[&str]) -> LaunchFlags {
    LaunchFlags {
        grid: Some(grid.into()),
        block: Some(block.into()),
        buffers: buffers.iter().map(|s| s.to_string()).collect(),
        args: args.iter().map(|s| s.to_string()).collect(),
        ..LaunchFlags::default()
    }
}

const CASES: &[Case] = &[
    Case {
        path: "vecadd",
        adjust: as_is,
        check: check_vecadd,
    },
    Case {
        path: "nvcc/vecadd_nvcc",
        adjust: as_is,
        check: check_vecadd,
    },
    Case {
        path: "bitops",
        adjust: as_is,
        check: check_bitops,
    },
    Case {
        path: "divergent_if_else",
        adjust: as_is,
        check: check_divergent_if_else,
    },
    Case {
        path: "int24_half",
        adjust: as_is,
        check: check_int24_half,
    },
    // The launch file gives no dynamic shared size; the kernel needs blockDim.x ints.
    Case {
        path: "dynamic_shared",
        adjust: || LaunchFlags {
            shared: Some(256),
            ..LaunchFlags::default()
        },
        check: check_dynamic_shared,
    },
    Case {
        path: "float_math",
        adjust: as_is,
        check: check_float_math,
    },
    Case {
        path: "fast_math",
        adjust: as_is,
        check: check_fast_math,
    },
    Case {
        path: "half_axpy",
        adjust: as_is,
        check: check_half_axpy,
    },
    Case {
        path: "globals_const",
        adjust: as_is,
        check: check_globals_const,
    },
    Case {
        path: "grid_2d",
        adjust: as_is,
        check: check_grid_2d,
    },
    Case {
        path: "grid_barrier",
        adjust: as_is,
        check: check_grid_barrier,
    },
    Case {
        path: "histogram_global",
        adjust: as_is,
        check: check_histogram,
    },
    Case {
        path: "histogram_shared",
        adjust: as_is,
        check: check_histogram,
    },
    Case {
        path: "indirect_call",
        adjust: as_is,
        check: check_indirect_call,
    },
    Case {
        path: "int64_arith",
        adjust: as_is,
        check: check_int64_arith,
    },
    Case {
        path: "loop_break_continue",
        adjust: as_is,
        check: check_loop_break_continue,
    },
    Case {
        path: "matmul_tiled",
        adjust: as_is,
        check: check_matmul_tiled,
    },
    Case {
        path: "nested_divergence",
        adjust: as_is,
        check: check_nested_divergence,
    },
    Case {
        path: "noinline_func",
        adjust: as_is,
        check: check_noinline_func,
    },
    Case {
        path: "recursion",
        adjust: as_is,
        check: check_recursion,
    },
    Case {
        path: "shared_broadcast",
        adjust: as_is,
        check: check_shared_broadcast,
    },
    Case {
        path: "reduce_tree",
        adjust: as_is,
        check: check_reduce_blocks,
    },
    Case {
        path: "reduce_warp_shfl",
        adjust: as_is,
        check: check_reduce_warp_shfl,
    },
    Case {
        path: "saxpy",
        adjust: as_is,
        check: check_saxpy,
    },
    Case {
        path: "nvcc/saxpy_loop_nvcc",
        adjust: as_is,
        check: check_saxpy_loop,
    },
    Case {
        path: "struct_arg",
        adjust: as_is,
        check: check_struct_arg,
    },
    Case {
        path: "scan_inclusive",
        adjust: as_is,
        check: check_scan_inclusive,
    },
    Case {
        path: "spinlock",
        adjust: as_is,
        check: check_spinlock,
    },
    Case {
        path: "stencil_1d",
        adjust: as_is,
        check: check_stencil_1d,
    },
    Case {
        path: "transpose_shared",
        adjust: as_is,
        check: check_transpose_shared,
    },
    Case {
        path: "vector_pack",
        adjust: as_is,
        check: check_vector_pack,
    },
    Case {
        path: "warp_vote",
        adjust: as_is,
        check: check_warp_vote,
    },
    Case {
        path: "extern_call",
        adjust: as_is,
        check: check_extern_call,
    },
    Case {
        path: "mma_tiles",
        adjust: as_is,
        check: check_mma_tiles,
    },
    Case {
        path: "ldmatrix_mma",
        adjust: as_is,
        check: check_ldmatrix_mma,
    },
    // 64 threads instead of 65,536: the same code paths, a thousandth of the steps.
    Case {
        path: "bench_alu",
        adjust: || {
            flags(
                "1",
                "64",
                &["in:u32:64:random:5:0:4294967295", "out:u32:64"],
                &["buffer:in", "buffer:out", "s32:60"],
            )
        },
        check: check_bench_alu,
    },
    // n = 16 (one tile), random inputs: the fma chain order matters and is checked bit for bit.
    Case {
        path: "bench_matmul",
        adjust: || {
            flags(
                "1,1",
                "16,16",
                &[
                    "A:f32:256:random:1:-4:4",
                    "B:f32:256:random:2:-4:4",
                    "C:f32:256",
                ],
                &["buffer:A", "buffer:B", "buffer:C", "s32:16"],
            )
        },
        check: check_bench_matmul,
    },
    Case {
        path: "bench_reduce",
        adjust: || {
            flags(
                "2",
                "128",
                &["in:s32:256:random:3:-1000:1000", "out:s32:2"],
                &["buffer:in", "buffer:out", "s32:200"],
            )
        },
        check: check_reduce_blocks,
    },
    Case {
        path: "nvcc/apply_calls_nvcc",
        adjust: as_is,
        check: check_apply_calls,
    },
    Case {
        path: "nvcc/local_array_nvcc",
        adjust: as_is,
        check: check_local_array,
    },
    Case {
        path: "nvcc/reduce_sum_nvcc",
        adjust: as_is,
        check: check_reduce_sum,
    },
];

// -- the harness ---------------------------------------------------------------------------------

/// How many schedules and which warp models one memory system gets: flat memory is cheap and
/// gets them all; cached memory (every access a multi-step memory program) gets the SIMT stack
/// and ITS under round-robin and a few random schedules.
fn runs_of(memory: MemoryKind) -> (Vec<WarpModel>, Vec<Schedule>) {
    match memory {
        MemoryKind::Flat => (
            WARP_MODELS.to_vec(),
            Schedule::round_robin_and_random(SEEDS),
        ),
        MemoryKind::Cached => (
            vec![WarpModel::SimtStack, WarpModel::Its],
            Schedule::round_robin_and_random(CACHED_SEEDS),
        ),
    }
}

fn run_case(path: &str, memory: MemoryKind) {
    let case = CASES
        .iter()
        .find(|c| c.path == path)
        .unwrap_or_else(|| panic!("no case `{path}`"));
    let ptx = kernels_dir().join(format!("{path}.ptx"));
    let ron = kernels_dir().join(format!("{path}.ron"));
    let program = Arc::new(load_file(&ptx).unwrap_or_else(|e| panic!("{e}")));
    let mut launch: Launch = read_launch(&ron).unwrap_or_else(|e| panic!("{e}"));
    let adjust = (case.adjust)();
    launch
        .apply_flags(&adjust)
        .unwrap_or_else(|e| panic!("{e}"));
    let resolved = resolve(&launch, &program).unwrap_or_else(|e| panic!("{e}"));

    let mut failures = Vec::new();
    let mut runs = 0;
    let (models, schedules) = runs_of(memory);
    for model in models {
        let config = MachineConfig {
            memory,
            ..config_with(model)
        };
        for schedule in schedules.iter().copied() {
            runs += 1;
            let outcome = match run_launch(&program, &resolved.config, &config, schedule, MAX_STEPS)
            {
                Err(e) => Err(HarnessError::Mismatch(format!("launch refused: {e}"))),
                Ok(run) => match &run.termination {
                    Termination::Completed => (case.check)(&Ctx {
                        resolved: &resolved,
                        run: &run,
                    }),
                    other => Err(HarnessError::Mismatch(format!(
                        "ended with {other:?} after {} steps",
                        run.machine.steps()
                    ))),
                },
            };
            if let Err(why) = outcome {
                failures.push(format!(
                    "  {why}\n    reproduce: {}",
                    reproduce(&ptx, &ron, &adjust, (model, memory), schedule)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{path}: {} of {runs} runs differ from the reference:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The `cudasem run` command that repeats one run.
fn reproduce(
    ptx: &Path,
    ron: &Path,
    adjust: &LaunchFlags,
    (model, memory): (WarpModel, MemoryKind),
    schedule: Schedule,
) -> String {
    let rel = |p: &Path| {
        p.strip_prefix(workspace_root())
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| p.to_path_buf())
            .display()
            .to_string()
    };
    let mut cmd = format!(
        "cudasem run {} --launch {} --warp-model {} --schedule {}",
        rel(ptx),
        rel(ron),
        warp_model_flag(model),
        schedule.flag()
    );
    if memory == MemoryKind::Cached {
        cmd += " --memory cached";
    }
    if let Some(g) = &adjust.grid {
        cmd += &format!(" --grid {g}");
    }
    if let Some(b) = &adjust.block {
        cmd += &format!(" --block {b}");
    }
    if let Some(s) = adjust.shared {
        cmd += &format!(" --shared {s}");
    }
    for b in &adjust.buffers {
        cmd += &format!(" --buffer {b}");
    }
    for a in &adjust.args {
        cmd += &format!(" --arg {a}");
    }
    cmd
}

macro_rules! corpus_tests {
    ($($name:ident => $path:literal,)*) => {
        $( #[test] fn $name() { run_case($path, MemoryKind::Flat); } )*
        /// The same kernels under cached memory: race-free kernels cannot tell the difference.
        mod cached {
            use super::*;
            $( #[test] fn $name() { run_case($path, MemoryKind::Cached); } )*
        }
        const TESTED: &[&str] = &[$($path),*];
    };
}

corpus_tests! {
    vecadd => "vecadd",
    vecadd_nvcc => "nvcc/vecadd_nvcc",
    bitops => "bitops",
    divergent_if_else => "divergent_if_else",
    int24_half => "int24_half",
    dynamic_shared => "dynamic_shared",
    float_math => "float_math",
    fast_math => "fast_math",
    half_axpy => "half_axpy",
    globals_const => "globals_const",
    grid_2d => "grid_2d",
    grid_barrier => "grid_barrier",
    histogram_global => "histogram_global",
    histogram_shared => "histogram_shared",
    indirect_call => "indirect_call",
    int64_arith => "int64_arith",
    loop_break_continue => "loop_break_continue",
    matmul_tiled => "matmul_tiled",
    nested_divergence => "nested_divergence",
    noinline_func => "noinline_func",
    recursion => "recursion",
    shared_broadcast => "shared_broadcast",
    reduce_tree => "reduce_tree",
    reduce_warp_shfl => "reduce_warp_shfl",
    saxpy => "saxpy",
    saxpy_loop_nvcc => "nvcc/saxpy_loop_nvcc",
    scan_inclusive => "scan_inclusive",
    struct_arg => "struct_arg",
    spinlock => "spinlock",
    stencil_1d => "stencil_1d",
    transpose_shared => "transpose_shared",
    vector_pack => "vector_pack",
    warp_vote => "warp_vote",
    bench_alu => "bench_alu",
    bench_matmul => "bench_matmul",
    bench_reduce => "bench_reduce",
    apply_calls_nvcc => "nvcc/apply_calls_nvcc",
    local_array_nvcc => "nvcc/local_array_nvcc",
    reduce_sum_nvcc => "nvcc/reduce_sum_nvcc",
    mma_tiles => "mma_tiles",
    extern_call => "extern_call",
    ldmatrix_mma => "ldmatrix_mma",
}

/// A kernel added to the corpus without a reference here fails this test.
#[test]
fn every_corpus_kernel_has_a_reference() {
    let dir = kernels_dir();
    let mut missing = Vec::new();
    for sub in [PathBuf::new(), PathBuf::from("nvcc")] {
        for ptx in ptx_files(&dir.join(&sub)) {
            let stem = ptx
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let key = sub.join(&stem).display().to_string();
            if !TESTED.contains(&key.as_str()) || !CASES.iter().any(|c| c.path == key) {
                missing.push(key.clone());
            }
            assert!(
                ptx.with_extension("ron").is_file(),
                "{key}.ptx has no launch file {key}.ron"
            );
        }
    }
    assert!(
        missing.is_empty(),
        "corpus kernels without a reference in tests/tests/corpus_run.rs: {missing:?}"
    );
}

// -- references ----------------------------------------------------------------------------------

/// `out` as it was before the run, with `f(i)` written for every `i < n` that a thread covers.
fn updated<T: Clone>(initial: Vec<T>, n: usize, f: impl Fn(usize) -> T) -> Vec<T> {
    let mut v = initial;
    for (i, slot) in v.iter_mut().enumerate().take(n) {
        *slot = f(i);
    }
    v
}

fn n_covered(c: &Ctx, n_arg: usize) -> usize {
    (c.scalar_i32(n_arg).max(0) as usize).min(c.threads())
}

fn reference_vecadd(a: &[i32], b: &[i32], c: Vec<i32>, n: usize) -> Vec<i32> {
    updated(c, n, |i| a[i].wrapping_add(b[i]))
}

fn check_vecadd(c: &Ctx) -> Result<(), HarnessError> {
    let want = reference_vecadd(
        &c.in_i32("a"),
        &c.in_i32("b"),
        c.in_i32("c"),
        n_covered(c, 3),
    );
    compare("c", &c.out_i32("c"), &want)
}

fn reference_bitops(x: u32, i: usize) -> [u32; 8] {
    let r = (i & 31) as u32;
    [
        x.count_ones(),
        x.leading_zeros(),
        x.reverse_bits(),
        (x >> 5) & 0x3ff,
        (x >> 8) & 0xfff,
        x.rotate_left(r),
        ((x as i32) >> 7) as u32,
        !(x ^ 0x5a5a_5a5a) & (x | 0x0f0f_0f0f),
    ]
}

fn check_bitops(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_u32("in");
    let mut want = c.in_u32("out");
    for i in 0..n_covered(c, 2) {
        want[8 * i..8 * i + 8].copy_from_slice(&reference_bitops(input[i], i));
    }
    compare("out", &c.out_u32("out"), &want)
}

/// `mul24.lo`, `sad` and the `.f16` round trip of one element (PTX ISA 9.7.1 `mul24`, `sad`;
/// `cvt.rn.f16.f32` rounds to nearest even, `cvt.f32.f16` is exact).
fn reference_int24_half(x: i32, y: i32, i: i32, f: f32) -> ([i32; 4], u16, f32) {
    let s24 = |v: i32| (v << 8) >> 8;
    let u24 = |v: i32| (v as u32) & 0xFF_FFFF;
    let mul_s = (s24(x) as i64 * s24(y) as i64) as i32;
    let mul_u = (u24(x) as u64 * u24(y) as u64) as u32 as i32;
    let sad_s = i.wrapping_add((x as i64 - y as i64).unsigned_abs() as u32 as i32);
    let sad_u = 7u32.wrapping_add((x as u32).abs_diff(y as u32)) as i32;
    let h = half::f16::from_f32(f * 3.0);
    ([mul_s, mul_u, sad_s, sad_u], h.to_bits(), h.to_f32() * 0.5)
}

fn check_int24_half(c: &Ctx) -> Result<(), HarnessError> {
    let (input, fin) = (c.in_i32("in"), c.in_f32("fin"));
    let n = n_covered(c, 5);
    let mut out = c.in_i32("out");
    let mut hout: Vec<u16> = as_i16(c.input("hout")).iter().map(|&v| v as u16).collect();
    let mut fout = c.in_f32("fout");
    for i in 0..n {
        let (words, h, f) = reference_int24_half(input[i], input[(i + 1) % n], i as i32, fin[i]);
        out[4 * i..4 * i + 4].copy_from_slice(&words);
        hout[i] = h;
        fout[i] = f;
    }
    compare("out", &c.out_i32("out"), &out)?;
    let got: Vec<u16> = as_i16(&c.output("hout"))
        .iter()
        .map(|&v| v as u16)
        .collect();
    compare("hout", &got, &hout)?;
    compare_f32_bits("fout", &c.out_f32("fout"), &fout)
}

fn check_divergent_if_else(c: &Ctx) -> Result<(), HarnessError> {
    let (a, b) = (c.in_i32("a"), c.in_i32("b"));
    let bx = c.block()[0] as usize;
    let want = updated(c.in_i32("out"), n_covered(c, 3), |i| {
        if (i % bx) & 1 == 0 {
            a[i].wrapping_mul(a[i])
        } else {
            b[i].wrapping_sub(1)
        }
    });
    compare("out", &c.out_i32("out"), &want)
}

fn check_dynamic_shared(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_i32("in");
    let n = c.scalar_i32(2) as usize;
    let bx = c.block()[0] as usize;
    let read = |i: usize| if i < n { input[i] } else { -1 };
    let want = updated(c.in_i32("out"), n.min(c.threads()), |i| {
        let (base, t) = (i - i % bx, i % bx);
        read(base + bx - 1 - t)
    });
    compare("out", &c.out_i32("out"), &want)
}

/// Every thread reads what thread 0 of its block stored before the barrier.
fn check_shared_broadcast(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_i32("in");
    let bx = c.block()[0] as usize;
    let want: Vec<i32> = (0..c.threads())
        .map(|g| {
            let (v, t) = (input[g / bx], g % bx);
            let arr = if t % 2 == 0 { 2 * v } else { 3 * v };
            v + 1 + arr + (v + 10) * (v + 20)
        })
        .collect();
    compare("out", &c.out_i32("out"), &want)
}

fn check_float_math(c: &Ctx) -> Result<(), HarnessError> {
    let (x, y) = (c.in_f32("x"), c.in_f32("y"));
    let n = n_covered(c, 5);
    let mut out = c.in_f32("out");
    let mut iout = c.in_i32("iout");
    let mut dout = as_f64(c.input("dout"));
    for i in 0..n {
        let (a, b) = (x[i], y[i]);
        let o = &mut out[8 * i..8 * i + 8];
        o[0] = a.abs().sqrt();
        o[1] = a.min(b);
        o[2] = a.max(b);
        o[3] = a.mul_add(b, 1.5);
        o[4] = a / if b == 0.0 { 1.0 } else { b };
        o[5] = a.mul_add(-0.25, i as f32);
        o[6] = if a > b { a - b } else { b - a };
        o[7] = 1.0 / (b.abs() + 3.0);
        iout[i] = (a * 3.0) as i32;
        let (da, db) = (a as f64, b as f64);
        dout[i] = da.mul_add(da, db * db).sqrt() / 3.0;
    }
    compare_f32_bits("out", &c.out_f32("out"), &out)?;
    compare("iout", &c.out_i32("iout"), &iout)?;
    compare_f64_bits("dout", &c.out_f64("dout"), &dout)
}

/// The approximate results are checked against the functions they approximate within the error
/// bounds of the CUDA C++ Programming Guide's "Intrinsic Functions" table (2 ulp and a little for
/// `__expf`/`__powf`, which scale the argument first; 2^-21.41 absolute for `__logf`, `__sinf`,
/// `__cosf` in their ranges here); the others are exact.
fn check_fast_math(c: &Ctx) -> Result<(), HarnessError> {
    let (x, y) = (c.in_f32("x"), c.in_f32("y"));
    let n = n_covered(c, 5);
    let approx = c.out_f32("approx");
    let mut exact = c.in_f32("exact");
    let mut ints = c.in_i32("ints");
    let abs_bound = 2f64.powf(-21.41);
    for i in 0..n {
        let (a, b) = (x[i], y[i]);
        let (a64, b64) = (a as f64, b as f64);
        let want = [
            (a64.exp(), 1e-6 * a64.abs().max(1.0)),
            (b64.ln(), abs_bound),
            (a64.sin(), abs_bound),
            (a64.cos(), abs_bound),
            (b64.powf(1.5), 1e-6 * b64.ln().abs().max(1.0)),
            (a64 / b64, 1e-6),
        ];
        for (k, (w, bound)) in want.iter().enumerate() {
            let got = approx[6 * i + k] as f64;
            // Relative for the exponentials and quotients, absolute for logarithm and sine/cosine.
            let err = if matches!(k, 0 | 4 | 5) {
                ((got - w) / w).abs()
            } else {
                (got - w).abs()
            };
            if err > *bound {
                return Err(HarnessError::Mismatch(format!(
                    "approx[{}] (thread {i}, function {k}): {got}, want {w} within {bound}",
                    6 * i + k
                )));
            }
        }
        exact[10 * i..10 * i + 10].copy_from_slice(&[
            a.floor(),
            a.ceil(),
            a.trunc(),
            a.round_ties_even(),
            b.copysign(a),
            a + b,
            a * b,
            a / b,
            b.sqrt(),
            if a.is_nan() { 0.0 } else { a.clamp(0.0, 1.0) },
        ]);
        let ii = i as i32;
        let bytes = ((i as u32).wrapping_mul(0x0102_0304) as u64) | (0xa0b0_c0d0u64 << 32);
        let pick = |sel: u32| ((bytes >> (8 * (sel & 7))) & 0xff) as u32;
        let perm = pick(0) | pick(4) << 8 | pick(1) << 16 | pick(5) << 24;
        let funnel = (((0x8000_0001u64 << 32) | i as u64) << (i % 32) >> 32) as u32;
        let ffs = if i == 0 {
            0
        } else {
            (i as u64).trailing_zeros() as i32 + 21
        };
        ints[8 * i..8 * i + 8].copy_from_slice(&[
            a.to_bits() as i32,
            a.round_ties_even() as i32,
            a.floor() as i32,
            a.ceil() as i32,
            (ii - (2 * ii - 40)).abs() + 3,
            perm as i32,
            funnel as i32,
            ((ii - 2 * ii + 1) >> 1) + (i as u64).leading_zeros() as i32 + ffs,
        ]);
    }
    compare_f32_bits("exact", &c.out_f32("exact"), &exact)?;
    compare("ints", &c.out_i32("ints"), &ints)
}

/// Half precision, rounded as IEEE 754 binary16 arithmetic does: each reference computes the
/// exact result in f64 (the inputs are halves, so products and these sums are exact there) and
/// rounds it once to half; `a * x + y` rounds twice, as its two instructions do.
fn check_half_axpy(c: &Ctx) -> Result<(), HarnessError> {
    use half::f16;
    let halves = |bytes: &[u8]| -> Vec<f16> {
        as_i16(bytes)
            .iter()
            .map(|&v| f16::from_bits(v as u16))
            .collect()
    };
    let a = match &c.resolved.config.args[1] {
        ArgValue::Bytes { bytes, .. } => f16::from_le_bytes([bytes[0], bytes[1]]).to_f64(),
        other => panic!("argument 1 is {other:?}, not a half passed by value"),
    };
    let (x, y0) = (halves(c.input("x")), halves(c.input("y")));
    let n = n_covered(c, 0);
    let mut y = y0.clone();
    let mut z = halves(c.input("z"));
    let mut f = c.in_f32("f");
    let h = f16::from_f64;
    for i in 0..n {
        let (xi, yi) = (x[i].to_f64(), y0[i].to_f64());
        y[i] = h(a * xi + yi);
        z[3 * i] = h(h(a * xi).to_f64() + yi);
        z[3 * i + 1] = h(xi - yi).max(h(-a));
        z[3 * i + 2] = h(xi / h(yi + 1.0).to_f64());
        f[i] = x[i].to_f32() + if xi < yi { 1000.0 } else { 0.0 };
    }
    let bits = |v: &[f16]| v.iter().map(|h| h.to_bits()).collect::<Vec<u16>>();
    compare("y", &bits(&halves(&c.output("y"))), &bits(&y))?;
    compare("z", &bits(&halves(&c.output("z"))), &bits(&z))?;
    compare_f32_bits("f", &c.out_f32("f"), &f)
}

fn check_globals_const(c: &Ctx) -> Result<(), HarnessError> {
    let scale = c.initial_i32s("scale")[0];
    let table = c.initial_i32s("table");
    let coeffs = c.initial_i32s("coeffs");
    let calls = c.initial_i32s("calls")[0];
    let input = c.in_i32("in");
    let n = n_covered(c, 3);
    let want = updated(c.in_i32("out"), n, |i| {
        let v = input[i];
        v.wrapping_mul(scale)
            .wrapping_add(table[i & 3].wrapping_mul(coeffs[(v & 3) as usize]))
    });
    compare("out", &c.out_i32("out"), &want)?;
    let fwant = updated(c.in_f32("fout"), n, |i| input[i] as f32 * 0.5);
    compare_f32_bits("fout", &c.out_f32("fout"), &fwant)?;
    compare("calls", &as_i32(&c.variable("calls")), &[calls + n as i32])?;
    compare(
        "result",
        &as_i32(&c.variable("result")),
        &[table[0] + table[3] + scale],
    )
}

fn check_grid_2d(c: &Ctx) -> Result<(), HarnessError> {
    let (width, height) = (c.scalar_i32(2) as usize, c.scalar_i32(3) as usize);
    let (g, b) = (c.grid(), c.block());
    let (nx, ny) = ((g[0] * b[0]) as usize, (g[1] * b[1]) as usize);
    let mut want = c.in_i32("out");
    for y in 0..height.min(ny) {
        for x in 0..width.min(nx) {
            want[y * width + x] = (y * 1000 + x) as i32;
        }
    }
    compare("out", &c.out_i32("out"), &want)?;
    compare("dims", &c.out_i32("dims"), &[g[1] as i32, b[1] as i32])
}

fn check_grid_barrier(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_i32("in");
    let n = c.scalar_i32(4) as usize;
    let (blocks, bx) = (c.grid()[0] as usize, c.block()[0] as usize);
    let partial: Vec<i32> = (0..blocks)
        .map(|b| {
            (b * bx..(b + 1) * bx)
                .filter(|&i| i < n)
                .fold(0i32, |s, i| s.wrapping_add(input[i]))
        })
        .collect();
    let total = partial.iter().fold(0i32, |s, &p| s.wrapping_add(p));
    compare("partial", &c.out_i32("partial"), &partial)?;
    compare("count", &c.out_i32("count"), &[blocks as i32])?;
    compare("out", &c.out_i32("out"), &vec![total; blocks])
}

/// Atomic increments in any order: the counts do not depend on the schedule.
fn check_histogram(c: &Ctx) -> Result<(), HarnessError> {
    let data = c.in_u32("data");
    let (n, nbins) = (n_covered(c, 2), c.scalar_i32(3) as u32);
    let mut want = c.in_i32("hist");
    for &d in &data[..n] {
        want[(d % nbins) as usize] += 1;
    }
    compare("hist", &c.out_i32("hist"), &want)
}

fn check_indirect_call(c: &Ctx) -> Result<(), HarnessError> {
    let (sel, input) = (c.in_i32("sel"), c.in_i32("in"));
    let want = updated(c.in_i32("out"), n_covered(c, 3), |i| {
        match (sel[i] as u32) % 3 {
            0 => input[i].wrapping_add(1),
            1 => input[i].wrapping_mul(2),
            _ => input[i].wrapping_neg(),
        }
    });
    compare("out", &c.out_i32("out"), &want)
}

fn reference_int64_arith(x: i32, y: i32) -> [u64; 8] {
    let w = x as i64 * y as i64;
    let uw = (x as u32 as u64) * (y as u32 as u64);
    let big = uw.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let d = if y == 0 { 1 } else { y as i64 };
    [
        w as u64,
        uw,
        ((big as u128 * 0xC2B2_AE3D_27D4_EB4F_u128) >> 64) as u64,
        ((w as i128 * -7) >> 64) as i64 as u64,
        (big >> 17) ^ (big << 9),
        w.wrapping_add(0xFFFF_FFFF).wrapping_sub(uw as i64) as u64,
        w.wrapping_div(d) as u64,
        big % (uw | 1),
    ]
}

fn check_int64_arith(c: &Ctx) -> Result<(), HarnessError> {
    let (a, b) = (c.in_i32("a"), c.in_i32("b"));
    let mut want = as_u64(c.input("out"));
    for i in 0..n_covered(c, 3) {
        want[8 * i..8 * i + 8].copy_from_slice(&reference_int64_arith(a[i], b[i]));
    }
    compare("out", &c.out_u64("out"), &want)
}

fn check_loop_break_continue(c: &Ctx) -> Result<(), HarnessError> {
    let trips = c.in_i32("trips");
    let limit = c.scalar_i32(3);
    let want = updated(c.in_i32("out"), n_covered(c, 2), |i| {
        let mut acc = 0i32;
        for k in 0..trips[i] {
            if k % 3 == 0 {
                continue;
            }
            acc = acc.wrapping_add(k.wrapping_mul(i as i32 + 1));
            if acc > limit {
                break;
            }
        }
        acc
    });
    compare("out", &c.out_i32("out"), &want)
}

fn check_matmul_tiled(c: &Ctx) -> Result<(), HarnessError> {
    let (a, b) = (c.in_i32("A"), c.in_i32("B"));
    let n = c.scalar_i32(3) as usize;
    let mut want = c.in_i32("C");
    for r in 0..n {
        for col in 0..n {
            want[r * n + col] = (0..n).fold(0i32, |s, k| {
                s.wrapping_add(a[r * n + k].wrapping_mul(b[k * n + col]))
            });
        }
    }
    compare("C", &c.out_i32("C"), &want)
}

fn check_nested_divergence(c: &Ctx) -> Result<(), HarnessError> {
    let (trips, a, b) = (c.in_i32("trips"), c.in_i32("a"), c.in_i32("b"));
    let n = c.scalar_i32(4) as usize;
    let want = updated(c.in_i32("out"), n.min(c.threads()), |i| {
        let mut acc = 0i32;
        for k in 0..trips[i].max(0) as usize {
            let j = (i + k) % n;
            if (i + k) & 1 == 1 {
                acc = if k & 2 != 0 {
                    acc.wrapping_add(a[j])
                } else {
                    acc.wrapping_sub(b[j])
                };
            } else {
                acc ^= k as i32;
            }
        }
        acc
    });
    compare("out", &c.out_i32("out"), &want)
}

fn mix(x: i32, y: i32) -> i32 {
    let r = x.wrapping_mul(31).wrapping_add(y);
    r ^ (r >> 3)
}

fn check_noinline_func(c: &Ctx) -> Result<(), HarnessError> {
    let a = c.in_i32("a");
    let want = updated(c.in_i32("out"), n_covered(c, 2), |i| {
        let v = if a[i] & 1 != 0 {
            mix(a[i], i as i32)
        } else {
            a[i]
        };
        mix(v, 7)
    });
    compare("out", &c.out_i32("out"), &want)
}

fn fib(k: i32) -> i32 {
    if k < 2 {
        k
    } else {
        fib(k - 1).wrapping_add(fib(k - 2))
    }
}

fn fact(k: u32) -> u32 {
    if k <= 1 {
        1
    } else {
        k.wrapping_mul(fact(k - 1))
    }
}

fn check_recursion(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_i32("n");
    let count = n_covered(c, 3);
    compare(
        "fibs",
        &c.out_i32("fibs"),
        &updated(c.in_i32("fibs"), count, |i| fib(input[i] & 15)),
    )?;
    compare(
        "facts",
        &c.out_u32("facts"),
        &updated(c.in_u32("facts"), count, |i| fact((input[i] & 15) as u32)),
    )
}

/// `out[b]` = the sum of block `b`'s elements below `n` (integers: the tree order is irrelevant).
fn check_reduce_blocks(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_i32("in");
    let n = c.scalar_i32(2) as usize;
    let (blocks, bx) = (c.grid()[0] as usize, c.block()[0] as usize);
    let mut want = c.in_i32("out");
    for (b, slot) in want.iter_mut().enumerate().take(blocks) {
        *slot = (b * bx..(b + 1) * bx)
            .filter(|&i| i < n)
            .fold(0i32, |s, i| s.wrapping_add(input[i]));
    }
    compare("out", &c.out_i32("out"), &want)
}

fn check_reduce_warp_shfl(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_i32("in");
    let n = c.scalar_i32(2) as usize;
    let mut want = c.in_i32("out");
    for (w, slot) in want.iter_mut().enumerate().take(c.threads() / 32) {
        *slot = (32 * w..32 * w + 32)
            .filter(|&i| i < n)
            .fold(0i32, |s, i| s.wrapping_add(input[i]));
    }
    compare("out", &c.out_i32("out"), &want)
}

/// `y[i] = fma(a, x[i], y[i])` (one rounding) for `i < covered`.
fn reference_saxpy(c: &Ctx, covered: usize) -> Result<(), HarnessError> {
    let a = f32::from_bits(c.scalar(1) as u32);
    let (x, y) = (c.in_f32("x"), c.in_f32("y"));
    let want = updated(y.clone(), covered, |i| a.mul_add(x[i], y[i]));
    compare_f32_bits("y", &c.out_f32("y"), &want)
}

/// One element per thread.
fn check_saxpy(c: &Ctx) -> Result<(), HarnessError> {
    reference_saxpy(c, n_covered(c, 0))
}

/// A grid-stride loop: every `i < n`, whatever the thread count.
fn check_saxpy_loop(c: &Ctx) -> Result<(), HarnessError> {
    reference_saxpy(c, c.scalar_i32(0) as usize)
}

/// The struct `{ const int *in; int n; float scale; short offset; }` by value: its fields are
/// read back from the argument's bytes at their C offsets, so a wrong layout fails here.
fn check_struct_arg(c: &Ctx) -> Result<(), HarnessError> {
    let ArgValue::Bytes { bytes, pointers } = &c.resolved.config.args[0] else {
        return Err(HarnessError::Mismatch(format!(
            "argument 0 is {:?}, not a struct",
            c.resolved.config.args[0]
        )));
    };
    if pointers != &[(0, c.index("in"))] {
        return Err(HarnessError::Mismatch(format!(
            "the struct's pointer slots are {pointers:?}"
        )));
    }
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let n = (word(8) as i32).max(0) as usize;
    let scale = f32::from_bits(word(12));
    let offset = i16::from_le_bytes([bytes[16], bytes[17]]) as i32;
    let input = c.in_i32("in");
    let want = updated(c.in_f32("out"), n.min(c.threads()), |i| {
        (input[i] + offset) as f32 * scale
    });
    compare_f32_bits("out", &c.out_f32("out"), &want)
}

fn check_scan_inclusive(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_i32("in");
    let n = c.scalar_i32(3) as usize;
    let (blocks, bx) = (c.grid()[0] as usize, c.block()[0] as usize);
    let mut out = c.in_i32("out");
    let mut sums = c.in_i32("block_sums");
    for (b, sum) in sums.iter_mut().enumerate().take(blocks) {
        let mut acc = 0i32;
        for i in b * bx..(b + 1) * bx {
            acc = acc.wrapping_add(if i < n { input[i] } else { 0 });
            if i < n {
                out[i] = acc;
            }
        }
        *sum = acc;
    }
    compare("out", &c.out_i32("out"), &out)?;
    compare("block_sums", &c.out_i32("block_sums"), &sums)
}

fn check_spinlock(c: &Ctx) -> Result<(), HarnessError> {
    let iters = c.scalar_i32(2);
    compare(
        "counter",
        &c.out_i32("counter"),
        &[c.in_i32("counter")[0] + c.grid()[0] as i32 * iters],
    )?;
    compare("lock", &c.out_i32("lock"), &[0])
}

fn check_stencil_1d(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_i32("in");
    let n = c.scalar_i32(2) as i64;
    let want = updated(c.in_i32("out"), n_covered(c, 2), |i| {
        (-3i64..=3)
            .map(|o| i as i64 + o)
            .filter(|&j| j >= 0 && j < n)
            .fold(0i32, |s, j| s.wrapping_add(input[j as usize]))
    });
    compare("out", &c.out_i32("out"), &want)
}

fn check_transpose_shared(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_f32("in");
    let (rows, cols) = (c.scalar_i32(2) as usize, c.scalar_i32(3) as usize);
    let mut want = c.in_f32("out");
    for r in 0..rows {
        for col in 0..cols {
            want[col * rows + r] = input[r * cols + col];
        }
    }
    compare_f32_bits("out", &c.out_f32("out"), &want)
}

fn check_vector_pack(c: &Ctx) -> Result<(), HarnessError> {
    let a = c.in_i32("a");
    let f = c.in_f32("f");
    let bytes = c.input("bytes").to_vec();
    let halves = as_i16(c.input("halves"));
    let n = n_covered(c, 8);
    let w = |l: usize| {
        if l < n {
            bytes[l] as i64 * 1_000_000_007 + halves[l] as i64
        } else {
            0
        }
    };
    let mut b = c.in_i32("b");
    for i in 0..n {
        for j in 0..4 {
            b[4 * i + j] = a[4 * i + 3 - j].wrapping_add(j as i32 + 1);
        }
    }
    compare("b", &c.out_i32("b"), &b)?;
    compare_f32_bits(
        "fsum",
        &c.out_f32("fsum"),
        &updated(as_f32(c.input("fsum")), n, |i| f[2 * i] + f[2 * i + 1]),
    )?;
    compare(
        "wide",
        &c.out_i64("wide"),
        &updated(c.in_i64("wide"), n, |i| w(i - i % 32 + (i % 32 + 1) % 32)),
    )?;
    compare(
        "swapped",
        &c.out_u32("swapped"),
        &updated(c.in_u32("swapped"), n, |i| (a[4 * i] as u32).swap_bytes()),
    )
}

fn check_warp_vote(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_i32("in");
    let n = c.scalar_i32(2) as usize;
    let pred = |i: usize| i < n && input[i] > 0;
    let mut want = c.in_u32("out");
    for w in 0..c.threads() / 32 {
        let ballot = (0..32)
            .filter(|&l| pred(32 * w + l))
            .fold(0u32, |m, l| m | 1 << l);
        want[3 * w] = ballot;
        want[3 * w + 1] = (ballot == u32::MAX) as u32;
        want[3 * w + 2] = (ballot != 0) as u32;
    }
    compare("out", &c.out_u32("out"), &want)
}

fn check_extern_call(c: &Ctx) -> Result<(), HarnessError> {
    // The value the launch file gives the body-less `nondet` (`extern_calls`), as resolved into
    // the initial value of its result slot.
    let v = c
        .resolved
        .config
        .globals
        .iter()
        .find(|(name, _)| name == "nondet.extern")
        .map(|&(_, bits)| bits as u32 as i32)
        .ok_or_else(|| HarnessError::Mismatch("the launch gives nondet no value".into()))?;
    assert_ne!(v, 0, "the launch file should give a value that shows");
    let n = n_covered(c, 1);
    compare(
        "out",
        &c.out_i32("out"),
        &updated(c.in_i32("out"), n, |i| {
            v.wrapping_mul(i as i32).wrapping_add(1)
        }),
    )
}

fn f16s(bytes: &[u8]) -> Vec<f64> {
    as_i16(bytes)
        .into_iter()
        .map(|b| half::f16::from_bits(b as u16).to_f64())
        .collect()
}

/// bfloat16 bits (in a `u16` buffer) as numbers: the high half of a binary32.
fn bf16s(bytes: &[u8]) -> Vec<f64> {
    as_i16(bytes)
        .into_iter()
        .map(|b| f32::from_bits((b as u16 as u32) << 16) as f64)
        .collect()
}

/// `a (m x k) . b (k x n) + c`, row-major, exactly (the launches keep every sum exact in the
/// destination format, so the order of the additions, which the PTX ISA leaves open, is moot).
fn matmul(a: &[f64], b: &[f64], c: &[f64], (m, n, k): (usize, usize, usize)) -> Vec<f64> {
    (0..m * n)
        .map(|i| {
            let (r, col) = (i / n, i % n);
            c[i] + (0..k)
                .map(|kk| a[r * k + kk] * b[kk * n + col])
                .sum::<f64>()
        })
        .collect()
}

fn to_f32(v: Vec<f64>) -> Vec<f32> {
    v.into_iter().map(|x| x as f32).collect()
}

fn check_mma_tiles(c: &Ctx) -> Result<(), HarnessError> {
    let cf: Vec<f64> = c.in_f32("c").into_iter().map(f64::from).collect();
    let dims = (16, 8, 16);
    compare_f32_bits(
        "dh",
        &c.out_f32("dh"),
        &to_f32(matmul(
            &f16s(c.input("ah")),
            &f16s(c.input("bh")),
            &cf,
            dims,
        )),
    )?;
    compare_f32_bits(
        "db",
        &c.out_f32("db"),
        &to_f32(matmul(
            &bf16s(c.input("ab")),
            &bf16s(c.input("bb")),
            &cf,
            dims,
        )),
    )?;
    // cp.async with src-size 12 of 16: the last 4 bytes of every 16 are zero.
    let ai: Vec<i64> = c.input("ai").iter().map(|&b| b as i8 as i64).collect();
    let bi: Vec<i64> = c
        .input("bi")
        .iter()
        .enumerate()
        .map(|(i, &b)| if i % 16 < 12 { b as i8 as i64 } else { 0 })
        .collect();
    let ci = c.in_i32("ci");
    let di: Vec<i32> = (0..128)
        .map(|i| {
            let (r, col) = (i / 8, i % 8);
            let s: i64 = (0..32).map(|k| ai[r * 32 + k] * bi[k * 8 + col]).sum();
            (ci[i] as i64 + s) as i32
        })
        .collect();
    compare("di", &c.out_i32("di"), &di)?;
    let f64s = |name: &str| as_f64(c.input(name));
    compare_f64_bits(
        "dd",
        &c.out_f64("dd"),
        &matmul(&f64s("ad"), &f64s("bd"), &f64s("cd"), (8, 8, 4)),
    )?;
    compare_f32_bits("cv8", &c.out_f32("cv8"), &c.in_f32("c")[..8])
}

fn check_ldmatrix_mma(c: &Ctx) -> Result<(), HarnessError> {
    let a16 = as_i16(c.input("a"));
    let b16 = as_i16(c.input("b"));
    compare_f32_bits(
        "d",
        &c.out_f32("d"),
        &to_f32(matmul(
            &f16s(c.input("a")),
            &f16s(c.input("b")),
            &[0.0; 128],
            (16, 8, 16),
        )),
    )?;
    let pair = |lo: i16, hi: i16| lo as u16 as u32 | (hi as u16 as u32) << 16;
    // ldmatrix.x4 of A's quarters j (rows 8 (j & 1).., columns 8 (j >> 1)..): lane l gets row
    // l / 4, columns 2 (l % 4) and the next.
    let mut frag = vec![0u32; 128];
    let mut tfrag = vec![0u32; 64];
    for l in 0..32 {
        let (g, t) = (l / 4, l % 4);
        for j in 0..4 {
            let (row, col) = (8 * (j & 1) + g, 8 * (j >> 1) + 2 * t);
            frag[32 * j + l] = pair(a16[row * 16 + col], a16[row * 16 + col + 1]);
        }
        // .trans of B's k-halves j: column g, rows 2t and 2t + 1 of the 8x8 matrix.
        for j in 0..2 {
            let k = 8 * j + 2 * t;
            tfrag[32 * j + l] = pair(b16[k * 8 + g], b16[(k + 1) * 8 + g]);
        }
    }
    compare("frag", &c.out_u32("frag"), &frag)?;
    compare("tfrag", &c.out_u32("tfrag"), &tfrag)
}

fn reference_bench_alu(mut x: u32) -> u32 {
    for k in 0..64u32 {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        x ^= x >> 13;
        x = x.wrapping_add(k.wrapping_mul(0x9E37_79B9));
        x ^= x << 7;
    }
    x
}

fn check_bench_alu(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_u32("in");
    compare(
        "out",
        &c.out_u32("out"),
        &updated(c.in_u32("out"), n_covered(c, 2), |i| {
            reference_bench_alu(input[i])
        }),
    )
}

/// Tiled, in the kernel's order: per tile, `acc = fma(As[ty][k], Bs[k][tx], acc)` for k = 0..16,
/// out-of-range elements read as 0.
fn check_bench_matmul(c: &Ctx) -> Result<(), HarnessError> {
    const TILE: usize = 16;
    let (a, b) = (c.in_f32("A"), c.in_f32("B"));
    let n = c.scalar_i32(3) as usize;
    let (g, bl) = (c.grid(), c.block());
    let (rows, cols) = ((g[1] * bl[1]) as usize, (g[0] * bl[0]) as usize);
    let mut want = c.in_f32("C");
    for row in 0..n.min(rows) {
        for col in 0..n.min(cols) {
            let mut acc = 0.0f32;
            for t in 0..n.div_ceil(TILE) {
                for k in 0..TILE {
                    let ac = t * TILE + k;
                    let x = if ac < n { a[row * n + ac] } else { 0.0 };
                    let y = if ac < n { b[ac * n + col] } else { 0.0 };
                    acc = x.mul_add(y, acc);
                }
            }
            want[row * n + col] = acc;
        }
    }
    compare_f32_bits("C", &c.out_f32("C"), &want)
}

fn check_apply_calls(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_i32("in");
    let want = updated(c.in_i32("out"), n_covered(c, 2), |i| {
        let v = if i % 2 == 1 {
            input[i].wrapping_mul(2)
        } else {
            input[i].wrapping_add(1)
        };
        v.clamp(-50, 50)
    });
    compare("out", &c.out_i32("out"), &want)
}

fn check_local_array(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_i32("in");
    let want = updated(c.in_i32("out"), n_covered(c, 2), |i| {
        let v = input[i];
        v.wrapping_mul(v & 15)
            .wrapping_add(v.wrapping_mul((v >> 4) & 15))
    });
    compare("out", &c.out_i32("out"), &want)
}

/// One atomic add per block, in any order: the total does not depend on it.
fn check_reduce_sum(c: &Ctx) -> Result<(), HarnessError> {
    let input = c.in_i64("in");
    let n = n_covered(c, 2);
    let total = input[..n]
        .iter()
        .fold(c.in_i64("out")[0], |s, &x| s.wrapping_add(x));
    compare("out", &c.out_i64("out"), &[total])
}

/// `shared_broadcast` (a `__shared__` value written by thread 0, read by all after
/// `__syncthreads()`) is race-free, as `cudasem check` must find it: with the barrier a compiler
/// memory barrier, every read of the shared variables comes after the `bar.sync`. Runs under
/// the monitors with a seeded pick among the enabled choices, in every warp model.
#[test]
fn shared_broadcast_is_race_free() {
    use semantics::machine::Machine;
    use semantics::monitors::{MonitorConfig, Monitors};
    let dir = kernels_dir();
    let program =
        Arc::new(load_file(&dir.join("shared_broadcast.ptx")).unwrap_or_else(|e| panic!("{e}")));
    let launch = read_launch(&dir.join("shared_broadcast.ron")).unwrap_or_else(|e| panic!("{e}"));
    let resolved = resolve(&launch, &program).unwrap_or_else(|e| panic!("{e}"));
    for model in [WarpModel::SimtStack, WarpModel::Its, WarpModel::Threads] {
        for seed in 0..8u64 {
            let config = config_with(model);
            let mut m = Machine::new(Arc::clone(&program), &resolved.config, &config)
                .unwrap_or_else(|e| panic!("{}", e.message));
            let mut monitors = Monitors::new(&m, &resolved.config, MonitorConfig::default());
            let mut events = Vec::new();
            let mut r = seed;
            while m.termination().is_none() {
                r = r
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let enabled = m.enabled();
                let choice = enabled[(r >> 33) as usize % enabled.len()];
                events.clear();
                m.step_observed(&choice, &mut events)
                    .expect("an enabled choice steps");
                monitors.observe(&events);
            }
            assert_eq!(
                m.termination(),
                Some(&Termination::Completed),
                "{model:?} seed {seed}"
            );
            let findings = monitors.finish();
            assert!(
                findings.races.is_empty() && findings.divergences.is_empty(),
                "{model:?} seed {seed}: {:?} {:?}",
                findings.races,
                findings.divergences
            );
        }
    }
}
