// Human reviews (callbench review): reviewed accuracy beside automatic accuracy, per run and scorer,
// with the overturns per reason code and the suspects the reviews point at. Never instead of the
// automatic figures, which stay in the grid above.
function renderReviews() {
  const box = document.getElementById("slot-reviews");
  const runs = DATA.reviews || [];
  if (!runs.length) { box.replaceChildren(); return; }
  const reasons = (counts) => Object.entries(counts || {}).map(([code, n]) => `${code} ${n}`).join("; ");
  const sections = runs.map((rv) => {
    const rows = rv.rows.map((r) => el("tr", { "data-testid": "reviewed-row", "data-run": rv.run, "data-tier": r.tier },
      el("td", { text: r.tier }), el("td", { class: "num", text: r.n }),
      el("td", { class: "num auto", "data-value": r.automatic_accuracy, text: pct(r.automatic_accuracy) }),
      el("td", { class: "num reviewed", "data-value": r.reviewed_accuracy, text: pct(r.reviewed_accuracy) }),
      el("td", { class: "num", text: r.n_reviewed }),
      el("td", { class: "num overturned", text: `${r.n_overturned} (${r.overturned_to_pass}/${r.overturned_to_fail})` }),
      el("td", { class: "num", text: r.n_disputed }), el("td", { class: "num", text: r.n_awaiting }),
      el("td", { class: "num", text: r.n_stale }), el("td", { class: "reasons", text: reasons(r.overturns_by_reason) })));
    const t = table(["Scorer", "n", "Automatic", "Reviewed", "Settled", "Overturned (→pass/→fail)", "Disputed", "Awaiting", "Stale", "Overturns by reason"], rows);
    t.setAttribute("data-export", `reviewed-accuracy-${rv.run}`);
    const suspects = rv.suspects.length ? el("ul", { class: "suspects" }, rv.suspects.map((s) => el("li", { "data-testid": "suspect" }, s.text, " ",
      el("button", { class: "pill case-pick", type: "button", onclick: () => selectCases({ label: s.text, keys: s.keys.map((k) => [rv.run, k, null]) }) }, `show ${s.keys.length}`)))) : null;
    return el("div", { class: "reviewed-run" }, el("h3", { text: rv.label }), t, suspects ? [el("h4", { text: "Suspects" }), suspects] : null);
  });
  box.replaceChildren(el("section", {}, el("h2", { text: "Human review" }),
    el("p", { class: "note", text: "Reviewed accuracy puts a settled reviewer decision (consensus, or every reviewer agreeing) in place of the automatic verdict; disputed, unsure and unreviewed verdicts keep theirs. The automatic figures above are never replaced." }),
    sections));
}
onRender(renderReviews);
