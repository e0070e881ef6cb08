"""Small shared types of the ComplexEval implementation: settings, gold and predicted calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from callbench.benchmarks.complexfuncbench.data import OPTIONAL_FUNCTIONS, CfbSample
from callbench.plugin import ConfigError, canonical_json

Mode = Literal["faithful", "improved"]
MODES: tuple[Mode, ...] = ("faithful", "improved")

GENERIC_ERROR = {
    "api_status": True,
    "content": "There is a problem with your api call, please double-check for possible problems.",
}
"""The fixed response to any call that matched no gold call (upstream's wording)."""


@dataclass(frozen=True)
class CfbSettings:
    """How ComplexEval runs; recorded in every record."""

    mode: Mode = "improved"
    embedder: str = "char-ngram"
    """Embedder spec for the Hungarian mapping.

    See :func:`callbench.benchmarks.complexfuncbench.embedders.make_embedder`.
    """
    min_similarity: float | None = None
    """Improved mode only: pairs below this similarity are left unpaired (no threshold upstream)."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"complexeval mode must be one of {list(MODES)}, got {self.mode!r}")
        if self.min_similarity is not None and not -1.0 <= self.min_similarity <= 1.0:
            raise ConfigError(f"complexeval min_similarity must be in [-1, 1], got {self.min_similarity}")


END_PRUNED_FUNCTIONS = OPTIONAL_FUNCTIONS - {"Location_to_Lat_Long"}
"""Optional look-ups upstream drops from the open gold list before its final ``stop_early`` check.

Upstream's end-of-episode pruning names five of the six optional functions: an unmatched
``Location_to_Lat_Long`` stays open, so a faithful sample that skips it ends ``stop_early``."""


def turn_cap(gold_steps: int) -> int:
    """Improved mode's round budget: twice the shortest path plus five."""
    return 2 * gold_steps + 5


@dataclass(frozen=True)
class GoldCall:
    """One gold call of the annotated shortest path."""

    uid: str
    """``"<step>.<position>"``."""
    step: int
    name: str
    arguments: dict[str, Any]
    response: Any
    optional: bool
    """A location look-up: answered whenever an identical call comes, at any time."""
    skippable: bool
    """May be left out (optional look-ups, and a hotel-name ``Search_Hotels`` as upstream)."""
    hotel_search: bool = False
    """A ``Search_Hotels`` call with ``search_type == "hotel"`` (upstream treats it specially)."""
    key: str = ""
    """Canonical name+arguments key (identical-call matching)."""
    text: str = ""
    """JSON text of the call that the embedder sees."""


@dataclass(frozen=True)
class PredCall:
    """One predicted call, name already mapped back to the data set's original name."""

    index: int
    name: str
    arguments: dict[str, Any] | None
    parse_error: str | None = None


@dataclass(frozen=True)
class DecodedCall(PredCall):
    """A predicted call whose arguments decoded to a JSON object: what the matchers compare."""

    arguments: dict[str, Any]


def gold_calls_of(sample: CfbSample) -> list[list[GoldCall]]:
    """The sample's gold path as :class:`GoldCall` steps."""
    out = []
    for k, step in enumerate(sample.steps):
        row = []
        for j, call in enumerate(step):
            optional = call.name in OPTIONAL_FUNCTIONS
            hotel_search = call.name == "Search_Hotels" and call.arguments.get("search_type") == "hotel"
            row.append(
                GoldCall(
                    f"{k}.{j}",
                    k,
                    call.name,
                    call.arguments,
                    call.response,
                    optional,
                    optional or hotel_search,
                    hotel_search,
                    canonical(call.name, call.arguments),
                    call_text(call.name, call.arguments),
                )
            )
        out.append(row)
    return out


def canonical(name: str, arguments: dict[str, Any]) -> str:
    """A key that is equal exactly when name and arguments are identical (key order ignored)."""
    return name + "\x00" + canonical_json(arguments)


def call_text(name: str, arguments: dict[str, Any] | None) -> str:
    """The text of a call that embedders compare (JSON of name and arguments, sorted keys)."""
    return canonical_json({"name": name, "arguments": arguments})
