"""A page server on 127.0.0.1: the one lifecycle behind ``callbench view`` and ``callbench review``."""

from __future__ import annotations

import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from callbench.errors import UserError


class LocalOnlyHandler(BaseHTTPRequestHandler):
    """A request handler that answers only this machine's own pages.

    Binding to 127.0.0.1 keeps other hosts out, but not a web page in the user's browser: through DNS
    rebinding a foreign site's name can resolve to 127.0.0.1, and its scripts could then read a whole
    run. So every request, GET included, must name this server in ``Host`` (``127.0.0.1:PORT`` or
    ``localhost:PORT``) and, when it has an ``Origin``, come from one of those origins; anything else is
    403 before any handler runs (as ``serve-tools`` refuses foreign hosts for the MCP endpoint).
    """

    def parse_request(self) -> bool:  # http.server's hook: runs after the request line and headers
        if not super().parse_request():
            return False
        port = int(self.server.server_address[1])  # type: ignore[index]  # an AF_INET (host, port) pair
        refusal = foreign_request(self.headers.get("Host"), self.headers.get("Origin"), port)
        if refusal is not None:
            self.send_error(HTTPStatus.FORBIDDEN, refusal)
            return False
        return True


def foreign_request(host: str | None, origin: str | None, port: int) -> str | None:
    """Why a request is not from this server's own page (``None`` when it is)."""
    own = (f"127.0.0.1:{port}", f"localhost:{port}")
    if host not in own:
        return f"refused: Host {host!r} is not this server ({own[0]})"
    if origin is not None and origin not in tuple(f"http://{name}" for name in own):
        return f"refused: a request from origin {origin!r}, not from this server's own page"
    return None


class LocalServer:
    """A threading HTTP server bound to 127.0.0.1 only, with a start/stop that never hangs.

    Raises:
        UserError: when the port cannot be bound (one line, with the ``--port 0`` hint).
    """

    def __init__(self, handler: type[BaseHTTPRequestHandler], port: int) -> None:
        try:
            self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        except OSError as exc:
            raise UserError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror} (try --port 0)") from None
        self.httpd.daemon_threads = True
        self._serving = False

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/`` (the port the system chose when 0 was asked)."""
        host, port = self.httpd.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else host
        return f"http://{name}:{port}/"

    def serve_forever(self) -> None:
        """Serve until :meth:`close` (or Ctrl-C in the caller)."""
        self._serving = True
        self.httpd.serve_forever(poll_interval=0.2)

    def start_background(self) -> threading.Thread:
        """Serve from a daemon thread (tests, embedding); stop with :meth:`close`."""
        self._serving = True  # before the thread runs: a close() right after must still stop it
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        """Stop serving (when serving) and release the port."""
        if self._serving:  # shutdown() waits for a serve loop: it would hang on a server never started
            self.httpd.shutdown()
            self._serving = False
        self.httpd.server_close()
