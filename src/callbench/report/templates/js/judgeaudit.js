// Judge audit: where a judge's verdict and a deterministic verdict exist for the same cases (a
// ComplexEval response judge vs call-level success, a scorer's details.judge_pair, human reviewers vs
// each tier), how far they agree. Computed in Python (review/judge_audit.py) and shipped as
// DATA.judge_audit; drawn only when a run has an audit. Flags come first; each disagreement count is
// a button that shows exactly those cases in the case table (selectCases, cases.js).
function jaKappa(k) {
  if (!k || k.estimate === null || k.estimate === undefined) return `undefined: ${k ? k.reason : "no verdicts"}`;
  return `${fmt(k.estimate, 2)} [${fmt(k.low, 2)}, ${fmt(k.high, 2)}] (${k.method})`;
}

function jaCounts(counts) {
  return Object.entries(counts || {}).map(([why, n]) => `${why} ${n}`).join(", ");
}

function jaPick(ri, label, cases, kind, text) {
  // A count that selects its cases; a plain number when there are none.
  if (!cases.length) return el("span", { text });
  return el("button", { class: "pill case-pick", type: "button", "data-testid": "ja-pick", "data-kind": kind, "data-records": cases.length, text,
    onclick: () => selectCases({ label, keys: cases.map((c) => [ri, c.key, c.trial]) }) });
}

function jaAudit(ri, runLabel, a) {
  const title = `${a.source} (${a.judge}) vs ${a.strict}`;
  const where = `${runLabel} · ${title}`;
  const flags = a.flags.length
    ? el("ul", { class: "ja-flags" }, a.flags.map((f) => el("li", { class: "ja-flag", "data-testid": "ja-flag", "data-code": f.code }, el("strong", { text: `⚠ ${f.code}: ` }), f.message)))
    : el("p", { class: "note", "data-testid": "ja-no-flags", text: "Flags: none." });
  const unparsed = a.n_unparsed ? `${a.n_unparsed} (${pct(a.unparsed_share)}; ${jaCounts(a.unparsed)})` : "0";
  const notJudged = a.n_not_judged ? `${a.n_not_judged} (${jaCounts(a.not_judged)})` : "0";
  const k = a.kappa || {};
  const figures = table(["n", "Cohen's κ [95% CI]", "Observed agreement", "Judge pass", "Strict pass", "Not parsed (left out)", "Not judged (left out)"], [
    el("tr", {},
      el("td", { class: "num", "data-testid": "ja-n", text: a.n }),
      el("td", { class: "num", "data-testid": "ja-kappa", "data-value": k.estimate ?? "", "data-low": k.low ?? "", "data-high": k.high ?? "", text: jaKappa(a.kappa) }),
      el("td", { class: "num", text: pct(a.observed_agreement) }),
      el("td", { class: "num", text: pct(a.judge_pass_rate) }),
      el("td", { class: "num", text: pct(a.strict_pass_rate) }),
      el("td", { class: "num", "data-testid": "ja-unparsed", text: unparsed }),
      el("td", { class: "num", text: notJudged }))]);
  figures.setAttribute("data-export", bdExportName("judge-audit", runLabel, a.source, a.strict));
  const [[bothPass, judgeOnly], [strictOnly, bothFail]] = a.confusion.table;
  const dis = a.disagreements;
  const confusion = table(["judge \\ strict", "strict pass", "strict fail"], [
    el("tr", {}, el("th", { scope: "row", text: "judge pass" }), el("td", { class: "num", text: bothPass }),
      el("td", { class: "num ja-off" }, jaPick(ri, `${where}: judge pass, strict fail`, dis.judge_pass_strict_fail, "judge_pass_strict_fail", String(judgeOnly)))),
    el("tr", {}, el("th", { scope: "row", text: "judge fail" }),
      el("td", { class: "num ja-off" }, jaPick(ri, `${where}: judge fail, strict pass`, dis.judge_fail_strict_pass, "judge_fail_strict_pass", String(strictOnly))),
      el("td", { class: "num", text: bothFail }))]);
  confusion.setAttribute("data-testid", "ja-confusion");
  confusion.classList.add("ja-confusion");
  const b = a.bias;
  const bias = el("p", { class: "ja-bias", "data-testid": "ja-bias" },
    `Bias: judge pass where the strict verdict fails ${b.judge_pass_strict_fail} (${pct(b.judge_pass_strict_fail_share)} of cases; ${pct(b.judge_pass_of_strict_fails)} of strict fails) · ` +
    `judge fail where the strict verdict passes ${b.judge_fail_strict_pass} (${pct(b.judge_fail_strict_pass_share)} of cases; ${pct(b.judge_fail_of_strict_passes)} of strict passes) · ` +
    `McNemar exact p = ${fmt(b.mcnemar_p, 3)}`);
  const picks = el("p", { class: "ja-picks" }, "Show: ",
    jaPick(ri, `${where}: judge pass, strict fail`, dis.judge_pass_strict_fail, "judge_pass_strict_fail", `${dis.judge_pass_strict_fail.length} judge pass / strict fail`), " ",
    jaPick(ri, `${where}: judge fail, strict pass`, dis.judge_fail_strict_pass, "judge_fail_strict_pass", `${dis.judge_fail_strict_pass.length} judge fail / strict pass`),
    a.unparsed_cases.length ? [" ", jaPick(ri, `${where}: judge reply not parsed`, a.unparsed_cases, "unparsed", `${a.unparsed_cases.length} not parsed`)] : null);
  return el("div", { class: "ja-audit", "data-testid": "ja-audit", "data-run": ri, "data-source": a.source, "data-strict": a.strict },
    el("h4", { text: title }), flags, figures, confusion, bias, picks);
}

function renderJudgeAudit() {
  const box = document.getElementById("slot-judge-audit");
  if (!box) return;
  const runs = DATA.judge_audit || [];
  if (!runs.length) { box.replaceChildren(); return; }
  const sections = runs.map((ra) => el("div", { class: "ja-run" },
    el("h3", { text: ra.label }),
    el("p", { class: "note", text: "Sources: " + ra.sources.map((s) => `${s.looks_for}: ${s.found}`).join(" · ") }),
    ra.audits.map((a) => jaAudit(ra.run, ra.label, a))));
  box.replaceChildren(el("section", { id: "judge-audit", "data-testid": "judge-audit" }, el("h2", { text: "Judge audit" }),
    el("p", { class: "note", text: "A judge's verdicts against a deterministic verdict of the same cases: Cohen's κ with its 95% interval, the confusion table and the judge's bias. Flags come first: a judge that gave one verdict to every case has no κ, and replies that did not parse are left out, never counted as fails. Click a count to list its cases." }),
    sections));
}
onRender(renderJudgeAudit);
