// ---- case panel ---------------------------------------------------------------------------
function badgeFor(call) {
  if (call.parse_error || call.schema_valid === false || call.known_tool === false || call.execution === "error" || call.execution === "rejected") return "bad";
  if (call.execution === "ok") return "ok";
  return "skip"; // valid but not executed (contract tier) or skipped
}

function panel(r) {
  const t = r.trace || { rounds: [], calls: [] };
  const byId = new Map((t.calls || []).map((c) => [c.call_id, c]));
  const rounds = (t.rounds || []).map((rd) => {
    const calls = (rd.call_ids || []).map((id) => byId.get(id)).filter(Boolean);
    const badges = calls.length ? calls.map((c) => el("span", { class: "badge " + badgeFor(c), "data-testid": "call-badge", title: c.error || (c.schema_errors || []).join("; ") || c.execution }, `${c.tool} · ${c.parse_error ? "unparsable" : c.schema_valid === false ? "schema-invalid" : c.execution}`))
      : [el("span", { class: "badge warn", "data-testid": "call-badge", text: rd.reconstructed && rd.text ? "no tool call (answer)" : "no tool call" })];
    return el("div", { class: "round" + (calls.length ? "" : " nocall"), "data-testid": "round-card" },
      el("strong", { text: `Round ${rd.index}` }), " ", el("span", { class: "when", text: when(rd.started_at) }),
      rd.reconstructed ? el("div", { class: "note", "data-testid": "reconstructed", text: "reconstructed from call timing" }) : null,
      rd.latency_ms != null ? el("span", { class: "when", text: ` · ${Math.round(rd.latency_ms)} ms` }) : null,
      el("div", {}, badges), rd.nudge ? el("div", { class: "note", text: `nudge: ${rd.nudge}` }) : null,
      rd.text ? el("pre", { text: rd.text }) : null);
  });
  const verdicts = Object.entries(r.verdicts || {}).map(([tier, v]) => el("div", {},
    el("span", { class: "pill " + (v.passed ? "pass" : "fail"), text: `${tier}: ${v.passed ? "pass" : "fail"}` }),
    ` partial ${fmt(v.partial)} (diagnostic) — `, el("span", { text: v.rationale || "" }),
    el("ul", {}, (v.reasons || []).map((x) => el("li", {}, el("code", { text: x.code }), " ", x.message || "")))));
  return el("div", { class: "panel", "data-testid": "case-panel" },
    r.status === "error" ? el("div", { class: "bad-text", text: `error: ${errText(r.error)}` }) : null,
    el("h4", { text: "Instruction" }), el("pre", { text: r.instruction || "" }),
    el("h4", { text: "Offered tools" }), el("div", {}, (r.offered_tools || []).map((x) => el("span", { class: "pill", text: x }))),
    t.agent ? agentSection(t.agent) : null,
    t.agent || (t.calls || []).some((c) => typeof c.started_at === "number") ? [el("h4", { text: "Call timeline" }), callTimeline(t.calls || [])] : null,
    el("h4", { text: (t.rounds || []).some((rd) => rd.reconstructed) ? "Rounds (reconstructed from call timing, display only)" : "Rounds" }), el("div", { class: "rounds" }, rounds),
    el("h4", { text: "Expected vs actual arguments" }), argumentDiff(expectedSteps(r), t.calls || [], matchesOf(r)),
    el("h4", { text: "Final text" }), el("pre", { "data-testid": "final-text", text: t.final_text || "" }),
    el("h4", { text: "Evaluation" }), verdicts,
    el("h4", { text: "Timing" }), el("div", { text: `case ${fmt(r.duration_ms, 0)} ms · stop: ${t.stop_reason || "–"} · ` + (t.calls || []).map((c) => `${c.tool} ${fmt(c.duration_ms, 1)} ms`).join(", ") }));
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
    a.stderr_tail ? [el("div", { class: "note", text: "stderr (tail)" }), el("pre", { class: "stderr", "data-testid": "agent-stderr", text: a.stderr_tail })] : null);
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
    el("td", {}, el("span", { class: "badge " + badgeFor(c), text: c.parse_error ? "unparsable" : c.known_tool === false ? "unknown tool" : c.schema_valid === false ? `schema-invalid · ${c.execution}` : c.execution || "–" })),
    el("td", { class: "duration", text: `${fmt(c.duration_ms, 1)} ms` })));
  return el("div", { class: "timeline", "data-testid": "call-timeline" }, table(["#", "Offset", "Round", "Tool", "Execution", "Duration"], rows));
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
  for (const v of Object.values(r.verdicts || {})) {
    const m = v.details && v.details.matches;
    if (Array.isArray(m)) return new Map(m.map((x) => [x.expected_index, x.call_index]));
  }
  return null;
}

// An approximation of the scorer's argument DSL, for highlighting only: the verdict is authoritative.
const hasKey = (obj, k) => obj !== null && typeof obj === "object" && Object.prototype.hasOwnProperty.call(obj, k);
const isPlain = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function keyState(exp, act, k) {
  const e = hasKey(exp, k), a = hasKey(act, k);
  if (!e) return "diff"; // an argument the step does not expect
  if (!a) return isPlain(exp[k]) && hasKey(exp[k], "$default") ? "" : "missing";
  const verdict = matchValue(exp[k], act[k]);
  return verdict === null ? "ref" : verdict ? "" : "diff";
}

function matchValue(e, a) {
  if (isPlain(e)) {
    if (hasKey(e, "$any")) return a !== null && a !== undefined && a !== "";
    if (hasKey(e, "$default")) return matchValue(e.$default, a);
    if (hasKey(e, "$ref")) return null; // resolved against earlier results by the scorer
    if (hasKey(e, "$pattern")) { try { return typeof a === "string" && new RegExp(String(e.$pattern)).test(a); } catch (err) { return null; } }
    if (hasKey(e, "$one_of") && Object.keys(e).length === 1) {
      const results = (e.$one_of || []).map((alt) => matchValue(alt, a));
      return results.includes(true) ? true : results.includes(null) ? null : false;
    }
    if (!isPlain(a)) return false;
    const results = uniq(Object.keys(e).concat(Object.keys(a))).map((k) => keyState(e, a, k));
    return results.every((r) => r === "") ? true : results.some((r) => r === "diff" || r === "missing") ? false : null;
  }
  if (Array.isArray(e)) {
    if (!Array.isArray(a) || a.length !== e.length) return false;
    const results = e.map((x, i) => matchValue(x, a[i]));
    return results.includes(false) ? false : results.includes(null) ? null : true;
  }
  return json(e) === json(a);
}

function argumentDiff(expected, calls, matches) {
  const used = new Set();
  const blocks = expected.map((step, i) => {
    let idx = matches ? (matches.has(i) ? matches.get(i) : -1) : calls.findIndex((c, j) => !used.has(j) && step.tools.includes(c.tool));
    if (idx < 0 && !matches) idx = calls.findIndex((c, j) => !used.has(j));
    if (idx >= 0) used.add(idx);
    const call = idx >= 0 ? calls[idx] : null;
    if (step.arguments === null) {
      return el("div", { class: "args", "data-testid": "arg-diff" }, el("div", {}, el("strong", { text: `expected ${i + 1}: ${step.tool}` }), el("div", { class: "note", text: "(expected arguments not recorded)" })),
        el("div", {}, el("strong", { text: call ? `actual: ${call.tool}` : "actual: (no matching call)" }), call ? el("pre", { text: json(call.arguments ?? call.arguments_raw) }) : null));
    }
    const exp = step.arguments || {}, act = (call && call.arguments) || {};
    const keys = uniq(Object.keys(exp).concat(Object.keys(act)));
    const state = new Map(keys.map((k) => [k, keyState(exp, act, k)]));
    const line = (obj, k) => {
      const has = hasKey(obj, k);
      return el("div", { class: "kv " + state.get(k), "data-state": state.get(k), text: has ? `${k}: ${json(obj[k])}` : `${k}: (absent)` });
    };
    return el("div", { class: "args", "data-testid": "arg-diff" },
      el("div", {}, el("strong", { text: `expected ${i + 1}: ${step.tool}` }), keys.map((k) => line(exp, k))),
      el("div", {}, el("strong", { text: call ? `actual: ${call.tool}` : "actual: (no call)" }),
        call && call.parse_error ? el("pre", { text: `unparsable arguments: ${call.arguments_raw}` }) : keys.map((k) => line(act, k))));
  });
  const others = calls.map((c, j) => [c, j]).filter(([, j]) => !used.has(j));
  const extra = others.length ? el("div", { "data-testid": "unmatched-calls" }, el("strong", { text: "calls not matched to an expected step" }),
    others.map(([c, j]) => el("div", { class: "kv diff", text: `call ${j + 1} ${c.tool}: ${c.parse_error ? c.arguments_raw : json(c.arguments)}` }))) : null;
  return el("div", {}, blocks.length ? blocks : el("div", { class: "note", text: "no expected steps recorded" }), extra);
}

