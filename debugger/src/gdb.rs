//! The gdb and cuda-gdb conveniences of the session: `finish` (run until the focused warp
//! returns from its function), `display` (registers printed after every
//! command that steps), `focus` / `cuda block B warp W lane L` (which thread the inspection
//! commands look at) and `list` (the PTX around an instruction). `tbreak`, `print/FMT` and the
//! `info` aliases live with the commands they extend.

use super::command::{ListAt, Radix, ThreadSel};
use super::source;
use super::{Focus, Session, Stop, view};
use crate::DebugError;
use semantics::machine::Machine;
use std::fmt::Write as _;
use traces::Choice;

/// A `display`: a register printed at the focused lane after every command that steps.
#[derive(Debug, Clone)]
pub(super) struct Display {
    id: u32,
    register: String,
    format: Option<Radix>,
}

/// Lines `list` shows around its centre.
const LIST_RADIUS: u32 = 5;

impl Session {
    /// `finish`: the focused warp runs (others when it cannot step) until its call depth is
    /// below the current one, or a breakpoint, a watchpoint or the end stops it first.
    pub(super) fn cmd_finish(&mut self) -> Result<String, DebugError> {
        let (b, w) = (self.focus.block, self.focus.warp);
        if self.machine.warp_view(b, w).is_none() {
            return Err(self.why_not(b, w).into());
        }
        let depth = self.call_depth(b, w);
        if depth == 0 {
            let bn = self.block_name(b);
            return Err(format!(
                "{bn} warp {w} is in the kernel itself, not in a call: `finish` has nothing to return from (`continue` runs to the end)"
            ).into());
        }
        self.resume_from = None;
        let (stop, taken) = self.run_warp_until(b, w, move |d| d < depth);
        let mut s = String::new();
        if matches!(stop, Stop::Done) {
            let bn = self.block_name(b);
            let _ = writeln!(
                s,
                "{bn} warp {w} returned to call depth {} after {taken} step{}",
                self.call_depth(b, w),
                super::plural(taken)
            );
            self.focus.block = b;
            self.focus.warp = w;
            s.push_str(&self.warp_summary(b, w, None));
        }
        s.push_str(&self.stop_text(&stop, taken));
        Ok(s)
    }

    /// Steps warp `b.w` (other warps when it cannot step) until its call depth satisfies
    /// `back` or it completes, or a breakpoint, a watchpoint, the end or the step bound stops
    /// the run first (`next` over a call, `finish`).
    pub(super) fn run_warp_until(
        &mut self,
        b: u32,
        w: u32,
        back: impl Fn(u16) -> bool + Copy + 'static,
    ) -> (Stop, u64) {
        let mut pick = move |s: &Session, m: &Machine, enabled: &[Choice]| -> Option<usize> {
            if back(Session::call_depth_in(m, b, w))
                || m.warp_view(b, w).is_none_or(|v| v.completed)
            {
                return None;
            }
            Some(
                enabled
                    .iter()
                    .position(|c| view::choice_warp(c) == Some((b, w)))
                    .unwrap_or_else(|| s.policy_pick(enabled)),
            )
        };
        self.run(self.options.max_steps, &[], &mut pick, None)
    }

    pub(super) fn cmd_display(
        &mut self,
        register: String,
        format: Option<Radix>,
    ) -> Result<String, DebugError> {
        // Shown now as well (as gdb does); an unknown register is refused here, not later.
        let now = self.cmd_print(&register, ThreadSel::default(), format)?;
        let id = self.take_id();
        self.displays.push(Display {
            id,
            register,
            format,
        });
        Ok(format!("{id}: {now}"))
    }

    pub(super) fn cmd_undisplay(&mut self, id: Option<u32>) -> Result<String, DebugError> {
        match id {
            None => {
                let n = self.displays.len();
                self.displays.clear();
                Ok(format!("deleted {n} display{}\n", super::plural(n as u64)))
            }
            Some(id) => {
                let before = self.displays.len();
                self.displays.retain(|d| d.id != id);
                if self.displays.len() == before {
                    Err(DebugError::NoDisplay(id))
                } else {
                    Ok(format!("deleted display {id}\n"))
                }
            }
        }
    }

    pub(super) fn info_display(&self) -> String {
        if self.displays.is_empty() {
            return "no displays\n".to_string();
        }
        let mut s = String::new();
        for d in &self.displays {
            let fmt = match d.format {
                Some(Radix::Hex) => "/x",
                Some(Radix::Signed) => "/d",
                Some(Radix::Unsigned) => "/u",
                Some(Radix::Binary) => "/t",
                Some(Radix::Float) => "/f",
                None => "",
            };
            let _ = writeln!(s, "{}: display{fmt} {}", d.id, d.register);
        }
        s
    }

    /// Every display's line at the current focus (appended to a command that stepped).
    pub(super) fn displays_text(&self) -> String {
        let mut s = String::new();
        for d in &self.displays {
            match self.cmd_print(&d.register, ThreadSel::default(), d.format) {
                Ok(line) => {
                    let _ = write!(s, "{}: {line}", d.id);
                }
                Err(e) => {
                    let _ = writeln!(s, "{}: {} unavailable: {e}", d.id, d.register);
                }
            }
        }
        s
    }

    /// That block `block` exists, and warp `warp` in it and lane `lane` in that warp where they
    /// are given.
    pub(super) fn thread_exists(
        &self,
        block: u32,
        warp: Option<u32>,
        lane: Option<u32>,
    ) -> Result<(), DebugError> {
        let blocks = self.total_blocks();
        if block >= blocks {
            return Err(DebugError::NoBlock { block, blocks });
        }
        let Some(warp) = warp else { return Ok(()) };
        // The block's own grid's shape: grids of a program may have blocks of other sizes.
        let grid = self.grid_view(block);
        let warps = grid.shape.warps_per_block;
        if warp >= warps {
            return Err(DebugError::NoWarp { warp, warps });
        }
        let lanes = grid.shape.lanes_of_warp(warp);
        match lane {
            Some(lane) if lane >= lanes => Err(DebugError::NoLane { lane, warp, lanes }),
            _ => Ok(()),
        }
    }

    /// `focus` / `cuda`: the parts named change, the others stay; the thread must exist.
    pub(super) fn cmd_focus(&mut self, at: ThreadSel) -> Result<String, DebugError> {
        let block = at.block.unwrap_or(self.focus.block);
        let warp = at.warp.unwrap_or(self.focus.warp);
        let lane = at.lane.unwrap_or(self.focus.lane);
        self.thread_exists(block, Some(warp), Some(lane))?;
        self.focus = Focus { block, warp, lane };
        let mut s = format!(
            "focus: block {block}{} warp {warp} lane {lane}\n",
            self.grid_note(block)
        );
        if self.machine.warp_view(block, warp).is_some() {
            s.push_str(&self.cmd_where()?);
        } else {
            let _ = writeln!(s, "  {}", self.why_not(block, warp));
        }
        Ok(s)
    }

    /// `list`: the focused warp's source line (its `.cu` line when the PTX has line tables and
    /// the file's text is at hand, else its PTX line) with the lines around it; `list LINE` a
    /// line of that same file, `list FILE:LINE` one of another, `list ptx [LINE]` the PTX.
    pub(super) fn cmd_list(&self, at: ListAt) -> Result<String, DebugError> {
        let pc = self
            .machine
            .warp_view(self.focus.block, self.focus.warp)
            .map(|v| v.pc);
        let info = pc.and_then(|pc| self.program.source.get(pc as usize));
        // The focused instruction's line in a source file whose text the session has.
        let here_in_source = info
            .and_then(|s| s.loc)
            .filter(|&(file, line, _)| line != 0 && self.source_files.contains_key(&file))
            .map(|(file, line, _)| (file, line));
        let here_in_ptx = info.map(|s| s.ptx_line);
        match at {
            ListAt::Ptx(line) => self.list_ptx(line, here_in_ptx),
            ListAt::Here | ListAt::Line(_) if here_in_source.is_none() => {
                let line = if let ListAt::Line(n) = at {
                    Some(n)
                } else {
                    None
                };
                self.list_ptx(line, here_in_ptx)
            }
            ListAt::Here => {
                let (file, line) = here_in_source.expect("checked above");
                self.list_text(file, line, Some(line))
            }
            ListAt::Line(n) => {
                let (file, line) = here_in_source.expect("checked above");
                self.list_text(file, n, Some(line))
            }
            ListAt::FileLine(name, n) => {
                let file = source::find_file(&self.program, &name)?;
                let here = here_in_source.filter(|&(f, _)| f == file).map(|(_, l)| l);
                self.list_text(file, n, here)
            }
        }
    }

    /// Lines of source file `file` around `centre`; `=>` marks line `here`.
    fn list_text(&self, file: u32, centre: u32, here: Option<u32>) -> Result<String, DebugError> {
        let name = source::file_name(&self.program, file);
        let Some(text) = self.source_files.get(&file) else {
            return Err(format!(
                "cannot list {name}: its text is not at hand (cudasem reads it from the path the PTX's .file directive names); `list ptx` lists the PTX"
            ).into());
        };
        listing(text, centre, here).map_err(|e| DebugError::Refused(format!("{name}: {e}")))
    }

    /// PTX lines around `line` (or the focused instruction's, `here`).
    fn list_ptx(&self, line: Option<u32>, here: Option<u32>) -> Result<String, DebugError> {
        let Some(text) = self.options.source.as_deref() else {
            return Err("this session has no PTX text to list".into());
        };
        let Some(centre) = line.or(here) else {
            return Err(format!(
                "block {} warp {} is not resident: write `list LINE`",
                self.focus.block, self.focus.warp
            )
            .into());
        };
        listing(text, centre, here).map_err(|e| DebugError::Refused(format!("the PTX: {e}")))
    }
}

/// Lines `centre - LIST_RADIUS ..= centre + LIST_RADIUS` of `text`, numbered; `=>` marks `here`.
fn listing(text: &str, centre: u32, here: Option<u32>) -> Result<String, DebugError> {
    let lines: Vec<&str> = text.lines().collect();
    if centre == 0 || centre as usize > lines.len() {
        return Err(format!("line {centre} is outside the file ({} lines)", lines.len()).into());
    }
    let first = centre.saturating_sub(LIST_RADIUS).max(1);
    let last = (centre + LIST_RADIUS).min(lines.len() as u32);
    let mut s = String::new();
    for n in first..=last {
        let mark = if Some(n) == here { "=>" } else { "  " };
        let _ = writeln!(s, "{mark} {n:>5}  {}", lines[n as usize - 1]);
    }
    Ok(s)
}
