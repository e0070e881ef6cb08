"""Connecting the driver to Ray: a local instance, the cluster this machine belongs to (``auto``), or an
address; an address nobody answers at is one line within seconds (``ray.init`` itself retries for
minutes), and what this process started it also shuts down."""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from callbench.errors import ConfigError
from callbench.harness.backends import require_ray

CONNECT_TIMEOUT_S = 3.0
RAY_ENV = {"RAY_DISABLE_USAGE_STATS": "1"}
"""Quiet runs: no usage-stats prompt or upload."""


def _host_port(address: str) -> tuple[str, int] | None:
    """``host:port`` of an explicit address (``ray://`` or plain); ``None`` for ``auto``."""
    if address == "auto":
        return None
    rest = address.removeprefix("ray://").rstrip("/")
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(f"--ray-address {address!r}: expected 'auto', 'host:port' or 'ray://host:port'")
    return host.strip("[]"), int(port)


def check_reachable(address: str) -> None:
    """One line naming ``address`` when nothing listens there (a plain TCP connect, a few seconds)."""
    target = _host_port(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"--ray-address {address}: no Ray cluster answers there ({reason}); start one with "
            "'ray start --head', or leave --ray-address out to start a local Ray instance"
        ) from None


def worker_env() -> dict[str, str]:
    """Environment for Ray workers: the driver's own import path (a worktree, ``tests/helpers``), so
    workers import the same callbench and the same plugins; interpreter paths are left to the worker."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    own = [p for p in sys.path if p and os.path.isdir(p) and not any(p.startswith(x) for x in prefixes)]
    extra = os.environ.get("PYTHONPATH", "")
    paths = list(dict.fromkeys(own + [p for p in extra.split(os.pathsep) if p]))
    return {"PYTHONPATH": os.pathsep.join(paths), **RAY_ENV} if paths else dict(RAY_ENV)


class _DropEnabledNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Token authentication is enabled")


@contextmanager
def _quiet_auth_notice() -> Iterator[None]:
    """Ray prints that it turned token authentication on for a local instance on every start; the
    secure default needs no notice on every run (a notice that it is *off* still shows)."""
    logger = logging.getLogger("ray._private.authentication.authentication_token_setup")
    notice = _DropEnabledNotice()
    logger.addFilter(notice)
    try:
        yield
    finally:
        logger.removeFilter(notice)


@contextmanager
def ray_session(address: str | None, num_cpus: int | None = None) -> Iterator[Any]:
    """Yield the ``ray`` module connected as asked; reuse a session this process already has."""
    ray = require_ray()
    if ray.is_initialized():  # e.g. a test fixture or a script that called ray.init itself
        if address is not None:  # an address asked for must still answer, even if it goes unused
            check_reachable(address)
        yield ray
        return
    for key, value in RAY_ENV.items():
        os.environ.setdefault(key, value)
    options: dict[str, Any] = {
        "log_to_driver": False,
        "configure_logging": False,
        "runtime_env": {"env_vars": worker_env()},
    }
    if address is None:
        options.update(num_cpus=num_cpus or os.cpu_count() or 1, include_dashboard=False)
    else:
        check_reachable(address)
        options["address"] = address
    try:
        with _quiet_auth_notice():
            ray.init(**options)
    except ConnectionError as exc:  # 'auto' with no cluster running on this machine
        why = "no Ray cluster runs on this machine" if address == "auto" else str(exc)
        raise ConfigError(
            f"--ray-address {address}: {why}; start one with 'ray start --head', or leave --ray-address "
            "out to start a local Ray instance"
        ) from None
    try:
        yield ray
    finally:
        ray.shutdown()
