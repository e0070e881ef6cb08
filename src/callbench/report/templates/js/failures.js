// Failures by tool: each run's failing reasons and error records folded into signatures and grouped
// by class, tool, tool server and signature (report/fingerprints.py computes them; DATA.failures).
// Each line's count is a button that shows exactly the records behind it in the case table; a line's
// records are indices into DATA.runs[run].records (bdSelectButton, breakdowns.js).
const FP = { run: "0", tier: "" };

function fpTierKey(s) {
  return s.errors ? "" : `${s.tier}\u0000${s.harness_mode}`;
}

function fpTierLabel(s) {
  return `${s.diagnostic ? `${s.tier} (diagnostic)` : s.tier} · ${s.harness_mode}`;
}

function fpTitle(s) {
  if (s.errors) return `error records (infrastructure, excluded from every tier): ${s.failed} of ${s.judged} records`;
  return `${fpTierLabel(s)}: ${s.failed} failed of ${s.judged} judged records`;
}

function fpControls(run) {
  const runSel = el("select", { id: "fp-run", "aria-label": "failures run", onchange: (e) => { FP.run = e.target.value; renderFailures(); } },
    DATA.runs.map((r, i) => el("option", { value: String(i), text: r.label })));
  runSel.value = FP.run;
  const tiers = run.sections.filter((s) => !s.errors);
  const tierSel = el("select", { id: "fp-tier", "aria-label": "failures tier", onchange: (e) => { FP.tier = e.target.value; renderFailures(); } },
    tiers.map((s) => el("option", { value: fpTierKey(s), text: fpTierLabel(s) })));
  tierSel.value = FP.tier;
  return el("div", { class: "chart-controls" }, el("label", {}, "Run ", runSel), " ", el("label", {}, "Tier ", tierSel));
}

function fpSection(ri, s) {
  const runLabel = DATA.runs[ri].label;
  const box = el("div", { class: "bd-block", "data-testid": s.errors ? "fp-errors" : "fp-tier" }, el("h4", { text: fpTitle(s) }));
  if (!s.lines.length) { box.append(el("p", { class: "note", text: "No failures." })); return box; }
  const scope = s.errors ? "error records" : fpTierLabel(s);
  const rows = s.lines.map((ln) => el("tr", { "data-class": ln.class, "data-tool": ln.tool, "data-signature": ln.signature },
    el("th", { scope: "row", text: ln.class }),
    el("td", { text: Object.keys(ln.codes).join(", ") }),
    el("td", { text: ln.tool }),
    el("td", { text: ln.server || "–" }),
    el("td", { class: "fp-signature", text: ln.signature }),
    el("td", { class: "num", "data-value": ln.count }, bdSelectButton(`${ln.signature} · ${ln.tool} · ${scope} · ${runLabel}`, ri, ln.records, String(ln.count))),
    el("td", { class: "num", "data-value": ln.share ?? "", text: pct(ln.share) }),
    el("td", { text: ln.examples.join(" ") })));
  box.append(bdTable(bdExportName("failures", runLabel, s.errors ? "errors" : s.tier, s.harness_mode), s.errors ? "fp-errors-table" : "fp-table",
    ["Class", "Codes", "Tool", "Server", "Signature", "Count", "Share", "Examples"], rows));
  return box;
}

function renderFailures() {
  const slot = document.getElementById("slot-failures");
  const data = DATA.failures;
  if (!slot) return;
  if (!data || !data.runs || !data.runs.length || !DATA.runs.length) { slot.replaceChildren(); return; }
  if (!data.runs[Number(FP.run)]) FP.run = "0";
  const ri = Number(FP.run);
  const run = data.runs[ri];
  const tiers = run.sections.filter((s) => !s.errors);
  if (!tiers.some((s) => fpTierKey(s) === FP.tier)) FP.tier = tiers.length ? fpTierKey(tiers[0]) : "";
  const shown = run.sections.filter((s) => (s.errors ? s.failed > 0 : fpTierKey(s) === FP.tier));
  slot.replaceChildren(el("section", { id: "failures", "data-testid": "failures" },
    el("h2", { text: "Failures by tool" }),
    el("p", { class: "note", text: data.rules + " Click a count to list its records." }),
    fpControls(run),
    shown.length ? shown.map((s) => fpSection(ri, s)) : el("p", { class: "note", text: "No record of this run was judged." })));
}

onRender(renderFailures);
