import sys
from pathlib import Path

# The synthetic-record generator lives beside the tests; make it importable as ``synth``.
sys.path.insert(0, str(Path(__file__).parent))


import pytest


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium per test module (launching one per test is slow). Not per session:
    Playwright's sync API keeps an event loop running, which would break ``asyncio.run`` in
    other modules' tests."""
    from browser import browser_context

    with browser_context() as ctx:
        yield ctx


@pytest.fixture
def browser(chromium):
    """``(page, console)``: a fresh page in the shared browser."""
    from browser import new_page

    with new_page(chromium) as pair:
        yield pair
