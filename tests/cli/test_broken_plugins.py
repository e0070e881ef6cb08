"""Broken, colliding and well-made plugins side by side (issue 27, item 8).

One installed distribution declares six ``callbench`` entry points: a good one, one whose module does
not exist, one with a typo in its ``module:attr``, one whose ``register()`` raises half-way, one named
``starter`` like callbench's own benchmark, and one in a ``callbench_*`` module that needs a package
that is not installed. Every command keeps working; each problem is one warning line naming the
distribution and the error; nothing a broken plugin registered half-way survives; the built-in
``starter`` is still there; ``callbench plugins`` lists everything; ``run.json`` says which
distribution and version provided the suite a run used.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from plugin_site import install_plugin
from plugin_site import run_cli as callbench

PLUGIN_CODE = """
from callbench.suites.suite import Suite
from callbench.tools.registry import ToolRegistry
from callbench.types.case import Case
from callbench.types.contract import ToolContract


def _suite(name):
    tool = ToolContract(name="ping", parameters={"type": "object", "properties": {"n": {"type": "integer"}}})
    case = Case(id="p1", instruction="ping 3", expected=[{"tool": "ping", "arguments": {"n": 3}}])
    return Suite(name=name, cases=[case], registry=ToolRegistry([tool]), executor="contract", version="4.2")


def register(catalog):
    catalog.suites.register("zoo-good", lambda spec, options: _suite("zoo-good"))


def register_then_fail(catalog):
    catalog.suites.register("zoo-half", lambda spec, options: _suite("zoo-half"))
    raise RuntimeError("the data folder is missing")


def register_shadow(catalog):
    catalog.suites.register("zoo-shadow", lambda spec, options: _suite("zoo-shadow"))
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("zoo")
    pkg = root / "src"
    (pkg / "cbplugin_zoo").mkdir(parents=True)
    (pkg / "callbench_zoo_extra").mkdir()
    (pkg / "pyproject.toml").write_text(
        textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "cbplugin-zoo"
        version = "1.2.3"
        [project.entry-points.callbench]
        zoo = "cbplugin_zoo:register"
        zoo-missing = "cbplugin_no_such_module:register"
        zoo-typo = "cbplugin_zoo:registr"
        zoo-half = "cbplugin_zoo:register_then_fail"
        starter = "cbplugin_zoo:register_shadow"
        zoo-extra = "callbench_zoo_extra:register"
        [tool.setuptools]
        packages = ["cbplugin_zoo", "callbench_zoo_extra"]
    """)
    )
    (pkg / "cbplugin_zoo" / "__init__.py").write_text(PLUGIN_CODE)
    (pkg / "callbench_zoo_extra" / "__init__.py").write_text("import zoo_weather_data_not_installed\n")
    target = root / "site"
    install_plugin(pkg, target)
    return target


def warning_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("callbench: warning:")]


def test_broken_plugins_are_one_line_each_and_every_other_suite_keeps_working(
    site: Path, tmp_path: Path
) -> None:
    done = callbench(site, "suites", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = warning_lines(done.stderr)
    assert len(lines) == 5, lines  # four broken plugins and one name collision
    joined = "\n".join(lines)
    assert "plugin 'zoo-missing' from cbplugin-zoo 1.2.3 was skipped" in joined
    assert (
        "cbplugin_no_such_module:register needs the module 'cbplugin_no_such_module', which is not installed"
        in joined
    )
    assert (
        "plugin 'zoo-typo' from cbplugin-zoo 1.2.3 was skipped" in joined
        and "module cbplugin_zoo has no 'registr'" in joined
    )
    assert (
        "plugin 'zoo-half' from cbplugin-zoo 1.2.3 was skipped: RuntimeError: the data folder is missing"
        in joined
    )
    # a callbench_* plugin missing a package is told which package, not "not available in this installation"
    assert "'zoo_weather_data_not_installed'" in joined and "not available in this installation" not in joined
    assert "entry point 'starter' is declared by callbench" in joined and "cbplugin-zoo" in joined
    # the built-in starter is still there beside the plugin named like it; the half-registered suite is gone
    listed = done.stdout
    assert (
        "starter" in listed and "zoo-good" in listed and "zoo-shadow" in listed and "zoo-half" not in listed
    )


def test_plugins_lists_versions_and_registrations_and_run_json_names_the_provider(
    site: Path, tmp_path: Path
) -> None:
    done = callbench(site, "plugins", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    table = " ".join(done.stdout.split())
    assert "cbplugin-zoo" in table and "1.2.3" in table and "suite: zoo-good" in table and "skipped" in table
    out = tmp_path / "run"
    done = callbench(
        site, "run", "-s", "zoo-good", "-m", "oracle", "--progress", "quiet", "-o", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    suite = json.loads((out / "run.json").read_text())["suites"][0]
    assert (suite["plugin"], suite["plugin_version"], suite["version"]) == ("cbplugin-zoo", "1.2.3", "4.2")
    done = callbench(
        site,
        "run",
        "-s",
        "starter",
        "-m",
        "oracle",
        "--progress",
        "quiet",
        "-o",
        str(tmp_path / "s"),
        "--limit",
        "1",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    builtin = json.loads((tmp_path / "s" / "run.json").read_text())["suites"][0]
    assert builtin["plugin"] == "callbench" and builtin["name"] == "starter"
