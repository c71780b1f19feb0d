//! Address forms: per `ld`, `st` and `atom` of a kernel on `.global` or a generic address, its
//! address as an affine function of the thread's `%tid` and `%ctaid`, when the launch fixes
//! everything else ([`access_forms`]). The machine enumerates these functions over a launch's
//! threads to find the global words that only one warp ever touches
//! ([`crate::machine::Machine::accesses_only_private_words`]): `out[blockIdx.x * blockDim.x +
//! threadIdx.x] = ...` is the usual one.
//!
//! **Forms.** A register holds a [`Affine`] form `c + Σ kᵢ·xᵢ` over the six variables `%tid.{x,y,z}`
//! and `%ctaid.{x,y,z}`, or is *unknown*. The launch substitutes everything else it fixes: `%ntid`
//! and `%nctaid`, and the kernel's parameters (`ld.param` at an absolute offset of the entry's
//! parameter buffer reads the launch's value). A form is exact: for every thread of the launch
//! that reaches the instruction, on any path, the register's 64-bit word equals the form's value.
//! To keep that true through the machine's fixed-width arithmetic (PTX ISA 9.7.1: results wrap
//! at the type's width, `cvt` and `mul.wide` extend by signedness), a result is kept only when its
//! value over every thread of the launch (`0 ≤ %tid < %ntid`, `0 ≤ %ctaid < %nctaid`, which
//! bounds an affine function by its corners) lies in `[0, 2^(w-1))` for the destination's width
//! `w`: then no wrap happened, the register holds it zero- or sign-extended alike, and every
//! later reader at any width and signedness reads the same integer. Operands need only be right
//! modulo the operation's width, except where they are extended (`mul.wide`, `mad.wide`, `cvt`),
//! where they too must lie in that range.
//!
//! **Transfer** (a forward must-analysis per kernel over its basic blocks, to a fixpoint):
//! `mov`, `add`, `sub`, `mul.lo` and `shl` by a constant, `mul.wide`, `mad.lo` and `mad.wide`
//! with a constant factor, `cvt` between integer types, `cvta` to and from the global window,
//! and `ld.param` of a kernel parameter; without `.sat` (a saturating result is kept only in
//! range anyway, but its operands are read by sign). Every other instruction makes every register
//! it writes unknown, and so do loads, atomics' results, warp-collective operations, calls'
//! results and module-scope registers. A guarded instruction keeps a register's form only when
//! the new one equals the old (a lane whose guard is false keeps the old value). At a merge point
//! a register keeps its form only when every incoming path gives the same one: a loop counter is
//! unknown. Registers start at zero in a kernel.
//!
//! **Not analysed** (every access unknown): device functions (their registers arrive from any
//! caller), thesis-dialect functions (`ssy sync brk preBrk preRet` move along edges the graph does
//! not hold), and functions too large to tabulate.

use crate::alu::{int_val, width};
use crate::program::{
    AddrBase, BinaryOp, Dim, FuncId, FunctionKind, Instr, Op, Pc, Program, RegId, Space,
    SpecialReg, Src, TernaryOp, UnaryOp,
};
use ptx_parser::ScalarType;

/// A function whose register table (blocks × registers) is larger than this is not analysed.
const FUNCTION_WORDS: usize = 1 << 22;

/// The variables of a form, in this order: `%tid.x, %tid.y, %tid.z, %ctaid.x, %ctaid.y,
/// %ctaid.z`.
pub const VARIABLES: usize = 6;

/// `c + Σ kᵢ·xᵢ` over the [`VARIABLES`] (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Affine {
    pub constant: i128,
    pub coefficients: [i128; VARIABLES],
}

/// Coefficients and constants beyond this are not kept (no overflow of `i128` anywhere).
const LIMIT: i128 = 1 << 100;

impl Affine {
    fn constant(c: i128) -> Affine {
        Affine {
            constant: c,
            coefficients: [0; VARIABLES],
        }
    }

    fn variable(i: usize) -> Affine {
        let mut coefficients = [0; VARIABLES];
        coefficients[i] = 1;
        Affine {
            constant: 0,
            coefficients,
        }
    }

    /// The constant, when the form has no variable.
    fn as_constant(&self) -> Option<i128> {
        self.coefficients
            .iter()
            .all(|&k| k == 0)
            .then_some(self.constant)
    }

    fn bounded(self) -> Option<Affine> {
        let ok = |v: i128| v.abs() < LIMIT;
        (ok(self.constant) && self.coefficients.iter().all(|&k| ok(k))).then_some(self)
    }

    fn add(&self, other: &Affine) -> Option<Affine> {
        let mut r = *self;
        r.constant += other.constant;
        for (k, o) in r.coefficients.iter_mut().zip(&other.coefficients) {
            *k += o;
        }
        r.bounded()
    }

    fn scale(&self, by: i128) -> Option<Affine> {
        if by.abs() >= LIMIT {
            return None;
        }
        let mut r = *self;
        r.constant *= by;
        for k in &mut r.coefficients {
            *k *= by;
        }
        r.bounded()
    }

    /// The value for the thread `tid` of block `ctaid`.
    pub fn eval(&self, tid: [u32; 3], ctaid: [u32; 3]) -> i128 {
        let xs = [tid[0], tid[1], tid[2], ctaid[0], ctaid[1], ctaid[2]];
        self.coefficients
            .iter()
            .zip(xs)
            .fold(self.constant, |v, (k, x)| v + k * x as i128)
    }

    /// The least and greatest value over the launch's threads: an affine function takes its
    /// extremes at the corners of the box `0 ≤ xᵢ ≤ maxᵢ`.
    fn range(&self, max: &[i128; VARIABLES]) -> (i128, i128) {
        let (mut lo, mut hi) = (self.constant, self.constant);
        for (k, m) in self.coefficients.iter().zip(max) {
            let v = k * m;
            if v < 0 {
                lo += v;
            } else {
                hi += v;
            }
        }
        (lo, hi)
    }
}

/// What a launch fixes for the analysis: `%ntid`, `%nctaid`, the kernel parameters' values and
/// where the global window lies in the generic address space.
pub struct LaunchConstants<'a> {
    pub block_dim: [u32; 3],
    pub grid_dim: [u32; 3],
    /// The generic address of global address 0 (`cvta`).
    pub global_window: u64,
    /// The `size` bytes at `offset` of the kernel's parameter buffer, zero-extended.
    pub param: &'a dyn Fn(u32, u32) -> Option<u64>,
}

impl LaunchConstants<'_> {
    /// The greatest value of each variable.
    fn max(&self) -> [i128; VARIABLES] {
        let m = |n: u32| n.saturating_sub(1) as i128;
        [
            m(self.block_dim[0]),
            m(self.block_dim[1]),
            m(self.block_dim[2]),
            m(self.grid_dim[0]),
            m(self.grid_dim[1]),
            m(self.grid_dim[2]),
        ]
    }
}

/// The address of one global-capable access of a kernel: `None` when unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessForm {
    pub pc: Pc,
    /// The address before the state space resolves it (a `.global` address, or a generic one).
    pub address: Option<Affine>,
}

/// A register's abstract value: unreached paths are `None` at the block level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    Unknown,
    Form(Affine),
}

fn join(a: Value, b: Value) -> Value {
    if a == b { a } else { Value::Unknown }
}

/// Whether `ty` is an integer type of at most 64 bits, and its width.
fn int_width(ty: ScalarType) -> Option<u32> {
    use ScalarType::*;
    matches!(
        ty,
        S8 | S16 | S32 | S64 | U8 | U16 | U32 | U64 | B8 | B16 | B32 | B64
    )
    .then(|| width(ty))
}

/// The analysis of one kernel under one launch.
struct Cx<'a> {
    launch: &'a LaunchConstants<'a>,
    max: [i128; VARIABLES],
    /// Module-scope registers (ids `0..globals`), always unknown.
    globals: usize,
}

impl Cx<'_> {
    /// Whether `f`'s value lies in `[0, 2^(w-1))` for every thread (module documentation).
    fn fits(&self, f: &Affine, w: u32) -> bool {
        let (lo, hi) = f.range(&self.max);
        lo >= 0 && hi < 1i128 << (w.clamp(1, 64) - 1)
    }

    /// The form of operand `s` read at type `ty`, right modulo the type's width; `exact`: its
    /// integer value as the type reads it (extended), which asks more of a register.
    fn operand(&self, regs: &[Value], s: &Src, ty: ScalarType, exact: bool) -> Option<Affine> {
        let w = int_width(ty)?;
        match s {
            Src::Reg(r) => match regs.get(r.0 as usize) {
                Some(Value::Form(f)) if !exact || self.fits(f, w) => Some(*f),
                _ => None,
            },
            Src::Imm(v) => Some(Affine::constant(int_val(ty, *v))),
            Src::Special(sr) => {
                let d = |d: &Dim| match d {
                    Dim::X => 0,
                    Dim::Y => 1,
                    Dim::Z => 2,
                };
                match sr {
                    SpecialReg::Tid(x) => Some(Affine::variable(d(x))),
                    SpecialReg::Ctaid(x) => Some(Affine::variable(3 + d(x))),
                    SpecialReg::Ntid(x) => {
                        Some(Affine::constant(self.launch.block_dim[d(x)] as i128))
                    }
                    SpecialReg::Nctaid(x) => {
                        Some(Affine::constant(self.launch.grid_dim[d(x)] as i128))
                    }
                    _ => None,
                }
            }
            Src::FrameAddr(_) => None,
        }
    }

    /// `a * b` where one of them is a constant.
    fn product(a: &Affine, b: &Affine) -> Option<Affine> {
        match (a.as_constant(), b.as_constant()) {
            (Some(k), _) => b.scale(k),
            (_, Some(k)) => a.scale(k),
            _ => None,
        }
    }

    /// The form `ins` computes into its one destination, with that destination's width, when it
    /// is one of the operations the module documentation lists.
    fn computed(&self, ins: &Instr, regs: &[Value]) -> Option<(RegId, Affine, u32)> {
        let src = |s: &Src, ty, exact| self.operand(regs, s, ty, exact);
        match &ins.op {
            Op::Unary {
                op: UnaryOp::Mov,
                ty,
                dst,
                a,
                ..
            } => Some((*dst, src(a, *ty, false)?, int_width(*ty)?)),
            Op::Binary {
                op,
                ty,
                flags,
                dst,
                a,
                b,
            } if !flags.sat => {
                let w = int_width(*ty)?;
                let f = match op {
                    BinaryOp::Add => src(a, *ty, false)?.add(&src(b, *ty, false)?)?,
                    BinaryOp::Sub => src(a, *ty, false)?.add(&src(b, *ty, false)?.scale(-1)?)?,
                    BinaryOp::Mul => Self::product(&src(a, *ty, false)?, &src(b, *ty, false)?)?,
                    BinaryOp::Shl => {
                        let n = src(b, ScalarType::U32, false)?.as_constant()?;
                        if !(0..w as i128).contains(&n) {
                            return None;
                        }
                        src(a, *ty, false)?.scale(1 << n)?
                    }
                    BinaryOp::MulWide => {
                        let f = Self::product(&src(a, *ty, true)?, &src(b, *ty, true)?)?;
                        return Some((*dst, f, 2 * w));
                    }
                    _ => return None,
                };
                Some((*dst, f, w))
            }
            Op::Ternary {
                op,
                ty,
                flags,
                dst,
                a,
                b,
                c,
            } if !flags.sat => {
                let w = int_width(*ty)?;
                let (exact, dw, cty) = match op {
                    TernaryOp::Mad => (false, w, *ty),
                    TernaryOp::MadWide => (true, 2 * w, super::types::wide(*ty)?),
                    _ => return None,
                };
                let p = Self::product(&src(a, *ty, exact)?, &src(b, *ty, exact)?)?;
                Some((*dst, p.add(&src(c, cty, false)?)?, dw))
            }
            Op::Cvt {
                dst_ty,
                src_ty,
                flags,
                dst,
                a,
            } if !flags.sat => {
                let w = int_width(*dst_ty)?.min(int_width(*src_ty)?);
                let f = src(a, *src_ty, true)?;
                self.fits(&f, w).then_some((*dst, f, w))
            }
            Op::Cvta {
                to_generic,
                space: Space::Global,
                dst,
                a,
            } => {
                let window = Affine::constant(self.launch.global_window as i128);
                let v = src(a, ScalarType::U64, false)?;
                let f = if *to_generic {
                    v.add(&window)?
                } else {
                    v.add(&window.scale(-1)?)?
                };
                Some((*dst, f, 64))
            }
            Op::Ld {
                space: Space::Param,
                ty,
                vector: 1,
                dst,
                addr,
                ..
            } if addr.base == AddrBase::Absolute => {
                let d = dst[0]?;
                let w = int_width(*ty)?;
                let offset = u32::try_from(addr.offset).ok()?;
                let v = (self.launch.param)(offset, w / 8)?;
                Some((d, Affine::constant(v as i128), w))
            }
            _ => None,
        }
    }

    /// Moves `regs` over `ins` (module documentation).
    /// `analysed`: false makes every register written unknown.
    fn transfer(&self, ins: &Instr, regs: &mut [Value], analysed: bool) {
        let computed = if analysed {
            self.computed(ins, regs)
        } else {
            None
        };
        let kept = computed.and_then(|(d, f, w)| self.fits(&f, w).then_some((d, f)));
        let guarded = ins.guard.is_some();
        let globals = self.globals;
        ins.op.for_each_written(&mut |r| {
            let Some(slot) = regs.get_mut(r.0 as usize) else {
                return;
            };
            let new = match kept {
                Some((d, f)) if d == r && (r.0 as usize) >= globals => Value::Form(f),
                _ => Value::Unknown,
            };
            *slot = if guarded { join(*slot, new) } else { new };
        });
    }
}

/// The address of the access `ins` makes, when it may reach global memory: an `ld`, `st` or
/// `atom` on `.global` or a generic address that is not frame-relative. `Some(None)`: such an
/// access through an unknown address.
fn access_address(ins: &Instr, regs: &[Value]) -> Option<Option<Affine>> {
    let (space, addr) = match &ins.op {
        Op::Ld { space, addr, .. } | Op::St { space, addr, .. } | Op::Atom { space, addr, .. } => {
            (space, addr)
        }
        _ => return None,
    };
    if !matches!(space, Space::Global | Space::Generic) || addr.base == AddrBase::Frame {
        return None;
    }
    let base = match addr.base {
        AddrBase::Reg(r) => match regs.get(r.0 as usize) {
            Some(Value::Form(f)) => Some(*f),
            _ => None,
        },
        _ => Some(Affine::constant(0)),
    };
    // The machine adds the offset with wrapping; the enumeration wraps the same way.
    Some(base.and_then(|b| b.add(&Affine::constant(addr.offset as i128))))
}

/// Every `ld`, `st` and `atom` of kernel `entry` that may reach global memory, with its address
/// form under `launch` (module documentation), in address order.
pub fn access_forms(
    program: &Program,
    entry: FuncId,
    launch: &LaunchConstants<'_>,
) -> Vec<AccessForm> {
    let Some(f) = program.functions.get(entry.0 as usize) else {
        return Vec::new();
    };
    let cx = Cx {
        launch,
        max: launch.max(),
        globals: program.global_registers.len(),
    };
    let nregs = f.registers.len().max(program.global_registers.len());
    let blocks = &f.cfg.blocks;
    let analysed = f.kind == FunctionKind::Entry
        && !f.explicit_reconvergence
        && blocks.len().saturating_mul(nregs.max(1)) <= FUNCTION_WORDS
        && blocks.first().is_some_and(|b| b.start == f.start);
    let mut entry_regs: Vec<Option<Vec<Value>>> = vec![None; blocks.len()];
    if analysed {
        entry_regs[0] = Some(
            (0..nregs)
                .map(|r| {
                    if r < cx.globals {
                        Value::Unknown
                    } else {
                        Value::Form(Affine::constant(0))
                    }
                })
                .collect(),
        );
        let mut regs = vec![Value::Unknown; nregs];
        let mut changed = true;
        while changed {
            changed = false;
            for (k, bb) in blocks.iter().enumerate() {
                let Some(start) = &entry_regs[k] else {
                    continue;
                };
                regs.copy_from_slice(start);
                for pc in bb.start..bb.end {
                    cx.transfer(&program.instructions[pc as usize], &mut regs, true);
                }
                for &s in &bb.successors {
                    match &mut entry_regs[s] {
                        Some(old) => {
                            for (o, v) in old.iter_mut().zip(&regs) {
                                let j = join(*o, *v);
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
    let unknown = vec![Value::Unknown; nregs];
    let mut regs = unknown.clone();
    let mut forms = Vec::new();
    let mut covered = vec![false; (f.end - f.start) as usize];
    for (k, bb) in blocks.iter().enumerate() {
        regs.copy_from_slice(
            entry_regs
                .get(k)
                .and_then(|e| e.as_deref())
                .unwrap_or(&unknown),
        );
        for pc in bb.start..bb.end {
            let ins = &program.instructions[pc as usize];
            if let Some(c) = covered.get_mut((pc - f.start) as usize) {
                *c = true;
            }
            if let Some(address) = access_address(ins, &regs) {
                forms.push(AccessForm { pc, address });
            }
            cx.transfer(ins, &mut regs, analysed);
        }
    }
    // Addresses outside every basic block (none in a well-formed graph): unknown.
    for pc in f.start..f.end {
        if !covered[(pc - f.start) as usize]
            && access_address(&program.instructions[pc as usize], &unknown).is_some()
        {
            forms.push(AccessForm { pc, address: None });
        }
    }
    forms.sort_by_key(|a| a.pc);
    forms
}
