"""Rules every test runs under.

* A fresh catalog per test: plugins, suites and providers a test registers never leak into the next.
* No network but the loopback: tests talk to local protocol servers on 127.0.0.1 only. A connection
  anywhere else fails at once with a message naming the address (never a hang, never a real service).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from callbench.catalog import reset_catalog

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


@pytest.fixture(autouse=True)
def fresh_catalog() -> Iterator[None]:
    """Each test starts and ends with a catalog built from the installed entry points alone."""
    reset_catalog()
    yield
    reset_catalog()
