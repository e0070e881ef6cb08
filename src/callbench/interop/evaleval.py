"""A stored run as Every Eval Ever records (``callbench export evaleval RUN -o DIR``): EvalEval's
schema v0.2.0, one file per suite at ``DIR/data/{benchmark}/{developer}/{model}/{uuid}.json``.

Each file holds the run's results on one suite (the benchmark): one ``evaluation_results`` entry per
scorer and harness mode, its ``score_details`` the strict accuracy on that suite with its interval
(``uncertainty.confidence_interval``: the run's interval method and confidence) and standard error,
and the counts in ``details``. Strict tiers and diagnostics stay apart: a diagnostic scorer's entry
and each tier's mean partial credit are entries of their own, named ``... (diagnostic)``.

``model_info`` names the model as the run did (``provider:model`` split into developer and model; a
built-in agent is developer ``callbench``); ``inference_engine`` is the local serving engine of the
run's endpoint preset (vLLM, SGLang, Ollama, llama.cpp...) or callbench itself for a built-in agent,
``inference_platform`` the remote API's provider. The file name is a UUID derived from the run id and
the suite, so exporting a run again rewrites the same files.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from callbench.interop.atif import safe_name
from callbench.interop.source import ExportSource, read_for_export, split_model
from callbench.types.records import SuiteInfo
from callbench.types.summary import Stratum
from callbench.types.version import __version__

SCHEMA_VERSION = "0.2.0"
NAMESPACE = uuid.UUID("a3f6a0a4-6c33-4a53-8f0f-2a7f5d9e4b17")
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")
ENGINES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "ollama": "Ollama",
    "llamacpp": "llama.cpp",
    "llamacpp-python": "llama-cpp-python",
    "lmstudio": "LM Studio",
    "tgi": "Text Generation Inference",
    "hf": "transformers",
}
"""callbench's endpoint presets that are local serving engines -> the engine's name."""
DEVELOPERS = {
    "openai": "openai",
    "azure": "openai",
    "anthropic": "anthropic",
    "gemini": "google",
    "google": "google",
}
"""API providers whose models are their own (the developer is the provider)."""


@dataclass
class EvalEvalExport:
    """What ``export evaleval`` wrote: one file per suite."""

    folder: Path
    files: list[Path]


def export_evaleval(
    run_dir: str | Path,
    out: str | Path | None = None,
    *,
    organization: str = "unknown",
    relationship: str = "third_party",
) -> EvalEvalExport:
    """Write the run in ``run_dir`` as EvalEval records under ``out`` (default ``RUN_DIR/evaleval``).

    Args:
        organization: ``source_metadata.source_organization_name``: who ran the evaluation.
        relationship: ``evaluator_relationship`` to the model (first_party, third_party,
            collaborative, other).
    """
    from callbench.errors import UserError

    if relationship not in RELATIONSHIPS:
        raise UserError(f"--relationship must be one of {', '.join(RELATIONSHIPS)}, not {relationship!r}")
    source = read_for_export(run_dir)
    folder = Path(out) if out is not None else source.path / "evaleval"
    info = model_info(source)
    developer, model = info["developer"], info["name"]
    files = []
    retrieved = f"{time.time():.6f}"
    for suite in source.header.suites or [_bare_suite(name, source) for name in source.suites]:
        record = evaluation_record(source, suite, info, retrieved, organization, relationship)
        if not record["evaluation_results"]:
            continue
        name = uuid.uuid5(NAMESPACE, f"{source.header.run_id}/{source.header.created_at}/{suite.name}")
        target = (
            folder / "data" / safe_name(suite.name) / safe_name(developer) / safe_name(model) / f"{name}.json"
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        files.append(target)
    if not files:
        raise UserError(
            f"{source.path}: no scored results to export (no completed case, or a summary without "
            f"statistics: `callbench score {source.path}` rebuilds it)"
        )
    return EvalEvalExport(folder, files)


def _bare_suite(name: str, source: ExportSource) -> SuiteInfo:
    """A suite a header written without suite entries still names through its records."""
    return SuiteInfo(name=name, spec=name, hash="", registry_hash="", prompt_template_hash="", n_cases=0)


def model_info(source: ExportSource) -> dict[str, Any]:
    """``model_info``: name, id (``developer/model``), developer, and the platform or engine."""
    provider, model = split_model(source.header.model)
    if "/" in model:  # a hub-style name: the developer is its organisation
        developer, name = model.split("/", 1)
    elif provider == "callbench":
        developer, name = "callbench", model
    else:
        developer, name = DEVELOPERS.get(provider, "unknown"), model
    info: dict[str, Any] = {"name": name, "id": f"{developer}/{name}", "developer": developer}
    if provider == "callbench":
        info["inference_engine"] = {"name": "callbench", "version": source.header.callbench_version}
    elif provider in ENGINES:
        info["inference_engine"] = {"name": ENGINES[provider]}
    else:
        info["inference_platform"] = provider
    info["additional_details"] = {"callbench_model": source.header.model, "provider": source.header.provider}
    return info


def evaluation_record(
    source: ExportSource,
    suite: SuiteInfo,
    info: dict[str, Any],
    retrieved: str,
    organization: str,
    relationship: str,
) -> dict[str, Any]:
    """The EvalEval object of the run's results on ``suite``."""
    header = source.header
    results: list[dict[str, Any]] = []
    for stratum in source.statistics.strata:
        group = stratum.by_suite.get(suite.name)
        if group is None or not group.n:
            continue
        results.append(_strict_result(source, suite, stratum, group.n, group.passed, group.accuracy))
        partial = _partial_mean(source, suite.name, stratum.tier, stratum.harness_mode)
        if partial is not None:
            results.append(_partial_result(source, suite, stratum, *partial))
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"{suite.name}/{info['id'].replace('/', '_')}/{retrieved}",
        "evaluation_timestamp": header.created_at,
        "retrieved_timestamp": retrieved,
        "source_metadata": {
            "source_name": f"callbench {suite.name}",
            "source_type": "evaluation_run",
            "source_organization_name": organization,
            "evaluator_relationship": relationship,
        },
        "model_info": info,
        "evaluation_results": results,
    }


def _source_data(source: ExportSource, suite: SuiteInfo) -> dict[str, Any]:
    return {
        "dataset_name": suite.name,
        "source_type": "other",
        "additional_details": {
            "suite_spec": suite.spec,
            "suite_hash": suite.hash,
            "registry_hash": suite.registry_hash,
            "prompt_template_hash": suite.prompt_template_hash,
            "samples_number": suite.n_cases,
            "suite_version": suite.version,
            "source": suite.source,
            "data_versions": suite.data_versions,
            "plugin": suite.plugin,
            "plugin_version": suite.plugin_version,
        },
    }


def _generation(source: ExportSource, suite: SuiteInfo) -> dict[str, Any]:
    header = source.header
    settings = header.settings or {}
    args: dict[str, Any] = {}
    if isinstance(settings.get("temperature"), int | float):
        args["temperature"] = settings["temperature"]
    if isinstance(settings.get("max_tokens"), int) and settings["max_tokens"] >= 1:
        args["max_tokens"] = settings["max_tokens"]
    args["reasoning"] = bool(settings.get("reasoning_effort") or settings.get("thinking_budget"))
    args["agentic_eval_config"] = {
        "additional_details": {
            "harness": f"callbench {__version__}",
            "harness_mode": header.harness_mode,
            "harness_assistance": header.harness_assistance,
            "executor": suite.executor,
            "retrieval_k": header.suite_k.get(suite.name),
        }
    }
    args["max_attempts"] = 1
    return {
        "generation_args": args,
        "additional_details": {
            "settings": settings,
            "trials": header.trials,
            "run_id": header.run_id,
            "callbench_version": header.callbench_version,
        },
    }


def _metric(description: str) -> dict[str, Any]:
    return {
        "evaluation_description": description,
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0.0,
        "max_score": 1.0,
    }


def _strict_result(
    source: ExportSource, suite: SuiteInfo, stratum: Stratum, n: int, passed: int, accuracy: Any
) -> dict[str, Any]:
    diagnostic = source.diagnostic(stratum.tier)
    p = accuracy.estimate
    name = f"{stratum.tier} ({stratum.harness_mode})" + (" (diagnostic)" if diagnostic else "")
    what = "diagnostic pass rate (never a pass criterion)" if diagnostic else "strict pass rate"
    tier = source.summary.tiers.get(stratum.tier)
    return {
        "evaluation_name": name,
        "source_data": _source_data(source, suite),
        "evaluation_timestamp": source.header.created_at,
        "metric_config": _metric(
            f"callbench {stratum.tier}: {what} over completed cases of {suite.name}, harness mode "
            f"{stratum.harness_mode}; infrastructure errors are excluded"
        ),
        "score_details": {
            "score": p,
            "details": {
                "tier": stratum.tier,
                "harness_mode": stratum.harness_mode,
                "diagnostic": diagnostic,
                "n": n,
                "passed": passed,
                "n_error_excluded": tier.n_error_excluded if tier is not None else None,
                "n_not_applicable": tier.n_not_applicable if tier is not None else None,
            },
            "uncertainty": {
                "standard_error": {"value": math.sqrt(p * (1 - p) / n) if n else 0.0, "method": "analytic"},
                "confidence_interval": {
                    "lower": accuracy.low,
                    "upper": accuracy.high,
                    "confidence_level": source.statistics.confidence,
                    "method": accuracy.method,
                },
                "num_samples": n,
            },
        },
        "generation_config": _generation(source, suite),
    }


def _partial_mean(source: ExportSource, suite: str, tier: str, mode: str) -> tuple[float, int] | None:
    values = [
        r.verdicts[tier].partial
        for r in source.records
        if r.suite == suite
        and r.harness_mode == mode
        and r.status == "completed"
        and tier in r.verdicts
        and r.verdicts[tier].applicable
        and r.verdicts[tier].partial is not None
    ]
    numbers = [v for v in values if v is not None]
    return (sum(numbers) / len(numbers), len(numbers)) if numbers else None


def _partial_result(
    source: ExportSource, suite: SuiteInfo, stratum: Stratum, mean: float, n: int
) -> dict[str, Any]:
    return {
        "evaluation_name": f"{stratum.tier} partial credit ({stratum.harness_mode}) (diagnostic)",
        "source_data": _source_data(source, suite),
        "evaluation_timestamp": source.header.created_at,
        "metric_config": _metric(
            f"callbench {stratum.tier}: mean diagnostic partial credit over completed cases of "
            f"{suite.name} (never a pass criterion; not the tier's score)"
        ),
        "score_details": {
            "score": mean,
            "details": {
                "tier": stratum.tier,
                "harness_mode": stratum.harness_mode,
                "diagnostic": True,
                "n": n,
            },
            "uncertainty": {"num_samples": n},
        },
        "generation_config": _generation(source, suite),
    }
