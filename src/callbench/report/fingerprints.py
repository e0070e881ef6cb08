"""Failure fingerprints: failure and error messages folded into signatures, grouped per tool and server.

A run's failures are tagged with reason codes (``tool_missing``, ``execution_failed``...) and its error
records with a type (``TransientProviderError``, ``tool_server_timeout``...). A code is coarse: a
thousand ``execution_failed`` reasons may be fifty distinct tool errors. This module folds each message
into a *signature* (:func:`signature`: numbers, ids, paths, URLs, quoted values, e-mail addresses and
timestamps become placeholders), files each code under a *class* of the failure taxonomy
(:func:`taxonomy`) and groups a run's failures by (class, tool, tool server, signature), counting the
records behind each line and keeping a few of their case keys (:class:`FailureTally`).

Grouping is per scorer (tier) and harness mode, over the failing verdicts of that tier; error records
(infrastructure, excluded from every tier) form a section of their own, class ``infrastructure``,
never mixed into a tier's failures. A record counts once per line, and once in each line it has a
reason in, so a section's shares can add up to more than 100%.

Used by ``callbench show RUN --failures`` (:mod:`callbench.cli.failures`) and by the report's "Failures
by tool" table (``DATA.failures``, drawn by ``templates/js/failures.js``; exported with the report's
other tables by :func:`failure_tables`). ``docs/statistics.md`` ("Failure fingerprints") documents the
folding rules and the taxonomy table below.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from callbench.harness.runfolder import RunFolder
from callbench.report.breakdowns import tier_order
from callbench.types.manifest import ToolSourceManifest
from callbench.types.records import CaseRecord, RunHeader
from callbench.types.summary import Align, Table
from callbench.types.verdict import Reason

# --- the taxonomy ------------------------------------------------------------------------------------

WRONG_TOOL = "wrong tool"
WRONG_ARGUMENTS = "wrong arguments"
MISSING_CALL = "missing call"
EXTRA_CALL = "extra call"
BAD_FORMAT = "bad format"
HALLUCINATED_TOOL = "hallucinated tool"
PREMATURE_ANSWER = "premature answer"
WRONG_ANSWER = "wrong answer"
TOOL_ERROR = "tool error"
RUN_LIMIT = "run limit"
AGENT_FAILURE = "agent failure"
INFRASTRUCTURE = "infrastructure"
OTHER = "other"

CLASSES: tuple[str, ...] = (
    WRONG_TOOL,
    WRONG_ARGUMENTS,
    MISSING_CALL,
    EXTRA_CALL,
    BAD_FORMAT,
    HALLUCINATED_TOOL,
    PREMATURE_ANSWER,
    WRONG_ANSWER,
    TOOL_ERROR,
    RUN_LIMIT,
    AGENT_FAILURE,
    INFRASTRUCTURE,
    OTHER,
)
"""The failure classes, in the order tables list them. The issue's nine (wrong tool ... infrastructure)
and three more for codes none of them fits: ``wrong answer`` (the final answer or state is not the
expected one), ``run limit`` (a limit of the run or of the serving stack ended the episode) and ``agent
failure`` (an agent under test crashed, hung or gave no answer). ``other``: a code with no class."""

REASON_CLASSES: dict[str, str] = {
    # the strict tiers' reason codes (callbench.types.verdict.ReasonCode), every one of them
    "no_structured_call": PREMATURE_ANSWER,
    "tool_missing": MISSING_CALL,
    "wrong_order": WRONG_TOOL,
    "unexpected_call": EXTRA_CALL,
    "unexpected_state_change": EXTRA_CALL,
    "argument_mismatch": WRONG_ARGUMENTS,
    "argument_missing": WRONG_ARGUMENTS,
    "unresolved_reference": WRONG_ARGUMENTS,
    "schema_invalid": WRONG_ARGUMENTS,
    "unknown_tool": HALLUCINATED_TOOL,
    "malformed_arguments": BAD_FORMAT,
    "not_executed": TOOL_ERROR,
    "execution_failed": TOOL_ERROR,
    "unexpected_success": TOOL_ERROR,
    "answer_mismatch": WRONG_ANSWER,
    "round_limit": RUN_LIMIT,
    "timeout": RUN_LIMIT,
    "agent_crashed": AGENT_FAILURE,
    "agent_timeout": AGENT_FAILURE,
    "no_answer": AGENT_FAILURE,
    "serving_parse_suspected": BAD_FORMAT,
    "format_error": BAD_FORMAT,
    "output_truncated": RUN_LIMIT,
    "context_overflow": RUN_LIMIT,
    # the diagnostic state check
    "state_mismatch": WRONG_ANSWER,
}
"""Reason codes of callbench's own scorers -> class."""

SCORER_CLASSES: dict[str, str] = {
    # BFCL's error types (its own checker names)
    "ast_decoder:decoder_failed": BAD_FORMAT,
    "ast_decoder:decoder_wrong_output_format": BAD_FORMAT,
    "simple_function_checker:wrong_func_name": WRONG_TOOL,
    "simple_function_checker:missing_required": WRONG_ARGUMENTS,
    "simple_function_checker:missing_optional": WRONG_ARGUMENTS,
    "simple_function_checker:unexpected_param": WRONG_ARGUMENTS,
    "type_error:simple": WRONG_ARGUMENTS,
    "type_error:nested": WRONG_ARGUMENTS,
    "value_error:string": WRONG_ARGUMENTS,
    "value_error:others": WRONG_ARGUMENTS,
    "value_error:list/tuple": WRONG_ARGUMENTS,
    "value_error:dict_value": WRONG_ARGUMENTS,
    "value_error:dict_key": WRONG_ARGUMENTS,
    "value_error:list_dict_count": WRONG_ARGUMENTS,
    "dict_checker:unclear": WRONG_ARGUMENTS,
    "list_dict_checker:unclear": WRONG_ARGUMENTS,
    "relevance_error:decoder_failed": MISSING_CALL,
    "irrelevance_error:decoder_success": EXTRA_CALL,
    "multi_turn:empty_turn_model_response": MISSING_CALL,
    "multi_turn:instance_state_mismatch": WRONG_ANSWER,
    "multi_turn:execution_response_mismatch": WRONG_ANSWER,
    "multi_turn:force_terminated": RUN_LIMIT,
    "multi_turn:inference_error": INFRASTRUCTURE,
    # ComplexFuncBench's first-error kinds
    "func_error": WRONG_TOOL,
    "param_missing": WRONG_ARGUMENTS,
    "param_hallucination": WRONG_ARGUMENTS,
    "value_error": WRONG_ARGUMENTS,
    "stop_early": PREMATURE_ANSWER,
    "func_hallucination": HALLUCINATED_TOOL,
    "decode_error": BAD_FORMAT,
    "max_turns": RUN_LIMIT,
    "infra_error": INFRASTRUCTURE,
    # τ²-bench's reward reasons
    "premature_termination": PREMATURE_ANSWER,
    "action_missing": MISSING_CALL,
    "db_mismatch": WRONG_ANSWER,
    "env_assertion_failed": WRONG_ANSWER,
    "info_not_communicated": WRONG_ANSWER,
    "simulator_error": INFRASTRUCTURE,
    # FuncBenchGen's scorer
    "too_few_calls": MISSING_CALL,
    "target_not_computed": MISSING_CALL,
}
"""Codes of the built-in benchmarks' own scorers -> class (by name: the core imports no benchmark).
Codes whose direction is unknown (BFCL's ``wrong_count``: too many or too few calls,
``cannot_find_match``) are left out: they read ``other``."""

ERROR_TYPES: frozenset[str] = frozenset(
    {
        "case_setup",
        "CaseTimeout",
        "cassette_miss",
        "tool_server_timeout",
        "tool_server_lost",
        "tool_server_bad_result",
        "tool_server_too_large",
        "bfcl_inference_error",
    }
)
"""Error-record types (``record.error.type``) of the engine and the built-in benchmarks."""
ERROR_PREFIXES: tuple[str, ...] = ("tool_bug:", "user_simulator:", "scorer:", "scorer_error:", "internal:")
"""Error-record type prefixes: a tool implementation's bug, the simulated user's failure, a scorer that
failed (its provider, or a bug), an unexpected exception in the harness."""
_EXCEPTION_NAME = re.compile(r"[A-Z][A-Za-z0-9]*(?:Error|Exception|Unavailable|Unreachable|Timeout)")
"""Provider failures are typed by their exception class (``TransientProviderError``, ``RateLimitedError``,
``EndpointDownError``, ``AgentUnreachable``...); reason codes are never CamelCase."""


def taxonomy(code: str) -> str:
    """The class (:data:`CLASSES`) of a reason code or an error-record type; :data:`OTHER` when unknown.

    Reason codes of callbench's scorers and of the built-in benchmarks' scorers have their own
    classes (:data:`REASON_CLASSES`, :data:`SCORER_CLASSES`); every error-record type is
    ``infrastructure`` (a provider error, a tool server or tool implementation fault, the simulated
    user, a scorer, a cassette miss, the case's time limit, the harness).
    """
    known = REASON_CLASSES.get(code) or SCORER_CLASSES.get(code)
    if known is not None:
        return known
    if code in ERROR_TYPES or code.startswith(ERROR_PREFIXES) or _EXCEPTION_NAME.fullmatch(code):
        return INFRASTRUCTURE
    return OTHER


# --- signatures ---------------------------------------------------------------------------------------

MAX_SIGNATURE = 160
"""Characters kept of a signature (a longer one ends with ``…``)."""

MAX_INPUT = 2000
"""Characters of a message read (past them no signature would show anything anyway)."""

NUMBER, ID, PATH, URL, STR, EMAIL, TIME = "<n>", "<id>", "<path>", "<url>", "<str>", "<email>", "<time>"

_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*+://[^\s'\"`<>]+")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]++@[A-Za-z0-9-]++(?:\.[A-Za-z0-9-]++)+")
_DATETIME = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w:])"
    r"|\b\d{4}/\d{2}/\d{2}\b"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w:])"
)
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_QUOTED = re.compile(
    r"""(?<![A-Za-z0-9])'[^'\n]*+'(?![A-Za-z0-9])"""  # 'x' (an apostrophe inside a word opens nothing)
    r'|"(?:[^"\\\n]|\\.)*+"'  # "x", escapes inside
    r"|`[^`\n]*+`"  # `x`
)
_NAME_BEFORE = re.compile(
    r"(?i)\b(?:parameters?|arguments?|propert(?:y|ies)|fields?|tools?|functions?|state|types?|"
    r"attributes?|options?|columns?|keys?|modules?|methods?)\s*:?\s*$"
)
"""A quoted value right after one of these words is a name, not a value: kept (``parameter 'city'``,
``of type 'integer'``, ``tool 'search'``, ``state 'tabs'``)."""
_NAME_AFTER = re.compile(r"\s+(?:is a required property|was unexpected|were unexpected)")
"""...and so is one right before these (JSON Schema's ``'city' is a required property``)."""
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\[^\s'\"`<>]+")
_UNIX_PATH = re.compile(r"(?<![\w.$<>\])/])(?:~|\.{1,2})?/[\w.@%+=,~-]++(?:/[\w.@%+=,~-]*+)*+")
_RELATIVE_PATH = re.compile(r"(?<![\w.-])[\w.-]++(?:/[\w.-]++)++")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
"""A relative path (``src/x.py``) is folded only with an extension: ``and/or``, ``list/tuple`` stay."""
_STATUS = re.compile(r"(?i)\b(?:HTTP(?:/[\d.]+)?|status(?:[ _]code)?|error code|code)\b[ :=]*\d{3}\b")
"""An HTTP status after these words tells errors apart (503 is not 429): kept."""
_HEX = re.compile(r"\b0[xX][0-9a-fA-F]++\b")
_TOKEN = re.compile(r"(?<![\w-])[A-Za-z0-9][\w-]{7,}+")
"""Tokens of 8+ characters: an id when hex with a digit and a letter (``deadbeef0042``), or when mixing
letters and at least two digits (call ids ``call_4f2a91bc``, ``toolu_01AB...``, record and case ids)."""
_HEX_ONLY = re.compile(r"[0-9a-fA-F]+")
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[A-Za-z]")
_NUM = re.compile(r"[-+]?\d++(?:[.,]\d++)*+(?:[eE][-+]?\d++)?+")
_SIGN_AFTER = re.compile(r"[\w)\]]")
_LIST = re.compile(r"(<(?:n|id|str|path|url|email|time)>)(?:\s*,\s*\1)+")
"""A list of one placeholder (``[<n>, <n>, <n>]``) folds to one (``[<n>]``): lists of other lengths
are the same error."""
_KEPT = 0xE000
"""Kept names and statuses stand in the text as one private-use character each until the end."""
_PRIVATE = re.compile("[\ue000-\uefff]")


def _token(match: re.Match[str]) -> str:
    token = match.group(0)
    digits = len(_DIGIT.findall(token))
    if not digits or not _LETTER.search(token):
        return token
    if digits >= 2 or _HEX_ONLY.fullmatch(token):
        return ID
    return token


def _relative_path(match: re.Match[str]) -> str:
    return PATH if _EXTENSION.search(match.group(0)) else match.group(0)


def _number(match: re.Match[str]) -> str:
    text, start = match.group(0), match.start()
    if text[0] in "+-" and start and _SIGN_AFTER.match(match.string, start - 1):
        return text[0] + NUMBER  # a dash between words (``gpt-4``) is not a sign
    return NUMBER


@functools.lru_cache(maxsize=16384)
def signature(message: str) -> str:
    """``message`` with its variable parts folded into placeholders, whitespace collapsed, length capped.

    In order: URLs (``<url>``), e-mail addresses (``<email>``), dates and times (``<time>``), UUIDs
    (``<id>``), quoted values ``'...'``, ``"..."`` and ``` `...` ``` (``<str>``; a quoted *name* is
    kept: after ``parameter``, ``argument``, ``property``, ``field``, ``tool``, ``function``,
    ``state``, ``type``, ``attribute``, ``option``, ``column``, ``key``, ``module``, ``method``, or
    before ``is a required property``/``was unexpected``), file paths (``<path>``: absolute, ``~/``,
    ``./``, Windows, or relative with an extension), ``0x`` numbers (``<n>``), ids (``<id>``: hex
    runs of 8+ with a digit, tokens of 8+ mixing letters and 2+ digits), then every other number,
    integer or decimal, signed or with an exponent (``<n>``; an HTTP status after ``HTTP``,
    ``status`` or ``code`` is kept). A comma-separated run of one placeholder folds to one.
    Each pass runs only when the text holds what it looks for (a digit, ``/``, a quote...).
    """
    kept: list[str] = []

    def keep(text: str) -> str:
        kept.append(text)
        return chr(_KEPT + len(kept) - 1)

    def quoted(match: re.Match[str]) -> str:
        start, end = match.span()
        if _NAME_BEFORE.search(match.string, max(0, start - 40), start) or _NAME_AFTER.match(
            match.string, end
        ):
            return keep(match.group(0))
        return STR

    text = message[:MAX_INPUT].replace("\r", " ")
    if _PRIVATE.search(text):  # never mistaken for a kept part
        text = _PRIVATE.sub("", text)
    digits = _DIGIT.search(text) is not None
    if "://" in text:
        text = _URL.sub(URL, text)
    if "@" in text:
        text = _EMAIL.sub(EMAIL, text)
    if digits:
        text = _DATETIME.sub(TIME, text)
        if "-" in text:
            text = _UUID.sub(ID, text)
    if "'" in text or '"' in text or "`" in text:
        text = _QUOTED.sub(quoted, text)
    if "/" in text or "\\" in text:
        text = _WINDOWS_PATH.sub(PATH, text) if ":\\" in text else text
        text = _UNIX_PATH.sub(PATH, text)
        text = _RELATIVE_PATH.sub(_relative_path, text)
    if _DIGIT.search(text):
        text = _STATUS.sub(lambda m: keep(m.group(0)), text)
        if "0x" in text or "0X" in text:
            text = _HEX.sub(NUMBER, text)
        text = _TOKEN.sub(_token, text)
        text = _NUM.sub(_number, text)
    if "<" in text:
        text = _LIST.sub(r"\1", text)
    if kept:
        text = _PRIVATE.sub(lambda m: kept[ord(m.group(0)) - _KEPT], text)
    text = " ".join(text.split())
    if len(text) > MAX_SIGNATURE:
        text = text[: MAX_SIGNATURE - 1].rstrip() + "…"
    return text or "(no message)"


_BOILERPLATE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^expected call \d+ (?:'[^']*'|one of \S+) \(observed call \d+\): "), ""),
    (
        re.compile(r"^expected call \d+ (?:'[^']*'|one of \S+) (?=was not made|did not execute|succeeded)"),
        "expected call ",
    ),
    (re.compile(r"^schema invalid for observed call \d+ '[^']*': "), "schema invalid: "),
    (re.compile(r"^unexpected observed call \d+ '[^']*'$"), "unexpected call"),
)
"""The strict tiers' own framing of a reason (which expected or observed call, which tool): the tool
has its own column, and the call's position is not the error."""


def core_message(message: str) -> str:
    """A reason's message without the strict tiers' framing (``expected call 2 'x' (observed call 3): ``)."""
    for pattern, replacement in _BOILERPLATE:
        message = pattern.sub(replacement, message, count=1)
    return message


# --- which tool, which server -------------------------------------------------------------------------

NO_TOOL = "(no tool)"
"""The tool of a reason that points at no call and no step (no call made, a wrong answer...)."""
BUILT_IN = "built-in"
"""The server of a tool the suite itself provides (no live tool server, or none known)."""
NOT_OFFERED = "(not offered)"
"""The server of a call to a name that was not among the offered tools."""
ERRORS = "error records"
"""The section of error records (infrastructure), beside the tiers' sections."""

_STEP_TOOL = re.compile(r"^expected call \d+ (?:'([^']*)'|one of (\S+))")
_TOOL_IN_ERROR = re.compile(r"\btool '([^']+)'")


def _step_label(tools: Any) -> str:
    if isinstance(tools, str):
        return tools
    names = [str(t) for t in tools] if isinstance(tools, list) else []
    return " | ".join(names) if names else NO_TOOL


class Servers:
    """Which tool server each (suite, tool) came from, from ``run.json``'s ``tool_sources``."""

    def __init__(self, header: RunHeader | None) -> None:
        self.by_suite: dict[str, list[ToolSourceManifest]] = {}
        for source in header.tool_sources if header is not None else []:
            for suite in source.suites:
                self.by_suite.setdefault(suite, []).append(source)

    def of(self, suite: str, tool: str, *, any_live: bool = False) -> str:
        """The server label (``name@version``) of a live tool server that listed ``tool`` for ``suite``,
        else :data:`BUILT_IN`; with ``any_live``, the suite's only live server when none listed it."""
        sources = self.by_suite.get(suite, [])
        first = tool.split(" | ")[0]
        for source in sources:
            if first in source.tools:
                return source.server_label() if source.kind == "mcp" else BUILT_IN
        live = [s for s in sources if s.kind == "mcp"]
        if any_live and len(live) == 1:
            return live[0].server_label()
        return BUILT_IN


def reason_tool(record: CaseRecord, reason: Reason) -> tuple[str, bool]:
    """The tool a reason is about and whether it was offered: the call it points at
    (``call_index``), else its expected step's tool(s), else :data:`NO_TOOL`."""
    calls = record.trace.calls
    if reason.call_index is not None and 0 <= reason.call_index < len(calls):
        call = calls[reason.call_index]
        return call.tool, call.known_tool
    if reason.step:
        for step in record.expected:
            if isinstance(step, dict) and step.get("id") == reason.step:
                return _step_label(step.get("tool")), True
        found = _STEP_TOOL.match(reason.message)
        if found:
            return found.group(1) or " | ".join(found.group(2).split("/")), True
    return NO_TOOL, True


def error_tool(record: CaseRecord) -> str:
    """The tool an error record is about: the one its message names (a tool implementation's bug),
    else, for a tool server's fault, the last call of its trace; else :data:`NO_TOOL`."""
    error = record.error
    if error is None:
        return NO_TOOL
    named = _TOOL_IN_ERROR.search(error.message)
    if named:
        return named.group(1)
    about_tools = error.type.startswith(("tool_server_", "tool_bug:")) or error.type == "cassette_miss"
    if about_tools and record.trace.calls:
        return record.trace.calls[-1].tool
    return NO_TOOL


# --- grouping -----------------------------------------------------------------------------------------

EXAMPLES = 3
"""Case keys kept per line."""


@dataclass
class FailureLine:
    """One (class, tool, server, signature) of a section, with the records behind it."""

    failure_class: str
    tool: str
    server: str
    signature: str
    codes: Counter[str] = field(default_factory=Counter)
    """Reason codes (or error types) behind the line, with how many reasons each."""
    records: list[int] = field(default_factory=list)
    """Indices of the records behind the line, each once, in run order."""
    examples: list[str] = field(default_factory=list)
    """Up to :data:`EXAMPLES` case keys (``key#trial`` for a trial after the first)."""

    @property
    def count(self) -> int:
        return len(self.records)


LineKey = tuple[str, str, str, str]


@dataclass
class FailureSection:
    """The failures of one tier under one harness mode (or the run's error records)."""

    tier: str
    harness_mode: str
    diagnostic: bool = False
    judged: int = 0
    """Records the tier judged (error records: every record of the run)."""
    failed: int = 0
    """Records that failed it (error records: how many there are)."""
    lines: dict[LineKey, FailureLine] = field(default_factory=dict)

    def add(self, index: int, example: str, key: LineKey, code: str) -> None:
        line = self.lines.get(key)
        if line is None:
            line = self.lines[key] = FailureLine(*key)
        line.codes[code] += 1
        if not line.records or line.records[-1] != index:  # once per record
            line.records.append(index)
            if len(line.examples) < EXAMPLES:
                line.examples.append(example)

    def sorted_lines(self) -> list[FailureLine]:
        """By count (most records first), then class order, tool and signature."""
        rank = {name: i for i, name in enumerate(CLASSES)}
        return sorted(
            self.lines.values(),
            key=lambda ln: (
                -ln.count,
                rank.get(ln.failure_class, len(rank)),
                ln.tool,
                ln.server,
                ln.signature,
            ),
        )

    @property
    def is_errors(self) -> bool:
        return self.tier == ERRORS


NO_REASON = "(no reason given)"
"""The signature of a failing verdict that gave no reason."""


class FailureTally:
    """A run's failures grouped into fingerprint lines, counted one record at a time (the streaming
    report never holds the records). A record's index is its position among the records added, which
    is its index in the page's ``DATA.runs[i].records``."""

    def __init__(self, header: RunHeader | None = None) -> None:
        self.header = header
        self.servers = Servers(header)
        self.diagnostic = frozenset(header.diagnostic_scorers) if header is not None else frozenset()
        self.count = 0
        self.sections: dict[tuple[str, str], FailureSection] = {}
        self.errors = FailureSection(ERRORS, "")

    @classmethod
    def of(cls, records: Iterable[CaseRecord], header: RunHeader | None = None) -> FailureTally:
        """The tally of records already in memory."""
        tally = cls(header)
        for record in records:
            tally.add(record)
        return tally

    def add(self, record: CaseRecord) -> None:
        """Count the run's next record."""
        index = self.count
        self.count += 1
        self.errors.judged += 1
        example = record.key if record.trial == 1 else f"{record.key}#{record.trial}"
        if record.status == "error":
            self._add_error(index, example, record)
            return
        for tier, verdict in record.verdicts.items():
            if not verdict.applicable:
                continue
            section = self.sections.get((tier, record.harness_mode))
            if section is None:
                section = FailureSection(tier, record.harness_mode, tier in self.diagnostic)
                self.sections[(tier, record.harness_mode)] = section
            section.judged += 1
            if verdict.passed:
                continue
            section.failed += 1
            if not verdict.reasons:
                section.add(index, example, (OTHER, NO_TOOL, "", NO_REASON), "(none)")
            for reason in verdict.reasons:
                tool, offered = reason_tool(record, reason)
                server = (
                    "" if tool == NO_TOOL else self.servers.of(record.suite, tool) if offered else NOT_OFFERED
                )
                key = (taxonomy(reason.code), tool, server, signature(core_message(reason.message)))
                section.add(index, example, key, reason.code)

    def _add_error(self, index: int, example: str, record: CaseRecord) -> None:
        self.errors.failed += 1
        error = record.error
        kind = error.type if error is not None else "error"
        message = error.message if error is not None else ""
        tool = error_tool(record)
        server = "" if tool == NO_TOOL else self.servers.of(record.suite, tool, any_live=True)
        if tool == NO_TOOL and kind.startswith("tool_server_"):  # a fault of the suite's live server
            live = self.servers.of(record.suite, "", any_live=True)
            server = "" if live == BUILT_IN else live
        # An error record is infrastructure whatever its type; the type stays in the codes.
        self.errors.add(index, example, (INFRASTRUCTURE, tool, server, signature(message)), kind)

    def ordered_sections(self) -> list[FailureSection]:
        """The tiers' sections (strict tiers first, then other scorers, then diagnostic ones; harness
        modes in name order), then the error records' section."""
        order = tier_order({tier for tier, _mode in self.sections}, self.diagnostic)
        keys = sorted(self.sections, key=lambda k: (order.index(k[0]), k[1]))
        return [*(self.sections[k] for k in keys), self.errors]


# --- output ---------------------------------------------------------------------------------------------

RULES = (
    "Failing verdicts' reasons and error records' messages folded into signatures (numbers, ids, paths, "
    "URLs, quoted values, e-mail addresses and times become <n>, <id>, <path>, <url>, <str>, <email>, "
    "<time>; quoted names of parameters, tools and types are kept) and grouped by class, tool, tool "
    "server and signature. Count: records behind the line (a record counts once per line, and in each "
    "line it has a reason in, so shares can add up to more than 100%); share: of the section's failed "
    "records. Error records are infrastructure, counted apart from every tier."
)
"""The definition the page and the exported tables state beside the table."""


def line_payload(line: FailureLine, failed: int) -> dict[str, Any]:
    """One line as JSON (``share`` of the section's failed records)."""
    return {
        "class": line.failure_class,
        "codes": dict(line.codes.most_common()),
        "tool": line.tool,
        "server": line.server,
        "signature": line.signature,
        "count": line.count,
        "share": line.count / failed if failed else None,
        "examples": list(line.examples),
        "records": list(line.records),
    }


def section_payload(section: FailureSection, top: int | None = None) -> dict[str, Any]:
    """One section as JSON: its figures, then its lines (the first ``top`` of them when given)."""
    lines = section.sorted_lines()
    shown = lines if not top else lines[:top]
    return {
        "tier": section.tier,
        "harness_mode": section.harness_mode,
        "diagnostic": section.diagnostic,
        "errors": section.is_errors,
        "judged": section.judged,
        "failed": section.failed,
        "n_lines": len(lines),
        "lines": [line_payload(line, section.failed) for line in shown],
    }


def failures_payload(
    runs: Sequence[RunFolder], tallies: Sequence[FailureTally] | None = None
) -> dict[str, Any]:
    """The report's "Failures by tool" data (``DATA.failures``): per run, its sections with their lines;
    each line's ``records`` index ``DATA.runs[run].records``. ``tallies`` are counted from the runs'
    records when not given (the streaming report passes them)."""
    if tallies is None:
        tallies = [FailureTally.of(run.records, run.header) for run in runs]
    return {
        "classes": list(CLASSES),
        "rules": RULES,
        "runs": [
            {"label": run.label, "sections": [section_payload(s) for s in tally.ordered_sections()]}
            for run, tally in zip(runs, tallies, strict=True)
        ],
    }


def _codes_text(codes: dict[str, int] | Counter[str]) -> str:
    return ", ".join(codes)


def _share_text(share: float | None) -> str:
    from callbench.report.terminal import percent

    return "–" if share is None else percent(share)


def section_title(section: dict[str, Any]) -> str:
    """``native-function-contract · production-parity: 12 failed of 40 judged records`` (or the error
    records' line)."""
    failed, judged = section["failed"], section["judged"]
    if section["errors"]:
        return f"error records (infrastructure, excluded from every tier): {failed} of {judged} records"
    tier = f"{section['tier']} (diagnostic)" if section["diagnostic"] else section["tier"]
    return f"{tier} · {section['harness_mode']}: {failed} failed of {judged} judged records"


TABLE_COLUMNS = ("Class", "Codes", "Tool", "Server", "Signature", "Count", "Share", "Examples")
"""The columns of the table (terminal, Markdown, the report's exported tables)."""
TABLE_ALIGN: list[Align] = ["left", "left", "left", "left", "left", "right", "right", "left"]


def line_cells(line: dict[str, Any]) -> list[str]:
    """A JSON line as the table's cells."""
    return [
        line["class"],
        _codes_text(line["codes"]),
        line["tool"],
        line["server"] or "–",
        line["signature"],
        str(line["count"]),
        _share_text(line["share"]),
        " ".join(line["examples"]),
    ]


REPORT_TOP = 100
"""Lines per section in the report's exported tables (the page shows them all)."""


def failure_tables(runs: Sequence[RunFolder]) -> list[Table]:
    """The "Failures by tool" tables of ``runs`` (one per run and section with failures), for
    ``callbench report --format md|csv``."""
    out: list[Table] = []
    for run in failures_payload(runs)["runs"]:
        for section in run["sections"]:
            if not section["lines"]:
                continue
            lines = section["lines"][:REPORT_TOP]
            notes = [RULES] if not out else []
            if len(section["lines"]) > REPORT_TOP:
                notes.append(f"… {len(section['lines']) - REPORT_TOP} more lines (callbench show --failures)")
            out.append(
                Table(
                    title=f"Failures by tool · {run['label']} · {section_title(section)}",
                    columns=list(TABLE_COLUMNS),
                    rows=[line_cells(line) for line in lines],
                    align=TABLE_ALIGN,
                    notes=notes,
                )
            )
    return out


def render_json(run_name: str, sections: Sequence[dict[str, Any]]) -> str:
    """The sections as JSON (each line with its record indices into the run's latest records)."""
    return json.dumps({"run": run_name, "classes": list(CLASSES), "sections": list(sections)}, indent=2)


def no_failures_line(run_name: str, sections: Sequence[dict[str, Any]], tier: str | None) -> str | None:
    """One line when none of ``sections`` has a failure (``None`` when some has)."""
    if any(s["lines"] for s in sections):
        return None
    judged = sum(s["judged"] for s in sections if not s["errors"])
    scope = f"of {tier} " if tier else ""
    return f"no failures {scope}in {run_name}: {judged} judged verdicts passed and no error record"
