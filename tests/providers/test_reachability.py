"""Issue 13, item 7: a model server that is not there stops the run at once, with the URL and the
error; one that dies mid-run gives error records that say so, never scored against the model."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from protocol_server import ProtocolServer

import callbench
from callbench.providers.model import make_provider
from callbench.providers.reachability import (
    EndpointUnreachableError,
    check_endpoint,
    down_endpoints,
    endpoint_of,
)


def closed_port() -> int:
    """A loopback port where nothing listens (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("model", "env"),
    [
        ("vllm:qwen", "VLLM_BASE_URL"),
        ("prompt:ollama:llama3", "OLLAMA_BASE_URL"),
        ("openai:m@{url}", None),
        ("anthropic:claude@{root}", None),
    ],
)
def test_unreachable_server_stops_before_the_run(
    model: str, env: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = closed_port()
    url, root = f"http://127.0.0.1:{port}/v1", f"http://127.0.0.1:{port}"
    if env:
        monkeypatch.setenv(env, url)
    out = tmp_path / "run"
    started = time.monotonic()
    with pytest.raises(EndpointUnreachableError) as info:
        callbench.run("starter", model.format(url=url, root=root), out_dir=out, progress="quiet", limit=2)
    message = str(info.value)
    assert f"127.0.0.1:{port}" in message and "connection refused" in message and "\n" not in message
    assert ("set " + env) in message if env else "MODEL@URL" in message
    assert time.monotonic() - started < 10  # not 50 s of retries per case
    assert not out.exists()  # no half-made run folder


def test_check_is_not_a_model_request_and_skips_agents(server: ProtocolServer, tmp_path: Path) -> None:
    check_endpoint(make_provider(f"openai:m@{server.url}"))
    check_endpoint(make_provider(f"prompt:openai:m@{server.url}"))
    assert server.requests == []  # a TCP connect only: nothing reached the HTTP handler
    for agent in ("oracle", "baseline", "refuse", f"hf:{tmp_path}"):  # hf: a local checkpoint, loaded lazily
        assert endpoint_of(make_provider(agent)) is None
        check_endpoint(make_provider(agent))


def test_unresolvable_host_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_such_host(*args: object, **kwargs: object) -> object:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_host)
    with pytest.raises(EndpointUnreachableError, match="cannot resolve host 'gpu-box.invalid'"):
        check_endpoint(make_provider("openai:m@http://gpu-box.invalid:8000/v1"))


def test_server_dying_mid_run_gives_error_records_that_say_why(tmp_path: Path) -> None:
    with ProtocolServer() as server:
        server.stop_after = 1  # answers the first round of the first case, then is gone
        url = server.url
        started = time.monotonic()
        result = callbench.run(
            "starter",
            f"openai:m@{url}",
            out_dir=tmp_path / "run",
            progress="quiet",
            limit=4,
            concurrency=1,
            max_retries=2,
            cache=False,
        )
        elapsed = time.monotonic() - started
    records = result.records
    assert [r.status for r in records] == ["error"] * 4  # never scored against the model
    assert all(r.error is not None and r.error.type == "EndpointDownError" for r in records)
    assert all(url in r.error.message for r in records if r.error is not None)
    assert "connection refused" in records[0].error.message  # type: ignore[union-attr]
    # Only the first case spends the retry budget; the others are refused after one re-check.
    assert sum("was not sent" in (r.error.message if r.error else "") for r in records) == 3
    assert elapsed < 15
    assert result.summary["n_error"] == 4 and result.summary["errors_by_type"] == {"EndpointDownError": 4}


def test_a_server_that_comes_back_is_used_again(tmp_path: Path) -> None:
    with ProtocolServer() as server:
        port = server.port
        server.stop_after = 1
        callbench.run(
            "starter",
            f"openai:m@{server.url}",
            out_dir=tmp_path / "a",
            progress="quiet",
            limit=2,
            max_retries=1,
            cache=False,
        )
    url = f"http://127.0.0.1:{port}/v1"
    assert url in down_endpoints.urls()
    revived = ProtocolServer()
    revived.port = port  # the same server address, up again
    with revived:
        result = callbench.run(
            "starter",
            f"openai:m@{revived.url}",
            out_dir=tmp_path / "b",
            progress="quiet",
            limit=2,
            cache=False,
        )
    assert result.summary["n_error"] == 0 and result.summary["n_completed"] == 2
    assert url not in down_endpoints.urls()
