"""The root conftest's rules hold: no network but the loopback, and a catalog that never leaks."""

from __future__ import annotations

import socket
import urllib.request

import pytest

from callbench.catalog import catalog


def test_connections_outside_the_loopback_are_refused_at_once() -> None:
    with pytest.raises(OSError, match="loopback"):
        socket.create_connection(("192.0.2.1", 80), timeout=5)  # TEST-NET-1: never reachable anyway
    with pytest.raises(OSError, match="loopback"):
        urllib.request.urlopen("http://example.org/", timeout=5)


def test_the_loopback_is_allowed() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        client = socket.create_connection(server.getsockname(), timeout=5)
        client.close()
    finally:
        server.close()


def test_a_registered_suite_is_gone_in_the_next_test_part_one() -> None:
    catalog().suites.register("leaky-suite", lambda spec, options: None)
    assert "leaky-suite" in catalog().suites


def test_a_registered_suite_is_gone_in_the_next_test_part_two() -> None:
    assert "leaky-suite" not in catalog().suites
