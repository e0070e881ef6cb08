"""Token usage, estimated cost and request latency of a run.

Figures come from the usage fields providers return (recorded per round on the trace).
Cached rounds cost nothing and are left out of latency figures, since no request was sent.

Prices come from a dated built-in table (``prices.json`` beside this module: common hosted models of
OpenAI, Anthropic and Google, USD per million input, cached input and output tokens), which a user
file (``--price-table FILE`` or ``$CALLBENCH_PRICES``) overrides and extends entry by entry. A model
with no entry has no cost (``None``, with the reason in ``cost_missing``), never a cost of 0.

Every record counts towards the cost: failed cases, error records (their answered requests were paid
for) and, in the streamed summary, records a resumed run replaced (``superseded``). A request that
failed (a 500, a 429, a dropped connection) carries no usage and costs nothing here.

In conversations the simulated user's tokens (kept on its turns) are counted apart from the agent's,
per conversation (``usage.conversations``); they are never in the run's ``tokens`` or its cost.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from array import array
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from callbench.errors import ConfigError
from callbench.types.messages import Usage
from callbench.types.records import CaseRecord
from callbench.types.summary import ConversationUsage, PassCost, RunUsage, SideTokens, TokenCounts
from callbench.types.trace import RoundInfo

PRICES_ENV = "CALLBENCH_PRICES"
BUILTIN_PRICES = "prices.json"
"""The built-in price table, shipped beside this module."""


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float
    output: float
    cached_input: float | None = None
    """Price of cached input tokens when the vendor discounts them (default: ``input``)."""
    reasoning: float | None = None
    """Price of reasoning tokens when the vendor bills them apart (default: ``output``; reasoning
    tokens are counted inside the output tokens, as OpenAI and Anthropic report them)."""
    source: str | None = None
    """Where the figures come from (the vendor's pricing page)."""


PRICE_FIELDS = ("input", "cached_input", "output", "reasoning")
"""An entry's prices; ``input`` and ``output`` are required."""
ENTRY_FIELDS = (*PRICE_FIELDS, "source")
TABLE_KEYS = ("models", "as_of", "unit", "note", "source")
"""Top-level keys of a table written as ``{as_of: ..., models: {name: entry}}`` (the built-in's shape)."""
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]*")
"""What a price-table key may look like: a model name as providers report it."""


def load_prices(path: Path) -> dict[str, Price]:
    """Read a price table (JSON or YAML): model name -> {input, output[, cached_input, reasoning,
    source]}, or ``{as_of, models: {...}}``. Anything wrong is one line naming the file, the entry
    and the field, e.g. ``prices.yaml: entry 'gpt-x': 'output' is not a number ('abc')``."""
    return _read_table(Path(path))[0]


def _read_table(path: Path) -> tuple[dict[str, Price], str | None]:
    """The entries of a price file and its ``as_of`` date, if it gives one."""
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix in {".yaml", ".yml"}:
            import yaml

            try:
                raw = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise ValueError(" ".join(str(exc).split())) from None
        else:
            raw = json.loads(text)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read price table ({exc})") from None
    as_of = None
    if isinstance(raw, dict) and isinstance(raw.get("models"), dict):
        unknown = [str(k) for k in raw if k not in TABLE_KEYS]
        if unknown:
            raise ConfigError(
                f"{path}: unknown top-level key {unknown[0]!r} (a table with 'models' may also give "
                f"{', '.join(k for k in TABLE_KEYS if k != 'models')})"
            )
        as_of = None if raw.get("as_of") is None else str(raw["as_of"])
        raw = raw["models"]
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{path}: a price table maps model names to {{input, output}} in USD per million tokens, "
            f"not {type(raw).__name__}"
        )
    return {_model_name(path, name): _entry(path, name, entry) for name, entry in raw.items()}, as_of


def _model_name(path: Path, name: Any) -> str:
    if not isinstance(name, str):
        raise ConfigError(f"{path}: entry {name!r}: a model name must be text (quote it)")
    if not MODEL_NAME.fullmatch(name):
        raise ConfigError(
            f"{path}: entry {name!r}: not a model name (letters, digits and . _ : / @ + - only, no spaces)"
        )
    return name


def _entry(path: Path, name: str, entry: Any) -> Price:
    where = f"{path}: entry {name!r}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected {{input, output}} in USD per million tokens, got {entry!r}")
    for field in entry:
        if field not in ENTRY_FIELDS:
            raise ConfigError(f"{where}: unknown field {field!r} (known: {', '.join(ENTRY_FIELDS)})")
    for field in ("input", "output"):
        if field not in entry:
            raise ConfigError(f"{where}: {field!r} is missing (USD per million tokens)")
    for field in PRICE_FIELDS:
        value = entry.get(field)
        if value is None and field not in ("input", "output"):
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: {field!r} is not a number ({value!r})")
        if not math.isfinite(value):
            raise ConfigError(f"{where}: {field!r} is not a finite number ({value!r})")
        if value < 0:
            raise ConfigError(f"{where}: {field!r} is negative ({value!r})")
    source = entry.get("source")
    if source is not None and not isinstance(source, str):
        raise ConfigError(f"{where}: 'source' is not text ({source!r})")
    return Price.model_validate(entry)


@functools.cache
def _builtin() -> tuple[dict[str, Price], str]:
    resource = resources.files("callbench.harness").joinpath(BUILTIN_PRICES)
    with resources.as_file(resource) as path:
        entries, as_of = _read_table(path)
    return entries, f"built-in price table (as of {as_of})"


def builtin_prices() -> dict[str, Price]:
    """The built-in price table's entries (a copy)."""
    return dict(_builtin()[0])


def builtin_origin() -> str:
    """``built-in price table (as of YYYY-MM-DD)``."""
    return _builtin()[1]


@dataclass(frozen=True)
class PriceTable:
    """The prices a run is costed with: the built-in entries, overridden and extended entry by entry
    by a user's; ``origins`` says where each entry came from (the built-in table with its date, or the
    file)."""

    entries: Mapping[str, Price]
    origins: Mapping[str, str]
    user: str | None = None
    """The user's file (or ``price table given``), when there is one."""

    def lookup(self, name: str | None) -> tuple[str, Price, str] | None:
        """(entry, price, origin) for a reported model name (see :func:`price_key`)."""
        key = price_key(name, dict(self.entries))
        return None if key is None else (key, self.entries[key], self.origins[key])

    def describe(self) -> str:
        """Which tables were looked in, for a reason: ``prices.yaml or the built-in price table (...)``."""
        return f"the {builtin_origin()}" if self.user is None else f"{self.user} or the {builtin_origin()}"


def price_table(prices: Mapping[str, Price] | str | Path | None = None) -> PriceTable:
    """The built-in table under a user's: a mapping, a file, or (when ``None``) the file named by
    ``$CALLBENCH_PRICES`` if set."""
    if prices is None and os.environ.get(PRICES_ENV):
        prices = os.environ[PRICES_ENV]
    entries, origin = _builtin()
    origins = dict.fromkeys(entries, origin)
    merged = dict(entries)
    user = None
    if isinstance(prices, (str, Path)):
        user = str(prices)
        prices = load_prices(Path(prices))
    elif prices is not None:
        user = "the price table given"
    for name, price in (prices or {}).items():
        merged[name] = price
        origins[name] = user or origin
    return PriceTable(merged, origins, user)


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
    prices: Mapping[str, Price] | str | Path | None = None,
    model: str | None = None,
    diagnostic: Collection[str] = (),
) -> RunUsage:
    """Tokens per run and per case, latency p50/p95 of live requests and of cases, estimated cost,
    cost per case and per passed case.

    Args:
        records: The run's records (error records included: their requests were paid for too).
        prices: A user's price table (or the path of one; default: ``$CALLBENCH_PRICES`` if set)
            over the built-in one; the cost is estimated when either has an entry for ``model``.
        model: Model name to look up in ``prices`` (default: the model reported in the records).
        diagnostic: Scorers that are no pass criterion: no cost per passed case for them.
    """
    tally = UsageTally()
    for record in records:
        tally.add(record)
    return tally.result(prices, model, diagnostic)


class UsageTally:
    """:func:`run_usage` one record at a time: token sums, passes per tier, and one float per live
    request and per case (the latency percentiles need them all), never the records themselves."""

    def __init__(self) -> None:
        self.totals = {
            "input": 0,
            "output": 0,
            "reasoning": 0,
            "cached_input": 0,
            "requests": 0,
            "cache_hits": 0,
        }
        self.superseded = dict.fromkeys(self.totals, 0)
        """Tokens of records a later record of the same (case, trial) replaced (a resumed error):
        not in ``totals``, but paid for, so in the cost."""
        self.latencies = array("d")
        self.case_ms = array("d")
        """One duration per record that sent a live request or called no model (latency per case)."""
        self.cases = 0
        self.case_tokens = 0
        self.reported: set[str] = set()
        self.passed: dict[str, int] = {}
        """Tier -> completed records it judged (applicable) that passed (0 when none did)."""
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
        if record.duration_ms > 0 and (one["requests"] or not one["cache_hits"]):
            self.case_ms.append(record.duration_ms)  # a case answered from the cache alone is left out
        if record.status == "completed":
            for tier, verdict in record.verdicts.items():
                if verdict.applicable is not False:
                    self.passed[tier] = self.passed.get(tier, 0) + bool(verdict.passed)

    def add_superseded(self, record: CaseRecord) -> None:
        """Count the requests of a record a later one replaced: in the cost, nowhere else."""
        one = case_usage(record)
        for key, value in one.items():
            self.superseded[key] += value
        self.reported |= {r.model for r in record.trace.rounds if r.model and not r.cached}

    def result(
        self,
        prices: Mapping[str, Price] | str | Path | None = None,
        model: str | None = None,
        diagnostic: Collection[str] = (),
    ) -> RunUsage:
        """The run's usage; see :func:`run_usage` for ``prices``, ``model`` and ``diagnostic``."""
        table = price_table(prices)
        ordered = sorted(self.latencies) if len(self.latencies) < 4096 else _sorted_array(self.latencies)
        usage = RunUsage(
            tokens=TokenCounts(**self.totals),
            tokens_per_case_mean=(self.case_tokens / self.cases) if self.cases else None,
            latency_ms_p50=_percentile_sorted(ordered, 50),
            latency_ms_p95=_percentile_sorted(ordered, 95),
            n_latency=len(self.latencies),
            cost_usd=None,
        )
        # optional figures are set only when computed: summaries of other runs keep their keys
        if self.case_ms:
            cases = _sorted_array(self.case_ms)
            usage.case_latency_ms_p50 = _percentile_sorted(cases, 50)
            usage.case_latency_ms_p95 = _percentile_sorted(cases, 95)
            usage.n_case_latency = len(self.case_ms)
        if self.superseded["input"] or self.superseded["output"]:  # something that was paid for
            usage.superseded = TokenCounts(**self.superseded)
        conversations = self.conversations.result()
        if conversations is not None:
            usage.conversations = conversations
        found, why = self._price(table, model)
        if found is None:
            if self.totals["input"] or self.totals["output"] or usage.superseded is not None:
                usage.cost_missing = why  # only when there was something to price
            return usage
        entry, price, origin = found
        cost = estimate_cost(self.totals, price) + estimate_cost(self.superseded, price)
        usage.cost_usd = cost
        usage.price_model = entry
        usage.price_table = origin
        usage.price = price.model_dump(exclude_none=True, exclude={"source"})
        usage.cost_per_case_mean = cost / self.cases if self.cases else None
        usage.cost_per_pass = {
            tier: PassCost(passed=n, cost_usd=cost / n if n else None)
            for tier, n in sorted(self.passed.items())
            if tier not in diagnostic
        }
        return usage

    def _price(self, table: PriceTable, model: str | None) -> tuple[tuple[str, Price, str] | None, str]:
        """The entry that prices the run, or why there is none."""
        if model:
            found = table.lookup(model)
            return found, "" if found else f"no price table entry for {model!r} in {table.describe()}"
        if not self.reported:
            return None, "no price table entry: the records name no model"
        entries = {name: table.lookup(name) for name in sorted(self.reported)}
        keys = {found[0] if found else None for found in entries.values()}
        if len(keys) == 1 and None not in keys:  # dated versions of one priced model
            return next(iter(entries.values())), ""
        if len(self.reported) == 1:
            return None, f"no price table entry for {next(iter(self.reported))!r} in {table.describe()}"
        names = ", ".join(repr(n) for n in sorted(self.reported))
        return None, f"no price table entry: the records name several models ({names})"


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


VERSION_SUFFIX = re.compile(r"[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{3,4}|latest)")
"""What may follow a priced name in a reported one: a dated or numbered version (``-2024-07-18``,
``-20250929``, ``@20250929``, ``-001``, ``-latest``)."""


def price_key(name: str | None, prices: Mapping[str, Price]) -> str | None:
    """The price-table entry for ``name``: exact, else the longest entry it is a dated version of;
    the same for the name without its provider path (``openai/gpt-4o``, ``models/gemini-2.5-pro``).

    Vendors report dated versions (``gpt-4o-mini-2024-07-18``) of the names people price; any other
    suffix is another model (``o3-pro`` is not ``o3``) and gets no price.
    """
    if not name:
        return None
    for candidate in dict.fromkeys([name, name.rsplit("/", 1)[-1]]):
        if candidate in prices:
            return candidate
        matches = [
            k for k in prices if candidate.startswith(k) and VERSION_SUFFIX.fullmatch(candidate[len(k) :])
        ]
        if matches:
            return max(matches, key=len)
    return None


def estimate_cost(tokens: Mapping[str, int], price: Price) -> float:
    """USD for the given token counts: fresh input, cached input at its own price when given, output
    (reasoning inside it, at its own price when given)."""
    inputs, output = tokens.get("input", 0), tokens.get("output", 0)
    cached = min(tokens.get("cached_input", 0), inputs)
    cached_price = price.cached_input if price.cached_input is not None else price.input
    reasoning = min(tokens.get("reasoning", 0), output) if price.reasoning is not None else 0
    reasoning_price = price.reasoning if price.reasoning is not None else price.output
    fresh = inputs - cached
    return (
        fresh * price.input
        + cached * cached_price
        + (output - reasoning) * price.output
        + reasoning * reasoning_price
    ) / 1e6


def record_cost(record: CaseRecord, price: Price) -> float:
    """USD of one record's live requests (every answered one, failed cases and error records too)."""
    return estimate_cost(case_usage(record), price)


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


def tokens_text(tokens: TokenCounts) -> str:
    """``1,200 input (300 cached) + 150 output (40 reasoning) tokens``; the parts in brackets only
    when not zero (cached tokens are a part of the input, reasoning tokens a part of the output)."""
    cached = f" ({tokens.cached_input:,} cached)" if tokens.cached_input else ""
    reasoning = f" ({tokens.reasoning:,} reasoning)" if tokens.reasoning else ""
    return f"{tokens.input:,} input{cached} + {tokens.output:,} output{reasoning} tokens"


def usd(value: float | None) -> str:
    """Dollars to four decimals (``$0.0123``, ``$12.3500``), three significant digits below a tenth of
    a cent (``$0.000123``, ``$4.58e-05``); ``–`` for none."""
    if value is None:
        return "–"
    if value == 0 or abs(value) >= 0.001:
        return f"${value:,.4f}"
    return f"${value:.3g}" if abs(value) >= 1e-4 else f"${value:.2e}"


def cost_text(usage: RunUsage, tiers: Collection[str] | None = None) -> str:
    """The cost line of ``callbench show``: total, per case and per passed case of each strict tier,
    and which price priced it; or ``cost – (why)``.

    ``cost $0.0123 (gpt-4o-mini, built-in price table (as of 2026-12-01)): $0.0012 per case;
    per passed case: ast $0.0031 (4 passed), state – (none passed)``. ``tiers``: only these.
    """
    if usage.cost_usd is None:
        return f"cost – ({usage.cost_missing or 'no price table entry for this model (--price-table)'})"
    priced = ", ".join(x for x in (usage.price_model, usage.price_table) if x)
    text = f"cost {usd(usage.cost_usd)}" + (f" ({priced})" if priced else "")
    if usage.cost_per_case_mean is not None:
        text += f": {usd(usage.cost_per_case_mean)} per case"
    passes = [
        f"{tier} {usd(pc.cost_usd)} ({pc.passed} passed)" if pc.passed else f"{tier} – (none passed)"
        for tier, pc in (usage.cost_per_pass or {}).items()
        if tiers is None or tier in tiers
    ]
    if passes:
        text += "; per passed case: " + ", ".join(passes)
    if usage.superseded is not None:
        text += f"; includes {usage.superseded.requests} request(s) of records a resumed run replaced"
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
