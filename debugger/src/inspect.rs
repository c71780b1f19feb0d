//! Inspection: registers (`print`, `regs`), where the focused warp is (`where`, `stack`), the
//! warps, blocks, barriers and caches of the machine, the rule behind the last step, traces
//! (`trace save/load`) and `status`.

use super::*;
use crate::DebugError;

impl Session {
    // ----- inspection -------------------------------------------------------------------------

    /// The function a lane is in, from its call depth (registers are per function).
    pub(super) fn lane_function(
        &self,
        b: u32,
        w: u32,
        lane: u32,
    ) -> Result<&semantics::program::Function, DebugError> {
        self.lane_function_in(&self.machine, b, w, lane)
    }

    /// [`Session::lane_function`] in machine `m`.
    pub(super) fn lane_function_in(
        &self,
        m: &Machine,
        b: u32,
        w: u32,
        lane: u32,
    ) -> Result<&semantics::program::Function, DebugError> {
        let v = m
            .warp_view(b, w)
            .ok_or_else(|| DebugError::from(self.why_not_in(m, b, w)))?;
        let pc = if self.config.warp_model == semantics::machine::WarpModel::SimtStack {
            v.pc
        } else {
            *v.lane_pcs.get(lane as usize).unwrap_or(&v.pc)
        };
        let depth = *v.depth.get(lane as usize).unwrap_or(&0);
        let active_depth = Session::call_depth_in(m, b, w);
        let f = if depth == 0 {
            // The kernel of the block's own grid (a program's grids run different kernels).
            let kernel = self.grid_kernel(m.grid_of_block(b).0 as usize);
            self.program
                .functions
                .iter()
                .position(|f| f.name == kernel)
                .map(|i| semantics::program::FuncId(i as u32))
        } else if depth == active_depth
            || self.config.warp_model != semantics::machine::WarpModel::SimtStack
        {
            self.program.function_of(pc)
        } else {
            None
        };
        f.map(|f| self.program.function(f)).ok_or_else(|| {
            DebugError::Refused(format!("lane {lane} waits in a caller's frame (call depth {depth}); its registers show when it is active again"))
        })
    }

    /// A register's type and raw bits in one lane.
    pub(super) fn register_value(
        &self,
        name: &str,
        b: u32,
        w: u32,
        lane: u32,
    ) -> Result<(ScalarType, u64), DebugError> {
        self.register_value_in(&self.machine, name, b, w, lane)
    }

    /// [`Session::register_value`] in machine `m`.
    pub(super) fn register_value_in(
        &self,
        m: &Machine,
        name: &str,
        b: u32,
        w: u32,
        lane: u32,
    ) -> Result<(ScalarType, u64), DebugError> {
        let lanes = self.lanes_in_warp_in(m, b, w);
        if lane >= lanes {
            return Err(format!(
                "warp {w} has {} lane{} (0 to {})",
                lanes,
                plural(lanes as u64),
                lanes.saturating_sub(1)
            )
            .into());
        }
        let f = self.lane_function_in(m, b, w, lane)?;
        let Some(i) = f.registers.iter().position(|r| r.name == name) else {
            let mut near: Vec<&str> = f.registers.iter().map(|r| r.name.as_str()).collect();
            near.truncate(12);
            return Err(format!(
                "no register `{name}` in `{}`; its registers include {}",
                f.name,
                near.join(", ")
            )
            .into());
        };
        let ty = f.registers[i].ty;
        let bits = m
            .register(b, w, lane, semantics::program::RegId(i as u16))
            .ok_or_else(|| format!("register `{name}` of lane {lane} is not readable now"))?;
        Ok((ty, bits))
    }

    pub(super) fn cmd_print(
        &self,
        reg: &str,
        at: ThreadSel,
        format: Option<command::Radix>,
    ) -> Result<String, DebugError> {
        let b = at.block.unwrap_or(self.focus.block);
        let w = at.warp.unwrap_or(self.focus.warp);
        let l = at.lane.unwrap_or(self.focus.lane);
        if !self
            .program
            .functions
            .iter()
            .any(|f| f.registers.iter().any(|r| r.name == reg))
        {
            return Err(format!(
                "no register `{reg}` in this program (`regs` lists the focused warp's registers)"
            )
            .into());
        }
        self.thread_exists(b, Some(w), None)?;
        let (ty, bits) = self.register_value(reg, b, w, l)?;
        let active = self
            .machine
            .warp_view(b, w)
            .is_some_and(|v| v.active >> l & 1 == 1);
        let value = match format {
            Some(radix) => radix.text(bits, semantics::machine::type_size(ty)),
            None => view::value_text(ty, bits),
        };
        let bn = self.block_name(b);
        Ok(format!(
            "{reg} = {value} ({}, {bn} warp {w} lane {l}{})\n",
            ty.directive(),
            if active { "" } else { ", inactive" }
        ))
    }

    pub(super) fn cmd_regs(&self) -> Result<String, DebugError> {
        let (b, w) = (self.focus.block, self.focus.warp);
        let v = self.warp_or_why(b, w)?;
        let lanes = self.lanes_in_warp(b, w);
        let mut columns: Vec<(String, Vec<String>)> = Vec::new();
        let mut function_name = String::new();
        let mut per_lane: Vec<Option<&semantics::program::Function>> = Vec::new();
        for l in 0..lanes {
            per_lane.push(self.lane_function(b, w, l).ok());
        }
        if let Some(f) = per_lane.iter().flatten().next() {
            function_name = f.name.clone();
            for (i, r) in f.registers.iter().enumerate() {
                let vals = (0..lanes)
                    .map(|l| match per_lane[l as usize] {
                        Some(g) if g.name == f.name => self
                            .machine
                            .register(b, w, l, semantics::program::RegId(i as u16))
                            .map_or_else(|| "?".to_string(), |x| view::value_text(r.ty, x)),
                        _ => "·".to_string(),
                    })
                    .collect();
                columns.push((r.name.to_string(), vals));
            }
        }
        let bn = self.block_name(b);
        let mut s = format!(
            "registers of {bn} warp {w} in `{function_name}` (lane marks: * active, b/r/x disabled by break/return/exit)\n"
        );
        s.push_str(&view::lane_table(&columns, lanes, &v));
        Ok(s)
    }

    /// `pc 19 (line 52, DIVERGE+0): mul.lo.u32 %c, %a, %b;`
    pub(super) fn pc_text(&self, pc: u32) -> String {
        view::pc_text(&self.program, self.options.source.as_deref(), pc)
    }

    pub(super) fn cmd_where(&self) -> Result<String, DebugError> {
        let (b, w) = (self.focus.block, self.focus.warp);
        let v = self.warp_or_why(b, w)?;
        let bn = self.block_name(b);
        let mut s = format!(
            "{bn} warp {w} lane {} at step {}\n",
            self.focus.lane,
            self.history.len()
        );
        if self.config.warp_model == semantics::machine::WarpModel::SimtStack {
            let _ = writeln!(s, "  {}", self.pc_text(v.pc));
            if let Some(src) = view::source_text(&self.program, v.pc) {
                let _ = writeln!(s, "  source {src}");
            }
        } else {
            let mut groups: BTreeMap<u32, u64> = BTreeMap::new();
            for l in 0..self.lanes_in_warp(b, w) {
                if v.exited >> l & 1 == 0 {
                    *groups.entry(v.lane_pcs[l as usize]).or_default() |= 1 << l;
                }
            }
            for (pc, m) in groups {
                let _ = writeln!(s, "  lanes {}: {}", view::bits_text(m), self.pc_text(pc));
            }
        }
        Ok(s)
    }

    /// A warp's SIMT state: one thesis-style row plus, with `lanes`, the lanes at a stop.
    pub(super) fn warp_summary(&self, b: u32, w: u32, lanes: Option<u64>) -> String {
        let Some(v) = self.machine.warp_view(b, w) else {
            return format!("  {}\n", self.why_not(b, w));
        };
        let n = self.lanes_in_warp(b, w);
        let ws = self.warp_size();
        let mut s = format!("  {}\n", self.pc_text(v.pc));
        if let Some(src) = view::source_text(&self.program, v.pc) {
            let _ = writeln!(s, "  source {src}");
        }
        if self.config.warp_model == semantics::machine::WarpModel::SimtStack {
            let real = lane_mask(n);
            let inactive = real & !v.active & !v.exited;
            let _ = writeln!(
                s,
                "  α {}  δ {}  τ {}",
                semantics::machine::render::mask_string(v.active, ws),
                semantics::machine::render::disable_string(&v.disabled, ws),
                view::stack_text(&self.program, &v.stack, ws)
            );
            let _ = write!(s, "  active lanes {}", view::bits_text(v.active & real));
            if inactive != 0 {
                let _ = write!(s, "; inactive lanes {}", view::bits_text(inactive));
                if let Some(t) = v.stack.iter().find(|t| t.mask & inactive != 0) {
                    let _ = write!(
                        s,
                        " (they resume from the {} token at {})",
                        t.kind.name(),
                        view::line_of(&self.program, t.pc)
                    );
                }
            }
            if v.exited & real != 0 {
                let _ = write!(s, "; exited lanes {}", view::bits_text(v.exited & real));
            }
            s.push('\n');
        }
        if let Some(m) = lanes
            && m != v.active
        {
            let _ = writeln!(s, "  condition holds in lanes {}", view::bits_text(m));
        }
        s
    }

    pub(super) fn cmd_stack(&self) -> Result<String, DebugError> {
        let (b, w) = (self.focus.block, self.focus.warp);
        let v = self.warp_or_why(b, w)?;
        if self.config.warp_model != semantics::machine::WarpModel::SimtStack {
            let bn = self.block_name(b);
            return Ok(format!(
                "{bn} warp {w}: the {} model has no token stack; `where` shows the lanes' pcs\n",
                view::model_name(self.config.warp_model)
            ));
        }
        let ws = self.warp_size();
        let row = semantics::machine::render::StackRow {
            pc: v.pc,
            active: v.active,
            disabled: v.disabled,
            stack: v.stack.clone(),
        };
        let program = &self.program;
        let label = |pc: u32| Some(view::line_label(program, pc));
        let bn = self.block_name(b);
        let mut s = format!("{bn} warp {w}, next instruction {}\n", self.pc_text(v.pc));
        s.push_str(&semantics::machine::render::stack_table(
            &[row],
            ws,
            true,
            &label,
        ));
        if v.waiting != 0 {
            let _ = writeln!(
                s,
                "waiting at barrier {}",
                view::bits_text(v.waiting as u64)
            );
        }
        Ok(s)
    }

    pub(super) fn cmd_stack_table(&self, rows: Option<u64>) -> Result<String, DebugError> {
        let (b, w) = (self.focus.block, self.focus.warp);
        if self.config.warp_model != semantics::machine::WarpModel::SimtStack {
            return Err(format!(
                "the {} model has no token stack",
                view::model_name(self.config.warp_model)
            )
            .into());
        }
        // Replay (at most the last 100000 steps) to collect the warp's rows.
        let now = self.history.len();
        let from = now.saturating_sub(100_000);
        let mut m = self
            .history
            .state_at(from, None)
            .map_err(|e| DebugError::Internal(e.to_string()))?;
        let mut events = Vec::new();
        for c in &self.history.choices()[from as usize..] {
            m.step_observed(c, &mut events)
                .map_err(|e| DebugError::Internal(e.to_string()))?;
            events.retain(
                |e| matches!(e, Event::Executed { block, warp, .. } if *block == b && *warp == w),
            );
        }
        let mut all = semantics::machine::render::stack_rows(&events, b, w);
        if let Some(n) = rows {
            let skip = all.len().saturating_sub(n as usize);
            all.drain(..skip);
        }
        let program = &self.program;
        let label = |pc: u32| Some(view::line_label(program, pc));
        let bn = self.block_name(b);
        let mut s = format!(
            "{bn} warp {w}: per step the PTX line executed, then α, δ and τ after it (tokens name PTX lines)\n"
        );
        s.push_str(&semantics::machine::render::stack_table(
            &all,
            self.warp_size(),
            true,
            &label,
        ));
        Ok(s)
    }

    pub(super) fn cmd_warps(&self) -> String {
        let ws = self.warp_size();
        let enabled: Vec<(u32, u32)> = self
            .machine
            .enabled()
            .iter()
            .filter_map(view::choice_warp)
            .collect();
        let mut rows: Vec<[String; 7]> = vec![[
            "warp".into(),
            "pc".into(),
            "line".into(),
            "α".into(),
            "δ".into(),
            "|τ|".into(),
            "state".into(),
        ]];
        for b in 0..self.total_blocks() {
            for w in 0..self.warps_in_block(b) {
                let Some(v) = self.machine.warp_view(b, w) else {
                    continue;
                };
                let state = if v.completed {
                    "completed".to_string()
                } else if v.waiting != 0 {
                    format!("waits at barrier {}", view::bits_text(v.waiting as u64))
                } else if enabled.contains(&(b, w)) {
                    "enabled".to_string()
                } else {
                    "blocked".to_string()
                };
                let mark = if (b, w) == (self.focus.block, self.focus.warp) {
                    "→"
                } else {
                    " "
                };
                rows.push([
                    format!("{mark}{b}.{w}{}", self.grid_note(b)),
                    v.pc.to_string(),
                    view::line_of(&self.program, v.pc),
                    semantics::machine::render::mask_string(v.active, ws),
                    semantics::machine::render::disable_string(&v.disabled, ws),
                    v.stack.len().to_string(),
                    state,
                ]);
            }
        }
        if rows.len() == 1 {
            return "no resident warps\n".to_string();
        }
        view::table(&rows)
    }

    /// Issued blocks, from the log: blocks are issued in linear order (deviation D8).
    pub(super) fn issued(&self) -> BTreeMap<u32, u32> {
        self.history
            .choices()
            .iter()
            .filter_map(|c| match c {
                Choice::Issue { block, sm, .. } => Some((*block, *sm)),
                _ => None,
            })
            .collect()
    }

    pub(super) fn cmd_blocks(&self) -> String {
        let issued = self.issued();
        let mut s = format!(
            "{} block{} in the grid\n",
            self.total_blocks(),
            plural(self.total_blocks() as u64)
        );
        let mut unscheduled = Vec::new();
        for b in 0..self.total_blocks() {
            match issued.get(&b) {
                None => unscheduled.push(b),
                Some(sm) => {
                    let resident = self.machine.warp_view(b, 0).is_some();
                    if resident {
                        let done = (0..self.warps_in_block(b))
                            .filter(|w| self.machine.warp_view(b, *w).is_some_and(|v| v.completed))
                            .count();
                        let _ = writeln!(
                            s,
                            "  block {b}: resident on SM {sm}, {done} of {} warps completed",
                            self.warps_in_block(b)
                        );
                    } else {
                        let _ = writeln!(s, "  block {b}: completed (ran on SM {sm})");
                    }
                }
            }
        }
        if !unscheduled.is_empty() {
            let _ = writeln!(s, "  not issued yet: {}", ranges(&unscheduled));
        }
        s
    }

    /// `caches`: per-SM L1 lines, L2 lines, in-flight memory programs and bank locks (cached
    /// memory); thesis 4.2-4.6.
    pub(super) fn cmd_caches(&self) -> String {
        let Some(c) = self.machine.cache() else {
            return "caches: this session runs flat memory (sequentially consistent, no caches); \
                    start it with `--memory cached` for thesis chapter 4's L1/L2 and memory programs\n"
                .to_string();
        };
        let cfg = *c.config();
        let mut s = String::new();
        let (l1_counts, l2_count) = c.line_count();
        let line = |s: &mut String, l: &memory_model::cached::LineView| {
            let words: Vec<String> = l
                .bytes
                .chunks(4)
                .enumerate()
                .map(|(i, w)| {
                    let m = (l.valid >> (i * 4)) & 0xF;
                    if m == 0xF {
                        let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                        let star = if (l.dirty >> (i * 4)) & 0xF != 0 {
                            "*"
                        } else {
                            ""
                        };
                        format!("{v:#010x}{star}")
                    } else if m == 0 {
                        "----------".to_string()
                    } else {
                        "??????????".to_string()
                    }
                })
                .collect();
            let owner = l
                .who
                .map(|w| format!(" (block {} thread {})", w.block, w.thread))
                .unwrap_or_default();
            let mut flags = Vec::new();
            if !l.pins.is_empty() {
                flags.push(format!("pinned by {:?}", l.pins));
            }
            if l.fill_pending {
                flags.push("fill pending".to_string());
            }
            if l.doomed {
                flags.push("doomed".to_string());
            }
            if l.class == memory_model::cached::EvClass::First {
                flags.push("evict-first".to_string());
            }
            let _ = writeln!(
                s,
                "  {} {:#x}{owner}: {}{}",
                memory_model::space_name(l.space),
                l.addr,
                words.join(" "),
                if flags.is_empty() {
                    String::new()
                } else {
                    format!("  [{}]", flags.join(", "))
                }
            );
        };
        let _ = writeln!(
            s,
            "lines of {} bytes (words little-endian, * dirty, ---------- not valid); silent rules: {:?}",
            cfg.line_bytes, cfg.silent
        );
        for (sm, n) in l1_counts.iter().enumerate() {
            let lines = c.l1_lines(sm as u32);
            if lines.is_empty() {
                continue;
            }
            let _ = writeln!(s, "L1 of SM {sm} ({n} of {} lines):", cfg.l1_lines);
            for l in &lines {
                line(&mut s, l);
            }
        }
        let _ = writeln!(s, "L2 ({l2_count} of {} lines):", cfg.l2_lines);
        for l in &c.l2_lines() {
            line(&mut s, l);
        }
        let ops = c.ops();
        if ops.is_empty() {
            let _ = writeln!(s, "no memory operation in flight");
        }
        for op in &ops {
            let r = &op.request;
            let _ = writeln!(
                s,
                "op {}: block {} thread {} on SM {}, {} {:#x} ({} bytes, {:?}){}",
                op.id,
                r.who.block,
                r.who.thread,
                r.sm,
                op.program.unwrap_or("(no program)"),
                r.addr,
                r.size,
                r.order,
                if op.deps.is_empty() {
                    String::new()
                } else {
                    format!(", waits for ops {:?}", op.deps)
                }
            );
            for (i, stm) in op.listing.iter().enumerate() {
                let mark = if i == op.pc { "→" } else { " " };
                let _ = writeln!(s, "   {mark} {stm}");
            }
        }
        for l in c.locks() {
            let _ = writeln!(
                s,
                "bank lock: block {} bank {} held by op {}",
                l.block, l.bank, l.holder
            );
        }
        s
    }

    pub(super) fn cmd_barriers(&self) -> String {
        let mut s = String::new();
        for b in 0..self.total_blocks() {
            let Some(bars) = self.machine.barrier_views(b) else {
                continue;
            };
            for bar in bars {
                let waiting: Vec<String> = (0..self.warps_in_block(b))
                    .filter(|w| {
                        self.machine
                            .warp_view(b, *w)
                            .is_some_and(|v| v.waiting >> bar.index & 1 == 1)
                    })
                    .map(|w| w.to_string())
                    .collect();
                let _ = writeln!(
                    s,
                    "block {b} barrier {}: {} of {} threads arrived{}{}; warps waiting: {}",
                    bar.index,
                    bar.arrived,
                    bar.expected,
                    bar.reduction
                        .map(|r| format!(", bar.red.{r}"))
                        .unwrap_or_default(),
                    if bar.arrived >= bar.expected {
                        ", ready to end (endBar)"
                    } else {
                        ""
                    },
                    if waiting.is_empty() {
                        "none".to_string()
                    } else {
                        waiting.join(", ")
                    }
                );
            }
        }
        if s.is_empty() {
            s.push_str("no barrier is in use\n");
        }
        s
    }

    pub(super) fn choice_text(&self, c: &Choice) -> String {
        match c {
            Choice::Issue { block, sm, .. } => {
                format!("issue {} on SM {sm} (issueBlocks)", self.block_name(*block))
            }
            Choice::EndBarrier { block, barrier } => {
                format!(
                    "end barrier {barrier} of {} (endBar)",
                    self.block_name(*block)
                )
            }
            Choice::Warp { block, warp }
            | Choice::Target { block, warp, .. }
            | Choice::Lanes { block, warp, .. } => {
                let at = self
                    .choice_pc(c)
                    .map(|(_, _, pc, _)| self.pc_text(pc))
                    .unwrap_or_default();
                let name = self.warp_name(*block, *warp);
                match c {
                    Choice::Target { k, .. } => format!("{name} target group {k}: {at}"),
                    Choice::Lanes { mask, .. } => {
                        format!("{name} lanes {}: {at}", view::bits_text(*mask))
                    }
                    _ => format!("{name}: {at}"),
                }
            }
            Choice::Mem(_) | Choice::Pick { .. } => c.to_string(),
        }
    }

    /// One line for the last step: what it executed and the warp's state after it.
    pub(super) fn step_line(&self) -> String {
        self.step_line_of(&self.machine, &self.last_events)
    }

    /// [`Session::step_line`] for the last step of a run of machine `m`, which did `events`.
    pub(super) fn step_line_of(&self, m: &Machine, events: &[Event]) -> String {
        let step = self.history.len();
        let ws = self.warp_size();
        let mut s = String::new();
        for e in events {
            match e {
                Event::Executed {
                    block,
                    warp,
                    pc,
                    lanes,
                    active,
                    disabled,
                    stack,
                    derivation,
                    ..
                } => {
                    let _ = writeln!(
                        s,
                        "[{step}] {} {}",
                        self.warp_name_in(m, *block, *warp),
                        self.pc_text(*pc)
                    );
                    if self.config.warp_model == semantics::machine::WarpModel::SimtStack {
                        let _ = writeln!(
                            s,
                            "      lanes {}  →  α {}  δ {}  τ {}   ({derivation})",
                            view::bits_text(*lanes),
                            semantics::machine::render::mask_string(*active, ws),
                            semantics::machine::render::disable_string(disabled, ws),
                            view::stack_text(&self.program, stack, ws)
                        );
                    } else {
                        let _ = writeln!(
                            s,
                            "      lanes {}   ({derivation})",
                            view::bits_text(*lanes)
                        );
                    }
                }
                Event::BlockIssued { block, sm, .. } => {
                    let _ = writeln!(
                        s,
                        "[{step}] {} issued on SM {sm}",
                        self.block_name_in(m, *block)
                    );
                }
                Event::MemoryStep {
                    choice,
                    operations,
                    delivered,
                    derivation,
                } => {
                    let _ = writeln!(s, "[{step}] {choice}: {operations}   ({derivation})");
                    if let Some((block, warp, lane, value)) = delivered {
                        let _ = writeln!(
                            s,
                            "      delivered {value:#x} to {} lane {lane}",
                            self.warp_name_in(m, *block, *warp)
                        );
                    }
                }
                Event::BarrierCompleted { block, barrier, .. } => {
                    let _ = writeln!(
                        s,
                        "[{step}] barrier {barrier} of {} completed (endBar)",
                        self.block_name_in(m, *block)
                    );
                }
                Event::BarrierArrived {
                    block,
                    warp,
                    barrier,
                    arrived,
                    expected,
                    ..
                } => {
                    let _ = writeln!(
                        s,
                        "      {} arrived at barrier {barrier}: {arrived} of {expected} threads",
                        self.warp_name_in(m, *block, *warp)
                    );
                }
                Event::WarpCompleted { block, warp, .. } => {
                    let _ = writeln!(s, "      {} completed", self.warp_name_in(m, *block, *warp));
                }
                Event::BlockCompleted { block, .. } => {
                    let _ = writeln!(s, "      {} completed", self.block_name_in(m, *block));
                }
                Event::Memory { .. } | Event::WarpMemory { .. } => {}
            }
        }
        if s.is_empty() && step > 0 {
            let _ = writeln!(
                s,
                "[{step}] {}",
                self.history
                    .choices()
                    .last()
                    .map(|c| c.to_string())
                    .unwrap_or_default()
            );
        }
        s
    }

    pub(super) fn cmd_rule(&self) -> String {
        if self.last_events.is_empty() {
            return "no step taken yet\n".to_string();
        }
        let mut seen: Vec<&traces::Derivation> = Vec::new();
        let mut s = format!(
            "step {}: {}\n",
            self.history.len(),
            self.history
                .choices()
                .last()
                .map(|c| c.to_string())
                .unwrap_or_default()
        );
        let mut rules: Vec<traces::Rule> = Vec::new();
        for e in &self.last_events {
            let d = e.derivation();
            if seen.contains(&d) {
                continue;
            }
            seen.push(d);
            let _ = writeln!(s, "derivation: {d}");
            for r in &d.0 {
                if !rules.contains(r) {
                    rules.push(*r);
                }
            }
        }
        for r in rules {
            s.push('\n');
            s.push_str(&semantics::rules::doc(r).render());
        }
        s
    }

    pub(super) fn cmd_trace(&mut self, op: TraceOp) -> Result<String, DebugError> {
        match op {
            TraceOp::Save(path) => {
                let t = TraceRecord {
                    program_hash: self.program.hash,
                    choices: self.history.choices().to_vec(),
                };
                self.host.save_trace(&path, &t)?;
                Ok(format!(
                    "saved {} choice{} to {path}\n",
                    t.choices.len(),
                    plural(t.choices.len() as u64)
                ))
            }
            TraceOp::Load(path) => {
                let t = self.host.load_trace(&path)?;
                if t.program_hash != self.program.hash {
                    return Err(format!(
                        "{path} was recorded for another program (hash {:#x}, this one {:#x})",
                        t.program_hash, self.program.hash
                    )
                    .into());
                }
                // Replay on a copy: a trace that diverges leaves the session as it was.
                let mut m = self.initial.clone();
                let mut h =
                    History::new(&m, self.options.snapshot_every, self.options.max_snapshots);
                let mut note = String::new();
                for (i, c) in t.choices.iter().enumerate() {
                    if !m.enabled().contains(c) {
                        let _ = writeln!(
                            note,
                            "choice {i} (`{c}`) is not enabled there: stopped at step {i}"
                        );
                        break;
                    }
                    m.step(c).map_err(|e| DebugError::Internal(e.to_string()))?;
                    h.record(*c, &m);
                }
                let n = h.len();
                self.machine = m;
                self.history = h;
                self.last_events.clear();
                self.resume_from = None;
                if n > 0 {
                    let mut events = Vec::new();
                    if let Ok(m) = self.history.state_at(n, Some(&mut events)) {
                        self.machine = m;
                        self.last_events = events;
                    }
                }
                self.refresh_watched();
                let mut s = format!(
                    "replayed {n} of {} choices from {path}; now at step {n}\n",
                    t.choices.len()
                );
                s.push_str(&note);
                s.push_str(&self.step_line());
                Ok(s)
            }
        }
    }

    pub(super) fn cmd_status(&self) -> String {
        let state = match self.machine.termination() {
            Some(t) => format!("ended: {t}"),
            None => format!(
                "running, {} choice{} enabled",
                self.machine.enabled().len(),
                plural(self.machine.enabled().len() as u64)
            ),
        };
        format!(
            "step {}; {state}\npolicy {}; focus block {} warp {} lane {}; {} snapshot{} for `back`\n",
            self.history.len(),
            self.options.policy.text(),
            self.focus.block,
            self.focus.warp,
            self.focus.lane,
            self.history.snapshot_count(),
            plural(self.history.snapshot_count() as u64)
        )
    }
}
