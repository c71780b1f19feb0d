//! AXB progress litmus tests: the text format and the tiny machine that runs them.
//!
//! The language has one instruction, AXB ("atomic exchange branch", paper §3, digest §2.1):
//! atomically compare a memory cell with a value, branch on the result, optionally write the
//! cell. State = one pc per thread + memory cells (all 0 initially); one instruction per step.
//! A thread terminates when its pc passes its last instruction.
//!
//! Text format (the artifact's `ALL_tests_flat`, digest §2.4): `THREAD<k>` headers in order
//! `0, 1, ...`, each followed by its instructions, one per line, blank lines ignored:
//!
//! * `atomic_exch_branch(loc, check, exch, target)`: `old = Exch(mem[loc], exch); if old ==
//!   check goto target`;
//! * `atomic_chk_branch(loc, check, target)`: `if mem[loc] == check goto target`;
//! * `atomic_store(loc, value)`: `mem[loc] = value`.
//!
//! `target` is a 0-based instruction index or `END` (one past the last instruction).

use super::lts::{ExploreError, Limits, UnitSystem, explore};
use super::oracle::Oracle;
use super::units::{Unit, UnitSet};
use std::collections::HashSet;
use std::fmt;

/// Most threads per test (the suite has at most 3).
pub const MAX_THREADS: usize = 8;
/// Most memory locations (the suite uses 2).
pub const MAX_LOCS: usize = 4;
/// Most instructions per thread (pcs are bytes; `END` = the length).
pub const MAX_INSTRS: usize = 254;

/// A branch target as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// A 0-based instruction index (equal to the thread's length means `END`).
    Index(u8),
    /// `END`: one past the last instruction.
    End,
}

/// One instruction, in the form it was written (digest §2.4 table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Instr {
    /// `atomic_exch_branch(loc, check, exch, target)` = `AXB(loc, check, target, true, exch)`.
    ExchBranch {
        loc: u8,
        check: u8,
        exch: u8,
        target: Target,
    },
    /// `atomic_chk_branch(loc, check, target)` = `AXB(loc, check, target, false, _)`.
    ChkBranch { loc: u8, check: u8, target: Target },
    /// `atomic_store(loc, value)` = `AXB(loc, 0, pc+1, true, value)`.
    Store { loc: u8, value: u8 },
}

impl Instr {
    pub fn loc(self) -> u8 {
        match self {
            Instr::ExchBranch { loc, .. }
            | Instr::ChkBranch { loc, .. }
            | Instr::Store { loc, .. } => loc,
        }
    }

    fn target(self) -> Option<Target> {
        match self {
            Instr::ExchBranch { target, .. } | Instr::ChkBranch { target, .. } => Some(target),
            Instr::Store { .. } => None,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Index(i) => write!(f, "{i}"),
            Target::End => f.write_str("END"),
        }
    }
}

impl fmt::Display for Instr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Instr::ExchBranch {
                loc,
                check,
                exch,
                target,
            } => {
                write!(f, "atomic_exch_branch({loc},{check},{exch},{target})")
            }
            Instr::ChkBranch { loc, check, target } => {
                write!(f, "atomic_chk_branch({loc},{check},{target})")
            }
            Instr::Store { loc, value } => write!(f, "atomic_store({loc},{value})"),
        }
    }
}

/// Malformed test text: where and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ParseError {
    pub file: String,
    /// 1-based.
    pub line: usize,
    pub message: String,
}

/// A parsed test: its name (the file stem) and one instruction list per thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxbTest {
    pub name: String,
    pub threads: Vec<Vec<Instr>>,
}

/// The machine state: a pc per thread (`len` = terminated) and the memory cells. Entries
/// beyond the test's threads and locations stay 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct AxbState {
    pub pcs: [u8; MAX_THREADS],
    pub mem: [u8; MAX_LOCS],
}

/// Parses the text of a test. `file` names it in errors; its stem becomes the test's name.
pub fn parse(file: &str, source: &str) -> Result<AxbTest, ParseError> {
    let err = |line: usize, message: String| ParseError {
        file: file.to_string(),
        line,
        message,
    };
    let name = std::path::Path::new(file)
        .file_stem()
        .map_or_else(|| file.to_string(), |s| s.to_string_lossy().into_owned());
    let mut threads: Vec<Vec<Instr>> = Vec::new();
    // (line of each instruction, for target errors found after the thread is complete)
    let mut lines: Vec<Vec<usize>> = Vec::new();
    for (i, raw) in source.lines().enumerate() {
        let line = i + 1;
        let text = raw.trim();
        if text.is_empty() || text.starts_with("//") {
            continue;
        }
        if let Some(k) = text.strip_prefix("THREAD") {
            let k: usize = k.trim().parse().map_err(|_| {
                err(
                    line,
                    format!("bad thread header `{text}` (expected `THREAD<k>`)"),
                )
            })?;
            if k != threads.len() {
                return Err(err(
                    line,
                    format!(
                        "`{text}`: expected THREAD{} (threads are numbered 0, 1, ... in order)",
                        threads.len()
                    ),
                ));
            }
            if k >= MAX_THREADS {
                return Err(err(
                    line,
                    format!("too many threads: at most {MAX_THREADS}"),
                ));
            }
            threads.push(Vec::new());
            lines.push(Vec::new());
            continue;
        }
        let instr = parse_instr(text).map_err(|m| err(line, m))?;
        if usize::from(instr.loc()) >= MAX_LOCS {
            return Err(err(
                line,
                format!(
                    "location {} out of range (at most {} locations)",
                    instr.loc(),
                    MAX_LOCS
                ),
            ));
        }
        let (Some(thread), Some(thread_lines)) = (threads.last_mut(), lines.last_mut()) else {
            return Err(err(
                line,
                format!("instruction `{text}` before the first `THREAD0` header"),
            ));
        };
        if thread.len() >= MAX_INSTRS {
            return Err(err(
                line,
                format!("too many instructions in one thread: at most {MAX_INSTRS}"),
            ));
        }
        thread.push(instr);
        thread_lines.push(line);
    }
    if threads.is_empty() {
        return Err(err(
            source.lines().count().max(1),
            "no `THREAD0` header: a test needs at least one thread".to_string(),
        ));
    }
    for (t, (thread, thread_lines)) in threads.iter().zip(&lines).enumerate() {
        for (instr, &line) in thread.iter().zip(thread_lines) {
            if let Some(Target::Index(k)) = instr.target()
                && usize::from(k) > thread.len()
            {
                return Err(err(
                    line,
                    format!(
                        "branch target {k} out of range: THREAD{t} has {} instructions (use END to terminate)",
                        thread.len()
                    ),
                ));
            }
        }
    }
    Ok(AxbTest { name, threads })
}

/// `name(a, b, ...)` -> an instruction, or what is wrong with it.
fn parse_instr(text: &str) -> Result<Instr, String> {
    let (name, rest) = text
        .split_once('(')
        .ok_or_else(|| format!("expected `mnemonic(args)` or `THREAD<k>`, found `{text}`"))?;
    let args = rest
        .strip_suffix(')')
        .ok_or_else(|| format!("missing `)` at the end of `{text}`"))?;
    let args: Vec<&str> = args.split(',').map(str::trim).collect();
    let name = name.trim();
    let arity = match name {
        "atomic_exch_branch" => 4,
        "atomic_chk_branch" => 3,
        "atomic_store" => 2,
        _ => {
            return Err(format!(
                "unknown instruction `{name}` (expected atomic_exch_branch, atomic_chk_branch or atomic_store)"
            ));
        }
    };
    if args.len() != arity {
        return Err(format!(
            "`{name}` takes {arity} arguments, found {}",
            args.len()
        ));
    }
    let num = |what: &str, s: &str| {
        s.parse::<u8>()
            .map_err(|_| format!("`{name}`: bad {what} `{s}` (expected a number 0..=255)"))
    };
    let target = |s: &str| {
        if s == "END" {
            Ok(Target::End)
        } else {
            s.parse::<u8>().map(Target::Index).map_err(|_| {
                format!("`{name}`: bad branch target `{s}` (expected an instruction index or END)")
            })
        }
    };
    Ok(match name {
        "atomic_exch_branch" => Instr::ExchBranch {
            loc: num("location", args[0])?,
            check: num("check value", args[1])?,
            exch: num("exchange value", args[2])?,
            target: target(args[3])?,
        },
        "atomic_chk_branch" => Instr::ChkBranch {
            loc: num("location", args[0])?,
            check: num("check value", args[1])?,
            target: target(args[2])?,
        },
        _ => Instr::Store {
            loc: num("location", args[0])?,
            value: num("value", args[1])?,
        },
    })
}

impl AxbTest {
    pub fn thread_count(&self) -> usize {
        self.threads.len()
    }

    /// The number of memory locations the test mentions (at least 1).
    pub fn loc_count(&self) -> usize {
        self.threads
            .iter()
            .flatten()
            .map(|i| usize::from(i.loc()) + 1)
            .max()
            .unwrap_or(1)
    }

    pub fn initial_state(&self) -> AxbState {
        AxbState::default()
    }

    /// Whether `thread` has terminated in `state`.
    pub fn is_done(&self, state: &AxbState, thread: Unit) -> bool {
        self.threads
            .get(thread)
            .is_none_or(|code| usize::from(state.pcs[thread]) >= code.len())
    }

    /// One step of `thread` (digest §2.1, the AXB body, atomically): the branch reads the
    /// old value, the exchange writes afterwards. `None` if the thread has terminated.
    pub fn step(&self, state: &AxbState, thread: Unit) -> Option<AxbState> {
        let code = self.threads.get(thread)?;
        let pc = usize::from(state.pcs[thread]);
        let instr = *code.get(pc)?;
        let len = code.len() as u8;
        let resolve = |t: Target| match t {
            Target::Index(i) => i,
            Target::End => len,
        };
        let next = pc as u8 + 1;
        let mut s = *state;
        let loc = usize::from(instr.loc());
        let old = s.mem[loc];
        let (check, target, exch) = match instr {
            Instr::ExchBranch {
                check,
                exch,
                target,
                ..
            } => (check, resolve(target), Some(exch)),
            Instr::ChkBranch { check, target, .. } => (check, resolve(target), None),
            Instr::Store { value, .. } => (0, next, Some(value)),
        };
        s.pcs[thread] = if old == check { target } else { next };
        if let Some(v) = exch {
            s.mem[loc] = v;
        }
        Some(s)
    }

    /// `pc=(1,end) mem=(1,0)`.
    pub fn describe(&self, state: &AxbState) -> String {
        let pcs: Vec<String> = (0..self.thread_count())
            .map(|t| {
                if self.is_done(state, t) {
                    "end".to_string()
                } else {
                    state.pcs[t].to_string()
                }
            })
            .collect();
        let mem: Vec<String> = state.mem[..self.loc_count().min(MAX_LOCS)]
            .iter()
            .map(u8::to_string)
            .collect();
        format!("pc=({}) mem=({})", pcs.join(","), mem.join(","))
    }

    /// Builds the LTS and the oracle over it (one exploration serves all 11 models).
    pub fn oracle(&self) -> Result<Oracle<AxbState>, ExploreError> {
        Ok(Oracle::new(explore(self, Limits::default())?))
    }

    /// [`AxbTest::oracle`] under `limits`, stopping when `stop` is set.
    pub fn oracle_until(
        &self,
        limits: Limits,
        stop: &scheduler::Stop,
    ) -> Result<Oracle<AxbState>, ExploreError> {
        Ok(Oracle::new(super::lts::explore_until(self, limits, stop)?))
    }

    /// Runs the threads one after another, each alone until it terminates, in increasing id
    /// order; `true` iff some thread never terminates (digest §0, "chunked layout": the 246
    /// tests every GPU hung on under the chunked layout, and the pre-Volta SIMT warp run).
    pub fn sequential_in_order_hangs(&self) -> bool {
        let mut state = self.initial_state();
        for t in 0..self.thread_count() {
            // Running alone, a thread is deterministic: it hangs iff its (pc, memory) repeats.
            let mut seen = HashSet::new();
            while !self.is_done(&state, t) {
                if !seen.insert((state.pcs[t], state.mem)) {
                    return true;
                }
                match self.step(&state, t) {
                    Some(s) => state = s,
                    None => break,
                }
            }
        }
        false
    }
}

impl UnitSystem for AxbTest {
    type State = AxbState;

    fn unit_count(&self) -> usize {
        self.thread_count()
    }

    fn initial(&self) -> AxbState {
        self.initial_state()
    }

    fn done(&self, state: &AxbState) -> UnitSet {
        (0..self.thread_count())
            .filter(|&t| self.is_done(state, t))
            .collect()
    }

    /// Every live thread is enabled (no blocking instructions, digest §2.3).
    fn successors(&self, state: &AxbState, out: &mut Vec<(Unit, AxbState)>) {
        out.extend((0..self.thread_count()).filter_map(|t| self.step(state, t).map(|s| (t, s))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_artifact_format_with_crlf() {
        let t = parse("x/2t_4i_60.txt", "THREAD0\r\natomic_exch_branch(0,1,1,0)\r\n\r\n\r\nTHREAD1\r\natomic_exch_branch(0,1,1,END)\r\n\r\natomic_store(0,0)\r\n\r\natomic_exch_branch(0,0,0,2)\r\n").unwrap();
        assert_eq!(t.name, "2t_4i_60");
        assert_eq!(
            t.threads[0],
            vec![Instr::ExchBranch {
                loc: 0,
                check: 1,
                exch: 1,
                target: Target::Index(0)
            }]
        );
        assert_eq!(t.threads[1].len(), 3);
        assert_eq!(t.threads[1][0].to_string(), "atomic_exch_branch(0,1,1,END)");
        assert_eq!(t.threads[1][1], Instr::Store { loc: 0, value: 0 });
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = |src: &str| parse("t.txt", src).unwrap_err().to_string();
        assert_eq!(
            e("THREAD0\natomic_swap(0,1)\n"),
            "t.txt:2: unknown instruction `atomic_swap` (expected atomic_exch_branch, atomic_chk_branch or atomic_store)"
        );
        assert_eq!(
            e("THREAD0\natomic_store(0)\n"),
            "t.txt:2: `atomic_store` takes 2 arguments, found 1"
        );
        assert_eq!(
            e("atomic_store(0,1)\n"),
            "t.txt:1: instruction `atomic_store(0,1)` before the first `THREAD0` header"
        );
        assert_eq!(
            e("THREAD1\n"),
            "t.txt:1: `THREAD1`: expected THREAD0 (threads are numbered 0, 1, ... in order)"
        );
        assert_eq!(
            e("THREAD0\n\natomic_chk_branch(0,0,5)\n"),
            "t.txt:3: branch target 5 out of range: THREAD0 has 1 instructions (use END to terminate)"
        );
        assert_eq!(
            e("THREAD0\natomic_chk_branch(0,x,0)\n"),
            "t.txt:2: `atomic_chk_branch`: bad check value `x` (expected a number 0..=255)"
        );
        assert_eq!(
            e("\n"),
            "t.txt:1: no `THREAD0` header: a test needs at least one thread"
        );
        assert_eq!(
            e("THREAD0\natomic_store(9,1)\n"),
            "t.txt:2: location 9 out of range (at most 4 locations)"
        );
    }

    /// Exchange semantics: the branch compares the old value, the write happens regardless.
    #[test]
    fn exch_branch_reads_old_value_then_writes() {
        let t = parse(
            "t",
            "THREAD0\natomic_exch_branch(0,0,1,END)\natomic_store(0,0)\n",
        )
        .unwrap();
        let s = t.step(&t.initial_state(), 0).unwrap();
        assert_eq!((s.pcs[0], s.mem[0]), (2, 1)); // old 0 == check 0: jump to END; mem := 1
        assert!(t.is_done(&s, 0));
        assert_eq!(t.step(&s, 0), None);
        let mut s2 = t.initial_state();
        s2.mem[0] = 1;
        let s2 = t.step(&s2, 0).unwrap();
        assert_eq!((s2.pcs[0], s2.mem[0]), (1, 1)); // old 1 != 0: fall through
        assert_eq!(t.describe(&s), "pc=(end) mem=(1)");
    }
}
