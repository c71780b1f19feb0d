//! `--timeout SECONDS`: the time bound of every command that runs kernels (`run`, `check`,
//! `fuzz`, `explore`, `litmus`). The library never reads the clock: [`Timeout::start`] spawns
//! a watchdog thread that sleeps for the bound and then sets a [`scheduler::Stop`] flag, which
//! the run loops, the fuzzer and the explorers poll. What stopped at the bound says so and
//! claims nothing it did not finish.

use scheduler::Stop;
use std::time::Duration;

#[derive(clap::Args, Clone, Debug, Default)]
pub struct Timeout {
    /// Stop after this many seconds of wall-clock time (fractions allowed) and report how far
    /// the command got; no bound by default. A run or search cut by it proves nothing.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout: Option<Duration>,
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds (e.g. 10 or 0.5)"))?;
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(format!(
            "`{text}`: the timeout must be a positive number of seconds"
        ));
    }
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("`{text}`: {e}"))
}

impl Timeout {
    /// The flag the command polls: set by a watchdog thread when the bound has passed (never
    /// set without `--timeout`).
    pub fn start(&self) -> Stop {
        let Some(bound) = self.timeout else {
            return Stop::never();
        };
        let stop = Stop::new();
        let watchdog = stop.clone();
        // Detached: it dies with the process if the command ends first.
        std::thread::spawn(move || {
            std::thread::sleep(bound);
            watchdog.request();
        });
        stop
    }

    /// `--timeout 2.5` as the flag was given, for messages.
    pub fn flag_text(&self) -> String {
        match self.timeout {
            Some(d) => format!("--timeout {}", d.as_secs_f64()),
            None => "--timeout".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_parse_and_bad_values_say_why() {
        assert_eq!(parse_seconds("2.5"), Ok(Duration::from_millis(2500)));
        assert!(parse_seconds("0").unwrap_err().contains("positive"));
        assert!(parse_seconds("-1").unwrap_err().contains("positive"));
        assert!(parse_seconds("ten").unwrap_err().contains("not a number"));
        assert!(parse_seconds("inf").unwrap_err().contains("positive"));
    }

    #[test]
    fn without_a_bound_the_flag_is_never_set() {
        assert!(!Timeout::default().start().requested());
        let t = Timeout {
            timeout: Some(Duration::from_millis(1)),
        };
        let stop = t.start();
        // The watchdog sets it eventually; poll rather than assume a delay.
        while !stop.requested() {
            std::thread::yield_now();
        }
    }
}
