//! Run options shared by `run`, `check`, `fuzz`, `explore` and `replay`: the launch (file and
//! flags), the model (warp model, memory system) and the machine, the flag groups of
//! [`crate::flags`], so every command spells them the same way. [`RunOptions::setup`] turns
//! them and a PTX file into a ready machine; [`RunOptions::argv`] writes them back as flags
//! for the replay commands printed on failures.

use crate::commands::run::load_program;
use crate::error::Error;
use crate::flags::{LaunchArgs, MachineArgs, ModelArgs};
use crate::launch::{Elem, Resolved};
use semantics::machine::{Machine, MachineConfig, MemoryKind, WarpModel};
use semantics::program::Space;
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;

/// Everything but the PTX file that `run` takes to describe a launch and its machine: the
/// shared flag groups, which `fuzz`, `explore` and `replay` flatten as they are.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunOptions {
    #[command(flatten)]
    #[serde(flatten)]
    pub launch: LaunchArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub machine: MachineArgs,
}

/// A loaded program, its resolved launch and the machine's configuration ([`RunOptions::prepare`]):
/// what `setup` builds a machine from and `debug` a session.
pub struct Prepared {
    /// The kernel file as given.
    pub ptx_path: String,
    /// What reports call the PTX ([`crate::kernel_source::ptx_name`]).
    pub ptx_name: String,
    pub text: String,
    pub program: Arc<semantics::Program>,
    pub resolution: crate::commands::run::Resolution,
    pub config: MachineConfig,
}

/// A launch the machine cannot hold (too many threads, too much shared memory), as bad input.
pub fn does_not_fit(e: semantics::machine::LaunchError) -> Error {
    Error::Input(format!(
        "error: the launch does not fit the machine: {}\n",
        e.message
    ))
}

/// A loaded program, its resolved launch and configuration, and the fresh machine.
pub struct Setup {
    /// The kernel file as given (PTX or `.cu`): what replay commands and traces name.
    pub ptx_path: String,
    /// What reports call the PTX ([`crate::kernel_source::ptx_name`]).
    pub ptx_name: String,
    /// The PTX text (reports quote instructions from it).
    pub text: String,
    pub program: Arc<semantics::Program>,
    pub resolved: Resolved,
    /// The launch file the launch came from (absolute where it can be): traces name it instead
    /// of copying its buffers. `None` for a launch given by flags.
    pub launch_path: Option<String>,
    pub config: MachineConfig,
    pub machine: Machine,
    /// Every launch of a program of several launches, in launch order (traces record them);
    /// empty for the one-kernel form.
    pub grids: Vec<semantics::machine::GridLaunch>,
    /// Registers observed in final states (`--print-register`), after the buffers and variables.
    pub registers: Vec<crate::registers::ObservedRegister>,
}

impl Setup {
    /// What reports call the launch: its kernel, or for a program of several launches its
    /// kernels in launch order (`fill, add_one`).
    pub fn kernel_title(&self) -> String {
        let kernels = crate::output::grid_kernels(&self.machine);
        if kernels.is_empty() {
            self.resolved.kernel.clone()
        } else {
            kernels.join(", ")
        }
    }

    /// Module `.global` variables of at most 8 bytes: observed with the printed buffers, so
    /// that programs whose result is a module variable (a lock) have visible outcomes. The
    /// shipped CUDA header's own state (`__cudasem_grid_arrived`...) is not the program's.
    pub fn observed_variables(&self) -> Vec<(String, Elem)> {
        self.program
            .variables
            .iter()
            .filter(|v| v.space == Space::Global && v.size <= 8)
            .filter(|v| !cuda_front::demangle::short_name(&v.name).starts_with("__cudasem_"))
            .map(|v| {
                (
                    v.name.clone(),
                    Elem::from_scalar_type(v.ty).unwrap_or(Elem::U8),
                )
            })
            .collect()
    }

    /// What fuzzing and exploration record of a final state: the printed buffers, the
    /// buffers expectations read, the observed variables.
    pub fn observe(&self) -> scheduler::outcome::Observe {
        scheduler::outcome::Observe {
            buffers: self.observed_buffers(),
            variables: self
                .observed_variables()
                .into_iter()
                .map(|(n, _)| n)
                .collect(),
            registers: self.registers.iter().map(|r| r.at).collect(),
        }
    }

    /// `simt-stack, flat memory`.
    pub fn setup_text(&self) -> String {
        format!(
            "{}, {} memory",
            warp_model_name(self.config.warp_model),
            match self.config.memory {
                MemoryKind::Flat => "flat",
                MemoryKind::Cached => "cached",
            }
        )
    }

    /// An explored outcome in JSON: its status, observed data, violated expectations and the
    /// replay command of its witness.
    pub fn outcome_json(
        &self,
        o: &scheduler::outcome::Outcome,
        violations: &[String],
        witness: &str,
    ) -> serde_json::Value {
        serde_json::json!({
            "status": o.status.to_string(),
            "data": self.data_values(&o.data),
            "violations": violations,
            "replay": witness,
        })
    }

    /// Observed data (printed buffers, then variables; the buffers only expectations read are
    /// left out) as names with their decoded values.
    pub fn data_values(&self, data: &[Vec<u8>]) -> Vec<(String, Vec<crate::output::Value>)> {
        let printed = self.resolved.print.len();
        let skipped = self.observed_buffers().len() - printed;
        // Each name with its element type and how many of its bytes are the value: all of a
        // buffer's or variable's; a register comes as 8 bytes whatever its type, and its
        // declared type's bytes are the value.
        let names = self
            .resolved
            .print
            .iter()
            .map(|&i| {
                (
                    self.resolved.config.buffers[i].name.clone(),
                    self.resolved.elems[i],
                    usize::MAX,
                )
            })
            .chain(
                self.observed_variables()
                    .into_iter()
                    .map(|(n, e)| (cuda_front::demangle::short_name(&n), e, usize::MAX)),
            )
            .chain(
                self.registers
                    .iter()
                    .map(|r| (r.label.clone(), r.elem, r.elem.size())),
            );
        let shown = data[..printed.min(data.len())]
            .iter()
            .chain(data.iter().skip(printed + skipped));
        names
            .zip(shown)
            .map(|((name, elem, len), bytes)| {
                let bytes = &bytes[..len.min(bytes.len())];
                (name, crate::output::decode(elem, bytes))
            })
            .collect()
    }

    /// Observed data as `name=[v, ...]` items (text).
    pub fn data_text(&self, data: &[Vec<u8>]) -> Vec<(String, Vec<String>)> {
        self.data_values(data)
            .into_iter()
            .map(|(n, v)| (n, v.into_iter().map(crate::output::Value::text).collect()))
            .collect()
    }
}

/// `simt-stack`, `its`, `threads`.
pub fn warp_model_name(m: WarpModel) -> &'static str {
    match m {
        WarpModel::SimtStack => "simt-stack",
        WarpModel::Its => "its",
        WarpModel::Threads => "threads",
    }
}

impl RunOptions {
    /// Loads `file`, resolves the launch (context `--context` of a file of several) and
    /// the machine's configuration, builds no machine. `Err` is bad input, already rendered
    /// for stderr (empty when PTX diagnostics were printed).
    pub fn prepare(&self, file: &Path) -> Result<Prepared, Error> {
        let ptx_path = file.display().to_string();
        let text = crate::kernel_source::read_kernel(file)?;
        let ptx_name = crate::kernel_source::ptx_name(file);
        let program = load_program(&ptx_name, &text)?;
        let launch = crate::commands::run::read_launch(&self.launch, &program)?;
        let launch = crate::contexts::select(launch, self.launch.context)?;
        let config = self.machine_config()?;
        // A program of several launches (thesis 5.7: grids of one context, in streams) runs as
        // one machine of several grids; the buffers and what to print are the program's, which
        // every launch's resolution carries.
        let resolution = crate::commands::run::resolve(&launch, &program)?;
        Ok(Prepared {
            ptx_path,
            ptx_name,
            text,
            program: Arc::new(program),
            resolution,
            config,
        })
    }

    /// Loads `file`, resolves the launch and builds the machine. `Err` is bad input, already
    /// rendered for stderr (empty when PTX diagnostics were printed).
    pub fn setup(&self, file: &Path) -> Result<Setup, Error> {
        let Prepared {
            ptx_path,
            ptx_name,
            text,
            program,
            resolution,
            config,
        } = self.prepare(file)?;
        let (mut machine, grids) = match resolution.program {
            None => (
                Machine::new(Arc::clone(&program), &resolution.first.config, &config)
                    .map_err(does_not_fit)?,
                Vec::new(),
            ),
            Some(grid_launches) => (
                Machine::from_program(Arc::clone(&program), &grid_launches, &config)
                    .map_err(does_not_fit)?,
                grid_launches.launches,
            ),
        };
        let resolved = resolution.first;
        let registers = crate::registers::observe(
            &self.launch.quick.print_registers,
            &program,
            &resolved.config,
            &resolved.kernel,
            !grids.is_empty(),
            &mut machine,
        )?;
        let launch_path = self.launch.file.as_deref().map(|p| {
            std::fs::canonicalize(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string()
        });
        Ok(Setup {
            ptx_path,
            ptx_name,
            text,
            program,
            resolved,
            launch_path,
            config,
            machine,
            grids,
            registers,
        })
    }

    /// The machine configuration the flags describe.
    pub fn machine_config(&self) -> Result<MachineConfig, Error> {
        self.machine.config(self.model)
    }

    /// The options as command-line flags (defaults left out), for printed replay commands:
    /// written from the flags' own declaration ([`crate::flags::argv`]).
    pub fn argv(&self) -> Vec<String> {
        crate::flags::argv(self)
    }
}

/// `cudasem replay TRACE FILE.ptx <options>`, quoted for a shell.
pub fn replay_command(trace: &str, ptx_path: &str, options: &RunOptions) -> String {
    let mut argv = vec![
        "cudasem".to_string(),
        "replay".to_string(),
        trace.to_string(),
        ptx_path.to_string(),
    ];
    argv.extend(options.argv());
    crate::output::shell_command(&argv)
}

/// This process's own command line, as typed (`cudasem` for the binary), with the flags of
/// `drop` removed (`(flag, takes a value)`, in both `--flag V` and `--flag=V` spellings) and
/// `add` appended: the command that reproduces a deterministic run that was too long to keep
/// its choices (every schedule policy of `run` and `check` is a function of its flags).
pub fn own_command(drop: &[(&str, bool)], add: &[String]) -> String {
    let mut argv = vec!["cudasem".to_string()];
    argv.extend(own_args(drop));
    argv.extend(add.iter().cloned());
    crate::output::shell_command(&argv)
}

/// This process's arguments (after the binary's name), with the flags of `drop` removed as
/// [`own_command`] removes them.
pub fn own_args(drop: &[(&str, bool)]) -> Vec<String> {
    let mut argv: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        match drop.iter().find(|(flag, _)| *flag == name) {
            Some((_, takes_value)) => {
                if *takes_value && !a.contains('=') {
                    args.next();
                }
            }
            None => argv.push(a),
        }
    }
    argv
}
