"""ComplexEval run-level metrics from per-case ``complexeval`` verdict details.

Success rate, call accuracy (pooled recall, as published), call precision, response
completeness/correctness with coverage, the first-error distribution, extra steps, per-domain
tables and bootstrap intervals clustered by template. Modes are never pooled.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from callbench.benchmarks.complexfuncbench.data import PUBLISHED_DOMAIN_SIZES
from callbench.benchmarks.complexfuncbench.match import ERROR_KINDS
from callbench.plugin import DEFAULT_SEED, Align, Table, bootstrap_interval

RESAMPLES = 1000


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)


def _row(record: Any, scorer: str, labels: dict[str, str]) -> dict[str, Any] | None:
    """One normalised row from a record; numbers come from ``verdict.metrics`` (run summaries drop
    verdict details), names from the record (category = domain, template) or the details."""
    verdicts = _get(record, "verdicts")
    verdict = record if verdicts is None else verdicts.get(scorer)
    metrics = _get(verdict, "metrics") if verdict is not None else None
    if not metrics or "success" not in metrics:
        return None
    details = _get(verdict, "details") or {}
    domain = details.get("domain") or _get(record, "category") or "unknown"
    flags = {k.split(":", 1)[0]: k.split(":", 1)[1] for k in metrics if ":" in k}
    return {
        "mode": "faithful" if metrics.get("faithful") else "improved",
        "embedder": details.get("embedder") or labels.get("embedder", "unknown"),
        "judge_model": details.get("judge_model") or labels.get("judge"),
        "domain": domain,
        "template": details.get("template") or _get(record, "template") or domain,
        "success": bool(metrics["success"]),
        "infra": bool(metrics.get("infra")),
        "first_error": flags.get("first_error"),
        **{
            k: metrics.get(k, 0.0)
            for k in ("correct_calls", "gold_calls", "predicted_calls", "gold_steps", "model_turns")
        },
        "response": {
            "status": flags.get("response", "unknown"),
            "completeness": metrics.get("completeness"),
            "correctness": metrics.get("correctness"),
        },
    }


def aggregate_records(
    records: Iterable[Any], scorer: str = "complexeval", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    """Pooled metrics over records (``CaseRecord``s, record dicts or verdicts).

    Records scored in different modes are reported side by side under ``by_mode``, never pooled.
    ``labels`` name the embedder and judge when the records no longer carry verdict details.
    """
    rows = [r for r in (_row(rec, scorer, labels or {}) for rec in records) if r is not None]
    if not rows:
        return {"n": 0}
    modes = sorted({r["mode"] for r in rows})
    if len(modes) > 1:
        return {
            "by_mode": {m: summarise([r for r in rows if r["mode"] == m]) for m in modes},
            "warning": "records were scored in different ComplexEval modes; they are never pooled",
        }
    return summarise(rows)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Metrics of rows scored in one mode."""
    faithful = rows[0]["mode"] == "faithful"
    out: dict[str, Any] = {
        "mode": rows[0]["mode"],
        "embedders": sorted({r["embedder"] for r in rows}),
        "judges": sorted({str(r.get("judge_model") or "skipped: not configured") for r in rows}),
        "denominators": "published (150 per domain, 400 Cross, 1000 overall)" if faithful else "loaded data",
        **_figures(rows, faithful, None),
    }
    by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_domain[row["domain"]].append(row)
    out["by_domain"] = {d: _figures(rs, faithful, d) for d, rs in sorted(by_domain.items())}
    warning = _partial_data_warning(out) if faithful else None
    if warning:
        out["warnings"] = [warning]
    out["first_errors"] = _first_errors(rows)
    out["steps"] = _steps(rows)
    out["response"] = _response(rows, faithful)
    return out


def _success_denominator(rows: list[dict[str, Any]], faithful: bool, domain: str | None) -> int:
    if not faithful:
        return sum(1 for r in rows if not r["infra"])
    if domain is not None:
        return PUBLISHED_DOMAIN_SIZES.get(domain, len(rows))
    known = all(r["domain"] in PUBLISHED_DOMAIN_SIZES for r in rows)
    return sum(PUBLISHED_DOMAIN_SIZES.values()) if known else len(rows)


def _partial_data_warning(summary: dict[str, Any]) -> str | None:
    """Faithful mode on fewer samples than published: its success rates are not comparable."""
    short = [d for d, f in summary["by_domain"].items() if f["n"] < f["success_denominator"]]
    if summary["n"] >= summary["success_denominator"] and not short:
        return None
    return (
        f"faithful success rates divide by the published sample counts ({summary['success_denominator']} "
        f"overall; 150 per domain, 400 Cross) but only {summary['n']} sample(s) were loaded; "
        f"success_rate_loaded divides by the loaded samples"
    )


def _figures(rows: list[dict[str, Any]], faithful: bool, domain: str | None) -> dict[str, Any]:
    # Improved mode leaves infrastructure failures out of every denominator (they are counted apart);
    # faithful mode keeps upstream's behaviour: they fail in success rate, vanish from call accuracy.
    kept = rows if faithful else [r for r in rows if not r["infra"]]
    successes = sum(1 for r in kept if r["success"])
    denominator = _success_denominator(rows, faithful, domain)
    correct = sum(r["correct_calls"] for r in kept if not r["infra"])
    gold = sum(r["gold_calls"] for r in kept if not r["infra"])
    predicted = sum(r["predicted_calls"] for r in kept if not r["infra"])
    clusters = [str(r["template"]) for r in kept]
    success_values = [float(r["success"]) for r in kept]
    loaded = {"success_rate_loaded": successes / len(kept) if kept else None} if faithful else {}
    return {
        "n": len(rows),
        "n_infra_error": sum(1 for r in rows if r["infra"]),
        "success": successes,
        "success_denominator": denominator,
        "success_rate": successes / denominator if denominator else None,
        # Faithful only: upstream's formula needs all 1,000 samples; this is the rate over those loaded.
        **loaded,
        # An interval over loaded samples says nothing about a rate over published denominators.
        "success_rate_ci": bootstrap_interval(success_values, clusters, resamples=RESAMPLES).as_dict()
        if kept and denominator == len(kept)
        else None,
        "call_accuracy": correct / gold if gold else None,
        "call_accuracy_ci": ratio_interval(
            [r["correct_calls"] for r in kept], [r["gold_calls"] for r in kept], clusters
        )
        if gold
        else None,
        "call_precision": min(correct, predicted) / predicted if predicted else None,
    }


def ratio_interval(
    numerators: list[float],
    denominators: list[float],
    clusters: list[str],
    *,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Percentile bootstrap interval of a pooled ratio Σnum/Σden, resampling whole clusters."""
    index: dict[str, int] = {}
    ids = np.array([index.setdefault(c, len(index)) for c in clusters])
    num = np.bincount(ids, weights=np.asarray(numerators, float), minlength=len(index))
    den = np.bincount(ids, weights=np.asarray(denominators, float), minlength=len(index))
    draws = np.random.default_rng(seed).integers(0, len(index), size=(RESAMPLES, len(index)))
    sums = den[draws].sum(axis=1)
    ratios = num[draws].sum(axis=1) / np.where(sums == 0, np.nan, sums)
    alpha = (1 - confidence) / 2
    low, high = np.nanquantile(ratios, [alpha, 1 - alpha])
    return {
        "estimate": float(num.sum() / den.sum()),
        "low": float(low),
        "high": float(high),
        "method": "cluster-bootstrap" if len(index) < len(clusters) else "bootstrap",
    }


def _first_errors(rows: list[dict[str, Any]]) -> dict[str, Any]:
    failed = [r for r in rows if not r["success"]]
    counts = Counter(r["first_error"] for r in failed if r["first_error"])
    return {
        "n_failed": len(failed),
        "counts": {k: counts.get(k, 0) for k in ERROR_KINDS},
        "shares": {k: counts.get(k, 0) / len(failed) for k in ERROR_KINDS} if failed else {},
    }


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _steps(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if r["success"]]
    return {
        "mean_model_turns": _mean([r["model_turns"] for r in rows]),
        "mean_gold_steps": _mean([r["gold_steps"] for r in rows]),
        "mean_extra_turns": _mean([r["model_turns"] - r["gold_steps"] for r in rows]),
        "mean_extra_turns_successful": _mean([r["model_turns"] - r["gold_steps"] for r in ok]),
    }


def _response(rows: list[dict[str, Any]], faithful: bool) -> dict[str, Any]:
    statuses = Counter(r["response"]["status"] for r in rows)
    out: dict[str, Any] = {"statuses": dict(statuses)}
    if not any(
        r["response"].get("completeness") is not None or r["response"].get("correctness") is not None
        for r in rows
    ):
        out["skipped"] = "no response scores: no judge configured or the judge gave none"
        return out
    for kind in ("completeness", "correctness"):
        scored = [r["response"][kind] for r in rows if r["response"].get(kind) is not None]
        # Improved: a sample without a final answer scores 0; faithful leaves it out as upstream does.
        zeros = [] if faithful else [0] * statuses.get("no_answer", 0)
        values = scored + zeros
        out[kind] = {"mean": _mean(values), "n": len(values), "coverage": len(values) / len(rows)}
    return out


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def result_tables(summary: dict[str, Any]) -> list[Table]:
    """The paper's Table 2 layout for one aggregate (one table per mode when modes differ): success %
    / call accuracy % per domain and overall, then call precision and the 0-2 response scores."""
    if "by_mode" in summary:
        return [
            table.model_copy(update={"title": mode})
            for mode, s in summary["by_mode"].items()
            for table in result_tables(s)
        ]
    if not summary.get("n"):
        return [Table(notes=["(no ComplexEval records)"])]
    domains = list(summary["by_domain"])
    cells = [f"{_pct(d['success_rate'])} / {_pct(d['call_accuracy'])}" for d in summary["by_domain"].values()]
    response = summary["response"]
    scores = [
        f"{response[k]['mean']:.2f}" if k in response and response[k]["mean"] is not None else "-"
        for k in ("completeness", "correctness")
    ]
    row = [
        summary["mode"],
        *cells,
        f"{_pct(summary['success_rate'])} / {_pct(summary['call_accuracy'])}",
        _pct(summary["call_precision"]),
        *scores,
    ]
    notes = []
    if summary.get("success_rate_loaded") is not None and summary.get("warnings"):
        loaded = _pct(summary["success_rate_loaded"])
        notes.append(f"success over the {summary['n']} loaded samples: {loaded}")
    notes.extend(f"warning: {w}" for w in summary.get("warnings", []))
    columns = ["mode", *domains, "Overall", "Call precision", "Compl.", "Corr."]
    figures: list[Align] = ["right"] * (len(columns) - 1)
    return [Table(columns=columns, rows=[row], align=["left", *figures], notes=notes)]
