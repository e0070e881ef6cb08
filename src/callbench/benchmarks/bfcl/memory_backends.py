"""BFCL v4's three memory backends, straight from the installed ``bfcl-eval``.

``MemoryAPI_kv`` (key-value core and archival memory, BM25 key search), ``MemoryAPI_vector`` (the
same two memories as vector stores: sentence embeddings in a FAISS index) and ``MemoryAPI_rec_sum``
(one text, recursively summarised) are bfcl-eval's own classes; a :class:`MemoryWorld` holds one
instance for one entry and drives it as BFCL's inference loop does:

* loading: bfcl-eval's ``_load_scenario`` reads ``<scenario>_final.json`` from a result folder it is
  given. callbench gives it the case's private work folder, where it first puts the snapshot the entry
  must start from (the caller chooses it: see :mod:`callbench.benchmarks.bfcl.memory_executor`), so
  bfcl-eval's own code loads it and nothing is read from or written to a shared path;
* flushing (the end of a prerequisite conversation): bfcl-eval's ``_flush_memory_to_local_file``
  writes the snapshot there too; :meth:`MemoryWorld.flush` returns its text for the run folder;
* calls: public methods by name with BFCL's conventions (blocked names, results as text, failures as
  ``Error during execution: ...``), as :class:`~callbench.benchmarks.bfcl.backend.World` runs the
  multi-turn classes;
* the system prompt: BFCL's memory instruction for the entry's scenario with the backend's own dump of
  its memory (``_dump_core_memory_to_context``), read from bfcl-eval's prompt constants.

Two import details. bfcl-eval's constants create ``result/``, ``score/`` and ``.file_locks/`` under
``BFCL_PROJECT_ROOT`` (default: beside the installed package) when first imported; the backends are
imported with that variable pointing at a throwaway folder, removed when the process ends. And the
vector module builds its encoder when imported (``SentenceTransformer("all-MiniLM-L6-v2")``, a
download from the hub): it is imported with ``sentence_transformers`` standing for the encoder
callbench loads from the local folder the user names (``--option embedding_model=PATH``,
:func:`load_encoder`), and that encoder is bound to the module before every use, so one process can
serve runs with different models.

The backends need the ``bfcl-memory`` extra (``overrides``; ``rank-bm25`` for kv; ``faiss-cpu`` and
``sentence-transformers`` for vector); a missing module is one line naming it.
"""

from __future__ import annotations

import ast
import atexit
import copy
import functools
import importlib
import inspect
import json
import os
import shutil
import sys
import tempfile
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from callbench.benchmarks.bfcl.backend import BACKEND_PACKAGE, BLOCKED, ERROR_PREFIX, format_result
from callbench.benchmarks.bfcl.data import package_root
from callbench.plugin import ConfigError, UserError, missing_extra

EXTRA = "bfcl-memory"
BACKENDS = ("kv", "vector", "rec_sum")
"""bfcl-eval's memory backends, in its order (category ``memory_<backend>``)."""
CLASS_NAMES = {backend: f"MemoryAPI_{backend}" for backend in BACKENDS}
DOC_FILES = {backend: f"memory_{backend}.json" for backend in BACKENDS}
MODULES = {backend: f"{BACKEND_PACKAGE}.memory_{backend}" for backend in BACKENDS}
NEEDS = {"kv": ("overrides", "rank_bm25"), "vector": ("overrides", "faiss"), "rec_sum": ("overrides",)}
"""Modules outside callbench's own dependencies each backend imports (the ``bfcl-memory`` extra)."""
PROMPTS = (
    "MEMORY_AGENT_SETTINGS",
    "MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL",
    "MEMORY_BACKEND_INSTRUCTION_UNIFIED",
    "ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT",
)
"""bfcl-eval's prompt constants the memory categories use (``constants/default_prompts.py``)."""
UNIFIED_PROMPT_BACKENDS = ("rec_sum",)
"""Backends whose memory instruction is BFCL's "unified" one (one memory, no core/archival split)."""


def backend_of(category: str) -> str:
    """``kv`` for ``memory_kv`` or ``memory_kv_prereq``."""
    name = category.removeprefix("memory_").removesuffix("_prereq")
    if name not in BACKENDS:
        raise UserError(
            f"bfcl: {category!r} is not a memory category (memory_kv, memory_vector, memory_rec_sum)"
        )
    return name


@functools.cache
def prompt_constants() -> dict[str, Any]:
    """bfcl-eval's memory prompts, read from its source (not imported: the suite loader needs them)."""
    root = package_root()
    path = root / "constants" / "default_prompts.py" if root else None
    if path is None or not path.is_file():
        raise UserError(
            "bfcl: the memory categories need bfcl-eval's prompts: pip install --no-deps bfcl-eval"
        )
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError) as exc:
        raise UserError(f"{path}: cannot read BFCL's prompts ({exc})") from None
    found: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in PROMPTS:
                found[node.targets[0].id] = ast.literal_eval(node.value)
    missing = [name for name in PROMPTS if name not in found]
    if missing:
        raise UserError(f"{path}: BFCL's prompts lack {', '.join(missing)}")
    return found


def memory_instruction(backend: str, scenario: str, memory_dump: str) -> str:
    """BFCL's memory system prompt: the scenario's agent setting and the backend's memory dump."""
    prompts = prompt_constants()
    name = (
        "MEMORY_BACKEND_INSTRUCTION_UNIFIED"
        if backend in UNIFIED_PROMPT_BACKENDS
        else "MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL"
    )
    template: str = prompts[name]
    return template.format(
        scenario_setting=prompts["MEMORY_AGENT_SETTINGS"][scenario], memory_content=memory_dump
    )


def with_memory_instruction(messages: list[Any], instruction: str, system: Any) -> list[Any]:
    """BFCL's placement of the memory prompt: before the first message's text when that message is a
    system message (``instruction + "\\n\\n" + text``), else as a new system message in front.
    ``system(text)`` makes a system message of the caller's type."""
    if messages and messages[0].role == "system":
        first = messages[0].model_copy(update={"content": instruction + "\n\n" + messages[0].content})
        return [first, *messages[1:]]
    return [system(instruction), *messages]


def check_modules(backend: str, category: str) -> None:
    """One line naming the first module of the backend's extra that is not installed."""
    from importlib.util import find_spec

    for module in NEEDS[backend]:
        try:
            found = find_spec(module) is not None
        except (ImportError, ValueError):  # set to None in sys.modules, or a broken parent
            found = False
        if not found:
            raise missing_extra(f"bfcl {category}", module, EXTRA)


def check_modules_of_encoder() -> None:
    """One line when the vector backend's encoder cannot be loaded for lack of sentence-transformers."""
    from importlib.util import find_spec

    try:
        found = find_spec("sentence_transformers") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise missing_extra("bfcl memory_vector's embedding model", "sentence_transformers", EXTRA)


@contextmanager
def _throwaway_project_root() -> Iterator[None]:
    """bfcl-eval's constants make ``result/``, ``score/`` and ``.file_locks/`` under
    ``BFCL_PROJECT_ROOT`` when first imported: point it at a temporary folder for that import. The
    folder stays until the process ends (bfcl-eval's file reader takes its locks there)."""
    if "bfcl_eval.constants.eval_config" in sys.modules:
        yield
        return
    previous = os.environ.get("BFCL_PROJECT_ROOT")
    root = tempfile.mkdtemp(prefix="callbench-bfcl-root-")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    os.environ["BFCL_PROJECT_ROOT"] = root
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("BFCL_PROJECT_ROOT", None)
        else:
            os.environ["BFCL_PROJECT_ROOT"] = previous


def _import(module_name: str, backend: str, category: str) -> types.ModuleType:
    check_modules(backend, category)
    try:
        with _throwaway_project_root():
            return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith("bfcl_eval"):
            raise missing_extra(f"bfcl {category}", exc.name, EXTRA) from None
        raise UserError("bfcl memory needs the bfcl-eval package: pip install --no-deps bfcl-eval") from exc


def memory_module(backend: str, encoder: Any = None) -> types.ModuleType:
    """bfcl-eval's module of ``backend``; for ``vector``, with ``encoder`` bound as its encoder."""
    category = f"memory_{backend}"
    name = MODULES[backend]
    if backend != "vector":
        return sys.modules.get(name) or _import(name, backend, category)
    if encoder is None:
        raise ConfigError("bfcl memory_vector needs an embedding model: --option embedding_model=PATH")
    module = sys.modules.get(name)
    if module is None:
        module = _import_vector(name, category, encoder)
    # the module's own globals, read by its VectorStore on every use
    setattr(module, "ENCODER", encoder)  # noqa: B010 - a module's global, not a typed attribute
    setattr(module, "ENCODER_DIM", dimension(encoder))  # noqa: B010
    return module


def dimension(encoder: Any) -> int:
    """The encoder's embedding size (sentence-transformers 5 renamed the method bfcl-eval calls)."""
    method = getattr(encoder, "get_embedding_dimension", None) or encoder.get_sentence_embedding_dimension
    return int(method())


def _import_vector(name: str, category: str, encoder: Any) -> types.ModuleType:
    """Import the vector module with ``SentenceTransformer(...)`` answering ``encoder`` (its import-time
    ``SentenceTransformer("all-MiniLM-L6-v2")`` would download the model); the real
    ``sentence_transformers`` module, imported or not, is put back at once."""
    shim = types.ModuleType("sentence_transformers")
    shim.SentenceTransformer = lambda *args, **kwargs: encoder  # type: ignore[attr-defined]
    saved = sys.modules.get("sentence_transformers")
    sys.modules["sentence_transformers"] = shim
    try:
        return _import(name, "vector", category)
    finally:
        if saved is None:
            sys.modules.pop("sentence_transformers", None)
        else:
            sys.modules["sentence_transformers"] = saved


@functools.cache
def load_encoder(path: str) -> Any:
    """The embedding model in the local folder ``path`` (sentence-transformers format, e.g. the
    ``all-MiniLM-L6-v2`` BFCL uses), on the CPU, never downloaded; one per process and folder."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ConfigError(f"bfcl memory_vector: embedding_model={path!r} is not a folder")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise missing_extra("bfcl memory_vector's embedding model", "sentence_transformers", EXTRA) from None
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # as BFCL sets it for this backend
    try:
        return SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - any loading failure is one line for the user
        raise UserError(f"bfcl memory_vector: cannot load the embedding model in {folder}: {exc}") from None


def encoder_label(encoder: Any, path: str | None) -> dict[str, Any]:
    """What a run records about the vector backend's encoder."""
    return {"embedding_model": path, "dimension": dimension(encoder)}


class MemoryWorld:
    """One entry's memory backend instance, loaded from ``start_from`` (a snapshot's text, or ``None``
    for an empty memory) through bfcl-eval's own loading code, in the private folder ``staging``."""

    def __init__(
        self,
        category: str,
        entry_id: str,
        scenario: str,
        staging: Path,
        start_from: str | None,
        encoder: Any = None,
    ) -> None:
        self.backend = backend_of(category)
        self.entry_id = entry_id
        self.scenario = scenario
        self.encoder = encoder
        module = memory_module(self.backend, encoder)
        self.instance = getattr(module, CLASS_NAMES[self.backend])()
        from bfcl_eval.utils import get_directory_structure_by_id  # installed separately

        folder = staging / get_directory_structure_by_id(entry_id) / "memory_snapshot"
        if start_from is not None:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{scenario}_final.json").write_text(start_from, encoding="utf-8")
        config = {
            "model_result_dir": staging,
            "scenario": scenario,
            "test_id": entry_id,
            "test_category": category,
        }
        with self._bound():
            self.instance._load_scenario(config)
        self.methods = {
            name: method
            for name, method in inspect.getmembers(self.instance, predicate=inspect.ismethod)
            if not name.startswith("_")
        }

    @contextmanager
    def _bound(self) -> Iterator[None]:
        """Bind this world's encoder to the vector module (a process-wide global) for one use."""
        if self.backend == "vector":
            memory_module("vector", self.encoder)
        yield

    def call(self, name: str, kwargs: dict[str, Any]) -> str:
        """Execute one call as BFCL does; never raises (errors come back as BFCL's error text)."""
        if name in BLOCKED:
            return f"{ERROR_PREFIX}Function call {name} is not allowed."
        method = self.methods.get(name)
        if method is None:
            return f"{ERROR_PREFIX}name '{name}' is not defined"
        try:
            with self._bound():
                return format_result(method(**copy.deepcopy(kwargs)))
        except Exception as exc:  # noqa: BLE001 - a backend failure is a result the model sees
            return f"{ERROR_PREFIX}{exc}"

    def memory_dump(self) -> str:
        """The backend's own text of its memory for the system prompt."""
        return str(self.instance._dump_core_memory_to_context())

    def system_instruction(self) -> str:
        """BFCL's memory system prompt for this entry, with the memory as loaded."""
        return memory_instruction(self.backend, self.scenario, self.memory_dump())

    def flush(self) -> str:
        """bfcl-eval's flush of the memory (the end of a prerequisite conversation); its snapshot text."""
        with self._bound():
            self.instance._flush_memory_to_local_file()
        path = Path(self.instance.snapshot_folder) / f"{self.entry_id}.json"
        return path.read_text(encoding="utf-8")


def snapshot_summary(text: str | None) -> dict[str, Any]:
    """A short, JSON-safe view of a snapshot for traces: its size and what it holds."""
    if text is None:
        return {"empty": True}
    data = json.loads(text)
    out: dict[str, Any] = {"bytes": len(text.encode("utf-8"))}
    for key, value in data.items():
        if isinstance(value, dict) and "store" in value:
            out[key] = len(value["store"])
        elif isinstance(value, dict | list):
            out[key] = len(value)
        else:
            out[key] = len(str(value))
    return out
