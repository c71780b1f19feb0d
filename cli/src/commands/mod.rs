//! One module per subcommand: argument struct (clap) and `run(args) -> Outcome`.

pub mod cfg;
pub mod parse;
pub mod progress;
pub mod run;
