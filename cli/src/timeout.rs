//! `--timeout SECONDS` and Ctrl-C: the two ways a command that runs kernels (`run`, `check`,
//! `fuzz`, `explore`, `litmus`) is stopped from outside. The library never reads the clock:
//! [`arm`] (called by `main` before the command starts, so that set-up is covered too) spawns a
//! watchdog thread that sleeps until the deadline and then sets every [`scheduler::Stop`] flag
//! the command took from [`Timeout::start`]; the run loops, the fuzzer and the explorers poll
//! them. What stopped says so and claims nothing it did not finish.
//!
//! A command that does not stop within [`GRACE`] of the deadline (still building a huge launch,
//! say) is ended by the watchdog with exit code 1 and a message, so that `--timeout N` bounds
//! the whole command, not only its run loop; once the report is being written
//! ([`reporting`]) it is left to finish. A command whose loop has seen the flag
//! ([`scheduler::Stop::seen`]) is winding down, building its report from what it found (an
//! explorer's outcome table and oracle over millions of states take seconds): it gets up to
//! [`WIND_DOWN`] more before it is ended.
//!
//! The memory budget (`--max-memory`, [`arm_memory`]) stops a command the same way: a watchdog
//! reads the process's resident memory every [`MEMORY_POLL`] and sets the flags when it passes
//! the budget (an explorer's state table or a monitor's history grows with the run), and the
//! report says "memory budget reached".
//!
//! Ctrl-C (SIGINT, [`install_interrupt`]) sets the same flags: the command prints its partial
//! report, `main` says it was interrupted and exits 130 (128 + SIGINT, the shell's convention).
//! A second Ctrl-C, or one while nothing polls a flag, ends the process at once.

use scheduler::Stop;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long after the deadline a command may take to stop and report before it is ended.
pub const GRACE: Duration = Duration::from_secs(1);

/// How much longer than [`GRACE`] a command whose loop has seen the stop may take to begin
/// its report.
pub const WIND_DOWN: Duration = Duration::from_secs(30);

/// Exit code of an interrupted command: 128 + SIGINT.
pub const INTERRUPTED_EXIT: u8 = 130;

/// The flags handed out by [`Timeout::start`], set at the deadline or on Ctrl-C.
static FLAGS: Mutex<Vec<Stop>> = Mutex::new(Vec::new());
/// The deadline has passed or Ctrl-C was pressed: flags handed out from now on start set.
static STOPPED: AtomicBool = AtomicBool::new(false);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The memory budget stopped the command.
static OVER_BUDGET: AtomicBool = AtomicBool::new(false);
/// The `--timeout` armed, for the reports that name it.
static ARMED: Mutex<Option<Duration>> = Mutex::new(None);

/// How often the memory watchdog reads the resident memory.
pub const MEMORY_POLL: Duration = Duration::from_millis(20);
/// The command has begun writing its report: the watchdog no longer ends it.
static REPORTING: AtomicBool = AtomicBool::new(false);

fn flags() -> std::sync::MutexGuard<'static, Vec<Stop>> {
    // A poisoned list is still a list of flags.
    FLAGS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sets every flag handed out, and those handed out later.
fn stop_all() {
    STOPPED.store(true, Ordering::SeqCst);
    for f in flags().iter() {
        f.request();
    }
}

/// After the flags were set: whether the command begins its report (or was interrupted) within
/// [`GRACE`], or within [`WIND_DOWN`] more once a loop has seen the flag.
fn report_begins() -> bool {
    let begun = || REPORTING.load(Ordering::SeqCst) || INTERRUPTED.load(Ordering::SeqCst);
    std::thread::sleep(GRACE);
    let until = Instant::now() + WIND_DOWN;
    while !begun() && flags().iter().any(Stop::seen) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    begun()
}

/// Starts the watchdog of `bound` (measured from now): at the deadline every flag is set; if
/// the command has not begun its report [`GRACE`] later, it is ended with exit code 1.
pub fn arm(bound: Option<Duration>) {
    let Some(bound) = bound else { return };
    *ARMED.lock().unwrap_or_else(|e| e.into_inner()) = Some(bound);
    let started = Instant::now();
    // Detached: it dies with the process if the command ends first.
    std::thread::spawn(move || {
        std::thread::sleep(bound);
        stop_all();
        if !report_begins() {
            eprintln!(
                "error: the time limit (--timeout {}) passed {:.1} s ago and the command had not \
                 stopped (it was still setting up or finishing): ended without a report",
                bound.as_secs_f64(),
                started.elapsed().saturating_sub(bound).as_secs_f64()
            );
            std::process::exit(1);
        }
    });
}

/// Starts the memory watchdog: when the process's resident memory passes `budget` bytes,
/// every flag is set; if the command has not begun its report [`GRACE`] later, it is ended
/// with exit code 1. Nothing is watched where the resident memory cannot be read.
pub fn arm_memory(budget: u64) {
    if resident_bytes().is_none() {
        return;
    }
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(MEMORY_POLL);
            let Some(rss) = resident_bytes() else { return };
            if rss > budget {
                break;
            }
        }
        OVER_BUDGET.store(true, Ordering::SeqCst);
        stop_all();
        if !report_begins() {
            eprintln!(
                "error: memory budget reached ({} of --max-memory) and the command had not \
                 stopped: ended without a report",
                crate::budget::size_text(budget)
            );
            std::process::exit(1);
        }
    });
}

/// The process's resident memory (`VmRSS` of `/proc/self/status`), where the system says.
fn resident_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Makes Ctrl-C stop the command as `--timeout` does. Not for `debug`, which handles Ctrl-C
/// itself (it interrupts the running debugger command).
pub fn install_interrupt() {
    let installed = ctrlc::set_handler(|| {
        let again = INTERRUPTED.swap(true, Ordering::SeqCst);
        if again || flags().is_empty() {
            // Nothing polls a flag yet (set-up) or the user insists: stop now.
            eprintln!("interrupted (Ctrl-C)");
            std::process::exit(i32::from(INTERRUPTED_EXIT));
        }
        eprintln!("interrupted (Ctrl-C): stopping and reporting; Ctrl-C again ends at once");
        stop_all();
    });
    if let Err(e) = installed {
        eprintln!("warning: Ctrl-C will end the command without a report: {e}");
    }
}

/// Whether Ctrl-C stopped the command.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Whether the memory watchdog (`--max-memory`) set the stop flags.
pub fn over_budget() -> bool {
    OVER_BUDGET.load(Ordering::SeqCst)
}

/// The command has begun writing its report: the watchdog lets it finish.
pub fn reporting() {
    REPORTING.store(true, Ordering::SeqCst);
}

/// Which bound stopped a command, in the words every report uses (run, check, explore, fuzz,
/// litmus): `--timeout 2.5 reached`, `interrupted by Ctrl-C` or `memory budget reached:
/// --max-memory 4.0 MiB (4194304 bytes)`.
pub fn cause_text(bound: Option<Duration>) -> String {
    if interrupted() {
        "interrupted by Ctrl-C".to_string()
    } else if OVER_BUDGET.load(Ordering::SeqCst) {
        format!(
            "memory budget reached: --max-memory {}",
            crate::budget::size_text(crate::budget::bytes())
        )
    } else {
        let armed = *ARMED.lock().unwrap_or_else(|e| e.into_inner());
        match bound.or(armed) {
            Some(d) => format!("--timeout {} reached", d.as_secs_f64()),
            None => "--timeout reached".to_string(),
        }
    }
}

#[derive(clap::Args, Clone, Debug, Default)]
pub struct Timeout {
    /// Stop after this many seconds of wall-clock time (fractions allowed) and report how far
    /// the command got; no bound by default. A run or search cut by it proves nothing.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout: Option<Duration>,
}

fn parse_seconds(text: &str) -> Result<Duration, crate::error::Error> {
    use crate::error::Error;
    let seconds: f64 = text.parse().map_err(|_| {
        Error::Usage(format!(
            "`{text}` is not a number of seconds (e.g. 10 or 0.5)"
        ))
    })?;
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(Error::Usage(format!(
            "`{text}`: the timeout must be a positive number of seconds"
        )));
    }
    Duration::try_from_secs_f64(seconds).map_err(|e| Error::Usage(format!("`{text}`: {e}")))
}

impl Timeout {
    /// The bound in milliseconds, as a [`scheduler::Budget`] records it.
    pub fn millis(&self) -> Option<u64> {
        self.timeout
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    /// The flag the command polls: set at the deadline of [`arm`] or on Ctrl-C (already set
    /// when either came first).
    pub fn start(&self) -> Stop {
        let stop = Stop::new();
        let mut list = flags();
        list.push(stop.clone());
        if STOPPED.load(Ordering::SeqCst) {
            stop.request();
        }
        stop
    }

    /// Which bound stopped the command ([`cause_text`] with the flag as given).
    pub fn flag_text(&self) -> String {
        cause_text(self.timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_parse_and_bad_values_say_why() {
        assert_eq!(parse_seconds("2.5").ok(), Some(Duration::from_millis(2500)));
        assert!(
            parse_seconds("0")
                .unwrap_err()
                .to_string()
                .contains("positive")
        );
        assert!(
            parse_seconds("-1")
                .unwrap_err()
                .to_string()
                .contains("positive")
        );
        assert!(
            parse_seconds("ten")
                .unwrap_err()
                .to_string()
                .contains("not a number")
        );
        assert!(
            parse_seconds("inf")
                .unwrap_err()
                .to_string()
                .contains("positive")
        );
    }

    #[test]
    fn flags_are_set_at_the_deadline_and_start_set_after_it() {
        let t = Timeout::default();
        let early = t.start();
        assert!(!early.requested());
        arm(Some(Duration::from_millis(1)));
        // The watchdog sets it eventually; poll rather than assume a delay.
        while !early.requested() {
            std::thread::yield_now();
        }
        assert!(
            t.start().requested(),
            "a flag taken after the deadline starts set"
        );
        // The watchdog would end the process GRACE later: the test's report has begun.
        reporting();
    }
}
