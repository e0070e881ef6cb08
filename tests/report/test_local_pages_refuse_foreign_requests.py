"""``callbench view`` and ``callbench review`` answer only their own pages (issue 33, item 8): a request
whose ``Host`` or ``Origin`` names another site — what a DNS-rebinding page in the user's browser sends
— is refused with 403 before it can read a record, on every endpoint."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from synth import make_records, write_run

from callbench.report.live import LiveServer
from callbench.report.local_server import LocalServer
from callbench.review.page import ReviewServer


@pytest.fixture(params=["view", "review"])
def page_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[LocalServer, str]]:
    records = make_records(5, seed=2)
    run = write_run(tmp_path / "run", records)
    server: LocalServer = (
        LiveServer(run, port=0) if request.param == "view" else ReviewServer([run], "ann", port=0)
    )
    server.start_background()
    try:
        yield server, records[0]["key"]
    finally:
        server.close()


def get(server: LocalServer, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    port = int(server.url.rsplit(":", 1)[1].strip("/"))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest("GET", path, skip_host=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def paths(key: str) -> list[str]:
    return ["/", f"/api/record?run=0&key={key}&trial=1", "/api/update?offset=0", "/api/queue"]


def test_the_servers_own_host_is_answered(page_server: tuple[LocalServer, str]) -> None:
    server, key = page_server
    port = server.url.rsplit(":", 1)[1].strip("/")
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        status, body = get(server, "/", {"Host": host})
        assert status == 200 and b"<html" in body.lower()
        status, _ = get(server, "/", {"Host": host, "Origin": f"http://{host}"})
        assert status == 200


@pytest.mark.parametrize(
    "foreign",
    [
        {"Host": "attacker.example:{port}"},
        {"Host": "attacker.example"},
        {},  # no Host at all
        {"Host": "127.0.0.1:{port}", "Origin": "http://attacker.example"},
        {"Host": "127.0.0.1:{port}", "Origin": "null"},
    ],
)
def test_a_foreign_host_or_origin_is_refused_on_every_endpoint(
    page_server: tuple[LocalServer, str], foreign: dict[str, Any]
) -> None:
    server, key = page_server
    port = server.url.rsplit(":", 1)[1].strip("/")
    headers = {name: value.format(port=port) for name, value in foreign.items()}
    for path in paths(key):
        status, body = get(server, path, headers)
        assert status == 403, (path, headers, status)
        assert key.encode() not in body  # nothing of the run leaks in the refusal
