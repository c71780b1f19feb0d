//! Launch files generated from kernel signatures: plans, names, shapes and the text.
use super::*;

#[test]
fn a_struct_parameter_gets_zero_bytes_of_its_size() {
    let ptx = ".version 7.0\n.target sm_70\n.address_size 64\n\
               .visible .entry k(.param .align 8 .b8 s[24], .param .u32 n)\n{\n\tret;\n}\n";
    let parsed = ptx_parser::parse(ptx);
    let program = semantics::load(&parsed.module, ptx).expect("loads").0;
    let text = generate(&program, None, &Hint::default(), "k.ptx", None).unwrap();
    let zeros = vec!["0"; 24].join(", ");
    assert!(
        text.contains(&format!(
            "Bytes([{zeros}]), // parameter 0 (.b8 s[24]: passed by value"
        )),
        "{text}"
    );
    assert!(text.contains("Scalar(type: \"u32\""), "{text}");
}

fn load(text: &str) -> Program {
    let parsed = ptx_parser::parse(text);
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    semantics::load(&parsed.module, text).expect("loads").0
}

/// `y[i] = a * x[i] + (float)k` for `i < n`: x read through `ld.global.nc.v2`, y written,
/// `k` a 64-bit number that is never an address.
const AXPY: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry axpy(.param .u64 axpy_param_0, .param .u64 y, .param .f32 a, .param .u64 k,
                 .param .u32 n)
{
.reg .pred %p<2>;
.reg .b32 %r<6>;
.reg .f32 %f<6>;
.reg .b64 %rd<12>;
ld.param.u64 %rd1, [axpy_param_0];
ld.param.u64 %rd2, [y];
ld.param.f32 %f1, [a];
ld.param.u64 %rd3, [k];
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
mov.u32 %r3, %ctaid.x;
mov.u32 %r4, %ntid.x;
mad.lo.s32 %r5, %r3, %r4, %r2;
setp.ge.s32 %p1, %r5, %r1;
@%p1 bra DONE;
cvta.to.global.u64 %rd4, %rd1;
mov.u64 %rd10, %rd2;
cvta.to.global.u64 %rd5, %rd10;
mul.wide.s32 %rd6, %r5, 8;
add.s64 %rd7, %rd4, %rd6;
ld.global.nc.v2.f32 {%f2, %f3}, [%rd7];
add.s64 %rd8, %rd3, 1;
cvt.rn.f32.u64 %f4, %rd8;
fma.rn.f32 %f5, %f1, %f2, %f4;
mul.wide.s32 %rd9, %r5, 4;
add.s64 %rd11, %rd5, %rd9;
st.global.f32 [%rd11], %f5;
DONE:
ret;
}
"#;

#[test]
fn pointers_scalars_and_sizes_from_the_ptx() {
    let program = load(AXPY);
    let hint = Hint {
        threads: 100,
        block_x: None,
    };
    let f = select_kernel(&program, None).unwrap();
    let plans = plan(&program, f, &hint, None);
    assert_eq!(
        plans,
        vec![
            // Unnamed (clang's `<kernel>_param_0`): `arg0`; read as v2.f32: 8 bytes a thread.
            ParamPlan::Buffer {
                name: "arg0".into(),
                elem: "f32",
                len: 200,
                written: false
            },
            ParamPlan::Buffer {
                name: "y".into(),
                elem: "f32",
                len: 100,
                written: true
            },
            ParamPlan::Scalar {
                elem: "f32",
                value: "1.0".into()
            },
            ParamPlan::Scalar {
                elem: "u64",
                value: "100".into()
            },
            ParamPlan::Scalar {
                elem: "u32",
                value: "100".into()
            },
        ]
    );
    let text = generate(&program, None, &hint, "axpy.ptx", None).unwrap();
    assert!(
        text.contains("    grid: (2, 1, 1),\n    block: (64, 1, 1),\n"),
        "{text}"
    );
    assert!(text.contains("\"arg0\": (type: \"f32\", len: 200, init: Range(start: 0.0, step: 1.0)), // parameter 0 (.u64 axpy_param_0)"), "{text}");
    assert!(text.contains("    print: [\"y\"],\n"), "{text}");
    assert!(!text.contains("shared:"), "{text}");
}

#[test]
fn a_2d_kernel_gets_a_square_and_dynamic_shared_memory_its_room() {
    let text = r#"
.version 7.0
.target sm_70
.address_size 64
.extern .shared .align 4 .b8 dyn[];
.visible .entry img(.param .u64 out, .param .u32 width)
{
.reg .b32 %r<8>;
.reg .b64 %rd<5>;
ld.param.u64 %rd1, [out];
ld.param.u32 %r1, [width];
mov.u32 %r2, %tid.x;
mov.u32 %r3, %tid.y;
mad.lo.s32 %r4, %r3, %r1, %r2;
mul.wide.u32 %rd2, %r4, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r4;
ret;
}
"#;
    let program = load(text);
    let launch = generate(&program, Some("img"), &Hint::default(), "img.ptx", None).unwrap();
    // 256 threads: a 16 x 16 square in 8 x 8 blocks; `width` is the side.
    assert!(
        launch.contains("grid: (2, 2, 1),\n    block: (8, 8, 1),\n"),
        "{launch}"
    );
    assert!(launch.contains("shared: 512,"), "{launch}");
    assert!(
        launch.contains("\"out\": (type: \"u32\", len: 256),"),
        "{launch}"
    );
    assert!(
        launch.contains("Scalar(type: \"u32\", value: 16)"),
        "{launch}"
    );
}

/// A C++ kernel: types from the mangled name, names from the source at the kernel's line.
const SCALE: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry _Z5scalePdPKdi(.param .u64 _Z5scalePdPKdi_param_0,
.param .u64 _Z5scalePdPKdi_param_1, .param .u32 _Z5scalePdPKdi_param_2)
{
.reg .b32 %r<2>;
.reg .b64 %rd<3>;
.loc 1 3 0
ld.param.u64 %rd1, [_Z5scalePdPKdi_param_0];
.loc 1 4 5
ld.param.u32 %r1, [_Z5scalePdPKdi_param_2];
ret;
}
.visible .entry other()
{
ret;
}
.file 1 "scale.cu"
"#;

#[test]
fn cpp_kernels_take_types_from_their_names_and_names_from_their_source() {
    let program = load(SCALE);
    let source = "// scale\n\n__global__ void scale(double *out,\n    const double *__restrict__ in, int n) {\n}\n";
    let launch = generate(
        &program,
        Some("scale"),
        &Hint {
            threads: 32,
            block_x: Some(32),
        },
        "scale.cu.ptx",
        Some(CudaSource {
            name: "scale.cu",
            text: source,
        }),
    )
    .unwrap();
    // Neither pointer is dereferenced in this PTX: the C++ types say they are pointers.
    assert!(
        launch.contains("\"out\": (type: \"f64\", len: 32), // parameter 0: double* out"),
        "{launch}"
    );
    assert!(launch.contains("\"in\": (type: \"f64\", len: 32, init: Range(start: 0.0, step: 1.0)), // parameter 1: double const* in"), "{launch}");
    assert!(
        launch.contains("Scalar(type: \"s32\", value: 32), // parameter 2: int n"),
        "{launch}"
    );
    assert!(
        launch.contains("kernel `scale(double*, double const*, int)` of scale.cu"),
        "{launch}"
    );

    // Several kernels: one must be named; an unknown name lists them, demangled.
    let e = select_kernel(&program, None).unwrap_err();
    assert!(e.message.contains("several kernels"), "{e}");
    let e = select_kernel(&program, Some("nope")).unwrap_err();
    assert_eq!(
        e.help.as_deref(),
        Some("its kernels are: scale(double*, double const*, int) [_Z5scalePdPKdi], other")
    );
}

#[test]
fn trial_repairs_grow_buffers_and_halve_scalars_and_blocks() {
    let program = load(AXPY);
    let mut p = plan_launch(&program, None, &Hint::default(), "axpy.ptx", None).unwrap();
    assert!(p.grow_buffer("y"));
    assert!(!p.grow_buffer("nope"));
    assert!(p.render().contains("\"y\": (type: \"f32\", len: 512)"));
    assert!(p.halve_scalars());
    assert!(p.render().contains("Scalar(type: \"u32\", value: 128)"));
    // Float scalars stay.
    assert!(p.render().contains("Scalar(type: \"f32\", value: 1.0)"));
    assert!(p.halve_block());
    assert!(
        p.render()
            .contains("grid: (8, 1, 1),\n    block: (32, 1, 1),")
    );
}

/// A kernel that calls an inlined `__device__` function defined above it: the line tables
/// start in that function, and its parameters are not the kernel's.
const INLINED: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry _Z10max_kernelPKfPfi(.param .u64 _Z10max_kernelPKfPfi_param_0,
.param .u64 _Z10max_kernelPKfPfi_param_1, .param .u32 _Z10max_kernelPKfPfi_param_2)
{
.reg .b32 %r<2>;
.reg .b64 %rd<3>;
.loc 1 10 0
ld.param.u64 %rd1, [_Z10max_kernelPKfPfi_param_0];
.loc 1 3 5
ld.param.u64 %rd2, [_Z10max_kernelPKfPfi_param_1];
.loc 1 11 5
ld.param.u32 %r1, [_Z10max_kernelPKfPfi_param_2];
ret;
}
.file 1 "max.cu"
"#;

#[test]
fn parameter_names_come_from_the_global_declaration_not_an_inlined_function() {
    let program = load(INLINED);
    let source = "__device__ float atomicMaxFloat(float *addr, float value,\n\
                  \x20                              int unused) {\n\
                  \x20   return 0;\n\
                  }\n\
                  // max_kernel(x, result, n) below\n\
                  __device__ void max_kernel(int a, int b, int c) {}\n\
                  \n\
                  \n\
                  __global__ void max_kernel(const float *x, float *result,\n\
                  \x20                          int n) {\n\
                  \x20   atomicMaxFloat(result, x[0], n);\n\
                  }\n";
    let f = &program.functions[0];
    assert_eq!(
        cpp_parameter_names(&program, f, source),
        Some(vec!["x".to_string(), "result".to_string(), "n".to_string()])
    );
    // Without a `__global__` declaration, the last `NAME(` with as many parameters.
    let plain = source.replace("__global__", "");
    assert_eq!(
        cpp_parameter_names(&program, f, &plain),
        Some(vec!["x".to_string(), "result".to_string(), "n".to_string()])
    );
}

/// An instance of a kernel template: the names are those of the template's declaration.
const TEMPLATE: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry _Z5applyIfEvPKT_S2_PS0_i(.param .u64 _Z5applyIfEvPKT_S2_PS0_i_param_0,
.param .u64 _Z5applyIfEvPKT_S2_PS0_i_param_1, .param .u64 _Z5applyIfEvPKT_S2_PS0_i_param_2,
.param .u32 _Z5applyIfEvPKT_S2_PS0_i_param_3)
{
.reg .b32 %r<2>;
.loc 1 6 0
ld.param.u32 %r1, [_Z5applyIfEvPKT_S2_PS0_i_param_3];
ret;
}
.file 1 "apply.cu"
"#;

#[test]
fn a_template_instance_takes_the_names_of_the_template() {
    let program = load(TEMPLATE);
    let source = "template <typename T> __device__ T twice(T v) { return 2 * v; }\n\
                  template <typename T>\n\
                  __global__ void apply(const T *x, const T *y, T *out, int n) {\n\
                  \x20   int i = threadIdx.x;\n\
                  \x20   if (i < n)\n\
                  \x20       out[i] = twice(x[i]) + y[i];\n\
                  }\n\
                  template __global__ void apply<float>(const float *, const float *, float *, int);\n";
    let f = &program.functions[0];
    assert_eq!(
        cpp_parameter_names(&program, f, source),
        Some(["x", "y", "out", "n"].map(String::from).to_vec())
    );
}
