//! The debugger's command words (for completion) and its help: syntax, meaning and an example
//! of every command, wrapped to the terminal's width.

use crate::DebugError;

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
        "info breakpoints | registers | warps | blocks | barriers | caches | display | grids",
        "breakpoints and watchpoints; the others as the commands of those names (`regs` for registers, also `info locals`; `warps` for warps, also `info threads`), the displays, and the grids of a program of several launches (kernel, stream, waiting, active or completed, blocks resident and completed, and why blocks cannot become resident)",
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
pub fn help(topic: Option<&str>) -> Result<String, DebugError> {
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
                .ok_or_else(|| {
                    crate::SyntaxError(format!("no command `{t}`; `help` lists them")).into()
                })
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
