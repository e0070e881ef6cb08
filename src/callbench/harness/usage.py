"""Token usage, estimated cost and request latency of a run.

Figures come from the usage fields providers return (recorded per round on the trace).
Cached rounds cost nothing and are left out of latency figures, since no request was sent.
Prices are optional: a table of USD per million input/output tokens per model name.
In conversations the simulated user's tokens (kept on its turns) are counted apart from the agent's,
per conversation (``usage.conversations``); they are never in the run's ``tokens`` or its cost.
"""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from callbench.errors import ConfigError
from callbench.types.messages import Usage
from callbench.types.records import CaseRecord
from callbench.types.summary import ConversationUsage, RunUsage, SideTokens, TokenCounts
from callbench.types.trace import RoundInfo

PRICES_ENV = "CALLBENCH_PRICES"


class Price(BaseModel):
    """USD per million tokens."""

    input: float
    output: float
    cached_input: float | None = None
    """Price of cached input tokens when the vendor discounts them (default: ``input``)."""


def load_prices(path: Path) -> dict[str, Price]:
    """Read a price table: JSON or YAML mapping model name -> {input, output, cached_input}."""
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix in {".yaml", ".yml"}:
            import yaml

            raw = yaml.safe_load(text)
        else:
            raw = json.loads(text)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read price table ({exc})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: price table must map model names to {{input, output}}")
    table: dict[str, Price] = {}
    for name, entry in raw.items():
        try:
            table[str(name)] = Price.model_validate(entry)
        except ValidationError as exc:
            where = ".".join([str(name), *(str(p) for p in exc.errors()[0]["loc"])])
            raise ConfigError(f"{path}: {where}: {exc.errors()[0]['msg']}") from None
    return table


def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolated percentile (``q`` in 0..100) or ``None`` for no values."""
    return _percentile_sorted(sorted(values), q)


def _percentile_sorted(ordered: Any, q: float) -> float | None:
    if len(ordered) == 0:
        return None
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    low_value, high_value = float(ordered[low]), float(ordered[high])  # plain floats: same arithmetic
    return low_value + (high_value - low_value) * (pos - low)


def answered(info: RoundInfo) -> bool:
    """The round's request got an answer (a reply, or a refusal such as a context overflow).

    The loop records a round before it sends the request, so a request that failed (an error record
    whose retries ran out, a case limit that cut it) leaves a round with nothing from the endpoint in it.
    """
    return (
        info.cached
        or bool(info.reconstructed)
        or info.latency_ms is not None
        or info.usage is not None
        or info.model is not None
        or info.finish_reason is not None
    )


def case_usage(record: CaseRecord) -> dict[str, int]:
    """Tokens of one case: live and cached rounds apart; ``requests`` counts live rounds that were
    answered (a request that failed is in the model wrapper's counters, not here)."""
    live = {"input": 0, "output": 0, "reasoning": 0, "cached_input": 0, "requests": 0, "cache_hits": 0}
    for info in record.trace.rounds:
        if info.cached:
            live["cache_hits"] += 1
            continue
        if not answered(info):
            continue
        live["requests"] += 1
        if info.usage is not None:
            live["input"] += info.usage.input_tokens
            live["output"] += info.usage.output_tokens
            live["reasoning"] += info.usage.reasoning_tokens
            live["cached_input"] += info.usage.cached_tokens
    return live


def is_conversation(record: CaseRecord) -> bool:
    """The record is a conversation case's: a user played it (or its user was asked for a turn)."""
    return record.simulator is not None or record.trace.user_turns is not None


def user_usage(record: CaseRecord) -> Usage:
    """The simulated user's tokens in one conversation: the sum of its turns' usage (a scripted
    user's turns carry none: zero). Never part of :func:`case_usage`, the agent's tokens."""
    total = Usage()
    for turn in record.trace.user_turns or []:
        if turn.usage is not None:
            total = total + turn.usage
    return total


class ConversationTally:
    """:class:`~callbench.types.summary.ConversationUsage` one record at a time: the agent's and the
    simulated user's input and output tokens over the run's conversations, and who played the user."""

    def __init__(self) -> None:
        self.n = 0
        self.agent = [0, 0]
        self.user = [0, 0]
        self.users: set[str] = set()

    def add(self, record: CaseRecord, agent: Mapping[str, int]) -> None:
        """Count one conversation record; ``agent`` is its :func:`case_usage`."""
        self.n += 1
        self.agent[0] += agent["input"]
        self.agent[1] += agent["output"]
        user = user_usage(record)
        self.user[0] += user.input_tokens
        self.user[1] += user.output_tokens
        if record.simulator is not None:
            self.users.add(record.simulator.label)

    def result(self) -> ConversationUsage | None:
        """The figures, or ``None`` when no conversation was counted."""
        if not self.n:
            return None
        return ConversationUsage(
            n=self.n, users=sorted(self.users), agent=self._side(self.agent), user=self._side(self.user)
        )

    def _side(self, tokens: list[int]) -> SideTokens:
        return SideTokens(
            input=tokens[0],
            output=tokens[1],
            input_per_conversation=tokens[0] / self.n,
            output_per_conversation=tokens[1] / self.n,
        )


def run_usage(
    records: Iterable[CaseRecord],
    prices: dict[str, Price] | str | Path | None = None,
    model: str | None = None,
) -> RunUsage:
    """Tokens per run and per case, latency p50/p95 of live requests, estimated cost.

    Args:
        records: The run's records (error records included: their requests were paid for too).
        prices: Optional price table (or the path of one; default: ``$CALLBENCH_PRICES`` if set);
            the cost is estimated when it has an entry for ``model``.
        model: Model name to look up in ``prices`` (default: the model reported in the records).
    """
    tally = UsageTally()
    for record in records:
        tally.add(record)
    return tally.result(prices, model)


class UsageTally:
    """:func:`run_usage` one record at a time: token sums and one float per live request (the
    latency percentiles need them all), never the records themselves."""

    def __init__(self) -> None:
        self.totals = {
            "input": 0,
            "output": 0,
            "reasoning": 0,
            "cached_input": 0,
            "requests": 0,
            "cache_hits": 0,
        }
        self.latencies = array("d")
        self.cases = 0
        self.case_tokens = 0
        self.reported: set[str] = set()
        self.conversations = ConversationTally()

    def add(self, record: CaseRecord) -> None:
        """Count one record (error records too: their requests were paid for)."""
        one = case_usage(record)
        if is_conversation(record):
            self.conversations.add(record, one)
        for key, value in one.items():
            self.totals[key] += value
        self.cases += 1
        self.case_tokens += one["input"] + one["output"]  # integers: the sum is exact in any order
        self.latencies.extend(
            r.latency_ms for r in record.trace.rounds if not r.cached and r.latency_ms is not None
        )
        self.reported |= {r.model for r in record.trace.rounds if r.model}

    def result(
        self, prices: dict[str, Price] | str | Path | None = None, model: str | None = None
    ) -> RunUsage:
        """The run's usage; see :func:`run_usage` for ``prices`` and ``model``."""
        if prices is None and os.environ.get(PRICES_ENV):
            prices = os.environ[PRICES_ENV]
        if isinstance(prices, (str, Path)):
            prices = load_prices(Path(prices))
        ordered = sorted(self.latencies) if len(self.latencies) < 4096 else _sorted_array(self.latencies)
        usage = RunUsage(
            tokens=TokenCounts(**self.totals),
            tokens_per_case_mean=(self.case_tokens / self.cases) if self.cases else None,
            latency_ms_p50=_percentile_sorted(ordered, 50),
            latency_ms_p95=_percentile_sorted(ordered, 95),
            n_latency=len(self.latencies),
            cost_usd=None,
        )
        conversations = self.conversations.result()
        if conversations is not None:  # set only then: summaries of other runs keep their keys
            usage.conversations = conversations
        name = model or (next(iter(self.reported)) if len(self.reported) == 1 else None)
        entry = price_key(name, prices or {})
        if prices and entry:
            usage.cost_usd = estimate_cost(self.totals, prices[entry])
            usage.price_model = entry  # set only when priced: summaries show the key only then
        return usage


SMALL_ARRAY = 100_000
"""Up to this many values a plain sorted list is used: a few megabytes, and no numpy import (0.1 s
of CPU) for the common run; past it, a float64 array, 8 bytes a value against a list's 32."""


def _sorted_array(values: array[float]) -> Any:
    if len(values) <= SMALL_ARRAY:
        return sorted(values)
    import numpy as np

    return np.sort(np.frombuffer(values, dtype=np.float64))


def usage_summary(
    records: Iterable[CaseRecord],
    prices: dict[str, Price] | str | Path | None = None,
    model: str | None = None,
) -> dict[str, Any]:
    """:func:`run_usage` as the plain JSON object stored in ``summary.json`` → ``usage``."""
    return run_usage(records, prices, model).model_dump(mode="json", exclude_unset=True)


def price_key(name: str | None, prices: dict[str, Price]) -> str | None:
    """The price-table entry for ``name``: exact, else the longest entry it starts with.

    Vendors report dated versions (``gpt-4o-mini-2024-07-18``) of the names people price.
    """
    if not name:
        return None
    if name in prices:
        return name
    matches = [k for k in prices if name.startswith(k)]
    return max(matches, key=len) if matches else None


def estimate_cost(tokens: dict[str, int], price: Price) -> float:
    """USD for the given token counts (cached input at its own price when given)."""
    cached = tokens.get("cached_input", 0)
    cached_price = price.cached_input if price.cached_input is not None else price.input
    fresh = tokens.get("input", 0) - cached
    return (fresh * price.input + cached * cached_price + tokens.get("output", 0) * price.output) / 1e6


def requests_text(tokens: TokenCounts, counters: Mapping[str, int] | None = None) -> str:
    """What a run asked of its endpoint, for the summary line.

    ``answered requests`` are the model rounds in the records that got an answer (live and from the
    response cache; a request that failed, even after all its retries, is not one);
    ``HTTP attempts`` and ``retries`` come from the model wrapper's counters (``summary.json`` →
    ``requests``): every request sent counts as an attempt, and each one that failed transiently and
    was sent again counts as a retry. A summary without counters (rebuilt by ``callbench score``, or
    written before they were kept) shows the answered requests only.
    """
    answered = tokens.requests + tokens.cache_hits
    text = f"{answered} answered request{_plural(answered)} ({tokens.cache_hits} from cache)"
    if counters:
        attempts, retries = counters.get("requests", 0), counters.get("retries", 0)
        retry_word = "retry" if retries == 1 else "retries"
        text += f", {attempts} HTTP attempt{_plural(attempts)}, {retries} {retry_word}"
        failed = counters.get("gave_up", 0)
        if failed:
            text += f" ({failed} given up)"
    return text


def conversations_text(conversations: ConversationUsage | None) -> str | None:
    """The line of tokens per conversation, the agent's and the user's apart (``None`` without
    conversations, or when neither side used a token: a built-in agent with a scripted user).

    ``per conversation (n=3): agent 1,200 input + 80 output tokens; user (scripted): no model, 0 tokens``
    or ``...; simulated user (openai:m~t0~s7~3f2a9c1b): 900 input + 40 output tokens``.
    """
    if conversations is None:
        return None
    agent, user = conversations.agent, conversations.user
    if not (agent.input or agent.output or user.input or user.output):
        return None
    text = (
        f"per conversation (n={conversations.n}): agent {_mean_tokens(agent.input_per_conversation)} input + "
        f"{_mean_tokens(agent.output_per_conversation)} output tokens; "
    )
    if conversations.users == ["scripted"]:
        return text + "user (scripted): no model, 0 tokens"
    return text + (
        f"simulated user ({', '.join(conversations.users) or 'unknown'}): "
        f"{_mean_tokens(user.input_per_conversation)} input + {_mean_tokens(user.output_per_conversation)} "
        "output tokens"
    )


def _mean_tokens(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _plural(n: int) -> str:
    return "" if n == 1 else "s"
