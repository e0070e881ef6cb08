// Overview: who is best, on what (runs × scorers grid, tie-aware leaderboard, paired comparisons),
// repeated trials, cost and speed, and what was run. The Python side (report/overview.py) computes
// ranks, pairings, usage and configuration; the grid reads each run's statistics so live updates
// redraw it. Everything from a run reaches the page as text only.

// ---- run headers --------------------------------------------------------------------------
const AGENT_MODE = "agent-under-test";
const isAgentRun = (run) => (run.header || {}).harness_mode === AGENT_MODE;

function agentOf(header) {
  // The agent under test: its --agent spec and kind (cmd, http, py), from run.json's provider.
  const p = header.provider || {};
  const spec = p.agent || String(header.model || "").replace(/^agent:/, "");
  return { spec, kind: p.kind || String(spec).split(":")[0] };
}

function roundBudget(header) {
  const b = (header.harness_assistance || {}).round_budget;
  return b === undefined || b === null ? "–" : String(b);
}

function renderRunInfo() {
  // One line per run: what was measured (model or agent) and in which harness mode.
  const box = document.getElementById("run-info");
  box.replaceChildren(...DATA.runs.filter((run) => run.header && run.header.harness_mode).map((run) => {
    const h = run.header, agent = isAgentRun(run) ? agentOf(h) : null;
    const item = (cls, label, value) => el("span", { class: "ri " + cls }, el("span", { class: "ri-label", text: label + ": " }), el("code", { text: value }));
    return el("div", { class: "run-info", "data-testid": "run-info", "data-run": run.id, "data-mode": h.harness_mode },
      el("strong", { text: run.label }), " ",
      agent ? [item("agent-spec", "agent", agent.spec), " · ", item("agent-kind", "kind", agent.kind)] : item("model", "model", h.model || ""),
      " · ", item("mode", "harness mode", h.harness_mode), " · ", item("budget", "round budget", roundBudget(h)),
      agent ? el("span", { class: "note", text: " (no rounds: the agent runs its own loop; rounds below are reconstructed from call timing)" }) : null,
      preflightPanel((h.options || {}).preflight));
  }));
}

function preflightPanel(pf) {
  // run --preflight: callbench doctor's table of the endpoint (run.json options.preflight), collapsed
  // unless a check failed. Every cell is text from run.json.
  if (!pf || !Array.isArray(pf.checks)) return null;
  const n = pf.counts || {}, failed = pf.checks.filter((c) => c.status === "failed");
  const line = `preflight: ${n.passed || 0} passed, ${n.failed || 0} failed${failed.length ? " (" + failed.map((c) => c.name).join(", ") + ")" : ""}, ${n.skipped || 0} skipped · ${pf.requests || 0} request(s)`;
  const rows = pf.checks.map((c) => el("tr", { "data-testid": "preflight-check", "data-check": c.id, "data-status": c.status },
    el("td", { text: c.name }), el("td", {}, el("span", { class: "pill " + (c.status === "passed" ? "pass" : c.status === "failed" ? "fail" : "skip"), text: c.status })),
    el("td", { text: c.evidence }), el("td", { class: c.status === "failed" ? "" : "note", text: c.corrupts })));
  return el("details", { class: "preflight" + (failed.length ? " has-failed" : ""), "data-testid": "preflight", open: failed.length ? "" : null },
    el("summary", { class: failed.length ? "bad-text" : "", text: line }),
    el("p", { class: "note", text: `callbench doctor against the endpoint before the first case (${pf.at || ""}); failed checks are serving faults, not the model's (docs/doctor.md).` }),
    el("table", {}, el("thead", {}, el("tr", {}, ["check", "result", "evidence", "a failure would corrupt"].map((t) => el("th", { text: t })))), el("tbody", {}, rows)));
}

// ---- the slot's sections ------------------------------------------------------------------
function section(id, title, ...kids) {
  return el("section", { id, class: "ov-section" }, el("h2", { text: title }), ...kids);
}

function buildOverviewSlot() {
  // The overview owns #slot-overview: its sections are laid out once, filled by the renderers.
  document.getElementById("slot-overview").replaceChildren(
    section("grid-section", "Who is best, on what",
      el("p", { class: "note", text: "Strict accuracy (pass flag true) with its 95% interval and n completed, per run and scorer; runs in different harness modes are separate rows, never pooled. Errors are excluded from n, never counted as failures." }),
      el("div", { id: "grid", class: "grid-wrap" })),
    section("leaderboard-section", "Leaderboard", el("p", { id: "rank-rule", class: "note" }), el("div", { id: "leaderboard" })),
    section("comparisons-section", "Paired comparisons",
      el("p", { class: "note", text: "A minus B on the cases both runs completed (paired by instruction and expected steps, so suite aliases pair): paired bootstrap 95% interval, exact McNemar p-value. Coloured only when the interval excludes 0." }),
      el("p", { class: "legend", "data-testid": "comparison-legend" }, "Disagreeing cases: ",
        el("span", { class: "pill win-a", text: "A✓ A passed, B failed" }), " ", el("span", { class: "pill win-b", text: "B✓ B passed, A failed" }),
        " — click one to show that case in both runs."),
      el("div", { id: "comparisons" })),
    section("trials-section", "Repeated trials", el("div", { id: "trials" }), el("div", { id: "trial-notes" })),
    section("cost-section", "Cost and speed", el("div", { id: "cost" }), el("div", { id: "cost-chart" })),
    section("config-section", "What was run", el("div", { id: "config-warning-box" }), el("div", { id: "config" })));
}

// ---- runs × scorers grid --------------------------------------------------------------------
function scorerColumns() {
  // Strict scorers in the documented order (overview.py: scorer_order), then diagnostics apart.
  const given = DATA.scorers || { strict: [], diagnostic: [] };
  const diag = new Set(given.diagnostic.concat(DATA.runs.flatMap((r) => (r.header || {}).diagnostic_scorers || [])));
  const known = new Set(given.strict.concat(given.diagnostic));
  const extra = allTiers().filter((t) => !known.has(t));
  return { strict: given.strict.concat(extra.filter((t) => !diag.has(t))), diagnostic: given.diagnostic.concat(extra.filter((t) => diag.has(t))) };
}

function subjectOf(run) {
  const h = run.header || {};
  if (isAgentRun(run)) return `agent ${agentOf(h).spec}`;
  return h.model || "";
}

function detailList(run, s) {
  return el("details", { class: "more" }, el("summary", { text: "detail" }),
    el("dl", {},
      el("dt", { text: "passed" }), el("dd", { class: "passed", text: s.passed }),
      el("dt", { text: "partial (diagnostic)" }), el("dd", { class: "diag partial", text: fmt(s.partial_mean_diagnostic) }),
      el("dt", { text: "retrieval recall" }), el("dd", { class: "recall", text: fmt(s.retrieval_recall) }),
      el("dt", { text: "interval" }), el("dd", { class: "method", text: s.accuracy.method })));
}

function agentInfo(run, s) {
  // Agent-under-test cells name the agent and its round budget in view (not behind "detail").
  if (s.harness_mode !== AGENT_MODE || !run.header) return null;
  const agent = agentOf(run.header);
  return el("dl", { class: "agent-info" },
    el("dt", { text: "agent" }), el("dd", { class: "agent-spec", text: `${agent.spec} (${agent.kind})` }),
    el("dt", { text: "round budget" }), el("dd", { class: "budget", text: roundBudget(run.header) }));
}

function gridCell(run, s, diagnostic) {
  if (!s) return el("td", { class: "cell empty" + (diagnostic ? " diag-col" : ""), text: "–" });
  const a = s.accuracy;
  return el("td", { class: "cell" + (diagnostic ? " diag-col" : ""), "data-testid": "card", "data-run": run.id, "data-tier": s.tier, "data-mode": s.harness_mode,
    "data-value": a.estimate, "data-low": a.low, "data-high": a.high, "data-diagnostic": diagnostic ? "true" : "false" },
    el("div", { class: "acc", "data-value": a.estimate, text: pct(a.estimate) }),
    el("div", { class: "ci", "data-low": a.low, "data-high": a.high, text: `95% CI ${pct(a.low)} – ${pct(a.high)}` }),
    el("div", { class: "counts" }, "n ", el("span", { class: "n", text: s.n }),
      el("span", { class: "err-wrap" + (s.errors ? " has-errors" : "") }, " · errors ", el("span", { class: "errors", text: s.errors }))),
    agentInfo(run, s), detailList(run, s));
}

function renderGrid() {
  const box = document.getElementById("grid");
  if (!DATA.runs.some((run) => run.statistics.strata.length)) { box.replaceChildren(el("p", { class: "note", text: "No scored records yet." })); return; }
  const cols = scorerColumns();
  const head1 = el("tr", {}, el("th", { colspan: 3, text: "" }),
    cols.strict.length ? el("th", { colspan: cols.strict.length, class: "group strict", text: "strict tiers" }) : null,
    cols.diagnostic.length ? el("th", { colspan: cols.diagnostic.length, class: "group diag-col", "data-testid": "diagnostic-group", text: "diagnostic — not a pass criterion" }) : null);
  const head2 = el("tr", {}, ["Run", "Model or agent", "Harness mode"].map((h) => el("th", { text: h })),
    cols.strict.map((t) => el("th", { class: "tier", "data-tier": t, text: t })),
    cols.diagnostic.map((t) => el("th", { class: "tier diag-col", "data-tier": t, text: t })));
  const rows = [];
  DATA.runs.forEach((run) => {
    const modes = uniq(run.statistics.strata.map((s) => s.harness_mode));
    for (const mode of modes) {
      const at = (t) => run.statistics.strata.find((s) => s.tier === t && s.harness_mode === mode);
      rows.push(el("tr", { "data-testid": "grid-row", "data-run": run.id, "data-mode": mode },
        el("th", { class: "run-label", text: run.label }), el("td", { class: "subject", text: subjectOf(run) }), el("td", { class: "mode", text: mode }),
        cols.strict.map((t) => gridCell(run, at(t), false)), cols.diagnostic.map((t) => gridCell(run, at(t), true))));
    }
  });
  // Serving faults and run limits, per run: shown apart from the accuracy figures, never folded in.
  const serving = (DATA.serving_notes || []).map((n) => el("p", { class: "note warn-note", "data-testid": "serving-note", text: n }));
  box.replaceChildren(el("table", { class: "grid", "data-export": "overview-grid", "data-testid": "grid" }, el("thead", {}, head1, head2), el("tbody", {}, rows)), ...serving);
}

// ---- leaderboard and comparisons ----------------------------------------------------------
const signedPts = (x) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)}`;

function renderLeaderboard() {
  const show = DATA.runs.length > 1;
  document.getElementById("leaderboard-section").hidden = !show;
  document.getElementById("comparisons-section").hidden = !show;
  if (!show) return;
  document.getElementById("rank-rule").textContent = DATA.rank_rule || "";
  const rows = (DATA.leaderboard || []).map((r) => el("tr", { "data-testid": "leader", "data-run": DATA.runs[r.run] ? DATA.runs[r.run].id : "", "data-tier": r.tier, "data-mode": r.harness_mode, "data-rank": r.rank, "data-tied": r.tied ? "true" : "false" },
    el("td", { class: "rank" + (r.tied ? " tied" : ""), text: r.rank_text || r.rank }), el("td", { text: r.label }), el("td", { text: r.tier }), el("td", { text: r.harness_mode }),
    el("td", { class: "num", text: pct(r.accuracy) }), el("td", { class: "num", text: `${pct(r.low)} – ${pct(r.high)}` }), el("td", { class: "num", text: r.n }), el("td", { class: "num", text: r.errors }),
    el("td", { class: "diag", text: fmt(r.partial) })));
  const board = table(["Rank", "Run", "Tier", "Mode", "Strict accuracy", "95% CI", "n", "Errors", "Partial (diag.)"], rows);
  board.setAttribute("data-export", "leaderboard");
  document.getElementById("leaderboard").replaceChildren(board);
  renderComparisons();
}

function disagreeingCases(c) {
  // The page ships [A's row, B's row, winner] per disagreeing case; the keys are read from the rows.
  const ra = DATA.runs[c.a_index].records, rb = DATA.runs[c.b_index].records;
  return (c.disagreeing_rows || []).map(([ia, ib, w]) => ({ a_key: ra[ia].key, b_key: rb[ib].key, winner: w ? "b" : "a" }));
}

function caseButton(c, item) {
  const label = `${c.a} vs ${c.b} · ${c.tier}: ${item.a_key}`;
  const keys = [[c.a_index, item.a_key, null], [c.b_index, item.b_key, null]];
  return el("button", { class: "pill case-pick win-" + item.winner, type: "button", "data-testid": "disagree", "data-key": item.a_key, "data-b-key": item.b_key, "data-winner": item.winner,
    title: item.b_key === item.a_key ? item.a_key : `${item.a_key} = ${item.b_key}`, onclick: () => selectCases({ label, keys }) },
  (item.winner === "a" ? "A✓ " : "B✓ ") + item.a_key);
}

function renderComparisons() {
  const SHOWN = 30;
  const crow = (DATA.comparisons || []).map((c) => {
    const d = c.difference, cases = disagreeingCases(c);
    const sig = c.significant;
    const more = cases.length > SHOWN ? el("button", { class: "pill more", type: "button", "data-testid": "disagree-more",
      onclick: () => selectCases({ label: `${c.a} vs ${c.b} · ${c.tier}: ${cases.length} disagreeing cases`, keys: cases.flatMap((x) => [[c.a_index, x.a_key, null], [c.b_index, x.b_key, null]]) }) },
    `… ${cases.length - SHOWN} more (select all ${cases.length})`) : null;
    return el("tr", { "data-testid": "comparison", "data-a": c.a_index, "data-b": c.b_index, "data-tier": c.tier, "data-significant": sig ? "true" : "false" },
      el("td", { text: c.a }), el("td", { text: c.b }), el("td", { text: c.tier }), el("td", { text: c.harness_mode }), el("td", { class: "num", text: c.n }),
      el("td", { class: "diff num " + (sig ? (d.estimate >= 0 ? "good" : "bad-text") : "neutral"), "data-testid": "diff", text: `${signedPts(d.estimate)} pts${sig ? "" : " (not significant)"}` }),
      el("td", { class: "num", text: `${(100 * d.low).toFixed(1)} – ${(100 * d.high).toFixed(1)}` }),
      el("td", { class: "num", text: Number(c.mcnemar_p).toPrecision(3) }), el("td", { class: "num", text: `${c.only_a} / ${c.only_b}` }),
      el("td", { "data-testid": "decision", text: c.decision || "" }),
      el("td", { class: "num", "data-testid": "mde", text: c.mde == null ? "—" : (100 * c.mde).toFixed(1) }),
      el("td", { class: "num", "data-testid": "noise-floor", title: c.noise_floor_note || "", text: c.noise_floor == null ? "—" : `±${(100 * c.noise_floor).toFixed(1)}` }),
      el("td", { class: "num", text: `${c.errors_a ?? 0} / ${c.errors_b ?? 0}` }),
      el("td", { class: "picks" }, cases.slice(0, SHOWN).map((x) => caseButton(c, x)), more));
  });
  const t = table(["A", "B", "Tier", "Mode", "Shared cases", "A − B", "95% CI", "McNemar p", "only A / only B", "Decision (declared test)", "Detectable (pts, 80% power)", "Noise floor (pts)", "Lost to errors A / B", "Disagreeing cases"], crow);
  t.setAttribute("data-export", "paired-comparisons");
  document.getElementById("comparisons").replaceChildren(t,
    ...(DATA.notes || []).map((n) => el("p", { class: "note warn-note", "data-testid": "comparison-note", text: n })));
}

// ---- repeated trials -----------------------------------------------------------------------
function renderTrials() {
  const rows = [];
  DATA.runs.forEach((run, ri) => {
    for (const s of run.statistics.strata) {
      const t = s.trials || {};
      if ((t.trials || 1) < 2) continue;
      const ks = Object.keys(t.pass_at_k || {});
      const flips = t.flipping_cases || [];
      const pick = (key) => el("button", { class: "pill case-pick flip-pick", type: "button", "data-testid": "flip", "data-key": key,
        onclick: () => selectCases({ label: `${run.label}: trials of ${key}`, keys: [[ri, key, null]] }) }, key);
      rows.push(el("tr", { "data-testid": "trials-row", "data-run": run.id, "data-tier": s.tier, "data-mode": s.harness_mode },
        el("td", { text: run.label }), el("td", { text: s.tier }), el("td", { text: s.harness_mode }),
        el("td", { class: "num trials-k", text: t.trials }), el("td", { text: ks.map((k) => `@${k} ${pct(t.pass_at_k[k])}`).join("  ") }),
        el("td", { text: ks.map((k) => `^${k} ${pct(t.pass_hat_k[k])}`).join("  ") }),
        el("td", { class: "flip num", text: pct(t.flip_rate) }),
        el("td", { class: "picks" }, flips.slice(0, 12).map(pick), flips.length > 12 ? el("button", { class: "pill more", type: "button", "data-testid": "flip-more",
          onclick: () => selectCases({ label: `${run.label}: ${flips.length} flipping cases`, keys: flips.map((k) => [ri, k, null]) }) }, `… ${flips.length - 12} more`) : null)));
    }
  });
  const notes = (DATA.trial_notes || []).map((n) => el("p", { class: "note warn-note", "data-testid": "trial-note", "data-run": DATA.runs[n.run] ? DATA.runs[n.run].id : "", text: `${n.label} (${n.harness_mode}): ${n.text}` }));
  document.getElementById("trials-section").hidden = rows.length === 0 && notes.length === 0;
  const t = table(["Run", "Tier", "Mode", "Trials", "pass@k", "pass^k", "Flip rate", "Flipping cases (click: its trials)"], rows);
  t.setAttribute("data-export", "repeated-trials");
  document.getElementById("trials").replaceChildren(t);
  document.getElementById("trial-notes").replaceChildren(...notes);
}

// ---- cost and speed ------------------------------------------------------------------------
function figure(cls, value, why, digits) {
  if (value === null || value === undefined) return el("td", { class: "num unknown " + cls, "data-value": "", title: why || "", text: why ? `– (${why})` : "–" });
  const text = digits === undefined ? Number(value).toLocaleString("en-US") : Number(value).toFixed(digits);
  return el("td", { class: "num " + cls, "data-value": value, text });
}

function renderCost() {
  const rows = (DATA.usage || []).map((u) => {
    const why = u.missing || {};
    return el("tr", { "data-testid": "cost-row", "data-run": DATA.runs[u.run] ? DATA.runs[u.run].id : "" },
      el("td", { text: u.label }),
      figure("input", u.input, why.tokens), figure("output", u.output), figure("reasoning", u.reasoning), figure("cached", u.cached_input),
      el("td", { class: "num requests", "data-value": u.requests, text: `${u.requests}${u.cache_hits ? ` (+${u.cache_hits} cached)` : ""}` }),
      figure("p50", u.latency_ms_p50, why.latency, 1), figure("p95", u.latency_ms_p95, why.latency ? " " : undefined, 1),
      figure("case-p50", u.case_latency_ms_p50, why.case_latency, 1), figure("case-p95", u.case_latency_ms_p95, undefined, 1),
      figure("cost", u.cost_usd, why.cost, 4), costCell("cost-per-case", u.cost_per_case, why.cost ? " " : undefined), passCostCell(u),
      el("td", { class: "note", text: u.source + (u.price_model ? ` · priced as ${u.price_model}${u.price_table ? ` (${u.price_table})` : ""}` : "") }));
  });
  const t = table(["Run", "Input tokens", "Output tokens", "Reasoning", "Cached input", "Requests", "Latency p50 (ms)", "Latency p95 (ms)",
    "Case latency p50 (ms)", "Case latency p95 (ms)", "Cost (USD)", "Cost per case (USD)", "Cost per passed case (USD)", "Source"], rows);
  t.setAttribute("data-export", "cost-speed");
  // conversation runs: the agent's and the simulated user's tokens per conversation, apart
  const conversations = (DATA.usage || []).filter((u) => u.conversations_text).map((u) =>
    el("p", { class: "note", "data-testid": "conversation-tokens", "data-run": DATA.runs[u.run] ? DATA.runs[u.run].id : "", text: `${u.label}: tokens ${u.conversations_text}` }));
  document.getElementById("cost").replaceChildren(t, ...conversations);
}

// ---- what was run --------------------------------------------------------------------------
function renderConfig() {
  const config = DATA.config || [];
  const names = uniq(config.flatMap((c) => Object.keys(c.fields || {})));
  const order = config.length && config[0].fields ? Object.keys(config[0].fields).concat(names.filter((n) => !(n in config[0].fields))) : names;
  const rows = config.map((c) => el("tr", { "data-testid": "config-row", "data-run": DATA.runs[c.run] ? DATA.runs[c.run].id : "" },
    el("td", { text: c.label }), order.map((n) => el("td", { class: "cfg", "data-field": n, text: (c.fields || {})[n] ?? "–" })),
    el("td", { class: "suites" }, (c.suites || []).map((s) => el("div", { class: "suite-hash" }, el("strong", { text: s.name }), ` (${s.n_cases} cases) `,
      el("code", { title: s.hash, text: `suite ${String(s.hash).slice(0, 12)}` }), " ", el("code", { title: s.registry_hash, text: `registry ${String(s.registry_hash).slice(0, 12)}` }), " ",
      el("code", { title: s.prompt_template_hash, text: `prompt ${String(s.prompt_template_hash).slice(0, 12)}` }))))));
  const t = table(["Run"].concat(order, ["Suites (hashes)"]), rows);
  t.setAttribute("data-export", "configuration");
  document.getElementById("config").replaceChildren(t);
  const warnings = DATA.config_warnings || [];
  document.getElementById("config-warning-box").replaceChildren(...(warnings.length ? [el("div", { class: "config-warning", "data-testid": "config-warning" },
    el("strong", { text: "The compared runs differ in more than the model:" }), el("ul", {}, warnings.map((w) => el("li", { text: w }))))] : []));
  document.getElementById("config-section").hidden = config.length === 0;
}

buildOverviewSlot();
onRender(renderRunInfo);
onRender(renderGrid);
onRender(renderLeaderboard);
onRender(renderTrials);
onRender(renderCost);
onRender(renderConfig);
