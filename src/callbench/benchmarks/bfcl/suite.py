"""The ``bfcl`` suite: Berkeley Function Calling Leaderboard categories as callbench cases.

Specs: ``bfcl:<category>``, a group (``bfcl:single_turn``, ``bfcl:live``, ``bfcl:non_live``,
``bfcl:multi_turn``, ``bfcl:all``), ``bfcl:format_sensitivity`` (not in ``all``) or a comma list;
an optional ``:improved`` suffix turns on the scorer's improved mode (``:faithful`` is the
default).  Data come from the installed ``bfcl-eval`` package (``pip install --no-deps bfcl-eval``)
or ``--data DIR``.  Options (``SuiteOptions.extra``): ``mode``, ``underscore_to_dot``, each
improved-mode switch of :data:`callbench.benchmarks.bfcl.options.IMPROVED_SWITCHES`, ``limit``
(first N entries per category; format sensitivity: first N entries, each in all 26 formats).
In improved mode the cases' expected steps follow the corrected answers and Java literals as
improved mode reads them, so the built-in oracle plays the corrected gold path.
``bfcl:web_search`` (``web_search_base``, ``web_search_no_snippet``) runs on the ``bfcl-web-search``
executor with the improved-mode options ``web_failure_rate`` and ``web_failure_seed``
(:mod:`callbench.benchmarks.bfcl.web_search_cases`).
``bfcl:memory`` (``memory_kv``, ``memory_vector``, ``memory_rec_sum``; with web search the group
``bfcl:agentic``) runs each scenario's prerequisite conversations in earlier phases, then the questions,
on the ``bfcl-memory`` executor; ``memory_vector`` needs the option ``embedding_model`` (a local folder)
(:mod:`callbench.benchmarks.bfcl.memory_cases`).
"""

from __future__ import annotations

from typing import Any

from callbench.benchmarks.bfcl.calls import literal_rules
from callbench.benchmarks.bfcl.data import (
    MULTI_TURN,
    WEB_SEARCH,
    category_of,
    data_dir,
    expand,
    load_answers,
    load_questions,
)
from callbench.benchmarks.bfcl.fixes import fix_answer
from callbench.benchmarks.bfcl.format_sensitivity import CATEGORY as FORMAT_SENSITIVITY
from callbench.benchmarks.bfcl.format_sensitivity import format_cases
from callbench.benchmarks.bfcl.memory_cases import MEMORY, memory_cases, memory_settings
from callbench.benchmarks.bfcl.models import bfcl_eval_version
from callbench.benchmarks.bfcl.multi_turn_cases import multi_turn_case
from callbench.benchmarks.bfcl.options import IMPROVED_SWITCHES, BfclOptions
from callbench.benchmarks.bfcl.oracle import gold_calls
from callbench.benchmarks.bfcl.schema import contract_from_doc
from callbench.benchmarks.bfcl.scorer import options_from
from callbench.benchmarks.bfcl.web_search_cases import suite_executor, web_search_cases, web_settings
from callbench.plugin import Case, ConfigError, ExpectedStep, Message, Suite, SuiteOptions

SUITE_NAME = "bfcl"
BFCL_SYSTEM_PROMPT = ""  # BFCL's FC mode sends no system prompt of its own
_MODES = ("faithful", "improved")
_FLAGS = ("underscore_to_dot", *IMPROVED_SWITCHES)


def load_suite(spec: str, options: SuiteOptions | None = None) -> Suite:
    """Load BFCL categories as a suite.

    Args:
        spec: ``simple_python``, ``bfcl:live``, ``bfcl:parallel,multiple:improved``...
        options: ``data`` (a BFCL data folder) and ``extra`` settings (see module docs).

    Returns:
        A suite whose cases carry BFCL's possible answers in ``metadata["bfcl"]``.
    """
    options = options or SuiteOptions()
    categories, settings = _parse(spec, options)
    folder = data_dir(options.data)
    limit = options.extra.get("limit")
    scoring = options_from(settings)
    cases: list[Case] = []
    for category in categories:
        if category == FORMAT_SENSITIVITY:  # generated: 200 entries x 26 prompt formats
            cases.extend(format_cases(folder, scoring, int(limit) if limit else None))
            continue
        if category in WEB_SEARCH:  # one data file for both variants; run on the suite's executor
            cases.extend(web_search_cases(category, folder, int(limit) if limit else None))
            continue
        if category in MEMORY:  # prerequisite conversations (earlier phases), then the questions
            cases.extend(memory_cases(category, folder, int(limit) if limit else None))
            continue
        entries = load_questions(category, folder)
        answers = load_answers(category, folder)
        for entry in entries[: int(limit)] if limit else entries:
            if category in MULTI_TURN:
                cases.append(multi_turn_case(entry, answers.get(entry["id"], []), category, folder))
            else:
                cases.append(single_turn_case(entry, answers.get(entry["id"]), category, scoring))
    version = bfcl_eval_version()
    return Suite(
        name=SUITE_NAME,
        cases=cases,
        executor=suite_executor(cases),  # bfcl-web-search when web search cases are in it
        scorers=["bfcl"],
        strict_tiers=False,  # its own scorer is primary: `--tier all` does not add the gold-path tiers
        system_prompt=BFCL_SYSTEM_PROMPT,
        description="Berkeley Function Calling Leaderboard (bfcl-eval data)",
        version="BFCL_v4",
        source=str(folder),
        default_k=None,
        metadata={
            "bfcl": settings,
            "categories": list(categories),
            # the installed package: its data (unless --data) and the multi-turn backends
            "data_versions": {"bfcl-eval": version} if version else {},
            "bfcl_memory": memory_settings(categories, options.extra),  # embedding_model (vector)
        },
    )


def _parse(spec: str, options: SuiteOptions) -> tuple[tuple[str, ...], dict[str, Any]]:
    parts = [part for part in spec.split(":") if part]
    if parts and parts[0] == SUITE_NAME:
        parts = parts[1:]
    modes = [part for part in parts if part in _MODES]
    names = [part for part in parts if part not in _MODES]
    if len(names) > 1:
        raise ConfigError(f"suite {spec!r}: use bfcl:<category or group>[,more][:faithful|:improved]")
    categories = expand(names[0] if names else "single_turn")
    extra = options.extra
    mode = modes[0] if modes else str(extra.get("mode", "faithful"))
    if mode not in _MODES:
        raise ConfigError(f"suite {spec!r}: mode must be faithful or improved, not {mode!r}")
    settings: dict[str, Any] = {"mode": mode}
    for flag in _FLAGS:
        if flag in extra:
            settings[flag] = _flag(extra[flag], flag)
    settings.update(web_settings(extra, mode))  # web_failure_rate, web_failure_seed (improved)
    return categories, settings


def _flag(value: Any, name: str) -> bool:
    """A boolean option given as a bool or as text (``-o numeric_strings=false``)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"suite option {name}={value!r}: use true or false")


def messages_of(turn: list[dict[str, Any]]) -> list[Message]:
    """BFCL turn messages as callbench messages."""
    return [Message(role=item["role"], content=item.get("content") or "") for item in turn]


def single_turn_case(
    entry: dict[str, Any],
    truth: list[dict[str, Any]] | None,
    category: str,
    scoring: BfclOptions | None = None,
) -> Case:
    """One single-turn entry: one model round, calls scored without execution.

    The expected steps (the oracle's gold path) follow the answer as the scorer will judge it:
    as shipped in faithful mode, corrected in improved mode.
    """
    docs = entry["function"]
    expected = []
    scoring = scoring or BfclOptions()
    gold = fix_answer(entry["id"], docs, truth, scoring)[0] if truth else None
    for name, arguments in gold_calls(entry, gold, category, literal_rules(scoring)) if gold else []:
        expected.append(ExpectedStep(tool=name, arguments=arguments, call_only=True, turn=1))
    if category == "live_relevance" and docs:
        # Any call of any offered function passes (arguments are not checked).
        expected.append(ExpectedStep(tool=[doc["name"] for doc in docs], call_only=True, turn=1))
    return Case(
        id=entry["id"],
        category=category,
        messages=messages_of(entry["question"][0]),
        tools=[contract_from_doc(doc, category) for doc in docs],
        expected=expected,
        max_rounds=1,
        harness_guidance=False,
        metadata={"bfcl": {"category": category_of(entry["id"]), "ground_truth": truth}},
    )
