//! Choices, warps and events in the page's words: which warp or block a choice steps, its
//! kind, a warp's state, SIMT stack tokens, an event's text.

use super::*;

/// The block a choice steps.
pub(super) fn block_of(c: &Choice) -> Option<u32> {
    match *c {
        Choice::Warp { block, .. }
        | Choice::Target { block, .. }
        | Choice::Lanes { block, .. }
        | Choice::Pick { block, .. }
        | Choice::EndBarrier { block, .. }
        | Choice::Issue { block, .. } => Some(block),
        Choice::Mem(_) => None,
    }
}

pub(super) fn kind_of(c: &Choice) -> &'static str {
    match c {
        Choice::Issue { .. } => "issue",
        Choice::Warp { .. }
        | Choice::Target { .. }
        | Choice::Lanes { .. }
        | Choice::Pick { .. } => "warp",
        Choice::EndBarrier { .. } => "barrier",
        Choice::Mem(_) => "memory",
    }
}

/// The lanes warp `warp` of a block of `threads` threads has: masks are drawn this wide (a block
/// of 2 threads is one warp of 2 lanes, as in the thesis's figures, whatever the warp size).
pub(super) fn lanes_of(threads: u32, ws: u32, warp: u32) -> u32 {
    threads
        .saturating_sub(warp.saturating_mul(ws))
        .clamp(1, ws.max(1))
}

pub(super) fn tokens(stack: &[Token], ws: u32) -> Vec<(&'static str, String, u32)> {
    stack
        .iter()
        .map(|t| (t.kind.name(), mask_string(t.mask, ws), t.pc))
        .collect()
}

pub(super) fn warp_state(v: &WarpView, ws: u32, model: WarpModel) -> WarpState {
    let mut groups: BTreeMap<u32, u64> = BTreeMap::new();
    if model != WarpModel::SimtStack {
        for (lane, pc) in v.lane_pcs.iter().enumerate() {
            if v.exited >> lane & 1 == 0 && (lane as u32) < ws {
                *groups.entry(*pc).or_default() |= 1 << lane;
            }
        }
    }
    WarpState {
        pc: v.pc,
        a: mask_string(v.active, ws),
        d: disable_string(&v.disabled, ws),
        t: tokens(&v.stack, ws),
        g: groups
            .into_iter()
            .map(|(pc, m)| (pc, mask_string(m, ws)))
            .collect(),
        done: v.completed,
        wait: v.waiting != 0,
    }
}

pub(super) fn hex_bytes(bytes: &[u8], valid: u64) -> String {
    bytes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if valid >> i & 1 == 1 {
                format!("{b:02x}")
            } else {
                "..".to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn bits(mask: u64, n: usize) -> String {
    (0..n)
        .map(|i| if mask >> i & 1 == 1 { '1' } else { '0' })
        .collect()
}

/// An event in words. Under cached memory a load's or atomic's value is not known when the warp
/// issues it (the event records 0, docs/deviations.md, D25): it is left out, and the memory
/// program's step that delivers it says it. Blocks and warps are named by `grids`.
pub(super) fn event_text(
    e: &Event,
    ws: u32,
    grids: &Grids,
    cached: bool,
    line: &dyn Fn(u32) -> u32,
) -> String {
    let warp = |b: u32, w: u32| grids.warp_titled(b, w);
    match e {
        Event::BlockIssued { block, sm, .. } => {
            format!("{} issued on SM {sm}", grids.block(*block))
        }
        Event::Executed {
            block,
            warp: w,
            pc,
            lanes,
            next_pc,
            ..
        } => format!(
            "{} executed line {} with lanes {}; next line {}",
            warp(*block, *w),
            line(*pc),
            mask_string(*lanes, lanes_of(grids.threads(*block), ws, *w)),
            line(*next_pc)
        ),
        Event::Memory {
            block,
            warp: w,
            lane,
            kind,
            space,
            address,
            size,
            value,
            ..
        } => {
            let verb = match kind {
                traces::AccessKind::Load => "load".to_string(),
                traces::AccessKind::Store => "store".to_string(),
                traces::AccessKind::Atomic { new } => format!("atomic (new {new:#x})"),
            };
            let global_or_shared =
                matches!(space, traces::MemSpace::Global | traces::MemSpace::Shared);
            let value = if cached && global_or_shared && !matches!(kind, traces::AccessKind::Store)
            {
                "issued (its memory program delivers the value)".to_string()
            } else {
                format!("value {value:#x}")
            };
            format!(
                "{} lane {lane}: {verb} {} {address:#x} ({size} bytes) {value}",
                warp(*block, *w),
                memory_model::space_name(*space)
            )
        }
        Event::WarpMemory {
            block,
            warp: w,
            kind,
            ..
        } => format!("{}: memory accesses ({kind:?})", warp(*block, *w)),
        Event::BarrierArrived {
            block,
            warp: w,
            barrier,
            arrived,
            expected,
            ..
        } => format!(
            "{} arrived at barrier {barrier} ({arrived} of {expected} threads)",
            warp(*block, *w)
        ),
        Event::BarrierCompleted { block, barrier, .. } => {
            format!("barrier {barrier} of {} completed", grids.block(*block))
        }
        Event::WarpCompleted { block, warp: w, .. } => {
            format!("{} completed", warp(*block, *w))
        }
        Event::BlockCompleted { block, .. } => format!("{} completed", grids.block(*block)),
        Event::MemoryStep {
            choice,
            operations,
            delivered,
            ..
        } => {
            let mut s = format!("{choice}: {operations}");
            if let Some((b, w, l, v)) = delivered {
                s.push_str(&format!("; delivers {v:#x} to {} lane {l}", warp(*b, *w)));
            }
            s
        }
    }
}

pub(super) fn diverge_count(stack: &[Token]) -> usize {
    stack
        .iter()
        .filter(|t| t.kind == TokenKind::Diverge)
        .count()
}
