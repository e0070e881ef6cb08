// Live mode (callbench view): poll the server for new records, running figures and cases in flight.
// The progress line shows "done of total" (api/update's progress, from live.json) and an ETA: the
// rate since the run started (progress.started_at, on the server's clock progress.now) when known,
// else the rate since this page opened (a page opened mid-run then waits for one case to finish).
const LIVE = { openedAt: Date.now(), firstDone: null, folder: null };

async function poll() {
  try {
    const run = DATA.runs[0];
    const res = await fetch(`api/update?offset=${run.offset || 0}`, { cache: "no-store" });
    if (res.ok) applyUpdate(run, await res.json());
  } catch (e) { /* the server may have stopped; keep the page as it is */ }
  setTimeout(poll, DATA.poll_ms || 1500);
}

function folderMissing(upd) {
  // callbench view may start before the run creates its folder; the server says so.
  return !!upd.run && upd.run.exists === false;
}

function progressOf(upd) {
  // api/update's progress; from live.json itself for a server that does not send it.
  if (upd.progress) return upd.progress;
  const live = upd.live;
  return live ? { total: live.total, done: live.done, started_at: live.started_at, finished: !!live.finished, now: null } : null;
}

function applyUpdate(run, upd) {
  if (folderMissing(upd)) { showWaitingForFolder(); return; }
  const recs = upd.records || [];
  mergeRecords(run, recs);
  run.offset = upd.offset;
  if (upd.statistics) run.statistics = upd.statistics;
  if (upd.breakdowns) DATA.breakdowns = upd.breakdowns;
  if (upd.failures) DATA.failures = upd.failures;
  showLive(upd.live, progressOf(upd));
  const newHeader = upd.header && upd.header.harness_mode && !(run.header && run.header.harness_mode);
  if (newHeader) adoptHeader(run, upd.header, upd.run && upd.run.label);
  if (newHeader || recs.length) renderSections();
  if (recs.length) refreshRows(); // cases.js keeps open panels and places new rows where the sort puts them
}

function adoptHeader(run, header, label) {
  // The page opened before run.json existed: its label was the folder's name. Name the run as
  // every report does, "model (folder)", and retitle the page when it still has the default title.
  const folder = LIVE.folder || run.label;
  const oldLabel = run.label;
  run.header = header;
  run.label = label || (header.model ? `${header.model} (${folder})` : folder);
  const defaultTitle = `callbench · ${folder}`;
  if (document.title === defaultTitle) {
    document.title = `callbench · ${run.label}`;
    const h1 = document.querySelector("header h1");
    if (h1 && h1.textContent === defaultTitle) h1.textContent = document.title;
  }
  // Rows already drawn carry the old label in their first cell.
  for (const tr of document.querySelectorAll("#rows tr.row")) {
    const first = tr.cells[0];
    if (first && first.textContent === oldLabel) first.textContent = run.label;
  }
}

function mergeRecords(run, recs) {
  // A resumed run rewrites a (case, trial) that ended in an error: the newer record replaces it.
  const index = new Map(run.records.map((r, i) => [`${r.key}#${r.trial}`, i]));
  for (const rec of recs) {
    const at = index.get(`${rec.key}#${rec.trial}`);
    if (at === undefined) { index.set(`${rec.key}#${rec.trial}`, run.records.length); run.records.push(rec); }
    else run.records[at] = rec; // its panel asks the server for the newer record
  }
}

function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

function etaText(p) {
  const total = Number(p.total) || 0, done = Math.min(Number(p.done) || 0, total);
  if (p.finished || done >= total) return "";
  let rate = null;
  const now = typeof p.now === "number" ? p.now : Date.now() / 1000;
  if (typeof p.started_at === "number" && done > 0 && now > p.started_at) rate = done / (now - p.started_at);
  else {
    if (LIVE.firstDone === null) LIVE.firstDone = done;
    const since = done - LIVE.firstDone, secs = (Date.now() - LIVE.openedAt) / 1000;
    if (since > 0 && secs > 0) rate = since / secs;
  }
  return rate ? `ETA ${duration((total - done) / rate)}` : "ETA: estimating…";
}

function progressLine(p) {
  const total = Number(p.total) || 0, done = Math.min(Number(p.done) || 0, total);
  const eta = etaText(p);
  return el("div", { class: "live-progress", "data-testid": "live-progress" },
    el("progress", { max: total, value: done }), " ",
    el("span", { class: "live-count", "data-testid": "live-count", text: `${done} of ${total} cases` }),
    eta ? [" · ", el("span", { class: "live-eta", "data-testid": "live-eta", text: eta })] : null);
}

function statusLine(text) {
  return el("div", { class: "live-status", "data-testid": "live-status", text });
}

function showWaitingForFolder() {
  const box = document.getElementById("live");
  box.hidden = false;
  box.replaceChildren(statusLine("Waiting for the run folder…"));
}

function showLive(live, progress) {
  const box = document.getElementById("live");
  box.hidden = false;
  const parts = [];
  if (progress && Number(progress.total) > 0) parts.push(progressLine(progress));
  if ((progress && progress.finished) || (live && live.finished)) parts.push(statusLine("Run finished."));
  else if (!live || !live.current || !live.current.length) parts.push(statusLine("Waiting for the run…"));
  else {
    parts.push(el("div", { class: "live-running" }, el("strong", { text: "Running: " }), ...live.current.map((c) => el("span", { "data-testid": "live-case" }, el("code", { text: c.key }), " ",
      (c.rounds || []).map((rd) => el("span", { class: "badge " + (rd.calls && rd.calls.length ? (rd.calls.every((x) => x.ok) ? "ok" : "bad") : "warn"), text: `R${rd.index}` + (rd.calls && rd.calls.length ? ` ${rd.calls.map((x) => x.tool).join(",")}` : " no call") })), " "))));
  }
  box.replaceChildren(...parts);
}

if (DATA.live && DATA.runs[0] && !(DATA.runs[0].header && DATA.runs[0].header.harness_mode)) LIVE.folder = DATA.runs[0].label;
