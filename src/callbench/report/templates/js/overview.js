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


onRender(renderRunInfo);
onRender(renderCards);
onRender(renderTrials);
onRender(renderLeaderboard);
