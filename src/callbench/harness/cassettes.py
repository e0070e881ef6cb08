"""``--record DIR`` and ``--replay DIR`` in a run: the cassette opened, the suites' MCP executors taped,
the tool listings kept or replayed, and the cassette's hash in ``run.json``.

The cassette itself (folder layout, matching, miss policies) is :mod:`callbench.executors.cassette`.
Here, before anything loads, the options are checked and the folder opened (a missing, corrupt or
foreign cassette is one line); ``--tools mcp:...`` lists its server into the cassette (record) or
from it (replay: nothing is started); every suite whose executor is an MCP server is checked
against the cassette (suite and registry hashes) and its executor wrapped; ``run.json`` gets
``options.cassette`` (mode, folder, miss policy, hash), whose ``hash`` is brought up to date when the
run ends.

Resume rules: ``--record`` may change on resume (recording only watches the live server's answers;
what the model sees is the same), ``--replay`` and ``--replay-miss`` must match (a replayed answer is
the live one only as far as the cassette is faithful, so a run is never half live and half replayed,
nor replayed from two cassettes). A resumed replay is refused when the cassette changed since.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from callbench.errors import ConfigError, UserError
from callbench.executors.base import run_sync
from callbench.executors.cassette import (
    Cassette,
    CassetteError,
    MissPolicy,
    TapedExecutor,
    list_server,
    record_listing,
    recorded_tool_source,
    replayed_tool_source,
)
from callbench.executors.http_tape import tape_http_tools
from callbench.executors.mcp import McpExecutor, McpToolSource
from callbench.harness.config import RunConfig
from callbench.harness.runfolder import read_header, write_header
from callbench.mcp.client import McpServerSpec
from callbench.suites.suite import Suite
from callbench.types.manifest import ToolSourceManifest
from callbench.types.records import RunHeader

OPTION_KEY = "cassette"
"""``run.json``: ``options.cassette``."""


@dataclass
class RunCassette:
    """The cassette of one run (or one resumed session of it)."""

    cassette: Cassette
    flag: str
    """``--record DIR`` or ``--replay DIR``, for messages."""
    hash_at_start: str

    @property
    def mode(self) -> str:
        return self.cassette.mode

    def describe(self) -> dict[str, Any]:
        """What ``run.json`` keeps (``options.cassette``)."""
        folder = self.cassette.folder
        return {
            "mode": self.mode,
            "folder": str(folder.resolve()),
            "miss": self.cassette.miss if self.mode == "replay" else None,
            "hash": self.hash_at_start if self.mode == "replay" else None,
        }

    # -- tool sources ---------------------------------------------------------------------------
    def tool_source(self, spec_text: str) -> McpToolSource:
        """``--tools mcp:SPEC``: the listing recorded now (record) or read from the cassette (replay,
        nothing started)."""
        spec = McpServerSpec.parse(spec_text)
        if self.mode == "replay":
            return replayed_tool_source(self.cassette, spec)
        return recorded_tool_source(self.cassette, run_sync(list_server(spec)))

    def bind(self, suites: list[Suite], override: Any) -> None:
        """Tape every suite whose executor is a live MCP server, and the HTTP requests of every other
        suite's own tools (:mod:`callbench.executors.http_tape`); one line when no suite has either."""
        if override is not None:
            raise ConfigError(
                f"{self.flag}: --executor replaces the suites' MCP tool servers; give one of them"
            )
        manifests: dict[str, ToolSourceManifest] = {}
        bound = 0
        for suite in suites:
            executor = suite.executor
            if isinstance(executor, TapedExecutor):  # a Suite object run before with a cassette
                executor = executor.inner
            if not isinstance(executor, McpExecutor):
                bound += tape_http_tools(self.cassette, suite)  # its Python tools' HTTP requests
                continue
            self.cassette.check_suite(suite, executor.spec.text)
            listed = suite.metadata.get("tool_manifest")
            if not isinstance(listed, ToolSourceManifest):
                # a suite bringing its own contracts (mcp-git): its server's manifest entry, recorded
                # from a listing now, or the recorded one (no server started)
                key = executor.spec.text
                if key not in manifests:
                    manifests[key] = self._manifest(executor)
                suite.metadata["tool_manifest"] = manifests[key]
            suite.executor = TapedExecutor(executor, self.cassette, suite.name)
            bound += 1
        if not bound:
            raise ConfigError(
                f"{self.flag}: no suite of this run calls an MCP tool server or runs tools of its own (a "
                "cassette keeps the exchanges with --tools mcp:..., a suite such as mcp-git, and the "
                "HTTP requests of a suite's Python tools)"
            )
        if self.mode == "record":
            self.cassette.write_index()  # the suites and listings, before any case

    def _manifest(self, executor: McpExecutor) -> ToolSourceManifest:
        if self.mode == "replay":
            return self.cassette.manifest(executor.spec)
        executor.preflight()  # what the server needs, said in one line (a replay needs none of it)
        listing = run_sync(list_server(executor.spec, connect_timeout_s=executor.connect_timeout_s))
        return record_listing(self.cassette, listing)

    # -- run.json -------------------------------------------------------------------------------
    def note(self, header: RunHeader, run_dir: Path | None = None) -> None:
        """Put the cassette in ``header.options``; for a resumed run (``run_dir``: ``header`` is the one
        it started with), refuse a replay whose cassette changed since the run last ended."""
        before = header.options.get(OPTION_KEY)
        if run_dir is not None and isinstance(before, dict) and before.get("mode") == self.mode:
            known = before.get("hash_at_end") or before.get("hash")
            if self.mode == "replay" and known and known != self.hash_at_start:
                raise UserError(
                    f"{run_dir}: cannot resume: the cassette {self.cassette.folder} changed since the run "
                    f"(hash {str(known)[:12]}…, now {self.hash_at_start[:12]}…); start a new run"
                )
            return
        header.options[OPTION_KEY] = self.describe()

    def finish(self, run_dir: Path) -> None:
        """When the run ends: the index absorbs the journal, and ``run.json`` gets the cassette's hash
        as it is now (``hash`` for a recording, ``hash_at_end`` when a replay's ``live`` misses added
        to it)."""
        cassette = self.cassette
        if cassette.mode == "record" or cassette.added:
            cassette.write_index()
        header = read_header(run_dir)
        entry = dict(header.options.get(OPTION_KEY) or self.describe())
        if cassette.mode == "record":
            entry["hash"] = cassette.hash
        elif cassette.added:
            entry["hash_at_end"] = cassette.hash
        else:
            return
        header.options[OPTION_KEY] = entry
        write_header(run_dir, header)


def open_run_cassette(config: RunConfig) -> RunCassette | None:
    """The run's cassette (``None`` without ``--record``/``--replay``); a bad combination of options or
    an unusable folder is one line, before anything loads."""
    if config.record is None and config.replay is None:
        if config.replay_miss != "strict":
            raise ConfigError(f"--replay-miss {config.replay_miss} applies to --replay DIR")
        return None
    if config.record is not None and config.replay is not None:
        raise ConfigError(
            "--record and --replay: give one (--replay DIR --replay-miss live adds the misses to DIR)"
        )
    if config.backend != "local":
        raise ConfigError("--record and --replay run the cases in this process: not with --backend ray")
    if config.replay is not None:
        miss = cast(MissPolicy, config.replay_miss)  # checked against REPLAY_MISSES by the config
        cassette = Cassette.for_replay(Path(config.replay), miss)
        flag = f"--replay {config.replay}"
    else:
        assert config.record is not None
        if config.replay_miss != "strict":
            raise ConfigError(f"--replay-miss {config.replay_miss} applies to --replay DIR, not --record")
        cassette = Cassette.for_record(Path(config.record))
        flag = f"--record {config.record}"
    return RunCassette(cassette, flag, cassette.hash)


__all__ = ["CassetteError", "RunCassette", "open_run_cassette"]
