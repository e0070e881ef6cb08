"""Executor ``bfcl-memory``: BFCL's memory backends for prerequisite conversations and questions.

A session holds one entry's backend instance (:class:`~callbench.benchmarks.bfcl.memory_backends.MemoryWorld`)
and plays BFCL's inference loop around it:

* **snapshots in the run folder.** ``<run folder>/bfcl_memory/trial-<t>/<category>/`` holds, per
  prerequisite conversation, the snapshot bfcl-eval's backend flushed at its end
  (``<entry id>.json``, bfcl-eval's own format), and ``chain.jsonl``, one line per conversation
  started and per snapshot written, in the order they happened;
* **what an entry starts from.** Conversation k of a chain starts from the snapshot of the last
  conversation before it (in chain order) that wrote one; the first from an empty memory. A question
  starts from the last snapshot of its chain. In BFCL's order (the chain in turn, every conversation
  completing) this is the memory BFCL hands the entry (each conversation loads its scenario's latest
  flush); a conversation that failed wrote nothing, in both. Choosing by chain order rather than by
  time also holds when a resumed run replays a failed conversation after later ones;
* **the opening** (:meth:`ExecutorSession.opening`): BFCL's memory system prompt with the memory as
  loaded, before the case's first message (for a question, before BFCL's answer-format message);
* **turns and steps** as in BFCL's multi-turn loop: a round with calls is a step; more than 20 steps
  in a turn force-quit the entry; a round whose calls do not all decode (arguments that are not a JSON
  object) ends the turn; a round without calls ends the turn and the next user turn follows;
* **the end of a prerequisite conversation** (last turn answered, or force-quit): the backend's flush,
  kept in the run folder. An entry that fails (provider error, time limit) writes nothing.

The phases (:mod:`callbench.benchmarks.bfcl.memory_cases`) play a chain before its questions. An entry
whose predecessors were not played in the run folder (left out with ``--case``, cut by ``--limit``) is
an error record (``case_setup``) naming the conversations it lacks; one whose predecessors all ran but
some failed starts, as in BFCL, from the last snapshot there is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbench.benchmarks.bfcl import memory_backends
from callbench.benchmarks.bfcl.backend import call_outcome
from callbench.benchmarks.bfcl.memory_backends import (
    MemoryWorld,
    backend_of,
    encoder_label,
    snapshot_summary,
    with_memory_instruction,
)
from callbench.benchmarks.bfcl.multi_turn_cases import STEP_LIMIT
from callbench.plugin import (
    DEFAULT_TURN,
    Executor,
    ExecutorSession,
    Message,
    ToolOutcome,
    TurnDirective,
    UserError,
    case_play,
)

if TYPE_CHECKING:
    from callbench.plugin import Case, Suite, ToolCall

FOLDER = "bfcl_memory"
LOG = "chain.jsonl"
SETTINGS_KEY = "bfcl_memory"
"""``suite.metadata[SETTINGS_KEY]``: the memory settings (``embedding_model``)."""


class SnapshotStore:
    """The memory snapshots of one category and trial in the run folder."""

    def __init__(self, run_dir: Path, trial: int, category: str) -> None:
        self.folder = run_dir / FOLDER / f"trial-{trial}" / category

    def path(self, entry_id: str) -> Path:
        return self.folder / f"{entry_id}.json"

    def read(self, entry_id: str) -> str | None:
        path = self.path(entry_id)
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def write(self, entry_id: str, text: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        partial = self.folder / f".{entry_id}.json.partial"
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, self.path(entry_id))

    def log(self, event: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / LOG).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(event) + "\n")

    def started(self) -> set[str]:
        """Conversations started in this run folder (any earlier process of the run included)."""
        path = self.folder / LOG
        if not path.is_file():
            return set()
        out = set()
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                event = json.loads(line)
                if event.get("event") == "started":
                    out.add(event["id"])
        return out


class MemorySession(ExecutorSession):
    """One memory entry: a prerequisite conversation or a question."""

    def __init__(self, case: Case, workdir: Path, encoder: Any, encoder_path: str | None) -> None:
        config = case.executor_config
        self.case = case
        self.workdir = workdir
        self.kind: str = config["kind"]
        self.scenario: str = config["scenario"]
        self.chain: list[str] = list(config["chain"])
        self.position: int | None = config.get("position")
        self.later_turns: list[list[dict[str, Any]]] = list(config.get("later_turns") or [])
        self.category = case.category.removesuffix("_prereq")
        self.encoder, self.encoder_path = encoder, encoder_path
        play = case_play()
        self.trial = play.trial if play is not None else 1
        self.store = SnapshotStore(play.run_dir, self.trial, self.category) if play and play.run_dir else None
        self.world: MemoryWorld | None = None
        self.start_from: str | None = None
        self.unflushed: list[str] = []
        self.start_summary: dict[str, Any] = {}
        self.flushed: dict[str, Any] | None = None
        self.memory_in_prompt: str | None = None
        self.turn = 0
        self.steps = 0
        self.round_turns: list[int] = []
        self.force_quit = False
        self.undecodable = False
        self.ended_undecodable = False

    async def opening(self, messages: list[Message]) -> list[Message]:
        """Load the memory this entry starts from; BFCL's memory prompt in front of the conversation."""
        if self.store is None:
            raise UserError(
                f"bfcl {self.case.id}: memory entries run inside a callbench run, whose folder keeps "
                "the prerequisite conversations' snapshots"
            )
        before = self.chain[: self.position] if self.kind == "prereq" else self.chain
        started = self.store.started()
        missing = [entry for entry in before if entry not in started]
        if missing:
            raise UserError(
                f"bfcl {self.case.id}: the prerequisite conversations before it were not played in this "
                f"run ({', '.join(missing)}); run them in the same run: they are cases of "
                f"bfcl:{self.category} (earlier phases), so do not leave them out with --case or "
                "--limit (--option limit=N keeps the chains of the first N questions)"
            )
        if self.kind == "prereq":
            self.store.log({"id": self.case.id, "position": self.position, "event": "started"})
        text = None
        for entry in reversed(before):
            text = self.store.read(entry)
            if text is not None:
                self.start_from = entry
                break
            self.unflushed.append(entry)
        self.unflushed.reverse()
        self.world = MemoryWorld(self.category, self.case.id, self.scenario, self.workdir, text, self.encoder)
        self.start_summary = snapshot_summary(text)
        self.memory_in_prompt = self.world.memory_dump()
        return with_memory_instruction(messages, self.world.system_instruction(), Message.system)

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Execute one call; backend errors come back as BFCL's error text."""
        if self.world is None:  # opened outside a run's case (e.g. served): no memory was loaded
            return ToolOutcome.failure("bfcl memory: this session was not set up by a run (no memory loaded)")
        return call_outcome(self.world.call(name, arguments), self.turn)

    async def begin_round(self, round_index: int, calls: Sequence[ToolCall]) -> None:
        """Note whether every call of the round decoded (BFCL ends the turn when one does not)."""
        self.undecodable = any(call.arguments is None for call in calls)

    async def after_turn(self, had_calls: bool) -> TurnDirective:
        """Count steps, end turns, hand the conversation the next user turn, flush at the end."""
        self.round_turns.append(self.turn)
        if had_calls and not self.undecodable:
            self.steps += 1
            if self.steps <= STEP_LIMIT:
                return DEFAULT_TURN
            self.force_quit = True  # BFCL leaves the whole entry (and still flushes its memory)
            self._flush()
            return TurnDirective(action="stop")
        if had_calls:  # a round that does not decode ends BFCL's turn like a text round
            self.ended_undecodable = True
        if self.turn >= len(self.later_turns):
            self._flush()
            return TurnDirective(action="stop") if had_calls else DEFAULT_TURN
        self.turn += 1
        self.steps = 0
        messages = self.later_turns[self.turn - 1]
        return TurnDirective(
            action="continue",
            messages=tuple(Message(role=m["role"], content=m.get("content") or "") for m in messages),
        )

    def _flush(self) -> None:
        """The end of a prerequisite conversation: bfcl-eval's flush, kept in the run folder."""
        if self.kind != "prereq" or self.world is None or self.store is None:
            return
        text = self.world.flush()
        self.store.write(self.case.id, text)
        self.store.log({"id": self.case.id, "position": self.position, "event": "flushed"})
        self.flushed = snapshot_summary(text)

    def snapshot(self) -> dict[str, Any]:
        """Turn bookkeeping for the scorer and where the memory came from and went (JSON-safe)."""
        memory: dict[str, Any] = {
            "kind": self.kind,
            "scenario": self.scenario,
            "trial": self.trial,
            "start_from": self.start_from,
            "start_snapshot": self.start_summary,
            "memory_in_prompt": self.memory_in_prompt,
        }
        if self.unflushed:
            memory["prerequisites_without_snapshot"] = list(self.unflushed)
        if self.kind == "prereq":
            memory["position"] = self.position
            memory["flushed"] = self.flushed
        if self.encoder is not None:
            memory["encoder"] = encoder_label(self.encoder, self.encoder_path)
        state: dict[str, Any] = {
            "round_turns": list(self.round_turns),
            "force_quit": self.force_quit,
            "turns_total": 1 + len(self.later_turns),
            "steps": self.steps,
        }
        if self.ended_undecodable:
            state["ended_undecodable"] = True
        return {"bfcl": state, SETTINGS_KEY: memory}


class BfclMemoryExecutor(Executor):
    """Catalog entry ``bfcl-memory``."""

    name = "bfcl-memory"

    def start(self, case: Case, workdir: Path, suite: Suite | None = None) -> ExecutorSession:
        """A fresh session; the vector backend's encoder is loaded once per process and folder."""
        if case.executor_config.get("kind") not in ("prereq", "question"):
            raise UserError(f"bfcl-memory runs BFCL's memory entries, not {case.key or case.id!r}")
        encoder, path = None, None
        if backend_of(case.category) == "vector":
            settings = suite.metadata.get(SETTINGS_KEY) or {} if suite is not None else {}
            path = settings.get("embedding_model")
            if not path:
                raise UserError("bfcl memory_vector needs an embedding model: --option embedding_model=PATH")
            encoder = memory_backends.load_encoder(str(path))
        return MemorySession(case, workdir, encoder, path)
