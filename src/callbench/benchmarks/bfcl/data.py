"""Locating and reading BFCL's data files (question and possible-answer JSONL).

Data comes from the installed ``bfcl-eval`` package (located without importing it: importing
bfcl_eval creates folders inside site-packages) or from a folder passed as ``--data DIR``
holding the same layout: ``BFCL_v4_<category>.json`` and ``possible_answer/``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from callbench.plugin import UserError

VERSION_PREFIX = "BFCL_v4"
NON_LIVE = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
)
LIVE = (
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
)
SINGLE_TURN = NON_LIVE + LIVE
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
"""BFCL v4's web search questions with and without result snippets (agentic; one data file)."""
MEMORY = ("memory_kv", "memory_vector", "memory_rec_sum")
"""BFCL v4's memory questions on each of its three memory backends (agentic; one data file, with the
prerequisite conversations that fill the memory first)."""
AGENTIC = MEMORY + WEB_SEARCH
FORMAT_SENSITIVITY = "format_sensitivity"
"""26 prompt formats x 200 entries (prompt mode); outside BFCL's overall score and outside ``all``."""
GROUPS: dict[str, tuple[str, ...]] = {
    "single_turn": SINGLE_TURN,
    "non_live": NON_LIVE,
    "live": LIVE,
    "multi_turn": MULTI_TURN,
    "web_search": WEB_SEARCH,
    "memory": MEMORY,
    "agentic": AGENTIC,
    "all": SINGLE_TURN + MULTI_TURN,
}
PREREQ_SUFFIX = "_prereq"
"""A memory category's prerequisite conversations: category ``memory_<backend>_prereq``."""
NO_ANSWER = ("irrelevance", "live_irrelevance", "live_relevance")
INSTALL_HINT = "install BFCL's data with `pip install --no-deps bfcl-eval` (or pass --data DIR)"


def expand(spec: str) -> tuple[str, ...]:
    """Category names for a spec: a category, a group, or a comma list of either."""
    names: list[str] = []
    for part in (piece.strip() for piece in spec.split(",")):
        if part in GROUPS:
            names.extend(GROUPS[part])
        elif part in SINGLE_TURN or part in MULTI_TURN or part in AGENTIC:
            names.append(part)
        elif part == FORMAT_SENSITIVITY:
            names.append(part)
        else:
            known = ", ".join(list(GROUPS) + list(SINGLE_TURN + MULTI_TURN + AGENTIC) + [FORMAT_SENSITIVITY])
            raise UserError(f"bfcl: unknown category or group {part!r}; known: {known}")
    return tuple(dict.fromkeys(names))


def result_folder(category: str) -> str | None:
    """The folder of a category's result and score files inside a model's folder, as bfcl-eval's
    ``get_directory_structure_by_category`` places them (``agentic/memory/kv`` for ``memory_kv`` and
    its prerequisite conversations); None for a category BFCL does not have."""
    if category in NON_LIVE:
        return "non_live"
    if category in LIVE:
        return "live"
    if category in MULTI_TURN:
        return "multi_turn"
    if category == FORMAT_SENSITIVITY:
        return FORMAT_SENSITIVITY
    if category in WEB_SEARCH:
        return "agentic"
    memory = category.removesuffix(PREREQ_SUFFIX)
    if memory in MEMORY:
        return f"agentic/memory/{memory.removeprefix('memory_')}"
    return None


def package_root() -> Path | None:
    """Folder of the installed ``bfcl_eval`` package, or None (the package is not imported)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def data_dir(override: str | Path | None = None) -> Path:
    """The BFCL data folder to read (``override`` first, then the installed package)."""
    if override is not None:
        folder = Path(override)
        if not folder.is_dir():
            raise UserError(f"bfcl: data folder {folder} does not exist")
        return folder
    root = package_root()
    if root is None or not (root / "data").is_dir():
        raise UserError(f"bfcl: bfcl-eval is not installed; {INSTALL_HINT}")
    return root / "data"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSONL file, naming file and line on malformed content."""
    if not path.is_file():
        raise UserError(f"bfcl: missing data file {path}; {INSTALL_HINT}")
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{number}: invalid JSON ({exc.msg})") from exc
    return rows


def load_questions(category: str, folder: Path) -> list[dict[str, Any]]:
    """Question entries of one category (function docs as shipped, no language hints)."""
    return read_jsonl(folder / f"{VERSION_PREFIX}_{category}.json")


def load_answers(category: str, folder: Path) -> dict[str, Any]:
    """Possible answers of one category keyed by entry id (empty for relevance categories)."""
    if category in NO_ANSWER:
        return {}
    rows = read_jsonl(folder / "possible_answer" / f"{VERSION_PREFIX}_{category}.json")
    return {row["id"]: row["ground_truth"] for row in rows}


def category_of(entry_id: str) -> str:
    """Category of an entry id such as ``live_simple_106-63-0`` or ``simple_python_12``."""
    return entry_id.rsplit("_", 1)[0]


def index(categories: tuple[str, ...] | list[str], folder: Path) -> tuple[dict[str, dict], dict[str, Any]]:
    """(question entries by id, possible answers by id) over several categories."""
    entries: dict[str, dict[str, Any]] = {}
    answers: dict[str, Any] = {}
    for category in categories:
        entries.update({entry["id"]: entry for entry in load_questions(category, folder)})
        answers.update(load_answers(category, folder))
    return entries, answers
