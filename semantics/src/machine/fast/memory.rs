//! A warp's scalar `.global`/`.shared` loads and stores under flat memory in one pass
//! ([`load_traced`], [`store_traced`]): one segment and page resolution per run of lanes on a
//! page, with a [`LaneTrace`] of what each lane did for the events of an observed step.

use super::{column, gather, map1};
use crate::machine::regs::Regs;
use crate::machine::thread::SpecialCtx;
use crate::machine::warp::{lane_mask, lanes};
use crate::program::{AddrBase, Address, RegId, Src};
use memory_model::{Flat, MemError, MemSpace};

/// The addresses of all lanes (as `exec::address` computes them; the inactive lanes' are
/// computed too, and ignored). `false` if the base register's column is out of range.
#[inline(always)]
fn addresses<const N: usize>(
    regs: &Regs,
    ws: usize,
    a: &Address,
    fb: &[u32],
    out: &mut [u64; N],
) -> bool {
    let off = a.offset as u64;
    let out = &mut out[..ws];
    match a.base {
        AddrBase::Reg(r) => {
            let Some(col) = regs.row(r.0 as usize).and_then(|col| col.get(..ws)) else {
                return false;
            };
            map1(out, col, |v| v.wrapping_add(off));
        }
        AddrBase::Absolute => out.fill(off),
        AddrBase::Frame => {
            let Some(fb) = fb.get(..ws) else {
                return false;
            };
            for (o, &b) in out.iter_mut().zip(fb) {
                *o = (b as u64).wrapping_add(off);
            }
        }
    }
    true
}

/// What a warp's scalar load or store did per lane, for events: `done` are the lanes that
/// accessed memory (those before a faulting lane), `addrs` their addresses in lane order, `vals`
/// (only when `values` is asked) the values as the events carry them (a load's destination value,
/// a store's stored bits). Packed, not indexed by lane: nothing to clear per instruction. `addrs`
/// is a `Vec` because the monitors' `Event::WarpMemory` takes it as it is (an inline buffer would
/// be copied out: measured 2% more instructions on a monitored run); `vals`, which only fully
/// observed steps fill, is inline up to a warp of 32.
#[derive(Debug, Clone, Default)]
pub(crate) struct LaneTrace {
    pub done: u64,
    pub addrs: Vec<u64>,
    pub vals: smallvec::SmallVec<[u64; 32]>,
    pub values: bool,
    /// A store's lanes that wrote the bytes already there (the race monitor's benign races).
    pub unchanged: u64,
}

impl LaneTrace {
    /// An empty trace; `values`: record the values too.
    pub fn new(values: bool) -> LaneTrace {
        LaneTrace {
            values,
            ..LaneTrace::default()
        }
    }

    /// Records lanes `done` with their addresses and values (`val(lane)`), in lane order.
    #[inline]
    fn record(&mut self, done: u64, addrs: &[u64], val: impl Fn(usize) -> u64) {
        self.done = done;
        let n = done.count_ones() as usize;
        self.addrs.reserve_exact(n);
        self.addrs.extend(lanes(done).map(|l| addrs[l]));
        if self.values {
            self.vals.reserve_exact(n);
            self.vals.extend(lanes(done).map(val));
        }
    }
}

/// A scalar `ld` of `.global`/`.shared` memory for the `exec` lanes, through
/// [`Flat::load_lanes`]: the lanes before a failing one load, as lane-by-lane execution would.
/// `None` if the registers are out of range (the generic path reports it). `trace` (observed
/// steps only) receives what each lane did.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn load_traced(
    mem: &mut Flat,
    who: (u32, u32),
    regs: &mut Regs,
    fb: &[u32],
    ws: usize,
    exec: u64,
    addr: &Address,
    (space, size, signed): (MemSpace, u32, bool),
    dst: RegId,
    dst_bits: u32,
    trace: Option<&mut LaneTrace>,
) -> Option<Result<(), (usize, MemError)>> {
    if ws == 32 {
        load_n::<32>(
            mem,
            who,
            regs,
            fb,
            32,
            exec,
            addr,
            (space, size, signed),
            dst,
            dst_bits,
            trace,
        )
    } else {
        load_n::<64>(
            mem,
            who,
            regs,
            fb,
            ws,
            exec,
            addr,
            (space, size, signed),
            dst,
            dst_bits,
            trace,
        )
    }
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn load_n<const N: usize>(
    mem: &mut Flat,
    (block, tid_base): (u32, u32),
    regs: &mut Regs,
    fb: &[u32],
    ws: usize,
    exec: u64,
    addr: &Address,
    (space, size, signed): (MemSpace, u32, bool),
    dst: RegId,
    dst_bits: u32,
    trace: Option<&mut LaneTrace>,
) -> Option<Result<(), (usize, MemError)>> {
    let mut addrs = [0u64; N];
    let mut vals = [0u64; N];
    regs.row(dst.0 as usize)?.get(..ws)?;
    if !addresses(regs, ws, addr, fb, &mut addrs) {
        return None;
    }
    let res = mem.load_lanes(block, tid_base, space, size, exec, &addrs, &mut vals);
    let done = match &res {
        Ok(()) => exec,
        Err((l, _)) => exec & ((1u64 << l) - 1),
    };
    let col = column(regs, ws, dst)?;
    // `exec::extend` without branches: sign-extend from `size` bytes if signed, then keep the
    // destination register's bits.
    let sh = if signed && size < 8 { 64 - size * 8 } else { 0 };
    let keep = if dst_bits >= 64 {
        u64::MAX
    } else {
        (1u64 << dst_bits) - 1
    };
    let ext = |v: u64| ((((v << sh) as i64) >> sh) as u64) & keep;
    if done == lane_mask(ws as u32) {
        map1(col, &vals[..ws], ext);
    } else {
        for l in lanes(done) {
            col[l] = ext(vals[l]);
        }
    }
    if let Some(t) = trace {
        t.record(done, &addrs, |l| col[l]);
    }
    Some(res)
}

/// A scalar `st` to `.global`/`.shared` memory for the `exec` lanes, through
/// [`Flat::store_lanes`]. `None` if the registers are out of range. `trace` as for
/// [`load_traced`].
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn store_traced(
    mem: &mut Flat,
    who: (u32, u32),
    regs: &Regs,
    fb: &[u32],
    sp: &SpecialCtx,
    ws: usize,
    exec: u64,
    addr: &Address,
    (space, size): (MemSpace, u32),
    src: &Src,
    trace: Option<&mut LaneTrace>,
) -> Option<Result<(), (usize, MemError)>> {
    if ws == 32 {
        store_n::<32>(
            mem,
            who,
            regs,
            fb,
            sp,
            32,
            exec,
            addr,
            (space, size),
            src,
            trace,
        )
    } else {
        store_n::<64>(
            mem,
            who,
            regs,
            fb,
            sp,
            ws,
            exec,
            addr,
            (space, size),
            src,
            trace,
        )
    }
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn store_n<const N: usize>(
    mem: &mut Flat,
    (block, tid_base): (u32, u32),
    regs: &Regs,
    fb: &[u32],
    sp: &SpecialCtx,
    ws: usize,
    exec: u64,
    addr: &Address,
    (space, size): (MemSpace, u32),
    src: &Src,
    trace: Option<&mut LaneTrace>,
) -> Option<Result<(), (usize, MemError)>> {
    let mut addrs = [0u64; N];
    if !addresses(regs, ws, addr, fb, &mut addrs) {
        return None;
    }
    let buf: [u64; N];
    let vals: &[u64] = match *src {
        Src::Reg(r) => regs.row(r.0 as usize)?.get(..ws)?,
        _ => {
            let mut b = [0u64; N];
            if !gather::<N>(regs, ws, src, sp, fb, &mut b) {
                return None;
            }
            buf = b;
            &buf[..ws]
        }
    };
    let unchanged = match trace {
        Some(_) => crate::machine::unchanged::unchanged_lanes(
            mem,
            (block, tid_base),
            (space, size),
            exec,
            &addrs,
            vals,
        ),
        None => 0,
    };
    let res = mem.store_lanes(block, tid_base, space, size, exec, &addrs, vals);
    if let Some(t) = trace {
        t.unchanged = unchanged;
        let done = match &res {
            Ok(()) => exec,
            Err((l, _)) => exec & ((1u64 << l) - 1),
        };
        let mask = if size >= 8 {
            u64::MAX
        } else {
            (1u64 << (size * 8)) - 1
        };
        t.record(done, &addrs, |l| vals[l] & mask);
    }
    Some(res)
}
