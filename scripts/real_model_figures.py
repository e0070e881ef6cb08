"""The figures of a real-model run (``scripts/real-model.sh``), as Markdown tables.

Reads the folder the script wrote: ``setup.tsv`` (machine, server, flags), ``steps.tsv`` (one line per
step: status, wall seconds, run folder, command) and the run folders themselves (``run.json``,
``summary.json``, ``records.jsonl``, the layout of ``callbench.harness.runfolder``). A plain folder of
run folders, or a single run folder, works too (wall time then comes from the records' timestamps).

    python scripts/real_model_figures.py runs/real-model-20261204T180000Z

Prints: the setup, the steps with their wall time, strict accuracy per tier per suite per run, error
records grouped by cause, the serving findings (answers whose text looks like a call the server failed
to parse, finish reasons, HTTP statuses in error records, ``doctor`` failures) and the most frequent
failure reasons. Only the standard library is used, so any Python 3.11 runs it. Bad input is one line
on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVING_REASON = "serving_parse_suspected"
"""The reason code native mode gives an answer whose text holds a call in a known serialisation."""

# finish reasons worth a line: anything but a normal stop or a call
_NOTABLE_FINISH = {"length", "format_error", "context_overflow", "content_filter", "error"}
_HTTP_STATUS = re.compile(r"\b(?:HTTP|status(?: code)?)[ :]*([1-5]\d\d)\b", re.IGNORECASE)


class FiguresError(Exception):
    """Bad input: printed as one line."""


@dataclass
class Run:
    """One run folder, read."""

    name: str
    path: Path
    header: dict[str, Any]
    summary: dict[str, Any] | None
    records: list[dict[str, Any]]
    torn_lines: int = 0
    step: dict[str, str] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """``native``, ``prompt`` or ``agent`` (how the model met the tools)."""
        if self.header.get("harness_mode") == "agent-under-test" or (self.header.get("options") or {}).get(
            "config", {}
        ).get("agent"):
            return "agent"
        return "prompt" if str(self.header.get("model", "")).startswith("prompt:") else "native"


def read_tsv(path: Path) -> list[dict[str, str]]:
    """A tab-separated file with a header line, as dicts; an absent file is no rows."""
    if not path.is_file():
        return []
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines:
        return []
    head = lines[0].split("\t")
    return [dict(zip(head, line.split("\t"), strict=False)) for line in lines[1:]]


def read_setup(path: Path) -> list[tuple[str, str]]:
    """``setup.tsv``: ``key<TAB>value`` lines (no header)."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        key, sep, value = line.partition("\t")
        if sep:
            out.append((key, value))
    return out


def load_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``, or one line naming the file and what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise FiguresError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise FiguresError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def load_records(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The records of ``records.jsonl`` and the number of lines that are not records (a torn tail)."""
    if not path.is_file():
        return [], 0
    records, torn = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            torn += 1  # a run killed mid-write leaves at most a cut last line; callbench skips it too
            continue
        if isinstance(record, dict):
            records.append(record)
        else:
            torn += 1
    return records, torn


def load_run(path: Path, name: str) -> Run:
    """One run folder (``run.json`` required; summary and records when present)."""
    header = load_json(path / "run.json")
    summary_path = path / "summary.json"
    summary = load_json(summary_path) if summary_path.is_file() else None
    records, torn = load_records(path / "records.jsonl")
    return Run(name=name, path=path, header=header, summary=summary, records=records, torn_lines=torn)


def find_runs(root: Path, steps: list[dict[str, str]]) -> list[Run]:
    """The run folders under ``root``, in step order (then by name), or ``root`` itself."""
    if (root / "run.json").is_file():
        return [load_run(root, root.name)]
    by_folder = {Path(s["folder"]).name: s for s in steps if s.get("folder")}
    order = {Path(s["folder"]).name: i for i, s in enumerate(steps) if s.get("folder")}
    found = sorted(
        (p for p in root.iterdir() if (p / "run.json").is_file()),
        key=lambda p: (order.get(p.name, len(order)), p.name),
    )
    runs = []
    for path in found:
        run = load_run(path, path.name)
        run.step = by_folder.get(path.name, {})
        runs.append(run)
    return runs


# --- figures --------------------------------------------------------------------------------------


def table(head: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table (``(none)`` under the header when there are no rows)."""
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    if not rows:
        rows = [["(none)"] + [""] * (len(head) - 1)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def pct(passed: int, n: int) -> str:
    return f"{100 * passed / n:.1f}%" if n else "—"


def wall_seconds(run: Run) -> float | None:
    """The step's measured wall time, else first case start to last case end from the records."""
    seconds = run.step.get("seconds")
    if seconds and seconds.isdigit():
        return float(seconds)
    spans = [
        (float(r["started_at"]), float(r["started_at"]) + float(r.get("duration_ms") or 0) / 1000)
        for r in run.records
        if isinstance(r.get("started_at"), int | float)
    ]
    if not spans:
        return None
    return max(end for _, end in spans) - min(start for start, _ in spans)


def fmt_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


def errors_by_suite(run: Run) -> Counter[str]:
    return Counter(r.get("suite", "?") for r in run.records if r.get("status") == "error")


SERVING_LIMITS = ("context_overflow", "output_truncated")
"""Reason codes of cases cut by the serving stack's limits (counted apart, beside plain accuracy)."""


def limited(run: Run, tier: str, suite: str | None, category: str | None = None) -> tuple[int, int]:
    """(cases cut by a serving limit, of them passed) among ``tier``'s completed verdicts."""
    cut = cut_passed = 0
    for record in run.records:
        if record.get("status") == "error" or (suite and record.get("suite") != suite):
            continue
        if category and record.get("category") != category:
            continue
        verdict = (record.get("verdicts") or {}).get(tier) or {}
        if cut_by_serving_limit(record):
            cut += 1
            cut_passed += bool(verdict.get("passed"))
    return cut, cut_passed


def cut_by_serving_limit(record: dict[str, Any]) -> bool:
    """Whether a serving limit cut the case: any tier's verdict names one, or the trace stopped on one.
    Per case, not per tier (as callbench's summary counts): a tier that scores the final state
    (state-match) gives no such reason for a conversation refused in round 1, yet it was cut too."""
    trace = record.get("trace") or {}
    if trace.get("stop_reason") in SERVING_LIMITS:
        return True
    for verdict in (record.get("verdicts") or {}).values():
        reasons = (verdict.get("reasons") or []) if isinstance(verdict, dict) else []
        if {r.get("code") if isinstance(r, dict) else r for r in reasons} & set(SERVING_LIMITS):
            return True
    return False


def _accuracy_row(run: Run, label: str, tier: str, cell: dict[str, Any], cut: tuple[int, int]) -> list[Any]:
    n, passed = int(cell.get("n", 0)), int(cell.get("passed", 0))
    rest_n, rest_passed = n - cut[0], passed - cut[1]
    without = f"{rest_passed} / {rest_n} ({pct(rest_passed, rest_n)})" if cut[0] else "—"
    return [run.name, run.kind, label, tier, f"{passed} / {n}", pct(passed, n), cut[0], without]


def accuracy_rows(run: Run) -> list[list[Any]]:
    """One row per tier and suite: passed / n over completed cases; the cases a serving limit cut
    (context overflow, output truncated) and the accuracy without them beside; error records apart."""
    if run.summary is None:
        return [[run.name, run.kind, "—", "no summary.json (the run did not finish)", "", "", "", "", ""]]
    errors = errors_by_suite(run)
    rows = []
    for tier, figures in (run.summary.get("tiers") or {}).items():
        by_suite = figures.get("by_suite") or {}
        if not by_suite:
            by_suite = {"(all)": figures}
        for suite, cell in by_suite.items():
            row = _accuracy_row(
                run, suite, tier, cell, limited(run, tier, None if suite == "(all)" else suite)
            )
            rows.append([*row, errors.get(suite, 0)])
        if set(by_suite) == {"bfcl"}:
            # BFCL's categories are its unit: a serving fault shows as one category at 0 (parallel calls)
            for category, cell in sorted((figures.get("by_category") or {}).items()):
                cut = limited(run, tier, "bfcl", category)
                rows.append([*_accuracy_row(run, f"bfcl · {category}", tier, cell, cut), ""])
    return rows


def error_rows(run: Run) -> list[list[Any]]:
    """Error records grouped by suite, type and message (with the number of cases and one example)."""
    groups: Counter[tuple[str, str, str]] = Counter()
    example: dict[tuple[str, str, str], str] = {}
    for record in run.records:
        if record.get("status") != "error":
            continue
        error = record.get("error") or {}
        message = " ".join(str(error.get("message", "")).split())
        key = (record.get("suite", "?"), str(error.get("type", "?")), _shorten(message, 180))
        groups[key] += 1
        example.setdefault(key, str(record.get("case_id", "?")))
    return [
        [run.name, suite, kind, count, example[(suite, kind, msg)], msg]
        for (suite, kind, msg), count in groups.most_common()
    ]


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Serving:
    """What a run says about the server, apart from the model."""

    rounds: int = 0
    finish: Counter[str] = field(default_factory=Counter)
    text_call_formats: Counter[str] = field(default_factory=Counter)
    suspected_cases: int = 0
    recovered_calls: int = 0
    http_statuses: Counter[str] = field(default_factory=Counter)
    qc_flags: Counter[str] = field(default_factory=Counter)
    no_call_cases: int = 0
    calls: int = 0
    bad_json_calls: int = 0
    unknown_tool_calls: int = 0
    schema_invalid_calls: int = 0


def serving(run: Run) -> Serving:
    """Count the serving findings of one run from its records and summary."""
    out = Serving()
    for record in run.records:
        if record.get("status") == "error":
            message = str((record.get("error") or {}).get("message", ""))
            out.http_statuses.update(_HTTP_STATUS.findall(message))
            continue
        trace = record.get("trace") or {}
        for round_ in trace.get("rounds") or []:
            out.rounds += 1
            if round_.get("finish_reason"):
                out.finish[str(round_["finish_reason"])] += 1
            if round_.get("text_call_format"):
                out.text_call_formats[str(round_["text_call_format"])] += 1
            out.recovered_calls += int(round_.get("recovered_calls") or 0)
        codes = {
            reason.get("code") if isinstance(reason, dict) else reason
            for verdict in (record.get("verdicts") or {}).values()
            for reason in verdict.get("reasons") or []
        }
        out.suspected_cases += SERVING_REASON in codes
        calls = trace.get("calls") or []
        out.calls += len(calls)
        out.no_call_cases += not calls
        out.bad_json_calls += sum(1 for c in calls if c.get("parse_error"))
        out.unknown_tool_calls += sum(1 for c in calls if c.get("known_tool") is False)
        out.schema_invalid_calls += sum(1 for c in calls if c.get("schema_valid") is False)
    for flag in (run.summary or {}).get("qc_flags") or []:
        out.qc_flags[str(flag.get("flag", "?")).split(":")[0]] += 1
    return out


def serving_rows(run: Run) -> list[list[Any]]:
    s = serving(run)
    completed = sum(1 for r in run.records if r.get("status") != "error")
    finish = ", ".join(f"{k} {v}" for k, v in sorted(s.finish.items())) or "—"
    notable = ", ".join(f"{k} {v}" for k, v in sorted(s.finish.items()) if k in _NOTABLE_FINISH) or "none"
    formats = ", ".join(f"{k} {v}" for k, v in s.text_call_formats.most_common()) or "none"
    http = ", ".join(f"{k} ×{v}" for k, v in s.http_statuses.most_common()) or "none"
    # the run's own tallies: summary.json's serving counts and request outcomes (retries, fatal stops)
    tallies = {**((run.summary or {}).get("serving") or {}), **((run.summary or {}).get("requests") or {})}
    shown = ", ".join(f"{k} {v}" for k, v in tallies.items() if v and not isinstance(v, dict)) or "—"
    return [
        [
            run.name,
            completed,
            s.rounds,
            finish,
            notable,
            f"{s.suspected_cases} ({formats})",
            s.calls,
            f"{s.no_call_cases} / {completed}",
            f"{s.bad_json_calls} / {s.unknown_tool_calls} / {s.schema_invalid_calls}",
            http,
            shown,
        ]
    ]


def reason_rows(run: Run, top: int = 6) -> list[list[Any]]:
    """The most frequent failure reason codes (each counted once per case)."""
    counts: Counter[str] = Counter()
    for record in run.records:
        if record.get("status") == "error":
            continue
        codes = {
            str(reason.get("code") if isinstance(reason, dict) else reason)
            for verdict in (record.get("verdicts") or {}).values()
            for reason in verdict.get("reasons") or []
        }
        counts.update(codes)
    return [[run.name, ", ".join(f"{code} {n}" for code, n in counts.most_common(top)) or "—"]]


def doctor_lines(root: Path) -> list[str]:
    """``callbench doctor --json``'s checks (``doctor.json``), else the failing lines of its log."""
    report = root / "doctor.json"
    if report.is_file() and report.stat().st_size:
        data = load_json(report)
        checks = [c for c in data.get("checks") or [] if isinstance(c, dict)]
        head = [f"{sum(c.get('status') == s for c in checks)} {s}" for s in ("passed", "failed", "skipped")]
        lines = [f"{len(checks)} checks: {', '.join(head)}; {data.get('requests', '?')} request(s)"]
        return lines + [_check_line(c) for c in checks]
    log = root / "doctor.log"
    if not log.is_file():
        return []
    text = log.read_text(encoding="utf-8", errors="replace").splitlines()
    return [" ".join(line.split()) for line in text if re.search(r"\b(fail|FAIL|✗|error)", line)]


def _check_line(check: dict[str, Any]) -> str:
    status = str(check.get("status", "?"))
    line = f"{check.get('name', check.get('id', '?'))}: {status.upper() if status == 'failed' else status}"
    line += f" — {_shorten(' '.join(str(check.get('evidence', '')).split()), 220)}"
    if status == "failed" and check.get("corrupts"):
        line += f" (would corrupt: {_shorten(str(check['corrupts']), 160)})"
    return line


def render(root: Path) -> str:
    """Every section, as Markdown."""
    if not root.exists():
        raise FiguresError(f"{root}: no such folder")
    if not root.is_dir():
        raise FiguresError(
            f"{root}: not a folder (give the folder scripts/real-model.sh wrote, or a run folder)"
        )
    steps = read_tsv(root / "steps.tsv")
    runs = find_runs(root, steps)
    if not runs and not steps:
        raise FiguresError(f"{root}: no run folders (no */run.json) and no steps.tsv")
    out: list[str] = [f"# Real-model figures: {root.name}", ""]
    setup = read_setup(root / "setup.tsv")
    if setup:
        out += ["## Setup", "", table(["", ""], [[k, v] for k, v in setup]), ""]
    if steps:
        by_name = {r.name: r for r in runs}
        rows = []
        for s in steps:
            run = by_name.get(Path(s.get("folder") or "-").name)
            n = len(run.records) if run else "—"
            errors = sum(r.get("status") == "error" for r in run.records) if run else "—"
            status = {"0": "ok"}.get(s.get("status", ""), s.get("status", ""))
            secs = s.get("seconds", "")
            rows.append(
                [s.get("step", ""), status, fmt_seconds(float(secs)) if secs.isdigit() else "—", n, errors]
            )
        out += [
            "## Steps (wall time includes callbench's start-up)",
            "",
            table(["step", "exit status", "wall time", "records", "error records"], rows),
            "",
        ]
        skipped = [s for s in steps if s.get("status") == "skipped"]
        out += [f"- {s['step']} skipped: {s.get('command', '')}" for s in skipped]
        if skipped:
            out.append("")
    if runs:
        out += [
            "## Strict accuracy per tier (over completed cases; error records apart)",
            "",
            table(
                [
                    "run",
                    "mode",
                    "suite",
                    "tier",
                    "passed",
                    "accuracy",
                    "cut by a serving limit",
                    "accuracy without them",
                    "error records",
                ],
                [row for run in runs for row in accuracy_rows(run)],
            ),
            "",
        ]
        out += [
            "## Error records and their causes",
            "",
            table(
                ["run", "suite", "type", "cases", "e.g. case", "message"],
                [row for run in runs for row in error_rows(run)],
            ),
            "",
        ]
        out += [
            "## Serving findings",
            "",
            table(
                [
                    "run",
                    "completed cases",
                    "rounds",
                    "finish reasons",
                    "notable",
                    "serving_parse_suspected cases (text-call formats)",
                    "calls",
                    "cases without a call",
                    "calls: bad JSON / unknown tool / schema-invalid",
                    "HTTP statuses in errors",
                    "summary.json serving and requests",
                ],
                [row for run in runs for row in serving_rows(run)],
            ),
            "",
        ]
        out += [
            "## Most frequent failure reasons (cases, any tier)",
            "",
            table(["run", "reason codes"], [row for run in runs for row in reason_rows(run)]),
            "",
        ]
        wall = [
            [
                run.name,
                fmt_seconds(wall_seconds(run)),
                len(run.records),
                fmt_seconds(w / len(run.records)) if (w := wall_seconds(run)) and run.records else "—",
            ]
            for run in runs
        ]
        out += ["## Wall time per run", "", table(["run", "wall time", "records", "per record"], wall), ""]
        torn = [
            f"- {run.name}: {run.torn_lines} unreadable line(s) in records.jsonl skipped"
            for run in runs
            if run.torn_lines
        ]
        out += torn + ([""] if torn else [])
    doctor = doctor_lines(root)
    if doctor or (root / "doctor.log").is_file() or (root / "doctor.json").is_file():
        out += ["## doctor", ""] + [f"- {line}" for line in doctor or ["no failing check"]] + [""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Print the figures of the folder given on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the folder scripts/real-model.sh wrote (or a run folder)")
    args = parser.parse_args(argv)
    try:
        print(render(args.folder))
    except FiguresError as exc:
        print(f"real_model_figures: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"real_model_figures: cannot read {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
