// ---- review page ----------------------------------------------------------------------------
// Joined after the report's core.js and panel.js in one function scope: el(), fmt(), panel()...
// Every value from a run or a review (keys, model output, notes) reaches the page as text only.
const REVIEW = JSON.parse(document.getElementById("review-data").textContent);
const view = { queue: REVIEW.queue, selected: null, record: null, loading: 0 };

const itemId = (it) => `${it.run}|${it.trial}|${it.key}`;
const runName = (i) => (REVIEW.runs[i] ? REVIEW.runs[i].name : String(i));
const findItem = (id) => view.queue.find((it) => itemId(it) === id) || null;

function setOptions(select, first, values, label) {
  const keep = select.value;
  select.replaceChildren(el("option", { value: "", text: first }), ...values.map((v) => el("option", { value: v, text: label ? label(v) : v })));
  select.value = values.map(String).includes(keep) ? keep : "";
}

function renderFilters() {
  setOptions(document.getElementById("f-reason"), "every reason", uniq(view.queue.flatMap((it) => it.reasons.map((r) => r.code))));
  setOptions(document.getElementById("f-run"), "every run", REVIEW.runs.map((r) => String(r.index)), (i) => REVIEW.runs[Number(i)].label);
  setOptions(document.getElementById("f-suite"), "every suite", uniq(view.queue.map((it) => it.suite)));
  const status = document.getElementById("f-status");
  if (!status.options.length) {
    status.append(el("option", { value: "", text: "reviewed or not" }), el("option", { value: "todo", text: "not yet reviewed" }),
      el("option", { value: "done", text: "reviewed" }), el("option", { value: "stale", text: "stale review" }));
  }
}

function filtered() {
  const f = (id) => document.getElementById(id).value;
  const reason = f("f-reason"), run = f("f-run"), suite = f("f-suite"), status = f("f-status");
  return view.queue.filter((it) => (!reason || it.reasons.some((r) => r.code === reason))
    && (run === "" || String(it.run) === run) && (!suite || it.suite === suite)
    && (!status || (status === "todo" ? !it.reviewed : status === "done" ? it.reviewed : it.stale)));
}

function renderList() {
  const items = filtered();
  const todo = view.queue.filter((it) => !it.reviewed).length;
  document.getElementById("q-count").textContent = `${items.length} of ${view.queue.length} queued cases shown · ${todo} not yet reviewed by ${REVIEW.reviewer}`;
  document.getElementById("queue").replaceChildren(...items.map((it) => el("li", {
    class: [itemId(it) === view.selected ? "selected" : "", it.reviewed ? "done" : ""].join(" ").trim(),
    "data-testid": "queue-item", "data-run": it.run, "data-key": it.key, "data-trial": it.trial,
    "data-reviewed": it.reviewed ? "true" : "false", "data-stale": it.stale ? "true" : "false",
    onclick: () => select(itemId(it)),
  }, el("div", { class: "key", text: `${it.key} #${it.trial}` }),
    el("div", { class: "sub", text: runName(it.run) }),
    el("div", {}, uniq(it.reasons.map((r) => r.code)).map((c) => el("span", { class: "pill", text: c })),
      it.stale ? el("span", { class: "badge stale", text: "stale" }) : null))));
}

function step(direction) {
  // n/j: the next case not yet reviewed after the selected one (wrapping); p/k: the previous case.
  const items = filtered();
  if (!items.length) return;
  const at = items.findIndex((it) => itemId(it) === view.selected);
  if (direction < 0) { if (at > 0) select(itemId(items[at - 1])); else if (at < 0) select(itemId(items[0])); return; }
  const order = items.slice(at + 1).concat(items.slice(0, at + 1));
  const next = order.find((it) => !it.reviewed);
  if (next) select(itemId(next));
  else document.getElementById("q-count").textContent += " · every shown case is reviewed";
}

function select(id) {
  view.selected = id;
  renderList();
  const it = findItem(id);
  const box = document.getElementById("case");
  if (!it) { box.replaceChildren(el("p", { class: "note", text: "Select a case (or press n)." })); return; }
  const ticket = ++view.loading;
  box.replaceChildren(el("p", { class: "note", text: "loading…" }));
  const url = `api/record?run=${it.run}&key=${encodeURIComponent(it.key)}&trial=${it.trial}`;
  fetch(url, { cache: "no-store" }).then((res) => res.json().then((body) => ({ ok: res.ok, body })))
    .then(({ ok, body }) => {
      if (ticket !== view.loading) return; // another case was selected meanwhile
      if (!ok) { box.replaceChildren(el("p", { class: "error", "data-testid": "load-error", text: body.error || "cannot load the record" })); return; }
      view.record = body;
      renderCase(it, body);
    })
    .catch((e) => { if (ticket === view.loading) box.replaceChildren(el("p", { class: "error", "data-testid": "load-error", text: String(e) })); });
}

function renderCase(it, rec) {
  const forms = it.manual ? [rubricForm(it, rec)] : it.scorers.map((s) => scorerForm(it, rec, s));
  document.getElementById("case").replaceChildren(
    el("h2", { "data-testid": "case-title", text: `${it.key} · trial ${it.trial} · ${runName(it.run)}` }),
    el("h4", { text: "Why it is queued" }),
    el("ul", { class: "why" }, it.reasons.map((r) => el("li", { "data-testid": "queue-reason", "data-code": r.code },
      el("code", { text: r.code }), r.scorer ? ` (${r.scorer})` : "", r.detail ? ` — ${r.detail}` : ""))),
    el("h4", { text: it.manual ? "Your rubric score" : "Your review, per scorer" }),
    el("div", { "data-testid": "review-forms" }, forms),
    panel(rec));
}

function savedLine(it, scorer) {
  const e = it.own[scorer];
  if (!e) return el("div", { class: "saved note", "data-testid": "saved", "data-decision": "", text: "not reviewed by you yet" });
  const scores = e.scores && Object.keys(e.scores).length ? ` · scores ${Object.entries(e.scores).map(([k, v]) => `${k}=${v}`).join(", ")}` : "";
  return el("div", { class: "saved", "data-testid": "saved", "data-decision": e.decision, "data-stale": e.stale ? "true" : "false" },
    "your review: ", el("strong", { text: e.decision }), e.reason ? ` · ${e.reason}` : "", scores, e.note ? ` · note: ${e.note}` : "",
    ` · ${e.at}`, e.stale ? el("span", { class: "badge stale", "data-testid": "stale", text: "stale: the record changed since" }) : null);
}

function reasonSelect(own) {
  const select = el("select", { "data-testid": "reason", "aria-label": "reason code" },
    el("option", { value: "", text: "reason code (required to overturn)" }), REVIEW.reasons.map((r) => el("option", { value: r, text: r })));
  select.value = own && own.reason ? own.reason : "";
  return select;
}

function noteBox(own) {
  const box = el("textarea", { "data-testid": "note", placeholder: "note", maxlength: 4000 });
  box.value = own && own.note ? own.note : "";
  return box;
}

function scorerForm(it, rec, scorer) {
  const v = (rec.verdicts || {})[scorer] || {};
  const own = it.own[scorer];
  const reason = reasonSelect(own), note = noteBox(own);
  const error = el("div", { class: "error", "data-testid": "review-error" });
  const box = el("div", { class: "scorer-review" + (it.focus.includes(scorer) ? " focus" : ""), "data-testid": "scorer-review", "data-scorer": scorer });
  const send = (decision) => submit(it, box, { scorer, decision, reason: reason.value, note: note.value }, error);
  const flip = v.passed ? "overturn_fail" : "overturn_pass";
  box.append(
    el("div", {}, el("code", { text: scorer }), " ", el("span", { class: "pill " + (v.passed ? "pass" : "fail"), "data-testid": "automatic", text: `automatic: ${v.passed ? "pass" : "fail"}` }),
      " ", el("span", { class: "note", text: v.rationale || "" })),
    savedLine(it, scorer),
    el("div", { class: "controls" },
      el("button", { type: "button", "data-testid": "agree", onclick: () => send("agree"), text: "agree" }),
      el("button", { type: "button", "data-testid": "overturn", "data-decision": flip, onclick: () => send(flip), text: `overturn → ${v.passed ? "fail" : "pass"}` }),
      el("button", { type: "button", "data-testid": "unsure", onclick: () => send("unsure"), text: "unsure" }),
      reason),
    note, error);
  return box;
}

function levelsOf(scale) {
  if (Array.isArray(scale.levels)) return scale.levels;
  const out = [];
  for (let x = scale.min; x <= scale.max; x++) out.push(x);
  return out;
}

function rubricForm(it, rec) {
  const rubric = rec.rubric || { criteria: [] };
  const own = it.own.rubric;
  const note = noteBox(own);
  const error = el("div", { class: "error", "data-testid": "review-error" });
  const box = el("div", { class: "scorer-review focus", "data-testid": "scorer-review", "data-scorer": "rubric" });
  const sets = rubric.criteria.map((c) => {
    const levels = levelsOf(c.scale);
    return { c, levels, node: el("fieldset", { class: "criterion", "data-testid": "criterion", "data-criterion": c.id },
      el("legend", {}, el("strong", { text: c.id })), el("div", { class: "note", text: c.description }),
      levels.map((level, i) => {
        const radio = el("input", { type: "radio", name: `crit-${c.id}`, value: i, "data-level": level });
        radio.checked = !!(own && own.scores && own.scores[c.id] === level);
        return el("label", {}, radio, ` ${level}`);
      })) };
  });
  const scores = () => {
    const out = {};
    for (const s of sets) {
      const hit = s.node.querySelector("input:checked");
      if (hit) out[s.c.id] = s.levels[Number(hit.value)];
    }
    return out;
  };
  const rule = rubric.pass_rule ? `passes when ${Object.entries(rubric.pass_rule).map(([k, v]) => `${k} ≥ ${v}`).join(" and ")}` : "passes when every criterion reaches its scale's middle level";
  box.append(el("div", {}, el("code", { text: "rubric" }), " ", el("span", { class: "note", text: rule })),
    savedLine(it, "rubric"), ...sets.map((s) => s.node),
    el("div", { class: "controls" },
      el("button", { type: "button", "data-testid": "save-scores", onclick: () => submit(it, box, { scorer: "rubric", decision: "scored", scores: scores(), note: note.value }, error), text: "save scores" }),
      el("button", { type: "button", "data-testid": "unsure", onclick: () => submit(it, box, { scorer: "rubric", decision: "unsure", note: note.value }, error), text: "unsure" })),
    note, error);
  return box;
}

function submit(it, box, review, error) {
  error.textContent = "";
  const body = Object.assign({ run: it.run, key: it.key, trial: it.trial }, review);
  return fetch("api/review", { method: "POST", cache: "no-store", headers: { "Content-Type": "application/json", "X-Review-Token": REVIEW.token }, body: JSON.stringify(body) })
    .then((res) => res.json().then((answer) => ({ ok: res.ok, answer })))
    .then(({ ok, answer }) => {
      if (!ok) { error.textContent = answer.error || "the review was not saved"; return; }
      it.own[review.scorer] = Object.assign({}, answer.entry, { stale: false });
      box.querySelector("[data-testid=saved]").replaceWith(savedLine(it, review.scorer));
      return refreshQueue();
    })
    .catch((e) => { error.textContent = `the review was not saved: ${e}`; });
}

function refreshQueue() {
  // The server decides what is reviewed (focus scorers, staleness): take its queue after each save.
  return fetch("api/queue", { cache: "no-store" }).then((res) => res.json()).then((body) => {
    if (!Array.isArray(body.queue)) return;
    view.queue = body.queue;
    renderFilters();
    renderList();
  });
}

function onKey(event) {
  const tag = (event.target && event.target.tagName) || "";
  if (["INPUT", "TEXTAREA", "SELECT"].includes(tag) || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "n" || event.key === "j") { event.preventDefault(); step(1); }
  else if (event.key === "p" || event.key === "k") { event.preventDefault(); step(-1); }
}

function start() {
  document.getElementById("meta").textContent = `reviewer ${REVIEW.reviewer} · ${REVIEW.runs.map((r) => r.label).join(" · ")}`;
  renderFilters();
  for (const id of ["f-reason", "f-run", "f-suite", "f-status"]) document.getElementById(id).addEventListener("change", renderList);
  document.addEventListener("keydown", onKey);
  renderList();
}
start();
