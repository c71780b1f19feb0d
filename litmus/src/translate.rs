//! A litmus test as one PTX module and launch (ARCHITECTURE.md section 6, "Litmus files").
//!
//! Placement: the device has a warp size of 1, so every litmus thread is a warp of its own
//! (no lock-step coupling between litmus threads, and barrier counts are thread counts). The
//! threads of one CTA are the warps of one block, in column order; CTAs are blocks in ascending
//! CTA id; the device has one SM per block and at most one block per SM, so different CTAs run
//! on different SMs (their L1s differ once the cached memory exists) and the threads of one CTA
//! share an SM.
//!
//! Memory locations are module `.global .align 64 .s32` variables named `loc_<name>` (initial
//! values from the init section), so the launch needs no arguments and a printed `cudasem replay` command
//! needs only grid, block and device flags; registers are `.s32` PTX registers
//! `%t<thread>_<reg>`. The explorer reads the registers the condition names from the threads'
//! final registers, which the machine keeps for it (`FinalRegisters::Observed`): at its end a
//! thread sets every other register it wrote to a constant, so that final states differ only in
//! what the condition reads. (Storing the registers to memory instead would add a visible store
//! per register, and under cached memory an in-flight operation, whose steps interleave with
//! every other thread's: up to 30 times the states.)
//!
//! Each location is aligned to [`LOCATION_ALIGN`] bytes, the largest cache line the cached memory
//! takes (`--line-bytes`), so every location is a line of its own at every line size. herd's
//! locations are distinct; packed into one line, an access to one location would move the
//! others' bytes in and out of an L1 with it (false sharing the test does not ask for): a weak
//! load of `y` would prime a stale `x`, and a stale `x` could not be kept while a later load of
//! `y` misses. It also makes every micro step of a test depend on every other one, which the
//! reductions work per line cannot separate.
//!
//! Qualifiers map directly (`ld.acquire.gpu` → `ld.acquire.gpu.global.s32`). Adjustments, each
//! semantics-preserving: `red` becomes `atom` into a scratch register (PTX has no
//! `red.acq_rel`); `.sub` adds the negated operand (PTX `atom` has no `.sub`); an unscoped
//! strong access gets `.sys` (PTX requires a scope; `.sys` is the strongest).
//!
//! Barriers follow Dat3M's reading of `bar.cta.sync a{, b{, c}}`: `b` (else `a`) is the barrier
//! id and `c` the number of threads it waits for. Without `c`, the barrier waits for every
//! thread of the CTA that has a barrier with that id. Ids must be known when the test is
//! translated (an immediate, or a register no instruction writes); otherwise the test is
//! unsupported.
//!
//! Unsupported (an [`Unsupported`] reason, never a wrong verdict): proxies (aliases,
//! `fence.proxy.*`, texture/surface/constant accesses), more than one GPU, pointer initial
//! values, instructions with no PTX counterpart (`ld.release`, `atom.weak`, `atom.mul`...).

use super::parse::{
    BarrierMode, BranchCond, FenceKind, Init, InitValue, Instr, LitmusTest, LocalOp, Proxy, RmwOp,
    Scope, Sem, Term, Thread, Value,
};
use scheduler::outcome::{FinalRegister, Observe};
use semantics::Program;
use semantics::machine::{DeviceConfig, LaunchConfig, MachineConfig, MemoryKind, WarpModel};
use semantics::program::RegId;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Why a test cannot be run (the result's status is then "unsupported").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Unsupported {
    pub reason: String,
}

fn unsupported<T>(reason: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported {
        reason: reason.into(),
    })
}

/// Where a condition term is read after the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// The final value of register `name` of litmus thread `thread` (the machine keeps the
    /// registers of exited threads: `FinalRegisters::Observed`).
    Register { thread: usize, name: String },
    /// Module variable (a memory location).
    Variable(String),
    /// A constant (a register the thread never has: herd reads it as its initial value).
    Const(i64),
}

/// The translated test.
#[derive(Debug, Clone)]
pub struct Translation {
    pub ptx: String,
    pub launch: LaunchConfig,
    pub config: MachineConfig,
    /// Each observed term (the condition's registers and locations, sorted) and where to read it.
    pub observed: Vec<(Term, Slot)>,
    /// Litmus thread `i` runs as (block, warp) `placement[i]`.
    pub placement: Vec<(u32, u32)>,
}

/// The kernel's name.
pub const ENTRY: &str = "litmus";

/// The alignment of every location: the largest line of the cached memory (`--line-bytes` is a
/// power of two in 8..=64), so that no two locations share a line (module header).
pub const LOCATION_ALIGN: u32 = 64;

impl Translation {
    /// The id of register `name` (`%t1_r0`) of the kernel in `program` (this translation's PTX,
    /// loaded).
    pub fn register_id(program: &Program, name: &str) -> Option<RegId> {
        let entry = program.functions.iter().find(|f| f.name == ENTRY)?;
        let r = entry.registers.iter().position(|r| r.name == name)?;
        u16::try_from(r).ok().map(RegId)
    }

    /// What a generic outcome search (`explore::dfs`) must record of a final machine of
    /// `program` (this translation's PTX, loaded) to tell the test's outcomes apart: the
    /// registers the condition reads, from the threads' final registers, and its locations.
    pub fn observe(&self, program: &Program) -> Observe {
        let mut observe = Observe::default();
        for (_, slot) in &self.observed {
            match slot {
                Slot::Register { thread, name } => {
                    let (Some(reg), Some(&(block, warp))) = (
                        Translation::register_id(program, name),
                        self.placement.get(*thread),
                    ) else {
                        continue;
                    };
                    observe.registers.push(FinalRegister {
                        block,
                        warp,
                        lane: 0,
                        reg,
                    });
                }
                Slot::Variable(v) => observe.variables.push(v.clone()),
                Slot::Const(_) => {}
            }
        }
        observe
    }
}

/// The PTX variable of a location.
pub fn location_variable(name: &str) -> String {
    format!("loc_{name}")
}

/// Translates `test` for a machine whose memory system is `memory`.
pub fn translate(test: &LitmusTest, memory: MemoryKind) -> Result<Translation, Unsupported> {
    check_supported(test)?;
    let place = Placement::of(test);
    let (locations, reg_init) = initial_values(test)?;
    let regs = registers(test, &reg_init);
    let outputs = Outputs::of(test, &regs);
    let barriers = barrier_plan(test)?;
    let ptx = module(
        test, &place, &locations, &reg_init, &regs, &outputs, &barriers,
    )?;
    Ok(Translation {
        ptx,
        launch: launch_config(&place),
        config: machine_config(&place, memory),
        observed: outputs.observed,
        placement: place.of_thread,
    })
}

/// Where the litmus threads run (module header): CTAs are blocks in ascending CTA id, the
/// threads of a CTA its warps in column order.
struct Placement {
    /// Litmus thread `i` runs as (block, warp) `of_thread[i]`.
    of_thread: Vec<(u32, u32)>,
    /// Threads per block: the largest CTA's.
    block_dim: u32,
    blocks: u32,
}

impl Placement {
    fn of(test: &LitmusTest) -> Placement {
        let ctas: BTreeSet<u32> = test.threads.iter().map(|t| t.cta).collect();
        let block_of: BTreeMap<u32, u32> = ctas
            .iter()
            .enumerate()
            .map(|(i, c)| (*c, i as u32))
            .collect();
        let mut per_block = vec![0u32; ctas.len()];
        let mut of_thread = Vec::new();
        for t in &test.threads {
            let b = block_of[&t.cta];
            of_thread.push((b, per_block[b as usize]));
            per_block[b as usize] += 1;
        }
        Placement {
            of_thread,
            block_dim: per_block.iter().copied().max().unwrap_or(1).max(1),
            blocks: ctas.len().max(1) as u32,
        }
    }
}

/// Initial values per location and per (thread, register); every location an instruction or
/// the condition names is in the map (0 unless the init section says otherwise).
type InitialValues = (BTreeMap<String, i64>, BTreeMap<(usize, String), i64>);

/// The init section's values: locations first, then registers; a pointer value is unsupported.
fn initial_values(test: &LitmusTest) -> Result<InitialValues, Unsupported> {
    let mut locations: BTreeMap<String, i64> = BTreeMap::new();
    for i in &test.init {
        if let Init::Location { name, value, .. } = i {
            match value {
                InitValue::Int(v) => {
                    locations.insert(name.clone(), *v);
                }
                InitValue::Address(a) => {
                    return unsupported(format!(
                        "pointer initial value `{name} = &{a}` (locations hold integers here)"
                    ));
                }
            }
        }
    }
    let mut reg_init: BTreeMap<(usize, String), i64> = BTreeMap::new();
    for i in &test.init {
        if let Init::Register {
            thread, reg, value, ..
        } = i
        {
            match value {
                InitValue::Int(v) => {
                    reg_init.insert((*thread, reg.clone()), *v);
                }
                InitValue::Address(a) => {
                    return unsupported(format!(
                        "pointer initial value `P{thread}:{reg} = &{a}` (registers hold integers here)"
                    ));
                }
            }
        }
    }
    // Locations named but not initialised start at 0.
    for t in &test.threads {
        for l in &t.instrs {
            if let Some(loc) = location_of(&l.instr) {
                locations.entry(loc.to_string()).or_insert(0);
            }
        }
    }
    for term in test.observed() {
        if let Term::Loc(l) = term {
            locations.entry(l).or_insert(0);
        }
    }
    Ok((locations, reg_init))
}

/// Each thread's registers (sorted): those its instructions name and those initialised.
fn registers(
    test: &LitmusTest,
    reg_init: &BTreeMap<(usize, String), i64>,
) -> Vec<BTreeSet<String>> {
    let mut regs: Vec<BTreeSet<String>> = vec![BTreeSet::new(); test.threads.len()];
    for (i, t) in test.threads.iter().enumerate() {
        for l in &t.instrs {
            registers_of(&l.instr, &mut regs[i]);
        }
    }
    for (thread, reg) in reg_init.keys() {
        regs[*thread].insert(reg.clone());
    }
    regs
}

/// Where each observed term is read after the run, and which registers of each thread the
/// condition reads (the thread keeps their final values and clears the others).
struct Outputs {
    observed: Vec<(Term, Slot)>,
    /// Per thread: the registers the condition reads.
    kept: Vec<BTreeSet<String>>,
}

impl Outputs {
    fn of(test: &LitmusTest, regs: &[BTreeSet<String>]) -> Outputs {
        let mut out = Outputs {
            observed: Vec::new(),
            kept: vec![BTreeSet::new(); test.threads.len()],
        };
        for term in test.observed() {
            let slot = match &term {
                Term::Reg { thread, reg } => {
                    if regs[*thread].contains(reg) {
                        out.kept[*thread].insert(reg.clone());
                        Slot::Register {
                            thread: *thread,
                            name: reg_name(*thread, reg),
                        }
                    } else {
                        Slot::Const(0)
                    }
                }
                Term::Loc(l) => Slot::Variable(location_variable(l)),
                Term::Int(v) => Slot::Const(*v),
            };
            out.observed.push((term, slot));
        }
        out
    }
}

/// The PTX module: the locations and the kernel, which dispatches on the linear thread id to
/// each litmus thread's code.
fn module(
    test: &LitmusTest,
    place: &Placement,
    locations: &BTreeMap<String, i64>,
    reg_init: &BTreeMap<(usize, String), i64>,
    regs: &[BTreeSet<String>],
    outputs: &Outputs,
    barriers: &Barriers,
) -> Result<String, Unsupported> {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// PTX litmus test {} translated by cudasem (litmus::translate).",
        test.name
    );
    s.push_str(".version 7.0\n.target sm_70\n.address_size 64\n\n");
    for (name, v) in locations {
        let _ = writeln!(
            s,
            ".global .align {LOCATION_ALIGN} .s32 {} = {};",
            location_variable(name),
            i32_of(*v)?
        );
    }
    let _ = writeln!(s, "\n.visible .entry {ENTRY}()\n{{");
    s.push_str("\t.reg .pred %p;\n\t.reg .u32 %blk, %thr;\n\t.reg .s32 %scratch, %lhs;\n");
    for (i, rs) in regs.iter().enumerate() {
        for r in rs {
            let _ = writeln!(s, "\t.reg .s32 {};", reg_name(i, r));
        }
    }
    dispatch(&mut s, place);
    for (i, t) in test.threads.iter().enumerate() {
        let cleared: Vec<&String> = regs[i].difference(&outputs.kept[i]).collect();
        thread_code(&mut s, i, t, reg_init, &cleared, barriers)?;
    }
    s.push_str("}\n");
    Ok(s)
}

/// The kernel's prologue: a branch to each litmus thread's code on the linear thread id.
/// Warp-uniform branches (warp size 1), no divergence, and few steps (every local step
/// multiplies the interleavings the explorer visits).
fn dispatch(s: &mut String, place: &Placement) {
    let block_dim = place.block_dim;
    let _ = writeln!(
        s,
        "\tmov.u32 %blk, %ctaid.x;\n\tmov.u32 %thr, %tid.x;\n\tmad.lo.u32 %blk, %blk, {block_dim}, %thr;"
    );
    for (i, (b, w)) in place.of_thread.iter().enumerate() {
        let _ = writeln!(
            s,
            "\tsetp.eq.u32 %p, %blk, {};\n\t@%p bra P{i};",
            b * block_dim + w
        );
    }
    s.push_str("\texit;\n");
}

/// Litmus thread `i`'s code: its initial register values, its instructions, and at its end the
/// clearing of every register it wrote that the condition does not read (`cleared`, and the
/// scratch registers and predicate its instructions use), so that its final registers hold
/// only what the condition reads (module header). The clearing is register-only: a search
/// folds it into the thread's last visible step.
fn thread_code(
    s: &mut String,
    i: usize,
    t: &Thread,
    reg_init: &BTreeMap<(usize, String), i64>,
    cleared: &[&String],
    barriers: &Barriers,
) -> Result<(), Unsupported> {
    let _ = writeln!(s, "P{i}:");
    let start = s.len();
    for (reg, v) in reg_init.range((i, String::new())..(i + 1, String::new())) {
        if *v != 0 {
            let _ = writeln!(s, "\tmov.s32 {}, {};", reg_name(i, &reg.1), i32_of(*v)?);
        }
    }
    for (k, l) in t.instrs.iter().enumerate() {
        emit(s, i, k, &l.instr, barriers)?;
    }
    let body = s[start..].to_string();
    let _ = writeln!(s, "END_P{i}:");
    for reg in cleared {
        let _ = writeln!(s, "\tmov.s32 {}, 0;", reg_name(i, reg));
    }
    for scratch in ["%scratch", "%lhs"] {
        if body.contains(scratch) {
            let _ = writeln!(s, "\tmov.s32 {scratch}, 0;");
        }
    }
    if body.contains("%p") {
        // The value the dispatch left (this thread's branch was taken).
        s.push_str("\tsetp.eq.u32 %p, %blk, %blk;\n");
    }
    s.push_str("\texit;\n");
    Ok(())
}

/// The device: warp size 1, one SM per block and one block per SM (module header).
fn machine_config(place: &Placement, memory: MemoryKind) -> MachineConfig {
    MachineConfig {
        warp_model: WarpModel::SimtStack,
        memory,
        device: DeviceConfig {
            num_sms: place.blocks,
            max_blocks_per_sm: 1,
            warp_size: 1,
            ..DeviceConfig::default()
        },
        ..MachineConfig::default()
    }
}

/// The launch: one block per CTA, no arguments (locations and outputs are module variables).
fn launch_config(place: &Placement) -> LaunchConfig {
    LaunchConfig::kernel_1d(ENTRY, place.blocks, place.block_dim)
}

fn i32_of(v: i64) -> Result<i32, Unsupported> {
    i32::try_from(v).or_else(|_| unsupported(format!("value {v} does not fit in 32 bits")))
}

fn reg_name(thread: usize, reg: &str) -> String {
    format!("%t{thread}_{reg}")
}

fn label_name(thread: usize, label: &str) -> String {
    format!("P{thread}_{label}")
}

fn location_of(i: &Instr) -> Option<&str> {
    match i {
        Instr::Load { loc, .. }
        | Instr::Store { loc, .. }
        | Instr::Atom { loc, .. }
        | Instr::Red { loc, .. } => Some(loc),
        _ => None,
    }
}

fn value_reg(v: &Value, out: &mut BTreeSet<String>) {
    if let Value::Reg(r) = v {
        out.insert(r.clone());
    }
}

fn registers_of(i: &Instr, out: &mut BTreeSet<String>) {
    match i {
        Instr::Load { dst, .. } => {
            out.insert(dst.clone());
        }
        Instr::Store { value, .. } | Instr::Red { value, .. } => value_reg(value, out),
        Instr::Atom { dst, operands, .. } => {
            out.insert(dst.clone());
            operands.iter().for_each(|v| value_reg(v, out));
        }
        Instr::Barrier { operands, .. } => operands.iter().for_each(|v| value_reg(v, out)),
        Instr::Local { dst, a, b, .. } => {
            out.insert(dst.clone());
            value_reg(a, out);
            value_reg(b, out);
        }
        Instr::Branch { a, b, .. } => {
            value_reg(a, out);
            value_reg(b, out);
        }
        Instr::Fence(_) | Instr::Goto(_) | Instr::Label(_) => {}
    }
}

/// The register an instruction writes.
fn written(i: &Instr) -> Option<&str> {
    match i {
        Instr::Load { dst, .. } | Instr::Atom { dst, .. } | Instr::Local { dst, .. } => Some(dst),
        _ => None,
    }
}

fn check_supported(test: &LitmusTest) -> Result<(), Unsupported> {
    for i in &test.init {
        if let Init::Alias {
            name,
            proxy,
            target,
            ..
        } = i
        {
            return unsupported(format!(
                "proxies: `{name} @ {} aliases {target}` (cudasem models the generic proxy only)",
                proxy.name()
            ));
        }
    }
    for t in &test.threads {
        if t.gpu != 0 {
            return unsupported(format!(
                "multiple GPUs: P{}@cta {},gpu {} (cudasem models one GPU)",
                t.id, t.cta, t.gpu
            ));
        }
        for l in &t.instrs {
            let proxy = match &l.instr {
                Instr::Load { proxy, .. }
                | Instr::Store { proxy, .. }
                | Instr::Atom { proxy, .. }
                | Instr::Red { proxy, .. } => *proxy,
                Instr::Fence(FenceKind::Proxy(_) | FenceKind::Alias) => {
                    return unsupported(format!(
                        "proxies: proxy fence in P{} at {} (cudasem models the generic proxy only)",
                        t.id, l.pos
                    ));
                }
                _ => Proxy::Generic,
            };
            if proxy != Proxy::Generic {
                return unsupported(format!(
                    "proxies: {} proxy access in P{} at {} (cudasem models the generic proxy only)",
                    proxy.name(),
                    t.id,
                    l.pos
                ));
            }
        }
    }
    Ok(())
}

/// Per (block, barrier id): the thread count every participant passes to `bar`.
struct Barriers {
    /// (thread, instruction index) → (id, count).
    at: BTreeMap<(usize, usize), (u32, u32)>,
}

fn barrier_plan(test: &LitmusTest) -> Result<Barriers, Unsupported> {
    let mut ids: BTreeMap<(usize, usize), (u32, Option<u32>)> = BTreeMap::new();
    for (ti, t) in test.threads.iter().enumerate() {
        let writes: BTreeSet<&str> = t.instrs.iter().filter_map(|l| written(&l.instr)).collect();
        let static_value = |v: &Value| -> Result<i64, Unsupported> {
            match v {
                Value::Imm(x) => Ok(*x),
                Value::Reg(r) if writes.contains(r.as_str()) => unsupported(format!(
                    "barrier id `{r}` in P{ti} is computed at run time: the number of threads the barrier waits for depends on the execution"
                )),
                Value::Reg(r) => Ok(test
                    .init
                    .iter()
                    .find_map(|i| match i {
                        Init::Register {
                            thread,
                            reg,
                            value: InitValue::Int(v),
                            ..
                        } if *thread == ti && reg == r => Some(*v),
                        _ => None,
                    })
                    .unwrap_or(0)),
            }
        };
        for (k, l) in t.instrs.iter().enumerate() {
            if let Instr::Barrier { operands, .. } = &l.instr {
                let id = static_value(&operands[operands.len().min(2) - 1])?;
                if !(0..16).contains(&id) {
                    return unsupported(format!(
                        "barrier id {id} in P{ti} at {}: PTX has barriers 0 to 15",
                        l.pos
                    ));
                }
                let quorum = match operands.get(2) {
                    Some(q) => {
                        let q = static_value(q)?;
                        Some(u32::try_from(q).ok().filter(|q| *q > 0).ok_or_else(|| {
                            Unsupported {
                                reason: format!("barrier thread count {q} in P{ti} at {}", l.pos),
                            }
                        })?)
                    }
                    None => None,
                };
                ids.insert((ti, k), (id as u32, quorum));
            }
        }
    }
    // Participants per (CTA, id): threads with at least one barrier of that id.
    let mut participants: BTreeMap<(u32, u32), BTreeSet<usize>> = BTreeMap::new();
    for (&(ti, _), &(id, _)) in &ids {
        participants
            .entry((test.threads[ti].cta, id))
            .or_default()
            .insert(ti);
    }
    let at = ids
        .into_iter()
        .map(|((ti, k), (id, quorum))| {
            let count = quorum.unwrap_or_else(|| {
                participants
                    .get(&(test.threads[ti].cta, id))
                    .map_or(1, |p| p.len() as u32)
            });
            ((ti, k), (id, count))
        })
        .collect();
    Ok(Barriers { at })
}

fn sem_scope(
    sem: Sem,
    scope: Option<Scope>,
    what: &str,
    allowed: &[Sem],
) -> Result<String, Unsupported> {
    if !allowed.contains(&sem) {
        return unsupported(format!("`{what}.{}` has no PTX counterpart", sem.name()));
    }
    Ok(match sem {
        Sem::Weak => ".weak".to_string(),
        _ => format!(".{}.{}", sem.name(), scope.unwrap_or(Scope::Sys).name()),
    })
}

/// An operand as PTX text.
fn operand(thread: usize, v: &Value) -> Result<String, Unsupported> {
    Ok(match v {
        Value::Reg(r) => reg_name(thread, r),
        Value::Imm(x) => i32_of(*x)?.to_string(),
    })
}

fn emit(
    s: &mut String,
    ti: usize,
    k: usize,
    instr: &Instr,
    barriers: &Barriers,
) -> Result<(), Unsupported> {
    let loc = |l: &str| location_variable(l);
    match instr {
        Instr::Load {
            sem,
            scope,
            dst,
            loc: l,
            ..
        } => {
            let q = sem_scope(*sem, *scope, "ld", &[Sem::Weak, Sem::Relaxed, Sem::Acquire])?;
            let _ = writeln!(s, "\tld{q}.global.s32 {}, [{}];", reg_name(ti, dst), loc(l));
        }
        Instr::Store {
            sem,
            scope,
            loc: l,
            value,
            ..
        } => {
            let q = sem_scope(*sem, *scope, "st", &[Sem::Weak, Sem::Relaxed, Sem::Release])?;
            let _ = writeln!(
                s,
                "\tst{q}.global.s32 [{}], {};",
                loc(l),
                operand(ti, value)?
            );
        }
        Instr::Atom {
            sem,
            scope,
            op,
            dst,
            loc: l,
            operands,
            ..
        } => emit_rmw(s, ti, *sem, *scope, *op, &reg_name(ti, dst), l, operands)?,
        Instr::Red {
            sem,
            scope,
            op,
            loc: l,
            value,
            ..
        } => emit_rmw(
            s,
            ti,
            *sem,
            *scope,
            *op,
            "%scratch",
            l,
            std::slice::from_ref(value),
        )?,
        Instr::Fence(FenceKind::Memory { sem, scope }) => match sem {
            Sem::Sc | Sem::AcqRel => {
                let _ = writeln!(s, "\tfence.{}.{};", sem.name(), scope.name());
            }
            _ => return unsupported(format!("`fence.{}` has no PTX counterpart", sem.name())),
        },
        Instr::Fence(_) => return unsupported("proxy fences"),
        Instr::Barrier { .. } => {
            let Some(&(id, count)) = barriers.at.get(&(ti, k)) else {
                return unsupported("internal: no barrier plan for this instruction");
            };
            let mode = match instr {
                Instr::Barrier {
                    mode: BarrierMode::Arrive,
                    ..
                } => "arrive",
                _ => "sync",
            };
            let _ = writeln!(s, "\tbar.cta.{mode} {id}, {count};");
        }
        Instr::Local { op, dst, a, b } => {
            let a = materialize(s, ti, a)?;
            let b = operand(ti, b)?;
            let d = reg_name(ti, dst);
            let _ = match op {
                LocalOp::Add => writeln!(s, "\tadd.s32 {d}, {a}, {b};"),
                LocalOp::Sub => writeln!(s, "\tsub.s32 {d}, {a}, {b};"),
                LocalOp::Mul => writeln!(s, "\tmul.lo.s32 {d}, {a}, {b};"),
                LocalOp::Div => writeln!(s, "\tdiv.s32 {d}, {a}, {b};"),
            };
        }
        Instr::Branch { cond, a, b, label } => {
            let a = materialize(s, ti, a)?;
            let b = operand(ti, b)?;
            let c = match cond {
                BranchCond::Eq => "eq",
                BranchCond::Ne => "ne",
                BranchCond::Lt => "lt",
                BranchCond::Le => "le",
                BranchCond::Gt => "gt",
                BranchCond::Ge => "ge",
            };
            let _ = writeln!(
                s,
                "\tsetp.{c}.s32 %p, {a}, {b};\n\t@%p bra {};",
                label_name(ti, label)
            );
        }
        Instr::Goto(label) => {
            let _ = writeln!(s, "\tbra {};", label_name(ti, label));
        }
        Instr::Label(label) => {
            let _ = writeln!(s, "{}:", label_name(ti, label));
        }
    }
    Ok(())
}

/// An immediate first operand goes through `%lhs` (PTX wants a register there).
fn materialize(s: &mut String, ti: usize, v: &Value) -> Result<String, Unsupported> {
    match v {
        Value::Reg(r) => Ok(reg_name(ti, r)),
        Value::Imm(x) => {
            let _ = writeln!(s, "\tmov.b32 %lhs, {};", i32_of(*x)?);
            Ok("%lhs".to_string())
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn emit_rmw(
    s: &mut String,
    ti: usize,
    sem: Sem,
    scope: Scope,
    op: RmwOp,
    dst: &str,
    l: &str,
    operands: &[Value],
) -> Result<(), Unsupported> {
    let q = sem_scope(
        sem,
        Some(scope),
        "atom",
        &[Sem::Relaxed, Sem::Acquire, Sem::Release, Sem::AcqRel],
    )?;
    let loc = location_variable(l);
    let first = operands
        .first()
        .map(|v| operand(ti, v))
        .transpose()?
        .unwrap_or_default();
    let (name, ty, a) = match op {
        RmwOp::Add => ("add", "s32", first),
        RmwOp::Sub => {
            // PTX has no atom.sub: add the negation.
            let a = match &operands[0] {
                Value::Imm(x) => i32_of(-*x)?.to_string(),
                Value::Reg(r) => {
                    let _ = writeln!(s, "\tneg.s32 %lhs, {};", reg_name(ti, r));
                    "%lhs".to_string()
                }
            };
            ("add", "s32", a)
        }
        RmwOp::And => ("and", "b32", first),
        RmwOp::Or => ("or", "b32", first),
        RmwOp::Xor => ("xor", "b32", first),
        RmwOp::Exch => ("exch", "b32", first),
        RmwOp::Cas => {
            let b = operand(ti, &operands[1])?;
            ("cas", "b32", format!("{first}, {b}"))
        }
        RmwOp::Mul | RmwOp::Div => {
            return unsupported(format!(
                "`atom.{}` has no PTX counterpart",
                if op == RmwOp::Mul { "mul" } else { "div" }
            ));
        }
    };
    let _ = writeln!(s, "\tatom{q}.global.{name}.{ty} {dst}, [{loc}], {a};");
    Ok(())
}
