//! Decoded instructions: the compact, typed form every PTX instruction is lowered to at load time.
//!
//! The machine never looks at text: `semantics::load` resolves names to register ids, labels to
//! program addresses, variables to addresses in their state space, and modifiers to the fields
//! below, once. One [`Instr`] per program address (thesis 5.1.2, `InstrEnv` and `GuardEnv`).
//!
//! Register values are 64-bit words per lane; an instruction's [`ScalarType`] says how many of the
//! low bits are meaningful and how they are interpreted (PTX ISA 5.2). Predicates are registers
//! holding 0 or 1.

use ptx_parser::ScalarType;
use serde::Serialize;

/// A program address: an index into [`super::Program::instructions`].
pub type Pc = u32;

/// A register of the current function frame (after scope resolution and renaming; vector registers
/// `.v4` occupy four consecutive ids, `x` first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct RegId(pub u16);

/// A function of the program: an index into [`super::Program::functions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct FuncId(pub u32);

/// `.x .y .z` of the 3-D special registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Dim {
    X,
    Y,
    Z,
}

/// Special registers (PTX ISA 10). The thesis has only `%tid %ntid %ctaid %nctaid` (5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum SpecialReg {
    Tid(Dim),
    Ntid(Dim),
    Ctaid(Dim),
    Nctaid(Dim),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    GridId,
    LanemaskEq,
    LanemaskLe,
    LanemaskLt,
    LanemaskGe,
    LanemaskGt,
    Clock,
    Clock64,
    GlobalTimer,
    /// `%dynamic_smem_size`
    DynamicSmemSize,
    /// `%total_smem_size`
    TotalSmemSize,
}

/// A source operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Src {
    Reg(RegId),
    /// An immediate, already converted to the instruction's type and bit pattern (e.g. `0f3F800000`
    /// for an `.f32` operation is `0x3F80_0000`), or a resolved address: a module variable's address
    /// in its state space, a function's address ([`super::Program::function_address`]).
    Imm(u64),
    Special(SpecialReg),
    /// The `.local` address of a variable in the current frame: frame base + this offset.
    /// (`mov.u64 %SPL, __local_depot0;` in clang's output.)
    FrameAddr(u32),
}

/// State spaces an access can name (PTX ISA 5.1). `Generic` is an `ld`/`st` without a space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Space {
    Generic,
    Global,
    Shared,
    Local,
    Const,
    /// Kernel parameters (read-only, per launch) and, inside functions, the current frame's
    /// `.param` variables (which live in the frame like `.local`, as thesis 5.1.3 step 3 lowers them).
    Param,
}

/// How an address operand's base is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum AddrBase {
    /// `[%rd1+8]`: the register's value.
    Reg(RegId),
    /// `[name+4]` of a module variable or kernel parameter, or `[0x100]`: the absolute address
    /// in the instruction's space is `offset` alone.
    Absolute,
    /// `[name+4]` of a frame variable (function-scope `.local`/`.param`, formal `.param` of a
    /// `.func`): the current frame base + `offset`. The instruction's space is `Local` or `Param`.
    Frame,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Address {
    pub base: AddrBase,
    /// Byte offset added to the base (the variable's resolved address is folded in here).
    pub offset: i64,
}

/// Memory-model qualifiers of `ld`/`st`/`atom`/`red`/`fence` (PTX ISA 8, "Memory Consistency Model").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum MemOrder {
    /// No qualifier, or `.weak`.
    Weak,
    Volatile,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    Sc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Scope {
    Cta,
    Cluster,
    Gpu,
    Sys,
}

/// Cache operators (PTX ISA 9.7.9.1); the flat memory ignores them, the cached model honours them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum CacheOp {
    Ca,
    Cg,
    Cs,
    Lu,
    Cv,
    Wb,
    Wt,
}

/// Memory access attributes shared by loads, stores and atomics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct MemQualifiers {
    pub order: MemOrder,
    /// `None` when not written (the PTX default for the order applies: `.gpu` for strong ops).
    pub scope: Option<Scope>,
    pub cache: Option<CacheOp>,
    /// `ld.global.nc`: read through the non-coherent texture path.
    pub non_coherent: bool,
}

/// Up to four registers of a vector access (`.v2`, `.v4`); `None` is a `_` sink.
pub type VecDst = [Option<RegId>; 4];

/// Rounding modifiers (PTX ISA 9.7.3 and `cvt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Rounding {
    /// `.rn` float: to nearest even.
    Rn,
    Rz,
    Rm,
    Rp,
    /// `.rni` integer rounding of a float (cvt): nearest even.
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

/// Float/int modifiers of an arithmetic instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct ArithFlags {
    pub rounding: Option<Rounding>,
    /// `.ftz`: flush subnormal inputs and results to sign-preserving zero.
    pub ftz: bool,
    /// `.sat`: saturate (ints: clamp to the type's range; floats: to [0, 1]).
    pub sat: bool,
    /// `.approx` / `.full`: cudasem computes these correctly rounded (documented deviation).
    pub approx: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum UnaryOp {
    Mov,
    Not,
    /// `cnot`: 1 if the operand is 0, else 0.
    Cnot,
    Neg,
    Abs,
    Popc,
    Clz,
    Brev,
    /// `bfind`; `bfind.shiftamt` is `BfindShiftAmt`.
    Bfind,
    BfindShiftAmt,
    Rcp,
    Sqrt,
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum BinaryOp {
    Add,
    Sub,
    /// `mul.lo` (ints), `mul` (floats).
    Mul,
    /// `mul.hi`: the high half of the double-width product.
    MulHi,
    /// `mul.wide`: the full product into a register of twice the type's width (`ty` is the source type).
    MulWide,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    /// Shift amounts larger than the width clamp (PTX ISA 9.7.8.7).
    Shl,
    /// Arithmetic for signed types, logical otherwise.
    Shr,
    Copysign,
    /// Extended-precision arithmetic (PTX ISA 9.7.2): `add.cc` writes the carry flag, `addc`
    /// reads it, `addc.cc` both; likewise for `sub`. The carry flag is per-thread state.
    AddCc,
    AddC,
    AddCCc,
    SubCc,
    SubC,
    SubCCc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum TernaryOp {
    /// `mad.lo` (ints), `mad` / `fma` (floats: fused, single rounding).
    Mad,
    MadHi,
    /// `mad.wide`: `c` and the destination are twice the width of `ty`.
    MadWide,
    Fma,
    /// `bfe d, a, pos, len`.
    Bfe,
    /// `selp d, a, b, p`: `c` is the predicate.
    Selp,
    /// `prmt.b32 d, a, b, c` with the default mode; other modes are in `Prmt`.
    Prmt,
    /// `shf.l/r.wrap/clamp` funnel shifts.
    ShfLWrap,
    ShfLClamp,
    ShfRWrap,
    ShfRClamp,
    /// `mad.lo.cc`, `madc.lo`: extended-precision multiply-add (PTX ISA 9.7.2.5).
    MadCc,
    MadC,
}

/// `prmt` modes other than the default (PTX ISA 9.7.8.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum PrmtMode {
    Default,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

/// `setp`/`set` comparisons (PTX ISA 9.7.3.x); the `u` forms are true when either operand is NaN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Compare {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Unsigned-integer spellings `.lo .ls .hi .hs` are lowered to Lt Le Gt Ge on the unsigned type.
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    /// Both ordered (neither NaN).
    Num,
    /// Either NaN.
    Nan,
}

/// `.and .or .xor` of `setp`/`set`/`bar.red`/`vote`-like predicate combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// A predicate source, possibly negated (`!%p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct PredSrc {
    pub src: Src,
    pub negated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum AtomOp {
    Add,
    Inc,
    Dec,
    Exch,
    Cas,
    Min,
    Max,
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// `bar.red` reductions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum BarRed {
    /// `.popc.u32`
    Popc,
    And,
    Or,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum BarrierKind {
    /// `bar.sync`, `bar.cta.sync`, `barrier.sync`, `bar.sync.aligned`: wait.
    Sync,
    /// `bar.arrive`: arrive without waiting.
    Arrive,
    /// `bar.red.op.type d, a, {b,} p`: wait and reduce `p` over the block's participating threads.
    Red {
        op: BarRed,
        dst: RegId,
        pred: PredSrc,
    },
}

/// `membar` levels (thesis `MemBarLevel`) and `fence` scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum FenceLevel {
    Cta,
    Gpu,
    Sys,
}

/// Where a call argument or return value lives, in the caller or the callee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum ParamLoc {
    /// A `.reg` parameter or a register argument.
    Reg(RegId),
    /// A `.param` variable in the frame at this offset, `size` bytes.
    Frame { offset: u32, size: u32 },
    /// An immediate argument (`call f, (1)` is rare but legal for `.reg` params).
    Imm(u64),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum CallTarget {
    Direct(FuncId),
    /// `call %rd1, (args), prototype;`: the register holds a function address; `candidates` are
    /// the functions whose address the program takes (for validation and `cudasem cfg`).
    Indirect {
        reg: RegId,
        candidates: Box<[FuncId]>,
    },
}

/// A decoded instruction's operation. Every variant cites the PTX ISA section it implements; the
/// machine's semantics for each lives in `semantics::machine::exec`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum Op {
    /// `mov`, `not`, `neg`, `abs`, `popc`, `clz`, `brev`, `bfind`, `cnot`, `rcp`, `sqrt`, `rsqrt`,
    /// `ex2`, `lg2`, `sin`, `cos` (PTX ISA 9.7.1-9.7.4).
    Unary {
        op: UnaryOp,
        ty: ScalarType,
        flags: ArithFlags,
        dst: RegId,
        a: Src,
    },
    /// `add sub mul div rem min max and or xor shl shr copysign` and the carry forms.
    Binary {
        op: BinaryOp,
        ty: ScalarType,
        flags: ArithFlags,
        dst: RegId,
        a: Src,
        b: Src,
    },
    /// `mad fma bfe selp prmt shf`.
    Ternary {
        op: TernaryOp,
        ty: ScalarType,
        flags: ArithFlags,
        dst: RegId,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `bfi.b32 d, a, b, pos, len` (PTX ISA 9.7.8.12).
    Bfi {
        ty: ScalarType,
        dst: RegId,
        a: Src,
        b: Src,
        pos: Src,
        len: Src,
    },
    /// `prmt.b32.mode d, a, b, c` with a non-default mode.
    Prmt {
        mode: PrmtMode,
        dst: RegId,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `mov.b64 %rd1, {%r1, %r2}`: pack `parts` (low first) of `part_ty` into `dst`.
    Pack {
        part_ty: ScalarType,
        dst: RegId,
        parts: Box<[Src]>,
    },
    /// `mov.b64 {%r1, %r2}, %rd1`: split `src` into parts of `part_ty` (low first; `None` = `_`).
    Unpack {
        part_ty: ScalarType,
        dsts: Box<[Option<RegId>]>,
        src: Src,
    },
    /// `cvt.dty.sty` (PTX ISA 9.7.9.21): rounding, `.sat`, `.ftz`.
    Cvt {
        dst_ty: ScalarType,
        src_ty: ScalarType,
        flags: ArithFlags,
        dst: RegId,
        a: Src,
    },
    /// `cvta.space.size d, a` (to generic) or `cvta.to.space.size` (from generic).
    Cvta {
        to_generic: bool,
        space: Space,
        dst: RegId,
        a: Src,
    },
    /// `isspacep.space p, a`.
    IsSpace { space: Space, dst: RegId, a: Src },
    /// `setp.cmp[.bop].ty p[|q], a, b[, {!}c]` (PTX ISA 9.7.3.5 / 9.7.4.2).
    Setp {
        cmp: Compare,
        ty: ScalarType,
        ftz: bool,
        dst: RegId,
        /// The `|q` destination, which receives the negated comparison combined the same way.
        dst_neg: Option<RegId>,
        a: Src,
        b: Src,
        combine: Option<(BoolOp, PredSrc)>,
    },
    /// `set.cmp[.bop].dty.sty d, a, b[, {!}c]`: 0xFFFFFFFF / 1.0f on true.
    Set {
        cmp: Compare,
        dst_ty: ScalarType,
        src_ty: ScalarType,
        ftz: bool,
        dst: RegId,
        a: Src,
        b: Src,
        combine: Option<(BoolOp, PredSrc)>,
    },
    /// `slct.dty.s32 d, a, b, c` / `slct.dty.f32`: `c >= 0 ? a : b`.
    Slct {
        ty: ScalarType,
        c_ty: ScalarType,
        ftz: bool,
        dst: RegId,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `ld[.order][.scope][.space][.cop][.nc][.vN].ty` (PTX ISA 9.7.9.8).
    Ld {
        space: Space,
        qual: MemQualifiers,
        ty: ScalarType,
        vector: u8,
        dst: VecDst,
        addr: Address,
    },
    /// `st[...].vN.ty [addr], src` (PTX ISA 9.7.9.10).
    St {
        space: Space,
        qual: MemQualifiers,
        ty: ScalarType,
        vector: u8,
        src: [Src; 4],
        addr: Address,
    },
    /// `atom` (with `dst`) and `red` (without) (PTX ISA 9.7.12.x): `b` is cas's new value.
    Atom {
        space: Space,
        op: AtomOp,
        ty: ScalarType,
        qual: MemQualifiers,
        dst: Option<RegId>,
        addr: Address,
        a: Src,
        b: Option<Src>,
    },
    /// `bar.sync/arrive/red` and `barrier.sync` (PTX ISA 9.7.13.1; thesis 5.5.1).
    Barrier {
        kind: BarrierKind,
        id: Src,
        count: Option<Src>,
        aligned: bool,
    },
    /// `bar.warp.sync mask` (PTX ISA 9.7.13.3).
    WarpSync { mask: Src },
    /// `membar.level` / `fence.sc|acq_rel.scope` (PTX ISA 9.7.13.4).
    Fence { level: FenceLevel, order: MemOrder },
    /// `vote[.sync].mode.pred/b32 d, {!}p[, mask]` (PTX ISA 9.7.13.6).
    Vote {
        mode: VoteMode,
        dst: RegId,
        pred: PredSrc,
        mask: Option<Src>,
    },
    /// `shfl.sync.mode.b32 d[|p], a, b, c, mask` (PTX ISA 9.7.9.6).
    Shfl {
        mode: ShflMode,
        dst: RegId,
        dst_pred: Option<RegId>,
        a: Src,
        b: Src,
        c: Src,
        mask: Option<Src>,
    },
    /// `match.any/all.sync.b32/b64 d[|p], a, mask` (PTX ISA 9.7.13.8).
    Match {
        all: bool,
        ty: ScalarType,
        dst: RegId,
        dst_pred: Option<RegId>,
        a: Src,
        mask: Src,
    },
    /// `redux.sync.op.type d, a, mask` (PTX ISA 9.7.13.10).
    Redux {
        op: ReduxOp,
        ty: ScalarType,
        dst: RegId,
        a: Src,
        mask: Src,
    },
    /// `activemask.b32 d`.
    ActiveMask { dst: RegId },
    /// `bra[.uni] target` (direct). Thesis rules bra_uni / bra_div.
    Bra { target: Pc, uni: bool },
    /// `brx.idx[.uni] index, table` (indirect branch through a label table); thesis bra_target.
    BraIndirect {
        index: Src,
        targets: Box<[Pc]>,
        uni: bool,
    },
    /// `call[.uni] (rets), target, (args)` (PTX ISA 9.7.14.3). Arguments are copied into the
    /// callee's formal parameters when the call is taken, return values back when it returns.
    Call {
        target: CallTarget,
        args: Box<[ParamLoc]>,
        rets: Box<[ParamLoc]>,
        uni: bool,
    },
    /// `ret[.uni]`; a kernel's `ret` is `exit` (thesis 5.1.3 step 5).
    Ret,
    /// `exit`.
    Exit,
    /// `trap`: aborts the launch with an error naming the thread.
    Trap,
    /// `nanosleep`, `pmevent`, `prefetch`, `discard`...: no effect on the semantics.
    Nop,
    /// Thesis dialect (seed 003, 5.1.1): push a sync token reconverging at the target.
    Ssy { target: Pc },
    /// Thesis dialect: pop the top token.
    Sync,
    /// Thesis dialect: `brk` / `break`.
    Brk,
    /// Thesis dialect: push a break token.
    PreBrk { target: Pc },
    /// Thesis dialect: push a call token returning to `target`.
    PreRet { target: Pc },
}

/// A guard `@p` / `@!p`; the thesis stores guards in `GuardEnv`, cudasem beside the op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct GuardPred {
    pub reg: RegId,
    pub negated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Instr {
    pub guard: Option<GuardPred>,
    pub op: Op,
}
