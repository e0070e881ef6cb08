"""The genomics tool registry: contract files on disk and their generation from the declarations."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from callbench.domains.genomics.tools._spec import ToolSpec
from callbench.tools.registry import ToolRegistry


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
    return ToolRegistry.from_dir(registry_dir())
