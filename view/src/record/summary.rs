//! What the page shows beside the steps: the overview of the whole run, the lasso's
//! explanation (fairness, starved lanes) and the annotated PTX listing.

use super::*;

pub(super) fn overview(choices: &[Choice], index: &BTreeMap<(u32, u32), usize>) -> Overview {
    let n = index.len();
    let total = choices.len() as u64;
    let size = total.div_ceil(OVERVIEW_BUCKETS).max(1);
    let mut buckets: Vec<BTreeMap<usize, u32>> =
        vec![BTreeMap::new(); total.div_ceil(size) as usize];
    for (i, c) in choices.iter().enumerate() {
        let unit = match c.warp() {
            Some(w) => index.get(&w).copied().unwrap_or(n),
            None => match c {
                Choice::Issue { .. } => n,
                Choice::EndBarrier { .. } => n + 1,
                _ => n + 2,
            },
        };
        *buckets[i / size as usize].entry(unit).or_default() += 1;
    }
    Overview {
        size,
        buckets: buckets
            .into_iter()
            .map(|b| b.into_iter().collect())
            .collect(),
    }
}

/// The lasso's cycle and the facts that make it fair or not: which warps step in it, which are
/// enabled in every state of it (weak fairness: each of these must step), which in some state
/// (strong fairness: each of these must step).
pub(super) fn lasso_of(
    choices: &[Choice],
    cycle_start: usize,
    enabled_log: &[Vec<Choice>],
    index: &BTreeMap<(u32, u32), usize>,
    from: u64,
    grids: &Grids,
) -> Lasso {
    let cycle = &choices[cycle_start..];
    let stepping: BTreeSet<usize> = cycle
        .iter()
        .filter_map(Choice::warp)
        .filter_map(|w| index.get(&w).copied())
        .collect();
    let enabled_sets: Vec<BTreeSet<usize>> = enabled_log
        .iter()
        .map(|e| {
            e.iter()
                .filter_map(Choice::warp)
                .filter_map(|w| index.get(&w).copied())
                .collect()
        })
        .collect();
    let always: BTreeSet<usize> = enabled_sets.iter().skip(1).fold(
        enabled_sets.first().cloned().unwrap_or_default(),
        |acc, s| acc.intersection(s).copied().collect(),
    );
    let sometimes: BTreeSet<usize> = enabled_sets.iter().flatten().copied().collect();
    let name = |i: &usize| {
        index
            .iter()
            .find(|(_, v)| *v == i)
            .map_or_else(String::new, |((b, w), _)| grids.warp(*b, *w))
    };
    let list = |s: &BTreeSet<usize>| {
        if s.is_empty() {
            "none".to_string()
        } else {
            s.iter().map(name).collect::<Vec<_>>().join(", ")
        }
    };
    let mut why = Vec::new();
    let complete = (cycle_start as u64) >= from;
    if !complete {
        why.push(
            "The window starts inside the cycle: the enabled sets below cover only its shown part."
                .to_string(),
        );
    }
    why.push(format!(
        "The cycle is {} choices long and repeats forever; warps stepping in it: {}.",
        cycle.len(),
        list(&stepping)
    ));
    let weak_starved: BTreeSet<usize> = always.difference(&stepping).copied().collect();
    let strong_starved: BTreeSet<usize> = sometimes.difference(&stepping).copied().collect();
    why.push(format!(
        "Warps enabled in every state of the cycle: {}. {}",
        list(&always),
        if weak_starved.is_empty() {
            "Each of them steps in the cycle, so repeating it is weakly fair: \
             no warp that stays enabled is ignored forever."
                .to_string()
        } else {
            format!(
                "Of these, {} never step: repeating the cycle is not weakly fair.",
                list(&weak_starved)
            )
        }
    ));
    why.push(format!(
        "Warps enabled in some state of the cycle: {}. {}",
        list(&sometimes),
        if strong_starved.is_empty() {
            "Each of them steps in it, so the cycle is strongly fair too.".to_string()
        } else {
            format!(
                "{} never step: the cycle is not strongly fair to them.",
                list(&strong_starved)
            )
        }
    ));
    Lasso {
        cycle_start: cycle_start as u64,
        stepping: stepping.into_iter().collect(),
        always_enabled: always.into_iter().collect(),
        sometimes_enabled: sometimes.into_iter().collect(),
        why,
    }
}

/// For each warp that steps in the cycle: its live lanes that never execute in it, and the
/// SIMT stack tokens that hold them (the end of the trace is the state the cycle starts from).
pub(super) fn starved_lanes(
    m: &Machine,
    cycle_lanes: &BTreeMap<(u32, u32), u64>,
    grids: &Grids,
    ws: u32,
) -> Vec<String> {
    let mut out = Vec::new();
    for (&(b, w), &ran) in cycle_lanes {
        let Some(v) = m.warp_view(b, w) else { continue };
        let n = lanes_of(grids.threads(b), ws, w);
        let all = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        let starved = all & !v.exited & !ran;
        if starved == 0 {
            continue;
        }
        let holding: Vec<String> = v
            .stack
            .iter()
            .filter(|t| t.mask & starved != 0)
            .map(|t| {
                format!("({}, {}, L{})", t.kind.name(), mask_string(t.mask, n), {
                    m.program()
                        .source
                        .get(t.pc as usize)
                        .map_or(0, |s| s.ptx_line)
                })
            })
            .collect();
        let model = m.config().warp_model;
        out.push(format!(
            "{}: lanes {} never execute in the cycle although they have not exited{}. {}",
            capitalized(&grids.warp_titled(b, w)),
            mask_string(starved, n),
            if holding.is_empty() {
                String::new()
            } else {
                format!("; they wait in the SIMT stack's {}", holding.join(" and "))
            },
            if model == WarpModel::SimtStack {
                "Under the SIMT stack (thesis 5.4.1) the warp, not the lane, is what the scheduler \
                 picks: the token is popped only when the running lanes reach its reconvergence \
                 point, which they never do, so a schedule fair to warps still starves these lanes \
                 (thesis chapter 6 discusses this starvation with a spin lock)."
            } else {
                "They are enabled lane groups that the cycle never picks."
            }
        ));
    }
    out
}

/// `s` with its first letter in upper case (a sentence that starts with a warp's name).
fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The PTX listing with per-pc lines, `.cu` lines from the line tables, and listing-line
/// annotations (`// listing line N` at the end of an instruction's line: a transcribed
/// textbook listing names its rows so; in such a file, an instruction without one that a label
/// names is named by the label).
pub(super) fn source_of(program: &semantics::Program, sources: &Sources) -> Source {
    let ptx: Vec<String> = sources.ptx.lines().map(str::to_string).collect();
    let pc_line: Vec<u32> = program.source.iter().map(|s| s.ptx_line).collect();
    let pc_listing = pc_line
        .iter()
        .map(|&l| {
            let text = ptx.get((l as usize).checked_sub(1)?)?;
            let i = text.find("// listing line ")?;
            let rest = &text[i + "// listing line ".len()..];
            let label = rest.split(':').next()?.trim();
            (!label.is_empty()).then(|| label.to_string())
        })
        .collect::<Vec<_>>();
    // In a transcribed listing, an instruction outside it that a label of the listing names
    // (the caller's `X:` of Listing 5.7) is named by that label.
    let pc_listing = if pc_listing.iter().any(Option::is_some) {
        let mut named = pc_listing;
        for f in &program.functions {
            for (name, pc) in &f.labels {
                if let Some(slot @ None) = named.get_mut(*pc as usize) {
                    *slot = Some(name.to_string());
                }
            }
        }
        named
    } else {
        pc_listing
    };
    let mut file_index: BTreeMap<u32, u32> = BTreeMap::new();
    let mut cu = Vec::new();
    let pc_cu = program
        .source
        .iter()
        .map(|s| {
            let (file, line, _) = s.loc?;
            let path = program.files.get(&file)?;
            let lines = sources.cu.get(path)?;
            let i = *file_index.entry(file).or_insert_with(|| {
                cu.push(CuFile {
                    path: path.clone(),
                    lines: lines.lines().map(str::to_string).collect(),
                });
                cu.len() as u32 - 1
            });
            Some([i, line])
        })
        .collect();
    Source {
        ptx,
        pc_line,
        pc_cu,
        pc_listing,
        cu,
    }
}
