// ---- case panel ---------------------------------------------------------------------------
// What one record shows when its row opens: rounds, every call with its arguments and result,
// expected vs actual arguments ($ref values resolved from the results), verdicts and, for a
// state-match failure, which parts of the state differ and where inside them.
function badgeFor(call) {
  if (call.parse_error || call.schema_valid === false || call.known_tool === false || call.execution === "error" || call.execution === "rejected") return "bad";
  if (call.execution === "ok") return "ok";
  return "skip"; // valid but not executed (contract tier) or skipped
}

function callStatus(call, timeline) {
  // A call's badge text: a name outside the offered tools is "unknown tool" (it has no schema to
  // be invalid against), then unparsable and schema-invalid arguments, else the execution status.
  if (call.known_tool === false) return "unknown tool";
  if (call.parse_error) return "unparsable";
  if (call.schema_valid === false) return timeline ? `schema-invalid · ${call.execution}` : "schema-invalid";
  return call.execution || "–";
}

function callBadge(call, opts) {
  const o = opts || {};
  return el("span", { class: "badge " + badgeFor(call), "data-testid": o.testid || "call-badge", "data-status": callStatus(call, false),
    title: call.error || (call.schema_errors || []).join("; ") || call.execution }, o.tool ? `${call.tool} · ${callStatus(call, o.timeline)}` : callStatus(call, o.timeline));
}

const FOLD_LINES = 12, FOLD_CHARS = 1500;
const compact = (v) => { try { return JSON.stringify(v) ?? String(v); } catch (e) { return String(v); } };

function fold(text, attrs) {
  // A <pre> showing the first lines of a long value with a "show all" button (and back).
  const full = String(text), lines = full.split("\n");
  const long = lines.length > FOLD_LINES || full.length > FOLD_CHARS;
  const short = long ? lines.slice(0, FOLD_LINES).join("\n").slice(0, FOLD_CHARS) + " …" : full;
  const pre = el("pre", Object.assign({ class: "folded", "data-folded": long ? "true" : "false", text: short }, attrs || {}));
  if (!long) return pre;
  const more = `show all (${lines.length} lines, ${full.length} chars)`;
  const button = el("button", { type: "button", class: "fold", "data-testid": "show-all", text: more });
  button.addEventListener("click", () => {
    const open = pre.getAttribute("data-folded") === "true";
    pre.textContent = open ? full : short;
    pre.setAttribute("data-folded", open ? "false" : "true");
    button.textContent = open ? "show less" : more;
  });
  return el("div", { class: "fold-box" }, pre, button);
}

function roundCards(t) {
  const byId = new Map((t.calls || []).map((c) => [c.call_id, c]));
  return (t.rounds || []).map((rd) => {
    const calls = (rd.call_ids || []).map((id) => byId.get(id)).filter(Boolean);
    const badges = calls.length ? calls.map((c) => callBadge(c, { tool: true }))
      : [el("span", { class: "badge warn", "data-testid": "call-badge", text: rd.reconstructed && rd.text ? "no tool call (answer)" : "no tool call" })];
    return el("div", { class: "round" + (calls.length ? "" : " nocall"), "data-testid": "round-card" },
      el("strong", { text: `Round ${rd.index}` }), " ", el("span", { class: "when", text: when(rd.started_at) }),
      rd.reconstructed ? el("div", { class: "note", "data-testid": "reconstructed", text: "reconstructed from call timing" }) : null,
      rd.agent_reported ? el("div", { class: "note", "data-testid": "agent-reported", text: `reported by the agent's own spans (OpenTelemetry)${rd.usage ? ` · ${rd.usage.input_tokens} in / ${rd.usage.output_tokens} out tokens` : ""}` }) : null,
      rd.latency_ms != null ? el("span", { class: "when", text: ` · ${Math.round(rd.latency_ms)} ms` }) : null,
      el("div", {}, badges), rd.nudge ? el("div", { class: "note", text: `nudge: ${rd.nudge}` }) : null,
      rd.text ? el("pre", { text: rd.text }) : null,
      roundEvidence(rd));
  });
}

function roundEvidence(rd) {
  // Collapsed: the round's reasoning (where the API returns it) and the text as received when
  // it differs from what was read from it (prompt mode, or a call left in the text by a server).
  const reasoning = rd.reasoning ? el("details", { class: "round-reasoning", "data-testid": "round-reasoning" },
    el("summary", { text: `reasoning (${rd.reasoning.length.toLocaleString("en")} chars)` }), el("pre", { text: rd.reasoning })) : null;
  const raw = rd.raw_text != null && rd.raw_text !== (rd.text || "");
  const suspect = rd.text_call_format ? ` · holds a ${rd.text_call_format} call the server did not parse` : "";
  const received = raw || suspect ? el("details", { class: "round-raw", "data-testid": "round-raw-text" },
    el("summary", { text: `text as received${suspect}` }), el("pre", { text: rd.raw_text || rd.text || "(empty)" })) : null;
  return [reasoning, received];
}

function callList(calls) {
  // Every call in emitted order: arguments on the left, what the tool returned on the right.
  if (!calls.length) return el("div", { class: "note", text: "no tool calls" });
  return el("ol", { class: "calls", "data-testid": "call-list" }, calls.map((c, i) => el("li", { class: "call", "data-testid": "call", "data-tool": c.tool, "data-index": i },
    el("div", { class: "call-head" }, el("strong", { text: `call ${i + 1}` }), " ", el("code", { text: c.tool }), " ", callBadge(c, { testid: "call-status" }),
      el("span", { class: "when", text: ` · round ${c.round ?? "–"} · ${fmt(c.duration_ms, 1)} ms` })),
    el("div", { class: "call-io" },
      el("div", { class: "call-args" }, el("div", { class: "note", text: "arguments" }),
        c.parse_error ? [el("div", { class: "bad-text", text: `unparsable: ${c.parse_error}` }), fold(c.arguments_raw || "", { "data-testid": "call-arguments" })]
          : fold(json(c.arguments ?? {}), { "data-testid": "call-arguments" })),
      el("div", { class: "call-result" }, el("div", { class: "note", text: c.error ? "error" : "result" }),
        c.error ? fold(c.error, { class: "folded bad-text", "data-testid": "call-error" })
          : c.execution === "ok" || (c.result !== null && c.result !== undefined) ? fold(json(c.result), { "data-testid": "call-result" })
            : el("div", { class: "note", "data-testid": "call-result-none", text: `(no result: ${c.execution || "not executed"})` }))))));
}

function panel(r, runIndex) {
  const t = r.trace || { rounds: [], calls: [] };
  const calls = t.calls || [];
  const verdicts = Object.entries(r.verdicts || {}).map(([tier, v]) => el("div", {},
    el("span", { class: "pill " + verdictClass(v), text: `${tier}: ${verdictWord(v)}` }),
    ` partial ${fmt(v.partial)} (diagnostic) — `, el("span", { text: v.rationale || "" }),
    el("ul", {}, (v.reasons || []).map((x) => el("li", {}, el("code", { text: x.code }), " ", x.message || "")))));
  return el("div", { class: "panel", "data-testid": "case-panel", "data-key": r.key },
    r.status === "error" ? el("div", { class: "bad-text", text: `error: ${errText(r.error)}` }) : null,
    el("h4", { text: "Instruction" }), el("pre", { text: r.instruction || "" }),
    el("h4", { text: "Offered tools" }), el("div", {}, (r.offered_tools || []).map((x) => el("span", { class: "pill", text: x }))),
    t.agent ? agentSection(t.agent) : null,
    t.agent || calls.some((c) => typeof c.started_at === "number") ? [el("h4", { text: "Call timeline" }), callTimeline(calls)] : null,
    el("h4", { text: (t.rounds || []).some((rd) => rd.reconstructed) ? "Rounds (reconstructed from call timing, display only)" : "Rounds" }), el("div", { class: "rounds" }, roundCards(t)),
    el("h4", { text: "Calls and results" }), callList(calls),
    el("h4", { text: "Expected vs actual arguments" }), argumentDiff(expectedSteps(r), calls, matchesOf(r), refResolver(r, calls)),
    stateDiffs(r),
    el("h4", { text: "Final text" }), el("pre", { "data-testid": "final-text", text: t.final_text || "" }),
    el("h4", { text: "Evaluation" }), verdicts,
    el("h4", { text: "Timing" }), el("div", { text: `case ${fmt(r.duration_ms, 0)} ms · stop: ${t.stop_reason || "–"} · ` + calls.map((c) => `${c.tool} ${fmt(c.duration_ms, 1)} ms`).join(", ") }),
    runIndex === undefined ? null : caseCost(r, runIndex));
}

function agentSection(a) {
  // How the agent under test ran: its outcome, exit code, message and stderr tail (literal text).
  const ok = a.outcome === "answer";
  return el("div", { class: "agent-run", "data-testid": "agent-run", "data-outcome": a.outcome || "" },
    el("h4", { text: "Agent under test" }),
    el("div", {},
      el("span", { class: "badge " + (ok ? "ok" : "bad"), "data-testid": "agent-outcome", text: a.outcome || "–" }), " ",
      el("code", { "data-testid": "agent-spec", text: a.agent || "" }),
      el("span", { class: "when", "data-testid": "agent-exit", text: ` · exit code ${a.exit_code === null || a.exit_code === undefined ? "–" : a.exit_code}` }),
      el("span", { class: "when", text: ` · ${fmt(a.duration_ms, 0)} ms` })),
    a.message ? el("div", { class: ok ? "" : "bad-text", "data-testid": "agent-message", text: a.message }) : null,
    a.stderr_tail ? [el("div", { class: "note", text: "stderr (tail)" }), el("pre", { class: "stderr", "data-testid": "agent-stderr", text: a.stderr_tail })] : null,
    a.details && a.details.otel ? agentSpans(a.details.otel) : null);
}

function agentSpans(o) {
  // --agent-otel: what the agent's own OpenTelemetry spans say (its figures, not callbench's measurement).
  const u = o.usage || {};
  const said = o.spans ? `${o.spans} spans · ${o.requests} model requests · ${u.input_tokens || 0} input + ${u.output_tokens || 0} output tokens`
    + ` (${u.reasoning_tokens || 0} reasoning, ${u.cached_tokens || 0} cached)` + (o.models && o.models.length ? ` · ${o.models.join(", ")}` : "")
    + (o.cost_usd != null ? ` · $${Number(o.cost_usd).toFixed(4)} as reported` : "") : "no spans arrived";
  return el("div", { class: "note", "data-testid": "agent-spans", text: `agent's own spans (OpenTelemetry): ${said}` });
}

function callTimeline(calls) {
  // Each call as it arrived over MCP: offset from the first call, tool, execution status, duration.
  if (!calls.length) return el("div", { class: "note", "data-testid": "timeline-empty", text: "no tool call arrived" });
  const starts = calls.map((c) => c.started_at).filter((x) => typeof x === "number");
  const t0 = starts.length ? Math.min(...starts) : null;
  const rows = calls.map((c, i) => el("tr", { "data-testid": "timeline-row", "data-tool": c.tool, "data-execution": c.execution || "" },
    el("td", { text: i + 1 }),
    el("td", { class: "offset", text: typeof c.started_at === "number" && t0 !== null ? `+${Math.round(1000 * (c.started_at - t0))} ms` : "–" }),
    el("td", { text: c.round ?? "" }),
    el("td", {}, el("code", { text: c.tool })),
    el("td", {}, callBadge(c, { timeline: true, testid: "timeline-badge" })),
    el("td", { class: "duration", text: `${fmt(c.duration_ms, 1)} ms` })));
  const tbl = table(["#", "Offset", "Round", "Tool", "Execution", "Duration"], rows);
  tbl.setAttribute("data-export", "call-timeline");
  return el("div", { class: "timeline", "data-testid": "call-timeline" }, tbl);
}

function expectedSteps(r) {
  // Expected steps with arguments when the record carries them; else tool names only.
  const steps = r.expected || (r.metadata && r.metadata.expected);
  if (Array.isArray(steps)) {
    // One entry per expected call instance (a step with times: N expects N calls), as the scorer counts them.
    return steps.flatMap((s) => Array.from({ length: Math.max(1, s.times || 1) }, () => ({ tool: Array.isArray(s.tool) ? s.tool.join(" | ") : s.tool, tools: [].concat(s.tool), arguments: s.arguments || {} })));
  }
  return (r.expected_tools || []).map((tools) => ({ tool: tools.join(" | "), tools, arguments: null }));
}

function matchesOf(r) {
  // The scorer's own step -> call assignment (first tier that reports one).
  const m = scorerMatches(r);
  return m ? new Map(m.map((x) => [x.expected_index, x.call_index])) : null;
}

function scorerMatches(r) {
  for (const v of Object.values(r.verdicts || {})) {
    const m = v.details && v.details.matches;
    if (Array.isArray(m)) return m;
  }
  return null;
}

// ---- $ref values --------------------------------------------------------------------------
const PATH_TOKEN = /[^.[\]]+|\[\d+\]/g;

function followPath(value, path) {
  // As the scorer's follow_path: a.b[0].c into nested objects and lists; {found: false} when absent.
  for (const token of String(path || "").match(PATH_TOKEN) || []) {
    if (token.startsWith("[")) {
      const i = Number(token.slice(1, -1));
      if (!Array.isArray(value) || i >= value.length) return { found: false };
      value = value[i];
    } else if (isPlain(value) && hasKey(value, token)) value = value[token];
    else if (Array.isArray(value) && /^\d+$/.test(token) && Number(token) < value.length) value = value[Number(token)];
    else return { found: false };
  }
  return { found: true, value };
}

function refResolver(r, calls) {
  // "$ref: step.path" -> the value at path in the result of the call the scorer paired with step.
  const pairs = new Map();
  for (const m of scorerMatches(r) || []) {
    if (m.step === undefined || m.call_index === undefined || m.call_index === null) continue;
    if (!pairs.has(m.step)) pairs.set(m.step, []);
    pairs.get(m.step).push(m.call_index);
  }
  return (ref) => {
    const text = String(ref), dot = text.indexOf(".");
    const step = dot < 0 ? text : text.slice(0, dot), path = dot < 0 ? "" : text.slice(dot + 1);
    for (const index of pairs.get(step) || []) {
      const call = calls[index];
      if (!call || call.execution !== "ok") continue;
      const hit = followPath(call.result, path);
      if (hit.found) return { found: true, value: hit.value, call: index };
    }
    return { found: false };
  };
}

function refsIn(value, out) {
  // Every $ref string inside an expected value (also inside $one_of alternatives and lists).
  const acc = out || [];
  if (isPlain(value)) {
    if (hasKey(value, "$ref")) acc.push(String(value.$ref));
    for (const v of Object.values(value)) refsIn(v, acc);
  } else if (Array.isArray(value)) for (const v of value) refsIn(v, acc);
  return acc;
}

function refNotes(value, resolve) {
  return uniq(refsIn(value)).map((ref) => {
    const hit = resolve ? resolve(ref) : { found: false };
    return el("div", { class: "ref-note", "data-testid": "ref-value", "data-ref": ref, "data-resolved": hit.found ? "true" : "false" },
      "$ref ", el("code", { text: ref }),
      hit.found ? [` = (result of call ${hit.call + 1}) `, inlineFold(compact(hit.value))] : " (not resolved: no executed call paired with that step)");
  });
}

function inlineFold(text) {
  // A long one-line value: its first 300 characters and a "show all" toggle.
  const full = String(text);
  if (full.length <= 400) return el("span", { class: "value", text: full });
  const span = el("span", { class: "value", text: full.slice(0, 300) + " …" });
  const button = el("button", { type: "button", class: "fold", "data-testid": "show-all", text: `show all (${full.length} chars)` });
  button.addEventListener("click", () => {
    const folded = button.textContent !== "show less";
    span.textContent = folded ? full : full.slice(0, 300) + " …";
    button.textContent = folded ? "show less" : `show all (${full.length} chars)`;
  });
  return el("span", {}, span, " ", button);
}

// An approximation of the scorer's argument DSL, for highlighting only: the verdict is authoritative.
const hasKey = (obj, k) => obj !== null && typeof obj === "object" && Object.prototype.hasOwnProperty.call(obj, k);
const isPlain = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function keyState(exp, act, k, resolve) {
  const e = hasKey(exp, k), a = hasKey(act, k);
  if (!e) return "diff"; // an argument the step does not expect
  if (!a) return isPlain(exp[k]) && hasKey(exp[k], "$default") ? "" : "missing";
  const verdict = matchValue(exp[k], act[k], resolve);
  return verdict === null ? "ref" : verdict ? "" : "diff";
}

function matchValue(e, a, resolve) {
  if (isPlain(e)) {
    if (hasKey(e, "$any")) return a !== null && a !== undefined && a !== "";
    if (hasKey(e, "$default")) return matchValue(e.$default, a, resolve);
    if (hasKey(e, "$ref")) {
      // Equal to the resolved value: a match; otherwise left to the scorer (it may coerce).
      const hit = resolve ? resolve(e.$ref) : { found: false };
      return hit.found && json(hit.value) === json(a) ? true : null;
    }
    if (hasKey(e, "$pattern")) { try { return typeof a === "string" && new RegExp(String(e.$pattern)).test(a); } catch (err) { return null; } }
    if (hasKey(e, "$one_of") && Object.keys(e).length === 1) {
      const results = (e.$one_of || []).map((alt) => matchValue(alt, a, resolve));
      return results.includes(true) ? true : results.includes(null) ? null : false;
    }
    if (!isPlain(a)) return false;
    const results = uniq(Object.keys(e).concat(Object.keys(a))).map((k) => keyState(e, a, k, resolve));
    return results.every((r) => r === "") ? true : results.some((r) => r === "diff" || r === "missing") ? false : null;
  }
  if (Array.isArray(e)) {
    if (!Array.isArray(a) || a.length !== e.length) return false;
    const results = e.map((x, i) => matchValue(x, a[i], resolve));
    return results.includes(false) ? false : results.includes(null) ? null : true;
  }
  return json(e) === json(a);
}

function argumentDiff(expected, calls, matches, resolve) {
  const used = new Set();
  const blocks = expected.map((step, i) => {
    let idx = matches ? (matches.has(i) ? matches.get(i) : -1) : calls.findIndex((c, j) => !used.has(j) && step.tools.includes(c.tool));
    if (idx < 0 && !matches) idx = calls.findIndex((c, j) => !used.has(j));
    if (idx >= 0) used.add(idx);
    const call = idx >= 0 ? calls[idx] : null;
    const actualHead = call ? `actual: call ${idx + 1} ${call.tool}` : null;
    if (step.arguments === null) {
      return el("div", { class: "args", "data-testid": "arg-diff" }, el("div", {}, el("strong", { text: `expected ${i + 1}: ${step.tool}` }), el("div", { class: "note", text: "(expected arguments not recorded)" })),
        el("div", {}, el("strong", { text: actualHead || "actual: (no matching call)" }), call ? fold(json(call.arguments ?? call.arguments_raw)) : null));
    }
    const exp = step.arguments || {}, act = (call && call.arguments) || {};
    const keys = uniq(Object.keys(exp).concat(Object.keys(act)));
    const states = new Map(keys.map((k) => [k, keyState(exp, act, k, resolve)]));
    const line = (obj, k, expectedSide) => {
      const has = hasKey(obj, k);
      return el("div", { class: "kv " + states.get(k), "data-state": states.get(k) },
        `${k}: `, has ? inlineFold(compact(obj[k])) : "(absent)",
        expectedSide && has ? refNotes(obj[k], resolve) : null);
    };
    return el("div", { class: "args", "data-testid": "arg-diff" },
      el("div", {}, el("strong", { text: `expected ${i + 1}: ${step.tool}` }), keys.map((k) => line(exp, k, true))),
      el("div", {}, el("strong", { text: actualHead || "actual: (no call)" }), call ? [" ", callBadge(call, { testid: "arg-call-badge" })] : null,
        call && call.parse_error ? el("pre", { text: `unparsable arguments: ${call.arguments_raw}` }) : keys.map((k) => line(act, k, false))));
  });
  const others = calls.map((c, j) => [c, j]).filter(([, j]) => !used.has(j));
  const extra = others.length ? el("div", { "data-testid": "unmatched-calls" }, el("strong", { text: "calls not matched to an expected step" }),
    others.map(([c, j]) => el("div", { class: "kv diff" }, `call ${j + 1} ${c.tool} `, callBadge(c, { testid: "call-status" }), " ", inlineFold(c.parse_error ? c.arguments_raw : compact(c.arguments))))) : null;
  return el("div", {}, blocks.length ? blocks : el("div", { class: "note", text: "no expected steps recorded" }), extra);
}

// ---- state diff ---------------------------------------------------------------------------
const STATE_ROWS = 200; // differing leaves listed per part before "… more"

function diffValues(gold, actual, path, out) {
  // The leaves where actual differs from gold: changed values, keys/items missing or extra.
  if (json(gold) === json(actual)) return out;
  if (isPlain(gold) && isPlain(actual)) {
    for (const k of Object.keys(gold)) {
      if (!hasKey(actual, k)) out.push({ path: `${path}.${k}`, kind: "missing", gold: gold[k] });
      else diffValues(gold[k], actual[k], `${path}.${k}`, out);
    }
    for (const k of Object.keys(actual)) if (!hasKey(gold, k)) out.push({ path: `${path}.${k}`, kind: "extra", actual: actual[k] });
  } else if (Array.isArray(gold) && Array.isArray(actual) && byId(gold) && byId(actual)) {
    // Lists of records with unique ids (tabs, tasks, tracks): paired by id, so one inserted
    // record shows as one extra item instead of shifting every later index.
    const g = byId(gold), a = byId(actual);
    for (const [id, item] of g) {
      const at = `${path}[id=${id}]`;
      if (!a.has(id)) out.push({ path: at, kind: "missing", gold: item });
      else diffValues(item, a.get(id), at, out);
    }
    for (const [id, item] of a) if (!g.has(id)) out.push({ path: `${path}[id=${id}]`, kind: "extra", actual: item });
  } else if (Array.isArray(gold) && Array.isArray(actual)) {
    for (let i = 0; i < Math.max(gold.length, actual.length); i++) {
      if (i >= actual.length) out.push({ path: `${path}[${i}]`, kind: "missing", gold: gold[i] });
      else if (i >= gold.length) out.push({ path: `${path}[${i}]`, kind: "extra", actual: actual[i] });
      else diffValues(gold[i], actual[i], `${path}[${i}]`, out);
    }
  } else out.push({ path, kind: "changed", gold, actual });
  return out;
}

function byId(list) {
  // id -> item when every item is an object with a unique string or number "id"; else null.
  const map = new Map();
  for (const item of list) {
    if (!isPlain(item) || !["string", "number"].includes(typeof item.id) || map.has(String(item.id))) return null;
    map.set(String(item.id), item);
  }
  return list.length ? map : null;
}

function stateDiffs(r) {
  // One block per scorer whose details list differing state parts (state-match failures).
  const blocks = Object.entries(r.verdicts || {}).filter(([, v]) => v.details && isPlain(v.details.differing) && Object.keys(v.details.differing).length)
    .map(([tier, v]) => el("div", { class: "state-diff", "data-testid": "state-diff", "data-tier": tier },
      el("div", { class: "note", text: `${tier}: ${Object.keys(v.details.differing).length} part(s) of the final state differ from the gold path's` }),
      Object.entries(v.details.differing).map(([part, d]) => statePart(part, (d || {}).gold, (d || {}).actual))));
  return blocks.length ? [el("h4", { text: "State diff (expected = gold path, actual = after the model's calls)" }), ...blocks] : null;
}

function statePart(part, gold, actual) {
  const leaves = diffValues(gold, actual, part, []);
  const cell = (kind, has, value) => el("td", { class: "kv " + kind }, has ? inlineFold(compact(value)) : el("span", { class: "note", text: "(absent)" }));
  const rows = leaves.slice(0, STATE_ROWS).map((d) => el("tr", { "data-testid": "state-diff-row", "data-path": d.path, "data-kind": d.kind },
    el("td", {}, el("code", { text: d.path })), el("td", { text: d.kind }),
    cell(d.kind === "changed" ? "diff" : d.kind === "missing" ? "missing" : "", d.kind !== "extra", d.gold),
    cell(d.kind === "changed" || d.kind === "extra" ? "diff" : "", d.kind !== "missing", d.actual)));
  return el("div", { class: "state-part", "data-testid": "state-part", "data-part": part },
    el("strong", {}, "part ", el("code", { text: part }), el("span", { class: "note", text: ` · ${leaves.length} difference${leaves.length === 1 ? "" : "s"}` })),
    el("table", { class: "state-table", "data-export": "state-diff-" + String(part).replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 40) }, el("thead", {}, el("tr", {}, ["Where", "What", "Expected (gold)", "Actual"].map((h) => el("th", { text: h })))), el("tbody", {}, rows)),
    leaves.length > STATE_ROWS ? el("div", { class: "note", text: `… ${leaves.length - STATE_ROWS} more differences` }) : null,
    el("details", { class: "state-whole" }, el("summary", { text: "whole values" }),
      el("div", { class: "args" }, el("div", {}, el("div", { class: "note", text: "expected (gold)" }), fold(json(gold))), el("div", {}, el("div", { class: "note", text: "actual" }), fold(json(actual))))));
}
