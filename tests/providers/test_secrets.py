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


def files_holding(root: Path, secret: str) -> list[str]:
    """Every file under ``root`` whose bytes contain ``secret`` (SQLite and WAL files included)."""
    return [str(p) for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_key_echoed_in_a_normal_reply_is_blanked_everywhere(
    api: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 13, item 11: a 200 reply that echoes the key (text, model name) reached records and cache."""
    import callbench

    monkeypatch.setenv("CB_ECHO_KEY", KEY)
    monkeypatch.setenv("CALLBENCH_CACHE_DIR", str(tmp_path / "cache"))
    with ProtocolServer() as server:
        server.echo_key = True
        model = f"openai:m@{server.url}" if api == "openai" else f"anthropic:m@{server.root}"
        result = callbench.run(
            "starter", f"{model}?key_env=CB_ECHO_KEY", out_dir=tmp_path / "run", limit=2, watch=True
        )
        again = callbench.run(  # answered from the cache
            "starter", f"{model}?key_env=CB_ECHO_KEY", out_dir=tmp_path / "again", limit=2
        )
        sent = [headers.get("authorization") or headers.get("x-api-key") for _, _, headers in server.requests]
    assert all(KEY in (value or "") for value in sent)  # the key still goes where it belongs
    rounds = [r for record in result.records for r in record.trace.rounds]
    assert rounds and all("you sent key ***" in r.text for r in rounds)
    assert again.summary["usage"]["tokens"]["cache_hits"] > 0
    assert files_holding(tmp_path, KEY) == []
    out = capsys.readouterr()
    assert "you sent key ***" in out.err and KEY not in out.out + out.err


def test_scrub_data_keeps_unchanged_objects() -> None:
    from callbench.secrets import register_secret, scrub_data

    register_secret(KEY)
    clean = {"a": ["x", {"b": 1}], "c": ("y",)}
    assert scrub_data(clean) is clean
    dirty = {"a": ["x", {KEY: f"k={KEY}"}], "c": (KEY,)}
    assert scrub_data(dirty) == {"a": ["x", {"***": "k=***"}], "c": ("***",)}
