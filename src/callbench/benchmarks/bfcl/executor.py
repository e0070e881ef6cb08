"""Executor ``bfcl-multi-turn``: BFCL's stateful backends, scripted user turns, 20-step cap.

The session executes calls against the backend classes of the installed ``bfcl-eval``
package and drives the conversation through the session hook ``after_turn``:

* a model round with calls is one BFCL *step*; more than 20 steps in one turn force-quit the
  entry (BFCL's MAXIMUM_STEP_LIMIT), which the scorer then fails as ``force_terminated``;
* a round without calls ends the turn; the session appends the next user turn, or for
  ``miss_func`` turns offers the withheld functions with BFCL's "I have updated some more
  functions" message.

The round -> turn map is stored in the snapshot (``trace.final_state["bfcl"]``) for the scorer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.benchmarks.bfcl.backend import World, call_outcome
from callbench.benchmarks.bfcl.multi_turn_cases import ADDED_FUNCTIONS_PROMPT, STEP_LIMIT
from callbench.benchmarks.bfcl.schema import contract_from_doc
from callbench.plugin import DEFAULT_TURN, Executor, ExecutorSession, Message, ToolOutcome, TurnDirective

if TYPE_CHECKING:
    from callbench.plugin import Case, Suite


class BfclMultiTurnSession(ExecutorSession):
    """One multi-turn entry: live backend instances plus turn bookkeeping."""

    def __init__(self, case: Case) -> None:
        config = case.executor_config
        self.world = World(config["involved_classes"], config["initial_config"], config["long_context"])
        self.later_turns: list[list[dict[str, Any]]] = config.get("later_turns", [])
        self.withheld: dict[str, list[dict[str, Any]]] = config.get("withheld_docs", {})
        self.category = case.category
        self.turn = 0
        self.steps = 0
        self.round_turns: list[int] = []
        self.force_quit = False

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Execute one call; backend errors come back as BFCL's error text."""
        return call_outcome(self.world.call(name, (), arguments), self.turn)

    async def after_turn(self, had_calls: bool) -> TurnDirective:
        """Count steps, end turns, hand the conversation the next user turn."""
        self.round_turns.append(self.turn)
        if had_calls:
            self.steps += 1
            if self.steps > STEP_LIMIT:
                self.force_quit = True
                return TurnDirective(action="stop")
            return DEFAULT_TURN
        if self.turn >= len(self.later_turns):
            return DEFAULT_TURN  # last turn answered: the episode ends normally
        self.turn += 1
        self.steps = 0
        messages = self.later_turns[self.turn - 1]
        added = tuple(contract_from_doc(doc, self.category) for doc in self.withheld.get(str(self.turn), ()))
        if added:
            messages = [{"role": "user", "content": ADDED_FUNCTIONS_PROMPT}]
        return TurnDirective(
            action="continue",
            offer=added,
            messages=tuple(Message(role=m["role"], content=m.get("content") or "") for m in messages),
        )

    def snapshot(self) -> dict[str, Any]:
        """Turn bookkeeping for the scorer (JSON-safe)."""
        return {
            "bfcl": {
                "round_turns": list(self.round_turns),
                "force_quit": self.force_quit,
                "turns_total": 1 + len(self.later_turns),
            }
        }


class BfclMultiTurnExecutor(Executor):
    """Catalog entry ``bfcl-multi-turn``."""

    name = "bfcl-multi-turn"

    def start(self, case: Case, workdir: Path, suite: Suite | None = None) -> ExecutorSession:
        """A fresh session with newly loaded backend instances."""
        return BfclMultiTurnSession(case)
