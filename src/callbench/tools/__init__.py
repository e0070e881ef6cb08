"""Tool contracts, the registry that loads them, schema validation and top-k retrieval."""

from callbench.tools.contract import ToolContract
from callbench.tools.registry import ToolRegistry

__all__ = ["ToolContract", "ToolRegistry"]
