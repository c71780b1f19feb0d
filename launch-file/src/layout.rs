//! The bytes of a parameter passed by value (`Bytes`, `Struct`): fields at multiples of their
//! alignment, padded at the end, as C lays out a struct.

use crate::{Arg, ValueError};

/// A by-value argument's bytes: `bytes`, the buffer names whose addresses go at byte offsets, and
/// the alignment its layout needs.
pub(crate) struct Laid {
    pub(crate) bytes: Vec<u8>,
    pub(crate) pointers: Vec<(u32, String)>,
    pub(crate) align: u32,
}

/// Lays out `arg` as the bytes of a by-value parameter (see [`Arg::Struct`]).
pub(crate) fn lay_out(arg: &Arg) -> Result<Laid, ValueError> {
    Ok(match arg {
        Arg::Buffer(name) => Laid {
            bytes: vec![0; 8],
            pointers: vec![(0, name.clone())],
            align: 8,
        },
        Arg::Null => Laid {
            bytes: vec![0; 8],
            pointers: Vec::new(),
            align: 8,
        },
        Arg::Scalar { elem, value } => {
            let bits = value.encode(*elem)?;
            let n = elem.size();
            Laid {
                bytes: bits.to_le_bytes()[..n].to_vec(),
                pointers: Vec::new(),
                align: n as u32,
            }
        }
        Arg::Bytes(bytes) => Laid {
            bytes: bytes.clone(),
            pointers: Vec::new(),
            align: 1,
        },
        Arg::Struct(fields) => {
            let mut out = Laid {
                bytes: Vec::new(),
                pointers: Vec::new(),
                align: 1,
            };
            for field in fields {
                let f = lay_out(field)?;
                let at = out.bytes.len().next_multiple_of(f.align as usize);
                out.bytes.resize(at, 0);
                out.pointers
                    .extend(f.pointers.into_iter().map(|(o, b)| (o + at as u32, b)));
                out.bytes.extend_from_slice(&f.bytes);
                out.align = out.align.max(f.align);
            }
            let end = out.bytes.len().next_multiple_of(out.align as usize);
            out.bytes.resize(end, 0);
            out
        }
    })
}
