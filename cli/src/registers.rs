//! Registers observed in final states (`--print-register BLOCK.THREAD:%REG`): a thread's
//! register whose final value is printed with the buffers and tells outcomes apart, as a litmus
//! test's condition reads its threads' registers. The machine then keeps the registers of the
//! threads that exited ([`FinalRegisters::Observed`]): without that, a completed block's
//! registers are gone, and two runs that differ only in a finished thread's registers end in
//! one state.

use crate::error::Error;
use crate::launch::Elem;
use scheduler::outcome::FinalRegister;
use semantics::Program;
use semantics::machine::{FinalRegisters, LaunchConfig, Machine};
use semantics::program::{FunctionKind, RegId};

/// One observed register: what reports call it, where it is, and how its value prints.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedRegister {
    /// `%r1@1.0`: the register, then block and thread as given.
    pub label: String,
    pub at: FinalRegister,
    /// The register's declared type (predicates print as 0 or 1).
    pub elem: Elem,
}

/// Parses the `--print-register` specifications against the kernel and launch, and makes
/// `machine` keep the final registers when there is any. Bad specifications are bad input that
/// names the flag and what to write.
pub fn observe(
    specs: &[String],
    program: &Program,
    launch: &LaunchConfig,
    kernel: &str,
    several_launches: bool,
    machine: &mut Machine,
) -> Result<Vec<ObservedRegister>, Error> {
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    if several_launches {
        return Err(bad(
            &specs[0],
            "it reads the registers of a one-kernel launch, and this launch file has several",
            "run one launch of the program (`--context N`) or observe its buffers instead",
        ));
    }
    let registers = specs
        .iter()
        .map(|spec| {
            parse(
                spec,
                program,
                launch,
                kernel,
                machine.config().device.warp_size,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    machine.set_final_registers(FinalRegisters::Observed);
    Ok(registers)
}

fn parse(
    spec: &str,
    program: &Program,
    launch: &LaunchConfig,
    kernel: &str,
    warp_size: u32,
) -> Result<ObservedRegister, Error> {
    const FORM: &str =
        "write BLOCK.THREAD:%REG, block and thread as linear indices (x fastest), e.g. `0.3:%r1`";
    let (thread, name) = spec
        .split_once(':')
        .ok_or_else(|| bad(spec, "it has no `:%REG`", FORM))?;
    let (block, tid) = thread
        .split_once('.')
        .ok_or_else(|| bad(spec, "its thread is not BLOCK.THREAD", FORM))?;
    let index = |text: &str, what: &str| {
        text.trim()
            .parse::<u32>()
            .map_err(|_| bad(spec, &format!("its {what} `{text}` is not a number"), FORM))
    };
    let (block, tid) = (index(block, "block")?, index(tid, "thread")?);
    let blocks: u32 = launch.grid.iter().product();
    let threads: u32 = launch.block.iter().product();
    if block >= blocks {
        return Err(bad(
            spec,
            &format!("the grid has {blocks} block(s), numbered from 0"),
            FORM,
        ));
    }
    if tid >= threads {
        return Err(bad(
            spec,
            &format!("a block has {threads} thread(s), numbered from 0"),
            FORM,
        ));
    }
    let name = name.trim();
    let entry = program
        .functions
        .iter()
        .find(|f| f.kind == FunctionKind::Entry && f.name == kernel)
        .ok_or_else(|| {
            bad(
                spec,
                &format!("the kernel `{kernel}` is not an entry of the program"),
                FORM,
            )
        })?;
    let Some(r) = entry.registers.iter().position(|r| r.name == name) else {
        let known: Vec<&str> = entry
            .registers
            .iter()
            .take(8)
            .map(|r| r.name.as_str())
            .collect();
        return Err(bad(
            spec,
            &format!("`{name}` is not a register of `{kernel}`"),
            &format!(
                "name a register the kernel declares ({}{})",
                known.join(", "),
                if entry.registers.len() > known.len() {
                    ", ..."
                } else {
                    ""
                }
            ),
        ));
    };
    let reg = u16::try_from(r).map(RegId).map_err(|_| {
        bad(
            spec,
            "the kernel has more registers than cudasem numbers",
            FORM,
        )
    })?;
    Ok(ObservedRegister {
        label: format!("{name}@{block}.{tid}"),
        at: FinalRegister {
            block,
            warp: tid / warp_size,
            lane: tid % warp_size,
            reg,
        },
        elem: Elem::from_scalar_type(entry.registers[r].ty).unwrap_or(Elem::U8),
    })
}

fn bad(spec: &str, what: &str, help: &str) -> Error {
    Error::Input(format!(
        "error: --print-register {spec}: {what}\n  = help: {help}\n"
    ))
}

/// The final values of `registers` in `machine`, each its declared type's bytes (empty where
/// the machine has none: a thread whose block never ran).
pub fn final_bytes(machine: &Machine, registers: &[ObservedRegister]) -> Vec<Vec<u8>> {
    registers
        .iter()
        .map(|r| {
            let a = r.at;
            machine
                .register(a.block, a.warp, a.lane, a.reg)
                .map_or_else(Vec::new, |v| v.to_le_bytes()[..r.elem.size()].to_vec())
        })
        .collect()
}

/// The registers as printed buffers of one element (`%r1@0.3: b32[1]`), after the buffers.
pub fn printed<'a>(
    registers: &'a [ObservedRegister],
    bytes: &'a [Vec<u8>],
) -> impl Iterator<Item = crate::output::PrintedBuffer<'a>> {
    registers
        .iter()
        .zip(bytes)
        .map(|(r, bytes)| crate::output::PrintedBuffer {
            name: &r.label,
            elem: r.elem,
            bytes,
        })
}
