//! `view`: the teaching page. A recorded run (a launch, its machine and the choices of a
//! trace) becomes one self-contained HTML file that shows, step by step, what the thesis's
//! figures draw: the instruction each warp is at, the rule that fired and its derivation (the
//! rule's thesis text on hover), each warp's SIMT stack (pc, α, δ, τ; the lane groups under
//! independent thread scheduling), the registers a step changed, the barriers and who waits
//! at them, the caches and in-flight memory programs under `--memory cached`, the schedule as
//! a timeline, and for a lasso its stem, its cycle and why the cycle is fair.
//!
//! * [`record`](record::record): replays the choices and keeps what each step changed.
//! * [`model`]: the page's data, embedded in the page as one JSON blob.
//! * [`html`](html::page): the page itself: that blob, an inline stylesheet and a small inline
//!   script (no framework, nothing fetched: the page works offline and reaches no network).
//!
//! Long runs are windowed: the page holds at most [`ViewOptions::window`] steps in full (from
//! [`ViewOptions::from`]) and a sampled overview of the whole run, and says so. Nothing here
//! reads files or prints: the caller passes the sources in and writes the page out.

pub mod html;
pub mod model;
pub mod record;

use std::collections::BTreeMap;

/// The texts the page quotes, read by the caller.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The kernel's name.
    pub kernel: String,
    /// The PTX file as the user named it, and its text.
    pub ptx_path: String,
    pub ptx: String,
    /// CUDA sources by the path the module's `.file` table gives (those that could be read).
    pub cu: BTreeMap<String, String>,
    /// The configuration in words (`simt-stack, cached memory`).
    pub setup: String,
}

/// Which part of a run the page holds.
#[derive(Debug, Clone)]
pub struct ViewOptions {
    /// Index of the first choice shown in full (the steps before it are replayed unobserved).
    pub from: u64,
    /// At most this many steps are shown in full.
    pub window: u64,
    /// A lasso's cycle start (`choices[cycle_start..]` repeat forever).
    pub cycle_start: Option<usize>,
    /// The policy that made the choices, for the page's header.
    pub policy: Option<String>,
    /// Why a lasso's cycle is fair under the progress model and level the explorer used, in
    /// the explorer's words (its fair set F and who steps); shown first in the lasso panel.
    pub fairness: Option<String>,
}

/// The default window: a page of this many steps is a few megabytes and opens in well under
/// a second; a longer run is windowed.
pub const DEFAULT_WINDOW: u64 = 5_000;

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            from: 0,
            window: DEFAULT_WINDOW,
            cycle_start: None,
            policy: None,
            fairness: None,
        }
    }
}

/// Why a page could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// A recorded choice could not be taken on the replayed machine.
    #[error("the trace does not replay: choice {step} cannot be taken ({message})")]
    Diverged { step: u64, message: String },
}

/// Records the run and renders the page. `machine` is the run's machine before its first
/// step, of one launch or a program of several (`Machine::from_program`): each grid's shape
/// is read from it, and a program's page names every block by its grid.
pub fn page(
    machine: semantics::machine::Machine,
    choices: &[traces::Choice],
    sources: &Sources,
    options: &ViewOptions,
) -> Result<String, ViewError> {
    let data = record::record(machine, choices, sources, options)?;
    Ok(html::page(&data))
}
