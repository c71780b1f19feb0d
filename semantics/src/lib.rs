//! `semantics`: program environments and the layered CUDA machine.
//!
//! * [`program`]: the program environment (thesis 5.1.2): decoded instructions, functions,
//!   variables, source mapping, CFGs and reconvergence points.
//! * [`alu`]: bit-exact arithmetic of single instructions (pure functions).
//! * [`load`](mod@load): PTX AST to program environment (thesis 5.1.3), with validation diagnostics.
//! * [`machine`]: the layered machine (thesis chapter 5): thread, warp, block, grid, context, device.
//! * [`monitors`]: data races, barrier divergence, out-of-bounds and uninitialised accesses over
//!   the event stream.
//! * [`rules`]: the catalogue of the rules derivations name: thesis section, text, deviations.

pub mod alu;
pub mod load;
pub mod machine;
pub mod monitors;
pub mod program;
pub mod rules;

pub use load::load;
pub use program::Program;
