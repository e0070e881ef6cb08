"""Tool contracts, the registry that loads them, schema validation and top-k retrieval."""

from callbench.tools.registry import ToolRegistry
from callbench.types.contract import ToolContract

__all__ = ["ToolContract", "ToolRegistry"]
