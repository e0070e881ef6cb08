"""Fixtures of the review tests: the report tests' headless Chromium (``tests/report/browser.py``)."""

import sys
from pathlib import Path

import pytest

# browser.py lives with the report tests; the review page tests drive the same system Chromium.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium per test module (see tests/report/conftest.py for why not per session)."""
    from browser import browser_context

    with browser_context(1440, 900) as ctx:
        yield ctx


@pytest.fixture
def browser(chromium):
    """``(page, console)``: a fresh page in the shared browser."""
    from browser import new_page

    with new_page(chromium) as pair:
        yield pair
