// Charts of one run under one tier: accuracy by category (full labels), partial scores and retrieval recall
// (stacked pass/fail histograms, bins labelled by range). Every chart <svg> carries data-export.
function fillChartSelectors() {
  const cr = document.getElementById("chart-run"), ct = document.getElementById("chart-tier");
  const keepRun = cr.value, keepTier = ct.value;
  cr.replaceChildren(...DATA.runs.map((r, i) => el("option", { value: i, text: r.label })));
  ct.replaceChildren(...allTiers().map((t) => el("option", { value: t, text: t })));
  if (keepRun) cr.value = keepRun;
  if (keepTier) ct.value = keepTier;
}

function renderCharts() {
  fillChartSelectors();
  const runIndex = Number(document.getElementById("chart-run").value) || 0;
  const run = DATA.runs[runIndex];
  const tier = document.getElementById("chart-tier").value;
  const box = document.getElementById("charts");
  box.replaceChildren();
  if (!run) return;
  const name = (what) => bdExportName(what, run.label, tier);
  for (const s of run.statistics.strata.filter((x) => x.tier === tier)) {
    const cats = Object.entries(s.by_category || {});
    box.append(el("div", { class: "chart", "data-testid": "category-chart" }, el("h3", { text: `Accuracy by category · ${s.harness_mode}` }),
      barChart(cats, bdExportName("category-accuracy-chart", run.label, tier, s.harness_mode))));
  }
  // Completed records judged by the tier: each value goes to the pass or the fail side of its bin.
  const judged = run.records.filter((r) => r.status !== "error" && r.verdicts[tier]);
  const partials = judged.filter((r) => typeof r.verdicts[tier].partial === "number").map((r) => [r.verdicts[tier].partial, r.verdicts[tier].passed]);
  box.append(el("div", { class: "chart" }, el("h3", { text: `Partial scores (diagnostic) · ${tier}` }), histogram(partials, 10, name("partial-scores"))));
  const recalls = judged.filter((r) => typeof r.retrieval_recall === "number").map((r) => [r.retrieval_recall, r.verdicts[tier].passed]);
  if (recalls.length) box.append(el("div", { class: "chart" }, el("h3", { text: `Retrieval recall · pass/fail under ${tier}` }), histogram(recalls, 5, name("retrieval-recall"))));
}

const CHART_FONT = "12px system-ui, -apple-system, 'Segoe UI', sans-serif";
let chartCanvas = null;
function textWidth(text, font = CHART_FONT) {
  // Width the label will take in the chart (the svg text uses the same font), so no label is cut.
  chartCanvas = chartCanvas || document.createElement("canvas");
  const ctx = chartCanvas.getContext("2d");
  ctx.font = font;
  return Math.ceil(ctx.measureText(text).width);
}

function barChart(cats, exportName) {
  const rowH = 22, left = Math.max(60, ...cats.map(([name]) => textWidth(name))) + 12, span = 270, w = left + span + 110, h = cats.length * rowH + 10;
  const root = svg("svg", { width: w, height: h, role: "img", "data-export": exportName, "font-family": "system-ui, -apple-system, 'Segoe UI', sans-serif" });
  cats.forEach(([name, c], i) => {
    const y = i * rowH + 4, a = c.accuracy;
    const label = svg("text", { x: 0, y: y + 13, "font-size": 12, class: "cat-label" }); label.textContent = name;
    const tip = svg("title", {}); tip.textContent = `${name}: ${pct(a.estimate)} [${pct(a.low)}–${pct(a.high)}], n=${c.n}`;
    const bar = svg("rect", { x: left, y, width: Math.max(1, span * a.estimate), height: rowH - 8, fill: "#54aeff" });
    const whisker = svg("line", { x1: left + span * a.low, x2: left + span * a.high, y1: y + 7, y2: y + 7, stroke: "#0a3069", "stroke-width": 2 });
    const val = svg("text", { x: left + span + 6, y: y + 13, "font-size": 12 }); val.textContent = `${pct(a.estimate)} (${c.n})`;
    const g = svg("g", {}); g.append(tip, label, bar, whisker, val);
    root.append(g);
  });
  return root;
}

function binOf(v, bins) {
  // Bins are [lo, hi) except the last, [lo, 1]: a value of 1.0 lands in the last bin. The small
  // epsilon keeps 0.3 (0.3 * 10 = 2.9999...) in the bin its label names.
  return Math.min(bins - 1, Math.max(0, Math.floor(v * bins + 1e-9)));
}

function binLabel(i, bins) {
  const d = bins <= 10 ? 1 : 2;
  return `${(i / bins).toFixed(d)}–${((i + 1) / bins).toFixed(d)}`;
}

function histogram(values, bins, exportName) {
  // values: [value, passed] pairs. Bars are stacked: pass (green) under fail (red).
  const pass = new Array(bins).fill(0), fail = new Array(bins).fill(0);
  for (const [v, ok] of values) (ok ? pass : fail)[binOf(v, bins)] += 1;
  const bw = 46, w = bins * bw, top = 22, h = 120, max = Math.max(1, ...pass.map((p, i) => p + fail[i]));
  const root = svg("svg", { width: w, height: top + h + 18, role: "img", "data-export": exportName, "data-testid": "histogram", "font-family": "system-ui, -apple-system, 'Segoe UI', sans-serif" });
  const legend = (x, color, text) => {
    const t = svg("text", { x: x + 14, y: 12, "font-size": 11 }); t.textContent = text;
    root.append(svg("rect", { x, y: 3, width: 10, height: 10, fill: color }), t);
  };
  legend(0, "#4ac26b", "pass"); legend(60, "#ff8182", "fail");
  const scale = (h - 16) / max;
  for (let i = 0; i < bins; i++) {
    const x = i * bw + 2, base = top + h, ph = pass[i] * scale, fh = fail[i] * scale;
    const g = svg("g", { class: "bin", "data-bin": i, "data-label": binLabel(i, bins), "data-pass": pass[i], "data-fail": fail[i] });
    const tip = svg("title", {}); tip.textContent = `${binLabel(i, bins)}${i === bins - 1 ? " (1.0 included)" : ""}: ${pass[i]} pass, ${fail[i]} fail`;
    g.append(tip, svg("rect", { x, y: base - ph, width: bw - 4, height: ph, fill: "#4ac26b" }), svg("rect", { x, y: base - ph - fh, width: bw - 4, height: fh, fill: "#ff8182" }));
    const n = svg("text", { x: x + 1, y: base - ph - fh - 2, "font-size": 10 }); n.textContent = pass[i] + fail[i] ? `${pass[i]}/${fail[i]}` : "";
    const t = svg("text", { x: x + 1, y: base + 13, "font-size": 10, class: "bin-label" }); t.textContent = binLabel(i, bins);
    g.append(n, t);
    root.append(g);
  }
  return root;
}


document.getElementById("chart-run").addEventListener("change", renderCharts);
document.getElementById("chart-tier").addEventListener("change", renderCharts);
onRender(renderCharts);
