//! `cudasem parse FILE.ptx [--format text|json]`: parse and load (validate) a module and summarise
//! it, or print its diagnostics. Exit 2 on any error.

use crate::flags::OutputFormat;
use crate::{Exit, render};
use semantics::program::{FunctionKind, Program, Space};
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct ParseArgs {
    /// The PTX file, or a CUDA file (.cu, compiled with clang: docs/cuda.md).
    pub file: PathBuf,
    /// Output format of the summary.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

/// A parsed and loaded file: the source, the program if it loaded, and every diagnostic.
pub struct Loaded {
    pub path: String,
    pub source: String,
    pub program: Option<Program>,
    pub diagnostics: Vec<ptx_parser::Diagnostic>,
}

impl Loaded {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == ptx_parser::Severity::Error)
    }
}

/// Reads, parses and loads `file`; `None` (after printing why) when it cannot be read.
pub fn load_path(file: &Path) -> Option<Loaded> {
    let path = crate::kernel_source::ptx_name(file);
    let source = match crate::kernel_source::read_kernel(file) {
        Ok(s) => s,
        Err(error) => {
            // `parse` quotes the file's name, as its diagnostics do.
            let message = match error {
                crate::error::Error::Io { source, .. } => {
                    format!("error: cannot read `{path}`: {source}")
                }
                other => other.rendered(),
            };
            eprint!("{message}");
            if !message.ends_with('\n') {
                eprintln!();
            }
            return None;
        }
    };
    let parsed = ptx_parser::parse(&source);
    let mut diagnostics = parsed.diagnostics;
    let mut program = None;
    // Loading a module with syntax errors would report their consequences again; stop at parsing.
    if !diagnostics
        .iter()
        .any(|d| d.severity == ptx_parser::Severity::Error)
    {
        match semantics::load(&parsed.module, &source) {
            Ok((p, warnings)) => {
                diagnostics.extend(warnings);
                program = Some(p);
            }
            Err(errors) => diagnostics.extend(errors),
        }
    }
    Some(Loaded {
        path,
        source,
        program,
        diagnostics,
    })
}

pub fn run(args: ParseArgs) -> Exit {
    let Some(loaded) = load_path(&args.file) else {
        return Exit::BadInput;
    };
    let text = match args.format {
        OutputFormat::Text => {
            render::diagnostics(&loaded.path, &loaded.source, &loaded.diagnostics);
            loaded.program.as_ref().map(summary).unwrap_or_default()
        }
        OutputFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&json_summary(&loaded)).unwrap_or_default()
        ),
    };
    if let Err(error) = crate::emit::stdout(&text) {
        eprint!("{}", error.rendered());
        return Exit::BadInput;
    }
    if loaded.has_errors() {
        Exit::BadInput
    } else {
        Exit::Clean
    }
}

fn space(s: Space) -> &'static str {
    match s {
        Space::Generic => "generic",
        Space::Global => "global",
        Space::Shared => "shared",
        Space::Local => "local",
        Space::Const => "const",
        Space::Param => "param",
    }
}

fn summary(p: &Program) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for f in &p.functions {
        let kind = if f.kind == FunctionKind::Entry {
            "entry"
        } else {
            "func"
        };
        let params: Vec<String> = f
            .params
            .iter()
            .map(|q| {
                format!(
                    "{}{} {}",
                    q.ty.directive(),
                    if q.size > 0 && q.size != ptx_size(q.ty) {
                        format!("[{}]", q.size)
                    } else {
                        String::new()
                    },
                    q.name
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "{kind} {}({}): {} instructions, {} registers, frame {} bytes",
            f.name,
            params.join(", "),
            f.end - f.start,
            f.registers.len(),
            f.frame_size
        );
    }
    for v in &p.variables {
        let _ = writeln!(
            s,
            "variable .{} {} at {:#x}, {} bytes{}",
            space(v.space),
            v.name,
            v.address,
            v.size,
            if v.dynamic { " (dynamic)" } else { "" }
        );
    }
    let _ = writeln!(s, "{} instructions", p.instructions.len());
    s
}

fn ptx_size(ty: ptx_parser::ScalarType) -> u32 {
    use ptx_parser::ScalarType::*;
    match ty {
        S8 | U8 | B8 | Pred => 1,
        S16 | U16 | B16 | F16 | Bf16 => 2,
        S64 | U64 | B64 | F64 => 8,
        B128 => 16,
        _ => 4,
    }
}

fn json_summary(l: &Loaded) -> serde_json::Value {
    let diagnostics: Vec<_> = l
        .diagnostics
        .iter()
        .map(|d| {
            let (line, column) = render::line_col(&l.source, d.span.start);
            json!({
                "severity": if d.severity == ptx_parser::Severity::Error { "error" } else { "warning" },
                "message": d.message, "line": line, "column": column, "help": d.help,
            })
        })
        .collect();
    let Some(p) = &l.program else {
        return json!({ "entries": [], "functions": [], "variables": [], "instructions": 0, "diagnostics": diagnostics });
    };
    let func = |f: &semantics::program::Function| {
        json!({
            "name": f.name,
            "params": f.params.iter().map(|q| json!({"name": q.name, "type": &q.ty.directive()[1..], "size": q.size})).collect::<Vec<_>>(),
            "instructions": f.end - f.start,
            "registers": f.registers.len(),
            "frame_size": f.frame_size,
        })
    };
    json!({
        "entries": p.functions.iter().filter(|f| f.kind == FunctionKind::Entry).map(func).collect::<Vec<_>>(),
        "functions": p.functions.iter().filter(|f| f.kind == FunctionKind::Func).map(func).collect::<Vec<_>>(),
        "variables": p.variables.iter().map(|v| json!({"name": v.name, "space": space(v.space), "address": v.address, "size": v.size, "dynamic": v.dynamic})).collect::<Vec<_>>(),
        "instructions": p.instructions.len(),
        "diagnostics": diagnostics,
    })
}
