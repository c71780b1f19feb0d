//! What global memory a thread may still write: per address, an over-approximation of the
//! global memory that a thread there may write (`st`, `atom`, `red`, on `.global` or on a
//! generic address) on any path from that address (before executing it) to its exit, callees
//! included. The machine asks it for every other warp when it decides whether a load reads
//! only words nobody will write any more ([`crate::machine::Machine::loads_only_settled_words`]).
//!
//! **Memory by provenance.** Memory is named by where an address came from, an [`Atom`]:
//! * a kernel parameter: the value `ld.param` reads at an absolute offset of an entry's
//!   parameter buffer (a pointer argument; at run time, the launch buffer its value points
//!   into, [`Atom::Param`]);
//! * a module `.global` variable whose address the instruction names ([`Atom::Variable`]);
//! * an address in a window other than the global one (`cvta` of `.shared`, `.local`,
//!   `.const` or `.param` to generic, [`Atom::NonGlobal`]): it names no global memory.
//!
//! A [`Provenance`] is a set of atoms or **Top** (any global address). The lattice is the
//! powerset of atoms plus Top above everything, joined by union; a program with more than
//! [`MAX_ATOMS`] atoms names the rest Top.
//!
//! **Which register holds what** (a forward may-analysis per function over its basic blocks,
//! to a fixpoint): `ld.param [p+k]` of a kernel gives the atom of that parameter word; `mov`,
//! `cvt`, `cvta.to.global`, arithmetic and bit operations (`add sub mad shl and or` ...),
//! `selp`/`slct`, `shfl`, `mov` packing and unpacking give the union of their sources' sets
//! (an immediate inside a module `.global` variable is that variable, any other immediate and
//! a special register is the empty set: a plain integer); a guarded instruction joins its
//! result with the old value. **Top** is: a value loaded from memory (`ld` of anything but a
//! kernel parameter, `atom` results), the results of warp-collective operations (`vote`,
//! `match`, `redux`, `mma`, `ldmatrix`, `bar.red`), a body-less function's result, a call's
//! return registers, module-scope registers (a callee may change them), every register on
//! entry to a device function (its parameters and the stale registers of its level), and every
//! register of a thesis-dialect function (`ssy sync brk preBrk preRet` move along edges the
//! graph does not hold) or of a function too large to tabulate.
//!
//! **What an instruction writes** ([`MayWrite::own`]): an `st`, `atom` or `red` on `.global`
//! or a generic address through a register writes the register's set, Top when that set is
//! empty (a plain integer used as an address); through an absolute address, the module
//! variable that holds it (Top when none does; a generic absolute address outside the global
//! window writes no global memory); a frame address and every other state space write none.
//!
//! **What an instruction accesses** ([`MayWrite::accessed`]): the same for every `ld`, `st` and
//! `atom` on `.global` or a generic address, loads included: the global memory its address
//! names. The private words of a launch ([`crate::machine::Machine::accesses_only_private_words`])
//! ask it for the accesses whose addresses they cannot compute.
//!
//! **What a thread may still write** ([`MayWrite::ahead`]): a backward may-analysis, `ahead(pc)
//! = own(pc) ∪ callees(pc) ∪ ⋃ ahead(successors)`, where a `call`'s callees are everything
//! their bodies may write from their first address (every candidate of an indirect call; Top
//! when it has none), to a fixpoint over the whole program (recursion). A device function's
//! `ret` has no successor here: a thread's frames below the top continue after their calls,
//! which the machine adds from the call addresses it keeps (`ahead(call) ⊇ ahead(call + 1)`).
//! Thesis-dialect functions take the union over their whole body at every address.
//!
//! **Soundness.** `ahead` covers every store a thread may execute from `pc` on, each with its
//! own provenance. That a store's *address* lies inside the memory its provenance names at run
//! time is an assumption (pointer arithmetic may leave its buffer and land in another one,
//! which CUDA leaves undefined and cudasem does not fault on when the other buffer is there):
//! [`crate::machine::Machine::writes_within_provenance`] checks it for one store, and a search
//! that relies on the summary checks every store it takes (until the first store that breaks
//! the assumption, every run agrees with one in which that store faults, and the reductions
//! that use the summary keep every fault reachable, so a search that takes no such store has
//! relied on nothing false).
//!
//! The summary is computed on first use ([`crate::program::Program::may_write`]).

use crate::program::{
    AddrBase, Address, CallTarget, FuncId, Function, FunctionKind, Instr, Op, ParamLoc, Pc,
    Program, RegId, Space, Src,
};
use std::sync::OnceLock;

/// The most atoms a program's provenances name; later ones are Top.
pub const MAX_ATOMS: usize = 63;

/// The bit of Top.
const TOP_BIT: u64 = 1 << 63;

/// A function whose register table (blocks × registers) is larger than this is not analysed:
/// its registers are all Top.
const FUNCTION_WORDS: usize = 1 << 22;

/// Where an address may have come from (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Atom {
    /// The `size`-byte word at byte `offset` of kernel `entry`'s parameter buffer.
    Param {
        entry: FuncId,
        offset: u32,
        size: u8,
    },
    /// Module variable `index` of [`Program::variables`] (a `.global` one).
    Variable(u32),
    /// An address in the generic window of `.shared`, `.local`, `.const` or `.param`.
    NonGlobal,
}

/// A set of [`Atom`]s (bit `i`: atom `i` of [`MayWrite::atoms`]) or Top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Provenance(u64);

impl Provenance {
    /// No global memory.
    pub const EMPTY: Provenance = Provenance(0);
    /// Any global address.
    pub const TOP: Provenance = Provenance(TOP_BIT);

    /// The set of atom `i` alone (Top past [`MAX_ATOMS`]).
    pub fn atom(i: usize) -> Provenance {
        if i < MAX_ATOMS {
            Provenance(1 << i)
        } else {
            Provenance::TOP
        }
    }

    #[inline]
    pub fn is_top(self) -> bool {
        self.0 & TOP_BIT != 0
    }

    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The union (Top absorbs).
    #[inline]
    #[must_use]
    pub fn join(self, other: Provenance) -> Provenance {
        let u = self.0 | other.0;
        if u & TOP_BIT != 0 {
            Provenance::TOP
        } else {
            Provenance(u)
        }
    }

    /// The bits: atom `i` is bit `i`, Top bit 63.
    #[inline]
    pub fn bits(self) -> u64 {
        self.0
    }

    /// The indices of the atoms in the set (none for Top).
    pub fn atoms(self) -> impl Iterator<Item = usize> {
        let mut m = self.0 & !TOP_BIT;
        std::iter::from_fn(move || {
            (m != 0).then(|| {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                i
            })
        })
    }
}

/// The summary of a program (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MayWrite {
    atoms: Vec<Atom>,
    own: Vec<Provenance>,
    accessed: Vec<Provenance>,
    ahead: Vec<Provenance>,
}

impl MayWrite {
    /// The atoms the provenances name, bit `i` being `atoms()[i]`.
    pub fn atoms(&self) -> &[Atom] {
        &self.atoms
    }

    /// The global memory the instruction at `pc` itself may write (empty when it writes none;
    /// Top outside every function).
    #[inline]
    pub fn own(&self, pc: Pc) -> Provenance {
        self.own
            .get(pc as usize)
            .copied()
            .unwrap_or(Provenance::TOP)
    }

    /// The global memory the instruction at `pc` may read or write: its address's provenance
    /// when it is an `ld`, `st` or `atom` on `.global` or a generic address (Top through a plain
    /// integer), empty for every other instruction (Top outside every function).
    #[inline]
    pub fn accessed(&self, pc: Pc) -> Provenance {
        self.accessed
            .get(pc as usize)
            .copied()
            .unwrap_or(Provenance::TOP)
    }

    /// The global memory a thread at `pc` may write on a path from there (before executing
    /// `pc`) to the exit of its function, callees included (Top outside every function).
    #[inline]
    pub fn ahead(&self, pc: Pc) -> Provenance {
        self.ahead
            .get(pc as usize)
            .copied()
            .unwrap_or(Provenance::TOP)
    }

    /// The summary of `program`.
    pub fn analyse(program: &Program) -> MayWrite {
        let n = program.instructions.len();
        let mut atoms = Atoms::default();
        let mut own = vec![Provenance::EMPTY; n];
        let mut accessed = vec![Provenance::EMPTY; n];
        for (id, f) in program.functions.iter().enumerate() {
            let out = Addressed {
                own: &mut own,
                accessed: &mut accessed,
            };
            stores_of_function(program, FuncId(id as u32), f, &mut atoms, out);
        }
        let ahead = ahead(program, &own);
        MayWrite {
            atoms: atoms.list,
            own,
            accessed,
            ahead,
        }
    }
}

/// The atoms met so far, in order of first use.
#[derive(Default)]
struct Atoms {
    list: Vec<Atom>,
}

impl Atoms {
    fn of(&mut self, atom: Atom) -> Provenance {
        let i = match self.list.iter().position(|a| *a == atom) {
            Some(i) => i,
            None => {
                self.list.push(atom);
                self.list.len() - 1
            }
        };
        Provenance::atom(i)
    }
}

/// The module `.global` variable whose bytes hold global address `a`, if any.
fn variable_at(program: &Program, a: u64) -> Option<u32> {
    program
        .variables
        .iter()
        .position(|v| v.space == Space::Global && a.wrapping_sub(v.address) < v.size.max(1))
        .map(|i| i as u32)
}

/// The context of one function's forward analysis.
struct Cx<'a> {
    program: &'a Program,
    /// `Some` in a kernel: the entry whose parameters `ld.param` reads.
    entry: Option<FuncId>,
    /// Module-scope registers (ids `0..globals`), always Top.
    globals: usize,
}

impl Cx<'_> {
    /// The set of a source operand in `regs`.
    fn src(&self, atoms: &mut Atoms, regs: &[Provenance], s: &Src) -> Provenance {
        match s {
            Src::Reg(r) => regs.get(r.0 as usize).copied().unwrap_or(Provenance::TOP),
            Src::Imm(v) => match variable_at(self.program, *v) {
                Some(i) => atoms.of(Atom::Variable(i)),
                None => Provenance::EMPTY,
            },
            Src::Special(_) | Src::FrameAddr(_) => Provenance::EMPTY,
        }
    }

    /// The global memory a store at `addr` in `space` writes, given the registers' sets.
    fn store(
        &self,
        atoms: &mut Atoms,
        regs: &[Provenance],
        space: Space,
        addr: &Address,
    ) -> Provenance {
        if !matches!(space, Space::Global | Space::Generic) {
            return Provenance::EMPTY;
        }
        match addr.base {
            AddrBase::Frame => Provenance::EMPTY,
            AddrBase::Absolute => {
                let a = addr.offset as u64;
                if space == Space::Generic
                    && memory_model::from_generic(a).0 != memory_model::MemSpace::Global
                {
                    return Provenance::EMPTY;
                }
                match variable_at(self.program, a) {
                    Some(i) => atoms.of(Atom::Variable(i)),
                    None => Provenance::TOP,
                }
            }
            AddrBase::Reg(r) => {
                let p = regs.get(r.0 as usize).copied().unwrap_or(Provenance::TOP);
                if p.is_empty() { Provenance::TOP } else { p }
            }
        }
    }

    /// Moves `regs` over `ins` (see the module documentation for the rules).
    fn transfer(&self, atoms: &mut Atoms, ins: &Instr, regs: &mut [Provenance]) {
        let guarded = ins.guard.is_some();
        let globals = self.globals;
        let put = |regs: &mut [Provenance], r: RegId, v: Provenance| {
            if let Some(slot) = regs.get_mut(r.0 as usize) {
                *slot = if (r.0 as usize) < globals {
                    Provenance::TOP
                } else if guarded {
                    slot.join(v)
                } else {
                    v
                };
            }
        };
        let top = Provenance::TOP;
        match &ins.op {
            Op::Unary { dst, a, .. } | Op::Cvt { dst, a, .. } => {
                let v = self.src(atoms, regs, a);
                put(regs, *dst, v);
            }
            Op::Cvta {
                to_generic,
                space,
                dst,
                a,
            } => {
                let v = self.src(atoms, regs, a);
                let v = if *to_generic && *space != Space::Global {
                    v.join(atoms.of(Atom::NonGlobal))
                } else {
                    v
                };
                put(regs, *dst, v);
            }
            Op::Binary { dst, a, b, .. } => {
                let v = self.src(atoms, regs, a).join(self.src(atoms, regs, b));
                put(regs, *dst, v);
            }
            Op::Ternary { dst, a, b, c, .. }
            | Op::Prmt { dst, a, b, c, .. }
            | Op::Slct { dst, a, b, c, .. } => {
                let v = self
                    .src(atoms, regs, a)
                    .join(self.src(atoms, regs, b))
                    .join(self.src(atoms, regs, c));
                put(regs, *dst, v);
            }
            Op::Bfi {
                dst,
                a,
                b,
                pos,
                len,
                ..
            } => {
                let v = [a, b, pos, len]
                    .into_iter()
                    .fold(Provenance::EMPTY, |v, s| v.join(self.src(atoms, regs, s)));
                put(regs, *dst, v);
            }
            Op::Pack { dst, parts, .. } => {
                let v = parts
                    .iter()
                    .fold(Provenance::EMPTY, |v, s| v.join(self.src(atoms, regs, s)));
                put(regs, *dst, v);
            }
            Op::Unpack { dsts, src, .. } => {
                let v = self.src(atoms, regs, src);
                for d in dsts.iter().flatten() {
                    put(regs, *d, v);
                }
            }
            // Comparisons and space tests: predicates and flags, plain integers.
            Op::Setp { dst, dst_neg, .. } => {
                put(regs, *dst, Provenance::EMPTY);
                if let Some(q) = dst_neg {
                    put(regs, *q, Provenance::EMPTY);
                }
            }
            Op::Set { dst, .. } | Op::IsSpace { dst, .. } => put(regs, *dst, Provenance::EMPTY),
            Op::Ld {
                space,
                ty,
                dst,
                addr,
                ..
            } => {
                let param = match (self.entry, space, addr.base) {
                    (Some(entry), Space::Param, AddrBase::Absolute) => Some(entry),
                    _ => None,
                };
                let size = crate::machine::type_size(*ty);
                for (i, d) in dst.iter().enumerate() {
                    let Some(d) = d else { continue };
                    let v = match param {
                        Some(entry) => match u32::try_from(addr.offset + i as i64 * size as i64) {
                            Ok(offset) => atoms.of(Atom::Param {
                                entry,
                                offset,
                                size: size as u8,
                            }),
                            Err(_) => top,
                        },
                        None => top,
                    };
                    put(regs, *d, v);
                }
            }
            Op::Shfl {
                dst, dst_pred, a, ..
            } => {
                // Another lane's value of the same register at the same address.
                let v = self.src(atoms, regs, a);
                put(regs, *dst, v);
                if let Some(p) = dst_pred {
                    put(regs, *p, Provenance::EMPTY);
                }
            }
            Op::Atom { dst, .. } => {
                if let Some(d) = dst {
                    put(regs, *d, top);
                }
            }
            Op::Barrier { kind, .. } => {
                if let crate::program::BarrierKind::Red { dst, .. } = kind {
                    put(regs, *dst, top);
                }
            }
            Op::Vote { dst, .. }
            | Op::Redux { dst, .. }
            | Op::ActiveMask { dst }
            | Op::Extern { dst, .. } => put(regs, *dst, top),
            Op::Match { dst, dst_pred, .. } => {
                put(regs, *dst, top);
                if let Some(p) = dst_pred {
                    put(regs, *p, top);
                }
            }
            Op::Mma(m) => {
                for d in m.d.iter() {
                    put(regs, *d, top);
                }
            }
            Op::LdMatrix { dst, rows, .. } => {
                for r in dst.iter().chain(rows.iter()) {
                    put(regs, *r, top);
                }
            }
            Op::Call { rets, .. } => {
                for r in rets.iter() {
                    if let ParamLoc::Reg(r) = r {
                        put(regs, *r, top);
                    }
                }
            }
            // No register written.
            Op::St { .. }
            | Op::WarpSync { .. }
            | Op::Fence { .. }
            | Op::Bra { .. }
            | Op::BraIndirect { .. }
            | Op::Ret
            | Op::Exit
            | Op::Trap
            | Op::Nop
            | Op::Ssy { .. }
            | Op::Sync
            | Op::Brk
            | Op::PreBrk { .. }
            | Op::PreRet { .. } => {}
        }
    }
}

/// Per address, what [`stores_of_function`] fills in.
struct Addressed<'a> {
    /// [`MayWrite::own`].
    own: &'a mut [Provenance],
    /// [`MayWrite::accessed`].
    accessed: &'a mut [Provenance],
}

/// The global memory each store of `f` writes ([`MayWrite::own`]) and each access reads or
/// writes ([`MayWrite::accessed`]), from the forward analysis of which register holds what.
fn stores_of_function(
    program: &Program,
    id: FuncId,
    f: &Function,
    atoms: &mut Atoms,
    out: Addressed<'_>,
) {
    let Addressed { own, accessed } = out;
    let nregs = f.registers.len().max(program.global_registers.len());
    let blocks = &f.cfg.blocks;
    let cx = Cx {
        program,
        entry: (f.kind == FunctionKind::Entry).then_some(id),
        globals: program.global_registers.len(),
    };
    let analysed = !f.explicit_reconvergence
        && blocks.len().saturating_mul(nregs.max(1)) <= FUNCTION_WORDS
        && blocks.first().is_some_and(|b| b.start == f.start);
    // Per block, the registers' sets on entry (`None`: not reached yet).
    let mut entry: Vec<Option<Vec<Provenance>>> = vec![None; blocks.len()];
    if analysed {
        let first = match cx.entry {
            // Registers start at zero; module-scope ones may hold anything.
            Some(_) => (0..nregs)
                .map(|r| {
                    if r < cx.globals {
                        Provenance::TOP
                    } else {
                        Provenance::EMPTY
                    }
                })
                .collect(),
            // Parameters and the stale registers of the callee's level.
            None => vec![Provenance::TOP; nregs],
        };
        entry[0] = Some(first);
        let mut regs = vec![Provenance::EMPTY; nregs];
        let mut changed = true;
        while changed {
            changed = false;
            for (k, bb) in blocks.iter().enumerate() {
                let Some(start) = &entry[k] else { continue };
                regs.copy_from_slice(start);
                for pc in bb.start..bb.end {
                    cx.transfer(atoms, &program.instructions[pc as usize], &mut regs);
                }
                for &s in &bb.successors {
                    match &mut entry[s] {
                        Some(old) => {
                            for (o, v) in old.iter_mut().zip(&regs) {
                                let j = o.join(*v);
                                if j != *o {
                                    *o = j;
                                    changed = true;
                                }
                            }
                        }
                        slot @ None => {
                            *slot = Some(regs.clone());
                            changed = true;
                        }
                    }
                }
            }
        }
    }
    // Every store with the sets before it; a block the analysis did not reach (or a function
    // it did not analyse) with every register Top.
    let all_top = vec![Provenance::TOP; nregs];
    let mut regs = vec![Provenance::TOP; nregs];
    for (k, bb) in blocks.iter().enumerate() {
        regs.copy_from_slice(entry.get(k).and_then(|e| e.as_deref()).unwrap_or(&all_top));
        for pc in bb.start..bb.end {
            let ins = &program.instructions[pc as usize];
            (own[pc as usize], accessed[pc as usize]) = match &ins.op {
                Op::St { space, addr, .. } | Op::Atom { space, addr, .. } => {
                    let p = cx.store(atoms, &regs, *space, addr);
                    (p, p)
                }
                // A load's address names memory as a store's does.
                Op::Ld { space, addr, .. } => {
                    (Provenance::EMPTY, cx.store(atoms, &regs, *space, addr))
                }
                _ => (Provenance::EMPTY, Provenance::EMPTY),
            };
            if analysed {
                cx.transfer(atoms, ins, &mut regs);
            } else {
                regs.fill(Provenance::TOP);
            }
        }
    }
    // Addresses outside every basic block (none in a well-formed graph): Top if they store
    // (or load, for what they access).
    for pc in f.start..f.end {
        if !blocks.iter().any(|b| b.start <= pc && pc < b.end) {
            match program.instructions[pc as usize].op {
                Op::St { .. } | Op::Atom { .. } => {
                    own[pc as usize] = Provenance::TOP;
                    accessed[pc as usize] = Provenance::TOP;
                }
                Op::Ld { .. } => accessed[pc as usize] = Provenance::TOP,
                _ => {}
            }
        }
    }
}

/// What a call at `ins` adds from its callees, given the callees' `ahead` at their first
/// addresses.
fn callees(program: &Program, ins: &Instr, ahead: &[Provenance]) -> Provenance {
    let Op::Call { target, .. } = &ins.op else {
        return Provenance::EMPTY;
    };
    let entry = |id: &FuncId| match program.functions.get(id.0 as usize) {
        Some(f) if f.start < f.end => ahead[f.start as usize],
        Some(_) => Provenance::EMPTY,
        None => Provenance::TOP,
    };
    match target {
        CallTarget::Direct(id) => entry(id),
        CallTarget::Indirect { candidates, .. } if !candidates.is_empty() => candidates
            .iter()
            .fold(Provenance::EMPTY, |v, id| v.join(entry(id))),
        CallTarget::Indirect { .. } => Provenance::TOP,
    }
}

/// [`MayWrite::ahead`] of every address (the least fixpoint, see the module documentation).
fn ahead(program: &Program, own: &[Provenance]) -> Vec<Provenance> {
    let n = program.instructions.len();
    // Addresses outside every function stay Top.
    let mut ahead = vec![Provenance::TOP; n];
    for f in &program.functions {
        for pc in f.start..f.end {
            ahead[pc as usize] = Provenance::EMPTY;
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for f in &program.functions {
            changed |= ahead_of_function(program, f, own, &mut ahead);
        }
    }
    ahead
}

/// One round of `f`'s backward analysis to its own fixpoint; whether anything grew.
fn ahead_of_function(
    program: &Program,
    f: &Function,
    own: &[Provenance],
    ahead: &mut [Provenance],
) -> bool {
    let mut grew = false;
    let mut set = |ahead: &mut [Provenance], pc: Pc, v: Provenance| {
        let slot = &mut ahead[pc as usize];
        let j = slot.join(v);
        if j != *slot {
            *slot = j;
            grew = true;
        }
    };
    let blocks = &f.cfg.blocks;
    let covered: u64 = blocks.iter().map(|b| (b.end - b.start) as u64).sum();
    if f.explicit_reconvergence || covered != (f.end - f.start) as u64 {
        // Edges the graph does not hold: the whole body's writes everywhere.
        let mut all = Provenance::EMPTY;
        for pc in f.start..f.end {
            let ins = &program.instructions[pc as usize];
            all = all
                .join(own[pc as usize])
                .join(callees(program, ins, ahead));
        }
        for pc in f.start..f.end {
            set(ahead, pc, all);
        }
        return grew;
    }
    let mut changed = true;
    while changed {
        changed = false;
        for bb in blocks.iter().rev() {
            let mut v = bb
                .successors
                .iter()
                .filter_map(|&s| blocks.get(s))
                .fold(Provenance::EMPTY, |v, s| v.join(ahead[s.start as usize]));
            for pc in (bb.start..bb.end).rev() {
                let ins = &program.instructions[pc as usize];
                v = v.join(own[pc as usize]).join(callees(program, ins, ahead));
                let before = ahead[pc as usize];
                set(ahead, pc, v);
                if ahead[pc as usize] != before {
                    changed = true;
                }
                v = ahead[pc as usize];
            }
        }
    }
    grew
}

/// The summary of a program, computed on first use (see the module documentation). Equal to
/// every other (a cache of a function of the program, not part of it).
#[derive(Default, Clone)]
pub struct LazyMayWrite(OnceLock<MayWrite>);

impl LazyMayWrite {
    pub(crate) fn get(&self, program: &Program) -> &MayWrite {
        self.0.get_or_init(|| MayWrite::analyse(program))
    }
}

impl PartialEq for LazyMayWrite {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for LazyMayWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LazyMayWrite")
    }
}
