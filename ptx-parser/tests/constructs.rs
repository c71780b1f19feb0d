//! Focused parser tests, one per construct of the PTX surface syntax the parser accepts
//! (nvcc and clang output, ISA 6.x-8.x, and the thesis dialect), plus error recovery.

use ptx_parser::*;

/// Parses `src`, asserts no diagnostics and a span-free round trip through the printer.
fn ok(src: &str) -> Module {
    let parsed = parse(src);
    assert!(parsed.diagnostics.is_empty(), "diagnostics for\n{src}\n{:#?}", parsed.diagnostics);
    let printed = parsed.module.to_string();
    let again = parse(&printed);
    assert!(again.diagnostics.is_empty(), "printed text has diagnostics:\n{printed}\n{:#?}", again.diagnostics);
    assert_eq!(strip_spans(&parsed.module), strip_spans(&again.module), "round trip changed:\n{printed}");
    parsed.module
}

/// Wraps statements into a kernel body and returns the body's statements.
fn body(stmts: &str) -> Vec<Statement> {
    let m = ok(&format!(".version 7.0\n.target sm_70\n.address_size 64\n.entry k()\n{{\n{stmts}\n}}\n"));
    match m.items.into_iter().next() {
        Some(Item::Function(Function { body: Some(b), .. })) => b.statements,
        other => panic!("expected a function with a body, got {other:?}"),
    }
}

fn instr(src: &str) -> Instruction {
    match body(src).into_iter().next() {
        Some(Statement::Instruction(i)) => i,
        other => panic!("expected an instruction, got {other:?}"),
    }
}

fn function(m: &Module, i: usize) -> &Function {
    match m.items.get(i) {
        Some(Item::Function(f)) => f,
        other => panic!("item {i} is not a function: {other:?}"),
    }
}

fn variable(m: &Module, i: usize) -> &VariableDecl {
    match m.items.get(i) {
        Some(Item::Variable(v)) => v,
        other => panic!("item {i} is not a variable: {other:?}"),
    }
}

fn text(src: &str, span: Span) -> &str {
    &src[span.range()]
}

fn int(value: u64) -> ConstExpr {
    ConstExpr::Int { value, unsigned: false, span: Span::default() }
}

fn stripped_operands(i: &Instruction) -> Vec<Operand> {
    let m = Module {
        items: vec![Item::Function(Function {
            linkage: vec![],
            kind: FunctionKind::Entry,
            name: Ident { name: "x".into(), span: Span::default() },
            return_params: vec![],
            params: vec![],
            performance: vec![],
            body: Some(Block { statements: vec![Statement::Instruction(i.clone())], span: Span::default() }),
            span: Span::default(),
        })],
        ..Module::default()
    };
    match strip_spans(&m).items.into_iter().next() {
        Some(Item::Function(Function { body: Some(b), .. })) => match b.statements.into_iter().next() {
            Some(Statement::Instruction(i)) => i.operands.into_vec(),
            _ => unreachable!(),
        },
        _ => unreachable!(),
    }
}

#[test]
fn module_header() {
    let m = ok(".version 8.5\n.target sm_80, texmode_independent, debug\n.address_size 64\n");
    assert_eq!(m.version, Some((8, 5)));
    let t: Vec<&str> = m.target.iter().map(|t| &*t.name).collect();
    assert_eq!(t, ["sm_80", "texmode_independent", "debug"]);
    assert_eq!(m.address_size, Some(64));
}

#[test]
fn linkage_and_function_forms() {
    let src = "\
.extern .func (.param .b32 r) f (.param .b64 p);
.func g();
.weak .func (.param .b32 func_retval0) h(.param .b32 a, .reg .b32 b) { ret; }
.visible .entry k(.param .u64 a, .param .u64 .ptr .global .align 8 b, .param .align 8 .b8 c[16]) { ret; }
";
    let m = ok(src);
    let f = function(&m, 0);
    assert_eq!(f.linkage, [Linkage::Extern]);
    assert_eq!(f.kind, FunctionKind::Func);
    assert_eq!(&*f.return_params[0].name.name, "r");
    assert_eq!(&*f.params[0].name.name, "p");
    assert!(f.body.is_none());
    assert_eq!(text(src, f.span), ".extern .func (.param .b32 r) f (.param .b64 p);");
    assert!(function(&m, 1).body.is_none());
    let h = function(&m, 2);
    assert_eq!(h.linkage, [Linkage::Weak]);
    assert_eq!(h.params[1].space, StateSpace::Reg);
    let k = function(&m, 3);
    assert_eq!(k.kind, FunctionKind::Entry);
    assert_eq!(k.params[1].ptr, Some(PtrAttributes { space: Some(StateSpace::Global), align: Some(8) }));
    assert_eq!(k.params[2].align, Some(8));
    assert_eq!(k.params[2].array, [Some(16)]);
    assert_eq!(k.params[2].ty, VarType { vector: 1, scalar: ScalarType::B8 });
    assert_eq!(text(src, k.params[1].span), ".param .u64 .ptr .global .align 8 b");
}

#[test]
fn performance_directives() {
    let m = ok(
        ".entry k() .maxntid 256, 1, 1 .reqntid 128 .minnctapersm 4 .maxnctapersm 2 .maxnreg 32 .pragma \"nounroll\"; { ret; }\n\
                .func f() .noreturn { trap; }",
    );
    let perf = &function(&m, 0).performance;
    assert!(matches!(&perf[0], PerfDirective::MaxNtid(v, _) if v == &[256, 1, 1]));
    assert!(matches!(&perf[1], PerfDirective::ReqNtid(v, _) if v == &[128]));
    assert!(matches!(perf[2], PerfDirective::MinNctaPerSm(4, _)));
    assert!(matches!(perf[3], PerfDirective::MaxNctaPerSm(2, _)));
    assert!(matches!(perf[4], PerfDirective::MaxNreg(32, _)));
    assert!(matches!(&perf[5], PerfDirective::Pragma(p) if &*p.text == "nounroll"));
    assert!(matches!(function(&m, 1).performance[..], [PerfDirective::NoReturn(_)]));
}

#[test]
fn register_ranges_and_lists() {
    let src = "{\n.reg .b32 %r<5>;\n.reg .b32 a, b, c;\n.reg .v4 .f32 v;\n.reg .pred %p<3>, %q;\n}";
    let stmts = body(src);
    let decls: Vec<&VariableDecl> = stmts
        .iter()
        .flat_map(|s| match s {
            Statement::Block(b) => b.statements.iter().collect::<Vec<_>>(),
            _ => vec![],
        })
        .filter_map(|s| if let Statement::Variable(v) = s { Some(v) } else { None })
        .collect();
    assert_eq!(decls.len(), 7);
    assert_eq!(decls[0].range, Some(5));
    let names: Vec<&str> = decls.iter().map(|d| &*d.name.name).collect();
    assert_eq!(names, ["%r", "a", "b", "c", "v", "%p", "%q"]);
    assert_eq!(decls[4].ty, VarType { vector: 4, scalar: ScalarType::F32 });
    assert_eq!(decls[5].range, Some(3));
    assert_eq!(decls[6].range, None);
}

#[test]
fn comma_list_spans() {
    let src = ".entry k() {\n.reg .b32 a, bb, c;\n}";
    let m = ok(src);
    let Some(b) = &function(&m, 0).body else { panic!() };
    let spans: Vec<(&str, &str)> = b
        .statements
        .iter()
        .map(|s| match s {
            Statement::Variable(v) => (text(src, v.name.span), text(src, v.span)),
            _ => panic!(),
        })
        .collect();
    assert_eq!(spans, [("a", ".reg .b32 a, bb, c;"), ("bb", ".reg .b32 a, bb, c;"), ("c", ".reg .b32 a, bb, c;")]);
}

#[test]
fn module_variables() {
    let src = "\
.shared .align 4 .b8 smem[1024];
.extern .shared .align 16 .b8 dyn[];
.global .align 4 .u32 arr[3] = {1, 2, 3};
.global .u32 var = 10 / 2 + 3;
.const .f32 c = 0f3F800000;
.global .u64 p = generic(arr);
.global .u32 nested[2][2] = {{1, 2}, {3, 4}};
.local .align 8 .b8 __local_depot0[16];
.visible .global .align 8 .u64 ptrs[2] = {generic(arr)+4, var};
.const .f64 d = 0d3FF0000000000000;
.global .f32 half = 0.5;
.global .u32 flags = 0xFFU | 0b1010 ^ 017;
";
    let m = ok(src);
    let smem = variable(&m, 0);
    assert_eq!((smem.space, smem.align, smem.array.as_slice()), (StateSpace::Shared, Some(4), &[Some(1024)][..]));
    let dyn_ = variable(&m, 1);
    assert_eq!(dyn_.linkage, [Linkage::Extern]);
    assert_eq!(dyn_.array, [None]);
    let arr = variable(&m, 2);
    assert!(matches!(&arr.init, Some(Initializer::List(items, _)) if items.len() == 3));
    let var = strip_spans(&m);
    let Item::Variable(v) = &var.items[3] else { panic!() };
    // 10 / 2 + 3 is (10 / 2) + 3.
    assert_eq!(
        v.init,
        Some(Initializer::Expr(ConstExpr::Binary {
            op: BinaryOp::Add,
            lhs: Box::new(ConstExpr::Binary {
                op: BinaryOp::Div,
                lhs: Box::new(int(10)),
                rhs: Box::new(int(2)),
                span: Span::default()
            }),
            rhs: Box::new(int(3)),
            span: Span::default(),
        }))
    );
    let Item::Variable(c) = &var.items[4] else { panic!() };
    assert_eq!(
        c.init,
        Some(Initializer::Expr(ConstExpr::Float {
            bits: 0x3F80_0000,
            kind: FloatLiteral::HexF32,
            span: Span::default()
        }))
    );
    let Item::Variable(p) = &var.items[5] else { panic!() };
    assert!(matches!(&p.init, Some(Initializer::Expr(ConstExpr::Generic(i, _))) if &*i.name == "arr"));
    assert_eq!(variable(&m, 6).array, [Some(2), Some(2)]);
    assert_eq!(variable(&m, 7).space, StateSpace::Local);
    let Item::Variable(h) = &var.items[10] else { panic!() };
    assert_eq!(
        h.init,
        Some(Initializer::Expr(ConstExpr::Float {
            bits: 0.5f64.to_bits(),
            kind: FloatLiteral::Decimal,
            span: Span::default()
        }))
    );
    let Item::Variable(fl) = &var.items[11] else { panic!() };
    // `|` binds looser than `^`.
    assert!(matches!(&fl.init, Some(Initializer::Expr(ConstExpr::Binary { op: BinaryOp::BitOr, lhs, .. }))
        if matches!(**lhs, ConstExpr::Int { value: 255, unsigned: true, .. })));
}

#[test]
fn expression_precedence_survives_printing() {
    let m = ok(".global .u32 x = (1 + 2) * 3 - (4 - 5) - 6 << 1 == 2 ? ~1 : -(2 * 3) && !0 || 1 % 3;");
    let printed = m.to_string();
    assert!(printed.contains("= (1 + 2) * 3 - (4 - 5) - 6 << 1 == 2 ? ~1 : -(2 * 3) && !0 || 1 % 3;"), "{printed}");
}

#[test]
fn debug_directives() {
    let src = "\
.file 1 \"/path/k.cu\"
.file 2 \"/path/h.h\", 1234, 567
.entry k()
{
\t.loc 1 12 5
\t.loc 1 12 5, function_name $L__info_string0, inlined_at 1 30 3
\tret;
}
.section .debug_str
{
$L__info_string0:
.b8 95 90 0 /* } */ \"{\"
.b32 $L__info_string0 // {
}
";
    let m = ok(src);
    let Some(Item::File(f)) = m.items.first() else { panic!() };
    assert_eq!((f.index, &*f.path, f.extra.as_slice()), (1, "/path/k.cu", &[][..]));
    let Some(Item::File(f2)) = m.items.get(1) else { panic!() };
    assert_eq!(f2.extra, [1234, 567]);
    let Some(b) = &function(&m, 2).body else { panic!() };
    let Statement::Loc(l1) = &b.statements[0] else { panic!() };
    assert_eq!((l1.file, l1.line, l1.column, l1.rest.as_deref()), (1, 12, 5, None));
    let Statement::Loc(l2) = &b.statements[1] else { panic!() };
    assert_eq!(l2.rest.as_deref(), Some(", function_name $L__info_string0, inlined_at 1 30 3"));
    assert!(matches!(b.statements[2], Statement::Instruction(_)));
    let Some(Item::Section(s)) = m.items.get(3) else { panic!() };
    assert_eq!(&*s.name, ".debug_str");
    assert!(s.body.contains("$L__info_string0:") && s.body.contains("\"{\""));
    assert!(text(src, s.span).ends_with("// {\n}"));
}

#[test]
fn thesis_listing_5_4_nesting_and_shadowing() {
    let src = "\
.entry kernelEntryPoint()
{
    .reg .s32 r;
    .reg .pred p;
    BLOCK:
    {
        add .s32 r, r, r;
        bra .uni SKIP;
        .reg .u64 r;
        SKIP:
        add .u64 r, r, r;
        @!p bra BLOCK;
        @p bra CONTINUE;
        BLOCK:
    }
    CONTINUE:
}
";
    let m = ok(src);
    let Some(b) = &function(&m, 0).body else { panic!() };
    assert!(matches!(&b.statements[2], Statement::Label(l) if &*l.name == "BLOCK"));
    let Statement::Block(inner) = &b.statements[3] else { panic!("{:?}", b.statements[3]) };
    assert_eq!(inner.statements.len(), 8);
    assert!(text(src, inner.span).starts_with('{') && text(src, inner.span).ends_with('}'));
    let Statement::Instruction(add) = &inner.statements[0] else { panic!() };
    assert_eq!(&*add.opcode.name, "add");
    assert_eq!(&*add.modifiers[0].name, "s32");
    let Statement::Instruction(bra) = &inner.statements[5] else { panic!() };
    assert_eq!(bra.guard.as_ref().map(|g| g.negated), Some(true));
    assert!(matches!(inner.statements.last(), Some(Statement::Label(l)) if &*l.name == "BLOCK"));
    assert!(matches!(b.statements.last(), Some(Statement::Label(l)) if &*l.name == "CONTINUE"));
}

#[test]
fn thesis_listing_5_1_and_control_flow() {
    let m = ok("\
.global .u32 var = 10 / 2 + 3;
.func function(.param .f64 p)
{
    .reg .f64 a;
    ld .param .f64 a, [p];
}
.entry transformationKernel()
{
    .reg .f64 var;
    .reg .pred p;
    @p call function, (var);
    ssy L; sync; brk; break; @p break; preBrk L; preRet L;
L:  exit;
}
");
    let Some(b) = &function(&m, 1).body else { panic!() };
    let Statement::Instruction(ld) = &b.statements[1] else { panic!() };
    let mods: Vec<&str> = ld.modifiers.iter().map(|m| &*m.name).collect();
    assert_eq!(mods, ["param", "f64"]);
    let Some(b) = &function(&m, 2).body else { panic!() };
    let ops: Vec<&str> = b
        .statements
        .iter()
        .filter_map(|s| if let Statement::Instruction(i) = s { Some(&*i.opcode.name) } else { None })
        .collect();
    assert_eq!(ops, ["call", "ssy", "sync", "brk", "break", "break", "preBrk", "preRet", "exit"]);
}

#[test]
fn labels() {
    let stmts = body("LBB0_2:\n$L__BB0_2: BLOCK: ret;");
    let names: Vec<&str> =
        stmts.iter().filter_map(|s| if let Statement::Label(l) = s { Some(&*l.name) } else { None }).collect();
    assert_eq!(names, ["LBB0_2", "$L__BB0_2", "BLOCK"]);
}

#[test]
fn call_prototype() {
    let stmts = body(
        "prototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _, .param .b32 _);\nprototype_1 : .callprototype ()_ (.param .b64 _);\ncall (retval0), %rd5, (param0), prototype_0;",
    );
    let Statement::CallPrototype(p) = &stmts[0] else { panic!() };
    assert_eq!(&*p.label.name, "prototype_0");
    assert_eq!(p.return_params.len(), 1);
    assert_eq!(p.params.len(), 2);
    assert_eq!(&*p.params[0].name.name, "_");
    let Statement::CallPrototype(p1) = &stmts[1] else { panic!() };
    assert!(p1.return_params.is_empty());
}

#[test]
fn guards_opcodes_and_modifiers() {
    let i = instr("@!%p1 ld.global.nc.v2.f32 {%f1, %f2}, [%rd4+8];");
    let g = i.guard.as_ref().map(|g| (g.negated, &*g.predicate.name));
    assert_eq!(g, Some((true, "%p1")));
    let mods: Vec<&str> = i.modifiers.iter().map(|m| &*m.name).collect();
    assert_eq!(mods, ["global", "nc", "v2", "f32"]);
    let i = instr("cp.async.ca.shared::cta.global.L2::128B [%r1], [%rd1], 16;");
    let mods: Vec<&str> = i.modifiers.iter().map(|m| &*m.name).collect();
    assert_eq!(mods, ["async", "ca", "shared::cta", "global", "L2::128B"]);
    let i = instr("setp .eq .s32 p, a, b;");
    assert_eq!(i.modifiers.len(), 2);
    assert_eq!(i.operands.len(), 3);
    let i = instr(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f5,%f6,%f7,%f8};",
    );
    assert_eq!(i.operands.len(), 4);
}

#[test]
fn operand_forms() {
    let i = instr("mov.u32 %r1, %tid.x;");
    assert!(
        matches!(&i.operands[1], Operand::Symbol { name, component: Some(Component::X), .. } if &*name.name == "%tid")
    );
    let i = instr("cvt.u32.u16 a, input.w;");
    assert!(matches!(&i.operands[1], Operand::Symbol { component: Some(Component::W), .. }));
    let i = instr("mov.b32 a, v.r;");
    assert!(matches!(&i.operands[1], Operand::Symbol { component: Some(Component::X), .. }));
    // Video operand selectors (PTX ISA 9.7.18.1), printed back as written.
    let i = instr("vabsdiff.s32.s32.s32.sat %r1.h0, %r2.b0, %r3.b3, %r4;");
    assert!(matches!(&i.operands[0], Operand::Symbol { component: Some(Component::H0), .. }));
    assert!(matches!(&i.operands[1], Operand::Symbol { component: Some(Component::B0), .. }));
    assert!(matches!(&i.operands[2], Operand::Symbol { component: Some(Component::B3), .. }));
    assert_eq!(i.operands[2].to_string(), "%r3.b3");
    let i = instr("vadd.u32.u32.u32 %r1, %r2.h1, %r3.b1;");
    assert_eq!(i.operands[1].to_string(), "%r2.h1");
    assert!(matches!(&i.operands[2], Operand::Symbol { component: Some(Component::B1), .. }));
    let i = instr("selp.b32 %r1, 1, -1, !%p;");
    assert!(matches!(&i.operands[3], Operand::Not(inner, _) if matches!(**inner, Operand::Symbol { .. })));
    let ops = stripped_operands(&i);
    assert_eq!(ops[1], Operand::Immediate(int(1)));
    assert_eq!(
        ops[2],
        Operand::Immediate(ConstExpr::Unary { op: UnaryOp::Neg, operand: Box::new(int(1)), span: Span::default() })
    );
    let i = instr("add.s32 %r1, %r1, (4*8);");
    assert!(matches!(&stripped_operands(&i)[2], Operand::Immediate(ConstExpr::Binary { op: BinaryOp::Mul, .. })));
    let i = instr("mov.f32 %f1, 0f3F800000;");
    assert!(matches!(&i.operands[1], Operand::Immediate(ConstExpr::Float { kind: FloatLiteral::HexF32, .. })));
    let i = instr("and.b32 %r1, %r1, 0x10;");
    assert_eq!(stripped_operands(&i)[2], Operand::Immediate(int(16)));
    let i = instr("mov.u64 %rd1, arr+4;");
    assert!(matches!(&i.operands[1], Operand::Immediate(ConstExpr::Binary { op: BinaryOp::Add, .. })));
    let i = instr("mov.u64 %rd1, generic(arr);");
    assert!(matches!(&i.operands[1], Operand::Immediate(ConstExpr::Generic(..))));
}

#[test]
fn address_forms() {
    let addr = |src: &str| -> Address {
        let i = instr(src);
        match stripped_operands(&i).into_iter().last() {
            Some(Operand::Address(a)) => *a,
            other => panic!("{other:?}"),
        }
    };
    let neg4 = ConstExpr::Unary { op: UnaryOp::Neg, operand: Box::new(int(4)), span: Span::default() };
    assert_eq!(addr("ld.u32 a, [%rd1];").offset, None);
    assert_eq!(addr("ld.u32 a, [%rd1+8];").offset, Some(int(8)));
    assert_eq!(addr("ld.u32 a, [%rd1+-4];").offset, Some(neg4.clone()));
    assert_eq!(addr("ld.u32 a, [%rd1-4];").offset, Some(neg4.clone()));
    assert_eq!(addr("ld.u32 a, [%rd1 + (4*2)];").offset.map(|o| matches!(o, ConstExpr::Binary { .. })), Some(true));
    let a = addr("ld.u32 a, [name+4];");
    assert_eq!(a.base.map(|b| b.name), Some("name".into()));
    let a = addr("ld.u32 a, [0x100];");
    assert_eq!((a.base, a.offset), (None, Some(int(256))));
    // `[a-4+2]` keeps the sign on the 4 only.
    let a = addr("ld.u32 a, [x-4+2];");
    assert_eq!(
        a.offset,
        Some(ConstExpr::Binary {
            op: BinaryOp::Add,
            lhs: Box::new(neg4),
            rhs: Box::new(int(2)),
            span: Span::default()
        })
    );
    let src = ".entry k() { ld.u32 a, [%rd1+-4]; }";
    let m = ok(src);
    let Some(Statement::Instruction(i)) = function(&m, 0).body.as_ref().and_then(|b| b.statements.first()) else {
        panic!()
    };
    assert_eq!(text(src, i.operands[1].span()), "[%rd1+-4]");
    assert_eq!(text(src, i.span), "ld.u32 a, [%rd1+-4];");
}

#[test]
fn vectors_lists_pairs_sinks() {
    let i = instr("ld.global.v4.u32 {%r1, %r2, _, %r4}, [%rd1];");
    assert!(matches!(&i.operands[0], Operand::Vector(v, _) if v.len() == 4 && matches!(v[2], Operand::Sink(_))));
    let i = instr("shfl.sync.down.b32 %r2|%p1, %r1, 1, 31, -1;");
    assert!(matches!(&i.operands[0], Operand::Pair(..)));
    let i = instr("setp.eq.s32 _|%p1, %r1, 1;");
    assert!(matches!(&i.operands[0], Operand::Pair(a, _, _) if matches!(**a, Operand::Sink(_))));
    let i = instr("call.uni (retval0), _Z3fooi, (param0, param1);");
    assert!(matches!(&i.operands[0], Operand::List(v, _) if v.len() == 1));
    assert!(matches!(&i.operands[2], Operand::List(v, _) if v.len() == 2));
    let i = instr("call.uni foo, ();");
    assert!(matches!(&i.operands[1], Operand::List(v, _) if v.is_empty()));
    let i = instr("call foo;");
    assert_eq!(i.operands.len(), 1);
    let i = instr("ret;");
    assert!(i.operands.is_empty());
    let i = instr("call (retval0), %rd5, (param0), prototype_0;");
    assert_eq!(i.operands.len(), 4);
}

#[test]
fn nvcc_call_sequence_with_newlines() {
    body(
        "{ // callseq 0, 0\n\t.reg .b32 temp_param_reg;\n\t.param .b64 param0;\n\tst.param.b64 \t[param0+0], %rd1;\n\t.param .b32 retval0;\n\tcall.uni (retval0), \n\t_Z3fooi, \n\t(\n\tparam0\n\t);\n\tld.param.b32 \t%r2, [retval0+0];\n\t} // callseq 0\n.pragma \"nounroll\";\n",
    );
}

#[test]
fn module_pragma_and_comments() {
    let m = ok("// header\n/* block\n comment */ .pragma \"abi_param_reg all\";\n");
    assert!(matches!(&m.items[0], Item::Pragma(p) if &*p.text == "abi_param_reg all"));
}

#[test]
fn float_literal_printing_keeps_bits() {
    for lit in ["0.1", "1.5e-7", "3.0", "123456789.125", "1e300"] {
        let m = ok(&format!(".global .f64 x = {lit};"));
        let Item::Variable(v) = &m.items[0] else { panic!() };
        let Some(Initializer::Expr(ConstExpr::Float { bits, .. })) = &v.init else { panic!() };
        assert_eq!(f64::from_bits(*bits), lit.parse::<f64>().unwrap_or(f64::NAN));
    }
}

// ---- errors and recovery -------------------------------------------------------------------

fn errors(src: &str) -> Vec<Diagnostic> {
    parse(src).diagnostics
}

#[test]
fn missing_semicolon_is_reported_and_parsing_continues() {
    let src = ".entry k() {\n add.u32 a, b, c\n mov.u32 d, e;\n ret;\n}\n.entry j() { ret; }";
    let p = parse(src);
    assert_eq!(p.diagnostics.len(), 1, "{:#?}", p.diagnostics);
    let d = &p.diagnostics[0];
    assert!(d.message.contains("expected `,` or `;`") && d.message.contains("`mov`"), "{}", d.message);
    assert_eq!(d.help.as_deref(), Some("instructions must end with `;` and separate operands with `,`"));
    // Both kernels are still there, and the `ret` after the bad statement.
    assert_eq!(p.module.items.len(), 2);
    let Some(b) = &function(&p.module, 0).body else { panic!() };
    assert!(matches!(b.statements.last(), Some(Statement::Instruction(i)) if &*i.opcode.name == "ret"));
}

#[test]
fn several_errors_are_all_reported() {
    let d = errors(".entry k() {\n .reg .b32 ;\n add.u32 a, , c;\n .bogus x;\n ld.u32 a, [b+];\n ret;\n}\n");
    assert_eq!(d.len(), 4, "{d:#?}");
    assert!(d.iter().all(|d| d.severity == Severity::Error));
    assert!(d.windows(2).all(|w| w[0].span.start <= w[1].span.start));
}

#[test]
fn module_level_instruction_is_an_error() {
    let p = parse("add.u32 a, b, c;\n.entry k() { ret; }");
    assert_eq!(p.diagnostics.len(), 1, "{:#?}", p.diagnostics);
    assert!(p.diagnostics[0].message.contains("outside a function body"));
    assert_eq!(p.module.items.len(), 1);
}

#[test]
fn unclosed_block_and_unknown_characters() {
    let d = errors(".entry k() {\n ret;\n");
    assert_eq!(d.len(), 1);
    assert!(d[0].message.contains("end of file"));
    assert_eq!(d[0].secondary.len(), 1);
    let d = errors(".entry k() { mov.u32 a, #; ret; }");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].message.contains("unexpected character `#`"));
    let d = errors(".entry k() { ret; } /* open");
    assert!(d[0].message.contains("unterminated block comment"));
}

#[test]
fn bad_literals_are_reported() {
    let d = errors(".global .u32 a = 099;\n.global .u64 b = 99999999999999999999999;\n.global .f64 c = 1e999;");
    assert_eq!(d.len(), 3, "{d:#?}");
}

#[test]
fn deep_nesting_is_reported_not_overflowed() {
    let deep_blocks = format!(".entry k() {}{} ret; }}", "{".repeat(10_000), "}".repeat(10_000));
    let d = errors(&deep_blocks);
    assert!(d.iter().any(|d| d.message.contains("nesting deeper")), "{d:#?}");
    let deep_parens = format!(".entry k() {{ add.u32 a, a, {}1{}; }}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(errors(&deep_parens).iter().any(|d| d.message.contains("nesting deeper")));
    let deep_unary = format!(".global .u32 x = {}1;", "-".repeat(10_000));
    assert!(errors(&deep_unary).iter().any(|d| d.message.contains("nesting deeper")));
    let deep_init = format!(".global .u32 x[1] = {}1{};", "{".repeat(10_000), "}".repeat(10_000));
    assert!(errors(&deep_init).iter().any(|d| d.message.contains("nesting deeper")));
    // Just under the limit is fine.
    let ok_parens = format!(".entry k() {{ add.u32 a, a, {}1{}; }}", "(".repeat(200), ")".repeat(200));
    assert!(errors(&ok_parens).is_empty());
}

#[test]
fn branch_and_call_targets() {
    let stmts = body("TARGETS: .branchtargets PATH_1, PATH_2, PATH_3;\nFT: .calltargets f;\nbrx.idx %sel, TARGETS;");
    let Statement::BranchTargets(t) = &stmts[0] else { panic!("{:?}", stmts[0]) };
    assert_eq!(&*t.label.name, "TARGETS");
    let names: Vec<&str> = t.targets.iter().map(|i| &*i.name).collect();
    assert_eq!(names, ["PATH_1", "PATH_2", "PATH_3"]);
    assert!(matches!(&stmts[1], Statement::CallTargets(t) if t.targets.len() == 1));
}

#[test]
fn unclosed_deep_nesting_is_one_diagnostic() {
    let d = errors(&format!(".entry k() {}", "{".repeat(10_000)));
    assert_eq!(d.len(), 1, "{d:#?}");
    let d = errors(&format!(".entry k() {}", "{".repeat(100)));
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].message.contains("end of file"));
    // Stray `;` are empty declarations, like empty statements in a body.
    assert!(errors(";;\n.entry k() { ;; ret; };").is_empty());
}

#[test]
fn texture_and_surface_operands() {
    // PTX ISA 9.7.9: `[tex, {coords}]`, `[tex, sampler, {coords}]`, `[surf, {x}]`; the loader
    // refuses them (gap `texture`), but they parse, print and round-trip.
    let i = instr("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex_a, smp, {%f5, %f6}];");
    match &i.operands[1] {
        Operand::Bracketed(items, _) => {
            assert_eq!(items.len(), 3);
            assert!(matches!(&items[0], Operand::Symbol { name, .. } if &*name.name == "tex_a"));
            assert!(matches!(&items[2], Operand::Vector(v, _) if v.len() == 2));
        }
        other => panic!("expected a bracketed operand list, got {other:?}"),
    }
    let st = instr("sust.b.1d.v4.b32.trap [surf, {%r5}], {%r1, %r2, %r3, %r4};");
    assert!(matches!(&st.operands[0], Operand::Bracketed(items, _) if items.len() == 2));
    // An address keeps its meaning: no comma inside the brackets.
    let ld = instr("ld.global.u32 %r1, [%rd1+4];");
    assert!(matches!(&ld.operands[1], Operand::Address(_)));
}

#[test]
fn sampler_initializer_fields() {
    let m = ok(".version 7.0\n.target sm_70\n.address_size 64\n\
                .global .samplerref smp = { addr_mode_0 = clamp_to_edge, filter_mode = linear };\n");
    let v = variable(&m, 0);
    match &v.init {
        Some(Initializer::List(items, _)) => {
            assert_eq!(items.len(), 2);
            assert!(matches!(&items[1], Initializer::Field { name, .. } if &*name.name == "filter_mode"));
        }
        other => panic!("expected a field list, got {other:?}"),
    }
}

#[test]
fn align_must_be_a_power_of_two() {
    let src =
        ".version 7.0\n.target sm_70\n.address_size 64\n.global .align 3 .b8 x[4];\n.global .align 131072 .b8 y[4];\n";
    let parsed = parse(src);
    assert_eq!(parsed.diagnostics.len(), 1, "{:#?}", parsed.diagnostics);
    let d = &parsed.diagnostics[0];
    assert!(d.message.contains("alignment 3 is not a power of two"), "{}", d.message);
    assert_eq!(text(src, d.span), "3");
    // Recovery: both declarations are still there.
    assert_eq!(variable(&parsed.module, 1).align, Some(131072));
    ok(".version 7.0\n.target sm_70\n.address_size 64\n.global .align 65536 .b8 y[4];\n");
}
