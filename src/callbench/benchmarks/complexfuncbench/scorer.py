"""Scorer ``complexeval``: ComplexFuncBench's ComplexEval, re-played from the trace.

The scorer groups the trace's calls by round, feeds them to the same :class:`Episode` the replay
executor used, and reports success, call counts, the first error and (with a judge) response
completeness/correctness. ``score`` is a pure function of (case, trace) plus cached judge verdicts;
``ascore`` also asks the judge, turn by turn, for verdicts it does not know yet (during a run the
replay executor has already asked them: both use the same judge and cache).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from itertools import groupby
from typing import Any

from callbench.benchmarks.complexfuncbench.data import CfbSample
from callbench.benchmarks.complexfuncbench.definitions import CfbSettings, PredCall
from callbench.benchmarks.complexfuncbench.embedders import Embedder, make_embedder
from callbench.benchmarks.complexfuncbench.engine import Episode
from callbench.benchmarks.complexfuncbench.judge import Judge, LiveJudge, judge_lookup, shared_judge
from callbench.benchmarks.complexfuncbench.metrics import aggregate_records, result_tables
from callbench.benchmarks.complexfuncbench.names import NameMap
from callbench.benchmarks.complexfuncbench.outcome import EpisodeOutcome, finish
from callbench.benchmarks.complexfuncbench.suite import case_sample, case_settings
from callbench.plugin import Aggregate, Case, CaseRecord, Reason, Scorer, Trace, Verdict


def build_judge(config: dict[str, Any]) -> Judge | None:
    """A judge from the suite's ``complexeval`` options (``judge: provider:model``), or ``None``.

    The same instance the replay executor uses
    (see :func:`callbench.benchmarks.complexfuncbench.judge.shared_judge`).
    """
    spec = config.get("judge")
    return shared_judge(str(spec), config.get("judge_cache")) if spec else None


def trace_turns(trace: Trace, names: NameMap) -> list[list[PredCall]]:
    """The trace's calls as model turns (one list per round), names mapped back to the originals."""
    calls = sorted(trace.calls, key=lambda c: c.index)
    return [
        [PredCall(c.index, names.original(c.tool), c.arguments, c.parse_error) for c in group]
        for _, group in groupby(calls, key=lambda c: c.round)
    ]


class ComplexEvalScorer(Scorer):
    """ComplexEval over the replay trace, in ``faithful`` or ``improved`` mode."""

    name = "complexeval"

    def __init__(
        self, suite: Any = None, *, judge: Judge | None = None, overrides: dict[str, Any] | None = None
    ):
        config = dict(getattr(suite, "metadata", {}).get("complexeval", {})) if suite is not None else {}
        config.update(overrides or {})
        self.overrides = {
            k: v for k, v in config.items() if k in ("mode", "embedder", "min_similarity") and v is not None
        }
        self.judge = judge if judge is not None else build_judge(config)
        self._embedders: dict[str, Embedder] = {}
        self._samples: dict[int, tuple[Case, CfbSample, NameMap]] = {}

    def _sample(self, case: Case) -> tuple[CfbSample, NameMap]:
        # Parsing the stored sample is the costliest step of scoring a short trace: once per case.
        hit = self._samples.get(id(case))
        if hit is None or hit[0] is not case:
            sample, names = case_sample(case)
            hit = self._samples[id(case)] = (case, sample, names)
        return hit[1], hit[2]

    def _embedder(self, spec: str) -> Embedder:
        if spec not in self._embedders:
            self._embedders[spec] = make_embedder(spec)
        return self._embedders[spec]

    def replay(
        self, case: Case, trace: Trace, asked: dict[str, bool] | None = None
    ) -> tuple[Episode, EpisodeOutcome, CfbSettings]:
        """Re-play the trace through a fresh episode (judge verdicts from the cache, or ``asked``)."""
        sample, names = self._sample(case)
        settings = case_settings(case, self.overrides)
        lookup = judge_lookup(self.judge, sample, asked) if self.judge is not None else None
        episode = Episode(sample, settings, self._embedder(settings.embedder), judge=lookup)
        for turn in trace_turns(trace, names):
            episode.play_turn(turn)
        return episode, finish(episode, trace.stop_reason), settings

    def score(self, case: Case, trace: Trace) -> Verdict:
        """Score from the trace and cached judge verdicts (no judge request is made)."""
        episode, outcome, settings = self.replay(case, trace)
        return self._verdict(case, trace, episode, outcome, settings, response=self._response_status(trace))

    async def ascore(self, case: Case, trace: Trace) -> Verdict:
        """Score, asking the judge, turn by turn, for call verdicts and response scores it does not know."""
        if self.judge is None:
            episode, outcome, settings = self.replay(case, trace)
        else:
            sample, names = self._sample(case)
            settings = case_settings(case, self.overrides)
            live = LiveJudge(self.judge, sample)
            episode = Episode(sample, settings, self._embedder(settings.embedder), judge=live.lookup)
            for turn in trace_turns(trace, names):
                await live.play_turn(episode, turn)
            outcome = finish(episode, trace.stop_reason)
        response = await self._response_scores(episode.sample, trace, settings)
        return self._verdict(case, trace, episode, outcome, settings, response=response)

    # ------------------------------------------------------------ response judge

    def _response_status(self, trace: Trace) -> dict[str, Any]:
        if not trace.final_text.strip():
            return {"status": "no_answer", "completeness": None, "correctness": None}
        if self.judge is None:
            return {"status": "skipped: no judge configured", "completeness": None, "correctness": None}
        return {"status": "not judged (offline score)", "completeness": None, "correctness": None}

    async def _response_scores(
        self, sample: CfbSample, trace: Trace, settings: CfbSettings
    ) -> dict[str, Any]:
        status = self._response_status(trace)
        if self.judge is None or status["status"] == "no_answer":
            return status
        gold_context = _gold_conversation(sample)
        completeness, correctness = await asyncio.gather(
            self.judge.score_response("completeness", f"User request:\n{sample.query}", trace.final_text),
            self.judge.score_response("correctness", gold_context, trace.final_text),
        )
        judged = completeness is not None and correctness is not None
        return {
            "status": "scored" if judged else "judge_failed",
            "completeness": completeness,
            "correctness": correctness,
        }

    # ------------------------------------------------------------ verdict

    def _verdict(
        self,
        case: Case,
        trace: Trace,
        episode: Episode,
        outcome: EpisodeOutcome,
        settings: CfbSettings,
        *,
        response: dict[str, Any],
    ) -> Verdict:
        reasons = [
            Reason(code=e.kind, message=f"{e.kind}: {e.detail}".rstrip(": ")) for e in outcome.terminal
        ]
        judge = (
            self.judge.describe() if self.judge else {"judge_model": None, "judge": "skipped: not configured"}
        )
        details = {
            "mode": settings.mode,
            "embedder": self._embedder(settings.embedder).name,
            "min_similarity": settings.min_similarity,
            **judge,
            "domain": episode.sample.domain,
            "template": episode.sample.template,
            "success": outcome.success,
            "first_error": outcome.first_error,
            "infra": outcome.infra,
            "terminal_errors": [e.kind for e in outcome.terminal],
            **outcome.counts(),
            "errors": [
                {"turn": t, "kind": e.kind, "param": e.param, "gold": g} for t, e, g in episode.errors
            ],
            "calls": [
                {
                    "index": r.index,
                    "status": r.status,
                    "gold": r.gold,
                    "method": r.method,
                    "error": r.error.kind if r.error else None,
                    "counted": r.counted,
                    "judge": r.judge,
                }
                for r in episode.results
            ],
            "judge_pending": len(episode.judge_pending),
            "response": response,
        }
        warnings = (
            [f"{len(episode.judge_pending)} call pair(s) await a judge verdict; run the async scorer"]
            if episode.judge_pending
            else []
        )
        rationale = (
            f"success ({outcome.correct_calls}/{outcome.gold_calls} gold calls)"
            if outcome.success
            else f"fail: {outcome.first_error} ({outcome.correct_calls}/{outcome.gold_calls} gold calls)"
        )
        return Verdict(
            scorer=self.name,
            passed=outcome.success,
            reasons=reasons,
            rationale=rationale,
            warnings=warnings,
            details=details,
            metrics=verdict_metrics(outcome, settings, response),
        )

    def aggregate(self, records: Iterable[CaseRecord]) -> Aggregate:
        """Pooled run-level metrics.

        See :func:`callbench.benchmarks.complexfuncbench.metrics.aggregate_records`.
        """
        labels = {
            "embedder": self._embedder(self.overrides.get("embedder", "char-ngram")).name,
            "judge": self.judge.label if self.judge else "skipped: not configured",
        }
        summary = aggregate_records(records, scorer=self.name, labels=labels)
        if not summary.get("n") and "by_mode" not in summary:
            return Aggregate(summary)
        # the tables are shown by the CLI and the reports under the run summary
        return Aggregate(summary, result_tables(summary))


def verdict_metrics(
    outcome: EpisodeOutcome, settings: CfbSettings, response: dict[str, Any]
) -> dict[str, float]:
    """Everything run-level aggregation needs, as numbers (summaries keep metrics, not details)."""
    metrics = {k: float(v) for k, v in outcome.counts().items()}
    metrics.update(
        success=float(outcome.success),
        infra=float(outcome.infra),
        faithful=float(settings.mode == "faithful"),
    )
    if outcome.first_error:
        metrics[f"first_error:{outcome.first_error}"] = 1.0
    for kind in ("completeness", "correctness"):
        if response.get(kind) is not None:
            metrics[kind] = float(response[kind])
    metrics[f"response:{response['status'].split(':')[0]}"] = 1.0
    return metrics


def _gold_conversation(sample: CfbSample) -> str:
    parts = [f"User request:\n{sample.query}"]
    for k, step in enumerate(sample.steps, start=1):
        for call in step:
            parts.append(
                f"Step {k} call: {json.dumps({'name': call.name, 'arguments': call.arguments})}\n"
                f"API response: {json.dumps(call.response, ensure_ascii=False)}"
            )
    return "\n\n".join(parts)
