//! Cross-checks of a parsed test that no single section can make: labels, and threads named
//! by the init section and the condition.

use super::ast::{Init, Instr, LitmusTest, Term};
use super::error::ParseError;
use std::collections::BTreeSet;

/// Cross-checks: labels defined once and branched to exist, condition threads exist.
pub(super) fn check(test: &LitmusTest) -> Result<(), ParseError> {
    for t in &test.threads {
        let mut labels = BTreeSet::new();
        for l in &t.instrs {
            if let Instr::Label(name) = &l.instr
                && !labels.insert(name.clone())
            {
                return Err(ParseError {
                    pos: l.pos,
                    message: format!("label `{name}` defined twice in P{}", t.id),
                });
            }
        }
        for l in &t.instrs {
            if let Instr::Branch { label, .. } | Instr::Goto(label) = &l.instr
                && !labels.contains(label)
            {
                return Err(ParseError {
                    pos: l.pos,
                    message: format!("label `{label}` is not defined in P{}", t.id),
                });
            }
        }
    }
    for i in &test.init {
        if let Init::Register { thread, pos, .. } = i
            && *thread >= test.threads.len()
        {
            return Err(ParseError {
                pos: *pos,
                message: format!("P{thread} is not a thread of this test"),
            });
        }
    }
    for t in test.observed() {
        if let Term::Reg { thread, reg } = &t
            && *thread >= test.threads.len()
        {
            return Err(ParseError {
                pos: test.condition.pos,
                message: format!(
                    "the condition reads {thread}:{reg} but P{thread} is not a thread of this test"
                ),
            });
        }
    }
    Ok(())
}
