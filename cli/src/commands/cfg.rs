//! `cudasem cfg FILE.ptx [--kernel NAME] [--dot]`: basic blocks with PTX line ranges and labels,
//! edges, and each divergent branch's reconvergence point (the immediate post-dominator the
//! loader computed); `--dot` prints one Graphviz graph for the module: a cluster per function
//! (`subgraph cluster_<name>`), each basic block a node listing its instructions, reconvergence
//! as dashed edges and direct calls as dotted edges to the callee's entry.

use crate::{Exit, render};
use semantics::program::{Function, Op, Pc, Program};
use std::fmt::Write;

#[derive(clap::Args)]
pub struct CfgArgs {
    /// The PTX file, or a CUDA file (.cu, compiled with clang: docs/cuda.md).
    pub file: std::path::PathBuf,
    /// Only this kernel or function (default: all).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Print Graphviz instead of text.
    #[arg(long)]
    pub dot: bool,
}

pub fn run(args: CfgArgs) -> Exit {
    let Some(loaded) = super::parse::load_path(&args.file) else {
        return Exit::BadInput;
    };
    render::diagnostics(&loaded.path, &loaded.source, &loaded.diagnostics);
    let Some(p) = &loaded.program else {
        return Exit::BadInput;
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
        return Exit::BadInput;
    }
    let mut out = String::new();
    if args.dot {
        dot(p, &loaded.source, &functions, &mut out);
    } else {
        for f in functions {
            text(p, f, &mut out)
        }
    }
    crate::emit::report(&out, Exit::Clean)
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

/// Text for a double-quoted Graphviz string.
fn dot_escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A function's name as a Graphviz identifier part (mangled names are already).
fn dot_id(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// One graph for the module: a cluster per function in `functions`.
fn dot(p: &Program, source: &str, functions: &[&Function], out: &mut String) {
    let _ = writeln!(out, "digraph module {{");
    let _ = writeln!(out, "  node [shape=box, fontname=\"monospace\"];");
    let _ = writeln!(out, "  compound=true;");
    for f in functions {
        dot_function(p, source, f, out);
    }
    // Direct calls between the functions drawn: from the calling block to the callee's entry.
    for f in functions {
        let caller = dot_id(&f.name);
        for (b, block) in f.cfg.blocks.iter().enumerate() {
            for pc in block.start..block.end {
                let Op::Call {
                    target: semantics::program::CallTarget::Direct(id),
                    ..
                } = &p.instructions[pc as usize].op
                else {
                    continue;
                };
                let Some(callee) = p.functions.get(id.0 as usize) else {
                    continue;
                };
                if functions.iter().any(|g| g.name == callee.name) && !callee.cfg.blocks.is_empty()
                {
                    let _ = writeln!(
                        out,
                        "  {caller}_B{b} -> {}_B0 [style=dotted, label=\"call (pc {pc})\", lhead=cluster_{}];",
                        dot_id(&callee.name),
                        dot_id(&callee.name)
                    );
                }
            }
        }
    }
    let _ = writeln!(out, "}}");
}

fn dot_function(p: &Program, source: &str, f: &Function, out: &mut String) {
    let id = dot_id(&f.name);
    let kind = if f.kind == semantics::program::FunctionKind::Entry {
        "kernel"
    } else {
        "function"
    };
    let _ = writeln!(out, "  subgraph cluster_{id} {{");
    let _ = writeln!(
        out,
        "    label=\"{kind} {}\";",
        dot_escape(&cuda_front::demangle(&f.name))
    );
    for (b, block) in f.cfg.blocks.iter().enumerate() {
        let labels = labels_at(f, block.start);
        let title = if labels.is_empty() {
            format!("B{b}")
        } else {
            format!("B{b} {}", labels.join(", "))
        };
        // Each instruction as written in the PTX (its span, whitespace collapsed), with its line.
        let mut body = String::new();
        for pc in block.start..block.end {
            let text = p
                .source
                .get(pc as usize)
                .and_then(|s| source.get(s.span.start as usize..s.span.end as usize))
                .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_default();
            body.push_str(&format!("{}: {}\\l", line(p, pc), dot_escape(&text)));
        }
        let _ = writeln!(
            out,
            "    {id}_B{b} [label=\"{}\\lpc {}..{}\\l{body}\"];",
            dot_escape(&title),
            block.start,
            block.end,
        );
        if block.exits {
            let _ = writeln!(out, "    {id}_B{b} -> {id}_exit;");
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
            let _ = writeln!(out, "    {id}_B{b} -> {id}_B{s}{label};");
        }
    }
    let _ = writeln!(out, "    {id}_exit [shape=doublecircle, label=\"exit\"];");
    for (pc, r) in divergent(p, f) {
        let from = f
            .cfg
            .blocks
            .iter()
            .position(|b| b.start <= pc && pc < b.end);
        let to = r.and_then(|r| f.cfg.blocks.iter().position(|b| b.start == r));
        if let Some(from) = from {
            let to = to
                .map(|t| format!("{id}_B{t}"))
                .unwrap_or_else(|| format!("{id}_exit"));
            let _ = writeln!(
                out,
                "    {id}_B{from} -> {to} [style=dashed, color=blue, label=\"reconverge\"];"
            );
        }
    }
    let _ = writeln!(out, "  }}");
}
