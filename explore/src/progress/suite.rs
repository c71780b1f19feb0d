//! The progress conformance data: `expected.csv` rows and where the suite lives.
//!
//! The suite (`conformance/progress/`: `tests/*.txt` and `expected.csv`) is the paper
//! artifact's 483 tests with the verdicts of all 11 models and `sequential_in_order_hangs`
//! (README there). It is found at `<conformance root>/progress` when the caller names a root
//! (the value of `CUDASEM_CONFORMANCE`, which only callers outside the library read), else at
//! a default the caller supplies (tests use `<workspace>/../shared/conformance/progress`).
//! No I/O but checking that a directory exists.

use super::model::ProgressModel;
use super::oracle::Verdict;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The environment variable naming the conformance root (its `progress/` subdirectory).
pub const ENV: &str = "CUDASEM_CONFORMANCE";

/// The progress suite directory: `root/progress` if a conformance root is given (the
/// value of [`ENV`], read by the caller), else `default`; `None` if that directory does not
/// exist.
pub fn locate(root: Option<&OsStr>, default: &Path) -> Option<PathBuf> {
    let dir = match root {
        Some(root) => PathBuf::from(root).join("progress"),
        None => default.to_path_buf(),
    };
    dir.join("expected.csv").is_file().then_some(dir)
}

/// One row of `expected.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedRow {
    pub test: String,
    /// In [`ProgressModel::ALL`] order.
    pub verdicts: [Verdict; 11],
    pub sequential_in_order_hangs: bool,
}

/// Parses `expected.csv`: header `test,<11 model columns in any order>,sequential_in_order_hangs`.
pub fn parse_expected(csv: &str) -> Result<Vec<ExpectedRow>, String> {
    let mut lines = csv
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or("expected.csv is empty")?;
    let columns: Vec<&str> = header.trim().split(',').collect();
    let find = |name: &str| {
        columns
            .iter()
            .position(|c| *c == name)
            .ok_or(format!("expected.csv: no column `{name}`"))
    };
    let test_col = find("test")?;
    let seq_col = find("sequential_in_order_hangs")?;
    let model_cols: Vec<usize> = ProgressModel::ALL
        .iter()
        .map(|m| find(m.name()))
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::new();
    for (i, line) in lines {
        let cells: Vec<&str> = line.trim().split(',').collect();
        let cell = |c: usize| {
            cells
                .get(c)
                .copied()
                .ok_or(format!("expected.csv:{}: too few cells", i + 1))
        };
        let mut verdicts = [Verdict::Pass; 11];
        for (v, &c) in verdicts.iter_mut().zip(&model_cols) {
            *v = match cell(c)? {
                "P" => Verdict::Pass,
                "F" => Verdict::Fail,
                other => {
                    return Err(format!(
                        "expected.csv:{}: verdict `{other}` is neither P nor F",
                        i + 1
                    ));
                }
            };
        }
        let seq = match cell(seq_col)? {
            "yes" => true,
            "no" => false,
            other => {
                return Err(format!(
                    "expected.csv:{}: `{other}` is neither yes nor no",
                    i + 1
                ));
            }
        };
        rows.push(ExpectedRow {
            test: cell(test_col)?.to_string(),
            verdicts,
            sequential_in_order_hangs: seq,
        });
    }
    Ok(rows)
}
