//! Stopping a long computation from outside: the time bound of every command (`--timeout`).
//!
//! The library never reads the clock (ARCHITECTURE.md section 1 (invariants)): the CLI starts a watchdog
//! thread that sets a [`Stop`] flag when the time is up, and the run loops, the fuzzer and the
//! explorers poll it between steps. A loop that sees it ends with
//! [`semantics::machine::Termination::TimeLimit`] (or reports its bound hit) and never claims
//! a result it did not finish.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A flag that can be set once from any thread; clones share it. [`Stop::never`] is a flag
/// nobody can set (the default: no time bound).
#[derive(Debug, Clone, Default)]
pub struct Stop(Option<Arc<Flags>>);

/// The shared state of a [`Stop`]: whether a stop was requested, and whether a loop has seen
/// the request (it is then winding down: what is left is bounded by the work already done).
#[derive(Debug, Default)]
struct Flags {
    requested: AtomicBool,
    seen: AtomicBool,
}

impl Stop {
    /// A flag that is never set.
    pub fn never() -> Stop {
        Stop(None)
    }

    /// A fresh flag, not set.
    pub fn new() -> Stop {
        Stop(Some(Arc::new(Flags::default())))
    }

    /// Asks every loop polling this flag (or a clone) to stop.
    pub fn request(&self) {
        if let Some(f) = &self.0 {
            f.requested.store(true, Ordering::Relaxed);
        }
    }

    /// Withdraws a request, and its being seen: a session that goes on after an interrupt
    /// (the debugger, where Ctrl-C stops the command running, not the session) clears the
    /// flag when that command ends, so that it never reaches a later one.
    pub fn clear(&self) {
        if let Some(f) = &self.0 {
            f.requested.store(false, Ordering::Relaxed);
            f.seen.store(false, Ordering::Relaxed);
        }
    }

    /// Whether a stop was requested. A `true` answer is remembered as seen ([`Stop::seen`]):
    /// the loop that asked stops now.
    #[inline]
    pub fn requested(&self) -> bool {
        self.0.as_ref().is_some_and(|f| {
            let requested = f.requested.load(Ordering::Relaxed);
            if requested {
                f.seen.store(true, Ordering::Relaxed);
            }
            requested
        })
    }

    /// Whether some loop has seen the request and is winding down (so a watchdog can tell a
    /// command that is finishing its report from one that never polls).
    pub fn seen(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|f| f.seen.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag_and_never_stays_unset() {
        let a = Stop::new();
        let b = a.clone();
        assert!(!b.requested());
        assert!(!a.seen(), "a false answer is not a stop seen");
        a.request();
        assert!(!a.seen(), "nobody polled the flag since the request");
        assert!(b.requested());
        assert!(a.seen(), "a loop's true answer is shared by every clone");
        let n = Stop::never();
        n.request();
        assert!(!n.requested());
    }

    #[test]
    fn a_cleared_flag_is_unset_and_unseen_for_every_clone() {
        let a = Stop::new();
        let b = a.clone();
        a.request();
        assert!(b.requested());
        b.clear();
        assert!(!a.requested(), "clones share the cleared flag");
        assert!(!a.seen(), "the request that was seen is withdrawn with it");
        a.request();
        assert!(b.requested(), "a cleared flag can be set again");
    }
}
