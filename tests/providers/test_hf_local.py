"""hf: provider on a tiny randomly initialised Llama checkpoint built by the test (no download)."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest
from provider_helpers import WEATHER, conversation

from callbench.providers.hf_local import make_provider
from callbench.types.messages import GenerationSettings, Message, ModelTurn, ToolCall

# Found here, imported by the checkpoint fixture: importing torch and transformers takes seconds of
# CPU, which every pytest-xdist worker would pay while collecting, not only the one running this file.
for _package in ("torch", "transformers", "tokenizers"):
    if importlib.util.find_spec(_package) is None:
        pytest.skip(f"could not import '{_package}'", allow_module_level=True)

TEMPLATE = (
    "{% if tools %}<|system|>Tools:{% for t in tools %} {{ t.function.name }}{% endfor %}\n{% endif %}"
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}"
    "{% for c in m.tool_calls or [] %}<tool_call>{{ c.function.name }}</tool_call>{% endfor %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import tokenizers
    import torch
    import transformers

    path = tmp_path_factory.mktemp("tiny-llama")
    bpe = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<unk>", "<eos>"],
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(["weather city Paris tool call system user assistant"] * 20, trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<eos>", unk_token="<unk>"
    )
    tokenizer.chat_template = TEMPLATE
    tokenizer.save_pretrained(path)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=512,
        eos_token_id=1,
        pad_token_id=1,
    )
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(config).save_pretrained(path)
    return path


def test_chat_template_renders_tools_and_history(checkpoint: Path) -> None:
    provider = make_provider(str(checkpoint))
    call = ToolCall(id="c1", name="weather.get", arguments={"city": "Paris"})
    history = conversation() + [Message.assistant(ModelTurn(tool_calls=[call])), Message.tool(call, "sunny")]
    prompt = provider.render_prompt(history, [WEATHER])
    assert prompt.startswith("<|system|>Tools: weather.get")
    assert "<tool_call>weather.get</tool_call>" in prompt and prompt.endswith("<|assistant|>")


def test_greedy_generation_is_deterministic_and_counts_tokens(checkpoint: Path) -> None:
    provider = make_provider(f"{checkpoint}?device=cpu")
    settings = GenerationSettings(max_tokens=8)
    first = asyncio.run(provider.generate(conversation(), [WEATHER], settings))
    second = asyncio.run(provider.generate(conversation(), [WEATHER], settings))
    prompt_tokens = len(
        provider._load()[0](provider.render_prompt(conversation(), [WEATHER]), add_special_tokens=False)[
            "input_ids"
        ]
    )
    assert first.text == second.text and first.tool_calls == second.tool_calls
    assert first.usage is not None and first.usage.input_tokens == prompt_tokens
    assert 1 <= first.usage.output_tokens <= 8 and first.finish_reason in {"stop", "length", "format_error"}


def test_missing_folder_is_a_config_error(tmp_path: Path) -> None:
    from callbench.errors import ConfigError

    with pytest.raises(ConfigError, match="no checkpoint folder"):
        make_provider(str(tmp_path / "absent"))


def test_checkpoint_runs_through_the_engine(checkpoint: Path, tmp_path: Path) -> None:
    import callbench

    result = callbench.run(
        "starter",
        f"hf:{checkpoint}",
        out_dir=tmp_path / "run",
        limit=3,
        concurrency=2,
        settings=GenerationSettings(max_tokens=6),
    )
    # A random model fails the cases, but as scored model failures, not as errors or crashes.
    assert result.summary["n_completed"] == 3 and result.summary["n_error"] == 0
    assert all(r.trace.rounds and r.trace.rounds[0].usage for r in result.records)
