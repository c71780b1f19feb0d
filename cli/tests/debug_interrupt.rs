//! Ctrl-C and the step bound of `cudasem debug`, end to end on the binary in scripted mode
//! (standard input a pipe, not a terminal). The kernel is Listing 6.1's spin lock with two
//! threads in one warp, which never terminates under the stack-based (simt-stack) model: the
//! CAS winner waits at the loop exit's reconvergence point while the loser spins.
//!
//! * SIGINT during `continue` stops it; the session answers the commands after it and exits 0.
//! * SIGINT while a scripted session waits for its next command ends it with exit code 130.
//! * Without Ctrl-C, `continue` ends at `--max-steps` with a message that says so.
//!
//! The tests wait for what the binary prints (the echo of a command is printed before it runs)
//! instead of sleeping for a guessed time, and give up after a generous timeout rather than hang.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

mod common;
use common::workspace;

const PTX: &str = "tests/thesis/listing_6_1.ptx";
const LAUNCH: &str = "tests/thesis/listing_6_1.ron";
/// Long enough for a loaded machine; a correct run needs well under a second per wait.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A running `cudasem debug` with its standard input open and its output read line by line.
struct Debugger {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Everything printed so far (stdout), for failure messages and the final checks.
    transcript: String,
}

impl Debugger {
    fn start(extra: &[&str]) -> Debugger {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cudasem"))
            .env("TMPDIR", env!("CARGO_TARGET_TMPDIR"))
            .args(["debug", PTX, "--launch", LAUNCH])
            .args(extra)
            .current_dir(workspace())
            .env("NO_COLOR", "1")
            .env_remove("CUDASEM_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the cudasem binary runs");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Debugger {
            child,
            stdin,
            lines,
            transcript: String::new(),
        }
    }

    fn send(&mut self, commands: &str) {
        let stdin = self.stdin.as_mut().expect("standard input is open");
        stdin
            .write_all(commands.as_bytes())
            .and_then(|()| stdin.flush())
            .expect("the debugger reads its input");
    }

    /// Reads output until a line satisfies `done`; panics (after killing the child) on timeout
    /// or when the output ends first.
    fn wait_for(&mut self, what: &str, done: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.transcript.push_str(&line);
                    self.transcript.push('\n');
                    if done(&line) {
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    let _ = self.child.kill();
                    panic!("no {what} within {TIMEOUT:?}:\n{}", self.transcript);
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the output ended before {what}:\n{}", self.transcript);
                }
            }
        }
    }

    /// Sends SIGINT to the debugger only (not to this test's process group).
    fn interrupt(&self) {
        let status = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -INT failed");
    }

    /// Closes standard input, collects the rest of the output and the exit code.
    fn finish(mut self) -> (Option<i32>, String, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            match self.child.try_wait().expect("wait for the debugger") {
                Some(status) => break status,
                None if Instant::now() > deadline => {
                    let _ = self.child.kill();
                    panic!("the debugger did not exit:\n{}", self.transcript);
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.transcript.push_str(&line);
            self.transcript.push('\n');
        }
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
        }
        (status.code(), self.transcript, stderr)
    }
}

/// The step number `interrupted after N steps, at step M` reports.
fn interrupted_at(transcript: &str) -> u64 {
    let line = transcript
        .lines()
        .find(|l| l.starts_with("interrupted after "))
        .unwrap_or_else(|| panic!("no interruption reported:\n{transcript}"));
    line.split("at step ")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no step number in `{line}`"))
}

#[test]
fn ctrl_c_interrupts_continue_and_the_session_goes_on() {
    let mut d = Debugger::start(&[]);
    d.wait_for("the banner", |l| l.starts_with("stopped before step 0"));
    d.send("continue\n");
    // The echo is printed (and flushed) before the command runs: from then on a SIGINT is its.
    d.wait_for("the echo of `continue`", |l| l == "(cudasem) continue");
    // Not needed for correctness (a SIGINT right after the echo stops `continue` before its
    // first step); it lets the loop run, which is the case a user meets.
    std::thread::sleep(Duration::from_millis(200));
    d.interrupt();
    d.wait_for("the interruption", |l| l.starts_with("interrupted after "));
    d.send("where\nstep\nstatus\nquit\n");
    let (code, out, stderr) = d.finish();
    assert_eq!(code, Some(0), "exit code\n{out}\n{stderr}");
    let at = interrupted_at(&out);
    // The commands after the interrupt were answered, from where `continue` stopped.
    assert!(
        out.contains(&format!(
            "(cudasem) where\nblock 0 warp 0 lane 0 at step {at}\n"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("(cudasem) step\n[{}] warp 0.0", at + 1)),
        "{out}"
    );
    assert!(
        out.contains(&format!("(cudasem) status\nstep {}; running", at + 1)),
        "{out}"
    );
    assert!(out.trim_end().ends_with("(cudasem) quit"), "{out}");
}

#[test]
fn ctrl_c_while_waiting_for_a_command_ends_a_scripted_session() {
    let mut d = Debugger::start(&[]);
    d.send("step\n");
    d.wait_for("the answer to `step`", |l| l.starts_with("[1] "));
    // The step's answer is printed just before the command ends: a SIGINT that lands in that
    // window interrupts the (finished) command and the session goes on waiting. Repeat the
    // signal until the waiting session takes it, instead of guessing a sleep.
    let deadline = Instant::now() + TIMEOUT;
    while d.child.try_wait().expect("wait for the debugger").is_none() && Instant::now() < deadline
    {
        d.interrupt();
        std::thread::sleep(Duration::from_millis(50));
    }
    let (code, out, stderr) = d.finish();
    assert_eq!(code, Some(130), "exit code\n{out}\n{stderr}");
    assert!(
        stderr.contains("interrupted while waiting for a command"),
        "{stderr}"
    );
}

#[test]
fn continue_on_a_kernel_that_does_not_terminate_ends_at_the_step_bound() {
    let mut d = Debugger::start(&["--max-steps", "3000"]);
    d.send("continue\nstatus\ncontinue\nstatus\n");
    let (code, out, stderr) = d.finish();
    assert_eq!(code, Some(0), "{out}\n{stderr}");
    let bound: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("stopped at the step bound (--max-steps 3000) after 3000 steps"))
        .collect();
    assert_eq!(bound.len(), 2, "both `continue`s hit the bound:\n{out}");
    assert!(out.contains("the kernel may not terminate"), "{out}");
    assert!(out.contains("`--max-steps N` sets the bound"), "{out}");
    assert!(
        out.contains("(cudasem) status\nstep 3000; running"),
        "{out}"
    );
    assert!(
        out.contains("(cudasem) status\nstep 6000; running"),
        "{out}"
    );
}
