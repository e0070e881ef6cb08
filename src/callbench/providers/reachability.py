"""Is the model server there? A TCP connect before a run starts, and again once it stops answering.

Without it, a model string pointing at a server that is not running (``vllm:...`` before vLLM has
started, a mistyped port) retried for about 50 s per case and ended in a table of error records.
:func:`check_endpoint` tries one TCP connection to the provider's base URL before any run folder
is written, and stops the run with one line naming the URL and the connection error.

The check is cheap and never counts as a model request: it opens and closes a TCP connection, no
HTTP is spoken, no key is sent. Providers without an endpoint (built-in agents, ``hf`` local
models, scripted test providers) skip it; so do endpoints reached through a proxy (from the
environment), where a direct connection says nothing about what the client will reach.

Mid-run, :class:`~callbench.providers.model.Model` asks :func:`probe` again when a request gave up
on connection errors: if the server no longer accepts connections, the remaining requests to it
fail at once as :class:`EndpointDownError` error records (never scored against the model) instead
of each spending the whole retry budget.
"""

from __future__ import annotations

import socket
import time
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from callbench.errors import ConfigError, TransientProviderError
from callbench.providers.base import Provider
from callbench.secrets import scrub

PREFLIGHT_TIMEOUT_S = 5.0
"""Seconds a TCP connect may take before the server counts as unreachable."""


class EndpointUnreachableError(ConfigError):
    """The model server did not accept a connection before the run started (nothing was run)."""


class EndpointDownError(TransientProviderError):
    """The model server stopped accepting connections during the run; the case is an error record."""


@dataclass(frozen=True)
class Target:
    """Where a provider sends its requests."""

    url: str
    host: str
    port: int


def endpoint_of(provider: Provider) -> Target | None:
    """The host and port ``provider`` connects to, or ``None`` when it has no network endpoint."""
    if not provider.needs_network:
        return None
    url = provider.endpoint_url()
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port that is not a number: the request itself will say so
        return None
    return Target(url, parts.hostname, port)


def _behind_proxy(target: Target) -> bool:
    proxies = urllib.request.getproxies()
    scheme = urlsplit(target.url).scheme
    return bool(proxies.get(scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(target.host)


def probe(target: Target, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> str | None:
    """Open and close one TCP connection to ``target``.

    Returns:
        ``None`` when the server accepted the connection, else why not, in words.
    """
    try:
        with socket.create_connection((target.host, target.port), timeout=timeout_s):
            return None
    except ConnectionRefusedError:
        return f"connection refused (nothing listens on {target.host}:{target.port})"
    except socket.gaierror as exc:
        return f"cannot resolve host {target.host!r} ({exc.strerror or exc})"
    except TimeoutError:
        return f"no answer to a TCP connect to {target.host}:{target.port} within {timeout_s:g}s"
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror or exc}"


def _where_to_fix(provider: Provider) -> str:
    # prompt:<provider> wraps the provider that owns the preset.
    inner = getattr(provider, "inner", provider)
    preset = getattr(inner, "preset", None)
    variable = getattr(preset, "base_url_env", None)
    via = f"set {variable} or write MODEL@URL" if variable else "write MODEL@URL in the model string"
    return f"start the server, or point callbench at it ({via})"


def check_endpoint(provider: Provider, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> None:
    """Stop before the run when the provider's server does not accept a TCP connection.

    Raises:
        EndpointUnreachableError: With the URL, the connection error and what to do about it.
    """
    target = endpoint_of(provider)
    if target is None or _behind_proxy(target):
        return
    reason = probe(target, timeout_s)
    if reason is not None:
        raise EndpointUnreachableError(
            scrub(
                f"cannot reach the model server at {target.url}: {reason}; {_where_to_fix(provider)}. "
                "Nothing was run"
            )
        )


class DownEndpoints:
    """Endpoints found down mid-run, by URL, so that later requests fail fast (re-checked each time)."""

    def __init__(self) -> None:
        self._down: dict[str, tuple[str, float]] = {}

    def mark_if_down(self, provider: Provider) -> str | None:
        """Probe ``provider``'s server after a request gave up; remember it if it is down.

        Returns:
            Why the server is down, or ``None`` when it accepts connections (or has no endpoint).
        """
        target = endpoint_of(provider)
        if target is None or _behind_proxy(target):
            return None
        reason = probe(target, timeout_s=2.0)
        if reason is None:
            self._down.pop(target.url, None)
        else:
            self._down.setdefault(target.url, (reason, time.time()))
        return reason

    def any(self) -> bool:
        """True while some endpoint is marked down (the per-request fast path checks only this)."""
        return bool(self._down)

    def urls(self) -> list[str]:
        """Base URLs marked down now."""
        return list(self._down)

    def refuse_if_down(self, provider: Provider) -> None:
        """Raise :class:`EndpointDownError` at once when the server was down and still is."""
        if not self._down:
            return
        target = endpoint_of(provider)
        if target is None or target.url not in self._down:
            return
        reason = probe(target, timeout_s=2.0)
        if reason is None:
            self._down.pop(target.url, None)  # it came back: send the request
            return
        since = time.strftime("%H:%M:%S", time.localtime(self._down[target.url][1]))
        raise EndpointDownError(
            scrub(
                f"the model server at {target.url} stopped accepting connections during the run "
                f"(down since {since}: {reason}); the case was not sent; once the server is back, "
                "re-run the error records with --resume RUN_DIR"
            )
        )


down_endpoints = DownEndpoints()
"""Shared by every model of the process, like the endpoint limiters."""
