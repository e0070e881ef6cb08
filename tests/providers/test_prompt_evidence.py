"""Prompt mode and local checkpoints keep the evidence: the model's text as received on every round,
beside what the parser took from it, and a format failure scored with its own reason code."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from protocol_server import Api, ProtocolServer, Turn
from provider_helpers import SETTINGS, WEATHER, conversation

import callbench
from callbench.providers import hf_local
from callbench.providers.prompt_mode import FORMAT_ERROR, read_turn
from callbench.types.messages import ModelTurn
from callbench.types.summary import Summary

BROKEN = '{"name": "get_weather", "arguments": {"city": '
READABLE = 'Checking. <tool_call>{"name": "weather.get", "arguments": {"city": "Paris"}}</tool_call>'


def test_read_turn_keeps_the_text_as_received() -> None:
    parsed = read_turn(ModelTurn(text=READABLE), [WEATHER])
    assert parsed.raw_text == READABLE and parsed.text == "Checking."
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("weather.get", {"city": "Paris"})]
    broken = read_turn(ModelTurn(text=BROKEN, finish_reason="stop"), [WEATHER])
    assert broken.raw_text == BROKEN and broken.finish_reason == FORMAT_ERROR and broken.tool_calls == []
    plain = read_turn(ModelTurn(text="It is sunny."), [WEATHER])
    assert plain.raw_text == "It is sunny." and plain.text == "It is sunny." and plain.finish_reason is None
    # An empty answer (a real server's 6 tokens, all special) tried nothing: not a format error.
    for empty in ("", "  \n"):
        nothing = read_turn(ModelTurn(text=empty, finish_reason="stop"), [WEATHER])
        assert nothing.finish_reason == "stop" and nothing.tool_calls == [] and nothing.raw_text == empty


def _prompt_run(text: str, out: Path) -> Any:
    def responder(api: Api, body: dict[str, Any]) -> Turn:
        return Turn(text=text)

    with ProtocolServer(responder=responder) as server:
        return callbench.run("starter", f"prompt:openai:m@{server.url}", out_dir=out, cache=False, limit=4)


def test_format_failure_keeps_raw_text_and_gets_its_reason(tmp_path: Path) -> None:
    result = _prompt_run(BROKEN, tmp_path / "run")
    with_calls = [r for r in result.records if r.expected_tools]
    assert with_calls
    for record in result.records:
        [info] = record.trace.rounds
        # the text as received is the text (nothing was taken out): stored once, raw_text left out
        assert info.text == BROKEN and info.raw_text is None and info.finish_reason == FORMAT_ERROR
        assert info.text_call_format is None  # prompt mode: the model's fault, never a serving suspect
    for record in with_calls:
        for verdict in record.verdicts.values():
            assert verdict.codes[:2] == ["no_structured_call", "format_error"]
    summary = Summary.from_json_dict(result.summary)
    assert summary.serving is not None and summary.serving.format_error_cases == len(result.records)
    assert summary.serving.text_call_answers == 0


def test_readable_calls_keep_the_raw_text_beside_the_leftover(tmp_path: Path) -> None:
    result = _prompt_run(READABLE, tmp_path / "run")
    first = result.records[0].trace.rounds[0]
    assert first.raw_text == READABLE and first.text == "Checking." and first.finish_reason != FORMAT_ERROR


# --- hf: a stand-in tokenizer and model (no torch needed): what the provider keeps of the output ----


class _Tensor:
    def __init__(self, tokens: list[int]) -> None:
        self.tokens = tokens
        self.shape = (1, len(tokens))

    def __getitem__(self, index: tuple[int, slice]) -> list[int]:
        return self.tokens[index[1]]


class _Batch(dict):  # type: ignore[type-arg]
    def to(self, _device: Any) -> _Batch:
        return self


class _Tokenizer:
    chat_template = "x"
    pad_token_id = 0
    eos_token_id = 0

    def __init__(self, text: str) -> None:
        self.text = text

    def apply_chat_template(self, *_args: Any, **_kwargs: Any) -> str:
        return "prompt"

    def __call__(self, *_args: Any, **_kwargs: Any) -> _Batch:
        return _Batch(input_ids=_Tensor([1, 2, 3]))

    def decode(self, tokens: list[int], skip_special_tokens: bool = True) -> str:
        return self.text


class _Model:
    device = "cpu"

    def generate(self, **kwargs: Any) -> _Tensor:
        return _Tensor([1, 2, 3, 7, 8])


class _Torch:
    @staticmethod
    def no_grad() -> Any:
        import contextlib

        return contextlib.nullcontext()

    @staticmethod
    def manual_seed(_seed: int) -> None:
        return None


@pytest.mark.parametrize(("text", "finish"), [(BROKEN, FORMAT_ERROR), (READABLE, "stop")])
def test_hf_keeps_the_decoded_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, finish: str
) -> None:
    monkeypatch.setattr(hf_local, "_require_extra", lambda: (_Torch(), None))
    provider = hf_local.HFProvider(str(tmp_path))
    provider._loaded = (_Tokenizer(text), _Model())
    turn = asyncio.run(provider.generate(conversation(), [WEATHER], SETTINGS))
    assert turn.raw_text == text and turn.finish_reason == finish
    assert turn.text == (text if finish == FORMAT_ERROR else "Checking.")
