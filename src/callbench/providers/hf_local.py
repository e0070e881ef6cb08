"""``hf:/path/to/checkpoint``: a local transformers checkpoint driven through its chat template.

Needs the optional extra ``hf`` (torch + transformers). The checkpoint's chat template renders
the tools (``apply_chat_template(..., tools=...)``); generation is greedy at temperature 0;
calls are read from the generated text (``<tool_call>`` blocks, JSON or Python-call syntax), which
is kept as decoded in ``raw_text``; unreadable call text gives ``finish_reason="format_error"``.
Generation runs in a worker thread, one request at a time per checkpoint.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from callbench.errors import ConfigError, missing_extra, require_extra
from callbench.providers.base import Provider
from callbench.providers.prompt_mode import FORMAT_ERROR
from callbench.providers.spec import parse_spec
from callbench.providers.text_calls import parse_text_calls
from callbench.providers.wire import round_prefix
from callbench.types.contract import ToolContract
from callbench.types.messages import GenerationSettings, Message, ModelTurn, Usage


def _require_extra() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ModuleNotFoundError as exc:
        raise missing_extra("the hf provider", exc.name or "torch", "hf") from None
    return torch, transformers


def chat_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages in the shape transformers chat templates expect (arguments as objects)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        item: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.tool_calls:
            item["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments or {}}}
                for c in message.tool_calls
            ]
        if message.role == "tool":
            item.update(tool_call_id=message.tool_call_id, name=message.name)
        out.append(item)
    return out


def tool_schemas(tools: list[ToolContract]) -> list[dict[str, Any]]:
    """Tools in the JSON-schema form chat templates take."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.provider_schema()},
        }
        for t in tools
    ]


class HFProvider(Provider):
    """A causal LM checkpoint on local disk, run on CPU (or CUDA when available)."""

    needs_network = False
    name = "hf"

    def __init__(self, path: str, device: str | None = None) -> None:
        self.path = Path(path).expanduser()
        if not self.path.is_dir():
            raise ConfigError(f"hf:{path}: no checkpoint folder there")
        require_extra("hf", "the hf provider")  # one line before any case runs, not one per case
        self.model = str(self.path)
        self._device = device
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        return {
            "provider": "hf",
            "model": self.path.name,
            "path": str(self.path),
            "device": self._device or "auto",
        }

    def connection_key(self) -> str:
        return f"hf|{self.path}"

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            torch, transformers = _require_extra()
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.path, local_files_only=True)
            if not getattr(tokenizer, "chat_template", None):
                raise ConfigError(
                    f"hf:{self.path}: the tokenizer has no chat template; tools cannot be rendered"
                )
            model = transformers.AutoModelForCausalLM.from_pretrained(self.path, local_files_only=True)
            device = self._device or ("cuda" if torch.cuda.is_available() else "cpu")
            self._loaded = (tokenizer, model.to(device).eval())
        return self._loaded

    def render_prompt(self, messages: list[Message], tools: list[ToolContract]) -> str:
        """The exact prompt text the checkpoint sees (chat template with tools)."""
        tokenizer, _ = self._load()
        return tokenizer.apply_chat_template(
            chat_messages(messages),
            tools=tool_schemas(tools) or None,
            add_generation_prompt=True,
            tokenize=False,
        )

    def _generate_sync(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        torch, _ = _require_extra()
        with self._lock:
            tokenizer, model = self._load()
            prompt = self.render_prompt(messages, tools)
            ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False).to(model.device)
            sampling: dict[str, Any] = {"do_sample": False}
            if settings.temperature > 0:
                sampling = {"do_sample": True, "temperature": settings.temperature}
            if settings.seed is not None:
                torch.manual_seed(settings.seed)
            with torch.no_grad():
                output = model.generate(
                    **ids,
                    max_new_tokens=settings.max_tokens,
                    pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
                    **sampling,
                )
            new = output[0, ids["input_ids"].shape[1] :]
            text = tokenizer.decode(new, skip_special_tokens=True)
        parsed = parse_text_calls(text, {t.name for t in tools}, id_prefix=round_prefix(messages))
        finish = (
            FORMAT_ERROR if parsed.format_error else ("length" if len(new) >= settings.max_tokens else "stop")
        )
        usage = Usage(input_tokens=int(ids["input_ids"].shape[1]), output_tokens=len(new))
        # The generated text as decoded stays on the record beside what the parser took from it.
        return ModelTurn(
            text=parsed.text,
            tool_calls=parsed.calls,
            usage=usage,
            finish_reason=finish,
            model=self.path.name,
            raw_text=text,
        )

    async def generate(
        self, messages: list[Message], tools: list[ToolContract], settings: GenerationSettings
    ) -> ModelTurn:
        """Generate in a worker thread so the event loop keeps serving other cases."""
        return await asyncio.to_thread(self._generate_sync, messages, tools, settings)


def make_provider(spec: str) -> HFProvider:
    """Catalog factory for ``hf:/path/to/checkpoint[?device=cpu]``."""
    parsed = parse_spec(spec, {"device"})
    return HFProvider(parsed.model, parsed.options.get("device"))
