"""The ``http`` executor: tools that are plain HTTP endpoints.

``HttpExecutor("https://tools.example.org/v1")`` answers a call ``name(arguments)`` by POSTing the
arguments as a JSON object to ``https://tools.example.org/v1/name`` through
:data:`~callbench.executors.http_client.http_client`, so ``--record``/``--replay`` keep and answer
its requests like any Python tool's (:mod:`callbench.executors.http_tape`). What the answer means:

* ``2xx``: the call's result — the body's JSON, or its text when it is not JSON;
* ``4xx``: the service refused the call (bad arguments, not found): a failed call the model reads —
  the body's ``error`` (or ``detail``, ``message``) when it is a JSON object, else its text;
* ``5xx``, any other status, or no answer at all: the service failed, not the model —
  :class:`~callbench.executors.http_client.HttpFault` (``tool_server_lost``, ``tool_server_timeout``),
  an error record.

A plugin or a ``--suite file.py`` builds it with the service's address (``headers`` for its key: they
are credentials, never taped, when named like one).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from callbench.executors.base import Executor, ExecutorSession, ToolOutcome
from callbench.executors.http_client import (
    DEFAULT_TIMEOUT_S,
    HttpClient,
    HttpFault,
    HttpResponse,
    normalise_url,
)
from callbench.suites.suite import Suite
from callbench.types.case import Case

ERROR_FIELDS = ("error", "detail", "message")
"""Fields of a JSON 4xx body read, in order, as the message the model hears."""


class HttpExecutor(Executor):
    """Tools as HTTP endpoints under ``base_url`` (see the module docstring)."""

    name = "http"

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        client: HttpClient | None = None,
    ) -> None:
        normalise_url(base_url)  # a malformed address fails when the suite is built
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers or {})
        self.client = client or HttpClient(timeout_s=timeout_s)

    def start(self, case: Case, workdir: Path, suite: Suite) -> ExecutorSession:
        return HttpToolSession(self)


class HttpToolSession(ExecutorSession):
    """One case's calls to the endpoints (stateless: the service keeps whatever state it has)."""

    def __init__(self, executor: HttpExecutor) -> None:
        self.executor = executor

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        executor = self.executor
        url = f"{executor.base_url}/{quote(name, safe='')}"
        response = await executor.client.apost(url, json=arguments, headers=executor.headers)
        if 200 <= response.status < 300:
            return ToolOutcome(ok=True, result=_body(response))
        if 400 <= response.status < 500:
            return ToolOutcome.failure(_error_text(response))
        raise HttpFault(
            "tool_server_lost", f"POST {response.url}: HTTP {response.status}: {response.text[:300]}"
        )


def _body(response: HttpResponse) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def _error_text(response: HttpResponse) -> str:
    body = _body(response)
    if isinstance(body, dict):
        for key in ERROR_FIELDS:
            if isinstance(body.get(key), str) and body[key]:
                return str(body[key])
        return json.dumps(body, ensure_ascii=False)
    return str(body) or f"HTTP {response.status}"
