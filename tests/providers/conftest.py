"""Shared fixtures: a protocol server per test and fast retry options."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from protocol_server import ProtocolServer

from callbench.providers.model import ModelOptions, RetryPolicy


@pytest.fixture
def server() -> Iterator[ProtocolServer]:
    with ProtocolServer() as srv:
        yield srv


@pytest.fixture
def fast_options() -> ModelOptions:
    """Short backoff so retry tests take milliseconds; no cache."""
    return ModelOptions(
        retry=RetryPolicy(max_retries=3, max_retry_time_s=5.0, base_delay_s=0.01, max_delay_s=0.05),
        request_timeout_s=0.5,
        use_cache=False,
    )
