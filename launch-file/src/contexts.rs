//! Several contexts in one launch file (thesis 5.8): `contexts: [(buffers: {...}, launches:
//! [...], print: [...]), ...]`, each context a launch of its own.
//!
//! The thesis's device steps one context at a time (rule `exec`, thesis 5.8 and 9.3: any one
//! context takes a step); contexts share no global or constant memory (each has its own virtual
//! address space, and `newVM` maps disjoint physical memory). So a context's steps neither read
//! nor write anything another context's steps touch: every interleaving of the contexts' steps
//! gives each context exactly the states, results and verdicts it has when it runs alone, and
//! the device terminates if and only if every context does. Running the contexts one after
//! another, each as its own program, therefore loses no behaviour; this crate reads and
//! resolves each context separately, and the caller runs them in turn.

use crate::locate::{find_top_field, find_top_field_from, list_item_starts, location_of};
use crate::syntax::RawLaunch;
use crate::{Arg, Launch, LaunchError, Location, ResolvedLaunch};
use semantics::Program;
use std::path::Path;

impl Launch {
    /// The launch of a file with `contexts:`: nothing beside it, each context read as a launch
    /// of its own (its fields located inside it), none empty, none naming another's buffer.
    pub(crate) fn from_contexts(
        raw: RawLaunch,
        text: &str,
        path: &str,
        base_dir: &Path,
    ) -> Result<Launch, LaunchError> {
        let at = |field: &str| find_top_field(text, field).map(|at| location_of(path, text, at));
        if let Some(field) = beside_contexts(&raw) {
            return Err(LaunchError::new(format!(
                "the launch file has both `contexts: [...]` and a top-level `{field}:`"
            ))
            .at(at(field))
            .help(format!(
                "each context holds its own buffers, launches and print list (thesis 5.8: contexts share no memory): move `{field}` into a context, or remove `contexts` for a program of one context"
            )));
        }
        let list = raw.contexts.unwrap_or_default();
        if list.is_empty() {
            return Err(LaunchError::new("`contexts` is empty")
                .at(at("contexts"))
                .help("give at least one `(buffers: {...}, launches: [...])`, or write the launch without `contexts`"));
        }
        let starts = find_top_field(text, "contexts")
            .map(|from| list_item_starts(text, from, b'('))
            .unwrap_or_default();
        let n = list.len();
        let buffers: Vec<Vec<String>> = list
            .iter()
            .map(|c| c.buffers.iter().map(|(name, _)| name.clone()).collect())
            .collect();
        let mut contexts = Vec::with_capacity(n);
        for (i, c) in list.into_iter().enumerate() {
            let start = starts.get(i).copied().unwrap_or(0);
            let here = location_of(path, text, start);
            let locate = |field: &str| {
                find_top_field_from(text, start, field).map(|at| location_of(path, text, at))
            };
            let named = |e: LaunchError| in_context(e, i, n, Some(here.clone()));
            if c.contexts.is_some() {
                return Err(named(
                    LaunchError::new("a context holds `contexts`")
                        .at(locate("contexts"))
                        .help("contexts are not nested: list every context in the top-level `contexts: [...]`"),
                ));
            }
            if is_empty(&c) {
                return Err(named(
                    LaunchError::new("the context launches no kernel")
                        .help("give it `launches: [(kernel: \"NAME\", grid: ..., block: ..., args: [...])]` (or a one-kernel `kernel`, `grid`, `block`, `args`), or remove it"),
                ));
            }
            if let Some((name, owner)) = foreign_buffer(&c, &buffers, i) {
                let needle = format!("Buffer(\"{name}\")");
                let masked = crate::locate::mask_comments(text);
                let located = masked
                    .get(start..)
                    .and_then(|s| s.find(&needle))
                    .map(|k| location_of(path, text, start + k))
                    .or_else(|| locate("print"));
                return Err(named(
                    LaunchError::new(format!(
                        "`{name}` is a buffer of context {}, not of this one",
                        owner + 1
                    ))
                    .at(located)
                    .help(format!(
                        "contexts have separate virtual address spaces (thesis 5.8): a context's kernels reach only its own buffers; declare `{name}` in this context too (a buffer of its own), or launch the kernels in one context"
                    )),
                ));
            }
            let mut launch = Launch::from_raw(c, text, path, base_dir, start).map_err(named)?;
            launch.context = Some((i, n));
            contexts.push(launch);
        }
        Ok(Launch {
            contexts,
            source: Some((path.to_string(), text.to_string())),
            ..Launch::default()
        })
    }

    /// The launch's contexts (thesis 5.8): those of `contexts: [...]`, or the launch itself,
    /// the one context of a file without them.
    pub fn contexts(&self) -> Vec<&Launch> {
        if self.contexts.is_empty() {
            vec![self]
        } else {
            self.contexts.iter().collect()
        }
    }

    /// Resolves every context's program ([`Launch::resolve_program`]) against `program`, in
    /// file order: one program for a file without `contexts`. Contexts are independent (module
    /// documentation), so the caller runs each alone. An error names its context and, when it
    /// has no place of its own, points at the context.
    pub fn resolve_contexts(
        &self,
        program: &Program,
        budget: u64,
    ) -> Result<Vec<Vec<ResolvedLaunch>>, LaunchError> {
        if self.contexts.is_empty() {
            return Ok(vec![self.resolve_program(program, budget)?]);
        }
        // Each context's errors name it (`Launch::context`).
        self.contexts
            .iter()
            .map(|c| c.resolve_program(program, budget))
            .collect()
    }

    /// `e` named by the context this launch is (and pointing at it when it has no place of its
    /// own); `e` itself for a launch that is no context.
    pub(crate) fn in_own_context(&self, e: LaunchError) -> LaunchError {
        match self.context {
            None => e,
            Some((i, n)) => {
                let at = self
                    .source
                    .as_ref()
                    .map(|(path, text)| location_of(path, text, self.start));
                in_context(e, i, n, at)
            }
        }
    }

    /// The refusal of a file with `contexts` by what runs one context's program (`what`).
    pub(crate) fn refuse_contexts(&self, what: &str) -> Result<(), LaunchError> {
        if self.contexts.is_empty() {
            return Ok(());
        }
        Err(LaunchError::new(format!(
            "the launch file holds {} contexts (`contexts: [...]`); {what}",
            self.contexts.len()
        ))
        .at(self.locate_field("contexts"))
        .help("`run`, `fuzz`, `explore` and `check` run each context in turn; give this command --context N to pick one, or a launch file of one context (without `contexts`)"))
    }
}

/// `e` as an error of context `i` of `n`, at `at` when it has no place of its own.
fn in_context(mut e: LaunchError, i: usize, n: usize, at: Option<Location>) -> LaunchError {
    e.message = format!("context {} of {n}: {}", i + 1, e.message);
    e.at(at)
}

/// A top-level field given beside `contexts` (each belongs in a context).
fn beside_contexts(raw: &RawLaunch) -> Option<&'static str> {
    [
        ("kernel", raw.kernel.is_some()),
        ("grid", raw.grid.is_some()),
        ("block", raw.block.is_some()),
        ("args", raw.args.is_some()),
        ("shared", raw.shared.is_some()),
        ("launches", raw.launches.is_some()),
        ("buffers", !raw.buffers.is_empty()),
        ("globals", !raw.globals.is_empty()),
        ("extern_calls", !raw.extern_calls.is_empty()),
        ("print", raw.print.is_some()),
        ("expect", !raw.expect.is_empty()),
    ]
    .into_iter()
    .find(|(_, present)| *present)
    .map(|(field, _)| field)
}

/// A context that launches nothing: no `launches` and no one-kernel fields.
fn is_empty(c: &RawLaunch) -> bool {
    c.launches.is_none()
        && c.kernel.is_none()
        && c.grid.is_none()
        && c.block.is_none()
        && c.args.is_none()
}

/// A buffer context `i` names (in an argument, a struct argument's field or `print`) that it
/// does not declare but another context does: the name and that context.
fn foreign_buffer(c: &RawLaunch, buffers: &[Vec<String>], i: usize) -> Option<(String, usize)> {
    fn names<'a>(arg: &'a Arg, out: &mut Vec<&'a str>) {
        match arg {
            Arg::Buffer(name) => out.push(name),
            Arg::Struct(fields) => fields.iter().for_each(|f| names(f, out)),
            Arg::Scalar { .. } | Arg::Null | Arg::Bytes(_) => {}
        }
    }
    let mut used: Vec<&str> = Vec::new();
    let args = c
        .args
        .iter()
        .flatten()
        .chain(c.launches.iter().flatten().flat_map(|l| &l.args));
    for a in args {
        names(a, &mut used);
    }
    used.extend(c.print.iter().flatten().map(String::as_str));
    used.into_iter()
        .filter(|name| !buffers[i].iter().any(|b| b == name))
        .find_map(|name| {
            buffers
                .iter()
                .position(|own| own.iter().any(|b| b == name))
                .map(|owner| (name.to_string(), owner))
        })
}
