//! The debugger's command language: one line of text parsed into a [`Command`], and the help
//! text of every command with an example. Parsing never panics: a malformed line is an `Err`
//! with a message that says what was expected.

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
    fn parse(head: &str, f: &str) -> Result<Radix, String> {
        match f {
            "x" => Ok(Radix::Hex),
            "d" => Ok(Radix::Signed),
            "u" => Ok(Radix::Unsigned),
            "t" => Ok(Radix::Binary),
            "f" => Ok(Radix::Float),
            _ => Err(format!(
                "`{head}/{f}`: the formats are x (hex), d (signed), u (unsigned), t (binary), f (float)"
            )),
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
fn examine(spec: &str, args: &[&str]) -> Result<Command, String> {
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
                ));
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
        _ => return Err(format!("`x/{spec}`: floats are w (f32) or g (f64)")),
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
                return Err(format!("write `x/{spec} {name} [block B]`"));
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

/// Command words, for help and completion.
pub const COMMANDS: &[&str] = &[
    "help",
    "step",
    "warp",
    "lane",
    "next",
    "continue",
    "until",
    "break",
    "tbreak",
    "watch",
    "delete",
    "info",
    "print",
    "display",
    "undisplay",
    "focus",
    "cuda",
    "list",
    "regs",
    "mem",
    "where",
    "stack",
    "warps",
    "blocks",
    "barriers",
    "caches",
    "choices",
    "choose",
    "back",
    "rule",
    "trace",
    "status",
    "quit",
];

/// `(command, syntax, what it does, example)`, in the order `help` lists them.
pub const HELP: &[(&str, &str, &str, &str)] = &[
    (
        "step",
        "step [N]",
        "take one choice (or N) of the session's scheduling policy",
        "step 3",
    ),
    (
        "warp",
        "warp B W",
        "step warp W of block B once",
        "warp 0 1",
    ),
    (
        "lane",
        "lane B W L",
        "step the group of lanes holding lane L (its, threads models)",
        "lane 0 0 5",
    ),
    (
        "next",
        "next",
        "step the focused warp; a call runs until the warp is back in this function",
        "next",
    ),
    (
        "continue",
        "continue",
        "run until a breakpoint, a watchpoint, the end or Ctrl-C",
        "continue",
    ),
    (
        "until",
        "until LOCATION",
        "run until some warp is about to execute there (LOCATION as for `break`)",
        "until kernel.cu:12",
    ),
    (
        "break",
        "break LOCATION [if EXPR]",
        "stop before a warp executes there. LOCATION: LABEL or FUNCTION:LABEL; FILE:LINE, a source line \
         (through the PTX's .loc lines; it stops where a warp enters the line); LINE, a source line of \
         the kernel's file when the PTX has .loc lines, else a PTX line; ptx:LINE, a PTX line; pc N, an \
         instruction address. EXPR: OPERAND CMP OPERAND over registers, lane, tid and integers, true \
         in some active lane",
        "break DIVERGE if %a == 3",
    ),
    (
        "finish",
        "finish",
        "run until the focused warp returns from the function it is in (other warps run when it cannot)",
        "finish",
    ),
    (
        "tbreak",
        "tbreak LOCATION [if EXPR]",
        "a breakpoint deleted when it first stops (LOCATION and EXPR as for `break`)",
        "tbreak kernel.cu:12",
    ),
    (
        "watch",
        "watch BUFFER[I] | .shared ADDR [TYPE] [block B] | .global ADDR [TYPE]",
        "stop after a step that writes the element",
        "watch .shared 0x4 block 0",
    ),
    (
        "delete",
        "delete [ID]",
        "delete one breakpoint or watchpoint, or all",
        "delete 1",
    ),
    (
        "info",
        "info breakpoints | registers | locals | warps | threads | blocks | barriers | caches | display",
        "breakpoints and watchpoints; the others as the commands of those names (`regs` for registers and locals, `warps` for threads) and the displays",
        "info breakpoints",
    ),
    (
        "print",
        "print[/x|d|u|t|f] %REG [block B] [warp W] [lane L]",
        "a register of one lane (default: the focused lane), in its type or as hex, signed, unsigned, binary or float",
        "print/x %r1 lane 1",
    ),
    (
        "display",
        "display[/x|d|u|t|f] %REG",
        "print the register at the focused lane after every command that steps",
        "display/x %r1",
    ),
    (
        "undisplay",
        "undisplay [N]",
        "stop one display, or all",
        "undisplay 1",
    ),
    (
        "focus",
        "focus B W [L]",
        "look at block B, warp W, lane L (default 0) until a step of another warp moves the focus",
        "focus 0 1 3",
    ),
    (
        "cuda",
        "cuda [block B] [warp W] [lane L] | cuda [block B] thread T",
        "cuda-gdb's spelling of `focus`: what is not named stays; `thread T` is thread T of the block",
        "cuda block 1 thread 5",
    ),
    (
        "list",
        "list [LINE | FILE:LINE | ptx [LINE]]",
        "source lines around the focused warp's instruction (its .cu line when the PTX has line tables, else its PTX line), or around a line",
        "list reduce.cu:20",
    ),
    (
        "regs",
        "regs",
        "every register of every lane of the focused warp (* marks active lanes)",
        "regs",
    ),
    (
        "x",
        "x/NUF ADDR | NAME | SPACE ADDR [THREAD]",
        "gdb's examine: N units of U bytes (b h w g) as F (x hex, d signed, u unsigned, f float) at a global address, from the start of a buffer or variable, or at an address of SPACE (.global, .shared [block B], .local [block B warp W lane L], .const, .param)",
        "x/4wx 0x10000",
    ),
    (
        "mem",
        "mem BUFFER[I..J] | .shared ADDR N [TYPE] [block B] | .global ADDR N [TYPE]",
        "memory as elements of their type",
        "mem c[0..2]",
    ),
    (
        "where",
        "where",
        "the focused warp's pc, label, PTX line and source line",
        "where",
    ),
    (
        "stack",
        "stack | stack table [N]",
        "the focused warp's pc, active mask, disable mask and token stack; `table`: the thesis-style table of its last N steps",
        "stack table",
    ),
    (
        "warps",
        "warps",
        "every resident warp: pc, line, masks, state",
        "warps",
    ),
    (
        "blocks",
        "blocks",
        "resident, waiting and completed blocks",
        "blocks",
    ),
    (
        "barriers",
        "barriers",
        "barriers in use: arrivals, thread count, who waits",
        "barriers",
    ),
    (
        "caches",
        "caches",
        "the cache state (cached memory only)",
        "caches",
    ),
    (
        "choices",
        "choices",
        "the enabled choices, numbered: you are the scheduler",
        "choices",
    ),
    ("choose", "choose N", "take enabled choice N", "choose 1"),
    (
        "back",
        "back [N] | back to STEP",
        "reverse N steps (default 1), or to step STEP; exact",
        "back to 4",
    ),
    (
        "rule",
        "rule",
        "the derivation of the last step, each rule with its thesis text",
        "rule",
    ),
    (
        "trace",
        "trace save FILE | trace load FILE",
        "save the choices so far; restart and replay a saved prefix",
        "trace save run.jsonl",
    ),
    (
        "status",
        "status",
        "the step count, how the run stands, the policy",
        "status",
    ),
    (
        "help",
        "help [COMMAND]",
        "this list, or one command",
        "help break",
    ),
    ("quit", "quit", "leave the debugger", "quit"),
];

/// The help text: every command, or one.
pub fn help(topic: Option<&str>) -> Result<String, String> {
    match topic {
        None => {
            let mut s = String::from("commands (`help COMMAND` for one):\n");
            for (_, syntax, what, example) in HELP {
                // The list keeps one line per command: the first sentence of the description
                // (`help COMMAND` has all of it) and the example.
                let short = what.split(". ").next().unwrap_or(what);
                // The example stays on one line: its spaces are not break points.
                let glued = example.replace(' ', "\u{a0}");
                let what =
                    wrap(&format!("{short}; e.g. `{glued}`"), 47, 100).replace('\u{a0}', " ");
                if syntax.chars().count() > 44 {
                    s.push_str(&format!("  {syntax}\n{what}"));
                } else {
                    // The first line of `what` goes beside the syntax, in place of its indent.
                    s.push_str(&format!("  {syntax:<44} {}", what.trim_start()));
                }
            }
            Ok(s)
        }
        Some(t) => {
            let t = if t == "c" { "continue" } else { t };
            HELP.iter()
                .find(|(name, ..)| *name == t)
                .map(|(_, syntax, what, example)| {
                    format!("{syntax}\n{}  example: {example}\n", wrap(what, 2, 96))
                })
                .ok_or_else(|| format!("no command `{t}`; `help` lists them"))
        }
    }
}

/// `text` in lines of at most `width` columns (longer words stay whole), each indented.
fn wrap(text: &str, indent: usize, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    // Split at ASCII spaces only: a no-break space glues words together.
    for word in text.split([' ', '\n']).filter(|w| !w.is_empty()) {
        if !line.is_empty() && indent + line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&format!("{:indent$}{line}\n", ""));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&format!("{:indent$}{line}\n", ""));
    }
    out
}

fn number(word: &str) -> Option<u64> {
    let w = word.replace('_', "");
    if let Some(hex) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else {
        w.parse().ok()
    }
}

fn num<T: TryFrom<u64>>(word: Option<&str>, what: &str) -> Result<T, String> {
    let w = word.ok_or_else(|| format!("expected {what}"))?;
    number(w)
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| format!("`{w}` is not {what}"))
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
fn options(words: &[&str]) -> Result<(ThreadSel, Option<ScalarType>), String> {
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
                    ));
                }
            },
        }
        i += 2;
    }
    Ok((sel, ty))
}

fn location(words: &[&str]) -> Result<Location, String> {
    let starts_with_digit = |w: &str| w.chars().next().is_some_and(|c| c.is_ascii_digit());
    match words {
        [] => Err(
            "expected a location: LABEL, LINE, FILE:LINE, ptx:LINE or pc N (`help break`)"
                .to_string(),
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
                return Err(format!(
                    "`{w}`: write FILE:LINE, ptx:LINE or FUNCTION:LABEL"
                ));
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
        _ => Err(format!(
            "unexpected `{}` after the location",
            words[1..].join(" ")
        )),
    }
}

fn operand(word: &str) -> Result<Operand, String> {
    if word == "lane" {
        Ok(Operand::Lane)
    } else if word == "tid" {
        Ok(Operand::Tid)
    } else if word.starts_with('%') {
        Ok(Operand::Reg(word.to_string()))
    } else if let Some(rest) = word.strip_prefix('-') {
        number(rest)
            .map(|v| Operand::Int(-(v as i128)))
            .ok_or_else(|| format!("`{word}` is not a register, `lane`, `tid` or an integer"))
    } else {
        number(word)
            .map(|v| Operand::Int(v as i128))
            .ok_or_else(|| format!("`{word}` is not a register, `lane`, `tid` or an integer"))
    }
}

fn condition(text: &str) -> Result<Condition, String> {
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
    ))
}

/// `NAME`, `NAME[I]`, `NAME[I..J]`, `NAME[I..=J]`.
fn indexed(word: &str) -> Result<(String, Option<u64>, Option<u64>), String> {
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
        return Err(format!("`{word}`: the range ends before it starts"));
    }
    Ok((name.to_string(), Some(start), Some(end)))
}

/// Parses one line. `Ok(None)` for a blank line or a `#` comment.
pub fn parse(line: &str) -> Result<Option<Command>, String> {
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
            Err(format!("`{head}` takes no arguments"))
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
        "lane" => match args {
            [b, w, l] => Ok(Some(Command::Lane {
                block: num(Some(b), "a block index")?,
                warp: num(Some(w), "a warp index")?,
                lane: num(Some(l), "a lane index")?,
            })),
            _ => Err("write `lane B W L`, e.g. `lane 0 0 5`".into()),
        },
        "next" | "n" => none(Command::Next),
        "continue" | "c" | "cont" => none(Command::Continue),
        "finish" | "fin" => none(Command::Finish),
        "until" | "u" => Ok(Some(Command::Until(location(args)?))),
        "break" | "b" | "tbreak" => {
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
        "watch" => match args {
            [] => {
                Err("write `watch BUFFER[I]`, `watch .shared ADDR` or `watch .global ADDR`".into())
            }
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
            _ => Err(format!("unexpected `{}`", args[1..].join(" "))),
        },
        "delete" | "d" => match args {
            [] => Ok(Some(Command::Delete(None))),
            [n] => Ok(Some(Command::Delete(Some(num(
                Some(n),
                "a breakpoint number",
            )?)))),
            _ => Err("write `delete` or `delete ID`".into()),
        },
        "info" | "i" => match args {
            ["breakpoints" | "break" | "b" | "watchpoints"] => Ok(Some(Command::InfoBreakpoints)),
            ["registers" | "regs" | "r" | "locals"] => Ok(Some(Command::Regs)),
            ["warps" | "threads"] => Ok(Some(Command::Warps)),
            ["blocks"] => Ok(Some(Command::Blocks)),
            ["barriers"] => Ok(Some(Command::Barriers)),
            ["caches"] => Ok(Some(Command::Caches)),
            ["display"] => Ok(Some(Command::InfoDisplay)),
            _ => Err(
                "write `info breakpoints`, `info registers`, `info warps`, `info blocks`, `info barriers`, `info caches` or `info display`"
                    .into(),
            ),
        },
        "display" => match args {
            [reg] => Ok(Some(Command::Display {
                register: reg.to_string(),
                format,
            })),
            _ => Err("write `display %REG` or `display/x %REG`".into()),
        },
        "undisplay" => match args {
            [] => Ok(Some(Command::Undisplay(None))),
            [n] => Ok(Some(Command::Undisplay(Some(num(Some(n), "a display number")?)))),
            _ => Err("write `undisplay` or `undisplay N`".into()),
        },
        "focus" => match args {
            [b, w] | [b, w, _] => Ok(Some(Command::Focus(ThreadSel {
                block: Some(num(Some(b), "a block index")?),
                warp: Some(num(Some(w), "a warp index")?),
                lane: Some(match args.get(2) {
                    Some(l) => num(Some(l), "a lane index")?,
                    None => 0,
                }),
            }))),
            _ => Err("write `focus B W [L]`, e.g. `focus 0 1 5`".into()),
        },
        // cuda-gdb's focus syntax: `cuda block B warp W lane L` (any subset, in this order).
        "cuda" => {
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
                        ));
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
        "list" | "l" => match args {
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
        },
        "print" | "p" => match args {
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
        },
        "regs" | "registers" => none(Command::Regs),
        "mem" | "x" => match args {
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
            [".shared" | ".global", ..] => {
                Err("write `mem .shared ADDR N [TYPE] [block B]`".into())
            }
            [w] => {
                let (name, start, end) = indexed(w)?;
                Ok(Some(Command::Mem(MemTarget::Named { name, start, end })))
            }
            _ => Err("write `mem BUFFER[I..J]` or `mem .shared ADDR N [TYPE] [block B]`".into()),
        },
        "where" | "w" | "bt" => none(Command::Where),
        "stack" => match args {
            [] => Ok(Some(Command::Stack { table: None })),
            ["table"] => Ok(Some(Command::Stack { table: Some(None) })),
            ["table", n] => Ok(Some(Command::Stack {
                table: Some(Some(num(Some(n), "a row count")?)),
            })),
            _ => Err("write `stack` or `stack table [N]`".into()),
        },
        "warps" => none(Command::Warps),
        "blocks" => none(Command::Blocks),
        "barriers" => none(Command::Barriers),
        "caches" => none(Command::Caches),
        "choices" => none(Command::Choices),
        "choose" => match args {
            [n] => Ok(Some(Command::Choose(num(Some(n), "a choice number")?))),
            _ => Err("write `choose N` with N from `choices`".into()),
        },
        "back" => match args {
            [] => Ok(Some(Command::Back(1))),
            ["to", s] => Ok(Some(Command::BackTo(num(Some(s), "a step number")?))),
            [n] => Ok(Some(Command::Back(num(Some(n), "a step count")?))),
            _ => Err("write `back`, `back N` or `back to STEP`".into()),
        },
        "rule" | "rules" => none(Command::Rule),
        "trace" => match args {
            ["save", f] => Ok(Some(Command::Trace(TraceOp::Save(f.to_string())))),
            ["load", f] => Ok(Some(Command::Trace(TraceOp::Load(f.to_string())))),
            _ => Err("write `trace save FILE` or `trace load FILE`".into()),
        },
        "status" => none(Command::Status),
        "quit" | "q" | "exit" => none(Command::Quit),
        other => Err(format!(
            "unknown command `{other}`; `help` lists the commands"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_word_has_help() {
        for c in COMMANDS {
            assert!(help(Some(c)).is_ok(), "{c}");
        }
    }

    #[test]
    fn the_command_list_shows_every_example() {
        let list = help(None).expect("the list");
        for (name, syntax, _, example) in HELP {
            assert!(list.contains(syntax), "{name}: {syntax}");
            // Whole, on one line (it may start a line of its own after `e.g.`).
            assert!(list.contains(&format!("`{example}`")), "{name}: {example}");
        }
        assert!(list.lines().all(|l| l.chars().count() <= 100), "{list}");
    }

    #[test]
    fn locations() {
        let loc = |w: &str| location(&[w]);
        assert_eq!(loc("12"), Ok(Location::Line(12)));
        assert_eq!(loc("ptx:12"), Ok(Location::PtxLine(12)));
        assert_eq!(
            loc("kernel.cu:12"),
            Ok(Location::SourceLine {
                file: "kernel.cu".into(),
                line: 12
            })
        );
        assert_eq!(
            loc("C:/src/kernel.cu:7"),
            Ok(Location::SourceLine {
                file: "C:/src/kernel.cu".into(),
                line: 7
            })
        );
        assert_eq!(
            loc("f:LOOP"),
            Ok(Location::Label {
                function: Some("f".into()),
                name: "LOOP".into()
            })
        );
        assert_eq!(location(&["pc", "3"]), Ok(Location::Pc(3)));
        assert_eq!(loc("*3"), Ok(Location::Pc(3)));
        for bad in [":3", "k.cu:", "ptx:x", "k.cu:3x", "12x"] {
            assert!(loc(bad).is_err(), "{bad}");
        }
        assert!(location(&[]).is_err());
        assert!(location(&["k.cu:3", "extra"]).is_err());
        // Display gives back what parses to the same location.
        for w in ["12", "ptx:12", "kernel.cu:12", "f:LOOP", "LOOP"] {
            let l = loc(w).expect("parses");
            assert_eq!(loc(&l.to_string()), Ok(l));
        }
    }

    #[test]
    fn parses() {
        assert_eq!(parse("step 3"), Ok(Some(Command::Step(3))));
        assert_eq!(parse("  # comment"), Ok(None));
        assert_eq!(
            parse("break DIVERGE if %a==3"),
            Ok(Some(Command::Break {
                at: Location::Label {
                    function: None,
                    name: "DIVERGE".into()
                },
                condition: Some(Condition {
                    lhs: Operand::Reg("%a".into()),
                    cmp: Cmp::Eq,
                    rhs: Operand::Int(3)
                }),
                temporary: false,
            }))
        );
        assert!(matches!(
            parse("tbreak DIVERGE"),
            Ok(Some(Command::Break {
                temporary: true,
                ..
            }))
        ));
        assert!(matches!(
            parse("print/x %r1 lane 2"),
            Ok(Some(Command::Print {
                format: Some(Radix::Hex),
                ..
            }))
        ));
        assert_eq!(
            parse("cuda block 1 lane 4"),
            Ok(Some(Command::Focus(ThreadSel {
                block: Some(1),
                warp: None,
                lane: Some(4)
            })))
        );
        assert!(parse("cuda").is_err());
        assert_eq!(
            parse("cuda block 1 thread 5"),
            Ok(Some(Command::FocusThread {
                block: Some(1),
                thread: 5
            }))
        );
        assert!(parse("cuda thread 5 lane 2").is_err());
        assert_eq!(Radix::Float.text(0x3fc0_0000, 4), "1.5");
        assert_eq!(Radix::Float.text(0x3c00, 2), "1");
        assert!(parse("display/z %r1").is_err());
        assert_eq!(Radix::Signed.text(0xffff_fffe, 4), "-2");
        assert_eq!(Radix::Hex.text(u64::MAX, 2), "0xffff");
        assert_eq!(Radix::Binary.text(5, 1), "0b101");
        assert_eq!(
            parse("mem c[1..=2]"),
            Ok(Some(Command::Mem(MemTarget::Named {
                name: "c".into(),
                start: Some(1),
                end: Some(3)
            })))
        );
        assert!(parse("mem c[3..1]").is_err());
        assert!(parse("step x").is_err());
        assert!(parse("frobnicate").is_err());
        assert_eq!(
            parse("watch .shared 0x4 block 1"),
            Ok(Some(Command::Watch(WatchTarget::Shared {
                address: 4,
                ty: None,
                block: Some(1)
            })))
        );
    }
}
