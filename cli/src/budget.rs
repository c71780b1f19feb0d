//! The memory budget of a command (`--max-memory`): what a launch's buffers may take before
//! anything is allocated. The default is half of the machine's memory (`MemTotal` in
//! `/proc/meminfo`; 4 GiB where that cannot be read), so an absurd launch is refused with a
//! clear message and exit code 2 instead of being killed by the operating system.

use crate::error::Error;
use std::sync::OnceLock;

static BUDGET: OnceLock<u64> = OnceLock::new();

/// Where `/proc/meminfo` cannot be read.
const FALLBACK: u64 = 4 << 30;

/// Sets the budget (once, from `main`); `None` keeps the default.
pub fn set(max_memory: Option<u64>) {
    if let Some(b) = max_memory {
        let _ = BUDGET.set(b);
    }
}

/// The budget in bytes.
pub fn bytes() -> u64 {
    *BUDGET.get_or_init(|| machine_memory().map_or(FALLBACK, |m| m / 2))
}

/// The machine's memory in bytes (`MemTotal`), where the system says.
fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// `--max-memory 512M`: bytes, with an optional K, M, G or T suffix (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, Error> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => {
                    return Err(Error::Usage(format!(
                        "`{text}`: write a number of bytes with an optional K, M, G or T suffix (e.g. 512M)"
                    )));
                }
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: u64 = digits.parse().map_err(|_| {
        Error::Usage(format!(
            "`{text}` is not a size: write e.g. 4096, 512M or 2G"
        ))
    })?;
    n.checked_mul(1 << shift).filter(|&b| b > 0).ok_or_else(|| {
        Error::Usage(format!(
            "`{text}`: the size must be positive and below 16 EiB"
        ))
    })
}

pub use launch_file::size_text;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes_and_bad_ones_say_why() {
        assert_eq!(parse_size("4096").ok(), Some(4096));
        assert_eq!(parse_size("512M").ok(), Some(512 << 20));
        assert_eq!(parse_size("2g").ok(), Some(2 << 30));
        assert!(parse_size("0").is_err());
        assert!(
            parse_size("12X")
                .unwrap_err()
                .to_string()
                .contains("suffix")
        );
        assert!(
            parse_size("x5")
                .unwrap_err()
                .to_string()
                .contains("not a size")
        );
        assert!(parse_size("99999999999T").is_err());
    }
}
