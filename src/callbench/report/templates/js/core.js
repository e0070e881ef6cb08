// Shared helpers of the report page. The page's script is the files of this folder joined in the
// order html.JS_MODULES lists, inside one function scope: a function declared in one file is
// visible in all of them. Every value from a run is untrusted model output: it only ever reaches
// the page through textContent or attribute setters, never through innerHTML, and no value
// becomes a link target.
function el(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = String(v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, String(v));
  }
  for (const kid of kids.flat()) {
    if (kid === null || kid === undefined || kid === false) continue;
    node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return node;
}
const svg = (tag, attrs) => {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  return node;
};
const pct = (x) => (x === null || x === undefined ? "–" : (100 * x).toFixed(1) + "%");
const fmt = (x, d = 3) => (x === null || x === undefined ? "–" : Number(x).toFixed(d));
const json = (v) => { try { return JSON.stringify(v, null, 1); } catch (e) { return String(v); } };
const when = (t) => (typeof t === "number" ? new Date(t * 1000).toISOString().replace("T", " ").slice(0, 23) + "Z" : String(t || ""));
const errText = (e) => (e && typeof e === "object" ? `${e.type || "error"}: ${e.message || ""}` : String(e || ""));
const uniq = (xs) => Array.from(new Set(xs)).filter((x) => x !== undefined && x !== null && x !== "").sort();

function allTiers() {
  return uniq(DATA.runs.flatMap((r) => r.statistics.strata.map((s) => s.tier)));
}


function table(head, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, head.map((h) => el("th", { text: h })))), el("tbody", {}, rows));
}


// Each section registers how it draws itself from DATA; start-up and every live update call them
// all, in the order the files are joined. The case table is not one: it keeps its rows and open
// panels across updates (see cases.js).
const RENDERERS = [];
function onRender(fn) { RENDERERS.push(fn); }
function renderSections() { for (const fn of RENDERERS) fn(); }

// A verdict's word and pill class: "n/a" for a verdict that judged nothing (a manual case, a state
// check on a suite without state), never shown as a failure.
const verdictWord = (v) => (v.applicable === false ? "n/a" : v.passed ? "pass" : "fail");
const verdictClass = (v) => (v.applicable === false ? "na" : v.passed ? "pass" : "fail");
