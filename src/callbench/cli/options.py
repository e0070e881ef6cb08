"""Command-line options shared by several commands, declared once so their flags and help agree.

Each is a typed ``Annotated`` alias for a typer parameter: ``temperature: Temperature = 0.0``.
"""

from __future__ import annotations

from typing import Annotated

import typer

# Defaults that command signatures show in their help. They mirror the constants where they are
# defined (named beside each); importing those modules would load the providers package and
# pydantic into every `--help`. tests/cli/test_startup_imports.py checks that they agree.
DEFAULT_REQUEST_TIMEOUT_S = 60.0
"""``callbench.providers.limits.DEFAULT_REQUEST_TIMEOUT_S``."""
DEFAULT_CASE_LIMIT_S = 120.0
"""``callbench.harness.doctor.DEFAULT_CASE_LIMIT_S``."""
CONTEXT_PROBE_TOKENS = 2_200_000
"""``callbench.harness.doctor.CONTEXT_PROBE_TOKENS``."""

Temperature = Annotated[
    float,
    typer.Option(
        "--temperature",
        help="Sampling temperature (0: the most likely answer; only 0 reads and writes the cache).",
    ),
]
MaxTokens = Annotated[int, typer.Option("--max-tokens", help="Most tokens the model may write in one reply.")]
Seed = Annotated[int | None, typer.Option("--seed", help="Provider sampling seed where supported.")]
ReasoningEffort = Annotated[
    str | None,
    typer.Option(
        "--reasoning-effort",
        help="Reasoning models: none, minimal, low, medium, high or xhigh (Chat Completions "
        "reasoning_effort, Responses reasoning.effort).",
    ),
]
ThinkingBudget = Annotated[
    int | None,
    typer.Option(
        "--thinking-budget",
        help="Anthropic extended thinking: tokens the model may think before answering "
        "(uses the default temperature; such replies are not cached).",
    ),
]
Rpm = Annotated[float | None, typer.Option("--rpm", help="Requests per minute per endpoint.")]
MaxConnections = Annotated[int | None, typer.Option("--max-connections", help="Open requests per endpoint.")]
