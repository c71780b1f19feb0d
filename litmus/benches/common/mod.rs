//! What the exploration benches share: reading a corpus file (from `$CUDASEM_ROOT`, default the
//! workspace, so a built bench can run elsewhere) and the grid barrier machine, from the corpus
//! crate's bench support (the explore crate's benches use the same).
#![allow(unused_imports)]

pub use corpus::bench_support::{grid_barrier, read};
