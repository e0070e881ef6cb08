"""Headless Chromium for the report tests: the system browser through Playwright.

Playwright never downloads a browser here; it drives Debian's ``chromium`` via
``executable_path``. Under CI (``CI=true``) a missing browser is a failure, not a skip.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def chromium_path() -> str | None:
    """The system Chromium, or ``CALLBENCH_CHROMIUM`` when set."""
    explicit = os.environ.get("CALLBENCH_CHROMIUM")
    if explicit:
        return explicit
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def require_browser() -> str:
    """Path of the browser; fail under CI, skip elsewhere, when it or Playwright is missing."""
    path = chromium_path()
    problem = None
    if path is None:
        problem = "no chromium on PATH (run .ci/background.d/10-debian.sh)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            problem = "the playwright package is not installed (pip install -e .[test])"
    if problem:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"browser test cannot run in CI: {problem}")
        pytest.skip(problem)
    assert path is not None
    return path


class Console:
    """Console errors, uncaught exceptions and dialogs seen by a page."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.dialogs: list[str] = []

    def attach(self, page: Any) -> None:
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        page.on("dialog", self._dialog)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


@contextmanager
def browser_context(width: int = 1400, height: int = 1000, *, enforce_csp: bool = False) -> Iterator[Any]:
    """A headless Chromium with a fresh user-data-dir (one launch serves many pages).

    ``enforce_csp``: keep the page's Content-Security-Policy on (and accept downloads), for the tests
    that prove a feature works under it."""
    from playwright.sync_api import sync_playwright

    exe = require_browser()
    with tempfile.TemporaryDirectory(prefix="cb-chromium-") as profile, sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            profile,
            executable_path=exe,
            args=FLAGS,
            headless=True,
            viewport={"width": width, "height": height},
            # The page's CSP is defence in depth; tests bypass it so the escaping is proven on
            # its own (and so Playwright may evaluate its wait predicates).
            bypass_csp=not enforce_csp,
            accept_downloads=enforce_csp,
        )
        try:
            yield ctx
        finally:
            ctx.close()


@contextmanager
def new_page(ctx: Any) -> Iterator[tuple[Any, Console]]:
    """A new page in ``ctx`` with its console recorder; closed afterwards."""
    page = ctx.new_page()
    console = Console()
    console.attach(page)
    try:
        yield page, console
    finally:
        page.close()


@contextmanager
def browser_page(width: int = 1400, height: int = 1000) -> Iterator[tuple[Any, Console]]:
    """A page in a browser of its own (for scripts; tests share one browser via fixtures)."""
    with browser_context(width, height) as ctx, new_page(ctx) as pair:
        yield pair
