// The page's data: DATA (the embedded JSON) and the full record behind a case-table row.
// payload.py packs rows as arrays (repeated strings and per-case fields by index) and the records
// as gzip chunks; rows are expanded here at load, so every other module reads plain rows.
const DATA = JSON.parse(document.getElementById("cb-data").textContent);

function unpackRows() {
  const packed = DATA.packed;
  if (!packed) return;
  const S = packed.strings, C = packed.cases;
  const s = (i) => (i === null || i === undefined ? null : S[i]);
  const row = (p) => {
    const [ci, trial, status, mode, recall, duration, verdicts, tools, text, stop, error, agent] = p;
    const c = C[ci];
    const r = { key: c[0] === null ? `${c[1]}:${c[2]}` : c[0], suite: c[1], case_id: c[2], category: c[3], trial, status: s(status), harness_mode: s(mode),
      instruction: c[4], expected_tools: c[5], retrieval_recall: recall, duration_ms: duration, verdicts: {},
      trace: { calls: tools.map((t) => ({ tool: s(t) })), final_text: text, stop_reason: s(stop) } };
    for (const [tier, ok, partial, codes] of verdicts) {
      // ok: 1 pass, 0 fail, -1 not applicable (a verdict that judged nothing)
      r.verdicts[s(tier)] = { passed: ok === 1, partial, reasons: codes.map((x) => ({ code: s(x) })) };
      if (ok === -1) r.verdicts[s(tier)].applicable = false;
    }
    if (error) r.error = { type: s(error[0]), message: error[1] };
    if (agent) r.trace.agent = { outcome: s(agent[0]), message: agent[1] };
    return r;
  };
  for (const run of DATA.runs) if (run.records.length && Array.isArray(run.records[0])) run.records = run.records.map(row);
}
unpackRows();

// Inflated chunks by their base64 text's owner and index (a chunk is inflated once, on first use).
const chunkCache = new Map();

function inflateChunk(store, name, index) {
  const id = `${name}/${index}`;
  if (!chunkCache.has(id)) {
    const bin = atob(store.chunks[index]);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    // No fetch of a data: URL (the CSP allows connect-src 'self' only): a Blob stream needs no network.
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    chunkCache.set(id, new Response(stream).text().then(JSON.parse));
  }
  return chunkCache.get(id);
}

function packedItem(store, name, index) {
  return inflateChunk(store, name, Math.floor(index / store.chunk)).then((items) => items[index % store.chunk]);
}

// Records fetched from the live server, by row object (a row replaced by a newer record refetches).
const fetchedRecords = new WeakMap();

function fetchRecord(row) {
  if (!fetchedRecords.has(row)) {
    const url = `api/record?key=${encodeURIComponent(row.key)}&trial=${encodeURIComponent(row.trial)}`;
    const p = fetch(url, { cache: "no-store" }).then((res) => (res.ok ? res.json() : row)).catch(() => row);
    fetchedRecords.set(row, p);
  }
  return fetchedRecords.get(row);
}

function loadRecord(runIndex, recordIndex) {
  // A case-table row holds what the table and filters need; the panel asks for the whole record.
  const run = DATA.runs[runIndex];
  const row = run.records[recordIndex];
  const details = run.details;
  if (Array.isArray(details) && details[recordIndex]) return Promise.resolve(details[recordIndex]);
  if (details && details.chunks && recordIndex < details.count) {
    return packedItem(details, `run${runIndex}`, recordIndex).then((d) => {
      const rest = Object.assign({}, d);
      delete rest["@shared"];
      if (d["@shared"] === undefined) return rest;
      return packedItem(DATA.packed.shared, "shared", d["@shared"]).then((part) => Object.assign({}, part, rest));
    }).catch(() => row); // a browser without DecompressionStream still shows the row's fields
  }
  if (DATA.live && row) return fetchRecord(row); // live view: the server holds the whole record
  return Promise.resolve(row);
}

// For tests and the browser console: the same loader the panel uses (read-only, nothing else exposed).
window.callbenchData = Object.freeze({ loadRecord });
