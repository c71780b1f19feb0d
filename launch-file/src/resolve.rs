//! Resolution: a launch checked against the loaded program (kernel, parameters, module
//! variables, body-less functions, the memory budget) and built into the [`LaunchConfig`] the
//! machine runs.

use crate::BufferDesc;
use crate::buffers::{BUFFER_COPIES, PRINTED_BYTES_PER_ELEMENT, build_bytes, size_text};
use crate::layout::lay_out;
use crate::locate::find_field_from;
use crate::{
    Arg, Dim, Elem, ExternCall, Launch, LaunchError, Num, Resolved, ResolvedLaunch, ValueError,
};
use ptx_parser::ScalarType;
use semantics::Program;
use semantics::machine::{ArgValue, BufferSpec, LaunchConfig};
use semantics::program::{Function, FunctionKind, ParamInfo};

impl Launch {
    /// Resolves the launch against `program`: kernel, parameters, globals, bytes (no memory
    /// budget: for tests and tools that trust their launches).
    pub fn resolve(&self, program: &Program) -> Result<Resolved, LaunchError> {
        self.resolve_within(program, u64::MAX)
    }

    /// [`Launch::resolve`], refusing before anything is allocated a launch whose memory
    /// (buffers and their copies, printed text) would exceed `budget` bytes (`--max-memory`).
    pub fn resolve_within(&self, program: &Program, budget: u64) -> Result<Resolved, LaunchError> {
        self.resolve_within_context(program, budget)
            .map_err(|e| self.in_own_context(e))
    }

    fn resolve_within_context(
        &self,
        program: &Program,
        budget: u64,
    ) -> Result<Resolved, LaunchError> {
        self.refuse_contexts("this command runs one kernel launch")?;
        if !self.launches.is_empty() {
            return Err(LaunchError::new(format!(
                "the launch file is a program of {} launches (`launches: [...]`); this command runs one kernel launch",
                self.launches.len()
            ))
            .at(self.launches[0].location.clone())
            .help("`run`, `fuzz` and `explore` take programs of several launches; this command takes one kernel's launch: give top-level `kernel`, `grid`, `block`, `args`"));
        }
        self.resolve_one(program, budget)
    }

    /// Resolves every launch of the program (the one-kernel form is a program of one launch in
    /// stream 0) against `program`, refusing one whose memory would exceed `budget` bytes
    /// (each launch is checked alone). Errors in a launch of several name it and point at it.
    pub fn resolve_program(
        &self,
        program: &Program,
        budget: u64,
    ) -> Result<Vec<ResolvedLaunch>, LaunchError> {
        self.resolve_program_in_context(program, budget)
            .map_err(|e| self.in_own_context(e))
    }

    fn resolve_program_in_context(
        &self,
        program: &Program,
        budget: u64,
    ) -> Result<Vec<ResolvedLaunch>, LaunchError> {
        self.refuse_contexts("this command runs one context's program")?;
        if self.launches.is_empty() {
            return Ok(vec![ResolvedLaunch {
                stream: 0,
                resolved: self.resolve_one(program, budget)?,
            }]);
        }
        let n = self.launches.len();
        self.launches
            .iter()
            .enumerate()
            .map(|(i, l)| {
                // The launch alone, without the file's text: errors about its kernel and
                // arguments get no location of their own and point at the entry instead.
                let one = Launch {
                    kernel: l.kernel.clone(),
                    grid: Some(l.grid),
                    block: Some(l.block),
                    shared: Some(l.shared),
                    args: l.args.clone(),
                    launches: Vec::new(),
                    source: None,
                    ..self.clone()
                };
                let resolved = one.resolve_one(program, budget).map_err(|mut e| {
                    e.message = format!("launch {} of {n}: {}", i + 1, e.message);
                    if e.location.is_none() {
                        e.location = l.location.clone();
                    }
                    e
                })?;
                Ok(ResolvedLaunch {
                    stream: l.stream,
                    resolved,
                })
            })
            .collect()
    }

    pub(crate) fn resolve_one(
        &self,
        program: &Program,
        budget: u64,
    ) -> Result<Resolved, LaunchError> {
        let function = self.kernel_to_launch(program)?;
        let (grid, block) = self.dimensions()?;
        let args = self.arguments(function)?;
        let mut globals = self.module_variables(program)?;
        let extern_values = self.extern_calls_of(program, &mut globals)?;
        self.check_budget(budget)?;
        let buffers = self
            .buffers
            .iter()
            .map(|b| {
                Ok(BufferSpec {
                    name: b.name.clone(),
                    elem: b.elem.scalar_type(),
                    bytes: build_bytes(b)?,
                })
            })
            .collect::<Result<Vec<_>, LaunchError>>()?;
        let print = match &self.print {
            Some(names) => names
                .iter()
                .filter_map(|n| self.buffers.iter().position(|b| &b.name == n))
                .collect(),
            None => (0..self.buffers.len()).collect(),
        };
        Ok(Resolved {
            config: LaunchConfig {
                kernel: Some(function.name.clone()),
                grid: grid.0,
                block: block.0,
                dynamic_shared_bytes: self.shared.unwrap_or(0),
                buffers,
                args,
                globals,
                extern_values,
            },
            kernel: function.name.clone(),
            elems: self.buffers.iter().map(|b| b.elem).collect(),
            print,
            expect: self.expectations()?,
        })
    }

    /// The kernel the launch names, or the module's only one.
    fn kernel_to_launch<'p>(&self, program: &'p Program) -> Result<&'p Function, LaunchError> {
        let entries: Vec<&semantics::program::Function> = program
            .functions
            .iter()
            .filter(|f| f.kind == FunctionKind::Entry)
            .collect();
        let entry_names = || {
            entries
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        Ok(match &self.kernel {
            Some(name) => entries
                .iter()
                .find(|f| &f.name == name)
                .copied()
                .ok_or_else(|| {
                    LaunchError::new(format!("the module has no kernel (.entry) named `{name}`"))
                        .at(self.locate_field("kernel"))
                        .help(format!("its kernels are: {}", entry_names()))
                })?,
            None => match entries.as_slice() {
                [only] => *only,
                [] => {
                    return Err(
                        LaunchError::new("the module has no kernel (.entry) to launch").help(
                            "a kernel is a `__global__` function (a PTX `.entry`); `__device__` \
                         functions (`.func`) are only called from kernels. Mark the function to \
                         launch `__global__` (with `extern \"C\"` its PTX name stays the C name) \
                         and compile again, or give the PTX of the module that has the kernel",
                        ),
                    );
                }
                _ => {
                    return Err(LaunchError::new("the module has several kernels: say which one to launch")
                        .help(format!("add `kernel: \"NAME\"` to the launch file or pass --kernel NAME; its kernels are: {}", entry_names())));
                }
            },
        })
    }

    /// The grid's and the block's dimensions, which a launch must give.
    fn dimensions(&self) -> Result<(Dim, Dim), LaunchError> {
        let grid = self.grid.ok_or_else(|| {
            LaunchError::new("the launch has no grid dimensions")
                .help("add `grid: (x, y, z)` to the launch file or pass --grid X[,Y,Z]")
        })?;
        let block = self.block.ok_or_else(|| {
            LaunchError::new("the launch has no block dimensions")
                .help("add `block: (x, y, z)` to the launch file or pass --block X[,Y,Z]")
        })?;
        Ok((grid, block))
    }

    /// The arguments against the kernel's parameters: as many as it takes, each of its size
    /// and a compatible type.
    fn arguments(&self, function: &Function) -> Result<Vec<ArgValue>, LaunchError> {
        let params = &function.params;
        if params.len() != self.args.len() {
            let list: Vec<String> = params
                .iter()
                .map(|p| format!("{} (.{})", p.name, scalar_name(p.ty)))
                .collect();
            return Err(LaunchError::new(format!(
                "kernel `{}` takes {} parameter{}, the launch gives {} argument{}",
                function.name,
                params.len(),
                if params.len() == 1 { "" } else { "s" },
                self.args.len(),
                if self.args.len() == 1 { "" } else { "s" },
            ))
            .at(self.locate_field("args"))
            .help(if list.is_empty() {
                "it takes no parameters: write `args: []`".to_string()
            } else {
                format!("its parameters are: {}", list.join(", "))
            }));
        }
        self.args
            .iter()
            .zip(params)
            .enumerate()
            .map(|(i, (arg, param))| self.argument(i, arg, param))
            .collect()
    }

    /// Argument `i` (0-based) against its parameter.
    fn argument(&self, i: usize, arg: &Arg, param: &ParamInfo) -> Result<ArgValue, LaunchError> {
        Ok(match arg {
            Arg::Buffer(_) | Arg::Null if param.size != 8 => {
                let what = match arg {
                    Arg::Buffer(name) => format!("buffer `{name}`"),
                    _ => "Null".to_string(),
                };
                return Err(LaunchError::new(format!(
                    "argument {} is {what} (a 64-bit address) but parameter `{}` is .{} ({} bytes)",
                    i + 1,
                    param.name,
                    scalar_name(param.ty),
                    param.size
                ))
                .at(self.locate_field("args"))
                .help(if is_byte_array(param) {
                    BY_VALUE_HELP
                } else {
                    "pass a Scalar(type: ..., value: ...) for this parameter"
                }));
            }
            Arg::Buffer(name) => ArgValue::Buffer(self.buffer_index(name)?),
            Arg::Null => ArgValue::Null,
            Arg::Bytes(_) | Arg::Struct(_) => self.by_value_argument(i, arg, param)?,
            Arg::Scalar { elem, value } => self.scalar_argument(i, elem, value, param)?,
        })
    }

    /// The index of the buffer an argument names.
    fn buffer_index(&self, name: &str) -> Result<usize, LaunchError> {
        self.buffers
            .iter()
            .position(|b| b.name == name)
            .ok_or_else(|| {
                LaunchError::new(format!("argument refers to unknown buffer `{name}`"))
                    .help(self.known_buffers())
            })
    }

    /// Argument `i`, a struct or bytes passed by value: its layout's size and alignment against
    /// the parameter's, and the buffers whose addresses it holds.
    fn by_value_argument(
        &self,
        i: usize,
        arg: &Arg,
        param: &ParamInfo,
    ) -> Result<ArgValue, LaunchError> {
        let laid = lay_out(arg).map_err(|e| {
            LaunchError::new(format!("argument {}: {e}", i + 1)).at(self.locate_field("args"))
        })?;
        let what = if matches!(arg, Arg::Bytes(_)) {
            "Bytes"
        } else {
            "Struct"
        };
        if laid.bytes.len() != param.size as usize {
            return Err(LaunchError::new(format!(
                            "argument {} is {what} of {} bytes but parameter `{}` is {} bytes",
                            i + 1,
                            laid.bytes.len(),
                            param.name,
                            param.size
                        ))
                        .at(self.locate_field("args"))
                        .help(format!(
                            "give exactly {} bytes (a Struct's fields are laid out at multiples of their size and padded to its largest field)",
                            param.size
                        )));
        }
        if laid.align > param.align.max(1) {
            return Err(LaunchError::new(format!(
                "argument {} is a Struct aligned to {} bytes but parameter `{}` is aligned to {}",
                i + 1,
                laid.align,
                param.name,
                param.align
            ))
            .at(self.locate_field("args"))
            .help(
                "check the struct's fields against the kernel's declaration, or pass Bytes([...])",
            ));
        }
        let pointers = laid
            .pointers
            .into_iter()
            .map(|(at, name)| Ok((at, self.buffer_index(&name)?)))
            .collect::<Result<_, LaunchError>>()?;
        Ok(ArgValue::Bytes {
            bytes: laid.bytes,
            pointers,
        })
    }

    /// Argument `i`, a scalar: its size and type against the parameter's, and its bits.
    fn scalar_argument(
        &self,
        i: usize,
        elem: &Elem,
        value: &Num,
        param: &ParamInfo,
    ) -> Result<ArgValue, LaunchError> {
        if elem.size() as u32 != param.size {
            return Err(LaunchError::new(format!(
                "argument {} is {} ({} bytes) but parameter `{}` is .{} ({} bytes)",
                i + 1,
                elem.name(),
                elem.size(),
                param.name,
                scalar_name(param.ty),
                param.size
            ))
            .at(self.locate_field("args"))
            .help(if is_byte_array(param) {
                BY_VALUE_HELP.to_string()
            } else {
                format!("give the scalar a {}-byte type", param.size)
            }));
        }
        if !scalar_fits_parameter(elem.scalar_type(), param.ty) {
            return Err(LaunchError::new(format!(
                            "argument {} is {} but parameter `{}` is .{}: the types are not compatible",
                            i + 1,
                            elem.name(),
                            param.name,
                            scalar_name(param.ty),
                        ))
                        .at(self.locate_field("args"))
                        .help(format!(
                            "give the scalar the parameter's type, `{}` (PTX ISA \"Type Checking Rules\": \
                             signed and unsigned integers of one size are interchangeable, a bit-size \
                             type matches any type of its size, a floating-point type only itself)",
                            scalar_name(param.ty)
                        )));
        }
        let bits = value.encode(*elem).map_err(|e| {
            LaunchError::new(format!("argument {}: {e}", i + 1)).at(self.locate_field("args"))
        })?;
        Ok(ArgValue::Scalar {
            ty: elem.scalar_type(),
            bits,
        })
    }

    /// The values `globals` gives module variables, encoded in each variable's type.
    fn module_variables(&self, program: &Program) -> Result<Vec<(String, u64)>, LaunchError> {
        let mut globals = Vec::with_capacity(self.globals.len());
        for (name, value) in &self.globals {
            let var = program
                .variables
                .iter()
                .find(|v| &v.name == name)
                .ok_or_else(|| {
                    let names: Vec<&str> =
                        program.variables.iter().map(|v| v.name.as_str()).collect();
                    LaunchError::new(format!(
                        "`globals` sets `{name}`, which is not a module variable"
                    ))
                    .at(self.locate_key(
                        &format!("\"{name}\""),
                        self.source
                            .as_ref()
                            .and_then(|(_, t)| find_field_from(t, self.start, "globals")),
                    ))
                    .help(if names.is_empty() {
                        "the module declares no variables".to_string()
                    } else {
                        format!("its variables are: {}", names.join(", "))
                    })
                })?;
            let bits = match Elem::from_scalar_type(var.ty) {
                Some(elem) => value.encode(elem),
                // Predicates and opaque types: take the value as raw bits.
                None => value.encode(Elem::B64),
            }
            .map_err(|e| {
                LaunchError::new(format!("`globals` value for `{name}`: {e}")).at(self.locate_key(
                    &format!("\"{name}\""),
                    self.source
                        .as_ref()
                        .and_then(|(_, t)| find_field_from(t, self.start, "globals")),
                ))
            })?;
            globals.push((name.clone(), bits));
        }
        Ok(globals)
    }

    /// What the body-less functions the program calls return: each result slot gets the launch's
    /// first value in `globals`; several values are returned as the slots' choices.
    fn extern_calls_of(
        &self,
        program: &Program,
        globals: &mut Vec<(String, u64)>,
    ) -> Result<Vec<(String, Vec<u64>)>, LaunchError> {
        let extern_at = || {
            self.source
                .as_ref()
                .and_then(|(_, t)| find_field_from(t, self.start, "extern_calls"))
        };
        let slots: Vec<&semantics::program::Variable> = program
            .variables
            .iter()
            .filter(|v| v.name.ends_with(semantics::load::EXTERN_SLOT_SUFFIX))
            .collect();
        let called = |v: &semantics::program::Variable| {
            v.name
                .strip_suffix(semantics::load::EXTERN_SLOT_SUFFIX)
                .unwrap_or(&v.name)
                .to_string()
        };
        for (name, _) in &self.extern_calls {
            if !slots.iter().any(|v| &called(v) == name) {
                let names: Vec<String> = slots.iter().map(|v| called(v)).collect();
                return Err(LaunchError::new(format!(
                    "`extern_calls` names `{name}`, which the program does not call as a function without a body"
                ))
                .at(self.locate_key(&format!("\"{name}\""), extern_at()))
                .help(if names.is_empty() {
                    "the program calls no body-less function: remove `extern_calls`".to_string()
                } else {
                    format!("the body-less functions it calls are: {}", names.join(", "))
                }));
            }
        }
        let mut extern_values: Vec<(String, Vec<u64>)> = Vec::new();
        for slot in &slots {
            let function = called(slot);
            let Some((_, call)) = self.extern_calls.iter().find(|(n, _)| *n == function) else {
                return Err(LaunchError::new(format!(
                    "the program calls `{function}`, a function declared without a body: PTX does not say what it does or returns"
                ))
                .at(self.locate_field("extern_calls").or_else(|| self.locate_field("kernel")))
                .help(format!(
                    "say it in the launch file: `extern_calls: {{ \"{function}\": Value(0) }}` (every call returns that value, in the function's return type), or `Values([0, 1])` (each call returns one of them, a scheduler choice; docs/run.md)"
                )));
            };
            let values: &[Num] = match call {
                ExternCall::Value(v) => std::slice::from_ref(v),
                ExternCall::Values(vs) => vs,
            };
            if values.is_empty() {
                return Err(LaunchError::new(format!(
                    "`extern_calls` gives `{function}` an empty set of values"
                ))
                .at(self.locate_key(&format!("\"{function}\""), extern_at()))
                .help("give at least one value: `Values([0])`, or `Value(0)`"));
            }
            let elem = Elem::from_scalar_type(slot.ty).unwrap_or(Elem::B64);
            let encoded = values
                .iter()
                .map(|value| value.encode(elem))
                .collect::<Result<Vec<u64>, ValueError>>()
                .map_err(|e| {
                    LaunchError::new(format!("`extern_calls` value for `{function}`: {e}"))
                        .at(self.locate_key(&format!("\"{function}\""), extern_at()))
                })?;
            // The slot holds the first value; several values are a choice of each call.
            let bits = encoded[0];
            if encoded.len() > 1 {
                extern_values.push((slot.name.clone(), encoded));
            }
            globals.retain(|(n, _)| n != &slot.name);
            globals.push((slot.name.clone(), bits));
        }
        Ok(extern_values)
    }

    // Every size is known before anything is allocated: a launch over the budget is
    // refused here rather than by the operating system half-way through building it.
    // A buffer lives in the launch, the initial machine and the running machine; a
    // printed one is also decoded and formatted (about PRINTED_BYTES_PER_ELEMENT each).
    fn check_budget(&self, budget: u64) -> Result<(), LaunchError> {
        let printed = |b: &BufferDesc| {
            self.print
                .as_ref()
                .is_none_or(|names| names.contains(&b.name))
        };
        let bytes: u64 = self
            .buffers
            .iter()
            .map(|b| b.len.saturating_mul(b.elem.size() as u64))
            .fold(0, u64::saturating_add);
        let total = self
            .buffers
            .iter()
            .filter(|b| printed(b))
            .map(|b| b.len.saturating_mul(PRINTED_BYTES_PER_ELEMENT))
            .fold(bytes.saturating_mul(BUFFER_COPIES), u64::saturating_add);
        if total > budget {
            return Err(LaunchError::new(format!(
                "the launch does not fit in memory: its buffers take {} (about {} with the copies a run keeps and the printed text), over the memory budget of {}",
                size_text(bytes),
                size_text(total),
                size_text(budget)
            ))
            .help("make the buffers smaller, or raise the budget with --max-memory (default: half of the machine's memory)"));
        }
        Ok(())
    }
}

/// Whether a kernel parameter is a byte array (`.param .align A .b8 p[N]`: a struct or array
/// passed by value) rather than one scalar.
pub(crate) fn is_byte_array(param: &semantics::program::ParamInfo) -> bool {
    Elem::from_scalar_type(param.ty).is_none_or(|e| e.size() as u32 != param.size)
}

pub(crate) const BY_VALUE_HELP: &str = "the parameter is a struct or array passed by value: pass `Struct([Scalar(type: ..., value: ...), ...])` or `Bytes([...])` with exactly its size in bytes";

pub(crate) fn scalar_name(ty: ScalarType) -> String {
    format!("{ty:?}").to_ascii_lowercase()
}

/// Whether a scalar argument of type `arg` may initialise a parameter of type `param` of the
/// same size (PTX ISA "Type Checking Rules"): signed and unsigned integers of one size are
/// interchangeable, a bit-size type matches any type of its size, and a floating-point type
/// (or a packed half pair) matches only itself.
pub(crate) fn scalar_fits_parameter(arg: ScalarType, param: ScalarType) -> bool {
    use ScalarType::*;
    let is_bits = |t: ScalarType| matches!(t, B8 | B16 | B32 | B64 | B128);
    let is_int = |t: ScalarType| matches!(t, S8 | S16 | S32 | S64 | U8 | U16 | U32 | U64);
    arg == param || is_bits(arg) || is_bits(param) || (is_int(arg) && is_int(param))
}
