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
