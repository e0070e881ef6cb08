"""A page server on 127.0.0.1: the one lifecycle behind ``callbench view`` and ``callbench review``."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from callbench.errors import UserError


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
