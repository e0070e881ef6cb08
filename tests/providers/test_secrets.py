"""Keys come from env or the keys file and never reach errors, logs or records."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from protocol_server import Fault, ProtocolServer
from provider_helpers import SETTINGS, WEATHER, conversation

from callbench.errors import ConfigError, FatalProviderError
from callbench.providers import openai_compat
from callbench.secrets import get_key, scrub

KEY = "sk-test-0123456789abcdef-SECRET"


def test_key_from_env_and_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CB_TEST_KEY", KEY)
    assert get_key("CB_TEST_KEY") == KEY
    monkeypatch.delenv("CB_TEST_KEY")
    keys = tmp_path / "keys.toml"
    keys.write_text(f'[keys]\nCB_TEST_KEY = "{KEY}-file"\n')
    monkeypatch.setenv("CALLBENCH_KEYS_FILE", str(keys))
    assert get_key("CB_TEST_KEY") == f"{KEY}-file"
    with pytest.raises(ConfigError, match="set the environment variable CB_OTHER"):
        get_key("CB_OTHER", purpose="a test")


def test_key_is_sent_but_never_shown(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("CB_TEST_KEY", KEY)
    with ProtocolServer() as server:
        server.inject(Fault("401"))
        provider = openai_compat.make_provider(f"m@{server.url}?key_env=CB_TEST_KEY")

        async def go() -> None:
            try:
                await provider.generate(conversation(), [WEATHER], SETTINGS)
            finally:
                await provider.aclose()

        with pytest.raises(FatalProviderError) as info:
            asyncio.run(go())
        assert server.requests[0][2]["authorization"] == f"Bearer {KEY}"
    assert KEY not in str(info.value) and "CB_TEST_KEY" in str(info.value)
    assert KEY not in str(provider.describe())
    with caplog.at_level(logging.INFO):
        logging.getLogger("callbench.test").info("header was %s", KEY)
        logging.getLogger("httpx").info("key=%s", KEY)
    assert KEY not in caplog.text and "***" in caplog.text
    assert scrub(f"x {KEY} y") == "x *** y"
