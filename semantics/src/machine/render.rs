//! Thesis-style tables of SIMT execution (Figures 5.2-5.4): one row per warp step with the pc
//! executed, then the active mask, optionally the disable mask, and the token stack AFTER it.
//! Masks print lane 0 first (the thesis's "lane 1" is the leftmost bit); δ prints `0` enabled,
//! `b` break, `r` return, `x` exit; the stack prints top first, `ε` when empty.

use traces::{Disable, DisableMask, Event, Token};

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackRow {
    pub pc: u32,
    pub active: u64,
    pub disabled: DisableMask,
    /// Top first.
    pub stack: Vec<Token>,
}

/// The rows of the `Executed` events of warp `(block, warp)`.
pub fn stack_rows(events: &[Event], block: u32, warp: u32) -> Vec<StackRow> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Executed {
                block: b,
                warp: w,
                pc,
                active,
                disabled,
                stack,
                ..
            } if *b == block && *w == warp => Some(StackRow {
                pc: *pc,
                active: *active,
                disabled: *disabled,
                stack: stack.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// A lane mask as the thesis writes it: lane 0 first.
pub fn mask_string(mask: u64, warp_size: u32) -> String {
    (0..warp_size)
        .map(|l| if mask >> l & 1 == 1 { '1' } else { '0' })
        .collect()
}

/// A disable mask: `0` enabled, `b` break, `r` return, `x` exit.
pub fn disable_string(d: &DisableMask, warp_size: u32) -> String {
    (0..warp_size)
        .map(|l| match d.of(l) {
            Disable::Enabled => '0',
            Disable::Break => 'b',
            Disable::Return => 'r',
            Disable::Exit => 'x',
        })
        .collect()
}

/// Renders rows as the thesis's figures do. `label` names a pc (e.g. its listing line); rows
/// whose pc it maps to `None` are left out, token pcs it maps to `None` print as numbers.
pub fn stack_table(
    rows: &[StackRow],
    warp_size: u32,
    show_delta: bool,
    label: &dyn Fn(u32) -> Option<String>,
) -> String {
    let name = |pc: u32| label(pc).unwrap_or_else(|| pc.to_string());
    let mut lines: Vec<[String; 4]> = vec![["pc".into(), "α".into(), "δ".into(), "τ".into()]];
    for r in rows {
        let Some(pc) = label(r.pc) else { continue };
        let stack = if r.stack.is_empty() {
            "ε".to_string()
        } else {
            r.stack
                .iter()
                .map(|t| {
                    format!(
                        "({}, {}, {})",
                        t.kind.name(),
                        mask_string(t.mask, warp_size),
                        name(t.pc)
                    )
                })
                .collect::<Vec<_>>()
                .join(" :: ")
        };
        lines.push([
            pc,
            mask_string(r.active, warp_size),
            disable_string(&r.disabled, warp_size),
            stack,
        ]);
    }
    let w0 = lines
        .iter()
        .map(|l| l[0].chars().count())
        .max()
        .unwrap_or(0);
    let w1 = lines
        .iter()
        .map(|l| l[1].chars().count())
        .max()
        .unwrap_or(0);
    let w2 = lines
        .iter()
        .map(|l| l[2].chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for l in &lines {
        let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w - s.chars().count()));
        let mut row = format!("{}  {}  ", pad(&l[0], w0), pad(&l[1], w1));
        if show_delta {
            row.push_str(&format!("{}  ", pad(&l[2], w2)));
        }
        row.push_str(&l[3]);
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}
