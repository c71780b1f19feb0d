//! The debugger's command language: one line of text parsed into a [`Command`], and the help
//! text of every command with an example. Parsing never panics: a malformed line is an `Err`
//! with a message that says what was expected.

use crate::SyntaxError;
use ptx_parser::ScalarType;
use traces::MemSpace;

/// Where a breakpoint or `until` stops: before a warp executes the instruction there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A label, optionally qualified by its function (`f:LOOP`): labels are scoped per function.
    Label {
        function: Option<String>,
        name: String,
    },
    /// A bare line number: a source line of the kernel's file when the program has `.loc`
    /// line information, else a PTX line.
    Line(u32),
    /// `ptx:N`: a PTX line: the first instruction on or after it.
    PtxLine(u32),
    /// `FILE:N` (`vecadd.cu:12`): a source line, through the `.loc`/`.file` directives.
    SourceLine { file: String, line: u32 },
    /// An instruction address (`pc 17` or `*17`).
    Pc(u32),
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Label {
                function: Some(func),
                name,
            } => write!(f, "{func}:{name}"),
            Location::Label {
                function: None,
                name,
            } => f.write_str(name),
            Location::Line(n) => write!(f, "{n}"),
            Location::PtxLine(n) => write!(f, "ptx:{n}"),
            Location::SourceLine { file, line } => write!(f, "{file}:{line}"),
            Location::Pc(pc) => write!(f, "pc {pc}"),
        }
    }
}

/// A comparison operator of a breakpoint condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    pub fn holds(self, a: i128, b: i128) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
    pub fn text(self) -> &'static str {
        match self {
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
    }
}

/// One side of a condition, evaluated per lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// A register of the lane (`%r1`, `%p`), by its declared type.
    Reg(String),
    /// An integer literal (decimal, or hex with `0x`).
    Int(i128),
    /// The lane's index in its warp.
    Lane,
    /// The lane's linear thread index in its block (`%tid.x` for 1-D blocks).
    Tid,
}

/// `if LHS CMP RHS`: a breakpoint stops when some active lane satisfies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub lhs: Operand,
    pub cmp: Cmp,
    pub rhs: Operand,
}

impl std::fmt::Display for Operand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Operand::Reg(r) => f.write_str(r),
            Operand::Int(v) => write!(f, "{v}"),
            Operand::Lane => f.write_str("lane"),
            Operand::Tid => f.write_str("tid"),
        }
    }
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.lhs, self.cmp.text(), self.rhs)
    }
}

/// What a watchpoint watches: one element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchTarget {
    /// A launch buffer's or a module variable's element: `watch c[3]`, `watch sdata[0]`.
    Named { name: String, index: u64 },
    /// A `.shared` address (a 4-byte word unless a type is given), in `block` or in every block.
    Shared {
        address: u64,
        ty: Option<ScalarType>,
        block: Option<u32>,
    },
    /// A `.global` address (a 4-byte word unless a type is given).
    Global {
        address: u64,
        ty: Option<ScalarType>,
    },
}

/// What `mem` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemTarget {
    /// `mem c[0..8]`, `mem c[3]`, `mem c`: elements `start..end` of a buffer or variable.
    Named {
        name: String,
        start: Option<u64>,
        end: Option<u64>,
    },
    /// `mem .shared 0x10 4 [s32] [block B]`: `count` elements at a shared address.
    Shared {
        address: u64,
        count: u64,
        ty: Option<ScalarType>,
        block: Option<u32>,
    },
    /// `mem .global 0x10000 4 [u32]`.
    Global {
        address: u64,
        count: u64,
        ty: Option<ScalarType>,
    },
    /// `x/NUF .local ADDR [block B] [warp W] [lane L]`: `count` elements of one thread's local
    /// memory (default: the focused thread).
    Local {
        address: u64,
        count: u64,
        ty: ScalarType,
        at: ThreadSel,
    },
    /// `x/NUF .const ADDR`, `x/NUF .param ADDR`: the module's constant memory, the kernel's
    /// parameter buffer.
    Bank {
        space: MemSpace,
        address: u64,
        count: u64,
        ty: ScalarType,
    },
    /// `x/NUF NAME` or `x/NUF &NAME`: `count` units from the start of a buffer or variable of
    /// any space (a `.shared` one in the focused block, or `block B`).
    From {
        name: String,
        count: u64,
        ty: ScalarType,
        block: Option<u32>,
    },
}

/// What `list` shows: the focused warp's source line (a `.cu` line when the PTX has line
/// tables and the session has the file's text, else the PTX line), or a given line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListAt {
    /// `list`.
    Here,
    /// `list LINE`: a line of the file `list` shows now.
    Line(u32),
    /// `list FILE:LINE`.
    FileLine(String, u32),
    /// `list ptx [LINE]`: the PTX, around the focused instruction or LINE.
    Ptx(Option<u32>),
}

/// `block B warp W lane L`, any part optional (defaults: the focused thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThreadSel {
    pub block: Option<u32>,
    pub warp: Option<u32>,
    pub lane: Option<u32>,
}

/// `trace save FILE` / `trace load FILE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceOp {
    Save(String),
    Load(String),
}

/// One debugger command (see [`HELP`] for the syntax of each).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `help [COMMAND]`.
    Help(Option<String>),
    /// `step [N]`: N choices of the session's policy.
    Step(u64),
    /// `warp B W`: step that warp.
    Warp { block: u32, warp: u32 },
    /// `lane B W L`: step the lane group of that lane (its, threads).
    Lane { block: u32, warp: u32, lane: u32 },
    /// `next`: step the focused warp; over a call.
    Next,
    /// `continue`: until a breakpoint, a watchpoint, the end, or an interrupt.
    Continue,
    /// `finish`: run until the focused warp returns from the function it is in.
    Finish,
    /// `until LOCATION`: continue until a warp is about to execute there.
    Until(Location),
    /// `break LOCATION [if CONDITION]`; `tbreak`: deleted at its first hit.
    Break {
        at: Location,
        condition: Option<Condition>,
        temporary: bool,
    },
    /// `watch TARGET`.
    Watch(WatchTarget),
    /// `delete [ID]`: one or all breakpoints and watchpoints.
    Delete(Option<u32>),
    /// `info breakpoints`.
    InfoBreakpoints,
    /// `print[/FMT] %REG [block B warp W lane L]` (FMT: `x` hex, `d` signed, `u` unsigned,
    /// `t` binary; the register's own type without).
    Print {
        register: String,
        at: ThreadSel,
        format: Option<Radix>,
    },
    /// `display[/FMT] %REG`: print it (at the focus) after every command that steps.
    Display {
        register: String,
        format: Option<Radix>,
    },
    /// `undisplay [N]`: one or all displays.
    Undisplay(Option<u32>),
    /// `info display`.
    InfoDisplay,
    /// `info grids`: the grids of the program, their phases and blocks (thesis 5.7).
    InfoGrids,
    /// `focus B W [L]` (also cuda-gdb's `cuda block B warp W lane L`, any of the three): the
    /// thread the inspection commands look at; what is not named stays.
    Focus(ThreadSel),
    /// cuda-gdb's `cuda [block B] thread T`: thread T of the block (its warp and lane follow
    /// from the warp size).
    FocusThread { block: Option<u32>, thread: u32 },
    /// `list`, `list LINE`, `list FILE:LINE`, `list ptx [LINE]`: source lines around the focused
    /// warp's instruction or a line.
    List(ListAt),
    /// `regs`: the focused warp's lanes × registers.
    Regs,
    /// `mem ...`.
    Mem(MemTarget),
    /// `where`: the focused warp's source line and PTX line.
    Where,
    /// `stack` (the focused warp's SIMT state) or `stack table [N]` (the thesis-style table of
    /// its last N steps).
    Stack { table: Option<Option<u64>> },
    /// `warps`.
    Warps,
    /// `blocks`.
    Blocks,
    /// `barriers`.
    Barriers,
    /// `caches`.
    Caches,
    /// `choices`: the enabled set, numbered.
    Choices,
    /// `choose N`: take enabled choice N.
    Choose(usize),
    /// `back [N]`: N steps back.
    Back(u64),
    /// `back to STEP`.
    BackTo(u64),
    /// `rule`: the derivation of the last step with each rule's text.
    Rule,
    /// `trace save FILE` / `trace load FILE`.
    Trace(TraceOp),
    /// `status`: step count, how the run stands, the policy.
    Status,
    /// `quit`.
    Quit,
}

/// How `print/FMT` and `display/FMT` show a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Radix {
    Hex,
    Signed,
    Unsigned,
    Binary,
    /// The bits as an IEEE float of the value's size (f32 or f64; f16 for 2 bytes).
    Float,
}

impl Radix {
    fn parse(head: &str, f: &str) -> Result<Radix, SyntaxError> {
        match f {
            "x" => Ok(Radix::Hex),
            "d" => Ok(Radix::Signed),
            "u" => Ok(Radix::Unsigned),
            "t" => Ok(Radix::Binary),
            "f" => Ok(Radix::Float),
            _ => Err(format!(
                "`{head}/{f}`: the formats are x (hex), d (signed), u (unsigned), t (binary), f (float)"
            ).into()),
        }
    }

    /// The `size`-byte value `bits` in this radix.
    pub fn text(self, bits: u64, size: u32) -> String {
        let width = (size.clamp(1, 8) * 8) as u64;
        let bits = if width == 64 {
            bits
        } else {
            bits & ((1 << width) - 1)
        };
        match self {
            Radix::Hex => format!("{bits:#x}"),
            Radix::Unsigned => bits.to_string(),
            Radix::Binary => format!("{bits:#b}"),
            Radix::Signed => {
                let shift = 64 - width;
                (((bits << shift) as i64) >> shift).to_string()
            }
            Radix::Float => match width {
                64 => f64::from_bits(bits).to_string(),
                32 => f32::from_bits(bits as u32).to_string(),
                16 => half::f16::from_bits(bits as u16).to_string(),
                _ => format!("{bits:#x} (no float of {} bytes)", width / 8),
            },
        }
    }
}

/// gdb's `x/NUF WHERE` as a [`Command::Mem`]: N (default 1) units of U bytes (b 1, h 2, w 4,
/// g 8; default w) in format F (x hex, d signed, u unsigned, f float; default x). WHERE is a
/// global address, a state space and an address (`.global`, `.shared [block B]`, `.local
/// [block B warp W lane L]`, `.const`, `.param`), or a buffer or variable (`NAME`, `&NAME`).
fn examine(spec: &str, args: &[&str]) -> Result<Command, SyntaxError> {
    let digits = spec.chars().take_while(char::is_ascii_digit).count();
    let count: u64 = if digits == 0 {
        1
    } else {
        num(Some(&spec[..digits]), "a unit count")?
    };
    let (mut size, mut format) = ('w', 'x');
    for c in spec[digits..].chars() {
        match c {
            'b' | 'h' | 'w' | 'g' => size = c,
            'x' | 'd' | 'u' | 'f' => format = c,
            _ => {
                return Err(format!(
                    "`x/{spec}`: write x/NUF with U one of b h w g (1, 2, 4, 8 bytes) and F one of x d u f"
                ).into());
            }
        }
    }
    use ScalarType as T;
    let ty = match (format, size) {
        ('x', 'b') => T::B8,
        ('x', 'h') => T::B16,
        ('x', 'w') => T::B32,
        ('x', 'g') => T::B64,
        ('d', 'b') => T::S8,
        ('d', 'h') => T::S16,
        ('d', 'w') => T::S32,
        ('d', 'g') => T::S64,
        ('u', 'b') => T::U8,
        ('u', 'h') => T::U16,
        ('u', 'w') => T::U32,
        ('u', 'g') => T::U64,
        ('f', 'w') => T::F32,
        ('f', 'g') => T::F64,
        _ => return Err(format!("`x/{spec}`: floats are w (f32) or g (f64)").into()),
    };
    match args {
        [".shared", addr, rest @ ..] => {
            let (sel, extra) = options(rest)?;
            if extra.is_some() || sel.warp.is_some() || sel.lane.is_some() {
                return Err("write `x/NUF .shared ADDR [block B]`".into());
            }
            Ok(Command::Mem(MemTarget::Shared {
                address: num(Some(addr), "a shared address")?,
                count,
                ty: Some(ty),
                block: sel.block,
            }))
        }
        [".local", addr, rest @ ..] => {
            let (at, extra) = options(rest)?;
            if extra.is_some() {
                return Err("write `x/NUF .local ADDR [block B] [warp W] [lane L]`".into());
            }
            Ok(Command::Mem(MemTarget::Local {
                address: num(Some(addr), "a local address")?,
                count,
                ty,
                at,
            }))
        }
        [space @ (".const" | ".param"), addr] => Ok(Command::Mem(MemTarget::Bank {
            space: if *space == ".const" {
                MemSpace::Const
            } else {
                MemSpace::Param
            },
            address: num(Some(addr), "an address")?,
            count,
            ty,
        })),
        [".global", addr] | [addr] if addr.starts_with(|c: char| c.is_ascii_digit()) => {
            Ok(Command::Mem(MemTarget::Global {
                address: num(Some(addr), "a global address")?,
                count,
                ty: Some(ty),
            }))
        }
        [name, rest @ ..] if !name.starts_with('.') => {
            let (sel, extra) = options(rest)?;
            if extra.is_some() || sel.warp.is_some() || sel.lane.is_some() {
                return Err(format!("write `x/{spec} {name} [block B]`").into());
            }
            Ok(Command::Mem(MemTarget::From {
                name: name.trim_start_matches('&').to_string(),
                count,
                ty,
                block: sel.block,
            }))
        }
        _ => Err(
            "write `x/NUF ADDR`, `x/NUF NAME`, or `x/NUF SPACE ADDR` with SPACE one of \
             .global .shared .local .const .param, e.g. `x/4wx 0x10000`"
                .into(),
        ),
    }
}

pub use super::help::{COMMANDS, HELP, help};

fn number(word: &str) -> Option<u64> {
    let w = word.replace('_', "");
    if let Some(hex) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else {
        w.parse().ok()
    }
}

fn num<T: TryFrom<u64>>(word: Option<&str>, what: &str) -> Result<T, SyntaxError> {
    let w = word.ok_or_else(|| format!("expected {what}"))?;
    number(w)
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| SyntaxError(format!("`{w}` is not {what}")))
}

fn scalar_type(word: &str) -> Option<ScalarType> {
    let dotted = if word.starts_with('.') {
        word.to_string()
    } else {
        format!(".{word}")
    };
    ScalarType::from_directive(&dotted)
}

/// Parses `block B`, `warp W`, `lane L` and a type word in any order.
fn options(words: &[&str]) -> Result<(ThreadSel, Option<ScalarType>), SyntaxError> {
    let mut sel = ThreadSel::default();
    let mut ty = None;
    let mut i = 0;
    while i < words.len() {
        match words[i] {
            "block" => sel.block = Some(num(words.get(i + 1).copied(), "a block index")?),
            "warp" => sel.warp = Some(num(words.get(i + 1).copied(), "a warp index")?),
            "lane" => sel.lane = Some(num(words.get(i + 1).copied(), "a lane index")?),
            w => match scalar_type(w) {
                Some(t) if ty.is_none() => {
                    ty = Some(t);
                    i += 1;
                    continue;
                }
                _ => {
                    return Err(format!(
                        "unexpected `{w}`: expected `block B`, `warp W`, `lane L` or a type (u32, s32, f32, ...)"
                    ).into());
                }
            },
        }
        i += 2;
    }
    Ok((sel, ty))
}

fn location(words: &[&str]) -> Result<Location, SyntaxError> {
    let starts_with_digit = |w: &str| w.chars().next().is_some_and(|c| c.is_ascii_digit());
    match words {
        [] => Err(
            "expected a location: LABEL, LINE, FILE:LINE, ptx:LINE or pc N (`help break`)".into(),
        ),
        ["pc", n] => Ok(Location::Pc(num(Some(n), "an instruction address")?)),
        [w] if w.starts_with('*') => {
            Ok(Location::Pc(num(Some(&w[1..]), "an instruction address")?))
        }
        [w] if starts_with_digit(w) => Ok(Location::Line(num(Some(w), "a line number")?)),
        // `FILE:LINE` and `ptx:LINE` end in a number; `FUNCTION:LABEL` cannot (labels do not
        // start with a digit). The file part may itself hold colons (`C:/src/k.cu:3`).
        [w] => Ok(match w.rsplit_once(':') {
            Some(("", _)) | Some((_, "")) => {
                return Err(format!("`{w}`: write FILE:LINE, ptx:LINE or FUNCTION:LABEL").into());
            }
            Some(("ptx", l)) => Location::PtxLine(num(Some(l), "a PTX line number")?),
            Some((f, l)) if starts_with_digit(l) => Location::SourceLine {
                file: f.to_string(),
                line: num(Some(l), "a source line number")?,
            },
            Some((f, l)) => Location::Label {
                function: Some(f.to_string()),
                name: l.to_string(),
            },
            None => Location::Label {
                function: None,
                name: w.to_string(),
            },
        }),
        _ => Err(format!("unexpected `{}` after the location", words[1..].join(" ")).into()),
    }
}

fn operand(word: &str) -> Result<Operand, SyntaxError> {
    if word == "lane" {
        Ok(Operand::Lane)
    } else if word == "tid" {
        Ok(Operand::Tid)
    } else if word.starts_with('%') {
        Ok(Operand::Reg(word.to_string()))
    } else if let Some(rest) = word.strip_prefix('-') {
        number(rest)
            .map(|v| Operand::Int(-(v as i128)))
            .ok_or_else(|| {
                SyntaxError(format!(
                    "`{word}` is not a register, `lane`, `tid` or an integer"
                ))
            })
    } else {
        number(word)
            .map(|v| Operand::Int(v as i128))
            .ok_or_else(|| {
                SyntaxError(format!(
                    "`{word}` is not a register, `lane`, `tid` or an integer"
                ))
            })
    }
}

fn condition(text: &str) -> Result<Condition, SyntaxError> {
    // Operators may be written with or without spaces: `%r1==3`, `%r1 == 3`.
    for (sym, cmp) in [
        ("==", Cmp::Eq),
        ("!=", Cmp::Ne),
        ("<=", Cmp::Le),
        (">=", Cmp::Ge),
        ("<", Cmp::Lt),
        (">", Cmp::Gt),
    ] {
        if let Some((l, r)) = text.split_once(sym) {
            return Ok(Condition {
                lhs: operand(l.trim())?,
                cmp,
                rhs: operand(r.trim())?,
            });
        }
    }
    Err(format!(
        "`{text}` is not a condition: write OPERAND CMP OPERAND, e.g. `%r1 == 3` or `lane < 2`"
    )
    .into())
}

/// `NAME`, `NAME[I]`, `NAME[I..J]`, `NAME[I..=J]`.
fn indexed(word: &str) -> Result<(String, Option<u64>, Option<u64>), SyntaxError> {
    let Some((name, rest)) = word.split_once('[') else {
        return Ok((word.to_string(), None, None));
    };
    let inner = rest
        .strip_suffix(']')
        .ok_or_else(|| format!("`{word}`: missing `]`"))?;
    let bad = || format!("`{word}`: write NAME[I], NAME[I..J] (J excluded) or NAME[I..=J]");
    let (start, end) = if let Some((a, b)) = inner.split_once("..=") {
        let b = number(b).ok_or_else(bad)?;
        (
            number(a).ok_or_else(bad)?,
            b.checked_add(1).ok_or_else(bad)?,
        )
    } else if let Some((a, b)) = inner.split_once("..") {
        (number(a).ok_or_else(bad)?, number(b).ok_or_else(bad)?)
    } else {
        let i = number(inner).ok_or_else(bad)?;
        (i, i.checked_add(1).ok_or_else(bad)?)
    };
    if end < start {
        return Err(format!("`{word}`: the range ends before it starts").into());
    }
    Ok((name.to_string(), Some(start), Some(end)))
}

/// Parses one line. `Ok(None)` for a blank line or a `#` comment.
pub fn parse(line: &str) -> Result<Option<Command>, SyntaxError> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let (head, args) = (words[0], &words[1..]);
    // gdb's `x/NUF ADDR`: N units of size U (b, h, w, g) shown as F (x, d, u, f).
    if let Some(spec) = head.strip_prefix("x/") {
        return examine(spec, args).map(Some);
    }
    // `print/x`, `display/t`: the format rides on the command word.
    let (head, format) = match head.split_once('/') {
        Some((h @ ("print" | "p" | "display"), f)) => (h, Some(Radix::parse(h, f)?)),
        _ => (head, None),
    };
    let none = |c: Command| {
        if args.is_empty() {
            Ok(Some(c))
        } else {
            Err(format!("`{head}` takes no arguments").into())
        }
    };
    match head {
        "help" | "h" | "?" => Ok(Some(Command::Help(args.first().map(|s| s.to_string())))),
        "step" | "s" | "stepi" | "si" => Ok(Some(Command::Step(match args {
            [] => 1,
            [n] => num(Some(n), "a step count")?,
            _ => return Err("write `step` or `step N`".into()),
        }))),
        "warp" => match args {
            [b, w] => Ok(Some(Command::Warp {
                block: num(Some(b), "a block index")?,
                warp: num(Some(w), "a warp index")?,
            })),
            _ => Err("write `warp B W`, e.g. `warp 0 1`".into()),
        },
        "lane" => parse_lane(args),
        "next" | "n" => none(Command::Next),
        "continue" | "c" | "cont" => none(Command::Continue),
        "finish" | "fin" => none(Command::Finish),
        "until" | "u" => Ok(Some(Command::Until(location(args)?))),
        "break" | "b" | "tbreak" => parse_breakpoint(head, args),
        "watch" => parse_watch(args),
        "delete" | "d" => parse_delete(args),
        "info" | "i" => parse_info(args),
        "display" => parse_display(args, format),
        "undisplay" => parse_undisplay(args),
        "focus" => parse_focus(args),
        // cuda-gdb's focus syntax: `cuda block B warp W lane L` (any subset, in this order).
        "cuda" => parse_cuda(args),
        "list" | "l" => parse_list(args),
        "print" | "p" => parse_print(args, format),
        "regs" | "registers" => none(Command::Regs),
        "mem" | "x" => parse_mem(args),
        "where" | "w" | "bt" => none(Command::Where),
        "stack" => parse_stack(args),
        "warps" => none(Command::Warps),
        "blocks" => none(Command::Blocks),
        "barriers" => none(Command::Barriers),
        "caches" => none(Command::Caches),
        "choices" => none(Command::Choices),
        "choose" => parse_choose(args),
        "back" => parse_back(args),
        "rule" | "rules" => none(Command::Rule),
        "trace" => parse_trace(args),
        "status" => none(Command::Status),
        "quit" | "q" | "exit" => none(Command::Quit),
        other => Err(format!("unknown command `{other}`; `help` lists the commands").into()),
    }
}

/// The arguments of `break`/`tbreak LOCATION [if COND]`.
fn parse_breakpoint(head: &str, args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    {
        let (loc, cond) = match args.iter().position(|w| *w == "if") {
            Some(i) => (&args[..i], Some(condition(&args[i + 1..].join(" "))?)),
            None => (args, None),
        };
        Ok(Some(Command::Break {
            at: location(loc)?,
            condition: cond,
            temporary: head == "tbreak",
        }))
    }
}

/// The arguments of `watch`.
fn parse_watch(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    match args {
        [] => Err("write `watch BUFFER[I]`, `watch .shared ADDR` or `watch .global ADDR`".into()),
        [".shared", addr, rest @ ..] => {
            let (sel, ty) = options(rest)?;
            if sel.warp.is_some() || sel.lane.is_some() {
                return Err("a shared watchpoint takes `block B` only".into());
            }
            Ok(Some(Command::Watch(WatchTarget::Shared {
                address: num(Some(addr), "a shared address")?,
                ty,
                block: sel.block,
            })))
        }
        [".global", addr, rest @ ..] => {
            let (sel, ty) = options(rest)?;
            if sel != ThreadSel::default() {
                return Err("a global watchpoint takes an optional type only".into());
            }
            Ok(Some(Command::Watch(WatchTarget::Global {
                address: num(Some(addr), "a global address")?,
                ty,
            })))
        }
        [w] if w.chars().next().is_some_and(|c| c.is_ascii_digit()) => {
            Ok(Some(Command::Watch(WatchTarget::Global {
                address: num(Some(w), "a global address")?,
                ty: None,
            })))
        }
        [w] => {
            let (name, start, end) = indexed(w)?;
            match (start, end) {
                (Some(i), Some(j)) if j == i + 1 => {
                    Ok(Some(Command::Watch(WatchTarget::Named { name, index: i })))
                }
                (None, _) => Ok(Some(Command::Watch(WatchTarget::Named { name, index: 0 }))),
                _ => Err("a watchpoint watches one element: write NAME[I]".into()),
            }
        }
        _ => Err(format!("unexpected `{}`", args[1..].join(" ")).into()),
    }
}

/// The arguments of `delete [ID]`.
fn parse_delete(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    let id = optional_number(args, "a breakpoint number", "write `delete` or `delete ID`")?;
    Ok(Some(Command::Delete(id)))
}

/// The one optional number of a command (`delete [ID]`, `undisplay [N]`); `usage` when there
/// are more words.
fn optional_number<T: TryFrom<u64>>(
    args: &[&str],
    what: &str,
    usage: &str,
) -> Result<Option<T>, SyntaxError> {
    match args {
        [] => Ok(None),
        [n] => num(Some(n), what).map(Some),
        _ => Err(usage.into()),
    }
}

/// The arguments of `info WHAT`.
fn parse_info(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    match args {
        ["breakpoints" | "break" | "b" | "watchpoints"] => Ok(Some(Command::InfoBreakpoints)),
        ["registers" | "regs" | "r" | "locals"] => Ok(Some(Command::Regs)),
        ["warps" | "threads"] => Ok(Some(Command::Warps)),
        ["blocks"] => Ok(Some(Command::Blocks)),
        ["barriers"] => Ok(Some(Command::Barriers)),
        ["caches"] => Ok(Some(Command::Caches)),
        ["display"] => Ok(Some(Command::InfoDisplay)),
        ["grids"] => Ok(Some(Command::InfoGrids)),
        _ => Err(
            "write `info breakpoints`, `info registers`, `info warps`, `info blocks`, `info barriers`, `info caches`, `info display` or `info grids`"
                .into(),
        ),
    }
}

/// The arguments of `display[/F] %REG ...`.
fn parse_display(args: &[&str], format: Option<Radix>) -> Result<Option<Command>, SyntaxError> {
    match args {
        [reg] => Ok(Some(Command::Display {
            register: reg.to_string(),
            format,
        })),
        _ => Err("write `display %REG` or `display/x %REG`".into()),
    }
}

/// The arguments of `focus B W [L]`.
fn parse_focus(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    match args {
        [b, w] | [b, w, _] => Ok(Some(Command::Focus(ThreadSel {
            block: Some(num(Some(b), "a block index")?),
            warp: Some(num(Some(w), "a warp index")?),
            lane: Some(match args.get(2) {
                Some(l) => num(Some(l), "a lane index")?,
                None => 0,
            }),
        }))),
        _ => Err("write `focus B W [L]`, e.g. `focus 0 1 5`".into()),
    }
}

/// The arguments of cuda-gdb's `cuda block B warp W lane L` / `cuda thread T`.
fn parse_cuda(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    {
        let mut sel = ThreadSel::default();
        let mut thread = None;
        let mut rest = args;
        while let [key, value, tail @ ..] = rest {
            let v = num(Some(value), "an index")?;
            match *key {
                "block" => sel.block = Some(v),
                "warp" => sel.warp = Some(v),
                "lane" => sel.lane = Some(v),
                "thread" => thread = Some(v),
                k => {
                    return Err(format!(
                        "`cuda {k}`: write `cuda block B warp W lane L` or `cuda block B thread T`"
                    )
                    .into());
                }
            }
            rest = tail;
        }
        match thread {
            _ if !rest.is_empty() => {
                Err("write `cuda block B warp W lane L` or `cuda block B thread T`".into())
            }
            Some(_) if sel.warp.is_some() || sel.lane.is_some() => Err(
                "`thread` names the warp and lane already: write `cuda block B thread T`".into(),
            ),
            Some(thread) => Ok(Some(Command::FocusThread {
                block: sel.block,
                thread,
            })),
            None if sel == ThreadSel::default() => Err(
                "write `cuda block B warp W lane L` (any of the three) or `cuda block B thread T`"
                    .into(),
            ),
            None => Ok(Some(Command::Focus(sel))),
        }
    }
}

/// The arguments of `list`.
fn parse_list(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    match args {
        [] => Ok(Some(Command::List(ListAt::Here))),
        ["ptx"] => Ok(Some(Command::List(ListAt::Ptx(None)))),
        ["ptx", n] => Ok(Some(Command::List(ListAt::Ptx(Some(num(
            Some(n),
            "a PTX line",
        )?))))),
        [at] => match at.rsplit_once(':') {
            Some((file, n)) => Ok(Some(Command::List(ListAt::FileLine(
                file.to_string(),
                num(Some(n), "a line")?,
            )))),
            None => Ok(Some(Command::List(ListAt::Line(num(Some(at), "a line")?)))),
        },
        _ => Err("write `list`, `list LINE`, `list FILE:LINE` or `list ptx [LINE]`".into()),
    }
}

/// The arguments of `print[/F] %REG ...`.
fn parse_print(args: &[&str], format: Option<Radix>) -> Result<Option<Command>, SyntaxError> {
    match args {
        [reg, rest @ ..] => {
            let (at, ty) = options(rest)?;
            if ty.is_some() {
                return Err("`print` shows a register in its declared type".into());
            }
            Ok(Some(Command::Print {
                register: reg.to_string(),
                at,
                format,
            }))
        }
        [] => Err("write `print %REG [block B] [warp W] [lane L]`".into()),
    }
}

/// The arguments of `mem ...`.
fn parse_mem(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    match args {
        [".shared", addr, count, rest @ ..] => {
            let (sel, ty) = options(rest)?;
            Ok(Some(Command::Mem(MemTarget::Shared {
                address: num(Some(addr), "a shared address")?,
                count: num(Some(count), "an element count")?,
                ty,
                block: sel.block,
            })))
        }
        [".global", addr, count, rest @ ..] => {
            let (_, ty) = options(rest)?;
            Ok(Some(Command::Mem(MemTarget::Global {
                address: num(Some(addr), "a global address")?,
                count: num(Some(count), "an element count")?,
                ty,
            })))
        }
        [".shared" | ".global", ..] => Err("write `mem .shared ADDR N [TYPE] [block B]`".into()),
        [w] => {
            let (name, start, end) = indexed(w)?;
            Ok(Some(Command::Mem(MemTarget::Named { name, start, end })))
        }
        _ => Err("write `mem BUFFER[I..J]` or `mem .shared ADDR N [TYPE] [block B]`".into()),
    }
}

/// The arguments of `trace save|load FILE`.
fn parse_trace(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    match args {
        ["save", f] => Ok(Some(Command::Trace(TraceOp::Save(f.to_string())))),
        ["load", f] => Ok(Some(Command::Trace(TraceOp::Load(f.to_string())))),
        _ => Err("write `trace save FILE` or `trace load FILE`".into()),
    }
}

/// The arguments of `choose N`.
fn parse_choose(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    match args {
        [n] => Ok(Some(Command::Choose(num(Some(n), "a choice number")?))),
        _ => Err("write `choose N` with N from `choices`".into()),
    }
}

/// The arguments of `back [N]`.
fn parse_back(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    match args {
        [] => Ok(Some(Command::Back(1))),
        ["to", s] => Ok(Some(Command::BackTo(num(Some(s), "a step number")?))),
        [n] => Ok(Some(Command::Back(num(Some(n), "a step count")?))),
        _ => Err("write `back`, `back N` or `back to STEP`".into()),
    }
}

/// The arguments of `lane L`.
fn parse_lane(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    match args {
        [b, w, l] => Ok(Some(Command::Lane {
            block: num(Some(b), "a block index")?,
            warp: num(Some(w), "a warp index")?,
            lane: num(Some(l), "a lane index")?,
        })),
        _ => Err("write `lane B W L`, e.g. `lane 0 0 5`".into()),
    }
}

/// The arguments of `undisplay [ID]`.
fn parse_undisplay(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    let n = optional_number(
        args,
        "a display number",
        "write `undisplay` or `undisplay N`",
    )?;
    Ok(Some(Command::Undisplay(n)))
}

/// The arguments of `stack [table]`.
fn parse_stack(args: &[&str]) -> Result<Option<Command>, SyntaxError> {
    match args {
        [] => Ok(Some(Command::Stack { table: None })),
        ["table"] => Ok(Some(Command::Stack { table: Some(None) })),
        ["table", n] => Ok(Some(Command::Stack {
            table: Some(Some(num(Some(n), "a row count")?)),
        })),
        _ => Err("write `stack` or `stack table [N]`".into()),
    }
}

#[cfg(test)]
mod tests;
