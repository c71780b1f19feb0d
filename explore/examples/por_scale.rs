//! The stateful search with and without persistent sets (`explore::ample`) on a corpus kernel
//! at a grid size, `fair` at block level: states, machine states, reduced states, time and
//! verdict, one line. Peak memory: run it under `/usr/bin/time -f %M`
//! (`bench/explore-por.sh` does, for the grid barrier and the spin lock at 2..8 blocks).
//!
//!   cargo run --release -p explore --example por_scale -- KERNEL BLOCKS none|persistent [TIMEOUT_S]

use corpus::{kernels_dir, load_file, observe_globals, read_launch, resolve};
use explore::progress::ProgressModel;
use explore::{Level, Limits, Por, explore_with};
use scheduler::Stop;
use semantics::machine::{Machine, MachineConfig};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(kernel), Some(blocks), Some(por)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("usage: por_scale KERNEL BLOCKS none|persistent [TIMEOUT_S]");
        std::process::exit(2);
    };
    let blocks: u32 = blocks.parse().expect("BLOCKS: a number");
    let por = match por.as_str() {
        "none" => Por::None,
        "persistent" => Por::Persistent,
        other => panic!("unknown reduction {other}: none or persistent"),
    };
    let timeout: u64 = args
        .get(3)
        .map_or(30, |t| t.parse().expect("TIMEOUT_S: a number"));
    let ptx = kernels_dir().join(format!("{kernel}.ptx"));
    let program = load_file(&ptx).expect("a corpus kernel");
    let launch = read_launch(&ptx.with_extension("ron")).expect("its launch file");
    let mut resolved = resolve(&launch, &program).expect("a launch that resolves");
    resolved.config.grid = [blocks, 1, 1];
    let observe = observe_globals(&program, resolved.print.clone());
    let m = Machine::new(
        Arc::new(program),
        &resolved.config,
        &MachineConfig::default(),
    )
    .expect("a machine");
    let stop = Arc::new(Stop::new());
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(timeout));
            stop.request();
        });
    }
    let limits = Limits {
        max_states: 100_000_000,
        ..Limits::default()
    };
    let start = Instant::now();
    let x = explore_with(&m, Level::Blocks, &observe, limits, por, &stop).expect("explored");
    let secs = start.elapsed().as_secs_f64();
    let fair: ProgressModel = "fair".parse().expect("a model");
    let verdict = match (x.bound_hit, x.verdict(fair)) {
        (Some(b), _) => format!("bound hit ({b:?})"),
        (None, v) => format!("{v:?}"),
    };
    println!(
        "{kernel} {blocks} {por:?}: {} states, {} machine states ({} reduced), {secs:.2} s, fair: {verdict}",
        x.states(),
        x.machine_states,
        x.reduced_states
    );
}
