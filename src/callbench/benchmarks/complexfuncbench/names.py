"""Reversible sanitisation of function names that providers reject.

OpenAI, Anthropic and Mistral accept tool names matching ``^[A-Za-z0-9_-]{1,64}$``;
ComplexFuncBench has names such as ``Get_Hotel_Reviews(Tips)``. Like upstream we map every other
character to ``-`` and cut to 64 characters; unlike a bare rewrite, the map keeps both directions
and disambiguates collisions, so a model's call is always traced back to the original name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_BAD = re.compile(r"[^A-Za-z0-9_-]")
MAX_LEN = 64


def sanitise(name: str) -> str:
    """The provider-safe form of one name (not necessarily unique)."""
    return _BAD.sub("-", name)[:MAX_LEN] or "fn"


@dataclass(frozen=True)
class NameMap:
    """Both directions between original and provider-safe names."""

    to_wire: dict[str, str] = field(default_factory=dict)
    from_wire: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, names: list[str]) -> NameMap:
        """Map each name to a unique provider-safe name; safe names map to themselves."""
        to_wire: dict[str, str] = {}
        taken = {n for n in names if sanitise(n) == n}
        for name in names:
            if name in to_wire:
                continue
            wire = sanitise(name)
            if wire != name:
                wire = _unique(wire, taken)
                taken.add(wire)
            to_wire[name] = wire
        return cls(to_wire=to_wire, from_wire={w: n for n, w in to_wire.items()})

    def wire(self, name: str) -> str:
        """Provider-safe name for an original name (unknown names are sanitised plainly)."""
        return self.to_wire.get(name, name)

    def original(self, wire_name: str) -> str:
        """Original name for a provider-safe name; names not in the map come back unchanged."""
        return self.from_wire.get(wire_name, wire_name)


def _unique(wire: str, taken: set[str]) -> str:
    if wire not in taken:
        return wire
    for n in range(2, 10_000):
        suffix = f"_{n}"
        candidate = wire[: MAX_LEN - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
    raise ValueError(f"cannot find a unique provider-safe name for {wire!r}")
