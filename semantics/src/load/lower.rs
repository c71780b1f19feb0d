//! Lowering function bodies to the program's instructions: each instruction decoded in order
//! under its guard (thesis 5.1.3 steps 1 and 4), the implicit `ret`/`exit` at the end of a body
//! (step 5), label and branch-target resolution (`load` step 3), and each function's record.

use super::decode::{self, FnCx, ModuleCtx};
use super::scope::{self, FlatInstr, FnEnv};
use super::source_text::LineIndex;
use super::{guard_reg, layout::ModuleLayout};
use crate::program::{FuncId, Function, FunctionKind, GuardPred, Instr, Op, Pc, SourceInfo};
use ptx_parser::{Block, Diagnostic, PerfDirective, Span};
use std::collections::BTreeSet;

/// Every function body lowered, in module order.
#[derive(Default)]
pub(super) struct Lowered {
    pub instructions: Vec<Instr>,
    pub source_info: Vec<SourceInfo>,
    pub functions: Vec<Function>,
    /// Per function, the pc of each of its labels.
    pub label_pcs: Vec<Vec<Pc>>,
    /// Functions whose address the program takes (indirect-call candidates).
    pub address_taken: BTreeSet<FuncId>,
    /// The body-less functions called (indices into the module's extern slots).
    pub extern_called: BTreeSet<usize>,
    /// Whether some instruction reads `%ctaid` or `%smid` (blocks are told apart).
    pub reads_block_identity: bool,
}

/// The lowering of a module's bodies: what it produced so far and its reused buffers.
struct Lowering<'m, 'a> {
    mctx: &'m ModuleCtx<'a>,
    lines: &'m LineIndex,
    line_cursor: usize,
    out: Lowered,
    // Reused by every instruction's decoding (see `decode::decode`).
    ops: Vec<Op>,
    op_guards: Vec<(usize, Option<GuardPred>)>,
}

/// Lowers `bodies` (the functions with a body, in module order).
pub(super) fn lower_bodies<'a>(
    bodies: &[(&'a ptx_parser::Function, &'a Block)],
    layout: &ModuleLayout<'a>,
    mctx: &ModuleCtx<'a>,
    lines: &LineIndex,
    diags: &mut Vec<Diagnostic>,
) -> Lowered {
    let mut l = Lowering {
        mctx,
        lines,
        line_cursor: 0,
        out: Lowered {
            functions: Vec::with_capacity(bodies.len()),
            label_pcs: Vec::with_capacity(bodies.len()),
            ..Lowered::default()
        },
        ops: Vec::with_capacity(4),
        op_guards: Vec::new(),
    };
    for (f, body) in bodies {
        l.function(f, body, layout, diags);
    }
    l.out
}

impl<'a> Lowering<'_, 'a> {
    /// One function: its scopes, its instructions, its closing `ret`/`exit`, its labels and its
    /// record.
    fn function(
        &mut self,
        f: &'a ptx_parser::Function,
        body: &'a Block,
        layout: &ModuleLayout<'a>,
        diags: &mut Vec<Diagnostic>,
    ) {
        let is_entry = f.kind == ptx_parser::FunctionKind::Entry;
        let mut env = scope::build(f, body, &layout.statics, &layout.module_regs, diags);
        let flat = std::mem::take(&mut env.instrs);
        let start = self.out.instructions.len() as Pc;
        let mut stmt_pc = self.decode_body(&mut env, &flat, is_entry, diags);
        let body_end = self.out.instructions.len() as Pc;
        stmt_pc.push(body_end);
        let trailing_label = env.labels.iter().any(|l| l.stmt as usize == flat.len());
        self.close_body(body, start, body_end, trailing_label, is_entry);
        let end = self.out.instructions.len() as Pc;
        let label_pcs: Vec<Pc> = env
            .labels
            .iter()
            .map(|l| stmt_pc.get(l.stmt as usize).copied().unwrap_or(body_end))
            .collect();
        let explicit = resolve_targets(
            &mut self.out.instructions[start as usize..end as usize],
            &label_pcs,
            end,
        );
        let record = function_record(f, &mut env, (start, end), &label_pcs, explicit);
        self.out.functions.push(record);
        self.out.label_pcs.push(label_pcs);
    }

    /// Decodes each instruction of a body under its guard; returns the pc of each statement.
    fn decode_body(
        &mut self,
        env: &mut FnEnv<'a>,
        flat: &[FlatInstr<'a>],
        is_entry: bool,
        diags: &mut Vec<Diagnostic>,
    ) -> Vec<Pc> {
        let mut stmt_pc: Vec<Pc> = Vec::with_capacity(flat.len() + 1);
        let mut fcx = FnCx {
            env,
            m: self.mctx,
            diags,
            is_entry,
            address_taken: &mut self.out.address_taken,
            extern_called: &mut self.out.extern_called,
            reads_block_identity: &mut self.out.reads_block_identity,
        };
        for (k, fi) in flat.iter().enumerate() {
            stmt_pc.push(self.out.instructions.len() as Pc);
            let guard = match &fi.ins.guard {
                None => None,
                Some(g) => match guard_reg(&fcx, fi.scope, k as u32, g) {
                    Ok(r) => Some(r),
                    Err(d) => {
                        fcx.diags.push(d);
                        continue;
                    }
                },
            };
            if decode::decode(
                &mut fcx,
                fi.ins,
                (fi.scope, k as u32),
                guard,
                &mut self.ops,
                &mut self.op_guards,
            ) {
                let info = SourceInfo {
                    span: fi.ins.span,
                    ptx_line: self
                        .lines
                        .line_near(fi.ins.span.start, &mut self.line_cursor),
                    loc: fi.loc,
                };
                for (i, op) in self.ops.drain(..).enumerate() {
                    let guard = self
                        .op_guards
                        .iter()
                        .find(|(at, _)| *at == i)
                        .map_or(guard, |&(_, g)| g);
                    self.out.instructions.push(Instr { guard, op });
                    self.out.source_info.push(info.clone());
                }
            }
        }
        stmt_pc
    }

    /// Thesis 5.1.3 step 5: every path ends in `ret` (`exit` in kernels); a trailing label
    /// names the appended instruction (`load` step 3).
    fn close_body(
        &mut self,
        body: &Block,
        start: Pc,
        body_end: Pc,
        trailing_label: bool,
        is_entry: bool,
    ) {
        let falls_off = match self.out.instructions.last() {
            _ if body_end == start => true,
            Some(Instr {
                guard: None,
                op:
                    Op::Ret | Op::Exit | Op::Trap | Op::Bra { .. } | Op::BraIndirect { .. } | Op::Brk,
            }) => false,
            _ => true,
        };
        if falls_off || trailing_label {
            let close = Span {
                start: body.span.end.saturating_sub(1),
                end: body.span.end,
            };
            self.out.instructions.push(Instr {
                guard: None,
                op: if is_entry { Op::Exit } else { Op::Ret },
            });
            self.out.source_info.push(SourceInfo {
                span: close,
                ptx_line: self.lines.line_near(close.start, &mut self.line_cursor),
                loc: None,
            });
        }
    }
}

/// Branch targets (label indices) to pcs (`end` for a label past the body); whether the body
/// uses the thesis's explicit reconvergence instructions.
fn resolve_targets(instructions: &mut [Instr], label_pcs: &[Pc], end: Pc) -> bool {
    let mut explicit = false;
    for ins in instructions {
        match &mut ins.op {
            Op::Bra { target, .. }
            | Op::Ssy { target }
            | Op::PreBrk { target }
            | Op::PreRet { target } => {
                *target = label_pcs.get(*target as usize).copied().unwrap_or(end);
            }
            Op::BraIndirect { targets, .. } => {
                for t in targets.iter_mut() {
                    *t = label_pcs.get(*t as usize).copied().unwrap_or(end);
                }
            }
            _ => {}
        }
        explicit |= matches!(
            ins.op,
            Op::Ssy { .. } | Op::Sync | Op::Brk | Op::PreBrk { .. } | Op::PreRet { .. }
        );
    }
    explicit
}

/// A lowered function's record: its pcs `start..end`, parameters, registers, frame, labels and
/// the `.reqntid`/`.maxntid` directives.
fn function_record(
    f: &ptx_parser::Function,
    env: &mut FnEnv<'_>,
    (start, end): (Pc, Pc),
    label_pcs: &[Pc],
    explicit: bool,
) -> Function {
    let is_entry = f.kind == ptx_parser::FunctionKind::Entry;
    let ntid = |d: &[u32]| {
        [
            d.first().copied().unwrap_or(1),
            d.get(1).copied().unwrap_or(1),
            d.get(2).copied().unwrap_or(1),
        ]
    };
    let mut reqntid = None;
    let mut maxntid = None;
    for p in &f.performance {
        match p {
            PerfDirective::ReqNtid(d, _) => reqntid = Some(ntid(d)),
            PerfDirective::MaxNtid(d, _) => maxntid = Some(ntid(d)),
            _ => {}
        }
    }
    let labels = std::mem::take(&mut env.labels)
        .into_iter()
        .zip(label_pcs)
        .map(|(l, &pc)| (l.name, pc))
        .collect();
    Function {
        name: f.name.name.as_str().to_owned(),
        kind: if is_entry {
            FunctionKind::Entry
        } else {
            FunctionKind::Func
        },
        start,
        end,
        params: std::mem::take(&mut env.params),
        return_params: std::mem::take(&mut env.return_params),
        registers: {
            env.rename_shadowed();
            std::mem::take(&mut env.registers)
        },
        frame_size: env.frame_size,
        frame: std::mem::take(&mut env.frame),
        param_size: env.param_size,
        labels,
        reqntid,
        maxntid,
        cfg: Default::default(),
        explicit_reconvergence: explicit,
        span: f.span,
    }
}
