// The cudasem teaching page: draws the embedded run (see view/src/model.rs for the data).
// Position p is the state after p steps of the window (p = 0: the window's start state);
// step p is the transition that led to it. Vanilla JS, nothing fetched.
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const N = D.steps.length;
const M = D.meta;
const W = D.warps;
// A program of several launches names blocks by grid (D.grids, thesis 5.7): W holds global
// block numbers, grid g's being G[g].base.. G[g].base + G[g].blocks - 1.
const G = D.grids || [];
const gridOf = (b) => { let g = 0; while (g + 1 < G.length && G[g + 1].base <= b) g++; return g; };
const bname = (b) => G.length ? `grid ${gridOf(b)} block ${b - G[gridOf(b)].base}` : "block " + b;
const wkey = (i) => W[i] ? W[i][0] + "." + W[i][1] : "?";
const wname = (i) => !W[i] ? "?" : G.length ? `${bname(W[i][0])} warp ${W[i][1]}` : wkey(i);
const wtitle = (i) => G.length ? wname(i) : "warp " + wname(i);
const wbadge = (i) => G.length ? `g${gridOf(W[i][0])} ${W[i][0] - G[gridOf(W[i][0])].base}.${W[i][1]}` : wkey(i);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
const abs = (p) => M.from + p; // absolute step number of window position p

// Change lists: per warp, per block (barriers), and the caches: [[p, value], ...] ascending.
const warpHist = W.map(() => []);
const barHist = new Map();
const cacheHist = [];
const gridHist = [];
function addSnap(p, s) {
  if (s.g) gridHist.push([p, s.g]);
  for (const [i, st] of s.w) { (warpHist[i] = warpHist[i] || []).push([p, st]); }
  for (const [b, bars] of s.b) { if (!barHist.has(b)) barHist.set(b, []); barHist.get(b).push([p, bars]); }
  if (s.c) cacheHist.push([p, s.c]);
}
addSnap(0, D.start);
D.steps.forEach((st, i) => addSnap(i + 1, st.s));
function at(hist, p) {
  let lo = 0, hi = hist.length - 1, best = null;
  while (lo <= hi) { const mid = (lo + hi) >> 1; if (hist[mid][0] <= p) { best = hist[mid][1]; lo = mid + 1; } else hi = mid - 1; }
  return best;
}
const hasListing = D.source.pc_listing.some((x) => x);
const ptxLine = (pc) => D.source.pc_line[pc] || 0;
const pcName = (pc) => "L" + ptxLine(pc) + (D.source.pc_listing[pc] ? " (listing " + D.source.pc_listing[pc] + ")" : "");
const figLabel = (pc, listingOnly) => listingOnly ? (D.source.pc_listing[pc] || null) : String(ptxLine(pc));
const tokenLabel = (pc, listingOnly) => listingOnly ? (D.source.pc_listing[pc] || String(pc)) : "L" + ptxLine(pc);

// ---- layout ----
const app = document.getElementById("app");
app.innerHTML = `
<header><h1>${esc(M.kernel)} <span class="muted" style="color:#cfd8e6">(${esc(M.ptx_path)})</span></h1>
<div class="meta">${G.length ? `a program of ${G.length} launches; ` : ""}${esc(M.setup)}, warp size ${M.warp_size}${M.policy ? ", schedule " + esc(M.policy) : ""}; ${M.total_steps} steps in the trace${M.termination ? "; ended: " + esc(M.termination) : ""}${D.lasso ? "; a lasso: the cycle from step " + (D.lasso.cycle_start + 1) + " repeats forever" : ""}.
Rule names are the thesis's (Habermaier, <i>The Model of Computation of CUDA and its Formal Semantics</i>); hover one for its text.</div></header>
<div class="notes" id="notes">${M.notes.map(esc).join("<br>")} Page data: ${(document.getElementById("data").textContent.length / 1024).toFixed(0)} KiB.</div>
<div class="controls">
 <button id="first" title="Home">|◀</button><button id="prev" title="Left arrow">◀</button>
 <input type="range" id="slider" min="0" max="${N}" value="0" aria-label="step">
 <button id="next" title="Right arrow">▶</button><button id="last" title="End">▶|</button>
 <span id="pos"></span>
 <label>warp <select id="warpsel"></select></label>
 <button id="wnext" title="w">next step of warp</button><button id="wprev" title="W">previous</button>
 <button id="divnext" title="d">next divergence</button>
 <label>watch <input id="watch" size="14" placeholder="global 0x…"></label><button id="watchnext" title="a">next write</button>
</div>
<div class="timeline"><canvas id="tl" height="40"></canvas><canvas id="ov" height="14"></canvas>
<div class="legend" id="legend"></div></div>
<main>
 <section id="grids" class="wide" style="display:none"><h2>Grids (thesis 5.7: launches of one stream run one after the other, grids of different streams concurrently)</h2><div id="gridsbody"></div></section>
 <section id="step"><h2>Step</h2><div id="stepbody"></div><div id="ruletext"></div></section>
 <section id="warps"><h2>Warps (SIMT state after the step)</h2><div id="warpsbody"></div></section>
 <section id="srcsec"><h2>PTX source <span class="muted">(badges: each warp's next instruction; yellow: executed in this step)</span></h2><div class="src" id="src"></div></section>
 <section id="cusec" style="display:none"><h2>CUDA source (line tables)</h2><div class="src" id="cu"></div></section>
 <section id="regs"><h2>Registers changed by this step</h2><div id="regsbody"></div></section>
 <section id="bars"><h2>Barriers</h2><div id="barsbody"></div></section>
 <section id="mem" class="wide" style="display:none"><h2>Memory (thesis chapter 4: L1 per SM, L2, in-flight memory programs)</h2><div id="membody"></div></section>
 <section id="figure" class="wide"><h2>Stack table of warp <span id="figwarp"></span> (as the thesis's Figures 5.2–5.4 draw it)</h2>
  <div class="muted" id="fignote"></div><div id="figbody"></div></section>
 <section id="lasso" class="wide" style="display:none"><h2>Lasso</h2><div id="lassobody"></div></section>
</main>`;
const $ = (id) => document.getElementById(id);

// ---- source panels (built once; markers move) ----
const srcEl = $("src");
srcEl.innerHTML = D.source.ptx.map((t, i) => `<div id="ptx${i + 1}"><span class="ln">${i + 1}</span>${esc(t)}</div>`).join("");
if (D.source.cu.length) {
  $("cusec").style.display = "";
  $("cu").innerHTML = D.source.cu.map((f, fi) => `<div class="muted">${esc(f.path)}</div>` +
    f.lines.map((t, i) => `<div id="cu${fi}_${i + 1}"><span class="ln">${i + 1}</span>${esc(t)}</div>`).join("")).join("");
}
let marked = [];
function mark(el, cls) { if (el) { el.classList.add(cls); marked.push([el, cls]); } }
// Badges go right after the line number, so long lines do not hide them.
function badge(el, text, sel) { if (el) { const b = document.createElement("span"); b.className = "badge" + (sel ? " sel" : ""); b.textContent = text; el.insertBefore(b, el.firstChild ? el.firstChild.nextSibling : null); marked.push([b, null]); } }
// Scrolls a source panel (not the page) so that its line `el` is in view.
function reveal(box, el) {
  if (!box || !el) return;
  const top = el.offsetTop, h = box.clientHeight;
  if (top < box.scrollTop || top > box.scrollTop + h - 20) box.scrollTop = Math.max(0, top - h / 3);
}
function clearMarks() { for (const [el, cls] of marked) { if (cls) el.classList.remove(cls); else el.remove(); } marked = []; }

// ---- warp selector ----
const sel = $("warpsel");
sel.innerHTML = W.map((w, i) => `<option value="${i}">${esc(wname(i))}</option>`).join("");
let selWarp = 0;

// ---- rules ----
function ruleSpan(key) {
  const r = D.rules[key];
  const name = key.split("/").pop();
  const title = r ? `${key} (${r.source})\n${r.text}${r.deviation ? "\ncudasem: " + r.deviation : ""}` : key;
  return `<span class="rule" data-rule="${esc(key)}" title="${esc(title)}">${esc(name)}</span>`;
}
document.addEventListener("click", (e) => {
  const t = e.target.closest && e.target.closest(".rule");
  if (!t) return;
  const r = D.rules[t.dataset.rule];
  const box = $("ruletext");
  box.style.display = "block";
  box.textContent = r ? `${t.dataset.rule} (${r.source})\n${r.text}${r.deviation ? "\ncudasem: " + r.deviation : ""}` : t.dataset.rule;
});

// ---- drawing ----
const hue = (u) => (u * 137.508) % 360;
function unitColor(st) {
  if (st.u !== null && st.u !== undefined) return `hsl(${hue(st.u)},65%,50%)`;
  return { issue: "#999", barrier: "#000", memory: "#7a5af8" }[st.k] || "#ccc";
}
function drawTimeline(p) {
  const c = $("tl"), w = c.clientWidth || 800; c.width = w;
  const g = c.getContext("2d"); g.clearRect(0, 0, w, c.height);
  const per = Math.max(1, Math.ceil(N / w));
  const cols = Math.ceil(N / per), cw = w / Math.max(cols, 1);
  if (D.lasso) {
    const cs = D.lasso.cycle_start - M.from;
    if (cs < N) { g.fillStyle = "#fde2e1"; g.fillRect(Math.max(0, cs / per) * cw, 0, w, c.height); }
  }
  for (let k = 0; k < cols; k++) {
    const st = D.steps[k * per];
    g.fillStyle = unitColor(st);
    const row = st.u !== null && st.u !== undefined ? (st.u % 6) : 6;
    g.fillRect(k * cw, 2 + row * 5, Math.max(cw, 1), 5);
    if (st.div) { g.fillStyle = "#000"; g.fillRect(k * cw, 37, Math.max(cw, 1), 3); }
  }
  g.fillStyle = "#c2410c"; g.fillRect(Math.min(w - 2, (p / Math.max(N, 1)) * w), 0, 2, c.height);
  const o = $("ov"), ow = o.clientWidth || 800; o.width = ow;
  const og = o.getContext("2d"); og.clearRect(0, 0, ow, o.height);
  const B = D.overview.buckets, bw = ow / Math.max(B.length, 1);
  B.forEach((b, k) => {
    let best = null, n = -1;
    for (const [u, cnt] of b) if (cnt > n) { n = cnt; best = u; }
    og.fillStyle = best === null ? "#eee" : best < W.length ? `hsl(${hue(best)},50%,60%)` : "#999";
    og.fillRect(k * bw, 4, Math.max(bw, 1), 10);
  });
  const t = Math.max(M.total_steps, 1);
  og.strokeStyle = "#c2410c"; og.lineWidth = 2;
  og.strokeRect((M.from / t) * ow, 1, Math.max(2, (N / t) * ow), 13);
}
function tokenHtml(t, listingOnly) {
  return `<span class="token ${t[0]}">(${t[0]}, ${t[1]}, ${esc(tokenLabel(t[2], listingOnly))})</span>`;
}
function stackCell(tokens) {
  return tokens.length ? tokens.map((t) => tokenHtml(t, false)).join("") : "ε";
}
function render(p) {
  p = Math.max(0, Math.min(N, p));
  cur = p;
  $("slider").value = p;
  const st = p > 0 ? D.steps[p - 1] : null;
  $("pos").textContent = p === 0 ? `start (before step ${abs(1)})` : `step ${abs(p)} of ${M.total_steps}` +
    (D.lasso && abs(p) > D.lasso.cycle_start ? " (cycle)" : D.lasso ? " (stem)" : "");
  // Step panel.
  let h = "";
  if (!st) {
    h = `<p>The state before the window's first step. Press → (or ▶) to step.</p>`;
  } else {
    h += `<div><b>choice</b>: <span class="mono">${esc(st.c)}</span> <span class="muted">(${st.k})</span></div>`;
    h += `<div class="offered"><b>offered</b> (${st.on}): ${st.o.map((o) => `<span class="${o === st.c ? "taken" : ""}">${esc(o)}</span>`).join("")}${st.on > st.o.length ? " …" : ""}</div>`;
    h += `<div><b>derivation</b> (device ▸ … ▸ thread) and what it did:</div><ul id="events">`;
    for (const e of st.e) {
      h += `<li><span class="derivation">${e.rules.map(ruleSpan).join('<span class="arrow"> ▸ </span>')}</span><br><span class="mono">${esc(e.text)}</span>${e.warn ? `<div class="warn">${esc(e.warn)}</div>` : ""}</li>`;
    }
    h += "</ul>";
  }
  $("stepbody").innerHTML = h;
  // Warps panel and source markers.
  clearMarks();
  if (st) for (const e of st.e) if (e.x) mark($("ptx" + ptxLine(e.x.pc)), "here");
  let wh = "";
  W.forEach((w, i) => {
    const s = at(warpHist[i] || [], p);
    if (!s) return;
    const stepped = st && st.u === i;
    wh += `<div class="warp-title${stepped ? " stepped" : ""}" id="warp-${w[0]}-${w[1]}">${esc(wtitle(i))}${stepped ? " (stepped)" : ""}${s.done ? " — completed" : ""}${s.wait ? " — waiting at a barrier" : ""}</div>`;
    // Under independent thread scheduling there is no warp pc or stack: the lane groups are
    // the state.
    if (!s.g.length) {
      wh += `<table class="state" data-warp="${w[0]}.${w[1]}"><tr><th>pc</th><th>α</th><th>δ</th><th>τ (top first)</th></tr>`;
      wh += `<tr><td>${esc(pcName(s.pc))}</td><td>${s.a}</td><td>${s.d}</td><td>${stackCell(s.t)}</td></tr></table>`;
    } else {
      wh += `<table class="state"><tr><th>lane group pc</th><th>lanes</th></tr>` +
        s.g.map((g) => `<tr><td>${esc(pcName(g[0]))}</td><td>${g[1]}</td></tr>`).join("") + "</table>";
    }
    if (!s.done) {
      const groups = s.g.length ? s.g : [[s.pc, null]];
      for (const [pc, lanes] of groups) {
        const name = wbadge(i) + (lanes ? ":" + lanes : "");
        badge($("ptx" + ptxLine(pc)), name, i === selWarp);
        mark($("ptx" + ptxLine(pc)), "at");
        const cu = D.source.pc_cu[pc];
        if (cu) { mark($(`cu${cu[0]}_${cu[1]}`), "at"); badge($(`cu${cu[0]}_${cu[1]}`), name, i === selWarp); }
      }
    }
  });
  $("warpsbody").innerHTML = wh || `<p class="muted">No warp is resident.</p>`;
  const selState = at(warpHist[selWarp] || [], p);
  if (selState) {
    const pc = selState.g.length ? selState.g[0][0] : selState.pc;
    reveal($("src"), $("ptx" + ptxLine(pc)));
    const cu = D.source.pc_cu[pc];
    if (cu) reveal($("cu"), $(`cu${cu[0]}_${cu[1]}`));
  }
  // Registers.
  $("regsbody").innerHTML = st && st.r.length ?
    `<table class="state"><tr><th>warp</th><th>lane</th><th>register</th><th>before</th><th>after</th></tr>` +
    st.r.map((r) => `<tr><td>${wname(r[0])}</td><td>${r[1]}</td><td>${esc(r[2])}</td><td>${r[3]}</td><td>${r[4]}</td></tr>`).join("") + "</table>" :
    `<p class="muted">none</p>`;
  // Barriers.
  let bh = "";
  for (const [b, hist] of barHist) {
    const bars = at(hist, p) || [];
    if (!bars.length) continue;
    const waiting = W.map((w, i) => [w, i, at(warpHist[i] || [], p)]).filter(([w, , s]) => w[0] === b && s && s.wait).map(([, i]) => wname(i));
    bh += `<div>${bname(b)}: ` + bars.map((x) => `barrier ${x.id}: ${x.ac} of ${x.tc} threads arrived`).join("; ") +
      `; waiting: ${waiting.length ? waiting.join(", ") : "none"}</div>`;
  }
  $("barsbody").innerHTML = bh || `<p class="muted">No barrier in use.</p>`;
  // Memory.
  if (M.cached) {
    $("mem").style.display = "";
    const c = at(cacheHist, p);
    let mh = "";
    const lines = (ls, l1) => `<table class="state"><tr><th>line</th><th>bytes (.. invalid)</th><th>valid</th><th>dirty</th>${l1 ? "<th>wrt L2</th>" : ""}<th></th></tr>` +
      ls.map((l) => `<tr class="${l.stale ? "stale" : ""}"><td>${esc(l.at)}</td><td>${esc(l.bytes)}</td><td>${l.valid}</td><td>${l.dirty}</td>${l1 ? `<td class="flag">${l.stale ? "STALE" : "current"}</td>` : ""}<td>${l.pinned ? "pinned " : ""}${l.doomed ? "doomed" : ""}</td></tr>`).join("") + "</table>";
    if (c) {
      for (const [sm, ls] of c.l1) mh += `<div class="warp-title">L1 of SM ${sm}</div>` + lines(ls, true);
      if (!c.l1.length) mh += `<p class="muted">Every L1 is empty.</p>`;
      mh += `<div class="warp-title">L2</div>` + (c.l2.length ? lines(c.l2, false) : `<p class="muted">empty</p>`);
      mh += `<div class="warp-title">In-flight memory programs</div>`;
      mh += c.ops.length ? c.ops.map((o) => `<div><b>op ${o.id}</b>: ${esc(o.what)}, program ${esc(o.program)}${o.deps.length ? ", waits for " + o.deps.join(", ") : ""}<ol class="listing mono" start="0">` +
        o.listing.map((s, k) => `<li class="${k === o.pc ? "next" : ""}">${esc(s)}${k === o.pc ? "  ← next micro step" : ""}</li>`).join("") + "</ol></div>").join("") : `<p class="muted">none</p>`;
    }
    $("membody").innerHTML = mh;
  }
  // Grids.
  if (G.length) {
    $("grids").style.display = "";
    const gs = at(gridHist, p) || [];
    $("gridsbody").innerHTML = `<table class="state"><tr><th>grid</th><th>kernel</th><th>stream</th><th>grid, block</th><th>blocks</th><th>phase</th><th>issued</th><th>completed</th></tr>` +
      G.map((g, k) => { const s = gs[k] || {}; return `<tr><td>${k}</td><td>${esc(g.kernel)}</td><td>${g.stream}</td><td>(${g.grid.join(",")}), (${g.block.join(",")})</td><td>${g.blocks}</td><td>${esc(s.phase || "?")}</td><td>${s.issued ?? "?"}</td><td>${s.completed ?? "?"}</td></tr>`; }).join("") + "</table>" +
      gs.filter((s) => s.why).map((s) => `<div class="muted">${esc(s.why)}</div>`).join("");
  }
  drawFigure(p);
  drawTimeline(p);
  if (history.replaceState) history.replaceState(null, "", `#step=${abs(p)}&warp=${wkey(selWarp)}`);
}
let figListingOnly = hasListing;
// The figure's rows are built once per warp and mode; a step only moves the marks.
let figKey = null, figRows = [];
function drawFigure(p) {
  const key = selWarp + "/" + figListingOnly;
  if (key !== figKey) {
    figKey = key;
    $("figwarp").textContent = wname(selWarp);
    $("fignote").innerHTML = `One row per executed instruction: the pc executed, then α, δ and τ after the step (masks lane 0 first; δ: 0 enabled, b break, r return, x exit). Click a row to go to its step. ` +
      (hasListing ? `<label><input type="checkbox" id="figlisting" ${figListingOnly ? "checked" : ""}> listing rows only, pcs named by the listing's lines (<span class="mono">// listing line N</span>)</label>` : "pcs are named by their PTX line.");
    const cb = $("figlisting");
    if (cb) cb.onchange = () => { figListingOnly = cb.checked; drawFigure(cur); };
    let rows = "";
    const steps = [];
    D.steps.forEach((st, i) => {
      for (const e of st.e) {
        const x = e.x;
        if (!x || x.w !== selWarp) continue;
        const label = figLabel(x.pc, figListingOnly);
        if (label === null) continue;
        steps.push(i + 1);
        rows += `<tr data-step="${abs(i + 1)}"><td>${esc(label)}</td><td>${x.a}</td><td>${x.d}</td><td>${x.t.length ? x.t.map((t) => `(${t[0]}, ${t[1]}, ${esc(tokenLabel(t[2], figListingOnly))})`).join(" :: ") : "ε"}</td></tr>`;
      }
    });
    $("figbody").innerHTML = steps.length ? `<table class="state" id="figtable"><tr><th>pc</th><th>α</th><th>δ</th><th>τ</th></tr>${rows}</table>` : `<p class="muted">This warp executes nothing in the window.</p>`;
    const trs = steps.length ? $("figtable").querySelectorAll("tr[data-step]") : [];
    figRows = steps.map((q, k) => [q, trs[k]]);
  }
  let curRow = -1;
  for (const [q] of figRows) if (q <= p) curRow = q;
  for (const [q, tr] of figRows) tr.className = q === curRow ? "cur" : q > p ? "dim" : "";
}
function drawLasso() {
  if (!D.lasso) return;
  $("lasso").style.display = "";
  const L = D.lasso;
  const names = (xs) => xs.length ? xs.map(wname).join(", ") : "none";
  $("lassobody").innerHTML = `<p>Stem: steps 1 to ${L.cycle_start}; cycle: steps ${L.cycle_start + 1} to ${M.total_steps}, then again from step ${L.cycle_start + 1}, forever (the timeline shades the cycle).</p><ul>` +
    L.why.map((w) => `<li>${esc(w)}</li>`).join("") + `</ul><p class="muted">Warps stepping: ${names(L.stepping)}; enabled throughout: ${names(L.always_enabled)}; enabled at some point: ${names(L.sometimes_enabled)}.</p>`;
}

// ---- navigation ----
let cur = 0;
function findFrom(p, dir, pred) {
  for (let q = p + dir; q >= 1 && q <= N; q += dir) if (pred(D.steps[q - 1])) return q;
  return p;
}
$("slider").oninput = (e) => render(+e.target.value);
$("first").onclick = () => render(0);
$("last").onclick = () => render(N);
$("prev").onclick = () => render(cur - 1);
$("next").onclick = () => render(cur + 1);
sel.onchange = () => { selWarp = +sel.value; render(cur); };
const nextOfWarp = (dir) => render(findFrom(cur, dir, (s) => s.u === selWarp));
$("wnext").onclick = () => nextOfWarp(1);
$("wprev").onclick = () => nextOfWarp(-1);
$("divnext").onclick = () => render(findFrom(cur, 1, (s) => s.div));
const watchNext = () => {
  const a = $("watch").value.trim().toLowerCase();
  if (a) render(findFrom(cur, 1, (s) => s.e.some((e) => e.wa && (e.wa === a || e.wa.endsWith(" " + a)))));
};
$("watchnext").onclick = watchNext;
$("figbody").onclick = (e) => { const tr = e.target.closest("tr[data-step]"); if (tr) render(+tr.dataset.step - M.from); };
$("tl").onclick = (e) => { const r = e.target.getBoundingClientRect(); render(Math.round(((e.clientX - r.left) / r.width) * N)); };
document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "INPUT" && e.target.type !== "range") return;
  const k = e.key;
  if (k === "ArrowRight") render(cur + 1);
  else if (k === "ArrowLeft") render(cur - 1);
  else if (k === "PageDown") render(cur + 100);
  else if (k === "PageUp") render(cur - 100);
  else if (k === "Home") render(0);
  else if (k === "End") render(N);
  else if (k === "w") nextOfWarp(1);
  else if (k === "W") nextOfWarp(-1);
  else if (k === "d") $("divnext").click();
  else if (k === "a") watchNext();
  else return;
  e.preventDefault();
});
$("legend").textContent = `Timeline: one column per step of the window, coloured by the warp that stepped (grey: block issue, black: barrier, violet: memory)` +
  (D.lasso ? ", the cycle shaded red" : "") + ", a black tick under a step that diverged" + `; below, the whole run of ${M.total_steps} steps sampled in buckets of ${D.overview.size}, the window outlined. Keys: ← → step, PgUp/PgDn ±100, Home/End, w/W next/previous step of the selected warp, d next divergence, a next write to the watched address.`;

// Start position from the address: #step=S (absolute step number) &warp=B.W
const hp = new URLSearchParams(location.hash.slice(1));
if (hp.has("warp")) { const i = W.findIndex((w) => w[0] + "." + w[1] === hp.get("warp")); if (i >= 0) { selWarp = i; sel.value = i; } }
drawLasso();
render(hp.has("step") ? +hp.get("step") - M.from : 0);
// #keys=ArrowRight,ArrowLeft,w: press these keys once the page is drawn (demos, and the
// browser tests, which step the page as a person would).
if (hp.has("keys")) for (const k of hp.get("keys").split(",")) if (k) document.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true }));
window.addEventListener("resize", () => drawTimeline(cur));
// How long the page took to parse its data and draw the first step (bench/view_page.sh reads it).
document.body.dataset.drawnMs = Math.round(performance.now());
$("notes").append(` Drawn in ${document.body.dataset.drawnMs} ms.`);
