mod common;
use common::read;
use semantics::machine::{Machine, MemoryKind};
use std::sync::Arc;
fn main() {
    use litmus::{parse::parse, translate::translate};
    let name = std::env::args().nth(1).unwrap();
    let text = read(&format!("tests/litmus/families/{name}.litmus"));
    let t = translate(&parse(&text).unwrap(), MemoryKind::Flat).unwrap();
    println!("{}", t.ptx);
    let program = litmus::load(&t.ptx).unwrap();
    let mut m = Machine::new(Arc::new(program), &t.launch, &t.config).unwrap();
    let mut path = Vec::new();
    explore::settle(&mut m, &mut path).unwrap();
    println!("settled {:?}", path);
    while m.termination().is_none() {
        let en = explore::branches(&m);
        let c = en[0];
        let mut taken = Vec::new();
        let fp = explore::fold::step_folded(
            &mut m,
            &c,
            explore::Folding::Invisible,
            None,
            None,
            true,
            &mut taken,
        )
        .unwrap();
        let n = taken.len();
        explore::settle(&mut m, &mut taken).unwrap();
        println!(
            "{c:?} enabled {} steps {} settled {:?} fp {:?}",
            en.len(),
            n,
            &taken[n..],
            fp
        );
    }
}
