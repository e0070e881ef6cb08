// ---- case table ---------------------------------------------------------------------------
// Filters, search, an exact selection, a sort and the open cases; all of them live in
// location.hash, so a link reopens the same view. Rows render lazily, PAGE at a time.
const PAGE = 150; // rows rendered per lazy step
const state = { rows: [], shown: 0, open: new Set(), selection: null, sort: null, total: 0 };
const FILTERS = { search: "f-search", run: "f-run", suite: "f-suite", category: "f-category", tier: "f-tier", outcome: "f-outcome", reason: "f-reason", tool: "f-tool" };
const ROW_ITEM = new WeakMap(); // <tr class=row> -> its item
const caseId = (run, key, trial) => `${run}\u0000${key}\u0000${trial === null || trial === undefined ? "*" : trial}`;
const itemId = (item) => caseId(item.run, item.rec.key, item.rec.trial);

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

function inSelection(item) {
  const set = state.selection.set, r = item.rec;
  return set.has(caseId(item.run, r.key, r.trial)) || set.has(caseId(item.run, r.key, null));
}

function matches(item, f) {
  const r = item.rec;
  if (state.selection && !inSelection(item)) return false;
  if (f.run !== "" && String(item.run) !== f.run) return false;
  if (f.suite && r.suite !== f.suite) return false;
  if (f.category && r.category !== f.category) return false;
  if (f.outcome) {
    if (f.outcome === "error") { if (r.status !== "error") return false; }
    else {
      if (r.status === "error") return false;
      const tiers = f.tier ? [f.tier] : Object.keys(r.verdicts);
      const want = f.outcome === "pass";
      if (!tiers.some((t) => r.verdicts[t] && r.verdicts[t].applicable !== false && r.verdicts[t].passed === want)) return false;
    }
  }
  if (f.reason && !Object.entries(r.verdicts).some(([t, v]) => (!f.tier || t === f.tier) && (v.reasons || []).some((x) => x.code === f.reason))) return false;
  if (f.tool && !toolsOf(r).includes(f.tool)) return false;
  if (f.search && !haystack(r).includes(f.search)) return false;
  return true;
}

function currentFilters() {
  const f = {};
  for (const [name, id] of Object.entries(FILTERS)) f[name] = document.getElementById(id).value;
  f.search = f.search.trim().toLowerCase();
  return f;
}

// ---- sorting ------------------------------------------------------------------------------
// One entry per header cell, in the template's column order: how a record sorts in that column.
const verdictRank = (r) => (r.status === "error" ? -1 : Object.values(r.verdicts || {}).filter((v) => v.applicable !== false && v.passed).length);
const reasonText = (r) => uniq(Object.values(r.verdicts || {}).flatMap((v) => (v.reasons || []).map((x) => x.code))).join(", ");
const callText = (r) => ((r.trace && r.trace.calls) || []).map((c) => c.tool).join(", ");
const COLUMNS = [
  { id: "run", label: "Run", value: (it) => it.run },
  { id: "case", label: "Case", value: (it) => it.rec.key },
  { id: "trial", label: "Trial", value: (it) => it.rec.trial ?? 0 },
  { id: "category", label: "Category", value: (it) => it.rec.category ?? "" },
  { id: "verdicts", label: "Verdicts", value: (it) => verdictRank(it.rec) },
  { id: "reasons", label: "Reasons", value: (it) => reasonText(it.rec) },
  { id: "calls", label: "Calls", value: (it) => callText(it.rec) },
  { id: "ms", label: "ms", value: (it) => it.rec.duration_ms },
];

function sortRows(items) {
  // Decorate-sort-undecorate: each key is computed once, so 30,000 rows sort in milliseconds.
  // Missing values go last in either direction; ties keep the table's natural order.
  if (!state.sort) return items;
  const col = COLUMNS.find((c) => c.id === state.sort.col);
  if (!col) return items;
  const dir = state.sort.desc ? -1 : 1;
  const keyed = items.map((item, i) => ({ item, i, v: col.value(item) }));
  keyed.sort((a, b) => {
    const an = a.v === null || a.v === undefined, bn = b.v === null || b.v === undefined;
    if (an || bn) return an === bn ? a.i - b.i : an ? 1 : -1;
    if (a.v < b.v) return -dir;
    if (a.v > b.v) return dir;
    return a.i - b.i;
  });
  return keyed.map((k) => k.item);
}

function setSort(colId) {
  state.sort = state.sort && state.sort.col === colId ? { col: colId, desc: !state.sort.desc } : { col: colId, desc: false };
  applyFilters();
}

function drawHeader() {
  // The template's header cells get sort buttons (made once, so focus stays on the clicked one);
  // aria-sort tells which column sorts, and which way.
  const cells = document.querySelectorAll("table.cases thead th");
  cells.forEach((th, i) => {
    const col = COLUMNS[i];
    if (!col) return;
    if (th.getAttribute("data-col") !== col.id) {
      th.setAttribute("data-col", col.id);
      th.replaceChildren(el("button", { type: "button", class: "sort", "data-testid": "sort-" + col.id, title: `sort by ${col.label}`, onclick: () => setSort(col.id) },
        col.label, el("span", { class: "arrow", "aria-hidden": "true" })));
    }
    const sorted = state.sort && state.sort.col === col.id;
    th.setAttribute("aria-sort", sorted ? (state.sort.desc ? "descending" : "ascending") : "none");
    th.querySelector(".arrow").textContent = sorted ? (state.sort.desc ? " ▼" : " ▲") : "";
  });
}

// ---- filtering, selection and the rows --------------------------------------------------
function filteredRows() {
  const all = allRecords();
  state.total = all.length;
  const f = currentFilters();
  return sortRows(all.filter((item) => matches(item, f)));
}

function applyFilters() {
  // Recompute the rows from scratch (filters, selection or sort changed): open cases stay open.
  const first = !state.restored;
  if (first) restoreFromHash();
  state.rows = filteredRows();
  state.shown = 0;
  document.getElementById("rows").replaceChildren();
  renderMore();
  showCounts();
  writeHash();
  if (first) revealOpen();
}

function refreshRows() {
  // New records arrived (live view): keep the rendered rows when the order allows appending.
  // Otherwise (a sort puts new records among the drawn ones) redraw as many rows as were drawn;
  // open cases reopen as their rows come back.
  const before = state.rows, drawn = state.shown;
  state.rows = filteredRows();
  const prefix = drawn <= state.rows.length && before.slice(0, drawn).every((it, i) => itemId(it) === itemId(state.rows[i]) && it.rec === state.rows[i].rec);
  if (!prefix) {
    state.shown = 0;
    document.getElementById("rows").replaceChildren();
    do renderMore(); while (state.shown < drawn && state.shown < state.rows.length);
  } else if (state.shown < PAGE || state.shown >= before.length) renderMore();
  showCounts();
}

function caseTableRows() {
  // The case table's records as filtered and sorted now (also the ones not yet rendered).
  return state.rows.slice();
}

function showCounts() {
  document.getElementById("f-count").textContent = `${state.rows.length} of ${state.total} records`;
  drawHeader();
  drawChip();
}

function selectCases(selection) {
  // Show exactly the given records: selection = { label, keys: [[runIndex, key, trial or null], ...] }.
  // Keys are compared whole (never as substrings); a null trial selects every trial of the case.
  // The selection combines with the filters; the chip above the table clears it.
  const keys = selection.keys.map(([run, key, trial]) => [Number(run), String(key), trial === undefined ? null : trial]);
  state.selection = { label: String(selection.label ?? ""), keys, set: new Set(keys.map(([run, key, trial]) => caseId(run, key, trial))) };
  applyFilters();
  document.getElementById("filters").scrollIntoView();
}

function clearSelection() {
  state.selection = null;
  applyFilters();
}

function drawChip() {
  // "showing N selected cases: label ✕" above the table while a selection is active.
  let chip = document.getElementById("selection-chip");
  if (!chip) {
    chip = el("div", { id: "selection-chip", class: "selection-chip", "data-testid": "selection-chip", role: "status" });
    document.getElementById("filters").after(chip);
  }
  chip.hidden = !state.selection;
  if (!state.selection) { chip.replaceChildren(); return; }
  const selected = allRecords().filter(inSelection).length;
  const shown = state.rows.length;
  chip.replaceChildren(
    el("span", { class: "chip-text", "data-testid": "selection-count", "data-selected": selected, "data-shown": shown,
      text: shown === selected ? `showing ${selected} selected case${selected === 1 ? "" : "s"}: ` : `showing ${shown} of ${selected} selected cases (filters apply): ` }),
    el("strong", { class: "chip-label", text: state.selection.label }), " ",
    el("button", { type: "button", class: "chip-clear", "data-testid": "selection-clear", "aria-label": "clear the selection", title: "clear the selection", onclick: clearSelection }, "✕"));
}

function setSearch(text) {
  document.getElementById("f-search").value = text;
  applyFilters();
  document.getElementById("f-search").scrollIntoView();
}

function renderMore() {
  const body = document.getElementById("rows");
  const next = state.rows.slice(state.shown, state.shown + PAGE);
  for (const item of next) {
    const row = caseRow(item);
    body.append(row);
    if (state.open.has(itemId(item))) openPanel(row, item);
  }
  state.shown += next.length;
}

function caseRow(item) {
  const r = item.rec;
  const verdicts = r.status === "error" ? [el("span", { class: "pill error", text: "error" })]
    : Object.entries(r.verdicts).map(([t, v]) => el("span", { class: "pill " + verdictClass(v), text: `${t}: ${verdictWord(v)}` }));
  const row = el("tr", { class: "row", tabindex: 0, "aria-expanded": "false", "data-testid": "case-row", "data-key": r.key, "data-run": item.run, "data-trial": r.trial ?? "" },
    el("td", { text: DATA.runs[item.run].label }), el("td", { class: "key", text: r.key }), el("td", { text: r.trial ?? 0 }), el("td", { text: r.category ?? "" }),
    el("td", {}, verdicts), el("td", { text: reasonText(r) }), el("td", { text: callText(r) }), el("td", { class: "num", text: r.duration_ms != null ? Math.round(r.duration_ms) : "" }));
  ROW_ITEM.set(row, item);
  return row;
}

function openPanel(row, item) {
  const cell = el("td", { colspan: COLUMNS.length }, el("div", { class: "note", text: "loading…" }));
  row.after(el("tr", { class: "detail" }, cell));
  row.setAttribute("aria-expanded", "true");
  loadRecord(item.run, item.index).then((rec) => cell.replaceChildren(panel(rec, item.run)),
    (err) => cell.replaceChildren(el("div", { class: "bad-text", text: `could not load the record: ${err}` })));
}

function toggle(row, item) {
  const next = row.nextElementSibling;
  if (next && next.classList.contains("detail")) {
    next.remove();
    row.setAttribute("aria-expanded", "false");
    state.open.delete(itemId(item));
  } else {
    state.open.add(itemId(item));
    openPanel(row, item);
  }
  writeHash();
}

function moveFocus(row, step) {
  // ArrowDown/ArrowUp: the next or previous case row (detail rows skipped), rendering more if needed.
  let target = row;
  do { target = step > 0 ? target.nextElementSibling : target.previousElementSibling; } while (target && !target.classList.contains("row"));
  if (!target && step > 0 && state.shown < state.rows.length) { renderMore(); return moveFocus(row, step); }
  if (target) target.focus();
}

function onRowEvent(event) {
  const row = event.target.closest("tr.row");
  if (!row || !ROW_ITEM.has(row)) return;
  if (event.type === "click") { toggle(row, ROW_ITEM.get(row)); return; }
  if (event.target !== row) return; // keys typed inside a row's own controls
  if (event.key === "Enter" || event.key === " ") { event.preventDefault(); toggle(row, ROW_ITEM.get(row)); }
  else if (event.key === "ArrowDown" || event.key === "ArrowUp") { event.preventDefault(); moveFocus(row, event.key === "ArrowDown" ? 1 : -1); }
}

// ---- the view in the URL ----------------------------------------------------------------
// #f_search=…&f_run=…&sort=ms|-ms&sel={label,keys}&open=[[run,key,trial],…]; other parameters
// of the hash (other sections' state) are kept as they are.
let lastHash = null;

const MY_PARAMS = Object.keys(FILTERS).map((n) => "f_" + n).concat(["sort", "sel", "open"]);

function myParams(hash) {
  // The case table's part of a hash, comparable between two hashes.
  const p = new URLSearchParams(String(hash).replace(/^#/, ""));
  return JSON.stringify(MY_PARAMS.map((name) => p.get(name)));
}

function hashParams() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}

function writeHash() {
  const p = hashParams();
  for (const [name, id] of Object.entries(FILTERS)) {
    const v = document.getElementById(id).value;
    if (v) p.set("f_" + name, v); else p.delete("f_" + name);
  }
  if (state.sort) p.set("sort", (state.sort.desc ? "-" : "") + state.sort.col); else p.delete("sort");
  if (state.selection) p.set("sel", JSON.stringify({ label: state.selection.label, keys: state.selection.keys })); else p.delete("sel");
  const open = [...state.open].map((id) => id.split("\u0000")).map(([run, key, trial]) => [Number(run), key, trial === "*" ? null : Number(trial)]);
  if (open.length) p.set("open", JSON.stringify(open)); else p.delete("open");
  const text = p.toString();
  const hash = text ? "#" + text : "";
  if (hash === (location.hash === "#" ? "" : location.hash)) { lastHash = location.hash; return; }
  lastHash = hash;
  try { history.replaceState(null, "", hash || location.pathname + location.search); }
  catch (e) { location.replace(hash || "#"); } // some file: pages refuse replaceState
}

function restoreFromHash() {
  // Filters, search, sort, selection and open cases from the hash (a shared link, reload, back).
  state.restored = true;
  const p = hashParams();
  for (const [name, id] of Object.entries(FILTERS)) {
    const node = document.getElementById(id), v = p.get("f_" + name) || "";
    node.value = v;
    if (node.tagName === "SELECT" && node.value !== v) node.value = ""; // a value this report lacks
  }
  const sort = p.get("sort");
  const col = sort && COLUMNS.find((c) => c.id === sort.replace(/^-/, ""));
  state.sort = col ? { col: col.id, desc: sort.startsWith("-") } : null;
  state.selection = null;
  state.open = new Set();
  try {
    const sel = p.get("sel") && JSON.parse(p.get("sel"));
    if (sel && Array.isArray(sel.keys)) {
      const keys = sel.keys.filter((k) => Array.isArray(k) && k.length >= 2).map(([run, key, trial]) => [Number(run), String(key), trial ?? null]);
      state.selection = { label: String(sel.label ?? ""), keys, set: new Set(keys.map(([run, key, trial]) => caseId(run, key, trial))) };
    }
    const open = p.get("open") && JSON.parse(p.get("open"));
    if (Array.isArray(open)) for (const k of open) if (Array.isArray(k)) state.open.add(caseId(Number(k[0]), String(k[1]), k[2] ?? null));
  } catch (e) { /* a mangled link: show the table unselected */ }
}

function revealOpen() {
  // Render rows until every open case is in the DOM (an opened link may point past the first page).
  const last = state.rows.reduce((at, item, i) => (state.open.has(itemId(item)) ? i : at), -1);
  while (state.shown <= last) renderMore();
  const first = document.querySelector("#rows tr.detail");
  if (first) first.previousElementSibling.scrollIntoView({ block: "start" });
}

function listenToFilters() {
  for (const id of Object.values(FILTERS).filter((x) => x !== "f-search")) document.getElementById(id).addEventListener("change", applyFilters);
  let timer = null;
  document.getElementById("f-search").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(applyFilters, 120); });
  const body = document.getElementById("rows");
  body.addEventListener("click", onRowEvent);
  body.addEventListener("keydown", onRowEvent);
  window.addEventListener("hashchange", () => {
    // Our own write, or another section's parameters changing: the table stays as it is.
    if (location.hash === lastHash || myParams(location.hash) === myParams(lastHash || "")) { lastHash = location.hash; return; }
    restoreFromHash();
    applyFilters();
    revealOpen();
  });
  const sentinel = document.getElementById("sentinel");
  // Re-observing after each step makes the observer fire again while the sentinel stays visible.
  const io = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting) && state.shown < state.rows.length) { renderMore(); io.unobserve(sentinel); io.observe(sentinel); }
  });
  io.observe(sentinel);
}
listenToFilters();
onRender(fillFilters);
