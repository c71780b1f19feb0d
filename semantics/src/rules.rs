//! The rule catalogue: every rule cudasem's derivations name ([`traces::Rule`]), with the thesis
//! section and seed lines it comes from, its text in the thesis's notation as far as plain text
//! allows, and where cudasem departs from it (docs/deviations.md lists every deviation).
//!
//! Section numbers are the thesis's (seed 003, Habermaier 2011); line numbers are lines of
//! `shared/seeds/003_a3334bcff1403463.txt`, as in `shared/digests/seed003_semantics.md`, whose
//! §4-§9 the texts below transcribe. `cudasem rules [NAME]` and the debugger's `rule` print them.
//! Rules beyond the thesis (PTX it excludes, independent thread scheduling) say so.

use traces::Rule;

/// The layer of the semantics a rule belongs to (thesis chapter 5, bottom up).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// Thread rules →Θ (thesis 5.3.2).
    Thread,
    /// The branching algorithm →CRS (thesis 5.4.1).
    Crs,
    /// Warp rules →Ω (thesis 5.4.3).
    Warp,
    /// Thread-block rules →B (thesis 5.5.2).
    Block,
    /// Grid rules →Γ (thesis 5.6).
    Grid,
    /// Context rules →C (thesis 5.7).
    Context,
    /// Device rules →D (thesis 5.8).
    Device,
    /// Independent thread scheduling: not in the thesis.
    Its,
    /// The memory environment →M (thesis 4.6), under `--memory cached`.
    Memory,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::Thread => "thread",
            Layer::Memory => "memory",
            Layer::Crs => "crs",
            Layer::Warp => "warp",
            Layer::Block => "block",
            Layer::Grid => "grid",
            Layer::Context => "context",
            Layer::Device => "device",
            Layer::Its => "its",
        }
    }
}

/// One rule's documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleDoc {
    pub rule: Rule,
    pub layer: Layer,
    /// Thesis section, e.g. `5.4.1`; `None` for rules beyond the thesis.
    pub section: Option<&'static str>,
    /// Lines of seed 003 (inclusive); `None` for rules beyond the thesis.
    pub lines: Option<(u32, u32)>,
    /// The rule in the thesis's notation (plain text), or what cudasem does where the thesis has
    /// no rule.
    pub text: &'static str,
    /// Where cudasem departs from the thesis (the docs/deviations.md entries), if it does.
    pub deviation: Option<&'static str>,
    /// The function that implements the rule, as a path in this crate
    /// (`machine::warp::simt_stack::bra_guard`); a test checks that it exists.
    pub implemented_by: &'static str,
}

impl RuleDoc {
    /// `warp/bra`, `thread/bra`: names are unique only within a layer.
    pub fn qualified_name(&self) -> String {
        format!("{}/{}", self.layer.name(), self.rule.name())
    }

    /// `thesis section 5.4.1` or `beyond the thesis`: the thesis is cited by section, as a
    /// reader can look it up (the line numbers are for cudasem's maintainers).
    pub fn source(&self) -> String {
        match self.section {
            Some(s) => format!("thesis section {s}"),
            None => "beyond the thesis".to_string(),
        }
    }

    /// The full entry as `cudasem rules NAME` prints it.
    pub fn render(&self) -> String {
        let mut s = format!("{} ({})\n", self.qualified_name(), self.source());
        for line in self.text.lines() {
            s.push_str("  ");
            s.push_str(line);
            s.push('\n');
        }
        if let Some(d) = self.deviation {
            s.push_str("  cudasem: ");
            s.push_str(d);
            s.push('\n');
        }
        s.push_str(&format!(
            "  implemented by: semantics::{}\n",
            self.implemented_by
        ));
        s
    }
}

/// Every rule, in catalogue order (device down to thread, then beyond the thesis).
pub const ALL: &[Rule] = &[
    Rule::Exec,
    Rule::IssueBlocks,
    Rule::ScheduleWarps,
    Rule::GridCompl,
    Rule::EndBar,
    Rule::BlockCompl,
    Rule::WarpBra,
    Rule::WarpComm,
    Rule::WarpMem,
    Rule::Ssy,
    Rule::PreBrk,
    Rule::PreRet,
    Rule::Sync,
    Rule::SyncImplicit,
    Rule::BrkUni,
    Rule::BrkDiv,
    Rule::RetUni,
    Rule::RetDiv,
    Rule::ExitUni,
    Rule::ExitDiv,
    Rule::BraUni,
    Rule::BraGuard,
    Rule::BraTarget,
    Rule::CallUni,
    Rule::CallGuard,
    Rule::CallTarget,
    Rule::Next,
    Rule::Unwind,
    Rule::Dop,
    Rule::Mov,
    Rule::Setp,
    Rule::Ld,
    Rule::St,
    Rule::Atom,
    Rule::Bra,
    Rule::Call,
    Rule::Ret,
    Rule::ExitThread,
    Rule::Break,
    Rule::Vote,
    Rule::Membar,
    Rule::BarSync,
    Rule::BarArrive,
    Rule::BarRed,
    Rule::Cvta,
    Rule::Nop,
    Rule::Trap,
    Rule::Shfl,
    Rule::Match,
    Rule::Redux,
    Rule::ActiveMask,
    Rule::WarpSync,
    Rule::ItsStep,
    Rule::Rendezvous,
    Rule::MemStep,
    Rule::EvictL1,
    Rule::EvictL2,
    Rule::WbL1,
    Rule::WbL2,
    Rule::Flush,
];

/// Every rule's documentation, in catalogue order.
pub fn all() -> Vec<RuleDoc> {
    ALL.iter().map(|r| doc(*r)).collect()
}

/// The rules named `name` (case-insensitive): a plain name (`bra` is both the warp rule and the
/// thread rule), a qualified `layer/name`, or a Rust variant name (`BraGuard`).
pub fn find(name: &str) -> Vec<RuleDoc> {
    let wanted = name.trim().to_ascii_lowercase();
    all()
        .into_iter()
        .filter(|d| {
            d.rule.name().to_ascii_lowercase() == wanted
                || d.qualified_name().to_ascii_lowercase() == wanted
                || format!("{:?}", d.rule).to_ascii_lowercase() == wanted
        })
        .collect()
}

const THREAD: (Option<&str>, Option<(u32, u32)>) = (Some("5.3.2"), Some((2051, 2140)));
const CRS: (Option<&str>, Option<(u32, u32)>) = (Some("5.4.1"), Some((2494, 2551)));

fn entry(
    rule: Rule,
    layer: Layer,
    place: (Option<&'static str>, Option<(u32, u32)>),
    text: &'static str,
    deviation: Option<&'static str>,
) -> RuleDoc {
    RuleDoc {
        rule,
        layer,
        section: place.0,
        lines: place.1,
        text,
        deviation,
        implemented_by: implementation(rule),
    }
}

/// The function implementing each rule (a path in this crate). The match is exhaustive: a new
/// rule without an implementation does not compile.
pub fn implementation(rule: Rule) -> &'static str {
    use Rule as R;
    macro_rules! simt {
        ($f:literal) => {
            concat!("machine::warp::simt_stack::", $f)
        };
    }
    match rule {
        R::Exec => "machine::step",
        R::IssueBlocks => "machine::context::issue",
        R::ScheduleWarps => "machine::device::warp_step",
        R::GridCompl => "machine::grid::grid_completed",
        R::EndBar => "machine::block::barrier::end_bar",
        R::BlockCompl => "machine::context::complete_block",
        R::WarpBra => simt!("step"),
        R::WarpComm => simt!("bar"),
        R::WarpMem => "machine::exec::exec_data",
        R::Ssy | R::PreBrk | R::PreRet => simt!("push_token"),
        R::Sync => simt!("sync"),
        R::SyncImplicit => simt!("sync_ipdom"),
        R::BrkUni | R::BrkDiv => simt!("brk"),
        R::RetUni | R::RetDiv => simt!("ret"),
        R::ExitUni | R::ExitDiv => simt!("exit"),
        R::BraUni => simt!("bra_uni"),
        R::BraGuard => simt!("bra_guard"),
        R::BraTarget => simt!("bra_target"),
        R::CallUni | R::CallGuard => simt!("call"),
        R::CallTarget => simt!("call_target"),
        R::Next => simt!("next"),
        R::Unwind => simt!("unwind"),
        R::Dop => "machine::exec::arith::dop",
        R::Mov => "machine::exec::arith::mov",
        R::Setp => "machine::exec::arith::setp",
        R::Ld => "machine::exec::memory::ld",
        R::St => "machine::exec::memory::st",
        R::Atom => "machine::exec::memory::atom",
        R::Membar => "machine::exec::memory::membar",
        R::Cvta => "machine::exec::memory::cvta",
        R::Vote | R::Shfl | R::Match | R::Redux | R::ActiveMask => {
            "machine::exec::collective::comm"
        }
        R::Trap | R::WarpSync => "machine::exec::exec_data",
        R::Bra => simt!("bra"),
        R::Call => "machine::warp::calls::enter",
        R::Ret => "machine::warp::calls::leave",
        R::ExitThread => simt!("exit"),
        R::Break => simt!("brk"),
        R::BarSync | R::BarArrive | R::BarRed => simt!("bar"),
        R::Nop => simt!("next"),
        R::ItsStep | R::Rendezvous => "machine::warp::its::step",
        R::MemStep | R::EvictL1 | R::EvictL2 | R::WbL1 | R::WbL2 | R::Flush => {
            "machine::memory_ops::mem_step"
        }
    }
}

/// The documentation of one rule. The match is exhaustive: a new rule without a text does not
/// compile.
pub fn doc(rule: Rule) -> RuleDoc {
    use Layer::*;
    use Rule as R;
    let beyond = (None, None);
    match rule {
        R::Exec => entry(
            rule,
            Device,
            (Some("5.8.3"), Some((3108, 3170))),
            "(exec)  ⟨updMemBar(ζ_i, mm) | regLookup(η)⟩ —cact⃗→C ζ'_i    ⟨η, op⃗⟩ →M,* ⟨η', op⃗'⟩\n\
             ─────────────────────────────────────────────────────────────\n\
             ⟨Δ ▷ (mm ▷ η, op⃗), ζ1..ζi..ζn⟩ →D ⟨Δ ◁ memOp((mm ◁ η', op⃗'), cact⃗), ζ1..ζ'i..ζn⟩\n\
             One context steps; the memory environment takes a macro step; the context's memory\n\
             actions are added to the memory environment afterwards.",
            Some(
                "D7: flat memory completes every access (and register write) inside the step; \
                  one context and one grid per machine",
            ),
        ),
        R::IssueBlocks => entry(
            rule,
            Context,
            (Some("5.7.1"), Some((2892, 2943))),
            "(issue)  ⟨ζ ◁ issueBlocks(γ1..γn) | ϱ⟩ —cact⃗→C ζ'\n\
             ───────────────────────────────────\n\
             ⟨ζ ▷ γ1..γn | ϱ⟩ —cact⃗→C ζ'\n\
             issueBlocks assigns an unscheduled block to an SM with free capacity (threads, warps,\n\
             blocks, shared memory), creates its warps (pc = entry, dummy lanes α inactive, δ exit)\n\
             and its threads' call stacks.",
            Some(
                "D8: blocks are issued in linear order; which SM is the `Issue` choice; issuing is \
                  its own step (the thesis's prefix rule, equivalent up to stuttering)",
            ),
        ),
        R::ScheduleWarps => entry(
            rule,
            Context,
            (Some("5.7.1"), Some((2990, 3030))),
            "(exec)  ( ⟨γ_i | φ⃗, ϱ, s_Γ(γ_i)⟩ —bact⃗_γ→Γ γ'_i )_{γ_i ∈ γ⃗}\n\
             ──────────────────────────────────────────────\n\
             ⟨ζ ▷ vms, pm, φ⃗, γ1..γn | ϱ⟩ —vms ⋃ bact⃗_γ→C ⟨ζ ◁ γ'1..γ'n⟩\n\
             if γ⃗ = schedule_Grids(γ1..γn) ∧ s_Γ = schedule_Warps(γ⃗, ϱ, pm, φ⃗)\n\
             schedule_Warps only picks warps that canBeScheduled: active, no barrier waited for,\n\
             no pending membar, no blocked register.",
            Some(
                "one warp per step (the `Warp` choice); a schedule of several warps is a sequence \
                  of such steps",
            ),
        ),
        R::GridCompl => entry(
            rule,
            Grid,
            (Some("5.6"), Some((2815, 2861))),
            "(compl)  ⟨γ | φ, ϱ, s_B⟩ —bact⃗→Γ ⟨γ' ▷ active, β1..βn⟩\n\
             ───────────────────────────────────\n\
             ⟨γ | φ, ϱ, s_B⟩ —bact⃗→Γ ⟨γ' ◁ completed⟩    if ∀i. β_i,blockState = completed",
            None,
        ),
        R::EndBar => entry(
            rule,
            Block,
            (Some("5.5.2"), Some((2658, 2814))),
            "(endBar)  ⟨β | φ, ϱ, s_Ω⟩ —bact⃗→B ⟨β' ▷ active, χ, ω1..ωn⟩\n\
             ────────────────────────────────────────\n\
             ⟨β ▷ pid, so | φ, ϱ, s_Ω⟩ —bact_ε ∘ bact⃗→B ⟨β' ◁ χ', ω'1..ω'n⟩\n\
             if (χ', bact_ε, ω'⃗) = endBar(χ, pid, so, ω⃗) ∧ χ ≠ χ'\n\
             endBar(χ, pid, so, ω⃗) = (χ[barid ↦ ε], barAct(χ(barid), pid, so, ω⃗), remBar(barid, ω⃗))\n\
             if (bar ▷ tc, ac) = χ(barid) ∧ ac ≥ tc",
            Some(
                "completing a barrier is its own `EndBarrier` choice; D9 (bar.sync and \
                  bar.arrive share ids), D10 (per-thread counting under its/threads), D11 \
                  (`exited_warps_arrive`)",
            ),
        ),
        R::BlockCompl => entry(
            rule,
            Block,
            (Some("5.5.2"), Some((2776, 2814))),
            "(compl)  ⟨β | φ, ϱ, s_Ω⟩ —bact⃗→B ⟨β' ▷ active, ω1..ωn⟩\n\
             ───────────────────────────────────\n\
             ⟨β | φ, ϱ, s_Ω⟩ —bact⃗→B ⟨β' ◁ completed⟩    if ∀i. ω_i,state = completed",
            None,
        ),
        R::WarpBra => entry(
            rule,
            Warp,
            (Some("5.4.3"), Some((2586, 2613))),
            "(bra)  ( ⟨θ_i | φ, pc, α, ϱ⟩ —tact_flow,i,ε→Θe θ'_i )_{i=1..n}\n\
             ──────────────────────────────────────────\n\
             ⟨ω ▷ (ς ▷ pc, α), θ1..θn | φ, ϱ⟩ →Ω ⟨ω ◁ state', ς', θ'1..θ'n⟩\n\
             if ς —⋃_i tact_flow,i,ε→CRS ⟨state', ς'⟩\n\
             Also the rule when no lane emits an action (then (next)).",
            Some(
                "D2: at a reconvergence point of ordinary PTX the step is an implicit sync \
                  (sync_ipdom)",
            ),
        ),
        R::WarpComm => entry(
            rule,
            Warp,
            (Some("5.4.3"), Some((2552, 2613))),
            "(comm)  ( ⟨θ_i | φ, pc, α, ϱ⟩ —tact_comm,i,ε→Θe θ'_i )_i\n\
             ─────────────────────────────────────\n\
             ⟨ω ▷ (ς ▷ pc, α), θ⃗ | φ, ϱ⟩ —wact_ε→Ω ⟨ω ◁ (ς ◁ pc+1), barid⃗, θ'⃗⟩\n\
             if (barid⃗, wact_ε) = comm(φ_instrEnv(pc), ⋃_i tact_comm,i,ε) ∧ ∃i. tact_comm,i,ε ≠ ε\n\
             comm(vote vm _, t⃗) = (ε, ⋃ t_regAddr ← vote(vm, t⃗));  comm(bar.sync _, t⃗) = (⋃ t_barid, bar .sync ε t⃗)\n\
             comm(bar.red br _, t⃗) = (⋃ t_barid, bar .red br t⃗);  comm(bar.arrive _, t⃗) = (ε, bar .arrive ε t⃗)",
            Some("also shfl, match, redux, activemask and bar.warp.sync (PTX beyond the thesis)"),
        ),
        R::WarpMem => entry(
            rule,
            Warp,
            (Some("5.4.3"), Some((2586, 2613))),
            "(mem)  ( ⟨θ_i | φ, pc, α, ϱ⟩ —tact_mem,i,ε→Θe θ'_i )_i\n\
             ─────────────────────────────────────\n\
             ⟨ω ▷ (ς ▷ pc, α), θ⃗ | φ, ϱ⟩ —⋃_i tact_mem,i,ε→Ω ⟨ω ◁ (ς ◁ pc+1), θ'⃗⟩\n\
             if ∃i. tact_mem,i,ε ≠ ε",
            Some(
                "D7: under flat memory the lanes' accesses complete in ascending lane order \
                  inside the step; register writes are immediate",
            ),
        ),
        R::Ssy => entry(
            rule,
            Crs,
            CRS,
            "(ssy)  ⟨ς ▷ pc, α, τ⃗⟩ —ssy pc1 … ssy pcn→ ⟨active, ς ◁ pc+1, (sync, α, pc1) :: τ⃗⟩\n\
             if ∀i,j. pc_i = pc_j",
            Some("D13: does nothing under its"),
        ),
        R::PreBrk => entry(
            rule,
            Crs,
            CRS,
            "(preBrk)  ⟨ς ▷ pc, α, τ⃗⟩ —preBrk pc1 … preBrk pcn→ ⟨active, ς ◁ pc+1, (break, α, pc1) :: τ⃗⟩\n\
             if ∀i,j. pc_i = pc_j",
            Some("D13: under its, pushes a per-lane break target"),
        ),
        R::PreRet => entry(
            rule,
            Crs,
            CRS,
            "(preRet)  ⟨ς ▷ pc, α, τ⃗⟩ —preRet pc1 … preRet pcn→ ⟨active, ς ◁ pc+1, (call, α, pc1) :: τ⃗⟩\n\
             if ∀i,j. pc_i = pc_j",
            Some("D3: ordinary PTX has no preRet; `call` pushes the call token itself"),
        ),
        R::Sync => entry(
            rule,
            Crs,
            CRS,
            "(sync)  ς —sync … sync→CRS unwind(ς)\n\
             unwind(ς ▷ τ :: τ⃗) = (active, ς')  if ς' ▷ α' = updExecState(ς) ∧ ∃wl. α'(wl) = active\n\
             updExecState(ς ▷ δ, (sync|diverge, α, pc) :: τ⃗) = ς ◁ pc, α\\δ, τ⃗",
            None,
        ),
        R::SyncImplicit => entry(
            rule,
            Crs,
            CRS,
            "cudasem: when the top token's pc is the warp's pc (a reconvergence point, the\n\
             immediate post-dominator of a divergent branch of ordinary PTX), the step is\n\
             (sync) instead of the instruction: ς —sync→CRS unwind(ς).",
            Some("D2: replaces the explicit `sync` the thesis's compiler would inject"),
        ),
        R::BrkUni => entry(
            rule,
            Crs,
            CRS,
            "(brk_uni)  ⟨ς ▷ α, δ⟩ —break wl⃗→ unwind(ς ◁ α[wl⃗ ↦ inactive], δ[wl⃗ ↦ break])    if uni(α, wl⃗)",
            None,
        ),
        R::BrkDiv => entry(
            rule,
            Crs,
            CRS,
            "(brk_div)  ⟨ς ▷ pc, α, δ⟩ —break wl1..wln→ ⟨active, ς ◁ pc+1, α[wl⃗ ↦ inactive], δ[wl⃗ ↦ break]⟩\n\
             if ¬uni(α, wl⃗)",
            None,
        ),
        R::RetUni => entry(
            rule,
            Crs,
            CRS,
            "(ret_uni)  ⟨ς ▷ α, δ⟩ —return wl⃗→ unwind(ς ◁ α[wl⃗ ↦ inactive], δ[wl⃗ ↦ return])    if uni(α, wl⃗)\n\
             updExecState(ς ▷ δ, (call, α, pc) :: τ⃗) = ς ◁ pc, α\\δ', δ', τ⃗  where δ' = enable(α, δ, return)",
            Some("D6: `ret` at call depth 0 is `exit`"),
        ),
        R::RetDiv => entry(
            rule,
            Crs,
            CRS,
            "(ret_div)  ⟨ς ▷ pc, α, δ⟩ —return wl⃗→ ⟨active, ς ◁ pc+1, α[wl⃗ ↦ inactive], δ[wl⃗ ↦ return]⟩\n\
             if ¬uni(α, wl⃗)",
            Some("D6: `ret` at call depth 0 is `exit`"),
        ),
        R::ExitUni => entry(
            rule,
            Crs,
            CRS,
            "(exit_uni)  ⟨ς ▷ α, δ⟩ —exit wl⃗→ unwind(ς ◁ α[wl⃗ ↦ inactive], δ[wl⃗ ↦ exit])    if uni(α, wl⃗)\n\
             unwind(ς ▷ pc, α, δ, ε) = (completed, ς) if ∀wl. δ(wl) = exit, ⊥ otherwise",
            None,
        ),
        R::ExitDiv => entry(
            rule,
            Crs,
            CRS,
            "(exit_div)  ⟨ς ▷ pc, α, δ⟩ —exit wl⃗→ ⟨active, ς ◁ pc+1, α[wl⃗ ↦ inactive], δ[wl⃗ ↦ exit]⟩\n\
             if ¬uni(α, wl⃗)",
            None,
        ),
        R::BraUni => entry(
            rule,
            Crs,
            CRS,
            "(bra_uni)  ⟨ς ▷ pc, α⟩ —bra wl1 pc1 … bra wln pcn→ ⟨active, ς ◁ pc1⟩    if uni(α, wl⃗, pc⃗)",
            None,
        ),
        R::BraGuard => entry(
            rule,
            Crs,
            CRS,
            "(bra_guard)  ⟨ς ▷ pc, α, τ⃗⟩ —bra wl⃗ pc⃗→ ⟨active, ς ◁ pc1, taken(wp⃗, pc1),\n\
             \u{20}                (diverge, notTaken(α, wp⃗, pc1), pc+1) :: τ⃗⟩\n\
             if ¬uni(α, wl⃗) ∧ ∀i,j. pc_i = pc_j\n\
             (reconstructed: the thesis gives this rule in prose; the taken path runs first)",
            Some(
                "D1: for ordinary PTX first pushes (sync, α, ipdom) unless that token is already \
                  on top",
            ),
        ),
        R::BraTarget => entry(
            rule,
            Crs,
            CRS,
            "(bra_target)  ⟨ς ▷ pc, α, τ⃗⟩ —bra wl⃗ pc⃗→ ⟨active, ς ◁ pc_k, taken(wp⃗, pc_k),\n\
             \u{20}                (diverge, notTaken(α, wp⃗, pc_k), pc) :: τ⃗⟩\n\
             if ∃i,j. pc_i ≠ pc_j ∧ k ∈ {1..n}    (k: a nondeterministic choice)",
            Some(
                "D5: `Target{k}` indexes the target groups in ascending address order; D1 as \
                  for bra_guard",
            ),
        ),
        R::CallUni => entry(
            rule,
            Crs,
            CRS,
            "(call_uni)  ⟨ς ▷ pc, α⟩ —call wl1 pc1 … call wln pcn→ ⟨active, ς ◁ pc1⟩    if uni(α, wl⃗, pc⃗)",
            Some("D3: for ordinary PTX first pushes (call, α, pc+1) (the implicit preRet)"),
        ),
        R::CallGuard => entry(
            rule,
            Crs,
            CRS,
            "(call_guard)  ⟨ς ▷ pc, α⟩ —call wl⃗ pc⃗→ ⟨active, ς ◁ pc1, taken(wp⃗, pc1)⟩\n\
             if ¬uni(α, wl⃗) ∧ ∀i,j. pc_i = pc_j    (no token: the call token resumes the others)",
            Some("D3 as for call_uni"),
        ),
        R::CallTarget => entry(
            rule,
            Crs,
            CRS,
            "(call_target)  ⟨ς ▷ pc, α, τ⃗⟩ —call wl⃗ pc⃗→ ⟨active, ς ◁ pc_k, taken(wp⃗, pc_k),\n\
             \u{20}                (diverge, notTaken(α, wp⃗, pc_k), pc) :: τ⃗⟩\n\
             if ∃i,j. pc_i ≠ pc_j ∧ k ∈ {1..n}",
            Some(
                "D4: pushes the callee frame only for the chosen group (the thesis's double \
                  frame push fixed); D3; D5",
            ),
        ),
        R::Next => entry(
            rule,
            Crs,
            CRS,
            "(next)  ⟨ς ▷ pc⟩ —ε→CRS ⟨active, ς ◁ pc+1⟩    (no flow actions: a non-flow instruction or all guards false)",
            None,
        ),
        R::Unwind => entry(
            rule,
            Crs,
            (Some("5.4.1"), Some((2419, 2493))),
            "unwind(ς ▷ pc, α, δ, ε) = (completed, ς) if ∀wl. δ(wl) = exit;  ⊥ otherwise\n\
             unwind(ς ▷ τ :: τ⃗) = (active, ς')  if ς' ▷ α' = updExecState(ς) ∧ ∃wl. α'(wl) = active\n\
             \u{20}                 = unwind(ς ◁ τ⃗)  otherwise",
            None,
        ),
        R::Dop => entry(
            rule,
            Thread,
            THREAD,
            "(dop)  ⟨θ | dop r e1..en, φ, ϱ⟩ —V r ← dop(E e1..E en) tid ro lo regs(instr, φ)→Θ θ",
            Some("D7: the register write completes in the step"),
        ),
        R::Mov => entry(
            rule,
            Thread,
            THREAD,
            "(mov)  ⟨θ | mov r e, φ, ϱ⟩ —V r ← E e tid ro lo regs→Θ θ",
            Some("D7"),
        ),
        R::Setp => entry(
            rule,
            Thread,
            THREAD,
            "(setp)  ⟨θ | setp comp r e1 e2, φ, ϱ⟩ —V r ← comp(E e1, E e2) tid ro lo regs→Θ θ",
            Some("D7"),
        ),
        R::Ld => entry(
            rule,
            Thread,
            THREAD,
            "(ld)  ⟨θ | ld vol_ε ss cop_ε size r e, φ, ϱ⟩ —V r ← E e ss size vol_ε cop_ε tid ro lo regs→Θ θ",
            Some("D7: flat memory: the load completes in the step"),
        ),
        R::St => entry(
            rule,
            Thread,
            THREAD,
            "(st)  ⟨θ | st vol_ε ss cop_ε size e r, φ, ϱ⟩ —E e ss size E r vol_ε cop_ε tid ro lo regs→Θ θ",
            Some(
                "D7: flat memory: lanes store in ascending lane order, the highest lane's value stays",
            ),
        ),
        R::Atom => entry(
            rule,
            Thread,
            THREAD,
            "(atom)  ⟨θ | atom ss aop size r e1 e2 e3_ε, φ, ϱ⟩ —V r ← E e1 ss aop size E e2 E_ε e3 tid ro lo regs→Θ θ",
            Some("D7"),
        ),
        R::Bra => entry(
            rule,
            Thread,
            THREAD,
            "(bra)  ⟨θ | bra e, φ, ϱ⟩ —bra wl (E e)→Θ θ",
            None,
        ),
        R::Call => entry(
            rule,
            Thread,
            THREAD,
            "(call)  ⟨θ ▷ κ | call e, φ, ϱ⟩ —call wl (E e)→Θ θ ◁ φ_localEnv(E e) :: κ",
            Some(
                "D4 (frame pushed at the warp step for the chosen group); D12 (each level \
                  records its call site, for return values)",
            ),
        ),
        R::Ret => entry(
            rule,
            Thread,
            THREAD,
            "(return)  ⟨θ ▷ ν :: ν⃗ | ret, φ, ϱ⟩ —return wl→Θ θ ◁ ν⃗",
            Some("D6: at call depth 0 it is exit; D12: return values are copied back"),
        ),
        R::ExitThread => entry(
            rule,
            Thread,
            THREAD,
            "(exit)  ⟨θ | exit, φ, ϱ⟩ —exit wl→Θ θ",
            None,
        ),
        R::Break => entry(
            rule,
            Thread,
            THREAD,
            "(break)  ⟨θ | brk, φ, ϱ⟩ —break wl→Θ θ",
            None,
        ),
        R::Vote => entry(
            rule,
            Thread,
            THREAD,
            "(vote)  ⟨θ | vote vm r e, φ, ϱ⟩ —vote (V r) (B e) wl tid ro lo regs→Θ θ\n\
             vote(.all, t⃗) = ⋀ t_p;  vote(.any, t⃗) = ⋁ t_p;  vote(.uni, t⃗) = ∀t1,t2. t1_p = t2_p;\n\
             vote(.ballot, t⃗): bit wl set iff lane wl voted true (inactive lanes vote false)",
            None,
        ),
        R::MemStep => entry(
            rule,
            Memory,
            (Some("4.6"), Some((1403, 1420))),
            "(step)  ⟨stm, η, σ⟩ →Op_yield ⟨stm', η', σ'⟩\n\
             ─────────────────────────────────────────────   if highestPrio(π, op⃗)\n\
             ⟨η | (op ▷ stm, σ, π) ∘ op⃗⟩ →M ⟨η' | (op ◁ stm', σ') ∘ op⃗⟩\n\
             (end)   the same with →Op_end: the completed op leaves op⃗.\n\
             One micro step of one in-flight memory program: its statements up to the next\n\
             yield, deferral or end, atomically.",
            Some(
                "D16: priorities are replaced by per-thread dependencies (same bytes in program \
                  order; release, acquire and fences per the PTX memory model); a pure retry of a \
                  deferred op is not offered. D18: writeToRegs and releaseRegs share one micro \
                  step, and a yield before a left mover (atomOp, unlock, the op's end) or after a \
                  right mover (readMem of a line pinned in L2) does not end the step (folded \
                  micro steps: the same outcomes, fewer steps). D31: with the folded micro steps, \
                  in a program with a .cta release launched as several CTAs on several SMs a global store is staged on its SM from its \
                  first micro step to its end (every load of the SM reads it), and a .cta \
                  release waits for its thread's earlier stores only to be staged",
            ),
        ),
        R::EvictL1 => entry(
            rule,
            Memory,
            (Some("4.6"), Some((1425, 1433))),
            "(evict_L1)  ⟨η | op⃗⟩ →M ⟨η ◁ l1Cache(pid) := cl⃗ | op⃗⟩\n\
             if canEvict(l1Cache(η, pid), pAddr) ∧ cl⃗ = evict(l1Cache(η, pid), pAddr) ∧ cl⃗ ≠ ε\n\
             A clean, unpinned line silently leaves an SM's L1.",
            None,
        ),
        R::EvictL2 => entry(
            rule,
            Memory,
            (Some("4.6"), Some((1434, 1440))),
            "(evict_L2)  ⟨η | op⃗⟩ →M ⟨η ◁ l2Cache := cl⃗ | op⃗⟩\n\
             if canEvict(l2Cache(η), pAddr) ∧ cl⃗ = evict(l2Cache(η), pAddr) ∧ cl⃗ ≠ ε",
            Some("offered only with --silent all: it changes no value a thread can read"),
        ),
        R::WbL1 => entry(
            rule,
            Memory,
            (Some("4.6"), Some((1441, 1447))),
            "(wb_L1)  a dirty L1 line (pAddr, cw, true, true, mid⃗, ec) becomes clean if\n\
             cl⃗2 = write(l2Cache, pAddr, cw) ≠ ε: the data moves to L2 (local memory only).",
            Some("offered only with --silent all; the machine keeps .local accesses direct (D16)"),
        ),
        R::WbL2 => entry(
            rule,
            Memory,
            (Some("4.6"), Some((1449, 1452))),
            "(wb_L2)  ⟨η ▷ (pAddr, cw, true, true, mid⃗, ec) ∘ cl⃗ | op⃗⟩ →M\n\
             ⟨write_device(η, ssd, pAddr, MaxMemOpSize, cw) ◁ l2Cache := (pAddr, cw, false, …) ∘ cl⃗ | op⃗⟩",
            Some(
                "writes only the dirty bytes of the line (per-byte masks, so that narrower writes to one line do not overwrite each other)",
            ),
        ),
        R::Flush => entry(
            rule,
            Memory,
            (Some("4.6"), Some((1453, 1460))),
            "(flush)  every global line of one SM's L1 becomes init; local lines stay.",
            Some(
                "A10: lines pinned by in-flight ops are set aside for their pinners instead of \
                  wiped; fences, acquires and barrier completion flush the issuing SM's L1",
            ),
        ),
        R::Membar => entry(
            rule,
            Thread,
            THREAD,
            "(membar)  ⟨θ | membar mbl, φ, ϱ⟩ →Θ θ ◁ mbl    (the only rule without an action)",
            Some("D7: flat memory clears the level at once"),
        ),
        R::BarSync => entry(
            rule,
            Thread,
            THREAD,
            "(bar_sync)  ⟨θ | bar.sync e e'_ε, φ, ϱ⟩ —bar (E e) (E_ε e')→Θ θ ◁ .cta\n\
             block: updBar(χ, tc, w⃗) = updArrCnt(updAct(prepBar(χ, tc, barInfo(w⃗)), w⃗), w⃗); a warp\n\
             in which any lane executes bar adds WarpSize to the arrival count",
            Some("D9, D10, D11"),
        ),
        R::BarArrive => entry(
            rule,
            Thread,
            THREAD,
            "(bar_arrive)  ⟨θ | bar.arrive e e', φ, ϱ⟩ —bar (E e) (E e')→Θ θ    (no wait, no membar)",
            Some("D9"),
        ),
        R::BarRed => entry(
            rule,
            Thread,
            THREAD,
            "(bar_red)  ⟨θ | bar.red br r e e'_ε p, φ, ϱ⟩ —bar (E e) (E_ε e') (V r) (B p) tid ro lo regs→Θ θ ◁ .cta\n\
             (reconstructed: the thesis gives it in prose)  reduce(.and|.or|.popc, t⃗) over executing lanes",
            Some("D9: mixing bar.red with bar.sync/bar.arrive or two operators is an error"),
        ),
        R::Cvta => entry(
            rule,
            Thread,
            beyond,
            "cvta: generic ↔ state-space address conversion, a register write like (mov).\n\
             PTX beyond the thesis's subset (it has no generic addressing).",
            None,
        ),
        R::Nop => entry(
            rule,
            Thread,
            beyond,
            "An instruction with no effect on the state (e.g. a hint); the warp takes (next).",
            None,
        ),
        R::Trap => entry(
            rule,
            Thread,
            beyond,
            "trap: the program faults (error `trap`); PTX beyond the thesis's subset.",
            None,
        ),
        R::Shfl => entry(
            rule,
            Warp,
            beyond,
            "shfl.sync: each executing lane reads a register of a source lane of the same warp;\n\
             a warp communication action like (vote). PTX beyond the thesis's subset.",
            None,
        ),
        R::Match => entry(
            rule,
            Warp,
            beyond,
            "match.sync: the lanes whose operand equals this lane's; a warp communication action.",
            None,
        ),
        R::Redux => entry(
            rule,
            Warp,
            beyond,
            "redux.sync: a reduction over the executing lanes; a warp communication action.",
            None,
        ),
        R::ActiveMask => entry(
            rule,
            Warp,
            beyond,
            "activemask: the mask of the lanes executing the instruction (α ∧ guard).",
            None,
        ),
        R::WarpSync => entry(
            rule,
            Warp,
            beyond,
            "bar.warp.sync / *.sync masks: the named lanes meet before any proceeds (its);\n\
             under the SIMT stack the active lanes are already together.",
            Some("D13"),
        ),
        R::ItsStep => entry(
            rule,
            Its,
            beyond,
            "Independent thread scheduling (Volta+): the scheduler picks a converged group of\n\
             lanes (same per-lane pc); the group executes the instruction; no token stack.",
            Some("D10, D13: the thesis has no ITS"),
        ),
        R::Rendezvous => entry(
            rule,
            Its,
            beyond,
            "Under its: the lanes named by a warp-synchronous instruction's mask have all arrived;\n\
             they execute it together.",
            Some("D13"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for r in ALL {
            assert!(seen.insert(*r), "{r:?} twice");
            assert_eq!(doc(*r).rule, *r);
            assert!(!doc(*r).text.is_empty());
        }
    }

    #[test]
    fn names_find_rules_across_layers() {
        let bra: Vec<String> = find("bra").iter().map(RuleDoc::qualified_name).collect();
        assert_eq!(bra, ["warp/bra", "thread/bra"]);
        assert_eq!(find("thread/bra").len(), 1);
        assert_eq!(find("BraGuard")[0].rule, Rule::BraGuard);
        assert!(find("no_such_rule").is_empty());
        assert!(
            find("bra_guard")[0]
                .render()
                .contains("thesis section 5.4.1")
        );
    }
}
