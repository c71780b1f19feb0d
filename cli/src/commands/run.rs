//! `cudasem run`.

use crate::Outcome;

#[derive(clap::Args)]
pub struct Args {
    /// The PTX file.
    pub file: std::path::PathBuf,
}

pub fn run(args: Args) -> Outcome {
    let _ = args;
    eprintln!("cudasem run: not implemented yet");
    Outcome::BadInput
}
