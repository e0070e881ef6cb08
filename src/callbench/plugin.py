"""The plugin surface: what a third-party benchmark package imports from callbench.

A plugin is a package with an entry point in the ``callbench`` group whose function receives the
:class:`~callbench.catalog.Catalog` and registers suites (``catalog.suites.register(name, load)``,
``load(spec, options) -> Suite``), executors, scorers, providers and CLI commands. Everything it needs
is here, under names that stay: ``docs/plugins.md`` walks through a complete plugin
(``examples/plugin-weather/``). Anything imported from deeper modules may move between versions.

The built-in benchmarks (``callbench.benchmarks``) are held to this surface by an import-linter
contract in ``pyproject.toml``; what one of them needs beyond it is listed there, one line a reason.

The names, by group (``__all__`` keeps the same order):

* **Registering** — the catalog and one Protocol per kind of entry, saying what it is called with
  and returns (``SuiteLoader``, ``ExecutorFactory``, ``ScorerFactory``, ``ProviderFactory``,
  ``CommandSet``; ``PluginHook`` is the entry point's own ``register(catalog)``).
* **Suites and cases** — what a suite loader builds: the suite, its options and default scorers,
  cases (read from YAML or built in Python) with their expected steps and answers, tool contracts,
  and the user side of a conversation case (``UserSide``: a script of ``ScriptedTurn`` with the
  user's own ``UserCall`` s, or instructions for a simulated user).
* **Executors** — running the tools: the executor and session contracts with what their hooks take
  and return (tool calls and messages, outcomes, turn directives), the Python-function executor, and
  ``freeze`` for the immutable snapshots sessions return, and ``tool_server_replayed`` (under
  ``--replay`` no tool server reads what a session prepares for it). ``case_play`` tells a session
  being opened its case key, trial and run folder (``CasePlay``), where cases of a later ``phase``
  read what set-up cases left. ``http_client`` is how a tool
  calls a web service so that ``--record``/``--replay`` keep and answer its requests
  (``HttpClient`` for one with its own time-out or credential names, ``HttpResponse`` what it
  returns, ``HttpFault`` what it raises when no answer came); ``HttpExecutor`` runs tools that are
  plain HTTP endpoints.
* **Scorers** — judging a trace (verdicts, reasons, traces, records) and the run-level figures of
  ``Scorer.aggregate`` (``Aggregate`` and its display ``Table``), with the interval estimators the
  core's own figures use, so a plugin's figures are computed the same way; for an LLM judge of a
  scorer's, ``parse_json_object`` reads its reply and ``JudgeCache`` keeps its verdicts.
* **Providers** — a model or built-in agent of a plugin's own: the provider contract, what it is
  asked with and answers, and the error its infrastructure failures raise.
* **Errors and helpers** — the errors a plugin raises for a user's mistake (one line, no traceback)
  or a tool's refusal, ``did_you_mean`` for their hints, and the stable hashing used for cache keys.
"""

from __future__ import annotations

from callbench.catalog import (
    Catalog,
    CommandSet,
    ExecutorFactory,
    PluginHook,
    ProviderFactory,
    Registry,
    ScorerFactory,
    SuiteLoader,
)
from callbench.errors import (
    ConfigError,
    ContractError,
    ProviderError,
    SuiteError,
    ToolError,
    UserError,
    missing_extra,
)
from callbench.executors.base import DEFAULT_TURN, Executor, ExecutorSession, ToolOutcome, TurnDirective
from callbench.executors.http_client import HttpClient, HttpFault, HttpResponse, http_client
from callbench.executors.http_tools import HttpExecutor
from callbench.executors.python import PythonExecutor
from callbench.providers.base import Provider
from callbench.scoring.base import Scorer
from callbench.scoring.judging import JudgeCache, parse_json_object
from callbench.stats import DEFAULT_SEED, Interval, accuracy_interval, bootstrap_interval, paired_comparison
from callbench.suites.loader import read_cases
from callbench.suites.suite import DEFAULT_TIERS, Suite
from callbench.tools.registry import ToolRegistry
from callbench.types.case import AnswerSpec, Case, ExpectedStep
from callbench.types.contract import ToolContract
from callbench.types.conversation import DEFAULT_GREETING, ScriptedTurn, UserCall, UserSide, UserTurn
from callbench.types.frozen import freeze
from callbench.types.hashing import canonical_json, sha256_of
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall
from callbench.types.names import did_you_mean
from callbench.types.records import CaseRecord
from callbench.types.suite_options import SuiteOptions
from callbench.types.summary import Aggregate, Align, Table
from callbench.types.tape import CasePlay, case_play, tool_server_replayed
from callbench.types.trace import Trace, TraceCall
from callbench.types.verdict import Reason, Verdict

__all__ = [
    # Registering
    "Catalog",
    "Registry",
    "PluginHook",
    "SuiteLoader",
    "ExecutorFactory",
    "ScorerFactory",
    "ProviderFactory",
    "CommandSet",
    # Suites and cases
    "Suite",
    "SuiteOptions",
    "DEFAULT_TIERS",
    "read_cases",
    "Case",
    "ExpectedStep",
    "AnswerSpec",
    "UserSide",
    "ScriptedTurn",
    "UserCall",
    "ToolContract",
    "ToolRegistry",
    # Executors
    "Executor",
    "ExecutorSession",
    "PythonExecutor",
    "ToolCall",
    "Message",
    "ToolOutcome",
    "TurnDirective",
    "DEFAULT_TURN",
    "freeze",
    "tool_server_replayed",
    "case_play",
    "CasePlay",
    "http_client",
    "HttpClient",
    "HttpResponse",
    "HttpFault",
    "HttpExecutor",
    # Scorers
    "Scorer",
    "Verdict",
    "Reason",
    "Trace",
    "TraceCall",
    "UserTurn",
    "DEFAULT_GREETING",
    "CaseRecord",
    "Aggregate",
    "Table",
    "Align",
    "Interval",
    "accuracy_interval",
    "bootstrap_interval",
    "paired_comparison",
    "DEFAULT_SEED",
    "JudgeCache",
    "parse_json_object",
    # Providers
    "Provider",
    "GenerationSettings",
    "ModelTurn",
    "ProviderError",
    # Errors and helpers
    "UserError",
    "missing_extra",
    "ConfigError",
    "SuiteError",
    "ContractError",
    "ToolError",
    "did_you_mean",
    "sha256_of",
    "canonical_json",
]
