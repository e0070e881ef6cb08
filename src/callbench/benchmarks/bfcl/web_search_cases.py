"""BFCL v4's web search entries as callbench cases (``bfcl:web_search``).

BFCL runs its 100 web search questions twice: ``web_search_base`` (search results with their
snippets) and ``web_search_no_snippet`` (titles and links only), as entries ``web_search_base_<n>``
and ``web_search_no_snippet_<n>``. Each is one user turn answered in up to 20 tool-calling steps,
with BFCL's system message asking for the answer as ``{'answer': ..., 'context': ...}`` (read from
the installed package's ``constants/default_prompts.py`` as source, never imported); the verdict is
BFCL's agentic check of the model's last message without calls
(:mod:`callbench.benchmarks.bfcl.web_search_checks`).

The cases run on the ``bfcl-web-search`` executor, set as the suite's own executor so that
``--record``/``--replay`` tape its HTTP requests (a case naming its executor would not be taped).
Each case carries the oracle's path in its metadata: for every hop of the possible answer's
``source`` list, a search for the hop's sub-question and a fetch of its source page, then the answer
in BFCL's format (``oracle_calls``, ``oracle_text``).
"""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from callbench.benchmarks.bfcl.agentic import answer_found
from callbench.benchmarks.bfcl.data import VERSION_PREFIX, WEB_SEARCH, package_root, read_jsonl
from callbench.benchmarks.bfcl.multi_turn_cases import MULTI_TURN_TIMEOUT_S, STEP_LIMIT
from callbench.benchmarks.bfcl.schema import contract_from_doc
from callbench.plugin import Case, ConfigError, Message, UserError

EXECUTOR = "bfcl-web-search"
SOURCE_CATEGORY = "web_search"
"""The data file's name and its entries' id prefix (``web_search_<n>``)."""
DOC_FILE = "web_search.json"
PROMPT_NAME = "ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT"
OPTIONS = ("web_failure_rate", "web_failure_seed")
"""Suite options of the web search categories (improved mode only)."""
ORACLE_FETCH_MODE = "truncate"


def load_entries(category: str, folder: Path) -> list[dict[str, Any]]:
    """The questions of one web search category, ids renamed as BFCL renames them."""
    rows = read_jsonl(folder / f"{VERSION_PREFIX}_{SOURCE_CATEGORY}.json")
    return [{**row, "id": row["id"].replace(SOURCE_CATEGORY, category, 1)} for row in rows]


def load_answers(category: str, folder: Path) -> dict[str, dict[str, Any]]:
    """Possible answers keyed by the category's entry ids (``ground_truth``, ``source`` hops)."""
    rows = read_jsonl(folder / "possible_answer" / f"{VERSION_PREFIX}_{SOURCE_CATEGORY}.json")
    return {row["id"].replace(SOURCE_CATEGORY, category, 1): row for row in rows}


def tool_docs(folder: Path) -> list[dict[str, Any]]:
    """BFCL's docs of the two web search functions."""
    path = folder / "multi_turn_func_doc" / DOC_FILE
    if not path.is_file():
        raise UserError(f"bfcl: missing {path}; install BFCL's data with `pip install --no-deps bfcl-eval`")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@lru_cache(maxsize=1)
def answer_format_prompt() -> str:
    """BFCL's system message for agentic entries, read from the installed bfcl-eval's source."""
    root = package_root()
    path = root / "constants" / "default_prompts.py" if root else None
    if path is None or not path.is_file():
        raise UserError(
            "bfcl: the web search categories need BFCL's prompts from the installed bfcl-eval "
            "(pip install --no-deps bfcl-eval)"
        )
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError) as exc:
        raise UserError(f"{path}: cannot read BFCL's prompts ({exc})") from None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == PROMPT_NAME
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    raise UserError(f"{path}: BFCL's prompts lack {PROMPT_NAME}")


def web_settings(extra: dict[str, Any], mode: str) -> dict[str, Any]:
    """The failure-injection options, checked (``{}`` when not given): improved mode only."""
    out: dict[str, Any] = {}
    if "web_failure_rate" in extra:
        try:
            rate = float(extra["web_failure_rate"])
        except (TypeError, ValueError):
            rate = -1.0
        if not 0.0 <= rate <= 1.0:
            raise ConfigError(f"web_failure_rate={extra['web_failure_rate']!r}: use a number from 0 to 1")
        out["web_failure_rate"] = rate
    if "web_failure_seed" in extra:
        try:
            out["web_failure_seed"] = int(str(extra["web_failure_seed"]))
        except ValueError:
            raise ConfigError(f"web_failure_seed={extra['web_failure_seed']!r}: use an integer") from None
    if out.get("web_failure_rate") and mode != "improved":
        raise ConfigError(
            "web_failure_rate injects failures into page fetches, an improved-mode option "
            "(bfcl:web_search:improved); faithful mode runs BFCL's tools as they are"
        )
    return out


def web_search_cases(category: str, folder: Path, limit: int | None = None) -> list[Case]:
    """The cases of one web search category (the first ``limit`` entries)."""
    if category not in WEB_SEARCH:
        raise UserError(f"bfcl: {category!r} is not a web search category ({', '.join(WEB_SEARCH)})")
    entries = load_entries(category, folder)
    answers = load_answers(category, folder)
    docs = tool_docs(folder)
    prompt = answer_format_prompt()
    return [
        web_search_case(entry, answers.get(entry["id"]) or {}, category, docs, prompt)
        for entry in (entries[:limit] if limit else entries)
    ]


def web_search_case(
    entry: dict[str, Any], answer: dict[str, Any], category: str, docs: list[dict[str, Any]], prompt: str
) -> Case:
    """One web search entry: BFCL's system message, the question, the two tools."""
    truth = list(answer.get("ground_truth") or [])
    hops = list(answer.get("source") or [])
    question = [
        Message(role=item["role"], content=item.get("content") or "") for item in entry["question"][0]
    ]
    return Case(
        id=entry["id"],
        category=category,
        system=prompt,
        messages=question,
        tools=[contract_from_doc(doc, category) for doc in docs],
        harness_guidance=False,
        max_rounds=STEP_LIMIT + 2,
        timeout_s=MULTI_TURN_TIMEOUT_S,
        executor_config={"show_snippet": category == "web_search_base"},
        metadata={
            "bfcl": {"category": category, "ground_truth": truth, "hops": hops},
            "oracle_calls": [oracle_calls(hops)],
            "oracle_text": oracle_answer(truth, hops),
        },
    )


def oracle_calls(hops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The oracle's path: per hop, a search for its sub-question and a fetch of its source."""
    calls: list[dict[str, Any]] = []
    for hop in hops:
        calls.append({"tool": "search_engine_query", "arguments": {"keywords": hop["subquestion"]}})
        source = str(hop.get("source") or "")
        if source.startswith(("http://", "https://")):
            arguments = {"url": source, "mode": ORACLE_FETCH_MODE}
            calls.append({"tool": "fetch_url_content", "arguments": arguments})
    return calls


def oracle_answer(truth: list[str], hops: list[dict[str, Any]]) -> str:
    """The final answer in BFCL's format, with the first possible answer its check finds in it."""
    context = "; ".join(f"{hop['subquestion']}: {hop['answer']}" for hop in hops)
    for candidate in truth:
        text = json.dumps({"answer": candidate, "context": context}, ensure_ascii=False)
        if answer_found(text, truth):
            return text
    return json.dumps({"answer": truth[0] if truth else "", "context": context}, ensure_ascii=False)


def suite_executor(cases: list[Case]) -> str:
    """The suite's executor: ``bfcl-web-search`` when it holds web search cases (so a cassette tapes
    their requests), with every other case pinned to the executor it has in a suite without them
    (``contract`` unless it names its own); else ``contract``."""
    if not any(case.category in WEB_SEARCH for case in cases):
        return "contract"
    for case in cases:
        if case.category not in WEB_SEARCH and case.executor is None:
            case.executor = "contract"
    return EXECUTOR
