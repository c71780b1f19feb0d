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
    /// `WARP_SZ` (PTX ISA "Special Registers: WARP_SZ"): the warp width, a run-time constant.
    WarpSz,
}

impl SpecialReg {
    /// Whether the register's value can differ between two blocks of one grid: the block's
    /// index `%ctaid` and the SM it runs on, `%smid` (PTX ISA section 10, "Special
    /// Registers"). Every other one is the same for threads at the same place in their blocks:
    /// `%warpid` numbers the warps within a CTA (the same section), and the clock reads the
    /// machine's step counter (deviation D14).
    pub const fn tells_blocks_apart(self) -> bool {
        matches!(self, SpecialReg::Ctaid(_) | SpecialReg::SmId)
    }
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

/// The memory vocabulary (memory-model order, scope, cache operator, an atomic's operation and
/// type) is the memory crate's, so that a decoded qualifier or atomic reaches the memory
/// environment as it is.
pub use memory_model::vocabulary::{AtomOp, AtomType, CacheOp, MemOrder, Scope};

/// The PTX type an atomic's type is (`.b32` is `B32` ...).
pub fn atom_scalar_type(ty: AtomType) -> ScalarType {
    match ty {
        AtomType::B32 => ScalarType::B32,
        AtomType::B64 => ScalarType::B64,
        AtomType::U32 => ScalarType::U32,
        AtomType::U64 => ScalarType::U64,
        AtomType::S32 => ScalarType::S32,
        AtomType::S64 => ScalarType::S64,
        AtomType::F32 => ScalarType::F32,
        AtomType::F64 => ScalarType::F64,
    }
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

/// Up to eight registers of a vector access (`.v2`, `.v4`, `.v8`); `None` is a `_` sink.
pub type VecDst = [Option<RegId>; 8];

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
    /// `.relu` (half-precision `fma`, `cvt` to 16-bit and 8-bit floats): a negative result
    /// becomes `+0.0`, a NaN the canonical NaN (PTX ISA 9.7.4 "Half Precision Floating-Point Instructions: fma", 9.7.9 "cvt").
    pub relu: bool,
    /// `.satfinite` (`cvt` to 16-bit and 8-bit floats): a result beyond the largest finite value
    /// (infinities included) becomes that value with its sign; NaN stays NaN (PTX ISA 9.7.9 `cvt`).
    pub satfinite: bool,
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
    /// `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a` (PTX ISA 9.7.9 `cvt`): both `.f16`
    /// halves of `a` to the 8-bit format, packed high half to high byte (`ty` is `.f16x2`).
    CvtF16x2ToFp8x2(Fp8),
    /// `cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a`: both bytes of `a` to `.f16`, high byte to
    /// high half (`ty` is `.b16`).
    CvtFp8x2ToF16x2(Fp8),
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
    /// `mul24.lo` / `mul24.hi` (PTX ISA 9.7.1 "Integer Arithmetic Instructions: mul24"): the low 24 bits of each operand (sign-extended
    /// for `.s32`) multiplied into 48 bits; `.lo` keeps bits 31..0, `.hi` bits 47..16.
    Mul24 {
        hi: bool,
    },
    /// `bmsk.clamp/.wrap.b32 d, a, b` (PTX ISA 9.7.1 `bmsk`): a mask of `b` bits from bit `a`.
    Bmsk {
        clamp: bool,
    },
    /// `szext.clamp/.wrap.{s32,u32} d, a, b` (PTX ISA 9.7.1 `szext`): sign- or zero-extends the low
    /// `b` bits of `a`.
    Szext {
        clamp: bool,
    },
    /// `cvt.frnd{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b` and
    /// `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b` (PTX ISA 9.7.9 `cvt`): `a` converted
    /// to the high element, `b` to the low one (`ty` is `.f32`, the sources' type).
    CvtPair(PackedFloat),
}

/// The element formats of the packing `cvt` forms (PTX ISA 5.2.5 "Alternate Floating-Point
/// Data Formats").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum PackedFloat {
    /// `.f16x2`: two IEEE binary16 halves.
    F16x2,
    /// `.bf16x2`: two bfloat16 halves.
    Bf16x2,
    /// `.e4m3x2` / `.e5m2x2`: two 8-bit floats in 16 bits.
    Fp8x2(Fp8),
}

/// The 8-bit float formats (PTX ISA 5.2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Fp8 {
    /// `.e4m3`: 4 exponent bits (bias 7), 3 fraction bits, no infinities, NaN `S.1111.111`,
    /// largest finite 448.
    E4m3,
    /// `.e5m2`: 5 exponent bits (bias 15), 2 fraction bits, IEEE-like (infinities and NaNs),
    /// largest finite 57344.
    E5m2,
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
    /// `lop3.b32 d, a, b, c, immLut` (PTX ISA 9.7.8 "Logic and Shift Instructions: lop3"): bit `i` of `d` is bit
    /// `a[i]*4 + b[i]*2 + c[i]` of the look-up table.
    Lop3 {
        lut: u8,
    },
    /// `fns.b32 d, mask, base, offset` (PTX ISA 9.7.1 `fns`): the position of the `offset`-th set
    /// bit of `mask` counting from `base`.
    Fns,
    /// `mad24.lo/.hi{.sat}` (PTX ISA 9.7.1 `mad24`): `mul24` plus `c`; `.sat` only on `.hi.s32`.
    Mad24 {
        hi: bool,
    },
    /// `sad.type d, a, b, c` (PTX ISA 9.7.1 `sad`): `c + |a - b|`.
    Sad,
    /// `dp4a.atype.btype d, a, b, c` (PTX ISA 9.7.1 `dp4a`): `c` plus the dot product of the four
    /// bytes of `a` and `b`, each sign- or zero-extended by its type (`ty` is `c`'s type).
    Dp4a {
        a_signed: bool,
        b_signed: bool,
    },
    /// `dp2a.lo/.hi.atype.btype d, a, b, c` (PTX ISA 9.7.1 `dp2a`): `c` plus the dot product of the
    /// two 16-bit halves of `a` with bytes 0-1 (`.lo`) or 2-3 (`.hi`) of `b`.
    Dp2a {
        hi: bool,
        a_signed: bool,
        b_signed: bool,
    },
    /// `cvt.pack.sat.ctype.s32{.b32} d, a, b{, c}` (PTX ISA 9.7.9 `cvt.pack`): `a` and `b`
    /// (`.s32`) clamped to the convert type (`.u2 .s2 .u4 .s4 .u8 .s8 .u16 .s16`: `bits` wide,
    /// `signed`), `a` above `b`, the bits of `c` above both.
    CvtPackSat {
        bits: u8,
        signed: bool,
    },
    /// A scalar video instruction (PTX ISA "Scalar Video Instructions"):
    /// `vop.dtype.atype.btype{.sat}{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}` (`c` is `Imm(0)`
    /// when absent).
    Video(Video),
}

/// A scalar video instruction's operation (PTX ISA "Scalar Video Instructions": `vadd vsub
/// vabsdiff vmin vmax vshl vshr vset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum VideoOp {
    Add,
    Sub,
    /// `vabsdiff`: `|a - b|`.
    AbsDiff,
    Min,
    Max,
    /// `vshl`/`vshr` with `.clamp` (amounts above 32 are 32) or `.wrap` (amount mod 32).
    Shl {
        clamp: bool,
    },
    Shr {
        clamp: bool,
    },
    /// `vset`: 1 if the comparison holds, else 0 (`.eq .ne .lt .le .gt .ge`).
    Set(Compare),
}

/// The secondary operation of a scalar video instruction with a third operand `c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum VideoSecondary {
    Add,
    Min,
    Max,
}

/// A byte or half-word of a 32-bit video operand (`.b0`-`.b3`, `.h0`, `.h1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum VideoSelect {
    B0,
    B1,
    B2,
    B3,
    H0,
    H1,
}

/// A scalar video instruction's modifiers and operand selectors (PTX ISA "Scalar Video
/// Instructions").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Video {
    pub op: VideoOp,
    pub d_signed: bool,
    pub a_signed: bool,
    pub b_signed: bool,
    /// `.sat`: clamp the intermediate result to `dtype`'s range (to the selected part's range
    /// with a data merge).
    pub sat: bool,
    /// `.add .min .max` with `c`.
    pub secondary: Option<VideoSecondary>,
    /// `a.asel`, `b.bsel`: the part of the operand taken (the whole word when `None`).
    pub a_select: Option<VideoSelect>,
    pub b_select: Option<VideoSelect>,
    /// `d.dsel`: the result's low byte or half-word is merged into `c` at that part.
    pub d_select: Option<VideoSelect>,
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

impl BarrierKind {
    /// The reduction of `bar.red`; `None` for `bar.sync` and `bar.arrive`.
    pub fn reduction(&self) -> Option<BarRed> {
        match self {
            BarrierKind::Red { op, .. } => Some(*op),
            _ => None,
        }
    }
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
    /// `setp.cmp[.bop].ty p[|q], a, b[, {!}c]` (PTX ISA 9.7.3.5 / 9.7.4.2). For `.f16x2` and
    /// `.bf16x2`, `p` receives the low halves' comparison and `q` the high halves'.
    Setp {
        cmp: Compare,
        ty: ScalarType,
        ftz: bool,
        dst: RegId,
        /// The `|q` destination, which receives the negated comparison combined the same way
        /// (the high halves' comparison for packed types).
        dst_neg: Option<RegId>,
        a: Src,
        b: Src,
        combine: Option<(BoolOp, PredSrc)>,
    },
    /// `set.cmp[.bop].dty.sty d, a, b[, {!}c]`: all ones / 1.0 of `dty` on true; per half for
    /// packed `sty` (PTX ISA 9.7.4 half-precision `set`).
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
    /// `st[...].vN.ty [addr], src` (PTX ISA 9.7.9.10): `vector` sources (out of line, so that
    /// `.v8` does not make every instruction larger).
    St {
        space: Space,
        qual: MemQualifiers,
        ty: ScalarType,
        vector: u8,
        src: Box<[Src]>,
        addr: Address,
    },
    /// `atom` (with `dst`) and `red` (without) (PTX ISA 9.7.12.x): `b` is cas's new value.
    Atom {
        space: Space,
        op: AtomOp,
        ty: AtomType,
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
    /// `membar.level` / `fence.sc|acq_rel.scope` (PTX ISA 9.7.13.4). `level` is the membar level
    /// (thesis `MemBarLevel`: `.gl` is `Gpu`) or the fence scope; the loader never gives it
    /// `Cluster`.
    Fence { level: Scope, order: MemOrder },
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
    /// `mma.sync.aligned` (PTX ISA 9.7.14.5.14): a warp-wide matrix multiply-accumulate.
    Mma(Box<Mma>),
    /// The second half of `ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 d, [a]` (PTX ISA
    /// 9.7.14.5.15), after each lane `8i + r` has loaded row `r` of matrix `i` (16 bytes, with an
    /// ordinary `ld.shared.v4.b32`) into `rows`: every lane receives, for each matrix, the two
    /// 16-bit elements of its fragment (a warp communication, like `shfl`).
    LdMatrix {
        /// 1, 2 or 4 matrices.
        num: u8,
        trans: bool,
        dst: [RegId; 4],
        /// The four words of the row each lane loaded.
        rows: [RegId; 4],
        mask: Src,
    },
    /// `activemask.b32 d`.
    ActiveMask { dst: RegId },
    /// `call (d), f, ...` where `f` has no body (deviation D28): the thread's result is the
    /// launch's answer for `f`, whose result slot is the `.const` variable at `slot`. With one
    /// fixed value the slot holds it; with a set of values each executing lane first takes one
    /// by a `Pick` choice and reads that instead.
    Extern {
        dst: RegId,
        ty: ScalarType,
        slot: u64,
    },
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

/// The matrix shapes of `mma.sync.aligned` cudasem executes (PTX ISA 9.7.14.5.14 "Warp-level
/// matrix multiply-and-accumulate instruction: mma"): `M×N×K`, `D = A·B + C` with `A` `M×K`,
/// `B` `K×N`, `C` and `D` `M×N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum MmaShape {
    M16N8K8,
    M16N8K16,
    M16N8K32,
    M8N8K4,
}

impl MmaShape {
    /// `(M, N, K)`.
    pub fn dims(self) -> (usize, usize, usize) {
        match self {
            MmaShape::M16N8K8 => (16, 8, 8),
            MmaShape::M16N8K16 => (16, 8, 16),
            MmaShape::M16N8K32 => (16, 8, 32),
            MmaShape::M8N8K4 => (8, 8, 4),
        }
    }
}

/// An element type of an `mma` operand (PTX ISA 9.7.14.5.14, the `.atype .btype .ctype .dtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum MmaElem {
    F16,
    Bf16,
    F32,
    F64,
    S8,
    U8,
    S32,
}

impl MmaElem {
    /// Bytes of one element.
    pub fn size(self) -> u32 {
        match self {
            MmaElem::S8 | MmaElem::U8 => 1,
            MmaElem::F16 | MmaElem::Bf16 => 2,
            MmaElem::F32 | MmaElem::S32 => 4,
            MmaElem::F64 => 8,
        }
    }
}

/// `mma.sync.aligned.shape.alayout.blayout{.satfinite}.dtype.atype.btype.ctype d, a, b, c`
/// (PTX ISA 9.7.14.5.14): each lane holds its fragments of `A`, `B`, `C` and receives its
/// fragment of `D` in the layouts of the "Matrix Fragments for mma.m16n8k*" sections.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Mma {
    pub shape: MmaShape,
    pub a_ty: MmaElem,
    pub b_ty: MmaElem,
    pub c_ty: MmaElem,
    pub d_ty: MmaElem,
    /// `.satfinite` (integer forms): clamp the result to the `.s32` range instead of wrapping.
    pub satfinite: bool,
    pub d: Box<[RegId]>,
    pub a: Box<[Src]>,
    pub b: Box<[Src]>,
    pub c: Box<[Src]>,
    /// The lanes that must take part: the whole warp (`.sync.aligned`), as an immediate mask so
    /// that independent thread scheduling makes the lanes meet as for `shfl.sync`.
    pub mask: Src,
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
