"""An inspect_ai log of a tool-calling task read into a run folder and scored
(``callbench import inspect LOG -o RUN_DIR``).

Each sample becomes the record of one case and trial (the epoch): its assistant messages are the
model rounds (text, reasoning, tool calls), its tool messages the calls' results, user messages after
the first answer the user's turns, its ``model_usage`` the tokens. The calls are checked against the
case's contracts as the loop checks them, then the suite's scorers judge the trace as they judge a run
(``callbench score RUN_DIR`` re-scores it later, like any run).

Which case a sample is comes from the task:

* inspect_evals' ``bfcl``: the sample id is BFCL's entry id, which is the case id of callbench's
  ``bfcl`` suite; the categories come from the samples' ``category_name``. Entries scored from their
  calls alone are imported (the single-turn categories); an entry whose case needs an executor's
  state (multi-turn, memory, web search) is skipped with a warning, since an inspect log does not
  carry what BFCL's multi-turn checker re-executes against.
* a log written by ``callbench export inspect``: the suites it names in ``metadata.callbench``, each
  sample matched by its record key.

Any other task is refused with one line naming the supported ones: a log of another task type is
never read as if it were one of these.
"""

from __future__ import annotations

import asyncio
import json
import platform
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast, get_args

from callbench.errors import CallbenchError, UserError, missing_extra
from callbench.harness.runfolder import RUN_FILE, rewrite_records, write_header, write_summary
from callbench.suites.suite import Suite
from callbench.types.case import Case
from callbench.types.conversation import UserTurn
from callbench.types.messages import Usage
from callbench.types.records import CaseRecord, ErrorInfo, RunHeader, SuiteInfo, pass_counts
from callbench.types.trace import ExecutionStatus, RoundInfo, StopReason, Trace, TraceCall
from callbench.types.version import __version__

HARNESS_MODE = "inspect-log"
"""Harness mode of imported records: the episodes ran in inspect's solver, never pooled with
episodes callbench's loop played."""
SUPPORTED = "inspect_evals' bfcl, and logs written by `callbench export inspect`"
BFCL_TASK = "bfcl"
CALLBENCH_TASK = "callbench/"


@dataclass
class InspectImport:
    """What ``import inspect`` did."""

    run_dir: Path
    task: str
    suites: list[str]
    records: int = 0
    errors: int = 0
    """Error records: samples inspect reports with an error, and scorer failures."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Why samples were skipped -> how many (ids not in the suite, cases needing an executor)."""
    passed: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Scorer -> (passed, scored) over the applicable verdicts."""
    agreement: tuple[int, int] | None = None
    """Samples whose recorded inspect score equals the suite's primary verdict, of those compared."""


# --- reading the log ----------------------------------------------------------------------------


def read_log(path: Path) -> dict[str, Any]:
    """The log as plain JSON: ``eval``, ``status`` and ``samples`` (attachments resolved).

    inspect_ai's own reader is used when it is installed (any format it reads); otherwise the
    ``.eval`` zip or ``.json`` log is read here (a zstd-compressed ``.eval``, inspect's default
    since 2026, then needs the ``inspect`` extra).
    """
    if not path.is_file():
        raise UserError(f"{path}: no such inspect log")
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        return _read_plain(path)
    try:
        # events are not read: the messages hold the episode (events repeat it, and can be large)
        log = read_eval_log(str(path), resolve_attachments=True, exclude_fields={"events", "store"})
    except Exception as exc:  # noqa: BLE001 - any reader failure is the file's: one line
        raise UserError(
            f"{path}: not an inspect log inspect_ai can read ({type(exc).__name__}: {exc})"
        ) from None
    data: dict[str, Any] = log.model_dump(mode="json", exclude={"location", "etag"})
    return data


def _read_plain(path: Path) -> dict[str, Any]:
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UserError(f"{path}: not an inspect log ({exc})") from None
        if not isinstance(data, dict) or "eval" not in data:
            raise UserError(f"{path}: not an inspect log (no 'eval' object)")
        return _resolved(data)
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            head = "header.json" if "header.json" in names else "_journal/start.json"
            if head not in names:
                raise UserError(f"{path}: not an inspect .eval log (no header.json)")
            data = json.loads(archive.read(head))
            data["samples"] = [
                json.loads(archive.read(n))
                for n in dict.fromkeys(names)
                if n.startswith("samples/") and n.endswith(".json")
            ]
    except zipfile.BadZipFile:
        raise UserError(f"{path}: not an inspect .eval log (not a zip file)") from None
    except NotImplementedError:  # zstd members: zipfile needs inspect_ai's zstd support
        raise missing_extra(f"reading {path} (zstd-compressed)", "inspect_ai", "inspect") from None
    return _resolved(data)


ATTACHMENT = "attachment://"


def _resolved(data: dict[str, Any]) -> dict[str, Any]:
    """Replace ``attachment://HASH`` strings in each sample by the sample's attachment."""
    for sample in data.get("samples") or []:
        attachments = sample.get("attachments") or {}
        if attachments:
            for key in ("messages", "input", "output"):
                sample[key] = _swap(sample.get(key), attachments)
    return data


def _swap(value: Any, attachments: dict[str, str]) -> Any:
    if isinstance(value, str) and value.startswith(ATTACHMENT):
        return attachments.get(value[len(ATTACHMENT) :], value)
    if isinstance(value, list):
        return [_swap(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _swap(v, attachments) for k, v in value.items()}
    return value


# --- which suite ----------------------------------------------------------------------------------


@dataclass
class Matched:
    """The suites of a log and the case each sample is."""

    suites: list[Suite]
    specs: list[str]
    suite_options: dict[str, Any]
    tiers: dict[str, list[str]] = field(default_factory=dict)
    """Suite name -> the scorers to judge it with (empty: the suite's defaults)."""
    cases: dict[int, Case] = field(default_factory=dict)
    """Sample position -> its case."""
    skipped: Counter[str] = field(default_factory=Counter)


def task_name(log: dict[str, Any]) -> str:
    return str((log.get("eval") or {}).get("task") or "")


def match_cases(path: Path, log: dict[str, Any]) -> Matched:
    """The suites and cases of the log's samples, or one line refusing a task callbench does not know."""
    task = task_name(log)
    samples = log.get("samples") or []
    meta = ((log.get("eval") or {}).get("metadata") or {}).get("callbench")
    if task.startswith(CALLBENCH_TASK) and isinstance(meta, dict) and meta.get("suites"):
        return _callbench_cases(path, samples, meta)
    if task.rsplit("/", 1)[-1] == BFCL_TASK:
        return _bfcl_cases(path, samples)
    raise UserError(
        f"{path}: task {task or '(none)'!r} is not one callbench can import; supported: {SUPPORTED}"
    )


def _load(spec: str, options: dict[str, Any]) -> Suite:
    from callbench.suites.resolve import load_suite

    return load_suite(spec, **options)


def _callbench_cases(path: Path, samples: list[dict[str, Any]], meta: dict[str, Any]) -> Matched:
    specs = [str(s.get("spec") or s.get("name")) for s in meta["suites"]]
    options = dict((meta.get("options") or {}).get("suite_options") or {})
    suites = [_load(spec, options) for spec in specs]
    by_key = {case.key: case for suite in suites for case in suite.cases}
    one = suites[0] if len(suites) == 1 else None
    recorded = meta.get("scorers")
    table: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    tiers = {s.name: [str(t) for t in table.get(s.name) or []] for s in suites}
    matched = Matched(suites, specs, options, tiers)
    for n, sample in enumerate(samples):
        key = ((sample.get("metadata") or {}).get("callbench") or {}).get("key")
        if key is None and one is not None:
            key = f"{one.name}:{sample.get('id')}"
        case = by_key.get(str(key))
        if case is None:
            matched.skipped[f"not in the suite: {key}"] += 1
        else:
            matched.cases[n] = case
    return matched


def _bfcl_category(sample: dict[str, Any]) -> str:
    category = (sample.get("metadata") or {}).get("category_name")
    if isinstance(category, str) and category:
        return category
    return re.sub(r"_\d+(-\d+)*$", "", str(sample.get("id")))  # BFCL's ids: CATEGORY_N[-M-K]


def _bfcl_cases(path: Path, samples: list[dict[str, Any]]) -> Matched:
    categories = sorted({_bfcl_category(s) for s in samples})
    if not categories:
        raise UserError(f"{path}: the log holds no samples")
    loaded: list[str] = []
    suite: Suite | None = None
    try:
        suite = _load(f"{BFCL_TASK}:" + ",".join(categories), {})
        loaded = categories
    except CallbenchError:  # a category callbench's bfcl does not have: load the others
        for category in categories:
            try:
                _load(f"{BFCL_TASK}:{category}", {"limit": 1})
                loaded.append(category)
            except CallbenchError:
                continue
        if loaded:
            suite = _load(f"{BFCL_TASK}:" + ",".join(loaded), {})
    if suite is None:
        raise UserError(
            f"{path}: none of the log's BFCL categories is one callbench's bfcl suite has "
            f"({', '.join(categories[:10])}); is bfcl-eval installed?"
        )
    spec = f"{BFCL_TASK}:" + ",".join(loaded)
    cases = {case.id: case for case in suite.cases}
    matched = Matched([suite], [spec], {})
    for n, sample in enumerate(samples):
        case = cases.get(str(sample.get("id")))
        if case is None:
            matched.skipped[f"category not in callbench's bfcl: {_bfcl_category(sample)}"] += 1
        elif not _calls_alone(case):
            matched.skipped[f"needs its executor's state ({case.category})"] += 1
        else:
            matched.cases[n] = case
    return matched


def _calls_alone(case: Case) -> bool:
    """A case scored from its calls alone: no executor of its own, every expected step call-only."""
    return case.executor is None and case.user is None and all(step.call_only for step in case.expected)


# --- samples as records ---------------------------------------------------------------------------


def _text(content: Any) -> tuple[str, str | None]:
    """(text, reasoning) of a message's content (a string or a list of content parts)."""
    if isinstance(content, str):
        return content, None
    texts: list[str] = []
    reasoning: list[str] = []
    for part in content or []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            texts.append(str(part.get("text") or ""))
        elif part.get("type") == "reasoning" and not part.get("redacted"):
            reasoning.append(str(part.get("reasoning") or ""))
    return "\n".join(texts), ("\n".join(reasoning) if reasoning else None)


def _unix(value: Any) -> float:
    if not isinstance(value, str) or not value:
        return 0.0
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return 0.0


def _key(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", name)


def tool_name(name: str, offered: list[str]) -> str:
    """The offered tool a called name means: itself, else the one it is a sanitised form of (inspect
    and model APIs replace characters such as ``.`` in function names)."""
    if name in offered:
        return name
    same = [tool for tool in offered if _key(tool) == _key(name)]
    return same[0] if len(same) == 1 else name


def _result(content: str) -> Any:
    text = content.strip()
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return content
    return content


def sample_trace(sample: dict[str, Any], offered: list[str], model: str) -> Trace:
    """The trace of one sample's messages (see the module's docstring)."""
    started = _unix(sample.get("started_at"))
    rounds: list[RoundInfo] = []
    calls: list[TraceCall] = []
    by_id: dict[str, TraceCall] = {}
    user_turns: list[UserTurn] = []
    for message in sample.get("messages") or []:
        role = message.get("role")
        if role == "assistant":
            text, reasoning = _text(message.get("content"))
            info = RoundInfo(
                index=len(rounds) + 1,
                started_at=started,
                text=text,
                model=message.get("model") or model,
                reasoning=reasoning,
            )
            for tc in message.get("tool_calls") or []:
                arguments = tc.get("arguments")
                call = TraceCall(
                    index=len(calls),
                    call_id=str(tc.get("id") or f"call_{len(calls)}"),
                    round=info.index,
                    tool=tool_name(str(tc.get("function") or ""), offered),
                    arguments_raw=json.dumps(arguments, ensure_ascii=False) if arguments is not None else "",
                    arguments=arguments if isinstance(arguments, dict) else None,
                    parse_error=tc.get("parse_error")
                    or (None if isinstance(arguments, dict) else "arguments are not a JSON object"),
                    execution="skipped",
                )
                if call.tool != tc.get("function"):
                    call.annotations["inspect_function"] = tc.get("function")
                calls.append(call)
                by_id[call.call_id] = call
                info.call_ids.append(call.call_id)
            info.finish_reason = "tool_calls" if info.call_ids else "stop"
            rounds.append(info)
        elif role == "tool":
            found = by_id.get(str(message.get("tool_call_id")))
            if found is not None:
                text, _ = _text(message.get("content"))
                error = message.get("error")
                found.execution = "error" if error else "ok"
                kept = (message.get("metadata") or {}).get("execution")
                if kept in get_args(ExecutionStatus):  # a log callbench wrote: the call's own outcome
                    found.execution = cast(ExecutionStatus, kept)
                found.result = _result(text)
                if isinstance(error, dict):
                    found.error = str(error.get("message") or text)
        elif role == "user" and rounds:
            text, _ = _text(message.get("content"))
            user_turns.append(UserTurn(after_round=len(rounds), text=text))
    usage = _sample_usage(sample)
    if rounds and usage is not None:
        rounds[-1].usage = usage  # inspect logs usage per sample here: the rounds' sum sits on the last
    output = sample.get("output") or {}
    final_text = rounds[-1].text if rounds else str(output.get("completion") or "")
    return Trace(
        rounds=rounds,
        calls=calls,
        final_text=final_text,
        stop_reason="answer",
        usage=usage or Usage(),
        user_turns=user_turns or None,
    )


def _sample_usage(sample: dict[str, Any]) -> Usage | None:
    usages = [u for u in (sample.get("model_usage") or {}).values() if isinstance(u, dict)]
    if not usages:
        return None
    total = Usage()
    for u in usages:
        cached = int(u.get("input_tokens_cache_read") or 0)
        written = int(u.get("input_tokens_cache_write") or 0)
        total = total + Usage(
            input_tokens=int(u.get("input_tokens") or 0) + cached + written,
            output_tokens=int(u.get("output_tokens") or 0),
            reasoning_tokens=int(u.get("reasoning_tokens") or 0),
            cached_tokens=cached,
        )
    return total


def sample_record(sample: dict[str, Any], case: Case, offered: list[str], model: str) -> CaseRecord:
    """One sample as the (unscored) record of ``case``; an error record when inspect reports an error."""
    trial = sample.get("epoch")
    record = CaseRecord(
        key=case.key,
        suite=case.suite,
        case_id=case.id,
        category=case.category,
        trial=trial if isinstance(trial, int) and trial >= 1 else 1,
        instruction=case.prompt_text(),
        prompt_sha256=case.prompt_sha256(),
        offered_tools=offered,
        expected_tools=case.expected_tools(),
        expected=[s.model_dump(mode="json") for s in case.expected],
        harness_mode=HARNESS_MODE,
        started_at=_unix(sample.get("started_at")),
        duration_ms=float(sample.get("total_time") or 0.0) * 1000,
        metadata={"inspect": {"sample_id": sample.get("id"), "scores": _recorded_scores(sample)}},
    )
    error = sample.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else str(error)
        record.status = "error"
        record.error = ErrorInfo(
            type="inspect:sample_error", message=str(message or "inspect reports an error")
        )
    else:
        record.trace = sample_trace(sample, offered, model)
        kept = (sample.get("metadata") or {}).get("callbench")
        if isinstance(kept, dict):  # a log callbench wrote: what the trace kept beside the messages
            if isinstance(kept.get("final_state"), dict):
                record.trace.final_state = kept["final_state"]
            if kept.get("stop_reason") in get_args(StopReason):
                record.trace.stop_reason = kept["stop_reason"]
    return record


def _recorded_scores(sample: dict[str, Any]) -> dict[str, Any]:
    scores = sample.get("scores") or {}
    return {name: score.get("value") for name, score in scores.items() if isinstance(score, dict)}


def _as_pass(value: Any) -> bool | None:
    """An inspect score value as pass/fail (``C``/``I``, 1/0, true/false); ``None`` for anything else."""
    if isinstance(value, bool):
        return value
    if value in ("C", "I"):
        return value == "C"
    if isinstance(value, int | float) and value in (0, 1):
        return value == 1
    return None


# --- the import -----------------------------------------------------------------------------------


def import_inspect(path: str | Path, run_dir: str | Path) -> InspectImport:
    """Read the inspect log at ``path`` into a new run folder ``run_dir`` and score it."""
    from callbench.harness.prepare import build_scorers

    path, run_dir = Path(path), Path(run_dir)
    if (run_dir / RUN_FILE).exists():
        raise UserError(f"{run_dir}: already holds a run ({RUN_FILE}); choose another -o")
    log = read_log(path)
    matched = match_cases(path, log)
    samples = log.get("samples") or []
    report = InspectImport(run_dir, task_name(log), [s.name for s in matched.suites])
    report.skipped = dict(matched.skipped)
    if not matched.cases:
        why = ", ".join(f"{n} {reason}" for reason, n in matched.skipped.most_common(3)) or "no samples"
        raise UserError(f"{path}: no sample of the log is a case callbench can score ({why})")
    model = str((log.get("eval") or {}).get("model") or "unknown")
    suites = {s.name: s for s in matched.suites}
    scorers = {s.name: build_scorers(s, matched.tiers.get(s.name) or ()) for s in matched.suites}
    records: list[CaseRecord] = []
    for n, case in sorted(matched.cases.items()):
        suite = suites[case.suite]
        offered = [t.name for t in suite.offered_tools(case, None)]
        records.append(sample_record(samples[n], case, offered, model))
    records = _dedupe(records)
    asyncio.run(_score(records, suites, scorers))
    header = _header(run_dir, path, log, matched, scorers, records)
    write_header(run_dir, header)
    rewrite_records(run_dir, records)
    from callbench.harness.summary_stream import stream_summary

    merged = {name: scorer for table in scorers.values() for name, scorer in table.items()}
    write_summary(run_dir, stream_summary(run_dir, header, merged))
    _tally(report, records, scorers)
    return report


def _dedupe(records: list[CaseRecord]) -> list[CaseRecord]:
    """One record per (case, trial): a repeated sample gets the next free trial of its case."""
    used: set[tuple[str, int]] = set()
    for record in records:
        while (record.key, record.trial) in used:
            record.trial += 1
        used.add((record.key, record.trial))
    return records


async def _score(
    records: list[CaseRecord], suites: dict[str, Suite], scorers: dict[str, dict[str, Any]]
) -> None:
    from callbench.harness.engine import score_case
    from callbench.harness.validate import revalidate

    for record in records:
        if record.status != "completed":
            continue
        suite = suites[record.suite]
        case = next(c for c in suite.cases if c.id == record.case_id)
        revalidate(record.trace, suite.registry_for(case))
        verdicts, error = await score_case(scorers[suite.name], case, record.trace)
        record.verdicts = verdicts
        if error is not None:
            record.status, record.error = "error", error


def _header(
    run_dir: Path,
    path: Path,
    log: dict[str, Any],
    matched: Matched,
    scorers: dict[str, dict[str, Any]],
    records: list[CaseRecord],
) -> RunHeader:
    from callbench.harness.prepare import diagnostic_scorers
    from callbench.types.hashing import sha256_of

    spec = log.get("eval") or {}
    infos = []
    for suite, suite_spec in zip(matched.suites, matched.specs, strict=True):
        infos.append(
            SuiteInfo(
                name=suite.name,
                spec=suite_spec,
                hash=suite.hash,
                registry_hash=suite.registry.hash,
                prompt_template_hash=sha256_of({"inspect_task": task_name(log)}),
                n_cases=len(suite.cases),
                source=suite.source,
                data_versions=dict(suite.metadata.get("data_versions") or {}),
                version=suite.version,
                executor="inspect-log",
            )
        )
    generate = spec.get("model_generate_config") or {}
    return RunHeader(
        run_id=run_dir.name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        callbench_version=__version__,
        python_version=platform.python_version(),
        model=str(spec.get("model") or "unknown"),
        provider={"inspect_model": spec.get("model"), "model_base_url": spec.get("model_base_url")},
        settings={k: v for k, v in generate.items() if v is not None},
        harness_mode=HARNESS_MODE,
        suites=infos,
        scorers={name: list(table) for name, table in scorers.items()},
        diagnostic_scorers=diagnostic_scorers(matched.suites, scorers),
        suite_k={s.name: None for s in matched.suites},
        trials=max((r.trial for r in records), default=1),
        options={
            "suite_options": matched.suite_options,
            "inspect_log": {
                "path": str(path),
                "task": spec.get("task"),
                "eval_id": spec.get("eval_id"),
                "run_id": spec.get("run_id"),
                "created": spec.get("created"),
                "status": log.get("status"),
                "samples": len(log.get("samples") or []),
                "packages": spec.get("packages"),
            },
        },
    )


def _tally(report: InspectImport, records: list[CaseRecord], scorers: dict[str, dict[str, Any]]) -> None:
    report.records = len(records)
    report.errors = sum(r.status == "error" for r in records)
    agree = compared = 0
    for record in records:
        primary = next(iter(scorers.get(record.suite, {})), None)
        recorded = record.metadata.get("inspect", {}).get("scores") or {}
        value = recorded.get(primary) if primary in recorded else next(iter(recorded.values()), None)
        mine = record.verdicts.get(primary) if primary else None
        theirs = _as_pass(value)
        if mine is not None and mine.applicable and theirs is not None:
            compared += 1
            agree += mine.passed == theirs
    report.passed = pass_counts(records)
    report.agreement = (agree, compared) if compared else None
