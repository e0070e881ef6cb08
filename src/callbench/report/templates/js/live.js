// Live mode (callbench view): poll the server for new records, running figures and cases in flight.
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
      const newHeader = upd.header && upd.header.harness_mode && !(run.header && run.header.harness_mode);
      if (newHeader) run.header = upd.header;
      if (newHeader || upd.records.length) renderSections();
      if (upd.records.length) appendRows(upd.records);
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
    else { run.records[at] = rec; if (run.details) run.details[at] = rec; }
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

