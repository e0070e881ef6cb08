"""The built-in ``starter`` suite: 16 cases over a 14-tool registry with real Python implementations."""

from __future__ import annotations

from pathlib import Path

from callbench.benchmarks.starter.world import BINDINGS, INLINE_TOOLS, make_world
from callbench.plugin import ConfigError, PythonExecutor, Suite, SuiteOptions, ToolRegistry, read_cases

HERE = Path(__file__).parent
SYSTEM_PROMPT = (
    "You are an assistant with access to tools for weather, unit conversion, arithmetic, contacts, email, "
    "a calendar, notes and files. Use only the supplied tools and call them instead of describing calls. "
    "Ground every argument in the user request or in earlier tool results; do not invent values. Dates are "
    "written YYYY-MM-DD. When the request is complete, reply with a short final answer."
)


def load_suite(spec: str, options: SuiteOptions) -> Suite:
    """Catalog loader of ``starter`` (takes no options)."""
    if spec:
        raise ConfigError(f"suite 'starter' takes no options (got {spec!r})")
    return Suite(
        name="starter",
        cases=read_cases(HERE / "cases.yaml"),
        registry=ToolRegistry.from_dir(HERE / "tools"),
        executor=PythonExecutor(BINDINGS, make_world, inline=INLINE_TOOLS),
        system_prompt=SYSTEM_PROMPT,
        description="A small everyday-assistant suite exercising every DSL form and all three tiers.",
        source="callbench:starter",
    )
