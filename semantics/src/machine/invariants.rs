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
use super::warp::{ModelState, Warp, lanes};
use crate::program::Pc;
use traces::{Disable, TokenKind};

/// What the monitor needs from before the step.
pub(crate) struct Pre {
    pub pc: u32,
    pub active: u64,
    pub top_break: Option<u32>,
    pub top_call: Option<u32>,
}

impl Pre {
    /// The state before a step of a SIMT-stack warp (`None` under ITS, whose lanes have no
    /// stack to check).
    pub fn capture(w: &Warp) -> Option<Pre> {
        let ModelState::Simt(s) = &w.model else {
            return None;
        };
        let top = |k: TokenKind| s.stack.iter().rev().find(|t| t.kind == k).map(|t| t.pc);
        Some(Pre {
            pc: s.pc,
            active: s.active,
            top_break: top(TokenKind::Break),
            top_call: top(TokenKind::Call),
        })
    }
}

/// A safety invariant of the branching algorithm (thesis 6.4) that does not hold after a step,
/// named as the thesis names it (inv1-inv6, and the consistency of active and parked lanes'
/// pcs with their shadow pcs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum InvariantViolation {
    #[error("inv6: token ({kind}, 0, {pc}) has an empty mask")]
    EmptyToken { kind: &'static str, pc: Pc },
    #[error("inv5: active lanes {0:#x} are disabled")]
    ActiveDisabled(u64),
    #[error("inv2: no lane is active but the warp has not completed")]
    NoActiveLane,
    #[error("act-cons: active lane {lane} should be at pc {shadow:?}, the warp is at {pc}")]
    ActiveElsewhere {
        lane: usize,
        shadow: Option<Pc>,
        pc: Pc,
    },
    #[error("inv3: active lane {lane} is missing from token ({kind}, {mask:#x}, {pc})")]
    MissingFromToken {
        lane: usize,
        kind: &'static str,
        mask: u64,
        pc: Pc,
    },
    #[error("exited lane {0} still has a pc")]
    ExitedWithPc(usize),
    #[error("inv1: parked lane {lane} ({disable:?}) has no activation token")]
    NoActivationToken { lane: usize, disable: Disable },
    #[error(
        "inact-cons: parked lane {lane} is at pc {shadow:?}, its activation token ({kind}, {mask:#x}, {pc}) resumes at {pc}"
    )]
    ParkedElsewhere {
        lane: usize,
        shadow: Option<Pc>,
        kind: &'static str,
        mask: u64,
        pc: Pc,
    },
}

/// Moves the shadow pcs (→Θpc, `reset`) and checks the invariants.
pub(crate) fn check(pre: &Pre, out: &Outcome, w: &mut Warp) -> Result<(), InvariantViolation> {
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
    let s = w.simt();
    for tok in &s.stack {
        if tok.mask == 0 {
            return Err(InvariantViolation::EmptyToken {
                kind: tok.kind.name(),
                pc: tok.pc,
            });
        }
    }
    if s.active & s.dis.any() != 0 {
        return Err(InvariantViolation::ActiveDisabled(s.active & s.dis.any()));
    }
    if s.active == 0 && !w.completed {
        return Err(InvariantViolation::NoActiveLane);
    }
    for l in lanes(s.active) {
        if w.shadow[l] != Some(s.pc) {
            return Err(InvariantViolation::ActiveElsewhere {
                lane: l,
                shadow: w.shadow[l],
                pc: s.pc,
            });
        }
        if let Some(t) = s
            .stack
            .iter()
            .find(|t| t.kind != TokenKind::Diverge && t.mask >> l & 1 == 0)
        {
            return Err(InvariantViolation::MissingFromToken {
                lane: l,
                kind: t.kind.name(),
                mask: t.mask,
                pc: t.pc,
            });
        }
    }
    for l in lanes(w.real & !s.active) {
        match s.dis.of(l as u32) {
            Disable::Exit => {
                if w.shadow[l].is_some() {
                    return Err(InvariantViolation::ExitedWithPc(l));
                }
            }
            d => {
                let tok = s.stack.iter().rev().find(|t| {
                    t.mask >> l & 1 == 1
                        && (d != Disable::Break || t.kind == TokenKind::Break)
                        && (d != Disable::Return || t.kind == TokenKind::Call)
                });
                match tok {
                    None => {
                        return Err(InvariantViolation::NoActivationToken {
                            lane: l,
                            disable: d,
                        });
                    }
                    Some(t) if w.shadow[l] != Some(t.pc) => {
                        return Err(InvariantViolation::ParkedElsewhere {
                            lane: l,
                            shadow: w.shadow[l],
                            kind: t.kind.name(),
                            mask: t.mask,
                            pc: t.pc,
                        });
                    }
                    Some(_) => {}
                }
            }
        }
    }
    Ok(())
}
