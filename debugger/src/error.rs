//! The debugger's errors: a command written wrong ([`SyntaxError`]), a command the session
//! cannot carry out in its state, and an internal error (a bug in cudasem, not in the program
//! or the command). Their text is what the user reads after `error: `.

/// A command line that does not parse: what is wrong, often with how to write it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SyntaxError(pub String);

impl From<String> for SyntaxError {
    fn from(message: String) -> Self {
        SyntaxError(message)
    }
}

impl From<&str> for SyntaxError {
    fn from(message: &str) -> Self {
        SyntaxError(message.to_string())
    }
}

/// Why a command failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DebugError {
    /// The command line does not parse.
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    /// A block number outside the grid.
    #[error("there is no block {block} (the grid has {blocks})")]
    NoBlock { block: u32, blocks: u32 },
    /// A warp number outside the block.
    #[error("there is no warp {warp} (blocks have {warps})")]
    NoWarp { warp: u32, warps: u32 },
    /// A lane number outside the warp.
    #[error("there is no lane {lane} (warp {warp} has {lanes})")]
    NoLane { lane: u32, warp: u32, lanes: u32 },
    /// `delete ID` of an id no breakpoint or watchpoint has.
    #[error("no breakpoint or watchpoint {0}; `info breakpoints` lists them")]
    NoBreakpoint(u32),
    /// `undisplay ID` of an id no display has.
    #[error("no display {0} (`info display` lists them)")]
    NoDisplay(u32),
    /// The host could not save or load a trace.
    #[error(transparent)]
    Host(#[from] HostError),
    /// Anything else the session cannot do in its state: a name it does not know, a line
    /// outside a file, a step out of reach, a model without the thing asked for.
    #[error("{0}")]
    Refused(String),
    /// An invariant of cudasem broke (a recorded schedule the machine no longer takes).
    #[error("internal error: {0}")]
    Internal(String),
}

/// Why the session's host (the caller that reads and writes files for it) could not save or
/// load a trace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// The session was started without file access.
    #[error("this session has no file access")]
    NoFiles,
    /// No trace is kept under that name (a host that keeps traces in memory).
    #[error("no trace `{0}`")]
    NoTrace(String),
    /// The file could not be read: the system's reason.
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
    /// The file could not be written: the system's reason.
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
    /// The file was read but holds no trace, or the trace could not be written out: why.
    #[error("{path}: {reason}")]
    Format { path: String, reason: String },
}

impl From<String> for DebugError {
    fn from(message: String) -> Self {
        DebugError::Refused(message)
    }
}

impl From<&str> for DebugError {
    fn from(message: &str) -> Self {
        DebugError::Refused(message.to_string())
    }
}
