//! What a replay starts from: a trace file (its launch, configuration and PTX file) or a
//! compact string (with the PTX file and run options), as a ready machine and the schedule.

use super::ReplayArgs;
use super::trace::read_trace_file;
use crate::commands::run::load_program;
use crate::error::Error;
use crate::launch::{Elem, Resolved};
use crate::options::Setup;
use scheduler::replay::resolve_indices;
use semantics::machine::{Machine, ProgramLaunch};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use traces::format::{self, Compact, CompactV1, Format};
use traces::{Choice, Event};

/// What a replay starts from: the launch as a ready [`Setup`] (from the trace file, or from
/// the PTX file and run options of a compact string) and the recorded schedule.
pub(crate) struct Loaded {
    pub setup: Setup,
    pub choices: Vec<Choice>,
    pub events: Option<Vec<Vec<Event>>>,
    pub cycle_start: Option<usize>,
}

/// Loads what `args.trace` names: a compact string (with the PTX file and run options), else
/// a trace file.
pub(crate) fn load_trace(args: &ReplayArgs) -> Result<Loaded, Error> {
    let is_file = Path::new(&args.trace).is_file();
    if !is_file && format::detect(&args.trace) == Format::Compact {
        return load_compact(args);
    }
    load_file(args)
}

/// A compact string: the PTX file and run options give the launch, the string the schedule.
fn load_compact(args: &ReplayArgs) -> Result<Loaded, Error> {
    let compact =
        format::parse_compact(&args.trace).map_err(|e| Error::Input(format!("error: {e}\n")))?;
    let file = args.file.as_ref().ok_or_else(|| {
        Error::Input("error: a compact trace needs the PTX file and the launch: cudasem replay TRACE FILE.ptx --launch L.ron\n".to_string())
    })?;
    // A compact string re-resolves the launch file: programs of several launches replay
    // (and `--check`) as single launches do.
    let setup = args.options.setup(file)?;
    let (choices, cycle_start) = match compact {
        // By identity: the strict replay reports the first choice that is not enabled.
        Compact::V2(c) => {
            check_hash(&setup.ptx_path, setup.program.hash, c.program_hash)?;
            (c.choices, c.cycle_start)
        }
        // Enabled-set indices, resolved the way version 1 printed them.
        Compact::V1(c) => {
            check_hash(&setup.ptx_path, setup.program.hash, c.program_hash)?;
            let choices = resolve_indices(&setup.machine, &c.indices).map_err(|d| {
                Error::Input(format!("replay diverged: {d}\n  = the trace does not belong to this program, launch and configuration\n"))
            })?;
            if CompactV1::checksum_of(&choices) != c.checksum {
                return Err(Error::Input(format!(
                    "replay diverged: the {} indices of this version 1 string resolve to other choices than were recorded (checksum {:08x}, recorded {:08x})\n  = version 1 strings name positions in the enabled set, whose order this cudasem may list differently: rerun the command that printed it to get a version 2 string\n",
                    choices.len(),
                    CompactV1::checksum_of(&choices),
                    c.checksum
                )));
            }
            (choices, c.cycle_start)
        }
    };
    Ok(Loaded {
        setup,
        choices,
        events: None,
        cycle_start,
    })
}

/// A trace file: its launch and configuration, its PTX file (or FILE.ptx), its schedule.
fn load_file(args: &ReplayArgs) -> Result<Loaded, Error> {
    let trace = read_trace_file(&args.trace)?;
    let ptx: PathBuf = match (&args.file, &trace.program_path) {
        (Some(f), _) => f.clone(),
        (None, Some(p)) => PathBuf::from(p),
        (None, None) => {
            return Err(Error::Input(
                "error: the trace does not name its PTX file: cudasem replay TRACE FILE.ptx\n"
                    .to_string(),
            ));
        }
    };
    let ptx_path = ptx.display().to_string();
    let text = crate::kernel_source::read_kernel(&ptx)?;
    let ptx_name = crate::kernel_source::ptx_name(&ptx);
    let program = Arc::new(load_program(&ptx_name, &text)?);
    check_hash(&ptx_path, program.hash, trace.program_hash)?;
    let launch = trace
        .launch
        .to_launch(&program)
        .map_err(|e| Error::Input(format!("error: {}: {e}\n", args.trace)))?;
    let config = trace.config.0;
    let kernel = launch
        .kernel
        .clone()
        .unwrap_or_else(|| "kernel".to_string());
    // A program of several launches: its launches share the first's buffers and globals.
    let grids = trace.launch.launches.clone();
    let mut machine = if grids.is_empty() {
        Machine::new(Arc::clone(&program), &launch, &config)
    } else {
        let program_launch = ProgramLaunch {
            buffers: launch.buffers.clone(),
            globals: launch.globals.clone(),
            extern_values: launch.extern_values.clone(),
            launches: grids.clone(),
        };
        Machine::from_program(Arc::clone(&program), &program_launch, &config)
    }
    .map_err(|e| {
        Error::Input(format!(
            "error: the trace's launch does not fit: {}\n",
            e.message
        ))
    })?;
    let elems: Vec<Elem> = launch
        .buffers
        .iter()
        .map(|b| Elem::from_scalar_type(b.elem).unwrap_or(Elem::U8))
        .collect();
    let print = launch
        .buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| {
            trace
                .launch
                .print
                .as_ref()
                .is_none_or(|names| names.contains(&b.name))
        })
        .map(|(i, _)| i)
        .collect();
    // `--expect` flags, bound to the trace's buffers (a trace file carries no expectations).
    let expect = expectations_of(args, &launch, &elems)?;
    let registers = crate::registers::observe(
        &args.options.launch.quick.print_registers,
        &program,
        &launch,
        &kernel,
        !grids.is_empty(),
        &mut machine,
    )?;
    Ok(Loaded {
        setup: Setup {
            ptx_path,
            ptx_name,
            text,
            program,
            resolved: Resolved {
                config: launch,
                kernel,
                elems,
                print,
                expect,
            },
            launch_path: trace.launch.launch_file.clone(),
            config,
            machine,
            grids,
            registers,
        },
        choices: trace.choices,
        events: trace.events,
        cycle_start: trace.cycle_start,
    })
}

/// The program must be the one the trace was recorded from.
fn check_hash(ptx_path: &str, have: u64, want: u64) -> Result<(), Error> {
    if have == want {
        Ok(())
    } else {
        Err(Error::Refused(format!(
            "replay refused: {ptx_path} has program hash {have:016x}, the trace was recorded from {want:016x}\n  = help: the PTX file changed since the trace was recorded, or it is another file\n"
        )))
    }
}

/// The `--expect` flags, bound to the buffers of a trace's launch.
fn expectations_of(
    args: &ReplayArgs,
    launch: &semantics::machine::LaunchConfig,
    elems: &[Elem],
) -> Result<Vec<crate::launch::expect::Bound>, Error> {
    let buffers: Vec<(&str, Elem, u64)> = launch
        .buffers
        .iter()
        .zip(elems)
        .map(|(b, e): (_, &Elem)| (b.name.as_str(), *e, (b.bytes.len() / e.size()) as u64))
        .collect();
    args.options
        .launch
        .quick
        .expect
        .iter()
        .map(|text| {
            crate::launch::expect::Expectation::parse(text)
                .and_then(|e| e.bind(&buffers))
                .map_err(|e| {
                    Error::Input(format!(
                        "error: bad --expect `{text}`: {} (at column {})\n  = help: {}\n",
                        e.message,
                        e.at + 1,
                        e.help
                    ))
                })
        })
        .collect()
}
