"""A complete small callbench plugin (docs/plugins.md walks through it).

It registers one suite, ``weather-demo`` (three tools with a per-case state, cases that pass a result
on with ``$ref``, the final state compared by ``state-match``), and one scorer of its own,
``weather-units``, which fails a case whose temperature readings are not in the unit the case asks for.
"""

from __future__ import annotations

from pathlib import Path

from callbench.plugin import (
    DEFAULT_TIERS,
    Catalog,
    PythonExecutor,
    Suite,
    SuiteOptions,
    ToolRegistry,
    read_cases,
)
from callbench_weather.scorer import UnitsScorer
from callbench_weather.tools import BINDINGS, make_state

HERE = Path(__file__).parent
__version__ = "0.1.0"


def load(spec: str, options: SuiteOptions) -> Suite:
    """``weather-demo``: takes no options."""
    return Suite(
        name="weather-demo",
        cases=read_cases(HERE / "cases.yaml"),
        registry=ToolRegistry.from_dir(HERE / "tools"),
        executor=PythonExecutor(BINDINGS, make_state),
        scorers=[*DEFAULT_TIERS, "state-match", "weather-units"],
        description="Weather stations: look a station up, read it, log the reading.",
        version=__version__,
        source="callbench-plugin-weather",
        default_k=None,
    )


def register(catalog: Catalog) -> None:
    """The entry point: called once with callbench's catalog."""
    catalog.suites.register("weather-demo", load)
    catalog.scorers.register("weather-units", UnitsScorer)
