//! Breakpoints and watchpoints: where a location resolves to (labels, PTX and source lines,
//! pcs), `break`/`tbreak` with conditions, `watch`, `delete`, `info breakpoints`, and the hits
//! a step makes.

use super::*;
use crate::DebugError;

impl Session {
    /// A fresh number for a breakpoint, watchpoint or display (one sequence for all three,
    /// as gdb numbers them).
    pub(super) fn take_id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    // ----- breakpoints and watchpoints -------------------------------------------------------

    /// The launched kernel.
    pub(super) fn kernel(&self) -> Option<semantics::program::FuncId> {
        let name = self.kernel_name();
        self.program
            .functions
            .iter()
            .position(|f| f.name == name)
            .map(|i| semantics::program::FuncId(i as u32))
    }

    /// A location's pcs (several for a source line entered in several places) and its name.
    pub(super) fn resolve(&self, loc: &Location) -> Result<(Vec<u32>, String), DebugError> {
        let p = &self.program;
        let ptx_line = |line: u32| {
            if line == 0 {
                return Err(DebugError::Refused(
                    "PTX lines count from 1: write ptx:1 or a later line".to_string(),
                ));
            }
            p.source
                .iter()
                .position(|s| s.ptx_line >= line)
                .map(|pc| {
                    (
                        vec![pc as u32],
                        format!("PTX line {}", p.source[pc].ptx_line),
                    )
                })
                .ok_or_else(|| {
                    DebugError::Refused(format!(
                        "no instruction on or after PTX line {line} (the last is on line {})",
                        p.source.last().map_or(0, |s| s.ptx_line)
                    ))
                })
        };
        match loc {
            Location::Pc(pc) => {
                if (*pc as usize) < p.instructions.len() {
                    Ok((vec![*pc], format!("pc {pc}")))
                } else {
                    Err(format!(
                        "pc {pc} is beyond the program (addresses 0 to {})",
                        p.instructions.len().saturating_sub(1)
                    )
                    .into())
                }
            }
            Location::PtxLine(line) => ptx_line(*line),
            // A bare number is a source line where the PTX has them (what a CUDA programmer
            // means), a PTX line otherwise (hand-written PTX, the thesis's listings).
            Location::Line(line) if source::has_lines(p) => {
                source::resolve(p, None, *line, self.kernel())
            }
            Location::Line(line) => ptx_line(*line),
            Location::SourceLine { file, line } => {
                source::resolve(p, Some(file), *line, self.kernel())
            }
            Location::Label { function, name } => {
                let mut found = Vec::new();
                for f in &p.functions {
                    if function.as_ref().is_some_and(|n| *n != f.name) {
                        continue;
                    }
                    for (l, pc) in &f.labels {
                        if l == name {
                            found.push((f.name.clone(), *pc));
                        }
                    }
                }
                match found.as_slice() {
                    [] => {
                        let labels: Vec<&str> = p
                            .functions
                            .iter()
                            .flat_map(|f| f.labels.iter().map(|(l, _)| l.as_str()))
                            .collect();
                        Err(format!(
                            "no label `{name}`{}; labels: {}",
                            function
                                .as_ref()
                                .map(|f| format!(" in `{f}`"))
                                .unwrap_or_default(),
                            if labels.is_empty() {
                                "none".to_string()
                            } else {
                                labels.join(", ")
                            }
                        )
                        .into())
                    }
                    [(_, pc)] => Ok((vec![*pc], name.clone())),
                    many => Err(format!(
                        "label `{name}` is in several functions ({}): write FUNCTION:{name}",
                        many.iter()
                            .map(|(f, _)| f.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                    .into()),
                }
            }
        }
    }

    pub(super) fn cmd_break(
        &mut self,
        at: &Location,
        condition: Option<Condition>,
        temporary: bool,
    ) -> Result<String, DebugError> {
        let (pcs, name) = self.resolve(at)?;
        if let Some(c) = &condition {
            // Check the registers now, against the functions of the breakpoint.
            for pc in &pcs {
                let f = self
                    .program
                    .function_of(*pc)
                    .map(|f| self.program.function(f));
                for o in [&c.lhs, &c.rhs] {
                    if let Operand::Reg(r) = o
                        && f.is_some_and(|f| !f.registers.iter().any(|x| x.name == *r))
                    {
                        return Err(format!("no register `{r}` in the function of {name}").into());
                    }
                }
            }
        }
        let id = self.take_id();
        let kind = if temporary {
            "temporary breakpoint"
        } else {
            "breakpoint"
        };
        let mut s = format!("{kind} {id} at {name}");
        if let Some(c) = &condition {
            let _ = write!(s, " if {c}");
        }
        s.push_str(&self.locations_text(&pcs));
        self.breakpoints.push(Breakpoint {
            id,
            pcs,
            name,
            condition,
            hits: 0,
            temporary,
        });
        Ok(s)
    }

    /// `: pc 3 (...)` for one address, else a line per address.
    pub(super) fn locations_text(&self, pcs: &[u32]) -> String {
        match pcs {
            [pc] => format!(": {}\n", self.pc_text(*pc)),
            _ => {
                let mut s = format!(", {} locations:\n", pcs.len());
                for pc in pcs {
                    let _ = writeln!(s, "      {}", self.pc_text(*pc));
                }
                s
            }
        }
    }

    pub(super) fn cmd_watch(&mut self, t: &WatchTarget) -> Result<String, DebugError> {
        let (space, address, ty, block, name) = match t {
            WatchTarget::Named { name, index } => {
                let (_, r) = self.named_region(name)?;
                let size = semantics::machine::type_size(r.ty) as u64;
                if *index >= r.len {
                    return Err(format!(
                        "`{name}` has {} elements: index {index} is out of range",
                        r.len
                    )
                    .into());
                }
                (
                    r.space,
                    r.address + index * size,
                    r.ty,
                    None,
                    format!("{name}[{index}]"),
                )
            }
            WatchTarget::Shared { address, ty, block } => {
                let ty = ty.unwrap_or(ScalarType::U32);
                if let Some(b) = block {
                    self.thread_exists(*b, None, None)?;
                }
                let name = match block {
                    Some(b) => format!(".shared[{address:#x}] of block {b}"),
                    None => format!(".shared[{address:#x}]"),
                };
                (MemSpace::Shared, *address, ty, *block, name)
            }
            WatchTarget::Global { address, ty } => {
                let ty = ty.unwrap_or(ScalarType::U32);
                (
                    MemSpace::Global,
                    *address,
                    ty,
                    None,
                    format!(".global[{address:#x}]"),
                )
            }
        };
        let size = semantics::machine::type_size(ty) as u64;
        // The last watched byte is `address + size - 1`.
        if address.checked_add(size.saturating_sub(1)).is_none() {
            return Err(format!(
                "{name}: its {size} bytes would run past the end of the address space (the last \
                 address is {:#x})",
                u64::MAX
            )
            .into());
        }
        let id = self.take_id();
        self.watchpoints.push(Watchpoint {
            id,
            space,
            address,
            ty,
            block,
            name: name.clone(),
            hits: 0,
        });
        self.refresh_watched();
        let now = match space {
            MemSpace::Shared => match block {
                Some(b) => self
                    .read_value(space, address, ty, b)
                    .map(|v| view::value_text(ty, v))
                    .unwrap_or_else(|| "not resident".to_string()),
                None => "per block".to_string(),
            },
            _ => self
                .read_value(space, address, ty, 0)
                .map(|v| view::value_text(ty, v))
                .unwrap_or_else(|| "unmapped".to_string()),
        };
        Ok(format!(
            "watchpoint {id} on {name} ({}, now {now})\n",
            ty.directive()
        ))
    }

    pub(super) fn cmd_delete(&mut self, id: Option<u32>) -> Result<String, DebugError> {
        match id {
            None => {
                let n = self.breakpoints.len() + self.watchpoints.len();
                self.breakpoints.clear();
                self.watchpoints.clear();
                self.watched.clear();
                Ok(format!(
                    "deleted {n} breakpoint{} and watchpoint{}\n",
                    plural(n as u64),
                    plural(n as u64)
                ))
            }
            Some(id) => {
                let before = self.breakpoints.len() + self.watchpoints.len();
                self.breakpoints.retain(|b| b.id != id);
                self.watchpoints.retain(|w| w.id != id);
                self.watched.retain(|(w, _), _| *w != id);
                if before == self.breakpoints.len() + self.watchpoints.len() {
                    Err(DebugError::NoBreakpoint(id))
                } else {
                    Ok(format!("deleted {id}\n"))
                }
            }
        }
    }

    pub(super) fn info_breakpoints(&self) -> String {
        if self.breakpoints.is_empty() && self.watchpoints.is_empty() {
            return "no breakpoints or watchpoints\n".to_string();
        }
        let mut s = String::new();
        let mut rows: Vec<(u32, String)> = Vec::new();
        for b in &self.breakpoints {
            let mut t = format!("{:<3} breakpoint  {}", b.id, b.name);
            if let [pc] = b.pcs.as_slice() {
                let _ = write!(t, " ({})", self.pc_text(*pc));
            }
            if let Some(c) = &b.condition {
                let _ = write!(t, " if {c}");
            }
            let _ = write!(t, ", hit {} time{}", b.hits, plural(b.hits));
            if b.pcs.len() > 1 {
                t.push_str(&self.locations_text(&b.pcs));
            }
            rows.push((b.id, t.trim_end().to_string()));
        }
        for w in &self.watchpoints {
            rows.push((
                w.id,
                format!(
                    "{:<3} watchpoint  {} ({}), hit {} time{}",
                    w.id,
                    w.name,
                    w.ty.directive(),
                    w.hits,
                    plural(w.hits)
                ),
            ));
        }
        rows.sort();
        for (_, t) in rows {
            s.push_str(&t);
            s.push('\n');
        }
        s
    }

    /// Re-reads every watched value (after `back`, `trace load` or a new watchpoint).
    pub(super) fn refresh_watched(&mut self) {
        self.watched.clear();
        let blocks = self.total_blocks();
        let ws: Vec<Watchpoint> = self.watchpoints.clone();
        for w in &ws {
            let keys: Vec<u32> = match (w.space, w.block) {
                (MemSpace::Shared, Some(b)) => vec![b],
                (MemSpace::Shared, None) => (0..blocks).collect(),
                _ => vec![0],
            };
            for b in keys {
                if let Some(v) = self.read_value(w.space, w.address, w.ty, b) {
                    self.watched.insert((w.id, b), v);
                }
            }
        }
    }

    /// Checks the last step's writes against the watchpoints.
    pub(super) fn watch_hits(&mut self) -> Option<String> {
        if self.watchpoints.is_empty() {
            return None;
        }
        let (text, seen) = self.watch_check(&self.machine, &self.last_events);
        self.watch_seen(seen);
        (!text.is_empty()).then_some(text)
    }

    /// [`Session::watch_hits`] for a step of a run of machine `m` (the machine after the
    /// step), which did `events`.
    pub(super) fn watch_hits_in(&mut self, m: &Machine, events: &[Event]) -> Option<String> {
        if self.watchpoints.is_empty() {
            return None;
        }
        let (text, seen) = self.watch_check(m, events);
        self.watch_seen(seen);
        (!text.is_empty()).then_some(text)
    }

    /// Counts the hits `watch_check` found and remembers the values it read.
    fn watch_seen(&mut self, seen: Vec<WatchSeen>) {
        for (id, key, new) in seen {
            if let Some(v) = new {
                self.watched.insert((id, key), v);
            }
            if let Some(x) = self.watchpoints.iter_mut().find(|x| x.id == id) {
                x.hits += 1;
            }
        }
    }

    /// The watchpoint report of a step that did `events` in machine `m` (empty when it wrote
    /// no watched byte), and for each hit the watchpoint, the block whose memory it watches (0
    /// outside `.shared`) and the value now there.
    fn watch_check(&self, m: &Machine, events: &[Event]) -> (String, Vec<WatchSeen>) {
        let mut out = String::new();
        let mut seen = Vec::new();
        for w in &self.watchpoints {
            let size = semantics::machine::type_size(w.ty) as u64;
            let mut writers: Vec<(u32, u32, u32)> = Vec::new();
            let mut blocks: Vec<u32> = Vec::new();
            for e in events {
                if let Event::Memory {
                    block,
                    warp,
                    lane,
                    kind: AccessKind::Store | AccessKind::Atomic { .. },
                    space,
                    address,
                    size: n,
                    ..
                } = e
                    && *space == w.space
                    && w.block.is_none_or(|b| b == *block)
                    && overlap((*address, *n as u64), (w.address, size))
                {
                    writers.push((*block, *warp, *lane));
                    let key = if w.space == MemSpace::Shared {
                        *block
                    } else {
                        0
                    };
                    if !blocks.contains(&key) {
                        blocks.push(key);
                    }
                }
            }
            for key in blocks {
                let new = self.read_value_in(m, w.space, w.address, w.ty, key);
                let old = self.watched.get(&(w.id, key)).copied();
                seen.push((w.id, key, new));
                let who: Vec<String> = writers
                    .iter()
                    .filter(|(b, _, _)| w.space != MemSpace::Shared || *b == key)
                    .map(|(b, wa, l)| format!("{b}.{wa} lane {l}"))
                    .collect();
                let _ = writeln!(
                    out,
                    "watchpoint {} {}{}: {} -> {} (written at step {} by warp {})",
                    w.id,
                    w.name,
                    if w.space == MemSpace::Shared && w.block.is_none() {
                        format!(" of block {key}")
                    } else {
                        String::new()
                    },
                    old.map_or_else(|| "?".to_string(), |v| view::value_text(w.ty, v)),
                    new.map_or_else(|| "?".to_string(), |v| view::value_text(w.ty, v)),
                    self.history.len(),
                    who.join(", ")
                );
            }
        }
        (out, seen)
    }
}

/// A watchpoint hit: the watchpoint, the block whose memory it watches (0 outside `.shared`),
/// and the value read there after the step.
type WatchSeen = (u32, u32, Option<u64>);

/// Whether the byte ranges `[a, a + m)` and `[b, b + n)` share a byte (an access near the end
/// of the address space does not wrap around to its start).
fn overlap((a, m): (u64, u64), (b, n): (u64, u64)) -> bool {
    let (a, m, b, n) = (a as u128, m as u128, b as u128, n as u128);
    a < b + n && b < a + m
}
