//! Kernel launch (thesis 5.7.3 (start), 5.8.3 (load)): finds the entry, checks the arguments and
//! the launch's resources against the device, lays out memory (module variables, launch buffers,
//! the kernel parameter buffer), and offers the first `Issue` choices.

use super::grid::{Grid, GridPhase, GridShape};
use super::thread::type_size;
use super::{
    ArgValue, GridLaunch, LaunchConfig, LaunchError, LaunchInfo, Machine, MachineConfig,
    ProgramLaunch, Sm,
};
use crate::program::{FuncId, FunctionKind, ParamLoc, Program, Space};
use memory_model::Flat;
use std::sync::Arc;

fn err(message: impl Into<String>) -> LaunchError {
    LaunchError {
        message: message.into(),
    }
}

pub(super) fn new(
    program: Arc<Program>,
    launch: &LaunchConfig,
    config: &MachineConfig,
) -> Result<Machine, LaunchError> {
    // Borrowed, not `ProgramLaunch::single`: the buffers' initial bytes are not copied.
    build(
        program,
        Shared {
            buffers: &launch.buffers,
            globals: &launch.globals,
            extern_values: &launch.extern_values,
        },
        &[GridLaunch::of(launch, 0)],
        config,
    )
}

/// What every launch of a program shares.
struct Shared<'a> {
    buffers: &'a [super::BufferSpec],
    globals: &'a [(String, u64)],
    extern_values: &'a [(String, Vec<u64>)],
}

/// The shape of one grid, checked against the device before memory is laid out.
struct Shape {
    entry: FuncId,
    shape: GridShape,
    shared_bytes: u32,
}

/// Thesis 5.7.3 (start), the checks: the kernel exists, the grid and block have a shape the
/// device can run, one block fits on an SM.
fn shape(
    program: &Program,
    launch: &GridLaunch,
    config: &MachineConfig,
) -> Result<Shape, LaunchError> {
    let entries: Vec<&str> = program
        .functions
        .iter()
        .filter(|f| f.kind == FunctionKind::Entry)
        .map(|f| f.name.as_str())
        .collect();
    let entry = match &launch.kernel {
        Some(name) => program.entry(name).ok_or_else(|| {
            err(format!(
                "kernel `{name}` not found; the module's entries are: {}",
                list(&entries)
            ))
        })?,
        None => match entries.as_slice() {
            [one] => program
                .entry(one)
                .ok_or_else(|| err("internal: entry vanished"))?,
            [] => return Err(err("the module has no entry (.entry) to launch")),
            _ => {
                return Err(err(format!(
                    "the module has several entries, name one: {}",
                    list(&entries)
                )));
            }
        },
    };
    let f = program.function(entry);
    let dev = &config.device;
    let ws = dev.warp_size;
    if !(1..=64).contains(&ws) {
        return Err(err(format!("warp size {ws} is not in 1..=64")));
    }
    if launch.grid.contains(&0) || launch.block.contains(&0) {
        return Err(err(format!(
            "grid {:?} and block {:?} dimensions must be at least 1",
            launch.grid, launch.block
        )));
    }
    let tpb64 = launch.block.iter().map(|&d| d as u64).product::<u64>();
    if tpb64 > dev.max_threads_per_block as u64 {
        return Err(err(format!(
            "block {:?} has {tpb64} threads, more than the device's {} per block",
            launch.block, dev.max_threads_per_block
        )));
    }
    let tpb = tpb64 as u32;
    let blocks64 = launch.grid.iter().map(|&d| d as u64).product::<u64>();
    if blocks64 > u32::MAX as u64 {
        return Err(err(format!(
            "grid {:?} has {blocks64} blocks, more than 2^32 - 1",
            launch.grid
        )));
    }
    if let Some(r) = f.reqntid
        && r != launch.block
    {
        return Err(err(format!(
            "kernel `{}` requires .reqntid {:?}, launched with block {:?}",
            f.name, r, launch.block
        )));
    }
    let shape = GridShape::new(launch.grid, launch.block, ws);
    let wpb = shape.warps_per_block;
    if tpb > dev.max_threads_per_sm
        || wpb > dev.max_warps_per_sm
        || dev.max_blocks_per_sm == 0
        || dev.num_sms == 0
    {
        return Err(err(format!(
            "a block of {tpb} threads ({wpb} warps) does not fit on an SM ({} threads, {} warps)",
            dev.max_threads_per_sm, dev.max_warps_per_sm
        )));
    }
    let shared64 = program.shared_size + launch.dynamic_shared_bytes as u64;
    if shared64 > dev.shared_mem_per_sm as u64 {
        return Err(err(format!(
            "the block needs {shared64} bytes of shared memory ({} static + {} dynamic), more than the {} bytes of an SM",
            program.shared_size, launch.dynamic_shared_bytes, dev.shared_mem_per_sm
        )));
    }
    Ok(Shape {
        entry,
        shape,
        shared_bytes: shared64 as u32,
    })
}

/// Where each later grid's parameters start: a multiple of this many bytes past the previous
/// grid's (more than any parameter's alignment a kernel declares in practice).
const PARAM_GRID_ALIGN: u64 = 256;

pub(super) fn from_program(
    program: Arc<Program>,
    launch: &ProgramLaunch,
    config: &MachineConfig,
) -> Result<Machine, LaunchError> {
    build(
        program,
        Shared {
            buffers: &launch.buffers,
            globals: &launch.globals,
            extern_values: &launch.extern_values,
        },
        &launch.launches,
        config,
    )
}

fn build(
    program: Arc<Program>,
    launch: Shared<'_>,
    launches: &[GridLaunch],
    config: &MachineConfig,
) -> Result<Machine, LaunchError> {
    let n = launches.len();
    if n == 0 {
        return Err(err("the program has no launch"));
    }
    let shapes = launches
        .iter()
        .enumerate()
        .map(|(i, l)| shape(&program, l, config).map_err(located(i, n)))
        .collect::<Result<Vec<_>, _>>()?;
    let total_blocks = shapes.iter().map(|s| s.shape.blocks as u64).sum::<u64>();
    if total_blocks > u32::MAX as u64 {
        return Err(err(format!(
            "the program's grids have {total_blocks} blocks together, more than 2^32 - 1"
        )));
    }
    let dev = &config.device;
    // Memory: module variables, buffers, parameters.
    let (mut mem, local_static) = module_memory(&program, config);
    set_globals(&program, &mut mem, launch.globals)?;
    let picks = extern_picks(&program, launch.extern_values)?;
    let buffers: Vec<u64> = launch
        .buffers
        .iter()
        .map(|b| mem.alloc_global(&b.name, &b.bytes))
        .collect();
    let param_bases = parameters(&program, &mut mem, launches, &shapes, &buffers)?;
    check_cache(config)?;
    let context = GridContext {
        kernel_frame_base: local_static.next_multiple_of(16) as u32,
        buffers,
        picks,
    };
    let grids = grids(&program, config, launches, &shapes, &param_bases, context)?;
    // The per-SM store stage (deviation D31) only where it can change what some thread sees: a
    // `.cta` release, and a CTA that may run on another SM than the releasing one (with one
    // CTA, or one SM, every thread reads the SM's stage and a staged store is as good as one
    // in L2).
    let blocks: u64 = grids.iter().map(|g| g.info.shape.blocks as u64).sum();
    let sm_stage = program.has_cta_release() && blocks > 1 && dev.num_sms > 1;
    let mut m = Machine {
        program,
        info: grids[0].info.clone(),
        fixed: Arc::new(super::Fixed {
            config: *config,
            segments: Default::default(),
            private: Default::default(),
        }),
        mem: match config.memory {
            super::MemoryKind::Flat => memory_model::Memory::Flat(mem),
            super::MemoryKind::Cached => {
                let mut cached = memory_model::CachedMemory::new(
                    mem,
                    memory_model::cached::CacheConfig {
                        num_sms: dev.num_sms,
                        ..config.cache
                    },
                );
                cached.set_sm_stage(sm_stage);
                memory_model::Memory::Cached(Box::new(cached))
            }
        },
        blocks: memory_model::BlockTable::new(),
        sms: vec![Sm::default(); dev.num_sms as usize].into(),
        grids: grids.into(),
        enabled: Default::default(),
        steps: 0,
        thread_instructions: 0,
        termination: None,
        checking: config.check_invariants || cfg!(debug_assertions),
        scratch: Vec::new(),
        mem_generation: 0,
        final_registers: Default::default(),
        finals: Default::default(),
    };
    m.schedule_grids();
    m.refresh_issue();
    Ok(m)
}

/// An error of launch `i` of `n`: as it always was for one launch; with several, naming its
/// launch.
fn located(i: usize, n: usize) -> impl Fn(LaunchError) -> LaunchError {
    move |e: LaunchError| {
        if n == 1 {
            e
        } else {
            err(format!("launch {} of {n}: {}", i + 1, e.message))
        }
    }
}

/// The memory with the module's `.global` and `.const` variables (initialised, relocated), and
/// the end of its static `.local` variables.
fn module_memory(program: &Program, config: &MachineConfig) -> (Flat, u64) {
    let mut mem = Flat::new(config.local_bytes_per_thread as u64);
    let mut local_static = 0u64;
    for v in &program.variables {
        let init = relocated_init(v);
        match v.space {
            Space::Global => mem.add_global_variable(&v.name, v.address, &init, v.size),
            Space::Const => mem.add_const_variable(&v.name, v.address, &init, v.size),
            Space::Local => local_static = local_static.max(v.address + v.size),
            _ => {}
        }
    }
    (mem, local_static)
}

/// The launch's `globals`: values of module `.global`/`.const` variables.
fn set_globals(
    program: &Program,
    mem: &mut Flat,
    globals: &[(String, u64)],
) -> Result<(), LaunchError> {
    for (name, value) in globals {
        let v = program
            .variables
            .iter()
            .find(|v| &v.name == name && matches!(v.space, Space::Global | Space::Const))
            .ok_or_else(|| {
                err(format!(
                    "`globals` names `{name}`, which is not a module .global/.const variable"
                ))
            })?;
        let n = (type_size(v.ty) as usize).min(8);
        let bytes = value.to_le_bytes();
        let seg = if v.space == Space::Global {
            mem.global_named_mut(name)
        } else {
            mem.const_named_mut(name)
        };
        if let Some(seg) = seg {
            seg.write_bytes(0, &bytes[..n]);
        }
    }
    Ok(())
}

/// The launch's `extern_values`: for each result slot of a body-less function, the values a
/// call may return (`Choice::Pick` chooses among several).
fn extern_picks(
    program: &Program,
    extern_values: &[(String, Vec<u64>)],
) -> Result<Picks, LaunchError> {
    let mut picks: Picks = Vec::new();
    for (name, values) in extern_values {
        let v = program
            .variables
            .iter()
            .find(|v| &v.name == name && v.space == Space::Const && v.name.ends_with(crate::load::EXTERN_SLOT_SUFFIX))
            .ok_or_else(|| {
                err(format!(
                    "`extern_values` names `{name}`, which is not the result slot of a body-less function the program calls"
                ))
            })?;
        if values.is_empty() {
            return Err(err(format!("`extern_values` gives `{name}` no value")));
        }
        if picks.iter().any(|(a, _)| *a == v.address) {
            return Err(err(format!("`extern_values` names `{name}` twice")));
        }
        picks.push((v.address, values.as_slice().into()));
    }
    Ok(picks)
}

/// Every launch's parameter buffer, one after the other in the parameter space (each at a
/// multiple of [`PARAM_GRID_ALIGN`]); returns each launch's base.
fn parameters(
    program: &Program,
    mem: &mut Flat,
    launches: &[GridLaunch],
    shapes: &[Shape],
    buffers: &[u64],
) -> Result<Vec<u64>, LaunchError> {
    let n = launches.len();
    let mut all_params = Vec::new();
    let mut param_bases = Vec::with_capacity(n);
    for (i, (l, s)) in launches.iter().zip(shapes).enumerate() {
        let f = program.function(s.entry);
        let params = parameter_buffer(f, &l.args, buffers).map_err(located(i, n))?;
        let base = (all_params.len() as u64).next_multiple_of(PARAM_GRID_ALIGN);
        all_params.resize(base as usize, 0);
        all_params.extend_from_slice(&params);
        param_bases.push(base);
    }
    mem.set_params(&all_params);
    Ok(param_bases)
}

/// The cache geometry of `--memory cached`: lines of 8 to 64 bytes (a power of two), at least
/// one line per cache.
fn check_cache(config: &MachineConfig) -> Result<(), LaunchError> {
    if config.memory == super::MemoryKind::Cached {
        let lb = config.cache.line_bytes;
        if !(8..=64).contains(&lb) || !lb.is_power_of_two() {
            return Err(err(format!(
                "cache line size {lb} is not a power of two between 8 and 64 bytes"
            )));
        }
        if config.cache.l1_lines == 0 || config.cache.l2_lines == 0 {
            return Err(err("the L1 and L2 caches need at least one line each"));
        }
    }
    Ok(())
}

/// The values a call of each body-less function may return: `(result slot address, values)`.
type Picks = Vec<(u64, Arc<[u64]>)>;

/// What every grid of a program shares: where kernel frames start in local memory, the
/// buffers' addresses and the body-less functions' values.
struct GridContext {
    kernel_frame_base: u32,
    buffers: Vec<u64>,
    picks: Picks,
}

/// The grids of the launches, their blocks numbered one after the other; one grid is the
/// launch itself (active), several wait for `schedule_Grids` (thesis 5.7).
fn grids(
    program: &Program,
    config: &MachineConfig,
    launches: &[GridLaunch],
    shapes: &[Shape],
    param_bases: &[u64],
    context: GridContext,
) -> Result<Vec<Grid>, LaunchError> {
    let n = launches.len();
    let GridContext {
        kernel_frame_base,
        buffers,
        picks,
    } = context;
    let mut grids = Vec::with_capacity(n);
    let mut base = 0u32;
    for (i, ((l, s), &param_base)) in launches.iter().zip(shapes).zip(param_bases).enumerate() {
        let f = program.function(s.entry);
        if kernel_frame_base as u64 + f.frame_size as u64 > config.local_bytes_per_thread as u64 {
            return Err(located(i, n)(err(format!(
                "the kernel's frame ({} bytes) does not fit in {} bytes of local memory per thread",
                f.frame_size, config.local_bytes_per_thread
            ))));
        }
        let info = LaunchInfo {
            entry: s.entry,
            entry_start: f.start,
            shape: s.shape,
            shared_bytes: s.shared_bytes,
            dynamic_shared: l.dynamic_shared_bytes,
            kernel_frame_base,
            buffers: buffers.clone(),
            param_base,
            picks: picks.clone(),
        };
        grids.push(Grid {
            info: Arc::new(info),
            base,
            stream: l.stream,
            next_block: 0,
            completed_blocks: 0,
            phase: if n == 1 {
                GridPhase::Active
            } else {
                GridPhase::Waiting
            },
        });
        base += s.shape.blocks;
    }
    Ok(grids)
}

/// The kernel parameter buffer of one launch (thesis 5.7.3: the arguments written at the
/// parameters' offsets).
fn parameter_buffer(
    f: &crate::program::Function,
    args: &[ArgValue],
    buffers: &[u64],
) -> Result<Vec<u8>, LaunchError> {
    if args.len() != f.params.len() {
        return Err(err(format!(
            "kernel `{}` takes {} parameters, the launch gives {} arguments",
            f.name,
            f.params.len(),
            args.len()
        )));
    }
    let mut params = vec![0u8; f.param_size as usize];
    let mut running = 0u32;
    for (i, (arg, p)) in args.iter().zip(&f.params).enumerate() {
        let offset = match p.loc {
            ParamLoc::Frame { offset, .. } => offset,
            _ => running.next_multiple_of(p.align.max(1)),
        };
        running = offset + p.size;
        if offset % p.align.max(1) != 0 {
            return Err(err(format!(
                "argument {i}: parameter `{}` is at byte {offset} of the parameter buffer, not a multiple of its alignment {}",
                p.name, p.align
            )));
        }
        let buffer_address = |b: usize| {
            buffers.get(b).copied().ok_or_else(|| {
                err(format!(
                    "argument {i} (`{}`) names buffer {b}, the launch has {}",
                    p.name,
                    buffers.len()
                ))
            })
        };
        let bytes: Vec<u8> = match arg {
            ArgValue::Buffer(b) => {
                let a = buffer_address(*b)?;
                if p.size != 8 {
                    return Err(err(format!(
                        "argument {i}: parameter `{}` is {} bytes, a buffer address is 8",
                        p.name, p.size
                    )));
                }
                a.to_le_bytes().to_vec()
            }
            ArgValue::Null => 0u64.to_le_bytes().to_vec(),
            ArgValue::Scalar { ty, bits } => {
                bits.to_le_bytes()[..(type_size(*ty) as usize).min(8)].to_vec()
            }
            ArgValue::Bytes { bytes, pointers } => {
                if bytes.len() != p.size as usize {
                    return Err(err(format!(
                        "argument {i}: parameter `{}` is {} bytes, the argument gives {} bytes",
                        p.name,
                        p.size,
                        bytes.len()
                    )));
                }
                let mut bytes = bytes.clone();
                for &(at, b) in pointers {
                    let a = buffer_address(b)?;
                    let slot = bytes
                        .get_mut(at as usize..at as usize + 8)
                        .ok_or_else(|| {
                            err(format!(
                                "argument {i}: a buffer address at byte {at} does not fit in parameter `{}` ({} bytes)",
                                p.name, p.size
                            ))
                        })?;
                    slot.copy_from_slice(&a.to_le_bytes());
                }
                bytes
            }
        };
        let size = bytes.len() as u32;
        if size != p.size {
            return Err(err(format!(
                "argument {i}: parameter `{}` is {} bytes ({:?}), the argument {size}",
                p.name, p.size, p.ty
            )));
        }
        let end = offset as usize + size as usize;
        if params.len() < end {
            params.resize(end, 0);
        }
        params[offset as usize..end].copy_from_slice(&bytes);
    }
    Ok(params)
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "(none)".to_string()
    } else {
        names.join(", ")
    }
}

/// A variable's initial bytes with `generic(x)` initializers turned into generic addresses: the
/// loader stores x's address in its own space, the generic window of that space is the machine's
/// (PTX ISA 5.4.4).
fn relocated_init(v: &crate::program::Variable) -> std::borrow::Cow<'_, [u8]> {
    if v.generic_relocations.is_empty() {
        return std::borrow::Cow::Borrowed(&v.init);
    }
    let mut bytes = v.init.clone();
    for &(offset, space) in &v.generic_relocations {
        let Some(slot) = usize::try_from(offset)
            .ok()
            .and_then(|o| bytes.get_mut(o..o.checked_add(8)?))
        else {
            continue;
        };
        let Some(ms) = super::exec::mem_space_of(space) else {
            continue;
        };
        let mut word = [0u8; 8];
        word.copy_from_slice(slot);
        let generic = memory_model::to_generic(ms, u64::from_le_bytes(word));
        slot.copy_from_slice(&generic.to_le_bytes());
    }
    std::borrow::Cow::Owned(bytes)
}
