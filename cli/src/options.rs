//! Run options shared by `fuzz`, `explore` and `replay`: the launch (file and flags), the warp
//! model, the memory system and the device, built from `run`'s own flag groups
//! ([`QuickLaunch`], [`DeviceArgs`], [`WarpModelArg`], [`MemoryArg`]) so every command spells
//! them the same way. [`RunOptions::setup`] turns them and a PTX file into a ready machine;
//! [`RunOptions::argv`] writes them back as flags for the replay commands printed on failures.

use crate::commands::run::{DeviceArgs, MemoryArg, QuickLaunch, WarpModelArg, load_program};
use crate::launch::{Elem, Resolved};
use semantics::machine::{Machine, MachineConfig, MemoryKind, WarpModel};
use semantics::program::Space;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Everything but the PTX file that `run` takes to describe a launch and its machine.
#[derive(clap::Args)]
pub struct RunOptions {
    /// The launch file (RON): kernel, grid, block, buffers, args, globals, print (docs/run.md).
    #[arg(long, value_name = "FILE.ron")]
    pub launch: Option<PathBuf>,
    #[command(flatten)]
    pub quick: Box<QuickLaunch>,
    /// How warps execute divergent code.
    #[arg(long, value_enum, default_value_t = WarpModelArg::SimtStack)]
    pub warp_model: WarpModelArg,
    /// The memory system.
    #[arg(long, value_enum, default_value_t = MemoryArg::Flat)]
    pub memory: MemoryArg,
    #[command(flatten)]
    pub device: Box<DeviceArgs>,
    /// Hardware behaviour: an exited warp counts as arrived at its block's barriers.
    #[arg(long)]
    pub exited_warps_arrive: bool,
    /// Check the SIMT stack's safety invariants (thesis chapter 6) after every step (slower).
    #[arg(long)]
    pub check_invariants: bool,
    /// Run only context N (from 0) of a launch file with `contexts: [...]` (thesis 5.8); without
    /// it, `run`, `fuzz`, `explore` and `check` run every context in turn.
    #[arg(long, value_name = "N")]
    pub context: Option<usize>,
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

    /// Observed data (printed buffers, then variables; the buffers only expectations read are
    /// left out) as names with their decoded values.
    pub fn data_values(&self, data: &[Vec<u8>]) -> Vec<(String, Vec<crate::output::Value>)> {
        let printed = self.resolved.print.len();
        let skipped = self.observed_buffers().len() - printed;
        let names = self
            .resolved
            .print
            .iter()
            .map(|&i| {
                (
                    self.resolved.config.buffers[i].name.clone(),
                    self.resolved.elems[i],
                )
            })
            .chain(
                self.observed_variables()
                    .into_iter()
                    .map(|(n, e)| (cuda_front::demangle::short_name(&n), e)),
            );
        let shown = data[..printed.min(data.len())]
            .iter()
            .chain(data.iter().skip(printed + skipped));
        names
            .zip(shown)
            .map(|((name, elem), bytes)| (name, crate::output::decode(elem, bytes)))
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
    /// Loads `file`, resolves the launch and builds the machine. `Err` is bad input, already
    /// rendered for stderr (empty when PTX diagnostics were printed).
    pub fn setup(&self, file: &Path) -> Result<Setup, String> {
        let ptx_path = file.display().to_string();
        let text = crate::kernel_source::read_kernel(file, |e| {
            format!("error: cannot read {ptx_path}: {e}")
        })?;
        let ptx_name = crate::kernel_source::ptx_name(file);
        let program = load_program(&ptx_name, &text)?;
        let launch =
            crate::commands::run::read_launch(self.launch.as_deref(), &self.quick, &program)?;
        let launch = crate::contexts::select(launch, self.context)?;
        let config = self.machine_config()?;
        let does_not_fit = |e: semantics::machine::LaunchError| {
            format!(
                "error: the launch does not fit the machine: {}\n",
                e.message
            )
        };
        // A program of several launches (thesis 5.7: grids of one context, in streams) runs as
        // one machine of several grids; the buffers and what to print are the program's, which
        // every launch's resolution carries.
        let resolution = crate::commands::run::resolve(&launch, &program)?;
        let program = Arc::new(program);
        let (machine, grids) = match resolution.program {
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
        let launch_path = self.launch.as_deref().map(|p| {
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
        })
    }

    /// The machine configuration the flags describe.
    pub fn machine_config(&self) -> Result<MachineConfig, String> {
        crate::commands::run::machine_config_of(
            &self.device,
            self.warp_model,
            self.memory,
            self.exited_warps_arrive,
            self.check_invariants,
        )
    }

    /// The options as command-line flags (defaults left out), for printed replay commands.
    pub fn argv(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        let mut flag = |name: &str, value: String| {
            v.push(format!("--{name}"));
            v.push(value);
        };
        if let Some(l) = &self.launch {
            flag("launch", l.display().to_string());
        }
        let q = &self.quick;
        if let Some(k) = &q.kernel {
            flag("kernel", k.clone());
        }
        if let Some(g) = &q.grid {
            flag("grid", g.clone());
        }
        if let Some(b) = &q.block {
            flag("block", b.clone());
        }
        if let Some(s) = q.shared {
            flag("shared", s.to_string());
        }
        for b in &q.buffers {
            flag("buffer", b.clone());
        }
        for a in &q.args {
            flag("arg", a.clone());
        }
        for g in &q.globals {
            flag("global", g.clone());
        }
        if let Some(p) = &q.print {
            flag("print", p.join(","));
        }
        for e in &q.expect {
            flag("expect", e.clone());
        }
        if self.warp_model != WarpModelArg::SimtStack {
            flag("warp-model", self.warp_model.name().to_string());
        }
        if self.memory != MemoryArg::Flat {
            flag("memory", self.memory.name().to_string());
        }
        if let Some(c) = self.context {
            flag("context", c.to_string());
        }
        let d = &self.device;
        if let Some(p) = &d.device {
            flag("device", p.display().to_string());
        }
        for (name, value) in [
            ("sms", d.sms),
            ("warp-size", d.warp_size),
            ("max-blocks-per-sm", d.max_blocks_per_sm),
            ("max-threads-per-sm", d.max_threads_per_sm),
            ("max-warps-per-sm", d.max_warps_per_sm),
            ("shared-mem-per-sm", d.shared_mem_per_sm),
            ("max-threads-per-block", d.max_threads_per_block),
            ("line-bytes", d.line_bytes),
            ("l1-lines", d.l1_lines),
            ("l2-lines", d.l2_lines),
        ] {
            if let Some(x) = value {
                flag(name, x.to_string());
            }
        }
        if let Some(s) = d.silent {
            flag("silent", s.name().to_string());
        }
        if self.exited_warps_arrive {
            v.push("--exited-warps-arrive".to_string());
        }
        if self.check_invariants {
            v.push("--check-invariants".to_string());
        }
        v
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
