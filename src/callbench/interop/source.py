"""A stored run read for export: its header, its latest records and its summary.

Every exporter reads the run folder here, so the refusals are the same for each format and each is
one line:

* a folder that is not a run, a ``run.json`` or a middle line of ``records.jsonl`` that does not
  read: the run folder reader's own line (file, line, field);
* a header or a record written by a newer callbench (a schema version this one does not know):
  refused, naming the file, the line and both versions; nothing is written;
* a torn last line (a run killed mid-write): left out with one warning naming the file and line;
  the file is not touched (the bytes stay for ``callbench run --resume``);
* records of an older schema version: read through the typed reader (which fills the fields added
  since) and exported; :attr:`ExportSource.older_records` counts them for the command's note.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callbench.errors import UserError
from callbench.harness.runfolder import (
    RECORDS_FILE,
    RUN_FILE,
    TornRecordWarning,
    read_header,
    read_run,
)
from callbench.types.records import SCHEMA_VERSION, CaseRecord, RunHeader
from callbench.types.summary import Statistics, Summary


@dataclass
class ExportSource:
    """One run as the exporters read it."""

    path: Path
    header: RunHeader
    records: list[CaseRecord]
    """The latest record of each (case, trial), in key then trial order."""
    summary: Summary
    """``summary.json`` when the run wrote one, else computed from the records (nothing is written)."""
    torn: list[str] = field(default_factory=list)
    """The warnings about torn last lines left out (one line each; also issued as warnings)."""
    older_records: int = 0
    """Records of an older record schema version, exported as the typed reader migrated them."""

    @property
    def statistics(self) -> Statistics:
        """The summary's intervals and strata (empty for a summary written before they were kept)."""
        return self.summary.statistics or Statistics()

    @property
    def suites(self) -> list[str]:
        """The run's suite names, in the header's order."""
        return [s.name for s in self.header.suites] or sorted({r.suite for r in self.records})

    def diagnostic(self, scorer: str) -> bool:
        """Whether ``scorer``'s figures are diagnostic in this run (never a pass criterion)."""
        figures = self.summary.tiers.get(scorer)
        return scorer in self.header.diagnostic_scorers or bool(figures is not None and figures.diagnostic)

    def scorers(self) -> list[str]:
        """Every scorer with a verdict in the run: the three strict tiers first, in their order, then
        the others by name (the order the exports list them in)."""
        from callbench.types.verdict import TIERS

        names = {name for record in self.records for name in record.verdicts}
        names |= set(self.summary.tiers)
        strict = [t for t in TIERS if t in names]
        return strict + sorted(names - set(strict))


def read_for_export(run_dir: str | Path) -> ExportSource:
    """Read the run in ``run_dir`` for an export.

    Raises:
        UserError: not a run folder, an unreadable header or record, or a schema version newer than
            this callbench reads (one line each; see the module's docstring).
    """
    path = Path(run_dir)
    if not path.is_dir():
        raise UserError(f"no such run folder: {path}")
    _check_header_version(path)
    _check_record_versions(path)
    read_header(path)  # the header's own one-line errors before the records'
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", TornRecordWarning)
        folder = read_run(path)
    torn = [str(w.message) for w in seen if issubclass(w.category, TornRecordWarning)]
    for w in seen:  # shown as they came (the CLI prints a torn line's warning as one line)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    assert folder.header is not None
    records = sorted(folder.records, key=lambda r: (r.key, r.trial))
    summary = folder.summary if folder.summary is not None else _computed_summary(path, folder.header)
    older = sum(1 for r in records if r.schema_version < SCHEMA_VERSION)
    return ExportSource(path, folder.header, records, summary, torn, older)


def _computed_summary(path: Path, header: RunHeader) -> Summary:
    from callbench.harness.summary_stream import stream_summary

    return stream_summary(path, header)


def _check_header_version(path: Path) -> None:
    file = path / RUN_FILE
    if not file.is_file():
        return  # read_header says it
    try:
        version = json.loads(file.read_text(encoding="utf-8")).get("schema_version")
    except (json.JSONDecodeError, AttributeError, UnicodeDecodeError):
        return  # read_header says what is wrong with it
    _check_version(version, f"{file}", "run header")


def _check_record_versions(path: Path) -> None:
    """Refuse a run holding a record of a newer schema: exporting it through this reader would drop
    the fields it does not know. Only the version field is looked at (a cheap scan)."""
    file = path / RECORDS_FILE
    if not file.is_file():
        return
    marker = b'"schema_version":'
    with file.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            at = line.find(marker, 0, 200)
            if at < 0:
                continue
            digits = line[at + len(marker) : at + len(marker) + 12].lstrip().split(b",")[0]
            try:
                version = int(digits)
            except ValueError:
                continue
            _check_version(version, f"{file}:{number}", "record")


def _check_version(version: Any, where: str, what: str) -> None:
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise UserError(
            f"{where}: {what} schema version {version} is newer than this callbench reads "
            f"({SCHEMA_VERSION}); export it with the callbench that wrote it (nothing was written)"
        )


def json_text(value: Any) -> str:
    """A tool result or argument value as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


BUILTIN_AGENTS = frozenset({"oracle", "refuse", "noisy", "baseline", "planner"})
"""callbench's built-in agents (``noisy:SEED`` included): no model behind them."""


def split_model(model: str) -> tuple[str, str]:
    """``(provider, model)`` of a model string ``provider:model[@url]`` (the URL dropped) or, as an
    imported run names it, ``provider/model``; a built-in agent (``oracle``, ``noisy:3``...) has
    provider ``callbench``."""
    spec = model.split("@", 1)[0]
    provider, colon, name = spec.partition(":")
    if not colon and "/" in spec:  # inspect's form (an imported run): provider/model
        provider, _, name = spec.partition("/")
        return provider, name
    if not colon or provider in BUILTIN_AGENTS:
        return "callbench", spec
    return provider, name
