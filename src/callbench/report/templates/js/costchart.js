// Cost: the accuracy-vs-cost chart across runs (one per strict tier and harness mode, with the Pareto
// front marked), the cost cells of the "Cost and speed" table, and one case's tokens and cost in its
// panel. report/cost.py computes the points and the front; this file only lays them out. A run with
// no cost (no price for its model, no tokens) is never drawn at 0: it is listed with its reason.

function usd(x) {
  // As the Python side writes dollars (harness/usage.py: usd): four decimals, three digits below $0.001.
  if (x === null || x === undefined) return "–";
  const v = Number(x);
  if (v === 0 || Math.abs(v) >= 0.001) return "$" + v.toLocaleString("en-US", { minimumFractionDigits: 4, maximumFractionDigits: 4 });
  return "$" + (Math.abs(v) >= 1e-4 ? v.toPrecision(3) : v.toExponential(2).replace(/e([+-])(\d)$/, "e$10$2"));
}

function costCell(cls, value, why) {
  if (value === null || value === undefined) return el("td", { class: "num unknown " + cls, "data-value": "", title: why || "", text: why && why.trim() ? `– (${why})` : "–" });
  return el("td", { class: "num " + cls, "data-value": value, text: usd(value) });
}

function passCostCell(u) {
  // Per strict tier: the run's whole cost (failed cases and error records too) / the tier's passed cases.
  const tiers = Object.entries(u.cost_per_pass || {});
  if (!tiers.length) return el("td", { class: "num unknown cost-per-pass", text: "–" });
  return el("td", { class: "num cost-per-pass" }, tiers.map(([tier, pc]) =>
    el("div", { "data-testid": "cost-per-pass", "data-tier": tier, "data-value": pc.cost_usd ?? "", "data-passed": pc.passed,
      text: pc.passed ? `${tier} ${usd(pc.cost_usd)} (${pc.passed} passed)` : `${tier} – (none passed)` })));
}

function renderCostChart() {
  const box = document.getElementById("cost-chart");
  if (!box) return;
  const groups = DATA.cost_points || [];
  const priced = (p) => p.cost_per_case !== null && p.cost_per_case !== undefined;
  if (!groups.some((g) => g.points.some(priced))) { box.replaceChildren(); return; }
  box.replaceChildren(el("h3", { text: "Accuracy vs cost per case" }),
    el("p", { class: "note", text: "One point per run: strict accuracy (95% interval) against mean cost per case (every record, failed cases and error records included). Filled points joined by the dashed line are the Pareto front: no other run is both cheaper and more accurate. Never pooled across tiers or harness modes." }),
    ...groups.map((g) => {
      const missing = g.points.filter((p) => !priced(p));
      return el("div", { class: "chart", "data-testid": "cost-chart", "data-tier": g.tier, "data-mode": g.harness_mode },
        el("h4", { text: `${g.tier} · ${g.harness_mode}` }),
        g.points.some(priced) ? costScatter(g) : null,
        missing.length ? el("p", { class: "note", "data-testid": "cost-unpriced", text: "Not drawn (no cost): " + missing.map((p) => `${p.label} (${p.why || "no cost"})`).join("; ") }) : null);
    }));
}

function costScatter(g) {
  const points = g.points.filter((p) => p.cost_per_case !== null && p.cost_per_case !== undefined);
  const costs = points.map((p) => Number(p.cost_per_case));
  const lo = Math.min(...costs), hi = Math.max(...costs);
  const log = lo > 0 && hi / lo > 20;  // costs an order of magnitude apart and more: a log scale
  const left = 56, top = 10, plotW = 380, plotH = 220, labelW = Math.max(40, ...points.map((p) => textWidth(p.label))) + 16;
  const root = svg("svg", { width: left + plotW + labelW, height: top + plotH + 40, role: "img", "data-export": bdExportName("accuracy-vs-cost", g.tier, g.harness_mode),
    "data-scale": log ? "log" : "linear", "font-family": "system-ui, -apple-system, 'Segoe UI', sans-serif" });
  let x;
  const ticks = [];
  if (log) {
    const a = Math.log10(lo) - 0.2, b = Math.log10(hi) + 0.2;  // a margin: no point on an axis
    x = (c) => left + plotW * (Math.log10(c) - a) / (b - a);
    for (let e = Math.ceil(a); e <= Math.floor(b); e++) ticks.push(10 ** e);
  } else {
    // round steps (1, 2 or 5 times a power of ten), about four of them up to past the dearest run
    const raw = (hi > 0 ? hi * 1.1 : 1) / 4, unit = 10 ** Math.floor(Math.log10(raw));
    const step = unit * ([1, 2, 5, 10].find((m) => m * unit >= raw) || 10);
    const max = step * Math.ceil((hi > 0 ? hi * 1.05 : 1) / step);
    x = (c) => left + plotW * c / max;
    for (let c = 0; c <= max + step / 2; c += step) ticks.push(c);
  }
  const y = (a) => top + plotH * (1 - a);
  const text = (attrs, s) => { const t = svg("text", Object.assign({ "font-size": 11 }, attrs)); t.textContent = s; return t; };
  root.append(svg("line", { x1: left, x2: left + plotW, y1: top + plotH, y2: top + plotH, stroke: "#57606a" }),
    svg("line", { x1: left, x2: left, y1: top, y2: top + plotH, stroke: "#57606a" }));
  for (const a of [0, 0.25, 0.5, 0.75, 1]) {
    root.append(svg("line", { x1: left, x2: left + plotW, y1: y(a), y2: y(a), stroke: "#d0d7de", "stroke-dasharray": "2 3" }),
      text({ x: left - 6, y: y(a) + 4, "text-anchor": "end" }, `${100 * a}%`));
  }
  for (const c of ticks) root.append(text({ x: x(c), y: top + plotH + 14, "text-anchor": "middle", class: "cost-tick" }, usd(c)));
  root.append(text({ x: left + plotW / 2, y: top + plotH + 32, "text-anchor": "middle" }, `cost per case (USD${log ? ", log scale" : ""})`));
  const front = g.front.map((run) => points.find((p) => p.run === run)).filter(Boolean);
  if (front.length > 1) {
    // a staircase: everything below and to the right of it is beaten by a point on it
    const steps = [];
    front.forEach((p, i) => {
      if (i) steps.push(`${x(p.cost_per_case)},${y(front[i - 1].accuracy)}`);
      steps.push(`${x(p.cost_per_case)},${y(p.accuracy)}`);
    });
    root.append(svg("polyline", { points: steps.join(" "), fill: "none", stroke: "#1f6feb", "stroke-width": 1.5, "stroke-dasharray": "5 3", "data-testid": "pareto-line" }));
  }
  for (const p of points) {
    const cx = x(p.cost_per_case), cy = y(p.accuracy);
    const tip = svg("title", {});
    tip.textContent = `${p.label}: ${pct(p.accuracy)} [${pct(p.low)}–${pct(p.high)}], n=${p.n} · cost per case ${usd(p.cost_per_case)} · cost per passed case ${p.cost_per_pass === null || p.cost_per_pass === undefined ? "– (none passed)" : usd(p.cost_per_pass)}${p.pareto ? " · on the Pareto front" : ""}`;
    const grp = svg("g", { "data-testid": "cost-point", "data-run": DATA.runs[p.run] ? DATA.runs[p.run].id : "", "data-pareto": p.pareto ? "true" : "false",
      "data-cost": p.cost_per_case, "data-accuracy": p.accuracy });
    grp.append(tip,
      svg("line", { x1: cx, x2: cx, y1: y(p.low), y2: y(p.high), stroke: "#8c959f", "stroke-width": 1.5 }),
      svg("circle", { cx, cy, r: 5, fill: p.pareto ? "#1f6feb" : "#ffffff", stroke: p.pareto ? "#0a3069" : "#57606a", "stroke-width": 1.5 }),
      text({ x: cx + 7, y: cy - 7, class: "point-label" }, p.label));
    root.append(grp);
  }
  return root;
}

function caseCost(r, runIndex) {
  // One case's tokens (every live request of the record; cached rounds cost nothing) and its cost at
  // the price that priced its run (DATA.usage[].price), or why there is none.
  const u = { input: 0, cached: 0, output: 0, reasoning: 0 };
  for (const rd of ((r.trace || {}).rounds || [])) {
    if (rd.cached || !rd.usage) continue;
    u.input += rd.usage.input_tokens || 0; u.cached += rd.usage.cached_tokens || 0;
    u.output += rd.usage.output_tokens || 0; u.reasoning += rd.usage.reasoning_tokens || 0;
  }
  const row = (DATA.usage || []).find((x) => x.run === runIndex) || {};
  const price = row.price;
  let cost = null;
  if (price) {
    const cached = Math.min(u.cached, u.input), reasoning = price.reasoning != null ? Math.min(u.reasoning, u.output) : 0;
    cost = ((u.input - cached) * price.input + cached * (price.cached_input ?? price.input)
      + (u.output - reasoning) * price.output + reasoning * (price.reasoning ?? price.output)) / 1e6;
  }
  const n = (v) => Number(v).toLocaleString("en-US");
  const tokens = `tokens ${n(u.input)} input${u.cached ? ` (${n(u.cached)} cached)` : ""} + ${n(u.output)} output${u.reasoning ? ` (${n(u.reasoning)} reasoning)` : ""}`;
  const why = (row.missing || {}).cost || "no price for this run";
  return el("div", { "data-testid": "case-cost", "data-cost": cost === null ? "" : cost, text: `${tokens} · cost ${cost === null ? `– (${why})` : usd(cost)}` });
}

onRender(renderCostChart);
