//! Buffer contents: sizes, the checks of an initialiser without building it, and the initial
//! bytes (`Zeros`, `Range`, `Values`, `Random`, `File`).

use crate::{BufferDesc, Elem, ElemKind, Init, LaunchError, Num, ValueError};

/// `8.0 GiB (8589934592 bytes)`, for messages.
pub fn size_text(bytes: u64) -> String {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    if gib >= 1.0 {
        format!("{gib:.1} GiB ({bytes} bytes)")
    } else {
        format!(
            "{:.1} MiB ({bytes} bytes)",
            bytes as f64 / (1u64 << 20) as f64
        )
    }
}
/// Copies of a buffer a run holds: the launch's, the initial machine's, the running machine's.
pub(crate) const BUFFER_COPIES: u64 = 3;

/// Memory to print one element: its decoded value and its text.
pub(crate) const PRINTED_BYTES_PER_ELEMENT: u64 = 64;

/// The largest buffer, in bytes.
pub(crate) const MAX_BUFFER_BYTES: usize = 1 << 34;

/// The buffer's size in bytes, within [`MAX_BUFFER_BYTES`].
pub(crate) fn buffer_bytes(b: &BufferDesc) -> Result<usize, LaunchError> {
    usize::try_from(b.len)
        .ok()
        .and_then(|n| n.checked_mul(b.elem.size()))
        .filter(|&n| n <= MAX_BUFFER_BYTES)
        .ok_or_else(|| {
            LaunchError::new(format!(
                "buffer `{}`: {} elements of {} is too large",
                b.name,
                b.len,
                b.elem.name()
            ))
            .at(b.location.clone())
            .help("buffers are limited to 16 GiB")
        })
}

/// Checks a buffer's size and initialiser without building it: every value of `Values`, the
/// first element of a `Range` that leaves the type (found by bisection: a range is monotone),
/// the bounds of `Random`. `File` is read at resolution.
pub(crate) fn check_init(b: &BufferDesc) -> Result<(), LaunchError> {
    buffer_bytes(b)?;
    let err = |msg: String| {
        LaunchError::new(format!("buffer `{}`: {msg}", b.name)).at(b.location.clone())
    };
    match &b.init {
        Init::Zeros | Init::File(_) => Ok(()),
        Init::Values(values) => {
            if values.len() as u64 > b.len {
                return Err(err(format!(
                    "Values has {} elements but len is {}",
                    values.len(),
                    b.len
                ))
                .help("make len at least the number of values, or drop values"));
            }
            for (i, v) in values.iter().enumerate() {
                v.encode(b.elem)
                    .map_err(|e| err(format!("value {i}: {e}")))?;
            }
            Ok(())
        }
        Init::Range { .. } => {
            // Element 0, then the first bad element if the last one is bad.
            let bad = |i: u64| range_element(b, i).is_err();
            let last = b.len - 1;
            let first_bad = if bad(0) {
                Some(0)
            } else if bad(last) {
                let (mut good, mut bad_at) = (0, last);
                while bad_at - good > 1 {
                    let mid = good + (bad_at - good) / 2;
                    if bad(mid) {
                        bad_at = mid;
                    } else {
                        good = mid;
                    }
                }
                Some(bad_at)
            } else {
                None
            };
            match first_bad {
                Some(i) => range_element(b, i).map(|_| ()),
                None => Ok(()),
            }
        }
        Init::Random { min, max, .. } => random_values(b.elem, 0, *min, *max, 0)
            .map(|_| ())
            .map_err(|e| err(e.to_string())),
    }
}

/// Element `i` of a `Range` buffer, encoded (the error names the element and the value).
pub(crate) fn range_element(b: &BufferDesc, i: u64) -> Result<u64, LaunchError> {
    let Init::Range { start, step } = &b.init else {
        return Ok(0);
    };
    let err = |msg: String| {
        LaunchError::new(format!("buffer `{}`: {msg}", b.name)).at(b.location.clone())
    };
    match b.elem.kind() {
        ElemKind::Float => {
            let (s, d) = (start.as_f64(), step.as_f64());
            Num::Float(s + i as f64 * d)
                .encode(b.elem)
                .map_err(|e| err(format!("element {i}: {e}")))
        }
        _ => {
            let (Some(s), Some(d)) = (start.as_int(), step.as_int()) else {
                return Err(err(format!(
                    "Range(start: {start}, step: {step}) needs integers for {}",
                    b.elem.name()
                )));
            };
            let v = s + i as i128 * d;
            Num::Int(v).encode(b.elem).map_err(|e| {
                err(format!("Range reaches {v} at element {i}: {e}"))
                    .help("choose a start and step that stay in the type's range, or a wider type")
            })
        }
    }
}

/// `n` zero bytes, or the error that they do not fit in memory (never an abort).
pub(crate) fn zeroed(n: usize, b: &BufferDesc) -> Result<Vec<u8>, LaunchError> {
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(n).map_err(|_| {
        LaunchError::new(format!(
            "buffer `{}` does not fit in memory ({n} bytes)",
            b.name
        ))
        .at(b.location.clone())
        .help("make the buffer smaller or free memory")
    })?;
    bytes.resize(n, 0);
    Ok(bytes)
}

/// The buffer's initial bytes.
pub(crate) fn build_bytes(b: &BufferDesc) -> Result<Vec<u8>, LaunchError> {
    let size = b.elem.size();
    let err = |msg: String| {
        LaunchError::new(format!("buffer `{}`: {msg}", b.name)).at(b.location.clone())
    };
    let total = buffer_bytes(b)?;
    check_init(b)?;
    let mut bytes = zeroed(total, b)?;
    let len = b.len as usize;
    let mut put = |i: usize, bits: u64| {
        bytes[i * size..(i + 1) * size].copy_from_slice(&bits.to_le_bytes()[..size])
    };
    match &b.init {
        Init::Zeros => {}
        // `check_init` refused more values than elements.
        Init::Values(values) => {
            for (i, v) in values.iter().enumerate() {
                put(
                    i,
                    v.encode(b.elem)
                        .map_err(|e| err(format!("value {i}: {e}")))?,
                );
            }
        }
        Init::Range { .. } => {
            for i in 0..len {
                put(i, range_element(b, i as u64)?);
            }
        }
        Init::Random { seed, min, max } => {
            let values =
                random_values(b.elem, *seed, *min, *max, len).map_err(|e| err(e.to_string()))?;
            for (i, v) in values.into_iter().enumerate() {
                put(i, v);
            }
        }
        Init::File(file) => {
            use std::io::Read;
            let path = b.base_dir.join(file);
            let cannot = |e: std::io::Error| {
                err(format!("cannot read {}: {e}", path.display()))
                    .help("File paths are relative to the launch file")
            };
            // Read at most one byte more than the buffer holds: a file that never ends
            // (`/dev/zero`) or a huge one is refused without being read whole.
            let mut data = Vec::new();
            std::fs::File::open(&path)
                .and_then(|f| f.take(total as u64 + 1).read_to_end(&mut data))
                .map_err(cannot)?;
            if data.len() > total || data.len() % size != 0 {
                let has = if data.len() > total {
                    format!("more than {total}")
                } else {
                    data.len().to_string()
                };
                return Err(err(format!(
                    "{} has {has} bytes; the buffer takes at most {} bytes in whole {}-byte elements",
                    path.display(),
                    total,
                    size
                )));
            }
            bytes[..data.len()].copy_from_slice(&data);
        }
    }
    Ok(bytes)
}

/// Why `Random(seed, min, max)` cannot fill a buffer of its type.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RandomError {
    /// A float type's bounds are not finite or not ordered.
    #[error("Random needs finite min <= max, got min {min}, max {max}")]
    FloatBounds { min: Num, max: Num },
    /// An integer type's bounds are not integers.
    #[error("Random(min: {min}, max: {max}) needs integers for {}", .elem.name())]
    NotIntegers { min: Num, max: Num, elem: Elem },
    /// An integer type's bounds are not ordered.
    #[error("Random needs min <= max, got min {lo}, max {hi}")]
    Reversed { lo: i128, hi: i128 },
    /// The lower bound is not a value of the type.
    #[error("Random min: {0}")]
    Min(ValueError),
    /// The upper bound is not a value of the type.
    #[error("Random max: {0}")]
    Max(ValueError),
    /// A drawn value is not a value of the type.
    #[error(transparent)]
    Value(#[from] ValueError),
}

/// `len` pseudo-random elements' bits (module doc: the algorithm).
pub fn random_values(
    elem: Elem,
    seed: u64,
    min: Num,
    max: Num,
    len: usize,
) -> Result<Vec<u64>, RandomError> {
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::{Rng, SeedableRng};
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(len);
    match elem.kind() {
        ElemKind::Float => {
            let (lo, hi) = (min.as_f64(), max.as_f64());
            if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
                return Err(RandomError::FloatBounds { min, max });
            }
            for _ in 0..len {
                let bits = match elem {
                    Elem::F64 => loop {
                        let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                        let v = lo + u * (hi - lo);
                        if v < hi || lo == hi {
                            break v.to_bits();
                        }
                    },
                    _ => {
                        let (lo, hi) = (lo as f32, hi as f32);
                        let v = loop {
                            let u = (rng.next_u64() >> 40) as f32 * (1.0 / (1u32 << 24) as f32);
                            let v = lo + u * (hi - lo);
                            if v < hi || lo == hi {
                                break v;
                            }
                        };
                        Num::Float(v as f64).encode(elem)?
                    }
                };
                out.push(bits);
            }
        }
        _ => {
            let (Some(lo), Some(hi)) = (min.as_int(), max.as_int()) else {
                return Err(RandomError::NotIntegers { min, max, elem });
            };
            if lo > hi {
                return Err(RandomError::Reversed { lo, hi });
            }
            Num::Int(lo).encode(elem).map_err(RandomError::Min)?;
            Num::Int(hi).encode(elem).map_err(RandomError::Max)?;
            // span <= 2^64 because both ends fit a 64-bit type.
            let span = (hi - lo) as u128 + 1;
            for _ in 0..len {
                let offset = if span == 1 << 64 {
                    rng.next_u64() as u128
                } else {
                    let span = span as u64;
                    // Accept x >= 2^64 mod span: the accepted range is a multiple of span.
                    let threshold = span.wrapping_neg() % span;
                    loop {
                        let x = rng.next_u64();
                        if x >= threshold {
                            break (x % span) as u128;
                        }
                    }
                };
                out.push(Num::Int(lo + offset as i128).encode(elem)?);
            }
        }
    }
    Ok(out)
}
