"""Parse the model part of a model string: ``name[@base_url][?option=value&...]``.

Examples: ``gpt-4o-mini``, ``Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1``,
``llama3.1:8b?parallel_tool_calls_param=0``. Model names may contain ``@`` and ``:``; only
``@http://`` or ``@https://`` starts a base URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from callbench.errors import ConfigError

_URL_AT = re.compile(r"@(https?://)")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec."""

    model: str
    base_url: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    def flag(self, name: str, default: bool) -> bool:
        """Read a boolean option (``1/0``, ``true/false``, ``yes/no``, ``on/off``)."""
        value = self.options.get(name)
        if value is None:
            return default
        if value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
        raise ConfigError(f"model option {name}={value!r}: expected true or false")


def parse_spec(spec: str, known_options: set[str]) -> ModelSpec:
    """Split a model spec into name, base URL and options.

    Args:
        spec: The text after ``provider:``.
        known_options: Option names the provider understands; others raise ``ConfigError``.
    """
    body, _, query = spec.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    unknown = sorted(set(options) - known_options)
    if unknown:
        raise ConfigError(
            f"model string {spec!r}: unknown option(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(known_options))}"
        )
    match = _URL_AT.search(body)
    model, base_url = (body[: match.start()], body[match.start() + 1 :]) if match else (body, None)
    if not model:
        raise ConfigError(f"model string {spec!r}: the model name is empty")
    return ModelSpec(model=model, base_url=base_url.rstrip("/") if base_url else None, options=options)
