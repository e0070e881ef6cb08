"""A stored run as ATIF trajectories (``callbench export atif RUN -o DIR``): one file per case and
trial, ``DIR/SUITE/CASE_ID.trial-N.json``, in the Agent Trajectory Interchange Format v1.4
(Harbor's RFC 0001).

* the request is a ``user`` step; each model round an ``agent`` step with its ``message``,
  ``reasoning_content``, ``tool_calls`` and, as its ``observation``, the results of the calls the model
  was told about (a result, an error, or why the call was refused), with the round's ``metrics``
  (prompt tokens with the cached ones inside them, as ATIF counts; completion tokens; cached tokens;
  the cost where the price table prices the round's model; reasoning tokens, latency and the finish
  reason in ``metrics.extra``);
* the harness's nudges and a conversation's user turns are ``user`` steps in their place;
* ``final_metrics`` holds the totals, and ``extra.callbench`` the case, trial, status, stop reason
  and every scorer's verdict (strict tiers and diagnostics apart, as in the run).

v1.4 has no place for a call's raw argument text: a call whose arguments did not parse is written
with ``{}`` and its text kept in the step's ``extra.unparsed_arguments``.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from callbench.interop.conversation import Turn, turns
from callbench.interop.source import ExportSource, read_for_export
from callbench.types.records import CaseRecord
from callbench.types.version import __version__

SCHEMA_VERSION = "ATIF-v1.4"
NAMESPACE = uuid.UUID("0b8f3c52-3d0e-4f0b-9a7e-7c1d2e5a4f60")


@dataclass
class AtifExport:
    """What ``export atif`` wrote."""

    folder: Path
    files: list[Path]
    errors: int


def export_atif(run_dir: str | Path, out: str | Path | None = None) -> AtifExport:
    """Write one ATIF trajectory per record of the run in ``run_dir`` under ``out`` (default
    ``RUN_DIR/atif``)."""
    source = read_for_export(run_dir)
    folder = Path(out) if out is not None else source.path / "atif"
    prices = Pricing(source)
    files = []
    for record in source.records:
        trajectory = trajectory_of(source, record, prices)
        target = folder / safe_name(record.suite) / f"{safe_name(record.case_id)}.trial-{record.trial}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(trajectory, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        files.append(target)
    errors = sum(1 for r in source.records if r.status == "error")
    return AtifExport(folder, files, errors)


def safe_name(name: str) -> str:
    """A file name part: characters other than letters, digits, ``.``, ``-``, ``_`` become ``_``."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".")
    return cleaned or "_"


class Pricing:
    """USD per round from the run's price table (``None`` where the model has no price)."""

    def __init__(self, source: ExportSource) -> None:
        from callbench.harness.usage import price_table

        self.table = price_table(source.header.options.get("price_table"))
        provider = source.header.provider or {}
        self.fallback = provider.get("model") if isinstance(provider.get("model"), str) else None

    def cost(self, tokens: dict[str, int], model: str | None) -> float | None:
        from callbench.harness.usage import estimate_cost

        found = self.table.lookup(model or self.fallback)
        return None if found is None else estimate_cost(tokens, found[1])


def _iso(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z") if ts else None


def trajectory_of(source: ExportSource, record: CaseRecord, prices: Pricing) -> dict[str, Any]:
    """One record's trajectory (a JSON object)."""
    header = source.header
    steps: list[dict[str, Any]] = []
    totals = {"prompt": 0, "completion": 0, "cached": 0}
    cost_total: float | None = None
    priced_all = True
    for turn in turns(record):
        if turn.role == "tool":  # a result is its agent step's observation, never a step of its own
            continue
        step, tokens, cost = _step(turn, len(steps) + 1, prices)
        steps.append(step)
        if tokens is not None:
            totals["prompt"] += tokens["input"]
            totals["completion"] += tokens["output"]
            totals["cached"] += tokens["cached_input"]
            if cost is None:
                priced_all = False
            else:
                cost_total = (cost_total or 0.0) + cost
    if not steps:  # ATIF needs one step: say that the case produced no message
        steps.append({"step_id": 1, "source": "system", "message": "callbench: the episode holds no message"})
    final: dict[str, Any] = {
        "total_prompt_tokens": totals["prompt"],
        "total_completion_tokens": totals["completion"],
        "total_cached_tokens": totals["cached"],
        "total_steps": len(steps),
    }
    if cost_total is not None and priced_all:
        final["total_cost_usd"] = cost_total
    agent_run = record.trace.agent
    agent: dict[str, Any] = {
        "name": "callbench" if agent_run is None else agent_run.agent,
        "version": __version__ if agent_run is None else "unknown",
        "model_name": header.model,
        "extra": {"harness_mode": record.harness_mode, "provider": header.provider},
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "session_id": str(uuid.uuid5(NAMESPACE, f"{header.run_id}/{record.key}/{record.trial}")),
        "agent": agent,
        "steps": steps,
        "notes": (
            "Exported by callbench from a run folder. The system prompt and the exact wrapping of "
            "tool results are not kept in callbench records; verdicts are in extra.callbench."
        ),
        "final_metrics": final,
        "extra": {"callbench": _case_extra(source, record)},
    }


def _step(
    turn: Turn, step_id: int, prices: Pricing
) -> tuple[dict[str, Any], dict[str, int] | None, float | None]:
    from callbench.interop.conversation import answered, tool_text

    info = turn.round
    step: dict[str, Any] = {"step_id": step_id}
    stamp = _iso(info.started_at) if info is not None else None
    if stamp:
        step["timestamp"] = stamp
    if turn.role == "user":
        step.update(source="user", message=turn.text)
        if turn.kind != "request":
            step["extra"] = {"callbench": turn.kind}
        return step, None, None
    step.update(source="agent", message=turn.text)
    if info is not None and info.model:
        step["model_name"] = info.model
    if turn.reasoning:
        step["reasoning_content"] = turn.reasoning
    extra: dict[str, Any] = {}
    if turn.calls:
        step["tool_calls"] = [
            {
                "tool_call_id": c.call_id,
                "function_name": c.tool,
                "arguments": c.arguments if c.arguments is not None else {},
            }
            for c in turn.calls
        ]
        results = [{"source_call_id": c.call_id, "content": tool_text(c)} for c in turn.calls if answered(c)]
        if results:
            step["observation"] = {"results": results}
        extra["call_status"] = {c.call_id: c.execution for c in turn.calls}
        raw = {c.call_id: c.arguments_raw for c in turn.calls if c.arguments is None}
        if raw:
            extra["unparsed_arguments"] = raw
    tokens: dict[str, int] | None = None
    cost: float | None = None
    if info is not None and info.usage is not None and not info.cached:
        usage = info.usage
        tokens = {
            "input": usage.input_tokens,
            "output": usage.output_tokens,
            "reasoning": usage.reasoning_tokens,
            "cached_input": usage.cached_tokens,
        }
        cost = prices.cost(tokens, info.model)
        metrics: dict[str, Any] = {
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "cached_tokens": usage.cached_tokens,
        }
        if cost is not None:
            metrics["cost_usd"] = cost
        metrics["extra"] = {
            k: v
            for k, v in {
                "reasoning_tokens": usage.reasoning_tokens,
                "latency_ms": info.latency_ms,
                "finish_reason": info.finish_reason,
            }.items()
            if v is not None
        }
        step["metrics"] = metrics
    elif info is not None and info.cached:
        extra["cached_response"] = True  # served from callbench's cache: no request, no tokens paid
    if info is not None and info.finish_reason and "metrics" not in step:
        extra["finish_reason"] = info.finish_reason
    if extra:
        step["extra"] = extra
    return step, tokens, cost


def _case_extra(source: ExportSource, record: CaseRecord) -> dict[str, Any]:
    verdicts = {}
    for name, verdict in record.verdicts.items():
        verdicts[name] = {
            "passed": verdict.passed,
            "partial": verdict.partial,
            "applicable": verdict.applicable,
            "diagnostic": source.diagnostic(name),
            "reasons": [r.code for r in verdict.reasons],
            "rationale": verdict.rationale,
        }
    out: dict[str, Any] = {
        "run_id": source.header.run_id,
        "key": record.key,
        "suite": record.suite,
        "case_id": record.case_id,
        "category": record.category,
        "trial": record.trial,
        "status": record.status,
        "stop_reason": record.trace.stop_reason,
        "verdicts": verdicts,
    }
    if record.error is not None:
        out["error"] = record.error.model_dump(exclude_none=True)
    return out
