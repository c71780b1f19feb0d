//! The command parser's unit tests.
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
