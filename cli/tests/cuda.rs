//! CUDA in: `.cu` files wherever PTX is taken (compiled by clang with cudasem's CUDA header),
//! `cudasem cc`, `cudasem launch`, demangled names. The kernels are ordinary CUDA in
//! `tests/kernels/cuda/`; each result is checked against a Rust reference computed here.
//!
//! Tests that compile need clang: without it they say so on stderr and pass (CI installs clang;
//! `apt-get install -y clang`). The launch files of the PTX corpus and the missing-compiler
//! errors need no clang and always run.

mod common;

use common::{cudasem_here, cudasem_in, workspace};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

macro_rules! require_clang {
    () => {
        if !common::clang_available() {
            eprintln!(
                "SKIPPED: clang is not installed; the .cu tests need it (apt-get install -y clang)"
            );
            return;
        }
    };
}

const CUDA: &str = "tests/kernels/cuda";

fn cu(name: &str) -> String {
    format!("{CUDA}/{name}.cu")
}

fn ron(name: &str) -> String {
    format!("{CUDA}/{name}.ron")
}

/// `cudasem run FILE --launch RON --format json EXTRA...`: the printed buffers.
fn run_json(file: &str, launch: &str, extra: &[&str]) -> Value {
    let mut args = vec!["run", file, "--launch", launch, "--format", "json"];
    args.extend_from_slice(extra);
    let (code, out, err) = cudasem_here(&args);
    assert_eq!(code, 0, "run {file}: {err}{out}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("run {file}: bad JSON {e}: {out}"))
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// The 1-based line of `source` that contains `text` (so the tests follow edits of the file).
fn line_of(source: &str, text: &str) -> usize {
    source
        .lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no line contains `{text}`"))
        + 1
}

/// Block sums of `in = 1, 2, 3, ...` below `n`, `block` elements per block.
fn block_sums(blocks: usize, block: usize, n: usize) -> Vec<f64> {
    (0..blocks)
        .map(|b| {
            (b * block..(b + 1) * block)
                .filter(|&i| i < n)
                .map(|i| (i + 1) as f64)
                .sum()
        })
        .collect()
}

#[test]
fn reduction_with_syncthreads_and_shfl_down_runs_checks_and_explores() {
    require_clang!();
    let v = run_json(&cu("reduce_block"), &ron("reduce_block"), &[]);
    // JSON keeps the PTX (mangled) name.
    assert_eq!(v["kernel"], "_Z12reduce_blockPKfPfi");
    assert_eq!(numbers(&v["buffers"]["out"]), block_sums(3, 64, 150));

    let (code, out, err) = cudasem_here(&[
        "check",
        &cu("reduce_block"),
        "--launch",
        &ron("reduce_block"),
    ]);
    assert_eq!(code, 0, "{err}{out}");
    assert!(
        out.contains("reduce_block(float const*, float*, int): clean"),
        "demangled and clean: {out}"
    );

    // Two blocks of one warp: every schedule, one outcome.
    let (code, out, err) = cudasem_here(&[
        "explore",
        &cu("reduce_block"),
        "--launch",
        &ron("reduce_block"),
        "--grid",
        "2",
        "--block",
        "32",
    ]);
    assert_eq!(code, 0, "{err}{out}");
    assert!(out.contains("exploration is complete"), "{out}");
    let expected = block_sums(2, 32, 150);
    assert!(
        out.contains(&format!(
            "outcomes (1):\n  completed  out=[{:.1}, {:.1}, 0.0]",
            expected[0], expected[1]
        )),
        "{out}"
    );
}

#[test]
fn histogram_with_float_atomic_add_matches_the_reference_under_every_schedule() {
    require_clang!();
    let (n, nbins) = (100usize, 8usize);
    let mut bins = vec![0.0f64; nbins];
    let mut counts = vec![0.0f64; nbins];
    for i in 0..n {
        let b = (3 * i) % nbins;
        bins[b] += 0.5 + 0.25 * i as f64;
        counts[b] += 1.0;
    }
    let v = run_json(&cu("histogram_float"), &ron("histogram_float"), &[]);
    assert_eq!(numbers(&v["buffers"]["bins"]), bins);
    assert_eq!(numbers(&v["buffers"]["counts"]), counts);
    // The atomics are the only communication: random schedules all agree.
    let (code, out, err) = cudasem_here(&[
        "fuzz",
        &cu("histogram_float"),
        "--launch",
        &ron("histogram_float"),
        "--runs",
        "20",
    ]);
    assert_eq!(code, 0, "{err}{out}");
    assert!(out.contains("outcomes (1 distinct)"), "{out}");
    let (code, out, err) = cudasem_here(&[
        "check",
        &cu("histogram_float"),
        "--launch",
        &ron("histogram_float"),
    ]);
    assert_eq!(code, 0, "{err}{out}");
    assert!(out.contains(": clean"), "{out}");
}

#[test]
fn cooperative_groups_tiles_and_grid_sync() {
    require_clang!();
    let n = 120usize;
    let input: Vec<i64> = (1..=128).collect();
    let tile8: Vec<f64> = (0..16)
        .map(|t| {
            (8 * t..8 * t + 8)
                .filter(|&i| i < n)
                .map(|i| input[i])
                .sum::<i64>() as f64
        })
        .collect();
    let partial: Vec<f64> = (0..2)
        .map(|b| {
            (64 * b..64 * b + 64)
                .filter(|&i| i < n)
                .map(|i| input[i])
                .sum::<i64>() as f64
        })
        .collect();
    let total: f64 = partial.iter().sum();
    let v = run_json(&cu("coop_sum"), &ron("coop_sum"), &[]);
    assert_eq!(numbers(&v["buffers"]["tile8_sums"]), tile8);
    assert_eq!(numbers(&v["buffers"]["partial"]), partial);
    assert_eq!(numbers(&v["buffers"]["total"]), vec![total, total]);

    // this_grid().sync() needs every block resident (a cooperative launch): with room for one
    // block only, the first spins at the grid barrier forever.
    let (code, out, err) = cudasem_here(&[
        "explore",
        &cu("coop_sum"),
        "--launch",
        &ron("coop_sum"),
        "--grid",
        "2",
        "--block",
        "32",
        "--sms",
        "1",
        "--max-blocks-per-sm",
        "1",
    ]);
    assert_eq!(code, 1, "{err}{out}");
    assert!(out.contains("may not terminate"), "{out}");
    assert!(out.contains("lasso"), "{out}");
    // The header's own barrier state is not shown as the program's.
    assert!(!out.contains("__cudasem"), "{out}");
}

#[test]
fn a_race_is_reported_at_both_cu_lines() {
    require_clang!();
    let source = std::fs::read_to_string(workspace().join(cu("racy_shift"))).unwrap();
    let read = line_of(&source, "int right = a[i + 1];");
    let write = line_of(&source, "a[i] = right * 2;");
    let (code, out, err) =
        cudasem_here(&["check", &cu("racy_shift"), "--launch", &ron("racy_shift")]);
    assert_eq!(code, 1, "{err}{out}");
    assert!(out.contains("data race (read-write"), "{out}");
    assert!(
        out.contains(&format!("read at {}.ptx:", cu("racy_shift"))),
        "{out}"
    );
    assert!(out.contains(&format!("(racy_shift.cu:{read})")), "{out}");
    assert!(out.contains(&format!("(racy_shift.cu:{write})")), "{out}");
    assert!(
        out.contains("racy_shift(int*, int): 1 data race(s)"),
        "{out}"
    );
    // The printed replay names the .cu file, and replays.
    let reproduce = out
        .lines()
        .find_map(|l| l.strip_prefix("reproduce: cudasem "))
        .unwrap_or_else(|| panic!("no reproduce line: {out}"));
    assert!(reproduce.contains("racy_shift.cu --launch"), "{reproduce}");
    let args: Vec<&str> = reproduce.split(' ').collect();
    let (code, out, err) = cudasem_here(&args);
    assert_eq!(code, 1, "replay: {err}{out}");
    assert!(out.contains(&format!("(racy_shift.cu:{write})")), "{out}");
}

#[test]
fn cc_writes_the_ptx_that_every_command_runs() {
    require_clang!();
    let dir = tempfile::tempdir().unwrap();
    let ptx = dir.path().join("reduce_block.ptx");
    let ptx = ptx.to_str().unwrap();
    let (code, _, err) = cudasem_here(&["cc", &cu("reduce_block"), "-o", ptx]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(ptx).unwrap();
    assert!(text.contains(".entry _Z12reduce_blockPKfPfi"), "{text}");
    assert!(text.contains("shfl.sync.down.b32"), "{text}");
    assert!(text.contains("bar.sync"), "{text}");
    // Line tables name the .cu file as given, not a temporary folder.
    assert!(
        text.contains(&format!(".file\t1 \"{}\"", cu("reduce_block"))),
        "{text}"
    );
    assert!(!text.contains("cudasem-cc-"), "{text}");
    let from_ptx = run_json(ptx, &ron("reduce_block"), &[]);
    let from_cu = run_json(&cu("reduce_block"), &ron("reduce_block"), &[]);
    assert_eq!(from_ptx, from_cu);
    // The same file compiles to the same PTX (traces replay against a recompiled file).
    let (_, again, _) = cudasem_here(&["cc", &cu("reduce_block")]);
    assert_eq!(again, text);
    // The header is shown on request.
    let (code, header, _) = cudasem_here(&["cc", "--header"]);
    assert_eq!(code, 0);
    assert!(header.contains("__shfl_down_sync"));
}

#[test]
fn compile_errors_are_shown_as_clang_prints_them() {
    require_clang!();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.cu"),
        "__global__ void k(int *a) {\n    a[threadIdx.x] = undefined_name;\n}\n",
    )
    .unwrap();
    for args in [
        &["run", "bad.cu", "--grid", "1"][..],
        &["check", "bad.cu", "--grid", "1"],
        &["explore", "bad.cu", "--grid", "1"],
        &["fuzz", "bad.cu", "--grid", "1"],
        &["debug", "bad.cu", "--grid", "1"],
        &["parse", "bad.cu"],
        &["cfg", "bad.cu"],
        &["launch", "bad.cu"],
        &["cc", "bad.cu"],
    ] {
        let command = args[0];
        let (code, out, err) = cudasem_in(dir.path(), args);
        assert_eq!(code, 2, "{command}: {err}{out}");
        assert!(
            err.contains("bad.cu:2:22: error: use of undeclared identifier"),
            "{err}"
        );
        assert!(err.contains("clang could not compile bad.cu"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_missing_clang_is_a_clear_error() {
    // Needs no clang: the compiler named does not exist.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cu"), "__global__ void k() {}\n").unwrap();
    let (code, out, err) = cudasem_in(
        dir.path(),
        &[
            "--clang",
            "/nonexistent/clang",
            "run",
            "k.cu",
            "--grid",
            "1",
        ],
    );
    assert_eq!(code, 2, "{err}{out}");
    assert!(
        err.contains("cannot run clang (`/nonexistent/clang`)"),
        "{err}"
    );
    assert!(err.contains("apt-get install -y clang"), "{err}");
    // The environment variable names it too; a missing .cu file is named as such.
    let out = Command::new(env!("CARGO_BIN_EXE_cudasem"))
        .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
        .args(["parse", "k.cu"])
        .current_dir(dir.path())
        .env("CUDASEM_CLANG", "/nonexistent/clang-from-env")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("clang-from-env"));
    let (code, _, err) = cudasem_in(dir.path(), &["parse", "missing.cu"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read missing.cu"), "{err}");
}

#[test]
fn launch_from_a_cu_file_names_the_cpp_parameters_and_runs() {
    require_clang!();
    let dir = tempfile::tempdir().unwrap();
    let out_ron = dir.path().join("gen.ron");
    let out_ron = out_ron.to_str().unwrap();
    let (code, _, err) = cudasem_here(&[
        "launch",
        &cu("reduce_block"),
        "--threads",
        "128",
        "-o",
        out_ron,
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(out_ron).unwrap();
    assert!(
        text.contains("kernel: \"_Z12reduce_blockPKfPfi\""),
        "{text}"
    );
    assert!(
        text.contains("\"in\": (type: \"f32\", len: 128, init: Range(start: 0.0, step: 1.0))"),
        "{text}"
    );
    assert!(text.contains("\"out\": (type: \"f32\""), "{text}");
    assert!(
        text.contains("Scalar(type: \"s32\", value: 128), // parameter 2: int n"),
        "{text}"
    );
    assert!(text.contains("print: [\"out\"]"), "{text}");
    let v = run_json(&cu("reduce_block"), out_ron, &[]);
    // in = 0, 1, 2, ...: the block sums of 0..128 in blocks of 64.
    let out = numbers(&v["buffers"]["out"]);
    assert_eq!(&out[..2], &[2016.0, 6112.0]);
}

/// The PTX files of the corpus (top level and `nvcc/`).
fn corpus_ptx() -> Vec<String> {
    let mut files = Vec::new();
    for dir in ["tests/kernels", "tests/kernels/nvcc"] {
        for entry in std::fs::read_dir(workspace().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "ptx") {
                let name = path.file_name().unwrap().to_str().unwrap().to_string();
                files.push(format!("{dir}/{name}"));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn generated_launches_run_unchanged_for_every_corpus_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let files = corpus_ptx();
    assert!(files.len() >= 30, "{files:?}");
    for file in files {
        let name = Path::new(&file).file_stem().unwrap().to_str().unwrap();
        let out = dir.path().join(format!("{name}.ron"));
        let out = out.to_str().unwrap();
        let (code, _, err) = cudasem_here(&["launch", &file, "-o", out]);
        assert_eq!(code, 0, "launch {file}: {err}");
        let text = std::fs::read_to_string(out).unwrap();
        assert!(
            text.contains("A trial run (round-robin) completed"),
            "{file}: {text}"
        );
        let (code, stdout, err) = cudasem_here(&["run", &file, "--launch", out]);
        assert_eq!(code, 0, "run {file} --launch {out}:\n{text}\n{err}{stdout}");
    }
}

#[test]
fn launch_errors_name_the_kernels() {
    // A module with several kernels needs --kernel; an unknown name lists them.
    let (code, _, err) =
        cudasem_here(&["launch", "tests/kernels/mp/mp_weak.ptx", "--kernel", "nope"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no kernel named `nope`"), "{err}");
    assert!(err.contains("its kernels are:"), "{err}");
}

/// What lane `l` of `header_names.cu` writes to `r[l * 32 + k]`, computed as the CUDA
/// Programming Guide defines each function.
fn header_names_expected(l: i64) -> Vec<i64> {
    let tile = l & !3;
    let ballot_mod3: i64 = (0..32).filter(|x| x % 3 == 0).map(|x| 1i64 << x).sum();
    vec![
        30,                                 // __shfl_sync from lane 3
        if l >= 1 { l - 1 } else { l },     // __shfl_up_sync by 1
        if l + 2 < 32 { l + 2 } else { l }, // __shfl_down_sync by 2
        l ^ 1,                              // __shfl_xor_sync
        l & !7,                             // __shfl_sync lane 0 of width 8
        ballot_mod3 as i32 as i64,          // __ballot_sync
        1,                                  // __any_sync
        0,                                  // __all_sync
        -1,                                 // __activemask
        10,                                 // __syncthreads_count
        1,                                  // __syncthreads_and
        1,                                  // __syncthreads_or
        32 * 1000 + 100 + 32,               // blockDim, gridDim, blockIdx, warpSize
        100 + l,                            // __ldg
        i64::from((l as u32).count_ones()) + i64::from((l as u32).leading_zeros()) * 100,
        (l as u32).reverse_bits() as i32 as i64, // __brev
        l.min(7) + l.max(20) * 100,              // min, max
        (l % 4) + (l / 4) * 10,                  // tile thread_rank, meta_group_rank
        tile + 3,                                // tile shfl
        if l % 4 == 0 { l } else { l - 1 },      // tile shfl_up
        l ^ 2,                                   // tile shfl_xor
        0b1010,                                  // tile ballot of odd values
        i64::from(tile == 4) + if tile == 28 { 0 } else { 10 }, // tile any, all
        (tile + 3) + tile * 100,                 // cg::reduce greater, less
        l + 3200,                                // thread_block thread_rank, size
        l + 3200,                                // grid_group thread_rank, size
        l + 3200,                                // threadIdx as uint3, blockDim as dim3
    ]
}

#[test]
fn every_name_of_the_header_compiles_loads_and_computes_what_cuda_defines() {
    require_clang!();
    let v = run_json(&cu("header_names"), &ron("header_names"), &[]);
    let b = &v["buffers"];
    let r = numbers(&b["r"]);
    for l in 0..32i64 {
        let expected = header_names_expected(l);
        let got: Vec<i64> = (0..expected.len())
            .map(|k| r[l as usize * 32 + k] as i64)
            .collect();
        assert_eq!(got, expected, "lane {l}");
        // f32 values print as the shortest decimal that reads back as the same f32.
        let f: Vec<f32> = numbers(&b["f"])[l as usize * 8..l as usize * 8 + 5]
            .iter()
            .map(|&x| x as f32)
            .collect();
        let x = l as f32;
        let down = if l < 31 { (l + 1) as f32 * 0.5 } else { 15.5 };
        let want = [
            down,
            x.sqrt(),
            x.min(3.0) + x.max(30.0),
            x,
            x.mul_add(2.0, 1.0),
        ];
        assert_eq!(f, want, "floats of lane {l}");
        let d: Vec<f64> = numbers(&b["d"])[l as usize * 4..l as usize * 4 + 3].to_vec();
        let y = l as f64;
        let want = [1.5 * (l ^ 2) as f64, y.sqrt(), y.mul_add(3.0, 0.5)];
        // serde_json's default float parser may be one unit in the last place off.
        for (got, want) in d.iter().zip(want) {
            assert!(
                (got - want).abs() <= f64::EPSILON * want.abs(),
                "doubles of lane {l}: {d:?}, want {want}"
            );
        }
    }
    // Atomics: 32 lanes each.
    assert_eq!(
        numbers(&b["ci"]),
        [
            32.0, 36.0, 31.0, -31.0, -256.0, -1.0, 0.0, 99.0, 7.0, 32.0, 32.0
        ]
    );
    // atomicInc wraps at 9 (32 % 10 = 2); atomicDec counts 50 down 32 times.
    assert_eq!(numbers(&b["cu"]), [96.0, 2.0, 18.0, 62.0, 5.0]);
    assert_eq!(numbers(&b["cull"]), [(32u64 << 33) as f64, 5.0]);
    assert_eq!(numbers(&b["cll"]), [0.0]);
    assert_eq!(numbers(&b["cf"]), [17.0, 2.5]);
    assert_eq!(numbers(&b["cd"]), [8.5]);
}

#[test]
fn a_whole_program_with_host_code_compiles_and_its_kernel_runs() {
    require_clang!();
    let dir = tempfile::tempdir().unwrap();
    let launch = dir.path().join("vecadd.ron");
    let launch = launch.to_str().unwrap();
    let (code, _, err) = cudasem_here(&[
        "launch",
        &cu("vecadd_program"),
        "--threads",
        "100",
        "-o",
        launch,
    ]);
    assert_eq!(code, 0, "{err}");
    let v = run_json(&cu("vecadd_program"), launch, &[]);
    // a = b = 0, 1, 2, ...: c = 2i.
    let c = numbers(&v["buffers"]["c"]);
    assert_eq!(c, (0..100).map(|i| 2.0 * i as f64).collect::<Vec<_>>());
    // The kernel is found by its C++ name too.
    let (code, out, err) = cudasem_here(&[
        "run",
        &cu("vecadd_program"),
        "--launch",
        launch,
        "--kernel",
        "vadd",
        "--print",
        "c",
    ]);
    assert_eq!(code, 0, "{err}{out}");
}

/// The corpus kernels written with the shipped header's standard names (`#include
/// "cudasem_cuda.h"`, `threadIdx.x`, `atomicAdd`...) run from their `.cu` exactly as their
/// committed PTX does: cudasem's own compilation and `scripts/regen-ptx.sh` agree on them.
#[test]
fn corpus_kernels_on_the_shipped_header_run_as_their_ptx() {
    require_clang!();
    let root = workspace();
    let mut names: Vec<String> = std::fs::read_dir(root.join("tests/kernels"))
        .expect("tests/kernels")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".cu"))
        .collect();
    names.sort();
    let mut checked = 0;
    for name in names {
        let cu = format!("tests/kernels/{name}");
        let text = std::fs::read_to_string(root.join(&cu)).expect("read");
        if !text.contains("#include \"cudasem_cuda.h\"") {
            continue;
        }
        let stem = name.trim_end_matches(".cu");
        let ron = format!("tests/kernels/{stem}.ron");
        let ptx = format!("tests/kernels/{stem}.ptx");
        let (code_cu, out_cu, err_cu) = cudasem_here(&["run", &cu, "--launch", &ron]);
        let (code_ptx, out_ptx, err_ptx) = cudasem_here(&["run", &ptx, "--launch", &ron]);
        assert_eq!(code_cu, code_ptx, "{cu}: {err_cu}\n{ptx}: {err_ptx}");
        assert_eq!(out_cu, out_ptx, "{cu} and {ptx} disagree");
        checked += 1;
    }
    assert!(
        checked >= 20,
        "only {checked} corpus kernels use the shipped header"
    );
}
