//! Checking a launch's expectations (`expect: [...]`, `--expect`) against final buffers: the
//! buffers of one run (`run`), or the observed data of a fuzzed or explored outcome, which
//! holds the printed buffers and then the buffers only expectations read
//! ([`Setup::observed_buffers`]).

use crate::launch::Resolved;
use crate::launch::expect::Violation;
use crate::options::Setup;

/// Each expectation with its violation (`None`: it holds). `buffer(i)` is launch buffer `i`'s
/// final bytes.
pub fn check<'a>(
    resolved: &Resolved,
    buffer: impl Fn(usize) -> Option<&'a [u8]>,
) -> Vec<(String, Option<Violation>)> {
    resolved
        .expect
        .iter()
        .map(|e| {
            let data: Vec<&[u8]> = e
                .buffers
                .iter()
                .map(|(i, _, _)| buffer(*i).unwrap_or(&[]))
                .collect();
            (e.text.clone(), e.check(&data).err())
        })
        .collect()
}

/// `--expect` on a command that checks no expectations (`check`, `debug`, `view`): refused,
/// rather than silently ignored. (A launch file's `expect:` section is fine: one launch file
/// serves every command.)
pub fn refuse_flag(
    command: &str,
    quick: &crate::flags::QuickLaunch,
) -> Result<(), crate::error::Error> {
    if quick.expect.is_empty() {
        return Ok(());
    }
    Err(crate::error::Error::Refused(format!(
        "error: `cudasem {command}` does not check expectations (--expect)\n  = help: `cudasem run`, `fuzz`, `explore` and `replay` check them: run one of those with --expect\n"
    )))
}

impl Setup {
    /// The launch buffers an outcome records: the printed ones, then those only expectations
    /// read.
    pub fn observed_buffers(&self) -> Vec<usize> {
        let mut out = self.resolved.print.clone();
        for e in &self.resolved.expect {
            for (i, _, _) in &e.buffers {
                if !out.contains(i) {
                    out.push(*i);
                }
            }
        }
        out
    }

    /// The violated expectations of an outcome's observed data (printed buffers, the buffers
    /// expectations read, then variables), in the order they are written.
    pub fn violations(&self, data: &[Vec<u8>]) -> Vec<Violation> {
        let observed = self.observed_buffers();
        check(&self.resolved, |i| {
            let at = observed.iter().position(|&b| b == i)?;
            data.get(at).map(Vec::as_slice)
        })
        .into_iter()
        .filter_map(|(_, v)| v)
        .collect()
    }

    /// The violated expectations of an explored or fuzzed outcome, as text; none for an
    /// outcome that did not complete (a failing run's buffers are not checked).
    pub fn outcome_violations(&self, o: &scheduler::outcome::Outcome) -> Vec<String> {
        if o.status != scheduler::outcome::Status::Completed {
            return Vec::new();
        }
        self.violations(&o.data)
            .iter()
            .map(ToString::to_string)
            .collect()
    }
}
