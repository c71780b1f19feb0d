//! Launch descriptions: the launch file (RON), the quick-launch flags, and their resolution
//! against a loaded program into a [`LaunchConfig`](semantics::machine::LaunchConfig) the machine runs.
//!
//! Three steps, each with its own errors:
//! 1. [`Launch::from_ron`] reads a launch file. Syntax errors and per-field errors carry RON's
//!    line and column; cross-field errors (an unknown buffer in `args`, a value out of range for
//!    its buffer's type...) are located by finding the offending text in the file.
//! 2. [`Launch::apply_flags`] lets `--kernel --grid --block --buffer --arg --shared --global
//!    --print` override fields (or describe a whole launch without a file).
//! 3. [`Launch::resolve`] checks the launch against the program (kernel name, parameter count and
//!    sizes, module variables) and builds the buffers' bytes.
//!
//! Buffers keep their order of appearance in the file (then flags' new buffers, in flag order):
//! that order is the allocation order and the default print order.
//!
//! `Random(seed, min, max)` is ChaCha8 seeded with `seed_from_u64(seed)`; every element draws
//! `next_u64` values: integers are uniform in `[min, max]` (rejection sampling on `x % span`),
//! floats are `min + u * (max - min)` with `u` uniform in `[0, 1)` from the top 53 (f64) or 24
//! (f32, f16: computed in f32) bits, redrawn when rounding reaches `max`. The same seed gives the
//! same bytes on every machine and every build.
//!
//! The CLI, the corpus harnesses and the scheduler's tests all read launch files through this
//! crate, so they cannot disagree about what a launch file means.
//!
//! Reading a launch file reads the files its `File(...)` buffers name: this crate belongs to the
//! I/O layer with the CLI, not to the libraries below it.

mod buffers;
mod contexts;
mod device;
mod elem;
mod error;
pub mod expect;
mod flags;
mod launch;
mod layout;
mod locate;
mod resolve;
mod syntax;

pub use buffers::{RandomError, random_values, size_text};
pub use device::DeviceFile;
pub use elem::{ELEM_NAMES, Elem, ElemKind, Num, ValueError};
pub use error::{LaunchError, Location};
pub use flags::{LaunchFlags, parse_arg_flag, parse_buffer_flag};
pub use launch::{BufferDesc, ExpectSource, Launch, Resolved};
pub use syntax::{Arg, Dim, ExternCall, Init, KernelLaunch, ResolvedLaunch};

#[cfg(test)]
mod tests;
