//! Source lines for breakpoints and `until`: a `FILE:LINE` (or a bare `LINE`) becomes the
//! instruction addresses where a warp *enters* that line, through the `.loc`/`.file`
//! directives the loader keeps per address ([`semantics::program::SourceInfo::loc`]).
//!
//! A line compiles to runs of consecutive instructions, possibly several (a loop's test, code
//! the optimiser moved). A warp enters the line at the first instruction of each run and at
//! any jump target inside one (a loop on one line is entered once per iteration), so that is
//! where a breakpoint stops; stopping on every instruction of the line would make `continue`
//! stop again after every step. Line 0 is the compilers' "no line" (code of no statement) and
//! is never a target.

use crate::DebugError;
use semantics::Program;
use semantics::program::FuncId;
use std::collections::BTreeSet;

/// How a `.file` is shown: its path as the compiler wrote it, without a leading `./`.
pub(crate) fn file_name(p: &Program, file: u32) -> String {
    match p.files.get(&file) {
        Some(path) => path.strip_prefix("./").unwrap_or(path).to_string(),
        None => format!("file {file}"),
    }
}

/// The source `(file, line)` of the instruction at `pc`; `None` without a `.loc` or on line 0.
fn line_at(p: &Program, pc: u32) -> Option<(u32, u32)> {
    let (file, line, _) = p.source.get(pc as usize)?.loc?;
    (line != 0).then_some((file, line))
}

/// Whether any instruction has a source line (the PTX was compiled with `-lineinfo`/`-g`).
pub(crate) fn has_lines(p: &Program) -> bool {
    (0..p.source.len() as u32).any(|pc| line_at(p, pc).is_some())
}

/// Files some instruction's line comes from, in index order.
fn files_with_lines(p: &Program) -> BTreeSet<u32> {
    (0..p.source.len() as u32)
        .filter_map(|pc| line_at(p, pc).map(|(f, _)| f))
        .collect()
}

/// The file the user means by `name`: its path is `name` or ends in `/name`.
pub(crate) fn find_file(p: &Program, name: &str) -> Result<u32, DebugError> {
    let wanted = name.strip_prefix("./").unwrap_or(name);
    let used = files_with_lines(p);
    let found: Vec<u32> = used
        .iter()
        .copied()
        .filter(|f| {
            let path = file_name(p, *f);
            path == wanted || path.ends_with(&format!("/{wanted}"))
        })
        .collect();
    let list = |fs: &[u32]| {
        fs.iter()
            .map(|f| file_name(p, *f))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match found.as_slice() {
        [f] => Ok(*f),
        [] => Err(format!(
            "no source file `{name}` in the program's line table; its files: {}",
            list(&used.into_iter().collect::<Vec<_>>())
        )
        .into()),
        many => Err(format!(
            "`{name}` names several source files ({}): write more of the path",
            list(many)
        )
        .into()),
    }
}

/// The file a bare `LINE` is in: that of the kernel's first line (gdb's default source file),
/// else of the program's first line.
fn default_file(p: &Program, kernel: Option<FuncId>) -> Option<u32> {
    let all = 0..p.source.len() as u32;
    let range = kernel.map_or(all.clone(), |k| {
        let f = p.function(k);
        f.start..f.end
    });
    range
        .chain(all)
        .find_map(|pc| line_at(p, pc).map(|(f, _)| f))
}

/// Addresses that some branch jumps to (not merely falls through to).
fn jump_targets(p: &Program) -> BTreeSet<u32> {
    let mut targets = BTreeSet::new();
    for f in &p.functions {
        let blocks = &f.cfg.blocks;
        for b in blocks {
            for s in &b.successors {
                if let Some(t) = blocks.get(*s)
                    && t.start != b.end
                {
                    targets.insert(t.start);
                }
            }
        }
    }
    targets
}

/// Where warps enter line `line` of `file`, ascending.
fn entries(p: &Program, file: u32, line: u32) -> Vec<u32> {
    let targets = jump_targets(p);
    let starts: BTreeSet<u32> = p.functions.iter().map(|f| f.start).collect();
    (0..p.source.len() as u32)
        .filter(|&pc| line_at(p, pc) == Some((file, line)))
        .filter(|&pc| {
            pc == 0
                || starts.contains(&pc)
                || targets.contains(&pc)
                || line_at(p, pc - 1) != Some((file, line))
        })
        .collect()
}

/// The nearest lines of `file` below and above `line` that have instructions.
fn nearest(p: &Program, file: u32, line: u32) -> (Option<u32>, Option<u32>) {
    let lines: BTreeSet<u32> = (0..p.source.len() as u32)
        .filter_map(|pc| line_at(p, pc))
        .filter(|(f, _)| *f == file)
        .map(|(_, l)| l)
        .collect();
    (
        lines.range(..line).next_back().copied(),
        lines.range(line + 1..).next().copied(),
    )
}

/// The entry addresses of a source line and its name (`vecadd.cu:12`). `file` is what the user
/// wrote (`None`: a bare line, in the kernel's file); `kernel` is the launched entry.
pub(crate) fn resolve(
    p: &Program,
    file: Option<&str>,
    line: u32,
    kernel: Option<FuncId>,
) -> Result<(Vec<u32>, String), DebugError> {
    if !has_lines(p) {
        return Err(format!(
            "this program has no source lines (no `.loc` directives: compile with -lineinfo or \
             -g); `ptx:{line}` names PTX line {line}"
        )
        .into());
    }
    let f = match file {
        Some(name) => find_file(p, name)?,
        None => default_file(p, kernel).ok_or("the program has no source lines")?,
    };
    let name = format!("{}:{line}", file_name(p, f));
    let pcs = entries(p, f, line);
    if !pcs.is_empty() {
        return Ok((pcs, name));
    }
    let near = match nearest(p, f, line) {
        (Some(a), Some(b)) => format!("the nearest lines that have some are {a} and {b}"),
        (Some(a), None) | (None, Some(a)) => {
            format!("the nearest line that has some is {a}")
        }
        (None, None) => "no line of it has any".to_string(),
    };
    let ptx_hint = if file.is_none() {
        format!(" (a bare LINE is a source line in this program; `ptx:{line}` is PTX line {line})")
    } else {
        String::new()
    };
    Err(format!(
        "no instruction comes from {name} (no code there, or the compiler moved or removed it); \
         {near}{ptx_hint}"
    )
    .into())
}
