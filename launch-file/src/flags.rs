//! The quick-launch flags (`--kernel --grid --block --buffer --arg --global --shared --print
//! --expect`): they override a launch file's fields or describe a whole launch without one.

use crate::{
    Arg, BufferDesc, Dim, ELEM_NAMES, Elem, ExpectSource, Init, Launch, LaunchError, Num, expect,
};
use std::path::PathBuf;

/// The quick-launch flags (`cudasem run` parses them with clap; all strings until here).
#[derive(Debug, Clone, Default)]
pub struct LaunchFlags {
    pub kernel: Option<String>,
    pub grid: Option<String>,
    pub block: Option<String>,
    pub shared: Option<u32>,
    /// `name:type:len[:init]`
    pub buffers: Vec<String>,
    /// `buffer:NAME`, `TYPE:VALUE` or `null`
    pub args: Vec<String>,
    /// `name=value`
    pub globals: Vec<String>,
    /// Buffer names (comma separated in the flag).
    pub print: Option<Vec<String>>,
    /// `--expect EXPR` (expectations add to the launch file's; they describe no launch).
    pub expect: Vec<String>,
}

impl LaunchFlags {
    pub fn is_empty(&self) -> bool {
        self.kernel.is_none()
            && self.grid.is_none()
            && self.block.is_none()
            && self.shared.is_none()
            && self.buffers.is_empty()
            && self.args.is_empty()
            && self.globals.is_empty()
            && self.print.is_none()
    }
}

impl Launch {
    /// Overrides fields with the quick-launch flags.
    pub fn apply_flags(&mut self, flags: &LaunchFlags) -> Result<(), LaunchError> {
        if let Some(k) = &flags.kernel {
            self.kernel = Some(k.clone());
        }
        if let Some(g) = &flags.grid {
            self.grid = Some(Dim::parse(g).ok_or_else(|| {
                LaunchError::new(format!("bad --grid `{g}`"))
                    .help("write X, X,Y or X,Y,Z with positive integers, e.g. --grid 4,2")
            })?);
        }
        if let Some(b) = &flags.block {
            self.block = Some(Dim::parse(b).ok_or_else(|| {
                LaunchError::new(format!("bad --block `{b}`"))
                    .help("write X, X,Y or X,Y,Z with positive integers, e.g. --block 64")
            })?);
        }
        if flags.shared.is_some() {
            self.shared = flags.shared;
        }
        for spec in &flags.buffers {
            let desc = parse_buffer_flag(spec)?;
            // A flag buffer replaces the file's buffer of the same name, in its place.
            match self.buffers.iter_mut().find(|b| b.name == desc.name) {
                Some(slot) => *slot = desc,
                None => self.buffers.push(desc),
            }
        }
        if !flags.args.is_empty() {
            self.args = flags
                .args
                .iter()
                .map(|a| parse_arg_flag(a))
                .collect::<Result<_, _>>()?;
        }
        for g in &flags.globals {
            let (name, value) = g.split_once('=').ok_or_else(|| {
                LaunchError::new(format!("bad --global `{g}`"))
                    .help("write NAME=VALUE, e.g. --global lock=1")
            })?;
            let value = Num::parse(value).ok_or_else(|| {
                LaunchError::new(format!("bad --global `{g}`: `{value}` is not a number"))
                    .help("write NAME=VALUE, e.g. --global lock=1")
            })?;
            match self.globals.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = value,
                None => self.globals.push((name.to_string(), value)),
            }
        }
        if let Some(p) = &flags.print {
            self.print = Some(p.clone());
        }
        for e in &flags.expect {
            let parsed = expect::Expectation::parse(e).map_err(|err| {
                ExpectSource {
                    expectation: expect::Expectation::unparsed(e),
                    location: None,
                }
                .error(err)
            })?;
            self.expect.push(ExpectSource {
                expectation: parsed,
                location: None,
            });
        }
        self.check()
    }
}

/// `--buffer name:type:len[:init]`, init `zeros | range:START:STEP | values:1,2,3 |
/// random:SEED:MIN:MAX | file:PATH` (PATH relative to the current directory).
pub fn parse_buffer_flag(spec: &str) -> Result<BufferDesc, LaunchError> {
    let help = "write --buffer NAME:TYPE:LEN[:INIT] with INIT one of zeros, range:START:STEP, values:V1,V2,..., random:SEED:MIN:MAX, file:PATH";
    let bad = |why: String| LaunchError::new(format!("bad --buffer `{spec}`: {why}")).help(help);
    let mut parts = spec.splitn(4, ':');
    let (Some(name), Some(ty), Some(len)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad("expected at least NAME:TYPE:LEN".to_string()));
    };
    if name.is_empty() {
        return Err(bad("the name is empty".to_string()));
    }
    let elem = Elem::parse(ty).ok_or_else(|| {
        bad(format!(
            "unknown element type `{ty}` (element types are {ELEM_NAMES})"
        ))
    })?;
    let len: u64 = len
        .parse()
        .map_err(|_| bad(format!("length `{len}` is not a number")))?;
    let num = |t: &str| Num::parse(t).ok_or_else(|| bad(format!("`{t}` is not a number")));
    let init = match parts.next() {
        None | Some("zeros") => Init::Zeros,
        Some(init) => {
            let (kind, rest) = init.split_once(':').unwrap_or((init, ""));
            match kind {
                "range" => {
                    let (s, d) = rest
                        .split_once(':')
                        .ok_or_else(|| bad("range needs START:STEP".to_string()))?;
                    Init::Range {
                        start: num(s)?,
                        step: num(d)?,
                    }
                }
                "values" => Init::Values(
                    rest.split(',')
                        .filter(|s| !s.trim().is_empty())
                        .map(num)
                        .collect::<Result<_, _>>()?,
                ),
                "random" => {
                    let f: Vec<&str> = rest.split(':').collect();
                    let [seed, min, max] = f.as_slice() else {
                        return Err(bad("random needs SEED:MIN:MAX".to_string()));
                    };
                    let seed = seed
                        .parse()
                        .map_err(|_| bad(format!("seed `{seed}` is not a number")))?;
                    Init::Random {
                        seed,
                        min: num(min)?,
                        max: num(max)?,
                    }
                }
                "file" => Init::File(rest.to_string()),
                other => return Err(bad(format!("unknown init `{other}`"))),
            }
        }
    };
    Ok(BufferDesc {
        name: name.to_string(),
        elem,
        len,
        init,
        base_dir: PathBuf::new(),
        location: None,
    })
}

/// `--arg buffer:NAME | TYPE:VALUE | null`.
pub fn parse_arg_flag(spec: &str) -> Result<Arg, LaunchError> {
    let help = "write --arg buffer:NAME, --arg TYPE:VALUE (e.g. s32:100, f32:2.5), --arg bytes:B0,B1,... (a struct by value) or --arg null";
    if spec.eq_ignore_ascii_case("null") {
        return Ok(Arg::Null);
    }
    if let Some(list) = spec.strip_prefix("bytes:") {
        return list
            .split(',')
            .map(|b| {
                b.trim().parse::<u8>().map_err(|_| {
                    LaunchError::new(format!(
                        "bad --arg `{spec}`: `{b}` is not a byte (0 to 255)"
                    ))
                    .help(help)
                })
            })
            .collect::<Result<Vec<u8>, _>>()
            .map(Arg::Bytes);
    }
    let (ty, value) = spec
        .split_once(':')
        .ok_or_else(|| LaunchError::new(format!("bad --arg `{spec}`")).help(help))?;
    if ty == "buffer" {
        return Ok(Arg::Buffer(value.to_string()));
    }
    let elem = Elem::parse(ty).ok_or_else(|| {
        LaunchError::new(format!(
            "bad --arg `{spec}`: unknown type `{ty}` (element types are {ELEM_NAMES})"
        ))
        .help(help)
    })?;
    let value = Num::parse(value).ok_or_else(|| {
        LaunchError::new(format!("bad --arg `{spec}`: `{value}` is not a number")).help(help)
    })?;
    value
        .encode(elem)
        .map_err(|e| LaunchError::new(format!("bad --arg `{spec}`: {e}")).help(help))?;
    Ok(Arg::Scalar { elem, value })
}
