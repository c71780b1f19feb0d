//! Read-only views of the cached memory for debuggers (`caches`: per-SM L1 lines, L2 lines,
//! in-flight ops with their program listing and current statement, dependencies, bank locks).
//!
//! Views copy what they show (no borrow of the engine's types escapes the crate), in a
//! deterministic order: lines by key, ops by id, locks by (block, bank).

use super::engine::{self, Op};
use super::line::{EvClass, Key, Line};
use super::program::{Fold, Stm};
use super::{Cached, OpId, Request};
use crate::{MemSpace, Who};
use serde::Serialize;

/// One cache line as a debugger shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineView {
    /// The line's key (global: its base address; local: an encoding in the local generic
    /// window, the `line` of [`super::MemChoice`]).
    pub key: u64,
    pub space: MemSpace,
    /// The owning thread of a local line.
    pub who: Option<Who>,
    /// The line's base address in its space.
    pub addr: u64,
    /// The line's bytes (`line_bytes` of them; invalid bytes read as 0).
    pub bytes: Vec<u8>,
    /// Bit i: byte i valid / dirty.
    pub valid: u64,
    pub dirty: u64,
    pub pins: Vec<OpId>,
    pub class: EvClass,
    pub fill_pending: bool,
    /// Invalidated by a flush while pinned: only its pinners still see it (A10 repair).
    pub doomed: bool,
}

/// One in-flight op.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpView {
    pub id: OpId,
    pub request: Request,
    /// The program's name (`None`: no program exists for the request).
    pub program: Option<&'static str>,
    /// The program's statements, one per line, indented by `if` nesting.
    pub listing: Vec<String>,
    /// Index into `listing` of the next statement.
    pub pc: usize,
    /// Ops that must end before this one may step.
    pub deps: Vec<OpId>,
    /// σ's loaded/old value and an atomic's new value.
    pub value: u64,
    pub new: u64,
}

/// A held shared-memory bank lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LockView {
    pub block: u32,
    pub bank: u32,
    pub holder: OpId,
}

impl Cached {
    fn line_view(&self, key: Key, l: &Line, doomed: bool) -> LineView {
        let (space, who, addr) = engine::decode_key(key);
        LineView {
            key,
            space,
            who,
            addr,
            bytes: l.data[..self.line_bytes as usize].to_vec(),
            valid: l.valid,
            dirty: l.dirty,
            pins: l.pins.to_vec(),
            class: l.class,
            fill_pending: l.fill_pending,
            doomed,
        }
    }

    /// SM `sm`'s L1 lines: live ones by key, then doomed ones in the order they were doomed.
    pub fn l1_lines(&self, sm: u32) -> Vec<LineView> {
        let Some(c) = self.l1.get(sm) else {
            return Vec::new();
        };
        let live = c
            .live
            .lines()
            .iter()
            .map(|(k, l)| self.line_view(*k, l, false));
        let doomed = c.doomed().map(|(k, l)| self.line_view(*k, l, true));
        live.chain(doomed).collect()
    }

    /// The L2 lines by key.
    pub fn l2_lines(&self) -> Vec<LineView> {
        self.l2
            .lines()
            .iter()
            .map(|(k, l)| self.line_view(*k, l, false))
            .collect()
    }

    /// The in-flight ops by id.
    pub fn ops(&self) -> Vec<OpView> {
        self.ops
            .iter()
            .enumerate()
            .filter_map(|(i, o)| o.as_ref().map(|o| op_view(i as OpId, o)))
            .collect()
    }

    /// The held bank locks.
    pub fn locks(&self) -> Vec<LockView> {
        self.locks
            .iter()
            .map(|((block, bank), holder)| LockView {
                block: *block,
                bank: *bank,
                holder: *holder,
            })
            .collect()
    }

    /// How many live lines each L1 (by SM) and the L2 hold (capacity checks, I2).
    pub fn line_count(&self) -> (Vec<usize>, usize) {
        (
            (0..self.l1.count())
                .map(|sm| self.l1.get(sm).map_or(0, |c| c.live.len()))
                .collect(),
            self.l2.len(),
        )
    }
}

/// Every memory program: its name and listing (the debugger's `programs`; tests).
pub fn programs() -> Vec<(&'static str, Vec<String>)> {
    super::program::ALL
        .iter()
        .map(|p| {
            let p = p.program();
            (p.name, listing(p.stms))
        })
        .collect()
}

fn op_view(id: OpId, o: &Op) -> OpView {
    let prog = o.prog.map(|p| p.program());
    OpView {
        id,
        request: o.req,
        program: prog.as_ref().map(|p| p.name),
        listing: prog.map(|p| listing(p.stms)).unwrap_or_default(),
        pc: o.pc as usize,
        deps: o.deps.to_vec(),
        value: o.value,
        new: o.new,
    }
}

/// The statements as text, indented by `if` nesting (`skip` marks where a block closes).
pub fn listing(stms: &[Stm]) -> Vec<String> {
    let mut open: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    for (i, s) in stms.iter().enumerate() {
        while open.last() == Some(&i) {
            open.pop();
        }
        let indent = "  ".repeat(open.len());
        out.push(match s {
            Stm::Op(n) => format!("{indent}{};", n.name()),
            Stm::Yield => format!("{indent}yield;"),
            Stm::Fold(Fold::LeftMover) => format!("{indent}yield; (folded: left mover after)"),
            Stm::Fold(Fold::RightMover) => {
                format!("{indent}yield; (folded: right mover before)")
            }
            Stm::End => format!("{indent}end;"),
            Stm::IfNot(c, skip) => {
                open.push(*skip as usize);
                format!("{indent}if (!{}) {{ … }} (to {skip})", c.name())
            }
        });
    }
    out
}
