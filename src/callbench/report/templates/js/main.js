// Start-up: draw every section, fill the case table, then follow the run when served live.
function renderMeta() {
  document.getElementById("meta").textContent = DATA.runs.map((r) => `${r.label}: ${r.records.length} records`).join(" · ") + ` · generated ${DATA.generated_at}`;
}

function init() {
  onRender(renderMeta);
  renderSections();
  applyFilters();
  if (DATA.live) poll();
}
init();
