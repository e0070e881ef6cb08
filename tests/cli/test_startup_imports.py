"""Start-up stays light (issue 26, item 5): ``callbench --help`` must not import what it never uses.

Every ``callbench`` invocation imports ``callbench.cli.main`` and every command module (they register
their commands at start). Those modules import the engine, pydantic models, numpy, scipy, the
providers or the report inside the commands that need them; an import moved back to the top of one
of them would cost every ``--help`` a fraction of a second and is caught here. Each check runs in a
fresh interpreter, since this test process has long imported all of it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

THIRD_PARTY_HEAVY = (
    "aiohttp",
    "asyncio",
    "jinja2",
    "jsonschema",
    "mcp",
    "numpy",
    "pydantic",
    "scipy",
    "statsmodels",
    "yaml",
)
CALLBENCH_HEAVY = (
    "callbench.api",
    "callbench.executors",
    "callbench.harness",
    "callbench.providers",
    "callbench.report",
    "callbench.review",
    "callbench.scoring",
    "callbench.stats",
    "callbench.suites",
    "callbench.tools",
)
HEAVY = THIRD_PARTY_HEAVY + CALLBENCH_HEAVY
"""Packages (with their submodules) that no ``--help`` of the built-in commands may import."""

PLUGIN_LOADED: tuple[str, ...] = ()
"""What the installed plugins' command modules may import at start beyond the core's list (none:
``generate dag`` imports its generator when it runs)."""

HELP_COMMANDS = [
    [],
    ["run"],
    ["doctor"],
    ["show"],
    ["sweep"],
    ["score"],
    ["cache", "stats"],
    ["review", "agreement"],
    ["serve-tools"],
]


def _loaded_after(code: str) -> list[str]:
    """The module names a fresh interpreter holds after running ``code``."""
    script = textwrap.dedent(code) + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _heavy(loaded: list[str], names: tuple[str, ...]) -> list[str]:
    """The entries of ``names`` that ``loaded`` holds, themselves or through a submodule."""
    return sorted({n for n in names for m in loaded if m == n or m.startswith(n + ".")})


def test_importing_the_cli_entry_point_is_light() -> None:
    loaded = _loaded_after("import callbench.cli.main")
    assert _heavy(loaded, HEAVY) == []


def test_importing_every_command_module_is_light() -> None:
    loaded = _loaded_after(
        """
        import importlib, pkgutil
        import callbench.cli as package
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module("callbench.cli." + info.name)
        """
    )
    assert "callbench.cli.run" in loaded and "callbench.cli.doctor" in loaded  # the loop did run
    assert _heavy(loaded, HEAVY) == []


@pytest.mark.parametrize("command", HELP_COMMANDS, ids=lambda c: " ".join(c) or "callbench")
def test_help_of_the_built_in_commands_is_light(command: list[str]) -> None:
    # No plugin: their command modules are theirs to keep light (checked by the next test).
    loaded = _loaded_after(
        f"""
        import contextlib, io
        import callbench.catalog as catalog_module
        catalog_module._CATALOG = catalog_module.Catalog()
        from callbench.cli.main import main
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = main({[*command, "--help"]!r})
        assert code == 0, code
        assert "Usage" in out.getvalue(), out.getvalue()
        """
    )
    heavy = HEAVY
    if "typer._adapters" in loaded:  # typer itself coerces some parameters' values with pydantic
        heavy = tuple(n for n in HEAVY if n != "pydantic")
    assert _heavy(loaded, heavy) == []


def test_help_with_the_installed_plugins_loads_no_engine_model_or_report() -> None:
    loaded = _loaded_after(
        """
        import contextlib, io
        from callbench.cli.main import main
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert main(["--help"]) == 0
        assert "generate" in out.getvalue()  # the plugins' groups are there
        """
    )
    allowed = set(PLUGIN_LOADED)
    assert _heavy(loaded, tuple(n for n in HEAVY if n not in allowed)) == []


def test_help_defaults_mirror_the_constants_they_stand_for() -> None:
    """The command signatures show these defaults without importing their home modules."""
    from callbench.cli import options
    from callbench.harness import doctor

    assert options.DEFAULT_CASE_LIMIT_S == doctor.DEFAULT_CASE_LIMIT_S
    assert options.CONTEXT_PROBE_TOKENS == doctor.CONTEXT_PROBE_TOKENS
