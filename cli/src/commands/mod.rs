//! One module per subcommand: argument struct (clap) and `run(args) -> Exit`.

pub mod cc;
pub mod cfg;
pub mod check;
pub mod debug;
pub mod explore;
pub mod explore_outcomes;
pub mod fuzz;
pub mod launch_gen;
pub mod litmus;
pub mod merge;
pub mod parse;
pub mod progress;
pub mod replay;
pub mod rules;
pub mod run;
pub mod view;
