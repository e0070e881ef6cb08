"""Rules every test runs under.

* A fresh catalog per test: plugins, suites and providers a test registers never leak into the next.
* No network but the loopback: tests talk to local protocol servers on 127.0.0.1 only. A connection
  anywhere else fails at once with a message naming the address (never a hang, never a real service).
* The response cache's default location is this process's own temporary folder
  (``CALLBENCH_CACHE_DIR``): tests never write ``~/.cache/callbench``, and two xdist workers never
  share one SQLite file. Tests that need a cache of their own still set the variable themselves.
* npm packages (the reference memory MCP server of the ``mcp-memory`` suite) are found under the
  test cache ``CALLBENCH_NPM_PREFIX`` (``~/.cache/callbench-test-npm`` unless set), where
  ``.ci/background.d/30-npm-mcp.sh`` installs them, never under the user's default prefix.
* Under pytest-xdist (``scripts/test.sh`` runs the suite on every core), the controller adds up the
  workers' metamorphic tallies and prints them, as a serial run does (``tests/scoring/conftest.py``).
* Under pytest-xdist ``-n auto`` starts one worker more than there are cores (much of a test's time
  is waiting), the slowest files are handed out first (``SLOW_FIRST``), ``tests/ray`` goes to one
  worker whole (``ONE_UNIT``) and last (``LAST``): the workers finish together and Ray starts once.
* The heap a test finds is frozen for the garbage collector (see ``_FrozenHeap``): a run in this
  process then collects what the test made, not the whole collected session again.
* The bytecode of callbench and of the tests is kept (``__pycache__``, ignored by git) although the
  environment may say ``PYTHONDONTWRITEBYTECODE``: see ``pytest_sessionstart``.
"""

from __future__ import annotations

import compileall
import gc
import ipaddress
import os
import socket
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from callbench.catalog import reset_catalog
from callbench.providers.cache import CACHE_DIR_ENV

ROOT = Path(__file__).resolve().parents[1]
NPM_PREFIX_ENV = "CALLBENCH_NPM_PREFIX"
LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


class NetworkBlocked(OSError):
    """A test tried to reach an address outside the loopback range."""


def _is_loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if not isinstance(host, str):
        return False
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _guard(address: Any, family: int) -> None:
    if family == getattr(socket, "AF_UNIX", None):
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if not _is_loopback(host):
        raise NetworkBlocked(f"tests may only connect to the loopback; refused {address!r}")


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _connect(self: socket.socket, address: Any) -> None:
    _guard(address, self.family)
    _real_connect(self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    _guard(address, self.family)
    return _real_connect_ex(self, address)


def _getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host is not None and not _is_loopback(host):
        raise NetworkBlocked(f"tests may only resolve loopback names; refused {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


def pytest_configure(config: pytest.Config) -> None:
    socket.socket.connect = _connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = _getaddrinfo


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile callbench and the tests once per run (only what changed since the last run).

    With ``PYTHONDONTWRITEBYTECODE`` set (as on CI machines) no process keeps the bytecode it
    compiles, though every one reads what it finds: each xdist worker compiled all of callbench and
    every test module again while collecting, and each ``callbench`` or tool-server subprocess the
    modules it imports. Run by the controller (or a serial run), before the workers start."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for folder in (ROOT / "src" / "callbench", ROOT / "tests"):
        compileall.compile_dir(folder, quiet=2)  # a file that does not compile is the tests' to report


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    """While test modules are imported, keep pytest's rewritten bytecode of them too (its own cache
    files in ``__pycache__``): the next collection reads it instead of rewriting every module. Only
    then: a test importing a module of its own (a plugin in a temporary folder) leaves no bytecode."""
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = before


@pytest.fixture(scope="session", autouse=True)
def private_response_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The default response cache of this process (of each worker under xdist), not the user's."""
    before = os.environ.get(CACHE_DIR_ENV)
    os.environ[CACHE_DIR_ENV] = str(tmp_path_factory.mktemp("response-cache"))
    yield
    if before is None:
        os.environ.pop(CACHE_DIR_ENV, None)
    else:
        os.environ[CACHE_DIR_ENV] = before


@pytest.fixture(scope="session", autouse=True)
def npm_test_prefix() -> Iterator[None]:
    """Where the suites find their npm packages: the test cache the CI step installs into."""
    before = os.environ.get(NPM_PREFIX_ENV)
    os.environ[NPM_PREFIX_ENV] = before or str(Path.home() / ".cache" / "callbench-test-npm")
    yield
    if before is None:
        os.environ.pop(NPM_PREFIX_ENV, None)


@pytest.fixture(autouse=True)
def fresh_catalog() -> Iterator[None]:
    """Each test starts and ends with a catalog built from the installed entry points alone."""
    reset_catalog()
    yield
    reset_catalog()


class _FrozenHeap:
    """Keeps the garbage collector off the long-lived heap of the test session.

    A test process holds every collected test (modules, items, parametrised suites: some 650,000
    objects after a whole-suite collection, as each xdist worker makes), and callbench's engine
    starts every run with ``gc.collect()`` and ``gc.freeze()`` and ends it with ``gc.unfreeze()``
    unless the process froze its heap already: without a freeze here, a full collection of that whole
    heap (half a second) per run, and after the unfreeze the oldest generation's automatic
    collections scan all of it again. Measured on three run-heavy test files after a whole-suite
    collection: 24 s of 41 s of CPU went to such collections.

    So the heap is frozen before each test (the engine then keeps that freeze). Cyclic garbage that
    a freeze caught is released by a real full collection every ``FULL_EVERY`` tests."""

    FULL_EVERY = 100

    def __init__(self) -> None:
        self.tests = 0

    def before_test(self) -> None:
        self.tests += 1
        if self.tests % self.FULL_EVERY == 0:
            gc.unfreeze()
            gc.collect()
        gc.freeze()


_HEAP = _FrozenHeap()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _HEAP.before_test()


# --- handing files out to pytest-xdist workers ------------------------------------------------------


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (``scripts/test.sh``): one worker more than there are cores. Much of a test's time
    is spent waiting (on a tool server or agent process starting, a time limit running out, a
    server's answer): with one worker per core a core idled for about 40% of a run. Measured on a
    2-core machine (tests/harness, providers, report, sweep and review): 152 s with 2 workers,
    118 s with 3, the same CPU time."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


ONE_UNIT = ("tests/ray/",)
"""Folders whose files one xdist worker runs in a row (``--dist loadfile`` hands out single files):
the Ray tests share one local Ray instance (``tests/ray/conftest.py``), ~10 s and a few busy
processes to start, which each worker running one of them would start again."""

SLOW_FIRST = (
    "tests/benchmarks/tau2/test_tau2_suite.py",
    "tests/benchmarks/mcp_memory/test_mcp_memory.py",
    "tests/executors/test_builtin_tools_fuzz.py",
    "tests/agents/test_ci_gate.py",
    "tests/mcp/test_isolation.py",
    "tests/agents/test_example_agents_smoke.py",
    "tests/mcp/test_tools_option.py",
    "tests/executors/test_cassettes.py",
    "tests/benchmarks/mcp_git/test_mcp_git.py",
    "tests/report/test_cases_browser.py",
    "tests/harness/test_agent_under_test.py",
    "tests/benchmarks/bfcl/test_agreement.py",
    "tests/review/test_review_loop_browser.py",
    "tests/agents/test_agent_model_proxy.py",
    "tests/scoring/test_metamorphic.py",
    "tests/benchmarks/bfcl/test_score_files.py",
    "tests/mcp/test_manifest_runs.py",
    "tests/providers/test_case_clock.py",
    "tests/agents/test_example_agents_verdicts.py",
    "tests/harness/test_hostile_json.py",
    "tests/executors/test_http_cassettes.py",
    "tests/review/test_review_cli.py",
    # these use the fresh venv (handed out after all others but the Ray tests), slowest first
    "tests/cli/test_newcomer_lifecycle.py",
    "tests/cli/test_newcomer_polish.py",
)
"""The slowest files, slowest first, as measured on a 2-core machine. Under xdist they are handed out
first, the many quick files after them: the workers then finish within seconds of each other, where
a slow file handed out last would keep one worker busy alone."""

LAST = (
    "tests/ray/test_ray_same_verdicts.py",
    "tests/ray/test_ray_sweep.py",
    "tests/ray/test_ray_cli_errors.py",
    "tests/ray/test_ray_global_limits.py",
)
"""Handed out after every other file, in this order. ``test_rpm_holds_across_workers`` times
requests from two Ray workers against a token bucket: while other workers keep both cores busy, its
first 120 requests go out too slowly for the bucket to still be empty when the last ten ask (it
failed so under two busy processes, and passed under one). By the end of the run the other workers
have little or nothing left."""


def _first(path: str, prefixes: tuple[str, ...]) -> int | None:
    return next((i for i, prefix in enumerate(prefixes) if path.startswith(prefix)), None)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under xdist (``--no-loadscope-reorder`` hands files out in this order): the slow files first,
    the fresh-venv files after the others (as tests/cli/conftest.py sorts them, so that the venv's
    background build is done when they start), the files of ``LAST`` at the end. A stable sort: files
    stay whole and otherwise in collection order."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    fresh = {item.nodeid.split("::")[0] for item in items if "fresh_cli" in getattr(item, "fixturenames", ())}

    def place(item: pytest.Item) -> tuple[int, int]:
        path = item.nodeid.split("::")[0]
        last = _first(path, LAST)
        if last is not None:
            return 2, last
        slow = _first(path, SLOW_FIRST)
        return int(path in fresh), len(SLOW_FIRST) if slow is None else slow

    items.sort(key=place)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist, in the controller: ``--dist loadfile`` with the folders of ``ONE_UNIT`` handed
    out whole."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesAndFolders(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            found = _first(nodeid, ONE_UNIT)
            return ONE_UNIT[found] if found is not None else super()._split_scope(nodeid)

    return FilesAndFolders(config, log)


_WORKER_TALLY: dict[str, Counter[str]] = {}
"""The metamorphic tallies of the xdist workers, added up (empty in a serial run)."""


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist, in the controller: a worker finished; keep its metamorphic tally."""
    tally = getattr(node, "workeroutput", {}).get("metamorphic_tally", {})
    for name, counts in tally.items():
        _WORKER_TALLY.setdefault(name, Counter()).update(counts)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The workers' metamorphic tally, formatted by ``tests/scoring/metamorphic.py`` as in a serial run."""
    if not _WORKER_TALLY:
        return
    sys.path.insert(0, str(Path(__file__).parent / "scoring"))
    import metamorphic

    metamorphic.TALLY.clear()
    metamorphic.TALLY.update(_WORKER_TALLY)
    terminalreporter.section("metamorphic relations (cases applied / held)")
    for line in metamorphic.report_lines():
        terminalreporter.write_line(line)
