//! `cudasem cfg FILE.ptx [--kernel NAME] [--dot]`: basic blocks with PTX line ranges and labels,
//! edges, and each divergent branch's reconvergence point (the immediate post-dominator the
//! loader computed); `--dot` prints Graphviz with reconvergence as dashed edges.

use crate::{Outcome, render};
use semantics::program::{Function, Op, Pc, Program};
use std::fmt::Write;

#[derive(clap::Args)]
pub struct Args {
    /// The PTX file, or a CUDA file (.cu, compiled with clang: docs/cuda.md).
    pub file: std::path::PathBuf,
    /// Only this kernel or function (default: all).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Print Graphviz instead of text.
    #[arg(long)]
    pub dot: bool,
}

pub fn run(args: Args) -> Outcome {
    let Some(loaded) = super::parse::load_path(&args.file) else {
        return Outcome::BadInput;
    };
    render::diagnostics(&loaded.path, &loaded.source, &loaded.diagnostics);
    let Some(p) = &loaded.program else {
        return Outcome::BadInput;
    };
    let functions: Vec<&Function> = p
        .functions
        .iter()
        .filter(|f| args.kernel.as_ref().is_none_or(|k| &f.name == k))
        .collect();
    if functions.is_empty() {
        let names: Vec<&str> = p.functions.iter().map(|f| f.name.as_str()).collect();
        eprintln!(
            "error: no kernel or function named `{}` in `{}` (it has: {})",
            args.kernel.unwrap_or_default(),
            loaded.path,
            names.join(", ")
        );
        return Outcome::BadInput;
    }
    let mut out = String::new();
    for f in functions {
        if args.dot {
            dot(p, f, &mut out)
        } else {
            text(p, f, &mut out)
        }
    }
    crate::emit::report(&out, Outcome::Clean)
}

fn line(p: &Program, pc: Pc) -> u32 {
    p.source.get(pc as usize).map(|s| s.ptx_line).unwrap_or(0)
}

fn labels_at(f: &Function, pc: Pc) -> Vec<&str> {
    f.labels
        .iter()
        .filter(|(_, l)| *l == pc)
        .map(|(n, _)| n.as_str())
        .collect()
}

fn describe(p: &Program, f: &Function, pc: Pc) -> String {
    let labels = labels_at(f, pc);
    let name = if labels.is_empty() {
        String::new()
    } else {
        format!(" ({})", labels.join(", "))
    };
    format!("pc {pc}{name}, line {}", line(p, pc))
}

/// Divergent branches of `f`: (branch pc, reconvergence point).
fn divergent(p: &Program, f: &Function) -> Vec<(Pc, Option<Pc>)> {
    (f.start..f.end)
        .filter(|&pc| {
            let i = &p.instructions[pc as usize];
            match &i.op {
                Op::Bra { .. } => i.guard.is_some(),
                Op::BraIndirect { targets, .. } => targets.len() > 1 || i.guard.is_some(),
                Op::Call {
                    target: semantics::program::CallTarget::Indirect { candidates, .. },
                    ..
                } => candidates.len() > 1,
                _ => false,
            }
        })
        .map(|pc| (pc, p.reconvergence.get(pc as usize).copied().flatten()))
        .collect()
}

fn text(p: &Program, f: &Function, out: &mut String) {
    let kind = if f.kind == semantics::program::FunctionKind::Entry {
        "kernel"
    } else {
        "function"
    };
    let _ = writeln!(
        out,
        "{kind} {} (pc {}..{}){}",
        f.name,
        f.start,
        f.end,
        if f.explicit_reconvergence {
            ", explicit reconvergence (ssy/sync/brk)"
        } else {
            ""
        }
    );
    for (b, block) in f.cfg.blocks.iter().enumerate() {
        let labels = labels_at(f, block.start);
        let labels = if labels.is_empty() {
            String::new()
        } else {
            format!(" [{}]", labels.join(", "))
        };
        let succ: Vec<String> = block.successors.iter().map(|s| format!("B{s}")).collect();
        let exit = if block.exits {
            if succ.is_empty() {
                "exit".to_string()
            } else {
                ", exit".to_string()
            }
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  B{b}: pc {}..{}, lines {}-{}{labels} -> {}{exit}",
            block.start,
            block.end,
            line(p, block.start),
            line(p, block.end - 1),
            succ.join(", ")
        );
    }
    let div = divergent(p, f);
    if !div.is_empty() {
        let _ = writeln!(out, "  reconvergence:");
        for (pc, r) in div {
            let at = match r {
                Some(r) => describe(p, f, r),
                None => "function exit".to_string(),
            };
            let _ = writeln!(out, "    branch at {} -> {at}", describe(p, f, pc));
        }
    }
}

fn dot(p: &Program, f: &Function, out: &mut String) {
    let _ = writeln!(out, "digraph \"{}\" {{", f.name.replace('"', "\\\""));
    let _ = writeln!(out, "  node [shape=box, fontname=\"monospace\"];");
    for (b, block) in f.cfg.blocks.iter().enumerate() {
        let labels = labels_at(f, block.start);
        let title = if labels.is_empty() {
            format!("B{b}")
        } else {
            format!("B{b} {}", labels.join(", "))
        };
        let _ = writeln!(
            out,
            "  B{b} [label=\"{}\\lpc {}..{}\\llines {}-{}\\l\"];",
            title.replace('"', "\\\""),
            block.start,
            block.end,
            line(p, block.start),
            line(p, block.end - 1)
        );
        if block.exits {
            let _ = writeln!(out, "  B{b} -> exit;");
        }
        for (k, s) in block.successors.iter().enumerate() {
            let label = if block.successors.len() > 1 {
                if k == 0 {
                    " [label=\"taken\"]"
                } else {
                    " [label=\"not taken\"]"
                }
            } else {
                ""
            };
            let _ = writeln!(out, "  B{b} -> B{s}{label};");
        }
    }
    let _ = writeln!(out, "  exit [shape=doublecircle, label=\"exit\"];");
    for (pc, r) in divergent(p, f) {
        let from = f
            .cfg
            .blocks
            .iter()
            .position(|b| b.start <= pc && pc < b.end);
        let to = r.and_then(|r| f.cfg.blocks.iter().position(|b| b.start == r));
        if let Some(from) = from {
            let to = to
                .map(|t| format!("B{t}"))
                .unwrap_or_else(|| "exit".to_string());
            let _ = writeln!(
                out,
                "  B{from} -> {to} [style=dashed, color=blue, label=\"reconverge\"];"
            );
        }
    }
    let _ = writeln!(out, "}}");
}
