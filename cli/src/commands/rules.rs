//! `cudasem rules [NAME]`: the rules cudasem's derivations name (`semantics::rules`), each with
//! its thesis section, its text in the thesis's notation, where cudasem departs from it
//! (docs/deviations.md) and the function implementing it. Without NAME: a one-line index of
//! every rule.
//!
//! Exit codes: 0, or 2 when no rule has that name.

use crate::Exit;
use semantics::rules;

#[derive(clap::Args)]
pub struct RulesArgs {
    /// A rule name (`bra_guard`), a layer-qualified one (`thread/bra`), or `all` for every
    /// rule in full.
    pub name: Option<String>,
}

pub fn run(args: RulesArgs) -> Exit {
    let text = match args.name.as_deref() {
        None => index(),
        Some("all") => rules::all()
            .iter()
            .map(rules::RuleDoc::render)
            .collect::<Vec<_>>()
            .join("\n"),
        Some(name) => {
            let found = rules::find(name);
            if found.is_empty() {
                eprintln!(
                    "error: no rule `{name}`\n  = help: `cudasem rules` lists them (e.g. bra_guard, thread/bra, endBar)"
                );
                return Exit::BadInput;
            }
            found
                .iter()
                .map(rules::RuleDoc::render)
                .collect::<Vec<_>>()
                .join("\n")
        }
    };
    crate::emit::report(&text, Exit::Clean)
}

/// One line per rule: qualified name, where it comes from, and a deviation mark.
fn index() -> String {
    let all = rules::all();
    let width = all
        .iter()
        .map(|d| d.qualified_name().chars().count())
        .max()
        .unwrap_or(0);
    let mut s = String::from(
        "rules of cudasem's semantics; thesis: Habermaier, \"The Model of Computation of CUDA and its Formal Semantics\", 2011\n(`cudasem rules NAME` for the text and the implementing function; * = cudasem deviates)\n",
    );
    for d in &all {
        let name = d.qualified_name();
        s.push_str(&format!(
            "  {name:<width$}  {}{}\n",
            d.source(),
            if d.deviation.is_some() { "  *" } else { "" }
        ));
    }
    s
}
