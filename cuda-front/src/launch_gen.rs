//! A launch file written from a kernel's signature (`cudasem launch`): every parameter gets an
//! argument, pointers a buffer, so that a kernel runs without a hand-written launch.
//!
//! What each parameter is:
//! - its C++ type when the kernel's name is mangled (`_Z6reducePKfPfi`: `float const*`, ...);
//! - otherwise (an `extern "C"` kernel, hand-written PTX) from the PTX: a 64-bit parameter whose
//!   value reaches the address of a `ld`/`st`/`atom` (through `mov`, `cvta`, `cvt`, `add`, `sub`,
//!   `mad`) or a `cvta.to.global` is a pointer, its element the type of the widest such access;
//!   any other parameter is a scalar of its PTX type.
//!
//! The sizes follow one hint, the number of threads `N`: a kernel that reads only `%tid.x`,
//! `%ctaid.x`... is launched as `N` threads in blocks of 64, a kernel that reads the `.y`
//! registers as a square of side `S = ceil(sqrt(N))` in 8x8 blocks (`.z`: a cube in 4x4x4
//! blocks). Buffers hold `N` elements (`S^2`, `S^3`) of the widest access; integer scalars are
//! the side (`N` for 1D: the usual bound `n`; `S` for 2D: a width or a matrix size), float
//! scalars 1.0. Buffers the kernel only reads count up from 0 (indices stay in bounds); the
//! others start zeroed and are printed.
//!
//! C++ parameter names, when the `.cu` source and the kernel's line (from the line tables) are
//! given, name the buffers and the comments.

use crate::demangle::{self, split_top_level};
use ptx_parser::ScalarType;
use semantics::Program;
use semantics::program::instr::{AddrBase, BinaryOp, Op, ParamLoc, Space, Src, TernaryOp};
use semantics::program::{Function, FunctionKind};
use std::fmt::Write as _;

/// The hint and the optional overrides `cudasem launch` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hint {
    /// Threads to launch in all (and elements per buffer).
    pub threads: u64,
    /// Threads per block in x (default 64 in 1D, 8 in 2D, 4 in 3D).
    pub block_x: Option<u32>,
}

impl Default for Hint {
    fn default() -> Self {
        Hint {
            threads: 256,
            block_x: None,
        }
    }
}

/// Why no launch could be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenError {
    pub message: String,
    pub help: Option<String>,
}

impl std::fmt::Display for GenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "error: {}", self.message)?;
        if let Some(h) = &self.help {
            writeln!(f, "  = help: {h}")?;
        }
        Ok(())
    }
}

/// The source the PTX came from, when it is a `.cu` file: its name and text (for the C++
/// parameter names).
#[derive(Debug, Clone, Copy)]
pub struct CudaSource<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

/// What an argument will be.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamPlan {
    Buffer {
        name: String,
        elem: &'static str,
        len: u64,
        /// Stored to or atomically updated by the kernel.
        written: bool,
    },
    Scalar {
        elem: &'static str,
        value: String,
    },
    /// A struct or array passed by value (`.param .align A .b8 p[N]`): N zero bytes, for the
    /// user to fill in (its fields are not in the PTX).
    Bytes {
        len: u32,
    },
    /// A scalar the C++ type names but PTX passes as bytes (`__half a` is `.b8 p[2]`): a
    /// one-field `Struct`.
    ScalarBytes {
        elem: &'static str,
        value: String,
    },
}

/// The kernel to launch: the one named (PTX name or demangled short name), or the only one.
pub fn select_kernel<'p>(
    program: &'p Program,
    name: Option<&str>,
) -> Result<&'p Function, GenError> {
    let entries: Vec<&Function> = program
        .functions
        .iter()
        .filter(|f| f.kind == FunctionKind::Entry)
        .collect();
    let list = || {
        entries
            .iter()
            .map(|f| demangle::with_ptx_name(&f.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match name {
        Some(n) => {
            if let Some(f) = entries.iter().find(|f| f.name == n) {
                return Ok(f);
            }
            let matching: Vec<&&Function> = entries
                .iter()
                .filter(|f| demangle::short_name(&f.name) == n)
                .collect();
            match matching.as_slice() {
                [one] => Ok(one),
                [] => Err(GenError {
                    message: format!("the module has no kernel named `{n}`"),
                    help: Some(format!("its kernels are: {}", list())),
                }),
                _ => Err(GenError {
                    message: format!("several kernels are named `{n}` (overloads)"),
                    help: Some(format!("give the PTX name: {}", list())),
                }),
            }
        }
        None => match entries.as_slice() {
            [one] => Ok(one),
            [] => Err(GenError {
                message: "the module has no kernel (.entry)".to_string(),
                help: Some(
                    "a kernel is a `__global__` function in CUDA (an `.entry` in PTX); \
                     `__device__` functions are called by kernels, not launched"
                        .to_string(),
                ),
            }),
            _ => Err(GenError {
                message: "the module has several kernels: say which one with --kernel NAME"
                    .to_string(),
                help: Some(format!("its kernels are: {}", list())),
            }),
        },
    }
}

/// How a pointer parameter is used: the widest access through it, and whether it is written.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct PointerUse {
    /// Element type and bytes per access (`ld.v4.u32`: u32, 16).
    widest: Option<(ScalarType, u32)>,
    written: bool,
    /// Converted to a global address (`cvta.to.global`): a pointer even if not dereferenced here.
    global: bool,
}

/// Which kernel parameter (by index) each register's value derives from, then the accesses
/// through those registers. Flow-insensitive: good enough to tell a pointer from a number.
fn pointer_uses(program: &Program, f: &Function) -> Vec<PointerUse> {
    let mut uses = vec![PointerUse::default(); f.params.len()];
    let param_at = |offset: i64| {
        f.params.iter().position(|p| match p.loc {
            ParamLoc::Frame { offset: o, size } => {
                offset >= i64::from(o) && offset < i64::from(o) + i64::from(size)
            }
            _ => false,
        })
    };
    let body = &program.instructions[f.start as usize..f.end as usize];
    let mut origin: Vec<Option<usize>> = vec![None; f.registers.len()];
    let from = |origin: &[Option<usize>], s: &Src| match s {
        Src::Reg(r) => origin.get(r.0 as usize).copied().flatten(),
        _ => None,
    };
    // Each pass can only add origins; a chain of n moves needs n passes.
    for _ in 0..16 {
        let mut changed = false;
        for instr in body {
            let (dst, derived) = match &instr.op {
                Op::Ld {
                    space: Space::Param,
                    addr,
                    dst,
                    ..
                } if addr.base == AddrBase::Absolute => (dst[0], param_at(addr.offset)),
                Op::Unary {
                    op: semantics::program::instr::UnaryOp::Mov,
                    dst,
                    a,
                    ..
                }
                | Op::Cvta { dst, a, .. }
                | Op::Cvt { dst, a, .. } => (Some(*dst), from(&origin, a)),
                Op::Binary {
                    op: BinaryOp::Add | BinaryOp::Sub,
                    dst,
                    a,
                    b,
                    ..
                } => (Some(*dst), from(&origin, a).or(from(&origin, b))),
                Op::Ternary {
                    op: TernaryOp::Mad | TernaryOp::MadWide,
                    dst,
                    c,
                    ..
                } => (Some(*dst), from(&origin, c)),
                _ => (None, None),
            };
            if let (Some(d), Some(p)) = (dst, derived) {
                let slot = &mut origin[d.0 as usize];
                if slot.is_none() {
                    *slot = Some(p);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let through = |base: &AddrBase| match base {
        AddrBase::Reg(r) => origin.get(r.0 as usize).copied().flatten(),
        _ => None,
    };
    for instr in body {
        let (base, ty, vector, writes) = match &instr.op {
            Op::Ld {
                space: Space::Global | Space::Generic,
                ty,
                vector,
                addr,
                ..
            } => (&addr.base, *ty, *vector, false),
            Op::St {
                space: Space::Global | Space::Generic,
                ty,
                vector,
                addr,
                ..
            } => (&addr.base, *ty, *vector, true),
            Op::Atom {
                space: Space::Global | Space::Generic,
                ty,
                addr,
                ..
            } => (
                &addr.base,
                semantics::program::atom_scalar_type(*ty),
                1,
                true,
            ),
            Op::Cvta {
                to_generic: false,
                space: Space::Global,
                a,
                ..
            } => {
                if let Some(p) = from(&origin, a) {
                    uses[p].global = true;
                }
                continue;
            }
            _ => continue,
        };
        let Some(p) = through(base) else { continue };
        let bytes = scalar_bytes(ty) * u32::from(vector.max(1));
        let u = &mut uses[p];
        u.written |= writes;
        if u.widest.is_none_or(|(_, b)| bytes > b) {
            u.widest = Some((ty, bytes));
        }
    }
    uses
}

fn scalar_bytes(ty: ScalarType) -> u32 {
    use ScalarType::*;
    match ty {
        S8 | U8 | B8 | Pred => 1,
        S16 | U16 | B16 | F16 | Bf16 => 2,
        S32 | U32 | B32 | F32 | F16x2 | Bf16x2 | Tf32 => 4,
        S64 | U64 | B64 | F64 => 8,
        B128 => 16,
        TexRef | SamplerRef | SurfRef => 8,
    }
}

/// The launch file's element name for a PTX type (bit types print as unsigned).
fn elem_of_ptx(ty: ScalarType) -> &'static str {
    use ScalarType::*;
    match ty {
        S8 => "s8",
        S16 => "s16",
        S32 => "s32",
        S64 => "s64",
        U8 | B8 | Pred => "u8",
        U16 | B16 => "u16",
        U32 | B32 | Tf32 => "u32",
        U64 | B64 | B128 | TexRef | SamplerRef | SurfRef => "u64",
        F16 => "f16",
        Bf16 => "u16",
        F32 => "f32",
        F16x2 | Bf16x2 => "u32",
        F64 => "f64",
    }
}

fn elem_bytes(elem: &str) -> u64 {
    match elem {
        "u8" | "s8" | "b8" => 1,
        "u16" | "s16" | "b16" | "f16" => 2,
        "u64" | "s64" | "b64" | "f64" => 8,
        _ => 4,
    }
}

/// A C++ type as the demangler writes it (`float const*`, `unsigned int`): the element type and
/// whether it is a pointer. `None` for types the launch format cannot hold (structs...).
fn cpp_type(text: &str) -> Option<(&'static str, bool)> {
    let pointer = text.trim_end().ends_with('*');
    let base: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == '*' || c == '&')
        .filter(|w| !w.is_empty() && !matches!(*w, "const" | "volatile" | "__restrict"))
        .collect();
    let elem = match base.join(" ").as_str() {
        "bool" | "unsigned char" | "char8_t" => "u8",
        "char" | "signed char" => "s8",
        "short" => "s16",
        "unsigned short" => "u16",
        "int" => "s32",
        "unsigned int" => "u32",
        "long" | "long long" => "s64",
        "unsigned long" | "unsigned long long" => "u64",
        "float" => "f32",
        "double" => "f64",
        "__fp16" | "half" | "__half" | "_Float16" => "f16",
        _ => return None,
    };
    Some((elem, pointer))
}

/// The launch's shape: how many dimensions the kernel indexes, the block, the grid, and the
/// side that integer scalars get.
struct Shape {
    block: [u32; 3],
    grid: [u32; 3],
    side: u64,
    /// Elements per buffer.
    elements: u64,
}

fn shape(program: &Program, f: &Function, hint: &Hint) -> Shape {
    use semantics::program::instr::{Dim, SpecialReg};
    // The highest dimension read of the grid (%ctaid, %nctaid) and of the block (%tid, %ntid).
    let (mut grid_dims, mut block_dims) = (0, 0);
    for instr in &program.instructions[f.start as usize..f.end as usize] {
        let mut see = |s: &Src| {
            let (dims, d) = match s {
                Src::Special(SpecialReg::Ctaid(d) | SpecialReg::Nctaid(d)) => (&mut grid_dims, d),
                Src::Special(SpecialReg::Tid(d) | SpecialReg::Ntid(d)) => (&mut block_dims, d),
                _ => return,
            };
            *dims = (*dims).max(match d {
                Dim::X => 1,
                Dim::Y => 2,
                Dim::Z => 3,
            });
        };
        match &instr.op {
            Op::Unary { a, .. } | Op::Cvt { a, .. } => see(a),
            Op::Binary { a, b, .. } => {
                see(a);
                see(b);
            }
            Op::Ternary { a, b, c, .. } => {
                see(a);
                see(b);
                see(c);
            }
            _ => {}
        }
    }
    // A kernel that indexes its blocks decides: one that reads `%tid.z` only to rank its
    // threads (cooperative groups' `thread_rank()`) but `%ctaid.x` alone is one-dimensional,
    // and a 3D launch would have several blocks with the same `blockIdx.x`. Without block
    // indices (a one-block kernel), the thread indices decide.
    let dims = if grid_dims > 0 { grid_dims } else { block_dims }.max(1) as usize;
    let threads = hint.threads.max(1);
    let side = match dims {
        1 => threads,
        2 => (threads as f64).sqrt().ceil() as u64,
        _ => (threads as f64).cbrt().ceil() as u64,
    }
    .max(1);
    let default_block = match dims {
        1 => 64,
        2 => 8,
        _ => 4,
    };
    let b = u64::from(hint.block_x.unwrap_or(default_block).max(1)).min(side) as u32;
    let mut block = [1u32; 3];
    let mut grid = [1u32; 3];
    for d in 0..dims {
        block[d] = b;
        grid[d] = side.div_ceil(u64::from(b)) as u32;
    }
    // A kernel that requires its block shape gets it.
    if let Some(req) = f.reqntid {
        block = req;
    }
    Shape {
        block,
        grid,
        side,
        elements: side.pow(dims as u32),
    }
}

/// The C++ parameter names of kernel `f` in `source`.
///
/// The kernel is a `NAME(` in the source whose declaration says `__global__` (any `NAME(` when
/// none does) with as many parameters as the PTX entry. When several fit (overloads, template
/// instances written out), the line tables choose: the last one at or before the kernel's last
/// line. Its first line would not do: functions inlined into the kernel bring their own lines,
/// usually above it.
pub fn cpp_parameter_names(program: &Program, f: &Function, source: &str) -> Option<Vec<String>> {
    let main = main_file(program)?;
    let last_line = program.source[f.start as usize..f.end as usize]
        .iter()
        .filter_map(|s| s.loc)
        .filter(|&(file, line, _)| file == main && line > 0)
        .map(|(_, line, _)| line)
        .max()?;
    // `ns::apply<float>` is declared as `apply(`: no namespace, no template arguments.
    let name = demangle::short_name(&f.name);
    let name = name.split('<').next().unwrap_or(&name);
    let name = name.rsplit("::").next().unwrap_or(name);
    // Byte offset of the end of the kernel's last line.
    let limit: usize = source
        .split_inclusive('\n')
        .take(last_line as usize)
        .map(str::len)
        .sum();
    let head = &source[..limit.min(source.len())];
    // (is declared `__global__`, parameter names) for each `NAME(` up to the limit.
    let mut candidates: Vec<(bool, Vec<String>)> = Vec::new();
    let mut search = 0;
    while let Some(i) = head[search..].find(name) {
        let start = search + i;
        search = start + name.len();
        let after = &source[start + name.len()..];
        let before_ok = start == 0
            || !head[..start]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if !before_ok || !after.trim_start().starts_with('(') {
            continue;
        }
        // The declaration's text before the name: back to the end of the previous statement,
        // block or preprocessor line.
        let decl_start = head[..start]
            .rfind([';', '{', '}', '#'])
            .map_or(0, |j| j + 1);
        let global = head[decl_start..start].contains("__global__");
        if let Some(names) = parameter_list_names(after)
            && names.len() == f.params.len()
            && names.iter().all(|n| !n.is_empty())
        {
            candidates.push((global, names));
        }
    }
    let any_global = candidates.iter().any(|(g, _)| *g);
    candidates
        .into_iter()
        .rev()
        .find(|(g, _)| *g || !any_global)
        .map(|(_, names)| names)
}

/// The names in the parenthesised parameter list that `text` starts with (after blanks).
fn parameter_list_names(text: &str) -> Option<Vec<String>> {
    let open = text.find('(')?;
    let mut depth = 0;
    let mut close = None;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let list = &text[open + 1..close?];
    Some(
        split_top_level(list)
            .iter()
            .map(|p| {
                let p = p.split('=').next().unwrap_or("");
                let p = p.split('[').next().unwrap_or("");
                p.rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .find(|w| !w.is_empty())
                    .unwrap_or("")
                    .to_string()
            })
            .collect(),
    )
}

/// The `.file` index of the main source: the first `.file` (clang numbers the main file 1).
fn main_file(program: &Program) -> Option<u32> {
    program.files.keys().next().copied()
}

/// The plan for each parameter of `f` (in order).
pub fn plan(
    program: &Program,
    f: &Function,
    hint: &Hint,
    names: Option<&[String]>,
) -> Vec<ParamPlan> {
    let shape = shape(program, f, hint);
    let uses = pointer_uses(program, f);
    let cpp = demangle::parameter_types(&f.name).filter(|t| t.len() == f.params.len());
    let mut taken: Vec<String> = Vec::new();
    f.params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let cpp_t = cpp.as_ref().and_then(|t| cpp_type(&t[i]));
            let cpp_pointer = cpp.as_ref().is_some_and(|t| t[i].trim_end().ends_with('*'));
            let u = uses[i];
            if p.size != scalar_bytes(p.ty) {
                return match cpp_t {
                    Some((elem, false)) if elem_bytes(elem) == u64::from(p.size) => {
                        ParamPlan::ScalarBytes {
                            elem,
                            value: if elem.starts_with('f') { "1.0" } else { "1" }.to_string(),
                        }
                    }
                    _ => ParamPlan::Bytes { len: p.size },
                };
            }
            let pointer =
                p.size == 8 && (cpp_pointer || (cpp.is_none() && (u.widest.is_some() || u.global)));
            if pointer {
                let elem = match (cpp_t, u.widest) {
                    (Some((e, true)), _) => e,
                    (_, Some((ty, _))) => elem_of_ptx(ty),
                    _ => "u32",
                };
                let bytes_per_thread = u.widest.map_or(elem_bytes(elem), |(_, b)| {
                    u64::from(b).max(elem_bytes(elem))
                });
                let len = shape.elements * bytes_per_thread / elem_bytes(elem);
                let base = names
                    .map(|n| n[i].clone())
                    .or_else(|| readable_param_name(&f.name, &p.name))
                    .unwrap_or_else(|| format!("arg{i}"));
                let mut name = base.clone();
                let mut k = 2;
                while taken.contains(&name) {
                    name = format!("{base}_{k}");
                    k += 1;
                }
                taken.push(name.clone());
                ParamPlan::Buffer {
                    name,
                    elem,
                    len: len.max(1),
                    // Not accessed here (a callee uses it): a pointer to non-const may be written.
                    written: u.written
                        || (u.widest.is_none()
                            && cpp.as_ref().is_some_and(|t| !t[i].contains("const"))),
                }
            } else {
                let elem = match cpp_t {
                    Some((e, false)) if elem_bytes(e) == u64::from(p.size) => e,
                    _ => elem_of_ptx(p.ty),
                };
                let value = if elem.starts_with('f') {
                    "1.0".to_string()
                } else {
                    let max = if p.size >= 8 {
                        u64::MAX
                    } else {
                        (1u64 << (8 * p.size - u32::from(elem.starts_with('s')))) - 1
                    };
                    shape.side.min(max).to_string()
                };
                ParamPlan::Scalar { elem, value }
            }
        })
        .collect()
}

/// A PTX parameter name worth showing: not clang's or nvcc's `<kernel>_param_<n>`.
fn readable_param_name(kernel: &str, param: &str) -> Option<String> {
    let generated = param
        .strip_prefix(kernel)
        .and_then(|r| r.strip_prefix("_param_"))
        .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
    (!generated && !param.is_empty()).then(|| param.to_string())
}

/// A launch, before it is written out: what [`LaunchPlan::render`] prints, and what a trial run
/// may adjust ([`LaunchPlan::grow_buffer`], [`LaunchPlan::halve_scalars`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchPlan {
    /// The kernel's PTX name.
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory, when the kernel declares `extern __shared__` memory.
    pub shared: Option<u32>,
    pub params: Vec<ParamPlan>,
    /// One comment per parameter (its C++ type and name, its PTX declaration).
    pub comments: Vec<String>,
    /// The header comment's lines.
    pub notes: Vec<String>,
    /// The functions declared without a body that the program calls: the launch must say what
    /// they return (`extern_calls`); the plan says 0.
    pub externs: Vec<String>,
}

/// The launch plan for kernel `kernel` of `program` (`ptx_name` is the file it came from).
pub fn plan_launch(
    program: &Program,
    kernel: Option<&str>,
    hint: &Hint,
    ptx_name: &str,
    source: Option<CudaSource<'_>>,
) -> Result<LaunchPlan, GenError> {
    let f = select_kernel(program, kernel)?;
    let names = source.and_then(|s| cpp_parameter_names(program, f, s.text));
    let cpp_types = demangle::parameter_types(&f.name);
    let params = plan(program, f, hint, names.as_deref());
    let shape = shape(program, f, hint);
    let dynamic_shared = program
        .variables
        .iter()
        .any(|v| v.dynamic && v.space == Space::Shared);
    let comments = (0..f.params.len())
        .map(|i| param_comment(i, f, cpp_types.as_deref(), names.as_deref()))
        .collect();
    Ok(LaunchPlan {
        kernel: f.name.clone(),
        grid: shape.grid,
        block: shape.block,
        // 8 bytes per thread of a block: room for one `double` each.
        shared: dynamic_shared.then(|| shape.block.iter().product::<u32>().saturating_mul(8)),
        params,
        comments,
        externs: program
            .variables
            .iter()
            .filter_map(|v| v.name.strip_suffix(semantics::load::EXTERN_SLOT_SUFFIX))
            .map(str::to_string)
            .collect(),
        notes: vec![
            format!(
                "Launch of kernel `{}` of {}, written by `cudasem launch` from its signature",
                demangle::demangle(&f.name),
                source.map_or(ptx_name, |s| s.name)
            ),
            format!(
                "for {} threads: buffers of that many elements (0, 1, 2, ... when the kernel only \
                 reads them, else zeros), integer scalars {}, float scalars 1.0. Edit to taste.",
                shape.elements, shape.side
            ),
        ],
    })
}

impl LaunchPlan {
    /// Doubles buffer `name`'s length; false when there is no such buffer.
    pub fn grow_buffer(&mut self, name: &str) -> bool {
        for p in &mut self.params {
            if let ParamPlan::Buffer { name: n, len, .. } = p
                && n == name
            {
                *len = len.saturating_mul(2);
                return true;
            }
        }
        false
    }

    /// Halves every integer scalar above 1 (bounds, counts, sizes); false when none is left.
    pub fn halve_scalars(&mut self) -> bool {
        let mut any = false;
        for p in &mut self.params {
            if let ParamPlan::Scalar { elem, value } = p
                && !elem.starts_with('f')
                && let Ok(v) = value.parse::<u64>()
                && v > 1
            {
                *value = (v / 2).to_string();
                any = true;
            }
        }
        any
    }

    /// Halves the block in x and doubles the grid (the same threads in all: a kernel whose
    /// fixed shared arrays hold fewer elements than a block has threads); false at one thread.
    pub fn halve_block(&mut self) -> bool {
        if self.block[0] <= 1 {
            return false;
        }
        self.block[0] /= 2;
        self.grid[0] = self.grid[0].saturating_mul(2);
        if let Some(bytes) = &mut self.shared {
            *bytes /= 2;
        }
        true
    }

    /// The buffers' names.
    pub fn buffer_names(&self) -> Vec<&str> {
        self.params
            .iter()
            .filter_map(|p| match p {
                ParamPlan::Buffer { name, .. } => Some(name.as_str()),
                ParamPlan::Scalar { .. }
                | ParamPlan::Bytes { .. }
                | ParamPlan::ScalarBytes { .. } => None,
            })
            .collect()
    }

    /// The launch file (RON, the format of `tests/kernels/*.ron`).
    pub fn render(&self) -> String {
        let mut out = String::new();
        for n in &self.notes {
            let _ = writeln!(out, "// {n}");
        }
        out.push_str("(\n");
        let _ = writeln!(out, "    kernel: {:?},", self.kernel);
        let dim = |d: [u32; 3]| format!("({}, {}, {})", d[0], d[1], d[2]);
        let _ = writeln!(out, "    grid: {},", dim(self.grid));
        let _ = writeln!(out, "    block: {},", dim(self.block));
        if let Some(bytes) = self.shared {
            let _ = writeln!(
                out,
                "    // The kernel declares `extern __shared__` memory: 8 bytes per thread of a block."
            );
            let _ = writeln!(out, "    shared: {bytes},");
        }
        out.push_str("    buffers: {\n");
        for (plan, comment) in self.params.iter().zip(&self.comments) {
            if let ParamPlan::Buffer {
                name,
                elem,
                len,
                written,
            } = plan
            {
                let init = if *written {
                    String::new()
                } else if elem.starts_with('f') {
                    ", init: Range(start: 0.0, step: 1.0)".to_string()
                } else {
                    ", init: Range(start: 0, step: 1)".to_string()
                };
                let _ = writeln!(
                    out,
                    "        {name:?}: (type: {elem:?}, len: {len}{init}),{comment}"
                );
            }
        }
        out.push_str("    },\n    args: [\n");
        for (plan, comment) in self.params.iter().zip(&self.comments) {
            let arg = match plan {
                ParamPlan::Buffer { name, .. } => format!("Buffer({name:?})"),
                ParamPlan::Scalar { elem, value } => {
                    format!("Scalar(type: {elem:?}, value: {value})")
                }
                ParamPlan::Bytes { len } => {
                    let zeros = vec!["0"; *len as usize];
                    format!("Bytes([{}])", zeros.join(", "))
                }
                ParamPlan::ScalarBytes { elem, value } => {
                    format!("Struct([Scalar(type: {elem:?}, value: {value})])")
                }
            };
            let _ = writeln!(out, "        {arg},{comment}");
        }
        out.push_str("    ],\n");
        let buffers: Vec<(&String, bool)> = self
            .params
            .iter()
            .filter_map(|p| match p {
                ParamPlan::Buffer { name, written, .. } => Some((name, *written)),
                ParamPlan::Scalar { .. }
                | ParamPlan::Bytes { .. }
                | ParamPlan::ScalarBytes { .. } => None,
            })
            .collect();
        let any_written = buffers.iter().any(|(_, w)| *w);
        let printed: Vec<String> = buffers
            .iter()
            .filter(|(_, w)| *w || !any_written)
            .map(|(n, _)| format!("{n:?}"))
            .collect();
        if !self.externs.is_empty() {
            let _ = writeln!(
                out,
                "    // Functions declared without a body: what every call returns (PTX does not say)."
            );
            if self.externs.iter().any(|f| f == "vprintf") {
                // A user wrote `printf`, not `vprintf`: say where it went.
                let _ = writeln!(
                    out,
                    "    // `vprintf` is device printf: cudasem does not print its output (a call returns 0)."
                );
            }
            let calls: Vec<String> = self
                .externs
                .iter()
                .map(|f| format!("{f:?}: Value(0)"))
                .collect();
            let _ = writeln!(out, "    extern_calls: {{ {} }},", calls.join(", "));
        }
        let _ = writeln!(out, "    print: [{}],", printed.join(", "));
        out.push_str(")\n");
        out
    }
}

/// The launch file for kernel `kernel` of `program`, as planned ([`plan_launch`]), untried.
pub fn generate(
    program: &Program,
    kernel: Option<&str>,
    hint: &Hint,
    ptx_name: &str,
    source: Option<CudaSource<'_>>,
) -> Result<String, GenError> {
    plan_launch(program, kernel, hint, ptx_name, source).map(|p| p.render())
}

/// `  // parameter 2: int n (.u32 _Z..._param_2)`.
fn param_comment(
    i: usize,
    f: &Function,
    cpp: Option<&[String]>,
    names: Option<&[String]>,
) -> String {
    let p = &f.params[i];
    let cpp_text: Vec<&str> = [
        cpp.and_then(|t| t.get(i)).map(String::as_str),
        names.and_then(|n| n.get(i)).map(String::as_str),
    ]
    .into_iter()
    .flatten()
    .collect();
    let ptx = if p.size != scalar_bytes(p.ty) {
        format!(
            "(.{} {}[{}]: passed by value; give its fields as Struct([...]), see docs/run.md)",
            p.ty.directive().trim_start_matches('.'),
            p.name,
            p.size
        )
    } else {
        format!("(.{} {})", p.ty.directive().trim_start_matches('.'), p.name)
    };
    if cpp_text.is_empty() {
        format!(" // parameter {i} {ptx}")
    } else {
        format!(" // parameter {i}: {} {ptx}", cpp_text.join(" "))
    }
}

#[cfg(test)]
mod tests;
