//! The program environment (thesis 5.1.2): what `load` makes of a PTX module and the machine runs.
//!
//! * `InstrEnv` and `GuardEnv` are [`Program::instructions`], one [`Instr`] per [`Pc`], guards
//!   beside their ops; every function's body is a contiguous range of addresses.
//! * `LabelEnv` is per function ([`Function::labels`]): labels are scoped (Listing 5.4), so the
//!   name alone is not unique; after loading, branches hold addresses and names are for display.
//! * `FuncEnv` is [`Program::functions`] with each body's first address.
//! * `VarEnv`/`LocalEnv`: module variables get addresses in their state space
//!   ([`Program::variables`]); function-scope `.local`/`.param` variables get offsets in the
//!   function's frame ([`Function::frame`]); registers get per-function ids.
//! * Source mapping: every address keeps its PTX span and line and the last `.loc` before it.
//! * Reconvergence: the CFG of each function and the immediate post-dominator of every branch.

pub mod instr;
mod registers;

pub use instr::*;

pub use crate::load::liveness::{FinalRegisters, LazyLiveness, LiveSet, Liveness};
pub use crate::load::may_write::{Atom, LazyMayWrite, MayWrite, Provenance};
pub use crate::load::shared_writes::SharedWrites;
use ptx_parser::{Name, ScalarType, Span};
use serde::Serialize;
use std::collections::BTreeMap;

/// A loaded PTX module: everything the machine needs, and nothing it has to look up by name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Program {
    pub instructions: Vec<Instr>,
    /// Per address: where it came from.
    pub source: Vec<SourceInfo>,
    pub functions: Vec<Function>,
    /// Module-level variables (and function-scope `.shared`/`.global`/`.const` ones, which are
    /// static), by state space with their resolved addresses and initial bytes.
    pub variables: Vec<Variable>,
    /// Module-scope `.reg` variables (the thesis's lowered dialect: `%stackBase` of Listing 5.2).
    /// Every function's register file starts with them, in this order (ids `0..n`); they are one
    /// per thread, so the machine keeps their values across calls and returns.
    pub global_registers: Vec<RegisterInfo>,
    /// Bytes of each static state space the module's variables occupy (`.global`, `.const`, and
    /// the per-block static `.shared`).
    pub global_size: u64,
    pub const_size: u64,
    pub shared_size: u64,
    /// `.file` table: index to path, for `.loc` mapping.
    pub files: BTreeMap<u32, String>,
    /// Per address: for branches, the reconvergence point (immediate post-dominator), `None`
    /// when the paths only meet at the function's exit.
    pub reconvergence: Vec<Option<Pc>>,
    /// Where a thread may write shared memory before its next full-block barrier (derived from
    /// the instructions; the cached memory's shared loads at issue ask it).
    #[serde(skip)]
    pub shared_writes: SharedWrites,
    /// Whether some instruction reads a special register whose value differs between the
    /// blocks of a grid (`%ctaid`, `%smid`): if none does, blocks with equal states behave
    /// alike, which the explorers' symmetry reduction relies on.
    pub reads_block_identity: bool,
    /// The registers live at each address, under each [`FinalRegisters`]: computed on first
    /// use ([`Program::liveness`]), equal between any two programs (a cache, not data).
    #[serde(skip)]
    pub liveness: LazyLiveness,
    /// Per address, the global memory a thread there may still write: computed on first use
    /// ([`Program::may_write`]), equal between any two programs (a cache, not data).
    #[serde(skip)]
    pub may_write: LazyMayWrite,
    /// A stable hash of the module text and everything that affects execution (traces check it).
    pub hash: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FunctionKind {
    /// A kernel: `.entry`.
    Entry,
    /// A device function: `.func`.
    Func,
}

/// A parameter of an `.entry` or `.func`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParamInfo {
    pub name: String,
    pub ty: ScalarType,
    /// Bytes (arrays `.b8 p[16]` have size 16).
    pub size: u32,
    pub align: u32,
    /// Where the callee reads it: kernel params are at `Frame{offset}` in the launch's param buffer
    /// (read by `ld.param [name+k]`); `.func` params in the callee frame or a register.
    pub loc: ParamLoc,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Function {
    pub name: String,
    pub kind: FunctionKind,
    /// First address of the body (thesis `FuncEnv`); `start..end` is the body.
    pub start: Pc,
    pub end: Pc,
    pub params: Vec<ParamInfo>,
    pub return_params: Vec<ParamInfo>,
    /// Registers the body uses (ids `0..num_regs`), with their declared names and types for the
    /// debugger (`%r1`, `%p2`, `v.x`...).
    pub registers: Vec<RegisterInfo>,
    /// Bytes of the function's frame in `.local` (its `.local` and `.param` variables, and for
    /// `.func`s its formal `.param` parameters), and the frame-resident variables by name.
    pub frame_size: u32,
    pub frame: Vec<FrameVariable>,
    /// Kernel parameter buffer size in bytes (entries only).
    pub param_size: u32,
    /// Labels in the function, with their addresses (a label names the next instruction).
    pub labels: Vec<(Name, Pc)>,
    /// `.reqntid`/`.maxntid` if given.
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    pub cfg: Cfg,
    /// True when the body uses the thesis dialect (`ssy sync brk preBrk preRet`): the SIMT stack
    /// then follows those instructions instead of inserting reconvergence at post-dominators.
    pub explicit_reconvergence: bool,
    pub span: Span,
}

/// A register's display name and type. The name is a [`Name`], stored inline when short (every
/// `%r12` of a `%r<N>` range is): a large module declares hundreds of thousands of registers,
/// and a heap string each would make allocation a tenth of the loader's work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegisterInfo {
    pub name: Name,
    pub ty: ScalarType,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FrameVariable {
    pub name: String,
    pub offset: u32,
    pub size: u32,
}

/// A module variable with its resolved address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Variable {
    pub name: String,
    pub space: Space,
    /// Address in its state space (for `.shared`: offset in each block's shared memory).
    pub address: u64,
    pub size: u64,
    pub align: u32,
    pub ty: ScalarType,
    /// Folded initializer bytes (little-endian), empty when uninitialised.
    pub init: Vec<u8>,
    /// `.extern .shared x[]`: dynamic shared memory, placed after the static shared variables.
    pub dynamic: bool,
    /// `generic(x)` in the initializer (PTX ISA 5.4.4): byte offsets in `init` holding the address of
    /// a variable in its own state space (written there by `load`), to which the machine adds the
    /// generic base of that space when it initialises memory.
    pub generic_relocations: Vec<(u64, Space)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceInfo {
    pub span: Span,
    /// 1-based line of the instruction in the PTX file.
    pub ptx_line: u32,
    /// The `.loc file line col` in force (from nvcc/clang `-lineinfo`), if any.
    pub loc: Option<(u32, u32, u32)>,
}

/// A function's control-flow graph over basic blocks.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Cfg {
    pub blocks: Vec<BasicBlock>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BasicBlock {
    /// Addresses `start..end`; the last one is the terminator.
    pub start: Pc,
    pub end: Pc,
    /// Indices of successor blocks, taken target first then fall-through.
    pub successors: Vec<usize>,
    /// True when the block ends the function (ret/exit/trap).
    pub exits: bool,
}

/// Module `.global` variables are laid out from this address up (the space's first page stays
/// unmapped, so dereferencing a null pointer is an out-of-bounds error, never a variable).
pub const GLOBAL_VARIABLES_BASE: u64 = 0x1_0000;

/// Function addresses (`mov.u64 %rd1, foo;`) are this base plus the function's index: far from any
/// data address, so a function pointer used as data faults clearly.
pub const FUNCTION_ADDRESS_BASE: u64 = 0xF000_0000_0000_0000;

impl Program {
    /// Whether some instruction releases at `.cta` scope: a `st`, `atom` or `red` with
    /// `.release`, `.acq_rel` or `.sc` and `.cta`, or a `.cta` fence (`membar.cta`,
    /// `fence.*.cta`). Only such a program can use the cached memory's per-SM store stage
    /// (deviation D31), which the machine turns on for it when it runs as several CTAs on
    /// several SMs.
    pub fn has_cta_release(&self) -> bool {
        let releases = |q: &MemQualifiers| {
            q.scope == Some(Scope::Cta)
                && matches!(q.order, MemOrder::Release | MemOrder::AcqRel | MemOrder::Sc)
        };
        self.instructions.iter().any(|i| match &i.op {
            Op::St { qual, .. } | Op::Atom { qual, .. } => releases(qual),
            Op::Fence { level, .. } => *level == Scope::Cta,
            _ => false,
        })
    }

    /// The value `mov %rd, f` puts in a register for function `f`.
    pub fn function_address(id: FuncId) -> u64 {
        FUNCTION_ADDRESS_BASE + id.0 as u64
    }
    /// The function a register value points to, if any.
    pub fn function_at(&self, address: u64) -> Option<FuncId> {
        let index = address.checked_sub(FUNCTION_ADDRESS_BASE)?;
        (index < self.functions.len() as u64).then_some(FuncId(index as u32))
    }
    /// The function whose body contains `pc`.
    pub fn function_of(&self, pc: Pc) -> Option<FuncId> {
        self.functions
            .iter()
            .position(|f| f.start <= pc && pc < f.end)
            .map(|i| FuncId(i as u32))
    }
    /// The entry (kernel) named `name`.
    pub fn entry(&self, name: &str) -> Option<FuncId> {
        self.functions
            .iter()
            .position(|f| f.kind == FunctionKind::Entry && f.name == name)
            .map(|i| FuncId(i as u32))
    }
    pub fn function(&self, id: FuncId) -> &Function {
        &self.functions[id.0 as usize]
    }
    /// The registers live at each address when final registers are `exit`'s
    /// ([`crate::load::liveness`]), computed on the first call.
    pub fn liveness(&self, exit: FinalRegisters) -> &Liveness {
        self.liveness.get(self, exit)
    }
    /// What a thread at each address may still write of global memory, by provenance
    /// ([`crate::load::may_write`]), computed on the first call.
    pub fn may_write(&self) -> &MayWrite {
        self.may_write.get(self)
    }
}
