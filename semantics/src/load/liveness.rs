//! Live registers: per address, the registers a thread there may read before it writes them
//! (a backward may-analysis over each function's instructions). The canonical state
//! ([`crate::machine::Machine::state_fingerprint`]) leaves out every register that is dead
//! where its lane resumes, so that states differing only in values no future step reads are
//! one state: the dead-variable reduction of explicit-state model checkers (Holzmann, "The
//! Model Checker SPIN", IEEE TSE 23(5), 1997, and Bozga, Fernandez and Ghirvu, "State Space
//! Reduction based on Live Variables Analysis", SAS 1999). A spinning thread's last loaded
//! value, an atomic's unused result and a value loaded then stored are the usual dead
//! registers; each multiplied the states before.
//!
//! The rules, per function (`live-in(pc) = uses(pc) ∪ (live-out(pc) \ kills(pc))`, live-out the
//! union of the successors' live-in over the function's control-flow graph, to a fixpoint):
//! * **kills**: the destinations of an *unguarded* instruction that writes the whole register
//!   in every lane that executes it (the data, conversion, comparison, load, atomic and
//!   warp-collective instructions that produce a value; PTX ISA 9.7.1-9.7.9, 9.7.12, 9.7.13).
//!   A guarded instruction kills nothing (a lane whose guard is false keeps the old value).
//! * **uses**: the guard, the sources, and every other register the instruction names and does
//!   not kill: a `call` uses its arguments, its return registers (written only on return) and
//!   its target; `bar.red`'s destination (written when the barrier releases); `mma` and
//!   `ldmatrix` registers.
//! * **leaving**: `ret` of a device function uses its `.reg` return parameters and nothing after
//!   it; `exit`, `trap` and a kernel's end use every register of the function when an observer
//!   may read a thread's final registers ([`FinalRegisters::Observed`], the default), none
//!   otherwise.
//! * **everything live**: thesis-dialect functions (`ssy sync brk preBrk preRet` move to token
//!   targets the graph does not hold) and functions too large to tabulate.
//! * **always live** ([`Liveness::always`]): module-scope registers (a thread's values follow
//!   it into callees and back) and the sources of `shfl` (a lane may read the register of a lane
//!   that does not execute it, PTX ISA 9.7.9.6 "shfl.sync", which cudasem reads as it is).
//! * **stale columns** ([`Liveness::stale`]): a call level deeper than a lane's call depth keeps
//!   the registers of its last callee, and the next callee starts with them (`call` does not
//!   clear its registers): live there is what some device function may read before writing it.
//!
//! The sets are computed on first use ([`super::super::Program::liveness`]): only explorers
//! hash states, and a large module's table is not free.

use super::cfg::successors;
use crate::program::{
    AddrBase, Address, FunctionKind, Instr, Op, ParamLoc, PredSrc, Program, RegId, Src,
};
use std::sync::OnceLock;

/// Whether anything reads a thread's registers after it has exited: what `exit` uses in the
/// analysis, and whether the canonical state keeps an exited lane's registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FinalRegisters {
    /// A thread's final registers may be observed: `exit` reads every register, and exited
    /// lanes, completed warps and completed blocks keep their registers in the canonical state
    /// (the machine keeps a completed block's for [`crate::machine::Machine::register`]). For a
    /// tool that compares states by what an exited thread left in its registers: the litmus
    /// command reads its condition's registers so.
    Observed,
    /// Nothing reads a thread's registers once it has exited (the default): an exited thread
    /// has no future, and every other search's outcome is memory contents and how the run
    /// ended.
    #[default]
    Unobserved,
}

/// A set of registers of one function (bit `r` of word `r / 64` is register `r`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveSet<'a> {
    /// Every register (not analysed).
    All,
    Bits(&'a [u64]),
}

/// The live-in sets of every address of a program under one [`FinalRegisters`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Liveness {
    /// Per address: the first word of its live-in set in `words` and the set's length in words;
    /// [`UNANALYSED`] for every register.
    sets: Vec<(u32, u32)>,
    words: Vec<u64>,
    always: Vec<u64>,
    /// `None`: every register.
    stale: Option<Vec<u64>>,
}

/// The length of a set that is every register.
const UNANALYSED: u32 = u32::MAX;

/// A function's table beyond this many words (8 MiB) is not built: its registers are all live.
const FUNCTION_WORDS: usize = 1 << 20;

/// The whole program's tables beyond this many words (128 MiB): later functions are not analysed.
const PROGRAM_WORDS: usize = 1 << 24;

impl Liveness {
    /// The registers live on entry to the instruction at `pc` (of the function whose body holds it).
    #[inline]
    pub fn live_in(&self, pc: u32) -> LiveSet<'_> {
        match self.sets.get(pc as usize) {
            Some(&(start, len)) if len != UNANALYSED => {
                LiveSet::Bits(&self.words[start as usize..(start + len) as usize])
            }
            _ => LiveSet::All,
        }
    }

    /// Registers live for every lane at every call level: module-scope registers and `shfl`
    /// sources.
    #[inline]
    pub fn always(&self) -> &[u64] {
        &self.always
    }

    /// Registers live in a lane's column of a call level deeper than its call depth.
    #[inline]
    pub fn stale(&self) -> LiveSet<'_> {
        self.stale.as_deref().map_or(LiveSet::All, LiveSet::Bits)
    }

    /// The analysis of `program` (see the module documentation).
    pub fn analyse(program: &Program, exit: FinalRegisters) -> Liveness {
        let mut sets = vec![(0u32, UNANALYSED); program.instructions.len()];
        let mut words: Vec<u64> = Vec::new();
        let mut scratch = Scratch::default();
        for f in &program.functions {
            let len = (f.end - f.start) as usize;
            let stride = f.registers.len().div_ceil(64).max(1);
            if f.explicit_reconvergence
                || stride * len > FUNCTION_WORDS
                || words.len() + stride * len > PROGRAM_WORDS
            {
                continue;
            }
            let base = words.len();
            words.resize(base + stride * len, 0);
            let leave_all = exit == FinalRegisters::Observed;
            analyse_function(
                program,
                f,
                leave_all,
                stride,
                &mut words[base..],
                &mut scratch,
            );
            for i in 0..len {
                sets[f.start as usize + i] = ((base + i * stride) as u32, stride as u32);
            }
        }
        let mut live = Liveness {
            sets,
            words,
            always: Vec::new(),
            stale: None,
        };
        live.always = always_live(program);
        live.stale = stale_live(program, &live);
        live
    }
}

/// Module-scope registers and `shfl` sources, over the largest register file of the program.
fn always_live(program: &Program) -> Vec<u64> {
    let most = program
        .functions
        .iter()
        .map(|f| f.registers.len())
        .max()
        .unwrap_or(0)
        .max(program.global_registers.len());
    let mut bits = vec![0u64; most.div_ceil(64).max(1)];
    for r in 0..program.global_registers.len() {
        set(&mut bits, RegId(r as u16));
    }
    for ins in &program.instructions {
        if let Op::Shfl { a: Src::Reg(r), .. } = &ins.op {
            set(&mut bits, *r);
        }
    }
    bits
}

/// What some device function may read before writing it, at its first instruction.
fn stale_live(program: &Program, live: &Liveness) -> Option<Vec<u64>> {
    let mut bits = live.always.clone();
    for f in &program.functions {
        if f.kind != FunctionKind::Func || f.start == f.end {
            continue;
        }
        match live.live_in(f.start) {
            LiveSet::All => return None,
            LiveSet::Bits(b) => {
                if bits.len() < b.len() {
                    bits.resize(b.len(), 0);
                }
                for (x, y) in bits.iter_mut().zip(b) {
                    *x |= y;
                }
            }
        }
    }
    Some(bits)
}

/// Working arrays of one function's analysis, kept from one function to the next.
#[derive(Default)]
struct Scratch {
    uses: Vec<u64>,
    kills: Vec<u64>,
    out: Vec<u64>,
    leave: Vec<bool>,
    succ: Vec<smallvec::SmallVec<[u32; 2]>>,
}

/// Fills `live` (`stride` words per address of `f`) with the live-in sets of `f`.
fn analyse_function(
    program: &Program,
    f: &crate::program::Function,
    leave_all: bool,
    stride: usize,
    live: &mut [u64],
    s: &mut Scratch,
) {
    let len = (f.end - f.start) as usize;
    reset(&mut s.uses, len * stride);
    reset(&mut s.kills, len * stride);
    s.leave.clear();
    s.succ.clear();
    for i in 0..len {
        let pc = f.start + i as u32;
        let ins = &program.instructions[pc as usize];
        let (uses, kills) = (
            &mut s.uses[i * stride..(i + 1) * stride],
            &mut s.kills[i * stride..(i + 1) * stride],
        );
        effects(ins, f, uses, kills);
        let (succ, exits) = successors(ins, pc, f.end, &[]);
        // A device function's `ret` leaves nothing live behind it (the caller's registers are
        // another level); every other way out ends the thread.
        let ends_thread = exits && !(matches!(ins.op, Op::Ret) && f.kind == FunctionKind::Func);
        s.leave.push(ends_thread && leave_all);
        s.succ.push(
            succ.iter()
                .map(|&p| p - f.start)
                .collect::<smallvec::SmallVec<_>>(),
        );
    }
    // Every register of the function, for what leaving uses.
    let mut every = vec![0u64; stride];
    for r in 0..f.registers.len() {
        set(&mut every, RegId(r as u16));
    }
    live.fill(0);
    reset(&mut s.out, stride);
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..len).rev() {
            let out = &mut s.out;
            if s.leave[i] {
                out.copy_from_slice(&every);
            } else {
                out.fill(0);
            }
            for &j in &s.succ[i] {
                let j = j as usize;
                for (o, x) in out.iter_mut().zip(&live[j * stride..(j + 1) * stride]) {
                    *o |= x;
                }
            }
            let row = i * stride..(i + 1) * stride;
            for ((dst, o), (u, k)) in live[row.clone()]
                .iter_mut()
                .zip(out.iter())
                .zip(s.uses[row.clone()].iter().zip(&s.kills[row]))
            {
                let new = u | (o & !k);
                if new != *dst {
                    *dst = new;
                    changed = true;
                }
            }
        }
    }
}

fn reset(v: &mut Vec<u64>, n: usize) {
    v.clear();
    v.resize(n, 0);
}

#[inline]
fn set(bits: &mut [u64], r: RegId) {
    if let Some(w) = bits.get_mut(r.0 as usize / 64) {
        *w |= 1 << (r.0 % 64);
    }
}

#[inline]
fn clear(bits: &mut [u64], r: RegId) {
    if let Some(w) = bits.get_mut(r.0 as usize / 64) {
        *w &= !(1 << (r.0 % 64));
    }
}

/// The uses and kills of one instruction of `f` (see the module documentation).
fn effects(ins: &Instr, f: &crate::program::Function, uses: &mut [u64], kills: &mut [u64]) {
    // Every register the instruction names is a use unless it is a destination the
    // instruction certainly overwrites; the sources are uses again afterwards, so that an
    // instruction whose destination is also a source (`add r, r, 1`) uses it.
    ins.op.for_each_register(&mut |r| set(uses, r));
    if ins.guard.is_none() {
        whole_writes(&ins.op, &mut |r| {
            set(kills, r);
            clear(uses, r);
        });
        reads(&ins.op, &mut |r| set(uses, r));
    }
    if let Some(g) = &ins.guard {
        set(uses, g.reg);
    }
    if matches!(ins.op, Op::Ret) && f.kind == FunctionKind::Func {
        for p in &f.return_params {
            if let ParamLoc::Reg(r) = p.loc {
                set(uses, r);
            }
        }
    }
}

/// The destinations `op` writes whole in every lane that executes it: those of
/// [`Op::for_each_written`] for the operations listed here. Anything not listed kills nothing
/// (a use, conservatively): a `bar.red` result, an `mma`/`ldmatrix` fragment and a call's
/// results are left out, and so is any operation added later until it is listed.
fn whole_writes(op: &Op, f: &mut impl FnMut(RegId)) {
    if matches!(
        op,
        Op::Unary { .. }
            | Op::Binary { .. }
            | Op::Ternary { .. }
            | Op::Bfi { .. }
            | Op::Prmt { .. }
            | Op::Pack { .. }
            | Op::Cvt { .. }
            | Op::Cvta { .. }
            | Op::IsSpace { .. }
            | Op::Set { .. }
            | Op::Slct { .. }
            | Op::Vote { .. }
            | Op::Redux { .. }
            | Op::ActiveMask { .. }
            | Op::Extern { .. }
            | Op::Unpack { .. }
            | Op::Setp { .. }
            | Op::Ld { .. }
            | Op::Atom { .. }
            | Op::Shfl { .. }
            | Op::Match { .. }
    ) {
        op.for_each_written(f);
    }
}

/// The registers the instructions of [`whole_writes`] read (their sources); for the others
/// every register they name is already a use.
fn reads(op: &Op, f: &mut impl FnMut(RegId)) {
    let mut src = |s: &Src| {
        if let Src::Reg(r) = s {
            f(*r);
        }
    };
    match op {
        Op::Unary { a, .. }
        | Op::Cvt { a, .. }
        | Op::Cvta { a, .. }
        | Op::IsSpace { a, .. }
        | Op::Unpack { src: a, .. } => src(a),
        Op::Binary { a, b, .. } => {
            src(a);
            src(b);
        }
        Op::Ternary { a, b, c, .. } | Op::Prmt { a, b, c, .. } | Op::Slct { a, b, c, .. } => {
            src(a);
            src(b);
            src(c);
        }
        Op::Bfi { a, b, pos, len, .. } => [a, b, pos, len].into_iter().for_each(src),
        Op::Pack { parts, .. } => parts.iter().for_each(src),
        Op::Setp { a, b, combine, .. } | Op::Set { a, b, combine, .. } => {
            src(a);
            src(b);
            if let Some((_, PredSrc { src: p, .. })) = combine {
                src(p);
            }
        }
        Op::Ld { addr, .. } => address(addr, &mut src),
        Op::Atom { addr, a, b, .. } => {
            address(addr, &mut src);
            src(a);
            if let Some(b) = b {
                src(b);
            }
        }
        Op::Vote { pred, mask, .. } => {
            src(&pred.src);
            if let Some(m) = mask {
                src(m);
            }
        }
        Op::Redux { a, mask, .. } | Op::Match { a, mask, .. } => {
            src(a);
            src(mask);
        }
        Op::Shfl { a, b, c, mask, .. } => {
            src(a);
            src(b);
            src(c);
            if let Some(m) = mask {
                src(m);
            }
        }
        _ => {}
    }
}

fn address(a: &Address, src: &mut impl FnMut(&Src)) {
    if let AddrBase::Reg(r) = a.base {
        src(&Src::Reg(r));
    }
}

/// The two analyses of a program, each computed on first use (see the module documentation).
/// Equal to every other (a cache of a function of the program, not part of it).
#[derive(Default, Clone)]
pub struct LazyLiveness {
    observed: OnceLock<Liveness>,
    unobserved: OnceLock<Liveness>,
}

impl LazyLiveness {
    pub(crate) fn get(&self, program: &Program, exit: FinalRegisters) -> &Liveness {
        let cell = match exit {
            FinalRegisters::Observed => &self.observed,
            FinalRegisters::Unobserved => &self.unobserved,
        };
        cell.get_or_init(|| Liveness::analyse(program, exit))
    }
}

impl PartialEq for LazyLiveness {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for LazyLiveness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LazyLiveness")
    }
}
