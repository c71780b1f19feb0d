//! Thread layer (thesis 5.3): per-lane registers, call frames and special registers.
//!
//! Registers are stored per warp as structure-of-arrays, one [`Level`] per call depth, one
//! shared row per register ([`Regs`]: docs/internals/machine.md). A lane at call depth `d` uses
//! levels `0..=d`; level `d` holds the registers of the function the lane runs at that depth
//! (lanes at the same depth may run different functions under ITS: each lane owns its column,
//! and a level grows to the largest register count any of them needs). The thesis keeps a call
//! stack of `VarEnv`s per thread (5.3, κ) and no return addresses; cudasem keeps the call-site
//! pc per lane and level too (needed by ITS/threads, and to copy return values, PTX ISA 9.7.14.3).
//!
//! Local memory frames: the kernel's frame starts at `.local` address 0; a callee's frame starts
//! at the caller's frame base plus the caller's frame size rounded up to 16 bytes (thesis 5.1.3
//! step 3, `%stackBase`, without the explicit add/sub instructions).

use super::GridShape;
use super::regs::Regs;
use crate::program::{FuncId, Pc, Program, SpecialReg};
use std::sync::Arc;

/// Registers and frame of every lane at one call depth.
///
/// The frame arrays change only at `call`/`ret`: they are shared copy-on-write (`Arc<[T]>`,
/// written through `Arc::make_mut`), so cloning a warp (an explorer does it per successor state)
/// copies one pointer per register row ([`Regs`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Level {
    /// Register `reg` of `lane`: `regs.at(reg, lane)`.
    pub regs: Regs,
    /// Per lane: `.local` address of the frame.
    pub frame_base: Arc<[u32]>,
    /// Per lane: the function running at this depth.
    pub func: Arc<[FuncId]>,
    /// Per lane: the address of the `call` that entered this depth (unused at depth 0).
    pub call_pc: Arc<[Pc]>,
}

impl Level {
    pub fn new(warp_size: usize, nregs: usize, func: FuncId) -> Level {
        Level {
            regs: Regs::new(warp_size, nregs),
            frame_base: vec![0; warp_size].into(),
            func: vec![func; warp_size].into(),
            call_pc: vec![0; warp_size].into(),
        }
    }

    /// Makes room for `nregs` registers (never shrinks: other lanes may use more).
    pub fn ensure_regs(&mut self, nregs: usize) {
        self.regs.ensure(nregs.max(1));
    }
}

/// Rounds a frame size up to the frame alignment.
pub(crate) fn frame_span(size: u32) -> u32 {
    size.next_multiple_of(16)
}

/// What special registers read (thesis 5.8.1 `regLookup` for `%tid %ntid %ctaid %nctaid`, PTX ISA
/// 10 for the rest).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpecialCtx {
    /// `%ntid`, `%nctaid` and `WARP_SZ`.
    pub shape: GridShape,
    pub ctaid: [u32; 3],
    pub warp_index: u32,
    pub tid_base: u32,
    pub sm: u32,
    pub num_sms: u32,
    pub max_warps_per_sm: u32,
    /// Machine steps so far: `%clock`, `%clock64` and `%globaltimer` are functions of it.
    pub steps: u64,
    pub dynamic_smem: u32,
    pub total_smem: u32,
}

impl SpecialCtx {
    /// The value of `sr` for `lane`. `%clock64` = the machine's step count, `%clock` its low 32
    /// bits, `%globaltimer` = steps × 1000 (a nanosecond per thousandth of a step): deterministic
    /// stand-ins for time, monotone within a thread.
    #[inline]
    pub fn read(&self, sr: SpecialReg, lane: u32) -> u64 {
        use crate::program::Dim;
        let t = self.tid_base + lane;
        let dim = |d: Dim, v: [u32; 3]| match d {
            Dim::X => v[0] as u64,
            Dim::Y => v[1] as u64,
            Dim::Z => v[2] as u64,
        };
        let lane_bit = 1u64 << lane;
        let ws_mask = if self.shape.warp_size >= 64 {
            u64::MAX
        } else {
            (1u64 << self.shape.warp_size) - 1
        };
        match sr {
            SpecialReg::Tid(d) => dim(d, self.shape.tid(t)),
            SpecialReg::Ntid(d) => dim(d, self.shape.block_dim),
            SpecialReg::Ctaid(d) => dim(d, self.ctaid),
            SpecialReg::Nctaid(d) => dim(d, self.shape.grid_dim),
            SpecialReg::LaneId => lane as u64,
            SpecialReg::WarpId => self.warp_index as u64,
            SpecialReg::NWarpId => self.max_warps_per_sm as u64,
            SpecialReg::SmId => self.sm as u64,
            SpecialReg::NSmId => self.num_sms as u64,
            SpecialReg::GridId => 0,
            SpecialReg::LanemaskEq => lane_bit,
            SpecialReg::LanemaskLe => (lane_bit | (lane_bit - 1)) & ws_mask,
            SpecialReg::LanemaskLt => lane_bit - 1,
            SpecialReg::LanemaskGe => !(lane_bit - 1) & ws_mask,
            SpecialReg::LanemaskGt => !(lane_bit | (lane_bit - 1)) & ws_mask,
            SpecialReg::Clock => self.steps & 0xFFFF_FFFF,
            SpecialReg::Clock64 => self.steps,
            SpecialReg::GlobalTimer => self.steps.wrapping_mul(1000),
            SpecialReg::DynamicSmemSize => self.dynamic_smem as u64,
            SpecialReg::TotalSmemSize => self.total_smem as u64,
            SpecialReg::WarpSz => self.shape.warp_size as u64,
        }
    }
}

/// Size in bytes of a scalar type (PTX ISA 5.2; see `load::types::size`).
#[inline]
pub fn type_size(ty: ptx_parser::ScalarType) -> u32 {
    crate::load::types::size(ty)
}

/// True for the signed integer types (loads sign-extend them).
pub fn type_signed(ty: ptx_parser::ScalarType) -> bool {
    use ptx_parser::ScalarType::*;
    matches!(ty, S8 | S16 | S32 | S64)
}

/// Bits of a register's declared type (for sign-extending narrow loads), 64 if unknown.
pub(crate) fn reg_bits(program: &Program, func: FuncId, reg: u16) -> u32 {
    program
        .functions
        .get(func.0 as usize)
        .and_then(|f| f.registers.get(reg as usize))
        .map(|r| (type_size(r.ty) * 8).clamp(8, 64))
        .unwrap_or(64)
}
