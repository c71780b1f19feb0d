//! The PTX abstract syntax tree.
//!
//! The AST is deliberately close to the text: instructions keep their opcode, their modifiers in
//! source order and untyped operands, so that every file a compiler emits parses (even when its
//! instructions are outside what cudasem executes) and pretty-prints back to an equal AST. Meaning
//! (which modifiers go together, which operand is a register) is given by `semantics::load`.
//!
//! Every node carries a [`Span`] of byte offsets into the source; equality of ASTs "ignoring spans"
//! is [`crate::strip_spans`] followed by `==`.

use serde::{Deserialize, Serialize};

/// A half-open range of byte offsets `start..end` into the parsed source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord, Serialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start: start as u32, end: end as u32 }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// The text of a name or modifier. Almost every name a compiler emits (`%rd12`, `$L__BB3_7`, `u32`,
/// `shared::cta`) is at most 24 bytes, which this string type stores inline: parsing a 5 MB module
/// would otherwise spend most of its time allocating and freeing one `Box<str>` per word. It
/// dereferences to `&str` and compares with `str`, so it reads like the `Box<str>` it replaces.
pub type Name = compact_str::CompactString;

/// A name as written: registers (`%r1`), variables, labels (`$L__BB0_2`), functions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Ident {
    pub name: Name,
    pub span: Span,
}

/// A whole `.ptx` file.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Module {
    /// `.version 7.0`, as (major, minor).
    pub version: Option<(u32, u32)>,
    /// `.target sm_70, texmode_independent`: the comma separated words.
    pub target: Vec<Ident>,
    /// `.address_size 64`.
    pub address_size: Option<u32>,
    pub items: Vec<Item>,
    pub span: Span,
}

/// A module-level directive or declaration, in source order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Item {
    /// `.entry` or `.func`, with or without a body.
    Function(Function),
    /// A module-level `.global .shared .const .local` variable.
    Variable(VariableDecl),
    /// `.file 1 "k.cu"` (optional timestamp and size follow).
    File(FileDirective),
    /// `.section .debug_info { ... }`: kept as raw text for the pretty-printer.
    Section(RawSection),
    /// `.pragma "nounroll";` at module level.
    Pragma(Pragma),
}

/// Linking directives: `.visible .extern .weak .common`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Linkage {
    Visible,
    Extern,
    Weak,
    Common,
}

/// `.entry` (a kernel) or `.func` (a device function).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum FunctionKind {
    Entry,
    Func,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Function {
    pub linkage: Vec<Linkage>,
    pub kind: FunctionKind,
    pub name: Ident,
    /// `.func (.param .b32 r) f(...)`: the parenthesised list before the name.
    pub return_params: Vec<Param>,
    pub params: Vec<Param>,
    /// `.maxntid .reqntid .minnctapersm .maxnreg .noreturn .pragma` between the header and body.
    pub performance: Vec<PerfDirective>,
    /// `None` for a declaration (`.extern .func f(...);`).
    pub body: Option<Block>,
    pub span: Span,
}

/// A formal parameter: `.param .u64 .ptr .global .align 8 name` or `.reg .b32 r` or `.param .b8 p[16]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Param {
    pub space: StateSpace,
    /// `.ptr .global .align N` attributes of kernel pointer parameters, in order.
    pub ptr: Option<PtrAttributes>,
    pub align: Option<u32>,
    pub ty: VarType,
    pub name: Ident,
    /// `p[16]`: array dimensions; `None` for `[]`.
    pub array: Vec<Option<u64>>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PtrAttributes {
    pub space: Option<StateSpace>,
    pub align: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum PerfDirective {
    /// `.maxntid 256, 1, 1`
    MaxNtid(Vec<u32>, Span),
    /// `.reqntid 128`
    ReqNtid(Vec<u32>, Span),
    /// `.minnctapersm 4`
    MinNctaPerSm(u32, Span),
    /// `.maxnctapersm 4`
    MaxNctaPerSm(u32, Span),
    /// `.maxnreg 32`
    MaxNreg(u32, Span),
    /// `.noreturn`
    NoReturn(Span),
    /// `.pragma "nounroll";`
    Pragma(Pragma),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pragma {
    /// The string contents without quotes, e.g. `nounroll`.
    pub text: Box<str>,
    pub span: Span,
}

/// A `{ ... }` scope: a function body or a nested block (Listing 5.4: names declared in it shadow
/// outer ones for the whole block).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    pub statements: Vec<Statement>,
    pub span: Span,
}

// Instructions (with their inline modifiers and operands) are the large variant, and also nearly
// every statement of a body: boxing them would cost an allocation per instruction to save space
// on the few labels and directives.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Statement {
    /// `LBB0_2:`
    Label(Ident),
    Instruction(Instruction),
    /// `.reg .b32 %r<5>;`, `.shared .align 4 .b8 s[64];`, `.local ...`, `.param ...` inside a body.
    Variable(VariableDecl),
    /// A nested scope.
    Block(Block),
    /// `.loc 1 12 5` (extra `, function_name ...` parts are kept raw).
    Loc(Loc),
    /// `.pragma "nounroll";`
    Pragma(Pragma),
    /// `prototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _);`
    CallPrototype(CallPrototype),
    /// `TARGETS: .branchtargets L1, L2, L3;`: the target list of `brx.idx` (PTX ISA 10.4).
    BranchTargets(TargetList),
    /// `FTABLE: .calltargets f, g;`: the possible callees of an indirect `call` (PTX ISA 10.4).
    CallTargets(TargetList),
}

/// The label and names of a `.branchtargets` or `.calltargets` statement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetList {
    pub label: Ident,
    pub targets: Vec<Ident>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub column: u32,
    /// Anything after the column, e.g. `, function_name $L__info_string0, inlined_at 1 2 3`.
    pub rest: Option<Box<str>>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileDirective {
    pub index: u32,
    pub path: Box<str>,
    /// Optional `, timestamp, size` numbers.
    pub extra: Vec<u64>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RawSection {
    /// `.debug_info`
    pub name: Box<str>,
    /// The text between the braces, verbatim.
    pub body: Box<str>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallPrototype {
    pub label: Ident,
    pub return_params: Vec<Param>,
    pub params: Vec<Param>,
    pub span: Span,
}

/// PTX state spaces (PTX ISA 5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum StateSpace {
    Reg,
    Sreg,
    Const,
    Global,
    Local,
    Param,
    Shared,
    /// `.shared::cta`
    SharedCta,
    /// `.shared::cluster`
    SharedCluster,
    Tex,
}

/// Fundamental types (PTX ISA 5.2.1), plus `.pred`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ScalarType {
    S8,
    S16,
    S32,
    S64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F16x2,
    Bf16,
    Bf16x2,
    Tf32,
    F32,
    F64,
    B8,
    B16,
    B32,
    B64,
    B128,
    Pred,
    /// `.texref`, `.samplerref`, `.surfref`: opaque types (parsed, not executed).
    TexRef,
    SamplerRef,
    SurfRef,
}

/// The type of a declared variable: a scalar, or `.v2 .f32` / `.v4 .b32` vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct VarType {
    /// 1 for scalars; 2, 4 (or 8) for `.vN`.
    pub vector: u8,
    pub scalar: ScalarType,
}

/// A variable declaration at module level or in a body.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariableDecl {
    pub linkage: Vec<Linkage>,
    pub space: StateSpace,
    pub align: Option<u32>,
    pub ty: VarType,
    pub name: Ident,
    /// `%r<5>`: a parameterised family `%r0 .. %r4`.
    pub range: Option<u32>,
    /// `a[4][8]`; `None` for an unsized `[]` (extern shared, or sized by the initializer).
    pub array: Vec<Option<u64>>,
    pub init: Option<Initializer>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Initializer {
    Expr(ConstExpr),
    /// `{1, 2, {3, 4}}`
    List(Vec<Initializer>, Span),
    /// `addr_mode_0 = clamp_to_edge`: a named field of a texture or sampler initializer
    /// (`.samplerref s = { filter_mode = linear }`, PTX ISA 5.3).
    Field {
        name: Ident,
        value: Box<Initializer>,
        span: Span,
    },
}

/// A constant expression (PTX ISA 4.6): folded by the loader.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ConstExpr {
    /// An integer literal as written: decimal, `0x..`, octal `0..`, binary `0b..`, optional `U` suffix.
    Int {
        value: u64,
        unsigned: bool,
        span: Span,
    },
    /// `0f3F800000` (single) or `0d3FF0000000000000` (double) or a decimal float `1.5`.
    Float {
        bits: u64,
        kind: FloatLiteral,
        span: Span,
    },
    /// A symbol: in initializers, the address of a variable or function (`generic(x)` too).
    Symbol(Ident),
    Unary {
        op: UnaryOp,
        operand: Box<ConstExpr>,
        span: Span,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<ConstExpr>,
        rhs: Box<ConstExpr>,
        span: Span,
    },
    /// `c ? a : b`
    Conditional {
        cond: Box<ConstExpr>,
        then: Box<ConstExpr>,
        otherwise: Box<ConstExpr>,
        span: Span,
    },
    /// `generic(name)` in initializers.
    Generic(Ident, Span),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum FloatLiteral {
    /// `0fXXXXXXXX`: the 32 bits in `bits`.
    HexF32,
    /// `0dXXXXXXXXXXXXXXXX`.
    HexF64,
    /// `1.5`, `2e3`: `bits` holds the f64 bit pattern.
    Decimal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum UnaryOp {
    Neg,
    Not,
    LogicalNot,
    Plus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum BinaryOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    LogicalAnd,
    LogicalOr,
}

/// `@%p` or `@!%p`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Guard {
    pub negated: bool,
    pub predicate: Ident,
    pub span: Span,
}

/// One instruction statement: `@!%p1 ld.global.nc.v2.f32 {%f1, %f2}, [%rd4+8];`
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Instruction {
    /// Boxed: most instructions have no guard, and an inline one would make every instruction of
    /// the AST (most of a module's memory) 40 bytes larger.
    pub guard: Option<Box<Guard>>,
    /// The opcode word (`ld`, `bar`, `ssy`, or anything else a file uses).
    pub opcode: Ident,
    /// The dotted words after the opcode, in source order, without the dot (`global`, `nc`, `v2`,
    /// `f32`, `shared::cta`, `sync`, `aligned`). `bar.sync` has opcode `bar` and modifier `sync`.
    pub modifiers: Modifiers,
    pub operands: Operands,
    pub span: Span,
}

/// An instruction's modifiers: stored inline up to three (nearly every instruction), so parsing
/// does not allocate a vector per instruction. Dereferences to a slice.
pub type Modifiers = smallvec::SmallVec<[Modifier; 3]>;

/// An instruction's operands: inline up to three, for the same reason as [`Modifiers`].
pub type Operands = smallvec::SmallVec<[Operand; 3]>;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Modifier {
    /// Without the leading dot.
    pub name: Name,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Operand {
    /// A register, variable, label, function name or special register, optionally with a vector
    /// component (`%r1.x`, `%tid.x`). The loader decides which it is.
    Symbol { name: Ident, component: Option<Component>, span: Span },
    /// `!%p` (setp's `c` operand, `selp`, and predicate logic).
    Not(Box<Operand>, Span),
    /// An integer or float immediate, or a constant expression such as `-1` or `(4*8)`.
    Immediate(ConstExpr),
    /// `[%rd1+8]`, `[name]`, `[name+4]`, `[%rd1+-4]`, `[0x100]`, `[%rd1 + (4*2)]`. Boxed: it is
    /// the largest operand (80 bytes against 48), and every instruction reserves room for three
    /// operands inline, so an inline address would make every instruction of the AST larger.
    Address(Box<Address>),
    /// `{%r1, %r2, _, %r4}` in ld/st/mov/tex.
    Vector(Vec<Operand>, Span),
    /// `(param0, param1)` in `call`.
    List(Vec<Operand>, Span),
    /// `[tex, {%f1, %f2}]`, `[tex, smp, {%f1, %f2}]`, `[surf, {%r1}]`: the bracketed operand
    /// list of texture and surface instructions (PTX ISA 9.7.9): a texture or surface name, an
    /// optional sampler, then coordinates. An address has no `,`; this always has one.
    Bracketed(Vec<Operand>, Span),
    /// `%p|%q`: setp's two destinations.
    Pair(Box<Operand>, Box<Operand>, Span),
    /// `_`: a sink (discarded destination or unused argument).
    Sink(Span),
}

/// `.x .y .z .w` (also `.r .g .b .a`) components of vector registers and special registers, and
/// the byte and half-word selectors `.b0 .b1 .b2 .b3 .h0 .h1` of video instruction operands
/// (PTX ISA 9.7.18.1, `a.b0`, `d.h1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Component {
    X,
    Y,
    Z,
    W,
    B0,
    B1,
    B2,
    B3,
    H0,
    H1,
}

/// A bracketed memory operand.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Address {
    /// The register or variable named inside the brackets; `None` for an absolute `[0x100]`.
    pub base: Option<Ident>,
    /// The constant offset (0 when none was written), as an expression so it round-trips.
    pub offset: Option<ConstExpr>,
    pub span: Span,
}

impl Operand {
    pub fn span(&self) -> Span {
        match self {
            Operand::Symbol { span, .. }
            | Operand::Not(_, span)
            | Operand::Vector(_, span)
            | Operand::List(_, span)
            | Operand::Bracketed(_, span)
            | Operand::Pair(_, _, span)
            | Operand::Sink(span) => *span,
            Operand::Immediate(e) => e.span(),
            Operand::Address(a) => a.span,
        }
    }
}

impl ConstExpr {
    pub fn span(&self) -> Span {
        match self {
            ConstExpr::Int { span, .. }
            | ConstExpr::Float { span, .. }
            | ConstExpr::Unary { span, .. }
            | ConstExpr::Binary { span, .. }
            | ConstExpr::Conditional { span, .. }
            | ConstExpr::Generic(_, span) => *span,
            ConstExpr::Symbol(i) => i.span,
        }
    }
}
