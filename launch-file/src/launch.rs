//! The launch before resolution: reading a launch file into a [`Launch`] and the checks that
//! need no program (dimensions, names, initialisers against their types, expectations).

use crate::buffers::check_init;
use crate::layout::lay_out;
use crate::locate::{
    find_field_from, find_top_field_from, line_text, list_item_starts, location_of,
};
use crate::syntax::RawLaunch;
use crate::{Arg, Dim, Elem, ExternCall, Init, KernelLaunch, LaunchError, Location, Num, expect};
use semantics::machine::LaunchConfig;
use std::path::{Path, PathBuf};

/// A buffer as described (its bytes are built at resolution).
#[derive(Debug, Clone, PartialEq)]
pub struct BufferDesc {
    pub name: String,
    pub elem: Elem,
    pub len: u64,
    pub init: Init,
    /// Where `File(...)` paths are relative to.
    pub base_dir: PathBuf,
    /// Where the buffer was written, for errors.
    pub location: Option<Location>,
}

/// A launch as read from a file and/or flags, not yet checked against a program.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Launch {
    pub kernel: Option<String>,
    pub grid: Option<Dim>,
    pub block: Option<Dim>,
    pub shared: Option<u32>,
    pub buffers: Vec<BufferDesc>,
    pub args: Vec<Arg>,
    pub globals: Vec<(String, Num)>,
    /// What the body-less functions the kernel calls return.
    pub extern_calls: Vec<(String, ExternCall)>,
    pub print: Option<Vec<String>>,
    /// The launches of a program of several (`launches: [...]`); empty for the one-kernel form
    /// (`kernel`, `grid`, `block`, `args`, `shared` at the top level).
    pub launches: Vec<KernelLaunch>,
    /// What the final buffers must satisfy (`expect: [...]`, then `--expect` flags).
    pub expect: Vec<ExpectSource>,
    /// The contexts of a file with `contexts: [...]` (thesis 5.8), each a launch of its own
    /// buffers, launches and print list; empty otherwise (the file is one context). The
    /// launch holding them has nothing else.
    pub contexts: Vec<Launch>,
    /// The file it came from and its text, for locating errors found later.
    pub(crate) source: Option<(String, String)>,
    /// Where the launch's own text starts in the file (a context's opening parenthesis; 0 for
    /// the file's launch): errors are located from there on.
    pub(crate) start: usize,
    /// A context of `contexts: [...]`: its index and the number of contexts, which its
    /// resolution errors name (`context 2 of 2: ...`).
    pub(crate) context: Option<(usize, usize)>,
}

/// An expectation as written in the launch file or given with `--expect`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectSource {
    pub expectation: expect::Expectation,
    /// Where its text starts in the launch file (`None` for a flag).
    pub location: Option<Location>,
}

impl ExpectSource {
    /// The error `e` of this expectation, located in the launch file (line and column of the
    /// offending character) or named as the flag.
    pub(crate) fn error(&self, e: expect::ExpectError) -> LaunchError {
        let text = &self.expectation.text;
        match &self.location {
            Some(loc) => {
                let mut at = loc.clone();
                at.col += e.at;
                LaunchError::new(format!("bad expectation: {}", e.message))
                    .at(Some(at))
                    .help(e.help)
            }
            None => LaunchError::new(format!(
                "bad --expect `{text}`: {} (at column {})",
                e.message,
                e.at + 1
            ))
            .help(e.help),
        }
    }
}

/// A launch after checking against the program: what the machine needs, plus what printing needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub config: LaunchConfig,
    pub kernel: String,
    /// Element type of each buffer (same order as `config.buffers`).
    pub elems: Vec<Elem>,
    /// Indices of the buffers to print, in print order.
    pub print: Vec<usize>,
    /// The expectations, bound to the buffers.
    pub expect: Vec<expect::Bound>,
}

pub(crate) fn ron_options() -> ron::Options {
    // `kernel: "vecadd"` rather than `kernel: Some("vecadd")`.
    ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
}

impl Launch {
    /// Reads a launch file.
    pub fn read(path: &Path) -> Result<Launch, LaunchError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            LaunchError::new(format!("cannot read launch file {}: {e}", path.display()))
                .help("check the path given to --launch")
        })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Launch::from_ron(&text, &path.display().to_string(), &base)
    }

    /// Parses launch-file text; `path` is only for messages, `base_dir` for `File(...)` inits.
    pub fn from_ron(text: &str, path: &str, base_dir: &Path) -> Result<Launch, LaunchError> {
        let raw: RawLaunch = ron_options().from_str(text).map_err(|e| {
            // RON reports where it stopped: for a custom error (a bad type name), just after the
            // offending value; the position is still on the right line.
            let pos = e.span.start;
            let loc = Location { path: path.to_string(), line: pos.line, col: pos.col, line_text: line_text(text, pos.line) };
            LaunchError::new(format!("bad launch file: {}", e.code)).at(Some(loc)).help(
                "a launch file is `(kernel: \"name\", grid: (x, y, z), block: (x, y, z), buffers: {...}, args: [...])`; see docs/run.md",
            )
        })?;
        match raw.contexts {
            Some(_) => Launch::from_contexts(raw, text, path, base_dir),
            None => Launch::from_raw(raw, text, path, base_dir, 0),
        }
    }

    /// The launch `raw` read from `text`, whose own text starts at byte `start` (a context's
    /// opening parenthesis, or 0): fields are located in it.
    pub(crate) fn from_raw(
        raw: RawLaunch,
        text: &str,
        path: &str,
        base_dir: &Path,
        start: usize,
    ) -> Result<Launch, LaunchError> {
        let launches = match raw.launches {
            None => Vec::new(),
            Some(list) => {
                let at = |field: &str| {
                    find_top_field_from(text, start, field).map(|at| location_of(path, text, at))
                };
                let top = [
                    ("kernel", raw.kernel.is_some()),
                    ("grid", raw.grid.is_some()),
                    ("block", raw.block.is_some()),
                    ("args", raw.args.is_some()),
                    ("shared", raw.shared.is_some()),
                ];
                if let Some((field, _)) = top.iter().find(|(_, present)| *present) {
                    return Err(LaunchError::new(format!(
                        "the launch file has both `launches: [...]` and a top-level `{field}:`"
                    ))
                    .at(at(field))
                    .help(format!(
                        "a program of several launches gives each launch its own kernel, grid, block, args, shared and stream inside `launches`: move `{field}` into them, or remove `launches` for a one-kernel launch"
                    )));
                }
                if list.is_empty() {
                    return Err(LaunchError::new("`launches` is empty")
                        .at(at("launches"))
                        .help("give at least one `(kernel: \"NAME\", grid: ..., block: ..., args: [...])`, or use the one-kernel form"));
                }
                let starts = find_top_field_from(text, start, "launches")
                    .map(|from| list_item_starts(text, from, b'('))
                    .unwrap_or_default();
                list.into_iter()
                    .enumerate()
                    .map(|(i, l)| KernelLaunch {
                        kernel: l.kernel,
                        grid: l.grid,
                        block: l.block,
                        args: l.args,
                        stream: l.stream,
                        shared: l.shared,
                        location: starts.get(i).map(|&at| location_of(path, text, at)),
                    })
                    .collect()
            }
        };
        let mut launch = Launch {
            kernel: raw.kernel,
            grid: raw.grid,
            block: raw.block,
            shared: raw.shared,
            buffers: Vec::new(),
            args: raw.args.unwrap_or_default(),
            globals: raw.globals,
            extern_calls: raw.extern_calls,
            print: raw.print,
            launches,
            expect: Vec::new(),
            contexts: Vec::new(),
            source: Some((path.to_string(), text.to_string())),
            start,
            context: None,
        };
        // Each expectation's text starts one past its opening quote.
        let starts = find_top_field_from(text, start, "expect")
            .map(|from| list_item_starts(text, from, b'"'))
            .unwrap_or_default();
        for (i, e) in raw.expect.iter().enumerate() {
            let location = starts.get(i).map(|&at| location_of(path, text, at + 1));
            let parsed = expect::Expectation::parse(e).map_err(|err| {
                ExpectSource {
                    expectation: expect::Expectation::unparsed(e),
                    location: location.clone(),
                }
                .error(err)
            })?;
            launch.expect.push(ExpectSource {
                expectation: parsed,
                location,
            });
        }
        let buffers_at = find_field_from(text, start, "buffers");
        for (name, b) in raw.buffers {
            let location = launch.locate_key(&format!("\"{name}\""), buffers_at);
            launch.buffers.push(BufferDesc {
                name,
                elem: b.elem,
                len: b.len,
                init: b.init,
                base_dir: base_dir.to_path_buf(),
                location,
            });
        }
        launch.check()?;
        Ok(launch)
    }

    /// Checks that need no program: dimensions, names, inits against their types.
    pub(crate) fn check(&self) -> Result<(), LaunchError> {
        for (i, l) in self.launches.iter().enumerate() {
            for (what, Dim(d)) in [("grid", l.grid), ("block", l.block)] {
                if d.contains(&0) {
                    return Err(LaunchError::new(format!(
                        "launch {} of {}: {what} dimension is zero: {d:?}",
                        i + 1,
                        self.launches.len()
                    ))
                    .at(l.location.clone())
                    .help("every dimension is at least 1"));
                }
            }
        }
        for (what, dim) in [("grid", self.grid), ("block", self.block)] {
            if let Some(Dim(d)) = dim
                && d.contains(&0)
            {
                return Err(LaunchError::new(format!("{what} dimension is zero: {d:?}"))
                    .at(self.locate_field(what))
                    .help("every dimension is at least 1"));
            }
        }
        for b in &self.buffers {
            if b.len == 0 {
                return Err(
                    LaunchError::new(format!("buffer `{}` has length 0", b.name))
                        .at(b.location.clone())
                        .help("give it at least one element"),
                );
            }
            // Checked without allocating them (File inits are read at resolution).
            check_init(b)?;
        }
        for arg in self
            .args
            .iter()
            .chain(self.launches.iter().flat_map(|l| &l.args))
        {
            match arg {
                Arg::Buffer(name) => {
                    if !self.buffers.iter().any(|b| &b.name == name) {
                        return Err(LaunchError::new(format!(
                            "argument refers to unknown buffer `{name}`"
                        ))
                        .at(self.locate(&format!("Buffer(\"{name}\")"), 0))
                        .help(self.known_buffers()));
                    }
                }
                Arg::Scalar { elem, value } => {
                    value.encode(*elem).map_err(|e| {
                        LaunchError::new(format!("scalar argument: {e}"))
                            .at(self.locate_field("args"))
                    })?;
                }
                Arg::Null => {}
                Arg::Bytes(_) | Arg::Struct(_) => {
                    let laid = lay_out(arg).map_err(|e| {
                        LaunchError::new(format!("struct argument: {e}"))
                            .at(self.locate_field("args"))
                    })?;
                    if let Some((_, name)) = laid
                        .pointers
                        .iter()
                        .find(|(_, name)| !self.buffers.iter().any(|b| &b.name == name))
                    {
                        return Err(LaunchError::new(format!(
                            "argument refers to unknown buffer `{name}`"
                        ))
                        .at(self.locate(&format!("Buffer(\"{name}\")"), 0))
                        .help(self.known_buffers()));
                    }
                }
            }
        }
        self.expectations()?;
        if let Some(print) = &self.print {
            for name in print {
                if !self.buffers.iter().any(|b| &b.name == name) {
                    return Err(
                        LaunchError::new(format!("`print` names unknown buffer `{name}`"))
                            .at(self.locate_field("print"))
                            .help(self.known_buffers()),
                    );
                }
            }
        }
        Ok(())
    }

    /// The expectations bound to the buffers (names, types, lengths).
    pub fn expectations(&self) -> Result<Vec<expect::Bound>, LaunchError> {
        let buffers: Vec<(&str, Elem, u64)> = self
            .buffers
            .iter()
            .map(|b| (b.name.as_str(), b.elem, b.len))
            .collect();
        self.expect
            .iter()
            .map(|e| e.expectation.bind(&buffers).map_err(|err| e.error(err)))
            .collect()
    }

    pub(crate) fn known_buffers(&self) -> String {
        if self.buffers.is_empty() {
            "no buffers are declared: add them under `buffers: { \"name\": (type: \"s32\", len: N) }`".to_string()
        } else {
            let names: Vec<&str> = self.buffers.iter().map(|b| b.name.as_str()).collect();
            format!("the buffers are: {}", names.join(", "))
        }
    }
}
