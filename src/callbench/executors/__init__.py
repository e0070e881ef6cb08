"""Executors: ways of producing tool results (synthetic, real Python, replayed, generated tasks)."""

from callbench.executors.base import Executor, ExecutorSession, ToolOutcome

__all__ = ["Executor", "ExecutorSession", "ToolOutcome"]
