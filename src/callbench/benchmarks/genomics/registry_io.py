"""The genomics tool registry: contract files on disk and their generation from the declarations."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from callbench.benchmarks.genomics.tools._spec import ToolSpec
from callbench.plugin import ContractError, ToolRegistry
from callbench.tools.registry import contract_from_mapping

# libyaml when available: the pure-Python parser takes seconds for the whole registry.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def registry_dir() -> Path:
    """Folder of the checked-in contract files."""
    return Path(__file__).resolve().parent / "registry"


class _NoAliasDumper(yaml.SafeDumper):
    """Shared schema fragments must be written out in full, never as YAML anchors."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def contract_yaml(spec: ToolSpec) -> str:
    """The YAML text of one tool's contract (stable key order, wide lines)."""
    return yaml.dump(spec.contract(), Dumper=_NoAliasDumper, sort_keys=False, width=110, allow_unicode=True)


@lru_cache(maxsize=1)
def load_registry() -> ToolRegistry:
    """The genomics registry loaded from its contract files (cached; treat as read-only)."""
    registry = ToolRegistry(source=str(registry_dir()))
    for path in sorted(registry_dir().rglob("*.yaml")):
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
        except yaml.YAMLError as exc:
            raise ContractError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
        if not isinstance(data, dict):
            raise ContractError(f"{path}: a contract file must hold one mapping")
        registry.add(contract_from_mapping(data, str(path)), origin=str(path))
    return registry
