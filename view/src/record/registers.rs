//! The registers a choice may write, watched across the step, and their names.

use super::*;

/// The `(warp, lane, register)`s a choice may write, read before it is taken.
pub(super) fn watched_registers(
    m: &Machine,
    c: &Choice,
    ws: u32,
    grids: &Grids,
) -> Vec<(u32, u32, u32, RegId)> {
    let mut out = Vec::new();
    let program = m.program();
    if let Some((block, warp)) = c.warp()
        && let Some(v) = m.warp_view(block, warp)
    {
        let pc = match *c {
            Choice::Lanes { mask, .. } if mask != 0 => {
                let lane = mask.trailing_zeros() as usize;
                v.lane_pcs.get(lane).copied().unwrap_or(v.pc)
            }
            _ => v.pc,
        };
        let mut regs = BTreeSet::new();
        if let Some(i) = program.instructions.get(pc as usize) {
            i.for_each_register(&mut |r| {
                regs.insert(r.0);
            });
        }
        for lane in 0..lanes_of(grids.threads(block), ws, warp) {
            for r in &regs {
                out.push((block, warp, lane, RegId(*r)));
            }
        }
    }
    if let Choice::Mem(MemChoice::Step { op }) = *c
        && let Some(cache) = m.cache()
        && let Some(o) = cache.ops().into_iter().find(|o| o.id == op)
    {
        let dest = match o.request.kind {
            RequestKind::Load { dest, .. } | RequestKind::Atomic { dest, .. } => dest,
            _ => None,
        };
        if let Some(d) = dest {
            out.push((
                o.request.who.block,
                o.request.who.thread / ws,
                o.request.who.thread % ws,
                RegId(d.reg as u16),
            ));
        }
    }
    out
}

pub(super) fn register_name(m: &Machine, block: u32, warp: u32, reg: RegId) -> String {
    let p = m.program();
    m.warp_view(block, warp)
        .and_then(|v| p.function_of(v.pc))
        .and_then(|f| p.functions.get(f.0 as usize))
        .and_then(|f| f.registers.get(reg.0 as usize))
        .map_or_else(|| format!("r{}", reg.0), |r| r.name.to_string())
}
