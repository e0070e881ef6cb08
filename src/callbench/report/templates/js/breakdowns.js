// Breakdowns across runs: per category, per tool, expected-vs-called confusion, reason codes.
// The figures are computed in Python (report/breakdowns.py) and shipped as DATA.breakdowns; this
// file only draws them. Cells behind records hold record indices into DATA.runs[run].records.
const BD = { tier: "", run: "0", mistakes: true };

function bdExportName(...parts) {
  return parts.map((p) => String(p).replace(/[^A-Za-z0-9_-]+/g, "_")).join("-");
}

function bdKeys(run, indices) {
  const recs = DATA.runs[run].records;
  return indices.filter((i) => recs[i]).map((i) => [run, recs[i].key, recs[i].trial ?? null]);
}

function bdSelectButton(label, run, indices, text) {
  // A count that shows exactly the records behind it in the case table.
  return el("button", { class: "bd-cell", type: "button", "data-records": indices.length, text,
    onclick: () => selectCases({ label, keys: bdKeys(run, indices) }) });
}

function bdTable(name, testid, head, rows) {
  const t = table(head, rows);
  t.setAttribute("data-export", name);
  t.setAttribute("data-testid", testid);
  return el("div", { class: "bd-scroll" }, t);
}

function bdTierLabel(t) {
  return t.diagnostic ? `${t.tier} (diagnostic)` : t.tier;
}

function bdControls(data) {
  const tierSel = el("select", { id: "bd-tier", "aria-label": "breakdown tier", onchange: (e) => { BD.tier = e.target.value; renderBreakdowns(); } },
    data.tiers.map((t) => el("option", { value: t.tier, text: bdTierLabel(t) })));
  tierSel.value = BD.tier;
  const runSel = el("select", { id: "bd-run", "aria-label": "breakdown run", onchange: (e) => { BD.run = e.target.value; renderBreakdowns(); } },
    DATA.runs.map((r, i) => el("option", { value: String(i), text: r.label })));
  runSel.value = BD.run;
  return el("div", { class: "chart-controls" }, el("label", {}, "Tier ", tierSel), " ", el("label", {}, "Run (expected vs called) ", runSel));
}

function renderBreakdowns() {
  const slot = document.getElementById("slot-breakdowns");
  const data = DATA.breakdowns;
  if (!data || !data.tiers || !data.tiers.length || !DATA.runs.length) { slot.replaceChildren(); return; }
  if (!data.tiers.some((t) => t.tier === BD.tier)) BD.tier = data.tiers[0].tier;
  if (!DATA.runs[Number(BD.run)]) BD.run = "0";
  const tier = data.tiers.find((t) => t.tier === BD.tier);
  const errors = data.runs.filter((r) => r.errors).map((r) => `${r.label}: ${r.errors} error record(s)`);
  slot.replaceChildren(el("section", { id: "breakdowns", "data-testid": "breakdowns" },
    el("h2", { text: "Breakdowns across runs" }),
    el("p", { class: "note", text: "Error records (infrastructure failures) are left out of every breakdown and counted apart" + (errors.length ? `: ${errors.join("; ")}.` : ": none.") }),
    bdControls(data),
    tier.diagnostic ? el("p", { class: "bd-diag", text: `${tier.tier} is a diagnostic scorer in these runs: shown, never a pass criterion.` }) : null,
    bdCategories(data), bdTools(data), bdConfusion(data), bdReasons(data)));
}

// ---- accuracy by category ---------------------------------------------------------------------
function bdCategories(data) {
  const box = el("div", { class: "bd-block" }, el("h3", { text: "Accuracy by category" }),
    el("p", { class: "note", text: "Strict accuracy (pass flag) per category with its 95% interval and the number of completed records; one column group per run." }));
  const head = ["Category", ...DATA.runs.flatMap((r) => [`${r.label}: accuracy`, `${r.label}: 95% CI`, `${r.label}: n`])];
  for (const t of data.categories.filter((x) => x.tier === BD.tier)) {
    const rows = t.rows.map((row) => el("tr", { "data-category": row.category }, el("th", { scope: "row", text: row.category }),
      row.cells.flatMap((c, ri) => c === null
        ? [el("td", { class: "num", text: "–" }), el("td", { class: "num", text: "–" }), el("td", { class: "num", text: "–" })]
        : [el("td", { class: "num acc", "data-run": ri, "data-value": c.estimate, text: pct(c.estimate) }),
          el("td", { class: "num ci", "data-run": ri, text: `${pct(c.low)}–${pct(c.high)}` }),
          el("td", { class: "num n", "data-run": ri, text: c.n })])));
    box.append(el("h4", { text: `${bdTierLabel(t)} · ${t.harness_mode}` }),
      bdTable(bdExportName("category-accuracy", t.tier, t.harness_mode), "bd-category", head, rows));
  }
  return box;
}

// ---- per tool ------------------------------------------------------------------------------------
function bdRate(x) { return x === null || x === undefined ? "–" : pct(x); }

function bdToolCells(c, ri) {
  if (c === null) return ["calls", "unparsable", "schema", "exec"].map((k) => el("td", { class: `num ${k}`, "data-run": ri, text: "–" }));
  return [
    el("td", { class: "num calls", "data-run": ri, text: c.calls }),
    el("td", { class: "num unparsable", "data-run": ri, text: c.unparsable }),
    el("td", { class: "num schema", "data-run": ri, "data-value": c.schema_invalid_rate ?? "", title: `${c.schema_invalid} of ${c.calls - c.unparsable} parsable calls`, text: bdRate(c.schema_invalid_rate) }),
    el("td", { class: "num exec", "data-run": ri, "data-value": c.exec_failure_rate ?? "", title: `${c.exec_error} error + ${c.rejected} rejected of ${c.executed_or_rejected} executed or rejected`, text: bdRate(c.exec_failure_rate) }),
  ];
}

function bdTools(data) {
  const tools = data.tools;
  const head = ["Tool", ...DATA.runs.flatMap((r) => [`${r.label}: calls`, `${r.label}: unparsable`, `${r.label}: schema-invalid`, `${r.label}: execution failures`])];
  const rows = tools.rows.map((row) => el("tr", { "data-tool": row.tool }, el("th", { scope: "row", text: row.tool }), row.cells.flatMap(bdToolCells)));
  rows.push(el("tr", { class: "bd-total", "data-tool": "" }, el("th", { scope: "row", text: "(all offered tools)" }), tools.totals.flatMap(bdToolCells)));
  const box = el("div", { class: "bd-block" }, el("h3", { text: "Calls per tool" }), el("p", { class: "note", text: data.rules.tools }),
    bdTable("tools", "bd-tools", head, rows));
  const noCall = DATA.runs.map((r, i) => `${r.label}: ${tools.no_call_records[i]}`).join("; ");
  box.append(el("p", { class: "note", text: `Completed records with no call at all: ${noCall}.` }));
  if (tools.unknown.length) {
    const urows = tools.unknown.map((u) => el("tr", { "data-tool": u.tool }, el("th", { scope: "row", text: u.tool }), u.counts.map((n, ri) => el("td", { class: "num", "data-run": ri, text: n }))));
    box.append(el("h4", { text: "Calls to tools not offered (unknown tools)" }), bdTable("unknown-tools", "bd-unknown", ["Tool", ...DATA.runs.map((r) => r.label)], urows));
  } else {
    box.append(el("p", { class: "note", text: "No call named a tool that was not offered." }));
  }
  return box;
}

// ---- expected vs called --------------------------------------------------------------------------
function bdConfusion(data) {
  const run = Number(BD.run);
  const tables = data.confusion[run] || [];
  const box = el("div", { class: "bd-block" }, el("h3", { text: `Expected vs called tool · ${DATA.runs[run].label}` }), el("p", { class: "note", text: data.rules.confusion }));
  const t = tables.find((x) => x.tier === BD.tier) || tables[0];
  if (!t) { box.append(el("p", { class: "note", text: "No tier of this run pairs steps with calls." })); return box; }
  if (t.tier !== BD.tier) box.append(el("p", { class: "note", text: `${BD.tier} reports no pairing; showing ${t.tier}.` }));
  box.append(el("p", { class: "note", text: `Tier ${t.tier}: ${t.records_by_scorer} record(s) paired by the scorer, ${t.records_positional} by position. Click a count to list its records.` }));
  const grid = new Map(t.cells.map(([r, c, n, idx]) => [`${r},${c}`, [n, idx]]));
  // Rows that are only a correct call (their single cell is the same tool) can be hidden: with
  // many tools they are most of the table.
  const hit = (ri, ci) => t.rows[ri].split(" | ").includes(t.columns[ci]);
  const mistaken = (ri) => t.cells.some(([r, c]) => r === ri && !hit(r, c));
  const shown = t.rows.map((_, i) => i).filter((i) => !BD.mistakes || mistaken(i));
  const usedCols = new Set(t.cells.filter(([r]) => shown.includes(r)).map(([, c]) => c));
  const cols = t.columns.map((_, i) => i).filter((i) => usedCols.has(i));
  const toggle = el("label", { class: "note" }, el("input", { type: "checkbox", id: "bd-mistakes", checked: BD.mistakes ? "checked" : null,
    onchange: (e) => { BD.mistakes = e.target.checked; renderBreakdowns(); } }), ` only expected steps with a call to another tool or none (${shown.length} of ${t.rows.length} rows)`);
  const rows = shown.map((ri) => el("tr", { "data-expected": t.rows[ri] }, el("th", { scope: "row", text: t.rows[ri] }), cols.map((ci) => {
    const cell = grid.get(`${ri},${ci}`);
    if (!cell) return el("td", { class: "num zero", text: "" });
    return el("td", { class: "num " + (hit(ri, ci) ? "bd-hit" : "bd-miss"), "data-called": t.columns[ci], "data-value": cell[0] },
      bdSelectButton(`expected ${t.rows[ri]} → called ${t.columns[ci]} (${DATA.runs[run].label}, ${t.tier})`, run, cell[1], String(cell[0])));
  })));
  box.append(toggle, shown.length
    ? bdTable(bdExportName("confusion", DATA.runs[run].label, t.tier), "bd-confusion", ["Expected \\ called", ...cols.map((ci) => t.columns[ci])], rows)
    : el("p", { class: "note", text: "Every expected step was answered by a call to its own tool." }));
  return box;
}

// ---- reason codes --------------------------------------------------------------------------------
function bdReasons(data) {
  const box = el("div", { class: "bd-block" }, el("h3", { text: "Reason codes" }), el("p", { class: "note", text: data.rules.reasons + " Click a count to list its records." }));
  for (const t of data.reasons.filter((x) => x.tier === BD.tier)) {
    const rows = [
      el("tr", { class: "bd-total", "data-code": "" }, el("th", { scope: "row", text: "(failed / judged records)" }), t.failed.map((f, ri) => el("td", { class: "num", "data-run": ri, text: `${f} / ${t.n[ri]}` }))),
      ...t.codes.map((c) => el("tr", { "data-code": c.code }, el("th", { scope: "row", text: c.code }), c.records.map((idx, ri) => el("td", { class: "num", "data-run": ri, "data-value": idx.length },
        idx.length ? bdSelectButton(`${c.code} · ${t.tier} · ${DATA.runs[ri].label}`, ri, idx, String(idx.length)) : "0")))),
    ];
    box.append(el("h4", { text: `${bdTierLabel(t)} · ${t.harness_mode}` }),
      bdTable(bdExportName("reason-codes", t.tier, t.harness_mode), "bd-reasons", ["Reason code", ...DATA.runs.map((r) => r.label)], rows));
  }
  return box;
}

onRender(renderBreakdowns);
