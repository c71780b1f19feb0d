//! The caches as the page draws them, and the warning a stale L1 read gives.

use super::*;

/// The caches as the page draws them; an L1 line is stale when one of its valid, clean bytes
/// differs from the byte a load would find below it (the L2's valid byte, else DRAM's).
/// The byte a load that misses L1 finds at global `addr`: the L2's valid byte, else DRAM's.
pub(super) fn below_byte(m: &Machine, l2: &[LineView], addr: u64) -> u8 {
    if let Some(l) = l2.iter().find(|l| {
        l.space == traces::MemSpace::Global
            && l.addr <= addr
            && addr < l.addr + l.bytes.len() as u64
    }) {
        let j = (addr - l.addr) as usize;
        if l.valid >> j & 1 == 1
            && let Some(b) = l.bytes.get(j)
        {
            return *b;
        }
    }
    let mut b = [0u8; 1];
    m.memory().read_global_line(addr, &mut b);
    b[0]
}

/// Before memory op `op` steps: if it is a global load whose bytes its SM's L1 holds, valid
/// and clean, but different from what L2 (else DRAM) holds, what a `readL1` of it will return
/// and what it misses.
pub(super) fn stale_read(m: &Machine, op: u32) -> Option<String> {
    let c = m.cache()?;
    let o = c.ops().into_iter().find(|o| o.id == op)?;
    let r = o.request;
    if !matches!(r.kind, RequestKind::Load { .. }) || r.space != traces::MemSpace::Global {
        return None;
    }
    let l2 = c.l2_lines();
    let size = r.size as u64;
    for l in c.l1_lines(r.sm) {
        if l.space != traces::MemSpace::Global
            || r.addr < l.addr
            || r.addr + size > l.addr + l.bytes.len() as u64
        {
            continue;
        }
        let off = (r.addr - l.addr) as usize;
        let range = off..off + size as usize;
        if range
            .clone()
            .any(|i| l.valid >> i & 1 == 0 || l.dirty >> i & 1 == 1)
        {
            continue;
        }
        let held: Vec<u8> = l.bytes[range].to_vec();
        let newer: Vec<u8> = (0..size).map(|i| below_byte(m, &l2, r.addr + i)).collect();
        if held != newer {
            let value = |b: &[u8]| b.iter().rev().fold(0u64, |v, x| v << 8 | *x as u64);
            return Some(format!(
                "STALE read: the L1 of SM {} holds {:#x} at {:#x}, but L2 holds {:#x}; \
                 the load returns the old value",
                r.sm,
                value(&held),
                r.addr,
                value(&newer)
            ));
        }
    }
    None
}

pub(super) fn cache_state(m: &Machine, grids: &Grids) -> Option<CacheState> {
    let c = m.cache()?;
    let l2 = c.l2_lines();
    let below = |line: &LineView, i: usize| -> Option<u8> {
        (line.space == traces::MemSpace::Global).then(|| below_byte(m, &l2, line.addr + i as u64))
    };
    let line_state = |l: &LineView, check: bool| LineState {
        at: format!("{} {:#x}", memory_model::space_name(l.space), l.addr),
        bytes: hex_bytes(&l.bytes, l.valid),
        valid: bits(l.valid, l.bytes.len()),
        dirty: bits(l.dirty, l.bytes.len()),
        stale: check
            && (0..l.bytes.len()).any(|i| {
                l.valid >> i & 1 == 1
                    && l.dirty >> i & 1 == 0
                    && below(l, i).is_some_and(|b| b != l.bytes[i])
            }),
        pinned: !l.pins.is_empty(),
        doomed: l.doomed,
    };
    let sms = m.config().device.num_sms;
    let l1 = (0..sms)
        .filter_map(|sm| {
            let lines = c.l1_lines(sm);
            (!lines.is_empty()).then(|| {
                (
                    sm,
                    lines
                        .iter()
                        .take(CACHE_SHOWN)
                        .map(|l| line_state(l, true))
                        .collect(),
                )
            })
        })
        .collect();
    Some(CacheState {
        l1,
        l2: l2
            .iter()
            .take(CACHE_SHOWN)
            .map(|l| line_state(l, false))
            .collect(),
        ops: c
            .ops()
            .iter()
            .take(CACHE_SHOWN)
            .map(|o| op_state(o, grids))
            .collect(),
    })
}

pub(super) fn op_state(o: &OpView, grids: &Grids) -> OpState {
    let r = &o.request;
    let verb = match r.kind {
        RequestKind::Load { .. } => "ld",
        RequestKind::Store { .. } => "st",
        RequestKind::Atomic { .. } => "atom",
        RequestKind::Fence => "fence",
    };
    let what = if matches!(r.kind, RequestKind::Fence) {
        format!("{} thread {} fence", grids.block(r.who.block), r.who.thread)
    } else {
        format!(
            "{} thread {} {verb} {} {:#x} ({} bytes)",
            grids.block(r.who.block),
            r.who.thread,
            memory_model::space_name(r.space),
            r.addr,
            r.size
        )
    };
    OpState {
        id: o.id,
        what,
        program: o.program.unwrap_or("-").to_string(),
        listing: o.listing.clone(),
        pc: o.pc,
        deps: o.deps.clone(),
    }
}
