// The page's data: DATA (the embedded JSON) and the full record behind a case-table row.
const DATA = JSON.parse(document.getElementById("cb-data").textContent);

function loadRecord(runIndex, recordIndex) {
  // A case-table row holds what the table and filters need; the panel asks for the whole record.
  const run = DATA.runs[runIndex];
  const detail = run.details && run.details[recordIndex];
  return Promise.resolve(detail || run.records[recordIndex]);
}
