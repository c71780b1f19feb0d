//! The safety invariants of the branching algorithm (thesis chapter 6.4, digest §12.5 and §13),
//! checked after every SIMT-stack warp step when `MachineConfig::check_invariants` is set or in
//! debug builds.
//!
//! Each lane keeps a shadow pc (thesis `Thread_pc`, 6.3.1), moved by the individual-thread rule
//! `branch_Θ` with the stack BEFORE the step, and `reset` after a target split. After the step:
//! * act-cons: every active lane's shadow pc is the warp pc;
//! * inact-cons: every parked (inactive, not exited) lane has an activation token whose pc is
//!   its shadow pc (this is also inv₁);
//! * exited lanes are inactive with no shadow pc; inv₂: some lane is active or all exited;
//! * inv₃: active lanes are in every non-diverge token; inv₅: active lanes are enabled;
//!   inv₆: no token has an empty mask.
//!
//! A violation is a cudasem bug or a control-flow-inconsistent program; it ends the run with an
//! error naming the clause.

use super::warp::simt_stack::{Flow, Outcome};
use super::warp::{Warp, lanes};
use traces::{Disable, TokenKind};

/// What the monitor needs from before the step.
pub(crate) struct Pre {
    pub pc: u32,
    pub active: u64,
    pub top_break: Option<u32>,
    pub top_call: Option<u32>,
}

impl Pre {
    pub fn capture(w: &Warp) -> Pre {
        let top = |k: TokenKind| w.stack.iter().rev().find(|t| t.kind == k).map(|t| t.pc);
        Pre {
            pc: w.pc,
            active: w.active,
            top_break: top(TokenKind::Break),
            top_call: top(TokenKind::Call),
        }
    }
}

/// Moves the shadow pcs (→Θpc, `reset`) and checks the invariants.
pub(crate) fn check(pre: &Pre, out: &Outcome, w: &mut Warp) -> Result<(), String> {
    if w.shadow.is_empty() {
        return Ok(());
    }
    let next = pre.pc + 1;
    let rest = pre.active & !out.exec;
    match out.flow {
        Flow::VirtualSync => {}
        Flow::Seq => {
            for l in lanes(pre.active) {
                w.shadow[l] = Some(next);
            }
        }
        Flow::Jump {
            target,
            taken,
            split,
        } => {
            for l in lanes(taken) {
                w.shadow[l] = Some(target);
            }
            let other = pre.active & !taken;
            for l in lanes(other) {
                w.shadow[l] = Some(if split { pre.pc } else { next });
            }
        }
        Flow::Brk | Flow::Ret | Flow::Exit => {
            let t = match out.flow {
                Flow::Brk => pre.top_break,
                Flow::Ret => pre.top_call,
                _ => None,
            };
            for l in lanes(out.exec) {
                w.shadow[l] = t;
            }
            for l in lanes(rest) {
                w.shadow[l] = Some(next);
            }
        }
    }
    // Invariants.
    for tok in &w.stack {
        if tok.mask == 0 {
            return Err(format!(
                "inv6: token ({}, 0, {}) has an empty mask",
                tok.kind.name(),
                tok.pc
            ));
        }
    }
    if w.active & w.dis.any() != 0 {
        return Err(format!(
            "inv5: active lanes {:#x} are disabled",
            w.active & w.dis.any()
        ));
    }
    if w.active == 0 && !w.completed {
        return Err("inv2: no lane is active but the warp has not completed".to_string());
    }
    for l in lanes(w.active) {
        if w.shadow[l] != Some(w.pc) {
            return Err(format!(
                "act-cons: active lane {l} should be at pc {:?}, the warp is at {}",
                w.shadow[l], w.pc
            ));
        }
        if let Some(t) = w
            .stack
            .iter()
            .find(|t| t.kind != TokenKind::Diverge && t.mask >> l & 1 == 0)
        {
            return Err(format!(
                "inv3: active lane {l} is missing from token ({}, {:#x}, {})",
                t.kind.name(),
                t.mask,
                t.pc
            ));
        }
    }
    for l in lanes(w.real & !w.active) {
        match w.dis.of(l as u32) {
            Disable::Exit => {
                if w.shadow[l].is_some() {
                    return Err(format!("exited lane {l} still has a pc"));
                }
            }
            d => {
                let tok = w.stack.iter().rev().find(|t| {
                    t.mask >> l & 1 == 1
                        && (d != Disable::Break || t.kind == TokenKind::Break)
                        && (d != Disable::Return || t.kind == TokenKind::Call)
                });
                match tok {
                    None => {
                        return Err(format!(
                            "inv1: parked lane {l} ({d:?}) has no activation token"
                        ));
                    }
                    Some(t) if w.shadow[l] != Some(t.pc) => {
                        return Err(format!(
                            "inact-cons: parked lane {l} is at pc {:?}, its activation token ({}, {:#x}, {}) resumes at {}",
                            w.shadow[l],
                            t.kind.name(),
                            t.mask,
                            t.pc,
                            t.pc
                        ));
                    }
                    Some(_) => {}
                }
            }
        }
    }
    Ok(())
}
