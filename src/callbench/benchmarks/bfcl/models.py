"""BFCL's model registry, read from the installed ``bfcl-eval`` without importing it.

Two facts of a model's BFCL configuration decide how its result files must be judged:
``underscore_to_dot`` (the provider forbids ``.`` in tool names, so BFCL expects ``math_factorial``
where the doc says ``math.factorial``) and ``is_fc_model`` (FC results hold calls; prompt-mode
results hold raw text that only the model's own handler decodes).  Importing
``bfcl_eval.constants.model_config`` pulls in every provider SDK (which a ``--no-deps`` install
lacks) and creates folders inside site-packages, so the file is parsed as source instead: every
``ModelConfig(...)`` under a string key, with the dataclass's own field defaults.

The convention is decided per model, never guessed from a file: a registered model uses its
config; any other model needs an explicit ``--name-convention`` (``dotted`` or ``underscored``).
"""

from __future__ import annotations

import ast
import importlib.metadata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from callbench.benchmarks.bfcl.data import package_root
from callbench.plugin import UserError

NameConvention = Literal["dotted", "underscored"]
CONVENTIONS: tuple[str, ...] = ("dotted", "underscored")
FROM_CONFIG = "bfcl-eval model config"
FROM_OPTION = "--name-convention"
_FIELDS = ("is_fc_model", "underscore_to_dot")


@dataclass(frozen=True)
class ModelInfo:
    """What callbench needs from one registered BFCL model config."""

    name: str
    is_fc_model: bool
    underscore_to_dot: bool


@dataclass(frozen=True)
class Convention:
    """The name convention a model is judged under, and what decided it."""

    underscore_to_dot: bool
    source: str

    def describe(self) -> dict[str, object]:
        """As recorded in reports."""
        return {"underscore_to_dot": self.underscore_to_dot, "source": self.source}


def bfcl_eval_version() -> str | None:
    """Version of the installed ``bfcl-eval`` distribution, or None."""
    try:
        return importlib.metadata.version("bfcl-eval")
    except importlib.metadata.PackageNotFoundError:
        return None


def _config_source() -> Path | None:
    root = package_root()
    path = root / "constants" / "model_config.py" if root else None
    return path if path is not None and path.is_file() else None


@lru_cache(maxsize=1)
def registered_models() -> dict[str, ModelInfo]:
    """Registered BFCL models by name (empty when ``bfcl-eval`` is not installed)."""
    path = _config_source()
    if path is None:
        return {}
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError) as exc:
        raise UserError(f"{path}: cannot read BFCL's model registry ({exc})") from None
    defaults = _dataclass_defaults(tree)
    models: dict[str, ModelInfo] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=False):
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and _is_config_call(value):
                fields = {**defaults, **_literal_keywords(value)}  # type: ignore[arg-type]
                models[key.value] = ModelInfo(
                    key.value, bool(fields["is_fc_model"]), bool(fields["underscore_to_dot"])
                )
    return models


def _is_config_call(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ModelConfig"


def _literal_keywords(call: ast.Call) -> dict[str, object]:
    return {
        kw.arg: kw.value.value
        for kw in call.keywords
        if kw.arg in _FIELDS and isinstance(kw.value, ast.Constant)
    }


def _dataclass_defaults(tree: ast.Module) -> dict[str, object]:
    """Field defaults of ``class ModelConfig`` (what an entry that omits a field gets)."""
    defaults: dict[str, object] = {"is_fc_model": True, "underscore_to_dot": False}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "ModelConfig":
            for item in node.body:
                if (
                    isinstance(item, ast.AnnAssign)
                    and isinstance(item.target, ast.Name)
                    and item.target.id in _FIELDS
                    and isinstance(item.value, ast.Constant)
                ):
                    defaults[item.target.id] = item.value.value
    return defaults


def model_for_folder(folder_name: str) -> ModelInfo | None:
    """The registered model whose result folder is ``folder_name`` (BFCL writes ``/`` as ``_``)."""
    models = registered_models()
    if folder_name in models:
        return models[folder_name]
    for name, info in models.items():
        if name.replace("/", "_") == folder_name:
            return info
    return None


def check_convention(value: str | None) -> NameConvention | None:
    """Validate a ``--name-convention`` value."""
    if value is None or value in CONVENTIONS:
        return value  # type: ignore[return-value]
    raise UserError(f"--name-convention must be dotted or underscored, not {value!r}")


def convention_for(model: str, explicit: str | None) -> Convention:
    """The name convention of ``model``: its BFCL config when registered, else ``explicit``.

    Raises:
        UserError: the model is not registered in the installed bfcl-eval and no convention was given.
    """
    explicit = check_convention(explicit)
    info = model_for_folder(model)
    if info is not None:
        return Convention(info.underscore_to_dot, FROM_CONFIG)
    if explicit is None:
        version = bfcl_eval_version()
        where = f"bfcl-eval {version}" if version else "bfcl-eval (not installed)"
        raise UserError(
            f"model {model!r} is not registered in {where}, so its function-name convention is unknown: "
            "pass --name-convention underscored (names like math_factorial, as OpenAI-style FC models send) "
            "or --name-convention dotted (names as in the docs, math.factorial)"
        )
    return Convention(explicit == "underscored", FROM_OPTION)
