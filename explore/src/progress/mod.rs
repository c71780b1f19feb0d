//! GPU forward-progress models and the termination oracle (Sorensen et al., "Specifying and
//! Testing GPU Workgroup Progress Models", OOPSLA 2021; `digests/seed000_progress.md`).
//!
//! * [`units`]: units of progress (threads, CTAs, warps, ...) and [`UnitSet`] bitsets.
//! * [`model`]: the 11 [`ProgressModel`]s as F-set functions of (stepped, live).
//! * [`lts`]: the [`UnitSystem`] seam and explicit-state exploration into an [`Lts`].
//! * [`oracle`]: weak/strong termination checks with lasso [`Counterexample`]s.
//! * [`scc`]: strongly connected components without recursion (deep graphs, small stacks).
//! * [`axb`]: the AXB litmus-test format and its tiny machine (a [`UnitSystem`]).
//! * [`suite`]: the conformance data (`expected.csv`) and where to find it.

pub mod axb;
pub mod lts;
pub mod model;
pub mod oracle;
pub mod scc;
pub mod suite;
pub mod units;

pub use axb::{AxbState, AxbTest, ParseError};
pub use lts::{ExploreError, Limits, Lts, Node, NodeId, UnitSystem, explore};
pub use model::{ModelKind, ProgressModel, Strength, UnknownModel};
pub use oracle::{Counterexample, Oracle, Reason, StrongCheck, Transition, Verdict};
pub use units::{MAX_UNITS, Unit, UnitSet};
