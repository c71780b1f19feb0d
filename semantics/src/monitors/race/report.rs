//! A race as the monitor reports it: the two accesses located (thread, pc, lines, buffer
//! element), the kind and scope, a note where the reason is not obvious, and whether it is benign
//! (its write stored the bytes already there). One report per pair of instructions and kind;
//! later occurrences are counted.

use super::*;

impl Monitors {
    /// Records a race unless this pair of instructions was reported already (then counts it).
    pub(super) fn report_race(&mut self, r: &RawRace) {
        let kind = (r.prev_write as u8) << 1 | r.cur_write as u8;
        let key = (r.prev.pc, r.cur.pc, kind);
        if let Some(&i) = self.race.seen.get(&key) {
            if let Some(x) = self.findings.races.get_mut(i) {
                x.occurrences += 1;
                // Benign only if every occurrence is.
                x.benign &= benign(r);
            }
            return;
        }
        if self.full() {
            return;
        }
        let report = self.race_report(r);
        self.race.seen.insert(key, self.findings.races.len());
        self.findings.races.push(report);
    }

    fn race_report(&self, r: &RawRace) -> Race {
        let side = |a: &Acc, write: bool| {
            let op = if a.flags & RMW != 0 {
                AccessOp::Atomic
            } else if write {
                AccessOp::Write
            } else {
                AccessOp::Read
            };
            let addr = ((r.word << 2) as i64 + a.off as i64) as u64;
            self.access_info(
                a.g(),
                a.pc,
                op,
                a.strong().then(|| a.scope()),
                r.space,
                addr,
                a.size as u32,
                0,
            )
        };
        let first = side(&r.prev, r.prev_write);
        let second = side(&r.cur, r.cur_write);
        let kind = match (r.prev_write, r.cur_write) {
            (true, true) => RaceKind::WriteWrite,
            (true, false) => RaceKind::WriteRead,
            _ => RaceKind::ReadWrite,
        };
        let scope = if first.grid != second.grid {
            RaceScope::InterGrid
        } else if first.block != second.block {
            RaceScope::InterBlock
        } else if first.warp != second.warp {
            RaceScope::InterWarp
        } else {
            RaceScope::IntraWarp
        };
        let note = if r.prev.strong() && r.cur.strong() {
            Some(format!(
                "both accesses are atomic, but a {}-scoped one does not order threads of different blocks",
                if r.prev.scope().min(r.cur.scope()) == SCOPE_CTA {
                    ".cta"
                } else {
                    "narrow"
                }
            ))
        } else if scope == RaceScope::InterGrid {
            Some(
                "the two kernels' launches are in different streams, which may run concurrently: nothing orders one grid before the other (launches of one stream are ordered; thesis section 5.7)"
                    .to_string(),
            )
        } else if r.prev.strong() || r.cur.strong() {
            Some("only one of the accesses is atomic".to_string())
        } else if scope == RaceScope::IntraWarp && r.prev.wi == r.cur.wi {
            Some("two lanes of one warp instruction write the same address".to_string())
        } else if scope == RaceScope::IntraWarp {
            Some(match self.config.race_model {
                RaceModel::Interleaving => {
                    "lanes of one warp are not ordered without __syncwarp() (race model interleaving)"
                        .to_string()
                }
                RaceModel::WarpSync => {
                    "the lanes did not execute a common instruction between the accesses (divergence)"
                        .to_string()
                }
            })
        } else {
            None
        };
        Race {
            kind,
            scope,
            first,
            second,
            step: self.step,
            note,
            occurrences: 1,
            benign: benign(r),
        }
    }
}

/// A race whose outcome does not depend on the order: its write stored the bytes that were
/// already there (GPUVerify tolerates such races by default). Two writes of one value are the
/// common case: the second finds the first's value (the shadow keeps the last write, so the
/// first of the pair is what the second overwrote). A read racing with such a write reads the
/// same value either way.
fn benign(r: &RawRace) -> bool {
    match (r.prev_write, r.cur_write) {
        (_, true) => r.cur.unchanged(),
        (true, false) => r.prev.unchanged(),
        (false, false) => false,
    }
}
