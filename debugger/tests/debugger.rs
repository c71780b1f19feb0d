//! The debugger's `Session` as a library: `back` restores the full machine state exactly (a
//! property over random runs, and the `back` + same steps round trip), `choices`/`choose`
//! reproduce an interleaving through `trace save/load`, `continue` stops on the interrupt flag
//! without ending the session, malformed commands answer with an error and change nothing, and
//! source-line breakpoints stop where warps enter the line.

mod debugger_common;
use debugger::{Options, Outcome, Policy, Session};
use debugger_common::*;
use proptest::prelude::*;
use semantics::machine::{ArgValue, BufferSpec, WarpModel};

/// histogram_shared (tests/kernels): 2 blocks of 64 threads, shared-memory atomics, barriers.
fn histogram(policy: Policy, snapshot_every: u64) -> Session {
    let ptx = workspace_file("tests/kernels/histogram_shared.ptx");
    let data: Vec<u32> = (0..128u32).map(|i| (i * 37 + 11) % 1000).collect();
    let mut l = launch(
        "histogram_shared",
        2,
        64,
        vec![u32_buffer("data", &data), u32_buffer("hist", &[0; 10])],
    );
    l.args = vec![
        ArgValue::Buffer(0),
        ArgValue::Buffer(1),
        ArgValue::Scalar {
            ty: ptx_parser::ScalarType::S32,
            bits: 120,
        },
        ArgValue::Scalar {
            ty: ptx_parser::ScalarType::S32,
            bits: 10,
        },
    ];
    let options = Options {
        policy,
        snapshot_every,
        max_snapshots: 8,
        ..Options::default()
    };
    session(&ptx, l, config(WarpModel::SimtStack, 32), options)
}

/// A kernel that spins 2^32 times: `continue` only stops when interrupted.
const SPIN: &str = "
.version 6.0
.target sm_70
.address_size 64
.visible .entry spin(.param .u64 spin_param_0)
{
	.reg .pred 	%p;
	.reg .u32 	%r;
	mov.u32 	%r, 0;
LOOP:
	add.u32 	%r, %r, 1;
	setp.ne.u32 	%p, %r, 0;
	@%p bra 	LOOP;
	ret;
}
";

fn spin() -> Session {
    spin_with(Options::default())
}

fn spin_with(options: Options) -> Session {
    let l = launch(
        "spin",
        1,
        32,
        vec![BufferSpec {
            name: "unused".into(),
            elem: ptx_parser::ScalarType::U32,
            bytes: vec![0; 4],
        }],
    );
    session(SPIN, l, config(WarpModel::SimtStack, 32), options)
}

/// Takes `choices` again by their index in the enabled set (`choose N`).
fn replay(s: &mut Session, choices: &[traces::Choice]) {
    for c in choices {
        let i = s
            .machine()
            .enabled()
            .iter()
            .position(|e| e == c)
            .expect("a logged choice is enabled again after back");
        let r = s.handle(&format!("choose {i}"));
        assert_eq!(r.outcome, Outcome::Ok, "{}", r.text);
    }
}

#[test]
fn back_then_the_same_steps_give_an_identical_state() {
    // Snapshots every 4 steps (at most 8, thinned as they fill up), so `back` replays.
    let mut s = histogram(Policy::Random(3), 4);
    assert_eq!(s.handle("step 150").outcome, Outcome::Ok);
    let before = s.machine().clone();
    let tail: Vec<_> = s.choices_taken()[100..].to_vec();
    let r = s.handle("back 50");
    assert_eq!(r.text.lines().next(), Some("back at step 100"));
    assert_ne!(s.machine(), &before);
    replay(&mut s, &tail);
    assert_eq!(
        s.machine(),
        &before,
        "the full machine state, not a summary"
    );
    assert!(s.snapshot_count() <= 9, "snapshots stay bounded");
    // `back to 0` is the initial state; the same choices lead to the same state again.
    let all = s.choices_taken().to_vec();
    s.handle("back to 0");
    replay(&mut s, &all);
    assert_eq!(s.machine(), &before);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn back_n_then_restepping_returns_to_the_same_state(
        seed in 0u64..1000, steps in 1u64..400, back in 0u64..400, every in 1u64..40
    ) {
        let back = back.min(steps);
        let mut s = histogram(Policy::Random(seed), every);
        s.handle(&format!("step {steps}"));
        let before = s.machine().clone();
        let taken = s.step_count();
        let tail: Vec<_> = s.choices_taken()[(taken - back.min(taken)) as usize..].to_vec();
        let r = s.handle(&format!("back {}", back.min(taken)));
        prop_assert_eq!(r.outcome, Outcome::Ok);
        replay(&mut s, &tail);
        prop_assert!(s.machine() == &before);
    }
}

#[test]
fn choose_reproduces_an_interleaving_through_a_saved_trace() {
    let mut a = histogram(Policy::RoundRobin, 64);
    // The user is the scheduler: always the last enabled choice (block 1 first, then warp 1).
    for _ in 0..40 {
        let n = a.machine().enabled().len();
        assert_eq!(a.handle(&format!("choose {}", n - 1)).outcome, Outcome::Ok);
    }
    let saved = a.handle("trace save run");
    assert_eq!(saved.text, "saved 40 choices to run\n");
    // Another session of the same launch with the same files replays the prefix.
    let mut b = histogram(Policy::RoundRobin, 64);
    b.set_host(Box::new(debugger::MemoryFiles {
        traces: [(
            "run".to_string(),
            debugger::TraceRecord {
                program_hash: a.machine().program().hash,
                choices: a.choices_taken().to_vec(),
            },
        )]
        .into(),
        ..Default::default()
    }));
    let r = b.handle("trace load run");
    assert!(
        r.text.starts_with("replayed 40 of 40 choices from run"),
        "{}",
        r.text
    );
    assert_eq!(b.machine(), a.machine());
    assert_eq!(b.choices_taken(), a.choices_taken());
}

#[test]
fn interrupt_stops_continue_and_the_session_lives_on() {
    let mut s = spin();
    let flag = s.interrupt_flag();
    // Stands in for the CLI's Ctrl-C handler; nothing here depends on when it fires.
    let setter = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        flag.request();
    });
    let r = s.handle("continue");
    setter.join().expect("the setter thread ends");
    assert!(r.text.starts_with("interrupted after "), "{}", r.text);
    assert_eq!(r.outcome, Outcome::Ok);
    let at = s.step_count();
    assert!(at > 0);
    let r = s.handle("step");
    assert_eq!(r.outcome, Outcome::Ok);
    assert_eq!(s.step_count(), at + 1);
    let r = s.handle("print %r");
    assert!(r.text.starts_with("%r = "), "{}", r.text);
}

/// `continue` runs on the one run loop (`scheduler::run_resumable`): cut by the step bound, it
/// names the bound as every command does and leaves the kernel running, so a second `continue`
/// goes on from there; the state and the last step's rule (`rule`, whose events a long run
/// rebuilds from the history instead of recording every step's) are those of a session that
/// took the same steps one at a time.
#[test]
fn continue_names_the_step_bound_and_goes_on_from_where_it_stopped() {
    let bounded = || {
        spin_with(Options {
            max_steps: 50,
            ..Options::default()
        })
    };
    let mut s = bounded();
    let r = s.handle("continue");
    assert_eq!(r.outcome, Outcome::Ok);
    assert!(
        r.text.starts_with(
            "stopped at the step bound (--max-steps 50) after 50 steps (now at step 50)"
        ),
        "{}",
        r.text
    );
    assert!(
        s.machine().termination().is_none(),
        "the bound ends the run, not the kernel"
    );
    let r = s.handle("continue");
    assert!(
        r.text.starts_with(
            "stopped at the step bound (--max-steps 50) after 50 steps (now at step 100)"
        ),
        "{}",
        r.text
    );
    let mut one_by_one = bounded();
    for _ in 0..100 {
        let r = one_by_one.handle("step");
        assert_eq!(r.outcome, Outcome::Ok, "{}", r.text);
    }
    assert_eq!(one_by_one.machine(), s.machine());
    assert_eq!(one_by_one.choices_taken(), s.choices_taken());
    let rule = s.handle("rule").text;
    assert!(rule.starts_with("step 100: "), "{rule}");
    assert_eq!(one_by_one.handle("rule").text, rule);
    // `step N` takes its N steps: no bound is named.
    let r = s.handle("step 70");
    assert!(
        r.text.starts_with("took 70 steps; now at step 170"),
        "{}",
        r.text
    );
    assert!(!r.text.contains("bound"), "{}", r.text);
}

/// Locations and watched addresses at the edges: PTX line 0 and a watchpoint whose bytes would
/// run past the end of the address space are errors; a watchpoint on the last word of the
/// address space is kept, and stepping past stores never wraps around to the start.
#[test]
fn breakpoints_and_watchpoints_at_the_edges() {
    let mut s = histogram(Policy::RoundRobin, 64);
    for bad in [
        "break ptx:0",
        "watch .global 0xffffffffffffffff",
        "watch .shared 0xfffffffffffffffe",
        "watch .global 0xfffffffffffffff9 .u64",
    ] {
        let r = s.handle(bad);
        assert_eq!(r.outcome, Outcome::Error, "{bad}: {}", r.text);
    }
    assert!(
        s.handle("break ptx:0")
            .text
            .contains("PTX lines count from 1"),
        "the error says how lines are counted"
    );
    assert!(
        s.handle("watch .global 0xffffffffffffffff")
            .text
            .contains("past the end of the address space")
    );
    for edge in [
        "watch .global 0xfffffffffffffffc",
        "watch .shared 0xfffffffffffffffc",
    ] {
        let r = s.handle(edge);
        assert_eq!(r.outcome, Outcome::Ok, "{edge}: {}", r.text);
    }
    let r = s.handle("continue");
    assert_eq!(r.outcome, Outcome::Ok, "{}", r.text);
    assert!(r.text.contains("the kernel ended"), "{}", r.text);
}

#[test]
fn errors_answer_and_change_nothing() {
    let mut s = listing_5_5();
    s.handle("step 5");
    let before = s.machine().clone();
    for bad in [
        "print %nope",
        "mem c[5..9]",
        "mem c[2..1]",
        "break NOWHERE",
        "until NOWHERE",
        "back 99",
        "back to 99",
        "choose 7",
        "warp 3 0",
        "lane 0 0 0",
        "watch c[9]",
        "watch .shared 0 block 9",
        "print %a lane 5",
        "trace load missing",
        "delete 12",
        "bogus",
        "step 0",
        // Locations that name nothing: no such PTX line, no source lines in this PTX, no such
        // address, a condition on a register the function lacks.
        "break 100000",
        "until ptx:100000",
        "break listing.cu:3",
        "until listing.cu:3",
        "break pc 100000",
        "break DIVERGE if %nope == 1",
        "break :3",
        "mem c[0..=5]",
        "print %a block 3",
    ] {
        let r = s.handle(bad);
        assert_eq!(r.outcome, Outcome::Error, "`{bad}` answered {}", r.text);
        assert!(r.text.starts_with("error: "), "{}", r.text);
        assert_eq!(s.machine(), &before, "`{bad}` changed the state");
    }
    assert_eq!(s.handle("quit").outcome, Outcome::Quit);
}

/// tests/kernels/debug/source_lines (clang `-gline-tables-only`): 8 lanes, lane i loops i
/// times; and the `.cu` line marked `// @name`.
fn source_lines() -> (Session, Vec<u32>, impl Fn(&str) -> u32) {
    let ptx = workspace_file("tests/kernels/debug/source_lines.ptx");
    let cu = workspace_file("tests/kernels/debug/source_lines.cu");
    let input: Vec<u32> = (0..8).collect();
    let mut l = launch(
        "source_lines",
        1,
        8,
        vec![u32_buffer("out", &[0; 8]), u32_buffer("in", &input)],
    );
    l.args.push(ArgValue::Scalar {
        ty: ptx_parser::ScalarType::S32,
        bits: 8,
    });
    let s = session(
        &ptx,
        l,
        config(WarpModel::SimtStack, 32),
        Options::default(),
    );
    let marked = move |name: &str| {
        let marker = format!("// @{name}");
        cu.lines()
            .position(|l| l.trim_end().ends_with(&marker))
            .map(|i| i as u32 + 1)
            .unwrap_or_else(|| panic!("no line marked {marker}"))
    };
    (s, input, marked)
}

#[test]
fn a_source_line_breakpoint_stops_once_per_entry_into_the_line() {
    let (mut s, input, marked) = source_lines();
    let body = marked("body");
    let r = s.handle(&format!("break source_lines.cu:{body}"));
    assert_eq!(r.outcome, Outcome::Ok, "{}", r.text);
    let program = s.machine().program().clone();
    let mut hits = 0;
    loop {
        let r = s.handle("continue");
        if r.text.starts_with("the kernel ended") {
            break;
        }
        assert!(
            r.text.starts_with("breakpoint 1 at source_lines.cu:"),
            "{}",
            r.text
        );
        let pc = s
            .machine()
            .warp_view(0, 0)
            .expect("the warp is resident")
            .pc;
        let line = program.source[pc as usize].loc.map(|(_, line, _)| line);
        assert_eq!(line, Some(body), "stopped on the breakpoint's line");
        hits += 1;
        assert!(hits <= 100, "the breakpoint keeps stopping");
    }
    // One warp: it runs the loop body as often as its longest-running lane, once per entry.
    assert_eq!(hits, *input.iter().max().expect("inputs") as usize);
    // The same line as a bare number, and `until` to it, stop at the same place.
    let (mut a, _, _) = source_lines();
    let (mut b, _, _) = source_lines();
    assert_eq!(a.handle(&format!("break {body}")).outcome, Outcome::Ok);
    a.handle("continue");
    b.handle(&format!("until source_lines.cu:{body}"));
    assert_eq!(a.step_count(), b.step_count());
    assert_eq!(a.machine(), b.machine());
}

#[test]
fn a_line_without_code_names_the_nearest_lines_with_some() {
    let (mut s, _, marked) = source_lines();
    let store = marked("store");
    let before = s.machine().clone();
    for cmd in [
        format!("break {store}"),
        format!("until source_lines.cu:{store}"),
    ] {
        let r = s.handle(&cmd);
        assert_eq!(r.outcome, Outcome::Error, "{}", r.text);
        assert!(
            r.text
                .contains("no instruction comes from source_lines.cu:"),
            "{}",
            r.text
        );
        // The nearest lines named are lines that a breakpoint can be set on.
        let near: Vec<u32> = r
            .text
            .split("have some are ")
            .nth(1)
            .expect("two nearest lines")
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .take(2)
            .collect();
        assert_eq!(near.len(), 2, "{}", r.text);
        assert!(near[0] < store && store < near[1], "{near:?}");
        for n in near {
            let ok = s.handle(&format!("break {n}"));
            assert_eq!(ok.outcome, Outcome::Ok, "{}", ok.text);
        }
        s.handle("delete");
    }
    assert_eq!(s.machine(), &before);
}

#[test]
fn completion_words_name_commands_labels_and_registers() {
    let s = listing_5_5();
    let w = s.completion_words();
    for want in ["continue", "DIVERGE", "%lane", "c", "breakpoints"] {
        assert!(w.iter().any(|x| x == want), "{want} missing from {w:?}");
    }
}

/// gdb's conveniences: `tbreak` stops once and is gone; `print/x` and the type's own format
/// show the same bits; `display` follows every stepping command; `focus` and cuda-gdb's `cuda`
/// move what the inspection commands look at; `list` marks the focused instruction.
#[test]
fn tbreak_print_formats_display_focus_and_list() {
    let (mut s, _, marked) = source_lines();
    let body = marked("body");
    let r = s.handle(&format!("tbreak source_lines.cu:{body}"));
    assert_eq!(r.outcome, Outcome::Ok, "{}", r.text);
    assert!(
        r.text.starts_with("temporary breakpoint 1 at"),
        "{}",
        r.text
    );
    let r = s.handle("continue");
    assert!(
        r.text
            .starts_with("temporary breakpoint 1 at source_lines.cu:")
            && r.text.contains("(deleted)"),
        "{}",
        r.text
    );
    let info = s.handle("info breakpoints");
    assert!(
        !info.text.contains("breakpoint 1"),
        "a spent tbreak stays: {}",
        info.text
    );
    // The next `continue` runs to the end: nothing stops it any more.
    let (mut again, _, _) = source_lines();
    again.handle(&format!("tbreak source_lines.cu:{body}"));
    again.handle("continue");
    assert!(
        again
            .handle("continue")
            .text
            .starts_with("the kernel ended")
    );

    // print/FMT: the register's bits in each radix.
    let reg = s
        .machine()
        .program()
        .functions
        .iter()
        .flat_map(|f| f.registers.iter())
        .find(|r| r.name.starts_with("%r") && semantics::machine::type_size(r.ty) == 4)
        .map(|r| r.name.clone())
        .expect("a 32-bit register");
    let plain = s.handle(&format!("print {reg} lane 3"));
    let hex = s.handle(&format!("print/x {reg} lane 3"));
    let bin = s.handle(&format!("print/t {reg} lane 3"));
    assert_eq!(hex.outcome, Outcome::Ok, "{}", hex.text);
    let value = |t: &str| {
        t.split(" = ")
            .nth(1)
            .and_then(|v| v.split(' ').next())
            .map(str::to_string)
    };
    let (p, x, t) = (value(&plain.text), value(&hex.text), value(&bin.text));
    let bits = u64::from_str_radix(x.as_deref().unwrap().trim_start_matches("0x"), 16).unwrap();
    assert_eq!(
        u64::from_str_radix(t.as_deref().unwrap().trim_start_matches("0b"), 2).unwrap(),
        bits
    );
    assert!(p.is_some(), "{}", plain.text);
    assert_eq!(s.handle("print/q %r1").outcome, Outcome::Error);

    // display: shown now, and after each command that steps; not after one that does not.
    let d = s.handle(&format!("display/x {reg}"));
    assert!(
        d.text.starts_with("2: ") && d.text.contains(&format!("{reg} = 0x")),
        "{}",
        d.text
    );
    assert!(s.handle("step").text.contains(&format!("2: {reg} = 0x")));
    assert!(!s.handle("warps").text.contains(&format!("2: {reg}")));
    assert!(
        s.handle("info display")
            .text
            .contains(&format!("2: display/x {reg}"))
    );
    assert_eq!(s.handle("undisplay 2").outcome, Outcome::Ok);
    assert!(!s.handle("step").text.contains(&format!("2: {reg}")));

    // focus and cuda: lane 5 of the warp, then back; a thread that does not exist is refused.
    let r = s.handle("cuda lane 5");
    assert!(
        r.text.starts_with("focus: block 0 warp 0 lane 5"),
        "{}",
        r.text
    );
    assert!(s.handle(&format!("print {reg}")).text.contains("lane 5"));
    assert_eq!(
        s.handle("focus 0 0 9").outcome,
        Outcome::Error,
        "the block has 8 threads"
    );
    assert_eq!(s.handle("cuda block 3").outcome, Outcome::Error);

    // list: the PTX around the focused instruction, marked.
    let r = s.handle("list");
    assert_eq!(r.outcome, Outcome::Ok, "{}", r.text);
    let marked_lines: Vec<&str> = r.text.lines().filter(|l| l.starts_with("=>")).collect();
    assert_eq!(marked_lines.len(), 1, "{}", r.text);
    let pc = s.machine().warp_view(0, 0).expect("resident").pc;
    let ptx_line = s.machine().program().source[pc as usize].ptx_line;
    assert!(
        marked_lines[0].contains(&format!(" {ptx_line}  ")),
        "{}",
        r.text
    );
    assert_eq!(s.handle("list 100000").outcome, Outcome::Error);
}

/// gdb's `x/NUF ADDR` reads what `mem .global ADDR N TYPE` reads, in the unit and format named.
#[test]
fn examine_is_mem_in_gdb_spelling() {
    let (mut s, _, _) = source_lines();
    s.handle("continue");
    let input = s.machine().buffer_address(1).expect("the `in` buffer");
    for (x, mem) in [
        ("x/4wu", "u32"),
        ("x/2gx", "b64"),
        ("x/8bd", "s8"),
        ("x/wx", "b32"),
    ] {
        let count = x[2..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>();
        let count = if count.is_empty() {
            "1".to_string()
        } else {
            count
        };
        let a = s.handle(&format!("{x} {input:#x}"));
        let b = s.handle(&format!("mem .global {input:#x} {count} {mem}"));
        assert_eq!(a.outcome, Outcome::Ok, "{x}: {}", a.text);
        assert_eq!(a.text, b.text, "{x}");
    }
    assert_eq!(
        s.handle(&format!("x/2fb {input:#x}")).outcome,
        Outcome::Error
    );
    assert_eq!(s.handle("x/4wx").outcome, Outcome::Error);
}

/// The typed errors read as the messages did when they were strings, word for word.
#[test]
fn typed_errors_keep_their_text() {
    let mut s = listing_5_5();
    for (command, want) in [
        ("focus 9 0", "error: there is no block 9 (the grid has 1)\n"),
        ("focus 0 5", "error: there is no warp 5 (blocks have 1)\n"),
        ("focus 0 0 7", "error: there is no lane 7 (warp 0 has 2)\n"),
        (
            "print %a block 3",
            "error: there is no block 3 (the grid has 1)\n",
        ),
        (
            "print %a warp 3",
            "error: there is no warp 3 (blocks have 1)\n",
        ),
        (
            "watch .shared 0 block 9",
            "error: there is no block 9 (the grid has 1)\n",
        ),
        (
            "delete 12",
            "error: no breakpoint or watchpoint 12; `info breakpoints` lists them\n",
        ),
        (
            "undisplay 4",
            "error: no display 4 (`info display` lists them)\n",
        ),
        (
            "help bogus",
            "error: no command `bogus`; `help` lists them\n",
        ),
        (
            "bogus",
            "error: unknown command `bogus`; `help` lists the commands\n",
        ),
    ] {
        let r = s.handle(command);
        assert_eq!(r.outcome, Outcome::Error, "{command}");
        assert_eq!(r.text, want, "{command}");
    }
}

/// The host's errors are types (`HostError`) whose text the user reads after `error: `.
#[test]
fn host_errors_keep_their_text() {
    use debugger::HostError;
    let mut s = listing_5_5();
    let r = s.handle("trace load nowhere.jsonl");
    assert_eq!(r.outcome, Outcome::Error);
    assert_eq!(r.text, "error: no trace `nowhere.jsonl`\n");
    s.set_host(Box::new(debugger::NoFiles));
    let r = s.handle("trace save t.jsonl");
    assert_eq!(r.text, "error: this session has no file access\n");
    for (e, want) in [
        (
            HostError::Read {
                path: "t.jsonl".into(),
                reason: "gone".into(),
            },
            "cannot read t.jsonl: gone",
        ),
        (
            HostError::Write {
                path: "t.jsonl".into(),
                reason: "full".into(),
            },
            "cannot write t.jsonl: full",
        ),
        (
            HostError::Format {
                path: "t.jsonl".into(),
                reason: "line 1: not a trace".into(),
            },
            "t.jsonl: line 1: not a trace",
        ),
    ] {
        assert_eq!(debugger::DebugError::from(e).to_string(), want);
    }
}

/// A C++ kernel's PTX name is mangled (`_Z5shiftPi`): the banner shows it as the source names
/// it, with its parameter types, as every other cudasem report does.
#[test]
fn the_banner_names_a_cpp_kernel_demangled() {
    let ptx = ".version 7.0\n.target sm_70\n.address_size 64\n\
               .visible .entry _Z5shiftPi(.param .u64 p)\n{\n\tret;\n}\n";
    let l = launch("_Z5shiftPi", 1, 32, vec![u32_buffer("p", &[0; 32])]);
    let s = session(ptx, l, config(WarpModel::SimtStack, 32), Options::default());
    let banner = s.banner();
    assert!(
        banner.starts_with("cudasem debugger: kernel shift(int*), grid (1,1,1)"),
        "{banner}"
    );
    assert!(!banner.contains("_Z5shiftPi"), "{banner}");
}
