// ---- charts ---------------------------------------------------------------------------------
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


document.getElementById("chart-run").addEventListener("change", renderCharts);
document.getElementById("chart-tier").addEventListener("change", renderCharts);
onRender(renderCharts);
