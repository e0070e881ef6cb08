// Export: every table as CSV and every chart as SVG, from the page.
// Sections mark what can be exported: <table data-export=NAME> gets a "CSV" button and
// <svg data-export=NAME> an "SVG" button, placed just before it. After every render (and after any
// later DOM change, e.g. a panel that loads its record) buttons are added where missing and
// dropped where their target is gone, so a live re-render never duplicates them.
// Downloads are Blob URLs of text the page builds itself; no run value becomes a link target.

const EXPORT_FORMULA = /^[=+\-@\t\r]/;
const EXPORT_NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?%?$/;
const SVG_NS = "http://www.w3.org/2000/svg";
// Presentation properties copied from the computed style, so an exported chart looks the same
// when opened without the page's style sheet.
const SVG_STYLE_PROPS = ["fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray", "stroke-opacity",
  "opacity", "font-family", "font-size", "font-weight", "font-style", "text-anchor", "dominant-baseline", "visibility"];

function csvCell(value) {
  // Model output is untrusted: a cell a spreadsheet would run as a formula gets a leading '.
  // Plain numbers (-1.5, +3%) are data, not formulas, and stay as they are.
  let s = value === null || value === undefined ? "" : String(value);
  if (EXPORT_FORMULA.test(s) && !EXPORT_NUMBER.test(s)) s = "'" + s;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function toCsv(rows) {
  // RFC 4180: CRLF line ends, fields with commas, quotes or line breaks quoted, quotes doubled.
  return rows.map((row) => row.map(csvCell).join(",")).join("\r\n") + "\r\n";
}

function cellText(cell) {
  // The cell's text without decorations (sort arrows, hidden helpers), whitespace collapsed.
  let text = cell.textContent || "";
  for (const deco of cell.querySelectorAll(".arrow, [aria-hidden=true]")) text = text.replace(deco.textContent, "");
  return text.replace(/\s+/g, " ").trim();
}

function rowCells(tr) {
  const out = [];
  for (const cell of tr.cells) {
    out.push(cellText(cell));
    for (let i = 1; i < (cell.colSpan || 1); i++) out.push("");
  }
  return out;
}

function exportFileName(name, ext) {
  // Names may carry a run label (untrusted): keep a safe file name.
  const base = String(name || "").replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[._]+/, "").slice(0, 80);
  return `${base || "export"}.${ext}`;
}

function isCaseTable(tbl) {
  const body = document.getElementById("rows");
  return !!body && tbl.contains(body);
}

function caseCells(item) {
  // One case-table row as the cells it shows (when cases.js hands back records, not cells).
  const r = item.rec;
  const verdicts = r.status === "error" ? "error" : Object.entries(r.verdicts || {}).map(([t, v]) => `${t}: ${verdictWord(v)}`).join("; ");
  const reasons = uniq(Object.values(r.verdicts || {}).flatMap((v) => (v.reasons || []).map((x) => x.code)));
  const calls = ((r.trace && r.trace.calls) || []).map((c) => c.tool);
  return [DATA.runs[item.run].label, r.key, r.trial ?? 0, r.category ?? "", verdicts, reasons.join(", "), calls.join(", "),
    r.duration_ms != null ? Math.round(r.duration_ms) : ""];
}

function caseTableData(tbl) {
  // The case table renders lazily: export every filtered row, not only those drawn so far.
  const head = tbl.tHead && tbl.tHead.rows.length ? rowCells(tbl.tHead.rows[tbl.tHead.rows.length - 1]) : [];
  const rows = typeof caseTableRows === "function" ? caseTableRows() : state.rows;
  const body = rows.map((row) => (Array.isArray(row) ? row.map((c) => (c === null || c === undefined ? "" : String(c))) : caseCells(row)));
  return [head, ...body];
}

function tableData(tbl) {
  if (isCaseTable(tbl)) return caseTableData(tbl);
  const rows = [];
  for (const section of [tbl.tHead, ...tbl.tBodies, tbl.tFoot]) {
    if (!section) continue;
    // Rows that open under another (a case's detail panel) are not table data.
    for (const tr of section.rows) if (!tr.classList.contains("detail")) rows.push(rowCells(tr));
  }
  return rows;
}

function svgText(node) {
  const clone = node.cloneNode(true);
  clone.setAttribute("xmlns", SVG_NS);
  const box = node.getBoundingClientRect();
  if (!clone.getAttribute("width") && box.width) clone.setAttribute("width", Math.ceil(box.width));
  if (!clone.getAttribute("height") && box.height) clone.setAttribute("height", Math.ceil(box.height));
  const from = [node, ...node.querySelectorAll("*")], to = [clone, ...clone.querySelectorAll("*")];
  from.forEach((src, i) => {
    const cs = getComputedStyle(src);
    to[i].setAttribute("style", SVG_STYLE_PROPS.map((p) => `${p}:${cs.getPropertyValue(p)}`).join(";"));
  });
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(clone) + "\n";
}

function downloadText(fileName, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = el("a", { href: url, download: fileName, hidden: "" });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30000);
}

function exportTarget(target) {
  const name = target.getAttribute("data-export");
  if (target.namespaceURI === SVG_NS) downloadText(exportFileName(name, "svg"), "image/svg+xml", svgText(target));
  else downloadText(exportFileName(name, "csv"), "text/csv;charset=utf-8", toCsv(tableData(target)));
}

function hasExportButton(target) {
  const prev = target.previousElementSibling;
  return !!prev && prev.classList.contains("export-btn") && prev._exportTarget === target;
}

function addExportButtons() {
  // The case table is static markup; name it here until the template does (data-export="cases").
  const cases = document.querySelector("table.cases");
  if (cases && !cases.hasAttribute("data-export")) cases.setAttribute("data-export", "cases");
  for (const btn of document.querySelectorAll(".export-btn")) {
    const t = btn._exportTarget;
    if (!t || !t.isConnected || btn.nextElementSibling !== t || !t.hasAttribute("data-export")) btn.remove();
  }
  for (const target of document.querySelectorAll("table[data-export], svg[data-export]")) {
    if (hasExportButton(target) || !target.parentNode) continue;
    const kind = target.namespaceURI === SVG_NS ? "SVG" : "CSV";
    const btn = el("button", { type: "button", class: "export-btn", "data-testid": "export-" + kind.toLowerCase(),
      "data-export-for": target.getAttribute("data-export"), title: `Download as ${kind}`, text: kind,
      onclick: (ev) => { ev.stopPropagation(); exportTarget(target); } });
    btn._exportTarget = target;
    target.before(btn);
  }
}

// Tables drawn outside a render (a panel that loads its record on open) get buttons too; the
// observer batches changes and ignores its own insertions (nothing is left to add then).
let exportPending = false;
new MutationObserver(() => {
  if (exportPending) return;
  exportPending = true;
  requestAnimationFrame(() => { exportPending = false; addExportButtons(); });
}).observe(document.body, { childList: true, subtree: true });
onRender(addExportButtons);
