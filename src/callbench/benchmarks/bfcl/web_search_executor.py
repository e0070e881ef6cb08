"""Executor ``bfcl-web-search``: BFCL's two web search tools for one entry, and its 20-step cap.

A session holds the entry's :class:`~callbench.benchmarks.bfcl.web_search.WebSearchAPI` (the
``no_snippet`` variant leaves snippets out; improved mode's failure injection, seeded per case) and
counts BFCL *steps*: a model round with calls is one; more than 20 force-quit the entry, as BFCL's
inference loop does (the entry is then judged on whatever answer it gave, usually none). A round with
a call whose arguments are not a JSON object ends the entry, as it ends BFCL's turn: the harness
answers the call with its error, and the round is the last message BFCL's checker reads.

The executor is the suite's own (see :mod:`callbench.benchmarks.bfcl.web_search_cases`), so in a
suite that also holds other BFCL categories it would be asked to start their cases too: those cases
name their own executor (``contract`` for single-turn entries), so they never reach it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.benchmarks.bfcl.multi_turn_cases import STEP_LIMIT
from callbench.benchmarks.bfcl.web_search import FailureInjection, WebSearchAPI, tool_result_failed
from callbench.plugin import DEFAULT_TURN, Executor, ExecutorSession, ToolOutcome, TurnDirective, UserError

if TYPE_CHECKING:
    from callbench.plugin import Case, Suite, ToolCall


class WebSearchSession(ExecutorSession):
    """One web search entry: its tools, its step count and the failures injected."""

    def __init__(self, case: Case, settings: dict[str, Any]) -> None:
        rate = float(settings.get("web_failure_rate") or 0.0)
        seed = int(settings.get("web_failure_seed") or 0)
        self.failures = FailureInjection(rate=rate, seed=seed, case_id=case.id)
        self.api = WebSearchAPI(bool(case.executor_config.get("show_snippet", True)), self.failures)
        self.steps = 0
        self.force_quit = False
        self.undecodable = False
        """The round in progress has a call whose arguments are not a JSON object."""
        self.ended_undecodable = False

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run one call; results and failures come back as BFCL's text."""
        injected = len(self.failures.injected)
        text = await self.api.call(name, arguments)
        failed = tool_result_failed(text)
        annotations: dict[str, Any] = {}
        if len(self.failures.injected) > injected:
            annotations["injected_failure"] = self.failures.injected[-1]["kind"]
        return ToolOutcome(
            ok=not failed, result=text, error=text if failed else None, content=text, annotations=annotations
        )

    async def begin_round(self, round_index: int, calls: Sequence[ToolCall]) -> None:
        """Note whether every call of the round decoded."""
        self.undecodable = any(call.arguments is None for call in calls)

    async def after_turn(self, had_calls: bool) -> TurnDirective:
        """Count steps; past BFCL's limit the entry is force-quit. A round whose calls do not all
        decode ends the entry, as it ends BFCL's turn (its text is then the judged message)."""
        if had_calls and self.undecodable:
            self.ended_undecodable = True
            return TurnDirective(action="stop")
        if had_calls:
            self.steps += 1
            if self.steps > STEP_LIMIT:
                self.force_quit = True
                return TurnDirective(action="stop")
        return DEFAULT_TURN

    def snapshot(self) -> dict[str, Any]:
        """Steps, force-quit and the injected failures, for the scorer (JSON-safe)."""
        out: dict[str, Any] = {"steps": self.steps, "force_quit": self.force_quit}
        if self.ended_undecodable:
            out["ended_undecodable"] = True
        if self.failures.rate > 0:
            out["web_failures"] = self.failures.describe()
        return {"bfcl": out}


class BfclWebSearchExecutor(Executor):
    """Catalog entry ``bfcl-web-search``."""

    name = "bfcl-web-search"

    def start(self, case: Case, workdir: Path, suite: Suite | None = None) -> ExecutorSession:
        """A fresh session with the suite's failure-injection settings."""
        if not str(case.category).startswith("web_search"):
            raise UserError(f"bfcl-web-search runs BFCL's web search entries, not {case.key or case.id!r}")
        settings = dict(suite.metadata.get("bfcl") or {}) if suite is not None else {}
        return WebSearchSession(case, settings)
