"use strict";
// callbench report. Every value from a run is untrusted model output: it only ever reaches the
// page through textContent or attribute setters, never through innerHTML, and no value becomes
// a link target.
(function () {
  const DATA = JSON.parse(document.getElementById("cb-data").textContent);
  const PAGE = 150; // rows rendered per lazy step
  const state = { rows: [], shown: 0, open: new Set() };

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = String(v);
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, String(v));
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }
  const svg = (tag, attrs) => {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    return node;
  };
  const pct = (x) => (x === null || x === undefined ? "–" : (100 * x).toFixed(1) + "%");
  const fmt = (x, d = 3) => (x === null || x === undefined ? "–" : Number(x).toFixed(d));
  const json = (v) => { try { return JSON.stringify(v, null, 1); } catch (e) { return String(v); } };
  const when = (t) => (typeof t === "number" ? new Date(t * 1000).toISOString().replace("T", " ").slice(0, 23) + "Z" : String(t || ""));
  const errText = (e) => (e && typeof e === "object" ? `${e.type || "error"}: ${e.message || ""}` : String(e || ""));
  const uniq = (xs) => Array.from(new Set(xs)).filter((x) => x !== undefined && x !== null && x !== "").sort();

  function allTiers() {
    return uniq(DATA.runs.flatMap((r) => r.statistics.strata.map((s) => s.tier)));
  }

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
        agent ? el("span", { class: "note", text: " (no rounds: the agent runs its own loop; rounds below are reconstructed from call timing)" }) : null);
    }));
  }

  // ---- summary cards ------------------------------------------------------------------------
  function renderCards() {
    const box = document.getElementById("cards");
    box.replaceChildren();
    if (!DATA.runs.some((run) => run.statistics.strata.length)) box.append(el("p", { class: "note", text: "No scored records yet." }));
    for (const run of DATA.runs) {
      for (const s of run.statistics.strata) {
        const a = s.accuracy;
        box.append(el("div", { class: "card", "data-testid": "card", "data-run": run.id, "data-tier": s.tier, "data-mode": s.harness_mode },
          el("h3", { text: `${run.label} · ${s.tier} · ${s.harness_mode}` }),
          el("div", { class: "acc", "data-value": a.estimate, text: pct(a.estimate) }),
          el("div", { class: "ci", "data-low": a.low, "data-high": a.high, text: `95% CI ${pct(a.low)} – ${pct(a.high)} (${a.method})` }),
          el("dl", {},
            el("dt", { text: "n" }), el("dd", { class: "n", text: s.n }),
            el("dt", { text: "passed" }), el("dd", { class: "passed", text: s.passed }),
            el("dt", { text: "errors" }), el("dd", { class: "errors", text: s.errors }),
            el("dt", { text: "partial (diagnostic)" }), el("dd", { class: "diag partial", text: fmt(s.partial_mean_diagnostic) }),
            el("dt", { text: "retrieval recall" }), el("dd", { class: "recall", text: fmt(s.retrieval_recall) }),
            s.harness_mode === AGENT_MODE && run.header ? [
              el("dt", { text: "agent" }), el("dd", { class: "agent-spec", text: `${agentOf(run.header).spec} (${agentOf(run.header).kind})` }),
              el("dt", { text: "round budget" }), el("dd", { class: "budget", text: roundBudget(run.header) })] : null)));
      }
    }
  }

  function renderTrials() {
    const rows = [];
    for (const run of DATA.runs) for (const s of run.statistics.strata) {
      const t = s.trials || {};
      if ((t.trials || 1) < 2) continue;
      const ks = Object.keys(t.pass_at_k);
      rows.push(el("tr", {}, el("td", { text: run.label }), el("td", { text: s.tier }), el("td", { text: s.harness_mode }),
        el("td", { text: t.trials }), el("td", { text: ks.map((k) => `@${k} ${pct(t.pass_at_k[k])}`).join("  ") }),
        el("td", { text: ks.map((k) => `^${k} ${pct(t.pass_hat_k[k])}`).join("  ") }),
        el("td", { class: "flip", text: pct(t.flip_rate) }), el("td", { text: (t.flipping_cases || []).slice(0, 12).join(", ") })));
    }
    document.getElementById("trials-section").hidden = rows.length === 0;
    document.getElementById("trials").replaceChildren(table(["Run", "Tier", "Mode", "Trials", "pass@k", "pass^k", "Flip rate", "Flipping cases"], rows));
  }

  function table(head, rows) {
    return el("table", {}, el("thead", {}, el("tr", {}, head.map((h) => el("th", { text: h })))), el("tbody", {}, rows));
  }

  function renderLeaderboard() {
    const show = DATA.runs.length > 1;
    document.getElementById("leaderboard-section").hidden = !show;
    document.getElementById("comparisons-section").hidden = !show;
    if (!show) return;
    const rows = DATA.leaderboard.map((r) => el("tr", { "data-testid": "leader" },
      el("td", { text: r.rank }), el("td", { text: r.label }), el("td", { text: r.tier }), el("td", { text: r.harness_mode }),
      el("td", { text: pct(r.accuracy) }), el("td", { text: `${pct(r.low)} – ${pct(r.high)}` }), el("td", { text: r.n }), el("td", { text: r.errors }),
      el("td", { class: "diag", text: fmt(r.partial) })));
    document.getElementById("leaderboard").replaceChildren(table(["#", "Run", "Tier", "Mode", "Strict accuracy", "95% CI", "n", "Errors", "Partial (diag.)"], rows));
    const crow = DATA.comparisons.map((c) => el("tr", { "data-testid": "comparison" },
      el("td", { text: c.a }), el("td", { text: c.b }), el("td", { text: c.tier }), el("td", { text: c.n }),
      el("td", { class: c.difference.estimate >= 0 ? "good" : "bad-text", text: `${(100 * c.difference.estimate).toFixed(1)} pts` }),
      el("td", { text: `${(100 * c.difference.low).toFixed(1)} – ${(100 * c.difference.high).toFixed(1)}` }),
      el("td", { text: c.mcnemar_p.toPrecision(3) }), el("td", { text: `${c.only_a} / ${c.only_b}` }),
      el("td", {}, c.disagreeing.slice(0, 30).map((k) => el("button", { class: "pill fail", type: "button", onclick: () => { setSearch(k); } }, k)),
        c.disagreeing.length > 30 ? ` … ${c.disagreeing.length - 30} more` : "")));
    document.getElementById("comparisons").replaceChildren(
      table(["A", "B", "Tier", "Shared cases", "A − B", "95% CI", "McNemar p", "only A / only B", "Disagreeing cases"], crow),
      ...(DATA.notes || []).map((n) => el("p", { class: "note", "data-testid": "comparison-note", text: n })));
  }

  // ---- charts ---------------------------------------------------------------------------------
  function renderCharts() {
    const run = DATA.runs[Number(document.getElementById("chart-run").value) || 0];
    const tier = document.getElementById("chart-tier").value;
    const box = document.getElementById("charts");
    box.replaceChildren();
    if (!run) return;
    for (const s of run.statistics.strata.filter((x) => x.tier === tier)) {
      const cats = Object.entries(s.by_category || {});
      box.append(el("div", { class: "chart", "data-testid": "category-chart" }, el("h3", { text: `Accuracy by category · ${s.harness_mode}` }), barChart(cats)));
    }
    const partials = run.records.filter((r) => r.status !== "error" && r.verdicts[tier] && typeof r.verdicts[tier].partial === "number").map((r) => r.verdicts[tier].partial);
    box.append(el("div", { class: "chart" }, el("h3", { text: "Partial scores (diagnostic)" }), histogram(partials, 10)));
    const recalls = run.records.filter((r) => typeof r.retrieval_recall === "number").map((r) => r.retrieval_recall);
    if (recalls.length) box.append(el("div", { class: "chart" }, el("h3", { text: "Retrieval recall" }), histogram(recalls, 5)));
  }

  function barChart(cats) {
    const w = 500, rowH = 22, left = 120, h = cats.length * rowH + 10;
    const root = svg("svg", { width: w, height: h, role: "img" });
    cats.forEach(([name, c], i) => {
      const y = i * rowH + 4, span = w - left - 110, a = c.accuracy;
      const label = svg("text", { x: 0, y: y + 13, "font-size": 12 }); label.textContent = name.slice(0, 18);
      const bar = svg("rect", { x: left, y, width: Math.max(1, span * a.estimate), height: rowH - 8, fill: "#54aeff" });
      const whisker = svg("line", { x1: left + span * a.low, x2: left + span * a.high, y1: y + 7, y2: y + 7, stroke: "#0a3069", "stroke-width": 2 });
      const val = svg("text", { x: left + span + 6, y: y + 13, "font-size": 12 }); val.textContent = `${pct(a.estimate)} (${c.n})`;
      root.append(label, bar, whisker, val);
    });
    return root;
  }

  function histogram(values, bins) {
    const counts = new Array(bins).fill(0);
    for (const v of values) counts[Math.min(bins - 1, Math.max(0, Math.floor(v * bins)))] += 1;
    const w = 300, h = 120, max = Math.max(1, ...counts), bw = w / bins;
    const root = svg("svg", { width: w, height: h + 18, role: "img" });
    counts.forEach((c, i) => {
      const bh = (h - 14) * (c / max);
      root.append(svg("rect", { x: i * bw + 1, y: h - bh, width: bw - 2, height: bh, fill: "#8c959f" }));
      const t = svg("text", { x: i * bw + 2, y: h + 14, "font-size": 10 }); t.textContent = (i / bins).toFixed(1);
      const n = svg("text", { x: i * bw + 2, y: h - bh - 2, "font-size": 10 }); n.textContent = c ? String(c) : "";
      root.append(t, n);
    });
    return root;
  }

  // ---- case table -------------------------------------------------------------------------------
  function allRecords() {
    return DATA.runs.flatMap((run, ri) => run.records.map((rec) => ({ run: ri, rec })));
  }

  function fillSelect(id, label, values) {
    const sel = document.getElementById(id), keep = sel.value;
    sel.replaceChildren(el("option", { value: "", text: label }), ...values.map(([v, t]) => el("option", { value: v, text: t })));
    if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
  }

  function fillFilters() {
    const recs = allRecords().map((x) => x.rec);
    fillSelect("f-run", "all runs", DATA.runs.map((r, i) => [String(i), r.label]));
    fillSelect("f-suite", "all suites", uniq(recs.map((r) => r.suite)).map((v) => [v, v]));
    fillSelect("f-category", "all categories", uniq(recs.map((r) => r.category)).map((v) => [v, v]));
    fillSelect("f-tier", "any tier", allTiers().map((v) => [v, v]));
    fillSelect("f-reason", "any reason", uniq(recs.flatMap((r) => Object.values(r.verdicts).flatMap((v) => (v.reasons || []).map((x) => x.code)))).map((v) => [v, v]));
    fillSelect("f-tool", "any tool", uniq(recs.flatMap((r) => toolsOf(r))).map((v) => [v, v]));
    const cr = document.getElementById("chart-run"), ct = document.getElementById("chart-tier");
    const keepRun = cr.value, keepTier = ct.value;
    cr.replaceChildren(...DATA.runs.map((r, i) => el("option", { value: i, text: r.label })));
    ct.replaceChildren(...allTiers().map((t) => el("option", { value: t, text: t })));
    if (keepRun) cr.value = keepRun;
    if (keepTier) ct.value = keepTier;
  }

  function toolsOf(rec) {
    const calls = (rec.trace && rec.trace.calls) || [];
    return calls.map((c) => c.tool).concat((rec.expected_tools || []).flat());
  }

  function haystack(rec) {
    if (rec._hay === undefined) {
      const t = rec.trace || {};
      const a = t.agent || {};
      rec._hay = [rec.key, rec.instruction, t.final_text, toolsOf(rec).join(" "), errText(rec.error), a.outcome, a.message, a.stderr_tail].join("\n").toLowerCase();
    }
    return rec._hay;
  }

  function matches(item, f) {
    const r = item.rec;
    if (f.run !== "" && String(item.run) !== f.run) return false;
    if (f.suite && r.suite !== f.suite) return false;
    if (f.category && r.category !== f.category) return false;
    if (f.outcome) {
      if (f.outcome === "error") { if (r.status !== "error") return false; }
      else {
        if (r.status === "error") return false;
        const tiers = f.tier ? [f.tier] : Object.keys(r.verdicts);
        const want = f.outcome === "pass";
        if (!tiers.some((t) => r.verdicts[t] && r.verdicts[t].passed === want)) return false;
      }
    }
    if (f.reason && !Object.entries(r.verdicts).some(([t, v]) => (!f.tier || t === f.tier) && (v.reasons || []).some((x) => x.code === f.reason))) return false;
    if (f.tool && !toolsOf(r).includes(f.tool)) return false;
    if (f.search && !haystack(r).includes(f.search)) return false;
    return true;
  }

  function applyFilters() {
    const v = (id) => document.getElementById(id).value;
    const f = { search: v("f-search").trim().toLowerCase(), run: v("f-run"), suite: v("f-suite"), category: v("f-category"), tier: v("f-tier"), outcome: v("f-outcome"), reason: v("f-reason"), tool: v("f-tool") };
    const all = allRecords();
    state.rows = all.filter((item) => matches(item, f));
    state.shown = 0;
    document.getElementById("rows").replaceChildren();
    renderMore();
    document.getElementById("f-count").textContent = `${state.rows.length} of ${all.length} records`;
  }

  function setSearch(text) {
    document.getElementById("f-search").value = text;
    applyFilters();
    document.getElementById("f-search").scrollIntoView();
  }

  function renderMore() {
    const body = document.getElementById("rows");
    const next = state.rows.slice(state.shown, state.shown + PAGE);
    for (const item of next) body.append(caseRow(item));
    state.shown += next.length;
  }

  function caseRow(item) {
    const r = item.rec;
    const verdicts = r.status === "error" ? [el("span", { class: "pill error", text: "error" })]
      : Object.entries(r.verdicts).map(([t, v]) => el("span", { class: "pill " + (v.passed ? "pass" : "fail"), text: `${t}: ${v.passed ? "pass" : "fail"}` }));
    const reasons = uniq(Object.values(r.verdicts).flatMap((v) => (v.reasons || []).map((x) => x.code)));
    const calls = ((r.trace && r.trace.calls) || []).map((c) => c.tool);
    const row = el("tr", { class: "row", "data-testid": "case-row", "data-key": r.key },
      el("td", { text: DATA.runs[item.run].label }), el("td", { text: r.key }), el("td", { text: r.trial ?? 0 }), el("td", { text: r.category ?? "" }),
      el("td", {}, verdicts), el("td", { text: reasons.join(", ") }), el("td", { text: calls.join(", ") }), el("td", { text: r.duration_ms != null ? Math.round(r.duration_ms) : "" }));
    row.addEventListener("click", () => toggle(row, item));
    return row;
  }

  function toggle(row, item) {
    const next = row.nextElementSibling;
    if (next && next.classList.contains("detail")) { next.remove(); return; }
    row.after(el("tr", { class: "detail" }, el("td", { colspan: 8 }, panel(item.rec))));
  }

  // ---- case panel ---------------------------------------------------------------------------
  function badgeFor(call) {
    if (call.parse_error || call.schema_valid === false || call.known_tool === false || call.execution === "error" || call.execution === "rejected") return "bad";
    if (call.execution === "ok") return "ok";
    return "skip"; // valid but not executed (contract tier) or skipped
  }

  function panel(r) {
    const t = r.trace || { rounds: [], calls: [] };
    const byId = new Map((t.calls || []).map((c) => [c.call_id, c]));
    const rounds = (t.rounds || []).map((rd) => {
      const calls = (rd.call_ids || []).map((id) => byId.get(id)).filter(Boolean);
      const badges = calls.length ? calls.map((c) => el("span", { class: "badge " + badgeFor(c), "data-testid": "call-badge", title: c.error || (c.schema_errors || []).join("; ") || c.execution }, `${c.tool} · ${c.parse_error ? "unparsable" : c.schema_valid === false ? "schema-invalid" : c.execution}`))
        : [el("span", { class: "badge warn", "data-testid": "call-badge", text: rd.reconstructed && rd.text ? "no tool call (answer)" : "no tool call" })];
      return el("div", { class: "round" + (calls.length ? "" : " nocall"), "data-testid": "round-card" },
        el("strong", { text: `Round ${rd.index}` }), " ", el("span", { class: "when", text: when(rd.started_at) }),
        rd.reconstructed ? el("div", { class: "note", "data-testid": "reconstructed", text: "reconstructed from call timing" }) : null,
        rd.latency_ms != null ? el("span", { class: "when", text: ` · ${Math.round(rd.latency_ms)} ms` }) : null,
        el("div", {}, badges), rd.nudge ? el("div", { class: "note", text: `nudge: ${rd.nudge}` }) : null,
        rd.text ? el("pre", { text: rd.text }) : null);
    });
    const verdicts = Object.entries(r.verdicts || {}).map(([tier, v]) => el("div", {},
      el("span", { class: "pill " + (v.passed ? "pass" : "fail"), text: `${tier}: ${v.passed ? "pass" : "fail"}` }),
      ` partial ${fmt(v.partial)} (diagnostic) — `, el("span", { text: v.rationale || "" }),
      el("ul", {}, (v.reasons || []).map((x) => el("li", {}, el("code", { text: x.code }), " ", x.message || "")))));
    return el("div", { class: "panel", "data-testid": "case-panel" },
      r.status === "error" ? el("div", { class: "bad-text", text: `error: ${errText(r.error)}` }) : null,
      el("h4", { text: "Instruction" }), el("pre", { text: r.instruction || "" }),
      el("h4", { text: "Offered tools" }), el("div", {}, (r.offered_tools || []).map((x) => el("span", { class: "pill", text: x }))),
      t.agent ? agentSection(t.agent) : null,
      t.agent || (t.calls || []).some((c) => typeof c.started_at === "number") ? [el("h4", { text: "Call timeline" }), callTimeline(t.calls || [])] : null,
      el("h4", { text: (t.rounds || []).some((rd) => rd.reconstructed) ? "Rounds (reconstructed from call timing, display only)" : "Rounds" }), el("div", { class: "rounds" }, rounds),
      el("h4", { text: "Expected vs actual arguments" }), argumentDiff(expectedSteps(r), t.calls || [], matchesOf(r)),
      el("h4", { text: "Final text" }), el("pre", { "data-testid": "final-text", text: t.final_text || "" }),
      el("h4", { text: "Evaluation" }), verdicts,
      el("h4", { text: "Timing" }), el("div", { text: `case ${fmt(r.duration_ms, 0)} ms · stop: ${t.stop_reason || "–"} · ` + (t.calls || []).map((c) => `${c.tool} ${fmt(c.duration_ms, 1)} ms`).join(", ") }));
  }

  function agentSection(a) {
    // How the agent under test ran: its outcome, exit code, message and stderr tail (literal text).
    const ok = a.outcome === "answer";
    return el("div", { class: "agent-run", "data-testid": "agent-run", "data-outcome": a.outcome || "" },
      el("h4", { text: "Agent under test" }),
      el("div", {},
        el("span", { class: "badge " + (ok ? "ok" : "bad"), "data-testid": "agent-outcome", text: a.outcome || "–" }), " ",
        el("code", { "data-testid": "agent-spec", text: a.agent || "" }),
        el("span", { class: "when", "data-testid": "agent-exit", text: ` · exit code ${a.exit_code === null || a.exit_code === undefined ? "–" : a.exit_code}` }),
        el("span", { class: "when", text: ` · ${fmt(a.duration_ms, 0)} ms` })),
      a.message ? el("div", { class: ok ? "" : "bad-text", "data-testid": "agent-message", text: a.message }) : null,
      a.stderr_tail ? [el("div", { class: "note", text: "stderr (tail)" }), el("pre", { class: "stderr", "data-testid": "agent-stderr", text: a.stderr_tail })] : null);
  }

  function callTimeline(calls) {
    // Each call as it arrived over MCP: offset from the first call, tool, execution status, duration.
    if (!calls.length) return el("div", { class: "note", "data-testid": "timeline-empty", text: "no tool call arrived" });
    const starts = calls.map((c) => c.started_at).filter((x) => typeof x === "number");
    const t0 = starts.length ? Math.min(...starts) : null;
    const rows = calls.map((c, i) => el("tr", { "data-testid": "timeline-row", "data-tool": c.tool, "data-execution": c.execution || "" },
      el("td", { text: i + 1 }),
      el("td", { class: "offset", text: typeof c.started_at === "number" && t0 !== null ? `+${Math.round(1000 * (c.started_at - t0))} ms` : "–" }),
      el("td", { text: c.round ?? "" }),
      el("td", {}, el("code", { text: c.tool })),
      el("td", {}, el("span", { class: "badge " + badgeFor(c), text: c.parse_error ? "unparsable" : c.known_tool === false ? "unknown tool" : c.schema_valid === false ? `schema-invalid · ${c.execution}` : c.execution || "–" })),
      el("td", { class: "duration", text: `${fmt(c.duration_ms, 1)} ms` })));
    return el("div", { class: "timeline", "data-testid": "call-timeline" }, table(["#", "Offset", "Round", "Tool", "Execution", "Duration"], rows));
  }

  function expectedSteps(r) {
    // Expected steps with arguments when the record carries them; else tool names only.
    const steps = r.expected || (r.metadata && r.metadata.expected);
    if (Array.isArray(steps)) {
      // One entry per expected call instance (a step with times: N expects N calls), as the scorer counts them.
      return steps.flatMap((s) => Array.from({ length: Math.max(1, s.times || 1) }, () => ({ tool: Array.isArray(s.tool) ? s.tool.join(" | ") : s.tool, tools: [].concat(s.tool), arguments: s.arguments || {} })));
    }
    return (r.expected_tools || []).map((tools) => ({ tool: tools.join(" | "), tools, arguments: null }));
  }

  function matchesOf(r) {
    // The scorer's own step -> call assignment (first tier that reports one).
    for (const v of Object.values(r.verdicts || {})) {
      const m = v.details && v.details.matches;
      if (Array.isArray(m)) return new Map(m.map((x) => [x.expected_index, x.call_index]));
    }
    return null;
  }

  // An approximation of the scorer's argument DSL, for highlighting only: the verdict is authoritative.
  const hasKey = (obj, k) => obj !== null && typeof obj === "object" && Object.prototype.hasOwnProperty.call(obj, k);
  const isPlain = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

  function keyState(exp, act, k) {
    const e = hasKey(exp, k), a = hasKey(act, k);
    if (!e) return "diff"; // an argument the step does not expect
    if (!a) return isPlain(exp[k]) && hasKey(exp[k], "$default") ? "" : "missing";
    const verdict = matchValue(exp[k], act[k]);
    return verdict === null ? "ref" : verdict ? "" : "diff";
  }

  function matchValue(e, a) {
    if (isPlain(e)) {
      if (hasKey(e, "$any")) return a !== null && a !== undefined && a !== "";
      if (hasKey(e, "$default")) return matchValue(e.$default, a);
      if (hasKey(e, "$ref")) return null; // resolved against earlier results by the scorer
      if (hasKey(e, "$pattern")) { try { return typeof a === "string" && new RegExp(String(e.$pattern)).test(a); } catch (err) { return null; } }
      if (hasKey(e, "$one_of") && Object.keys(e).length === 1) {
        const results = (e.$one_of || []).map((alt) => matchValue(alt, a));
        return results.includes(true) ? true : results.includes(null) ? null : false;
      }
      if (!isPlain(a)) return false;
      const results = uniq(Object.keys(e).concat(Object.keys(a))).map((k) => keyState(e, a, k));
      return results.every((r) => r === "") ? true : results.some((r) => r === "diff" || r === "missing") ? false : null;
    }
    if (Array.isArray(e)) {
      if (!Array.isArray(a) || a.length !== e.length) return false;
      const results = e.map((x, i) => matchValue(x, a[i]));
      return results.includes(false) ? false : results.includes(null) ? null : true;
    }
    return json(e) === json(a);
  }

  function argumentDiff(expected, calls, matches) {
    const used = new Set();
    const blocks = expected.map((step, i) => {
      let idx = matches ? (matches.has(i) ? matches.get(i) : -1) : calls.findIndex((c, j) => !used.has(j) && step.tools.includes(c.tool));
      if (idx < 0 && !matches) idx = calls.findIndex((c, j) => !used.has(j));
      if (idx >= 0) used.add(idx);
      const call = idx >= 0 ? calls[idx] : null;
      if (step.arguments === null) {
        return el("div", { class: "args", "data-testid": "arg-diff" }, el("div", {}, el("strong", { text: `expected ${i + 1}: ${step.tool}` }), el("div", { class: "note", text: "(expected arguments not recorded)" })),
          el("div", {}, el("strong", { text: call ? `actual: ${call.tool}` : "actual: (no matching call)" }), call ? el("pre", { text: json(call.arguments ?? call.arguments_raw) }) : null));
      }
      const exp = step.arguments || {}, act = (call && call.arguments) || {};
      const keys = uniq(Object.keys(exp).concat(Object.keys(act)));
      const state = new Map(keys.map((k) => [k, keyState(exp, act, k)]));
      const line = (obj, k) => {
        const has = hasKey(obj, k);
        return el("div", { class: "kv " + state.get(k), "data-state": state.get(k), text: has ? `${k}: ${json(obj[k])}` : `${k}: (absent)` });
      };
      return el("div", { class: "args", "data-testid": "arg-diff" },
        el("div", {}, el("strong", { text: `expected ${i + 1}: ${step.tool}` }), keys.map((k) => line(exp, k))),
        el("div", {}, el("strong", { text: call ? `actual: ${call.tool}` : "actual: (no call)" }),
          call && call.parse_error ? el("pre", { text: `unparsable arguments: ${call.arguments_raw}` }) : keys.map((k) => line(act, k))));
    });
    const others = calls.map((c, j) => [c, j]).filter(([, j]) => !used.has(j));
    const extra = others.length ? el("div", { "data-testid": "unmatched-calls" }, el("strong", { text: "calls not matched to an expected step" }),
      others.map(([c, j]) => el("div", { class: "kv diff", text: `call ${j + 1} ${c.tool}: ${c.parse_error ? c.arguments_raw : json(c.arguments)}` }))) : null;
    return el("div", {}, blocks.length ? blocks : el("div", { class: "note", text: "no expected steps recorded" }), extra);
  }

  // ---- live mode ----------------------------------------------------------------------------
  function renderMeta() {
    document.getElementById("meta").textContent = DATA.runs.map((r) => `${r.label}: ${r.records.length} records`).join(" · ") + ` · generated ${DATA.generated_at}`;
  }

  function renderAll() {
    fillFilters(); renderMeta(); renderRunInfo(); renderCards(); renderTrials(); renderLeaderboard(); renderCharts(); applyFilters();
  }

  async function poll() {
    try {
      const run = DATA.runs[0];
      const res = await fetch(`api/update?offset=${run.offset || 0}`, { cache: "no-store" });
      if (res.ok) {
        const upd = await res.json();
        mergeRecords(run, upd.records);
        run.offset = upd.offset;
        run.statistics = upd.statistics;
        showLive(upd.live);
        if (upd.header && upd.header.harness_mode && !(run.header && run.header.harness_mode)) { run.header = upd.header; renderRunInfo(); renderCards(); }
        if (upd.records.length) { fillFilters(); renderMeta(); renderCards(); renderTrials(); renderCharts(); appendRows(upd.records); }
      }
    } catch (e) { /* the server may have stopped; keep the page as it is */ }
    setTimeout(poll, DATA.poll_ms || 1500);
  }

  function mergeRecords(run, recs) {
    // A resumed run rewrites a (case, trial) that ended in an error: the newer record replaces it.
    const index = new Map(run.records.map((r, i) => [`${r.key}#${r.trial}`, i]));
    for (const rec of recs) {
      const at = index.get(`${rec.key}#${rec.trial}`);
      if (at === undefined) { index.set(`${rec.key}#${rec.trial}`, run.records.length); run.records.push(rec); }
      else run.records[at] = rec;
    }
  }

  function appendRows(newRecs) {
    // Keep open panels and scroll position: re-filter only the new records and append them.
    const before = state.rows.length;
    applyFiltersKeep();
    document.getElementById("f-count").textContent = `${state.rows.length} of ${allRecords().length} records`;
    if (state.shown >= before) renderMore();
  }

  function applyFiltersKeep() {
    const v = (id) => document.getElementById(id).value;
    const f = { search: v("f-search").trim().toLowerCase(), run: v("f-run"), suite: v("f-suite"), category: v("f-category"), tier: v("f-tier"), outcome: v("f-outcome"), reason: v("f-reason"), tool: v("f-tool") };
    state.rows = allRecords().filter((item) => matches(item, f));
  }

  function showLive(live) {
    const box = document.getElementById("live");
    box.hidden = false;
    if (!live || !live.current || !live.current.length) { box.textContent = live && live.finished ? "Run finished." : "Waiting for the run…"; return; }
    box.replaceChildren(el("strong", { text: "Running: " }), ...live.current.map((c) => el("span", { "data-testid": "live-case" }, el("code", { text: c.key }), " ",
      (c.rounds || []).map((rd) => el("span", { class: "badge " + (rd.calls && rd.calls.length ? (rd.calls.every((x) => x.ok) ? "ok" : "bad") : "warn"), text: `R${rd.index}` + (rd.calls && rd.calls.length ? ` ${rd.calls.map((x) => x.tool).join(",")}` : " no call") })), " ")));
  }

  function init() {
    for (const id of ["f-run", "f-suite", "f-category", "f-tier", "f-outcome", "f-reason", "f-tool"]) document.getElementById(id).addEventListener("change", applyFilters);
    let timer = null;
    document.getElementById("f-search").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(applyFilters, 120); });
    document.getElementById("chart-run").addEventListener("change", renderCharts);
    document.getElementById("chart-tier").addEventListener("change", renderCharts);
    const sentinel = document.getElementById("sentinel");
    // Re-observing after each step makes the observer fire again while the sentinel stays visible.
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && state.shown < state.rows.length) { renderMore(); io.unobserve(sentinel); io.observe(sentinel); }
    });
    io.observe(sentinel);
    renderAll();
    if (DATA.live) poll();
  }
  init();
})();
