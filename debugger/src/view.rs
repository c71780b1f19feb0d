//! Renderings of the debugger: values by their PTX type, lane masks, pcs with their PTX line
//! and label, the token stack with PTX lines, aligned tables, and host-side memory reads.

use memory_model::Who;
use ptx_parser::ScalarType;
use semantics::Program;
use semantics::machine::{Machine, WarpModel, WarpView};
use std::fmt::Write as _;
use traces::{Choice, MemSpace, Token};

/// A named region of memory: a launch buffer or a module variable.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Region {
    pub space: MemSpace,
    pub address: u64,
    pub ty: ScalarType,
    /// Elements.
    pub len: u64,
}

pub(crate) fn model_name(m: WarpModel) -> &'static str {
    match m {
        WarpModel::SimtStack => "simt-stack",
        WarpModel::Its => "its",
        WarpModel::Threads => "threads",
    }
}

/// The warp a choice steps, if it steps one.
pub(crate) fn choice_warp(c: &Choice) -> Option<(u32, u32)> {
    match c {
        Choice::Warp { block, warp }
        | Choice::Target { block, warp, .. }
        | Choice::Lanes { block, warp, .. }
        | Choice::Pick { block, warp, .. } => Some((*block, *warp)),
        _ => None,
    }
}

/// Set bits as ranges: `0-3,7`; `none`.
pub(crate) fn bits_text(mask: u64) -> String {
    let mut parts = Vec::new();
    let mut i = 0u32;
    while i < 64 {
        if mask >> i & 1 == 1 {
            let start = i;
            while i + 1 < 64 && mask >> (i + 1) & 1 == 1 {
                i += 1;
            }
            parts.push(if start == i {
                start.to_string()
            } else {
                format!("{start}-{i}")
            });
        }
        i += 1;
    }
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(",")
    }
}

fn sign_extend(bits: u64, size: u32) -> i64 {
    let shift = 64 - 8 * size.clamp(1, 8);
    ((bits << shift) as i64) >> shift
}

fn truncate(bits: u64, size: u32) -> u64 {
    if size >= 8 {
        bits
    } else {
        bits & ((1u64 << (size * 8)) - 1)
    }
}

/// A value's integer reading for conditions (floats compare by their integer part).
pub(crate) fn integer_value(ty: ScalarType, bits: u64) -> i128 {
    use ScalarType::*;
    let size = semantics::machine::type_size(ty);
    match ty {
        S8 | S16 | S32 | S64 => sign_extend(bits, size) as i128,
        F32 => f32::from_bits(bits as u32) as i128,
        F64 => f64::from_bits(bits) as i128,
        Pred => (bits & 1) as i128,
        _ => truncate(bits, size) as i128,
    }
}

/// A value as its type reads: signed/unsigned decimal, floats that round-trip, `b` types in
/// hex, predicates as true/false.
pub(crate) fn value_text(ty: ScalarType, bits: u64) -> String {
    use ScalarType::*;
    let size = semantics::machine::type_size(ty);
    match ty {
        Pred => if bits & 1 == 1 { "true" } else { "false" }.to_string(),
        S8 | S16 | S32 | S64 => sign_extend(bits, size).to_string(),
        U8 | U16 | U32 | U64 => truncate(bits, size).to_string(),
        F32 => format!("{:?}", f32::from_bits(bits as u32)),
        F64 => format!("{:?}", f64::from_bits(bits)),
        _ => format!("{:#x}", truncate(bits, size)),
    }
}

/// Reads `size` bytes at `address` in `space` (`block`'s shared memory) as a thread would
/// ([`semantics::machine::MemoryReader::read`]: under cached memory, L2's valid bytes over DRAM's); `None` where nothing
/// is mapped.
pub(crate) fn read(
    m: &Machine,
    space: MemSpace,
    address: u64,
    size: u32,
    block: u32,
) -> Option<u64> {
    m.reader()
        .read(Who { block, thread: 0 }, space, address, size)
        .ok()
}

/// Values in rows of 8 with the first index: `  [0] 9 5`.
pub(crate) fn rows(values: &[String], first: u64) -> String {
    let width = values.iter().map(|v| v.chars().count()).max().unwrap_or(1);
    let last = first + values.len().saturating_sub(1) as u64;
    let iw = last.to_string().len();
    let mut s = String::new();
    for (r, chunk) in values.chunks(8).enumerate() {
        let _ = write!(s, "  [{:>iw$}]", first + r as u64 * 8);
        for v in chunk {
            let _ = write!(s, " {v:>width$}");
        }
        s.push('\n');
    }
    s
}

/// `52` for the PTX line of `pc`, `?` beyond the program.
pub(crate) fn line_of(p: &Program, pc: u32) -> String {
    p.source
        .get(pc as usize)
        .map_or_else(|| format!("pc {pc}"), |s| format!("line {}", s.ptx_line))
}

/// The stack table's name of a pc: its PTX line number.
pub(crate) fn line_label(p: &Program, pc: u32) -> String {
    p.source
        .get(pc as usize)
        .map_or_else(|| format!("pc{pc}"), |s| s.ptx_line.to_string())
}

/// `LABEL+k` for the nearest label at or before `pc` in its function.
fn label_of(p: &Program, pc: u32) -> Option<String> {
    let f = p.function(p.function_of(pc)?);
    let (name, at) = f
        .labels
        .iter()
        .filter(|(_, at)| *at <= pc)
        .max_by_key(|(_, at)| *at)
        .map(|(n, at)| (n.as_str(), *at))
        .unwrap_or((f.name.as_str(), f.start));
    Some(if at == pc {
        name.to_owned()
    } else {
        format!("{name}+{}", pc - at)
    })
}

/// `pc 19 (line 52, DIVERGE): mul.lo.u32 %c, %a, %b;`
pub(crate) fn pc_text(p: &Program, source: Option<&str>, pc: u32) -> String {
    let Some(info) = p.source.get(pc as usize) else {
        return format!("pc {pc} (past the end of the program)");
    };
    let mut s = format!("pc {pc} (line {}", info.ptx_line);
    if let Some(l) = label_of(p, pc) {
        let _ = write!(s, ", {l}");
    }
    s.push(')');
    if let Some(text) = source.and_then(|t| t.get(info.span.start as usize..info.span.end as usize))
    {
        let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = write!(s, ": {one_line}");
        if !one_line.ends_with(';') {
            s.push(';');
        }
    }
    s
}

/// `kernel.cu:12` from the `.loc` in force at `pc`.
pub(crate) fn source_text(p: &Program, pc: u32) -> Option<String> {
    let (file, line, col) = p.source.get(pc as usize)?.loc?;
    let name = super::source::file_name(p, file);
    Some(format!("{name}:{line}:{col}"))
}

/// `(sync, 11, 56) :: (diverge, 01, 47)` with token pcs as PTX lines; `ε` when empty.
pub(crate) fn stack_text(p: &Program, stack: &[Token], ws: u32) -> String {
    if stack.is_empty() {
        return "ε".to_string();
    }
    stack
        .iter()
        .map(|t| {
            format!(
                "({}, {}, {})",
                t.kind.name(),
                semantics::machine::render::mask_string(t.mask, ws),
                line_label(p, t.pc)
            )
        })
        .collect::<Vec<_>>()
        .join(" :: ")
}

/// Left-aligned columns, two spaces apart, the first row a header.
pub(crate) fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut s = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            line.push_str(c);
            if i + 1 < N {
                line.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

/// Lanes × registers, at most 8 registers per section so that lines stay readable.
pub(crate) fn lane_table(columns: &[(String, Vec<String>)], lanes: u32, v: &WarpView) -> String {
    let mark = |l: u32| -> String {
        let d = v.disabled.of(l);
        match d {
            traces::Disable::Exit => "x".into(),
            traces::Disable::Return => "r".into(),
            traces::Disable::Break => "b".into(),
            traces::Disable::Enabled if v.active >> l & 1 == 1 => "*".into(),
            traces::Disable::Enabled => " ".into(),
        }
    };
    let mut s = String::new();
    if columns.is_empty() {
        s.push_str("(no registers)\n");
        return s;
    }
    for (k, chunk) in columns.chunks(8).enumerate() {
        if k > 0 {
            s.push('\n');
        }
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut header = vec!["lane".to_string()];
        header.extend(chunk.iter().map(|(n, _)| n.clone()));
        rows.push(header);
        for l in 0..lanes {
            let mut r = vec![format!("{l}{}", mark(l))];
            r.extend(
                chunk
                    .iter()
                    .map(|(_, vals)| vals.get(l as usize).cloned().unwrap_or_default()),
            );
            rows.push(r);
        }
        let n = rows[0].len();
        let mut widths = vec![0usize; n];
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        for r in &rows {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate() {
                if i == 0 {
                    line.push_str(&format!("{c:<w$}", w = widths[0]));
                } else {
                    line.push_str(&format!("  {c:>w$}", w = widths[i]));
                }
            }
            s.push_str(line.trim_end());
            s.push('\n');
        }
    }
    s
}
