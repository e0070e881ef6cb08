const PAGE = 150; // rows rendered per lazy step
const state = { rows: [], shown: 0, open: new Set(), selection: null };

// ---- case table -------------------------------------------------------------------------------
function allRecords() {
  return DATA.runs.flatMap((run, ri) => run.records.map((rec, index) => ({ run: ri, index, rec })));
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
  if (state.selection && !state.selection.set.has(`${item.run}\u0000${r.key}\u0000${r.trial}`) && !state.selection.set.has(`${item.run}\u0000${r.key}\u0000*`)) return false;
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

function selectCases(selection) {
  // Show exactly the given records: selection = { label, keys: [[runIndex, key, trial or null], ...] }.
  // Keys are compared whole (never as substrings); a null trial selects every trial of the case.
  const set = new Set(selection.keys.map(([run, key, trial]) => `${run}\u0000${key}\u0000${trial === null || trial === undefined ? "*" : trial}`));
  state.selection = { label: selection.label, set };
  applyFilters();
  document.getElementById("filters").scrollIntoView();
}

function clearSelection() {
  state.selection = null;
  applyFilters();
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
  const cell = el("td", { colspan: 8 }, el("div", { class: "note", text: "loading…" }));
  row.after(el("tr", { class: "detail" }, cell));
  loadRecord(item.run, item.index).then((rec) => cell.replaceChildren(panel(rec)));
}


function listenToFilters() {
  for (const id of ["f-run", "f-suite", "f-category", "f-tier", "f-outcome", "f-reason", "f-tool"]) document.getElementById(id).addEventListener("change", applyFilters);
  let timer = null;
  document.getElementById("f-search").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(applyFilters, 120); });
  const sentinel = document.getElementById("sentinel");
  // Re-observing after each step makes the observer fire again while the sentinel stays visible.
  const io = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting) && state.shown < state.rows.length) { renderMore(); io.unobserve(sentinel); io.observe(sentinel); }
  });
  io.observe(sentinel);
}
listenToFilters();
onRender(fillFilters);
