//! CUDA in: what cudasem needs to take a `.cu` file where it takes PTX.
//!
//! - [`HEADER`]: the CUDA device header cudasem ships (the standard names: `threadIdx`,
//!   `__syncthreads_count`, `__shfl_down_sync`, `atomicAdd(float*)`, `cooperative_groups`...),
//!   built from clang's `__nvvm_*` builtins;
//! - [`compile`](mod@compile): a `.cu` file to PTX through clang's NVPTX backend, with line tables on so
//!   that reports cite `.cu` lines (the crate's only I/O: it runs clang);
//! - [`demangle`](mod@demangle): C++ kernel names as a person reads them;
//! - [`launch_gen`]: a launch file (RON) written from a kernel's signature.

pub mod compile;
pub mod demangle;
pub mod launch_gen;

/// The CUDA device header, given to clang with `-include` (see [`compile::compile`]).
pub const HEADER: &str = include_str!("cudasem_cuda.h");

pub use compile::{CompileError, Compiled, compile, is_cuda_source};
pub use demangle::{demangle, short_name};
