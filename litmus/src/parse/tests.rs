//! The parser on whole tests and on each kind of malformed input.

use super::*;

const MP: &str = "PTX MP\n\"comment\"\n{ x=0; y=0; P1:r1=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.acquire.gpu r1, y ;\n st.release.gpu y, 1 | ld.weak r2, x ;\n~exists (P1:r1 == 1 /\\ P1:r2 != 1)\n";

#[test]
fn parses_message_passing() {
    let t = parse(MP).expect("parses");
    assert_eq!(t.name, "MP");
    assert_eq!(t.comments, vec!["comment".to_string()]);
    assert_eq!(t.threads.len(), 2);
    assert_eq!(t.threads[1].cta, 1);
    assert_eq!(t.threads[0].instrs.len(), 2);
    assert_eq!(
        t.threads[1].instrs[0].instr,
        Instr::Load {
            proxy: Proxy::Generic,
            sem: Sem::Acquire,
            scope: Some(Scope::Gpu),
            dst: "r1".into(),
            loc: "y".into()
        }
    );
    assert_eq!(t.threads[1].instrs[0].pos, Pos { line: 5, col: 17 });
    assert_eq!(t.condition.quantifier, Quantifier::NotExists);
    assert_eq!(
        t.observed(),
        vec![
            Term::Reg {
                thread: 1,
                reg: "r1".into()
            },
            Term::Reg {
                thread: 1,
                reg: "r2".into()
            }
        ]
    );
}

#[test]
fn errors_have_line_and_column() {
    let bad = MP.replace("ld.weak r2, x", "ld.weak r2 x");
    let e = parse(&bad).expect_err("malformed");
    assert_eq!(e.pos.line, 6);
    assert!(e.message.contains("`,`"), "{e}");
    let e = parse("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n goto LC07 ;\nexists (x == 0)\n")
        .expect_err("undefined label");
    assert_eq!(e.to_string(), "4:2: label `LC07` is not defined in P0");
}

#[test]
fn conditions_with_constants_and_register_comparisons() {
    let t = parse("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nexists 0==0\n")
        .expect("parses");
    assert_eq!(
        t.condition.expr,
        Expr::Cmp {
            eq: true,
            a: Term::Int(0),
            b: Term::Int(0)
        }
    );
    let t = parse("PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\nforall (0:r0 = P0:r1 \\/ ~(x != 2))\n")
        .expect("parses");
    assert_eq!(t.condition.quantifier, Quantifier::Forall);
    assert_eq!(t.observed().len(), 3);
}

#[test]
fn proxies_and_aliases_parse() {
    let t = parse("PTX t\n{ x=0; s @ surface aliases x; }\n P0@cta 0,gpu 1 ;\n sust.weak s, 1 ;\n fence.proxy.surface ;\n ld.weak r0, x ;\nforall (P0:r0 == 1)\n")
        .expect("parses");
    assert!(matches!(
        t.init[1],
        Init::Alias {
            proxy: Proxy::Surface,
            ..
        }
    ));
    assert_eq!(t.threads[0].gpu, 1);
    assert_eq!(
        t.threads[0].instrs[1].instr,
        Instr::Fence(FenceKind::Proxy(Proxy::Surface))
    );
}
