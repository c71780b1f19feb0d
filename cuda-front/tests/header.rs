//! The shipped CUDA header on what a newcomer writes first: the standard library's headers
//! (`<algorithm>` brings clang's device `operator new`, which needs `malloc`),
//! `assert`, `printf`, `clock64`, `half`, vector types, the fast intrinsics; and a clear error for the math
//! functions that need libdevice. Needs clang: without it each test says so and passes.

use cuda_front::{CompileError, compile};
use std::path::{Path, PathBuf};
use std::process::Command;

/// clang on PATH, or `None` (the test is skipped with a message).
fn clang() -> Option<PathBuf> {
    let found = Command::new("clang")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: clang is not installed (apt-get install -y clang)");
    }
    found.then(|| PathBuf::from("clang"))
}

/// Writes `source` to a temporary `name` and compiles it.
fn compile_text(clang: &Path, name: &str, source: &str) -> Result<String, CompileError> {
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join(name);
    std::fs::write(&path, source).expect("write the .cu file");
    compile(clang, &path).map(|c| c.ptx)
}

/// Loads PTX as every cudasem command does.
fn loads(ptx: &str) {
    let parsed = ptx_parser::parse(ptx);
    assert!(!parsed.has_errors(), "{:?}\n{ptx}", parsed.diagnostics);
    if let Err(e) = semantics::load(&parsed.module, ptx) {
        panic!("{e:?}\n{ptx}");
    }
}

#[test]
fn a_kernel_with_the_usual_includes_assert_printf_clock_and_half_compiles_and_loads() {
    let Some(clang) = clang() else { return };
    let source = r#"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cassert>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

__global__ void step(float3 *pos, const float3 *vel, uchar4 *color, double4 *d, float dt) {
    int i = threadIdx.x;
    float3 p = pos[i], v = vel[i];
    pos[i] = make_float3(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt);
    color[i] = make_uchar4(i & 255, 0, 255, 128);
    d[i] = make_double4(p.x, p.y, p.z, 1.0);
}

__global__ void usual(const float *x, float *y, half *h, long long *t, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long start = clock64();
    assert(n > 0);
    if (i < n) {
        float v = x[i];
        y[i] = min(v, 2.0f) + max(abs(i - 3), 1) + std::max(v, 0.5f) + floorf(v) + __expf(v) + __sinf(v);
        h[i] = __hfma(half(1.5f), h[i], half(v));
        if (v > 1e30f)
            __trap();
        printf("thread %d: %f\n", i, v);
    }
    t[i] = clock64() - start;
}
"#;
    let ptx = compile_text(&clang, "usual.cu", source).unwrap_or_else(|e| panic!("{e}"));
    for needle in [
        "trap;",
        "vprintf",
        "%clock64",
        "fma.rn.f16",
        "ex2.approx",
        "sin.approx",
    ] {
        assert!(ptx.contains(needle), "no `{needle}` in\n{ptx}");
    }
    loads(&ptx);
}

#[test]
fn a_libdevice_math_function_is_an_error_naming_the_fast_intrinsic() {
    let Some(clang) = clang() else { return };
    let source = "#include <math.h>\n\
                  __global__ void k(float *x) {\n\
                  \x20   x[0] = expf(x[1]) + sinf(x[2]);\n\
                  }\n";
    let e = compile_text(&clang, "math.cu", source).unwrap_err();
    let text = e.to_string();
    for needle in [
        "math.cu:3:12: error: 'expf' is unavailable",
        "libdevice",
        "use the fast intrinsic __expf",
        "'sinf' is unavailable",
        "__sinf",
    ] {
        assert!(text.contains(needle), "no `{needle}` in\n{text}");
    }
}

/// The instruction lines (no comments, labels or directives) of kernel `name` in `ptx`.
fn body<'a>(ptx: &'a str, name: &str) -> Vec<&'a str> {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no kernel `{name}` in\n{ptx}"));
    let rest = &ptx[start..];
    let end = rest.find("\n}").unwrap_or(rest.len());
    rest[..end]
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('.'))
        .collect()
}

/// `__syncthreads()` and its forms, `__syncwarp()` and cooperative groups' `sync()` are memory
/// barriers for the compiler, as nvcc treats them (CUDA C++ Programming Guide, "Synchronization
/// Functions"): a `__shared__` value thread 0 writes before the barrier is loaded after it by
/// every thread. clang's barrier builtins alone let -O2 hoist the load above `bar.sync` on the
/// path of the other threads (the variable never escapes, so alias analysis proves the builtin
/// cannot touch it). Each barrier is still one instruction.
#[test]
fn shared_loads_stay_after_every_kind_of_barrier() {
    let Some(clang) = clang() else { return };
    let source = r#"
#include <cooperative_groups.h>
struct pair { int a; float b; };
extern "C" __global__ void scalar(int *out, const int *in) {
    __shared__ int s;
    if (threadIdx.x == 0) s = in[blockIdx.x];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s + 1;
}
extern "C" __global__ void array(int *out, const int *in) {
    __shared__ int s[4];
    if (threadIdx.x < 4) s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x & 3] + s[0];
}
extern "C" __global__ void record(int *out, const int *in) {
    __shared__ pair p;
    if (threadIdx.x == 0) { p.a = in[0]; p.b = 2.0f; }
    __syncthreads();
    out[threadIdx.x] = p.a + (int)p.b;
}
extern "C" __global__ void reduce_or(int *out, const int *in) {
    __shared__ int s;
    if (threadIdx.x == 0) s = in[0];
    int any = __syncthreads_or(in[threadIdx.x] > 0);
    out[threadIdx.x] = s + any;
}
extern "C" __global__ void count(int *out, const int *in) {
    __shared__ int s;
    if (threadIdx.x == 0) s = in[0];
    int n = __syncthreads_count(in[threadIdx.x] > 0);
    out[threadIdx.x] = s + n;
}
extern "C" __global__ void block_group(int *out, const int *in) {
    __shared__ int s;
    if (threadIdx.x == 0) s = in[0];
    cooperative_groups::this_thread_block().sync();
    out[threadIdx.x] = s;
}
extern "C" __global__ void warp(int *out, const int *in) {
    __shared__ int s;
    if (threadIdx.x == 0) s = in[0];
    __syncwarp();
    out[threadIdx.x] = s;
}
"#;
    let ptx = compile_text(&clang, "barriers.cu", source).unwrap_or_else(|e| panic!("{e}"));
    for (kernel, barrier) in [
        ("scalar", "bar.sync 0;"),
        ("array", "bar.sync 0;"),
        ("record", "bar.sync 0;"),
        ("reduce_or", "bar.red.or.pred"),
        ("count", "bar.red.popc.u32"),
        ("block_group", "bar.sync 0;"),
        ("warp", "bar.warp.sync"),
    ] {
        let lines = body(&ptx, kernel);
        let normal: Vec<String> = lines
            .iter()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        let barriers: Vec<usize> = (0..normal.len())
            .filter(|&i| normal[i].starts_with(barrier))
            .collect();
        assert_eq!(
            barriers.len(),
            1,
            "{kernel}: one `{barrier}` in\n{}",
            lines.join("\n")
        );
        let first_load = normal.iter().position(|l| l.starts_with("ld.shared"));
        assert!(
            first_load.is_some_and(|l| l > barriers[0]),
            "{kernel}: a shared load before `{barrier}` in\n{}",
            lines.join("\n")
        );
    }
    loads(&ptx);
}

/// `__hmin`/`__hmax` at cudasem's sm_70: `min.f16`/`max.f16` need sm_80 (PTX ISA, half
/// precision `min`/`max`), and `ptxas` refuses a kernel that uses them below it; the header
/// takes the float minimum there, and the result is the same (every half is a float).
#[test]
fn half_min_and_max_use_no_sm80_instruction_at_sm70() {
    let Some(clang) = clang() else { return };
    let source = r#"#include "cudasem_cuda.h"
extern "C" __global__ void k(const half *x, half *lo, half *hi) {
    lo[0] = __hmin(x[0], x[1]);
    hi[0] = __hmax(x[0], x[1]);
}
"#;
    let ptx = compile_text(&clang, "minmax.cu", source).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !ptx.contains("min.f16") && !ptx.contains("max.f16"),
        "{ptx}"
    );
    assert!(ptx.contains("min.f32") && ptx.contains("max.f32"), "{ptx}");
    loads(&ptx);
}
