"""A stored run as an inspect_ai ``.eval`` log (``callbench export inspect RUN -o run.eval``).

The file is inspect's zip layout, log schema version 2, written here without inspect_ai (members
deflate-compressed, which inspect's readers and viewer read):

* ``_journal/start.json``: the eval spec and plan as the log began;
* ``samples/{id}_epoch_{n}.json``: one sample per case and trial (the trial is the epoch), with the
  episode's messages (request, each model round with its tool calls and reasoning, each tool result,
  nudges and user turns), the model output, token usage, times, and one score per scorer;
* ``_journal/summaries/1.json`` and ``summaries.json``: the samples' summaries;
* ``reductions.json``: each scorer's value per case over its trials (the mean);
* ``header.json``: the eval spec, plan, results (one ``EvalScore`` per scorer), stats and status.

Scores are never merged: each strict tier is a scorer of its own (``C``/``I``), a diagnostic scorer
(``state-match`` and the like) is one too, marked ``diagnostic`` in its metadata, and each tier's
partial credit (a diagnostic) is the separate scorer ``TIER.partial``. A verdict that is not
applicable is left out of the sample's scores (and named in the sample's metadata); an error record
is a sample with an ``error`` and no scores, as callbench leaves it out of every rate.

The eval spec carries the run's configuration and hashes: ``task_args`` the suite specs,
``model_generate_config`` the generation settings inspect knows, ``config.epochs`` the trials, and
``metadata.callbench`` the run header (suites with their case, registry and prompt-template hashes,
scorers, options, tool-source manifests) with the summary's figures.
"""

from __future__ import annotations

import json
import uuid
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from callbench.errors import UserError
from callbench.interop.conversation import Turn, turns
from callbench.interop.source import ExportSource, read_for_export, split_model
from callbench.types.records import CaseRecord
from callbench.types.version import __version__

LOG_SCHEMA_VERSION = 2
SAMPLES_DIR = "samples"
PARTIAL_SUFFIX = ".partial"
"""A tier's partial credit is the scorer ``TIER.partial`` (diagnostic, never the tier's own score)."""
NAMESPACE = uuid.UUID("5d1c7e0a-77a4-4c42-9a6e-3f4c2b1a9e11")
"""Namespace of the deterministic ids the exports give (the same run exports to the same ids)."""
CORRECT, INCORRECT = "C", "I"
STOP_REASONS = {
    "stop": "stop",
    "length": "max_tokens",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
}


@dataclass
class InspectExport:
    """What ``export inspect`` wrote."""

    path: Path
    samples: int
    errors: int
    scorers: list[str]


def export_inspect(run_dir: str | Path, out: str | Path | None = None) -> InspectExport:
    """Write the run in ``run_dir`` as an inspect ``.eval`` log at ``out`` (default
    ``RUN_DIR/inspect/RUN_ID.eval``); returns what was written."""
    source = read_for_export(run_dir)
    target = Path(out) if out is not None else source.path / "inspect" / f"{source.header.run_id}.eval"
    if target.suffix != ".eval":
        raise UserError(f"{target}: an inspect log file ends in .eval")
    log = build_log(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        _put(
            archive,
            "_journal/start.json",
            {"version": LOG_SCHEMA_VERSION, "eval": log.spec, "plan": log.plan},
        )
        for sample in log.samples:
            _put(archive, f"{SAMPLES_DIR}/{sample['id']}_epoch_{sample['epoch']}.json", sample)
        _put(archive, "_journal/summaries/1.json", log.summaries)
        _put(archive, "summaries.json", log.summaries)
        _put(archive, "reductions.json", log.reductions)
        _put(archive, "header.json", log.header)
    tmp.replace(target)
    errors = sum(1 for s in log.samples if s.get("error"))
    return InspectExport(target, len(log.samples), errors, log.scorer_names)


def _put(archive: zipfile.ZipFile, name: str, value: Any) -> None:
    archive.writestr(name, json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False))


@dataclass
class EvalLogParts:
    """The JSON objects of one log, before they are zipped."""

    spec: dict[str, Any]
    plan: dict[str, Any]
    samples: list[dict[str, Any]]
    summaries: list[dict[str, Any]]
    reductions: list[dict[str, Any]]
    header: dict[str, Any]
    scorer_names: list[str]


def inspect_model(model: str) -> str:
    """callbench's model string as inspect names models: ``provider/model`` (a built-in agent as
    ``callbench/NAME``; a base URL is left out, it is in the spec's ``model_base_url``)."""
    provider, name = split_model(model)
    return f"{provider}/{name}"


def sample_id(record: CaseRecord, one_suite: bool) -> str:
    """The sample id: the case id in a run of one suite (as the suite's own task would name it),
    else the record key ``suite:id``. Characters a zip member name cannot carry become ``_``."""
    raw = record.case_id if one_suite else record.key
    return raw.replace("/", "_").replace("\\", "_")


def build_log(source: ExportSource) -> EvalLogParts:
    """The log's parts for the run in ``source``."""
    header = source.header
    one_suite = len({r.suite for r in source.records}) <= 1
    scorers = source.scorers()
    names = _scorer_names(source, scorers)
    samples = [_sample(source, record, one_suite, scorers) for record in source.records]
    ids = [s["id"] for s in samples]
    if len(set(zip(ids, (s["epoch"] for s in samples), strict=True))) != len(samples):
        raise UserError(f"{source.path}: two records map to the same inspect sample id and epoch")
    spec = _spec(source, names, list(dict.fromkeys(ids)))
    plan = {
        "name": "callbench",
        "steps": [
            {
                "solver": f"callbench/{header.harness_mode}",
                "params": {"harness_mode": header.harness_mode, **header.harness_assistance},
            }
        ],
        "config": spec["model_generate_config"],
    }
    results = {
        "total_samples": len(samples),
        "completed_samples": sum(1 for s in samples if not s.get("error")),
        "scores": [_eval_score(source, name) for name in names],
    }
    log_header = {
        "version": LOG_SCHEMA_VERSION,
        "status": "success",
        "eval": spec,
        "plan": plan,
        "results": results,
        "stats": _stats(source),
        "invalidated": False,
        "tags": [],
        "metadata": {},
    }
    return EvalLogParts(
        spec=spec,
        plan=plan,
        samples=samples,
        summaries=[_summary(s) for s in samples],
        reductions=_reductions(samples, names),
        header=log_header,
        scorer_names=names,
    )


def _scorer_names(source: ExportSource, scorers: list[str]) -> list[str]:
    """Each scorer, and after it its ``.partial`` diagnostic where its verdicts carry partial credit."""
    out = []
    for name in scorers:
        out.append(name)
        if any(_verdict_partial(r, name) is not None for r in source.records):
            out.append(name + PARTIAL_SUFFIX)
    return out


def _verdict_partial(record: CaseRecord, scorer: str) -> float | None:
    verdict = record.verdicts.get(scorer)
    if verdict is None or not verdict.applicable or record.status != "completed":
        return None
    return verdict.partial


def _iso(ts: float | None) -> str | None:
    if not ts:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat()


def _usage(tokens: dict[str, int], cost: float | None = None) -> dict[str, Any]:
    """callbench's token counts as inspect's ``ModelUsage`` (inspect's ``input_tokens`` leaves the
    cached input out, which it counts as ``input_tokens_cache_read``)."""
    fresh = max(tokens.get("input", 0) - tokens.get("cached_input", 0), 0)
    out: dict[str, Any] = {
        "input_tokens": fresh,
        "output_tokens": tokens.get("output", 0),
        "total_tokens": tokens.get("input", 0) + tokens.get("output", 0),
    }
    if tokens.get("cached_input"):
        out["input_tokens_cache_read"] = tokens["cached_input"]
    if tokens.get("reasoning"):
        out["reasoning_tokens"] = tokens["reasoning"]
    if cost is not None:
        out["total_cost"] = cost
    return out


def _model_name(source: ExportSource, record: CaseRecord) -> str:
    reported = next((r.model for r in record.trace.rounds if r.model), None)
    return inspect_model(source.header.model) if reported is None else reported


def _sample(source: ExportSource, record: CaseRecord, one_suite: bool, scorers: list[str]) -> dict[str, Any]:
    from callbench.harness.usage import case_usage

    sid = sample_id(record, one_suite)
    uid = str(uuid.uuid5(NAMESPACE, f"{source.header.run_id}/{record.key}/{record.trial}"))
    messages = [_message(turn, f"{uid}-{n}") for n, turn in enumerate(turns(record))]
    last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    final = record.trace.rounds[-1] if record.trace.rounds else None
    model = _model_name(source, record)
    output: dict[str, Any] = {"model": model, "choices": [], "completion": record.trace.final_text}
    if last is not None:
        finish = final.finish_reason if final is not None else None
        output["choices"] = [{"message": last, "stop_reason": STOP_REASONS.get(finish or "", "unknown")}]
    tokens = case_usage(record)
    if any(tokens[k] for k in ("input", "output")):
        output["usage"] = _usage(tokens)
    started = _iso(record.started_at)
    ended = _iso(record.started_at + record.duration_ms / 1000) if record.started_at else None
    sample: dict[str, Any] = {
        "id": sid,
        "epoch": record.trial,
        "input": record.instruction,
        "target": target_text(record),
        "messages": messages,
        "output": output,
        "scores": _scores(source, record, scorers),
        "metadata": _sample_metadata(source, record),
        "store": {},
        "events": [],
        "model_usage": {model: _usage(tokens)} if any(tokens[k] for k in ("input", "output")) else {},
        "total_time": round(record.duration_ms / 1000, 6),
        "working_time": round(record.duration_ms / 1000, 6),
        "uuid": uid,
        "attachments": {},
        "message_count": len(messages),
    }
    if started:
        sample["started_at"], sample["completed_at"] = started, ended
    if record.status == "error":
        error = record.error
        message = f"{error.type}: {error.message}" if error is not None else "error record"
        trace_text = (error.traceback if error is not None else None) or message
        sample["error"] = {"message": message, "traceback": trace_text, "traceback_ansi": trace_text}
    return sample


def target_text(record: CaseRecord) -> str:
    """The expected steps as text, one per line: ``tool(arg=value, ...)`` (alternatives joined by
    ``|``); empty for a case that expects no call."""
    lines = []
    for step in record.expected:
        tool = step.get("tool")
        name = " | ".join(tool) if isinstance(tool, list) else str(tool)
        args = step.get("arguments") or {}
        shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
        lines.append(f"{name}({shown})")
    if not lines and record.expected_tools:
        lines = [" | ".join(names) for names in record.expected_tools]
    return "\n".join(lines)


def _message(turn: Turn, mid: str) -> dict[str, Any]:
    if turn.role == "user":
        source = "input" if turn.kind == "request" else None
        out: dict[str, Any] = {"id": mid, "content": turn.text, "role": "user"}
        if source:
            out["source"] = source
        if turn.kind != "request":
            out["metadata"] = {"callbench": turn.kind}
        return out
    if turn.role == "tool":
        call = turn.call
        assert call is not None
        msg: dict[str, Any] = {
            "id": mid,
            "content": turn.text,
            "role": "tool",
            "tool_call_id": call.call_id,
            "function": call.tool,
        }
        if call.execution not in ("ok", "skipped"):
            msg["error"] = {"type": "unknown", "message": turn.text or call.execution}
        msg["metadata"] = {"execution": call.execution, "duration_ms": call.duration_ms}
        return msg
    content: str | list[dict[str, Any]] = turn.text
    if turn.reasoning:
        content = [{"type": "reasoning", "reasoning": turn.reasoning}, {"type": "text", "text": turn.text}]
    msg = {"id": mid, "content": content, "source": "generate", "role": "assistant"}
    if turn.calls:
        msg["tool_calls"] = [_tool_call(c) for c in turn.calls]
    info = turn.round
    if info is not None and info.model:
        msg["model"] = info.model
    meta = _round_metadata(turn)
    if meta:
        msg["metadata"] = meta
    return msg


def _tool_call(call: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": call.call_id,
        "function": call.tool,
        "arguments": call.arguments if call.arguments is not None else {},
        "type": "function",
    }
    if call.parse_error is not None:
        out["parse_error"] = call.parse_error
    return out


def _round_metadata(turn: Turn) -> dict[str, Any]:
    info = turn.round
    meta: dict[str, Any] = {}
    if info is not None:
        meta = {"round": info.index, "finish_reason": info.finish_reason, "latency_ms": info.latency_ms}
        if info.cached:
            meta["cached"] = True
        if info.usage is not None:
            meta["usage"] = info.usage.model_dump()
    raw = {c.call_id: c.arguments_raw for c in turn.calls if c.arguments is None and c.arguments_raw}
    if raw:
        meta["unparsed_arguments"] = raw
    return {k: v for k, v in meta.items() if v is not None}


def _scores(source: ExportSource, record: CaseRecord, scorers: list[str]) -> dict[str, Any]:
    if record.status != "completed":
        return {}
    out: dict[str, Any] = {}
    for name in scorers:
        verdict = record.verdicts.get(name)
        if verdict is None or not verdict.applicable:
            continue
        meta = {
            "reasons": [r.model_dump(exclude_none=True) for r in verdict.reasons],
            "diagnostic": source.diagnostic(name),
        }
        if verdict.metrics:
            meta["metrics"] = verdict.metrics
        out[name] = {
            "value": CORRECT if verdict.passed else INCORRECT,
            "answer": " ".join(c.tool for c in record.trace.calls) or None,
            "explanation": verdict.rationale or None,
            "metadata": meta,
            "history": [],
        }
        if verdict.partial is not None:
            out[name + PARTIAL_SUFFIX] = {
                "value": verdict.partial,
                "explanation": f"diagnostic partial credit of {name} (never a pass criterion)",
                "metadata": {"diagnostic": True, "of": name},
                "history": [],
            }
    return out


def _sample_metadata(source: ExportSource, record: CaseRecord) -> dict[str, Any]:
    trace = record.trace
    meta: dict[str, Any] = {
        "key": record.key,
        "suite": record.suite,
        "case_id": record.case_id,
        "category": record.category,
        "trial": record.trial,
        "status": record.status,
        "harness_mode": record.harness_mode,
        "stop_reason": trace.stop_reason,
        "prompt_sha256": record.prompt_sha256,
        "offered_tools": record.offered_tools,
        "expected": record.expected,
    }
    if trace.final_state is not None:
        meta["final_state"] = trace.final_state
    if record.template:
        meta["template"] = record.template
    if record.retrieval_recall is not None:
        meta["retrieval_recall"] = record.retrieval_recall
    skipped = [name for name, v in record.verdicts.items() if not v.applicable]
    if skipped:
        meta["not_applicable"] = skipped
    if record.error is not None:
        meta["error"] = record.error.model_dump(exclude_none=True)
    if record.schema_version != source.header.schema_version:
        meta["record_schema_version"] = record.schema_version
    return {"callbench": meta}


def _summary(sample: dict[str, Any]) -> dict[str, Any]:
    keep = ("id", "epoch", "input", "target", "scores", "model_usage", "started_at", "completed_at")
    out = {k: sample[k] for k in keep if k in sample}
    out.update(
        metadata={},
        total_time=sample.get("total_time"),
        working_time=sample.get("working_time"),
        uuid=sample.get("uuid"),
        completed=True,
        message_count=sample.get("message_count"),
    )
    if sample.get("error"):
        out["error"] = sample["error"]["message"]
    return out


def _reductions(samples: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """Each scorer's mean value per sample over its epochs (``C`` = 1, ``I`` = 0)."""
    out = []
    for name in names:
        values: dict[str, list[float]] = defaultdict(list)
        for sample in samples:
            score = (sample.get("scores") or {}).get(name)
            if score is not None:
                value = score["value"]
                values[sample["id"]].append(
                    1.0 if value == CORRECT else 0.0 if value == INCORRECT else float(value)
                )
        reduced = [
            {"value": sum(v) / len(v), "sample_id": sid, "history": []} for sid, v in values.items() if v
        ]
        out.append({"scorer": name, "reducer": "mean", "samples": reduced})
    return out


def _figures(source: ExportSource, name: str) -> dict[str, Any]:
    """n, passed, accuracy and its interval for a scorer (``TIER.partial``: the mean partial)."""
    base = name.removesuffix(PARTIAL_SUFFIX)
    judged = [
        r
        for r in source.records
        if r.status == "completed" and base in r.verdicts and r.verdicts[base].applicable
    ]
    if name.endswith(PARTIAL_SUFFIX):
        partials = [r.verdicts[base].partial for r in judged if r.verdicts[base].partial is not None]
        mean = sum(p for p in partials if p is not None) / len(partials) if partials else 0.0
        return {"n": len(partials), "mean": mean}
    tier = source.summary.tiers.get(name)
    stratum = next((s for s in source.statistics.strata if s.tier == name), None)
    passed = sum(1 for r in judged if r.verdicts[name].passed)
    out: dict[str, Any] = {
        "n": len(judged),
        "passed": passed,
        "accuracy": passed / len(judged) if judged else 0.0,
    }
    if tier is not None and tier.accuracy is not None and tier.n == len(judged):
        out["accuracy"] = tier.accuracy
    if stratum is not None and stratum.n == len(judged):
        out["interval"] = stratum.accuracy.model_dump()
    return out


def _eval_score(source: ExportSource, name: str) -> dict[str, Any]:
    figures = _figures(source, name)
    partial = name.endswith(PARTIAL_SUFFIX)
    diagnostic = partial or source.diagnostic(name)
    unscored = sum(1 for r in source.records if r.status != "completed")
    metrics: dict[str, Any]
    if partial:
        metrics = {"mean": {"name": "mean", "value": figures["mean"], "params": {}}}
    else:
        metrics = {"accuracy": {"name": "accuracy", "value": figures["accuracy"], "params": {}}}
        interval = figures.get("interval")
        if interval is not None:
            params = {"method": interval["method"], "confidence": source.statistics.confidence}
            metrics["ci_low"] = {"name": "ci_low", "value": interval["low"], "params": params}
            metrics["ci_high"] = {"name": "ci_high", "value": interval["high"], "params": params}
    meta: dict[str, Any] = {"diagnostic": diagnostic, "n": figures["n"]}
    if "passed" in figures:
        meta["passed"] = figures["passed"]
    if partial:
        meta["of"] = name.removesuffix(PARTIAL_SUFFIX)
    return {
        "name": name,
        "scorer": name,
        "reducer": "mean" if source.header.trials > 1 else None,
        "scored_samples": figures["n"],
        "unscored_samples": unscored,
        "params": {},
        "metrics": metrics,
        "metadata": meta,
    }


def _spec(source: ExportSource, names: list[str], sample_ids: list[str]) -> dict[str, Any]:
    header = source.header
    suites = header.suites
    task = "callbench/" + "+".join(source.suites)
    provider = header.provider or {}
    settings = header.settings or {}
    generate: dict[str, Any] = {}
    for key in ("temperature", "max_tokens", "seed", "parallel_tool_calls"):
        if settings.get(key) is not None:
            generate[key] = settings[key]
    spec: dict[str, Any] = {
        "eval_id": str(uuid.uuid5(NAMESPACE, f"eval/{header.run_id}/{header.created_at}")),
        "run_id": header.run_id,
        "created": header.created_at,
        "task": task,
        "task_id": header.run_id,
        "task_version": (suites[0].version or 0) if len(suites) == 1 else 0,
        "task_attribs": {},
        "task_args": {"suites": [s.spec for s in suites], "tiers": names},
        "task_args_passed": {},
        "dataset": {
            "name": "+".join(source.suites),
            "location": suites[0].source if len(suites) == 1 else None,
            "samples": sum(s.n_cases for s in suites),
            "sample_ids": sample_ids,
            "shuffled": False,
        },
        "model": inspect_model(header.model),
        "model_generate_config": generate,
        "model_args": {},
        "config": {"epochs": header.trials},
        "packages": {"callbench": header.callbench_version},
        "metadata": {"callbench": _run_metadata(source)},
        "scorers": [
            {
                "name": name,
                "options": {},
                "metrics": [{"name": "mean"}] if name.endswith(PARTIAL_SUFFIX) else [{"name": "accuracy"}],
                "metadata": {"diagnostic": name.endswith(PARTIAL_SUFFIX) or source.diagnostic(name)},
            }
            for name in names
        ],
    }
    if isinstance(provider.get("base_url"), str):
        spec["model_base_url"] = provider["base_url"]
    if spec["dataset"]["location"] is None:
        del spec["dataset"]["location"]
    return spec


def _run_metadata(source: ExportSource) -> dict[str, Any]:
    header = source.header
    meta = header.model_dump(mode="json", exclude={"resumes"})
    meta["resumes"] = len(header.resumes)
    meta["exported_by"] = f"callbench {__version__}"
    meta["summary"] = {
        "n_records": source.summary.n_records,
        "n_completed": source.summary.n_completed,
        "n_error": source.summary.n_error,
        "errors_by_type": source.summary.errors_by_type,
        "tiers": {
            k: v.model_dump(mode="json", exclude={"by_category"}) for k, v in source.summary.tiers.items()
        },
    }
    if source.older_records:
        meta["older_records"] = source.older_records
    return meta


def _stats(source: ExportSource) -> dict[str, Any]:
    from callbench.harness.usage import case_usage

    starts = [r.started_at for r in source.records if r.started_at]
    ends = [r.started_at + r.duration_ms / 1000 for r in source.records if r.started_at]
    totals: dict[str, dict[str, int]] = {}
    for record in source.records:
        tokens = case_usage(record)
        if not (tokens["input"] or tokens["output"]):
            continue
        slot = totals.setdefault(_model_name(source, record), defaultdict(int))
        for k, v in tokens.items():
            slot[k] += v
    return {
        "started_at": _iso(min(starts)) if starts else "",
        "completed_at": _iso(max(ends)) if ends else "",
        "model_usage": {model: _usage(dict(tokens)) for model, tokens in totals.items()},
        "role_usage": {},
    }
