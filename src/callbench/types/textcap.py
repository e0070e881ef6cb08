"""Size caps on what a record stores: a text over its limit keeps a head and a tail.

A model's reply, an agent's answer, a tool result and a stderr tail are stored in the case's record
(``--size-limit``, :data:`callbench.types.run_options.DEFAULT_SIZE_LIMITS`). Over its limit, a text
keeps its first and last half-limit of UTF-8 bytes, cut on character boundaries, around a visible
:data:`MARKER` saying how many bytes were cut; the caller notes the original size on the trace
(``Trace.truncated``). Sizes are counted in UTF-8 bytes with lone surrogates (which JSON allows)
counted as their three-byte form, so any text can be measured and cut.
"""

from __future__ import annotations

import json
from typing import Any

MARKER = "\n…[callbench: {cut:,} bytes cut]…\n"
"""Stands where the middle of a capped text was (``cut``: bytes left out)."""

_CODEC = ("utf-8", "surrogatepass")
_MAX_BYTES_PER_CHAR = 4


def utf8_size(text: str) -> int:
    """``text``'s size in UTF-8 bytes (a lone surrogate counts as three)."""
    return len(text.encode(*_CODEC))


def cap_text(text: str, limit: int) -> tuple[str, int | None]:
    """``text`` kept within ``limit`` UTF-8 bytes: itself when it fits, else its head and tail (about
    half the limit each, whole characters) joined by :data:`MARKER`.

    Returns:
        The text to store, and the original size in bytes when it was cut (``None`` when not).
    """
    if len(text) * _MAX_BYTES_PER_CHAR <= limit:  # fits whatever its characters: nothing to encode
        return text, None
    data = text.encode(*_CODEC)
    size = len(data)
    if size <= limit:
        return text, None
    head_end = limit // 2
    while head_end > 0 and _continues(data[head_end]):
        head_end -= 1
    tail_start = size - (limit - limit // 2)
    while tail_start < size and _continues(data[tail_start]):
        tail_start += 1
    head = data[:head_end].decode(*_CODEC)
    tail = data[tail_start:].decode(*_CODEC)
    return head + MARKER.format(cut=tail_start - head_end) + tail, size


def _continues(byte: int) -> bool:
    """A UTF-8 continuation byte: not where a character starts."""
    return byte & 0xC0 == 0x80


def json_text(value: Any) -> str | None:
    """``value``'s JSON text as a tool result is measured (``None`` when it has none: nested past
    what the encoder follows, or circular)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (RecursionError, ValueError, TypeError):
        return None


def cap_value(value: Any, limit: int, as_json: str | None = None) -> tuple[Any, int | None]:
    """A tool result kept within ``limit``: a string as :func:`cap_text`; any other value measured by
    its JSON text (``as_json``, when the caller has it already), and over the limit replaced by that
    text capped (a string). Numbers, booleans and ``None`` are kept as they are.

    Returns:
        The value to store, and the original size in bytes when it was cut (``None`` when not).
    """
    if isinstance(value, str):
        return cap_text(value, limit)
    if value is None or isinstance(value, (bool, int, float)):
        return value, None
    text = as_json if as_json is not None else json_text(value)
    if text is None:
        return value, None
    capped, size = cap_text(text, limit)
    return (value, None) if size is None else (capped, size)
