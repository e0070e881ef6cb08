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
"""

from __future__ import annotations

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
